//! Die state: whether a die is busy and which transactions its current operation serves
//! (one per plane of a multi-plane operation). The scheduler decides what a die does next.

use crate::ids::{DieId, TxId};

/// Most planes one operation can span (planes_per_die is at most 16).
pub const MAX_BATCH: usize = 16;

#[derive(Clone, Copy)]
struct DieState {
    busy: bool,
    n: u8,
    batch: [TxId; MAX_BATCH],
}

pub struct Dies {
    dies: Vec<DieState>,
}

impl Dies {
    pub fn new(n: u32) -> Self {
        Self {
            dies: vec![
                DieState {
                    busy: false,
                    n: 0,
                    batch: [TxId::NONE; MAX_BATCH],
                };
                n as usize
            ],
        }
    }
    #[inline]
    pub fn busy(&self, d: DieId) -> bool {
        self.dies[d.idx()].busy
    }
    /// Marks a die busy before its next operation is chosen (choosing can start GC, whose
    /// queueing must not re-enter the die's scheduler).
    #[inline]
    pub fn set_busy(&mut self, d: DieId, busy: bool) {
        self.dies[d.idx()].busy = busy;
    }
    /// The die starts an operation serving `batch`.
    #[inline]
    pub fn begin(&mut self, d: DieId, batch: &[TxId]) {
        let s = &mut self.dies[d.idx()];
        s.busy = true;
        s.n = batch.len() as u8;
        s.batch[..batch.len()].copy_from_slice(batch);
    }
    /// The transactions of the die's current operation.
    #[inline]
    pub fn batch(&self, d: DieId) -> ([TxId; MAX_BATCH], usize) {
        let s = &self.dies[d.idx()];
        (s.batch, s.n as usize)
    }
}
