//! Garbage collection: each plane's GC lifecycle, victim choice by policy (`policy`), and an
//! untimed collector (`untimed`) used by write-mode preconditioning and the steady-state checks.
//!
//! Each plane runs one reclaim job at a time (`ops::GcPhase`): its victim's valid pages are
//! read and programmed on the reclaim stream, then the victim is erased. The FTL decides when
//! a job starts (the trigger after each allocation, idle-time GC, wakes), which victim (static
//! wear levelling first, else the policy), and what follows a move or an erase; it hands the
//! flash operations to the simulator as [`FlashOp`]s and hears back when each ends. The
//! untimed collector performs the same steps at once, through the same allocation and mapping
//! calls, so both reach the same states.

mod policy;
pub mod untimed;

pub use untimed::{write_now, write_now_in};

use super::blocks::BlockState;
use super::PageFtl;
use crate::ftl::ops::{FlashOp, GcPhase, OpClass, StreamId};
use crate::ids::{Lpn, PlaneId, Ppn};

/// When a plane below its GC start point starts a collection (`ftl.gc_refill`,
/// `ftl.gc_foreground`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trigger {
    /// Each block a frontier opens starts one (MQSim).
    PerBlock,
    /// Back to back until the plane is above the start point.
    Refill,
    /// Only when user writes to the plane are blocked at the reserve.
    Foreground,
}

impl PageFtl {
    pub fn gc_phase(&self, plane: PlaneId) -> GcPhase {
        self.planes[plane.idx()].gc
    }

    /// The GC work a device still owes: what `run.end = "last_completion"` reports.
    pub fn backlog(&self) -> crate::result::Backlog {
        let mut b = crate::result::Backlog::default();
        for p in 0..self.geo.planes() {
            let plane = PlaneId(p);
            let free = self.free_pages(plane);
            if free < self.gc_start_free_pages {
                b.planes_below_gc_start += 1;
                b.free_pages_short_of_gc_start += self.gc_start_free_pages - free;
            }
            match self.planes[p as usize].gc {
                GcPhase::Idle => {}
                GcPhase::Moving { pending, .. } => {
                    b.planes_collecting += 1;
                    b.gc_moves_pending += pending as u64;
                }
                GcPhase::Erasing { .. } => b.planes_collecting += 1,
            }
        }
        b.free_blocks = self.total_free_blocks();
        b
    }

    /// Whether `plane` should start a collection now: it is idle, below its GC start point,
    /// and by the trigger, a frontier just opened a block (`new_block`; checked after each
    /// allocation), or it is refilling, or its user writes are blocked at the reserve (which
    /// always collects: nothing else would free their space).
    #[inline]
    pub fn gc_wanted(&self, plane: PlaneId, new_block: bool) -> bool {
        !self.in_place
            && self.planes[plane.idx()].gc == GcPhase::Idle
            && self.free_pages(plane) < self.gc_start_free_pages
            && match self.gc_trigger {
                Trigger::Refill => true,
                Trigger::PerBlock if new_block => true,
                _ => self.next_page_offset(plane, StreamId::USER).is_none(),
            }
    }

    /// Whether a reclaim job runs in `plane`.
    #[inline]
    pub fn reclaiming(&self, plane: PlaneId) -> bool {
        self.planes[plane.idx()].gc != GcPhase::Idle
    }

    /// After page `ppn` of `plane` was allocated: start GC if the plane is below its start
    /// point and the trigger says so (a page at offset 0 opened a block).
    #[inline]
    pub(in crate::ftl) fn after_allocation(&mut self, plane: PlaneId, ppn: Ppn) {
        let new_block = self.geo.page_in_block(ppn.0) == 0;
        if self.gc_wanted(plane, new_block) {
            self.start_reclaim(plane, true);
        }
    }

    /// Starts a reclaim job in `plane` if the trigger asks for one now (at the start of a
    /// timed run: a state whose user writes are blocked at a reserve with GC idle would wait
    /// for a trigger that never comes).
    pub fn reclaim_if_wanted(&mut self, plane: PlaneId) {
        if self.gc_wanted(plane, false) {
            self.start_reclaim(plane, true);
        }
    }

    /// Handles the next plane woken by an overwrite or TRIM (`note_collectable`): it collects
    /// if it still wants to. False when no wake is left.
    #[inline]
    pub fn wake_one(&mut self) -> bool {
        let Some(p) = self.gc_wake.pop() else {
            return false;
        };
        self.reclaim_if_wanted(p);
        true
    }

    /// Whether reclaim moves pages by copyback (`ftl.gc_copyback`): the program follows the
    /// read on the same die, the data never leaving it.
    #[inline]
    pub fn reclaim_by_copyback(&self) -> bool {
        self.gc_copyback
    }

    /// Idle-time GC: the plane's die has nothing queued, so a plane below the background
    /// threshold collects now rather than under load later.
    pub fn reclaim_when_idle(&mut self, plane: PlaneId) {
        if self.planes[plane.idx()].gc == GcPhase::Idle
            && self.free_pages(plane) < self.gc_background_free_pages
            && self.start_reclaim(plane, true)
        {
            self.stats.gc_background_runs += 1;
        }
    }

    /// Picks a victim (a static wear-levelling one if due, else by the GC policy when
    /// `by_policy`) and asks for its moves: one reclaim read per valid page, or the erase at
    /// once when it holds none. Returns whether a job started. The victim is recorded before
    /// any op is queued: queueing can run the die's scheduler, whose user writes allocate and
    /// must see the collection in progress.
    fn start_reclaim(&mut self, plane: PlaneId, by_policy: bool) -> bool {
        if self.planes[plane.idx()].gc != GcPhase::Idle {
            return false;
        }
        let victim = match self.pick_wl_victim(plane) {
            Some(v) => v,
            // A plane whose closed blocks are all fully valid gains nothing from a collection:
            // FIFO or random GC would move full blocks round forever (a livelock that also
            // keeps dynamic placement from moving the plane's waiting writes elsewhere).
            None if by_policy && self.collectable(plane) => match self.pick_victim(plane) {
                Some(v) => v,
                None => return false,
            },
            None => return false,
        };
        self.make_victim(victim);
        let ppb = self.geo.pages_per_block;
        self.map.settle_block(victim.0, ppb);
        let before = self.ops.len();
        for ppa in victim.0 * ppb..(victim.0 + 1) * ppb {
            if let Some(lpn) = self.owner(Ppn(ppa)) {
                self.ops.push(FlashOp::Read {
                    class: OpClass::Reclaim,
                    lpn,
                    ppn: Ppn(ppa),
                    plane,
                });
            }
        }
        let pending = (self.ops.len() - before) as u32;
        let ps = &mut self.planes[plane.idx()];
        if pending == 0 {
            ps.gc = GcPhase::Erasing { victim };
            self.ops.push(FlashOp::Erase {
                plane,
                block: victim,
            });
        } else {
            ps.gc = GcPhase::Moving { victim, pending };
        }
        true
    }

    /// A reclaim read of `lpn` at `ppn` is about to start: false if the page went stale
    /// meanwhile (overwritten or trimmed), and the move is dropped.
    #[inline]
    pub fn reclaim_read_begin(&mut self, lpn: Lpn, ppn: Ppn, plane: PlaneId) -> bool {
        if self.is_live(lpn, ppn) {
            return true;
        }
        self.move_done(plane, false);
        false
    }

    /// Programs a moved page (read from `from`) into the plane's reclaim frontier, at the page
    /// returned; `reclaim_program_done` follows when the program ends. None if the page went
    /// stale meanwhile (the move is dropped). `copyback`: the page never left the die.
    pub fn reclaim_program(
        &mut self,
        lpn: Lpn,
        from: Ppn,
        plane: PlaneId,
        copyback: bool,
    ) -> Option<Ppn> {
        if self.translate(lpn) != Some(from) {
            self.move_done(plane, false);
            return None;
        }
        if lpn.0 >= self.logical_pages {
            self.stats.gc_translation_moves += 1;
        }
        let ppn = self.program(lpn, plane, StreamId::RECLAIM);
        self.after_allocation(plane, ppn);
        if self.cmt_path.is_some() {
            self.cmt_gc_moved(lpn, plane);
        }
        if copyback {
            self.stats.gc_copyback_moves += 1;
        }
        Some(ppn)
    }

    /// A reclaim program of `plane` ended: the move is done.
    #[inline]
    pub fn reclaim_program_done(&mut self, plane: PlaneId) {
        self.move_done(plane, true);
    }

    /// One move of the plane's victim finished (done, or dropped as stale); `moved` counts it.
    /// The last one asks for the victim's erase.
    #[inline]
    fn move_done(&mut self, plane: PlaneId, moved: bool) {
        if moved {
            self.stats.gc_page_moves += 1;
        }
        let ps = &mut self.planes[plane.idx()];
        match ps.gc {
            GcPhase::Moving { victim, pending } if pending > 1 => {
                ps.gc = GcPhase::Moving {
                    victim,
                    pending: pending - 1,
                };
            }
            GcPhase::Moving { victim, .. } => {
                ps.gc = GcPhase::Erasing { victim };
                self.ops.push(FlashOp::Erase {
                    plane,
                    block: victim,
                });
            }
            other => panic!("GC move finished in plane {plane} in phase {other:?}"),
        }
    }

    /// The victim's erase ended: the plane is idle, writes back the translation pages its
    /// moves changed (cached map, batched updates), and collects again if the trigger asks
    /// for it (refilling, or user writes still blocked at the reserve) or static wear
    /// levelling is due.
    pub fn erase_done(&mut self, plane: PlaneId) {
        self.gc_erased(plane);
        if self.cmt_path.is_some() {
            self.cmt_gc_flush(plane);
        }
        let needed = self.gc_wanted(plane, false);
        self.start_reclaim(plane, needed);
    }

    /// The victim's erase ended: the block is free again and the plane idle.
    pub(in crate::ftl) fn gc_erased(&mut self, plane: PlaneId) {
        let ps = &self.planes[plane.idx()];
        let GcPhase::Erasing { victim } = ps.gc else {
            panic!("erase ended in plane {plane} in phase {:?}", ps.gc);
        };
        self.erase(victim);
        self.stats.gc_runs += 1;
        let ps = &mut self.planes[plane.idx()];
        ps.gc = GcPhase::Idle;
        ps.runs_since_wl += 1;
    }

    /// A closed block of `plane` gained its first invalid page: if the plane waits below its
    /// GC start point with GC idle (it found nothing worth collecting), it is woken.
    pub(in crate::ftl) fn note_collectable(&mut self, plane: PlaneId) {
        if self.gc_wanted(plane, false) && !self.gc_wake.contains(&plane) {
            self.gc_wake.push(plane);
        }
    }

    /// Forgets the wakes of untimed work (preconditioning, snapshot loading): a timed run
    /// starts from the state, not from how it was reached.
    pub fn clear_gc_wakes(&mut self) {
        self.gc_wake.clear();
    }

    /// Closed blocks of a plane that have an invalid page (GC could free space there).
    pub fn collectable(&self, plane: PlaneId) -> bool {
        self.index.fewest_valid(plane).is_some()
    }

    /// A one-line picture of a plane, for stall reports.
    pub fn describe_plane(&self, plane: PlaneId) -> String {
        let bpp = self.geo.blocks_per_plane;
        let mut states = [0u32; 4];
        let mut valid = 0u64;
        let mut collectable = 0;
        for b in plane.0 * bpp..(plane.0 + 1) * bpp {
            let s = self.block_state[b as usize];
            valid += self.valid[b as usize] as u64;
            if s == BlockState::Closed && self.valid[b as usize] < self.geo.pages_per_block {
                collectable += 1;
            }
            states[match s {
                BlockState::Free => 0,
                BlockState::Open => 1,
                BlockState::Closed => 2,
                BlockState::Victim => 3,
            }] += 1;
        }
        let ps = &self.planes[plane.idx()];
        format!(
            "plane {plane}: {} free blocks, {} free pages, GC start below {}, GC {:?}, {collectable} closed blocks with invalid pages (states free/open/closed/victim {states:?}, {valid} valid pages)",
            ps.free.len(),
            self.free_pages(plane),
            self.gc_start_free_pages,
            ps.gc,
        )
    }
}
