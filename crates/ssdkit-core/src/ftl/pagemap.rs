//! Storage of the page map: where each logical page lives (L2P) and which logical page each
//! physical page holds (P2L). The FTL's mapping operations (`mapping.rs`) and everything else
//! reach the tables only through this type, so their representation can change in one place.
//!
//! Today both are dense: one u32 per logical page (the host's pages, then the translation
//! pages of a cached map) and one per physical page, `NONE` where unmapped.

use super::NONE;

pub struct PageMap {
    l2p: Vec<u32>,
    p2l: Vec<u32>,
}

impl PageMap {
    /// Nothing mapped: `logical` logical pages (host and translation pages), `physical` pages.
    pub fn new(logical: usize, physical: usize) -> Self {
        Self {
            l2p: vec![NONE; logical],
            p2l: vec![NONE; physical],
        }
    }

    /// The physical page of logical page `l`, NONE if unmapped.
    #[inline]
    pub fn ppn(&self, l: u32) -> u32 {
        self.l2p[l as usize]
    }

    /// The logical page physical page `p` holds, NONE if it holds none (free or invalid).
    #[inline]
    pub fn lpn(&self, p: u32) -> u32 {
        self.p2l[p as usize]
    }

    /// Logical page `l` is in physical page `p` (both directions).
    #[inline]
    pub fn link(&mut self, l: u32, p: u32) {
        self.l2p[l as usize] = p;
        self.p2l[p as usize] = l;
    }

    /// Logical page `l` is nowhere (trimmed).
    #[inline]
    pub fn clear_logical(&mut self, l: u32) {
        self.l2p[l as usize] = NONE;
    }

    /// Physical page `p` holds nothing valid.
    #[inline]
    pub fn clear_physical(&mut self, p: u32) {
        self.p2l[p as usize] = NONE;
    }

    /// Logical pages (host and translation pages).
    pub fn logical_len(&self) -> usize {
        self.l2p.len()
    }

    pub fn physical_len(&self) -> usize {
        self.p2l.len()
    }

    /// L2P as a table, for checks and tests.
    pub fn l2p(&self) -> &[u32] {
        &self.l2p
    }

    /// P2L as a table, for checks and snapshots.
    pub fn p2l(&self) -> &[u32] {
        &self.p2l
    }

    /// P2L to fill from a snapshot; then `rebuild_l2p`.
    pub fn p2l_mut(&mut self) -> &mut [u32] {
        &mut self.p2l
    }

    /// L2P from P2L (after `p2l_mut`): the (physical, logical) pair of the first entry that
    /// names a logical page out of range or one already placed, if any.
    pub fn rebuild_l2p(&mut self) -> Result<(), (usize, u32)> {
        self.l2p.fill(NONE);
        for (ppa, &lpa) in self.p2l.iter().enumerate() {
            if lpa == NONE {
                continue;
            }
            if lpa as usize >= self.l2p.len() || self.l2p[lpa as usize] != NONE {
                return Err((ppa, lpa));
            }
            self.l2p[lpa as usize] = ppa as u32;
        }
        Ok(())
    }
}
