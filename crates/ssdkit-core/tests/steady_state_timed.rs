//! One steady state, timed and untimed (issue 11): a preconditioned device under sustained
//! random writes holds the free pool preconditioning built, so
//! - the mean write latency of the first 10 % of requests is within 10 % of the last 20 %;
//! - the run's write amplification is within 3 % of the mean-field prediction for the spare
//!   left beside that pool (the fast preconditioner's `predicted_write_amplification`);
//! - the pool the timed run keeps (time series) is within one block per plane of the one
//!   built;
//!
//! for greedy, d-choices and FIFO. Foreground GC (`ftl.gc_foreground`) starts nothing before
//! user writes are blocked at the reserve, and the write that finds its plane there waits for
//! a whole collection. The mqsim-paper variant of the first check is in
//! tests/python/test_steady_state_timed.py (release build).

mod common;
use common::*;
use serde_json::Value;
use ssdkit_core::config::Config;

/// 4 planes (2 dies) of 256 blocks of 64 pages of 4 KiB, 12 % spare: 64 MiB per plane. A bare
/// controller (`common::BARE`): the closed forms below are the back end's.
fn small(extra: &[&str]) -> Config {
    let mut o: Vec<&str> = vec![
        "ftl.cmt.mode=ideal",
        "cache.mode=off",
        "flash.channels=2",
        "flash.chips_per_channel=1",
        "flash.dies_per_chip=1",
        "flash.planes_per_die=2",
        "flash.blocks_per_plane=256",
        "flash.pages_per_block=64",
        "flash.page_size_bytes=4096",
        "ftl.spare_factor=0.12",
        "flow.0.queue_depth=32",
        "flow.0.read_fraction=0",
        "flow.0.request_bytes=4096",
        "run.end=last_completion",
    ];
    o.extend_from_slice(extra);
    preset("mqsim-paper", &o)
}

#[test]
fn preconditioned_state_is_the_state_the_timed_run_holds() {
    for policy in ["greedy", "d_choices", "fifo"] {
        let pol = format!("ftl.gc_policy={policy}");
        // About 1.7 drive writes of the 230,000 logical pages: enough for every block to
        // cycle, so a pool or valid-count mismatch would show as drift.
        let c = small(&[
            &pol,
            "flow.0.requests=400000",
            "run.timeseries_window_ms=100",
        ]);
        let (out, _) = ssdkit_core::api::run_keep_state(&c, true).unwrap();
        let r = serde_json::to_value(&out.result).unwrap();
        let log = out.log.unwrap();
        let first = window_mean_us(&log, 0.0, 0.1);
        let last = window_mean_us(&log, 0.8, 1.0);
        let pre = &r["device"]["precondition"];
        let predicted = pre["predicted_write_amplification"].as_f64().unwrap();
        let wa = r["device"]["ftl"]["write_amplification"].as_f64().unwrap();
        let planes = 4.0;
        let built = pre["free_pages_per_plane"].as_f64().unwrap() / 64.0;
        let fb: Vec<f64> = r["timeseries"]["device"]["free_blocks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_f64().unwrap() / planes)
            .collect();
        let held = fb.iter().sum::<f64>() / fb.len() as f64;
        println!(
            "{policy}: pool {} ({}); mean write latency first 10 % {first:.0} us, last 20 % {last:.0} us; WA {wa:.3}, predicted {predicted:.3}; free blocks per plane: built {built:.2} (with frontiers), held {held:.2} (whole blocks)",
            pre["free_pool"], pre["free_pool_auto"]
        );
        assert_eq!(pre["free_pool"], Value::from("reserve"));
        assert!(
            rel(first, last) < 0.10,
            "{policy}: latency not flat from the first request: {first:.0} vs {last:.0} us"
        );
        assert!(
            rel(wa, predicted) < 0.03,
            "{policy}: WA {wa:.3} vs mean-field {predicted:.3}"
        );
        // The built pool counts the frontiers' free pages (about one block); the time
        // series counts whole free blocks only.
        assert!(
            (held - (built - 1.0)).abs() <= 1.0,
            "{policy}: pool held {held:.2} blocks per plane, built {built:.2} (incl. one block of frontiers)"
        );
    }
}

/// Free blocks per plane at the end of the last time-series window before the first GC
/// collection finished, and the collections' mean page moves.
fn pool_at_first_gc(extra: &[&str]) -> (f64, f64, Value) {
    // One plane, so that its pool is the device's (planes of a striped device fill at
    // slightly different rates).
    let mut o = vec![
        "flash.channels=1",
        "flash.planes_per_die=1",
        "precondition.mode=empty",
        // 1.1 drive writes of 4 KiB random writes at QD1 fill the device and reach GC.
        "flow.0.queue_depth=1",
        "flow.0.requests=62000",
        "run.timeseries_window_ms=2",
    ];
    o.extend_from_slice(extra);
    let r = run_cfg(&small(&o));
    let d = &r["timeseries"]["device"];
    let runs = d["gc_runs"].as_array().unwrap();
    let first = runs.iter().position(|v| v.as_u64().unwrap() > 0).unwrap();
    let free = d["free_blocks"][first - 1].as_f64().unwrap();
    let ftl = &r["device"]["ftl"];
    let moves = ftl["gc_page_moves"].as_f64().unwrap() / ftl["gc_runs"].as_f64().unwrap();
    (free, moves, r)
}

#[test]
fn foreground_gc_waits_for_the_reserve() {
    // Reserve: 2 blocks per plane (the floor); GC start: 5 % of 256 blocks of 64 pages =
    // 820 free pages, 12.8 blocks.
    let (free_default, _, _) = pool_at_first_gc(&[]);
    let (free_fg, moves, r) = pool_at_first_gc(&["ftl.gc_foreground=true"]);
    println!(
        "free blocks per plane when the first collection ends: default {free_default:.2}, foreground {free_fg:.2}; foreground moves per collection {moves:.1}"
    );
    // Whole free blocks, sampled when the first collection has ended: by default it began
    // at 12.8 blocks (frontiers included) and writes went on beside it; foreground GC began
    // only once user writes were blocked at the 2-block reserve, and the GC frontier then
    // took one of them.
    assert!(
        free_default >= 8.0,
        "by default GC starts at the start threshold (12.8 blocks), well above the reserve: {free_default}"
    );
    assert!(
        free_fg <= 2.0,
        "foreground GC starts only at the reserve (2 blocks): {free_fg}"
    );
    // A write that finds its plane blocked waits for a whole collection: its moves (a read
    // and a program each, single-plane, with their transfers) and the erase.
    let f = preset("mqsim-paper", &[]).flash;
    let xfer_us = 4096.0 / (f.bus.width_bits as f64 / 8.0) / f.bus.rate_mts;
    let cycle_us = moves * (f.read_us[0] + f.program_us[0] + 2.0 * xfer_us) + f.erase_us;
    let max_us = r["device"]["stats"]["write"]["latency_us"]["max"]
        .as_f64()
        .unwrap();
    assert!(
        max_us >= cycle_us,
        "the longest write ({max_us:.0} us) includes a whole collection ({cycle_us:.0} us)"
    );
}

/// Back-end-bound throughput (one plane, so nothing but its die limits a QD32 writer): the
/// steady-state random-write IOPS is the fresh device's scaled by the flash work per user
/// write, fresh 1 program, steady WA programs + (WA - 1) reads + WA / pages-per-block erases,
/// each with its command cycles and page transfer. The issue asks for 10 %; the only slack is
/// the runs' first and last requests, so 1 %.
#[test]
fn steady_state_write_iops_is_the_fresh_iops_over_the_flash_work() {
    let one_plane = [
        "flash.channels=1",
        "flash.dies_per_chip=1",
        "flash.planes_per_die=1",
    ];
    let mut fresh_o = one_plane.to_vec();
    // 10,000 writes on 57,671 logical pages: no GC.
    fresh_o.extend(["precondition.mode=empty", "flow.0.requests=10000"]);
    let fresh = run_cfg(&small(&fresh_o));
    assert_eq!(fresh["device"]["ftl"]["gc_runs"], 0);
    let mut steady_o = one_plane.to_vec();
    steady_o.extend(["flow.0.requests=60000"]);
    let steady = run_cfg(&small(&steady_o));
    let wa = steady["device"]["ftl"]["write_amplification"]
        .as_f64()
        .unwrap();
    let f = preset("mqsim-paper", &[]).flash;
    let cyc_us = f.bus.cmd_addr_cycle_ns / 1000.0;
    let xfer_us = 4096.0 / (f.bus.width_bits as f64 / 8.0) / f.bus.rate_mts;
    let program = cyc_us * f.bus.program_cmd_cycles as f64 + xfer_us + f.program_us[0];
    let read = cyc_us * f.bus.read_cmd_cycles as f64 + xfer_us + f.read_us[0];
    let erase = cyc_us * f.bus.erase_cmd_cycles as f64 + f.erase_us;
    let work = wa * program + (wa - 1.0) * read + wa / 64.0 * erase;
    let iops = |r: &Value| r["device"]["stats"]["write"]["iops"].as_f64().unwrap();
    let expected = iops(&fresh) * program / work;
    println!(
        "fresh {:.0} IOPS; steady WA {wa:.3}: {:.1} IOPS, back-end bound {expected:.1} ({:+.2} %)",
        iops(&fresh),
        iops(&steady),
        (iops(&steady) / expected - 1.0) * 100.0
    );
    assert!(rel(iops(&steady), expected) < 0.01);
}
