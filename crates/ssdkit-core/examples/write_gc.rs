//! Profiling aid: 4 KiB random writes at QD32 on the preconditioned mqsim-paper device.
//! Usage: cargo run --release --example write_gc [requests] [key=value ...]
use ssdkit_core::api::{load, run, Source};

fn main() {
    let mut args = std::env::args().skip(1);
    let n: u64 = args
        .next()
        .map(|s| s.parse().expect("request count"))
        .unwrap_or(300_000);
    let mut o: Vec<String> = vec![
        "flow.0.queue_depth=32".into(),
        "flow.0.read_fraction=0".into(),
        format!("flow.0.requests={n}"),
    ];
    o.extend(args);
    let c = load(Source::Preset("mqsim-paper"), &o).unwrap_or_else(|e| panic!("{e}"));
    let out = run(&c, false, false).unwrap();
    let r = &out.result;
    println!(
        "predicted WA {}; precondition {:.2} s; run {:.2} s: {:.0} req/s, {:.0} events/s, WA {:.3}, gc_runs {}",
        r["device"]["precondition"]["predicted_write_amplification"],
        r["device"]["precondition"]["wall_time_s"].as_f64().unwrap(),
        r["wall_time_s"].as_f64().unwrap(),
        r["requests_per_wall_s"].as_f64().unwrap(),
        r["events_per_wall_s"].as_f64().unwrap(),
        r["device"]["ftl"]["write_amplification"].as_f64().unwrap(),
        r["device"]["ftl"]["gc_runs"]
    );
}
