//! The state MQSim's random generator starts a seed's stream from, for the import of MQSim's
//! STREAMING flows (`ssdkit._mqsim_random`, which draws the first address from it and says
//! why it must be reproduced).
//!
//! MQSim (CMU-SAFARI/MQSim at 7ec40e3) seeds `Utils::CMRRandomGenerator`, L'Ecuyer's
//! MRG32k3a (Operations Research 47(1), 1999), at (1, 1, 1; 1, 1, 1) and moves it with
//! `Advance(seed / 200 + 1, seed % 200)`: `seed % 200` squarings of each recurrence's
//! companion matrix, then a power of it by `seed / 200 + 1`, as 3 x 3 products
//! (`mm_mul`, `mv_mul`) in signed 64-bit integers. Entries near 2^32 overflow those products,
//! so the state is not MRG32k3a's true substream (its values can be negative); the overflow
//! (two's complement wrap) and C's remainder (the dividend's sign) are repeated here exactly.
//! Rust's `%` on `i64` is C's. Up to 450 products a seed: about 2 ms in Python, in every
//! import of a STREAMING flow, where these take microseconds.

/// The two recurrences' moduli.
pub const M: [i64; 2] = [4_294_967_087, 4_294_944_443];

/// The recurrences as companion matrices, row by row (CMRRandomGenerator.cpp, `a`), each
/// entry as `ftoi` gives it: a negative coefficient plus the modulus.
const A: [[i64; 9]; 2] = [
    [0, 1, 0, 0, 0, 1, M[0] - 810_728, 1_403_580, 0],
    [0, 1, 0, 0, 0, 1, M[1] - 1_370_589, 0, 527_612],
];

/// `mm_mul`: the product a b, each entry accumulated over three terms as
/// `acc = (a * b + acc) % m` in `int64_t`.
fn mat_mul(a: &[i64; 9], b: &[i64; 9], m: i64) -> [i64; 9] {
    let mut out = [0; 9];
    for i in 0..3 {
        for j in 0..3 {
            let mut acc = 0i64;
            for k in 0..3 {
                acc = a[3 * i + k].wrapping_mul(b[3 * k + j]).wrapping_add(acc) % m;
            }
            out[3 * i + j] = acc;
        }
    }
    out
}

/// `mv_mul`: a u, in `mat_mul`'s arithmetic.
fn mat_vec(a: &[i64; 9], u: &[i64; 3], m: i64) -> [i64; 3] {
    let mut out = [0; 3];
    for (i, o) in out.iter_mut().enumerate() {
        let mut acc = 0i64;
        for k in 0..3 {
            acc = a[3 * i + k].wrapping_mul(u[k]).wrapping_add(acc) % m;
        }
        *o = acc;
    }
    out
}

/// The state (s1, s2) of `Utils::RandomGenerator(seed)` before its first draw.
pub fn start_state(seed: u32) -> [[i64; 3]; 2] {
    let (mut n, e) = (seed / 200 + 1, seed % 200);
    let mut b = A;
    let mut s = [[1i64; 3]; 2];
    for _ in 0..e {
        b = [0, 1].map(|g| mat_mul(&b[g], &b[g], M[g]));
    }
    while n != 0 {
        if n & 1 == 1 {
            s = [0, 1].map(|g| mat_vec(&b[g], &s[g], M[g]));
        }
        n >>= 1;
        if n != 0 {
            b = [0, 1].map(|g| mat_mul(&b[g], &b[g], M[g]));
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// `mm_mul` as CMRRandomGenerator.cpp writes it, in 128-bit arithmetic: each product and
    /// sum reduced to `int64_t` by hand, then C's remainder.
    fn reference(a: &[i64; 9], b: &[i64; 9], m: i64) -> [i64; 9] {
        let i64_of = |x: i128| x as u128 as u64 as i64;
        let c_rem = |x: i64| {
            let r = (x as i128).abs() % m as i128;
            (if x < 0 { -r } else { r }) as i64
        };
        let mut out = [0; 9];
        for i in 0..3 {
            for j in 0..3 {
                let mut acc = 0i64;
                for k in 0..3 {
                    let p = i64_of(a[3 * i + k] as i128 * b[3 * k + j] as i128);
                    acc = c_rem(i64_of(p as i128 + acc as i128));
                }
                out[3 * i + j] = acc;
            }
        }
        out
    }

    fn entries() -> impl Strategy<Value = [i64; 9]> {
        // As the jump holds them: remainders of either modulus, of either sign.
        proptest::array::uniform9(-(1i64 << 32)..=(1i64 << 32))
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(500))]
        #[test]
        fn products_wrap_as_mqsims_written_out(a in entries(), b in entries(), g in 0usize..2) {
            prop_assert_eq!(mat_mul(&a, &b, M[g]), reference(&a, &b, M[g]));
            // mv_mul: the vector as a matrix's first column.
            let col = reference(&a, &[b[0], 0, 0, b[1], 0, 0, b[2], 0, 0], M[g]);
            prop_assert_eq!(mat_vec(&a, &[b[0], b[1], b[2]], M[g]), [col[0], col[3], col[6]]);
        }
    }

    #[test]
    fn seed_zero_is_one_step_of_the_recurrences() {
        // Advance(1, 0): the matrices to the first power, times (1, 1, 1), no overflow.
        let s = start_state(0);
        assert_eq!(s[0], [1, 1, (M[0] - 810_728 + 1_403_580) % M[0]]);
        assert_eq!(s[1], [1, 1, (M[1] - 1_370_589 + 527_612) % M[1]]);
    }
}
