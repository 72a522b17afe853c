//! `tsu.policy = "priority_out_of_order"`: MQSim's PRIORITY_OUT_OF_ORDER
//! (`TSU_Priority_OutOfOrder.cpp`; NVMe 1.3 section 4.11 names the classes). Each flow's
//! NVMe priority class (`flow.N.priority`) travels with its transactions to the die queues,
//! which keep user reads and writes per class. A free die still serves reads before writes
//! (as out of order); among reads, and among writes, urgent goes strictly first, then high,
//! medium and low take turns of `tsu.weight_high`, `weight_medium`, `weight_low` operations
//! (MQSim's 4, 2, 1), a class with nothing queued giving its turn to the next. FLIN uses the
//! same turns for its second stage.

use crate::ids::DieId;
use crate::tsu::{Attempts, Tsu};

/// Reads of the class whose turn it is; if none waits, writes of the class whose turn it
/// is, then of the others.
#[inline]
pub(in crate::tsu) fn steps(tsu: &mut Tsu, die: DieId, s: &mut Attempts) {
    if !tsu.class_reads(die, s) {
        tsu.class_writes(die, s);
    }
}

/// Weighted round robin over the priority classes as MQSim's PRIORITY_OUT_OF_ORDER serves
/// them: urgent before anything else; high, medium and low in turns of `weights` operations
/// each (4, 2, 1 by default), an empty class giving its turn to the next.
#[derive(Debug, Clone, Default)]
pub struct ClassTurns {
    /// The class whose turn it is (0 high, 1 medium, 2 low) and the operations it has left;
    /// the first turn (high's) starts at the first pick.
    turn: usize,
    left: u32,
    started: bool,
}

impl ClassTurns {
    /// The class to serve among those `waiting` (indexed urgent, high, medium, low).
    pub fn pick(&mut self, waiting: [bool; 4], weights: [u32; 3]) -> Option<usize> {
        if waiting[0] {
            return Some(0);
        }
        if !waiting[1..].contains(&true) {
            return None;
        }
        if !self.started {
            self.started = true;
            self.left = weights[0];
        }
        loop {
            if self.left > 0 && waiting[1 + self.turn] {
                return Some(1 + self.turn);
            }
            self.turn = (self.turn + 1) % 3;
            self.left = weights[self.turn];
        }
    }

    /// An operation of `class` started.
    pub fn served(&mut self, class: usize) {
        if class > 0 && class == 1 + self.turn {
            self.left = self.left.saturating_sub(1);
        }
    }
}

#[cfg(test)]
mod turn_tests {
    use super::ClassTurns;

    /// Under backlog the classes get 4:2:1 of the operations; urgent goes first; an empty
    /// class gives its turn away.
    #[test]
    fn weighted_turns() {
        let mut t = ClassTurns::default();
        let w = [4, 2, 1];
        let mut got = [0; 4];
        for _ in 0..700 {
            let c = t.pick([false, true, true, true], w).unwrap();
            t.served(c);
            got[c] += 1;
        }
        assert_eq!(got, [0, 400, 200, 100]);
        assert_eq!(t.pick([true, true, true, true], w), Some(0));
        assert_eq!(t.pick([false, false, false, true], w), Some(3));
        assert_eq!(t.pick([false; 4], w), None);
    }
}
