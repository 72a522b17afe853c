//! Plane allocation: which plane a user write goes to. Static placement stripes logical pages
//! over the planes in `ftl.allocation_order` (the stripe table of the settings); dynamic
//! placement turns round robin through that order, skipping planes short of free space.

use super::PageFtl;
use crate::config::Placement;
use crate::ids::{Lpn, PlaneId};

impl PageFtl {
    /// Plane of a logical page under static striping.
    #[inline]
    pub fn static_plane(&self, lpn: Lpn) -> PlaneId {
        PlaneId(self.stripe[self.geo.modulo_planes(lpn.0) as usize])
    }

    /// Plane a new user write of `lpn` goes to.
    #[inline]
    pub fn target_plane(&mut self, lpn: Lpn) -> PlaneId {
        match self.placement {
            Placement::Static => self.static_plane(lpn),
            Placement::Dynamic => {
                let n = self.geo.planes();
                // Prefer planes that are not short of free space, so GC load spreads out.
                for _ in 0..n {
                    let p = PlaneId(self.stripe[self.rr_cursor as usize]);
                    self.rr_cursor = (self.rr_cursor + 1) % n;
                    if self.free_pages(p) >= self.gc_start_free_pages {
                        return p;
                    }
                }
                let p = PlaneId(self.stripe[self.rr_cursor as usize]);
                self.rr_cursor = (self.rr_cursor + 1) % n;
                p
            }
        }
    }

    /// Plane a new user write of `lpn` goes to when its flow is pinned to `set` (planes in
    /// allocation order): static placement stripes over the set, dynamic placement turns
    /// through it with the flow's own cursor.
    pub fn target_plane_in(&mut self, lpn: Lpn, set: &[u32], cursor: &mut u32) -> PlaneId {
        let n = set.len() as u32;
        match self.placement {
            Placement::Static => PlaneId(set[(lpn.0 % n) as usize]),
            Placement::Dynamic => {
                for _ in 0..n {
                    let p = PlaneId(set[*cursor as usize]);
                    *cursor = (*cursor + 1) % n;
                    if self.free_pages(p) >= self.gc_start_free_pages {
                        return p;
                    }
                }
                let p = PlaneId(set[*cursor as usize]);
                *cursor = (*cursor + 1) % n;
                p
            }
        }
    }

    /// Where a write stuck on a plane that cannot free space goes: the plane the flow's turn
    /// gives (inside its pinned set, or the whole stripe order) if it has room for a user
    /// page now; else the first plane after it with room; else the first that is collecting,
    /// whose die takes the write once GC has freed a block. None when every candidate is
    /// stuck too. (Only the turn's plane with room is not enough: a die left holding writes
    /// no plane takes now is never scheduled again when room appears on another die.)
    pub fn plane_with_room(
        &mut self,
        lpn: Lpn,
        pinned: Option<(&[u32], &mut u32)>,
    ) -> Option<PlaneId> {
        use crate::ftl::ops::StreamId;
        let (p, set) = match pinned {
            Some((set, cursor)) => (self.target_plane_in(lpn, set, cursor), Some(set)),
            None => (self.target_plane(lpn), None),
        };
        if self.next_page_offset(p, StreamId::USER).is_some() {
            return Some(p);
        }
        let candidates: &[u32] = set.unwrap_or(&self.stripe);
        let at = candidates.iter().position(|&c| c == p.0).unwrap_or(0);
        let order = || {
            (1..=candidates.len()).map(move |i| PlaneId(candidates[(at + i) % candidates.len()]))
        };
        order()
            .find(|&c| self.next_page_offset(c, StreamId::USER).is_some())
            .or_else(|| order().find(|&c| self.reclaiming(c)))
    }
}
