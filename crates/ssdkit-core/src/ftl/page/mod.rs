//! The page-mapping scheme: every logical page maps to any physical page (fully associative),
//! with the whole map in DRAM or cached (DFTL). One struct of flat arrays indexed by logical
//! page, physical page or global block number.
//!
//! - `mapping`: the page map (flat L2P and P2L), translation, invalidation, TRIM;
//! - `cmt`: the cached mapping table (which entries DRAM holds, LRU, dirty translation pages);
//!   with it, translation pages are stored in flash as logical pages past the host's;
//! - `cmt_path`: the cached map on the request path (lookups, translation-page reads and
//!   write-backs, per-flow partitions, GC's batched updates) and its counters;
//! - `blocks`: block states, free pools, write frontiers (one per stream), page allocation,
//!   erase;
//! - `allocation`: the plane a write goes to (static striping, dynamic round robin, pinning);
//! - `gc`: the reclaim lifecycle of each plane, victim policies over indexes, the untimed
//!   collector;
//! - `wear`: static wear levelling;
//! - `index`: the ordered indexes that make victim and free-block choice O(log n);
//! - `check`: invariants and the erase-count summary.

mod allocation;
pub(in crate::ftl) mod blocks;
mod check;
pub mod cmt;
mod cmt_path;
pub(in crate::ftl) mod gc;
pub(in crate::ftl) mod index;
mod mapping;
pub(crate) mod pagemap;
mod sector_masks;
mod wear;

pub use blocks::BlockState;
pub(in crate::ftl) use check::summarize_erases;
pub use cmt_path::Resumed;

use crate::ftl::ops::{FlashOp, OpClass, StreamId};
use crate::ftl::precondition;

use crate::config::{Config, GcPolicy, Placement};
use crate::engine::{derive_stream, Stream as Rng};
use crate::flash::Geometry;
use crate::ids::{BlockId, FlowId, Lpn, PlaneId, Ppn};
use crate::settings::Settings;
use blocks::PlaneState;
use index::VictimIndex;

/// Marks an unmapped logical page or a physical page that holds no valid data in the flat
/// tables (`Lpn::NONE`/`Ppn::NONE` at the typed interface).
pub const NONE: u32 = u32::MAX;

/// Random stream id of GC victim sampling (flows use 1..=flows).
pub const GC_STREAM: u64 = 0x6763_0000;

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
    /// Translation pages programmed by mapping write-backs (cached mapping table).
    pub mapping_page_writes: u64,
    /// Of `gc_page_moves`, translation pages moved.
    pub gc_translation_moves: u64,
    /// Merges of block and hybrid mapping (zero under page mapping).
    #[serde(skip_serializing_if = "crate::result::MergeCounts::is_zero")]
    pub merges: crate::result::MergeCounts,
    /// TRIM commands (`trimmed_pages` counts their whole pages).
    pub trim_requests: u64,
    /// Reads of the sectors a partial-page write keeps (read-modify-write).
    pub rmw_reads: u64,
    /// Reads of never-written pages answered without flash.
    pub unmapped_page_reads: u64,
    /// Never-written pages mapped by their first read (`ftl.unmapped_reads = "read_flash"`).
    pub pages_mapped_by_reads: u64,
}

/// Page-level mapping and block bookkeeping. All per-page and per-block state is flat arrays
/// of integers indexed by logical page, physical page or global block number. Fields are
/// visible to `ftl/` (preconditioning and snapshots build and save this scheme's state).
pub struct PageFtl {
    pub(in crate::ftl) geo: Geometry,
    pub(in crate::ftl) logical_pages: u32,
    pub(in crate::ftl) map: pagemap::PageMap,
    /// Pages written in each block (the write pointer).
    pub(in crate::ftl) written: Vec<u32>,
    pub(in crate::ftl) valid: Vec<u32>,
    pub(in crate::ftl) erase_count: Vec<u32>,
    pub(in crate::ftl) block_state: Vec<BlockState>,
    /// Page-write clock (user and GC programs) when each block was closed: FIFO order.
    pub(in crate::ftl) close_stamp: Vec<u64>,
    /// Clock when each block last changed (closed or lost a valid page): cost-benefit age.
    pub(in crate::ftl) mod_stamp: Vec<u64>,
    /// Page programs so far (user and GC): the FTL's notion of time for GC policies.
    pub(in crate::ftl) clock: u64,
    pub(in crate::ftl) gc_policy: GcPolicy,
    pub(in crate::ftl) gc_rng: Rng,
    pub(in crate::ftl) wl_dynamic: bool,
    pub(in crate::ftl) wl_static: bool,
    pub(in crate::ftl) wl_static_threshold: u32,
    pub(in crate::ftl) wl_static_interval: u32,
    pub(in crate::ftl) planes: Vec<PlaneState>,
    pub(in crate::ftl) index: VictimIndex,
    pub(in crate::ftl) stripe: Box<[u32]>,
    pub(in crate::ftl) placement: Placement,
    pub(in crate::ftl) rr_cursor: u32,
    pub(in crate::ftl) reserve_blocks: u32,
    pub(in crate::ftl) gc_start_free_pages: u64,
    /// Idle-time GC (`ftl.gc_background`) collects below this.
    pub(in crate::ftl) gc_background_free_pages: u64,
    /// `ftl.gc_copyback`.
    pub(in crate::ftl) gc_copyback: bool,
    /// Flash work decided by the last call, in queueing order (see the module doc).
    pub(in crate::ftl) ops: Vec<FlashOp>,
    /// When a plane below its GC start point starts a collection.
    pub(in crate::ftl) gc_trigger: gc::Trigger,
    /// The free pool the untimed writer (`gc::write_now`) keeps: the level preconditioning
    /// resolved.
    pub(in crate::ftl) untimed_pool: precondition::pool::PoolLevel,
    /// Planes below their GC start point, idle, whose first closed block just lost a valid
    /// page: GC could not start there before (nothing to gain) and can now. A plane whose
    /// user writes wait at the reserve allocates nothing, so no allocation would wake it.
    pub(in crate::ftl) gc_wake: Vec<PlaneId>,
    pub(in crate::ftl) stats: FtlStats,
    /// The cached mapping table; None when the whole map is in DRAM (`ftl.cmt.mode =
    /// "ideal"`). With it, translation page t is stored in flash as logical page
    /// `logical_pages + t`: written out of place, moved by GC and counted like user data, and
    /// its L2P entry is the translation directory.
    pub(in crate::ftl) cmt: Option<cmt::Cmt>,
    /// The cached map's request path during a timed run (`begin_run`).
    pub(in crate::ftl) cmt_path: Option<cmt_path::CmtPath>,
    pub(in crate::ftl) cmt_conf: cmt_path::CmtConf,
    /// `flash.medium = "in_place"`: logical page l lives at `home(l)` and writes overwrite it.
    /// Every block stays closed and fully written (no erase, nothing free): the valid counts
    /// still say which pages hold data, and GC never starts.
    pub(in crate::ftl) in_place: bool,
}

impl PageFtl {
    /// An erased device: nothing mapped, every block free. Preconditioning fills it.
    pub fn new(s: &Settings) -> Self {
        let mut ftl = Self::unbuilt(s);
        if ftl.in_place {
            // Every block closed and written (`unbuilt`).
            ftl.rebuild_planes();
        } else {
            ftl.build_erased_planes();
        }
        ftl
    }

    /// The arrays of an erased device without its planes' pools and indexes, for a snapshot
    /// to fill and then build (`rebuild_index`).
    pub(in crate::ftl) fn unbuilt(s: &Settings) -> Self {
        let f = &s.ftl;
        let geo = s.geo;
        let logical_pages = s.sizes.logical_pages as u32;
        let nblocks = geo.total_blocks() as usize;
        let translation_pages = s.sizes.cmt.as_ref().map_or(0, |m| m.translation_pages);
        let mut ftl = Self {
            geo,
            logical_pages,
            map: pagemap::PageMap::new(
                logical_pages as usize + translation_pages as usize,
                geo.total_pages() as usize,
                geo.sectors_per_page,
            ),
            written: vec![0; nblocks],
            valid: vec![0; nblocks],
            erase_count: vec![0; nblocks],
            block_state: vec![BlockState::Free; nblocks],
            close_stamp: vec![0; nblocks],
            mod_stamp: vec![0; nblocks],
            clock: 0,
            gc_policy: f.gc_policy,
            gc_rng: derive_stream(f.device_seed, GC_STREAM),
            wl_dynamic: f.wl_dynamic,
            wl_static: f.wl_static,
            wl_static_threshold: f.wl_static_threshold,
            wl_static_interval: f.wl_static_interval,
            planes: Vec::with_capacity(geo.planes() as usize),
            index: VictimIndex::new(&geo, f.gc_policy, f.wl_static),
            stripe: s.stripe.clone(),
            placement: f.placement,
            rr_cursor: 0,
            reserve_blocks: s.sizes.reserve_blocks,
            gc_start_free_pages: s.sizes.gc_start_free_pages,
            gc_copyback: f.gc_copyback,
            gc_background_free_pages: s.sizes.gc_background_free_pages,
            ops: Vec::new(),
            gc_trigger: if f.gc_foreground {
                gc::Trigger::Foreground
            } else if f.gc_refill {
                gc::Trigger::Refill
            } else {
                gc::Trigger::PerBlock
            },
            untimed_pool: Default::default(),
            gc_wake: Vec::new(),
            stats: FtlStats::default(),
            cmt: s.sizes.cmt.as_ref().map(|m| {
                let new = if f.cmt_entry {
                    cmt::Cmt::new_entries
                } else {
                    cmt::Cmt::new
                };
                let mut c = new(
                    s.sizes.logical_pages,
                    m.entries_per_tpage,
                    m.translation_pages,
                    &m.partition_entries,
                );
                if f.cmt_writeback_front {
                    c.set_writeback_front();
                }
                c.set_sectors(m.on_flash_bytes, geo.sector_bytes, geo.sectors_per_page);
                c
            }),
            cmt_path: None,
            cmt_conf: cmt_path::CmtConf::new(s),
            in_place: f.in_place,
        };
        if ftl.in_place {
            ftl.written.fill(geo.pages_per_block);
            ftl.block_state.fill(BlockState::Closed);
        }
        ftl
    }

    /// An erased device for a configuration (resolving its settings).
    pub fn from_config(c: &Config) -> Self {
        Self::new(&Settings::resolve(c))
    }

    pub fn geometry(&self) -> &Geometry {
        &self.geo
    }
    pub fn logical_pages(&self) -> u64 {
        self.logical_pages as u64
    }
    pub fn stats(&self) -> &FtlStats {
        &self.stats
    }
    /// Blocks per plane user writes may not take.
    pub fn reserve_blocks(&self) -> u32 {
        self.reserve_blocks
    }
    /// Free pages below which a plane starts GC.
    pub fn gc_start_free_pages(&self) -> u64 {
        self.gc_start_free_pages
    }
    /// The free pool the untimed writer keeps (set by preconditioning).
    pub fn untimed_pool(&self) -> precondition::pool::PoolLevel {
        self.untimed_pool
    }
    pub fn set_untimed_pool(&mut self, level: precondition::pool::PoolLevel) {
        self.untimed_pool = level;
    }
    /// Whether the medium is written in place (`flash.medium = "in_place"`).
    pub fn in_place(&self) -> bool {
        self.in_place
    }
    pub fn placement(&self) -> Placement {
        self.placement
    }
    pub fn block_state(&self, b: BlockId) -> BlockState {
        self.block_state[b.idx()]
    }
    pub fn valid_pages(&self, b: BlockId) -> u32 {
        self.valid[b.idx()]
    }
    /// Erase count of every block, by global block number.
    pub fn erase_counts(&self) -> &[u32] {
        &self.erase_count
    }
    /// Free blocks over every plane.
    pub fn total_free_blocks(&self) -> u64 {
        self.planes.iter().map(|p| p.free.len() as u64).sum()
    }
    /// Free blocks in a plane's pool.
    pub fn free_blocks(&self, plane: PlaneId) -> usize {
        self.planes[plane.idx()].free.len()
    }
    /// The physical page of every logical page of the host (NONE where unmapped), for checks.
    pub fn l2p_table(&self) -> Vec<u32> {
        (0..self.logical_pages).map(|l| self.map.ppn(l)).collect()
    }

    /// About `pages` distinct logical pages will be written, `partial` of them perhaps partly
    /// (`Ftl::expect_user_writes`).
    pub fn expect_user_writes(&mut self, pages: u64, partial: u64) {
        let partial = match self.geo.sectors_per_page > 1 {
            true => partial,
            false => 0,
        };
        self.map.expect_logical_writes(pages, partial);
    }

    /// Bytes the page map's change tables hold (`pagemap::PageMap::change_bytes`).
    pub fn map_change_bytes(&self) -> u64 {
        self.map.change_bytes()
    }

    /// Bytes the table of partly written pages' valid sectors holds, where the page map's
    /// slots do not hold them (`pagemap::PageMap::mask_bytes`).
    pub fn partial_bytes(&self) -> u64 {
        self.map.mask_bytes()
    }

    /// The cached mapping table, if the map is cached.
    pub fn cmt(&self) -> Option<&cmt::Cmt> {
        self.cmt.as_ref()
    }
    /// Translation pages of the cached map (0 when the map is wholly in DRAM).
    pub fn translation_pages(&self) -> u64 {
        self.map.logical_len() as u64 - self.logical_pages as u64
    }
    /// The logical page under which translation page `t` is stored.
    #[inline]
    pub fn tpage_lpn(&self, t: u32) -> Lpn {
        Lpn(self.logical_pages + t)
    }
    /// The translation page a logical page past the host's stands for.
    #[inline]
    pub fn translation_page_of(&self, lpn: Lpn) -> Option<u32> {
        lpn.0.checked_sub(self.logical_pages)
    }

    /// Sectors of `lpn` that hold data (`full` = the whole-page mask): none when unmapped.
    #[inline]
    pub fn valid_sectors(&self, lpn: Lpn, full: u64) -> u64 {
        if self.map.ppn(lpn.0) == NONE {
            0
        } else {
            self.map.mask(lpn.0).unwrap_or(full)
        }
    }

    /// A write of `sectors` to `lpn` was accepted: the page's data is now what it held plus
    /// those sectors. Call before the page is programmed (the read-modify-write decision of
    /// a later write sees it).
    #[inline]
    pub fn note_write(&mut self, lpn: Lpn, sectors: u64, full: u64) {
        if sectors == full {
            if !self.map.masks_empty() {
                self.map.clear_mask(lpn.0);
            }
            return;
        }
        let held = if self.map.ppn(lpn.0) == NONE {
            self.map.mask(lpn.0).unwrap_or(0)
        } else {
            self.map.mask(lpn.0).unwrap_or(full)
        };
        let now = held | sectors;
        if now == full {
            self.map.clear_mask(lpn.0);
        } else {
            self.map.set_mask(lpn.0, now);
        }
    }

    /// A write of `sectors` to `lpn` (`full`: the whole-page mask) was accepted: returns the
    /// sectors the page holds that it does not replace, which must be read first (0: no
    /// read-modify-write: a sub-page write to a page with no other data, never written or
    /// written only in these sectors; or an in-place medium, which writes just the sectors
    /// given), and notes the write (`note_write`).
    #[inline]
    pub fn plan_write(&mut self, lpn: Lpn, sectors: u64, full: u64) -> u64 {
        if sectors != full {
            if let Some(valid) = self.map.note_sub_page_write(lpn.0, sectors, full) {
                return match self.in_place {
                    true => 0,
                    false => valid & !sectors,
                };
            }
        }
        let keep = if self.in_place {
            0
        } else {
            self.valid_sectors(lpn, full) & !sectors
        };
        self.note_write(lpn, sectors, full);
        keep
    }

    /// Starts loading `lpn`'s map entry (see `Ftl::prefetch_mapping`).
    #[inline]
    pub fn prefetch_mapping(&self, lpn: Lpn) {
        self.map.prefetch_ppn(lpn.0);
    }

    /// Starts loading `lpn`'s map entry and, with a cached map, the entry of its translation
    /// page (a lookup that misses the cache reads it: `map_lookup`).
    #[inline]
    pub fn prefetch_write_back(&self, lpn: Lpn) {
        if let Some(cmt) = &self.cmt {
            self.map.prefetch_ppn(self.tpage_lpn(cmt.tpage_of(lpn.0)).0);
        }
        self.map.prefetch_ppn(lpn.0);
    }

    /// Where `lpn` lives now, if it is mapped.
    #[inline]
    pub fn translate(&self, lpn: Lpn) -> Option<Ppn> {
        let p = self.map.ppn(lpn.0);
        (p != NONE).then_some(Ppn(p))
    }

    /// Whether `ppn` still holds the live copy of `lpn` (a queued GC move or read of it is
    /// stale once the page was overwritten or trimmed).
    #[inline]
    pub fn is_live(&self, lpn: Lpn, ppn: Ppn) -> bool {
        self.map.lpn(ppn.0) == lpn.0
    }

    /// The logical page stored in `ppn`, if it is valid.
    #[inline]
    pub fn owner(&self, ppn: Ppn) -> Option<Lpn> {
        let l = self.map.lpn(ppn.0);
        (l != NONE).then_some(Lpn(l))
    }

    /// Whether the last calls decided flash work (`take_ops` hands it over).
    #[inline]
    pub fn has_ops(&self) -> bool {
        !self.ops.is_empty()
    }

    /// Hands the flash work decided so far to the caller, in queueing order: `into` (empty)
    /// takes the list, and the FTL keeps `into`'s buffer for the next calls.
    #[inline]
    pub fn take_ops(&mut self, into: &mut Vec<FlashOp>) {
        debug_assert!(into.is_empty());
        std::mem::swap(&mut self.ops, into);
    }

    /// Starts a timed run of `flows` flows: the wakes of untimed work (preconditioning,
    /// snapshot loading) are forgotten, since a timed run starts from the state, not from how
    /// it was reached; the cached map's request path starts empty.
    pub fn begin_run(&mut self, flows: usize) {
        self.clear_gc_wakes();
        self.cmt_path = self
            .cmt
            .as_ref()
            .map(|cmt| cmt_path::CmtPath::new(flows, cmt.translation_pages(), self.geo.planes()));
    }

    /// Programs a page of `class` (user data or a translation page) into `plane`'s user
    /// stream, at the page returned, and counts it; a reclaim job the allocation triggers is
    /// queued in the op list. Call when the die takes the write, after `next_page_offset`
    /// said a page is available.
    #[inline]
    pub fn program_page(&mut self, lpn: Lpn, plane: PlaneId, class: OpClass) -> Ppn {
        let ppn = self.program(lpn, plane, StreamId::USER);
        if class == OpClass::Mapping {
            self.stats.mapping_page_writes += 1;
        } else {
            self.stats.user_page_writes += 1;
        }
        self.after_allocation(plane, ppn);
        ppn
    }

    /// MQSim's read of a never-written page: it takes the next page of `plane`'s user stream
    /// (no program: the page is only assigned, as MQSim's first read assigns one) and is read
    /// from there. The page holds no mapping: a formula's worth of work, no table grows, so a
    /// read-only run on an empty device costs what one on a filled device does. (MQSim maps
    /// the page: its later reads find it there, and GC moves it; here each read of a
    /// never-written page takes a page of its own, which GC erases without moving.) None when
    /// the plane's user writes wait at the reserve.
    #[cold]
    pub fn read_unwritten(&mut self, lpn: Lpn, plane: PlaneId) -> Option<Ppn> {
        let ppn = match self.take_inner_user_page(plane) {
            Some(ppn) => ppn,
            None => self.take_user_page(lpn, plane)?,
        };
        if let Some(cmt) = self.cmt.as_mut().filter(|c| c.by_entry()) {
            // MQSim's CMT (granularity "entry"): its read created the entry, dirty
            // (Address_Mapping_Unit_Page_Level.cpp:1225-1386, 65-76). Otherwise no entry
            // changed: the page holds no mapping.
            cmt.mark_dirty(lpn.0);
        }
        Some(ppn)
    }

    /// `allocate` of the user stream where nothing but the page itself can follow: the open
    /// block keeps a page after this one, and the plane's free blocks alone keep it above
    /// GC's start (so `after_allocation` would start nothing). None otherwise (the general
    /// path decides). One look at the plane and its block where the general path took four.
    #[inline]
    fn take_inner_user_page(&mut self, plane: PlaneId) -> Option<Ppn> {
        let ppb = self.geo.pages_per_block;
        let ps = &self.planes[plane.idx()];
        let b = ps.open[StreamId::USER.idx()];
        if self.in_place
            || b == NONE
            || (ps.free.len() as u64) * (ppb as u64) < self.gc_start_free_pages
        {
            return None;
        }
        let w = self.written[b as usize];
        if w + 2 > ppb {
            return None;
        }
        self.written[b as usize] = w + 1;
        self.clock += 1;
        Some(Ppn(b * ppb + w))
    }

    /// The general path of `read_unwritten`'s page.
    fn take_user_page(&mut self, lpn: Lpn, plane: PlaneId) -> Option<Ppn> {
        self.next_page_offset(plane, StreamId::USER)?;
        let ppn = if self.in_place {
            self.program(lpn, plane, StreamId::USER)
        } else {
            let ppn = self.allocate(plane, StreamId::USER);
            if self.geo.page_in_block(ppn.0) + 1 == self.geo.pages_per_block {
                self.close(BlockId(self.geo.block_of_ppa(ppn.0)));
            }
            ppn
        };
        self.after_allocation(plane, ppn);
        Some(ppn)
    }

    /// TRIM of one whole logical page on behalf of `flow` (see `trim`); with a cached map the
    /// entry changes through the cache.
    pub fn trim_page(&mut self, flow: FlowId, lpn: Lpn) {
        if self.trim(lpn) && self.cmt_path.is_some() {
            self.cmt_trimmed(flow, lpn);
        }
    }

    /// Programs `lpn` into the next page of `stream` in `plane` and maps it there (the old copy
    /// becomes invalid). Call only when `next_page_offset` said a page is available.
    pub(crate) fn program(&mut self, lpn: Lpn, plane: PlaneId, stream: StreamId) -> Ppn {
        if self.in_place {
            debug_assert_eq!(
                plane,
                self.static_plane(lpn),
                "an in-place page has one plane"
            );
            return self.program_in_place(lpn);
        }
        let ppn = self.allocate(plane, stream);
        self.map(lpn, ppn);
        if self.geo.page_in_block(ppn.0) + 1 == self.geo.pages_per_block {
            self.close(BlockId(self.geo.block_of_ppa(ppn.0)));
        }
        ppn
    }
}

#[cfg(test)]
mod read_unwritten_tests {
    use super::PageFtl;
    use crate::config::Config;
    use crate::ids::{Lpn, PlaneId};
    use crate::settings::Settings;

    /// MQSim's reads of never-written pages take the pages the general path hands out (its
    /// shortcut inside a block aside), over blocks' ends, the free pool's order and GC's
    /// start under each trigger (a block opened, refill, foreground), until the plane's user
    /// stream waits at the reserve: the same page each time and the same blocks and clock
    /// after.
    #[test]
    fn a_read_of_a_never_written_page_takes_the_page_the_general_path_gives() {
        // GC's start, 103 pages, falls inside a block: a page that is not a block's first
        // may start it (foreground GC has no start point).
        let start = "ftl.gc_threshold=0.2";
        for trigger in [
            ["ftl.gc_refill=false", start],
            ["ftl.gc_refill=true", start],
            ["ftl.gc_foreground=true", "ftl.gc_refill=false"],
        ] {
            let o: Vec<String> = [
                "flash.channels=1",
                "flash.chips_per_channel=1",
                "flash.dies_per_chip=1",
                "flash.planes_per_die=1",
                "flash.blocks_per_plane=32",
                "flash.pages_per_block=16",
                "flash.page_size_bytes=4096",
                "cache.mode=\"off\"",
                "ftl.cmt.mode=\"ideal\"",
                "ftl.spare_factor=0.25",
                "ftl.wl_dynamic=true",
                trigger[0],
                trigger[1],
            ]
            .iter()
            .map(|s| s.to_string())
            .collect();
            let c = Config::load_preset("mqsim-paper", &o).unwrap();
            let s = Settings::resolve(&c);
            let (mut fast, mut general) = (PageFtl::new(&s), PageFtl::new(&s));
            let plane = PlaneId(0);
            let mut n = 0;
            let mut gc_started = None;
            loop {
                let a = fast.read_unwritten(Lpn(n), plane);
                let b = general.take_user_page(Lpn(n), plane);
                assert_eq!(a, b, "{trigger:?}: read {n}");
                let gc = fast.reclaiming(plane);
                assert_eq!(gc, general.reclaiming(plane), "{trigger:?}: read {n}");
                if gc && gc_started.is_none() {
                    gc_started = Some(n);
                }
                if a.is_none() {
                    break;
                }
                n += 1;
            }
            assert!(
                n > 16 * 20,
                "{trigger:?}: the reads crossed many blocks: {n}"
            );
            assert!(gc_started.is_some(), "{trigger:?}: GC started on the way");
            assert_eq!(fast.written, general.written, "{trigger:?}");
            assert_eq!(fast.clock, general.clock, "{trigger:?}");
            assert_eq!(fast.planes[0].free.len(), general.planes[0].free.len());
        }
    }
}
