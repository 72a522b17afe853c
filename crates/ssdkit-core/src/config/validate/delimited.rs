//! `[flow.delimited]`: the description of a delimited-text trace (docs/workloads.md), checked
//! at load like every other key. The reader that runs a description is
//! `crate::workload::trace`'s; it relies on these checks.

use crate::config::DelimitedConfig;

/// Highest column number a description may name: plenty for real traces, and it bounds the
/// per-line scratch (declared with the table's ranges).
pub const MAX_COLUMN: u32 = crate::config::MAX_TRACE_COLUMN;

/// Checks a `[flow.delimited]` table. The message starts with the key at fault and names what
/// is allowed; callers prefix the table path.
pub fn validate_delimited(d: &DelimitedConfig) -> Result<(), String> {
    if d.delimiter != "whitespace"
        && !(d.delimiter.len() == 1 && delimiter_byte_ok(d.delimiter.as_bytes()[0]))
    {
        return Err(format!(
            "delimiter: must be \"whitespace\" (runs of spaces and tabs) or one ASCII character \
             such as \",\", \";\", \"|\" or \"\\t\", not {:?}",
            d.delimiter
        ));
    }
    // The keys' own ranges (declared on `DelimitedConfig`), said as "key: value is ...".
    crate::config::ranges::Ranged::check_ranges(d, "").map_err(|m| {
        m.strip_prefix("key `")
            .and_then(|r| r.split_once("` = "))
            .map_or_else(|| m.clone(), |(k, rest)| format!("{k}: {rest}"))
    })?;
    if d.op_write_bit >= 0 {
        if !d.read_values.is_empty() {
            return Err("read_values: must be empty when op_write_bit is set \
                        (the bit tells read from write)"
                .into());
        }
        if !d.write_values.is_empty() {
            return Err("write_values: must be empty when op_write_bit is set \
                        (the bit tells read from write)"
                .into());
        }
    } else if d.read_values.is_empty() && d.write_values.is_empty() && d.trim_values.is_empty() {
        return Err(
            "read_values: list the op column's texts for reads (and write_values, trim_values \
                    for writes and TRIMs), or set op_write_bit"
                .into(),
        );
    }
    let lists = [
        ("read_values", &d.read_values),
        ("write_values", &d.write_values),
        ("trim_values", &d.trim_values),
    ];
    for (i, (key, list)) in lists.iter().enumerate() {
        for (j, v) in list.iter().enumerate() {
            if list[..j].contains(v) {
                return Err(format!("{key}: {v:?} is listed twice"));
            }
            for (other, olist) in &lists[..i] {
                if olist.contains(v) {
                    return Err(format!(
                        "{key}: {v:?} is also in {other}; an op text can mean one operation only"
                    ));
                }
            }
        }
    }
    if d.event_column > 0 && d.event_values.is_empty() {
        return Err(
            "event_values: must list the event column's texts that mark a request \
                    when event_column is set"
                .into(),
        );
    }
    if d.event_column == 0 && !d.event_values.is_empty() {
        return Err(
            "event_column: must be >= 1 when event_values is set (0 = every line is a request)"
                .into(),
        );
    }
    Ok(())
}

fn delimiter_byte_ok(b: u8) -> bool {
    b.is_ascii() && b != b'\n' && b != b'\r'
}
