//! `tsu.policy = "fifo"`: each die serves its user reads and writes in the order they reached
//! it, as classic simulators (and firmware without a scheduler) do. One exception keeps the
//! die from stalling: a write whose plane waits at its GC reserve does not hold back later
//! operations (the die serves what it can). Translation-page reads go first under every
//! policy, since user transactions wait on them.

use super::First;
use crate::tsu::DieQueues;

/// Writes first when the oldest queued write arrived before the oldest queued read.
#[inline]
pub fn first(q: &DieQueues) -> First {
    if q.write_is_older() {
        First::Writes
    } else {
        First::Reads
    }
}
