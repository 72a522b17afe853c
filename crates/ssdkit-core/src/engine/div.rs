//! Division by a divisor fixed for the run.

/// A divisor that divides by a shift when it is a power of two, as geometries usually are,
/// and otherwise by a multiplication with its precomputed reciprocal (Lemire, Kaser and Kurz,
/// "Faster Remainder by Direct Computation", Software: Practice and Experience, 2019: exact
/// for every 32-bit dividend and divisor): the numbering is divided on every operation, and a
/// division instruction waits for its result longer than the rest of the arithmetic around
/// it (a translation page's 1,365 entries on MQSim's device are divided on every lookup).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Div {
    d: u32,
    /// log2(d) for a power of two, 32 (multiply by `m`) otherwise.
    shift: u32,
    /// ceil(2^64 / d) where d is not a power of two.
    m: u64,
}

impl Div {
    /// Panics for 0 (a validated configuration has no size of 0), where the operators
    /// panic only when used.
    pub fn new(d: u32) -> Self {
        assert!(d > 0, "division by zero");
        let pow2 = d.is_power_of_two();
        Self {
            d,
            shift: if pow2 { d.trailing_zeros() } else { 32 },
            m: if pow2 { 0 } else { u64::MAX / d as u64 + 1 },
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
            ((self.m as u128 * x as u128) >> 64) as u32
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
            // The fraction's bits left after the quotient, scaled back by the divisor.
            let frac = self.m.wrapping_mul(x as u64);
            ((frac as u128 * self.d as u128) >> 64) as u32
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Div;

    #[test]
    fn divides_as_the_operators_do() {
        for d in (1..=70)
            .chain([
                1365,
                1536,
                2048,
                641,
                6_700_417,
                (1 << 31) - 1,
                1 << 31,
                (1 << 31) + 1,
            ])
            .chain([u32::MAX - 1, u32::MAX])
        {
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

    proptest::proptest! {
        #[test]
        fn any_divisor_divides_any_dividend_as_the_operators_do(d in 1u32.., x: u32) {
            let v = Div::new(d);
            proptest::prop_assert_eq!((v.quot(x), v.modulo(x)), (x / d, x % d));
        }
    }
}
