//! Division by a divisor fixed for the run.

/// A divisor that divides by a shift when it is a power of two, as geometries usually are:
/// the numbering is divided on every operation, and a division waits for its result longer
/// than the rest of the arithmetic around it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Div {
    d: u32,
    /// log2(d) for a power of two, 32 (divide) otherwise.
    shift: u32,
}

impl Div {
    pub fn new(d: u32) -> Self {
        Self {
            d,
            shift: if d.is_power_of_two() {
                d.trailing_zeros()
            } else {
                32
            },
        }
    }
    /// The divisor.
    #[inline]
    pub fn get(self) -> u32 {
        self.d
    }
    #[inline]
    pub fn quot(self, x: u32) -> u32 {
        if self.shift < 32 {
            x >> self.shift
        } else {
            x / self.d
        }
    }
    /// `x / d` for a 64-bit `x`.
    #[inline]
    pub fn quot64(self, x: u64) -> u64 {
        if self.shift < 32 {
            x >> self.shift
        } else {
            x / self.d as u64
        }
    }
    #[inline]
    pub fn modulo(self, x: u32) -> u32 {
        if self.shift < 32 {
            x & (self.d - 1)
        } else {
            x % self.d
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Div;

    #[test]
    fn divides_as_the_operators_do() {
        for d in (1..=70).chain([1365, 1536, 2048, 1 << 31, u32::MAX]) {
            let v = Div::new(d);
            for x in [
                0,
                1,
                d - 1,
                d,
                d.wrapping_add(1),
                12_345_678,
                u32::MAX - 1,
                u32::MAX,
            ] {
                assert_eq!((v.quot(x), v.modulo(x)), (x / d, x % d), "{x} / {d}");
                let y = ((x as u64) << 20) + 5;
                assert_eq!(v.quot64(y), y / d as u64, "{y} / {d}");
            }
        }
    }
}
