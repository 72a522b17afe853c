//! Scheduling policies (`tsu.policy`), one file each: which queued user transaction a free
//! die starts next, as the steps of `plan.rs`. `gc` decides where garbage collection goes
//! among them (`ftl.gc_*`), the same for every policy except FLIN, which also charges GC to
//! the writing flows. A policy is a variant of the configuration's `TsuPolicy`, which carries
//! its parameters; its file holds its code and state, and `steps` below calls it. Adding a
//! policy: its file here, its `mod` line and arm in `steps`, its variant (and parameter
//! struct) in `TsuPolicy` (config/tsu.rs), and docs/tsu.md.
//!
//! | policy | file | source |
//! |---|---|---|
//! | `fifo` | `fifo.rs` | arrival order, as classic simulators and simple firmware |
//! | `out_of_order` | `out_of_order.rs` | MQSim's OUT_OF_ORDER (the MQSim paper, FAST'18, section 2.3) |
//! | `priority_out_of_order` | `priority.rs` | MQSim's PRIORITY_OUT_OF_ORDER (NVMe 1.3 section 4.11 classes) |
//! | `flin` | `flin.rs` | FLIN (Tavakkol et al., ISCA 2018) |

pub mod fifo;
pub mod flin;
mod gc;
pub mod out_of_order;
pub mod priority;

pub use gc::{Choice, SchedulingPolicy};
pub use priority::ClassTurns;

use crate::config::TsuPolicy;
use crate::ids::DieId;
use crate::tsu::{Attempts, Tsu};

/// The user work a free die tries, in order: each policy's `steps` (enum dispatch, no trait
/// objects: this runs at every free die).
#[inline(always)]
pub(in crate::tsu) fn steps(tsu: &mut Tsu, die: DieId, now: u64, s: &mut Attempts) {
    match tsu.user {
        TsuPolicy::OutOfOrder {} => out_of_order::steps(tsu, die, s),
        TsuPolicy::Fifo {} => fifo::steps(tsu, die, s),
        TsuPolicy::PriorityOutOfOrder(_) => priority::steps(tsu, die, s),
        TsuPolicy::Flin(_) => tsu.flin_steps(die, now, s),
    }
}
