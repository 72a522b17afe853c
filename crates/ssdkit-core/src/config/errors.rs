//! Messages for configuration text that does not deserialize: TOML syntax errors with their
//! line and column, integers beyond 64 bits, and sections written with the wrong table form.

use toml::Value;

/// 1-based line and column (in characters) of a byte offset of `text`.
pub(super) fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let mut at = offset.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    let before = &text[..at];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    (line, before[line_start..].chars().count() + 1)
}

/// The message for a TOML syntax error: origin, line, column and toml's reason on one line.
/// An integer that does not fit in 64 bits is reported as such with its key, since toml's
/// "number too large to fit in target type" names neither.
pub(super) fn syntax(text: &str, origin: &str, e: &toml::de::Error) -> String {
    let reason = e.message().trim_end().replace('\n', "; ");
    let Some(span) = e.span() else {
        return format!("{origin}: invalid TOML: {reason}");
    };
    let (line, col) = line_col(text, span.start);
    if e.message().starts_with("number too large") {
        let token: String = text[span.start.min(text.len())..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '+' | '-' | '.'))
            .collect();
        let key = key_at(text, span.start).map_or(String::new(), |k| format!("key `{k}` = "));
        return format!(
            "{origin}:{line}:{col}: {key}{token} is out of range for a 64-bit integer (TOML integers are -2^63..=2^63-1)"
        );
    }
    format!("{origin}:{line}:{col}: invalid TOML: {reason}")
}

/// Best-effort dotted key of the `key = value` line holding byte `offset`: the last table
/// header above it (arrays of `flow` tables numbered) and the key before `=`. Used only to
/// name the key in a syntax error, so quoted or unusual keys may come out as written.
fn key_at(text: &str, offset: usize) -> Option<String> {
    let offset = offset.min(text.len());
    let line_start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
    let (key, _) = text[line_start..offset].split_once('=')?;
    let key = key.trim().trim_matches('"');
    if key.is_empty() {
        return None;
    }
    let mut table = String::new();
    let mut flows = 0usize;
    for l in text[..line_start].lines() {
        let l = l.trim();
        if let Some(h) = l.strip_prefix("[[").and_then(|h| h.split("]]").next()) {
            let h = h.trim();
            if h == "flow" {
                flows += 1;
                table = format!("flow.{}", flows - 1);
            } else {
                table = h.to_string();
            }
        } else if let Some(h) = l.strip_prefix('[').and_then(|h| h.split(']').next()) {
            let h = h.trim();
            table = match h.strip_prefix("flow.") {
                Some(sub) if flows > 0 => format!("flow.{}.{sub}", flows - 1),
                _ => h.to_string(),
            };
        }
    }
    Some(if table.is_empty() {
        key.to_string()
    } else {
        format!("{table}.{key}")
    })
}

/// Sections that are single tables, and the flow array: a wrong bracket count otherwise
/// surfaces as a type error on a made-up key such as `flash[0`.
const TABLES: [&str; 10] = [
    "run",
    "steady_state",
    "host",
    "interface",
    "pcie",
    "cache",
    "ftl",
    "tsu",
    "precondition",
    "flash",
];

/// Keys that moved to another place, with what to write instead: an old configuration gets a
/// message that says how to update it rather than "unknown field".
const MOVED: [(&str, &str, &str); 9] = [
    (
        "ftl",
        "user_order",
        "moved to `tsu.policy` (`reads_first` is \"out_of_order\", `arrival` is \"fifo\")",
    ),
    (
        "ftl",
        "gc_d",
        "moved into the policy's table as `d`: `ftl.gc_policy = { type = \"d_choices\", d = 10 }`",
    ),
    (
        "tsu",
        "weight_high",
        "moved into the policy's table: `tsu.policy = { type = \"priority_out_of_order\", weight_high = 4, weight_medium = 2, weight_low = 1 }` (or `type = \"flin\"`)",
    ),
    (
        "tsu",
        "weight_medium",
        "moved into the policy's table: `tsu.policy = { type = \"priority_out_of_order\", weight_high = 4, weight_medium = 2, weight_low = 1 }` (or `type = \"flin\"`)",
    ),
    (
        "tsu",
        "weight_low",
        "moved into the policy's table: `tsu.policy = { type = \"priority_out_of_order\", weight_high = 4, weight_medium = 2, weight_low = 1 }` (or `type = \"flin\"`)",
    ),
    (
        "tsu",
        "flin_epoch_us",
        "moved into the policy's table as `epoch_us`: `tsu.policy = { type = \"flin\", epoch_us = 10000 }`",
    ),
    (
        "tsu",
        "flin_alpha_read_bytes",
        "moved into the policy's table as `alpha_read_bytes`: `tsu.policy = { type = \"flin\", alpha_read_bytes = 33554432 }`",
    ),
    (
        "tsu",
        "flin_alpha_write_bytes",
        "moved into the policy's table as `alpha_write_bytes`: `tsu.policy = { type = \"flin\", alpha_write_bytes = 262144 }`",
    ),
    (
        "tsu",
        "flin_fairness_threshold",
        "moved into the policy's table as `fairness_threshold`: `tsu.policy = { type = \"flin\", fairness_threshold = 0.6 }`",
    ),
];

pub(super) fn check_shapes(root: &Value) -> Result<(), String> {
    let array_not_table = |key: &str| {
        format!(
            "key `{key}` must be a table (`[{key}]`), not an array of tables (`[[{key}]]`); write the section header with single brackets"
        )
    };
    for (table, key, now) in MOVED {
        if root.get(table).and_then(|t| t.get(key)).is_some() {
            return Err(format!("key `{table}.{key}` {now}"));
        }
    }
    for key in TABLES {
        if let Some(Value::Array(_)) = root.get(key) {
            return Err(array_not_table(key));
        }
    }
    if let Some(Value::Array(_)) = root.get("flash").and_then(|f| f.get("bus")) {
        return Err(array_not_table("flash.bus"));
    }
    match root.get("flow") {
        Some(Value::Table(_)) => Err(
            "key `flow` must be an array of tables (`[[flow]]`, one per flow), not a single table (`[flow]`); write each flow's header with double brackets"
                .into(),
        ),
        Some(Value::Array(flows)) => {
            for (i, f) in flows.iter().enumerate() {
                if let Some(Value::Array(_)) = f.get("delimited") {
                    return Err(format!(
                        "key `flow.{i}.delimited` must be a table (`[flow.delimited]`), not an array of tables (`[[flow.delimited]]`)"
                    ));
                }
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

/// serde's message for a 64-bit-overflowing integer given as an override: the override reads
/// it as a string (it is not a TOML integer), so serde says "invalid type: string". `raw` is
/// the text the override gave for the key; only all digits (a sign and `_` allowed) are an
/// overflow: the same string from a TOML file, or a quoted override, is a string.
pub(super) fn overflowing_override(raw: &str) -> Option<String> {
    let body = raw.strip_prefix(['+', '-']).unwrap_or(raw);
    let numeric = !body.is_empty()
        && body.starts_with(|c: char| c.is_ascii_digit())
        && body.chars().all(|c| c.is_ascii_digit() || c == '_');
    numeric.then(|| {
        format!("{raw} is out of range for a 64-bit integer (TOML integers are -2^63..=2^63-1)")
    })
}

/// The TOML value at a dotted key path as serde_path_to_error prints it (`flow[0].name`).
pub(super) fn value_at<'a>(root: &'a Value, path: &str) -> Option<&'a Value> {
    let mut cur = root;
    for seg in path.split(['.', '[']) {
        let seg = seg.trim_end_matches(']');
        cur = match cur {
            Value::Array(a) => a.get(seg.parse::<usize>().ok()?)?,
            Value::Table(t) => t.get(seg)?,
            _ => return None,
        };
    }
    Some(cur)
}

/// What a TOML value is, with the value when it is short: `a string ("8")`.
fn kind_of(v: &Value) -> String {
    match v {
        Value::String(s) if s.chars().count() <= 40 => format!("a string ({s:?})"),
        Value::String(_) => "a string".into(),
        Value::Integer(i) => format!("an integer ({i})"),
        Value::Float(f) => format!("a number ({f})"),
        Value::Boolean(b) => format!("a boolean ({b})"),
        Value::Datetime(d) => format!("a date-time ({d})"),
        Value::Array(_) => "an array".into(),
        Value::Table(_) => "a table".into(),
    }
}

/// serde's "invalid type: <got>, expected <want>" (or "invalid value" for an integer beyond
/// the key's range) as "expects <want>, got <what the file holds>": serde names Rust types
/// (`u32`, `f64`) and, for a value the toml reader has already turned into something else,
/// the wrong kind ("unit variant").
pub(super) fn type_mismatch(inner: &str, value: Option<&Value>) -> Option<String> {
    let rest = inner
        .strip_prefix("invalid type: ")
        .or_else(|| inner.strip_prefix("invalid value: "))?;
    let (_, expected) = rest.rsplit_once(", expected ")?;
    let want = match expected {
        "u8" => "an integer (0..=255)",
        "u16" => "an integer (0..=65535)",
        "u32" => "an integer (0..=4294967295)",
        "u64" | "usize" => "an integer (0..=2^63-1)",
        "i32" | "i64" => "an integer",
        "f32" | "f64" => "a number",
        "a boolean" => "a boolean (true or false)",
        "string only" | "a string" => "a string",
        "a sequence" => "an array",
        e if e.starts_with("struct ") => "a table",
        _ => return None,
    };
    let value = value?;
    let got = match value {
        // The right kind, beyond the key's range (a negative count, a u32 past 2^32).
        Value::Integer(i) if inner.starts_with("invalid value: ") => i.to_string(),
        v => kind_of(v),
    };
    let mut m = format!("expects {want}, got {got}");
    if let Value::String(s) = value {
        let t = s.trim();
        let number = if want.starts_with("an integer") {
            t.parse::<i64>().is_ok()
        } else {
            want == "a number" && t.parse::<f64>().is_ok()
        };
        if number {
            m.push_str(&format!(
                "; write the number without quotes ({t}, not \"{s}\")"
            ));
        } else if want.starts_with("a boolean") && matches!(t, "true" | "false") {
            m.push_str(&format!("; write it without quotes ({t})"));
        }
    }
    Some(m)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_and_column_count_characters() {
        let t = "a = 1\nbé = 2\n";
        assert_eq!(line_col(t, 0), (1, 1));
        assert_eq!(line_col(t, 6), (2, 1));
        assert_eq!(line_col(t, 10), (2, 4));
        assert_eq!(line_col(t, 1000), (3, 1));
    }

    #[test]
    fn key_at_follows_headers_and_numbers_flows() {
        let t = "[run]\nseed = 1\n[[flow]]\nx = 1\n[[flow]]\n[flow.delimited]\ny = 2\n";
        assert_eq!(key_at(t, t.find("1\n").unwrap()).unwrap(), "run.seed");
        assert_eq!(
            key_at(t, t.find("2\n").unwrap()).unwrap(),
            "flow.1.delimited.y"
        );
        let t = "[[flow]]\nx = 1\n";
        assert_eq!(key_at(t, t.find('1').unwrap()).unwrap(), "flow.0.x");
    }
}
