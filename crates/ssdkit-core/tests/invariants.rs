//! Property tests: on small devices driven hard enough to garbage-collect many times, with
//! random mixes of reads, partial and multi-page writes, placements and initial states:
//! - L2P and P2L agree, valid counts equal the page states, free lists hold erased blocks;
//! - no logical page is lost: every page mapped at the start or written since is mapped at
//!   the end (and `check_invariants` rules out duplicates);
//! - every request completes exactly once, never before it was submitted;
//! - erase counts only grow (compared with the initial all-zero state).

use proptest::prelude::*;
use ssdkit_core::api::{load, run_keep_state, Source};
use ssdkit_core::ftl::NONE;
use std::collections::HashSet;

const SMALL: &str = r#"
[interface]
queue_fetch_size = 64
[ftl]
spare_factor = 0.3
[flash]
channels = 2
chips_per_channel = 1
dies_per_chip = 1
planes_per_die = 2
blocks_per_plane = 24
pages_per_block = 16
page_size_bytes = 4096
"#;

#[allow(clippy::too_many_arguments)] // one knob per property dimension
fn config(
    qd: u32,
    read_fraction: f64,
    sectors: u64,
    dynamic: bool,
    empty: bool,
    multiplane: bool,
    requests: u64,
    seed: u64,
) -> ssdkit_core::config::Config {
    let o = vec![
        format!("run.seed={seed}"),
        format!("flow.0.queue_depth={qd}"),
        format!("flow.0.read_fraction={read_fraction}"),
        format!("flow.0.request_bytes={}", sectors * 512),
        format!("flow.0.requests={requests}"),
        format!(
            "ftl.placement={}",
            if dynamic { "dynamic" } else { "static" }
        ),
        format!(
            "ftl.initial_state={}",
            if empty { "empty" } else { "sequential" }
        ),
        format!("flash.multiplane={multiplane}"),
        // A second, sequential writer keeps GC busy with multi-page requests.
        "flow.1.queue_depth=2".into(),
        "flow.1.read_fraction=0.0".into(),
        "flow.1.request_bytes=12288".into(),
        "flow.1.pattern=sequential".into(),
        format!("flow.1.requests={}", requests / 4),
    ];
    load(
        Source::Toml {
            text: SMALL,
            origin: "test",
        },
        &o,
    )
    .unwrap_or_else(|e| panic!("{e}"))
}

fn check(c: &ssdkit_core::config::Config) {
    let initially_mapped = c.ftl.initial_state == ssdkit_core::config::InitialState::Sequential;
    let (out, sim) = run_keep_state(c, true).unwrap_or_else(|e| panic!("{e}"));
    let ftl = &sim.ftl;
    ftl.check_invariants()
        .unwrap_or_else(|e| panic!("invariant broken: {e}"));
    let log = out.log.expect("log requested");
    let expected: u64 = c.flows.iter().map(|f| f.requests).sum();
    assert_eq!(
        log.len() as u64,
        expected,
        "every request completes exactly once"
    );
    let spp = 4096 / 512;
    let mut written = HashSet::new();
    for rec in &log {
        assert!(
            rec.complete_ps >= rec.submit_ps,
            "completion before submission: {rec:?}"
        );
        if !rec.is_read {
            let first = rec.start_sector / spp;
            let last = (rec.start_sector + rec.sectors as u64 - 1) / spp;
            written.extend(first..=last);
        }
    }
    for lpa in 0..ftl.logical_pages as u64 {
        let should = initially_mapped || written.contains(&lpa);
        let is = ftl.l2p[lpa as usize] != NONE;
        assert_eq!(
            is, should,
            "logical page {lpa}: mapped {is}, expected {should}"
        );
    }
    assert!(ftl.erase_count.iter().all(|&e| e < u32::MAX));
    assert_eq!(
        out.result["device"]["ftl"]["gc_runs"].as_u64().unwrap(),
        ftl.stats.gc_runs
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, .. ProptestConfig::default() })]
    #[test]
    fn invariants_hold_across_gc(
        qd in 1u32..24,
        read_fraction in prop_oneof![Just(0.0), 0.0f64..1.0],
        sectors in prop_oneof![Just(8u64), 1u64..40],
        dynamic in any::<bool>(),
        empty in any::<bool>(),
        multiplane in any::<bool>(),
        seed in 0u64..1000,
    ) {
        check(&config(qd, read_fraction, sectors, dynamic, empty, multiplane, 3000, seed));
    }
}

#[test]
fn heavy_overwrite_collects_garbage_and_keeps_invariants() {
    let c = config(16, 0.0, 8, false, false, true, 20_000, 3);
    let (out, sim) = run_keep_state(&c, false).unwrap();
    sim.ftl.check_invariants().unwrap();
    let ftl = &out.result["device"]["ftl"];
    assert!(ftl["gc_runs"].as_u64().unwrap() > 100, "GC ran: {ftl}");
    assert!(ftl["write_amplification"].as_f64().unwrap() > 1.0);
    assert!(
        sim.ftl.erase_count.iter().sum::<u32>() as u64
            == out.result["device"]["flash"]["block_erases"]
                .as_u64()
                .unwrap()
    );
}
