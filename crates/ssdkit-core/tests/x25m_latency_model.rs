//! Seed 002 (analytical latency model of multi-channel, multi-way SSDs) on the `x25m` preset.
//!
//! Seed 002's model folds host transfer and firmware into its fitted cell times (program
//! 940 us, read 140 us), so these checks run the preset with the host link made ideal
//! (`interface.link_model=ideal`) and firmware time zero (already zero in the preset) through
//! ordinary overrides. Everything else is the preset as users get it.

mod common;
use common::x25m::eq_6_7;
use common::*;
use ssdkit_core::config::Config;

fn x25m(overrides: &[&str]) -> Config {
    let mut o = vec![
        "interface.link_model=ideal",
        // Seed 002 models no GC: a freshly filled drive.
        "precondition.mode=sequential",
        "ftl.firmware_request_us=0",
        "ftl.firmware_transaction_us=0",
    ];
    o.extend_from_slice(overrides);
    preset("x25m", &o)
}

#[test]
fn eq6_eq7_multi_page_records_within_2_percent() {
    for write in [false, true] {
        for kib in [4u64, 8, 16, 32, 64, 128, 256, 512] {
            let rf = if write { "0" } else { "1" };
            let c = x25m(&[
                "flow.0.queue_depth=1",
                &format!("flow.0.read_fraction={rf}"),
                &format!("flow.0.request_bytes={}", kib * 1024),
                "flow.0.pattern=sequential",
                "flow.0.requests=40",
            ]);
            let r = run_cfg(&c);
            let n_page = kib * 1024 / c.flash.page_size_bytes as u64;
            let model = eq_6_7(&c, n_page, write);
            let sim = mean_us(&r, "all");
            let e = rel(sim, model);
            assert!(
                e < 0.02,
                "{} {kib} KiB: simulated {sim:.2} us, Eq. {} {model:.2} us ({:.2} %)",
                if write { "write" } else { "read" },
                if write { 6 } else { 7 },
                e * 100.0
            );
        }
    }
}

#[test]
fn table4_single_page_iops_within_2_percent() {
    // Seed 002 Table 4 model values (X25-M, 4 KiB random, one request at a time).
    for (write, table4) in [(false, 4201.7), (true, 947.9)] {
        let rf = if write { "0" } else { "1" };
        let c = x25m(&[
            "flow.0.queue_depth=1",
            &format!("flow.0.read_fraction={rf}"),
            "flow.0.requests=3000",
        ]);
        let r = run_cfg(&c);
        let iops = r["device"]["stats"]["all"]["iops"].as_f64().unwrap();
        let e = rel(iops, table4);
        assert!(
            e < 0.02,
            "{} IOPS {iops:.1} vs Table 4 {table4} ({:.2} %)",
            if write { "write" } else { "read" },
            e * 100.0
        );
        // and every request's latency is Eq. 1 / Eq. 2 computed from this configuration
        assert_all_equal_to(
            &latencies_ps(&c),
            eq_6_7(&c, 1, write),
            if write {
                "Eq. 1 (write)"
            } else {
                "Eq. 2 (read)"
            },
        );
    }
}

#[test]
fn the_model_from_the_preset_prints_tables_4_and_5() {
    use ssdkit_core::models::x25m::X25mParams;
    // The X25-M latency model's own columns, to the digit the paper prints: Table 4 (single
    // page IOPS, Eq. 1-2) and Table 5 (512 KiB sequential records, Eq. 6-7, in MiB/s as the
    // paper's "MB/s"), from the `x25m` preset as users get it.
    let c = preset("x25m", &[]);
    let one = |x: f64| format!("{x:.1}");
    let (w, r) = (
        X25mParams::from_config(&c, true),
        X25mParams::from_config(&c, false),
    );
    assert_eq!(one(w.iops(1)), "947.9");
    assert_eq!(one(r.iops(1)), "4201.7");
    let pages = w.pages(512 * 1024);
    assert_eq!(pages, 128);
    assert_eq!(one(r.bytes_per_s(pages) / 1048576.0), "220.3");
    assert_eq!(one(w.bytes_per_s(pages) / 1048576.0), "65.7");
}
