//! Trace replay through the whole simulator: every reference trace (tests/data/traces, copies of
//! ../shared/reference/traces) replays to completion in its own format with the request count
//! and read fraction of INDEX.md; timed replay's latency does not depend on the time scale
//! while the device keeps up, and shows queueing when it does not.

use serde_json::Value;
use ssdkit_core::api::{run, run_keep_state};
use ssdkit_core::config::Config;
use std::io::Write;
use std::path::{Path, PathBuf};

fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/traces")
}

const DEVICE: &str = r#"
[flash]
channels = 2
chips_per_channel = 2
dies_per_chip = 1
planes_per_die = 2
blocks_per_plane = 256
pages_per_block = 128
page_size_bytes = 4096
"#;

fn load(flows: &str) -> Config {
    Config::load(&format!("{DEVICE}\n{flows}"), "test", &[]).unwrap_or_else(|e| panic!("{e}"))
}

struct Row {
    file: String,
    format: &'static str,
    requests: u64,
    read_pct: f64,
}

/// The table of INDEX.md, read at test time so the figures are the reference's own.
fn index_rows() -> Vec<Row> {
    let text = std::fs::read_to_string(data_dir().join("INDEX.md")).unwrap();
    let mut rows = Vec::new();
    for line in text
        .lines()
        .filter(|l| l.starts_with("| ") && l.contains('/'))
    {
        // The format column may itself contain '|' ("D|C"): count the 7 columns after it
        // from the right.
        let cols: Vec<&str> = line
            .trim()
            .trim_matches('|')
            .split('|')
            .map(str::trim)
            .collect();
        let n = cols.len();
        let file = cols[0];
        let fmt = cols[1..n - 7].join("|");
        let format = if fmt.starts_with("MQSim/SSDsim") {
            "mqsim"
        } else if fmt.contains("size_4KiB_pages") {
            "disksim_pages"
        } else if fmt.starts_with("DiskSim ASCII") {
            "disksim"
        } else if fmt.starts_with("BIOtracer") {
            "biotracer"
        } else if fmt.starts_with("CSV version") {
            "cloudphysics"
        } else if fmt.starts_with("WiscSee") {
            "wiscsee"
        } else if fmt.starts_with("blkparse") {
            "blkparse"
        } else {
            panic!("INDEX.md format `{fmt}` has no reader mapping in this test");
        };
        rows.push(Row {
            file: file.to_string(),
            format,
            requests: cols[n - 6].replace(',', "").parse().unwrap(),
            read_pct: cols[n - 5].parse().unwrap(),
        });
    }
    assert_eq!(rows.len(), 22, "INDEX.md lists 22 traces");
    rows
}

fn compressed_copy(file: &str) -> PathBuf {
    for ext in ["zst", "gz"] {
        let p = data_dir().join(format!("{file}.{ext}"));
        if p.exists() {
            return p;
        }
    }
    panic!("no compressed copy of {file} in {}", data_dir().display());
}

#[test]
fn every_reference_trace_replays_with_index_counts() {
    for row in index_rows() {
        let path = compressed_copy(&row.file);
        // Booting_log176 mixes relative stamps with epoch stamps 1.4e9 s later, beyond
        // simulated time (2^64 ps = 213 days): it replays closed loop; the rest by their
        // timestamps.
        let replay = if row.file.contains("Booting") {
            "replay = \"closed\"\nqueue_depth = 32"
        } else {
            "replay = \"timed\""
        };
        let c = load(&format!(
            r#"
[[flow]]
trace = "{}"
trace_format = "{}"
fold = "modulo"
{replay}
"#,
            path.display(),
            row.format
        ));
        let r = run(&c, false, false)
            .unwrap_or_else(|e| panic!("{}: {e}", row.file))
            .result;
        let s = &r["device"]["stats"];
        let reads = s["read"]["count"].as_u64().unwrap();
        let writes = s["write"]["count"].as_u64().unwrap();
        let trims = s["trim"]["count"].as_u64().unwrap();
        let f = &r["flows"][0];
        assert_eq!(
            f["completed"].as_u64().unwrap(),
            reads + writes + trims,
            "{}",
            row.file
        );
        // INDEX counts reads and writes (WiscSee's one discard replays as a TRIM).
        assert_eq!(reads + writes, row.requests, "{}: request count", row.file);
        let pct = 100.0 * reads as f64 / (reads + writes) as f64;
        // INDEX states one decimal (cloudPhysicsIO's 41.25 % is written 41.2: truncated), so
        // equality is to within its last digit.
        assert!(
            (pct - row.read_pct).abs() < 0.1,
            "{}: read % {pct:.3} vs INDEX {}",
            row.file,
            row.read_pct
        );
        assert_eq!(r["stopped_by_time_cap"], Value::Bool(false));
        println!(
            "{:<70} {:>8} requests {:>6.1} % reads  {} trims  folded {}",
            row.file,
            reads + writes,
            pct,
            trims,
            f["trace"]["folded"]
        );
    }
}

/// An MQSim-format trace of 4 KiB random reads with exponential gaps of `mean_us`.
fn write_trace(path: &Path, n: usize, mean_us: f64) {
    use rand::{Rng, SeedableRng};
    let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(7);
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    let mut t = 0.0f64;
    for _ in 0..n {
        t += -(1.0 - rng.gen::<f64>()).ln() * mean_us * 1000.0;
        let sector = rng.gen_range(0..100_000u64) * 8;
        writeln!(f, "{} 0 {} 8 1", t as u64, sector).unwrap();
    }
}

fn replay_mean_read_us(trace: &Path, scale: f64) -> (f64, u64) {
    let c = load(&format!(
        r#"
[[flow]]
trace = "{}"
time_scale = {scale}
"#,
        trace.display()
    ));
    let (out, _) = run_keep_state(&c, false).unwrap();
    let r = out.result;
    (
        r["device"]["stats"]["read"]["latency_us"]["mean"]
            .as_f64()
            .unwrap(),
        r["device"]["stats"]["read"]["count"].as_u64().unwrap(),
    )
}

#[test]
fn timed_replay_latency_is_independent_of_scale_until_saturation() {
    let dir = std::env::temp_dir().join(format!("ssdkit-replay-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let trace = dir.join("light.trace");
    // 20k reads, mean gap 10 ms: even 4x faster, each die is busy under 1 % of the time, so
    // requests almost never wait for each other.
    write_trace(&trace, 20_000, 10_000.0);
    let (base, n) = replay_mean_read_us(&trace, 1.0);
    assert_eq!(n, 20_000);
    for scale in [0.25, 0.5, 2.0, 4.0] {
        let (m, n) = replay_mean_read_us(&trace, scale);
        assert_eq!(n, 20_000);
        let e = (m - base).abs() / base;
        println!(
            "time_scale {scale}: mean read {m:.2} us vs {base:.2} us ({:.2} %)",
            e * 100.0
        );
        assert!(e < 0.02, "scale {scale}: {m} us vs {base} us");
    }
    // 10^4 x faster: ~1M reads/s offered, more than the device serves. Every request still
    // completes; the backlog shows as latency.
    let (m, n) = replay_mean_read_us(&trace, 0.0001);
    assert_eq!(n, 20_000, "no request is lost under overload");
    assert!(m > 10.0 * base, "overload mean {m} us vs light {base} us");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn device_filter_fold_and_bad_lines() {
    let dir = std::env::temp_dir().join(format!("ssdkit-filter-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let t = dir.join("t.trace");
    std::fs::write(
        &t,
        "0 0 0 8 1\n1000 1 8 8 0\n2000 0 999999999 8 1\n3000 1 16 8 1\n4000 2 24 8 0\n",
    )
    .unwrap();
    let cfg = |extra: &str| {
        load(&format!(
            "[[flow]]\ntrace = \"{}\"\ntrace_format = \"mqsim\"\n{extra}\n",
            t.display()
        ))
    };
    // fold = "none": the far request is an error naming file, line and text.
    let e = run(&cfg(""), false, false).err().unwrap().to_string();
    assert!(
        e.contains("t.trace:3") && e.contains("999999999") && e.contains("fold"),
        "{e}"
    );
    let r = run(&cfg("fold = \"modulo\"\ndevices = [0, 2]"), false, false)
        .unwrap()
        .result;
    let f = &r["flows"][0];
    assert_eq!(f["completed"].as_u64(), Some(3));
    assert_eq!(f["trace"]["filtered_out"].as_u64(), Some(2));
    assert_eq!(f["trace"]["folded"].as_u64(), Some(1));
    // A malformed line stops the run with its line number, or is skipped and counted.
    std::fs::write(&t, "0 0 0 8 1\n1000 0 8 x 0\n2000 0 16 8 1\n").unwrap();
    let e = run(&cfg(""), false, false).err().unwrap().to_string();
    assert!(e.contains("t.trace:2") && e.contains("1000 0 8 x 0"), "{e}");
    let r = run(&cfg("skip_malformed = true"), false, false)
        .unwrap()
        .result;
    assert_eq!(r["flows"][0]["completed"].as_u64(), Some(2));
    assert_eq!(
        r["flows"][0]["trace"]["skipped_malformed"].as_u64(),
        Some(1)
    );
    // Backwards timestamps: clamped and counted, or an error when asked.
    std::fs::write(&t, "5000 0 0 8 1\n1000 0 8 8 1\n6000 0 16 8 1\n").unwrap();
    let r = run(&cfg(""), false, false).unwrap().result;
    assert_eq!(
        r["flows"][0]["trace"]["backwards_clamped"].as_u64(),
        Some(1)
    );
    let e = run(&cfg("backwards = \"error\""), false, false)
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("t.trace:2") && e.contains("back"), "{e}");
    // A missing file names the flow key.
    let e = run(
        &load("[[flow]]\ntrace = \"/nonexistent/x.trace\"\n"),
        false,
        false,
    )
    .err()
    .unwrap()
    .to_string();
    assert!(
        e.contains("flow.0.trace") && e.contains("/nonexistent/x.trace"),
        "{e}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// Device numbers of one trace mapped to two flows (each its own queue), replayed at once.
#[test]
fn device_filters_split_one_trace_into_flows() {
    let path = compressed_copy("mqsim_tpcc_small/tpcc-small.trace");
    let flow = |dev: &str| {
        format!(
            "[[flow]]\nname = \"dev{dev}\"\ntrace = \"{}\"\nfold = \"modulo\"\ndevices = [{dev}]\n",
            path.display()
        )
    };
    let all = run(
        &load(&format!(
            "[[flow]]\ntrace = \"{}\"\nfold = \"modulo\"\n",
            path.display()
        )),
        false,
        false,
    )
    .unwrap()
    .result;
    let split = run(
        &load(&format!("{}\n{}", flow("4"), flow("3, 5"))),
        false,
        false,
    )
    .unwrap()
    .result;
    let f = &split["flows"];
    let (a, b) = (
        f[0]["completed"].as_u64().unwrap(),
        f[1]["completed"].as_u64().unwrap(),
    );
    assert!(a > 0 && b > 0);
    // Each flow saw every line and kept its own devices.
    assert_eq!(
        f[0]["trace"]["records"],
        all["flows"][0]["trace"]["records"]
    );
    assert_eq!(
        a + f[0]["trace"]["filtered_out"].as_u64().unwrap(),
        all["flows"][0]["completed"].as_u64().unwrap()
    );
    assert_eq!(
        b + f[1]["trace"]["filtered_out"].as_u64().unwrap(),
        all["flows"][0]["completed"].as_u64().unwrap()
    );
}
