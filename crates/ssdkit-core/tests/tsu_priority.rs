//! `tsu.policy = "priority_out_of_order"` (MQSim's PRIORITY_OUT_OF_ORDER): each flow's NVMe
//! priority class reaches the die queues; a free die serves urgent reads first, then high,
//! medium and low in turns of 4, 2 and 1 operations (writes alike, after the reads).

mod common;
use ssdkit_core::api::{load, Source};
use ssdkit_core::config::Config;
use ssdkit_core::device::Device;
use ssdkit_core::internals::workload::Op;

const US: u64 = 1_000_000;

/// One die, bare controller, mqsim-paper timing, three queues: low, high, urgent.
fn one_die(policy: &str) -> Config {
    let o: Vec<String> = common::ONE_DIE
        .iter()
        .chain(&[
            "flow.0.priority=\"low\"",
            "flow.1.priority=\"high\"",
            "flow.2.priority=\"urgent\"",
        ])
        .map(|s| s.to_string())
        .chain([format!("tsu.policy=\"{policy}\"")])
        // Without classes at the dies, priorities act at fetch only (and need its arbitration).
        .chain(
            (policy != "priority_out_of_order")
                .then(|| "interface.arbitration=\"weighted\"".into()),
        )
        .collect();
    load(Source::Preset("mqsim-paper"), &o).unwrap_or_else(|e| panic!("{e}"))
}

/// Three pages written, then a long write holds the die while a low, a high and an urgent
/// read of them queue behind it (in that order of arrival). Returns the reads' completion
/// times (low, high, urgent).
fn reads_behind_a_program(policy: &str) -> (u64, u64, u64) {
    let c = one_die(policy);
    let mut dev = Device::new(&c).unwrap();
    for (i, q) in [0u32, 1, 2].iter().enumerate() {
        dev.submit(0, Op::Write, i as u64 * 8192, 4096, *q).unwrap();
    }
    dev.submit(5000 * US, Op::Write, 1 << 20, 4096, 0).unwrap();
    let low = dev.submit(5100 * US, Op::Read, 0, 4096, 0).unwrap();
    let high = dev.submit(5101 * US, Op::Read, 8192, 4096, 1).unwrap();
    let urgent = dev.submit(5102 * US, Op::Read, 16384, 4096, 2).unwrap();
    dev.run_to_idle().unwrap();
    let done = dev.drain();
    let at = |id| done.iter().find(|c| c.id == id).unwrap().complete_ps;
    (at(low), at(high), at(urgent))
}

#[test]
fn queued_reads_go_by_class_not_arrival() {
    let (low, high, urgent) = reads_behind_a_program("priority_out_of_order");
    assert!(urgent < high && high < low, "{urgent} {high} {low}");
    // Out of order without classes: arrival order among the reads.
    let (low, high, urgent) = reads_behind_a_program("out_of_order");
    assert!(low < high && high < urgent, "{low} {high} {urgent}");
}

/// Three flows of random reads at QD32 on two dies, high, medium and low: the die queues
/// stay full, so the die gives the classes 4:2:1 of its reads. The host fetches from the
/// three queues round robin and each keeps its 32 requests in the device.
#[test]
fn backlogged_classes_share_the_dies_four_two_one() {
    let mut o: Vec<String> = common::TINY.iter().map(|s| s.to_string()).collect();
    o.extend(
        [
            "precondition.mode=\"sequential\"",
            "tsu.policy=\"priority_out_of_order\"",
            "run.max_simulated_ms=200",
        ]
        .map(String::from),
    );
    for (f, p) in ["high", "medium", "low"].iter().enumerate() {
        o.extend([
            format!("flow.{f}.priority=\"{p}\""),
            format!("flow.{f}.queue_depth=32"),
            format!("flow.{f}.read_fraction=1.0"),
            format!("flow.{f}.requests=1000000"),
        ]);
    }
    let c = load(Source::Preset("mqsim-paper"), &o).unwrap_or_else(|e| panic!("{e}"));
    let r = common::run_cfg(&c);
    let n = |f: usize| r["flows"][f]["stats"]["read"]["count"].as_u64().unwrap() as f64;
    let (h, m, l) = (n(0), n(1), n(2));
    println!(
        "reads in 200 ms: high {h}, medium {m}, low {l} (4:2:1 = {:.3}:{:.3}:1)",
        h / l,
        m / l
    );
    // Within 10 %: a class's queue empties for a moment while its completed reads go back
    // through the host, and another class takes the turn.
    assert!(
        (h / l / 4.0 - 1.0).abs() < 0.1 && (m / l / 2.0 - 1.0).abs() < 0.1,
        "{h} {m} {l}"
    );
}

#[test]
fn priority_settings_need_their_policy() {
    let err = |o: &[&str]| {
        let o: Vec<String> = o.iter().map(|s| s.to_string()).collect();
        load(Source::Preset("mqsim-paper"), &o)
            .expect_err("refused")
            .to_string()
    };
    // The old flat key names the table it moved into.
    let e = err(&["tsu.weight_high=8"]);
    assert!(
        e.contains("key `tsu.weight_high` moved")
            && e.contains("type = \"priority_out_of_order\", weight_high = 4"),
        "{e}"
    );
    // The weights are parameters of the policies with classes only.
    let e = err(&["tsu.policy.type=\"fifo\"", "tsu.policy.weight_high=8"]);
    assert!(e.contains("tsu.policy") && e.contains("weight_high"), "{e}");
    let e = err(&[
        "tsu.policy=\"priority_out_of_order\"",
        "tsu.policy.weight_low=0",
    ]);
    assert!(e.contains("key `tsu.policy.weight_low` = 0"), "{e}");
    // A priority needs a policy or an arbitration that uses it.
    let e = err(&["flow.0.priority=\"high\""]);
    assert!(e.contains("priority_out_of_order"), "{e}");
    let o: Vec<String> = [
        "flow.0.priority=\"high\"",
        "tsu.policy=\"priority_out_of_order\"",
    ]
    .map(String::from)
    .to_vec();
    load(Source::Preset("mqsim-paper"), &o).unwrap();
}
