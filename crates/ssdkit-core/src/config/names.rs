//! Names of a preset's flows after overrides (docs/workloads.md, "Flow names"). A preset names
//! its demo flow after what it does (`randread-qd32`); an override that changes what the name
//! says (`--set flow.0.queue_depth=1 --set flow.0.read_fraction=0`) would leave results
//! labelled `randread-qd32` for a QD1 writer, so such a flow is named anew by the same rule
//! from the flow as resolved (`randwrite-qd1`). A name the user gives is always kept.

use super::{AddressPattern, Arrival, Config, FlowConfig, Replay, SizeDist};

/// The name of a flow made from what it does: `<pattern><ops>[-<size>]-<load>`, e.g.
/// `randread-qd32`, `seqwrite-128k-qd1`, `randrw70-qd8`, `zipfread-1000iops`,
/// `trace-wsrch-qd8`. The request size shows when it is not `usual_bytes` (the preset flow's
/// own) or when sizes vary.
pub fn describe(f: &FlowConfig, usual_bytes: u64) -> String {
    if f.is_trace() {
        let file = std::path::Path::new(&f.trace)
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        // `wsrch.trace.gz` -> `wsrch`: the extensions say the format, not the workload.
        let stem = file.split('.').find(|s| !s.is_empty()).unwrap_or("file");
        return match f.replay {
            Replay::Closed => format!("trace-{stem}-qd{}", f.queue_depth),
            Replay::Timed => format!("trace-{stem}"),
        };
    }
    let pattern = match f.pattern {
        AddressPattern::Random => "rand",
        AddressPattern::Sequential => "seq",
        AddressPattern::Hotcold => "hotcold",
        AddressPattern::Zipf => "zipf",
        AddressPattern::Pareto => "pareto",
        AddressPattern::Normal => "normal",
    };
    let (r, t) = (f.read_fraction, f.trim_fraction);
    let ops = if r >= 1.0 {
        "read".to_string()
    } else if t >= 1.0 {
        "trim".to_string()
    } else if r <= 0.0 && t <= 0.0 {
        "write".to_string()
    } else if t <= 0.0 {
        format!("rw{}", percent(r))
    } else {
        format!("rw{}-trim{}", percent(r), percent(t))
    };
    let size = match f.size {
        SizeDist::Fixed if f.request_bytes == usual_bytes => String::new(),
        SizeDist::Fixed => format!("-{}", bytes(f.request_bytes)),
        SizeDist::Uniform => format!(
            "-{}-to-{}",
            bytes(f.size_min_bytes),
            bytes(f.size_max_bytes)
        ),
        SizeDist::Normal => format!("-{}-normal", bytes(f.request_bytes)),
        SizeDist::List => "-sizelist".to_string(),
    };
    let load = match f.arrival {
        Arrival::Closed => format!("qd{}", f.queue_depth),
        Arrival::Fixed => format!("{}iops", f.rate_iops),
        Arrival::Uniform => format!("{}iops-uniform", f.rate_iops),
        Arrival::Exponential => format!("{}iops-exponential", f.rate_iops),
        Arrival::Onoff => format!("{}iops-onoff", f.rate_iops),
    };
    format!("{pattern}{ops}{size}-{load}")
}

/// A fraction as a percentage, at most two decimals, no trailing zeros: 0.7 -> "70".
fn percent(x: f64) -> String {
    format!("{}", (x * 10000.0).round() / 100.0)
}

/// Bytes as a short size: 131072 -> "128k", 1048576 -> "1m", 64 -> "64b".
fn bytes(b: u64) -> String {
    if b >= 1 << 20 && b.is_multiple_of(1 << 20) {
        format!("{}m", b >> 20)
    } else if b >= 1 << 10 && b.is_multiple_of(1 << 10) {
        format!("{}k", b >> 10)
    } else {
        format!("{b}b")
    }
}

/// Renames the flows of `preset` (the preset as written) in `cfg` (the same preset after
/// `overrides`) whose description the overrides changed. A flow the overrides name
/// (`flow.N.name`) or give whole (`flow.N`, `flow`) keeps the name it has.
pub(super) fn rename_preset_flows(preset: &Config, cfg: &mut Config, overrides: &[String]) {
    let keys: Vec<&str> = overrides
        .iter()
        .filter_map(|o| o.split_once('='))
        .map(|(k, _)| k.trim())
        .collect();
    if keys.contains(&"flow") {
        return;
    }
    for (i, (was, now)) in preset.flows.iter().zip(cfg.flows.iter_mut()).enumerate() {
        let whole = format!("flow.{i}");
        let name = format!("flow.{i}.name");
        if keys.iter().any(|&k| k == whole || k == name) {
            continue;
        }
        let usual = was.request_bytes;
        let described = describe(now, usual);
        if described != describe(was, usual) {
            now.name = described;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flow(keys: &str) -> FlowConfig {
        let c = Config::load(&format!("[[flow]]\n{keys}\n"), "t", &[]).unwrap();
        c.flows[0].clone()
    }

    #[test]
    fn descriptions_say_pattern_ops_size_and_load() {
        let cases = [
            ("queue_depth = 32", "randread-qd32"),
            ("read_fraction = 0.0", "randwrite-qd1"),
            (
                "read_fraction = 0.7\npattern = \"sequential\"\nrequest_bytes = 131072",
                "seqrw70-128k-qd1",
            ),
            ("read_fraction = 0.6\ntrim_fraction = 0.1", "randrw60-trim10-qd1"),
            ("read_fraction = 0.0\ntrim_fraction = 1.0", "randtrim-qd1"),
            (
                "arrival = \"exponential\"\nrate_iops = 5000.0\npattern = \"zipf\"\nzipf_theta = 1.0",
                "zipfread-5000iops-exponential",
            ),
            ("arrival = \"fixed\"\nrate_iops = 1500.5", "randread-1500.5iops"),
            (
                "size = \"uniform\"\nsize_min_bytes = 4096\nsize_max_bytes = 1048576",
                "randread-4k-to-1m-qd1",
            ),
            ("request_bytes = 512", "randread-512b-qd1"),
        ];
        for (keys, want) in cases {
            assert_eq!(describe(&flow(keys), 4096), want, "{keys}");
        }
        let mut f = flow("");
        f.trace = "/data/wsrch.trace.gz".into();
        assert_eq!(describe(&f, 4096), "trace-wsrch");
        f.replay = Replay::Closed;
        f.queue_depth = 8;
        assert_eq!(describe(&f, 4096), "trace-wsrch-qd8");
    }

    /// The rule renames only what it would have named the same way: each preset's flow names
    /// are their own descriptions.
    #[test]
    fn preset_flow_names_are_their_descriptions() {
        for (name, _) in super::super::preset_names() {
            let c = Config::load(super::super::preset_toml(name).unwrap(), name, &[]).unwrap();
            for f in &c.flows {
                assert_eq!(f.name, describe(f, f.request_bytes), "preset {name}");
            }
        }
    }

    fn names(preset: &str, overrides: &[&str]) -> Vec<String> {
        let o: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
        let c = Config::load_preset(preset, &o).unwrap_or_else(|e| panic!("{e}"));
        c.flows.iter().map(|f| f.name.clone()).collect()
    }

    #[test]
    fn overrides_that_change_what_a_preset_name_says_rename_the_flow() {
        let p = "mqsim-paper";
        // The case: a QD1 writer is not `randread-qd32`.
        let qd1_writer = ["flow.0.queue_depth=1", "flow.0.read_fraction=0"];
        assert_eq!(names(p, &qd1_writer), ["randwrite-qd1"]);
        assert_eq!(
            names(p, &["flow.0.request_bytes=131072"]),
            ["randread-128k-qd32"]
        );
        assert_eq!(names(p, &["flow.0.pattern=sequential"]), ["seqread-qd32"]);
        // What the name does not say keeps it, as do values it already says.
        assert_eq!(names(p, &["flow.0.requests=500"]), ["randread-qd32"]);
        assert_eq!(names(p, &["flow.0.queue_depth=32"]), ["randread-qd32"]);
        assert_eq!(names(p, &["flash.channels=4"]), ["randread-qd32"]);
        // A name the user gives is kept, given before or after the other overrides.
        let mine = ["flow.0.name=mine", "flow.0.read_fraction=0"];
        assert_eq!(names(p, &mine), ["mine"]);
        let mine = ["flow.0.read_fraction=0", "flow.0.name=randread-qd32"];
        assert_eq!(names(p, &mine), ["randread-qd32"]);
        // A flow the overrides add is theirs: named by its index as in any file.
        assert_eq!(
            names(p, &["flow.1.read_fraction=0"]),
            ["randread-qd32", "flow1"]
        );
        // nvmesim-dram's flow moves 64 B: that size is its own, 4 KiB is not.
        assert_eq!(
            names("nvmesim-dram", &["flow.0.queue_depth=4"]),
            ["randread-qd4"]
        );
        assert_eq!(
            names("nvmesim-dram", &["flow.0.request_bytes=4096"]),
            ["randread-4k-qd1"]
        );
        // The same configuration from a file keeps the file's name.
        let text = crate::config::preset_toml(p).unwrap();
        let o: Vec<String> = qd1_writer.iter().map(|s| s.to_string()).collect();
        let c = Config::load(text, "mine.toml", &o).unwrap();
        assert_eq!(c.flows[0].name, "randread-qd32");
    }

    #[test]
    fn percentages_and_sizes_are_short() {
        assert_eq!(percent(0.7), "70");
        assert_eq!(percent(0.995), "99.5");
        assert_eq!(percent(1.0 / 3.0), "33.33");
        assert_eq!(bytes(131072), "128k");
        assert_eq!(bytes(3 << 20), "3m");
        assert_eq!(bytes(1536), "1536b");
    }
}
