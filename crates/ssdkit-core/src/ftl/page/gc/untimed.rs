//! The untimed collector: GC steps performed at once, for write-mode preconditioning and the
//! steady-state checks. Same victim choice, allocation and mapping calls as timed runs.

use super::super::PageFtl;
use crate::ftl::ops::{GcPhase, StreamId};
use crate::ftl::precondition::pool::PoolLevel;
use crate::ids::{BlockId, Lpn, PlaneId, Ppn};

/// Collects `victim` (a closed block of `plane`) at once: moves its valid pages to the plane's
/// GC frontier and erases it. The caller made sure the GC frontier has room (the reserve
/// guarantees it).
pub fn collect_now(ftl: &mut PageFtl, plane: PlaneId, victim: BlockId) {
    ftl.make_victim(victim);
    let ppb = ftl.geo.pages_per_block;
    ftl.map.settle_block(victim.0, ppb);
    let first = victim.0 * ppb;
    for ppa in first..first + ftl.written[victim.idx()] {
        if let Some(lpn) = ftl.owner(Ppn(ppa)) {
            ftl.program(lpn, plane, StreamId::RECLAIM);
            ftl.stats.gc_page_moves += 1;
        }
    }
    ftl.planes[plane.idx()].gc = GcPhase::Erasing { victim };
    ftl.gc_erased(plane);
}

/// Untimed write of one logical page: GC in the target plane, then program the page. GC
/// keeps the pool the timed run would hold (`Ftl::untimed_pool`): at `GcStart`, it collects
/// until the plane is at its start threshold (GC that keeps up with the load); at `Reserve`,
/// only when the user write cannot take a page (GC behind a saturating writer, or
/// foreground GC). Returns false if the plane cannot free space (every closed block fully
/// valid).
pub fn write_now(ftl: &mut PageFtl, lpn: Lpn) -> bool {
    let plane = ftl.target_plane(lpn);
    write_now_in(ftl, lpn, plane)
}

/// `write_now` to a given plane (a pinned flow's page, kept in its planes).
pub fn write_now_in(ftl: &mut PageFtl, lpn: Lpn, plane: PlaneId) -> bool {
    let reserve = ftl.untimed_pool == PoolLevel::Reserve;
    if !collect_while(ftl, plane, reserve) {
        return false;
    }
    ftl.program(lpn, plane, StreamId::USER);
    ftl.stats.user_page_writes += 1;
    // The timed run starts a collection as soon as user writes are blocked, so no state
    // this writer leaves behind (the end of preconditioning) has a blocked plane.
    if reserve {
        collect_while(ftl, plane, true);
    }
    true
}

/// Collects in `plane` while it needs it for the pool kept (see `write_now`); returns whether
/// a user write can take a page afterwards.
fn collect_while(ftl: &mut PageFtl, plane: PlaneId, reserve: bool) -> bool {
    while if reserve {
        ftl.next_page_offset(plane, StreamId::USER).is_none()
    } else {
        ftl.free_pages(plane) < ftl.gc_start_free_pages
    } {
        let v = match ftl.pick_wl_victim(plane) {
            Some(v) => v,
            None => match ftl.pick_victim(plane) {
                Some(v) => v,
                None => break,
            },
        };
        collect_now(ftl, plane, v);
    }
    ftl.next_page_offset(plane, StreamId::USER).is_some()
}
