//! The sizes a configuration derives, in pages and blocks: logical pages, each plane's share
//! and GC reserve, the GC start points and the cached mapping table's partitions. Computed
//! here and nowhere else, so validation (which checks that they leave a working device) and
//! `crate::settings::Settings` (which every component reads) agree on them. Plain arithmetic
//! on the configuration: no layer's types.

use super::{CmtMode, Config};

/// The derived sizes of a configuration that passed the range checks of `validate`.
#[derive(Debug, Clone, PartialEq)]
pub struct Sizes {
    /// Planes of the device.
    pub planes: u64,
    /// Pages of the device.
    pub physical_pages: u64,
    /// Logical pages exported to the host: floor(physical * (1 - spare factor)).
    pub logical_pages: u64,
    pub capacity_bytes: u64,
    /// Blocks of logical data per plane (the plane's share, rounded up).
    pub share_blocks: u64,
    /// Blocks per plane that user writes may not take (kept for GC).
    pub reserve_blocks: u32,
    /// GC starts in a plane when its free pages fall below this.
    pub gc_start_free_pages: u64,
    /// Idle-time GC runs in planes whose free pages are below this.
    pub gc_background_free_pages: u64,
    /// The cached mapping table; None with `ftl.cmt.mode = "ideal"`.
    pub cmt: Option<CmtSettings>,
}

/// `[ftl.cmt]` resolved.
#[derive(Debug, Clone, PartialEq)]
pub struct CmtSettings {
    pub entry_bytes: u32,
    /// Mapping entries in one translation page: page size / entry size.
    pub entries_per_tpage: u32,
    /// Bytes of one entry in a translation page on flash (`translation_entry_bytes`, or
    /// `entry_bytes`).
    pub on_flash_bytes: u32,
    /// Translation pages holding the whole map: ceil(logical pages / entries per page).
    pub translation_pages: u64,
    /// Entries each LRU partition holds: one partition ("shared") or one per flow.
    pub partition_entries: Vec<u64>,
}

impl CmtSettings {
    fn resolve(c: &Config, physical_pages: u64, logical_pages: u64) -> Option<Self> {
        let cmt = &c.ftl.cmt;
        if cmt.mode == CmtMode::Ideal {
            return None;
        }
        let entry_bytes = if cmt.entry_bytes == 0 {
            let sectors_per_page = c.flash.page_size_bytes / c.interface.sector_bytes;
            super::mqsim_entry_bytes(physical_pages, sectors_per_page)
        } else {
            cmt.entry_bytes
        };
        let on_flash = match cmt.translation_entry_bytes {
            0 => entry_bytes,
            b => b,
        };
        let entries_per_tpage = (c.flash.page_size_bytes / on_flash).max(1);
        let total = cmt.capacity_bytes / entry_bytes as u64;
        let partition_entries = match cmt.mode {
            CmtMode::PerFlow => {
                let n = c.flows.len().max(1);
                (0..n)
                    .map(|i| {
                        let share = cmt.shares.get(i).copied().unwrap_or(1.0 / n as f64);
                        (total as f64 * share).floor() as u64
                    })
                    .collect()
            }
            _ => vec![total],
        };
        Some(Self {
            entry_bytes,
            entries_per_tpage,
            on_flash_bytes: on_flash,
            translation_pages: logical_pages.div_ceil(entries_per_tpage as u64),
            partition_entries,
        })
    }
}

impl Sizes {
    pub fn of(c: &Config) -> Sizes {
        let f = &c.flash;
        let planes = f.channels as u64
            * f.chips_per_channel as u64
            * f.dies_per_chip as u64
            * f.planes_per_die as u64;
        let ppb = f.pages_per_block as u64;
        let physical_pages = planes * (f.blocks_per_plane as u64 * ppb);
        let logical_pages = (physical_pages as f64 * (1.0 - c.ftl.spare_factor)).floor() as u64;
        let share_blocks = logical_pages.div_ceil(planes).div_ceil(ppb);
        let reserve_blocks = reserve_blocks(c);
        // Foreground GC starts only when user writes are blocked, which this floor always
        // admits (`Ftl::gc_wanted` adds the blocked test).
        let configured = if c.ftl.gc_foreground {
            0
        } else {
            (c.ftl.gc_threshold * f.blocks_per_plane as f64 * ppb as f64).ceil() as u64
        };
        // Never later than one block before user writes would have to wait for the reserve,
        // else a small plane could block its writers without ever starting GC.
        let gc_start_free_pages = configured.max((reserve_blocks as u64 + 1) * ppb + 1);
        let gc_background_free_pages =
            (c.ftl.gc_background_threshold * f.blocks_per_plane as f64 * ppb as f64).ceil() as u64;
        Sizes {
            planes,
            physical_pages,
            logical_pages,
            capacity_bytes: logical_pages * f.page_size_bytes as u64,
            share_blocks,
            reserve_blocks,
            gc_start_free_pages,
            gc_background_free_pages,
            cmt: CmtSettings::resolve(c, physical_pages, logical_pages),
        }
    }
}

/// From the hard threshold, never fewer than two blocks so GC always has a block to move
/// valid pages into.
fn reserve_blocks(c: &Config) -> u32 {
    let f = &c.flash;
    let pages = f.blocks_per_plane as f64 * f.pages_per_block as f64;
    let blocks = (c.ftl.gc_hard_threshold * pages / f.pages_per_block as f64).ceil() as u32;
    blocks.max(2)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn derived_sizes_of_the_default_device() {
        let s = Sizes::of(&Config::default());
        // 8 x 4 x 2 x 2 planes x 2048 blocks x 256 pages, 7 % spare.
        let physical = 128u64 * 2048 * 256;
        assert_eq!(s.planes, 128);
        assert_eq!(s.physical_pages, physical);
        assert_eq!(s.logical_pages, (physical as f64 * 0.93).floor() as u64);
        assert_eq!(s.capacity_bytes, s.logical_pages * 8192);
        // ceil(0.005 * 2048) = 11 blocks kept for GC.
        assert_eq!(s.reserve_blocks, 11);
        // ceil(0.05 * 2048 * 256) = 26215 pages, above (11 + 1) * 256 + 1.
        assert_eq!(s.gc_start_free_pages, 26215);
    }
}
