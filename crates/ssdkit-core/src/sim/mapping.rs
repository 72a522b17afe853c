//! The cached mapping table on the request path (DFTL, Gupta et al., ASPLOS 2009; the MQSim
//! paper, FAST'18, section 4.3): a page transaction whose mapping entry is not cached waits
//! for a read of its translation page (one read per page, however many transactions wait);
//! an entry that leaves the cache dirty has its translation page written back out of place,
//! after a read of the entries the cache does not hold; GC moves and TRIM update entries
//! through the same cache. The FTL's `cmt` decides hits, LRU order and dirtiness; this file
//! turns its answers into mapping transactions.

use super::Simulator;
use crate::frontend::PageChunk;
use crate::ftl::cmt::{CmtCounts, Writeback};
use crate::ids::{FlowId, Lpn, PlaneId, ReqId, TxId};
use crate::result::{CmtDevice, CmtLookups};
use crate::tsu::{Tx, TxKind};
use std::collections::HashMap;

/// A page transaction waiting for its translation page, with what it needs to be issued.
#[derive(Debug, Clone, Copy)]
pub(super) enum Parked {
    /// A request's page on the uncached path.
    Page {
        req: ReqId,
        flow: FlowId,
        chunk: PageChunk,
        write: bool,
    },
    /// A data-cache read miss (`fill`: the cache entry to fill, or NONE).
    CacheRead {
        req: ReqId,
        flow: FlowId,
        lpn: Lpn,
        sectors: u64,
        fill: u32,
    },
    /// A data-cache write-back (see `issue_write_page`).
    CacheWrite {
        lpn: Lpn,
        sectors: u64,
        cached: u64,
        flow: FlowId,
        wb: u32,
        req: ReqId,
    },
}

impl Parked {
    fn flow(&self) -> FlowId {
        match *self {
            Parked::Page { flow, .. }
            | Parked::CacheRead { flow, .. }
            | Parked::CacheWrite { flow, .. } => flow,
        }
    }
    fn write(&self) -> bool {
        match *self {
            Parked::Page { write, .. } => write,
            Parked::CacheRead { .. } => false,
            Parked::CacheWrite { .. } => true,
        }
    }
}

/// A translation page being read, and who waits for it.
#[derive(Debug, Default)]
struct Loading {
    waiters: Vec<Parked>,
    /// Write-backs of this page waiting for its unchanged entries.
    release: Vec<TxId>,
    /// A TRIM of this flow changed an entry of the page: it is cached dirty, in the flow's
    /// partition, when it arrives.
    trim: Option<FlowId>,
}

/// The simulator's side of the cached mapping table.
#[derive(Debug, Default)]
pub(crate) struct MappingPath {
    per_flow: bool,
    /// `ftl.cmt.gc_updates = "batch"`.
    gc_batch: bool,
    loading: HashMap<u32, Loading>,
    flows: Vec<CmtCounts>,
    flow_reads: Vec<u64>,
    /// Per flow: eviction write-backs its insertions caused.
    flow_writebacks: Vec<u64>,
    coalesced: u64,
    lookup_reads: u64,
    writeback_reads: u64,
    eviction_writebacks: u64,
    gc_writebacks: u64,
    gc_cached: u64,
    gc_uncached: u64,
    trim_updates: u64,
    /// Per translation page: a GC move changed an entry the cache does not hold, and no
    /// write-back has carried it yet.
    gc_pending: Vec<bool>,
    /// Per plane: translation pages the plane's current victim left pending.
    gc_tpages: Vec<Vec<u32>>,
}

impl MappingPath {
    pub(crate) fn new(
        flows: usize,
        per_flow: bool,
        gc_batch: bool,
        translation_pages: u64,
        planes: u32,
    ) -> Self {
        Self {
            per_flow,
            gc_batch,
            flows: vec![CmtCounts::default(); flows],
            flow_reads: vec![0; flows],
            flow_writebacks: vec![0; flows],
            gc_pending: vec![false; translation_pages as usize],
            gc_tpages: vec![Vec::new(); planes as usize],
            ..Default::default()
        }
    }

    #[inline]
    fn part(&self, flow: FlowId) -> usize {
        if self.per_flow {
            flow.idx()
        } else {
            0
        }
    }
}

impl Simulator {
    /// Looks up the entry of a user page transaction. True: the transaction may be issued now
    /// (a hit, or a translation page never written, whose entry is created without a read).
    /// False: it waits for its translation page and is issued from `mapping_read_done`.
    pub(super) fn cmt_lookup(&mut self, r: ReqId, flow: FlowId, write: bool, c: PageChunk) -> bool {
        let parked = Parked::Page {
            req: r,
            flow,
            chunk: c,
            write,
        };
        self.cmt_lookup_for(c.lpn, parked)
    }

    /// [`Simulator::cmt_lookup`] for any page transaction: `parked` is what to issue once
    /// the translation page is in.
    pub(super) fn cmt_lookup_for(&mut self, lpn: Lpn, parked: Parked) -> bool {
        let (flow, write) = (parked.flow(), parked.write());
        let cmt = self.ftl.cmt.as_mut().expect("called with a cached map");
        let lpn = lpn.0;
        let counts = &mut self.mp.flows[flow.idx()];
        if cmt.lookup(lpn) {
            if write {
                counts.write_hits += 1;
                cmt.mark_dirty(lpn);
            } else {
                counts.read_hits += 1;
            }
            return true;
        }
        if write {
            counts.write_misses += 1;
        } else {
            counts.read_misses += 1;
        }
        let t = cmt.tpage_of(lpn);
        if let Some(l) = self.mp.loading.get_mut(&t) {
            l.waiters.push(parked);
            self.mp.coalesced += 1;
            return false;
        }
        let tlpn = self.ftl.tpage_lpn(t);
        if self.ftl.translate(tlpn).is_none() {
            let part = self.mp.part(flow);
            let wb = self
                .ftl
                .cmt
                .as_mut()
                .expect("cached")
                .insert(t, part, write);
            self.after_insert(wb, flow);
            return true;
        }
        self.mp.lookup_reads += 1;
        self.mp.flow_reads[flow.idx()] += 1;
        self.read_translation_page(t);
        self.mp
            .loading
            .get_mut(&t)
            .expect("just added")
            .waiters
            .push(parked);
        false
    }

    /// Queues a read of translation page `t` (the whole page: every entry of it is cached)
    /// and records it as loading.
    fn read_translation_page(&mut self, t: u32) {
        let sectors = self.full_page_mask();
        let lpn = self.ftl.tpage_lpn(t);
        let ppn = self.ftl.translate(lpn).expect("the page is in flash");
        let tx = self.tsu.insert(Tx {
            lpn,
            ppn,
            sectors,
            ..Tx::new(TxKind::MappingRead, self.settings.geo.plane_of(ppn))
        });
        self.mp.loading.insert(t, Loading::default());
        self.enqueue(tx);
    }

    /// A translation page is in: its waiting transactions get their entries (possibly evicting
    /// others) and are issued; write-backs waiting for it are released.
    pub(super) fn mapping_read_done(&mut self, tx: Tx) {
        let t = self
            .ftl
            .translation_page_of(tx.lpn)
            .expect("a mapping read reads a translation page");
        let Some(l) = self.mp.loading.remove(&t) else {
            return;
        };
        // The page is cached for the first waiter's flow (its partition), as a lookup of
        // that flow brought it in. A write-back's read alone caches nothing.
        let owner = l.waiters.first().map(|p| p.flow()).or(l.trim);
        if let Some(flow) = owner {
            let part = self.mp.part(flow);
            let dirty = l.trim.is_some() || l.waiters.iter().any(|p| p.write());
            let wb = self
                .ftl
                .cmt
                .as_mut()
                .expect("cached")
                .insert(t, part, dirty);
            self.after_insert(wb, flow);
        }
        for p in l.waiters {
            match p {
                Parked::Page {
                    req,
                    flow,
                    chunk,
                    write,
                } => {
                    if !self.issue_page(req, flow, !write, chunk) && self.firmware.part_done(req) {
                        self.flash_done(req, 0);
                    }
                }
                Parked::CacheRead {
                    req,
                    flow,
                    lpn,
                    sectors,
                    fill,
                } => self.cache_read_resumed(req, flow, lpn, sectors, fill),
                Parked::CacheWrite {
                    lpn,
                    sectors,
                    cached,
                    flow,
                    wb,
                    req,
                } => self.issue_write_page_mapped(lpn, sectors, cached, flow, wb, req),
            }
        }
        for w in l.release {
            self.release_write(w);
        }
    }

    /// `flow`'s insertion evicted `wb`, if anything.
    #[inline]
    fn after_insert(&mut self, wb: Option<Writeback>, flow: FlowId) {
        if let Some(Writeback(t)) = wb {
            self.mp.eviction_writebacks += 1;
            self.mp.flow_writebacks[flow.idx()] += 1;
            // Every entry of the page was in DRAM: nothing to read.
            self.write_back(t, false);
        }
    }

    /// Writes translation page `t` back, out of place; with `read`, after reading its
    /// current copy (to merge changes into a page the cache does not hold).
    fn write_back(&mut self, t: u32, read: bool) {
        self.mp.gc_pending[t as usize] = false;
        let lpn = self.ftl.tpage_lpn(t);
        let plane = self.ftl.target_plane(lpn);
        let w = self.tsu.insert(Tx {
            lpn,
            sectors: self.full_page_mask(),
            ..Tx::new(TxKind::MappingWrite, plane)
        });
        if !read {
            self.enqueue(w);
            return;
        }
        self.tsu.get_mut(w).waits = 1;
        if !self.mp.loading.contains_key(&t) {
            self.mp.writeback_reads += 1;
            self.read_translation_page(t);
        }
        self.mp
            .loading
            .get_mut(&t)
            .expect("loading")
            .release
            .push(w);
    }

    pub(super) fn full_page_mask(&self) -> u64 {
        let spp = self.settings.geo.sectors_per_page;
        if spp >= 64 {
            u64::MAX
        } else {
            (1u64 << spp) - 1
        }
    }

    /// GC moved logical page `lpn` of `plane`: a cached entry is updated in DRAM; otherwise
    /// (`gc_updates = "batch"`) its translation page must be rewritten, once per victim
    /// however many of its entries moved (DFTL's batch update), when the victim is erased, or
    /// (`"direct"`) it is updated without flash traffic, as MQSim does.
    pub(super) fn cmt_gc_moved(&mut self, lpn: crate::ids::Lpn, plane: PlaneId) {
        if self.ftl.translation_page_of(lpn).is_some() {
            // The translation directory is in DRAM: moving a translation page costs nothing
            // more.
            return;
        }
        let cmt = self.ftl.cmt.as_mut().expect("cached");
        if cmt.mark_dirty(lpn.0) {
            self.mp.gc_cached += 1;
            return;
        }
        self.mp.gc_uncached += 1;
        if !self.mp.gc_batch {
            return;
        }
        let t = cmt.tpage_of(lpn.0);
        if !self.mp.gc_pending[t as usize] {
            self.mp.gc_pending[t as usize] = true;
            self.mp.gc_tpages[plane.idx()].push(t);
        }
    }

    /// The plane's victim is erased: write back the translation pages its moves changed (a
    /// page cached meanwhile takes the changes in DRAM instead).
    pub(super) fn cmt_gc_flush(&mut self, plane: PlaneId) {
        let pages = std::mem::take(&mut self.mp.gc_tpages[plane.idx()]);
        for &t in &pages {
            if !self.mp.gc_pending[t as usize] {
                continue;
            }
            let lpn = self.ftl.tpage_lpn(t);
            let cmt = self.ftl.cmt.as_mut().expect("cached");
            if cmt.page_cached(t) {
                self.mp.gc_pending[t as usize] = false;
                cmt.mark_dirty(t * cmt.entries_per_tpage());
                continue;
            }
            self.mp.gc_writebacks += 1;
            let in_flash = self.ftl.translate(lpn).is_some();
            self.write_back(t, in_flash);
        }
        let mut pages = pages;
        pages.clear();
        self.mp.gc_tpages[plane.idx()] = pages;
    }

    /// A TRIM unmapped `lpn` on behalf of `flow`: its entry changes in the cache. The TRIM
    /// completes at once (the firmware applies it in the background); an entry not cached
    /// has its translation page read in, and the page is cached dirty.
    pub(super) fn cmt_trimmed(&mut self, flow: FlowId, lpn: crate::ids::Lpn) {
        let part = self.mp.part(flow);
        self.mp.trim_updates += 1;
        let cmt = self.ftl.cmt.as_mut().expect("cached");
        if cmt.mark_dirty(lpn.0) {
            return;
        }
        let t = cmt.tpage_of(lpn.0);
        if let Some(l) = self.mp.loading.get_mut(&t) {
            l.trim.get_or_insert(flow);
            return;
        }
        if self.ftl.translate(self.ftl.tpage_lpn(t)).is_none() {
            let wb = self.ftl.cmt.as_mut().expect("cached").insert(t, part, true);
            self.after_insert(wb, flow);
            return;
        }
        self.mp.lookup_reads += 1;
        self.mp.flow_reads[flow.idx()] += 1;
        self.read_translation_page(t);
        self.mp.loading.get_mut(&t).expect("just added").trim = Some(flow);
    }

    /// The flow's lookups, for the result.
    pub(super) fn cmt_flow_result(&self, flow: usize) -> Option<CmtLookups> {
        self.ftl.cmt.as_ref()?;
        let c = self.mp.flows[flow];
        Some(CmtLookups::new(
            c.read_hits,
            c.read_misses,
            c.write_hits,
            c.write_misses,
            self.mp.flow_reads[flow],
            self.mp.flow_writebacks[flow],
        ))
    }

    /// The device's mapping traffic, for the result.
    pub(super) fn cmt_device_result(&self) -> Option<CmtDevice> {
        let cmt = self.ftl.cmt.as_ref()?;
        let sum = self
            .mp
            .flows
            .iter()
            .fold(CmtCounts::default(), |a, c| CmtCounts {
                read_hits: a.read_hits + c.read_hits,
                read_misses: a.read_misses + c.read_misses,
                write_hits: a.write_hits + c.write_hits,
                write_misses: a.write_misses + c.write_misses,
            });
        let f = self.ftl.stats();
        let b = &self.backend.stats;
        let share = |n: u64, d: u64| if d > 0 { n as f64 / d as f64 } else { 0.0 };
        let s = self.settings.cmt.as_ref().expect("cached");
        Some(CmtDevice {
            lookups: CmtLookups::new(
                sum.read_hits,
                sum.read_misses,
                sum.write_hits,
                sum.write_misses,
                self.mp.lookup_reads,
                self.mp.eviction_writebacks,
            ),
            capacity_entries: s.partition_entries.iter().sum(),
            entry_bytes: s.entry_bytes,
            entries_per_translation_page: cmt.entries_per_tpage(),
            translation_pages: cmt.translation_pages(),
            cached_entries: cmt.cached_entries(),
            coalesced_misses: self.mp.coalesced,
            lookup_reads: self.mp.lookup_reads,
            writeback_reads: self.mp.writeback_reads,
            eviction_writebacks: self.mp.eviction_writebacks,
            gc_writebacks: self.mp.gc_writebacks,
            gc_updates_cached: self.mp.gc_cached,
            gc_updates_uncached: self.mp.gc_uncached,
            trim_updates: self.mp.trim_updates,
            mapping_page_writes: f.mapping_page_writes,
            gc_translation_moves: f.gc_translation_moves,
            write_amplification_share: share(
                f.mapping_page_writes + f.gc_translation_moves,
                b.page_programs,
            ),
            read_share: share(self.mp.lookup_reads + self.mp.writeback_reads, b.page_reads),
        })
    }
}
