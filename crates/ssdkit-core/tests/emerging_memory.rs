//! Emerging memories written in place (`flash.medium = "in_place"`) and small sectors, and the
//! findings of NVMeSim (Choi et al., "An In-Depth Study of Next Generation Interface for
//! Emerging Non-Volatile Memories", section IV) and AnandTech's Optane SSD DC P4800X figures on
//! the `nvmesim-block`, `nvmesim-dram` and `optane-p4800x` presets. Run with `--nocapture` to
//! see the figures.

mod common;

use common::pcie::Parts;
use common::{preset, rel, run_cfg};
use serde_json::Value;
use ssdkit_core::config::Config;
use ssdkit_core::models::nvme::Nvme;

fn step_us(r: &Value, op: &str, step: &str) -> f64 {
    r["device"]["latency_breakdown"][op][step]["mean"]
        .as_f64()
        .unwrap_or_else(|| panic!("no breakdown step {op}.{step} in {}", r["device"]))
}

fn stat(r: &Value, scope: &str, op: &str, key: &str) -> f64 {
    r["device"][scope][op][key]
        .as_f64()
        .unwrap_or_else(|| panic!("no {scope}.{op}.{key}"))
}

fn mean_latency_us(r: &Value, scope: &str, op: &str) -> f64 {
    r["device"][scope][op]["latency_us"]["mean"]
        .as_f64()
        .unwrap_or_else(|| panic!("no {scope}.{op} latency"))
}

/// One flow of `n` requests of `bytes` at `qd`, reads or writes, at random.
fn flow(op: &str, bytes: u64, qd: u32, n: u64) -> Vec<String> {
    let read = if op == "read" { 1.0 } else { 0.0 };
    vec![
        format!("flow.0.read_fraction={read}"),
        format!("flow.0.request_bytes={bytes}"),
        format!("flow.0.queue_depth={qd}"),
        format!("flow.0.requests={n}"),
    ]
}

fn cfg(name: &str, extra: &[String]) -> Config {
    let o: Vec<&str> = extra.iter().map(|s| s.as_str()).collect();
    preset(name, &o)
}

/// NVMeSim Eq. 3's NVMe information of one QD1 request: DB-Write, I/O-Req, I/O-Fetch,
/// CPL-Submit, MSI and T_stall, from the breakdown (the MSI's wire time is the link formula:
/// it is part of `host_processing`), and the request's time to its MSI (Eq. 1-2's total).
fn nvme_info_share(r: &Value, c: &Config, op: &str) -> (f64, f64) {
    let msi = Parts::from_config(c).tlps_us(4.0, 4.0);
    let info = ["doorbell", "command_fetch", "completion", "t_stall"]
        .iter()
        .map(|s| step_us(r, op, s))
        .sum::<f64>()
        + msi;
    let total = mean_latency_us(r, "stats", op) + msi;
    (info, total)
}

#[test]
fn in_place_writes_never_erase_and_write_each_page_once() {
    // Random 4 KiB overwrites of a small Block-NVM device, four times its capacity: a NAND
    // device would collect garbage; an in-place one programs one page per page written.
    let mut o = flow("write", 4096, 16, 1);
    o.extend(
        [
            "flash.channels=2",
            "flash.chips_per_channel=2",
            "flash.dies_per_chip=1",
            "flash.blocks_per_plane=16",
            "flash.pages_per_block=16",
            "flash.program_us=[20.0]",
            "host.completion=none",
        ]
        .map(String::from),
    );
    let c0 = cfg("nvmesim-block", &o);
    let pages = ssdkit_core::internals::settings::Settings::resolve(&c0)
        .sizes
        .logical_pages;
    o.push(format!("flow.0.requests={}", 4 * pages));
    let c = cfg("nvmesim-block", &o);
    let r = run_cfg(&c);
    let f = &r["device"]["ftl"];
    println!(
        "in-place: {} logical pages, {} writes: {f}",
        pages,
        4 * pages
    );
    assert_eq!(f["user_page_writes"].as_u64(), Some(4 * pages));
    assert_eq!(f["gc_page_moves"].as_u64(), Some(0));
    assert_eq!(f["gc_runs"].as_u64(), Some(0));
    assert_eq!(r["device"]["flash"]["block_erases"].as_u64(), Some(0));
    assert_eq!(
        r["device"]["flash"]["page_programs"].as_u64(),
        Some(4 * pages)
    );
    assert_eq!(f["write_amplification"].as_f64(), Some(1.0));
}

#[test]
fn in_place_refuses_what_it_cannot_do() {
    let bad = |extra: &[&str], key: &str| {
        let o: Vec<String> = extra.iter().map(|s| s.to_string()).collect();
        let e = ssdkit_core::api::load(ssdkit_core::api::Source::Preset("nvmesim-block"), &o)
            .expect_err("refused");
        assert!(e.to_string().contains(key), "{e}");
    };
    bad(
        &[
            "flash.cell_type=MLC",
            "flash.read_us=[30,30]",
            "flash.program_us=[200,200]",
        ],
        "flash.cell_type",
    );
    bad(&["ftl.cmt.mode=shared"], "ftl.cmt.mode");
    bad(&["ftl.placement=dynamic"], "ftl.placement");
    bad(&["flow.0.channels=[0]"], "pinned");
    bad(&["interface.sector_bytes=8192"], "interface.sector_bytes");
    bad(&["interface.sector_bytes=48"], "interface.sector_bytes");
    // A 4 KiB page holds at most 64 sectors: 32-byte sectors would be 128.
    bad(&["interface.sector_bytes=32"], "1 to 64 sectors");
    bad(
        &["flow.0.request_bytes=100"],
        "multiple of the 512-byte sector",
    );
}

#[test]
fn a_64_byte_read_moves_64_bytes_and_reads_one_small_page() {
    // QD1 64 B reads on the DRAM-like NVM with the host model off: NVMeSim's Eq. 1 term by
    // term from the configuration, within 1 ns.
    let mut o = flow("read", 64, 1, 2000);
    o.push("host.completion=none".into());
    let c = cfg("nvmesim-dram", &o);
    let lat = common::latencies_ps(&c);
    let p = Parts::from_config(&c);
    let b = &c.flash.bus;
    let xfer_us = 64.0 / (b.rate_mts * b.width_bits as f64 / 8.0);
    let expected = p.command_us() + 0.05 + xfer_us + p.tlps_us(64.0, p.mps) + p.tlps_us(16.0, 16.0);
    println!(
        "DRAM-like 64 B QD1 read: {:.4} us (Eq. 1 sum {expected:.4} us)",
        lat[0] as f64 / 1e6
    );
    // Every request after the first also waits behind nothing: no host doorbells without
    // a host model.
    common::assert_all_equal_to(&lat, expected, "64 B read on nvmesim-dram");
}

#[test]
fn nvme_information_is_negligible_for_block_nvm() {
    // NVMeSim section IV.A, Figure 3a: NVMeInfo is 0.15 % of a 4 KiB read and 0.03 % of a
    // write on the Block NVM; the bound is 0.5 %.
    for op in ["read", "write"] {
        let mut o = flow(op, 4096, 1, 2000);
        o.push("run.latency_breakdown=true".into());
        let c = cfg("nvmesim-block", &o);
        let r = run_cfg(&c);
        let (info, total) = nvme_info_share(&r, &c, op);
        let share = info / total;
        println!(
            "Block NVM 4 KiB QD1 {op}: NVMe information {info:.4} us of {total:.3} us = {:.3} % (NVMeSim: {} %)",
            share * 100.0,
            if op == "read" { 0.15 } else { 0.03 }
        );
        assert!(share < 0.005, "{op}: share {share}");
    }
}

#[test]
fn nvme_information_is_large_for_dram_like_reads_and_small_for_writes() {
    // NVMeSim Figure 3b (PCIe 2.0 x1, 64 B): NVMeInfo is 44 % of a read and 4 % of a write.
    // The share here is Eq. 3 over Eq. 1-2 with every term from the configuration (checked
    // within 1 ns), and the read's share is large and the write's small, as the paper finds.
    // The paper's figures themselves are not reproduced: its own Table II packets (108 B of
    // NVMe information) take 216 ns at PCIe 2.0 x1's 500 MB/s, so a write with its 1 us
    // medium cannot fall below 216 / (216 + 1000 + 168) = 15.6 %; and ssdkit moves the 64-byte
    // command itself (Table II's I/O-Fetch is 20 B), which raises both shares.
    let mut shares = Vec::new();
    for (op, paper) in [("read", 0.44), ("write", 0.04)] {
        let mut o = flow(op, 64, 1, 5000);
        o.push("run.latency_breakdown=true".into());
        let c = cfg("nvmesim-dram", &o);
        let r = run_cfg(&c);
        let (info, total) = nvme_info_share(&r, &c, op);
        let share = info / total;
        let p = Parts::from_config(&c);
        let b = &c.flash.bus;
        let xfer = 64.0 / (b.rate_mts * b.width_bits as f64 / 8.0);
        // Eq. 1-2 (ssdkit_core::models::nvme): the doorbell, the command, the data (a write's
        // read request and its completion with data), the medium, the completion entry and
        // the MSI; at QD1 with an interrupt per completion the next doorbell waits behind the
        // host's completion queue doorbell (T_stall, from the breakdown).
        let nvm = if op == "read" { 0.05 } else { 1.0 } + xfer;
        let mut eq = Nvme::terms(&p, op == "write", 64.0, nvm);
        eq.stall_us = step_us(&r, op, "t_stall");
        let (eq_info, eq_total) = (eq.overhead_us(), eq.latency_us());
        println!(
            "DRAM-like 64 B QD1 {op}: NVMe information {info:.4} us of {total:.4} us = {:.1} % (Eq. 1-3: {eq_info:.4} of {eq_total:.4} us; NVMeSim: {:.0} %)",
            share * 100.0,
            paper * 100.0
        );
        assert!(
            (info - eq_info).abs() < 1e-3,
            "{op}: information {info} vs Eq. 3 {eq_info}"
        );
        assert!(
            (total - eq_total).abs() < 1e-3,
            "{op}: total {total} vs Eq. 1-2 {eq_total}"
        );
        shares.push(share);
    }
    assert!(
        shares[0] > 0.4,
        "a 64 B read is mostly NVMe information: {}",
        shares[0]
    );
    assert!(
        shares[1] < shares[0] / 2.0,
        "a write's share is small: {shares:?}"
    );
}

/// IOPS and mean latency (us) of random reads of `bytes` at each depth, in `queues` queues.
fn sweep(name: &str, bytes: u64, depths: &[u32], n: u64, queues: u32) -> Vec<(u32, f64, f64)> {
    depths
        .iter()
        .map(|&qd| {
            let mut o = flow("read", bytes, qd, n);
            o.push("host.completion=none".into());
            let mut c = cfg(name, &o);
            let f = c.flows[0].clone();
            c.flows = (0..queues).map(|_| f.clone()).collect();
            let r = run_cfg(&c);
            (
                qd,
                stat(&r, "stats", "read", "iops"),
                mean_latency_us(&r, "stats", "read"),
            )
        })
        .collect()
}

/// The first depth whose throughput is within 5 % of the sweep's last.
fn saturation(points: &[(u32, f64, f64)]) -> u32 {
    let last = points.last().unwrap().1;
    points.iter().find(|p| p.1 >= 0.95 * last).unwrap().0
}

#[test]
fn deep_queues_saturate_the_link_while_latency_keeps_rising() {
    // NVMeSim section IV.C, Figures 6-7 and 9a: throughput saturates at a depth and stays,
    // while the mean latency keeps growing with the depth (requests wait for the bus). The
    // Block NVM on PCIe 2.0 x16 saturates where the queue covers the link's rate times a
    // read's latency; the DRAM-like NVM on PCIe 2.0 x1 at a depth of a few requests.
    for (name, bytes, depths) in [
        (
            "nvmesim-block",
            4096u64,
            vec![1u32, 8, 32, 64, 128, 256, 512, 1024],
        ),
        ("nvmesim-dram", 64, vec![1, 2, 4, 8, 16, 64, 256, 1024]),
    ] {
        let pts = sweep(name, bytes, &depths, 40_000, 1);
        for (qd, iops, lat) in &pts {
            println!("{name} {bytes} B QD{qd}: {iops:.0} IOPS, mean {lat:.3} us");
        }
        let sat = saturation(&pts);
        let c = cfg(name, &[]);
        let p = Parts::from_config(&c);
        // The link's bound (models::nvme): a read's request header, data and completion up, per
        // request; no MSI with `host.completion = "none"`.
        let mut t = Nvme::terms(&p, false, bytes as f64, 0.0);
        t.msi_us = 0.0;
        let up_us = t.up_us(false);
        assert!(up_us > t.down_us(false), "{name}: reads are bound upstream");
        // NVMeSim's T_stall at each depth is at least the model's bound, taken with the
        // simulated unloaded latency as Eq. 1-2's (the medium's term made up to it).
        // The bound is Little's law at a steady depth; of a finite run's n requests the last
        // qd finish with fewer in flight, so the mean may fall short of it by qd / n.
        t.nvm_us = pts[0].2 - t.latency_us();
        for (qd, _, lat) in &pts {
            let bound = t.latency_us() + t.stall_bound_us(false, *qd);
            assert!(
                *lat >= bound * (1.0 - *qd as f64 / 40_000.0),
                "{name} QD{qd}: {lat} us below the T_stall bound's {bound} us"
            );
        }
        let last = pts.last().unwrap();
        println!(
            "{name}: saturates at QD{sat} ({:.0} IOPS; the upstream link bound is {:.0} IOPS)",
            last.1,
            1e6 / up_us
        );
        assert!(
            sat > 1 && sat < *depths.last().unwrap(),
            "{name}: saturation at QD{sat}"
        );
        assert!(
            last.1 <= 1e6 / up_us * 1.001,
            "{name}: above the link bound"
        );
        assert!(
            last.1 >= 0.9 * 1e6 / up_us,
            "{name}: saturated below the link bound"
        );
        // Past saturation the latency grows with the depth (Little: QD / IOPS).
        let after: Vec<_> = pts.iter().filter(|p| p.0 >= sat).collect();
        for w in after.windows(2) {
            assert!(
                w[1].2 > 1.5 * w[0].2,
                "{name}: latency QD{} -> QD{}",
                w[0].0,
                w[1].0
            );
        }
    }
}

#[test]
fn more_queues_reach_the_same_ceiling() {
    // NVMeSim Figure 8: more threads (queues, QD1 each) raise throughput up to the link's
    // capacity, then only the latency grows.
    let pts: Vec<(u32, f64, f64)> = [1u32, 2, 4, 8, 16, 64]
        .iter()
        .map(|&queues| {
            let p = sweep("nvmesim-dram", 64, &[1], 20_000, queues)[0];
            (queues, p.1, p.2)
        })
        .collect();
    let top = pts.iter().map(|p| p.1).fold(0.0, f64::max);
    let mut prev = 0.0;
    for (q, total, lat) in &pts {
        println!("nvmesim-dram 64 B, {q} queues x QD1: {total:.0} IOPS in all, mean {lat:.3} us");
        assert!(*total >= prev * 0.98, "throughput fell at {q} queues");
        prev = f64::max(prev, *total);
    }
    assert!(pts[0].1 < 0.95 * top, "one queue already saturates");
    assert!(
        pts.last().unwrap().2 > 4.0 * pts[0].2,
        "latency does not grow past the ceiling"
    );
}

#[test]
fn optane_like_preset_matches_the_p4800x() {
    // AnandTech (show/11209, "Checking Intel's numbers"): QD1 4 KiB random read mean 8.9 us
    // (fio: to the end of the interrupt handler, so app_stats); Intel: 550 K IOPS at QD16.
    let c = cfg("optane-p4800x", &flow("read", 4096, 1, 20_000));
    let r = run_cfg(&c);
    let qd1 = mean_latency_us(&r, "app_stats", "read");
    println!("optane-p4800x QD1 4 KiB read: {qd1:.2} us to the end of the ISR (AnandTech: 8.9 us, {:+.1} %)", (qd1 / 8.9 - 1.0) * 100.0);
    assert!(rel(qd1, 8.9) <= 0.15, "QD1 {qd1} us");
    let c = cfg("optane-p4800x", &flow("read", 4096, 16, 200_000));
    let r = run_cfg(&c);
    let iops = stat(&r, "app_stats", "read", "iops");
    println!(
        "optane-p4800x QD16 4 KiB read: {iops:.0} IOPS (Intel: 550,000, {:+.1} %)",
        (iops / 550e3 - 1.0) * 100.0
    );
    assert!(rel(iops, 550e3) <= 0.15, "QD16 {iops} IOPS");
}
