//! The DRAM data cache (the MQSim paper, FAST'18, sections 3.3 and 4.2.2; docs/cache.md): logical pages with a
//! valid and a dirty sector bitmap each (a page has at most 64 sectors), kept in LRU order in
//! one partition (shared) or one per flow, and the DRAM they live in (`dram`). This module
//! holds the state and its bookkeeping; `path` makes the cache's decisions (hits, slots,
//! evictions, waits for room, flushes, FUA) and answers with plans that the simulator turns
//! into flash transactions and events. The cache keeps its own counters.
//!
//! Durability is tracked with write sequence numbers: a page that turns dirty takes the next
//! number, which stays "unpersisted" (per owning flow) until the write-back that carries it has
//! programmed the page. A Flush taken when the counter stood at S is done once no unpersisted
//! number <= S is left in its scope.

pub mod dram;
mod lru;
mod order;
mod path;

pub use dram::Dram;
pub use path::{Action, Answer, Io, Plan, ReadMiss, WriteBackIo};

use crate::config::CacheMode;
use crate::engine::{Picoseconds, Slab};
use crate::ids::{Lpn, ReqId};
use crate::settings::CacheSettings;
use lru::Lru;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// What the data cache did, per flow (the flow whose request it served, or for write-backs
/// the flow whose data they carry) or for the device.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CacheCounts {
    /// Pages of read requests whose sectors were all in the cache.
    pub read_page_hits: u64,
    /// Pages of read requests with some sectors in the cache (the rest read from flash).
    pub read_page_partial_hits: u64,
    /// Pages of read requests with no sector in the cache.
    pub read_page_misses: u64,
    /// Read sectors served from DRAM.
    pub read_sectors_from_dram: u64,
    /// Read sectors read from flash (misses and the missing part of partial hits).
    pub read_sectors_from_flash: u64,
    /// Pages read from flash kept in the read cache.
    pub read_fills: u64,
    /// Pages of write requests that merged into a page already cached.
    pub write_page_hits: u64,
    /// Pages of write requests that took a new cache slot.
    pub write_page_misses: u64,
    /// Sectors written into the cache by write requests.
    pub write_sectors: u64,
    /// Dirty sectors overwritten in the cache before they were written back (they never
    /// reach flash).
    pub write_absorbed_sectors: u64,
    /// Write requests that waited for room (every slot dirty or being written back).
    pub writes_waited: u64,
    /// Their total wait for room, in microseconds.
    pub write_wait_us: f64,
    /// Clean pages dropped to make room.
    pub clean_evictions: u64,
    /// Dirty pages written back to make room.
    pub dirty_evictions: u64,
    /// Write-backs (page programs through the FTL): evictions, flushes and FUA writes.
    pub write_back_pages: u64,
    /// Dirty sectors the write-backs carried to flash.
    pub write_back_sectors: u64,
    /// Write-backs a Flush started.
    pub flush_write_backs: u64,
    /// Write-backs of Force Unit Access writes.
    pub fua_write_backs: u64,
    /// Flush commands completed through the cache.
    pub flushes: u64,
    /// Dirty pages left in the cache at the end of the run (never written back).
    pub dirty_pages_at_end: u64,
    /// `cache.write_back = "mqsim"`: write-backs of pages not written in the current
    /// one-second window, started by the write (part of `write_back_pages`).
    // Left out of results when 0, which stay as before it existed.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cold_write_backs: u64,
    /// read_page_hits / (read_page_hits + read_page_partial_hits + read_page_misses); 0
    /// without reads.
    pub read_page_hit_rate: f64,
}

impl CacheCounts {
    pub fn merge(&mut self, o: &CacheCounts) {
        self.read_page_hits += o.read_page_hits;
        self.read_page_partial_hits += o.read_page_partial_hits;
        self.read_page_misses += o.read_page_misses;
        self.read_sectors_from_dram += o.read_sectors_from_dram;
        self.read_sectors_from_flash += o.read_sectors_from_flash;
        self.read_fills += o.read_fills;
        self.write_page_hits += o.write_page_hits;
        self.write_page_misses += o.write_page_misses;
        self.write_sectors += o.write_sectors;
        self.write_absorbed_sectors += o.write_absorbed_sectors;
        self.writes_waited += o.writes_waited;
        self.write_wait_us += o.write_wait_us;
        self.clean_evictions += o.clean_evictions;
        self.dirty_evictions += o.dirty_evictions;
        self.write_back_pages += o.write_back_pages;
        self.write_back_sectors += o.write_back_sectors;
        self.flush_write_backs += o.flush_write_backs;
        self.fua_write_backs += o.fua_write_backs;
        self.flushes += o.flushes;
        self.dirty_pages_at_end += o.dirty_pages_at_end;
        self.cold_write_backs += o.cold_write_backs;
        self.set_rate();
    }

    /// Fills in `read_page_hit_rate`.
    pub fn set_rate(&mut self) {
        let pages = self.read_page_hits + self.read_page_partial_hits + self.read_page_misses;
        self.read_page_hit_rate = if pages > 0 {
            self.read_page_hits as f64 / pages as f64
        } else {
            0.0
        };
    }
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// One cached logical page.
#[derive(Debug, Clone, Copy)]
pub struct Entry {
    pub lpn: Lpn,
    /// Sectors whose current data is in DRAM.
    pub valid: u64,
    /// Sectors written by the host and not yet handed to a write-back.
    pub dirty: u64,
    /// Sequence number of the write that made the page dirty (0 when not dirty).
    pub dirty_seq: u64,
    /// Flow whose dirty data the page holds (or that brought it in).
    pub owner: u32,
    /// Partition (LRU list) of the page.
    pub part: u32,
    /// Write-backs of the page in flight.
    pub busy: u16,
    /// Chosen as a victim: leaves the cache when its write-back ends (unless written again).
    pub evicting: bool,
}

/// No cache entry (a page read from flash that the cache does not keep).
pub const NO_ENTRY: u32 = u32::MAX;

/// A write request waiting for room in its partition: its pages before `page` have their
/// slots.
#[derive(Debug, Clone, Copy)]
struct Waiter {
    req: ReqId,
    flow: u32,
    start_sector: u64,
    sectors: u32,
    page: u32,
    since: Picoseconds,
}

#[derive(Debug, Clone, Default)]
struct Partition {
    /// Slots (pages).
    cap: u64,
    used: u64,
    waiters: VecDeque<Waiter>,
    /// Pages the waiters may still need (an upper bound: some may merge into cached pages).
    wanted: u64,
    /// Evictions in flight: slots that will free up.
    incoming: u64,
    /// `cache.write_back = "mqsim"`: sectors carried by this partition's write-backs in
    /// flight (MQSim's back-pressure depth, one per partition as its DRAM request queues).
    inflight_sectors: u64,
}

/// `cache.write_back = "mqsim"`: MQSim's hot/cold separation and back-pressure.
#[derive(Debug, Clone)]
struct MqsimDestage {
    /// Writes wait while a partition's write-backs in flight carry this many sectors.
    max_inflight_sectors: u64,
    /// Per flow: pages written in the current window (MQSim's `bloom_filter`, a set).
    written: Vec<crate::engine::FastMap<Lpn, ()>>,
    /// The first write after this time clears its flow's set and opens a new window.
    next_reset: Picoseconds,
}

/// A write-back in flight.
#[derive(Debug, Clone, Copy)]
struct WriteBack {
    entry: u32,
    /// The write sequence number it makes durable (0: none, the page held no dirty data).
    seq: u64,
    flow: u32,
    /// Dirty sectors it carries.
    sectors: u32,
}

/// A Flush waiting for write-backs: done when nothing written at or before `seq` in its scope
/// (`flow`, or every flow when None) is unpersisted.
#[derive(Debug, Clone, Copy)]
struct PendingFlush {
    req: ReqId,
    seq: u64,
    flow: Option<u32>,
}

pub struct DataCache {
    mode: CacheMode,
    write: bool,
    read: bool,
    /// Sectors per page and bytes per sector.
    spp: u32,
    sector_bytes: u64,
    entries: Vec<Entry>,
    free: Vec<u32>,
    index: crate::engine::FastMap<Lpn, u32>,
    lru: Lru,
    parts: Vec<Partition>,
    per_flow: bool,
    seq: u64,
    /// Per flow: dirty pages not yet handed to a write-back, by their sequence number.
    dirty: Vec<order::SeqQueue>,
    /// Per flow: sequence numbers of dirty data in write-backs in flight.
    inflight: Vec<order::SeqHeap>,
    wbs: Slab<WriteBack>,
    dram: Dram,
    stats: Vec<CacheCounts>,
    flush_device: bool,
    flushes: Vec<PendingFlush>,
    /// Per flow: `flow.fua`.
    fua: Vec<bool>,
    /// Per request slot: sectors of a read served from DRAM (sent when the DRAM read ends).
    hit_sectors: Vec<u32>,
    /// The buffer of the next plan.
    spare: Vec<Action>,
    mqsim: Option<MqsimDestage>,
}

impl DataCache {
    /// The cache `k` describes (one per flow of `k.fua`).
    pub fn new(k: &CacheSettings) -> Box<Self> {
        let flows = k.fua.len().max(1);
        let parts: Vec<Partition> = k
            .partition_pages
            .iter()
            .map(|&cap| Partition {
                cap,
                ..Default::default()
            })
            .collect();
        Box::new(Self {
            mode: k.mode,
            write: k.mode.caches_writes(),
            read: k.mode.caches_reads(),
            spp: k.sectors_per_page,
            sector_bytes: k.sector_bytes,
            entries: Vec::new(),
            free: Vec::new(),
            index: Default::default(),
            lru: Lru::new(parts.len()),
            parts,
            per_flow: k.per_flow,
            seq: 0,
            dirty: vec![Default::default(); flows],
            inflight: vec![Default::default(); flows],
            wbs: Slab::new(),
            dram: Dram::new(&k.dram),
            stats: vec![CacheCounts::default(); flows],
            flush_device: k.flush_device,
            flushes: Vec::new(),
            fua: k.fua.clone(),
            hit_sectors: Vec::new(),
            spare: Vec::new(),
            mqsim: k.mqsim_inflight_sectors.map(|max| MqsimDestage {
                max_inflight_sectors: max,
                written: vec![Default::default(); flows],
                next_reset: 0,
            }),
        })
    }

    /// The partition of a flow's new pages.
    #[inline]
    fn part_of(&self, flow: u32) -> usize {
        if self.per_flow {
            flow as usize
        } else {
            0
        }
    }

    #[inline]
    fn lookup(&self, lpn: Lpn) -> Option<u32> {
        self.index.get(&lpn).copied()
    }

    #[inline]
    fn entry(&self, e: u32) -> &Entry {
        &self.entries[e as usize]
    }

    /// Marks `e` most recently used (a page being written back for eviction is in no list).
    fn touch(&mut self, e: u32) {
        let part = self.entries[e as usize].part as usize;
        self.lru.touch(part, e);
    }

    /// Writes `sectors` of flow `flow` into cached page `e`; returns the dirty sectors they
    /// overwrite.
    fn write_into(&mut self, e: u32, sectors: u64, flow: u32) -> u64 {
        let en = &mut self.entries[e as usize];
        if en.dirty == 0 {
            self.seq += 1;
            en.dirty_seq = self.seq;
            en.owner = flow;
            self.dirty[flow as usize].push(self.seq, e);
        }
        let absorbed = en.dirty & sectors;
        en.dirty |= sectors;
        en.valid |= sectors;
        absorbed
    }

    /// Adds a page for `lpn` in partition `part`, which has a free slot; clean and empty.
    fn insert(&mut self, part: usize, lpn: Lpn, flow: u32) -> u32 {
        let en = Entry {
            lpn,
            valid: 0,
            dirty: 0,
            dirty_seq: 0,
            owner: flow,
            part: part as u32,
            busy: 0,
            evicting: false,
        };
        let e = match self.free.pop() {
            Some(e) => {
                self.entries[e as usize] = en;
                e
            }
            None => {
                self.entries.push(en);
                (self.entries.len() - 1) as u32
            }
        };
        self.index.insert(lpn, e);
        self.lru.push_front(part, e);
        self.parts[part].used += 1;
        e
    }

    /// Removes clean, idle page `e` from the cache.
    fn drop_entry(&mut self, e: u32) {
        let en = self.entries[e as usize];
        debug_assert!(en.dirty == 0 && en.busy == 0);
        let part = en.part as usize;
        if self.lru.contains(e) {
            self.lru.unlink(part, e);
        }
        self.index.remove(&en.lpn);
        self.parts[part].used -= 1;
        self.free.push(e);
    }

    /// Sectors of cached page `e` are stale (a write around the cache) or discarded (TRIM):
    /// they leave the page, which leaves the cache once it holds nothing and is idle.
    fn forget(&mut self, e: u32, sectors: u64) {
        let en = &mut self.entries[e as usize];
        en.valid &= !sectors;
        if en.dirty != 0 {
            en.dirty &= !sectors;
            if en.dirty == 0 {
                en.dirty_seq = 0;
                let (owner, entries) = (en.owner as usize, &self.entries);
                self.dirty[owner].remove(|s, i| entries[i as usize].dirty_seq == s);
            }
        }
        let en = self.entries[e as usize];
        if en.valid == 0 && en.dirty == 0 && en.busy == 0 && !en.evicting {
            self.drop_entry(e);
        }
    }

    /// A flash read for cached page `e` brought `sectors` of `lpn` (the page may have left the
    /// cache meanwhile: then nothing). True when the page took them.
    fn fill(&mut self, e: u32, lpn: Lpn, sectors: u64) -> bool {
        if self.index.get(&lpn) != Some(&e) {
            return false;
        }
        let en = &mut self.entries[e as usize];
        en.valid |= sectors;
        let owner = en.owner as usize;
        self.stats[owner].read_fills += 1;
        true
    }

    /// The least recently used page of `part` with no write-back in flight.
    fn lru_idle(&self, part: usize) -> Option<u32> {
        self.lru
            .iter_from_tail(part)
            .find(|&e| self.entries[e as usize].busy == 0)
    }

    /// Hands the dirty data of `e` to a write-back (`evict`: the page leaves the cache when it
    /// ends). Returns the write-back's id and the sectors it carries.
    fn begin_write_back(&mut self, e: u32, evict: bool) -> (u32, u64) {
        let en = &mut self.entries[e as usize];
        let dirty = en.dirty;
        let seq = en.dirty_seq;
        let owner = en.owner;
        en.dirty = 0;
        en.dirty_seq = 0;
        en.busy += 1;
        let part = en.part as usize;
        en.evicting |= evict;
        if dirty != 0 {
            let entries = &self.entries;
            self.dirty[owner as usize].remove(|s, i| entries[i as usize].dirty_seq == s);
        }
        if evict {
            self.lru.unlink(part, e);
            self.parts[part].incoming += 1;
        }
        let s = &mut self.stats[owner as usize];
        s.write_back_pages += 1;
        s.write_back_sectors += dirty.count_ones() as u64;
        if self.mqsim.is_some() {
            self.parts[part].inflight_sectors += dirty.count_ones() as u64;
        }
        let wb = self.wbs.insert(WriteBack {
            entry: e,
            seq: if dirty != 0 { seq } else { 0 },
            flow: owner,
            sectors: dirty.count_ones(),
        });
        if dirty != 0 {
            self.inflight[owner as usize].push(seq, wb);
        }
        (wb, dirty)
    }

    /// Write-back `wb` has programmed its page. Returns the partition that may have a free
    /// slot now.
    fn end_write_back(&mut self, wb: u32) -> usize {
        let w = *self.wbs.get(wb);
        // A freed write-back holds no data (its item in `inflight` goes stale).
        self.wbs.get_mut(wb).seq = 0;
        self.wbs.remove(wb);
        if w.seq != 0 {
            let wbs = &self.wbs;
            self.inflight[w.flow as usize].remove(|s, i| wbs.get(i).seq == s);
        }
        let e = w.entry;
        let en = &mut self.entries[e as usize];
        en.busy -= 1;
        let part = en.part as usize;
        if self.mqsim.is_some() {
            self.parts[part].inflight_sectors -= w.sectors as u64;
        }
        if en.evicting && en.busy == 0 {
            en.evicting = false;
            self.parts[part].incoming -= 1;
            if en.dirty == 0 {
                self.drop_entry_unlinked(e);
            } else {
                // Written again while it was written back: it stays, most recently used.
                self.lru.push_front(part, e);
            }
        }
        part
    }

    fn drop_entry_unlinked(&mut self, e: u32) {
        let en = self.entries[e as usize];
        self.index.remove(&en.lpn);
        self.parts[en.part as usize].used -= 1;
        self.free.push(e);
    }

    /// The current write sequence number (a Flush taken now waits for data up to it).
    fn seq(&self) -> u64 {
        self.seq
    }

    /// Dirty pages (not yet handed to a write-back) of `flow`, or of every flow.
    fn dirty_pages(&self, flow: Option<u32>) -> Vec<u32> {
        match flow {
            Some(f) => self.dirty[f as usize].ids(self.dirty_live()).collect(),
            None => {
                let mut v: Vec<(u64, u32)> = self
                    .dirty
                    .iter()
                    .flat_map(|q| q.live_items(self.dirty_live()))
                    .collect();
                v.sort_unstable();
                v.into_iter().map(|(_, e)| e).collect()
            }
        }
    }

    /// Whether an item of `dirty` is live: its page still holds that dirty data.
    fn dirty_live(&self) -> impl Fn(u64, u32) -> bool + '_ {
        |s, e| self.entries[e as usize].dirty_seq == s
    }

    /// Whether everything written at or before `seq` by `flow` (or by every flow) is on flash.
    fn persisted(&self, flow: Option<u32>, seq: u64) -> bool {
        let ok = |f: usize| {
            self.dirty[f].first().is_none_or(|s| s > seq)
                && self.inflight[f].first().is_none_or(|s| s > seq)
        };
        match flow {
            Some(f) => ok(f as usize),
            None => (0..self.dirty.len()).all(ok),
        }
    }

    /// What the cache did for flow `flow` so far, with the dirty pages it holds now.
    pub fn flow_counts(&self, flow: usize) -> CacheCounts {
        let mut s = self.stats[flow];
        s.dirty_pages_at_end = self.dirty[flow].len() as u64;
        s.set_rate();
        s
    }

    /// Flows the cache counts for.
    pub fn flows(&self) -> usize {
        self.stats.len()
    }

    pub fn mode(&self) -> CacheMode {
        self.mode
    }

    /// Slots (pages) of every partition.
    pub fn capacity_pages(&self) -> u64 {
        self.parts.iter().map(|p| p.cap).sum()
    }

    /// Pages cached now.
    pub fn pages(&self) -> u64 {
        self.parts.iter().map(|p| p.used).sum()
    }

    /// DRAM accesses so far and their total time.
    pub fn dram_use(&self) -> (u64, Picoseconds) {
        (self.dram.accesses, self.dram.busy_ps)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cache(cap_pages: u64) -> DataCache {
        let k = crate::config::CacheConfig {
            mode: CacheMode::Write,
            capacity_bytes: cap_pages * 4096,
            ..Default::default()
        };
        *DataCache::new(&CacheSettings::of(&k, vec![false], 4096, 512).unwrap())
    }

    #[test]
    fn merge_write_back_and_persistence() {
        let mut c = cache(2);
        let e = c.insert(0, Lpn(7), 0);
        assert_eq!(c.write_into(e, 0b0011, 0), 0);
        assert_eq!(c.write_into(e, 0b0110, 0), 0b0010);
        assert_eq!(c.entry(e).dirty, 0b0111);
        let s = c.seq();
        assert!(!c.persisted(Some(0), s));
        let (wb, sectors) = c.begin_write_back(e, true);
        assert_eq!(sectors, 0b0111);
        assert!(!c.persisted(Some(0), s));
        assert_eq!(c.lru_idle(0), None);
        assert_eq!(c.end_write_back(wb), 0);
        assert!(c.persisted(Some(0), s));
        // Evicted and clean: gone.
        assert_eq!(c.lookup(Lpn(7)), None);
        assert_eq!(c.parts[0].used, 0);
    }

    #[test]
    fn written_again_while_evicting_stays() {
        let mut c = cache(1);
        let e = c.insert(0, Lpn(1), 0);
        c.write_into(e, 1, 0);
        let (wb, _) = c.begin_write_back(e, true);
        c.write_into(e, 2, 0);
        c.end_write_back(wb);
        assert_eq!(c.lookup(Lpn(1)), Some(e));
        assert_eq!(c.lru_idle(0), Some(e));
        assert_eq!(c.parts[0].incoming, 0);
    }
}
