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
const MOVED: [(&str, &str, &str); 1] = [(
    "ftl",
    "user_order",
    "moved to `tsu.policy` (`reads_first` is \"out_of_order\", `arrival` is \"fifo\")",
)];

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
/// it as a string (it is not a TOML integer), so serde says "invalid type: string". Returns
/// the better message when `inner` is that case.
pub(super) fn overflowing_override(inner: &str) -> Option<String> {
    let rest = inner.strip_prefix("invalid type: string \"")?;
    let (digits, _) = rest.split_once('"')?;
    let body = digits.strip_prefix(['+', '-']).unwrap_or(digits);
    let numeric = !body.is_empty()
        && body.starts_with(|c: char| c.is_ascii_digit())
        && body.chars().all(|c| c.is_ascii_digit() || c == '_');
    numeric.then(|| {
        format!("{digits} is out of range for a 64-bit integer (TOML integers are -2^63..=2^63-1)")
    })
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
