//! Block states, each plane's free pool and write frontiers, page allocation and erase.

use super::{PageFtl, NONE};
use crate::ftl::ops::{GcPhase, StreamId};
use crate::ids::{BlockId, PlaneId, Ppn};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlockState {
    Free,
    /// Being written (user or GC frontier).
    Open,
    Closed,
    /// Chosen by GC; its valid pages are being moved out.
    Victim,
}

/// A plane's erased blocks. Without dynamic wear levelling the oldest free block is taken
/// (a FIFO); with it, the one with the fewest erases, the oldest on ties: the least key
/// (erase count, arrival, block).
///
/// The blocks a pool starts with are kept apart, sorted, and taken from the front of that
/// run; only blocks erased later enter a min-heap, and each take compares the two fronts.
/// Keys are unique (arrivals are), so the order is a single heap's. Why: an empty device's
/// pools hold every block (262,144 on the MQSim paper's device), and a heap's pop walked
/// eleven levels of a 32 KiB heap per plane, a cache miss at each: MQSim's first reads of
/// never-written pages take a block every 256 pages (measured: see docs/performance.md).
/// Built from a sorted array, not by insertions, with no allocation per entry.
#[derive(Debug, Clone)]
pub(in crate::ftl) enum FreePool {
    Fifo(VecDeque<u32>),
    ByErase {
        /// The starting blocks.
        run: Run,
        /// Blocks pushed since.
        set: BinaryHeap<Reverse<(u32, u64, u32)>>,
        next: u64,
    },
}

/// A pool's starting blocks (`FreePool::ByErase`), least key first.
#[derive(Debug, Clone)]
pub(in crate::ftl) enum Run {
    /// Blocks `first..first + len` of one erase count, block `first + k` the arrival
    /// `arrival + k`: every plane of a new device, kept as its bounds, where the list took
    /// 16 bytes a block (4 MB on the MQSim paper's device, a third of building it).
    Span {
        erases: u32,
        arrival: u64,
        first: u32,
        len: u32,
    },
    /// Any other start, greatest key first: the next to take is the last.
    List(Vec<(u32, u64, u32)>),
}

impl Run {
    /// Adds the block that arrived `arrival`th, after every block added so far.
    fn push_back(&mut self, erases: u32, arrival: u64, block: u32) {
        if let Run::Span {
            erases: e,
            arrival: a,
            first,
            len,
        } = self
        {
            let k = *len as u64;
            if *len == 0 {
                *self = Run::Span {
                    erases,
                    arrival,
                    first: block,
                    len: 1,
                };
                return;
            }
            if erases == *e && arrival == *a + k && block as u64 == *first as u64 + k {
                *len += 1;
                return;
            }
            let list = (0..*len).map(|j| (*e, *a + j as u64, *first + j)).collect();
            *self = Run::List(list);
        }
        if let Run::List(v) = self {
            v.push((erases, arrival, block));
        }
    }

    /// A list in arrival order, made greatest key first.
    fn sorted(mut self) -> Self {
        if let Run::List(v) = &mut self {
            // Usually already ascending (equal erase counts): reversed in one pass.
            if v.is_sorted() {
                v.reverse();
            } else {
                v.sort_unstable_by(|a, b| b.cmp(a));
            }
        }
        self
    }

    fn len(&self) -> usize {
        match self {
            Run::Span { len, .. } => *len as usize,
            Run::List(v) => v.len(),
        }
    }

    /// The least key.
    #[inline]
    fn front(&self) -> Option<(u32, u64, u32)> {
        match self {
            Run::Span { len: 0, .. } => None,
            Run::Span {
                erases,
                arrival,
                first,
                ..
            } => Some((*erases, *arrival, *first)),
            Run::List(v) => v.last().copied(),
        }
    }

    #[inline]
    fn pop(&mut self) -> Option<u32> {
        match self {
            Run::Span { len: 0, .. } => None,
            Run::Span {
                arrival,
                first,
                len,
                ..
            } => {
                let b = *first;
                (*first, *arrival, *len) = (b + 1, *arrival + 1, *len - 1);
                Some(b)
            }
            Run::List(v) => v.pop().map(|(_, _, b)| b),
        }
    }

    /// (arrival, block) of each.
    fn arrivals(&self) -> Vec<(u64, u32)> {
        match self {
            Run::Span {
                arrival,
                first,
                len,
                ..
            } => (0..*len).map(|k| (arrival + k as u64, first + k)).collect(),
            Run::List(v) => v.iter().map(|&(_, s, b)| (s, b)).collect(),
        }
    }
}

impl FreePool {
    /// A pool of `blocks` (block, erase count) arriving in that order: as pushing each, in
    /// bulk.
    pub(in crate::ftl) fn from_blocks(
        by_erase: bool,
        blocks: impl Iterator<Item = (u32, u32)>,
    ) -> Self {
        if by_erase {
            let mut run = Run::Span {
                erases: 0,
                arrival: 0,
                first: 0,
                len: 0,
            };
            let mut next = 0;
            for (b, e) in blocks {
                run.push_back(e, next, b);
                next += 1;
            }
            FreePool::ByErase {
                run: run.sorted(),
                set: BinaryHeap::new(),
                next,
            }
        } else {
            FreePool::Fifo(blocks.map(|(b, _)| b).collect())
        }
    }
    pub(in crate::ftl) fn len(&self) -> usize {
        match self {
            FreePool::Fifo(q) => q.len(),
            FreePool::ByErase { run, set, .. } => run.len() + set.len(),
        }
    }
    pub(in crate::ftl) fn push(&mut self, block: u32, erases: u32) {
        match self {
            FreePool::Fifo(q) => q.push_back(block),
            FreePool::ByErase { set, next, .. } => {
                set.push(Reverse((erases, *next, block)));
                *next += 1;
            }
        }
    }
    #[inline]
    pub(in crate::ftl) fn pop(&mut self) -> Option<u32> {
        match self {
            FreePool::Fifo(q) => q.pop_front(),
            FreePool::ByErase { run, set, .. } => {
                let from_run = match (run.front(), set.peek()) {
                    (Some(r), Some(Reverse(h))) => r < *h,
                    (r, _) => r.is_some(),
                };
                match from_run {
                    true => run.pop(),
                    false => set.pop().map(|Reverse((_, _, b))| b),
                }
            }
        }
    }
    /// The blocks in arrival order (oldest first), as snapshots store them.
    pub(in crate::ftl) fn in_arrival_order(&self) -> Vec<u32> {
        match self {
            FreePool::Fifo(q) => q.iter().copied().collect(),
            FreePool::ByErase { run, set, .. } => {
                let mut v = run.arrivals();
                v.extend(set.iter().map(|&Reverse((_, s, b))| (s, b)));
                v.sort_unstable();
                v.into_iter().map(|(_, b)| b).collect()
            }
        }
    }
}

#[derive(Debug, Clone)]
pub(in crate::ftl) struct PlaneState {
    pub(in crate::ftl) free: FreePool,
    /// The open block of each write stream (NONE: the stream takes a free block next).
    pub(in crate::ftl) open: [u32; StreamId::COUNT],
    pub(in crate::ftl) gc: GcPhase,
    /// GC runs since the last static wear-levelling check.
    pub(in crate::ftl) runs_since_wl: u32,
}

impl PageFtl {
    /// Rebuilds each plane's free pool (in block order), finds its open user block and
    /// rebuilds the victim indexes from the block arrays, after preconditioning set them
    /// directly.
    pub fn rebuild_planes(&mut self) {
        let bpp = self.geo.blocks_per_plane;
        self.planes.clear();
        for p in 0..self.geo.planes() {
            let first = p * bpp;
            let free = FreePool::from_blocks(
                self.wl_dynamic,
                (first..first + bpp)
                    .filter(|&b| self.block_state[b as usize] == BlockState::Free)
                    .map(|b| (b, self.erase_count[b as usize])),
            );
            // A built state's open blocks, in stream order: the user frontier first, then
            // the reclaim one.
            let mut blocks =
                (first..first + bpp).filter(|&b| self.block_state[b as usize] == BlockState::Open);
            let open = std::array::from_fn(|_| blocks.next().unwrap_or(NONE));
            debug_assert!(
                blocks.next().is_none(),
                "plane {p}: more open blocks than streams"
            );
            self.planes.push(PlaneState {
                free,
                open,
                gc: GcPhase::Idle,
                runs_since_wl: 0,
            });
        }
        self.rebuild_index();
    }

    /// `rebuild_planes` of an erased device (`PageFtl::new`): every block free and never
    /// erased, none open or closed, so the pools (in block order) and the indexes follow
    /// from the geometry, without reading the block arrays. Those are fresh memory, which
    /// the system maps page by page as it is read (measured: 1.1 ms of the 10 ms build of
    /// MQSim's 262,144-block device under `--mqsim-compat`).
    pub(in crate::ftl) fn build_erased_planes(&mut self) {
        let bpp = self.geo.blocks_per_plane;
        self.planes.clear();
        for p in 0..self.geo.planes() {
            let first = p * bpp;
            let blocks = (first..first + bpp).map(|b| (b, 0));
            self.planes.push(PlaneState {
                free: FreePool::from_blocks(self.wl_dynamic, blocks),
                open: [NONE; StreamId::COUNT],
                gc: GcPhase::Idle,
                runs_since_wl: 0,
            });
        }
        self.index.rebuild_erased(&self.geo);
    }

    /// Rebuilds the victim indexes from the block arrays (after a snapshot load).
    pub(in crate::ftl) fn rebuild_index(&mut self) {
        let mut index = std::mem::take(&mut self.index);
        index.rebuild(self);
        self.index = index;
    }

    /// Free pages of a plane: free blocks plus the unwritten tail of its open blocks.
    pub fn free_pages(&self, plane: PlaneId) -> u64 {
        let ps = &self.planes[plane.idx()];
        let ppb = self.geo.pages_per_block as u64;
        let mut n = ps.free.len() as u64 * ppb;
        for &b in &ps.open {
            if b != NONE {
                n += ppb - self.written[b as usize] as u64;
            }
        }
        n
    }

    /// Whether a plane is down to its GC reserve (user writes to it must wait).
    pub fn at_reserve(&self, plane: PlaneId) -> bool {
        !self.in_place && self.planes[plane.idx()].free.len() <= self.reserve_blocks as usize
    }

    /// Page offset the next write of `stream` in `plane` would get, or None if it must wait
    /// (only the reclaim stream may take the GC reserve).
    #[inline]
    pub fn next_page_offset(&self, plane: PlaneId, stream: StreamId) -> Option<u32> {
        if self.in_place {
            // A write goes to its page's home, always there: multi-plane partners need no
            // common offset, and the one page type makes the offset's timing the same.
            return Some(0);
        }
        let ps = &self.planes[plane.idx()];
        let open = ps.open[stream.idx()];
        if open != NONE {
            return Some(self.written[open as usize]);
        }
        let floor = if stream == StreamId::RECLAIM {
            0
        } else {
            self.reserve_blocks as usize
        };
        (ps.free.len() > floor).then_some(0)
    }

    /// Takes the next free page of `stream` in `plane`. Call only after `next_page_offset`
    /// said one is available.
    pub(in crate::ftl) fn allocate(&mut self, plane: PlaneId, stream: StreamId) -> Ppn {
        let ppb = self.geo.pages_per_block;
        let ps = &mut self.planes[plane.idx()];
        let open = &mut ps.open[stream.idx()];
        if *open == NONE {
            let b = ps.free.pop().expect("allocate called without a free block");
            self.block_state[b as usize] = BlockState::Open;
            *open = b;
        }
        let b = *open;
        let w = self.written[b as usize];
        self.written[b as usize] = w + 1;
        self.clock += 1;
        if w + 1 == ppb {
            // Full: no longer a frontier. It becomes Closed (and enters the indexes) in
            // `program`, once the page is mapped, because mapping can invalidate the page's
            // previous copy in this very block.
            *open = NONE;
            self.close_stamp[b as usize] = self.clock;
            self.mod_stamp[b as usize] = self.clock;
        }
        Ppn(b * ppb + w)
    }

    /// Closes a block whose last page was just programmed and mapped, and enters it into the
    /// victim indexes.
    pub(in crate::ftl) fn close(&mut self, b: BlockId) {
        let i = b.idx();
        self.block_state[i] = BlockState::Closed;
        self.index.closed(
            b,
            self.valid[i],
            self.close_stamp[i],
            self.mod_stamp[i],
            self.erase_count[i],
        );
    }

    /// Marks a closed block as GC's victim: it leaves every victim index.
    pub(in crate::ftl) fn make_victim(&mut self, b: BlockId) {
        let i = b.idx();
        self.index
            .left_closed(b, self.valid[i], self.mod_stamp[i], self.erase_count[i]);
        self.block_state[i] = BlockState::Victim;
    }

    /// Returns an erased block to its plane's free pool.
    pub(in crate::ftl) fn erase(&mut self, block: BlockId) {
        let b = block.idx();
        debug_assert_eq!(self.valid[b], 0, "erasing a block with valid pages");
        debug_assert_eq!(
            self.block_state[b],
            BlockState::Victim,
            "erasing a non-victim"
        );
        self.written[b] = 0;
        self.erase_count[b] += 1;
        self.block_state[b] = BlockState::Free;
        let plane = block.0 / self.geo.blocks_per_plane;
        self.index.erased(PlaneId(plane), self.erase_count[b]);
        self.planes[plane as usize]
            .free
            .push(block.0, self.erase_count[b]);
    }
}

#[cfg(test)]
mod tests {
    use super::{FreePool, Run};
    use proptest::prelude::*;
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;

    proptest! {
        /// The pool takes blocks in the order one min-heap of (erase count, arrival, block)
        /// gives, whatever the starting blocks (consecutive or not) and erase counts (equal or
        /// not) and the pushes and pops in between; a start of consecutive blocks of one erase
        /// count is kept as a span.
        #[test]
        fn by_erase_takes_the_least_key_as_one_heap_would(
            start in prop_oneof![
                proptest::collection::vec(0u32..4, 0..40),
                (0u32..4, 0usize..40).prop_map(|(e, n)| vec![e; n]),
            ],
            first in 0u32..100,
            gap in proptest::option::of(0usize..40),
            ops in proptest::collection::vec(proptest::option::of(0u32..6), 0..120),
        ) {
            let blocks: Vec<(u32, u32)> = start
                .iter()
                .enumerate()
                .map(|(k, &e)| (first + k as u32 + gap.is_some_and(|g| k >= g) as u32, e))
                .collect();
            let mut pool = FreePool::from_blocks(true, blocks.iter().copied());
            let span = start.windows(2).all(|w| w[0] == w[1])
                && gap.is_none_or(|g| g == 0 || g >= start.len());
            prop_assert_eq!(
                matches!(&pool, FreePool::ByErase { run: Run::Span { .. }, .. }),
                span
            );
            let mut heap: BinaryHeap<Reverse<(u32, u64, u32)>> = blocks
                .iter()
                .enumerate()
                .map(|(k, &(b, e))| Reverse((e, k as u64, b)))
                .collect();
            let mut next = start.len() as u64;
            let mut fresh = 1000u32;
            for op in ops {
                match op {
                    Some(e) => {
                        pool.push(fresh, e);
                        heap.push(Reverse((e, next, fresh)));
                        next += 1;
                        fresh += 1;
                    }
                    None => {
                        prop_assert_eq!(pool.pop(), heap.pop().map(|Reverse((_, _, b))| b));
                    }
                }
                prop_assert_eq!(pool.len(), heap.len());
            }
            let mut order: Vec<(u64, u32)> =
                heap.iter().map(|&Reverse((_, s, b))| (s, b)).collect();
            order.sort_unstable();
            prop_assert_eq!(
                pool.in_arrival_order(),
                order.into_iter().map(|(_, b)| b).collect::<Vec<_>>()
            );
        }
    }
}

#[cfg(test)]
mod erased_build_tests {
    use crate::config::Config;
    use crate::ftl::page::PageFtl;
    use crate::settings::Settings;

    /// `PageFtl::new` builds an erased device's pools and indexes from the geometry: the
    /// same state as rebuilding them from its block arrays, under each policy that keeps an
    /// index of its own and either free-pool order.
    #[test]
    fn an_erased_build_equals_a_rebuild_from_the_block_arrays() {
        for (policy, wl_static, wl_dynamic) in [
            ("greedy", false, true),
            ("greedy", false, false),
            ("fifo", true, true),
            ("cost_benefit", false, true),
            ("d_choices", true, false),
        ] {
            let o: Vec<String> = [
                "flash.channels=2".to_string(),
                "flash.blocks_per_plane=256".to_string(),
                format!("ftl.gc_policy=\"{policy}\""),
                format!("ftl.wl_static={wl_static}"),
                format!("ftl.wl_dynamic={wl_dynamic}"),
            ]
            .to_vec();
            let c = Config::load_preset("mqsim-paper", &o).unwrap();
            let s = Settings::resolve(&c);
            let built = PageFtl::new(&s);
            let mut rebuilt = PageFtl::unbuilt(&s);
            rebuilt.rebuild_planes();
            let case = format!("{policy}, wl_static {wl_static}, wl_dynamic {wl_dynamic}");
            assert_eq!(
                format!("{:?}", built.planes),
                format!("{:?}", rebuilt.planes),
                "{case}"
            );
            assert_eq!(
                format!("{:?}", built.index),
                format!("{:?}", rebuilt.index),
                "{case}"
            );
            assert_eq!(built.planes.len(), s.geo.planes() as usize, "{case}");
        }
    }
}
