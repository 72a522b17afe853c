//! QD1 4 KiB random reads and writes on `mqsim-paper`: with one request in the device at a
//! time nothing contends, so every request takes the same time, and it equals the sum of the
//! configured steps, computed here from the configuration by the textbook formulas (PCIe
//! payload rate and per-TLP overhead, ONFI bus rate, array times, firmware), within 1 ns (the
//! simulator rounds each step to whole picoseconds; a missing step would be microseconds).
//! The device starts freshly filled (`precondition.mode=sequential`): the sum of parts has no
//! GC term, and a steady-state device collects from its first writes.

mod common;
use common::pcie::Parts;
use common::*;
use ssdkit_core::config::Config;

fn bus_us(c: &Config, bytes: f64) -> f64 {
    bytes / (c.flash.bus.width_bits as f64 / 8.0) / c.flash.bus.rate_mts
}

fn cmd_us(c: &Config, cycles: u32) -> f64 {
    cycles as f64 * c.flash.bus.cmd_addr_cycle_ns / 1000.0
}

fn qd1(op_read: bool) -> (Config, Vec<u64>) {
    qd1_with(op_read, &[])
}

fn qd1_with(op_read: bool, extra: &[&str]) -> (Config, Vec<u64>) {
    let rf = if op_read { "1.0" } else { "0.0" };
    // The bare controller: these are the back end's sums (the mapping cache's miss cost is
    // checked in tests/cmt.rs, the write cache's latency in tests/data_cache.rs).
    let mut o = common::bare(&[]);
    o.extend([
        "flow.0.queue_depth=1".to_string(),
        format!("flow.0.read_fraction={rf}"),
        "flow.0.requests=3000".into(),
        "precondition.mode=sequential".into(),
    ]);
    o.extend(extra.iter().map(|s| s.to_string()));
    let o: Vec<&str> = o.iter().map(String::as_str).collect();
    let c = preset("mqsim-paper", &o);
    let lat = latencies_ps(&c);
    assert_eq!(lat.len() as u64, c.flows[0].requests);
    (c, lat)
}

/// NVMeSim's Eq. 1 at QD1 (T_Stall = 0): doorbell, command fetch (request and SQE), firmware,
/// the flash read, the data DMA and the completion entry.
fn read_us(c: &Config) -> f64 {
    let p = Parts::from_config(c);
    let req = 4096.0;
    p.command_us()
        + c.ftl.firmware_request_us + c.ftl.firmware_transaction_us
        + cmd_us(c, c.flash.bus.read_cmd_cycles)    // command/address cycles
        + c.flash.read_us[0]                         // tR (LSB = MSB on this preset)
        + bus_us(c, req)                            // only the 4 KiB asked for leave the die
        + p.tlps_us(req, p.mps)                      // data to host memory
        + p.tlps_us(16.0, 16.0) // CQE
}

#[test]
fn qd1_random_read_is_sum_of_parts() {
    let (c, lat) = qd1(true);
    assert_eq!(c.flash.read_us[0], c.flash.read_us[1]);
    assert_all_equal_to(&lat, read_us(&c), "QD1 read");
}

/// A 4 KiB write into an 8 KiB page of a fully mapped drive: the other 4 KiB are read first,
/// then the whole page is programmed. The read needs no host data: with data moving a page at
/// a time (`interface.pipelined_transfers`, the default) the firmware splits the request as
/// soon as its command is in, and the read overlaps the fetch of the write data; the page is
/// programmed once both are done. Moving the whole request first (`false`) puts the data
/// fetch before the firmware and the read.
/// NVMeSim's Eq. 2 at QD1 for a 4 KiB write into a fully mapped 8 KiB page (see below).
fn write_us(c: &Config, pipelined: bool) -> f64 {
    let p = Parts::from_config(c);
    let req = 4096.0;
    let page = c.flash.page_size_bytes as f64;
    // write data: one header-only read request per MRRS, data in MPS-sized completions
    let data = (req / p.mrrs) * p.tlps_us(0.0, 1.0) + p.tlps_us(req, p.mps);
    let firmware = c.ftl.firmware_request_us + c.ftl.firmware_transaction_us;
    let rmw_read =
        cmd_us(c, c.flash.bus.read_cmd_cycles) + c.flash.read_us[0] + bus_us(c, page - req);
    let before_program = if pipelined {
        assert!(data < rmw_read, "the read of the old sectors is the longer");
        firmware + rmw_read.max(data)
    } else {
        data + firmware + rmw_read
    };
    p.command_us()
            + before_program
            // then program the whole page
            + cmd_us(c, c.flash.bus.program_cmd_cycles) + bus_us(c, page) + c.flash.program_us[0]
            + p.tlps_us(16.0, 16.0)
}

#[test]
fn qd1_random_write_is_sum_of_parts() {
    for pipelined in [true, false] {
        let (c, lat) = qd1_with(
            false,
            &[&format!("interface.pipelined_transfers={pipelined}")],
        );
        assert_eq!(c.flash.program_us[0], c.flash.program_us[1]);
        let expected = write_us(&c, pipelined);
        assert_all_equal_to(&lat, expected, &format!("QD1 write, pipelined={pipelined}"));
    }
}

/// Eq. 1 and 2 hold on every PCIe generation and at every width: the per-byte time follows
/// the generation's transfer rate and line code and the lane count.
#[test]
fn qd1_sum_of_parts_on_every_generation_and_width() {
    for (generation, lanes) in [(1, 1), (2, 4), (3, 12), (4, 16), (5, 32), (5, 1)] {
        let g = format!("pcie.generation={generation}");
        let l = format!("pcie.lanes={lanes}");
        let base = [g.as_str(), l.as_str(), "flow.0.requests=300"];
        let (c, lat) = qd1_with(true, &base);
        let what = format!("QD1 read, PCIe {generation}.0 x{lanes}");
        assert_all_equal_to(&lat, read_us(&c), &what);
        let (c, lat) = qd1_with(false, &base);
        let what = format!("QD1 write, PCIe {generation}.0 x{lanes}");
        assert_all_equal_to(&lat, write_us(&c, true), &what);
        println!(
            "PCIe {generation}.0 x{lanes}: read {:.3} us, write {:.3} us",
            read_us(&c),
            write_us(&c, true)
        );
    }
}

/// DLLPs as packets (`pcie.ack_every_tlps`, `pcie.update_fc_every_tlps` = 1: k = 1 or 2 DLLPs
/// per TLP received) go back on the other direction, where the next packet stalls behind
/// them (NVMeSim's T_Stall), even at QD1:
/// - every request: the device's request for the SQE waits behind the doorbell's k DLLPs,
///   and the SQE behind that request's: 2k DLLP times;
/// - every request after the first: its doorbell waits behind the DLLPs owed for the previous
///   request's last messages. For a read, the 4 KiB of data (32 TLPs of 128 B) and the
///   completion: 33k DLLPs from the data's arrival, less the completion's own wire time. For a
///   write, the completion's k (the data's went back up long before).
///
/// Everything else goes out long after the DLLPs are through; a pipelined write's data
/// fetch overlaps the longer read of the page's other half.
#[test]
fn dllps_stall_the_packets_behind_them() {
    for (ack, fc) in [(1, 0), (1, 1)] {
        let k = (ack + fc) as f64;
        let a = format!("pcie.ack_every_tlps={ack}");
        let f = format!("pcie.update_fc_every_tlps={fc}");
        let base = [a.as_str(), f.as_str(), "flow.0.requests=300"];
        for read in [true, false] {
            let (c, lat) = qd1_with(read, &base);
            let p = Parts::from_config(&c);
            let dllp = c.pcie.dllp_bytes as f64 * p.ps_per_byte / 1e6;
            let (bare, behind_previous) = if read {
                let tlps = 4096 / c.pcie.max_payload_bytes;
                let cqe = p.tlps_us(16.0, 16.0);
                (read_us(&c), (tlps + 1) as f64 * k * dllp - cqe)
            } else {
                (write_us(&c, true), k * dllp)
            };
            let first = bare + 2.0 * k * dllp;
            let what = if read { "read" } else { "write" };
            assert_all_equal_to(&lat[..1], first, &format!("first QD1 {what}, k = {k}"));
            assert_all_equal_to(
                &lat[1..],
                first + behind_previous,
                &format!("later QD1 {what}s, k = {k}"),
            );
            println!(
                "{what}, {k} DLLP(s) per TLP: T_Stall {:.4} us on the first request, {:.4} us on the others",
                2.0 * k * dllp,
                2.0 * k * dllp + behind_previous
            );
        }
    }
}

#[test]
fn qd1_read_of_empty_drive_skips_flash() {
    let c = preset(
        "mqsim-paper",
        &[
            "flow.0.queue_depth=1",
            "flow.0.requests=500",
            "precondition.mode=empty",
        ],
    );
    let r = run_cfg(&c);
    assert_eq!(r["device"]["flash"]["page_reads"].as_u64(), Some(0));
    assert_eq!(
        r["device"]["ftl"]["unmapped_page_reads"].as_u64(),
        Some(500)
    );
    // Host link and firmware only: far below one array read.
    assert!(mean_us(&r, "read") < c.flash.read_us[0]);
}
