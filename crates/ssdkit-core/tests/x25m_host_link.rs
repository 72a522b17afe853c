//! Seed 002's X25-M figures on the `x25m` preset as users get it, SATA host link included
//! (`x25m_latency_model.rs` checks the same model with the link made ideal).
//!
//! Data crosses the link a page at a time (`interface.pipelined_transfers`, on by default): a
//! read's pages leave for the host as they come out of their dies, a write's pages are fetched
//! back to back and each is programmed once its own data is in. While the link carries a page
//! faster than the controller issues the next one (one per channel-switch delay), the link
//! adds to a request only its command FIS (and for a write the device's Register D2H FIS,
//! which the data phase waits behind), one page's data phase (DMA Setup and Data FIS; the last
//! read page, or the first write page) and the completion FIS; so every request takes exactly
//! seed 002's Eq. 1-2 / 6-7 plus those, which is checked per request within 1 ns, and then the
//! rates against the paper's tables within 5 %.
//!
//! Seed 002 models no GC and its measurements are of a drive that did not collect (Table 4's
//! measured write IOPS are within 0.5 % of the no-GC model): the device starts freshly filled
//! (`precondition.mode=sequential`), whose spare blocks outlast these runs.

mod common;
use common::x25m::{eq_6_7, fis_us, sata_us};
use common::*;
use ssdkit_core::config::Config;
use ssdkit_core::internals::host::link::{
    SATA_COMMAND_FIS, SATA_DATA_FIS_HEADER, SATA_DMA_SETUP_FIS, SATA_REG_D2H_FIS, SATA_SDB_FIS,
};

fn x25m_qd1(write: bool, request_bytes: u64, pattern: &str, requests: u64) -> Config {
    preset(
        "x25m",
        &[
            "precondition.mode=sequential",
            "flow.0.queue_depth=1",
            &format!("flow.0.read_fraction={}", if write { 0 } else { 1 }),
            &format!("flow.0.request_bytes={request_bytes}"),
            &format!("flow.0.pattern={pattern}"),
            &format!("flow.0.requests={requests}"),
        ],
    )
}

/// The host link's part of one request at QD1, microseconds: command (Register H2D) FIS, for
/// a write the Register D2H FIS, one page's data phase (DMA Setup and Data FIS), completion
/// (Set Device Bits) FIS. Valid while the link carries a page within one
/// channel-switch delay, so no page waits for the link behind the one before.
fn link_part_us(c: &Config, write: bool) -> f64 {
    let page = c.flash.page_size_bytes as u64;
    let b = &c.flash.bus;
    let switch = if write {
        b.channel_switch_write_us
    } else {
        b.channel_switch_read_us
    };
    assert!(
        sata_us(c, page) <= switch,
        "the closed form needs the link to keep up: a page takes {:.3} us, one is issued every {switch} us",
        sata_us(c, page)
    );
    // A write's data phase waits on the half-duplex link for the device's Register D2H FIS;
    // a read's flash work hides it.
    let d2h = if write {
        fis_us(c, SATA_REG_D2H_FIS)
    } else {
        0.0
    };
    fis_us(c, SATA_COMMAND_FIS) + d2h + sata_us(c, page) + fis_us(c, SATA_SDB_FIS)
}

fn stat(r: &serde_json::Value, key: &str) -> f64 {
    r["device"]["stats"]["all"][key].as_f64().unwrap()
}

const MIB: f64 = 1048576.0;

/// Table 5's "MB/s" are 2^20 bytes per second: its model values are Eq. 7 and Eq. 6 for a
/// 512 KiB record on this configuration, 2270 us and 7616 us, which are 220.3 and 65.7 only in
/// MiB/s (230.96 and 68.84 in 10^6 B/s).
#[test]
fn table5_model_bandwidths_are_mib_per_s() {
    let c = preset("x25m", &[]);
    let pages = 512 * 1024 / c.flash.page_size_bytes as u64;
    for (write, table5) in [(false, 220.3), (true, 65.7)] {
        let mib_s = 512.0 * 1024.0 / (eq_6_7(&c, pages, write) * 1e-6) / MIB;
        assert!(
            (mib_s - table5).abs() < 0.05,
            "Eq. 6-7 {mib_s:.3} MiB/s, Table 5 {table5}"
        );
    }
}

#[test]
fn table5_sequential_512k_qd1_with_host_link_within_5_percent() {
    let mut table = String::from("\nx25m, SATA link, QD1 512 KiB sequential\n");
    for (write, table5_mib_s) in [(false, 220.3), (true, 65.7)] {
        let c = x25m_qd1(write, 512 * 1024, "sequential", 40);
        let pages = 512 * 1024 / c.flash.page_size_bytes as u64;
        let flash = eq_6_7(&c, pages, write);
        let link = link_part_us(&c, write);
        let what = if write {
            "Eq. 6 (write)"
        } else {
            "Eq. 7 (read)"
        };
        assert_all_equal_to(&latencies_ps(&c), flash + link, &format!("{what} + link"));

        let r = run_cfg(&c);
        let mib_s = stat(&r, "bandwidth_bytes_per_s") / MIB;
        let e = rel(mib_s, table5_mib_s);
        let line = format!(
            "{:5}: {mib_s:.2} MiB/s, Table 5 model {table5_mib_s} ({:+.2} %); host link {link:.3} us of {:.3} us ({:.2} %)\n",
            if write { "write" } else { "read" },
            (mib_s / table5_mib_s - 1.0) * 100.0,
            flash + link,
            link / (flash + link) * 100.0
        );
        table.push_str(&line);
        assert!(e < 0.05, "{line}");
    }
    println!("{table}");
}

#[test]
fn table4_random_4k_qd1_with_host_link_within_5_percent() {
    let mut table = String::from("\nx25m, SATA link, QD1 4 KiB random\n");
    // Table 4, measured on the X25-M.
    for (write, table4_iops) in [(false, 4158.0), (true, 944.6)] {
        let c = x25m_qd1(write, 4096, "random", 3000);
        let flash = eq_6_7(&c, 1, write);
        let link = link_part_us(&c, write);
        let what = if write {
            "Eq. 1 (write)"
        } else {
            "Eq. 2 (read)"
        };
        assert_all_equal_to(&latencies_ps(&c), flash + link, &format!("{what} + link"));

        let r = run_cfg(&c);
        assert_eq!(r["device"]["ftl"]["gc_runs"].as_u64(), Some(0), "no GC");
        let iops = stat(&r, "iops");
        let e = rel(iops, table4_iops);
        let line = format!(
            "{:5}: {iops:.1} IOPS, Table 4 measured {table4_iops} ({:+.2} %); host link {link:.3} us of {:.3} us ({:.2} %)\n",
            if write { "write" } else { "read" },
            (iops / table4_iops - 1.0) * 100.0,
            flash + link,
            link / (flash + link) * 100.0
        );
        table.push_str(&line);
        assert!(e < 0.05, "{line}");
    }
    println!("{table}");
}

/// The host bus adapter's processing (`interface.sata_processing_delay_us`, MQSim's
/// SATA_Processing_Delay): at QD1 each request pays it once on submission and once on
/// completion, exactly; at QD32 with a delay far above the flash time, the HBA's two
/// one-at-a-time stages are the bottleneck and the device runs at one request per delay.
#[test]
fn hba_processing_delay_is_paid_twice_per_request_and_bounds_the_rate() {
    let base = x25m_qd1(false, 4096, "random", 2000);
    let plain = eq_6_7(&base, 1, false) + link_part_us(&base, false);
    let mut o: Vec<String> = vec![
        "precondition.mode=sequential".into(),
        "flow.0.queue_depth=1".into(),
        "flow.0.read_fraction=1".into(),
        "flow.0.requests=2000".into(),
        "interface.sata_processing_delay_us=7.5".into(),
    ];
    let os: Vec<&str> = o.iter().map(String::as_str).collect();
    let c = preset("x25m", &os);
    assert_all_equal_to(
        &latencies_ps(&c),
        plain + 2.0 * 7.5,
        "QD1 read with HBA delay",
    );
    o[1] = "flow.0.queue_depth=32".into();
    o[4] = "interface.sata_processing_delay_us=1000".into();
    let os: Vec<&str> = o.iter().map(String::as_str).collect();
    let r = run_cfg(&preset("x25m", &os));
    let iops = stat(&r, "iops");
    println!("QD32, 1 ms HBA processing: {iops:.1} IOPS (bound 1000)");
    assert!(rel(iops, 1000.0) < 0.01, "{iops}");
}

fn x25m_seq_128k_qd32(write: bool, extra: &[&str]) -> Config {
    let mut o: Vec<String> = vec![
        "precondition.mode=sequential".into(),
        "flow.0.queue_depth=32".into(),
        format!("flow.0.read_fraction={}", if write { 0 } else { 1 }),
        "flow.0.request_bytes=131072".into(),
        "flow.0.pattern=sequential".into(),
        "flow.0.requests=3000".into(),
    ];
    o.extend(extra.iter().map(|s| s.to_string()));
    let os: Vec<&str> = o.iter().map(String::as_str).collect();
    preset("x25m", &os)
}

/// At SATA 1.5 Gb/s the link, not the flash, bounds 128 KiB sequential reads at QD32: every
/// request's FISes cross the one half-duplex link back to back, so the bandwidth is the line
/// rate times the request's share of payload in its wire bytes: Register H2D, Register D2H,
/// per page a DMA Setup and a Data FIS with its header, Set Device Bits, each framed.
#[test]
fn sata_generation_sets_the_link_bound_of_sequential_reads() {
    let c = x25m_seq_128k_qd32(false, &["interface.sata_gbps=1.5"]);
    let i = &c.interface;
    let f = i.sata_frame_overhead_bytes as u64;
    let pages = 131072 / c.flash.page_size_bytes as u64;
    let wire = (SATA_COMMAND_FIS + f)
        + (SATA_REG_D2H_FIS + f)
        + pages
            * (SATA_DMA_SETUP_FIS + f + c.flash.page_size_bytes as u64 + SATA_DATA_FIS_HEADER + f)
        + (SATA_SDB_FIS + f);
    let bound = 150e6 * 131072.0 / wire as f64;
    let got = stat(&run_cfg(&c), "bandwidth_bytes_per_s");
    println!(
        "SATA 1.5 Gb/s, 128 KiB sequential reads, QD32: {:.3} MB/s, link bound {:.3} MB/s",
        got / 1e6,
        bound / 1e6
    );
    assert!(rel(got, bound) < 0.002, "{got} vs {bound}");
}

/// Intel's specification for the X25-M (FACTS.md section 1: sequential up to 250 MB/s read,
/// 70 MB/s write; 10^6 B/s) against 128 KiB sequential requests at QD32 on the preset as
/// users get it (from QD2 on the rates no longer change). Reads: within 10 % of 250 (the
/// controller issues one page per read channel switch, 16 us: 4096 B / 16 us = 256 MB/s).
/// Writes are bounded by the dies: seed 002's cycle (Eq. 3-4) has its 20 dies each take
/// W_page = W_ch + W_reg + W_cell = 33 + 82 + 940 us per page, 77.65 MB/s, which is what
/// the preset reaches (within 0.5 %). That bound is 10.9 % above Intel's 70 MB/s: with the
/// times fitted to the drive's QD1 write IOPS (Table 4, within 5 % above) the model cannot be
/// at 70 MB/s; what the drive spends beyond it in sustained writes is not in seed 002's model.
#[test]
fn sequential_128k_qd32_against_intels_specification() {
    let mut table = String::from("\nx25m, SATA 3 Gb/s, 128 KiB sequential, QD32\n");
    for (write, spec) in [(false, 250.0), (true, 70.0)] {
        let c = x25m_seq_128k_qd32(write, &[]);
        let mb_s = stat(&run_cfg(&c), "bandwidth_bytes_per_s") / 1e6;
        let line = format!(
            "{:5}: {mb_s:.2} MB/s, specification {spec} ({:+.1} %)\n",
            if write { "write" } else { "read" },
            (mb_s / spec - 1.0) * 100.0
        );
        table.push_str(&line);
        if write {
            let b = &c.flash.bus;
            let w_page = b.channel_switch_write_us
                + c.flash.page_size_bytes as f64 / (b.width_bits as f64 / 8.0) / b.rate_mts
                + c.flash.program_us[0];
            let dies =
                (c.flash.channels * c.flash.chips_per_channel * c.flash.dies_per_chip) as f64;
            let bound = dies * c.flash.page_size_bytes as f64 / w_page;
            assert!(rel(mb_s, bound) < 0.005, "{line} die bound {bound:.2}");
        } else {
            assert!(rel(mb_s, spec) < 0.10, "{line}");
        }
    }
    println!("{table}");
}
