//! Splitting a host request into page-sized pieces.

use crate::engine::Div;
use crate::ids::Lpn;

/// One logical page a request touches, and which of its sectors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageChunk {
    pub lpn: Lpn,
    /// Bit i set = sector i of the page is part of the request.
    pub sectors: u64,
    /// The whole page is covered.
    pub full: bool,
}

/// Bitmap of sectors [lo, hi) of a page.
#[inline]
fn mask(lo: u64, hi: u64) -> u64 {
    let width = hi - lo;
    let ones = if width >= 64 {
        u64::MAX
    } else {
        (1u64 << width) - 1
    };
    ones << lo
}

/// The pages of a request of `sectors` sectors from `start_sector`, with `sectors_per_page`
/// sectors per page (at most 64).
pub fn split(
    start_sector: u64,
    sectors: u32,
    sectors_per_page: u32,
) -> impl Iterator<Item = PageChunk> {
    let spp = sectors_per_page as u64;
    // A shift for the usual power-of-two pages: a division costs more than the rest of a
    // small request's split.
    let d = Div::new(sectors_per_page);
    let end = start_sector + sectors as u64;
    let first = d.quot64(start_sector);
    let last = d.quot64(end - 1);
    // A half-open range: RangeInclusive's exhaustion flag costs a branch per page.
    (first..last + 1).map(move |page| {
        let lo = start_sector.max(page * spp) - page * spp;
        let hi = end.min((page + 1) * spp) - page * spp;
        PageChunk {
            lpn: Lpn(page as u32),
            sectors: mask(lo, hi),
            full: hi - lo == spp,
        }
    })
}

/// Page span of a request: (first logical page, number of pages); no pages for a request
/// without data (a flush).
#[inline]
pub fn page_span(start_sector: u64, sectors: u32, sectors_per_page: u32) -> (u64, u64) {
    let d = Div::new(sectors_per_page);
    if sectors == 0 {
        return (d.quot64(start_sector), 0);
    }
    let first = d.quot64(start_sector);
    let last = d.quot64(start_sector + sectors as u64 - 1);
    (first, last - first + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_covers_its_sectors_once() {
        // 16 sectors per page; sectors 10..40 touch pages 0 (10..16), 1 (all), 2 (0..8).
        let v: Vec<PageChunk> = split(10, 30, 16).collect();
        assert_eq!(v.len(), 3);
        assert_eq!(v[0].sectors, 0b1111_1100_0000_0000);
        assert!(!v[0].full && v[1].full && !v[2].full);
        assert_eq!(v[1].sectors, 0xFFFF);
        assert_eq!(v[2].sectors, 0xFF);
        let total: u32 = v.iter().map(|c| c.sectors.count_ones()).sum();
        assert_eq!(total, 30);
        assert_eq!(page_span(10, 30, 16), (0, 3));
        // 64-sector pages: a full page is all ones.
        let w: Vec<PageChunk> = split(64, 64, 64).collect();
        assert_eq!((w.len(), w[0].sectors, w[0].full), (1, u64::MAX, true));
    }

    #[test]
    fn every_page_size_splits_as_division_says() {
        for spp in 1..=64u32 {
            for start in [0u64, 1, 7, 63, 64, 65, 1000, (1 << 40) + 3] {
                for sectors in [1u32, 2, 9, 64, 200] {
                    let s = spp as u64;
                    let first = start / s;
                    let last = (start + sectors as u64 - 1) / s;
                    assert_eq!(page_span(start, sectors, spp), (first, last - first + 1));
                    let lpns: Vec<u64> =
                        split(start, sectors, spp).map(|c| c.lpn.0 as u64).collect();
                    let want: Vec<u64> = (first..=last).map(|p| p as u32 as u64).collect();
                    assert_eq!(lpns, want, "spp {spp} start {start} sectors {sectors}");
                }
            }
        }
    }
}
