//! `tsu.policy = "fifo"`: each die serves its user reads and writes in the order they reached
//! it, as classic simulators (and firmware without a scheduler) do. One exception keeps the
//! die from stalling: a write whose plane waits at its GC reserve does not hold back later
//! operations (the die serves what it can). Translation-page reads go first under every
//! policy, since user transactions wait on them.

use crate::ids::DieId;
use crate::tsu::{Attempt, Attempts, Tsu};

/// Writes first when the oldest queued write arrived before the oldest queued read; then
/// the other kind.
#[inline(always)]
pub(in crate::tsu) fn steps(tsu: &Tsu, die: DieId, s: &mut Attempts) {
    let writes = Attempt::Writes {
        class: 0,
        turn: false,
    };
    if tsu.queues(die).write_is_older() {
        s.push(writes);
        if tsu.reads_waiting(die) {
            s.push(Attempt::Reads(0));
        }
    } else if tsu.reads_waiting(die) {
        s.push(Attempt::Reads(0));
    } else {
        s.push(writes);
    }
}
