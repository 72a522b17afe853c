//! Scheduling policies (`tsu.policy`), one file each: which queued user transaction a free
//! die starts next, as the steps of `plan.rs`. `gc` decides where garbage collection goes
//! among them (`ftl.gc_*`), the same for every policy except FLIN, which also charges GC to
//! the writing flows. A policy is a variant of the configuration's `TsuPolicy`, which carries
//! its parameters; its file holds its code and state, and `Tsu::user_steps` calls it.
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
