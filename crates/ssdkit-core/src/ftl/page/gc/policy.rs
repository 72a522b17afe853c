//! Victim choice for each GC policy. Greedy, FIFO and cost-benefit read the ordered indexes
//! of `ftl::index` (no scan of the plane); random and d-choices sample.

use super::super::blocks::BlockState;
use super::super::PageFtl;
use crate::config::GcPolicy;
use crate::ids::{BlockId, PlaneId};
use rand::Rng;

impl PageFtl {
    /// The next victim of `plane` under the configured policy, or None when collecting would
    /// free nothing (no closed block, or, for greedy, every closed block fully valid).
    pub(in crate::ftl) fn pick_victim(&mut self, plane: PlaneId) -> Option<BlockId> {
        match self.gc_policy {
            GcPolicy::Greedy {} => self.index.fewest_valid(plane).map(|(_, b)| b),
            GcPolicy::Random {} => self.sample_min(plane, 1),
            GcPolicy::DChoices { d } => self.sample_min(plane, d),
            GcPolicy::Fifo {} => self.index.oldest_closed(plane),
            GcPolicy::CostBenefit {} => match self.index.fewest_valid(plane) {
                // An empty block wins outright.
                Some((0, b)) => Some(b),
                None => None,
                Some(_) => self.index.best_cost_benefit(plane, self.clock),
            },
        }
    }

    /// Fewest valid pages among `d` closed blocks drawn uniformly with replacement (d = 1 is
    /// random GC). Fully valid blocks are legitimate candidates, as in Van Houdt's model.
    fn sample_min(&mut self, plane: PlaneId, d: u32) -> Option<BlockId> {
        let bpp = self.geo.blocks_per_plane;
        let range = plane.0 * bpp..(plane.0 + 1) * bpp;
        let mut best: Option<(u32, u32)> = None;
        let mut drawn = 0;
        // Most blocks are closed in any state where GC runs; the attempt bound only guards a
        // plane that has almost none (then greedy decides).
        let mut attempts = 0u32;
        while drawn < d && attempts < 64 * d + 64 {
            attempts += 1;
            let b = self.gc_rng.gen_range(range.clone());
            if self.block_state[b as usize] != BlockState::Closed {
                continue;
            }
            drawn += 1;
            let v = self.valid[b as usize];
            if best.is_none_or(|(_, bv)| v < bv) {
                best = Some((b, v));
            }
        }
        match best {
            Some((b, _)) => Some(BlockId(b)),
            None => self.index.fewest_valid(plane).map(|(_, b)| b),
        }
    }
}
