//! `tsu.policy = "out_of_order"` (the default): MQSim's OUT_OF_ORDER (the MQSim paper,
//! FAST'18, section 2.3; `TSU_OutofOrder.cpp`). A free die starts any queued read before any
//! queued write: reads are short and a host waits on them, while a program is long and its
//! data already sits in the controller. Within reads (and within writes) the order is arrival
//! order; multi-plane batches join transactions of the same page offset on other planes from
//! the first few queued (`plan.rs`). MQSim's other rule, GC behind user work until a plane
//! nears its reserve, is `gc.rs`, shared by every policy.

use crate::ids::DieId;
use crate::tsu::{Attempt, Attempts, Tsu};

/// Reads if any wait, else writes.
#[inline(always)]
pub(in crate::tsu) fn steps(tsu: &Tsu, die: DieId, s: &mut Attempts) {
    if tsu.reads_waiting(die) {
        s.push(Attempt::Reads(0));
    } else {
        s.push(Attempt::Writes {
            class: 0,
            turn: false,
        });
    }
}
