//! Scheduling policies (`tsu.policy`), one file each: which queued user transaction a free
//! die starts next. `gc` decides where garbage collection goes among them (`ftl.gc_*`), the
//! same for every policy except FLIN, which also charges GC to the writing flows.
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

/// `tsu.policy` as the simulator runs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UserPolicy {
    Fifo,
    OutOfOrder,
    PriorityOutOfOrder,
    Flin,
}

impl UserPolicy {
    pub fn from_config(p: crate::config::TsuPolicy) -> Self {
        use crate::config::TsuPolicy as P;
        match p {
            P::Fifo => UserPolicy::Fifo,
            P::OutOfOrder => UserPolicy::OutOfOrder,
            P::PriorityOutOfOrder => UserPolicy::PriorityOutOfOrder,
            P::Flin => UserPolicy::Flin,
        }
    }

    /// Whether user transactions queue per NVMe priority class (urgent, high, medium, low).
    pub fn classes(self) -> bool {
        matches!(self, UserPolicy::PriorityOutOfOrder | UserPolicy::Flin)
    }
}

/// Which kind of user transaction a free die tries first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum First {
    Reads,
    Writes,
}
