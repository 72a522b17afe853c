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

    /// A plane with room for a user page now, for a write stuck on a plane that cannot free
    /// space: the next one in the flow's pinned set (or in the whole stripe order), if any.
    pub fn plane_with_room(
        &mut self,
        lpn: Lpn,
        pinned: Option<(&[u32], &mut u32)>,
    ) -> Option<PlaneId> {
        let p = match pinned {
            Some((set, cursor)) => self.target_plane_in(lpn, set, cursor),
            None => self.target_plane(lpn),
        };
        self.next_page_offset(p, crate::ftl::ops::StreamId::USER)
            .is_some()
            .then_some(p)
    }
}
