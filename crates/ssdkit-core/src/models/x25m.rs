//! The X25-M latency model of multi-channel, multi-way SSDs (validated on the Intel X25-M and
//! with VSSIM): Eq. 1-2 give one page's write and read time, Eq. 3-7 a request of several
//! pages spread over the channels and ways.
//!
//! Assumptions, where the model stops holding:
//! - One request at a time (QD1): nothing queues behind another request. At higher depth the
//!   simulator overlaps requests and the model's IOPS are a lower bound.
//! - No garbage collection, no mapping-table misses, no data cache: a freshly written device.
//!   A device at steady state adds GC copies (see [`crate::models::wa`]).
//! - The controller issues one page operation per channel-switch delay and keeps `rho` pages
//!   in flight (channels x ways; the X25-M figures use rho = 20 with multi-plane off).
//! - Host transfer and firmware time are folded into the fitted cell times (the paper fits
//!   program 940 us and read 140 us to the X25-M). The simulator models the SATA or PCIe
//!   link and firmware separately, so it matches the model exactly only with
//!   `interface.link_model = "ideal"` and zero firmware time; with the SATA link it adds the
//!   link's part (tests/x25m_host_link.rs).

use crate::config::Config;

/// The model's parameters, in microseconds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct X25mParams {
    /// Channel-switch delay, W_ch or R_ch.
    pub ch_us: f64,
    /// Register transfer of one page over the channel bus, W_reg or R_reg.
    pub reg_us: f64,
    /// Cell program or read time, W_cell or R_cell.
    pub cell_us: f64,
    /// Pages in flight at once, rho.
    pub rho: u64,
    /// Page size in bytes, S_page.
    pub page_bytes: u64,
}

impl X25mParams {
    /// The parameters of `c` for writes (`write`) or reads: the bus's channel-switch delay,
    /// one page at the bus rate, the first cell mode's time, and channels x ways in flight
    /// (x planes when multi-plane operations are on).
    pub fn from_config(c: &Config, write: bool) -> Self {
        let b = &c.flash.bus;
        let ch_us = if write {
            b.channel_switch_write_us
        } else {
            b.channel_switch_read_us
        };
        let reg_us = c.flash.page_size_bytes as f64 / (b.width_bits as f64 / 8.0) / b.rate_mts;
        let cell_us = if write {
            c.flash.program_us[0]
        } else {
            c.flash.read_us[0]
        };
        let planes = if c.flash.multiplane {
            c.flash.planes_per_die as u64
        } else {
            1
        };
        let rho = c.flash.channels as u64
            * c.flash.chips_per_channel as u64
            * c.flash.dies_per_chip as u64
            * planes;
        Self {
            ch_us,
            reg_us,
            cell_us,
            rho,
            page_bytes: c.flash.page_size_bytes as u64,
        }
    }

    /// Eq. 1 (write) / Eq. 2 (read): one page, W_page = W_ch + W_reg + W_cell.
    pub fn page_us(&self) -> f64 {
        self.ch_us + self.reg_us + self.cell_us
    }

    /// Eq. 3: how long the next cycle waits for the first flash memory of the last one.
    pub fn t_wait_us(&self) -> f64 {
        (self.page_us() - self.ch_us * self.rho as f64).max(0.0)
    }

    /// Eq. 4: one full cycle of `rho` pages.
    pub fn t_cycle_us(&self) -> f64 {
        self.ch_us * self.rho as f64 + self.t_wait_us()
    }

    /// Eq. 5: the last cycle, of `n_remain` pages (1..=rho).
    pub fn t_cycle_last_us(&self, n_remain: u64) -> f64 {
        self.ch_us * n_remain.saturating_sub(1) as f64 + self.page_us()
    }

    /// Pages of a request of `bytes` bytes, N_page (at least one).
    pub fn pages(&self, bytes: u64) -> u64 {
        bytes.div_ceil(self.page_bytes).max(1)
    }

    /// N_cycle: the cycles of `rho` pages a request of `n_page` pages takes (at least one).
    pub fn cycles(&self, n_page: u64) -> u64 {
        n_page.max(1).div_ceil(self.rho.max(1))
    }

    /// Eq. 6 (write) / Eq. 7 (read): a request of `n_page` pages (at least one),
    /// t_record = ch (N_page - 1) + t_wait (N_cycle - 1) + page.
    pub fn record_us(&self, n_page: u64) -> f64 {
        let n_cycle = self.cycles(n_page);
        let n_page = n_page.max(1);
        self.ch_us * (n_page - 1) as f64 + self.t_wait_us() * (n_cycle - 1) as f64 + self.page_us()
    }

    /// Requests per second at QD1: 1 / t_record.
    pub fn iops(&self, n_page: u64) -> f64 {
        1e6 / self.record_us(n_page)
    }

    /// Bytes per second at QD1: N_page pages per t_record.
    pub fn bytes_per_s(&self, n_page: u64) -> f64 {
        (n_page.max(1) * self.page_bytes) as f64 * 1e6 / self.record_us(n_page)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The paper's own parameters (Table 3 with its fitted cell times, VSSIM's switch delays,
    /// rho = 10 channels x 2 ways).
    fn paper(write: bool) -> X25mParams {
        X25mParams {
            ch_us: if write { 33.0 } else { 16.0 },
            reg_us: 82.0,
            cell_us: if write { 940.0 } else { 140.0 },
            rho: 20,
            page_bytes: 4096,
        }
    }

    #[test]
    fn table_4_and_5_model_columns_to_the_printed_digit() {
        let round1 = |x: f64| (x * 10.0).round() / 10.0;
        // Table 4: single page (Eq. 1-2) IOPS.
        assert_eq!(round1(paper(true).iops(1)), 947.9);
        assert_eq!(round1(paper(false).iops(1)), 4201.7);
        // Table 5: 512 KiB sequential records (Eq. 6-7), in MiB/s as the paper prints MB/s.
        let mib = |p: X25mParams| round1(p.bytes_per_s(128) / 1048576.0);
        assert_eq!(mib(paper(false)), 220.3);
        assert_eq!(mib(paper(true)), 65.7);
    }

    #[test]
    fn eq_6_is_eq_4_and_5_summed_over_the_cycles() {
        for write in [false, true] {
            let p = paper(write);
            for n in 1..=100u64 {
                let cycles = n.div_ceil(p.rho);
                let remain = n - (cycles - 1) * p.rho;
                let summed = p.t_cycle_us() * (cycles - 1) as f64 + p.t_cycle_last_us(remain);
                assert!((summed - p.record_us(n)).abs() < 1e-9, "{write} {n}");
            }
        }
    }
}
