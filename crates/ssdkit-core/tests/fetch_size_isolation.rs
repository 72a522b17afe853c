//! Seed 000 Figure 12's direction: QueueFetchSize bounds how many requests of one queue sit
//! inside the device, and a small bound protects a light flow from a heavy one.

mod common;
use common::*;

fn two_flows(fetch: u32) -> serde_json::Value {
    let c = preset(
        "mqsim-paper",
        &[
            "flash.blocks_per_plane=128",
            &format!("interface.queue_fetch_size={fetch}"),
            "flow.0.name=heavy",
            "flow.0.queue_depth=256",
            "flow.0.requests=40000",
            "flow.1.name=light",
            "flow.1.queue_depth=2",
            "flow.1.requests=2000",
        ],
    );
    run_cfg(&c)
}

#[test]
fn small_fetch_size_bounds_device_queue_and_protects_light_flow() {
    let small = two_flows(16);
    let large = two_flows(1024);
    assert_eq!(small["flows"][0]["max_in_device"].as_u64(), Some(16));
    assert_eq!(large["flows"][0]["max_in_device"].as_u64(), Some(256));
    let light = |r: &serde_json::Value| {
        r["flows"][1]["stats"]["all"]["latency_us"]["mean"]
            .as_f64()
            .unwrap()
    };
    let (s, l) = (light(&small), light(&large));
    // "Measurably": at least 20 % lower mean latency for the light flow.
    assert!(
        s < 0.8 * l,
        "light flow mean {s:.1} us with fetch 16 vs {l:.1} us with fetch 1024"
    );
}
