//! The cached mapping table (DFTL; the MQSim paper, FAST'18, section 4.3) against what its
//! configuration implies, on the `mqsim-paper` device (8 KiB pages; 9-byte entries by MQSim's
//! formula, so 910 entries per translation page), freshly filled so no GC runs:
//! - uniform random reads over N pages with a cache of C entries hit C / N of the time;
//! - sequential page reads miss once per translation page: hit rate 1 - 1 / 910;
//! - at QD1 a miss adds exactly one translation-page read (command, array read, the page over
//!   the channel) to the all-hit latency;
//! - a cache holding the whole map gives the same latencies as the ideal map;
//! - per-flow partitions give each flow the hit rate of its own share.

mod common;
use common::*;
use serde_json::Value;
use ssdkit_core::config::Config;

const ENTRIES_PER_PAGE: u64 = 8192 / 9;

fn cmt(r: &Value) -> &Value {
    &r["device"]["cmt"]
}

/// The mapping cache alone: no data cache (the preset's write cache would absorb the writes).
fn reads(extra: &[&str]) -> Config {
    let mut o = vec![
        "cache.mode=off",
        "flow.0.read_fraction=1.0",
        "flow.0.requests=40000",
        "precondition.mode=sequential",
        "ftl.cmt.mode=shared",
    ];
    o.extend_from_slice(extra);
    preset("mqsim-paper", &o)
}

/// Entries the cache holds: its capacity in entries, rounded down to whole translation pages.
fn capacity_entries(capacity_bytes: u64) -> u64 {
    capacity_bytes / 9 / ENTRIES_PER_PAGE * ENTRIES_PER_PAGE
}

#[test]
fn uniform_random_reads_hit_capacity_over_footprint() {
    let c_entries = capacity_entries(4 << 20);
    for (label, n_pages) in [
        ("C/N = 1/4", 4 * c_entries),
        ("C/N = 3/4", c_entries * 4 / 3),
    ] {
        let range = format!("flow.0.range_bytes={}", n_pages * 8192);
        let r = run_cfg(&reads(&[&range, "ftl.cmt.capacity_bytes=4194304"]));
        let m = cmt(&r);
        assert_eq!(m["capacity_entries"].as_u64(), Some(4194304 / 9), "{m}");
        let hit = m["lookups"]["read_hit_rate"].as_f64().unwrap();
        let expected = c_entries as f64 / n_pages as f64;
        println!("{label}: read hit rate {hit:.4}, expected C/N = {expected:.4}");
        assert!(
            (hit - expected).abs() < 0.02,
            "{label}: {hit} vs {expected}"
        );
        // Reads dirty nothing: no write-back.
        assert_eq!(m["mapping_page_writes"].as_u64(), Some(0), "{m}");
        assert_eq!(
            m["lookup_reads"].as_u64().unwrap() + m["coalesced_misses"].as_u64().unwrap(),
            m["lookups"]["read_misses"].as_u64().unwrap(),
            "every miss either reads its translation page or waits for that read: {m}"
        );
    }
}

#[test]
fn sequential_page_reads_miss_once_per_translation_page() {
    let r = run_cfg(&reads(&[
        "flow.0.pattern=sequential",
        "flow.0.request_bytes=8192",
        // At QD1 no lookup waits for another's read: a miss is a translation-page read.
        // (Deeper, the requests in flight on a page just missed count as misses too.)
        "flow.0.queue_depth=1",
    ]));
    let m = cmt(&r);
    let l = &m["lookups"];
    let hit = l["read_hit_rate"].as_f64().unwrap();
    let expected = 1.0 - 1.0 / ENTRIES_PER_PAGE as f64;
    println!(
        "sequential reads: hit rate {hit:.5}, expected 1 - 1/{ENTRIES_PER_PAGE} = {expected:.5}"
    );
    assert!((hit - expected).abs() < 0.01, "{hit} vs {expected}");
    // Exactly: the 40,000 pages span ceil(40000 / 910) = 44 translation pages; each misses
    // once, unless the warm cache already held it.
    let spanned = 40000u64.div_ceil(ENTRIES_PER_PAGE);
    let reads = m["lookup_reads"].as_u64().unwrap();
    assert_eq!(l["read_misses"].as_u64(), Some(reads), "{m}");
    assert!(reads <= spanned && reads + 2 >= spanned, "{m}");
}

/// `ftl.cmt.translation_entry_bytes` sets the entries of a translation page apart from the
/// entry's size in DRAM: with MQSim's 6-byte entries on flash (its GTD entry: 26 bits of
/// physical page and 16 sector bits on `mqsim-paper`, as `ssdkit import mqsim` sets) a page
/// holds 8192 / 6 = 1,365 entries, so sequential page reads miss once per 1,365 pages; the
/// cache still counts 9 bytes an entry.
#[test]
fn translation_entry_bytes_sets_the_entries_of_a_translation_page() {
    let r = run_cfg(&reads(&[
        "flow.0.pattern=sequential",
        "flow.0.request_bytes=8192",
        "flow.0.queue_depth=1",
        "ftl.cmt.translation_entry_bytes=6",
    ]));
    let m = cmt(&r);
    assert_eq!(
        m["entries_per_translation_page"].as_u64(),
        Some(8192 / 6),
        "{m}"
    );
    assert_eq!(m["entry_bytes"].as_u64(), Some(9), "{m}");
    let spanned = 40000u64.div_ceil(8192 / 6);
    let reads = m["lookup_reads"].as_u64().unwrap();
    assert_eq!(m["lookups"]["read_misses"].as_u64(), Some(reads), "{m}");
    assert!(
        reads <= spanned && reads + 2 >= spanned,
        "{reads} reads, {spanned} pages: {m}"
    );
    assert!(reads < 40000u64.div_ceil(ENTRIES_PER_PAGE) - 10, "{m}");
}

#[test]
fn at_qd1_each_miss_adds_one_translation_page_read() {
    let c_entries = capacity_entries(4 << 20);
    let range = format!("flow.0.range_bytes={}", 2 * c_entries * 8192);
    let base = [
        "flow.0.queue_depth=1",
        "flow.0.requests=4000",
        "ftl.cmt.capacity_bytes=4194304",
        range.as_str(),
    ];
    let ideal = {
        let mut o = base.to_vec();
        o.push("ftl.cmt.mode=ideal");
        latencies_ps(&reads(&o))
    };
    let hit_ps = ideal[0];
    assert!(
        ideal.iter().all(|&l| l == hit_ps),
        "ideal QD1 reads all take one time"
    );
    let c = reads(&base);
    let lat = latencies_ps(&c);
    let r = run_cfg(&c);
    let miss_rate = 1.0 - cmt(&r)["lookups"]["read_hit_rate"].as_f64().unwrap();
    // One translation-page read: command and address cycles, the array read, the whole page
    // over the channel (every entry of it is cached).
    let f = &c.flash;
    let t_map_us = f.bus.read_cmd_cycles as f64 * f.bus.cmd_addr_cycle_ns / 1000.0
        + f.read_us[0]
        + f.page_size_bytes as f64 / (f.bus.width_bits as f64 / 8.0) / f.bus.rate_mts;
    assert_eq!(f.read_us[0], f.read_us[1]);
    let t_map_ps = t_map_us * 1e6;
    // Each request took either the hit time or the hit time plus one translation read
    // (within 1 ns: the simulator rounds each step to whole picoseconds).
    for &l in &lat {
        let extra = l as f64 - hit_ps as f64;
        assert!(
            extra.abs() < 1000.0 || (extra - t_map_ps).abs() < 1000.0,
            "latency {l} ps is neither the hit time {hit_ps} nor it plus {t_map_ps}"
        );
    }
    let mean = lat.iter().sum::<u64>() as f64 / lat.len() as f64;
    let expected = hit_ps as f64 + miss_rate * t_map_ps;
    println!(
        "QD1: miss rate {miss_rate:.4}, mean {:.3} us, hit time {:.3} us + miss rate x {t_map_us:.3} us = {:.3} us",
        mean / 1e6,
        hit_ps as f64 / 1e6,
        expected / 1e6
    );
    assert!(rel(mean, expected) < 0.01, "{mean} vs {expected}");
    assert!(
        miss_rate > 0.3 && miss_rate < 0.7,
        "the check exercises both: {miss_rate}"
    );
}

#[test]
fn a_cache_holding_the_whole_map_matches_the_ideal_map() {
    // A 4 KiB random mix on the whole device: every translation page fits (68,588 pages of
    // 910 entries of 9 bytes, under 600 MB). Translation pages stored in flash shift the
    // write frontiers by a page here and there; single-plane programs make that invisible.
    let base = [
        "flow.0.queue_depth=4",
        "flow.0.read_fraction=0.7",
        "flow.0.requests=5000",
        "flash.multiplane=false",
    ];
    let mut o = base.to_vec();
    o.push("ftl.cmt.capacity_bytes=1000000000");
    let cached = reads(&o);
    let mut o = base.to_vec();
    o.push("ftl.cmt.mode=ideal");
    let ideal = reads(&o);
    let (a, b) = (latencies_ps(&cached), latencies_ps(&ideal));
    assert_eq!(a.len(), 5000);
    assert_eq!(a, b, "per-request latencies differ");
    let r = run_cfg(&cached);
    let m = cmt(&r);
    assert_eq!(m["lookups"]["hit_rate"].as_f64(), Some(1.0), "{m}");
    assert_eq!(m["lookup_reads"].as_u64(), Some(0), "{m}");
}

#[test]
fn per_flow_partitions_give_each_flow_its_share() {
    // Two readers over disjoint ranges of N pages each; shares 1/4 and 3/4 of C = N / 2.
    let c_bytes: u64 = 4 << 20;
    let n_pages = 2 * capacity_entries(c_bytes);
    let o: Vec<String> = vec![
        "ftl.cmt.mode=per_flow".into(),
        format!("ftl.cmt.capacity_bytes={c_bytes}"),
        "ftl.cmt.shares=[0.25, 0.75]".into(),
        format!("flow.0.range_bytes={}", n_pages * 8192),
        "flow.0.requests=30000".into(),
        "flow.1.read_fraction=1.0".into(),
        "flow.1.queue_depth=32".into(),
        "flow.1.requests=30000".into(),
        format!("flow.1.start_bytes={}", n_pages * 8192),
        format!("flow.1.range_bytes={}", n_pages * 8192),
    ];
    let o: Vec<&str> = o.iter().map(String::as_str).collect();
    let r = run_cfg(&reads(&o));
    let total = c_bytes / 9;
    for (i, share) in [(0usize, 0.25), (1, 0.75)] {
        let part = (total as f64 * share).floor() as u64 / ENTRIES_PER_PAGE * ENTRIES_PER_PAGE;
        let expected = part as f64 / n_pages as f64;
        let hit = r["flows"][i]["cmt"]["read_hit_rate"].as_f64().unwrap();
        println!("flow {i}: share {share}, hit rate {hit:.4}, expected {expected:.4}");
        assert!(
            (hit - expected).abs() < 0.02,
            "flow {i}: {hit} vs {expected}"
        );
    }
}

#[test]
fn random_writes_write_translation_pages_back() {
    // A small cache under random writes: dirty pages leave it and are written back, each
    // write-back one page program; nothing else programs translation pages here (no GC).
    let r = run_cfg(&reads(&[
        "flow.0.read_fraction=0.0",
        "flow.0.requests=20000",
        "ftl.cmt.capacity_bytes=1048576",
    ]));
    let m = cmt(&r);
    let n = |k: &str| m[k].as_u64().unwrap();
    assert!(n("eviction_writebacks") > 1000, "{m}");
    assert_eq!(n("mapping_page_writes"), n("eviction_writebacks"), "{m}");
    assert_eq!(
        n("writeback_reads"),
        0,
        "the evicted page was all in DRAM: {m}"
    );
    let f = &r["device"]["ftl"];
    let programs = r["device"]["flash"]["page_programs"].as_u64().unwrap();
    assert_eq!(
        programs,
        f["user_page_writes"].as_u64().unwrap() + n("mapping_page_writes")
    );
    let share = m["write_amplification_share"].as_f64().unwrap();
    assert_eq!(share, n("mapping_page_writes") as f64 / programs as f64);
    // One flow: all eviction write-backs are its own.
    assert_eq!(
        r["flows"][0]["cmt"]["eviction_writebacks"].as_u64(),
        Some(n("eviction_writebacks"))
    );
}

#[test]
fn a_reader_evicting_a_writers_dirty_pages_is_charged_their_write_backs() {
    // A shared cache: flow 0 writes randomly over the first 200 GiB, flow 1 reads randomly
    // over the next 200 GiB. The reader's translation pages push out the writer's dirty
    // ones, so both flows cause write-backs though only one writes; together they are the
    // device's.
    let half: u64 = 200 << 30;
    let o: Vec<String> = vec![
        "ftl.cmt.capacity_bytes=1048576".into(),
        "flow.0.read_fraction=0.0".into(),
        "flow.0.queue_depth=8".into(),
        "flow.0.requests=10000".into(),
        format!("flow.0.range_bytes={half}"),
        "flow.1.read_fraction=1.0".into(),
        "flow.1.queue_depth=8".into(),
        "flow.1.requests=10000".into(),
        format!("flow.1.start_bytes={half}"),
        format!("flow.1.range_bytes={half}"),
    ];
    let o: Vec<&str> = o.iter().map(String::as_str).collect();
    let r = run_cfg(&reads(&o));
    let wb = |i: usize| {
        r["flows"][i]["cmt"]["eviction_writebacks"]
            .as_u64()
            .unwrap()
    };
    let device = cmt(&r)["eviction_writebacks"].as_u64().unwrap();
    println!(
        "eviction write-backs: writer {}, reader {}, device {device}",
        wb(0),
        wb(1)
    );
    assert!(wb(0) > 0 && wb(1) > 0, "writer {} reader {}", wb(0), wb(1));
    assert_eq!(wb(0) + wb(1), device);
    assert_eq!(
        cmt(&r)["lookups"]["eviction_writebacks"].as_u64(),
        Some(device)
    );
}

/// An empty device: flow 0 writes the first `written` pages in order (QD8), then, 60 s later,
/// flow 1 reads the first six translation pages' worth of logical pages in order at QD1.
fn write_then_read(written: u64, extra: &[&str]) -> Value {
    let o: Vec<String> = vec![
        "precondition.mode=empty".into(),
        "flow.0.read_fraction=0.0".into(),
        "flow.0.pattern=sequential".into(),
        "flow.0.request_bytes=8192".into(),
        "flow.0.queue_depth=8".into(),
        format!("flow.0.requests={written}"),
        "flow.1.read_fraction=1.0".into(),
        "flow.1.pattern=sequential".into(),
        "flow.1.request_bytes=8192".into(),
        "flow.1.queue_depth=1".into(),
        format!("flow.1.requests={}", 6 * ENTRIES_PER_PAGE),
        format!("flow.1.range_bytes={}", 6 * ENTRIES_PER_PAGE * 8192),
        "flow.1.start_ms=60000".into(),
    ];
    let mut o: Vec<&str> = o.iter().map(String::as_str).collect();
    o.extend_from_slice(extra);
    let r = run_cfg(&reads(&o));
    let w_end = r["flows"][0]["active_time_s"].as_f64().unwrap();
    assert!(
        w_end < 60.0,
        "the writes end before the reads start: {w_end} s"
    );
    r
}

#[test]
fn a_lookup_reads_flash_exactly_when_its_translation_page_exists() {
    // 2.5 translation pages written: pages 0-2 exist once written back, pages 3-5 never.
    let written = 5 * ENTRIES_PER_PAGE / 2;
    let t_written = written.div_ceil(ENTRIES_PER_PAGE);
    let flow_reads = |r: &Value, i: usize| r["flows"][i]["cmt"]["mapping_reads"].as_u64().unwrap();

    // Whole pages, room for one: each written page leaves the cache dirty once and is read
    // back once by the reader; the unwritten pages are created in DRAM without a read.
    let r = write_then_read(written, &["ftl.cmt.capacity_bytes=8190"]);
    let m = cmt(&r);
    println!("page granularity: {m}");
    assert_eq!(flow_reads(&r, 0), 0, "the writer never needs a page back");
    assert_eq!(flow_reads(&r, 1), t_written, "one read per written page");
    assert_eq!(m["mapping_page_writes"].as_u64(), Some(t_written), "{m}");
    assert_eq!(m["writeback_reads"].as_u64(), Some(0), "{m}");

    // Single entries, room for one: every lookup of the reader misses; it reads flash for
    // each logical page of a written translation page (written or not: the page exists)
    // and for none of the others.
    let r = write_then_read(
        written,
        &["ftl.cmt.capacity_bytes=9", "ftl.cmt.granularity=entry"],
    );
    println!("entry granularity: {}", cmt(&r));
    assert_eq!(flow_reads(&r, 1), t_written * ENTRIES_PER_PAGE);
    let l = &r["flows"][1]["cmt"];
    assert_eq!(l["read_misses"].as_u64(), Some(6 * ENTRIES_PER_PAGE), "{l}");
}

/// Uniform random 8 KiB writes (QD8) over `tpages` translation pages' worth of a filled
/// device, with the mapping cache's `extra` settings; returns the device's cache section.
fn random_writes(tpages: u64, requests: u64, extra: &[&str]) -> Value {
    let o: Vec<String> = vec![
        "flow.0.read_fraction=0.0".into(),
        "flow.0.request_bytes=8192".into(),
        "flow.0.queue_depth=8".into(),
        format!("flow.0.requests={requests}"),
        format!("flow.0.range_bytes={}", tpages * ENTRIES_PER_PAGE * 8192),
    ];
    let mut o: Vec<&str> = o.iter().map(String::as_str).collect();
    o.extend_from_slice(extra);
    cmt(&run_cfg(&reads(&o))).clone()
}

#[test]
fn write_backs_per_random_write_follow_dftl() {
    // Whole pages (DFTL's cached translation pages): every page a write brings in is dirty,
    // so every eviction after the warm (clean) ones is a write-back, and misses are
    // 1 - P / T of the writes under uniform random access.
    let (t, n) = (512u64, 60_000u64);
    let p = 64u64;
    let cap = format!("ftl.cmt.capacity_bytes={}", p * ENTRIES_PER_PAGE * 9);
    let m = random_writes(t, n, &[&cap]);
    let misses = m["lookups"]["write_misses"].as_u64().unwrap() as f64;
    let wb = m["eviction_writebacks"].as_u64().unwrap() as f64;
    let miss_rate = misses / n as f64;
    println!("page granularity: miss rate {miss_rate:.4} (1 - P/T = {:.4}), write-backs {wb}, misses - P = {}", 1.0 - p as f64 / t as f64, misses - p as f64);
    assert!(
        rel(miss_rate, 1.0 - p as f64 / t as f64) < 0.03,
        "{miss_rate}"
    );
    assert!(
        rel(wb, misses - p as f64) < 0.03,
        "{wb} vs {}",
        misses - p as f64
    );

    // Single entries (MQSim; DFTL's batch update): a dirty entry's eviction writes back its
    // page with every dirty entry of it, so the page's other cached entries leave clean.
    // With C entries cached over T translation pages, the entries of one page enter a FIFO
    // of C places as a Bernoulli(1/T) stream; after a write-back, the entries then cached
    // (those that entered in the last C steps) leave clean, and the next write-back is
    // the eviction of the first entry to enter after it: C + T steps apart on average (the
    // wait for that entry is geometric, mean T). So a fraction T / (C + T) =
    // 1 / (1 + C/T) of evictions write back. Hits (C / N = 0.1 % here) are neglected.
    for c in [256u64, 512, 1024] {
        let cap = format!("ftl.cmt.capacity_bytes={}", c * 9);
        let m = random_writes(t, n, &[&cap, "ftl.cmt.granularity=entry"]);
        let misses = m["lookups"]["write_misses"].as_u64().unwrap() as f64;
        let wb = m["eviction_writebacks"].as_u64().unwrap() as f64;
        // The first C evictions are of the warm entries, clean.
        let evictions = misses - c as f64;
        let expected = evictions / (1.0 + c as f64 / t as f64);
        println!(
            "entry granularity, C/T = {:.2}: write-backs {wb}, expected {expected:.0} ({:.4} per eviction against 1/(1+C/T) = {:.4})",
            c as f64 / t as f64,
            wb / evictions,
            1.0 / (1.0 + c as f64 / t as f64)
        );
        assert!(rel(wb, expected) < 0.03, "C = {c}: {wb} vs {expected}");
        // Each write-back reads the page's entries the cache does not hold, then writes it.
        assert_eq!(m["mapping_page_writes"], m["eviction_writebacks"], "{m}");
    }
}

#[test]
fn reads_of_never_written_pages_dirty_only_mqsims_entries() {
    // An empty device read at random under MQSim's rule for never-written pages
    // (`ftl.unmapped_reads = "read_flash"`): the read takes a page but no mapping changes, so
    // whole translation pages leave the cache clean; with single entries (MQSim's CMT) the
    // read creates its entry dirty, as MQSim's does, and evictions write back as under random
    // writes: 1 / (1 + C/T) of them (C entries cached over T translation pages).
    let (t, n, c) = (512u64, 30_000u64, 512u64);
    let o: Vec<String> = vec![
        "precondition.mode=empty".into(),
        "ftl.unmapped_reads=read_flash".into(),
        "flow.0.request_bytes=8192".into(),
        "flow.0.queue_depth=8".into(),
        format!("flow.0.requests={n}"),
        format!("flow.0.range_bytes={}", t * ENTRIES_PER_PAGE * 8192),
    ];
    let page_cap = format!("ftl.cmt.capacity_bytes={}", 64 * ENTRIES_PER_PAGE * 9);
    let mut p: Vec<&str> = o.iter().map(String::as_str).collect();
    p.push(&page_cap);
    let r = run_cfg(&reads(&p));
    let m = cmt(&r);
    assert!(
        m["lookups"]["read_misses"].as_u64().unwrap() > 10_000,
        "{m}"
    );
    assert_eq!(m["eviction_writebacks"].as_u64(), Some(0), "{m}");
    assert_eq!(
        r["device"]["ftl"]["pages_mapped_by_reads"].as_u64(),
        Some(n),
        "every read took a page"
    );

    let entry_cap = format!("ftl.cmt.capacity_bytes={}", c * 9);
    let mut e: Vec<&str> = o.iter().map(String::as_str).collect();
    e.extend(["ftl.cmt.granularity=entry", entry_cap.as_str()]);
    let r = run_cfg(&reads(&e));
    let m = cmt(&r);
    let misses = m["lookups"]["read_misses"].as_u64().unwrap() as f64;
    let wb = m["eviction_writebacks"].as_u64().unwrap() as f64;
    // The cache starts empty: the first C misses evict nothing.
    let expected = (misses - c as f64) / (1.0 + c as f64 / t as f64);
    println!("single entries: write-backs {wb}, expected {expected:.0}");
    assert!(rel(wb, expected) < 0.03, "{wb} vs {expected}");
}

/// `ftl.cmt.writebacks = "held"` (MQSim's mapping writes, queued but never issued): a page
/// written back is never programmed and stays in DRAM, so later misses on it read nothing.
/// 8 KiB reads of an empty device at QD1, MQSim's rules (every translation page on flash at
/// start, a read of a never-written page dirties its entry), a cache of one entry, each request
/// 911 pages after the last over 16 translation pages (a new entry of the next page each time,
/// the pages in turn): each insertion evicts the previous request's dirty entry, so every
/// request after the first writes its page back. Held, each page is read at its first visit
/// and never again: 16 reads. Programmed, the write-back has reached flash when the turn comes
/// back 16 requests later, so nearly every request reads.
#[test]
fn held_write_backs_never_reach_flash_and_answer_their_pages() {
    let (pages, n) = (16u64, 2000u64);
    let run = |writebacks: &str| {
        let requests = format!("flow.0.requests={n}");
        let range = format!("flow.0.range_bytes={}", pages * ENTRIES_PER_PAGE * 8192);
        let stride = format!("flow.0.stride_bytes={}", (ENTRIES_PER_PAGE + 1) * 8192);
        let w = format!("ftl.cmt.writebacks={writebacks}");
        run_cfg(&reads(&[
            "precondition.mode=empty",
            "ftl.unmapped_reads=read_flash",
            "ftl.cmt.translation_pages_at_start=all",
            "ftl.cmt.granularity=entry",
            "ftl.cmt.capacity_bytes=9",
            "flow.0.pattern=sequential",
            "flow.0.request_bytes=8192",
            "flow.0.queue_depth=1",
            requests.as_str(),
            range.as_str(),
            stride.as_str(),
            w.as_str(),
        ]))
    };
    let r = run("held");
    let m = cmt(&r);
    assert_eq!(m["lookups"]["read_misses"].as_u64(), Some(n), "{m}");
    assert_eq!(m["lookup_reads"].as_u64(), Some(pages), "{m}");
    assert_eq!(m["eviction_writebacks"].as_u64(), Some(n - 1), "{m}");
    assert_eq!(m["mapping_page_writes"].as_u64(), Some(0), "{m}");
    assert_eq!(r["device"]["flash"]["page_programs"].as_u64(), Some(0));
    // Each write-back reads its page's unchanged entries unless a read of it is in flight.
    let merge = m["writeback_reads"].as_u64().unwrap();
    assert!(merge > n / 2 && merge < n, "{m}");

    let r = run("programmed");
    let m = cmt(&r);
    assert_eq!(m["eviction_writebacks"].as_u64(), Some(n - 1), "{m}");
    assert_eq!(m["mapping_page_writes"], m["eviction_writebacks"], "{m}");
    assert!(m["lookup_reads"].as_u64().unwrap() > n * 9 / 10, "{m}");
}
