use super::allocation::Striping;
use crate::config::{Config, GcPolicy, Placement};
use crate::engine::{derive_stream, Stream as Rng};
use crate::flash::Geometry;
use std::collections::VecDeque;

/// Random stream id of GC victim sampling (flows use 1..=flows).
pub const GC_STREAM: u64 = 0x6763_0000;

/// Marks an unmapped logical page or a physical page that holds no valid data.
pub const NONE: u32 = u32::MAX;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlockState {
    Free,
    /// Being written (user or GC frontier).
    Open,
    Closed,
    /// Chosen by GC; its valid pages are being moved out.
    Victim,
}

/// Which write frontier of a plane a page goes to. GC writes have their own so hot user data
/// and cold moved data do not share blocks, and so GC can always proceed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    User,
    Gc,
}

#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct FtlStats {
    /// Pages programmed for host writes (including read-modify-write of partial pages).
    pub user_page_writes: u64,
    /// Pages moved by GC (one read and one program each).
    pub gc_page_moves: u64,
    /// Victim blocks collected (including static wear-levelling migrations).
    pub gc_runs: u64,
    /// Of `gc_runs`, those started by idle-time (background) GC.
    pub gc_background_runs: u64,
    /// Of `gc_page_moves`, those done by copyback inside the plane.
    pub gc_copyback_moves: u64,
    /// Blocks migrated by static wear levelling.
    pub wl_migrations: u64,
    /// Mapped logical pages unmapped by TRIM.
    pub trimmed_pages: u64,
}

#[derive(Debug, Clone)]
pub struct PlaneState {
    pub free_blocks: VecDeque<u32>,
    pub user_open: u32,
    pub gc_open: u32,
    /// GC victim being collected, or NONE.
    pub gc_victim: u32,
    /// Moves of the current victim not yet finished.
    pub gc_pending: u32,
    /// GC runs since the last static wear-levelling check.
    pub runs_since_wl: u32,
}

/// Page-level mapping and block bookkeeping. All per-page and per-block state is flat arrays
/// of integers indexed by logical page, physical page or global block number.
pub struct Ftl {
    pub geo: Geometry,
    pub logical_pages: u32,
    pub l2p: Vec<u32>,
    pub p2l: Vec<u32>,
    /// Pages written in each block (the write pointer).
    pub written: Vec<u32>,
    pub valid: Vec<u32>,
    pub erase_count: Vec<u32>,
    pub block_state: Vec<BlockState>,
    /// Page-write clock (user and GC programs) when each block was closed: FIFO order.
    pub close_stamp: Vec<u64>,
    /// Clock when each block last changed (closed or lost a valid page): cost-benefit age.
    pub mod_stamp: Vec<u64>,
    /// Page programs so far (user and GC): the FTL's notion of time for GC policies.
    pub clock: u64,
    pub gc_policy: GcPolicy,
    pub gc_d: u32,
    pub gc_rng: Rng,
    pub wl_dynamic: bool,
    pub wl_static: bool,
    pub wl_static_threshold: u32,
    pub wl_static_interval: u32,
    pub planes: Vec<PlaneState>,
    pub striping: Striping,
    pub placement: Placement,
    rr_cursor: u32,
    pub reserve_blocks: u32,
    pub gc_start_free_pages: u64,
    pub stats: FtlStats,
}

impl Ftl {
    /// An erased device: nothing mapped, every block free. Preconditioning fills it.
    pub fn new(c: &Config) -> Self {
        let geo = Geometry::from_config(&c.flash);
        let logical_pages = super::logical_pages(c) as u32;
        let nblocks = geo.total_blocks() as usize;
        let mut ftl = Self {
            geo,
            logical_pages,
            l2p: vec![NONE; logical_pages as usize],
            p2l: vec![NONE; geo.total_pages() as usize],
            written: vec![0; nblocks],
            valid: vec![0; nblocks],
            erase_count: vec![0; nblocks],
            block_state: vec![BlockState::Free; nblocks],
            close_stamp: vec![0; nblocks],
            mod_stamp: vec![0; nblocks],
            clock: 0,
            gc_policy: c.ftl.gc_policy,
            gc_d: c.ftl.gc_d,
            gc_rng: derive_stream(c.run.seed, GC_STREAM),
            wl_dynamic: c.ftl.wl_dynamic,
            wl_static: c.ftl.wl_static,
            wl_static_threshold: c.ftl.wl_static_threshold,
            wl_static_interval: c.ftl.wl_static_interval,
            planes: Vec::with_capacity(geo.planes() as usize),
            striping: Striping::new(&c.ftl.allocation_order, &geo),
            placement: c.ftl.placement,
            rr_cursor: 0,
            reserve_blocks: super::reserve_blocks(c),
            gc_start_free_pages: super::gc_start_free_pages(c),
            stats: FtlStats::default(),
        };
        ftl.rebuild_planes();
        ftl
    }

    /// Rebuilds each plane's free list (in block order) and finds its open user block from
    /// the block states, after preconditioning set them directly.
    pub fn rebuild_planes(&mut self) {
        let bpp = self.geo.blocks_per_plane;
        self.planes.clear();
        for p in 0..self.geo.planes() {
            let first = p * bpp;
            let free = (first..first + bpp)
                .filter(|&b| self.block_state[b as usize] == BlockState::Free)
                .collect();
            let user_open = (first..first + bpp)
                .find(|&b| self.block_state[b as usize] == BlockState::Open)
                .unwrap_or(NONE);
            self.planes.push(PlaneState {
                free_blocks: free,
                user_open,
                gc_open: NONE,
                gc_victim: NONE,
                gc_pending: 0,
                runs_since_wl: 0,
            });
        }
    }

    /// Maps every logical page without simulating a write: logical page l goes to stripe
    /// unit l mod planes, and fills that plane's blocks in order. O(pages), no allocation
    /// beyond the tables themselves. Call on an erased device, then `rebuild_planes`.
    pub fn fill_sequential(&mut self) {
        let g = self.geo;
        let planes = g.planes();
        let ppp = g.pages_per_plane();
        let stripe: Vec<u32> = (0..planes)
            .map(|k| self.striping.plane_of_index(&g, k))
            .collect();
        for lpa in 0..self.logical_pages {
            let plane = stripe[(lpa % planes) as usize];
            let local = lpa / planes;
            let ppa = plane * ppp + local;
            self.l2p[lpa as usize] = ppa;
            self.p2l[ppa as usize] = lpa;
        }
        for p in 0..planes {
            let n = (self.logical_pages / planes
                + u32::from(p_index(&stripe, p) < self.logical_pages % planes))
                as u64;
            let first = p * g.blocks_per_plane;
            let ppb = g.pages_per_block as u64;
            for k in 0..n.div_ceil(ppb) {
                let b = (first as u64 + k) as usize;
                let w = (n - k * ppb).min(ppb) as u32;
                self.written[b] = w;
                self.valid[b] = w;
                self.block_state[b] = if w as u64 == ppb {
                    BlockState::Closed
                } else {
                    BlockState::Open
                };
            }
        }
    }

    /// Plane of a logical page under static striping.
    #[inline]
    pub fn static_plane(&self, lpa: u32) -> u32 {
        self.striping
            .plane_of_index(&self.geo, lpa % self.geo.planes())
    }

    /// Plane a new user write of `lpa` goes to.
    pub fn target_plane(&mut self, lpa: u32) -> u32 {
        match self.placement {
            Placement::Static => self.static_plane(lpa),
            Placement::Dynamic => {
                let n = self.geo.planes();
                // Prefer planes that are not short of free space, so GC load spreads out.
                for _ in 0..n {
                    let k = self.rr_cursor;
                    self.rr_cursor = (self.rr_cursor + 1) % n;
                    let p = self.striping.plane_of_index(&self.geo, k);
                    if self.free_pages(p) >= self.gc_start_free_pages {
                        return p;
                    }
                }
                let k = self.rr_cursor;
                self.rr_cursor = (self.rr_cursor + 1) % n;
                self.striping.plane_of_index(&self.geo, k)
            }
        }
    }

    /// Plane a new user write of `lpa` goes to when its flow is pinned to `set` (planes in
    /// allocation order): static placement stripes over the set, dynamic placement turns
    /// through it with the flow's own cursor.
    pub fn target_plane_in(&mut self, lpa: u32, set: &[u32], cursor: &mut u32) -> u32 {
        let n = set.len() as u32;
        match self.placement {
            Placement::Static => set[(lpa % n) as usize],
            Placement::Dynamic => {
                for _ in 0..n {
                    let p = set[*cursor as usize];
                    *cursor = (*cursor + 1) % n;
                    if self.free_pages(p) >= self.gc_start_free_pages {
                        return p;
                    }
                }
                let p = set[*cursor as usize];
                *cursor = (*cursor + 1) % n;
                p
            }
        }
    }

    /// Free pages of a plane: free blocks plus the unwritten tail of its open blocks.
    pub fn free_pages(&self, plane: u32) -> u64 {
        let ps = &self.planes[plane as usize];
        let ppb = self.geo.pages_per_block as u64;
        let mut n = ps.free_blocks.len() as u64 * ppb;
        for b in [ps.user_open, ps.gc_open] {
            if b != NONE {
                n += ppb - self.written[b as usize] as u64;
            }
        }
        n
    }

    /// Page offset the next write of `stream` in `plane` would get, or None if it must wait
    /// (user writes may not take the GC reserve).
    pub fn next_page_offset(&self, plane: u32, stream: Stream) -> Option<u32> {
        let ps = &self.planes[plane as usize];
        let open = match stream {
            Stream::User => ps.user_open,
            Stream::Gc => ps.gc_open,
        };
        if open != NONE {
            return Some(self.written[open as usize]);
        }
        let floor = match stream {
            Stream::User => self.reserve_blocks as usize,
            Stream::Gc => 0,
        };
        if ps.free_blocks.len() > floor {
            Some(0)
        } else {
            None
        }
    }

    /// Takes the next free page of `stream` in `plane`. Call only after `next_page_offset`
    /// said one is available.
    pub fn allocate(&mut self, plane: u32, stream: Stream) -> u32 {
        let ppb = self.geo.pages_per_block;
        let ps = &mut self.planes[plane as usize];
        let open = match stream {
            Stream::User => &mut ps.user_open,
            Stream::Gc => &mut ps.gc_open,
        };
        if *open == NONE {
            let i = if self.wl_dynamic {
                // Fewest erases; the oldest free block on ties. The free list is short in
                // steady state, so a scan is cheaper than keeping it ordered.
                let mut best = 0;
                for (k, &b) in ps.free_blocks.iter().enumerate() {
                    if self.erase_count[b as usize]
                        < self.erase_count[ps.free_blocks[best] as usize]
                    {
                        best = k;
                    }
                }
                best
            } else {
                0
            };
            let b = ps
                .free_blocks
                .remove(i)
                .expect("allocate called without a free block");
            self.block_state[b as usize] = BlockState::Open;
            *open = b;
        }
        let b = *open;
        let w = self.written[b as usize];
        self.written[b as usize] = w + 1;
        self.clock += 1;
        if w + 1 == ppb {
            self.block_state[b as usize] = BlockState::Closed;
            self.close_stamp[b as usize] = self.clock;
            self.mod_stamp[b as usize] = self.clock;
            *open = NONE;
        }
        b * ppb + w
    }

    /// Points `lpa` at `ppa`, invalidating its previous location.
    #[inline]
    pub fn map(&mut self, lpa: u32, ppa: u32) {
        let old = self.l2p[lpa as usize];
        if old != NONE {
            self.invalidate(old);
        }
        self.l2p[lpa as usize] = ppa;
        self.p2l[ppa as usize] = lpa;
        self.valid[self.geo.block_of_ppa(ppa) as usize] += 1;
    }

    #[inline]
    fn invalidate(&mut self, ppa: u32) {
        self.p2l[ppa as usize] = NONE;
        let b = self.geo.block_of_ppa(ppa) as usize;
        self.valid[b] -= 1;
        self.mod_stamp[b] = self.clock;
    }

    /// TRIM of one logical page: its physical page becomes invalid (GC will not move it) and
    /// reads of it complete from the mapping table. Returns whether it was mapped.
    pub fn trim(&mut self, lpa: u32) -> bool {
        let old = self.l2p[lpa as usize];
        if old == NONE {
            return false;
        }
        self.invalidate(old);
        self.l2p[lpa as usize] = NONE;
        self.stats.trimmed_pages += 1;
        true
    }

    /// Returns an erased block to its plane's free pool.
    pub fn erase(&mut self, block: u32) {
        let b = block as usize;
        debug_assert_eq!(self.valid[b], 0, "erasing a block with valid pages");
        self.written[b] = 0;
        self.erase_count[b] += 1;
        self.block_state[b] = BlockState::Free;
        let plane = block / self.geo.blocks_per_plane;
        self.planes[plane as usize].free_blocks.push_back(block);
    }

    /// Checks that the mapping and block state agree. Costs O(pages); for tests.
    pub fn check_invariants(&self) -> Result<(), String> {
        let g = self.geo;
        for (lpa, &ppa) in self.l2p.iter().enumerate() {
            if ppa != NONE && self.p2l[ppa as usize] != lpa as u32 {
                return Err(format!(
                    "L2P[{lpa}] = {ppa} but P2L[{ppa}] = {}",
                    self.p2l[ppa as usize]
                ));
            }
        }
        let mut valid = vec![0u32; self.valid.len()];
        for (ppa, &lpa) in self.p2l.iter().enumerate() {
            if lpa == NONE {
                continue;
            }
            if lpa >= self.logical_pages || self.l2p[lpa as usize] != ppa as u32 {
                return Err(format!(
                    "P2L[{ppa}] = {lpa} is not the live copy (duplicate or stale)"
                ));
            }
            let b = g.block_of_ppa(ppa as u32);
            if g.page_in_block(ppa as u32) >= self.written[b as usize] {
                return Err(format!(
                    "valid page {ppa} beyond the write pointer of block {b}"
                ));
            }
            valid[b as usize] += 1;
        }
        if valid != self.valid {
            let b = (0..valid.len())
                .find(|&b| valid[b] != self.valid[b])
                .unwrap();
            return Err(format!(
                "block {b}: valid count {} but {} valid pages",
                self.valid[b], valid[b]
            ));
        }
        for (p, ps) in self.planes.iter().enumerate() {
            for (b, what) in [(ps.user_open, "user"), (ps.gc_open, "GC")] {
                if b != NONE && self.block_state[b as usize] != BlockState::Open {
                    return Err(format!("plane {p}: {what} open block {b} is not open"));
                }
            }
            for &b in &ps.free_blocks {
                if self.block_state[b as usize] != BlockState::Free || self.written[b as usize] != 0
                {
                    return Err(format!("plane {p}: free-list block {b} is not erased"));
                }
                if b / g.blocks_per_plane != p as u32 {
                    return Err(format!(
                        "plane {p}: free-list block {b} belongs to another plane"
                    ));
                }
            }
        }
        for (b, s) in self.block_state.iter().enumerate() {
            if *s == BlockState::Victim
                && self.planes[b / g.blocks_per_plane as usize].gc_victim != b as u32
            {
                return Err(format!(
                    "block {b} is a GC victim but no collection of it is in progress (leaked)"
                ));
            }
        }
        let frees = self
            .block_state
            .iter()
            .filter(|&&s| s == BlockState::Free)
            .count();
        let listed: usize = self.planes.iter().map(|p| p.free_blocks.len()).sum();
        if frees != listed {
            return Err(format!("{frees} free blocks but {listed} on free lists"));
        }
        Ok(())
    }

    /// Logical pages currently mapped.
    pub fn mapped_pages(&self) -> u64 {
        self.l2p.iter().filter(|&&p| p != NONE).count() as u64
    }
}

/// Position of plane `p` in the stripe (inverse of the stripe table).
fn p_index(stripe: &[u32], p: u32) -> u32 {
    stripe.iter().position(|&x| x == p).unwrap() as u32
}

impl Ftl {
    /// Erase-count distribution over every block: min, mean, max, standard deviation and a
    /// histogram of at most 32 equal-width integer bins (`bin_start[i]` is the lowest count
    /// of bin i, all bins `bin_width` wide).
    pub fn erase_count_summary(&self) -> serde_json::Value {
        let n = self.erase_count.len() as f64;
        let min = self.erase_count.iter().copied().min().unwrap_or(0);
        let max = self.erase_count.iter().copied().max().unwrap_or(0);
        let sum: u64 = self.erase_count.iter().map(|&e| e as u64).sum();
        let mean = sum as f64 / n;
        let var = self
            .erase_count
            .iter()
            .map(|&e| (e as f64 - mean).powi(2))
            .sum::<f64>()
            / n;
        let width = (max - min + 1).div_ceil(32).max(1);
        let bins = ((max - min) / width + 1) as usize;
        let mut count = vec![0u64; bins];
        for &e in &self.erase_count {
            count[((e - min) / width) as usize] += 1;
        }
        let start: Vec<u32> = (0..bins as u32).map(|i| min + i * width).collect();
        serde_json::json!({
            "blocks": self.erase_count.len(),
            "min": min,
            "mean": mean,
            "max": max,
            "std": var.sqrt(),
            "histogram": {"bin_start": start, "bin_width": width, "count": count},
        })
    }
}
