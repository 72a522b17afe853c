//! PCIe link arithmetic from the configuration by the textbook formulas (PCI-SIG base
//! specifications 1.0-5.0: lane rate, line code, per-TLP overhead), for the sum-of-parts
//! checks.

use ssdkit_core::config::Config;

pub struct Parts {
    pub pcie_ps_per_byte: f64,
    pub overhead: f64,
    pub mps: f64,
    pub mrrs: f64,
}

impl Parts {
    pub fn new(c: &Config) -> Self {
        // Transfer rate per lane and line code of each PCIe generation (PCI-SIG base
        // specifications 1.0-5.0): 8b/10b up to 2.0, 128b/130b from 3.0.
        let (gts, code) = match c.pcie.generation {
            1 => (2.5e9, 8.0 / 10.0),
            2 => (5.0e9, 8.0 / 10.0),
            3 => (8.0e9, 128.0 / 130.0),
            4 => (16.0e9, 128.0 / 130.0),
            5 => (32.0e9, 128.0 / 130.0),
            g => panic!("generation {g}"),
        };
        let bytes_per_s = c.pcie.lanes as f64 * gts * code / 8.0;
        Self {
            pcie_ps_per_byte: 1e12 / bytes_per_s,
            overhead: c.pcie.packet_overhead_bytes as f64,
            mps: c.pcie.max_payload_bytes as f64,
            mrrs: c.pcie.max_read_request_bytes as f64,
        }
    }
    /// Microseconds to send `payload` bytes as TLPs of at most `max` bytes.
    pub fn tlps_us(&self, payload: f64, max: f64) -> f64 {
        let packets = (payload / max).ceil().max(1.0);
        (payload + packets * self.overhead) * self.pcie_ps_per_byte / 1e6
    }
    /// Doorbell write, the device's memory read request for the SQE, and the SQE itself.
    pub fn command_us(&self) -> f64 {
        self.tlps_us(4.0, 4.0) + self.tlps_us(0.0, 1.0) + self.tlps_us(64.0, self.mps)
    }
}
