//! `tsu.policy = "out_of_order"` (the default): MQSim's OUT_OF_ORDER (the MQSim paper,
//! FAST'18, section 2.3; `TSU_OutofOrder.cpp`). A free die starts any queued read before any
//! queued write: reads are short and a host waits on them, while a program is long and its
//! data already sits in the controller. Within reads (and within writes) the order is arrival
//! order; multi-plane batches join transactions of the same page offset on other planes from
//! the first few queued. MQSim's other rule, GC behind user work until a plane nears its
//! reserve, is `gc.rs`, shared by every policy.

use super::First;
use crate::tsu::DieQueues;

/// Always reads first.
#[inline]
pub fn first(_q: &DieQueues) -> First {
    First::Reads
}
