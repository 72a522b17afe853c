//! Number parsing on raw bytes for the trace readers.
//!
//! Hand-written because the hot loop parses tens of millions of fields: no UTF-8 validation, no
//! `String`, no `f64`. Decimal timestamps are converted to nanoseconds exactly with integer
//! arithmetic ("1398396860.168065791" s is 1398396860168065791 ns, not the nearest double).

use std::borrow::Cow;

/// Why a field could not be read; turned into the reason of a malformed-line error.
pub(crate) type Reason = Cow<'static, str>;

/// Parses a non-negative decimal integer (ASCII digits only). `None` on anything else,
/// including an empty field and overflow past `u64::MAX`.
#[inline]
pub(crate) fn parse_u64(s: &[u8]) -> Option<u64> {
    if s.is_empty() || s.len() > 20 {
        // 20 digits is the longest u64; longer is overflow (or leading zeros nobody writes).
        return parse_u64_slow(s);
    }
    let mut v: u64 = 0;
    if s.len() < 20 {
        // 19 digits cannot overflow, so the checked arithmetic is only needed for 20.
        for &b in s {
            let d = b.wrapping_sub(b'0');
            if d > 9 {
                return None;
            }
            v = v * 10 + d as u64;
        }
        return Some(v);
    }
    for &b in s {
        let d = b.wrapping_sub(b'0');
        if d > 9 {
            return None;
        }
        v = v.checked_mul(10)?.checked_add(d as u64)?;
    }
    Some(v)
}

#[cold]
fn parse_u64_slow(s: &[u8]) -> Option<u64> {
    if s.is_empty() {
        return None;
    }
    let mut v: u64 = 0;
    for &b in s {
        let d = b.wrapping_sub(b'0');
        if d > 9 {
            return None;
        }
        v = v.checked_mul(10)?.checked_add(d as u64)?;
    }
    Some(v)
}

/// Reads an integer field named `what` (e.g. "size" or "column 4 (size)"), with a reason that
/// tells a negative number, a non-number and an overflow apart.
pub(crate) fn field_u64(s: &[u8], what: &str) -> Result<u64, Reason> {
    match parse_u64(s) {
        Some(v) => Ok(v),
        None => Err(bad_number(s, what)),
    }
}

#[cold]
pub(crate) fn bad_number(s: &[u8], what: &str) -> Reason {
    let shown = show(s);
    if s.is_empty() {
        Cow::Owned(format!("{what} is empty"))
    } else if s[0] == b'-' {
        Cow::Owned(format!("{what} `{shown}` is negative"))
    } else if s.iter().all(u8::is_ascii_digit) {
        Cow::Owned(format!("{what} `{shown}` overflows 64 bits"))
    } else {
        Cow::Owned(format!("{what} `{shown}` is not a non-negative integer"))
    }
}

/// Field text for a message: lossy UTF-8, cut at 40 characters so one bad field cannot make
/// the message huge.
pub(crate) fn show(s: &[u8]) -> String {
    let t = String::from_utf8_lossy(s);
    if t.chars().count() > 40 {
        let mut c: String = t.chars().take(40).collect();
        c.push_str("...");
        c
    } else {
        t.into_owned()
    }
}

/// Reads a size field and scales it to bytes: 0, negative, non-numeric and overflowing
/// sizes are all malformed (docs/workloads.md "Rules for bad input").
pub(crate) fn field_size(s: &[u8], unit: u64, what: &str) -> Result<u64, Reason> {
    let v = field_u64(s, what)?;
    if v == 0 {
        return Err(Cow::Owned(format!("{what} is 0")));
    }
    v.checked_mul(unit)
        .ok_or_else(|| Cow::Owned(format!("{what} `{}` overflows 64 bits in bytes", show(s))))
}

/// Reads an address field and scales it to bytes.
pub(crate) fn field_offset(s: &[u8], unit: u64, what: &str) -> Result<u64, Reason> {
    let v = field_u64(s, what)?;
    v.checked_mul(unit)
        .ok_or_else(|| Cow::Owned(format!("{what} `{}` overflows 64 bits in bytes", show(s))))
}

/// Checks that the request's end address fits in 64 bits, so the replayer can add without
/// overflow.
#[inline]
pub(crate) fn check_end(offset: u64, bytes: u64) -> Result<(), Reason> {
    if offset.checked_add(bytes).is_none() {
        return Err(Cow::Borrowed(
            "request end (offset + size) overflows 64 bits",
        ));
    }
    Ok(())
}

/// Converts a decimal number of `10^unit_exp` nanosecond units to nanoseconds, exactly,
/// truncating below 1 ns. Accepts `123`, `123.456`, `.5`, `5.` and an exponent (`7.3e-05`).
/// `unit_exp`: -3 ps, 0 ns, 2 (100 ns ticks), 3 us, 6 ms, 9 s.
#[inline]
pub(crate) fn parse_time_ns(s: &[u8], unit_exp: i32) -> Option<u64> {
    if (0..=18).contains(&unit_exp) {
        if let Some(v) = parse_time_plain(s, unit_exp as u32) {
            return Some(v);
        }
    }
    parse_time_general(s, unit_exp)
}

/// The common `digits[.digits]` with at most 19 integer digits, in one pass; `None` for
/// anything else (exponent, overflow...), which the general path then decides.
#[inline]
fn parse_time_plain(s: &[u8], exp: u32) -> Option<u64> {
    let mut i = 0;
    let mut int: u64 = 0;
    while i < s.len() {
        let d = s[i].wrapping_sub(b'0');
        if d > 9 {
            break;
        }
        if i == 19 {
            return None;
        }
        int = int * 10 + d as u64;
        i += 1;
    }
    let int_len = i;
    let mut frac: u64 = 0;
    let mut taken = 0;
    if i < s.len() && s[i] == b'.' {
        i += 1;
        while i < s.len() {
            let d = s[i].wrapping_sub(b'0');
            if d > 9 {
                return None;
            }
            if taken < exp {
                frac = frac * 10 + d as u64;
                taken += 1;
            }
            i += 1;
        }
        if int_len == 0 && i == int_len + 1 {
            return None;
        }
    } else if i != s.len() || int_len == 0 {
        return None;
    }
    int.checked_mul(10u64.pow(exp))?
        .checked_add(frac * 10u64.pow(exp - taken))
}

fn parse_time_general(s: &[u8], unit_exp: i32) -> Option<u64> {
    // Split into integer digits, fraction digits and exponent.
    let mut i = 0;
    let n = s.len();
    if n > 64 {
        return parse_time_long(s, unit_exp);
    }
    let int_start = i;
    while i < n && s[i].is_ascii_digit() {
        i += 1;
    }
    let int_digits = &s[int_start..i];
    let mut frac_digits: &[u8] = &[];
    if i < n && s[i] == b'.' {
        i += 1;
        let fs = i;
        while i < n && s[i].is_ascii_digit() {
            i += 1;
        }
        frac_digits = &s[fs..i];
    }
    if int_digits.is_empty() && frac_digits.is_empty() {
        return None;
    }
    let mut exp: i64 = 0;
    if i < n && (s[i] == b'e' || s[i] == b'E') {
        i += 1;
        let mut neg = false;
        if i < n && (s[i] == b'+' || s[i] == b'-') {
            neg = s[i] == b'-';
            i += 1;
        }
        let es = i;
        while i < n && s[i].is_ascii_digit() {
            i += 1;
        }
        // Four exponent digits are more than any time needs; more is treated as garbage.
        if i == es || i - es > 4 {
            return None;
        }
        let mut e: i64 = 0;
        for &b in &s[es..i] {
            e = e * 10 + (b - b'0') as i64;
        }
        exp = if neg { -e } else { e };
    }
    if i != n {
        return None;
    }
    scale_digits(int_digits, frac_digits, exp + unit_exp as i64)
}

#[cold]
fn parse_time_long(s: &[u8], unit_exp: i32) -> Option<u64> {
    // A plain very long decimal (many zeros) is still exact: no exponent allowed here.
    let dot = s.iter().position(|&b| b == b'.');
    let (int_digits, frac_digits) = match dot {
        Some(p) => (&s[..p], &s[p + 1..]),
        None => (s, &s[..0]),
    };
    if !int_digits.iter().all(u8::is_ascii_digit) || !frac_digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    if int_digits.is_empty() && frac_digits.is_empty() {
        return None;
    }
    scale_digits(int_digits, frac_digits, unit_exp as i64)
}

/// floor(int.frac x 10^shift) as u64, or None on overflow.
fn scale_digits(int_digits: &[u8], frac_digits: &[u8], shift: i64) -> Option<u64> {
    // The value's digit string D = int ++ frac; the result keeps its first q digits, where
    // q = len(int) + shift, padded with zeros when q exceeds len(D).
    let total = int_digits.len() + frac_digits.len();
    let q = int_digits.len() as i64 + shift;
    if q <= 0 {
        return Some(0);
    }
    let keep = (q as usize).min(total);
    let mut v: u64 = 0;
    for &b in int_digits.iter().chain(frac_digits.iter()).take(keep) {
        v = v.checked_mul(10)?.checked_add((b - b'0') as u64)?;
    }
    let pad = q as usize - keep;
    if v != 0 {
        for _ in 0..pad {
            v = v.checked_mul(10)?;
        }
    }
    Some(v)
}

/// Reads a time field named `what` in `10^unit_exp` ns units.
pub(crate) fn field_time(s: &[u8], unit_exp: i32, what: &str) -> Result<u64, Reason> {
    match parse_time_ns(s, unit_exp) {
        Some(v) => Ok(v),
        None => Err(bad_time(s, what)),
    }
}

#[cold]
fn bad_time(s: &[u8], what: &str) -> Reason {
    let shown = show(s);
    if s.is_empty() {
        Cow::Owned(format!("{what} is empty"))
    } else if s[0] == b'-' {
        Cow::Owned(format!("{what} `{shown}` is negative"))
    } else if s.iter().all(|b| b.is_ascii_digit() || *b == b'.') {
        Cow::Owned(format!("{what} `{shown}` overflows 64 bits in nanoseconds"))
    } else {
        Cow::Owned(format!(
            "{what} `{shown}` is not a non-negative decimal number"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers() {
        assert_eq!(parse_u64(b"0"), Some(0));
        assert_eq!(parse_u64(b"938513000"), Some(938513000));
        assert_eq!(parse_u64(b"18446744073709551615"), Some(u64::MAX));
        assert_eq!(parse_u64(b"18446744073709551616"), None);
        assert_eq!(parse_u64(b"99999999999999999999"), None);
        assert_eq!(parse_u64(b"000000000000000000000000001"), Some(1));
        assert_eq!(parse_u64(b""), None);
        assert_eq!(parse_u64(b"-1"), None);
        assert_eq!(parse_u64(b"+1"), None);
        assert_eq!(parse_u64(b"1a"), None);
        assert_eq!(parse_u64(b"1.0"), None);
    }

    #[test]
    fn reasons_name_the_problem() {
        assert_eq!(
            field_u64(b"-8", "size").unwrap_err(),
            "size `-8` is negative"
        );
        assert_eq!(
            field_u64(b"x", "size").unwrap_err(),
            "size `x` is not a non-negative integer"
        );
        assert_eq!(
            field_u64(b"99999999999999999999", "size").unwrap_err(),
            "size `99999999999999999999` overflows 64 bits"
        );
        assert_eq!(field_size(b"0", 512, "size").unwrap_err(), "size is 0");
        assert_eq!(field_size(b"8", 512, "size"), Ok(4096));
        assert!(field_size(b"18446744073709551615", 512, "size").is_err());
        assert!(check_end(u64::MAX - 1, 2).is_err());
        assert!(check_end(u64::MAX - 2, 2).is_ok());
    }

    #[test]
    fn exact_decimal_times() {
        assert_eq!(
            parse_time_ns(b"1398396860.168065791", 9),
            Some(1398396860168065791)
        );
        assert_eq!(parse_time_ns(b"5265.313", 6), Some(5265313000));
        assert_eq!(parse_time_ns(b"0.011413", 9), Some(11413000));
        assert_eq!(parse_time_ns(b"11.413", 6), Some(11413000));
        assert_eq!(parse_time_ns(b"13.191135", 6), Some(13191135));
        assert_eq!(parse_time_ns(b"938513000", 0), Some(938513000));
        assert_eq!(
            parse_time_ns(b"128166372003061629", 2),
            Some(12816637200306162900)
        );
        assert_eq!(parse_time_ns(b"5633898", 9), Some(5633898000000000));
        assert_eq!(parse_time_ns(b"1500", -3), Some(1));
        assert_eq!(parse_time_ns(b"999", -3), Some(0));
        assert_eq!(parse_time_ns(b"1.9999999999", 9), Some(1999999999));
        assert_eq!(parse_time_ns(b".5", 9), Some(500000000));
        assert_eq!(parse_time_ns(b"5.", 9), Some(5000000000));
        assert_eq!(parse_time_ns(b"7.3902e-05", 9), Some(73902));
        assert_eq!(parse_time_ns(b"1E3", 0), Some(1000));
        assert_eq!(parse_time_ns(b"1e+2", 6), Some(100000000));
        assert_eq!(parse_time_ns(b"0e99", 9), Some(0));
        assert_eq!(parse_time_ns(b"1e9999", 9), None);
        assert_eq!(parse_time_ns(b"1e99999", 9), None);
        assert_eq!(parse_time_ns(b"18446744073.709551615", 9), Some(u64::MAX));
        assert_eq!(parse_time_ns(b"18446744073.709551616", 9), None);
        assert_eq!(parse_time_ns(b"18446744073.7095516159", 9), Some(u64::MAX));
        assert_eq!(parse_time_ns(b"18446744074", 9), None);
        assert_eq!(parse_time_ns(b"", 9), None);
        assert_eq!(parse_time_ns(b".", 9), None);
        assert_eq!(parse_time_ns(b"-1", 9), None);
        assert_eq!(parse_time_ns(b"1.2.3", 9), None);
        assert_eq!(parse_time_ns(b"1e", 9), None);
        assert_eq!(parse_time_ns(b"nan", 9), None);
        let long = format!("0.{}1", "0".repeat(100));
        assert_eq!(parse_time_ns(long.as_bytes(), 9), Some(0));
        let long = format!("{}1.5", "0".repeat(100));
        assert_eq!(parse_time_ns(long.as_bytes(), 9), Some(1500000000));
    }

    #[test]
    fn time_reasons() {
        assert_eq!(
            field_time(b"-1.5", 9, "time").unwrap_err(),
            "time `-1.5` is negative"
        );
        assert_eq!(
            field_time(b"abc", 9, "time").unwrap_err(),
            "time `abc` is not a non-negative decimal number"
        );
        assert_eq!(
            field_time(b"99999999999", 9, "time").unwrap_err(),
            "time `99999999999` overflows 64 bits in nanoseconds"
        );
    }
}
