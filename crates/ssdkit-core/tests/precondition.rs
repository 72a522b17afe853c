//! Preconditioning checks (issue 3):
//! - fast (mean-field) vs write (simulated writes) preconditioning on a small device: the
//!   valid-page distribution of closed blocks agrees (total variation distance and mean),
//!   and the next run's write amplification, mean and p99 write latency agree within 5 %;
//! - seed 000 Figure 13's shape: preconditioned, write latency is flat from the start;
//!   empty, it starts low and rises once the device has filled;
//! - snapshots: round trip, and corrupt, truncated and mismatched files are refused.

mod common;
use common::*;
use serde_json::Value;
use ssdkit_core::api::{self, load, Source};
use ssdkit_core::config::{Config, PreconditionMode};
use ssdkit_core::internals::ftl::BlockState;
use ssdkit_core::internals::ftl::{precondition, snapshot, Ftl};
use ssdkit_core::internals::ids::BlockId;
use ssdkit_core::result::PreconditionRecord;

/// 4 planes of 256 blocks of 64 pages of 4 KiB: 256 MiB, small enough to write for real. A bare
/// controller (no write cache: 256 MiB of it would hold the whole device; the whole map in DRAM).
const SMALL: [&str; 10] = [
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
];

fn small(extra: &[&str]) -> Config {
    let mut o: Vec<&str> = SMALL.to_vec();
    o.extend_from_slice(&[
        "flow.0.queue_depth=32",
        "flow.0.read_fraction=0",
        "flow.0.request_bytes=4096",
    ]);
    o.extend_from_slice(extra);
    preset("mqsim-paper", &o)
}

/// Histogram of valid pages over closed blocks, normalised.
fn valid_histogram(ftl: &Ftl) -> Vec<f64> {
    let ppb = ftl.geometry().pages_per_block as usize;
    let mut h = vec![0.0; ppb + 1];
    let mut n = 0.0;
    for b in 0..ftl.geometry().total_blocks() {
        if ftl.block_state(BlockId(b)) == BlockState::Closed {
            h[ftl.valid_pages(BlockId(b)) as usize] += 1.0;
            n += 1.0;
        }
    }
    h.iter().map(|x| x / n).collect()
}

fn mean_of(h: &[f64]) -> f64 {
    h.iter().enumerate().map(|(i, p)| i as f64 * p).sum()
}

fn p99_write_us(r: &Value) -> f64 {
    r["device"]["stats"]["write"]["latency_us"]["p99"]
        .as_f64()
        .unwrap()
}

#[test]
fn fast_and_write_preconditioning_agree() {
    // The free pool at the reserve (what `auto` picks) for two policies, and at the GC start
    // threshold with GC that refills it.
    for (policy, pool) in [
        ("greedy", "reserve"),
        ("fifo", "reserve"),
        ("greedy", "gc_start"),
    ] {
        let pol = format!("ftl.gc_policy={policy}");
        let fp = format!("precondition.free_pool={pool}");
        let refill = format!("ftl.gc_refill={}", pool == "gc_start");
        let fast_c = small(&[
            &pol,
            &fp,
            &refill,
            "precondition.mode=fast",
            "flow.0.requests=150000",
        ]);
        let write_c = small(&[
            &pol,
            &fp,
            &refill,
            "precondition.mode=write",
            "flow.0.requests=150000",
        ]);
        let mut fast = Ftl::from_config(&fast_c);
        let fast_rec = precondition::run(&mut fast, &fast_c).unwrap();
        let mut write = Ftl::from_config(&write_c);
        let write_rec = precondition::run(&mut write, &write_c).unwrap();
        fast.check_invariants().unwrap();
        write.check_invariants().unwrap();
        assert_eq!(write_rec.stable, Some(true), "{write_rec:?}");
        let hf = valid_histogram(&fast);
        let hw = valid_histogram(&write);
        let tv: f64 = hf.iter().zip(&hw).map(|(a, b)| (a - b).abs()).sum::<f64>() / 2.0;
        println!(
            "{policy}, pool at {pool}: valid pages per closed block: mean fast {:.2}, write {:.2}; TV distance {tv:.4}; WA predicted {:.3}, write-mode {:.3}",
            mean_of(&hf),
            mean_of(&hw),
            fast_rec.predicted_write_amplification.unwrap(),
            write_rec.write_amplification.unwrap()
        );
        assert!(
            tv < 0.10,
            "{policy}: valid-page distributions differ: TV {tv:.4}\nfast  {hf:?}\nwrite {hw:?}"
        );
        assert!(rel(mean_of(&hf), mean_of(&hw)) < 0.02);
        let a = run_cfg(&fast_c);
        let b = run_cfg(&write_c);
        let wa = |r: &Value| r["device"]["ftl"]["write_amplification"].as_f64().unwrap();
        println!(
            "{policy}, pool at {pool}: next run: WA fast {:.3} write {:.3}; mean write {:.1} vs {:.1} us; p99 {:.1} vs {:.1} us",
            wa(&a),
            wa(&b),
            mean_us(&a, "write"),
            mean_us(&b, "write"),
            p99_write_us(&a),
            p99_write_us(&b)
        );
        assert!(rel(wa(&a), wa(&b)) < 0.05, "{policy}: WA");
        assert!(
            rel(mean_us(&a, "write"), mean_us(&b, "write")) < 0.05,
            "{policy}: mean write latency"
        );
        assert!(
            rel(p99_write_us(&a), p99_write_us(&b)) < 0.05,
            "{policy}: p99 write latency"
        );
    }
}

#[test]
fn figure_13_shape_preconditioned_flat_empty_rises() {
    // Two drive writes of random 4 KiB writes: enough for the empty drive to fill and
    // reach GC.
    let logical = small(&[]).flash.blocks_per_plane as f64 * 4.0 * 64.0 * 0.88;
    let n = format!("flow.0.requests={}", (2.0 * logical) as u64);
    let mut means = Vec::new();
    for mode in ["fast", "empty"] {
        let m = format!("precondition.mode={mode}");
        let c = small(&[&m, &n]);
        let (out, _) = api::run_keep_state(&c, true).unwrap();
        let log = out.log.unwrap();
        let first = window_mean_us(&log, 0.0, 0.1);
        let last = window_mean_us(&log, 0.8, 1.0);
        println!("{mode}: mean write latency first 10 % {first:.1} us, last 20 % {last:.1} us");
        means.push((first, last));
    }
    let (pf, pl) = means[0];
    assert!(
        rel(pf, pl) < 0.15,
        "preconditioned: latency should be flat from the start ({pf:.1} vs {pl:.1} us)"
    );
    let (ef, el) = means[1];
    assert!(
        ef < 0.5 * el,
        "empty: latency should start low and rise once full ({ef:.1} vs {el:.1} us)"
    );
    // Seed 000 Figure 13: the steady state is several times slower than the fresh device
    // (here about 6.5x), and the fresh device climbs toward it without passing it (after
    // two drive writes about e^-2 of the pages were never written, spare that is not yet
    // used up).
    let ratio = pf / ef;
    println!("preconditioned / fresh mean write latency: {ratio:.2}");
    assert!(ratio >= 3.0, "several times the fresh latency: {ratio:.2}");
    assert!(el < pl, "the filling device stays below the steady state");
}

#[test]
fn snapshot_round_trip_and_bad_files() {
    let dir = std::env::temp_dir().join(format!("ssdkit-snap-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("dev.snap");
    let c = small(&["flow.0.requests=20000", "ftl.gc_policy=fifo"]);
    let rec = api::precondition_to_snapshot(&c, &path).unwrap();
    assert_eq!(rec.mode, PreconditionMode::Fast);
    let direct = run_cfg(&c);
    let from_snap = api::run_from_snapshot(&c, &path, false, false)
        .unwrap()
        .result;
    for k in ["stats", "ftl", "flash", "erase_counts"] {
        assert_eq!(direct["device"][k], from_snap["device"][k], "device.{k}");
    }
    assert_eq!(
        from_snap["device"]["precondition"]["snapshot"],
        path.display().to_string()
    );
    // The loaded state is the saved one, invariants included.
    let (ftl, _) = snapshot::load(&c, &path).unwrap();
    ftl.check_invariants().unwrap();
    let mut again = Ftl::from_config(&c);
    precondition::run(&mut again, &c).unwrap();
    assert!(ftl.l2p_table() == again.l2p_table() && ftl.erase_counts() == again.erase_counts());

    let bytes = std::fs::read(&path).unwrap();
    let err = |b: &[u8], cfg: &Config| {
        let p = dir.join("bad.snap");
        std::fs::write(&p, b).unwrap();
        let e = snapshot::load(cfg, &p)
            .err()
            .expect("must be refused")
            .to_string();
        assert!(e.contains("bad.snap"), "names the file: {e}");
        e
    };
    let mut flipped = bytes.clone();
    let mid = flipped.len() / 2;
    flipped[mid] ^= 0x40;
    let e = err(&flipped, &c);
    assert!(e.contains("checksum") || e.contains("corrupt"), "{e}");
    let e = err(&bytes[..bytes.len() / 3], &c);
    assert!(e.contains("truncated"), "{e}");
    let e = err(&bytes[..bytes.len() - 1], &c);
    assert!(e.contains("truncated"), "{e}");
    let e = err(b"hello, not a snapshot at all", &c);
    assert!(e.contains("not an ssdkit snapshot"), "{e}");
    // A snapshot of the format before the cached mapping table (version 1).
    let mut old = bytes.clone();
    old[8..12].copy_from_slice(&1u32.to_le_bytes());
    let e = err(&old, &c);
    assert!(
        e.contains("format version 1") && e.contains("precondition again"),
        "{e}"
    );
    let other = small(&["flash.blocks_per_plane=200", "flow.0.requests=10"]);
    let e = err(&bytes, &other);
    assert!(
        e.contains("flash.blocks_per_plane = 256 in the snapshot but 200"),
        "{e}"
    );
    let other = small(&["ftl.spare_factor=0.2", "flow.0.requests=10"]);
    let e = err(&bytes, &other);
    assert!(e.contains("ftl.spare_factor"), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bad_thresholds_and_d_are_refused_with_the_key() {
    let bad = |o: &[&str], key: &str| {
        let mut all: Vec<&str> = SMALL.to_vec();
        all.extend_from_slice(o);
        let all: Vec<String> = all.iter().map(|s| s.to_string()).collect();
        let e = load(Source::Preset("mqsim-paper"), &all)
            .err()
            .unwrap_or_else(|| panic!("{o:?} must be refused"))
            .to_string();
        assert!(e.contains(key), "{o:?}: {e}");
    };
    bad(&["ftl.gc_threshold=0.2"], "ftl.gc_threshold");
    bad(&["ftl.spare_factor=0.02"], "`ftl.spare_factor` = 0.02");
    bad(
        &["ftl.gc_policy=d_choices", "ftl.gc_policy.d=5000"],
        "ftl.gc_policy.d",
    );
    bad(
        &["ftl.gc_policy.type=d_choices", "ftl.gc_policy.d=0"],
        "ftl.gc_policy.d",
    );
    bad(
        &["ftl.gc_background=true", "ftl.gc_background_threshold=0.11"],
        "ftl.gc_background_threshold",
    );
    bad(
        &["ftl.gc_background_threshold=0.01"],
        "ftl.gc_background_threshold",
    );
    bad(&["ftl.gc_policy=lru"], "ftl.gc_policy");
    bad(&["precondition.mode=warm"], "precondition.mode");
    bad(
        &[
            "precondition.write_max_drive_writes=1",
            "precondition.write_min_drive_writes=3",
        ],
        "precondition.write_max_drive_writes",
    );
    bad(
        &["flow.0.read_fraction=0.8", "flow.0.trim_fraction=0.3"],
        "flow.0.trim_fraction",
    );
}

/// `precondition.occupancy` (MQSim's Initial_Occupancy_Percentage): fast and sequential modes
/// map exactly that fraction of the logical pages (rounded), the state is consistent, random
/// reads find the rest unmapped, and the spare the unmapped pages leave lowers the predicted
/// write amplification.
#[test]
fn occupancy_maps_that_fraction_of_the_logical_space() {
    for mode in ["fast", "sequential"] {
        let m = format!("precondition.mode={mode}");
        let c = small(&[&m, "precondition.occupancy=0.5"]);
        let mut ftl = Ftl::from_config(&c);
        let rec = precondition::run(&mut ftl, &c).unwrap();
        ftl.check_invariants().unwrap();
        let logical = ftl.logical_pages();
        let mapped = ftl.l2p_table().iter().filter(|&&p| p != u32::MAX).count() as u64;
        assert_eq!(mapped, (logical as f64 * 0.5).round() as u64, "{mode}");
        assert_eq!(rec.occupancy, Some(0.5));
        // 20,000 uniform random page reads: each finds its page unmapped with probability
        // 1/2; 4 standard deviations is 283.
        let r = run_cfg(&small(&[
            &m,
            "precondition.occupancy=0.5",
            "flow.0.read_fraction=1",
            "flow.0.requests=20000",
        ]));
        let unmapped = r["device"]["ftl"]["unmapped_page_reads"].as_f64().unwrap();
        assert!((unmapped - 10000.0).abs() < 283.0, "{mode}: {unmapped}");
    }
    let wa = |occ: &str| {
        let c = small(&["precondition.mode=fast", occ]);
        let mut ftl = Ftl::from_config(&c);
        precondition::run(&mut ftl, &c)
            .unwrap()
            .predicted_write_amplification
            .unwrap()
    };
    let (full, half) = (
        wa("precondition.occupancy=1"),
        wa("precondition.occupancy=0.5"),
    );
    assert!(half < full, "more spare, less WA: {half} vs {full}");
    let e = ssdkit_core::api::load(
        Source::Preset("mqsim-paper"),
        &[
            "precondition.mode=write".into(),
            "precondition.occupancy=0.5".into(),
        ],
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("precondition.occupancy"), "{e}");
}

/// A snapshot's state: its header without the record's wall-clock time, and every byte after
/// it but the checksum (which covers the header too).
fn saved_state(c: &Config, dir: &std::path::Path, name: &str) -> (Value, Vec<u8>) {
    let path = dir.join(name);
    api::precondition_to_snapshot(c, &path).unwrap_or_else(|e| panic!("{name}: {e}"));
    let bytes = std::fs::read(&path).unwrap();
    let len = u32::from_le_bytes(bytes[12..16].try_into().unwrap()) as usize;
    let mut header: Value = serde_json::from_slice(&bytes[16..16 + len]).unwrap();
    let rec = header
        .as_object_mut()
        .unwrap()
        .values_mut()
        .find(|v| v.get("wall_time_s").is_some())
        .expect("the header holds the preconditioning record");
    rec.as_object_mut().unwrap().remove("wall_time_s");
    (header, bytes[16 + len..bytes.len() - 4].to_vec())
}

#[test]
fn the_state_key_decides_the_preconditioned_state() {
    // Two flows (random writes to the first half, random reads of the second), a per-flow
    // mapping cache (warm entries drawn from each flow's range) and d-choices GC (a random
    // stream the device carries into the run): every input the key resolves is in play.
    let dir = std::env::temp_dir().join(format!("ssdkit-key-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let half = 128 * 64 * 2 * 4096 / 2 * 7 / 8; // below half the logical space
    let base: Vec<String> = TINY
        .iter()
        .map(|s| s.to_string())
        .chain([
            "flash.page_size_bytes=4096".into(),
            "ftl.spare_factor=0.12".into(),
            "ftl.cmt.mode=\"per_flow\"".into(),
            "ftl.cmt.capacity_bytes=16384".into(),
            "ftl.gc_policy=\"d_choices\"".into(),
            "flow.0.read_fraction=0".into(),
            "flow.0.queue_depth=8".into(),
            "flow.0.requests=1000".into(),
            format!("flow.0.range_bytes={half}"),
            "flow.1.read_fraction=1".into(),
            "flow.1.queue_depth=8".into(),
            "flow.1.requests=1000".into(),
            format!("flow.1.start_bytes={half}"),
            format!("flow.1.range_bytes={half}"),
        ])
        .collect();
    let cfg = |mode: &str, extra: &[&str]| -> Config {
        let mut o = base.clone();
        o.push(format!("precondition.mode=\"{mode}\""));
        o.extend(extra.iter().map(|s| s.to_string()));
        load(Source::Preset("mqsim-paper"), &o).unwrap_or_else(|e| panic!("{extra:?}: {e}"))
    };
    // Keys preconditioning does not read: the key stays, and so does every saved byte.
    let neutral: [&[&str]; 9] = [
        &["flow.0.queue_depth=1"],
        &["flow.0.requests=5", "flow.1.requests=7"],
        &["flow.0.request_bytes=16384"],
        &["flow.1.read_fraction=1", "flow.1.pattern=\"sequential\""],
        &["tsu.policy=\"fifo\""],
        &["cache.mode=\"write\""],
        &[
            "flash.read_us=[40.0, 60.0]",
            "flash.program_us=[500.0, 900.0]",
        ],
        &["interface.io_queue_depth=64"],
        // The run's seed, once the device has its own.
        &["precondition.seed=7", "run.seed=99"],
    ];
    // Keys it reads: the key changes.
    let relevant: [&[&str]; 10] = [
        &["run.seed=2"],
        &["precondition.seed=8"],
        &["flow.0.range_bytes=4096000"],
        &["flow.1.read_fraction=0.5"],
        &["flow.1.start_bytes=8192"],
        &["ftl.gc_policy=\"greedy\""],
        &["ftl.cmt.capacity_bytes=32768"],
        &["precondition.free_pool=\"gc_start\""],
        &["flash.blocks_per_plane=160"],
        &["flow.0.channels=[0]"],
    ];
    for mode in ["fast", "write"] {
        let c0 = cfg(mode, &["precondition.seed=7"]);
        let key0 = precondition::state_key(&c0);
        assert_eq!(key0, precondition::state_key(&c0), "a pure function");
        assert_eq!(key0["seed"], 7);
        assert_eq!(key0["seed_from"], "precondition.seed");
        let state0 = saved_state(&c0, &dir, "base.snap");
        for (i, extra) in neutral.iter().enumerate() {
            let mut o = vec!["precondition.seed=7"];
            o.extend_from_slice(extra);
            let c = cfg(mode, &o);
            assert_eq!(precondition::state_key(&c), key0, "{mode}: {extra:?}");
            let state = saved_state(&c, &dir, &format!("n{i}.snap"));
            assert!(state0.0 == state.0, "{mode}: {extra:?}: header differs");
            assert!(
                state0.1 == state.1,
                "{mode}: {extra:?}: saved state differs"
            );
        }
        let plain = precondition::state_key(&cfg(mode, &[]));
        assert_eq!(plain["seed_from"], "run.seed");
        assert_eq!(plain["seed"], 1, "the run's seed (the preset's)");
        for extra in relevant {
            let c = cfg(mode, extra);
            let key = precondition::state_key(&c);
            assert_ne!(key, plain, "{mode}: {extra:?} changes the state");
        }
    }
    // Without `precondition.seed` the run's seed shapes the device: a run-seed change moves it.
    let a = saved_state(&cfg("write", &[]), &dir, "s1.snap");
    let b = saved_state(&cfg("write", &["run.seed=2"]), &dir, "s2.snap");
    assert!(a.1 != b.1, "the run's seed draws the overwrites");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A snapshot stores the page map as its base layout and the changes: a device that ran after
/// preconditioning (pages moved by GC, blocks whose counts left the fast layout's) saves and
/// loads to the same state, and both copies go on alike.
#[test]
fn a_snapshot_of_a_device_that_ran_is_that_device() {
    use ssdkit_core::internals::ids::Lpn;
    let dir = std::env::temp_dir().join(format!("ssdkit-snap-ran-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for mode in ["fast", "write", "sequential"] {
        let c = small(&[&format!("precondition.mode={mode}"), "flow.0.requests=10"]);
        let mut ftl = Ftl::from_config(&c);
        precondition::run(&mut ftl, &c).unwrap();
        let n = ftl.logical_pages();
        // A fixed scatter of overwrites (no random stream of the FTL's own is used).
        fn writes(f: &mut Ftl, x: &mut u64, k: u64) {
            let n = f.logical_pages();
            for _ in 0..k {
                *x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                assert!(f.write_untimed(Lpn(((*x >> 33) % n) as u32)));
            }
        }
        let mut x = 12345u64;
        writes(&mut ftl, &mut x, n / 3);
        assert!(ftl.stats().gc_runs > 0, "{mode}: GC moved pages");
        let path = dir.join(format!("{mode}.snap"));
        let rec = PreconditionRecord::of(PreconditionMode::Empty);
        snapshot::save(&ftl, &c, &rec, &path).unwrap();
        let (mut loaded, _) = snapshot::load(&c, &path).unwrap();
        loaded.check_invariants().unwrap();
        // The untimed writer's free-pool level is preconditioning's, not the device's (a run
        // collects by its own thresholds).
        loaded.set_untimed_pool(ftl.untimed_pool());
        let blocks = ftl.geometry().total_blocks();
        let valid = |f: &Ftl| {
            (0..blocks)
                .map(|b| f.valid_pages(BlockId(b)))
                .collect::<Vec<_>>()
        };
        assert!(ftl.l2p_table() == loaded.l2p_table(), "{mode}: L2P");
        assert!(valid(&ftl) == valid(&loaded), "{mode}: valid counts");
        assert!(
            ftl.erase_counts() == loaded.erase_counts(),
            "{mode}: erase counts"
        );
        let moved = ftl.stats().gc_page_moves;
        let mut y = x;
        writes(&mut ftl, &mut x, n / 4);
        writes(&mut loaded, &mut y, n / 4);
        assert!(
            ftl.l2p_table() == loaded.l2p_table(),
            "{mode}: L2P after more writes"
        );
        assert!(valid(&ftl) == valid(&loaded), "{mode}: valid counts after");
        assert!(
            ftl.erase_counts() == loaded.erase_counts(),
            "{mode}: erase counts after"
        );
        assert_eq!(
            ftl.stats().gc_page_moves - moved,
            loaded.stats().gc_page_moves,
            "{mode}"
        );
        loaded.check_invariants().unwrap();
    }
    std::fs::remove_dir_all(&dir).ok();
}
