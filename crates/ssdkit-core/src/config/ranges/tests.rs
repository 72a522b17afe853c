//! The declarations against the schema they produce and the check they produce: every
//! numeric key of the schema has both bounds, and for every declared range the value just
//! outside is refused with a message naming the key and the bound, while the boundary passes.

use super::Ranged;
use crate::config::Config;
use serde_json::{json, Value};

fn schema() -> Value {
    serde_json::from_str(&crate::config::schema_json()).expect("schema is JSON")
}

/// A numeric key of the schema: its path (lists of numbers end in `[0]`), its schema, and
/// whether it is an integer.
struct Leaf {
    path: String,
    s: Value,
    int: bool,
}

fn resolve<'a>(root: &'a Value, s: &'a Value) -> &'a Value {
    if let Some(r) = s.get("$ref").and_then(Value::as_str) {
        let name = r.trim_start_matches("#/definitions/");
        return resolve(root, &root["definitions"][name]);
    }
    if let Some([one]) = s.get("allOf").and_then(Value::as_array).map(Vec::as_slice) {
        return resolve(root, one);
    }
    s
}

fn types(s: &Value) -> Vec<String> {
    match &s["type"] {
        Value::String(t) => vec![t.clone()],
        Value::Array(v) => v
            .iter()
            .filter_map(|t| t.as_str().map(String::from))
            .collect(),
        _ => vec![],
    }
}

fn walk(root: &Value, s: &Value, path: &str, out: &mut Vec<Leaf>) {
    let s = resolve(root, s);
    for alt in ["anyOf", "oneOf"] {
        if let Some(v) = s.get(alt).and_then(Value::as_array) {
            // An optional table (anyOf [table, null]) or a tagged enum's variants; a number
            // with an "or 0" range is a leaf (below).
            if !types(s).iter().any(|t| t == "number" || t == "integer") {
                for a in v {
                    walk(root, a, path, out);
                }
                return;
            }
        }
    }
    let t = types(s);
    if t.iter().any(|t| t == "integer" || t == "number") {
        out.push(Leaf {
            path: path.to_string(),
            s: s.clone(),
            int: t.iter().any(|t| t == "integer"),
        });
    } else if t.iter().any(|t| t == "array") {
        let items = resolve(root, &s["items"]);
        if items.get("properties").is_some() {
            walk(root, items, &format!("{path}.0"), out);
        } else {
            walk(root, items, &format!("{path}[0]"), out);
        }
    } else if let Some(p) = s.get("properties").and_then(Value::as_object) {
        for (k, v) in p {
            let key = if path.is_empty() {
                k.clone()
            } else {
                format!("{path}.{k}")
            };
            walk(root, v, &key, out);
        }
    }
}

fn leaves() -> Vec<Leaf> {
    let root = schema();
    let mut out = Vec::new();
    walk(&root, &root, "", &mut out);
    out
}

/// The bounds a leaf declares: the range object (inside "or 0"'s anyOf), and whether 0 is
/// allowed besides it.
fn bounds(l: &Leaf) -> (Value, bool) {
    match l.s.get("anyOf").and_then(Value::as_array) {
        Some(v) => {
            let r = v.iter().find(|a| a.get("const").is_none()).expect("range");
            (r.clone(), true)
        }
        None => (l.s.clone(), false),
    }
}

fn num(v: &Value, k: &str) -> Option<f64> {
    v.get(k).and_then(Value::as_f64)
}

#[test]
fn every_numeric_key_in_the_schema_has_both_bounds() {
    let all = leaves();
    assert!(all.len() > 100, "{} numeric keys", all.len());
    let mut missing = Vec::new();
    for l in &all {
        let (b, _) = bounds(l);
        let lo = num(&b, "minimum").or(num(&b, "exclusiveMinimum"));
        let hi = num(&b, "maximum").or(num(&b, "exclusiveMaximum"));
        if lo.is_none() || hi.is_none() {
            missing.push(l.path.clone());
        }
    }
    assert!(
        missing.is_empty(),
        "keys without declared bounds: {missing:?}"
    );
    let find = |p: &str| all.iter().find(|l| l.path == p).expect(p);
    // The schema used to say "minimum": 0 (the type's) for these.
    assert_eq!(num(&find("flash.channels").s, "minimum"), Some(1.0));
    assert_eq!(num(&find("flash.channels").s, "maximum"), Some(256.0));
    assert_eq!(num(&find("flow.0.queue_depth").s, "minimum"), Some(1.0));
    let erase = &find("flash.erase_us").s;
    assert_eq!(num(erase, "exclusiveMinimum"), Some(0.0));
    assert_eq!(num(erase, "minimum"), None);
    let read = &find("flash.read_us[0]").s;
    assert_eq!(num(read, "exclusiveMinimum"), Some(0.0));
    let lanes = &find("pcie.lanes").s;
    assert_eq!(lanes["enum"], json!([1, 2, 4, 8, 12, 16, 32]));
    let page = &find("flash.page_size_bytes").s;
    assert_eq!(page["enum"][0], json!(8));
    assert_eq!(page["enum"].as_array().unwrap().len(), 13);
    // The doc comment and the default stay beside the bounds.
    assert!(erase["description"].as_str().unwrap().contains("tBERS"));
    assert_eq!(erase["default"], json!(3800.0));
}

/// A configuration that holds a value at every numeric key (one flow, one size-list entry, a
/// delimited-trace table, one value in each list), as JSON.
fn base() -> Value {
    let f = crate::config::FlowConfig {
        size_list: vec![crate::config::SizeWeight {
            bytes: 4096,
            weight: 1.0,
        }],
        delimited: Some(crate::config::DelimitedConfig {
            offset_column: 1,
            size_column: 2,
            op_column: 3,
            ..Default::default()
        }),
        ..Default::default()
    };
    // The policies whose variants carry keys, so that those keys are there to set.
    let mut c = Config {
        flows: vec![f],
        ..Default::default()
    };
    c.ftl.gc_policy = crate::config::GcPolicy::DChoices { d: 10 };
    c.ftl.mapping = crate::config::Mapping::Hybrid {
        log_blocks: 8,
        associativity: Default::default(),
    };
    c.tsu.policy = crate::config::TsuPolicy::Flin(Default::default());
    serde_json::to_value(&c).expect("config serialises")
}

/// `v` with `path` set to `x` (a list key to the one-value list [x]).
fn set(v: &Value, path: &str, x: Value) -> Value {
    let mut v = v.clone();
    let (path, list) = match path.strip_suffix("[0]") {
        Some(p) => (p, true),
        None => (path, false),
    };
    let mut cur = &mut v;
    let parts: Vec<&str> = path.split('.').collect();
    for (i, p) in parts.iter().enumerate() {
        let last = i + 1 == parts.len();
        cur = match p.parse::<usize>() {
            Ok(n) => &mut cur[n],
            Err(_) if last => {
                cur[*p] = if list { json!([x]) } else { x };
                return v;
            }
            Err(_) => {
                if cur.get(*p).is_none() {
                    cur[*p] = json!({});
                }
                &mut cur[*p]
            }
        };
    }
    unreachable!("a key path ends in a name")
}

fn check(v: &Value) -> Result<(), String> {
    let c: Config = serde_json::from_value(v.clone()).map_err(|e| format!("serde: {e}"))?;
    c.check_ranges("")
}

fn type_max(s: &Value) -> f64 {
    match s["format"].as_str() {
        Some("uint8") => u8::MAX as f64,
        Some("uint16") => u16::MAX as f64,
        Some("uint32") => u32::MAX as f64,
        Some("int32") => i32::MAX as f64,
        _ => u64::MAX as f64,
    }
}

fn int_json(x: f64) -> Value {
    if x >= 0.0 {
        json!(x as u64)
    } else {
        json!(x as i64)
    }
}

#[test]
fn each_declared_range_refuses_just_outside_and_accepts_its_bounds() {
    let base = base();
    assert_eq!(check(&base), Ok(()), "defaults are in range");
    let mut tried = 0;
    for l in leaves() {
        let (b, or_zero) = bounds(&l);
        let key = format!("`{}`", l.path);
        let refused = |x: Value, says: &str| {
            let e = check(&set(&base, &l.path, x.clone()))
                .expect_err(&format!("{} = {x} should be refused", l.path));
            assert!(
                e.contains(&key) && e.contains(says),
                "{} = {x}: {e}",
                l.path
            );
        };
        let accepted = |x: Value| {
            let r = check(&set(&base, &l.path, x.clone()));
            assert_eq!(r, Ok(()), "{} = {x} should be accepted", l.path);
        };
        let shown = |x: f64| {
            if l.int {
                format!("{}", x as i128)
            } else {
                format!("{x}")
            }
        };
        if let Some(list) = b.get("enum").and_then(Value::as_array) {
            for x in list {
                accepted(x.clone());
            }
            let lo = num(&b, "minimum").unwrap();
            let hi = num(&b, "maximum").unwrap();
            let listed = |x: f64| list.iter().any(|y| y.as_f64() == Some(x));
            let gap = (lo as u64..=hi as u64)
                .map(|x| x as f64)
                .chain([(lo + hi) / 2.0 + 0.25])
                .find(|&x| !listed(x))
                .expect("a value between the listed ones");
            let x = if l.int { int_json(gap) } else { json!(gap) };
            refused(x, &shown(lo));
            refused(int_json(hi * 2.0), &shown(hi));
            tried += 1;
            continue;
        }
        let top = type_max(&l.s);
        match (num(&b, "minimum"), num(&b, "exclusiveMinimum")) {
            (Some(lo), None) if l.int => {
                accepted(int_json(lo));
                if lo > 0.0 && !(or_zero && lo == 1.0) {
                    refused(int_json(lo - 1.0), &shown(lo));
                }
            }
            (Some(lo), None) => {
                accepted(json!(lo));
                if !(or_zero && lo == 0.0) {
                    let below = if or_zero { lo / 2.0 } else { lo.next_down() };
                    refused(json!(below), &shown(lo));
                }
            }
            (None, Some(lo)) => {
                accepted(json!(lo.next_up()));
                if !or_zero || lo != 0.0 {
                    refused(json!(lo), &shown(lo));
                } else {
                    accepted(json!(0.0));
                    refused(json!(-f64::MIN_POSITIVE), &shown(lo));
                }
            }
            other => panic!("{}: lower bound {other:?}", l.path),
        }
        match (num(&b, "maximum"), num(&b, "exclusiveMaximum")) {
            (Some(hi), None) if l.int => {
                if hi < top {
                    accepted(int_json(hi));
                    refused(int_json(hi + 1.0), &shown(hi));
                }
            }
            (Some(hi), None) => {
                accepted(json!(hi));
                refused(json!(hi.next_up()), &shown(hi));
            }
            (None, Some(hi)) => {
                accepted(json!(hi.next_down()));
                refused(json!(hi), &shown(hi));
            }
            other => panic!("{}: upper bound {other:?}", l.path),
        }
        tried += 1;
    }
    assert!(tried > 100, "{tried} ranges tried");
}

/// What JSON cannot carry: values that are not numbers are refused by every float range.
#[test]
fn non_finite_values_are_refused() {
    for x in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        let mut c = Config::default();
        c.flash.erase_us = x;
        let e = c.check_ranges("").unwrap_err();
        assert!(
            e.contains("`flash.erase_us`") && e.contains("(0, 1000000]"),
            "{e}"
        );
        let mut c = Config::default();
        c.run.timeseries_window_ms = x;
        let e = c.check_ranges("").unwrap_err();
        assert!(e.contains("(or 0 for no time series)"), "{e}");
        let mut c = Config::default();
        c.steady_state.round_ms = Some(x);
        assert!(c.check_ranges("").is_err());
    }
}

#[test]
fn messages_say_the_range_in_the_keys_own_terms() {
    let e = |f: &dyn Fn(&mut Config)| {
        let mut c = Config {
            flows: vec![Default::default()],
            ..Default::default()
        };
        f(&mut c);
        c.check_ranges("").unwrap_err()
    };
    assert_eq!(
        e(&|c| c.flash.channels = 0),
        "key `flash.channels` = 0 is out of range; allowed 1..=256"
    );
    assert_eq!(
        e(&|c| c.flash.page_size_bytes = 3000),
        "key `flash.page_size_bytes` = 3000 must be a power of two in 8..=32768"
    );
    assert_eq!(
        e(&|c| c.pcie.lanes = 3),
        "key `pcie.lanes` = 3 is not a PCIe link width; allowed 1, 2, 4, 8, 12, 16 or 32"
    );
    assert_eq!(
        e(&|c| c.precondition.write_tolerance = 1.0),
        "key `precondition.write_tolerance` = 1 is out of range; allowed (0, 1)"
    );
    assert_eq!(
        e(&|c| c.flows[0].flush_every = Some(0)),
        "key `flow.0.flush_every` = 0 is out of range; allowed >= 1 (a Flush after every that many requests; unset: no flushes)"
    );
    assert_eq!(
        e(&|c| c.flash.read_us = vec![75.0, 0.0]),
        "key `flash.read_us[1]` = 0 is out of range; allowed (0, 100000]"
    );
    assert_eq!(
        e(&|c| c.interface.max_inflight_commands = 1 << 25),
        "key `interface.max_inflight_commands` = 33554432 is out of range; allowed 0..=16777216 (0: no limit)"
    );
}

/// The declaration repeats the length of the steady-state window (the attribute takes a
/// literal): keep them equal.
#[test]
fn max_rounds_declares_the_window() {
    let r = crate::config::__range_SteadyStateConfig_max_rounds();
    let w = crate::config::WINDOW_ROUNDS as i128;
    assert_eq!(r.lo, Some((super::Limit::Int(w), false)));
}

/// The table test above sets keys on FLIN; the weights of "priority_out_of_order" (another
/// newtype variant, its own struct) are checked by their own declarations too.
#[test]
fn priority_weights_are_checked_by_their_declaration() {
    let on = |w: u32| {
        let mut c = Config::default();
        c.tsu.policy = crate::config::TsuPolicy::PriorityOutOfOrder(crate::config::ClassWeights {
            weight_low: w,
            ..Default::default()
        });
        c.check_ranges("")
    };
    assert_eq!(on(1), Ok(()));
    assert_eq!(on(256), Ok(()));
    for w in [0, 257] {
        let e = on(w).expect_err("out of range");
        assert!(
            e.contains("`tsu.policy.weight_low`") && e.contains("1..=256"),
            "{e}"
        );
    }
}
