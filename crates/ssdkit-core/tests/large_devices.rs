//! The largest devices: the `largest-qlc` preset against its published figures, and the
//! 64 TiB TLC device of 4.29 billion pages, whose page map must cost memory only where pages
//! change.
mod common;
use common::*;
use ssdkit_core::api;

/// 61.44 TB to the host, and 4 KiB random reads at a deep queue saturate at the controller's
/// bound, 1 / (0.75 + 0.25 us) = 1,000,000 IOPS, the published 1,005,000.
#[test]
fn largest_qlc_capacity_and_read_bound() {
    let c = preset(
        "largest-qlc",
        &["flow.0.queue_depth=256", "flow.0.requests=300000"],
    );
    let info = api::device_info(&c);
    let bytes = info["capacity_bytes"].as_u64().unwrap() as f64;
    assert!(
        (bytes / 61.44e12 - 1.0).abs() < 1e-3,
        "capacity {bytes} B, not 61.44 TB"
    );
    let r = run_cfg(&c);
    let iops = r["flows"][0]["stats"]["read"]["iops"].as_f64().unwrap();
    println!("largest-qlc 4 KiB random reads at QD256: {iops:.0} IOPS");
    assert!(iops <= 1_000_000.0 * 1.0001, "above the bound: {iops}");
    assert!(iops >= 990_000.0, "within 1 % of the bound: {iops}");
}

/// The 64 TiB TLC device of `examples/devices/tlc-64tib.toml`: 8 channels x 8 chips x 4 dies
/// x 2 planes of 5461 blocks of 1536 16 KiB pages (4,294,705,152 pages; one block more per
/// plane passes 2^32 - 2 and is refused by name). Fast-preconditioned, its page map holds its
/// directories and chunk bits only (0.064 byte per physical page); random writes with GC add a chunk per
/// changed region.
#[test]
fn a_64_tib_device_costs_memory_where_pages_change() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/devices/tlc-64tib.toml"
    );
    let text = std::fs::read_to_string(path).unwrap();
    let file = |extra: &[&str]| {
        let o: Vec<String> = extra.iter().map(|s| s.to_string()).collect();
        api::load(
            api::Source::Toml {
                text: &text,
                origin: path,
            },
            &o,
        )
    };
    let c = file(&["flow.0.requests=2000"]).unwrap();
    let pages = 4_294_705_152u64;
    let sim = ssdkit_core::internals::sim::Simulator::new(&c).unwrap();
    assert_eq!(sim.ftl.geometry().total_pages(), pages);
    let preconditioned = sim.ftl.map_change_bytes();
    // Directories: 4 bytes per chunk of 64 logical pages (L2P) and of 1,024 physical pages
    // (P2L), and a bit per chunk that says it was written (in 8-byte words).
    let logical = sim.ftl.logical_pages();
    let chunks = [logical.div_ceil(64), pages.div_ceil(1024)];
    assert_eq!(
        preconditioned,
        chunks
            .iter()
            .map(|c| 4 * c + 8 * c.div_ceil(64))
            .sum::<u64>()
    );
    assert!((preconditioned as f64) / (pages as f64) < 0.07);
    let (out, sim) = sim.run(&c, false, false).unwrap();
    let ftl = &out.result["device"]["ftl"];
    assert!(ftl["gc_runs"].as_u64().unwrap() > 0, "GC ran: {ftl}");
    let grown = sim.ftl.map_change_bytes() - preconditioned;
    // Each page a write or a GC move changed takes at most one chunk in each table (64
    // entries of L2P, 1,024 of P2L), and GC settles its victims' blocks.
    let moved = ftl["gc_page_moves"].as_u64().unwrap() + ftl["user_page_writes"].as_u64().unwrap();
    let victims = ftl["gc_runs"].as_u64().unwrap();
    assert!(
        grown <= 4 * (moved * (64 + 1024) + victims * (1536 * 64 + 2 * 1024 + 1536)),
        "{grown} bytes for {moved} pages changed"
    );
    println!(
        "64 TiB: page map {:.3} byte per physical page preconditioned, {:.3} after {} writes",
        preconditioned as f64 / pages as f64,
        sim.ftl.map_change_bytes() as f64 / pages as f64,
        2000
    );
    let Err(e) = file(&["flash.blocks_per_plane=5462"]) else {
        panic!("a device of more than 2^32 - 2 pages must be refused");
    };
    let e = e.to_string();
    assert!(
        e.contains("4295491584 physical pages") && e.contains("4294967294"),
        "{e}"
    );
}
