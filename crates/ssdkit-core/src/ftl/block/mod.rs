//! Block-level mapping (`ftl.mapping = "block"`), and the block machinery the hybrid scheme
//! (`ftl/hybrid/`) builds on: a logical block (lpn / pages per block) maps to one physical
//! block of a fixed plane (logical blocks striped over the planes in `ftl.allocation_order`),
//! and a page keeps its offset in the block.
//!
//! A write at or above its block's write pointer is programmed in place; an overwrite (an
//! offset below it) merges: a new block of the same plane takes the written page and a copy
//! of every other valid page of the old block (reclaim reads and programs), then the old
//! block is erased. A plane runs one merge at a time and takes no user write while it runs
//! (`next_page_offset` is None), so merges throttle the host. The triggering write goes into
//! the new block at once, before the copies of lower offsets: the model does not make the
//! copies wait for program order inside the block (docs/ftl.md).
//!
//! Flash work is handed over as ops (`take_ops`): a merge is one reclaim job (reads of the
//! pages to copy, each followed by `reclaim_program` to the page the scheme chooses, then
//! the erases), reported back through `reclaim_read_begin`, `reclaim_program`,
//! `reclaim_program_done` and `erase_done` like a GC victim of the page scheme.

use std::collections::VecDeque;

use crate::config::{Associativity, Mapping, Placement};
use crate::flash::Geometry;
use crate::ftl::ops::{FlashOp, OpClass, StreamId};
use crate::ftl::page::{BlockState, FtlStats, NONE};
use crate::ids::{BlockId, Lpn, PlaneId, Ppn};
use crate::settings::Settings;

/// What a physical block is used for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::ftl) enum Kind {
    Free,
    /// The data block of `owner[b]`.
    Data,
    /// A log block (hybrid mapping).
    Log,
    /// Queued for erase by a merge.
    Erasing,
}

/// A merge waiting for its plane.
#[derive(Debug, Clone, Copy)]
pub(in crate::ftl) enum Pending {
    /// Merge logical block `lbn`; `seq` is the sequential log block to switch or complete
    /// (partial merge) if it qualifies; None: look for it (`seq_candidate`).
    Merge { lbn: u32, seq: Option<u32> },
    /// Reclaim the oldest log block of the plane's shared pool (fully associative hybrid).
    ReclaimOldestLog,
    /// Erase a log block that holds no valid page.
    EraseLog(u32),
}

/// A plane's merge: the job running and the merges waiting for it.
#[derive(Debug, Default)]
pub(in crate::ftl) struct PlaneJobs {
    pub(in crate::ftl) queue: VecDeque<Pending>,
    pub(in crate::ftl) running: bool,
    /// Copies of the running job not finished.
    pub(in crate::ftl) moves: u32,
    /// Blocks the running job erases once its copies are done, in the order their erases
    /// are queued (and end: one plane erases in order).
    pub(in crate::ftl) erases: VecDeque<u32>,
    pub(in crate::ftl) erasing: u32,
}

/// Block mapping state, flat arrays by logical page, physical page, logical block or global
/// block number. The hybrid scheme adds its log blocks (`logs`).
pub struct BlockFtl {
    pub(in crate::ftl) geo: Geometry,
    pub(in crate::ftl) ppb: u32,
    pub(in crate::ftl) logical_pages: u32,
    pub(in crate::ftl) stripe: Box<[u32]>,
    pub(in crate::ftl) l2p: Vec<u32>,
    pub(in crate::ftl) p2l: Vec<u32>,
    /// Physical (global) data block of each logical block; NONE before its first write.
    pub(in crate::ftl) data: Vec<u32>,
    /// Per block: one past the highest offset programmed (the write pointer).
    pub(in crate::ftl) written: Vec<u32>,
    pub(in crate::ftl) valid: Vec<u32>,
    pub(in crate::ftl) erase_count: Vec<u32>,
    pub(in crate::ftl) kind: Vec<Kind>,
    /// Logical block a data block (or a set-associative log block) serves; NONE otherwise.
    pub(in crate::ftl) owner: Vec<u32>,
    pub(in crate::ftl) free: Vec<VecDeque<u32>>,
    /// Logical blocks of each plane without a data block yet: each keeps a free block back.
    pub(in crate::ftl) unmapped: Vec<u32>,
    pub(in crate::ftl) jobs: Vec<PlaneJobs>,
    /// Per plane: user programs so far, whose rotation stands for the page offset the
    /// scheduler asks before it picks a write (it times the program by the page's type).
    pub(in crate::ftl) rot: Vec<u32>,
    pub(in crate::ftl) wl_dynamic: bool,
    pub(in crate::ftl) ops: Vec<FlashOp>,
    pub(in crate::ftl) stats: FtlStats,
    /// Log blocks (hybrid mapping); None for block mapping.
    pub(in crate::ftl) logs: Option<crate::ftl::hybrid::Logs>,
}

impl BlockFtl {
    /// An erased device: nothing mapped, every block free.
    pub fn new(s: &Settings) -> Self {
        let geo = s.geo;
        let ppb = geo.pages_per_block;
        let logical_pages = s.sizes.logical_pages as u32;
        let lblocks = logical_pages.div_ceil(ppb);
        let nblocks = geo.total_blocks() as usize;
        let planes = geo.planes();
        let bpp = geo.blocks_per_plane;
        let stripe = s.stripe.clone();
        let mut unmapped = vec![0u32; planes as usize];
        for lbn in 0..lblocks {
            unmapped[stripe[(lbn % planes) as usize] as usize] += 1;
        }
        let logs = match s.ftl.mapping {
            Mapping::Hybrid {
                log_blocks,
                associativity,
            } => Some(crate::ftl::hybrid::Logs::new(
                log_blocks,
                associativity == Associativity::Full,
                lblocks as usize,
                nblocks,
                planes as usize,
            )),
            _ => None,
        };
        Self {
            geo,
            ppb,
            logical_pages,
            stripe,
            l2p: vec![NONE; logical_pages as usize],
            p2l: vec![NONE; geo.total_pages() as usize],
            data: vec![NONE; lblocks as usize],
            written: vec![0; nblocks],
            valid: vec![0; nblocks],
            erase_count: vec![0; nblocks],
            kind: vec![Kind::Free; nblocks],
            owner: vec![NONE; nblocks],
            free: (0..planes)
                .map(|p| (p * bpp..(p + 1) * bpp).collect())
                .collect(),
            unmapped,
            jobs: (0..planes).map(|_| PlaneJobs::default()).collect(),
            rot: vec![0; planes as usize],
            wl_dynamic: s.ftl.wl_dynamic,
            ops: Vec::new(),
            stats: FtlStats::default(),
            logs,
        }
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
    pub fn in_place(&self) -> bool {
        false
    }
    pub fn placement(&self) -> Placement {
        Placement::Static
    }
    pub fn block_state(&self, b: BlockId) -> BlockState {
        match self.kind[b.idx()] {
            Kind::Free => BlockState::Free,
            Kind::Erasing => BlockState::Victim,
            _ if self.written[b.idx()] < self.ppb => BlockState::Open,
            _ => BlockState::Closed,
        }
    }
    pub fn valid_pages(&self, b: BlockId) -> u32 {
        self.valid[b.idx()]
    }
    pub fn erase_counts(&self) -> &[u32] {
        &self.erase_count
    }
    pub fn erase_count_summary(&self) -> crate::result::EraseCounts {
        crate::ftl::page::summarize_erases(&self.erase_count)
    }
    pub fn total_free_blocks(&self) -> u64 {
        self.free.iter().map(|f| f.len() as u64).sum()
    }
    /// Free pages of a plane: its free blocks.
    pub fn free_pages(&self, plane: PlaneId) -> u64 {
        self.free[plane.idx()].len() as u64 * self.ppb as u64
    }
    /// A plane whose merge runs takes no user write.
    pub fn at_reserve(&self, plane: PlaneId) -> bool {
        self.busy(plane.0)
    }
    /// User writes to a plane wait while a merge runs there; otherwise any write can be
    /// placed (the scheme keeps a free block back for the merge a write may start).
    #[inline]
    pub fn next_page_offset(&self, plane: PlaneId, _stream: StreamId) -> Option<u32> {
        (!self.busy(plane.0)).then(|| self.rot[plane.idx()] % self.ppb)
    }
    pub fn l2p_table(&self) -> Vec<u32> {
        self.l2p.clone()
    }
    pub fn map_change_bytes(&self) -> u64 {
        0
    }
    pub fn partial_bytes(&self) -> u64 {
        0
    }
    pub fn cmt(&self) -> Option<&crate::ftl::cmt::Cmt> {
        None
    }
    pub fn map_cached(&self) -> bool {
        false
    }
    pub fn translation_pages(&self) -> u64 {
        0
    }
    pub fn tpage_lpn(&self, t: u32) -> Lpn {
        Lpn(self.logical_pages + t)
    }
    /// A mapped page holds a whole page of data (sub-page writes read the rest first).
    #[inline]
    pub fn valid_sectors(&self, lpn: Lpn, full: u64) -> u64 {
        if self.l2p[lpn.idx()] == NONE {
            0
        } else {
            full
        }
    }
    #[inline]
    pub fn translate(&self, lpn: Lpn) -> Option<Ppn> {
        let p = self.l2p[lpn.idx()];
        (p != NONE).then_some(Ppn(p))
    }
    #[inline]
    pub fn has_ops(&self) -> bool {
        !self.ops.is_empty()
    }
    pub fn reclaiming(&self, plane: PlaneId) -> bool {
        self.busy(plane.0)
    }
    pub fn reclaim_by_copyback(&self) -> bool {
        false
    }
    pub fn backlog(&self) -> crate::result::Backlog {
        let mut b = crate::result::Backlog {
            free_blocks: self.total_free_blocks(),
            ..Default::default()
        };
        for j in &self.jobs {
            if j.running || !j.queue.is_empty() {
                b.planes_collecting += 1;
                b.gc_moves_pending += j.moves as u64;
            }
        }
        b
    }
    pub fn describe_plane(&self, plane: PlaneId) -> String {
        let j = &self.jobs[plane.idx()];
        format!(
            "plane {}: {} free blocks, {} logical blocks unmapped, merge {} ({} copies and {} erases pending, {} merges queued)",
            plane.0,
            self.free[plane.idx()].len(),
            self.unmapped[plane.idx()],
            if j.running { "running" } else { "idle" },
            j.moves,
            j.erasing,
            j.queue.len()
        )
    }
    pub fn cmt_flow_result(&self, _flow: usize) -> Option<crate::result::CmtLookups> {
        None
    }
    pub fn cmt_device_result(&self, _p: u64, _r: u64) -> Option<crate::result::CmtDevice> {
        None
    }
    pub fn untimed_pool(&self) -> crate::ftl::precondition::pool::PoolLevel {
        Default::default()
    }

    #[inline]
    pub fn take_ops(&mut self, into: &mut Vec<FlashOp>) {
        debug_assert!(into.is_empty());
        std::mem::swap(&mut self.ops, into);
    }
    pub fn begin_run(&mut self, _flows: usize) {}
    pub fn set_untimed_pool(&mut self, _level: crate::ftl::precondition::pool::PoolLevel) {}
    /// The plane of `lpn`'s logical block.
    #[inline]
    pub fn target_plane(&mut self, lpn: Lpn) -> PlaneId {
        PlaneId(self.plane_of_lbn(lpn.0 / self.ppb))
    }
    /// Pinned flows are refused by validation: a logical block's plane is fixed.
    pub fn target_plane_in(&mut self, lpn: Lpn, _set: &[u32], _cursor: &mut u32) -> PlaneId {
        self.target_plane(lpn)
    }
    pub fn plane_with_room(
        &mut self,
        _lpn: Lpn,
        _pinned: Option<(&[u32], &mut u32)>,
    ) -> Option<PlaneId> {
        None
    }
    #[inline]
    pub fn note_write(&mut self, _lpn: Lpn, _sectors: u64, _full: u64) {}
    /// The sectors of a mapped page that a sub-page write keeps (read first).
    #[inline]
    pub fn plan_write(&mut self, lpn: Lpn, sectors: u64, full: u64) -> u64 {
        self.valid_sectors(lpn, full) & !sectors
    }
    /// `ftl.unmapped_reads = "read_flash"` is refused by validation.
    pub fn read_unwritten(&mut self, _lpn: Lpn, _plane: PlaneId) -> Option<Ppn> {
        None
    }
    /// TRIM: the page is no longer valid; its block stays mapped (a later merge skips it).
    pub fn trim_page(&mut self, _flow: crate::ids::FlowId, lpn: Lpn) {
        if self.l2p[lpn.idx()] != NONE {
            self.invalidate(lpn.0);
            self.stats.trimmed_pages += 1;
        }
    }
    pub fn map_lookup(&mut self, _lpn: Lpn, _flow: crate::ids::FlowId, _w: bool, _x: u32) -> bool {
        true
    }
    pub fn park_write(&mut self, _lpn: Lpn, _tx: crate::ids::TxId) {
        unreachable!("no cached map under block mapping")
    }
    pub fn mapping_read_done(&mut self, _lpn: Lpn) -> Option<crate::ftl::Resumed> {
        None
    }
    pub fn mapping_write_done(&mut self, _lpn: Lpn) {}
    pub fn reclaim_if_wanted(&mut self, _plane: PlaneId) {}
    pub fn wake_one(&mut self) -> bool {
        false
    }
    pub fn reclaim_when_idle(&mut self, _plane: PlaneId) {}

    /// Programs a user page of `plane` (the plane of its logical block): in place, into a
    /// log block (hybrid), or into the new block of the merge it starts.
    pub fn program_page(&mut self, lpn: Lpn, plane: PlaneId, class: OpClass) -> Ppn {
        debug_assert_eq!(class, OpClass::User, "no mapping pages under block mapping");
        debug_assert!(!self.busy(plane.0), "a write while the plane merges");
        let p = plane.0;
        let lbn = lpn.0 / self.ppb;
        let off = lpn.0 % self.ppb;
        self.stats.user_page_writes += 1;
        self.rot[plane.idx()] = self.rot[plane.idx()].wrapping_add(1);
        let d = self.data[lbn as usize];
        if d == NONE {
            let b = self.alloc(p);
            self.unmapped[p as usize] -= 1;
            self.kind[b as usize] = Kind::Data;
            self.owner[b as usize] = lbn;
            self.data[lbn as usize] = b;
            return self.program_at(lpn.0, b, off);
        }
        if off >= self.written[d as usize] {
            return self.program_at(lpn.0, d, off);
        }
        if self.logs.is_some() {
            return self.log_write(lpn.0, p);
        }
        self.start_merge(lbn, p, None, Some(lpn.0));
        Ppn(self.l2p[lpn.idx()])
    }

    /// A reclaim read begins: false if its page was trimmed meanwhile (one copy fewer).
    pub fn reclaim_read_begin(&mut self, lpn: Lpn, ppn: Ppn, plane: PlaneId) -> bool {
        if self.l2p[lpn.idx()] == ppn.0 {
            return true;
        }
        self.move_done(plane.0);
        false
    }

    /// Programs the copy of `lpn` read from `from` into its offset of its logical block's
    /// (new) data block; None if the page was trimmed meanwhile.
    pub fn reclaim_program(
        &mut self,
        lpn: Lpn,
        from: Ppn,
        plane: PlaneId,
        _copyback: bool,
    ) -> Option<Ppn> {
        if self.l2p[lpn.idx()] != from.0 {
            self.move_done(plane.0);
            return None;
        }
        let d = self.data[(lpn.0 / self.ppb) as usize];
        self.stats.merges.page_copies += 1;
        Some(self.program_at(lpn.0, d, lpn.0 % self.ppb))
    }

    pub fn reclaim_program_done(&mut self, plane: PlaneId) {
        self.move_done(plane.0);
    }

    /// The oldest erase queued in `plane` ended: the block is free again.
    pub fn erase_done(&mut self, plane: PlaneId) {
        let p = plane.0;
        let j = &mut self.jobs[p as usize];
        let b = j.erases.pop_front().expect("an erase was queued");
        j.erasing -= 1;
        let done = j.erasing == 0;
        debug_assert_eq!(self.valid[b as usize], 0, "erasing a block with data");
        self.written[b as usize] = 0;
        self.erase_count[b as usize] += 1;
        self.kind[b as usize] = Kind::Free;
        self.owner[b as usize] = NONE;
        self.free[p as usize].push_back(b);
        if done {
            self.jobs[p as usize].running = false;
            self.start_next(p);
        }
    }

    /// Untimed write of one logical page, its merges done at once (preconditioning).
    pub fn write_untimed(&mut self, lpn: Lpn) -> bool {
        let plane = self.target_plane(lpn);
        self.drain_untimed();
        self.program_page(lpn, plane, OpClass::User);
        self.drain_untimed();
        true
    }

    /// Runs the queued flash work without time: every copy, then every erase.
    pub(in crate::ftl) fn drain_untimed(&mut self) {
        let mut ops = Vec::new();
        loop {
            self.take_ops(&mut ops);
            if ops.is_empty() {
                return;
            }
            for op in ops.drain(..) {
                match op {
                    FlashOp::Read {
                        lpn, ppn, plane, ..
                    } => {
                        if self.reclaim_read_begin(lpn, ppn, plane)
                            && self.reclaim_program(lpn, ppn, plane, false).is_some()
                        {
                            self.reclaim_program_done(plane);
                        }
                    }
                    FlashOp::Erase { plane, .. } => self.erase_done(plane),
                    FlashOp::Program { .. } => unreachable!("no mapping pages"),
                }
            }
        }
    }

    /// L2P and P2L agree, valid counts match, every block is in one place.
    pub fn check_invariants(&self) -> Result<(), String> {
        let mut valid = vec![0u32; self.valid.len()];
        for (l, &p) in self.l2p.iter().enumerate() {
            if p == NONE {
                continue;
            }
            if self.p2l[p as usize] != l as u32 {
                return Err(format!(
                    "lpn {l} maps to ppn {p}, which holds {}",
                    self.p2l[p as usize]
                ));
            }
            valid[(p / self.ppb) as usize] += 1;
            let b = p / self.ppb;
            if self.kind[b as usize] == Kind::Free {
                return Err(format!("lpn {l} lives in free block {b}"));
            }
        }
        if valid != self.valid {
            return Err("valid page counts disagree with the map".into());
        }
        for (lbn, &d) in self.data.iter().enumerate() {
            if d != NONE
                && (self.kind[d as usize] != Kind::Data || self.owner[d as usize] != lbn as u32)
            {
                return Err(format!(
                    "logical block {lbn}: data block {d} is {:?}",
                    self.kind[d as usize]
                ));
            }
        }
        let free: usize = self.free.iter().map(|f| f.len()).sum();
        let kinds = self.kind.iter().filter(|&&k| k == Kind::Free).count();
        if free != kinds {
            return Err(format!("{free} blocks in free pools, {kinds} free blocks"));
        }
        Ok(())
    }

    // ----- the machinery -----

    #[inline]
    pub(in crate::ftl) fn plane_of_lbn(&self, lbn: u32) -> u32 {
        self.stripe[(lbn % self.geo.planes()) as usize]
    }

    #[inline]
    pub(in crate::ftl) fn busy(&self, p: u32) -> bool {
        let j = &self.jobs[p as usize];
        j.running || !j.queue.is_empty()
    }

    /// A free block of plane `p`: with dynamic wear levelling the one with the fewest erases
    /// (the oldest on ties), else the oldest.
    pub(in crate::ftl) fn alloc(&mut self, p: u32) -> u32 {
        let f = &mut self.free[p as usize];
        let i = if self.wl_dynamic {
            let ec = &self.erase_count;
            (0..f.len())
                .min_by_key(|&i| (ec[f[i] as usize], i))
                .expect("a free block is kept for every write")
        } else {
            0
        };
        f.remove(i).expect("a free block is kept for every write")
    }

    /// Free blocks of plane `p` beyond those kept for its unmapped logical blocks.
    #[inline]
    pub(in crate::ftl) fn spare_free(&self, p: u32) -> u32 {
        self.free[p as usize].len() as u32 - self.unmapped[p as usize]
    }

    /// Maps `lpn` to offset `off` of block `b` (its old copy, if any, becomes invalid).
    pub(in crate::ftl) fn program_at(&mut self, lpn: u32, b: u32, off: u32) -> Ppn {
        let ppn = b * self.ppb + off;
        debug_assert_eq!(self.p2l[ppn as usize], NONE, "programming a written page");
        if self.l2p[lpn as usize] != NONE {
            self.invalidate(lpn);
        }
        self.l2p[lpn as usize] = ppn;
        self.p2l[ppn as usize] = lpn;
        self.valid[b as usize] += 1;
        let w = &mut self.written[b as usize];
        *w = (*w).max(off + 1);
        Ppn(ppn)
    }

    pub(in crate::ftl) fn invalidate(&mut self, lpn: u32) {
        let p = self.l2p[lpn as usize];
        self.p2l[p as usize] = NONE;
        self.valid[(p / self.ppb) as usize] -= 1;
        self.l2p[lpn as usize] = NONE;
    }

    /// Merges logical block `lbn` of plane `p` into one data block and starts the job (reads
    /// of the pages to copy, then erases): a switch or a partial merge into the sequential log
    /// block `seq` when it qualifies, else a full merge into a new block. `write`: a user page
    /// of `lbn` programmed into the new block at once (it started a full merge).
    pub(in crate::ftl) fn start_merge(
        &mut self,
        lbn: u32,
        p: u32,
        seq: Option<u32>,
        write: Option<u32>,
    ) {
        let old = self.data[lbn as usize];
        let seq_in = seq;
        let seq = seq.filter(|&s| self.qualifies(lbn, s));
        let dest = match seq {
            Some(s) => {
                if self.written[s as usize] == self.ppb {
                    self.stats.merges.switch += 1;
                } else {
                    self.stats.merges.partial += 1;
                }
                s
            }
            None => {
                self.stats.merges.full += 1;
                self.alloc(p)
            }
        };
        let mut erases: VecDeque<u32> = VecDeque::new();
        if old != NONE && old != dest {
            erases.push_back(old);
        }
        self.detach_logs(lbn, dest, &mut erases);
        // A sequential log block already detached (replaced by a newer one) that does not
        // qualify: its pages are copied out like the rest, and it is erased.
        if let Some(s) = seq_in.filter(|&s| s != dest && !erases.contains(&s)) {
            erases.push_back(s);
        }
        for &e in &erases {
            self.kind[e as usize] = Kind::Erasing;
            self.owner[e as usize] = NONE;
        }
        self.kind[dest as usize] = Kind::Data;
        self.owner[dest as usize] = lbn;
        self.data[lbn as usize] = dest;
        if let Some(l) = write {
            self.program_at(l, dest, l % self.ppb);
        }
        let mut moves = 0;
        let first = lbn * self.ppb;
        let end = (first + self.ppb).min(self.logical_pages);
        for l in first..end {
            let ppn = self.l2p[l as usize];
            if ppn != NONE && ppn / self.ppb != dest {
                moves += 1;
                self.ops.push(FlashOp::Read {
                    class: OpClass::Reclaim,
                    lpn: Lpn(l),
                    ppn: Ppn(ppn),
                    plane: PlaneId(p),
                });
            }
        }
        let j = &mut self.jobs[p as usize];
        debug_assert!(!j.running, "one merge at a time in a plane");
        j.running = true;
        j.moves = moves;
        j.erases = erases;
        if moves == 0 {
            self.issue_erases(p);
        }
    }

    /// Whether log block `s` can become `lbn`'s data block (a switch, or a partial merge):
    /// written in order from offset 0 with `lbn`'s pages, each still the newest copy.
    pub(in crate::ftl) fn qualifies(&self, lbn: u32, s: u32) -> bool {
        let w = self.written[s as usize];
        if w == 0 || self.valid[s as usize] != w {
            return false;
        }
        (0..w).all(|i| self.p2l[(s * self.ppb + i) as usize] == lbn * self.ppb + i)
    }

    /// The running job's copies are done: its erases are queued.
    fn issue_erases(&mut self, p: u32) {
        let j = &mut self.jobs[p as usize];
        j.erasing = j.erases.len() as u32;
        if j.erasing == 0 {
            j.running = false;
            self.start_next(p);
            return;
        }
        for &b in &j.erases {
            self.ops.push(FlashOp::Erase {
                plane: PlaneId(p),
                block: BlockId(b),
            });
        }
    }

    fn move_done(&mut self, p: u32) {
        let j = &mut self.jobs[p as usize];
        j.moves -= 1;
        if j.moves == 0 {
            self.issue_erases(p);
        }
    }

    /// Starts the next merge queued in plane `p`, if it is idle.
    pub(in crate::ftl) fn start_next(&mut self, p: u32) {
        while !self.jobs[p as usize].running {
            let Some(next) = self.jobs[p as usize].queue.pop_front() else {
                return;
            };
            match next {
                Pending::Merge { lbn, seq } => {
                    let seq = seq.or_else(|| self.seq_candidate(lbn));
                    self.start_merge(lbn, p, seq, None);
                }
                Pending::ReclaimOldestLog => self.reclaim_oldest_log(p),
                Pending::EraseLog(b) => {
                    self.kind[b as usize] = Kind::Erasing;
                    let j = &mut self.jobs[p as usize];
                    j.running = true;
                    j.moves = 0;
                    j.erases = VecDeque::from([b]);
                    self.issue_erases(p);
                }
            }
        }
    }
}

impl BlockFtl {
    /// Preconditioning: "sequential" writes the first `occupancy` of the logical space in
    /// order (every block written in place, no merge), "empty" nothing. The steady states of
    /// "fast" and "write" model the page map's GC and are refused by validation.
    pub(in crate::ftl) fn precondition(
        &mut self,
        c: &crate::config::Config,
    ) -> crate::result::PreconditionRecord {
        use crate::config::PreconditionMode;
        let p = &c.precondition;
        debug_assert!(matches!(
            p.mode,
            PreconditionMode::Sequential | PreconditionMode::Empty
        ));
        let wall = std::time::Instant::now();
        let mut rec = crate::result::PreconditionRecord::of(p.mode);
        if p.mode == PreconditionMode::Sequential {
            let n = (p.occupancy * self.logical_pages as f64).floor() as u32;
            for l in 0..n.min(self.logical_pages) {
                self.write_untimed(Lpn(l));
            }
            rec.occupancy = Some(p.occupancy);
        }
        self.stats = FtlStats::default();
        rec.wall_time_s = wall.elapsed().as_secs_f64();
        rec
    }
}
