//! Static wear levelling (dynamic wear levelling is the free pool's choice, `blocks`).

use super::PageFtl;
use crate::ids::{BlockId, PlaneId};

impl PageFtl {
    /// Checked once per `wl_static_interval` GC runs of a plane: when the plane's erase-count
    /// spread exceeds the threshold, the closed block with the fewest erases (it holds cold
    /// data, else it would have been collected) is the next victim.
    pub(in crate::ftl) fn pick_wl_victim(&mut self, plane: PlaneId) -> Option<BlockId> {
        if !self.wl_static {
            return None;
        }
        let ps = &mut self.planes[plane.idx()];
        if ps.runs_since_wl < self.wl_static_interval {
            return None;
        }
        ps.runs_since_wl = 0;
        let (e, b, max) = self.index.coldest_closed(plane)?;
        if max - e > self.wl_static_threshold {
            self.stats.wl_migrations += 1;
            Some(b)
        } else {
            None
        }
    }
}
