//! Die state: whether a die is busy and which transactions its current operation serves
//! (one per plane of a multi-plane operation). The scheduler decides what a die does next.

use crate::engine::Div;
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
    /// `flash.die_interleaving = false`: dies per chip (a shift for a power of two: under
    /// MQSim's rules every scheduling pass asks it), and whether each chip has a die busy.
    /// None when dies interleave (no chip-level check).
    dies_per_chip: Option<Div>,
    chip_busy: Vec<bool>,
}

impl Dies {
    /// `n` dies; `serial_chips_of` = Some(dies per chip) when a chip runs one die operation at
    /// a time.
    pub fn new(n: u32, serial_chips_of: Option<u32>) -> Self {
        let dpc = serial_chips_of.filter(|&d| d > 0);
        Self {
            dies_per_chip: dpc.map(Div::new),
            chip_busy: vec![false; dpc.map_or(0, |d| n / d) as usize],
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
    /// Whether the die cannot start an operation now: it is busy, or (dies not interleaving)
    /// another die of its chip is.
    #[inline]
    pub fn busy(&self, d: DieId) -> bool {
        self.dies[d.idx()].busy
            || self
                .dies_per_chip
                .is_some_and(|dpc| self.chip_busy[dpc.quot(d.0) as usize])
    }
    /// Marks a die busy before its next operation is chosen (choosing can start GC, whose
    /// queueing must not re-enter the die's scheduler).
    #[inline]
    pub fn set_busy(&mut self, d: DieId, busy: bool) {
        self.dies[d.idx()].busy = busy;
        if let Some(dpc) = self.dies_per_chip {
            self.chip_busy[dpc.quot(d.0) as usize] = busy;
        }
    }
    /// The die starts an operation serving `batch`.
    #[inline]
    pub fn begin(&mut self, d: DieId, batch: &[TxId]) {
        if let Some(dpc) = self.dies_per_chip {
            self.chip_busy[dpc.quot(d.0) as usize] = true;
        }
        let s = &mut self.dies[d.idx()];
        s.busy = true;
        s.n = batch.len() as u8;
        // One page or a two-plane pair is nearly every operation: a variable-length copy
        // of them was a call to memcpy.
        match batch {
            [a] => s.batch[0] = *a,
            [a, b] => s.batch[..2].copy_from_slice(&[*a, *b]),
            _ => s.batch[..batch.len()].copy_from_slice(batch),
        }
    }
    /// Dies per chip when a chip runs one die operation at a time; 0 when dies interleave.
    #[inline]
    pub fn dies_per_chip(&self) -> u32 {
        self.dies_per_chip.map_or(0, Div::get)
    }
    /// The other dies of `d`'s chip, in round-robin order from `d`, when a chip runs one die
    /// operation at a time (none when dies interleave): a die ending its operation frees the
    /// chip, which they are offered first.
    #[inline]
    pub fn chip_mates(&self, d: DieId) -> impl Iterator<Item = DieId> + Clone + use<> {
        let dpc = self.dies_per_chip();
        let first = d.0.checked_div(dpc).unwrap_or(0) * dpc;
        (1..dpc).map(move |k| DieId(first + (d.0 - first + k) % dpc))
    }
    /// The transactions of the die's current operation.
    #[inline]
    pub fn batch(&self, d: DieId) -> ([TxId; MAX_BATCH], usize) {
        let s = &self.dies[d.idx()];
        (s.batch, s.n as usize)
    }
}

#[cfg(test)]
mod tests {
    use super::Dies;
    use crate::ids::DieId;

    /// A chip's other dies in round-robin order from the die: for two dies per chip the other
    /// of the pair `2k, 2k + 1` (`Tsu::pair_order` takes it as `d ^ 1`); a busy die holds its
    /// chip, not the next (three dies per chip: no shift); none when dies interleave.
    #[test]
    fn chip_mates_and_busy_chips() {
        let two = Dies::new(16, Some(2));
        for d in 0..16 {
            let mates: Vec<DieId> = two.chip_mates(DieId(d)).collect();
            assert_eq!(mates, [DieId(d ^ 1)]);
        }
        let mut three = Dies::new(9, Some(3));
        let mates: Vec<DieId> = three.chip_mates(DieId(4)).collect();
        assert_eq!(mates, [DieId(5), DieId(3)]);
        three.set_busy(DieId(4), true);
        let busy: Vec<bool> = (0..9).map(|d| three.busy(DieId(d))).collect();
        assert_eq!(
            busy,
            [false, false, false, true, true, true, false, false, false]
        );
        let mut apart = Dies::new(8, None);
        assert_eq!(apart.chip_mates(DieId(3)).count(), 0);
        apart.set_busy(DieId(3), true);
        assert!(apart.busy(DieId(3)) && !apart.busy(DieId(2)));
    }
}
