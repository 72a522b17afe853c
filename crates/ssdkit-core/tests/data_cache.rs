//! The DRAM data cache (issue 12 item 2; docs/cache.md), checked against figures computed
//! from the configuration:
//! - a write at QD1 with room takes host link + firmware + DRAM transfer, within 1 ns;
//! - sustained random writes larger than the cache run at the uncached throughput (5 %);
//! - a cache-resident working set written then re-read hits 100 %;
//! - a partial write merges, and a partial read hit reads only the missing sectors;
//! - backpressure loses nothing: every written sector reaches flash once per write-back or is
//!   overwritten in DRAM, and after a final flush the FTL maps every written page, with and
//!   without a cached mapping table (proptest,
//!   GC running);
//! - a Flush completes only once its flow's dirty data is programmed; a FUA write's latency
//!   includes the program;
//! - `cache.mode = "off"` gives the bytes of a configuration without `[cache]`.

mod common;
use common::pcie::Parts;
use common::*;
use proptest::prelude::*;
use serde_json::Value;
use ssdkit_core::api::{load, run_keep_state, Source};
use ssdkit_core::config::Config;
use ssdkit_core::internals::workload::Op;
use ssdkit_core::models::nvme::Nvme;

/// A write's link terms at QD1: NVMeSim's Eq. 2 without the medium
/// (`ssdkit_core::models::nvme`): the command, the device's fetch of the write data (read
/// requests of MRRS, completions of MPS) and the completion entry.
fn write_link(c: &Config, bytes: f64) -> Nvme {
    Nvme::terms(&Parts::from_config(c), true, bytes, 0.0)
}

/// MQSim's DRAM access time (Data_Cache_Manager_Base): every row touched opens at tRCD + tCL,
/// a precharge between rows, two bursts per transfer time.
fn dram_us(c: &Config, bytes: f64) -> f64 {
    let k = &c.cache;
    let rows = (bytes / k.dram_row_bytes as f64).ceil();
    let ns = rows * (k.dram_trcd_ns + k.dram_tcl_ns)
        + (rows - 1.0) * k.dram_trp_ns
        + bytes / (2.0 * k.dram_burst_bytes as f64) * (1000.0 / k.dram_data_rate_mts as f64);
    ns / 1000.0
}

fn bus_us(c: &Config, bytes: f64) -> f64 {
    bytes / (c.flash.bus.width_bits as f64 / 8.0) / c.flash.bus.rate_mts
}

fn cmd_us(c: &Config, cycles: u32) -> f64 {
    cycles as f64 * c.flash.bus.cmd_addr_cycle_ns / 1000.0
}

fn cache_of(r: &Value, flow: usize) -> &Value {
    &r["flows"][flow]["cache"]
}

fn u(v: &Value, k: &str) -> u64 {
    v[k].as_u64().unwrap_or_else(|| panic!("{k} in {v}"))
}

/// QD1 writes through the write cache, with the whole map in DRAM (a mapping-cache miss would
/// add a translation-page read to a FUA write's path).
fn qd1_writes(extra: &[&str]) -> (Config, Vec<u64>) {
    let mut o = vec![
        "ftl.cmt.mode=ideal",
        "cache.mode=write",
        "flow.0.queue_depth=1",
        "flow.0.read_fraction=0.0",
        "flow.0.requests=2000",
        "precondition.mode=sequential",
    ];
    o.extend_from_slice(extra);
    let c = preset("mqsim-paper", &o);
    let lat = latencies_ps(&c);
    assert_eq!(lat.len(), 2000);
    (c, lat)
}

#[test]
fn qd1_cached_write_is_link_firmware_dram() {
    for pipelined in [true, false] {
        let p = format!("interface.pipelined_transfers={pipelined}");
        let (c, lat) = qd1_writes(&[&p]);
        let req = 4096.0;
        let l = write_link(&c, req);
        let expected = l.db_write_us
            + l.io_req_us
            + l.io_fetch_us
            + c.ftl.firmware_request_us
            + c.ftl.firmware_transaction_us
            + l.dma_us
            + dram_us(&c, req)
            + l.cpl_submit_us;
        // 2000 pages fit in the 256 MiB cache: no write waits, none is written back.
        assert_all_equal_to(&lat, expected, &format!("QD1 cached write, {p}"));
        eprintln!("QD1 cached write ({p}): {expected:.6} us");
    }
}

#[test]
fn fua_write_latency_includes_the_program() {
    let (c, lat) = qd1_writes(&["flow.0.fua=true"]);
    let req = 4096.0;
    let l = write_link(&c, req);
    let page = c.flash.page_size_bytes as f64;
    // The page's other half is on flash (sequential preconditioning): read it, then program
    // the whole page.
    let rmw_read =
        cmd_us(&c, c.flash.bus.read_cmd_cycles) + c.flash.read_us[0] + bus_us(&c, page - req);
    let program =
        cmd_us(&c, c.flash.bus.program_cmd_cycles) + bus_us(&c, page) + c.flash.program_us[0];
    let expected = l.db_write_us
        + l.io_req_us
        + l.io_fetch_us
        + c.ftl.firmware_request_us
        + c.ftl.firmware_transaction_us
        + l.dma_us
        + dram_us(&c, req)
        + rmw_read
        + program
        + l.cpl_submit_us;
    assert_all_equal_to(&lat, expected, "QD1 FUA write");
    eprintln!("QD1 FUA write: {expected:.3} us");
}

/// 4 KiB random writes at QD 16 over a device far larger than a 256 KiB cache, from a
/// steady-state device: with the cache every write waits for an eviction's program, so the
/// throughput is the back end's, as without it.
#[test]
fn sustained_writes_beyond_the_cache_run_at_the_uncached_rate() {
    let base = {
        let mut o: Vec<&str> = TINY.to_vec();
        o.extend_from_slice(&[
            "flash.page_size_bytes=4096",
            "flow.0.queue_depth=16",
            "flow.0.read_fraction=0.0",
            "flow.0.requests=40000",
        ]);
        o
    };
    let off = run_cfg(&preset("mqsim-paper", &base));
    let mut on_o = base.clone();
    on_o.extend_from_slice(&["cache.mode=write", "cache.capacity_bytes=262144"]);
    let on = run_cfg(&preset("mqsim-paper", &on_o));
    let iops = |r: &Value| r["device"]["stats"]["write"]["iops"].as_f64().unwrap();
    let (a, b) = (iops(&off), iops(&on));
    let k = cache_of(&on, 0);
    assert!(u(k, "dirty_evictions") > 39_000, "{k}");
    assert!(on["device"]["ftl"]["gc_runs"].as_u64().unwrap() > 100);
    eprintln!(
        "sustained writes: cache off {a:.0} IOPS, cache on {b:.0} IOPS ({:+.2} %)",
        (b / a - 1.0) * 100.0
    );
    assert!(rel(b, a) < 0.05, "off {a:.0} IOPS, on {b:.0} IOPS");
}

/// A sequential writer fills 256 pages (2 MiB of a 4 MiB cache); a reader started after it
/// reads random 4 KiB inside them: every page hits, none reads flash.
#[test]
fn cache_resident_working_set_hits_every_time() {
    for mode in ["write", "read_write"] {
        let m = format!("cache.mode={mode}");
        let c = preset(
            "mqsim-paper",
            &[
                &m,
                "cache.capacity_bytes=4194304",
                "flow.0.read_fraction=0.0",
                "flow.0.pattern=sequential",
                "flow.0.request_bytes=8192",
                "flow.0.range_bytes=2097152",
                "flow.0.requests=256",
                "flow.0.queue_depth=4",
                "flow.1.read_fraction=1.0",
                "flow.1.range_bytes=2097152",
                "flow.1.requests=5000",
                "flow.1.queue_depth=8",
                "flow.1.start_ms=50",
            ],
        );
        let r = run_cfg(&c);
        let k = cache_of(&r, 1);
        assert_eq!(u(k, "read_page_hits"), 5000, "{k}");
        assert_eq!(u(k, "read_page_misses") + u(k, "read_page_partial_hits"), 0);
        assert_eq!(k["read_page_hit_rate"].as_f64(), Some(1.0));
        assert_eq!(r["device"]["flash"]["page_reads"].as_u64(), Some(0));
        eprintln!("resident working set ({mode}): hit rate 1.0 over 5000 reads");
    }
}

/// Two 2 KiB writes into one 8 KiB page merge into one cached page; a read of the whole page
/// then takes the 8 written sectors from DRAM and only the other 8 from flash.
#[test]
fn partial_write_merges_and_partial_hit_reads_only_missing_sectors() {
    let c = preset(
        "mqsim-paper",
        &[
            "cache.mode=write",
            "precondition.mode=sequential",
            "flow.0.read_fraction=0.0",
            "flow.0.pattern=sequential",
            "flow.0.request_bytes=2048",
            "flow.0.range_bytes=8192",
            "flow.0.requests=2",
            "flow.1.read_fraction=1.0",
            "flow.1.request_bytes=8192",
            "flow.1.range_bytes=8192",
            "flow.1.requests=1",
            "flow.1.start_ms=1",
        ],
    );
    let r = run_cfg(&c);
    let w = cache_of(&r, 0);
    assert_eq!((u(w, "write_page_misses"), u(w, "write_page_hits")), (1, 1));
    assert_eq!(u(w, "write_sectors"), 8);
    assert_eq!(r["device"]["cache"]["pages_at_end"].as_u64(), Some(1));
    let rd = cache_of(&r, 1);
    assert_eq!(u(rd, "read_page_partial_hits"), 1, "{rd}");
    assert_eq!(u(rd, "read_sectors_from_dram"), 8);
    assert_eq!(u(rd, "read_sectors_from_flash"), 8);
    // The flash moved exactly the 8 missing sectors: one page read, nothing programmed.
    let flash = &r["device"]["flash"];
    assert_eq!(u(flash, "page_reads"), 1);
    assert_eq!(u(flash, "page_programs"), 0);
    assert_eq!(u(flash, "bus_bytes"), 8 * 512, "{flash}");
}

/// Flow 0 writes 64 pages and flushes; flow 1 writes 64 other pages and never flushes. The
/// flush waits for flow 0's 64 programs only.
#[test]
fn flush_waits_for_its_flows_dirty_data() {
    flush_case(false);
}

/// With `cache.flush_scope = "device"` the same flush writes back both flows' pages.
#[test]
fn device_scope_flush_writes_back_every_flow() {
    flush_case(true);
}

fn flush_case(device: bool) {
    let scope = format!(
        "cache.flush_scope={}",
        if device { "device" } else { "flow" }
    );
    let c = preset(
        "mqsim-paper",
        &[
            &scope,
            "cache.mode=write",
            "precondition.mode=sequential",
            "flow.0.read_fraction=0.0",
            "flow.0.pattern=sequential",
            "flow.0.request_bytes=8192",
            "flow.0.range_bytes=524288",
            "flow.0.requests=64",
            "flow.0.flush_every=64",
            "flow.1.read_fraction=0.0",
            "flow.1.pattern=sequential",
            "flow.1.request_bytes=8192",
            "flow.1.start_bytes=1048576",
            "flow.1.range_bytes=524288",
            "flow.1.requests=64",
        ],
    );
    let out = ssdkit_core::api::run(&c, false, true).unwrap();
    let r = out.result;
    let (a, b) = (cache_of(&r, 0), cache_of(&r, 1));
    assert_eq!(u(a, "flushes"), 1);
    assert_eq!(u(a, "flush_write_backs"), 64);
    assert_eq!(u(a, "dirty_pages_at_end"), 0);
    // Flow 1 runs beside flow 0: with the device scope the flush takes whatever of it is
    // in the cache when the flush arrives.
    let left = u(b, "dirty_pages_at_end");
    if device {
        assert_eq!(u(b, "flush_write_backs") + left, 64, "{b}");
    } else {
        assert_eq!(left, 64, "{b}");
    }
    assert_eq!(u(&r["device"]["flash"], "page_programs"), 128 - left);
    let log = out.log.unwrap();
    let flush = log.iter().find(|x| x.op == Op::Flush).expect("a flush");
    let last_write = log
        .iter()
        .filter(|x| x.flow == 0 && x.op == Op::Write)
        .map(|x| x.complete_ps)
        .max()
        .unwrap();
    // 64 programs on 32 dies (two planes each): at least one program time after the writes.
    let program_ps = (c.flash.program_us[0] * 1e6) as u64;
    assert!(
        flush.complete_ps >= last_write + program_ps,
        "flush at {} ps, last write at {last_write} ps",
        flush.complete_ps
    );
    eprintln!(
        "flush latency {:.1} us (program {} us)",
        (flush.complete_ps - flush.submit_ps) as f64 / 1e6,
        c.flash.program_us[0]
    );
}

#[test]
fn cache_off_gives_the_bytes_of_no_cache_section() {
    let strip = |mut v: Value| {
        let o = v.as_object_mut().unwrap();
        for k in ["wall_time_s", "events_per_wall_s", "requests_per_wall_s"] {
            o.remove(k);
        }
        v["device"]["precondition"]
            .as_object_mut()
            .unwrap()
            .remove("wall_time_s");
        serde_json::to_string(&v).unwrap()
    };
    let o = [
        "flash.blocks_per_plane=128",
        "flow.0.read_fraction=0.5",
        "flow.0.queue_depth=8",
        "flow.0.requests=5000",
        // Named, so that the preset's flow keeps one name in both runs (a preset flow whose
        // overrides change what its name says is renamed; a file's flow is not).
        "flow.0.name=mixed",
    ];
    // The preset without its `[cache]` table (Table 3's write cache) ...
    let text = ssdkit_core::config::preset_toml("mqsim-paper").unwrap();
    let start = text
        .find("\n[cache]\n")
        .expect("the preset has a [cache] table")
        + 1;
    let end = start + 1 + text[start + 1..].find("\n[").unwrap() + 1;
    let bare = format!("{}{}", &text[..start], &text[end..]);
    assert!(!bare.contains("[cache]"));
    let owned: Vec<String> = o.iter().map(|s| s.to_string()).collect();
    let c = load(
        Source::Toml {
            text: &bare,
            origin: "mqsim-paper without [cache]",
        },
        &owned,
    )
    .unwrap();
    let a = strip(run_cfg(&c));
    // ... runs as the preset with the cache turned off.
    let mut o2 = o.to_vec();
    o2.push("cache.mode=off");
    let b = strip(run_cfg(&preset("mqsim-paper", &o2)));
    assert_eq!(a, b);
    assert!(!a.contains("\"cache\":{\"mode\":\"off\",\"capacity_pages\""));
}

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

/// With `cmt`, a cached mapping table too: MQSim's 4-byte entries, two translation pages
/// and room for one, so write-backs miss, wait for translation reads and evict dirty pages,
/// and GC updates uncached entries by DFTL's batch update.
const SMALL_CMT: &str =
    "[ftl.cmt]\nmode = \"shared\"\ncapacity_bytes = 4096\ngc_updates = \"batch\"\n";

fn conservation(
    qd: u32,
    sectors: u64,
    pages: u64,
    requests: u64,
    seed: u64,
    per_flow: bool,
    cmt: bool,
) {
    let mut text = format!(
        "{SMALL}\n{}[run]\nseed = {seed}\n[cache]\nmode = \"write\"\ncapacity_bytes = {}\n",
        if cmt { SMALL_CMT } else { "" },
        pages * 4096
    );
    if per_flow {
        text.push_str("sharing = \"per_flow\"\nshares = [0.5, 0.5]\n");
    }
    for f in 0..2 {
        text.push_str(&format!(
            "[[flow]]\nqueue_depth = {qd}\nread_fraction = {}\nrequest_bytes = {}\nalign_bytes = 512\nrequests = {requests}\nflush_every = {requests}\n",
            if f == 0 { 0.0 } else { 0.3 },
            sectors * 512
        ));
    }
    let c = Config::load(&text, "t.toml", &[]).unwrap();
    let (out, sim) = run_keep_state(&c, true).unwrap();
    let r = &out.result;
    let log = out.log.unwrap();
    // Every request completed once (writes, reads and the two final flushes).
    assert_eq!(log.len() as u64, 2 * requests + 2);
    let t = &r["device"]["cache"]["totals"];
    assert_eq!(u(t, "flushes"), 2);
    assert_eq!(u(t, "dirty_pages_at_end"), 0, "{t}");
    // Sectors in = sectors programmed by write-backs + sectors overwritten in DRAM.
    assert_eq!(
        u(t, "write_sectors"),
        u(t, "write_back_sectors") + u(t, "write_absorbed_sectors"),
        "{t}"
    );
    // One page program per write-back, besides GC's (and the mapping cache's translation
    // pages).
    assert_eq!(
        u(&r["device"]["ftl"], "user_page_writes"),
        u(t, "write_back_pages")
    );
    let mapping = r["device"]
        .get("cmt")
        .map_or(0, |m| u(m, "mapping_page_writes"));
    assert_eq!(
        u(&r["device"]["flash"], "page_programs"),
        u(&r["device"]["ftl"], "user_page_writes")
            + u(&r["device"]["ftl"], "gc_page_moves")
            + mapping
    );
    if cmt {
        let m = &r["device"]["cmt"];
        assert!(u(&m["lookups"], "write_misses") > 0, "{m}");
    }
    let written: u64 = log
        .iter()
        .filter(|x| x.op == Op::Write)
        .map(|x| x.bytes / 512)
        .sum();
    assert_eq!(u(t, "write_sectors"), written);
    sim.ftl.check_invariants().unwrap();
    for x in log.iter().filter(|x| x.op == Op::Write) {
        for lpn in x.offset_bytes / 4096..=(x.offset_bytes + x.bytes - 1) / 4096 {
            assert!(
                sim.ftl
                    .translate(ssdkit_core::internals::ids::Lpn(lpn as u32))
                    .is_some(),
                "page {lpn} was written and is not mapped"
            );
        }
    }
}

#[test]
fn backpressure_with_a_tiny_cache_loses_nothing() {
    conservation(32, 8, 4, 3000, 1, false, false);
    conservation(32, 3, 2, 3000, 2, true, false);
    conservation(32, 8, 4, 3000, 3, false, true);
    conservation(16, 3, 2, 3000, 4, true, true);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(12))]
    #[test]
    fn every_written_sector_reaches_flash(
        qd in 1u32..32,
        sectors in 1u64..24,
        pages in 2u64..40,
        seed in 0u64..1000,
        per_flow in any::<bool>(),
        cmt in any::<bool>(),
    ) {
        conservation(qd, sectors, pages, 1500, seed, per_flow, cmt);
    }
}

/// `cache.precondition = "dirty"`: the cache starts full of dirty pages of the writer's
/// range, so the first write that misses already evicts (MQSim's warm write cache).
#[test]
fn dirty_preconditioning_starts_full() {
    let mut o: Vec<&str> = TINY.to_vec();
    o.extend_from_slice(&[
        "flash.page_size_bytes=4096",
        "cache.mode=write",
        "cache.capacity_bytes=262144",
        "cache.precondition=dirty",
        "flow.0.read_fraction=0.0",
        "flow.0.requests=300",
    ]);
    let r = run_cfg(&preset("mqsim-paper", &o));
    let k = cache_of(&r, 0);
    assert_eq!(u(k, "dirty_evictions"), u(k, "write_page_misses"), "{k}");
    assert_eq!(u(k, "writes_waited"), u(k, "write_page_misses"));
    assert!(u(k, "write_page_misses") > 250);
    assert_eq!(u(&r["device"]["cache"], "pages_at_end"), 64);
    assert_eq!(u(k, "dirty_pages_at_end"), 64);
}

/// A read cache keeps what a first pass read from flash: a second pass over the same pages
/// hits every time; a write around the cache drops the sectors it makes stale.
#[test]
fn read_cache_keeps_what_it_read() {
    let c = preset(
        "mqsim-paper",
        &[
            "cache.mode=read",
            "cache.capacity_bytes=4194304",
            "precondition.mode=sequential",
            "flow.0.pattern=sequential",
            "flow.0.request_bytes=8192",
            "flow.0.range_bytes=2097152",
            "flow.0.requests=256",
            "flow.0.queue_depth=4",
            "flow.1.range_bytes=2097152",
            "flow.1.requests=3000",
            "flow.1.queue_depth=8",
            "flow.1.start_ms=50",
            "flow.2.read_fraction=0.0",
            "flow.2.request_bytes=8192",
            "flow.2.range_bytes=8192",
            "flow.2.requests=1",
            "flow.2.start_ms=100",
        ],
    );
    let r = run_cfg(&c);
    let (a, b) = (cache_of(&r, 0), cache_of(&r, 1));
    assert_eq!(u(a, "read_page_misses"), 256, "{a}");
    assert_eq!(u(a, "read_fills"), 256);
    assert_eq!(u(b, "read_page_hits"), 3000, "{b}");
    // The write went to flash (one program) and its page left the cache.
    assert_eq!(u(&r["device"]["flash"], "page_programs"), 1);
    assert_eq!(u(&r["device"]["cache"], "pages_at_end"), 255);
}

/// A fio iolog's `fsync`/`fdatasync` (`sync`/`datasync` lines) reach a write cache as NVMe
/// Flush commands, each writing back what the flow wrote before it; without a write cache they
/// stay counted as `no_data`, as before.
#[test]
fn fio_syncs_flush_the_write_cache() {
    let dir = std::env::temp_dir().join(format!("ssdkit-dcache-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("sync.log");
    let mut text = String::from("fio version 3 iolog\n0 /dev/x add\n0 /dev/x open\n");
    let mut t = 10;
    for round in 0..5u64 {
        for k in 0..8u64 {
            text.push_str(&format!(
                "{t} /dev/x write {} 8192\n",
                (round * 8 + k) * 8192
            ));
            t += 10;
        }
        let what = if round % 2 == 0 { "sync" } else { "datasync" };
        text.push_str(&format!("{t} /dev/x {what} 0 0\n"));
        t += 10;
    }
    std::fs::write(&path, text).unwrap();
    let trace = format!("flow.0.trace={}", path.display());
    let base = [
        trace.as_str(),
        "flow.0.trace_format=fio_v3",
        "flow.0.replay=closed",
        "precondition.mode=sequential",
    ];
    let mut off_o = base.to_vec();
    off_o.push("cache.mode=off");
    let off = run_cfg(&preset("mqsim-paper", &off_o));
    assert_eq!(off["flows"][0]["trace"]["no_data"].as_u64(), Some(5));
    assert!(off["device"]["stats"].get("flush").is_none());
    let mut on_o = base.to_vec();
    on_o.push("cache.mode=write");
    let on = run_cfg(&preset("mqsim-paper", &on_o));
    assert_eq!(on["flows"][0]["trace"]["no_data"].as_u64(), Some(0));
    assert_eq!(on["device"]["stats"]["flush"]["count"].as_u64(), Some(5));
    let k = cache_of(&on, 0);
    assert_eq!(u(k, "flushes"), 5);
    // At QD1 each write is in DRAM before the next, so each flush writes back its 8 pages.
    assert_eq!(u(k, "flush_write_backs"), 40, "{k}");
    assert_eq!(u(k, "dirty_pages_at_end"), 0);
    std::fs::remove_dir_all(&dir).ok();
}

/// Every feature at once on a small device with GC running: read and write caching, TRIMs,
/// FUA, flushes of either scope, per-flow partitions, partial pages, dirty preconditioning,
/// and a cached mapping table.
/// Every request completes once, and the FTL's invariants hold.
#[allow(clippy::too_many_arguments)] // the proptest's draws, passed as they come
fn mixed(
    qd: u32,
    sectors: u64,
    pages: u64,
    seed: u64,
    read_write: bool,
    fua: bool,
    device_scope: bool,
    per_flow: bool,
    cmt: bool,
) {
    let mut text = format!(
        "{SMALL}\n{}[run]\nseed = {seed}\n[cache]\nmode = \"{}\"\ncapacity_bytes = {}\nflush_scope = \"{}\"\nprecondition = \"dirty\"\n",
        if cmt { SMALL_CMT } else { "" },
        if read_write { "read_write" } else { "write" },
        pages * 4096,
        if device_scope { "device" } else { "flow" },
    );
    if per_flow {
        text.push_str("sharing = \"per_flow\"\n");
    }
    let requests = 1200;
    for f in 0..2 {
        text.push_str(&format!(
            "[[flow]]\nqueue_depth = {qd}\nread_fraction = 0.3\ntrim_fraction = {}\nrequest_bytes = {}\nalign_bytes = 512\nrequests = {requests}\nflush_every = {}\nfua = {}\n",
            if f == 0 { 0.1 } else { 0.0 },
            sectors * 512,
            97 + f * 200,
            fua && f == 1
        ));
    }
    let c = Config::load(&text, "t.toml", &[]).unwrap();
    let (out, sim) = run_keep_state(&c, true).unwrap();
    let log = out.log.unwrap();
    let data = log.iter().filter(|x| x.op != Op::Flush).count() as u64;
    assert_eq!(data, 2 * requests);
    let mut ids: Vec<u64> = log.iter().map(|x| x.id).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), log.len(), "a request completed twice");
    assert!(log.iter().all(|x| x.complete_ps >= x.submit_ps));
    sim.ftl.check_invariants().unwrap();
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(16))]
    #[test]
    fn every_feature_together_completes_and_keeps_invariants(
        qd in 1u32..24,
        sectors in 1u64..20,
        pages in 2u64..24,
        seed in 0u64..1000,
        read_write in any::<bool>(),
        fua in any::<bool>(),
        device_scope in any::<bool>(),
        per_flow in any::<bool>(),
        cmt in any::<bool>(),
    ) {
        mixed(qd, sectors, pages, seed, read_write, fua, device_scope, per_flow, cmt);
    }
}
