//! Timed garbage collection: the FTL's GC lifecycle steps (`ftl::gc`) turned into GC read,
//! write and erase transactions on the victim's die.

use super::Simulator;
use crate::ftl::gc::GcStart;
use crate::ids::{DieId, PlaneId, TxId};
use crate::tsu::{Tx, TxKind};

impl Simulator {
    /// After page `ppn` of `plane` was allocated: start GC if the plane is below its start
    /// point and the trigger says so (a page at offset 0 opened a block).
    #[inline]
    pub(super) fn after_allocation(&mut self, plane: PlaneId, ppn: crate::ids::Ppn) {
        let new_block = self.settings.geo.page_in_block(ppn.0) == 0;
        if self.ftl.gc_wanted(plane, new_block) {
            self.start_gc(plane, true);
        }
    }

    /// Picks a victim (a static wear-levelling one if due, else by the GC policy when
    /// `by_policy`) and queues its moves. Returns whether GC started.
    pub(super) fn start_gc(&mut self, plane: PlaneId, by_policy: bool) -> bool {
        let mut moves = std::mem::take(&mut self.gc_scratch);
        moves.clear();
        // The FTL records the victim before any move is queued: queueing can run the die's
        // scheduler, whose user writes allocate and must see the collection in progress.
        let started = match self.ftl.gc_begin(plane, by_policy, &mut moves) {
            GcStart::No => false,
            GcStart::EraseNow(victim) => {
                self.queue_erase(plane, victim);
                true
            }
            GcStart::Moves(_) => {
                let spp = self.settings.geo.sectors_per_page;
                let all = if spp >= 64 {
                    u64::MAX
                } else {
                    (1u64 << spp) - 1
                };
                let ids: Vec<TxId> = moves
                    .iter()
                    .map(|&(lpn, ppn)| {
                        self.tsu.insert(Tx {
                            lpn,
                            ppn,
                            sectors: all,
                            ..Tx::new(TxKind::GcRead, plane)
                        })
                    })
                    .collect();
                for t in ids {
                    self.enqueue(t);
                }
                true
            }
        };
        self.gc_scratch = moves;
        started
    }

    fn queue_erase(&mut self, plane: PlaneId, victim: crate::ids::BlockId) {
        let t = self.tsu.insert(Tx {
            block: victim,
            ..Tx::new(TxKind::GcErase, plane)
        });
        self.enqueue(t);
    }

    /// One move of the plane's victim finished (or was dropped as stale).
    pub(super) fn gc_move_done(&mut self, plane: PlaneId, moved: bool) {
        if let Some(victim) = self.ftl.gc_move_done(plane, moved) {
            self.queue_erase(plane, victim);
        }
    }

    /// The victim's erase ended: the plane is idle, and collects again if the trigger asks
    /// for it (refilling, or user writes still blocked at the reserve) or static wear
    /// levelling is due.
    pub(super) fn gc_erased(&mut self, plane: PlaneId) {
        self.ftl.gc_erased(plane);
        if self.cmt_on {
            self.cmt_gc_flush(plane);
        }
        let needed = self.ftl.gc_wanted(plane, false);
        self.start_gc(plane, needed);
        // Writes that waited for space on other dies' planes never wait here: a plane belongs
        // to one die, whose scheduler runs right after this.
    }

    /// Idle-time GC: the die has nothing queued, so planes below the background threshold
    /// collect now rather than under load later.
    pub(super) fn background_gc(&mut self, die: DieId) {
        let below = self.settings.gc_background_free_pages;
        for plane in self.settings.geo.planes_of_die(die) {
            if self.ftl.gc_phase(plane) == crate::ftl::GcPhase::Idle
                && self.ftl.free_pages(plane) < below
                && self.start_gc(plane, true)
            {
                self.ftl.stats_mut().gc_background_runs += 1;
            }
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
                    if !self.ftl.is_live(tx.lpn, tx.ppn) {
                        self.tsu.remove(t);
                        self.gc_move_done(tx.plane, false);
                        continue;
                    }
                    let page = geo.page_in_block(tx.ppn.0);
                    let end = self.backend.start_read(now, die.0, page, 1);
                    self.begin(die, &[t], end);
                    return true;
                }
                TxKind::GcWrite => {
                    let Some(ppn) = self.ftl.gc_program(tx.lpn, tx.ppn, tx.plane) else {
                        self.tsu.remove(t);
                        self.gc_move_done(tx.plane, false);
                        continue;
                    };
                    self.after_allocation(tx.plane, ppn);
                    if self.cmt_on {
                        self.cmt_gc_moved(tx.lpn, tx.plane);
                    }
                    let end = self
                        .backend
                        .start_program(now, die.0, geo.page_in_block(ppn.0), 1);
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
    /// register), into the GC frontier of the same plane.
    pub(super) fn copyback_program(&mut self, die: DieId, t: TxId) {
        let tx = *self.tsu.get(t);
        let Some(ppn) = self.ftl.gc_program(tx.lpn, tx.ppn, tx.plane) else {
            // Overwritten or trimmed during the sense: nothing to move.
            self.tsu.remove(t);
            self.dies.set_busy(die, false);
            self.gc_move_done(tx.plane, false);
            self.die_freed(die);
            return;
        };
        self.after_allocation(tx.plane, ppn);
        if self.cmt_on {
            self.cmt_gc_moved(tx.lpn, tx.plane);
        }
        let w = self.tsu.get_mut(t);
        w.kind = TxKind::GcWrite;
        w.ppn = ppn;
        self.ftl.stats_mut().gc_copyback_moves += 1;
        let end = self.backend.start_copyback_program(
            self.q.now(),
            die.0,
            self.settings.geo.page_in_block(ppn.0),
        );
        self.begin(die, &[t], end);
    }
}
