//! Garbage collection: each plane's GC lifecycle, victim choice by policy (`policy`), and an
//! untimed collector (`untimed`) used by write-mode preconditioning and the steady-state checks.
//!
//! Lifecycle of a plane (timed runs):
//! ```text
//!  Idle --begin (victim chosen, its valid pages listed)--> Moving { victim, pending }
//!  Moving --move_done x pending--> Erasing { victim } --erased--> Idle
//! ```
//! A victim with no valid page goes straight to Erasing. The simulator turns the listed moves
//! into GC read and write transactions and the erase into an erase transaction; the untimed
//! collector performs the same steps at once, through the same allocation and mapping calls,
//! so both reach the same states.

mod policy;
pub mod untimed;

pub use untimed::{collect_now, write_now, write_now_in};

use super::blocks::{BlockState, Stream};
use super::Ftl;
use crate::ids::{BlockId, Lpn, PlaneId, Ppn};

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

/// Where a plane is in its GC lifecycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GcPhase {
    Idle,
    /// The victim's valid pages are being moved; `pending` moves are not finished.
    Moving {
        victim: BlockId,
        pending: u32,
    },
    /// Every move is done; the victim's erase is queued or running.
    Erasing {
        victim: BlockId,
    },
}

impl GcPhase {
    pub fn victim(self) -> Option<BlockId> {
        match self {
            GcPhase::Idle => None,
            GcPhase::Moving { victim, .. } | GcPhase::Erasing { victim } => Some(victim),
        }
    }
}

/// What `begin` started.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GcStart {
    /// Nothing to collect (or a collection already runs).
    No,
    /// Moves listed; the erase follows the last of them.
    Moves(BlockId),
    /// The victim holds no valid page: erase it now.
    EraseNow(BlockId),
}

impl Ftl {
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
                _ => self.next_page_offset(plane, Stream::User).is_none(),
            }
    }

    /// Starts collecting in an idle `plane`: the static wear-levelling victim if one is due,
    /// else, when `by_policy`, the GC policy's victim. The victim's valid pages are appended
    /// to `moves` as (logical page, physical page).
    pub fn gc_begin(
        &mut self,
        plane: PlaneId,
        by_policy: bool,
        moves: &mut Vec<(Lpn, Ppn)>,
    ) -> GcStart {
        if self.planes[plane.idx()].gc != GcPhase::Idle {
            return GcStart::No;
        }
        let victim = match self.pick_wl_victim(plane) {
            Some(v) => v,
            // A plane whose closed blocks are all fully valid gains nothing from a collection:
            // FIFO or random GC would move full blocks round forever (a livelock that also
            // keeps dynamic placement from moving the plane's waiting writes elsewhere).
            None if by_policy && self.collectable(plane) => match self.pick_victim(plane) {
                Some(v) => v,
                None => return GcStart::No,
            },
            None => return GcStart::No,
        };
        self.make_victim(victim);
        let ppb = self.geo.pages_per_block;
        self.map.settle_block(victim.0, ppb);
        let before = moves.len();
        for ppa in victim.0 * ppb..(victim.0 + 1) * ppb {
            if let Some(lpn) = self.owner(Ppn(ppa)) {
                moves.push((lpn, Ppn(ppa)));
            }
        }
        let pending = (moves.len() - before) as u32;
        let ps = &mut self.planes[plane.idx()];
        if pending == 0 {
            ps.gc = GcPhase::Erasing { victim };
            GcStart::EraseNow(victim)
        } else {
            ps.gc = GcPhase::Moving { victim, pending };
            GcStart::Moves(victim)
        }
    }

    /// Programs a moved page into the plane's GC frontier (`gc_move_done` follows when the
    /// program ends). None if the page went stale meanwhile (overwritten or trimmed).
    pub fn gc_program(&mut self, lpn: Lpn, from: Ppn, plane: PlaneId) -> Option<Ppn> {
        if self.translate(lpn) != Some(from) {
            return None;
        }
        if lpn.0 >= self.logical_pages {
            self.stats.gc_translation_moves += 1;
        }
        Some(self.program(lpn, plane, Stream::Gc))
    }

    /// One move of the plane's victim finished (done, or dropped as stale); `moved` counts it.
    /// Returns the victim when it is ready to be erased.
    pub fn gc_move_done(&mut self, plane: PlaneId, moved: bool) -> Option<BlockId> {
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
                None
            }
            GcPhase::Moving { victim, .. } => {
                ps.gc = GcPhase::Erasing { victim };
                Some(victim)
            }
            other => panic!("GC move finished in plane {plane} in phase {other:?}"),
        }
    }

    /// The victim's erase ended: the block is free again and the plane idle.
    pub fn gc_erased(&mut self, plane: PlaneId) {
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

    /// The next plane woken by `note_collectable`, if any (the simulator starts its GC).
    #[inline]
    pub fn next_gc_wake(&mut self) -> Option<PlaneId> {
        self.gc_wake.pop()
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
