//! Front end (firmware): the controller CPU's time per request and per page transaction, and
//! the split of a host request into page transactions with sector bitmaps. The DRAM data cache
//! is `crate::cache` (its request path `cache/path.rs`).

mod split;

pub use split::{page_span, split, PageChunk};

use crate::config::Settings;
use crate::engine::Picoseconds;

/// The controller CPU: one FIFO resource. A request costs a fixed time plus a time per page
/// transaction.
#[derive(Debug, Clone)]
pub struct Firmware {
    free_at: Picoseconds,
    request_ps: Picoseconds,
    transaction_ps: Picoseconds,
}

impl Firmware {
    pub fn new(s: &Settings) -> Self {
        Self {
            free_at: 0,
            request_ps: s.firmware_request_ps,
            transaction_ps: s.firmware_transaction_ps,
        }
    }

    /// Processes a request of `pages` page transactions arriving at `now`; returns when the
    /// CPU is done with it.
    pub fn process(&mut self, now: Picoseconds, pages: u64) -> Picoseconds {
        let start = now.max(self.free_at);
        self.free_at = start + self.request_ps + pages * self.transaction_ps;
        self.free_at
    }
}
