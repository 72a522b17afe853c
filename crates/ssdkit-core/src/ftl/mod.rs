//! Flash translation layer: which physical page holds each logical page, the state of every
//! block, where a write goes, reclaim (garbage collection, wear levelling), TRIM,
//! preconditioning and snapshots.
//!
//! The FTL decides *what* happens to which physical page; the simulator decides *when*, by
//! queueing transactions in the scheduling unit (`tsu`) and driving the flash back end.
//! [`Ftl`] is the interface: the rest of the crate may ask only what its methods answer, and
//! each mapping scheme implements them in its own folder (`page/`: the page map with the
//! cached mapping table; `block/`: block mapping; `hybrid/`: log blocks over block mapping). Dispatch is by enum ([`Ftl`] holds the scheme), not by trait
//! object: one variant costs nothing on the hot path.
//!
//! - reads: `translate` (a page, or unmapped), and with a cached map first `map_lookup`
//!   (a hit, or the page waits for a mapping read the FTL queued, `mapping_read_done`);
//! - writes: `target_plane` (the plane, at dispatch), `plan_write` (the read-modify-write
//!   read of kept sectors), `next_page_offset`, then `program_page` when
//!   the die takes the write (the FTL allocates the page on a write stream and counts it);
//! - `trim_page`; reclaim (`reclaim_read_begin`, `reclaim_program`, `reclaim_program_done`,
//!   `erase_done`, `wake_one`, `reclaim_when_idle`); `stats`; the entry points of
//!   `precondition` and `snapshot`.
//!
//! Whatever flash work a call decides (a reclaim job's reads and erase, a translation page's
//! read or write-back) it appends to its op list as [`FlashOp`]s tagged with their
//! [`OpClass`]; the simulator takes them (`take_ops`) right after each call and queues them
//! in order. Counters change only inside the FTL.
//!
//! - `ops`: the interface's vocabulary (write streams, op classes, flash ops, reclaim phase);
//! - `host_io`: reads of never-written pages (`ftl.unmapped_reads`), the read-modify-write
//!   decision and TRIM commands, with their counters;
//! - `page`: the page-mapping scheme;
//! - `block`, `hybrid`: block mapping, and the hybrid scheme's log blocks and merges;
//! - `precondition`, `snapshot`: the state at time zero, and saving/loading it.

pub mod block;
mod host_io;
pub(in crate::ftl) mod hybrid;
mod ops;
pub mod page;
mod placement;
pub mod precondition;
pub mod snapshot;

pub use ops::{FlashOp, GcPhase, OpClass, StreamId};
pub use page::{cmt, BlockState, FtlStats, PageFtl, Resumed, GC_STREAM, NONE};

use crate::config::{Config, Placement};
use crate::flash::Geometry;
use crate::ids::{BlockId, FlowId, Lpn, PlaneId, Ppn, TxId};
use crate::result::{Backlog, CmtDevice, CmtLookups, EraseCounts};
use crate::settings::Settings;

/// The FTL of a device: its mapping scheme.
pub struct Ftl {
    scheme: Scheme,
    /// `ftl.unmapped_reads = "read_flash"` (`read_unmapped`).
    read_flash_unmapped: bool,
}

/// The mapping schemes (`ftl.mapping`). One per device, held inline: boxing the larger
/// variant would add an indirection to every call of the page scheme's hot path.
#[allow(clippy::large_enum_variant)]
enum Scheme {
    Page(PageFtl),
    /// Block and hybrid mapping (the hybrid scheme's log blocks are part of its state).
    Block(block::BlockFtl),
}

/// Methods every scheme answers, forwarded to it.
macro_rules! forward {
    ($( $(#[$m:meta])* fn $name:ident(&self $(, $a:ident: $t:ty)*) $(-> $r:ty)?; )*) => {$(
        $(#[$m])*
        #[inline]
        pub fn $name(&self $(, $a: $t)*) $(-> $r)? {
            match &self.scheme {
                Scheme::Page(f) => f.$name($($a),*),
                Scheme::Block(f) => f.$name($($a),*),
            }
        }
    )*};
}

macro_rules! forward_mut {
    ($( $(#[$m:meta])* fn $name:ident(&mut self $(, $a:ident: $t:ty)*) $(-> $r:ty)?; )*) => {$(
        $(#[$m])*
        #[inline]
        pub fn $name(&mut self $(, $a: $t)*) $(-> $r)? {
            match &mut self.scheme {
                Scheme::Page(f) => f.$name($($a),*),
                Scheme::Block(f) => f.$name($($a),*),
            }
        }
    )*};
}

impl Ftl {
    /// An erased device: nothing mapped, every block free. Preconditioning fills it.
    pub fn new(s: &Settings) -> Self {
        match s.ftl.mapping {
            crate::config::Mapping::Page {} => Self::from_page(PageFtl::new(s)),
            _ => Self {
                scheme: Scheme::Block(block::BlockFtl::new(s)),
                read_flash_unmapped: false,
            },
        }
    }

    /// An erased device for a configuration (resolving its settings).
    pub fn from_config(c: &Config) -> Self {
        Self::new(&Settings::resolve(c))
    }

    pub(crate) fn from_page(f: PageFtl) -> Self {
        Self {
            scheme: Scheme::Page(f),
            read_flash_unmapped: false,
        }
    }

    /// The FTL's cumulative counters, with the back end's `page_programs`: a point of the
    /// time series and the steady-state rounds.
    pub fn sample(&self, page_programs: u64) -> crate::stats::timeseries::DeviceSample {
        let f = self.stats();
        crate::stats::timeseries::DeviceSample {
            free_blocks: self.total_free_blocks(),
            gc_runs: f.gc_runs,
            gc_page_moves: f.gc_page_moves,
            user_page_writes: f.user_page_writes,
            page_programs,
        }
    }

    /// The page scheme's state, for the code that builds and saves it (preconditioning,
    /// snapshots); None under another scheme.
    pub(crate) fn page(&self) -> Option<&PageFtl> {
        match &self.scheme {
            Scheme::Page(f) => Some(f),
            Scheme::Block(_) => None,
        }
    }
    /// Starts loading the map entries a request from `sector` (drawn ahead by its flow) will
    /// look up later: on a large device each is a miss to memory, which then overlaps the
    /// requests before it. Nothing for None.
    #[inline]
    pub fn prefetch_mapping(&self, sector: Option<u64>, sectors_per_page: u32) {
        if let (Some(sector), Scheme::Page(f)) = (sector, &self.scheme) {
            let (lpn, _) = crate::frontend::page_span(sector, 1, sectors_per_page);
            f.prefetch_mapping(Lpn(lpn as u32));
        }
    }
    /// Starts loading what a write-back of `lpn` from the data cache will look up: its map
    /// entry and, with a cached map, where its translation page lives. Nothing for None.
    #[inline]
    pub fn prefetch_write_back(&self, lpn: Option<Lpn>) {
        if let (Some(lpn), Scheme::Page(f)) = (lpn, &self.scheme) {
            f.prefetch_write_back(lpn);
        }
    }
    pub(crate) fn page_mut(&mut self) -> Option<&mut PageFtl> {
        match &mut self.scheme {
            Scheme::Page(f) => Some(f),
            Scheme::Block(_) => None,
        }
    }
    /// The block (or hybrid) scheme's state, for snapshots.
    pub(crate) fn block(&self) -> Option<&block::BlockFtl> {
        match &self.scheme {
            Scheme::Block(f) => Some(f),
            Scheme::Page(_) => None,
        }
    }
    pub(crate) fn from_block(f: block::BlockFtl) -> Self {
        Self {
            scheme: Scheme::Block(f),
            read_flash_unmapped: false,
        }
    }
    /// About `pages` distinct logical pages will be written in the run, `partial` of them
    /// perhaps partly (the flows' estimate, `Flow::expected_pages_written`): the page map and
    /// the table of partly written pages make room for them at once. A hint for speed alone;
    /// nothing simulated depends on it.
    pub fn expect_user_writes(&mut self, pages: u64, partial: u64) {
        if let Scheme::Page(f) = &mut self.scheme {
            f.expect_user_writes(pages, partial);
        }
    }

    /// The block (or hybrid) scheme's state, for preconditioning.
    pub(crate) fn block_mut(&mut self) -> Option<&mut block::BlockFtl> {
        match &mut self.scheme {
            Scheme::Block(f) => Some(f),
            Scheme::Page(_) => None,
        }
    }

    forward! {
        /// The flash geometry the FTL manages.
        fn geometry(&self) -> &Geometry;
        /// Logical pages of the host.
        fn logical_pages(&self) -> u64;
        fn stats(&self) -> &FtlStats;
        /// Whether the medium is written in place (`flash.medium = "in_place"`).
        fn in_place(&self) -> bool;
        fn placement(&self) -> Placement;
        fn block_state(&self, b: BlockId) -> BlockState;
        fn valid_pages(&self, b: BlockId) -> u32;
        /// Erase count of every block, by global block number.
        fn erase_counts(&self) -> &[u32];
        fn erase_count_summary(&self) -> EraseCounts;
        /// Free blocks over every plane.
        fn total_free_blocks(&self) -> u64;
        /// Free pages of a plane: free blocks plus the unwritten tail of its open blocks.
        fn free_pages(&self, plane: PlaneId) -> u64;
        /// Whether a plane is down to its GC reserve (user writes to it must wait).
        fn at_reserve(&self, plane: PlaneId) -> bool;
        /// Page offset the next write of `stream` in `plane` would get, or None if it must
        /// wait.
        fn next_page_offset(&self, plane: PlaneId, stream: StreamId) -> Option<u32>;
        /// The physical page of every logical page of the host (NONE where unmapped).
        fn l2p_table(&self) -> Vec<u32>;
        fn map_change_bytes(&self) -> u64;
        /// Bytes of the table of partly written pages (sub-page writes' valid sectors).
        fn partial_bytes(&self) -> u64;
        /// The cached mapping table, if the map is cached.
        fn cmt(&self) -> Option<&cmt::Cmt>;
        /// Whether page transactions look their entry up first (`map_lookup`).
        fn map_cached(&self) -> bool;
        /// Translation pages of the cached map (0 when the map is wholly in DRAM).
        fn translation_pages(&self) -> u64;
        /// The logical page under which translation page `t` is stored.
        fn tpage_lpn(&self, t: u32) -> Lpn;
        /// Sectors of `lpn` that hold data (`full` = the whole-page mask): none when unmapped.
        fn valid_sectors(&self, lpn: Lpn, full: u64) -> u64;
        /// Where `lpn` lives now, if it is mapped.
        fn translate(&self, lpn: Lpn) -> Option<Ppn>;
        fn has_ops(&self) -> bool;
        fn reclaiming(&self, plane: PlaneId) -> bool;
        fn reclaim_by_copyback(&self) -> bool;
        /// The reclaim work a device still owes (`run.end = "last_completion"`).
        fn backlog(&self) -> Backlog;
        /// A one-line picture of a plane, for stall reports.
        fn describe_plane(&self, plane: PlaneId) -> String;
        fn cmt_flow_result(&self, flow: usize) -> Option<CmtLookups>;
        fn cmt_device_result(&self, page_programs: u64, page_reads: u64) -> Option<CmtDevice>;
        fn untimed_pool(&self) -> precondition::pool::PoolLevel;
        /// L2P and P2L agree, counts match, pools hold what they should.
        fn check_invariants(&self) -> Result<(), String>;
    }

    forward_mut! {
        fn take_ops(&mut self, into: &mut Vec<FlashOp>);
        fn begin_run(&mut self, flows: usize);
        /// Sets the free pool the untimed writer keeps (preconditioning resolves it).
        fn set_untimed_pool(&mut self, level: precondition::pool::PoolLevel);
        /// Plane a new user write of `lpn` goes to.
        fn target_plane(&mut self, lpn: Lpn) -> PlaneId;
        /// `target_plane` for a flow pinned to the planes `set` (its own cursor).
        fn target_plane_in(&mut self, lpn: Lpn, set: &[u32], cursor: &mut u32) -> PlaneId;
        /// A plane with room for a user page now, for a write stuck on a full plane.
        fn plane_with_room(&mut self, lpn: Lpn, pinned: Option<(&[u32], &mut u32)>) -> Option<PlaneId>;
        /// A write of `sectors` to `lpn` was accepted (before it is programmed).
        fn note_write(&mut self, lpn: Lpn, sectors: u64, full: u64);
        /// `note_write`, returning the sectors to read first (read-modify-write), if any.
        fn plan_write(&mut self, lpn: Lpn, sectors: u64, full: u64) -> u64;
        fn program_page(&mut self, lpn: Lpn, plane: PlaneId, class: OpClass) -> Ppn;
        fn read_unwritten(&mut self, lpn: Lpn, plane: PlaneId) -> Option<Ppn>;
        fn trim_page(&mut self, flow: FlowId, lpn: Lpn);
        fn map_lookup(&mut self, lpn: Lpn, flow: FlowId, write: bool, waiter: u32) -> bool;
        fn park_write(&mut self, lpn: Lpn, tx: TxId);
        fn mapping_read_done(&mut self, lpn: Lpn) -> Option<Resumed>;
        fn mapping_write_done(&mut self, lpn: Lpn);
        fn reclaim_if_wanted(&mut self, plane: PlaneId);
        fn wake_one(&mut self) -> bool;
        fn reclaim_when_idle(&mut self, plane: PlaneId);
        fn reclaim_read_begin(&mut self, lpn: Lpn, ppn: Ppn, plane: PlaneId) -> bool;
        fn reclaim_program(&mut self, lpn: Lpn, from: Ppn, plane: PlaneId, copyback: bool) -> Option<Ppn>;
        fn reclaim_program_done(&mut self, plane: PlaneId);
        fn erase_done(&mut self, plane: PlaneId);
    }

    /// Untimed write of one logical page, GC included (write-mode preconditioning and the
    /// steady-state checks): false if its plane cannot free space.
    pub fn write_untimed(&mut self, lpn: Lpn) -> bool {
        match &mut self.scheme {
            Scheme::Page(f) => page::gc::write_now(f, lpn),
            Scheme::Block(f) => f.write_untimed(lpn),
        }
    }
}
