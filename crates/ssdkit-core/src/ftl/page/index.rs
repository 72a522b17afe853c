//! Ordered indexes over each plane's closed blocks, so GC victim choice (greedy, FIFO,
//! cost-benefit) and static wear levelling never scan a plane's blocks on the event path.
//! Every index gives the same block a full scan in block order would: ties go to the lowest
//! block number, so results do not depend on the index.
//!
//! - greedy: a min-tree keyed by valid count (closed blocks with an invalid page);
//! - FIFO: a min-tree keyed by close stamp (closed blocks);
//! - static wear levelling: a min-tree keyed by erase count (closed blocks), and each plane's
//!   highest erase count (erase counts only grow);
//! - cost-benefit: per valid count, the closed blocks ordered by last change (the oldest of
//!   a valid count has the best score of that count, so a choice looks at one block per
//!   count).
//!
//! Trees cost O(log blocks) per change; only the indexes the configured policies read are
//! kept (greedy's always: it also answers "is any block worth collecting").

use super::blocks::BlockState;
use super::PageFtl;
use crate::config::GcPolicy;
use crate::flash::Geometry;
use crate::ids::{BlockId, PlaneId};
use std::collections::BTreeSet;

const INF: u64 = u64::MAX;

/// One complete binary min-tree per plane over the plane's blocks; ties to the lower block.
/// Trees whose keys are all infinite hold no memory (`keys` empty) until a key is set: a
/// device with no closed block (a new one, or one that only reads) builds none (measured:
/// 2.5 ms of building MQSim's 262,144-block device, in every run of it).
#[derive(Debug, Clone, Default)]
struct MinTrees {
    /// Leaves per plane (a power of two >= 2).
    size: usize,
    planes: usize,
    /// Each key's complement (`!key`), so that an infinite key is 0 and the trees' keys come
    /// zeroed from the allocator, untouched until read or set. Filling them with `u64::MAX`
    /// wrote 2 MiB for MQSim's 262,144 blocks in every run that closes a block (measured:
    /// the allocation took 1.1 ms, now 0.02; 30,000 128 KiB reads of MQSim's ideal-map
    /// device, loop 38.3 to 37.9 ms). The min-tree of the keys is the max-tree of their
    /// complements; ties still go to the lower block. Empty while every key is infinite.
    keys: Vec<u64>,
    /// Inner node i (1..size) of plane p at p * size + i: the leaf holding its subtree's min.
    nodes: Vec<u32>,
}

impl MinTrees {
    #[cfg(test)]
    fn new(planes: usize, blocks_per_plane: usize) -> Self {
        let mut t = Self::default();
        t.reset(planes, blocks_per_plane);
        t.build();
        t
    }

    /// Every key infinite, the nodes not yet built: `put` keys, then `build`.
    fn reset(&mut self, planes: usize, blocks_per_plane: usize) {
        self.size = blocks_per_plane.next_power_of_two().max(2);
        self.planes = planes;
        self.keys = Vec::new();
        self.nodes = Vec::new();
    }

    /// Gives the trees of infinite keys their memory, the nodes not yet built.
    fn allocate(&mut self) {
        self.keys = vec![!INF; self.planes * self.size];
        self.nodes = vec![0; self.planes * self.size];
    }

    /// Gives the trees of infinite keys their memory and nodes.
    #[cold]
    fn materialize(&mut self) {
        self.allocate();
        self.fill_infinite();
    }

    /// The nodes `build` gives keys that are all infinite, without comparing any: every
    /// tie goes left, so each node's winner is the first leaf under it. (`build` compared
    /// its way there: 8.8 million instructions for MQSim's 262,144 blocks, in every run
    /// that closes a block.)
    fn fill_infinite(&mut self) {
        let size = self.size;
        let levels = size.trailing_zeros();
        for i in 1..size {
            // Node i is at depth log2(i); the first leaf under it is i's path shifted down
            // to the leaves' depth, less the leaves' offset in the numbering.
            let depth = usize::BITS - 1 - i.leading_zeros();
            self.nodes[i] = ((i << (levels - depth)) - size) as u32;
        }
        let (first, rest) = self.nodes.split_at_mut(size);
        for plane in rest.chunks_exact_mut(size) {
            plane.copy_from_slice(first);
        }
    }

    /// Sets a leaf's key without updating the nodes above it: loading many keys, then `build`.
    #[inline]
    fn put(&mut self, plane: usize, leaf: usize, key: u64) {
        if self.keys.is_empty() {
            self.allocate();
        }
        self.keys[plane * self.size + leaf] = !key;
    }

    /// Every inner node from the leaves up: O(leaves), where `set` per leaf is O(leaves log
    /// leaves).
    fn build(&mut self) {
        for base in (0..self.keys.len()).step_by(self.size) {
            for i in (1..self.size).rev() {
                let l = self.winner(base, 2 * i);
                let r = self.winner(base, 2 * i + 1);
                self.nodes[base + i] =
                    if self.keys[base + r as usize] > self.keys[base + l as usize] {
                        r
                    } else {
                        l
                    };
            }
        }
    }

    #[inline]
    fn winner(&self, base: usize, child: usize) -> u32 {
        if child >= self.size {
            (child - self.size) as u32
        } else {
            self.nodes[base + child]
        }
    }

    #[inline]
    fn set(&mut self, plane: usize, leaf: usize, key: u64) {
        if self.keys.is_empty() {
            if key == INF {
                return;
            }
            self.materialize();
        }
        let base = plane * self.size;
        if self.keys[base + leaf] == !key {
            return;
        }
        self.keys[base + leaf] = !key;
        let mut i = (self.size + leaf) / 2;
        while i >= 1 {
            let l = self.winner(base, 2 * i);
            let r = self.winner(base, 2 * i + 1);
            // Left leaves have lower block numbers: keep left on equal keys.
            self.nodes[base + i] = if self.keys[base + r as usize] > self.keys[base + l as usize] {
                r
            } else {
                l
            };
            i /= 2;
        }
    }

    /// (key, leaf) of the plane's minimum, if any key is finite.
    #[inline]
    fn min(&self, plane: usize) -> Option<(u64, u32)> {
        if self.keys.is_empty() {
            return None;
        }
        let base = plane * self.size;
        let leaf = self.nodes[base + 1];
        let k = !self.keys[base + leaf as usize];
        (k != INF).then_some((k, leaf))
    }
}

/// One plane's closed blocks by valid count, each set ordered by (last change, block).
type ByValid = Vec<BTreeSet<(u64, u32)>>;

#[derive(Debug, Default)]
pub(in crate::ftl) struct VictimIndex {
    blocks_per_plane: u32,
    pages_per_block: u32,
    greedy: MinTrees,
    fifo: Option<MinTrees>,
    wl: Option<MinTrees>,
    max_erase: Vec<u32>,
    /// cost_benefit[plane][valid] = {(last change, block)} of closed blocks.
    cost_benefit: Option<Vec<ByValid>>,
}

impl VictimIndex {
    pub(in crate::ftl) fn new(g: &Geometry, policy: GcPolicy, wl_static: bool) -> Self {
        let planes = g.planes() as usize;
        Self {
            blocks_per_plane: g.blocks_per_plane,
            pages_per_block: g.pages_per_block,
            // Sized and built by `rebuild`, which building an FTL always calls.
            greedy: MinTrees::default(),
            fifo: (policy == GcPolicy::Fifo {}).then(MinTrees::default),
            wl: wl_static.then(MinTrees::default),
            max_erase: vec![0; planes],
            cost_benefit: (policy == GcPolicy::CostBenefit {}).then(|| {
                (0..planes)
                    .map(|_| vec![BTreeSet::new(); g.pages_per_block as usize + 1])
                    .collect()
            }),
        }
    }

    #[inline]
    fn split(&self, b: BlockId) -> (usize, usize) {
        (
            (b.0 / self.blocks_per_plane) as usize,
            (b.0 % self.blocks_per_plane) as usize,
        )
    }

    #[inline]
    fn greedy_key(&self, valid: u32) -> u64 {
        if valid < self.pages_per_block {
            valid as u64
        } else {
            INF
        }
    }

    /// Block `b` was closed with these values.
    pub(in crate::ftl) fn closed(
        &mut self,
        b: BlockId,
        valid: u32,
        close_stamp: u64,
        mod_stamp: u64,
        erases: u32,
    ) {
        let (p, l) = self.split(b);
        self.greedy.set(p, l, self.greedy_key(valid));
        if let Some(t) = &mut self.fifo {
            t.set(p, l, close_stamp);
        }
        if let Some(t) = &mut self.wl {
            t.set(p, l, erases as u64);
        }
        if let Some(cb) = &mut self.cost_benefit {
            cb[p][valid as usize].insert((mod_stamp, b.0));
        }
    }

    /// Closed block `b` left the closed state (became a GC victim).
    pub(in crate::ftl) fn left_closed(
        &mut self,
        b: BlockId,
        valid: u32,
        mod_stamp: u64,
        _erases: u32,
    ) {
        let (p, l) = self.split(b);
        self.greedy.set(p, l, INF);
        if let Some(t) = &mut self.fifo {
            t.set(p, l, INF);
        }
        if let Some(t) = &mut self.wl {
            t.set(p, l, INF);
        }
        if let Some(cb) = &mut self.cost_benefit {
            cb[p][valid as usize].remove(&(mod_stamp, b.0));
        }
    }

    /// Closed block `b` lost a valid page (from `valid` to `valid - 1`) at `now`.
    pub(in crate::ftl) fn valid_dropped(
        &mut self,
        b: BlockId,
        valid: u32,
        mod_stamp: u64,
        now: u64,
    ) {
        let (p, l) = self.split(b);
        self.greedy.set(p, l, self.greedy_key(valid - 1));
        if let Some(cb) = &mut self.cost_benefit {
            cb[p][valid as usize].remove(&(mod_stamp, b.0));
            cb[p][valid as usize - 1].insert((now, b.0));
        }
    }

    pub(in crate::ftl) fn erased(&mut self, plane: PlaneId, erases: u32) {
        let m = &mut self.max_erase[plane.idx()];
        *m = (*m).max(erases);
    }

    /// Every index of an erased device, which has no closed block and no erase: the state
    /// `rebuild` reaches there, without reading the block arrays.
    pub(in crate::ftl) fn rebuild_erased(&mut self, g: &crate::flash::Geometry) {
        self.reset(g);
        self.build();
    }

    fn reset(&mut self, g: &crate::flash::Geometry) {
        let planes = g.planes() as usize;
        let bpp = g.blocks_per_plane as usize;
        for t in [Some(&mut self.greedy), self.fifo.as_mut(), self.wl.as_mut()]
            .into_iter()
            .flatten()
        {
            t.reset(planes, bpp);
        }
        if let Some(cb) = &mut self.cost_benefit {
            cb.iter_mut().flatten().for_each(|s| s.clear());
        }
        self.max_erase = vec![0; planes];
    }

    fn build(&mut self) {
        self.greedy.build();
        for t in [&mut self.fifo, &mut self.wl].into_iter().flatten() {
            t.build();
        }
    }

    /// Rebuilds every index from the FTL's block arrays.
    pub(in crate::ftl) fn rebuild(&mut self, ftl: &PageFtl) {
        let g = ftl.geo;
        let planes = g.planes() as usize;
        let bpp = g.blocks_per_plane as usize;
        self.reset(&g);
        // Plane by plane, not a division per block (measured: the divisions were 2 ms of a
        // 15 ms build of MQSim's 262,144-block device).
        for (p, l) in (0..planes).flat_map(|p| (0..bpp).map(move |l| (p, l))) {
            let i = p * bpp + l;
            let b = i as u32;
            let e = ftl.erase_count[i];
            self.max_erase[p] = self.max_erase[p].max(e);
            if ftl.block_state[i] == BlockState::Closed {
                // As `closed` would, with the trees' nodes built once at the end.
                self.greedy.put(p, l, self.greedy_key(ftl.valid[i]));
                if let Some(t) = &mut self.fifo {
                    t.put(p, l, ftl.close_stamp[i]);
                }
                if let Some(t) = &mut self.wl {
                    t.put(p, l, e as u64);
                }
                if let Some(cb) = &mut self.cost_benefit {
                    cb[p][ftl.valid[i] as usize].insert((ftl.mod_stamp[i], b));
                }
            }
        }
        self.build();
    }

    /// Greedy: the closed block with the fewest valid pages, if one has an invalid page.
    pub(in crate::ftl) fn fewest_valid(&self, plane: PlaneId) -> Option<(u32, BlockId)> {
        let base = plane.0 * self.blocks_per_plane;
        self.greedy
            .min(plane.idx())
            .map(|(v, l)| (v as u32, BlockId(base + l)))
    }

    /// FIFO: the block closed longest ago.
    pub(in crate::ftl) fn oldest_closed(&self, plane: PlaneId) -> Option<BlockId> {
        let base = plane.0 * self.blocks_per_plane;
        let t = self
            .fifo
            .as_ref()
            .expect("FIFO index kept for the FIFO policy");
        t.min(plane.idx()).map(|(_, l)| BlockId(base + l))
    }

    /// Static wear levelling: the closed block with the fewest erases, and the plane's most.
    pub(in crate::ftl) fn coldest_closed(&self, plane: PlaneId) -> Option<(u32, BlockId, u32)> {
        let base = plane.0 * self.blocks_per_plane;
        let t = self
            .wl
            .as_ref()
            .expect("erase index kept for static wear levelling");
        t.min(plane.idx())
            .map(|(e, l)| (e as u32, BlockId(base + l), self.max_erase[plane.idx()]))
    }

    /// Cost-benefit: highest age x (1 - u) / 2u among closed blocks with 0 < valid < pages
    /// per block, the lowest block on equal scores. (An empty block is found by greedy's
    /// index first.)
    pub(in crate::ftl) fn best_cost_benefit(&self, plane: PlaneId, clock: u64) -> Option<BlockId> {
        let cb = self.cost_benefit.as_ref().expect("cost-benefit index kept");
        let ppb = self.pages_per_block as f64;
        let mut best: Option<(f64, u32)> = None;
        for (v, set) in cb[plane.idx()]
            .iter()
            .enumerate()
            .take(self.pages_per_block as usize)
            .skip(1)
        {
            let Some(&(stamp, b)) = set.first() else {
                continue;
            };
            let age = (clock - stamp) as f64 + 1.0;
            let u = v as f64 / ppb;
            let score = age * (1.0 - u) / (2.0 * u);
            if best.is_none_or(|(s, bb)| score > s || (score == s && b < bb)) {
                best = Some((score, b));
            }
        }
        best.map(|(_, b)| BlockId(b))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Trees of infinite keys take no memory, answer none, and stay so when a key is set
    /// to infinity; a finite key gives them their nodes.
    #[test]
    fn min_trees_of_infinite_keys_hold_nothing_until_a_finite_key() {
        let mut t = MinTrees::new(3, 6);
        assert!(t.keys.is_empty() && t.nodes.is_empty());
        t.set(2, 5, INF);
        assert!(t.keys.is_empty());
        assert_eq!((t.min(0), t.min(2)), (None, None));
        t.set(2, 5, 9);
        assert_eq!(t.keys.len(), 3 * 8);
        // Stored as complements: every other key, infinite, is the allocator's zero.
        let set: Vec<usize> = (0..t.keys.len()).filter(|&i| t.keys[i] != 0).collect();
        assert_eq!(set, [2 * 8 + 5]);
        assert_eq!((t.min(0), t.min(2)), (None, Some((9, 5))));
        t.set(2, 5, INF);
        assert_eq!(t.min(2), None);
    }

    /// The nodes `fill_infinite` sets by formula are those `build` compares its way to.
    #[test]
    fn infinite_trees_filled_by_formula_are_built_ones() {
        for planes in [1, 3] {
            for blocks in 1..=1024 {
                let mut formula = MinTrees::default();
                formula.reset(planes, blocks);
                formula.materialize();
                let mut built = MinTrees::default();
                built.reset(planes, blocks);
                built.allocate();
                built.build();
                assert_eq!(
                    formula.nodes, built.nodes,
                    "{planes} planes, {blocks} blocks"
                );
                assert_eq!(formula.keys, built.keys);
            }
        }
    }

    #[test]
    fn min_tree_gives_the_lowest_leaf_among_equal_keys() {
        let mut t = MinTrees::new(2, 5);
        assert_eq!(t.min(0), None);
        t.set(0, 3, 7);
        t.set(0, 1, 7);
        t.set(0, 4, 9);
        assert_eq!(t.min(0), Some((7, 1)));
        t.set(0, 1, INF);
        assert_eq!(t.min(0), Some((7, 3)));
        t.set(0, 4, 2);
        assert_eq!(t.min(0), Some((2, 4)));
        assert_eq!(t.min(1), None, "planes are independent");
    }

    #[test]
    fn min_tree_agrees_with_a_scan() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(3);
        let n = 37;
        let mut t = MinTrees::new(1, n);
        let mut keys = vec![INF; n];
        for _ in 0..5000 {
            let i = rng.gen_range(0..n);
            let k = if rng.gen_bool(0.2) {
                INF
            } else {
                rng.gen_range(0..8)
            };
            keys[i] = k;
            t.set(0, i, k);
            let scan = (0..n)
                .filter(|&j| keys[j] != INF)
                .min_by_key(|&j| (keys[j], j))
                .map(|j| (keys[j], j as u32));
            assert_eq!(t.min(0), scan);
        }
    }
}
