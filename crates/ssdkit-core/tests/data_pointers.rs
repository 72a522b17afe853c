//! `interface.data_pointers`: the PRP list or SGL segments of a command, read from host memory
//! after the command. At QD1 nothing else is on the link, so the list read delays every
//! request by exactly its own wire time (NVMe base specification 2.0, sections 4.1.1 (PRP) and
//! 4.1.2 (SGL); TLP arithmetic from the PCI-SIG base specifications, tests/common/pcie.rs):
//! for each list page, one header-only memory read request per `pcie.max_read_request_bytes`
//! up, then the entries down as completions of at most `pcie.max_payload_bytes`.

mod common;
use common::pcie::Parts;
use common::*;
use ssdkit_core::config::Config;

/// QD1 requests of `bytes` on the bare mqsim-paper device (reads or writes), with `extra`.
fn qd1(read: bool, bytes: u64, extra: &[&str]) -> Config {
    let rf = if read { "1.0" } else { "0.0" };
    let mut o = bare(&[]);
    o.extend([
        "flow.0.queue_depth=1".to_string(),
        format!("flow.0.read_fraction={rf}"),
        format!("flow.0.request_bytes={bytes}"),
        "flow.0.requests=300".into(),
        "precondition.mode=sequential".into(),
    ]);
    o.extend(extra.iter().map(|s| s.to_string()));
    let o: Vec<&str> = o.iter().map(String::as_str).collect();
    preset("mqsim-paper", &o)
}

/// Microseconds to read a list of `entries` of `entry` bytes in pages of `page` bytes, chained
/// by their last slot, by the NVMe layout and the TLP formulas (independent of the simulator's
/// code: the pages are walked one after the other).
fn list_us(c: &Config, entries: u64, entry: u64, page: u64) -> f64 {
    list_read(c, entries, entry, page).0
}

/// `list_us` and the number of TLPs the list read sends.
fn list_read(c: &Config, entries: u64, entry: u64, page: u64) -> (f64, u64) {
    let p = Parts::from_config(c);
    let per_page = page / entry;
    let mut left = entries;
    let (mut us, mut tlps) = (0.0, 0);
    while left > 0 {
        // A page holds all that is left, or per_page - 1 entries and the pointer to the next.
        let slots = if left <= per_page { left } else { per_page };
        left -= if left <= per_page { left } else { per_page - 1 };
        let bytes = (slots * entry) as f64;
        let requests = (bytes / p.mrrs).ceil();
        us += requests * p.tlps_us(0.0, 1.0) + p.tlps_us(bytes, p.mps);
        tlps += requests as u64 + (bytes / p.mps).ceil() as u64;
    }
    (us, tlps)
}

/// The extra time of a list read, from the layout: PRP lists one 8-byte entry per memory page
/// after the first when there are more than two; SGL one 16-byte descriptor per extent when
/// there is more than one.
fn expected_extra_us(c: &Config, bytes: u64, mode: &str, extent: u64) -> f64 {
    expected_extra(c, bytes, mode, extent).0
}

/// `expected_extra_us` and the TLPs of the list read.
fn expected_extra(c: &Config, bytes: u64, mode: &str, extent: u64) -> (f64, u64) {
    let page = c.interface.memory_page_bytes as u64;
    match mode {
        "prp" => {
            let pages = bytes.div_ceil(page);
            if pages <= 2 {
                (0.0, 0)
            } else {
                list_read(c, pages - 1, 8, page)
            }
        }
        "sgl" => {
            let extents = bytes.div_ceil(extent);
            if extents <= 1 {
                (0.0, 0)
            } else {
                list_read(c, extents, 16, page)
            }
        }
        _ => unreachable!(),
    }
}

/// Each request of the run with pointers (and `extra`) took its twin's time without them plus the list's
/// wire time, within 1 ps per TLP of the list (the link rounds each message's wire time down
/// to whole picoseconds).
fn assert_delayed_by_list(read: bool, bytes: u64, mode: &str, extra: &[&str], extent: u64) {
    // The twin without a list cannot carry the list's keys (refused as unused).
    let base = latencies_ps(&qd1(read, bytes, &[]));
    let mut o = vec![format!("interface.data_pointers={mode}")];
    o.extend(extra.iter().map(|s| s.to_string()));
    let o: Vec<&str> = o.iter().map(String::as_str).collect();
    let c = qd1(read, bytes, &o);
    let with = latencies_ps(&c);
    assert_eq!(base.len(), with.len());
    let (want_us, tlps) = expected_extra(&c, bytes, mode, extent);
    let want_ps = want_us * 1e6;
    let what = if read { "read" } else { "write" };
    for (i, (a, b)) in base.iter().zip(&with).enumerate() {
        let extra = *b as f64 - *a as f64;
        assert!(
            (extra - want_ps).abs() <= tlps.max(1) as f64,
            "{mode} {what} of {bytes} B, request {i}: {extra} ps more than without a list; the list read takes {want_ps:.1} ps"
        );
    }
    println!(
        "{mode} {what} {bytes} B: +{:.4} us per request (QD1, {} requests)",
        want_ps / 1e6,
        with.len()
    );
}

#[test]
fn prp_list_read_adds_its_wire_time_at_qd1() {
    // One and two pages fit PRP1/PRP2: no list, no time.
    for bytes in [4096, 8192] {
        assert_delayed_by_list(true, bytes, "prp", &[], 4096);
        let c = qd1(true, bytes, &["interface.data_pointers=prp"]);
        assert_eq!(expected_extra_us(&c, bytes, "prp", 4096), 0.0);
    }
    // Lists of 2 and 31 entries (12 KiB, 128 KiB), reads and writes.
    for bytes in [12288, 131072] {
        assert_delayed_by_list(true, bytes, "prp", &[], 4096);
        assert_delayed_by_list(false, bytes, "prp", &[], 4096);
    }
    // 4 MiB: 1023 entries, two chained list pages (511 + pointer, then 512), each read after
    // the one before.
    assert_delayed_by_list(true, 4 << 20, "prp", &[], 4096);
    let c = qd1(true, 4 << 20, &["interface.data_pointers=prp"]);
    let two_pages = expected_extra_us(&c, 4 << 20, "prp", 4096);
    let one_list = list_us(&c, 1023, 8, 1 << 20);
    assert!(two_pages > one_list, "{two_pages} {one_list}");
    // Larger memory pages: 128 KiB in 64 KiB pages is two pages, no list.
    assert_delayed_by_list(
        true,
        131072,
        "prp",
        &["interface.memory_page_bytes=65536"],
        4096,
    );
}

#[test]
fn sgl_segment_read_adds_its_wire_time_at_qd1() {
    // Scattered 4 KiB extents: a segment from 8 KiB on (two descriptors, 32 B).
    for bytes in [4096, 8192, 131072] {
        assert_delayed_by_list(true, bytes, "sgl", &[], 4096);
        assert_delayed_by_list(false, bytes, "sgl", &[], 4096);
    }
    // 2 MiB of 4 KiB extents: 512 descriptors, three chained 4 KiB segments of 256 slots.
    assert_delayed_by_list(true, 2 << 20, "sgl", &[], 4096);
    // A contiguous buffer is one descriptor in the command: nothing to read.
    let extent = ["interface.buffer_extent_bytes=1048576"];
    assert_delayed_by_list(true, 131072, "sgl", &extent, 1 << 20);
    let c = qd1(true, 131072, &["interface.data_pointers=sgl", extent[0]]);
    assert_eq!(expected_extra_us(&c, 131072, "sgl", 1 << 20), 0.0);
}

/// SGL's 16-byte descriptors per 4 KiB extent cost more than PRP's 8-byte entries per page.
#[test]
fn scattered_sgl_reads_more_than_prp() {
    let c = qd1(true, 131072, &["interface.data_pointers=prp"]);
    let prp = expected_extra_us(&c, 131072, "prp", 4096);
    let sgl = expected_extra_us(&c, 131072, "sgl", 4096);
    assert!(sgl > prp && prp > 0.0, "sgl {sgl} prp {prp}");
    let mean = |mode: &str| mean_us(&run_cfg(&qd1(true, 131072, &[mode])), "read");
    let m_prp = mean("interface.data_pointers=prp");
    let m_sgl = mean("interface.data_pointers=sgl");
    assert!(m_sgl > m_prp, "sgl {m_sgl} prp {m_prp}");
}

/// The list read is part of the command fetch in the latency breakdown, and the steps still
/// sum to each request's latency (the run stops otherwise).
#[test]
fn list_read_is_part_of_command_fetch() {
    let step = |extra: &[&str]| {
        let mut o = vec!["run.latency_breakdown=true"];
        o.extend(extra);
        let r = run_cfg(&qd1(true, 131072, &o));
        r["device"]["latency_breakdown"]["read"]["command_fetch"]["mean"]
            .as_f64()
            .unwrap()
    };
    let none = step(&[]);
    let prp = step(&["interface.data_pointers=prp"]);
    let c = qd1(true, 131072, &["interface.data_pointers=prp"]);
    let want = expected_extra_us(&c, 131072, "prp", 4096);
    assert!(
        ((prp - none) - want).abs() < 1e-5,
        "command_fetch {none} -> {prp} us; the list takes {want} us"
    );
}

/// Host memory counts the list pages of the outstanding requests with their data buffers.
#[test]
fn host_memory_counts_list_pages() {
    let c = qd1(
        true,
        131072,
        &[
            "interface.data_pointers=prp",
            "host.completion=polled",
            "flow.0.queue_depth=8",
        ],
    );
    let r = run_cfg(&c);
    let mem = r["device"]["host"]["host_memory_bytes"].as_u64().unwrap();
    let queues = c.interface.io_queue_depth as u64 * (64 + 16);
    // 8 requests of 128 KiB, each with a one-page PRP list.
    assert_eq!(mem, queues + 8 * (131072 + 4096));
}

#[test]
fn bad_data_pointer_settings_are_refused() {
    use ssdkit_core::api::{load, Source};
    let err = |name: &str, o: &[&str]| {
        let o: Vec<String> = o.iter().map(|s| s.to_string()).collect();
        load(Source::Preset(name), &o)
            .expect_err("refused")
            .to_string()
    };
    let e = err("x25m", &["interface.data_pointers=prp"]);
    assert!(
        e.contains("key `interface.data_pointers` = prp") && e.contains("\"nvme\" only"),
        "{e}"
    );
    let e = err("mqsim-paper", &["interface.memory_page_bytes=8192"]);
    assert!(
        e.contains("key `interface.memory_page_bytes` = 8192") && e.contains("\"prp\" or \"sgl\""),
        "{e}"
    );
    let e = err(
        "mqsim-paper",
        &[
            "interface.data_pointers=prp",
            "interface.buffer_extent_bytes=8192",
        ],
    );
    assert!(
        e.contains("key `interface.buffer_extent_bytes`") && e.contains("\"sgl\" only"),
        "{e}"
    );
    let e = err(
        "mqsim-paper",
        &[
            "interface.data_pointers=prp",
            "interface.memory_page_bytes=2048",
        ],
    );
    assert!(
        e.contains("key `interface.memory_page_bytes` = 2048")
            && e.contains("power of two in 4096..=134217728"),
        "{e}"
    );
    let e = err(
        "mqsim-paper",
        &[
            "interface.data_pointers=sgl",
            "interface.buffer_extent_bytes=3000",
        ],
    );
    assert!(
        e.contains("key `interface.buffer_extent_bytes` = 3000") && e.contains("512..=1073741824"),
        "{e}"
    );
    let e = err("mqsim-paper", &["interface.data_pointers=iommu"]);
    assert!(
        e.contains("interface.data_pointers") && e.contains("prp") && e.contains("sgl"),
        "{e}"
    );
}
