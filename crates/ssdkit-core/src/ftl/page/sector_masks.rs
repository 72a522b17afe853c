//! The valid sectors of partially written pages (`PageMap::mask`), by logical page, where the
//! page map's slots do not hold them beside the pages' entries.
//!
//! Sub-page writes can leave every written page here (MQSim's 4 KiB writes on 8 KiB pages), so
//! the table is as large as the written part of the page map. A page of at most 32 sectors (16
//! KiB with 512-byte sectors) keeps its mask in 4 bytes, which halves the table's slots
//! (measured: 1 M random 4 KiB writes on MQSim's shipped device with an ideal map, peak 84 to
//! 59 MB, the whole process about 5 % faster); larger pages take 8.
use crate::engine::KeyMap;

pub enum SectorMasks {
    Narrow(KeyMap<u32>),
    Wide(KeyMap<u64>),
}

impl SectorMasks {
    pub fn new(sectors_per_page: u32) -> Self {
        match sectors_per_page <= 32 {
            true => Self::Narrow(KeyMap::new()),
            false => Self::Wide(KeyMap::new()),
        }
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        match self {
            Self::Narrow(m) => m.is_empty(),
            Self::Wide(m) => m.is_empty(),
        }
    }

    #[inline]
    pub fn get(&self, lpn: u32) -> Option<u64> {
        match self {
            Self::Narrow(m) => m.get(lpn).map(u64::from),
            Self::Wide(m) => m.get(lpn),
        }
    }

    /// Sets `lpn`'s mask: sectors of the page only (below `sectors_per_page`).
    #[inline]
    pub fn insert(&mut self, lpn: u32, mask: u64) {
        match self {
            Self::Narrow(m) => {
                debug_assert!(mask >> 32 == 0, "a page of at most 32 sectors");
                m.insert(lpn, mask as u32)
            }
            Self::Wide(m) => m.insert(lpn, mask),
        }
    }

    #[inline]
    pub fn remove(&mut self, lpn: u32) {
        match self {
            Self::Narrow(m) => {
                m.remove(lpn);
            }
            Self::Wide(m) => {
                m.remove(lpn);
            }
        }
    }

    /// Bytes of its table.
    pub fn bytes(&self) -> usize {
        match self {
            Self::Narrow(m) => m.bytes(),
            Self::Wide(m) => m.bytes(),
        }
    }

    /// Makes room for `pages` more masks at once, beside those it holds (`KeyMap::reserve`).
    pub fn reserve(&mut self, pages: usize) {
        match self {
            Self::Narrow(m) => m.reserve(pages + m.len()),
            Self::Wide(m) => m.reserve(pages + m.len()),
        }
    }

    /// Every mask, in no particular order.
    pub fn iter(&self) -> Box<dyn Iterator<Item = (u32, u64)> + '_> {
        match self {
            Self::Narrow(m) => Box::new(m.iter().map(|(l, x)| (l, x as u64))),
            Self::Wide(m) => Box::new(m.iter()),
        }
    }

    #[inline]
    pub fn prefetch(&self, lpn: u32) {
        match self {
            Self::Narrow(m) => m.prefetch(lpn),
            Self::Wide(m) => m.prefetch(lpn),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Both widths answer alike, and the widest page a narrow table takes keeps its top
    /// sector.
    #[test]
    fn narrow_and_wide_masks_answer_alike() {
        for (sectors, top) in [(32u32, 1u64 << 31), (64, 1 << 63)] {
            let mut m = SectorMasks::new(sectors);
            assert_eq!(matches!(m, SectorMasks::Narrow(_)), sectors == 32);
            assert!(m.is_empty() && m.get(5).is_none());
            m.insert(5, top | 1);
            m.insert(9, 6);
            assert_eq!(
                (m.get(5), m.get(9), m.get(7)),
                (Some(top | 1), Some(6), None)
            );
            m.remove(5);
            assert_eq!(m.get(5), None);
            assert!(!m.is_empty());
        }
    }

    /// A reservation counts the masks held: room for `pages` more is the size the held ones
    /// and `pages` inserts would grow the table to, and those inserts then move nothing.
    #[test]
    fn a_reservation_makes_room_beside_the_masks_held() {
        for sectors in [16u32, 64] {
            let (held, more) = (1_000u32, 3_000u32);
            let mut grown = SectorMasks::new(sectors);
            (0..held + more).for_each(|p| grown.insert(p * 7, 1));
            let mut reserved = SectorMasks::new(sectors);
            (0..held).for_each(|p| reserved.insert(p * 7, 1));
            reserved.reserve(more as usize);
            assert_eq!(reserved.bytes(), grown.bytes(), "{sectors} sectors");
            (held..held + more).for_each(|p| reserved.insert(p * 7, 1));
            assert_eq!(reserved.bytes(), grown.bytes(), "{sectors} sectors, after");
            assert!((0..held + more).all(|p| reserved.get(p * 7) == Some(1)));
        }
    }
}
