#![allow(dead_code)]
pub mod pcie;
pub mod x25m;

use serde_json::Value;
use ssdkit_core::api::{load, run, Source};
use ssdkit_core::config::Config;

/// The controller without its memories: the whole map in DRAM (the MQSim paper's "perfect CMT")
/// and no data cache. The `mqsim-paper` preset has Table 3's 4 MiB mapping cache and 256 MiB
/// write cache; checks of the back end's closed forms take them away.
pub const BARE: [&str; 2] = ["ftl.cmt.mode=ideal", "cache.mode=off"];

/// `BARE` then `extra`, as an owned override list.
pub fn bare(extra: &[&str]) -> Vec<String> {
    BARE.iter().chain(extra).map(|s| s.to_string()).collect()
}

/// A 64 MiB device (2 planes x 128 blocks x 64 pages of 4 KiB) with the mqsim-paper timing and
/// a bare controller (`BARE`: a 256 MiB write cache would hold the whole device): a few
/// thousand writes keep its GC busy.
pub const TINY: [&str; 8] = [
    "ftl.cmt.mode=ideal",
    "cache.mode=off",
    "flash.channels=2",
    "flash.chips_per_channel=1",
    "flash.dies_per_chip=1",
    "flash.planes_per_die=1",
    "flash.blocks_per_plane=128",
    "flash.pages_per_block=64",
];

/// One die of the mqsim-paper timing (750 us programs, 75 us reads, 8 KiB pages on an 8-bit
/// 333 MT/s bus), 128 blocks of 64 pages, empty (no GC reserve in the way), with a bare
/// controller (`BARE`): writes reach the die at once and reads need no mapping read. The
/// scheduling checks queue transactions behind one operation on it.
pub const ONE_DIE: [&str; 9] = [
    "ftl.cmt.mode=ideal",
    "cache.mode=off",
    "flash.channels=1",
    "flash.chips_per_channel=1",
    "flash.dies_per_chip=1",
    "flash.planes_per_die=1",
    "flash.blocks_per_plane=128",
    "flash.pages_per_block=64",
    "precondition.mode=\"empty\"",
];

pub fn preset(name: &str, overrides: &[&str]) -> Config {
    let o: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
    load(Source::Preset(name), &o).unwrap_or_else(|e| panic!("{e}"))
}

pub fn run_cfg(c: &Config) -> Value {
    run(c, false, false)
        .unwrap_or_else(|e| panic!("{e}"))
        .result
}

pub fn mean_us(r: &Value, op: &str) -> f64 {
    r["device"]["stats"][op]["latency_us"]["mean"]
        .as_f64()
        .unwrap()
}

pub fn count(r: &Value, op: &str) -> u64 {
    r["device"]["stats"][op]["count"].as_u64().unwrap()
}

/// Relative error |a - b| / b.
pub fn rel(a: f64, b: f64) -> f64 {
    (a - b).abs() / b.abs()
}

/// Latency of every request of a run, picoseconds (from the request log).
pub fn latencies_ps(c: &Config) -> Vec<u64> {
    let out = run(c, false, true).unwrap_or_else(|e| panic!("{e}"));
    out.log
        .expect("log requested")
        .iter()
        .map(|r| r.complete_ps - r.submit_ps)
        .collect()
}

/// Every request took the same time, and it is `expected_us` within 1 ns.
pub fn assert_all_equal_to(lat: &[u64], expected_us: f64, what: &str) {
    let min = *lat.iter().min().expect("requests ran");
    let max = *lat.iter().max().expect("requests ran");
    assert_eq!(min, max, "{what}: latencies differ ({min} ps .. {max} ps)");
    let expected_ps = expected_us * 1e6;
    assert!(
        (min as f64 - expected_ps).abs() <= 1000.0,
        "{what}: every request took {min} ps; the sum of parts is {expected_ps:.0} ps ({:+.0} ps)",
        min as f64 - expected_ps
    );
}

/// Mean latency in microseconds of the requests of `log` (in completion order) between the
/// fractions `from` and `to` of the run.
pub fn window_mean_us(
    log: &[ssdkit_core::internals::sim::CompletionRecord],
    from: f64,
    to: f64,
) -> f64 {
    let n = log.len();
    let w = &log[(from * n as f64) as usize..(to * n as f64) as usize];
    w.iter()
        .map(|r| (r.complete_ps - r.submit_ps) as f64 / 1e6)
        .sum::<f64>()
        / w.len() as f64
}
