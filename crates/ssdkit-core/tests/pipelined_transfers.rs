//! Data crosses the host link a page at a time (`interface.pipelined_transfers`), checked
//! against times computed from the configuration on two-page requests of the `x25m` preset
//! (SATA link, 4 KiB pages, seed 002's controller that issues one page operation per
//! channel-switch delay). Each run is at QD1 on a freshly filled device, so nothing else
//! contends: every request takes the same time, compared within 1 ns with the closed form of
//! the pipelined transfer and of the whole-request transfer (`pipelined_transfers=false`).
//!
//! The two pages of an 8 KiB sequential request sit on neighbouring channels (allocation
//! order CWDP), so they share no bus and no die.

mod common;
use common::x25m::{fis_us, link_mb_per_s, sata_us};
use common::*;
use ssdkit_core::config::Config;
use ssdkit_core::internals::host::link::{SATA_COMMAND_FIS, SATA_REG_D2H_FIS, SATA_SDB_FIS};

fn two_pages(write: bool, pipelined: bool, extra: &[&str]) -> Config {
    let mut o = vec![
        "precondition.mode=sequential".to_string(),
        "flow.0.queue_depth=1".into(),
        format!("flow.0.read_fraction={}", if write { 0 } else { 1 }),
        "flow.0.request_bytes=8192".into(),
        "flow.0.pattern=sequential".into(),
        "flow.0.requests=50".into(),
        format!("interface.pipelined_transfers={pipelined}"),
    ];
    o.extend(extra.iter().map(|s| s.to_string()));
    let o: Vec<&str> = o.iter().map(String::as_str).collect();
    let c = preset("x25m", &o);
    assert_eq!(c.flash.page_size_bytes, 4096, "two pages per request");
    c
}

/// Command (Register H2D) FIS, and the completion (Set Device Bits) FIS.
fn cmd_us(c: &Config) -> f64 {
    fis_us(c, SATA_COMMAND_FIS)
}
fn sdb_us(c: &Config) -> f64 {
    fis_us(c, SATA_SDB_FIS)
}
/// The device's Register D2H FIS accepting the command: a write's data phase waits for it on
/// the half-duplex link (a read's flash work hides it).
fn d2h_us(c: &Config) -> f64 {
    fis_us(c, SATA_REG_D2H_FIS)
}
fn page_us(c: &Config) -> f64 {
    sata_us(c, c.flash.page_size_bytes as u64)
}
/// One page's data bytes alone on the link (what sending it early saves).
fn page_data_us(c: &Config) -> f64 {
    c.flash.page_size_bytes as f64 / link_mb_per_s(c)
}
/// Register transfer: one page over the channel bus.
fn reg_us(c: &Config) -> f64 {
    c.flash.page_size_bytes as f64 / (c.flash.bus.width_bits as f64 / 8.0) / c.flash.bus.rate_mts
}

/// The second page's data leaves its die one channel-switch delay after the first's (the
/// controller issues the second read one switch later); the first page's transfer on the
/// link is over by then, so the request ends one page's link time after its second page is
/// out. Sending the whole request after its last page costs the link time of both pages.
#[test]
fn two_page_read_completes_one_page_transfer_after_its_second_page() {
    let c = two_pages(false, true, &[]);
    let b = &c.flash.bus;
    assert!(
        page_us(&c) < b.channel_switch_read_us,
        "link idle when page 2 is out"
    );
    let second_out = cmd_us(&c) + 2.0 * b.channel_switch_read_us + c.flash.read_us[0] + reg_us(&c);
    let pipelined = second_out + page_us(&c) + sdb_us(&c);
    assert_all_equal_to(&latencies_ps(&c), pipelined, "pipelined 2-page read");

    let c_old = two_pages(false, false, &[]);
    // One 8 KiB data FIS (the largest SATA allows) after the second page is out.
    let whole = second_out + sata_us(&c_old, 8192) + sdb_us(&c_old);
    assert_all_equal_to(&latencies_ps(&c_old), whole, "whole-request 2-page read");
    assert!(
        whole - pipelined > 0.99 * page_data_us(&c),
        "{whole} vs {pipelined}"
    );
}

/// Without a channel-switch delay both pages leave their dies at the same time: their chunks
/// cross the link one after the other (one FIS at a time), and the request ends two page
/// transfers after its pages are out.
#[test]
fn chunks_out_together_queue_on_the_link() {
    let no_switch = ["flash.bus.channel_switch_read_us=0"];
    let c = two_pages(false, true, &no_switch);
    let out = cmd_us(&c) + c.flash.read_us[0] + reg_us(&c);
    assert_all_equal_to(
        &latencies_ps(&c),
        out + 2.0 * page_us(&c) + sdb_us(&c),
        "pipelined 2-page read, pages out together",
    );
    let c_old = two_pages(false, false, &no_switch);
    assert_all_equal_to(
        &latencies_ps(&c_old),
        out + sata_us(&c_old, 8192) + sdb_us(&c_old),
        "whole-request 2-page read, pages out together",
    );
}

/// The first page is programmed as soon as its own data is in (one page's link time after the
/// command), while the second page's data is still on the link; the second page's data is in
/// before the controller can issue it (one write channel-switch later), so the request ends
/// at: command, one page of data, two write switches, the register transfer and the program
/// of the second page, completion. The whole-request transfer waits for both pages first.
#[test]
fn two_page_write_starts_before_its_second_page_arrives() {
    let c = two_pages(true, true, &[]);
    let b = &c.flash.bus;
    assert!(page_us(&c) < b.channel_switch_write_us);
    let flash = 2.0 * b.channel_switch_write_us + reg_us(&c) + c.flash.program_us[0];
    let pipelined = cmd_us(&c) + d2h_us(&c) + page_us(&c) + flash + sdb_us(&c);
    assert_all_equal_to(&latencies_ps(&c), pipelined, "pipelined 2-page write");

    let c_old = two_pages(true, false, &[]);
    let whole = cmd_us(&c_old) + d2h_us(&c_old) + sata_us(&c_old, 8192) + flash + sdb_us(&c_old);
    assert_all_equal_to(&latencies_ps(&c_old), whole, "whole-request 2-page write");
    assert!(
        whole - pipelined > 0.99 * page_data_us(&c),
        "{whole} vs {pipelined}"
    );
}

/// Without a channel-switch delay each page goes to its die the moment its data is in: the
/// second page waits for its own data (two page transfers), not for anything else.
#[test]
fn each_write_page_waits_for_its_own_data() {
    let c = two_pages(true, true, &["flash.bus.channel_switch_write_us=0"]);
    assert_all_equal_to(
        &latencies_ps(&c),
        cmd_us(&c)
            + d2h_us(&c)
            + 2.0 * page_us(&c)
            + reg_us(&c)
            + c.flash.program_us[0]
            + sdb_us(&c),
        "pipelined 2-page write, no switch delay",
    );
}

/// A single-page request is a single chunk: both modes take the same time. (Not so a write of
/// part of a page, whose read of the unchanged sectors overlaps the data's transfer when
/// pipelined: `latency_sum_of_parts.rs` has both sums; mqsim-paper's 4 KiB writes are such.)
#[test]
fn single_page_requests_are_unchanged() {
    for (name, write) in [("x25m", false), ("x25m", true), ("mqsim-paper", false)] {
        let o = [
            "precondition.mode=sequential",
            "flow.0.queue_depth=1",
            if write {
                "flow.0.read_fraction=0"
            } else {
                "flow.0.read_fraction=1"
            },
            "flow.0.requests=200",
        ];
        let on = latencies_ps(&preset(name, &o));
        let mut off_o = o.to_vec();
        off_o.push("interface.pipelined_transfers=false");
        let off = latencies_ps(&preset(name, &off_o));
        assert_eq!(on, off, "{name} write={write}");
    }
}
