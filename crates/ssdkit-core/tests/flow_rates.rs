//! A flow's rates are over its own active interval (first arrival to last completion), as fio
//! reports them; the device's over the whole run.
mod common;
use ssdkit_core::api::{load, run, Source};

fn flow0_read_iops(with_long_light_flow: bool) -> (f64, serde_json::Value) {
    // The bare controller: mapping-cache misses would stretch flow 0 past a tenth of the run.
    let mut o = common::bare(&[
        "flash.blocks_per_plane=128",
        "flow.0.queue_depth=1",
        "flow.0.requests=2000",
    ]);
    if with_long_light_flow {
        // A second flow that trickles reads for ten times as long as flow 0 runs.
        o.extend(
            [
                "flow.1.name=trickle",
                "flow.1.arrival=fixed",
                "flow.1.rate_iops=50",
                "flow.1.duration_ms=2000",
                "flow.1.requests=0",
            ]
            .map(String::from),
        );
    }
    let c = load(Source::Preset("mqsim-paper"), &o).unwrap();
    let r = run(&c, false, false).unwrap().result;
    let iops = r["flows"][0]["stats"]["read"]["iops"].as_f64().unwrap();
    (iops, r)
}

#[test]
fn a_flow_active_for_a_tenth_of_the_run_reports_its_own_rate() {
    let (alone, _) = flow0_read_iops(false);
    let (shared, r) = flow0_read_iops(true);
    let run_s = r["simulated_time_s"].as_f64().unwrap();
    let active = r["flows"][0]["active_time_s"].as_f64().unwrap();
    assert!(
        active < run_s / 9.0,
        "flow 0 active {active} s of {run_s} s"
    );
    // The trickle shares the device for a few requests: within 1 % of the rate alone.
    assert!(
        (shared / alone - 1.0).abs() < 0.01,
        "flow 0 alone {alone:.1} IOPS, beside the trickle {shared:.1} IOPS"
    );
    // Its rate is its count over its own interval; the device's over the whole run.
    let count = r["flows"][0]["stats"]["read"]["count"].as_f64().unwrap();
    assert_eq!(shared, count / active);
    let dev = &r["device"]["stats"]["read"];
    assert_eq!(
        dev["iops"].as_f64().unwrap(),
        dev["count"].as_f64().unwrap() / run_s
    );
    let trickle = &r["flows"][1];
    let t_active = trickle["active_time_s"].as_f64().unwrap();
    assert!((t_active / run_s) > 0.99, "the trickle spans the run");
}
