//! The result document's text as `ssdkit run -o` writes it: as Python's `json.dumps(doc,
//! indent=2)` writes it, byte for byte, so that the Python side can write the core's text
//! without encoding the document again (on a 1 M-request run's 0.8 MB document that took 4-7 ms
//! of the process).
//!
//! Python's rules, which serde_json's pretty printer does not follow: non-ASCII characters and
//! DEL are written as `\uXXXX` escapes (`ensure_ascii`), and a float is written as `repr` writes
//! it (`1e-05`, `1e+16`, `100.0`: the shortest digits that read back to the same float, in
//! positional notation from 1e-4 up to below 1e16, else as a mantissa and a signed exponent
//! of at least two digits). tests/python/test_json_writer.py compares the two encoders.

use serde_json::{Map, Number, Value};
use std::fmt::Write;

/// `json.dumps(v, indent=2)`. The document holds no NaN or infinity: serde_json's `Value`
/// cannot.
pub fn dumps_indent2(v: &Value) -> String {
    let mut out = String::with_capacity(1 << 16);
    value(v, &mut out, 0);
    out
}

fn newline(out: &mut String, depth: usize) {
    out.push('\n');
    for _ in 0..depth {
        out.push_str("  ");
    }
}

fn value(v: &Value, out: &mut String, depth: usize) {
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => number(n, out),
        Value::String(s) => string(s, out),
        Value::Array(a) if a.is_empty() => out.push_str("[]"),
        Value::Array(a) => {
            out.push('[');
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                newline(out, depth + 1);
                value(x, out, depth + 1);
            }
            newline(out, depth);
            out.push(']');
        }
        Value::Object(m) => object(m, out, depth),
    }
}

fn object(m: &Map<String, Value>, out: &mut String, depth: usize) {
    if m.is_empty() {
        out.push_str("{}");
        return;
    }
    out.push('{');
    for (i, (k, x)) in m.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        newline(out, depth + 1);
        string(k, out);
        out.push_str(": ");
        value(x, out, depth + 1);
    }
    newline(out, depth);
    out.push('}');
}

fn number(n: &Number, out: &mut String) {
    if let Some(u) = n.as_u64() {
        out.push_str(itoa::Buffer::new().format(u));
    } else if let Some(i) = n.as_i64() {
        out.push_str(itoa::Buffer::new().format(i));
    } else if let Some(f) = n.as_f64() {
        float_repr(f, out);
    }
}

/// Python's `repr(x)` of a finite float: the fewest digits that read back as `x` and, of
/// those, the ones closest to it, a tie going to the even last digit (David Gay's `dtoa`, mode
/// 0). Rust's `{:e}` gives as few digits but breaks a tie upwards (1106842584250265.25 as
/// ...265.3, where Python writes ...265.2), so the count it gives is written again rounded
/// exactly, which rounds half to even, and kept when it still reads back as `x`. CPython
/// (`format_float_short`, mode `'r'`) writes the digits positionally when the decimal point
/// falls within `-4 < decpt <= 16` digits of the first, in exponent form otherwise.
pub fn float_repr(x: f64, out: &mut String) {
    if x == 0.0 {
        out.push_str(if x.is_sign_negative() { "-0.0" } else { "0.0" });
        return;
    }
    let shortest = format!("{:e}", x.abs());
    let count = shortest
        .split('e')
        .next()
        .map_or(1, |m| m.len() - m.contains('.') as usize);
    let nearest = format!("{:.*e}", count - 1, x.abs());
    let sci = if nearest.parse::<f64>() == Ok(x.abs()) {
        nearest
    } else {
        shortest
    };
    let (mantissa, exp) = sci.split_once('e').expect("{:e} writes an exponent");
    let exp: i32 = exp.parse().expect("{:e} writes an integer exponent");
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let digits = digits.trim_end_matches('0');
    let n = digits.len() as i32;
    // The value is 0.DIGITS times ten to the power decpt.
    let decpt = exp + 1;
    if x.is_sign_negative() {
        out.push('-');
    }
    if decpt <= -4 || decpt > 16 {
        out.push_str(&digits[..1]);
        if n > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        let e = decpt - 1;
        let _ = write!(out, "e{}{:02}", if e < 0 { '-' } else { '+' }, e.abs());
    } else if decpt <= 0 {
        out.push_str("0.");
        for _ in 0..-decpt {
            out.push('0');
        }
        out.push_str(digits);
    } else if decpt >= n {
        out.push_str(digits);
        for _ in 0..decpt - n {
            out.push('0');
        }
        out.push_str(".0");
    } else {
        out.push_str(&digits[..decpt as usize]);
        out.push('.');
        out.push_str(&digits[decpt as usize..]);
    }
}

/// A JSON string as `json.dumps` writes it with `ensure_ascii`: `\"`, `\\`, `\n`, `\r`, `\t`,
/// `\b` and `\f` by name, every other character outside printable ASCII (space to `~`) as
/// `\uXXXX` in lower-case hex, characters beyond the BMP as a surrogate pair.
fn string(s: &str, out: &mut String) {
    out.push('"');
    let mut plain = 0;
    for (i, c) in s.char_indices() {
        let named = match c {
            '"' => "\\\"",
            '\\' => "\\\\",
            '\n' => "\\n",
            '\r' => "\\r",
            '\t' => "\\t",
            '\u{8}' => "\\b",
            '\u{c}' => "\\f",
            ' '..='~' => continue,
            _ => "",
        };
        out.push_str(&s[plain..i]);
        plain = i + c.len_utf8();
        if !named.is_empty() {
            out.push_str(named);
            continue;
        }
        let mut units = [0u16; 2];
        for u in c.encode_utf16(&mut units) {
            let _ = write!(out, "\\u{:04x}", u);
        }
    }
    out.push_str(&s[plain..]);
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repr(x: f64) -> String {
        let mut s = String::new();
        float_repr(x, &mut s);
        s
    }

    // CPython 3.11's repr of each value; the Python test compares many more against the
    // interpreter itself. The last two are exact ties between two shortest forms, so they are
    // written with every digit of their value.
    #[test]
    #[allow(clippy::excessive_precision)]
    fn floats_as_python_writes_them() {
        let cases = [
            (1e16, "1e+16"),
            (1e15, "1000000000000000.0"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (1.5e-7, "1.5e-07"),
            (-2.5, "-2.5"),
            (100.0, "100.0"),
            (0.1, "0.1"),
            (123456789012345678.0, "1.2345678901234568e+17"),
            (5e-324, "5e-324"),
            (1.7976931348623157e308, "1.7976931348623157e+308"),
            (-0.0, "-0.0"),
            (0.089902564, "0.089902564"),
            (1106842584250265.25, "1106842584250265.2"),
            (126704539867294.625, "126704539867294.62"),
        ];
        for (x, want) in cases {
            assert_eq!(repr(x), want, "{x:e}");
        }
    }

    #[test]
    fn strings_escaped_as_ensure_ascii() {
        let mut s = String::new();
        string("a\"b\\c\n\u{7f}é\u{1F600}\u{1}", &mut s);
        assert_eq!(s, r#""a\"b\\c\n\u007f\u00e9\ud83d\ude00\u0001""#);
    }

    #[test]
    fn nesting_and_empty_containers() {
        let v: Value = serde_json::from_str(r#"{"a":[1,{"b":[]}],"c":{},"d":-3}"#).unwrap();
        assert_eq!(
            dumps_indent2(&v),
            "{\n  \"a\": [\n    1,\n    {\n      \"b\": []\n    }\n  ],\n  \"c\": {},\n  \"d\": -3\n}"
        );
    }
}
