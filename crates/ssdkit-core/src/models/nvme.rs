//! NVMeSim's I/O request model (Choi et al., "An In-Depth Study of Next Generation Interface
//! for Emerging Non-Volatile Memories"): Eq. 1 (read) and Eq. 2 (write) sum the NVMe
//! handshake, the medium and the DMA; Eq. 3 is the handshake's share, the overhead. Each
//! term is the time of its packets on the PCIe link of a configuration (Table I: generation,
//! lanes, line code), one packet at a time.
//!
//! Assumptions, where the model stops holding:
//! - One request on the link (QD1): T_stall, the wait for packets of other requests, is zero
//!   unless given. Under load it grows with the queue depth; the simulator measures it (the
//!   `t_stall` step of the latency breakdown).
//! - Packet sizes are ssdkit's, not Table II's: the 4-byte doorbell write, a header-only
//!   memory read request, the whole 64-byte submission queue entry, the 16-byte completion
//!   entry and a 4-byte MSI write. Table II's NVMe information is 108 bytes with a 20-byte
//!   I/O-Fetch; ssdkit moves the 64-byte command itself. DLLPs (ACK, flow control) are not
//!   counted.
//! - The medium time is given (`nvm_us`): the simulator adds firmware and flash or memory
//!   timing from the configuration, and host-side costs (interrupt service) outside Eq. 1-2.

use crate::config::Config;
use crate::host::link::{CQE_BYTES, DOORBELL_BYTES, MSI_BYTES, SQE_BYTES};
use crate::settings::pcie_bytes_per_s;

/// A PCIe link as NVMeSim's bus model sees it: one packet at a time, each its payload plus a
/// fixed per-TLP overhead.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PcieLink {
    /// Picoseconds per byte on the wire (Table I: lanes x transfer rate x line code).
    pub ps_per_byte: f64,
    /// Header, sequence number, LCRC and framing bytes of each TLP.
    pub overhead_bytes: f64,
    /// Max payload size: data is carried in TLPs of at most this many bytes.
    pub mps: f64,
    /// Max read request size: a device read of host memory asks for at most this much.
    pub mrrs: f64,
}

impl PcieLink {
    /// The link of `c`'s `[pcie]` table.
    pub fn from_config(c: &Config) -> Self {
        Self {
            ps_per_byte: 1e12 / pcie_bytes_per_s(c.pcie.generation, c.pcie.lanes),
            overhead_bytes: c.pcie.packet_overhead_bytes as f64,
            mps: c.pcie.max_payload_bytes as f64,
            mrrs: c.pcie.max_read_request_bytes as f64,
        }
    }

    /// Microseconds to send `payload` bytes as TLPs of at most `max` bytes (at least one TLP:
    /// a header-only request has payload 0).
    pub fn tlps_us(&self, payload: f64, max: f64) -> f64 {
        let packets = (payload / max).ceil().max(1.0);
        (payload + packets * self.overhead_bytes) * self.ps_per_byte / 1e6
    }

    /// DB-Write + I/O-Req + I/O-Fetch: the doorbell write, the device's memory read request
    /// for the command and the command itself.
    pub fn command_us(&self) -> f64 {
        let t = Nvme::terms(self, false, 0.0, 0.0);
        t.db_write_us + t.io_req_us + t.io_fetch_us
    }
}

/// Eq. 1-2's terms for one request, microseconds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Nvme {
    pub db_write_us: f64,
    pub io_req_us: f64,
    pub io_fetch_us: f64,
    /// RD-DMA (data to host memory) or WR-DMA (the device's read requests for the data and
    /// the data).
    pub dma_us: f64,
    /// RD-NVM or WR-NVM: the medium's response, as given.
    pub nvm_us: f64,
    pub cpl_submit_us: f64,
    pub msi_us: f64,
    pub stall_us: f64,
    /// The data's packets within `dma_us` (a write's data completions, downstream; a read's
    /// memory writes, upstream).
    pub dma_data_us: f64,
}

impl Nvme {
    /// The terms of a read (`write` false) or write of `bytes` bytes whose medium takes
    /// `nvm_us`, at QD1 (T_stall = 0; set `stall_us` for a measured or bounded wait).
    pub fn terms(link: &PcieLink, write: bool, bytes: f64, nvm_us: f64) -> Self {
        let dma_data_us = link.tlps_us(bytes, link.mps);
        let dma_us = if write {
            (bytes / link.mrrs).ceil().max(1.0) * link.tlps_us(0.0, 1.0) + dma_data_us
        } else {
            dma_data_us
        };
        Self {
            db_write_us: link.tlps_us(DOORBELL_BYTES as f64, DOORBELL_BYTES as f64),
            io_req_us: link.tlps_us(0.0, 1.0),
            io_fetch_us: link.tlps_us(SQE_BYTES as f64, link.mps),
            dma_us,
            nvm_us,
            cpl_submit_us: link.tlps_us(CQE_BYTES as f64, CQE_BYTES as f64),
            msi_us: link.tlps_us(MSI_BYTES as f64, MSI_BYTES as f64),
            stall_us: 0.0,
            dma_data_us,
        }
    }

    /// The terms for `c`'s link and medium: the first cell mode's read or program time plus
    /// `bytes` over the channel bus, as one page (or a DRAM-like line) takes it. Larger
    /// requests spread over dies and overlap; the simulator, not this sum, times those.
    pub fn of_config(c: &Config, write: bool, bytes: f64) -> Self {
        let b = &c.flash.bus;
        let cell = if write {
            c.flash.program_us[0]
        } else {
            c.flash.read_us[0]
        };
        let nvm_us = cell + bytes / (b.width_bits as f64 / 8.0) / b.rate_mts;
        Self::terms(&PcieLink::from_config(c), write, bytes, nvm_us)
    }

    /// Eq. 3: the NVMe information's time, T_Overhead.
    pub fn overhead_us(&self) -> f64 {
        self.db_write_us
            + self.io_req_us
            + self.io_fetch_us
            + self.cpl_submit_us
            + self.msi_us
            + self.stall_us
    }

    /// Eq. 1 (read) or Eq. 2 (write): the request's time to its MSI.
    pub fn latency_us(&self) -> f64 {
        self.overhead_us() + self.dma_us + self.nvm_us
    }

    /// T_Overhead / T_I/O: the NVMe information's share of the request's time.
    pub fn overhead_share(&self) -> f64 {
        self.overhead_us() / self.latency_us()
    }

    /// The request's packets from the host to the device: the doorbell write, the command's
    /// completion (the SQE) and, for a write, the data's completions.
    pub fn down_us(&self, write: bool) -> f64 {
        let data = if write { self.dma_data_us } else { 0.0 };
        self.db_write_us + self.io_fetch_us + data
    }

    /// The request's packets from the device to the host: the command's read request, the
    /// data (a read's memory writes, a write's read requests), the completion entry and the MSI.
    pub fn up_us(&self, write: bool) -> f64 {
        let data = if write {
            self.dma_us - self.dma_data_us
        } else {
            self.dma_us
        };
        self.io_req_us + data + self.cpl_submit_us + self.msi_us
    }

    /// NVMeSim's T_Stall at queue depth `qd` when the link is the bottleneck, at least: a
    /// closed loop of `qd` requests over a link whose busier direction carries one request per
    /// `max(up, down)` completes one request per that time at best (Little's law), so each
    /// takes at least `qd x max(up, down)`, and what it takes beyond the unloaded Eq. 1-2 is
    /// stall. Data-link packets (ACKs) and the medium's own queueing only add to it.
    pub fn stall_bound_us(&self, write: bool, qd: u32) -> f64 {
        let busiest = self.up_us(write).max(self.down_us(write));
        (qd as f64 * busiest - self.latency_us()).max(0.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pcie_3_x4_4k_read_by_hand() {
        // PCIe 3.0 x4: 4 x 8 GT/s x 128/130 / 8 = 3.938 GB/s; 24-byte TLP overhead, MPS 256.
        let link = PcieLink {
            ps_per_byte: 1e12 / (4.0 * 8e9 * 128.0 / 130.0 / 8.0),
            overhead_bytes: 24.0,
            mps: 256.0,
            mrrs: 512.0,
        };
        let t = Nvme::terms(&link, false, 4096.0, 10.0);
        let us = |bytes: f64| bytes * link.ps_per_byte / 1e6;
        assert_eq!(t.db_write_us, us(4.0 + 24.0));
        assert_eq!(t.io_req_us, us(24.0));
        assert_eq!(t.io_fetch_us, us(64.0 + 24.0));
        assert_eq!(t.dma_us, us(4096.0 + 16.0 * 24.0));
        let w = Nvme::terms(&link, true, 4096.0, 10.0);
        assert_eq!(w.dma_us, 8.0 * us(24.0) + us(4096.0 + 16.0 * 24.0));
        let overhead = us(28.0) + us(24.0) + us(88.0) + us(40.0) + us(28.0);
        assert!((t.overhead_us() - overhead).abs() < 1e-12);
        assert!((t.latency_us() - (overhead + t.dma_us + 10.0)).abs() < 1e-12);
        assert!((t.overhead_share() - overhead / t.latency_us()).abs() < 1e-15);
        // Directions: a read's data goes up, a write's comes down.
        assert!(
            (t.up_us(false) - (us(24.0) + us(4096.0 + 16.0 * 24.0) + us(40.0) + us(28.0))).abs()
                < 1e-12
        );
        assert!((t.down_us(false) - (us(28.0) + us(88.0))).abs() < 1e-12);
        assert!((w.up_us(true) - (us(24.0) + 8.0 * us(24.0) + us(40.0) + us(28.0))).abs() < 1e-12);
        assert!((w.down_us(true) - (us(28.0) + us(88.0) + us(4096.0 + 16.0 * 24.0))).abs() < 1e-12);
        assert_eq!(t.stall_bound_us(false, 1), 0.0);
        let at_64 = 64.0 * t.up_us(false) - t.latency_us();
        assert!((t.stall_bound_us(false, 64) - at_64).abs() < 1e-9 && at_64 > 0.0);
    }
}
