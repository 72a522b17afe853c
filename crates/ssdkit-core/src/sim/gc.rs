//! The FTL's flash work turned into transactions: the op list each FTL call may leave
//! (`ftl::FlashOp`, queued in order) and the reclaim transactions' runs on the die, reported
//! back to the FTL when each ends. What to collect, when and what follows is the FTL's.

use super::Simulator;
use crate::ftl::FlashOp;
use crate::ids::{DieId, TxId};
use crate::tsu::TxKind;

impl Simulator {
    /// Queues the flash work the last FTL call decided, if any. Call right after each FTL
    /// call that may decide some, so that queueing order (and so every result) is the
    /// order the FTL decided in.
    #[inline]
    pub(crate) fn queue_ftl_ops(&mut self) {
        if self.ftl.has_ops() {
            self.queue_ftl_ops_now();
        }
    }

    #[inline(never)]
    fn queue_ftl_ops_now(&mut self) {
        // Queueing runs die schedulers, whose FTL calls can decide more work: that is queued
        // inside, before the rest of this list, as it was decided.
        let mut ops = std::mem::take(&mut self.ftl_ops);
        self.ftl.take_ops(&mut ops);
        let all = self.settings.geo.full_page_mask();
        // The cached map's misses leave one translation-page read: the common case, queued
        // without the list's bookkeeping.
        if let [op @ FlashOp::Read { .. }] = ops[..] {
            ops.clear();
            self.ftl_ops = ops;
            let t = self.tsu.insert(op.tx(all));
            self.enqueue(t);
            return;
        }
        // A reused buffer: reclaim jobs' reads come at most once per call, but calls are many.
        let mut reads = std::mem::take(&mut self.ftl_reads);
        for &op in &ops {
            // A reclaim job's reads are all in the FTL's books before any is queued.
            if op.is_reclaim_read() {
                reads.push(self.tsu.insert(op.tx(all)));
                continue;
            }
            reads.drain(..).for_each(|t| self.enqueue(t));
            let t = self.tsu.insert(op.tx(all));
            match op {
                FlashOp::Program {
                    lpn,
                    after_read: true,
                    ..
                } => {
                    self.tsu.get_mut(t).waits = 1;
                    self.ftl.park_write(lpn, t);
                }
                _ => self.enqueue(t),
            }
        }
        reads.drain(..).for_each(|t| self.enqueue(t));
        self.ftl_reads = reads;
        ops.clear();
        self.ftl_ops = ops;
    }

    /// Idle-time GC: the die has nothing queued; the FTL decides whether its planes collect.
    pub(super) fn background_gc(&mut self, die: DieId) {
        for plane in self.settings.geo.planes_of_die(die) {
            self.ftl.reclaim_when_idle(plane);
            self.queue_ftl_ops();
        }
    }

    /// Runs the first GC transaction of the die that still has work to do; stale ones (their
    /// page was overwritten meanwhile) are retired on the way.
    pub(super) fn start_gc_op(&mut self, die: DieId) -> bool {
        let geo = self.settings.geo;
        loop {
            let Some(t) = self.tsu.pop_gc(die) else {
                return false;
            };
            let tx = *self.tsu.get(t);
            let now = self.q.now();
            match tx.kind {
                TxKind::GcRead => {
                    if !self.ftl.reclaim_read_begin(tx.lpn, tx.ppn, tx.plane) {
                        self.tsu.remove(t);
                        self.queue_ftl_ops();
                        continue;
                    }
                    let page = geo.page_in_block(tx.ppn.0);
                    let end = self.backend.start_read(now, die.0, page, 1);
                    self.begin(die, &[t], end);
                    return true;
                }
                TxKind::GcWrite => {
                    let Some(ppn) = self.ftl.reclaim_program(tx.lpn, tx.ppn, tx.plane, false)
                    else {
                        self.tsu.remove(t);
                        self.queue_ftl_ops();
                        continue;
                    };
                    self.queue_ftl_ops();
                    let page = geo.page_in_block(ppn.0);
                    let end = self.backend.start_program(now, die.0, page, 1, || 0);
                    self.begin(die, &[t], end);
                    return true;
                }
                TxKind::GcErase => {
                    let batch = self.tsu.erase_batch(die, t);
                    let end = self.backend.start_erase(now, die.0, batch.len() as u32);
                    self.begin(die, &batch, end);
                    return true;
                }
                _ => unreachable!("user transaction in a GC queue"),
            }
        }
    }

    /// Second half of a copyback move: the page sits in the die's register, so the program
    /// follows at once on the same die (nothing may run between, it would overwrite the
    /// register), into the reclaim frontier of the same plane.
    pub(super) fn copyback_program(&mut self, die: DieId, t: TxId) {
        let tx = *self.tsu.get(t);
        let Some(ppn) = self.ftl.reclaim_program(tx.lpn, tx.ppn, tx.plane, true) else {
            // Overwritten or trimmed during the sense: nothing to move.
            self.tsu.remove(t);
            self.dies.set_busy(die, false);
            self.queue_ftl_ops();
            self.die_freed(die);
            return;
        };
        self.queue_ftl_ops();
        let w = self.tsu.get_mut(t);
        w.kind = TxKind::GcWrite;
        w.ppn = ppn;
        let end = self.backend.start_copyback_program(
            self.q.now(),
            die.0,
            self.settings.geo.page_in_block(ppn.0),
        );
        self.begin(die, &[t], end);
    }
}
