//! The controller's DRAM as one shared resource: an access of `b` bytes touches
//! ceil(b / row) rows, each opened at tRCD + tCL, with a precharge tRP between rows, and moves
//! its data at two bursts per transfer time (DDR), as MQSim's `estimate_dram_access_time`
//! (the MQSim paper, section 4.2.2) counts it. Accesses serialise in the order they are issued: one
//! starts when the previous one has ended.

use crate::engine::Picoseconds;
use crate::settings::DramSettings;

#[derive(Debug, Clone)]
pub struct Dram {
    free_at: Picoseconds,
    row_bytes: u64,
    /// tRCD + tCL.
    open_ps: Picoseconds,
    trp_ps: Picoseconds,
    /// 2 x burst bytes x data rate (MT/s): data time = bytes x 10^6 / this, in picoseconds.
    bytes_per_ps_denominator: u128,
    /// Accesses and their total time, for the result.
    pub accesses: u64,
    pub busy_ps: Picoseconds,
}

impl Dram {
    pub fn new(d: &DramSettings) -> Self {
        Self {
            free_at: 0,
            row_bytes: d.row_bytes,
            open_ps: d.open_ps,
            trp_ps: d.trp_ps,
            bytes_per_ps_denominator: d.transfer_denominator,
            accesses: 0,
            busy_ps: 0,
        }
    }

    /// Duration of one access of `bytes` (0 for none).
    pub fn access_ps(&self, bytes: u64) -> Picoseconds {
        if bytes == 0 {
            return 0;
        }
        let rows = bytes.div_ceil(self.row_bytes);
        let data = (bytes as u128 * 1_000_000 / self.bytes_per_ps_denominator) as Picoseconds;
        rows * self.open_ps + (rows - 1) * self.trp_ps + data
    }

    /// An access of `bytes` issued at `now`: it waits for the DRAM, then takes its time.
    /// Returns when it ends.
    pub fn access(&mut self, now: Picoseconds, bytes: u64) -> Picoseconds {
        let d = self.access_ps(bytes);
        let start = now.max(self.free_at);
        self.free_at = start + d;
        self.accesses += 1;
        self.busy_ps += d;
        self.free_at
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mqsim_formula_and_serialisation() {
        let k = crate::config::CacheConfig::default();
        let mut d = Dram::new(&DramSettings::resolve(&k));
        // 4096 B in one 8 KiB row: 13 + 13 ns, then 4096 / 4 / 2 transfers of 1.25 ns.
        assert_eq!(d.access_ps(4096), 26_000 + 640_000);
        // 16 KiB: two rows, one precharge.
        assert_eq!(d.access_ps(16384), 2 * 26_000 + 13_000 + 2_560_000);
        assert_eq!(d.access(0, 4096), 666_000);
        // A second access issued at once waits for the first.
        assert_eq!(d.access(0, 4096), 1_332_000);
        assert_eq!(d.access(5_000_000, 0), 5_000_000);
    }
}
