use crate::error::Error;
use toml::Value;

/// Applies one `key.path=value` override to a parsed TOML tree. The value is read as a TOML
/// value (number, boolean, string, array); anything that does not parse as one is taken as a
/// bare string, so `--set ftl.placement=dynamic` works without quotes. A numeric path segment
/// indexes an array of tables: `flow.0.queue_depth=32`.
pub fn apply_override(root: &mut Value, spec: &str) -> Result<(), Error> {
    let (path, raw) = spec
        .split_once('=')
        .ok_or_else(|| Error::Config(format!("override `{spec}`: expected key.path=value")))?;
    let path = path.trim();
    if path.is_empty() || path.split('.').any(|s| s.is_empty()) {
        return Err(Error::Config(format!(
            "override `{spec}`: empty key in path `{path}`"
        )));
    }
    let value = parse_value(raw.trim());
    let segs: Vec<&str> = path.split('.').collect();
    let mut cur = root;
    for (i, seg) in segs.iter().enumerate() {
        let last = i + 1 == segs.len();
        let here = segs[..=i].join(".");
        // A policy given by name is the table of that type: a parameter set over it keeps it.
        expand_policy_name(cur, &segs[..i].join("."));
        cur = match cur {
            Value::Table(t) => {
                if last {
                    t.insert((*seg).to_string(), value);
                    return Ok(());
                }
                let seg = if *seg == "flow" { "flow" } else { seg };
                t.entry(seg.to_string()).or_insert_with(|| {
                    if segs[i + 1].parse::<usize>().is_ok() {
                        Value::Array(vec![])
                    } else {
                        Value::Table(Default::default())
                    }
                })
            }
            Value::Array(a) => {
                let idx: usize = seg.parse().map_err(|_| {
                    Error::Config(format!(
                        "override `{spec}`: `{here}` must be an index into an array"
                    ))
                })?;
                if idx > a.len() {
                    return Err(Error::Config(format!(
                        "override `{spec}`: index {idx} out of range (the array has {} entries; use {} to append)",
                        a.len(),
                        a.len()
                    )));
                }
                if idx == a.len() {
                    a.push(Value::Table(Default::default()));
                }
                if last {
                    a[idx] = value;
                    return Ok(());
                }
                &mut a[idx]
            }
            _ => {
                return Err(Error::Config(format!(
                    "override `{spec}`: `{}` is a value, not a section",
                    segs[..i].join(".")
                )))
            }
        };
    }
    Ok(())
}

/// Turns a policy written by name (`tsu.policy = "flin"`) into its table
/// (`{ type = "flin" }`) at a key that holds a tagged policy, so that its parameters can be
/// set over it.
pub(super) fn expand_policy_name(v: &mut Value, key: &str) {
    if let Value::String(name) = v {
        if let Some(&(_, tag)) = super::tagged::TAGGED_KEYS.iter().find(|(k, _)| *k == key) {
            let mut t = toml::map::Map::new();
            t.insert(tag.into(), Value::String(std::mem::take(name)));
            *v = Value::Table(t);
        }
    }
}

fn parse_value(raw: &str) -> Value {
    #[derive(serde::Deserialize)]
    struct Wrap {
        v: Value,
    }
    match toml::from_str::<Wrap>(&format!("v = {raw}")) {
        Ok(w) => w.v,
        Err(_) => Value::String(raw.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sets_nested_keys_and_array_entries() {
        let mut v: Value =
            toml::from_str("[flash]\nchannels = 8\n[[flow]]\nqueue_depth = 1\n").unwrap();
        apply_override(&mut v, "flash.channels=4").unwrap();
        apply_override(&mut v, "flow.0.queue_depth=32").unwrap();
        apply_override(&mut v, "ftl.placement=dynamic").unwrap();
        apply_override(&mut v, "flow.1.read_fraction=0.5").unwrap();
        assert_eq!(v["flash"]["channels"].as_integer(), Some(4));
        assert_eq!(v["flow"][0]["queue_depth"].as_integer(), Some(32));
        assert_eq!(v["ftl"]["placement"].as_str(), Some("dynamic"));
        assert_eq!(v["flow"][1]["read_fraction"].as_float(), Some(0.5));
        assert!(apply_override(&mut v, "flow.5.x=1").is_err());
        assert!(apply_override(&mut v, "flash.channels.x=1").is_err());
        assert!(apply_override(&mut v, "novalue").is_err());
    }

    /// A parameter set over a policy given by name keeps the policy; elsewhere a string
    /// stays a value.
    #[test]
    fn a_policy_parameter_over_its_name() {
        let mut v: Value = toml::from_str("[tsu]\npolicy = \"flin\"\n").unwrap();
        apply_override(&mut v, "tsu.policy.weight_high=8").unwrap();
        assert_eq!(v["tsu"]["policy"]["type"].as_str(), Some("flin"));
        assert_eq!(v["tsu"]["policy"]["weight_high"].as_integer(), Some(8));
        apply_override(&mut v, "ftl.placement=dynamic").unwrap();
        assert!(apply_override(&mut v, "ftl.placement.x=1").is_err());
    }
}
