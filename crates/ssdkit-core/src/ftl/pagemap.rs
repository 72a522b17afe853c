//! Storage of the page map: where each logical page lives (L2P) and which logical page each
//! physical page holds (P2L). The FTL's mapping operations (`mapping.rs`) and everything else
//! reach the tables only through this type, so their representation can change in one place.
//!
//! A layout the FTL can state as a formula is not written out: the map is a `Base` (nothing
//! mapped, or the first pages striped over the planes as sequential preconditioning and an
//! in-place medium lay them out) plus two tables of changes, one entry per logical and per
//! physical page: 0 = as the base says, `GONE` = unmapped (trimmed, invalidated), else the
//! page number + 1. The tables are allocated zeroed, so the operating system gives them
//! memory only where a page changes: building an empty or sequentially filled device does no
//! per-page work, and a run touches the tables only where it writes. A layout with no formula
//! (fast and write preconditioning) is written entry by entry into the change tables.

use super::NONE;

/// Entry of a change table for a page that is unmapped whatever the base says.
const GONE: u32 = u32::MAX;

/// The layout the change tables start from.
#[derive(Debug, Clone)]
pub enum Base {
    /// Nothing mapped.
    Empty,
    /// The first `filled` logical pages, page l on plane `stripe[l mod planes]` at that
    /// plane's page `l / planes` (its blocks filled in order).
    Striped {
        filled: u32,
        planes: u32,
        pages_per_plane: u32,
        stripe: Box<[u32]>,
        /// The stripe unit of each plane (the inverse of `stripe`).
        unit: Box<[u32]>,
    },
}

impl Base {
    /// Logical pages striped from the first; `stripe` gives the plane of each unit.
    pub fn striped(filled: u32, pages_per_plane: u32, stripe: &[u32]) -> Self {
        let mut unit = vec![0u32; stripe.len()].into_boxed_slice();
        for (k, &p) in stripe.iter().enumerate() {
            unit[p as usize] = k as u32;
        }
        Base::Striped {
            filled,
            planes: stripe.len() as u32,
            pages_per_plane,
            stripe: stripe.into(),
            unit,
        }
    }

    #[inline]
    fn ppn(&self, l: u32) -> u32 {
        match self {
            Base::Empty => NONE,
            Base::Striped {
                filled,
                planes,
                pages_per_plane,
                stripe,
                ..
            } => {
                if l < *filled {
                    stripe[(l % planes) as usize] * pages_per_plane + l / planes
                } else {
                    NONE
                }
            }
        }
    }

    #[inline]
    fn lpn(&self, p: u32) -> u32 {
        match self {
            Base::Empty => NONE,
            Base::Striped {
                filled,
                planes,
                pages_per_plane,
                unit,
                ..
            } => {
                let plane = p / pages_per_plane;
                let local = (p % pages_per_plane) as u64;
                let l = local * *planes as u64 + unit[plane as usize] as u64;
                if l < *filled as u64 {
                    l as u32
                } else {
                    NONE
                }
            }
        }
    }
}

pub struct PageMap {
    base: Base,
    /// Changes of L2P (host pages, then the translation pages of a cached map).
    l2p: Vec<u32>,
    /// Changes of P2L.
    p2l: Vec<u32>,
}

#[inline]
fn resolve(v: u32, base: impl FnOnce() -> u32) -> u32 {
    match v {
        0 => base(),
        GONE => NONE,
        _ => v - 1,
    }
}

impl PageMap {
    /// Nothing mapped: `logical` logical pages (host and translation pages), `physical` pages.
    pub fn new(logical: usize, physical: usize) -> Self {
        // Entries hold a page number + 1 and GONE: the largest page number must stay below.
        assert!(physical < GONE as usize - 1 && logical < GONE as usize - 1);
        Self {
            base: Base::Empty,
            l2p: vec![0; logical],
            p2l: vec![0; physical],
        }
    }

    /// Replaces the whole map by `base`, with no changes.
    pub fn reset(&mut self, base: Base) {
        self.base = base;
        self.l2p = vec![0; self.l2p.len()];
        self.p2l = vec![0; self.p2l.len()];
    }

    /// The physical page of logical page `l`, NONE if unmapped.
    #[inline]
    pub fn ppn(&self, l: u32) -> u32 {
        resolve(self.l2p[l as usize], || self.base.ppn(l))
    }

    /// The logical page physical page `p` holds, NONE if it holds none (free or invalid).
    #[inline]
    pub fn lpn(&self, p: u32) -> u32 {
        resolve(self.p2l[p as usize], || self.base.lpn(p))
    }

    /// Logical page `l` is in physical page `p` (both directions).
    #[inline]
    pub fn link(&mut self, l: u32, p: u32) {
        self.l2p[l as usize] = p + 1;
        self.p2l[p as usize] = l + 1;
    }

    /// Logical page `l` is nowhere (trimmed).
    #[inline]
    pub fn clear_logical(&mut self, l: u32) {
        self.l2p[l as usize] = GONE;
    }

    /// Physical page `p` holds nothing valid.
    #[inline]
    pub fn clear_physical(&mut self, p: u32) {
        self.p2l[p as usize] = GONE;
    }

    /// Logical pages (host and translation pages).
    pub fn logical_len(&self) -> usize {
        self.l2p.len()
    }

    pub fn physical_len(&self) -> usize {
        self.p2l.len()
    }

    /// L2P written out (NONE where unmapped), for checks, tests and snapshots: O(pages).
    pub fn l2p(&self) -> Vec<u32> {
        (0..self.l2p.len() as u32).map(|l| self.ppn(l)).collect()
    }

    /// P2L written out (NONE where a page holds nothing valid): O(pages).
    pub fn p2l(&self) -> Vec<u32> {
        (0..self.p2l.len() as u32).map(|p| self.lpn(p)).collect()
    }

    /// Loading a saved P2L: P2L entries from physical page `start` on (NONE where a page holds
    /// nothing valid), unchecked, into a map `reset` to `Base::Empty`. Then `rebuild_l2p`.
    pub fn load_p2l(&mut self, start: usize, p2l: &[u32]) {
        debug_assert!(matches!(self.base, Base::Empty));
        for (e, &lpa) in self.p2l[start..start + p2l.len()].iter_mut().zip(p2l) {
            *e = if lpa == NONE { 0 } else { lpa + 1 };
        }
    }

    /// L2P from a loaded P2L; or the (physical, logical) pair of the first entry that names a
    /// logical page out of range or one already placed.
    pub fn rebuild_l2p(&mut self) -> Result<(), (usize, u32)> {
        for (ppa, &v) in self.p2l.iter().enumerate() {
            if v == 0 {
                continue;
            }
            let lpa = v - 1;
            if lpa as usize >= self.l2p.len() || self.l2p[lpa as usize] != 0 {
                return Err((ppa, lpa));
            }
            self.l2p[lpa as usize] = ppa as u32 + 1;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The striped base answers as the dense tables sequential filling wrote did, in both
    /// directions, and changes override it.
    #[test]
    fn striped_base_and_changes() {
        // 3 planes of 4 pages, units on planes 2, 0, 1; the first 10 logical pages.
        let stripe = [2u32, 0, 1];
        let mut m = PageMap::new(11, 12);
        m.reset(Base::striped(10, 4, &stripe));
        let mut l2p = vec![NONE; 11];
        let mut p2l = vec![NONE; 12];
        for l in 0..10u32 {
            let p = stripe[(l % 3) as usize] * 4 + l / 3;
            l2p[l as usize] = p;
            p2l[p as usize] = l;
        }
        assert_eq!(m.l2p(), l2p);
        assert_eq!(m.p2l(), p2l);
        // Logical page 4 moves from physical page 1 to the free page 7 (plane 1 holds 3 of
        // its 4 pages); logical page 7 is trimmed.
        assert_eq!((m.ppn(4), m.lpn(7)), (1, NONE));
        m.clear_physical(1);
        m.link(4, 7);
        let p7 = m.ppn(7);
        m.clear_physical(p7);
        m.clear_logical(7);
        (l2p[4], p2l[1], p2l[7]) = (7, NONE, 4);
        (l2p[7], p2l[p7 as usize]) = (NONE, NONE);
        assert_eq!(m.l2p(), l2p);
        assert_eq!(m.p2l(), p2l);
        assert_eq!((m.ppn(10), m.lpn(3)), (NONE, NONE), "past the filled pages");
        let mut copy = PageMap::new(11, 12);
        copy.load_p2l(0, &p2l[..5]);
        copy.load_p2l(5, &p2l[5..]);
        copy.rebuild_l2p().unwrap();
        assert_eq!((copy.l2p(), copy.p2l()), (l2p, p2l.clone()));
        let mut dup = PageMap::new(11, 12);
        let mut bad = p2l.clone();
        bad[0] = 4;
        dup.load_p2l(0, &bad);
        assert_eq!(dup.rebuild_l2p(), Err((7, 4)));
    }
}
