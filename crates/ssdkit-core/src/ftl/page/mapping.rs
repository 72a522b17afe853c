//! The page map's operations: translation, mapping a write, invalidation and TRIM go through
//! here (the tables themselves are `pagemap::PageMap`), and so does every change of a block's
//! valid count, which the victim indexes follow.

use super::blocks::BlockState;
use super::pagemap::Base;
use super::{PageFtl, NONE};
use crate::ids::{BlockId, Lpn, PlaneId, Ppn};

impl PageFtl {
    /// Points `lpn` at `ppn`, invalidating its previous location.
    #[inline]
    pub(in crate::ftl) fn map(&mut self, lpn: Lpn, ppn: Ppn) {
        let old = self.map.ppn(lpn.0);
        if old != NONE {
            self.invalidate(Ppn(old));
        }
        self.map.link(lpn.0, ppn.0);
        // The page was just programmed, so its block is an open frontier: no index holds it.
        self.valid[self.geo.block_of_ppa(ppn.0) as usize] += 1;
    }

    #[inline]
    fn invalidate(&mut self, ppn: Ppn) {
        self.map.clear_physical(ppn.0);
        let b = self.geo.block_of_ppa(ppn.0) as usize;
        let v = self.valid[b];
        self.valid[b] = v - 1;
        if self.block_state[b] == BlockState::Closed {
            self.index
                .valid_dropped(BlockId(b as u32), v, self.mod_stamp[b], self.clock);
            if v == self.geo.pages_per_block {
                self.note_collectable(PlaneId(b as u32 / self.geo.blocks_per_plane));
            }
        }
        self.mod_stamp[b] = self.clock;
    }

    /// TRIM of one logical page: its physical page becomes invalid (GC will not move it) and
    /// reads of it complete from the mapping table. Returns whether it was mapped.
    pub fn trim(&mut self, lpn: Lpn) -> bool {
        let old = self.map.ppn(lpn.0);
        if old == NONE {
            return false;
        }
        self.invalidate(Ppn(old));
        self.map.clear_logical(lpn.0);
        if !self.map.masks_empty() {
            self.map.clear_mask(lpn.0);
        }
        self.stats.trimmed_pages += 1;
        true
    }

    /// Maps every logical page without simulating a write: logical page l goes to stripe
    /// unit l mod planes, and fills that plane's blocks in order. O(pages), no allocation
    /// beyond the tables themselves. Call on an erased device, then `rebuild_planes`.
    pub fn fill_sequential(&mut self, occupancy: f64) {
        let g = self.geo;
        let planes = g.planes();
        let ppp = g.pages_per_plane();
        // The first `occupancy` of the logical space: striping spreads it evenly.
        let filled =
            ((self.logical_pages as f64 * occupancy).round() as u32).min(self.logical_pages);
        // A formula, not a table: no per-page work.
        self.map.reset(Base::striped(filled, ppp, &self.stripe));
        for k in 0..planes as usize {
            let n = (filled / planes + u32::from((k as u32) < filled % planes)) as u64;
            self.fill_plane_blocks(self.stripe[k], n);
        }
    }

    /// Marks the first blocks of `plane` as holding its first `n` pages, all valid: full
    /// blocks closed, the last one open.
    fn fill_plane_blocks(&mut self, plane: u32, n: u64) {
        let g = self.geo;
        let first = (plane * g.blocks_per_plane) as u64;
        let ppb = g.pages_per_block as u64;
        for j in 0..n.div_ceil(ppb) {
            let b = (first + j) as usize;
            let w = (n - j * ppb).min(ppb) as u32;
            self.written[b] = w;
            self.valid[b] = w;
            self.block_state[b] = if w as u64 == ppb {
                BlockState::Closed
            } else {
                BlockState::Open
            };
        }
    }

    /// `fill_sequential` with pinned flows: the pages of a pinned flow's logical range (`first`
    /// to `end`, page numbers) go round robin over its planes, as its writes would; the other
    /// pages stripe as usual. Each plane's pages are laid out in the order they come. Fails if
    /// a plane would hold more than its share of the logical space (GC would have no room).
    pub fn fill_sequential_pinned(
        &mut self,
        occupancy: f64,
        pinned: &[(u64, u64, &[u32])],
    ) -> Result<(), String> {
        let g = self.geo;
        let planes = g.planes();
        let ppp = g.pages_per_plane();
        let filled =
            ((self.logical_pages as f64 * occupancy).round() as u32).min(self.logical_pages);
        let share = (self.logical_pages as u64).div_ceil(planes as u64);
        let mut next = vec![0u32; planes as usize];
        let mut cursors = vec![0usize; pinned.len()];
        for lpa in 0..filled {
            let l = lpa as u64;
            let plane = match pinned.iter().position(|&(a, b, _)| (a..b).contains(&l)) {
                Some(i) => {
                    let set = pinned[i].2;
                    let p = set[cursors[i] % set.len()];
                    cursors[i] += 1;
                    p
                }
                None => self.stripe[(lpa % planes) as usize],
            };
            let local = next[plane as usize];
            if local as u64 >= share {
                return Err(format!(
                    "plane {plane} would hold more than its share of the logical space ({share} pages) after sequential preconditioning with pinned flows; lower `precondition.occupancy` or the pinned flows' `range_bytes`, or pin them to more planes"
                ));
            }
            next[plane as usize] += 1;
            self.map.link(lpa, plane * ppp + local);
        }
        for p in 0..planes {
            self.fill_plane_blocks(p, next[p as usize] as u64);
        }
        Ok(())
    }

    /// The physical page of `lpn` on an in-place medium: the page `fill_sequential` gives it
    /// (stripe unit l mod planes, page l / planes of that plane).
    #[inline]
    pub fn home(&self, lpn: Lpn) -> Ppn {
        let planes = self.geo.planes();
        let plane = self.stripe[(lpn.0 % planes) as usize];
        Ppn(plane * self.geo.pages_per_plane() + lpn.0 / planes)
    }

    /// In-place write of `lpn`: its home page, mapped if it was not (never written or
    /// trimmed). Its block is closed, so the victim indexes follow the valid count.
    pub(in crate::ftl) fn program_in_place(&mut self, lpn: Lpn) -> Ppn {
        let home = self.home(lpn);
        self.clock += 1;
        if self.map.ppn(lpn.0) != home.0 {
            debug_assert_eq!(self.map.ppn(lpn.0), NONE);
            let b = self.geo.block_of_ppa(home.0) as usize;
            let id = BlockId(b as u32);
            self.index
                .left_closed(id, self.valid[b], self.mod_stamp[b], self.erase_count[b]);
            self.map.link(lpn.0, home.0);
            self.valid[b] += 1;
            self.mod_stamp[b] = self.clock;
            self.index.closed(
                id,
                self.valid[b],
                self.close_stamp[b],
                self.mod_stamp[b],
                self.erase_count[b],
            );
        }
        home
    }

    /// In-place medium: maps the first `occupancy` of the logical space at home (the layout of
    /// `fill_sequential`), leaving every block closed. Then `rebuild_planes`.
    pub fn fill_in_place(&mut self, occupancy: f64) {
        let g = self.geo;
        let planes = g.planes();
        let filled =
            ((self.logical_pages as f64 * occupancy).round() as u32).min(self.logical_pages);
        // `home` is the striped layout: a formula, and each plane's first pages hold data.
        self.map
            .reset(Base::striped(filled, g.pages_per_plane(), &self.stripe));
        let ppb = g.pages_per_block as u64;
        for k in 0..planes {
            let n = (filled / planes + u32::from(k < filled % planes)) as u64;
            let first = (self.stripe[k as usize] * g.blocks_per_plane) as u64;
            for j in 0..n.div_ceil(ppb) {
                self.valid[(first + j) as usize] += (n - j * ppb).min(ppb) as u32;
            }
        }
    }

    /// Logical pages of the host currently mapped.
    pub fn mapped_pages(&self) -> u64 {
        (0..self.logical_pages)
            .filter(|&l| self.map.ppn(l) != NONE)
            .count() as u64
    }
}
