//! Front end (firmware): the controller CPU's time per request and per page transaction, and
//! the split of a host request into page transactions with sector bitmaps. The DRAM data cache
//! is `crate::cache` (its request path `cache/path.rs`).

mod split;

pub use split::{page_span, split, PageChunk};

use crate::engine::Picoseconds;
use crate::ids::ReqId;
use crate::settings::Settings;

/// The controller CPU: one FIFO resource. A request costs a fixed time plus a time per page
/// transaction. It also tracks each request's transactions until the last has finished.
#[derive(Debug, Clone)]
pub struct Firmware {
    free_at: Picoseconds,
    request_ps: Picoseconds,
    transaction_ps: Picoseconds,
    /// Per request slot: its parts (page transactions, cache reads) not finished yet.
    pending: Vec<u32>,
    sectors_per_page: u32,
    /// Commands are booked when their fetch is booked, not when they arrive (one event fewer
    /// per command). The bookings are those made at arrival while every booking comes in
    /// fetch order, so it stops for good at the first command that fetches data before the
    /// firmware (a TRIM, a write without pipelined transfers). One order can differ: an event
    /// scheduled between a fetch and that command's arrival for the very picosecond its
    /// firmware step ends fired before the step and now fires after it (docs/performance.md).
    at_fetch: bool,
}

impl Firmware {
    pub fn new(s: &Settings) -> Self {
        Self {
            free_at: 0,
            request_ps: s.firmware_request_ps,
            transaction_ps: s.firmware_transaction_ps,
            pending: Vec::new(),
            sectors_per_page: s.geo.sectors_per_page,
            at_fetch: true,
        }
    }

    /// Whether a command just fetched is booked now (see `at_fetch`); `data_first`: it
    /// fetches data before the firmware.
    #[inline]
    pub fn books_at_fetch(&mut self, data_first: bool) -> bool {
        if data_first {
            self.at_fetch = false;
        }
        self.at_fetch
    }

    /// Switches booking at fetch (tests compare it with booking at arrival).
    pub fn set_books_at_fetch(&mut self, on: bool) {
        self.at_fetch = on;
    }

    /// Processes a request of `sectors` sectors from `start_sector` arriving at `now`, one
    /// transaction per page it spans; returns when the CPU is done with it.
    #[inline]
    pub fn process_request(
        &mut self,
        now: Picoseconds,
        start_sector: u64,
        sectors: u32,
    ) -> Picoseconds {
        let (_, pages) = page_span(start_sector, sectors, self.sectors_per_page);
        self.process(now, pages)
    }

    /// Request `r` was split into `n` parts that finish on their own (page transactions, a
    /// read's sectors from the data cache).
    #[inline]
    pub fn expect_parts(&mut self, r: ReqId, n: u32) {
        let i = r.idx();
        if self.pending.len() <= i {
            self.pending.resize(i + 1, 0);
        }
        self.pending[i] = n;
    }

    /// One part of `r` finished: true when it was the last.
    #[inline]
    pub fn part_done(&mut self, r: ReqId) -> bool {
        let p = &mut self.pending[r.idx()];
        *p -= 1;
        *p == 0
    }

    /// Processes a request of `pages` page transactions arriving at `now`; returns when the
    /// CPU is done with it.
    pub fn process(&mut self, now: Picoseconds, pages: u64) -> Picoseconds {
        let start = now.max(self.free_at);
        self.free_at = start + self.request_ps + pages * self.transaction_ps;
        self.free_at
    }
}

#[cfg(test)]
mod tests {
    use super::Firmware;
    use crate::ids::ReqId;

    /// A request ends with the last of its parts, whatever other requests do meanwhile.
    #[test]
    fn a_request_ends_with_its_last_part() {
        let c = crate::config::Config::load_preset("mqsim-paper", &[]).unwrap();
        let mut f = Firmware::new(&crate::settings::Settings::resolve(&c));
        f.expect_parts(ReqId(5), 3);
        f.expect_parts(ReqId(0), 1);
        assert!(!f.part_done(ReqId(5)));
        assert!(f.part_done(ReqId(0)));
        assert!(!f.part_done(ReqId(5)));
        assert!(f.part_done(ReqId(5)));
    }
}
