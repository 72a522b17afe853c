//! The untimed collector: GC steps performed at once, for write-mode preconditioning and the
//! steady-state checks. Same victim choice, allocation and mapping calls as timed runs.

use super::super::blocks::Stream;
use super::super::Ftl;
use super::GcPhase;
use crate::ids::{BlockId, Lpn, PlaneId, Ppn};

/// Collects `victim` (a closed block of `plane`) at once: moves its valid pages to the plane's
/// GC frontier and erases it. The caller made sure the GC frontier has room (the reserve
/// guarantees it).
pub fn collect_now(ftl: &mut Ftl, plane: PlaneId, victim: BlockId) {
    ftl.make_victim(victim);
    let ppb = ftl.geo.pages_per_block;
    let first = victim.0 * ppb;
    for ppa in first..first + ftl.written[victim.idx()] {
        if let Some(lpn) = ftl.owner(Ppn(ppa)) {
            ftl.program(lpn, plane, Stream::Gc);
            ftl.stats.gc_page_moves += 1;
        }
    }
    ftl.planes[plane.idx()].gc = GcPhase::Erasing { victim };
    ftl.gc_erased(plane);
}

/// Untimed write of one logical page: GC in the target plane until it is above its start
/// threshold (as the timed simulator's GC would keep it), then program the page. Returns
/// false if the plane cannot free space (every closed block fully valid).
pub fn write_now(ftl: &mut Ftl, lpn: Lpn) -> bool {
    let plane = ftl.target_plane(lpn);
    while ftl.free_pages(plane) < ftl.gc_start_free_pages {
        let v = match ftl.pick_wl_victim(plane) {
            Some(v) => v,
            None => match ftl.pick_victim(plane) {
                Some(v) => v,
                None => break,
            },
        };
        collect_now(ftl, plane, v);
    }
    if ftl.next_page_offset(plane, Stream::User).is_none() {
        return false;
    }
    ftl.program(lpn, plane, Stream::User);
    ftl.stats.user_page_writes += 1;
    true
}
