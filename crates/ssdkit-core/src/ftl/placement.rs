//! Where user writes go, in terms of the interface's own questions: the plane of a new write
//! for a flow (pinned to a set of planes or not), dynamic placement's stuck planes, and whether
//! a die's planes are at their reserve.

use super::{Ftl, StreamId};
use crate::config::Placement;
use crate::flash::MAX_BATCH;
use crate::ids::{Lpn, PlaneId};

impl Ftl {
    /// The plane a new user write of `lpn` goes to; `pinned` is the writing flow's plane set
    /// and its cursor through them, if the flow is pinned.
    #[inline]
    pub fn user_plane(&mut self, lpn: Lpn, pinned: Option<(&[u32], &mut u32)>) -> PlaneId {
        match pinned {
            None => self.target_plane(lpn),
            Some((set, cursor)) => self.target_plane_in(lpn, set, cursor),
        }
    }

    /// Whether a plane among `planes` is down to its reserve, so reclaim must go first there.
    #[inline]
    pub fn any_at_reserve(&self, mut planes: impl Iterator<Item = PlaneId>) -> bool {
        planes.any(|p| self.at_reserve(p))
    }

    /// Dynamic placement can queue more writes for a plane than it can take: the planes of
    /// a die (`ppd` from `first`) at their reserve with no reclaim under way (every closed
    /// block fully valid, so reclaim cannot help), whose queued writes must move to a plane
    /// with room (`plane_with_room`). None when no plane is stuck. Static placement never
    /// needs this: each plane's logical share fits by validation.
    #[inline]
    pub fn stuck_user_planes(&self, first: u32, ppd: u32) -> Option<[bool; MAX_BATCH]> {
        if self.placement() != Placement::Dynamic {
            return None;
        }
        let mut stuck = [false; MAX_BATCH];
        for (l, s) in stuck.iter_mut().enumerate().take(ppd as usize) {
            let p = PlaneId(first + l as u32);
            *s = self.next_page_offset(p, StreamId::USER).is_none() && !self.reclaiming(p);
        }
        stuck.contains(&true).then_some(stuck)
    }

    /// The page offset the next user write would get in each of the `ppd` planes from
    /// `first` (one die's), None where it must wait. A fixed array, not a Vec: this runs on
    /// every write dispatch.
    #[inline(always)]
    pub fn user_page_offsets(&self, first: u32, ppd: u32) -> [Option<u32>; MAX_BATCH] {
        let mut offsets = [None; MAX_BATCH];
        for (l, o) in offsets.iter_mut().enumerate().take(ppd as usize) {
            *o = self.next_page_offset(PlaneId(first + l as u32), StreamId::USER);
        }
        offsets
    }
}
