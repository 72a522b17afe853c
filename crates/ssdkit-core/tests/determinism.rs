//! Same configuration and seed, same result bytes (apart from wall-clock figures).

mod common;
use common::*;
use serde_json::Value;

fn strip(mut v: Value) -> String {
    let o = v.as_object_mut().unwrap();
    for k in ["wall_time_s", "events_per_wall_s", "requests_per_wall_s"] {
        assert!(o.remove(k).is_some(), "result has {k}");
    }
    let pre = v["device"]["precondition"].as_object_mut().unwrap();
    assert!(
        pre.remove("wall_time_s").is_some(),
        "precondition has its wall time"
    );
    serde_json::to_string(&v).unwrap()
}

#[test]
fn same_seed_same_bytes_other_seed_differs() {
    let o = [
        "flash.blocks_per_plane=128",
        "flow.0.read_fraction=0.6",
        "flow.0.queue_depth=16",
        "flow.0.requests=20000",
        "flow.1.queue_depth=4",
        "flow.1.request_bytes=65536",
        "flow.1.requests=2000",
        "flow.1.read_fraction=0.3",
        // Open loop, variable sizes and a skewed pattern draw from their own streams.
        "flow.2.arrival=exponential",
        "flow.2.rate_iops=20000",
        "flow.2.read_fraction=0.5",
        "flow.2.size=uniform",
        "flow.2.size_min_bytes=4096",
        "flow.2.size_max_bytes=65536",
        "flow.2.pattern=zipf",
        "flow.2.zipf_theta=0.9",
        "flow.2.scramble=true",
        "flow.2.requests=5000",
    ];
    let a = strip(run_cfg(&preset("mqsim-paper", &o)));
    let b = strip(run_cfg(&preset("mqsim-paper", &o)));
    assert_eq!(a, b);
    let mut o2 = o.to_vec();
    o2.push("run.seed=2");
    let c = strip(run_cfg(&preset("mqsim-paper", &o2)));
    assert_ne!(a, c);
}
