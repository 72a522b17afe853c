//! Block and hybrid mapping (`ftl.mapping`), run through the simulator on a small device:
//! what each overwrite costs under block mapping, counted exactly; that hybrid mapping's log
//! blocks turn sequential overwrites into switch merges; where hybrid mapping's write
//! amplification lies between page and block mapping as its log blocks grow; and that a
//! snapshot of each scheme loads to the device it was taken of, and only under that scheme.

mod common;

use common::{preset, run_cfg};
use serde_json::Value;
use ssdkit_core::api::{load, Source};
use ssdkit_core::config::Config;
use ssdkit_core::internals::ftl::Ftl;
use ssdkit_core::internals::ids::{FlowId, Lpn};

const PPB: u64 = 16;

/// 2 planes x 64 blocks x 16 pages of 4 KiB, the whole map in DRAM, no data cache, filled in
/// order (every page valid), and one flow of `requests` single-page writes at queue depth 1.
fn device(mapping: &str, spare: f64, pattern: &str, requests: u64, extra: &[&str]) -> Config {
    let m = format!("ftl.mapping={mapping}");
    let sp = format!("ftl.spare_factor={spare}");
    let pat = format!("flow.0.pattern={pattern}");
    let n = format!("flow.0.requests={requests}");
    let mut o = vec![
        "ftl.cmt.mode=ideal",
        "cache.mode=off",
        "flash.channels=1",
        "flash.chips_per_channel=1",
        "flash.dies_per_chip=1",
        "flash.planes_per_die=2",
        "flash.blocks_per_plane=64",
        "flash.pages_per_block=16",
        "flash.page_size_bytes=4096",
        "precondition.mode=sequential",
        "flow.0.read_fraction=0.0",
        "flow.0.request_bytes=4096",
        "flow.0.queue_depth=1",
        m.as_str(),
        sp.as_str(),
        pat.as_str(),
        n.as_str(),
    ];
    o.extend_from_slice(extra);
    preset("mqsim-paper", &o)
}

fn merges(r: &Value) -> [u64; 4] {
    let m = &r["device"]["ftl"]["merges"];
    ["switch", "partial", "full", "page_copies"].map(|k| m[k].as_u64().unwrap_or(0))
}

fn flash(r: &Value, k: &str) -> u64 {
    r["device"]["flash"][k].as_u64().unwrap()
}

fn wa(r: &Value) -> f64 {
    r["device"]["ftl"]["write_amplification"].as_f64().unwrap()
}

/// Block mapping, a full device, uniform random single-page overwrites: each one merges its
/// block into a new one: one merge, pages per block - 1 copies (a read and a program each)
/// and one erase, exactly.
#[test]
fn each_block_mapped_overwrite_is_one_merge() {
    let n = 500;
    let r = run_cfg(&device("block", 0.25, "random", n, &[]));
    assert_eq!(r["device"]["ftl"]["user_page_writes"], n);
    assert_eq!(merges(&r), [0, 0, n, n * (PPB - 1)]);
    assert_eq!(flash(&r, "page_reads"), n * (PPB - 1));
    assert_eq!(flash(&r, "page_programs"), n * PPB);
    assert_eq!(flash(&r, "block_erases"), n);
    assert_eq!(r["device"]["ftl"]["gc_runs"], 0);
}

/// Hybrid mapping, sequential overwrites of whole blocks: each block's log block is written
/// in order from offset 0 to the end and replaces its data block: switch merges only, no
/// page copied, one erase per block.
#[test]
fn sequential_overwrites_switch() {
    for assoc in ["set", "full"] {
        let m = format!("{{scheme=\"hybrid\",log_blocks=4,associativity=\"{assoc}\"}}");
        // Sequential writes start at logical page 0: every block overwritten once, twice.
        let c = device(&m, 0.25, "sequential", 2 * 768, &[]);
        let lpages = 768u64;
        assert_eq!(c.flows[0].requests, 2 * lpages);
        let r = run_cfg(&c);
        let blocks = 2 * lpages / PPB;
        assert_eq!(merges(&r), [blocks, 0, 0, 0], "{assoc}");
        assert_eq!(flash(&r, "page_reads"), 0, "{assoc}");
        assert_eq!(flash(&r, "page_programs"), 2 * lpages, "{assoc}");
        assert_eq!(flash(&r, "block_erases"), blocks, "{assoc}");
    }
}

/// Uniform random overwrites: the write amplification of hybrid mapping lies strictly
/// between page and block mapping's, and falls as the log pool grows.
#[test]
fn hybrid_write_amplification_lies_between_page_and_block() {
    let n = 6000;
    let spare = 0.4;
    let page = wa(&run_cfg(&device(
        "page",
        spare,
        "random",
        n,
        &["ftl.gc_policy=greedy"],
    )));
    let block = wa(&run_cfg(&device("block", spare, "random", n, &[])));
    let mut last = block;
    // 22: every spare block of a plane in the pool (64 blocks, 39 logical ones, 3 kept back).
    for k in [1, 4, 8, 16, 22] {
        let m = format!("{{scheme=\"hybrid\",log_blocks={k},associativity=\"full\"}}");
        let h = wa(&run_cfg(&device(&m, spare, "random", n, &[])));
        println!("full, k = {k}: write amplification {h:.3} (page {page:.3}, block {block:.3})");
        assert!(
            page < h && h < block,
            "k = {k}: {h} not between {page} and {block}"
        );
        assert!(h < last, "k = {k}: {h} not below {last}");
        last = h;
    }
    let mut last = block;
    for k in [1, 2, 8] {
        let m = format!("{{scheme=\"hybrid\",log_blocks={k},associativity=\"set\"}}");
        let h = wa(&run_cfg(&device(&m, spare, "random", n, &[])));
        println!("set, k = {k}: write amplification {h:.3}");
        assert!(
            page < h && h <= last,
            "set k = {k}: {h} (page {page}, last {last})"
        );
        last = h;
    }
}

/// Untimed random overwrites and TRIMs through each scheme's merges (the reclaim jobs run at
/// once): the map stays consistent after every write, trimmed pages stay unmapped, and with
/// dynamic wear levelling the erase counts stay level.
#[test]
fn merges_keep_the_map_consistent() {
    for m in [
        "block",
        "{scheme=\"hybrid\",log_blocks=2,associativity=\"set\"}",
        "{scheme=\"hybrid\",log_blocks=8,associativity=\"set\"}",
        "{scheme=\"hybrid\",log_blocks=4,associativity=\"full\"}",
    ] {
        let c = device(m, 0.25, "random", 1, &[]);
        let mut ftl = Ftl::from_config(&c);
        let n = ftl.logical_pages() as u32;
        for l in 0..n {
            assert!(ftl.write_untimed(Lpn(l)));
        }
        let mut x: u64 = 12345;
        for i in 0..20_000u32 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let l = ((x >> 33) % n as u64) as u32;
            if i % 50 == 49 {
                ftl.trim_page(FlowId(0), Lpn(l));
                assert_eq!(ftl.translate(Lpn(l)), None, "{m}");
            } else {
                assert!(ftl.write_untimed(Lpn(l)));
                assert!(ftl.translate(Lpn(l)).is_some(), "{m}");
            }
            if i % 97 == 0 {
                ftl.check_invariants()
                    .unwrap_or_else(|e| panic!("{m}, write {i}: {e}"));
            }
        }
        ftl.check_invariants()
            .unwrap_or_else(|e| panic!("{m}: {e}"));
        let e = ftl.erase_count_summary();
        assert!(e.max > 0, "{m}: no erase");
        assert!(
            e.max - e.min <= e.max / 2 + 2,
            "{m}: erase counts {} to {}",
            e.min,
            e.max
        );
    }
}

/// What block and hybrid mapping do not model is refused, naming the key and the values
/// allowed.
#[test]
fn refusals_name_the_key() {
    let cases: [(&[&str], &[&str]); 6] = [
        (
            &["ftl.mapping=block", "ftl.cmt.mode=shared"],
            &["ftl.cmt.mode", "\"ideal\""],
        ),
        (
            &["ftl.mapping=block", "precondition.mode=fast"],
            &["precondition.mode", "\"sequential\""],
        ),
        (
            &["ftl.mapping=block", "ftl.placement=dynamic"],
            &["ftl.placement", "\"static\""],
        ),
        (&["ftl.mapping=lru"], &["ftl.mapping", "lru", "hybrid"]),
        (
            &["ftl.mapping={scheme=\"hybrid\",associativity=\"direct\"}"],
            &["ftl.mapping", "direct", "full"],
        ),
        (
            &["ftl.mapping={scheme=\"hybrid\",log_blocks=60,associativity=\"full\"}"],
            &["ftl.spare_factor", "ftl.mapping.log_blocks"],
        ),
    ];
    for (extra, says) in cases {
        let mut o: Vec<String> = [
            "ftl.cmt.mode=ideal",
            "cache.mode=off",
            "flash.blocks_per_plane=256",
            "flash.pages_per_block=16",
            "precondition.mode=sequential",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        o.extend(extra.iter().map(|s| s.to_string()));
        let e = load(Source::Preset("mqsim-paper"), &o)
            .map(|_| ())
            .expect_err(&format!("{extra:?} accepted"))
            .to_string();
        for w in says {
            assert!(e.contains(w), "{extra:?}: {e}");
        }
    }
}

/// Set associativity: when a few blocks take every overwrite (uniform random over 8 logical
/// blocks), each data block fills its own log blocks, so more log blocks per data block mean
/// fewer merges: the write amplification falls strictly as `log_blocks` grows. (Over the whole
/// device the plane's spare blocks bound the log blocks long before `log_blocks` does.)
#[test]
fn set_associative_log_blocks_absorb_a_hot_range() {
    let n = 4000;
    let range = format!("flow.0.range_bytes={}", 8 * PPB * 4096);
    let mut last = f64::INFINITY;
    for k in [1, 2, 4, 8] {
        let m = format!("{{scheme=\"hybrid\",log_blocks={k},associativity=\"set\"}}");
        let r = run_cfg(&device(&m, 0.4, "random", n, &[range.as_str()]));
        let h = wa(&r);
        println!(
            "set, hot range, k = {k}: write amplification {h:.3}, merges {:?}",
            merges(&r)
        );
        assert!(h < last, "k = {k}: {h} not below {last}");
        last = h;
    }
}

/// The result without what differs between two runs of one device state: wall-clock figures
/// and the preconditioning record (a run from a snapshot names the file and its load time).
fn comparable(mut r: Value) -> String {
    let o = r.as_object_mut().unwrap();
    for k in ["wall_time_s", "events_per_wall_s", "requests_per_wall_s"] {
        assert!(o.remove(k).is_some(), "result has {k}");
    }
    let d = r["device"].as_object_mut().unwrap();
    assert!(d.remove("precondition").is_some());
    serde_json::to_string(&r).unwrap()
}

/// Block mapping and both hybrid associativities: a device filled in order, then taken
/// through random overwrites and TRIMs (merges done, log blocks in use), saves to a snapshot
/// that loads to the same state (map, valid counts, erase counts, invariants), and the same
/// workload run from the loaded state and from the one in memory gives the same result. A
/// snapshot loads only under the scheme, and hybrid parameters, it was taken with.
#[test]
fn snapshots_of_each_scheme_load_to_the_same_device() {
    use ssdkit_core::internals::ftl::StreamId;
    use ssdkit_core::internals::ftl::{precondition, snapshot};
    use ssdkit_core::internals::ids::{BlockId, PlaneId};
    use ssdkit_core::internals::sim::Simulator;
    let dir = std::env::temp_dir().join(format!("ssdkit-blocksnap-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let schemes = [
        ("block", "block"),
        (
            "set",
            "{scheme=\"hybrid\",log_blocks=4,associativity=\"set\"}",
        ),
        (
            "full",
            "{scheme=\"hybrid\",log_blocks=4,associativity=\"full\"}",
        ),
    ];
    for (name, m) in schemes {
        let c = device(m, 0.25, "random", 1500, &[]);
        let mut ftl = Ftl::from_config(&c);
        let rec = precondition::run(&mut ftl, &c).unwrap();
        let n = ftl.logical_pages() as u32;
        let mut x: u64 = 777;
        for i in 0..3000u32 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let l = Lpn(((x >> 33) % n as u64) as u32);
            if i % 40 == 39 {
                ftl.trim_page(FlowId(0), l);
            } else {
                assert!(ftl.write_untimed(l));
            }
        }
        let merged = ftl.stats().merges;
        assert!(
            merged.full + merged.partial + merged.switch > 0,
            "{name}: no merge"
        );
        let path = dir.join(format!("{name}.snap"));
        snapshot::save(&ftl, &c, &rec, &path).unwrap_or_else(|e| panic!("{name}: {e}"));
        let (loaded, _) = snapshot::load(&c, &path).unwrap_or_else(|e| panic!("{name}: {e}"));
        loaded
            .check_invariants()
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let blocks = ftl.geometry().total_blocks();
        let state = |f: &Ftl| {
            let b: Vec<_> = (0..blocks)
                .map(|b| (f.valid_pages(BlockId(b)), f.block_state(BlockId(b))))
                .collect();
            (
                f.l2p_table(),
                f.erase_counts().to_vec(),
                b,
                f.total_free_blocks(),
                // The page offset each plane's next user write is timed as.
                (0..f.geometry().planes())
                    .map(|p| f.next_page_offset(PlaneId(p), StreamId::USER))
                    .collect::<Vec<_>>(),
            )
        };
        assert!(
            state(&ftl) == state(&loaded),
            "{name}: loaded state differs"
        );
        drop(loaded);
        let run = |s: Simulator| s.run(&c, false, false).unwrap().0.result;
        let from_memory = run(Simulator::with_ftl(&c, ftl, rec).unwrap());
        let from_file = run(ssdkit_core::api::simulator_from_snapshot(&c, &path).unwrap());
        assert_eq!(
            from_file["device"]["precondition"]["snapshot"],
            path.display().to_string()
        );
        assert!(
            merges(&from_memory)
                != [
                    merged.switch,
                    merged.partial,
                    merged.full,
                    merged.page_copies
                ],
            "{name}: the run merges"
        );
        assert_eq!(comparable(from_memory), comparable(from_file), "{name}");
    }
    // Across schemes (and hybrid parameters) a snapshot is refused, naming `ftl.mapping`.
    let page = device("page", 0.25, "random", 1, &[]);
    let page_snap = dir.join("page.snap");
    ssdkit_core::api::precondition_to_snapshot(&page, &page_snap).unwrap();
    let cross = [
        (
            "page.snap",
            "block",
            "\"page\" in the snapshot but \"block\"",
        ),
        (
            "block.snap",
            "page",
            "\"block\" in the snapshot but \"page\"",
        ),
        (
            "set.snap",
            "{scheme=\"hybrid\",log_blocks=4,associativity=\"full\"}",
            "associativity = \"set\" } in the snapshot",
        ),
        (
            "full.snap",
            "{scheme=\"hybrid\",log_blocks=8,associativity=\"full\"}",
            "log_blocks = 4",
        ),
    ];
    for (file, m, says) in cross {
        let c = device(m, 0.25, "random", 1, &[]);
        let e = snapshot::load(&c, &dir.join(file))
            .map(|_| ())
            .expect_err(&format!("{file} under {m}"))
            .to_string();
        assert!(
            e.contains("ftl.mapping") && e.contains(says) && e.contains(file),
            "{file} under {m}: {e}"
        );
    }
    std::fs::remove_dir_all(&dir).ok();
}
