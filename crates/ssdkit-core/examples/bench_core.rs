//! Times the simulator alone (no Python) on the benchmark cases; `ssdkit bench` is the
//! user-facing command. Usage: cargo run --release --example bench_core [requests [key=value...]]
//! Every case starts from the preset with a bare controller (the whole map in DRAM, no data
//! cache, as `ssdkit bench`'s first cases); the overrides change the device of every case, e.g.
//! `ftl.cmt.mode=shared` (`make test` runs it with a few hundred requests on a shrunken device,
//! to check it still works).
use ssdkit_core::api::{load, run, Source};
use std::time::Instant;

fn main() {
    let mut args = std::env::args().skip(1);
    let n: u64 = args
        .next()
        .map(|s| s.parse().expect("request count"))
        .unwrap_or(1_000_000);
    let device: Vec<String> = args.collect();
    let cases: [(&str, Vec<String>); 4] = [
        ("4K rand read QD1", vec!["flow.0.queue_depth=1".into()]),
        ("4K rand read QD32", vec!["flow.0.queue_depth=32".into()]),
        (
            "128K seq read QD32",
            vec![
                "flow.0.queue_depth=32".into(),
                "flow.0.request_bytes=131072".into(),
                "flow.0.pattern=sequential".into(),
            ],
        ),
        (
            "4K rand write QD32",
            vec![
                "flow.0.queue_depth=32".into(),
                "flow.0.read_fraction=0".into(),
            ],
        ),
    ];
    for (name, case) in cases {
        let reqs = n;
        let mut o: Vec<String> = vec!["ftl.cmt.mode=ideal".into(), "cache.mode=off".into()];
        o.extend(case);
        o.extend(device.iter().cloned());
        o.push(format!("flow.0.requests={reqs}"));
        let c = load(Source::Preset("mqsim-paper"), &o).unwrap();
        let t0 = Instant::now();
        let out = run(&c, false, false).unwrap();
        let total = t0.elapsed().as_secs_f64();
        let sim_wall = out.result["wall_time_s"].as_f64().unwrap();
        let pre = &out.result["device"]["precondition"];
        println!(
            "{name:20} precondition {} in {:.2} s, WA {}",
            pre["mode"],
            pre["wall_time_s"].as_f64().unwrap(),
            out.result["device"]["ftl"]["write_amplification"]
        );
        println!(
            "{name:20} {reqs:>8} req  build+run {total:6.2} s  run {sim_wall:6.2} s  {:>10.0} req/s  {:>10.0} events/s  gc_runs {}",
            reqs as f64 / sim_wall,
            out.events as f64 / sim_wall,
            out.result["device"]["ftl"]["gc_runs"]
        );
    }
}
