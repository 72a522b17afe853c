//! QD1 4 KiB random reads and writes on `mqsim-paper`: with one request in the device at a
//! time nothing contends, so every request takes the same time, and it equals the sum of the
//! configured steps, computed here from the configuration by the textbook formulas (PCIe
//! payload rate and per-TLP overhead, ONFI bus rate, array times, firmware), within 1 ns (the
//! simulator rounds each step to whole picoseconds; a missing step would be microseconds).
//! The device starts freshly filled (`precondition.mode=sequential`): the sum of parts has no
//! GC term, and a steady-state device collects from its first writes.

mod common;
use common::*;
use ssdkit_core::config::Config;

struct Parts {
    pcie_ps_per_byte: f64,
    overhead: f64,
    mps: f64,
    mrrs: f64,
}

impl Parts {
    fn new(c: &Config) -> Self {
        // PCIe 3.0: 8 GT/s per lane, 128b/130b line code.
        assert_eq!(c.pcie.generation, 3);
        let bytes_per_s = c.pcie.lanes as f64 * 8e9 * 128.0 / 130.0 / 8.0;
        Self {
            pcie_ps_per_byte: 1e12 / bytes_per_s,
            overhead: c.pcie.packet_overhead_bytes as f64,
            mps: c.pcie.max_payload_bytes as f64,
            mrrs: c.pcie.max_read_request_bytes as f64,
        }
    }
    /// Microseconds to send `payload` bytes as TLPs of at most `max` bytes.
    fn tlps_us(&self, payload: f64, max: f64) -> f64 {
        let packets = (payload / max).ceil().max(1.0);
        (payload + packets * self.overhead) * self.pcie_ps_per_byte / 1e6
    }
    /// Doorbell write, the device's memory read request for the SQE, and the SQE itself.
    fn command_us(&self) -> f64 {
        self.tlps_us(4.0, 4.0) + self.tlps_us(0.0, 1.0) + self.tlps_us(64.0, self.mps)
    }
}

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
    assert_eq!(lat.len(), 3000);
    (c, lat)
}

#[test]
fn qd1_random_read_is_sum_of_parts() {
    let (c, lat) = qd1(true);
    let p = Parts::new(&c);
    let req = 4096.0;
    let expected = p.command_us()
        + c.ftl.firmware_request_us + c.ftl.firmware_transaction_us
        + cmd_us(&c, c.flash.bus.read_cmd_cycles)    // command/address cycles
        + c.flash.read_us[0]                         // tR (LSB = MSB on this preset)
        + bus_us(&c, req)                            // only the 4 KiB asked for leave the die
        + p.tlps_us(req, p.mps)                      // data to host memory
        + p.tlps_us(16.0, 16.0); // CQE
    assert_eq!(c.flash.read_us[0], c.flash.read_us[1]);
    assert_all_equal_to(&lat, expected, "QD1 read");
}

/// A 4 KiB write into an 8 KiB page of a fully mapped drive: the other 4 KiB are read first,
/// then the whole page is programmed. The read needs no host data: with data moving a page at
/// a time (`interface.pipelined_transfers`, the default) the firmware splits the request as
/// soon as its command is in, and the read overlaps the fetch of the write data; the page is
/// programmed once both are done. Moving the whole request first (`false`) puts the data
/// fetch before the firmware and the read.
#[test]
fn qd1_random_write_is_sum_of_parts() {
    for pipelined in [true, false] {
        let (c, lat) = qd1_with(
            false,
            &[&format!("interface.pipelined_transfers={pipelined}")],
        );
        let p = Parts::new(&c);
        let req = 4096.0;
        let page = c.flash.page_size_bytes as f64;
        // write data: one header-only read request per MRRS, data in MPS-sized completions
        let data = (req / p.mrrs) * p.tlps_us(0.0, 1.0) + p.tlps_us(req, p.mps);
        let firmware = c.ftl.firmware_request_us + c.ftl.firmware_transaction_us;
        let rmw_read =
            cmd_us(&c, c.flash.bus.read_cmd_cycles) + c.flash.read_us[0] + bus_us(&c, page - req);
        let before_program = if pipelined {
            assert!(data < rmw_read, "the read of the old sectors is the longer");
            firmware + rmw_read.max(data)
        } else {
            data + firmware + rmw_read
        };
        let expected = p.command_us()
            + before_program
            // then program the whole page
            + cmd_us(&c, c.flash.bus.program_cmd_cycles) + bus_us(&c, page) + c.flash.program_us[0]
            + p.tlps_us(16.0, 16.0);
        assert_eq!(c.flash.program_us[0], c.flash.program_us[1]);
        assert_all_equal_to(&lat, expected, &format!("QD1 write, pipelined={pipelined}"));
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
