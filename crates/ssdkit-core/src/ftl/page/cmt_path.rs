//! The cached mapping table on the request path (DFTL, Gupta et al., ASPLOS 2009; the MQSim
//! paper, FAST'18, section 4.3): a page transaction whose mapping entry is not cached waits
//! for a read of its translation page (one read per page, however many transactions wait);
//! an entry that leaves the cache dirty has its translation page written back out of place,
//! after a read of the entries the cache does not hold; GC moves and TRIM update entries
//! through the same cache. `cmt` decides hits, LRU order and dirtiness; this file decides the
//! mapping reads and writes that follow (as [`FlashOp`]s of class `Mapping`), who waits for
//! them, and counts it all.

use super::cmt::{CmtCounts, Writeback};
use super::PageFtl;
use crate::ftl::ops::{FlashOp, OpClass};
use crate::ids::{FlowId, Lpn, PlaneId, TxId};
use crate::result::{CmtDevice, CmtLookups};
use crate::settings::Settings;

/// What the cached map's path needs of the configuration.
#[derive(Debug, Clone, Copy, Default)]
pub(in crate::ftl) struct CmtConf {
    /// `ftl.cmt.mode = "per_flow"`: each flow has its own partition.
    per_flow: bool,
    /// `ftl.cmt.gc_updates = "batch"`.
    gc_batch: bool,
    /// `ftl.cmt.granularity = "entry"`: the cache holds single entries (MQSim's).
    entry: bool,
    /// `ftl.cmt.writebacks = "held"`: write-backs are never programmed (MQSim's).
    held: bool,
    capacity_entries: u64,
    entry_bytes: u32,
    /// The run was built on reads keeping the map (`Ftl::keep_map`).
    pub(in crate::ftl) map_kept: bool,
}

impl CmtConf {
    pub(in crate::ftl) fn new(s: &Settings) -> Self {
        Self {
            per_flow: s.ftl.cmt_per_flow,
            gc_batch: s.ftl.cmt_gc_batch,
            entry: s.ftl.cmt_entry,
            held: s.ftl.cmt_writebacks_held,
            capacity_entries: s
                .sizes
                .cmt
                .as_ref()
                .map_or(0, |m| m.partition_entries.iter().sum()),
            entry_bytes: s.sizes.cmt.as_ref().map_or(0, |m| m.entry_bytes),
            map_kept: false,
        }
    }
}

/// A page transaction waiting for its translation page: the caller's handle for it, its flow,
/// whether it writes, and its logical page.
pub type Waiter = (u32, FlowId, bool, u32);

/// A translation page being read, and who waits for it.
#[derive(Debug, Default)]
struct Loading {
    waiters: Vec<Waiter>,
    /// Write-backs of this page waiting for its unchanged entries.
    release: Vec<TxId>,
    /// A TRIM of this flow changed an entry of the page: it is cached dirty, in the flow's
    /// partition, when it arrives.
    trim: Option<FlowId>,
    /// Granularity "entry": the entries TRIMs changed meanwhile, cached dirty on arrival.
    trim_lpns: Vec<u32>,
}

/// What a finished mapping read lets go, in order: the page transactions that waited for it
/// (issue them), then the write-backs that waited for it (release them).
#[derive(Debug, Default)]
pub struct Resumed {
    pub waiters: Vec<Waiter>,
    pub release: Vec<TxId>,
}

/// The cached map's request path during a timed run.
#[derive(Debug, Default)]
pub(in crate::ftl) struct CmtPath {
    loading: crate::engine::FastMap<u32, Loading>,
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
    /// Granularity "entry": write-backs in flight per translation page. Their content is in
    /// DRAM until the program ends, so a miss on such a page reads nothing (MQSim's
    /// DepartingMappingEntries, Address_Mapping_Unit_Page_Level.cpp:1519-1543); with
    /// `writebacks = "held"` the program never comes, so the page stays here.
    departing: crate::engine::FastMap<u32, u32>,
}

impl CmtPath {
    pub(in crate::ftl) fn new(flows: usize, translation_pages: u64, planes: u32) -> Self {
        Self {
            flows: vec![CmtCounts::default(); flows],
            flow_reads: vec![0; flows],
            flow_writebacks: vec![0; flows],
            gc_pending: vec![false; translation_pages as usize],
            gc_tpages: vec![Vec::new(); planes as usize],
            ..Default::default()
        }
    }
}

impl PageFtl {
    #[inline]
    fn part(&self, flow: FlowId) -> usize {
        if self.cmt_conf.per_flow {
            flow.idx()
        } else {
            0
        }
    }

    /// Whether the map is cached (`ftl.cmt.mode` other than "ideal"), so that page
    /// transactions look their entry up first (`map_lookup`).
    #[inline]
    pub fn map_cached(&self) -> bool {
        self.cmt_path.is_some()
    }

    /// Looks up the entry of a page transaction of `flow` (a run with a cached map). True: the
    /// transaction may be issued now (a hit, or a translation page never written, whose entry
    /// is created without a read). False: it waits for its translation page, as `waiter` (the
    /// caller's handle), returned by `mapping_read_done`.
    pub fn map_lookup(&mut self, lpn: Lpn, flow: FlowId, write: bool, waiter: u32) -> bool {
        let cmt = self.cmt.as_mut().expect("called with a cached map");
        let path = self.cmt_path.as_mut().expect("a timed run");
        let lpn = lpn.0;
        let counts = &mut path.flows[flow.idx()];
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
        if let Some(l) = path.loading.get_mut(&t) {
            l.waiters.push((waiter, flow, write, lpn));
            path.coalesced += 1;
            self.prefetch_mapping(Lpn(lpn));
            return false;
        }
        let departing = self.cmt_conf.entry && path.departing.contains_key(&t);
        let tlpn = self.tpage_lpn(t);
        if departing || self.translate(tlpn).is_none() {
            let part = self.part(flow);
            self.cache_unit(lpn, part, write, flow);
            return true;
        }
        let path = self.cmt_path.as_mut().expect("a timed run");
        path.lookup_reads += 1;
        path.flow_reads[flow.idx()] += 1;
        // Single entries: the sector holding the entry (MQSim's one sector).
        self.read_translation_page(t, self.cmt_conf.entry.then_some(1));
        self.path()
            .loading
            .get_mut(&t)
            .expect("just added")
            .waiters
            .push((waiter, flow, write, lpn));
        // The page's own entry is read when the translation page is in, a flash read later:
        // started now, its miss overlaps the events in between (a write cache's write-back
        // reaches here long after the host wrote, so nothing drew it ahead).
        self.prefetch_mapping(Lpn(lpn));
        false
    }

    /// Caches what a lookup of `lpn` brings in: its translation page, or (granularity
    /// "entry") its entry alone; a dirty unit leaving is written back.
    #[inline]
    fn cache_unit(&mut self, lpn: u32, part: usize, dirty: bool, flow: FlowId) {
        let cmt = self.cmt.as_mut().expect("cached");
        let wb = if self.cmt_conf.entry {
            cmt.insert_entry(lpn, part, dirty)
        } else {
            let t = cmt.tpage_of(lpn);
            cmt.insert(t, part, dirty)
        };
        self.after_insert(wb, flow);
    }

    #[inline]
    fn path(&mut self) -> &mut CmtPath {
        self.cmt_path
            .as_mut()
            .expect("a timed run with a cached map")
    }

    /// Asks for a read of translation page `t` and records it as loading: the whole page, or
    /// only the sectors of `sectors` (a mask; single entries).
    fn read_translation_page(&mut self, t: u32, sectors: Option<u64>) {
        let lpn = self.tpage_lpn(t);
        let ppn = self.translate(lpn).expect("the page is in flash");
        self.ops.push(FlashOp::Read {
            class: match sectors {
                Some(mask) => OpClass::MappingSectors(mask),
                None => OpClass::Mapping,
            },
            lpn,
            ppn,
            plane: self.geo.plane_of(ppn),
        });
        self.path().loading.insert(t, Loading::default());
    }

    /// A write-back the op list asked for (`FlashOp::Program` with `after_read`) is the
    /// transaction `tx`: it is released when its translation page's read ends.
    pub fn park_write(&mut self, lpn: Lpn, tx: TxId) {
        let t = self
            .translation_page_of(lpn)
            .expect("a mapping write writes a translation page");
        self.path()
            .loading
            .get_mut(&t)
            .expect("its read is asked for with it")
            .release
            .push(tx);
    }

    /// A read of translation page `lpn` ended: its waiting transactions get their entries
    /// (possibly evicting others, whose write-backs join the op list) and are returned to be
    /// issued, then the write-backs waiting for it to be released. None if nothing waited.
    pub fn mapping_read_done(&mut self, lpn: Lpn) -> Option<Resumed> {
        let t = self
            .translation_page_of(lpn)
            .expect("a mapping read reads a translation page");
        let l = self.path().loading.remove(&t)?;
        if self.cmt_conf.entry {
            // Each waiting entry is cached in its flow's partition (MQSim inserts every
            // entry whose slot waited for this read, cpp:1686-1700).
            for w in &l.waiters {
                let part = self.part(w.1);
                self.cache_unit(w.3, part, w.2, w.1);
            }
            if let Some(flow) = l.trim {
                let part = self.part(flow);
                for &lpn in &l.trim_lpns {
                    self.cache_unit(lpn, part, true, flow);
                }
            }
            return Some(Resumed {
                waiters: l.waiters,
                release: l.release,
            });
        }
        // The page is cached for the first waiter's flow (its partition), as a lookup of
        // that flow brought it in. A write-back's read alone caches nothing.
        let owner = l.waiters.first().map(|w| w.1).or(l.trim);
        if let Some(flow) = owner {
            let part = self.part(flow);
            let dirty = l.trim.is_some() || l.waiters.iter().any(|w| w.2);
            let wb = self.cmt.as_mut().expect("cached").insert(t, part, dirty);
            self.after_insert(wb, flow);
        }
        Some(Resumed {
            waiters: l.waiters,
            release: l.release,
        })
    }

    /// `flow`'s insertion evicted `wb`, if anything.
    #[inline]
    fn after_insert(&mut self, wb: Option<Writeback>, flow: FlowId) {
        if let Some(Writeback(t)) = wb {
            let path = self.path();
            path.eviction_writebacks += 1;
            path.flow_writebacks[flow.idx()] += 1;
            // Page granularity: every entry of the page was in DRAM, nothing to read. Entry
            // granularity: the entries not cached are read from the page on flash first
            // (MQSim, cpp:1600-1612).
            let read = self.cmt_conf.entry && self.translate(self.tpage_lpn(t)).is_some();
            self.write_back(t, read);
        }
    }

    /// Writes translation page `t` back, out of place; with `read`, after reading its
    /// current copy (to merge changes into a page the cache does not hold).
    fn write_back(&mut self, t: u32, read: bool) {
        // The scheduler runs one queue for the flows' class, which is right only while no
        // write-back (of class high) joins it: a panic, reported at the API's boundary as an
        // error, rather than a result from the wrong scheduler.
        assert!(
            !self.cmt_conf.map_kept,
            "internal error: translation page {t} written back in a run built on reads keeping \
             the map (Ftl::reads_keep_map); please report it with the configuration"
        );
        let entry = self.cmt_conf.entry;
        let path = self.path();
        path.gc_pending[t as usize] = false;
        if entry {
            *path.departing.entry(t).or_insert(0) += 1;
        }
        // Single entries: the sectors of the page's clean cached entries (MQSim's merge read).
        let sectors = if entry {
            self.cmt.as_ref().expect("cached").writeback_sectors()
        } else {
            None
        };
        // Held: MQSim still reads the page's unchanged entries for the write that never comes.
        if !self.cmt_conf.held {
            let lpn = self.tpage_lpn(t);
            let plane = self.target_plane(lpn);
            self.ops.push(FlashOp::Program {
                class: OpClass::Mapping,
                lpn,
                plane,
                after_read: read,
            });
        }
        if read && !self.path().loading.contains_key(&t) {
            self.path().writeback_reads += 1;
            self.read_translation_page(t, sectors);
        }
    }

    /// A mapping write-back of translation page `lpn` ended: with granularity "entry", a miss
    /// on the page reads flash again once no write-back of it is in flight.
    pub fn mapping_write_done(&mut self, lpn: Lpn) {
        if !self.cmt_conf.entry {
            return;
        }
        let Some(t) = self.translation_page_of(lpn) else {
            return;
        };
        let path = self.path();
        if let Some(n) = path.departing.get_mut(&t) {
            *n -= 1;
            if *n == 0 {
                path.departing.remove(&t);
            }
        }
    }

    /// GC moved logical page `lpn` of `plane`: a cached entry is updated in DRAM; otherwise
    /// (`gc_updates = "batch"`) its translation page must be rewritten, once per victim
    /// however many of its entries moved (DFTL's batch update), when the victim is erased, or
    /// (`"direct"`) it is updated without flash traffic, as MQSim does.
    pub(in crate::ftl) fn cmt_gc_moved(&mut self, lpn: Lpn, plane: PlaneId) {
        if self.translation_page_of(lpn).is_some() {
            // The translation directory is in DRAM: moving a translation page costs nothing
            // more.
            return;
        }
        let cmt = self.cmt.as_mut().expect("cached");
        let path = self.cmt_path.as_mut().expect("a timed run");
        if cmt.mark_dirty(lpn.0) {
            path.gc_cached += 1;
            return;
        }
        path.gc_uncached += 1;
        if !self.cmt_conf.gc_batch {
            return;
        }
        let t = cmt.tpage_of(lpn.0);
        if !path.gc_pending[t as usize] {
            path.gc_pending[t as usize] = true;
            path.gc_tpages[plane.idx()].push(t);
        }
    }

    /// The plane's victim is erased: write back the translation pages its moves changed (a
    /// page cached meanwhile takes the changes in DRAM instead).
    pub(in crate::ftl) fn cmt_gc_flush(&mut self, plane: PlaneId) {
        let mut pages = std::mem::take(&mut self.path().gc_tpages[plane.idx()]);
        for &t in &pages {
            if !self.path().gc_pending[t as usize] {
                continue;
            }
            let lpn = self.tpage_lpn(t);
            let cmt = self.cmt.as_mut().expect("cached");
            if cmt.page_cached(t) {
                cmt.mark_dirty(t * cmt.entries_per_tpage());
                self.path().gc_pending[t as usize] = false;
                continue;
            }
            self.path().gc_writebacks += 1;
            let in_flash = self.translate(lpn).is_some();
            self.write_back(t, in_flash);
        }
        pages.clear();
        self.path().gc_tpages[plane.idx()] = pages;
    }

    /// A TRIM unmapped `lpn` on behalf of `flow`: its entry changes in the cache. The TRIM
    /// completes at once (the firmware applies it in the background); an entry not cached
    /// has its translation page read in, and the page is cached dirty.
    pub(in crate::ftl) fn cmt_trimmed(&mut self, flow: FlowId, lpn: Lpn) {
        let part = self.part(flow);
        self.path().trim_updates += 1;
        let cmt = self.cmt.as_mut().expect("cached");
        if cmt.mark_dirty(lpn.0) {
            return;
        }
        let t = cmt.tpage_of(lpn.0);
        let entry = self.cmt_conf.entry;
        if let Some(l) = self.path().loading.get_mut(&t) {
            l.trim.get_or_insert(flow);
            if entry {
                l.trim_lpns.push(lpn.0);
            }
            return;
        }
        if self.translate(self.tpage_lpn(t)).is_none()
            || (entry && self.path().departing.contains_key(&t))
        {
            self.cache_unit(lpn.0, part, true, flow);
            return;
        }
        let path = self.path();
        path.lookup_reads += 1;
        path.flow_reads[flow.idx()] += 1;
        // Single entries: the sector holding the entry (MQSim's one sector).
        self.read_translation_page(t, self.cmt_conf.entry.then_some(1));
        let l = self.path().loading.get_mut(&t).expect("just added");
        l.trim = Some(flow);
        if entry {
            l.trim_lpns.push(lpn.0);
        }
    }

    /// The flow's lookups, for the result.
    pub fn cmt_flow_result(&self, flow: usize) -> Option<CmtLookups> {
        let path = self.cmt_path.as_ref()?;
        let c = path.flows[flow];
        Some(CmtLookups::new(
            c.read_hits,
            c.read_misses,
            c.write_hits,
            c.write_misses,
            path.flow_reads[flow],
            path.flow_writebacks[flow],
        ))
    }

    /// The device's mapping traffic, for the result: `page_programs` and `page_reads` are
    /// the flash's totals, of which mapping traffic takes a share.
    pub fn cmt_device_result(&self, page_programs: u64, page_reads: u64) -> Option<CmtDevice> {
        let cmt = self.cmt.as_ref()?;
        let path = self.cmt_path.as_ref()?;
        let sum = path
            .flows
            .iter()
            .fold(CmtCounts::default(), |a, c| CmtCounts {
                read_hits: a.read_hits + c.read_hits,
                read_misses: a.read_misses + c.read_misses,
                write_hits: a.write_hits + c.write_hits,
                write_misses: a.write_misses + c.write_misses,
            });
        let f = &self.stats;
        let share = |n: u64, d: u64| if d > 0 { n as f64 / d as f64 } else { 0.0 };
        Some(CmtDevice {
            lookups: CmtLookups::new(
                sum.read_hits,
                sum.read_misses,
                sum.write_hits,
                sum.write_misses,
                path.lookup_reads,
                path.eviction_writebacks,
            ),
            capacity_entries: self.cmt_conf.capacity_entries,
            entry_bytes: self.cmt_conf.entry_bytes,
            entries_per_translation_page: cmt.entries_per_tpage(),
            translation_pages: cmt.translation_pages(),
            cached_entries: cmt.cached_entries(),
            coalesced_misses: path.coalesced,
            lookup_reads: path.lookup_reads,
            writeback_reads: path.writeback_reads,
            eviction_writebacks: path.eviction_writebacks,
            gc_writebacks: path.gc_writebacks,
            gc_updates_cached: path.gc_cached,
            gc_updates_uncached: path.gc_uncached,
            trim_updates: path.trim_updates,
            mapping_page_writes: f.mapping_page_writes,
            gc_translation_moves: f.gc_translation_moves,
            write_amplification_share: share(
                f.mapping_page_writes + f.gc_translation_moves,
                page_programs,
            ),
            read_share: share(path.lookup_reads + path.writeback_reads, page_reads),
        })
    }
}
