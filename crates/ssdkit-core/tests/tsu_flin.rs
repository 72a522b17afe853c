//! `tsu.policy = "flin"` (FLIN, ISCA 2018), request by request on one die with mqsim-paper
//! timings (read 75 us, program 750 us, 8 KiB pages at 333 MT/s: a read's estimated service
//! time is about 100 us, a program's about 775 us): its first stage moves a light flow's read
//! ahead of another flow's queue, its third serves a write that waited long for its service
//! time before a fresh read; and it runs every part of the request path to the same result
//! twice.

mod common;
use ssdkit_core::api::{load, Source};
use ssdkit_core::config::Config;
use ssdkit_core::device::Device;
use ssdkit_core::internals::workload::Op;

const US: u64 = 1_000_000;

fn one_die(policy: &str) -> Config {
    let o: Vec<String> = common::ONE_DIE
        .iter()
        .map(|s| s.to_string())
        .chain([
            format!("tsu.policy=\"{policy}\""),
            "flow.1.queue_depth=32".into(),
        ])
        .collect();
    load(Source::Preset("mqsim-paper"), &o).unwrap_or_else(|e| panic!("{e}"))
}

/// Pages 0..=8 written, then a program of flow `writer` holds the die while flow 1 queues
/// eight reads and flow 0 one read after them. Returns the completion order of the nine reads
/// (flow 0's read is `0`, flow 1's `1..=8` in arrival order).
fn light_read_behind_a_queue(policy: &str, writer: u32) -> Vec<u32> {
    let c = one_die(policy);
    let mut dev = Device::new(&c).unwrap();
    for i in 0..9u64 {
        dev.submit(0, Op::Write, i * 8192, 8192, 1).unwrap();
    }
    dev.submit(20_000 * US, Op::Write, 1 << 20, 8192, writer)
        .unwrap();
    let mut ids = Vec::new();
    for i in 1..=8u64 {
        ids.push((
            dev.submit(20_010 * US + i * US, Op::Read, i * 8192, 8192, 1)
                .unwrap(),
            i as u32,
        ));
    }
    ids.push((dev.submit(20_020 * US, Op::Read, 0, 8192, 0).unwrap(), 0));
    dev.run_to_idle().unwrap();
    let mut done = dev.drain();
    done.sort_by_key(|c| c.complete_ps);
    done.iter()
        .filter_map(|c| ids.iter().find(|&&(id, _)| id == c.id).map(|&(_, k)| k))
        .collect()
}

/// Out of order serves the nine reads in arrival order. FLIN weighs the estimated
/// slowdowns. When the program is flow 1's, flow 1's reads would have waited for it alone
/// too (slowdowns near 1), while flow 0's read would wait for the program and eight reads it
/// would not meet alone (about 16): it goes first. When the program is flow 0's own, flow 0's
/// read would have waited for it alone (slowdown about 1.9 at the end), while flow 1's first
/// reads wait for a program not theirs (the first about 8.4): passing them would only make
/// the worst slowdown worse, so it stays last.
#[test]
fn a_light_flows_read_moves_ahead() {
    assert_eq!(
        light_read_behind_a_queue("out_of_order", 1),
        [1, 2, 3, 4, 5, 6, 7, 8, 0]
    );
    assert_eq!(
        light_read_behind_a_queue("flin", 1),
        [0, 1, 2, 3, 4, 5, 6, 7, 8]
    );
    assert_eq!(
        light_read_behind_a_queue("flin", 0),
        [1, 2, 3, 4, 5, 6, 7, 8, 0]
    );
}

/// A program holds the die; a write arrives at once and a read near the program's end.
/// When the die frees, the write has waited about 740 us for a 775 us service (0.95) and the
/// read 40 us for 100 us (0.4): FLIN programs first, out of order reads first. With the
/// read there early (waited 700 us, 7.0) FLIN reads first too.
#[test]
fn proportional_wait_decides_between_a_read_and_a_write() {
    let order = |policy: &str, read_at_us: u64| {
        let c = one_die(policy);
        let mut dev = Device::new(&c).unwrap();
        dev.submit(0, Op::Write, 0, 8192, 0).unwrap();
        dev.submit(20_000 * US, Op::Write, 1 << 20, 8192, 0)
            .unwrap();
        let w = dev
            .submit(20_001 * US, Op::Write, 2 << 20, 8192, 1)
            .unwrap();
        let r = dev
            .submit(20_000 * US + read_at_us * US, Op::Read, 0, 8192, 0)
            .unwrap();
        dev.run_to_idle().unwrap();
        let done = dev.drain();
        let at = |id| done.iter().find(|c| c.id == id).unwrap().complete_ps;
        if at(r) < at(w) {
            "read first"
        } else {
            "write first"
        }
    };
    assert_eq!(order("out_of_order", 740), "read first");
    assert_eq!(order("flin", 740), "write first");
    assert_eq!(order("flin", 40), "read first");
}

/// Two flows, reads and writes, from a fast-preconditioned full device (GC from the first
/// requests), with the Table 3 mapping cache (translation-page reads and write-backs), a
/// write cache, multi-plane operations and program suspension: every request completes, GC
/// ran, and the same configuration gives the same bytes.
#[test]
fn every_part_of_the_path_runs_deterministically() {
    let o = [
        "tsu.policy=\"flin\"",
        "flash.blocks_per_plane=128",
        "precondition.mode=\"fast\"",
        "ftl.cmt.mode=\"shared\"",
        "ftl.cmt.capacity_bytes=65536",
        "cache.mode=\"write\"",
        "cache.capacity_bytes=4194304",
        "tsu.suspension=\"program\"",
        "flow.0.read_fraction=0.7",
        "flow.0.queue_depth=16",
        "flow.0.requests=20000",
        "flow.1.read_fraction=0.1",
        "flow.1.queue_depth=64",
        "flow.1.requests=40000",
    ];
    let c = common::preset("mqsim-paper", &o);
    let a = common::run_cfg(&c);
    let b = common::run_cfg(&c);
    let strip = |v: &serde_json::Value| {
        let mut v = v.clone();
        for k in ["wall_time_s", "events_per_wall_s", "requests_per_wall_s"] {
            v.as_object_mut().unwrap().remove(k);
        }
        if let Some(p) = v["device"]["precondition"].as_object_mut() {
            p.remove("wall_time_s");
        }
        v
    };
    assert_eq!(strip(&a), strip(&b));
    assert_eq!(a["flows"][0]["completed"], 20000);
    assert_eq!(a["flows"][1]["completed"], 40000);
    assert!(
        a["device"]["ftl"]["gc_runs"].as_u64().unwrap() > 0,
        "GC ran"
    );
    assert!(
        a["device"]["suspension"]["program_suspensions"]
            .as_u64()
            .unwrap()
            > 0
    );
}

/// FLIN's parameters live in its policy's table; out-of-range values, parameters of another
/// policy, old flat keys and unknown policies are refused with the key and the allowed values.
#[test]
fn flin_settings_are_checked() {
    let err = |o: &[&str]| {
        let o: Vec<String> = o.iter().map(|s| s.to_string()).collect();
        load(Source::Preset("mqsim-paper"), &o)
            .expect_err("refused")
            .to_string()
    };
    // The old flat keys name where they moved.
    let e = err(&["tsu.flin_alpha_read_bytes=4194304"]);
    assert!(
        e.contains("key `tsu.flin_alpha_read_bytes` moved") && e.contains("alpha_read_bytes = "),
        "{e}"
    );
    let e = err(&["tsu.policy=\"flin\"", "tsu.flin_epoch_us=5000"]);
    assert!(
        e.contains("`tsu.flin_epoch_us` moved") && e.contains("epoch_us ="),
        "{e}"
    );
    // A parameter of FLIN under another policy is an unknown field of that policy.
    let e = err(&[
        "tsu.policy.type=\"out_of_order\"",
        "tsu.policy.epoch_us=5000",
    ]);
    assert!(e.contains("tsu.policy") && e.contains("epoch_us"), "{e}");
    let e = err(&["tsu.policy=\"flin\"", "tsu.policy.fairness_threshold=1.5"]);
    assert!(
        e.contains("key `tsu.policy.fairness_threshold` = 1.5") && e.contains("1]"),
        "{e}"
    );
    let e = err(&["tsu.policy=\"flin\"", "tsu.policy.epoch_us=0"]);
    assert!(e.contains("tsu.policy.epoch_us"), "{e}");
    let e = err(&["tsu.policy=\"flim\""]);
    assert!(
        e.contains("flin") && e.contains("tsu.policy") && e.contains("priority_out_of_order"),
        "{e}"
    );
    let e = err(&["tsu.policy.type=\"flim\""]);
    assert!(e.contains("flin") && e.contains("tsu.policy"), "{e}");
    // Priorities act at the die queues under FLIN, and its weights apply.
    let o: Vec<String> = [
        "tsu.policy=\"flin\"",
        "flow.0.priority=\"high\"",
        "tsu.policy.weight_high=8",
        "tsu.policy.alpha_write_bytes=65536",
    ]
    .map(String::from)
    .to_vec();
    let c = load(Source::Preset("mqsim-paper"), &o).unwrap();
    let want = ssdkit_core::config::FlinConfig {
        weight_high: 8,
        alpha_write_bytes: 65536,
        ..Default::default()
    };
    assert_eq!(c.tsu.policy, ssdkit_core::config::TsuPolicy::Flin(want));
}
