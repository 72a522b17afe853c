//! The alone runs of a fairness measurement (the MQSim paper, FAST'18, section 3.1):
//! `api::run_alone` runs one flow with every other switched off and returns its figures
//! without a result document. They must be the figures of the same run made the documented
//! way (`flow.N.enabled = false`), to the bit; and a switched-off flow must cost nothing to
//! build (its trace is not opened), since each alone run of n flows switches n - 1 off.

mod common;
use common::*;
use ssdkit_core::api::{self, load, Source};
use ssdkit_core::Error;

fn trace(name: &str) -> String {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/data/traces/blkparse_wiscsee_sqlite")
        .join(name);
    p.to_string_lossy().into_owned()
}

/// Three flows of different kinds on the 64 MiB device, filled: random reads at QD2, a 70/30
/// mix at QD4 and a trace replay (open loop).
fn three(extra: &[String]) -> Vec<String> {
    let mut o: Vec<String> = TINY.iter().map(|s| s.to_string()).collect();
    o.extend(
        [
            "precondition.mode=\"sequential\"",
            "flow.0.queue_depth=2",
            "flow.0.read_fraction=1.0",
            "flow.0.requests=300",
            "flow.1.queue_depth=4",
            "flow.1.read_fraction=0.7",
            "flow.1.requests=300",
            "flow.2.fold=\"modulo\"",
            "flow.2.requests=200",
        ]
        .map(String::from),
    );
    o.push(format!(
        "flow.2.trace=\"{}\"",
        trace("blkparse-output.txt.zst")
    ));
    o.extend_from_slice(extra);
    o
}

#[test]
fn an_alone_run_gives_the_figures_of_the_run_with_the_others_switched_off() {
    let mut c = load(Source::Preset("mqsim-paper"), &three(&[])).unwrap();
    for k in 0..3 {
        let off: Vec<String> = (0..3)
            .filter(|&j| j != k)
            .map(|j| format!("flow.{j}.enabled=false"))
            .collect();
        let by_hand = run_cfg(&load(Source::Preset("mqsim-paper"), &three(&off)).unwrap());
        let all = &by_hand["flows"][k]["stats"]["all"];
        let a = api::run_alone(&mut c, k, None, Default::default()).unwrap();
        assert_eq!(a.index, k);
        assert_eq!(a.name, by_hand["flows"][k]["name"].as_str().unwrap());
        assert!(a.count > 0);
        assert_eq!(a.count, all["count"].as_u64().unwrap(), "flow {k}");
        assert_eq!(
            a.mean_latency_us.to_bits(),
            all["latency_us"]["mean"].as_f64().unwrap().to_bits(),
            "flow {k}: {} us",
            a.mean_latency_us
        );
        // The others really were off.
        assert_eq!(by_hand["flows"][(k + 1) % 3]["completed"], 0);
    }
    // Beside the other two, a flow is slower than alone.
    let shared = run_cfg(&load(Source::Preset("mqsim-paper"), &three(&[])).unwrap());
    let shared_mean = shared["flows"][1]["stats"]["all"]["latency_us"]["mean"]
        .as_f64()
        .unwrap();
    let alone = api::run_alone(&mut c, 1, None, Default::default()).unwrap();
    assert!(alone.mean_latency_us < shared_mean);
    assert!(matches!(
        api::run_alone(&mut c, 3, None, Default::default()),
        Err(Error::Config(m)) if m.contains("has 3 flows")
    ));
}

#[test]
fn a_switched_off_flow_opens_no_trace() {
    // A trace that does not exist: switched off, its flow builds (nothing opens it) and the
    // run goes; switched on, the run is refused naming the file.
    let missing = trace("no-such-trace.txt.zst");
    let set = |on: bool| {
        three(&[
            format!("flow.2.trace=\"{missing}\""),
            format!("flow.2.enabled={on}"),
        ])
    };
    let r = run_cfg(&load(Source::Preset("mqsim-paper"), &set(false)).unwrap());
    assert_eq!(r["flows"][2]["completed"], 0);
    assert!(r["flows"][2]["trace"].is_null());
    assert_eq!(r["flows"][0]["completed"], 300);
    let on = load(Source::Preset("mqsim-paper"), &set(true)).unwrap();
    match api::run(&on, false, false) {
        Err(Error::Io(m)) => assert!(m.contains("no-such-trace.txt.zst"), "{m}"),
        Err(e) => panic!("unexpected error {e}"),
        Ok(_) => panic!("a missing trace ran"),
    }
    // The alone runs of the other flows do not need it either.
    let mut c = load(Source::Preset("mqsim-paper"), &set(true)).unwrap();
    assert_eq!(
        api::run_alone(&mut c, 0, None, Default::default())
            .unwrap()
            .count,
        300
    );
}
