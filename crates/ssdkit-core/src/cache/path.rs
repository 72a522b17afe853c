//! The data cache's decisions on the request path (docs/cache.md): what a request hits, which
//! slots it takes, which pages are written back and when, which waiting writes may go, when a
//! Flush is done, and the DRAM time of what the cache serves. Each method answers in plain
//! values, most with a [`Plan`]; the simulator turns the answer into flash transactions and
//! events, in the plan's order (the order of the plan is the order of the simulation's
//! events). Reads, the hottest path, are answered page by page ([`DataCache::read_page`])
//! rather than through a plan buffer.
//!
//! - Writes (write cache): each page merges into its cached page or takes a slot (a free one,
//!   or the least recently used page if it is clean). When the least recently used idle page
//!   is dirty, it is written back and the write waits for the slot (backpressure): waiting
//!   writes of a partition are served in arrival order, and as many evictions run as their
//!   pages need. With its slots, the write's data crosses the host link, goes into DRAM, and
//!   the write completes (FUA writes: once their pages are programmed).
//! - Reads: cached sectors come out of DRAM, the others from flash; with a read cache, pages
//!   read from flash are kept (when a slot is free or clean, never by waiting).
//! - Flush: writes back the dirty pages of its scope and completes when all data written
//!   before it in that scope is programmed.

use super::{DataCache, PendingFlush, Waiter, NO_ENTRY};
use crate::engine::{derive_stream, Picoseconds, PS_PER_S, PS_PER_US};
use crate::frontend::split;
use crate::ids::{FlowId, Lpn, ReqId};
use crate::workload::Op;
use rand::Rng;

/// A host request as the cache sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Io {
    pub req: ReqId,
    pub flow: FlowId,
    pub start_sector: u64,
    pub sectors: u32,
}

/// A write-back to start: program `lpn` with its `dirty` sectors and the other `cached`
/// sectors from DRAM, for `flow`; `wb` is the write-back's record (give it back to
/// [`DataCache::write_back_done`]), `req` a FUA write that completes with it (or NONE).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WriteBackIo {
    pub lpn: Lpn,
    pub dirty: u64,
    pub cached: u64,
    pub flow: FlowId,
    pub wb: u32,
    pub req: ReqId,
}

/// The sectors of a read's page that must come from flash, and the cache entry that keeps
/// them (a read cache) or [`NO_ENTRY`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadMiss {
    pub sectors: u64,
    pub fill: u32,
}

/// How the cache takes a request.
#[derive(Debug)]
pub enum Answer {
    /// A read: page by page ([`DataCache::read_page`], then [`DataCache::read_from_dram`]).
    Read,
    /// What to do now.
    Plan(Plan),
    /// The request takes the uncached path.
    Uncached,
}

/// One step of a plan.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Action {
    /// Start a write-back (a part of its FUA write, if any).
    WriteBack(WriteBackIo),
    /// Write `req` has its slots: its data may cross the host link and go into DRAM
    /// ([`DataCache::write_data`]).
    WriteData(ReqId),
    /// Request `req` is done with the cache (a Flush whose data is on flash, a write without
    /// FUA whose data is in DRAM).
    Complete(ReqId),
}

/// What the simulator must do, in order. With `parts_of`, that FUA write completes when its
/// write-backs are done.
#[derive(Debug, Default)]
pub struct Plan {
    pub actions: Vec<Action>,
    pub parts_of: Option<ReqId>,
    /// The page the next eviction for room will likely write back (the least recently used
    /// page after this plan's): its mapping can start loading now. A write cache full of
    /// random writes sends each write-back to a translation page and a map slot not touched
    /// since the host wrote the page; loaded a host request ahead, those misses overlap the
    /// events in between (MQSim's 1 M random writes through its caches, 9 % less loop).
    pub next_victim: Option<Lpn>,
}

impl DataCache {
    /// A plan with the spare buffer (no allocation once it has grown).
    #[inline]
    fn plan(&mut self) -> Plan {
        let mut actions = std::mem::take(&mut self.spare);
        actions.clear();
        Plan {
            actions,
            parts_of: None,
            next_victim: None,
        }
    }

    /// Gives a carried-out plan's buffer back for the next one.
    #[inline]
    pub fn recycle(&mut self, plan: Plan) -> Option<ReqId> {
        self.spare = plan.actions;
        plan.parts_of
    }

    /// The cache's part of a request after the firmware. Uncached: the request takes the
    /// uncached path (writes around a read-only cache, TRIMs, flushes without a write cache),
    /// after the cache dropped what they make stale.
    #[inline]
    pub fn request(&mut self, now: Picoseconds, op: Op, io: Io) -> Answer {
        match op {
            Op::Read => Answer::Read,
            Op::Write if self.write => Answer::Plan(self.write(now, io)),
            Op::Flush if self.write => Answer::Plan(self.flush(io.req, io.flow)),
            Op::Write | Op::Trim => {
                // A write around a read cache, or a TRIM: cached copies of those sectors are
                // stale (TRIM: whole pages, as the FTL trims them).
                self.invalidate(io.start_sector, io.sectors, op == Op::Trim);
                Answer::Uncached
            }
            Op::Flush => Answer::Uncached,
        }
    }

    /// Drops the cached copies of the sectors given (`whole_pages`: only of pages they
    /// cover entirely).
    pub fn invalidate(&mut self, start_sector: u64, sectors: u32, whole_pages: bool) {
        for c in split(start_sector, sectors, self.spp) {
            if whole_pages && !c.full {
                continue;
            }
            if let Some(e) = self.lookup(c.lpn) {
                self.forget(e, c.sectors);
            }
        }
    }

    // ----- reads -----

    /// Page `lpn` of a read of flow `flow`, its `sectors` asked: the cached ones add to
    /// `hits` (they come out of DRAM, [`DataCache::read_from_dram`]); the others, if any, are
    /// read from flash, and a read cache keeps them in an entry (a slot now, when one is free
    /// or clean).
    #[inline]
    pub fn read_page(
        &mut self,
        flow: FlowId,
        lpn: Lpn,
        sectors: u64,
        hits: &mut u64,
    ) -> Option<ReadMiss> {
        let flow = flow.0;
        let e = self.lookup(lpn);
        let hit = e.map_or(0, |e| self.entry(e).valid & sectors);
        let miss = sectors & !hit;
        let s = &mut self.stats[flow as usize];
        if miss == 0 {
            s.read_page_hits += 1;
        } else if hit != 0 {
            s.read_page_partial_hits += 1;
        } else {
            s.read_page_misses += 1;
        }
        s.read_sectors_from_dram += hit.count_ones() as u64;
        s.read_sectors_from_flash += miss.count_ones() as u64;
        if hit != 0 {
            self.touch(e.expect("a hit has a page"));
            *hits += hit.count_ones() as u64;
        }
        if miss == 0 {
            return None;
        }
        let fill = match (self.read, e) {
            (false, _) => NO_ENTRY,
            (true, Some(e)) => e,
            (true, None) => self.slot_now(lpn, flow),
        };
        Some(ReadMiss {
            sectors: miss,
            fill,
        })
    }

    /// The `hits` sectors of read `r` come out of DRAM in one access issued at `now`:
    /// returns when it ends (None without hits).
    #[inline]
    pub fn read_from_dram(&mut self, now: Picoseconds, r: ReqId, hits: u64) -> Option<Picoseconds> {
        if hits == 0 {
            return None;
        }
        let t = self.dram.access(now, hits * self.sector_bytes);
        let r = r.idx();
        if self.hit_sectors.len() <= r {
            self.hit_sectors.resize(r + 1, 0);
        }
        self.hit_sectors[r] = hits as u32;
        Some(t)
    }

    /// Sectors of read `r` served from DRAM ([`DataCache::read_from_dram`]).
    #[inline]
    pub fn read_out_sectors(&self, r: ReqId) -> u64 {
        self.hit_sectors[r.idx()] as u64
    }

    /// A slot for a page read from flash (read cache): free or clean, never by waiting, and
    /// never taken from writes waiting for room. NO_ENTRY when there is none.
    fn slot_now(&mut self, lpn: Lpn, flow: u32) -> u32 {
        let part = self.part_of(flow);
        if !self.parts[part].waiters.is_empty() {
            return NO_ENTRY;
        }
        self.take_slot(part, lpn, flow).unwrap_or(NO_ENTRY)
    }

    /// A flash read of a [`ReadMiss`] ended at `now`: its page (`fill`) keeps the
    /// sectors, written into DRAM beside the transfer to the host, unless it left the cache
    /// meanwhile. Returns the bytes read (for the host).
    #[inline]
    pub fn read_page_done(&mut self, now: Picoseconds, fill: u32, lpn: Lpn, sectors: u64) -> u64 {
        let bytes = sectors.count_ones() as u64 * self.sector_bytes;
        if fill != NO_ENTRY && self.fill(fill, lpn, sectors) {
            self.dram.access(now, bytes);
        }
        bytes
    }

    // ----- writes -----

    /// A write (write cache): its pages take their slots now, or it waits for room behind
    /// the writes already waiting in its partition, and evictions start.
    pub fn write(&mut self, now: Picoseconds, io: Io) -> Plan {
        let mut plan = self.plan();
        let flow = io.flow.0;
        self.stats[flow as usize].write_sectors += io.sectors as u64;
        let part = self.part_of(flow);
        let mut w = Waiter {
            req: io.req,
            flow,
            start_sector: io.start_sector,
            sectors: io.sectors,
            page: 0,
            since: now,
        };
        let blocked = if self.parts[part].waiters.is_empty() {
            self.reserve(&w, false, now, &mut plan)
        } else {
            Some(0)
        };
        let Some(k) = blocked else {
            plan.actions.push(Action::WriteData(io.req));
            return plan;
        };
        let pages = split(io.start_sector, io.sectors, self.spp).count() as u64;
        w.page = k;
        let p = &mut self.parts[part];
        p.waiters.push_back(w);
        p.wanted += pages - k as u64;
        self.pump(part, now, &mut plan);
        plan
    }

    /// Gives the pages of write `w` from its `page`-th on their slots: merged into the cached
    /// page, or a slot taken. Some(k): page k found no room (or, with MQSim's write-back,
    /// the write-backs in flight are at their limit). `waiting`: the write is a waiter, whose
    /// pages count in its partition's `wanted`. MQSim's write-backs of cold pages go into
    /// `plan`.
    fn reserve(
        &mut self,
        w: &Waiter,
        waiting: bool,
        now: Picoseconds,
        plan: &mut Plan,
    ) -> Option<u32> {
        let flow = w.flow;
        let part = self.part_of(flow);
        let blocked = self.reserve_pages(w, waiting, part, plan);
        if let Some(m) = &mut self.mqsim {
            // MQSim opens a new window after the write that finds the last one over
            // (Data_Cache_Manager_Flash_Advanced.cpp:338-342), clearing that flow's set only.
            if now > m.next_reset {
                m.written[flow as usize].clear();
                m.next_reset = now + PS_PER_S;
            }
        }
        blocked
    }

    fn reserve_pages(
        &mut self,
        w: &Waiter,
        waiting: bool,
        part: usize,
        plan: &mut Plan,
    ) -> Option<u32> {
        let flow = w.flow;
        for (k, c) in split(w.start_sector, w.sectors, self.spp)
            .enumerate()
            .skip(w.page as usize)
        {
            if let Some(m) = &self.mqsim {
                if self.parts[part].inflight_sectors >= m.max_inflight_sectors {
                    return Some(k as u32);
                }
            }
            let e = match self.lookup(c.lpn) {
                Some(e) => {
                    self.stats[flow as usize].write_page_hits += 1;
                    self.touch(e);
                    e
                }
                None => match self.take_slot(part, c.lpn, flow) {
                    Some(e) => {
                        self.stats[flow as usize].write_page_misses += 1;
                        e
                    }
                    None => return Some(k as u32),
                },
            };
            let absorbed = self.write_into(e, c.sectors, flow);
            self.stats[flow as usize].write_absorbed_sectors += absorbed.count_ones() as u64;
            if waiting {
                self.parts[part].wanted -= 1;
            }
            if let Some(m) = &mut self.mqsim {
                // A page not written in this window is cold: to flash at once, and out of the
                // cache once programmed unless written again (cpp:310-316, 445-462).
                if m.written[flow as usize].insert(c.lpn, ()).is_none() {
                    let evict = !self.entry(e).evicting;
                    self.stats[flow as usize].cold_write_backs += 1;
                    self.start_write_back(e, evict, ReqId::NONE, plan);
                }
            }
        }
        None
    }

    /// A new page for `lpn` in `part`: a free slot, or the least recently used idle page if it
    /// is clean (dropped). None when that page is dirty (or every page is being written back).
    fn take_slot(&mut self, part: usize, lpn: Lpn, flow: u32) -> Option<u32> {
        let p = &self.parts[part];
        if p.used >= p.cap {
            let v = self.lru_idle(part)?;
            if self.entry(v).dirty != 0 {
                return None;
            }
            self.drop_entry(v);
            self.stats[flow as usize].clean_evictions += 1;
        }
        Some(self.insert(part, lpn, flow))
    }

    /// Serves the writes waiting for room in `part`, in order, and starts the evictions they
    /// need.
    fn pump(&mut self, part: usize, now: Picoseconds, plan: &mut Plan) {
        loop {
            let Some(&w) = self.parts[part].waiters.front() else {
                return;
            };
            match self.reserve(&w, true, now, plan) {
                None => {
                    self.parts[part].waiters.pop_front();
                    let s = &mut self.stats[w.flow as usize];
                    s.writes_waited += 1;
                    s.write_wait_us += (now - w.since) as f64 / PS_PER_US as f64;
                    plan.actions.push(Action::WriteData(w.req));
                }
                Some(k) => {
                    let p = &mut self.parts[part];
                    p.waiters.front_mut().expect("the head waits").page = k;
                    if self
                        .mqsim
                        .as_ref()
                        .is_some_and(|m| p.inflight_sectors >= m.max_inflight_sectors)
                    {
                        // MQSim's back-pressure: it waits for write-backs, not for a slot.
                        return;
                    }
                    if p.incoming >= p.wanted {
                        return;
                    }
                    // The least recently used idle page is dirty (else the slot was taken):
                    // write it back to make room, then look again.
                    let Some(v) = self.lru_idle(part) else {
                        return;
                    };
                    let owner = self.entry(v).owner as usize;
                    self.stats[owner].dirty_evictions += 1;
                    self.start_write_back(v, true, ReqId::NONE, plan);
                    plan.next_victim = self
                        .lru
                        .iter_from_tail(part)
                        .next()
                        .map(|e| self.entries[e as usize].lpn);
                }
            }
        }
    }

    /// The data of a write (an [`Action::WriteData`]) is in the controller from `data_in`:
    /// its `bytes` go into DRAM; returns when they are in.
    #[inline]
    pub fn write_data(&mut self, data_in: Picoseconds, bytes: u64) -> Picoseconds {
        self.dram.access(data_in, bytes)
    }

    /// The write data of `io` is in DRAM: the write completes, or (FUA) its pages still
    /// cached are written back, and it completes when they are programmed.
    pub fn write_in(&mut self, io: Io) -> Plan {
        let mut plan = self.plan();
        if !self.fua[io.flow.idx()] {
            plan.actions.push(Action::Complete(io.req));
            return plan;
        }
        plan.parts_of = Some(io.req);
        for c in split(io.start_sector, io.sectors, self.spp) {
            // The page may have been written back and dropped meanwhile: its data is on
            // flash already.
            let Some(e) = self.lookup(c.lpn) else {
                continue;
            };
            let owner = self.entry(e).owner as usize;
            self.stats[owner].fua_write_backs += 1;
            self.start_write_back(e, false, io.req, &mut plan);
        }
        plan
    }

    /// Hands cached page `e` to a write-back (`evict`: it leaves the cache after; `req`: a
    /// FUA write that completes with it).
    fn start_write_back(&mut self, e: u32, evict: bool, req: ReqId, plan: &mut Plan) {
        let (wb, dirty) = self.begin_write_back(e, evict);
        let en = *self.entry(e);
        plan.actions.push(Action::WriteBack(WriteBackIo {
            lpn: en.lpn,
            dirty,
            cached: en.valid,
            flow: FlowId(en.owner),
            wb,
            req,
        }));
    }

    /// Write-back `wb` has programmed its page (its FUA write, if any, has one part less):
    /// what it frees goes to the writes waiting for room, and the Flushes it made durable
    /// complete.
    pub fn write_back_done(&mut self, now: Picoseconds, wb: u32) -> Plan {
        let mut plan = self.plan();
        let part = self.end_write_back(wb);
        self.pump(part, now, &mut plan);
        if !self.flushes.is_empty() {
            self.check_flushes(&mut plan);
        }
        plan
    }

    /// The flow whose data write-back `wb` carries.
    #[inline]
    pub fn write_back_flow(&self, wb: u32) -> FlowId {
        FlowId(self.wbs.get(wb).flow)
    }

    // ----- flush -----

    /// A Flush (write cache): the dirty pages of its scope are written back; it completes
    /// when everything written before it in that scope is on flash.
    pub fn flush(&mut self, r: ReqId, flow: FlowId) -> Plan {
        let mut plan = self.plan();
        self.stats[flow.idx()].flushes += 1;
        let scope = (!self.flush_device).then_some(flow.0);
        let seq = self.seq();
        for e in self.dirty_pages(scope) {
            let owner = self.entry(e).owner as usize;
            self.stats[owner].flush_write_backs += 1;
            self.start_write_back(e, false, ReqId::NONE, &mut plan);
        }
        if self.persisted(scope, seq) {
            plan.actions.push(Action::Complete(r));
        } else {
            self.flushes.push(PendingFlush {
                req: r,
                seq,
                flow: scope,
            });
        }
        plan
    }

    fn check_flushes(&mut self, plan: &mut Plan) {
        let mut i = 0;
        while i < self.flushes.len() {
            let f = self.flushes[i];
            if self.persisted(f.flow, f.seq) {
                self.flushes.remove(i);
                plan.actions.push(Action::Complete(f.req));
            } else {
                i += 1;
            }
        }
    }

    // ----- preconditioning -----

    /// `cache.precondition = "dirty"`: the cache fills itself with dirty pages of the logical
    /// ranges of the flows that write.
    pub fn precondition_for(&mut self, c: &crate::config::Config, s: &crate::settings::Settings) {
        let page = c.flash.page_size_bytes as u64;
        let writers: Vec<(usize, u64, u64)> = c
            .flows
            .iter()
            .enumerate()
            .filter(|(_, f)| f.is_trace() || f.read_fraction < 1.0)
            .map(|(i, _)| {
                let fs = &s.flows[i];
                (
                    i,
                    fs.start_bytes.div_ceil(page),
                    (fs.start_bytes + fs.range_bytes) / page,
                )
            })
            .collect();
        self.precondition_dirty(c.run.seed, &writers);
    }

    /// `cache.precondition = "dirty"`: every partition full of dirty whole pages drawn
    /// uniformly from the logical page ranges `[first, end)` of the flows that write,
    /// `writers` as (flow, first, end) (a per-flow partition from its own flow; the shared one
    /// from the writing flows in turn).
    pub fn precondition_dirty(&mut self, seed: u64, writers: &[(usize, u64, u64)]) {
        if writers.is_empty() {
            return;
        }
        let full = if self.spp >= 64 {
            u64::MAX
        } else {
            (1u64 << self.spp) - 1
        };
        let mut rng = derive_stream(seed, 0xCAC4E << 40);
        let nparts = self.parts.len();
        for part in 0..nparts {
            let flows: Vec<(usize, u64, u64)> = if nparts == 1 {
                writers.to_vec()
            } else if let Some(w) = writers.iter().find(|w| w.0 == part) {
                vec![*w]
            } else {
                continue;
            };
            let cap = self.parts[part].cap;
            let mut misses = 0u64;
            let mut turn = 0usize;
            while self.parts[part].used < cap && misses < 64 * cap + 1024 {
                let (f, first, end) = flows[turn % flows.len()];
                turn += 1;
                if end <= first {
                    misses += 1;
                    continue;
                }
                let lpn = Lpn(rng.gen_range(first..end) as u32);
                if self.lookup(lpn).is_some() {
                    misses += 1;
                    continue;
                }
                let e = self.insert(part, lpn, f as u32);
                self.write_into(e, full, f as u32);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{CacheConfig, CacheMode, CacheSharing};
    use crate::engine::PS_PER_US;
    use crate::settings::CacheSettings;

    const FULL: u64 = 0xFF;

    /// 4 KiB pages of eight 512-byte sectors, `pages` slots.
    fn cache(mode: CacheMode, pages: u64, fua: Vec<bool>) -> DataCache {
        let k = CacheConfig {
            mode,
            capacity_bytes: pages * 4096,
            ..Default::default()
        };
        *DataCache::new(&CacheSettings::of(&k, fua, 4096, 512).unwrap())
    }

    /// Request `r` of flow `f` over pages [first, first + n).
    fn io(r: u32, f: u32, first: u64, n: u32) -> Io {
        Io {
            req: ReqId(r),
            flow: FlowId(f),
            start_sector: first * 8,
            sectors: n * 8,
        }
    }

    /// A write at time 0 whose plan is carried out.
    fn write(c: &mut DataCache, io: Io) {
        let p = c.write(0, io);
        c.recycle(p);
    }

    /// A read at `now` as the simulator asks it: the pages read from flash and when the
    /// cached sectors are out of DRAM.
    fn read(
        c: &mut DataCache,
        now: Picoseconds,
        io: Io,
    ) -> (Vec<(Lpn, ReadMiss)>, Option<Picoseconds>) {
        let mut hits = 0;
        let misses = split(io.start_sector, io.sectors, c.spp)
            .filter_map(|p| Some((p.lpn, c.read_page(io.flow, p.lpn, p.sectors, &mut hits)?)))
            .collect();
        (misses, c.read_from_dram(now, io.req, hits))
    }

    fn write_backs(p: &Plan) -> Vec<WriteBackIo> {
        p.actions
            .iter()
            .filter_map(|a| match a {
                Action::WriteBack(w) => Some(*w),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn a_full_cache_evicts_its_least_recently_used_dirty_page_and_the_write_waits() {
        let mut c = cache(CacheMode::Write, 2, vec![false]);
        for (r, lpn) in [(0, 5), (1, 6)] {
            let p = c.write(0, io(r, 0, lpn, 1));
            assert_eq!(p.actions, vec![Action::WriteData(ReqId(r))]);
            c.recycle(p);
        }
        // Page 5 is the least recently used once page 6 is written again.
        write(&mut c, io(2, 0, 6, 1));
        let p = c.write(10 * PS_PER_US, io(3, 0, 7, 1));
        let wbs = write_backs(&p);
        assert_eq!(p.actions.len(), 1, "the write waits: {:?}", p.actions);
        assert_eq!(wbs.len(), 1);
        assert_eq!(
            (wbs[0].lpn, wbs[0].dirty, wbs[0].req),
            (Lpn(5), FULL, ReqId::NONE)
        );
        assert_eq!(c.write_back_flow(wbs[0].wb), FlowId(0));
        // A second write waits behind the first and starts no eviction of its own for the
        // slot already coming.
        let p2 = c.write(11 * PS_PER_US, io(4, 0, 5, 1));
        assert_eq!(write_backs(&p2).len(), 1, "{:?}", p2.actions);
        assert_eq!(write_backs(&p2)[0].lpn, Lpn(6));
        let done = c.write_back_done(30 * PS_PER_US, wbs[0].wb);
        assert_eq!(done.actions, vec![Action::WriteData(ReqId(3))]);
        let s = c.flow_counts(0);
        assert_eq!((s.dirty_evictions, s.writes_waited), (2, 1));
        assert_eq!(s.write_wait_us, 20.0);
        assert_eq!((s.write_page_hits, s.write_page_misses), (1, 3));
        assert_eq!(s.write_absorbed_sectors, 8);
        assert!(c.lookup(Lpn(5)).is_none() && c.lookup(Lpn(7)).is_some());
    }

    #[test]
    fn a_read_takes_cached_sectors_from_dram_and_the_rest_from_flash() {
        let mut c = cache(CacheMode::ReadWrite, 4, vec![false]);
        // Sectors 0-3 of page 0 cached.
        write(
            &mut c,
            Io {
                sectors: 4,
                ..io(0, 0, 0, 1)
            },
        );
        let now = 5 * PS_PER_US;
        let (misses, out) = read(&mut c, now, io(1, 0, 0, 2));
        let e0 = c.lookup(Lpn(0)).unwrap();
        let e1 = c
            .lookup(Lpn(1))
            .expect("a read cache keeps the page it misses");
        let dram_end = now + c.dram.access_ps(4 * 512);
        let miss = |sectors, fill| ReadMiss { sectors, fill };
        assert_eq!(
            misses,
            vec![(Lpn(0), miss(0xF0, e0)), (Lpn(1), miss(FULL, e1))]
        );
        assert_eq!(out, Some(dram_end));
        assert_eq!(c.read_out_sectors(ReqId(1)), 4);
        let s = c.flow_counts(0);
        assert_eq!(
            (
                s.read_page_hits,
                s.read_page_partial_hits,
                s.read_page_misses
            ),
            (0, 1, 1)
        );
        assert_eq!(
            (s.read_sectors_from_dram, s.read_sectors_from_flash),
            (4, 12)
        );
        // The flash data arrives: the next read hits entirely.
        assert_eq!(c.read_page_done(dram_end, e1, Lpn(1), FULL), 8 * 512);
        let (misses, out) = read(&mut c, dram_end, io(2, 0, 1, 1));
        assert!(misses.is_empty() && out.is_some());
        assert_eq!(c.read_out_sectors(ReqId(2)), 8);
        assert_eq!(c.flow_counts(0).read_fills, 1);
    }

    #[test]
    fn a_write_only_cache_keeps_no_page_it_reads() {
        let mut c = cache(CacheMode::Write, 4, vec![false]);
        let (misses, out) = read(&mut c, 0, io(0, 0, 3, 1));
        let miss = ReadMiss {
            sectors: FULL,
            fill: NO_ENTRY,
        };
        assert_eq!((misses, out), (vec![(Lpn(3), miss)], None));
        assert_eq!(c.pages(), 0);
    }

    #[test]
    fn a_flush_completes_when_the_last_write_back_ends() {
        let mut c = cache(CacheMode::Write, 8, vec![false, false]);
        write(&mut c, io(0, 0, 0, 2));
        write(&mut c, io(1, 1, 9, 1));
        let p = c.flush(ReqId(2), FlowId(0));
        let wbs = write_backs(&p);
        // Its own flow's pages, in the order they turned dirty; no completion yet.
        assert_eq!(
            wbs.iter().map(|w| w.lpn).collect::<Vec<_>>(),
            vec![Lpn(0), Lpn(1)]
        );
        assert_eq!(p.actions.len(), 2);
        assert!(c.write_back_done(1, wbs[1].wb).actions.is_empty());
        assert_eq!(
            c.write_back_done(2, wbs[0].wb).actions,
            vec![Action::Complete(ReqId(2))]
        );
        // Nothing left dirty in its scope: the next completes at once.
        let p = c.flush(ReqId(3), FlowId(0));
        assert_eq!(p.actions, vec![Action::Complete(ReqId(3))]);
        assert_eq!(c.flow_counts(0).flush_write_backs, 2);
        assert_eq!(c.flow_counts(1).dirty_pages_at_end, 1);
    }

    #[test]
    fn a_fua_write_writes_back_its_pages_and_waits_for_them() {
        let mut c = cache(CacheMode::Write, 8, vec![false, true]);
        write(&mut c, io(0, 1, 4, 2));
        let p = c.write_in(io(0, 1, 4, 2));
        assert_eq!(p.parts_of, Some(ReqId(0)));
        let wbs = write_backs(&p);
        assert_eq!(wbs.len(), 2);
        assert!(wbs.iter().all(|w| w.req == ReqId(0) && w.flow == FlowId(1)));
        assert_eq!(c.flow_counts(1).fua_write_backs, 2);
        // Without FUA the write is done once its data is in DRAM.
        write(&mut c, io(1, 0, 0, 1));
        let p = c.write_in(io(1, 0, 0, 1));
        assert_eq!(
            (p.parts_of, p.actions),
            (None, vec![Action::Complete(ReqId(1))])
        );
    }

    #[test]
    fn requests_around_the_cache_drop_stale_copies() {
        let mut c = cache(CacheMode::Read, 8, vec![false]);
        assert!(matches!(
            c.request(0, Op::Read, io(0, 0, 0, 3)),
            Answer::Read
        ));
        for (lpn, m) in read(&mut c, 0, io(0, 0, 0, 3)).0 {
            c.read_page_done(0, m.fill, lpn, m.sectors);
        }
        // A read cache lets writes go to flash; a TRIM of a page and a half drops one page.
        assert!(matches!(
            c.request(0, Op::Write, io(1, 0, 0, 1)),
            Answer::Uncached
        ));
        assert!(c.lookup(Lpn(0)).is_none());
        let trim = Io {
            start_sector: 12,
            sectors: 12,
            ..io(2, 0, 0, 0)
        };
        assert!(matches!(c.request(0, Op::Trim, trim), Answer::Uncached));
        assert!(c.lookup(Lpn(1)).is_some(), "half a page is not trimmed");
        assert!(c.lookup(Lpn(2)).is_none());
        assert!(matches!(
            c.request(0, Op::Flush, io(3, 0, 0, 0)),
            Answer::Uncached
        ));
    }

    #[test]
    fn dirty_preconditioning_fills_each_partition_from_its_flow() {
        let k = CacheConfig {
            mode: CacheMode::Write,
            capacity_bytes: 16 * 4096,
            sharing: CacheSharing::PerFlow,
            ..Default::default()
        };
        let mut c = *DataCache::new(&CacheSettings::of(&k, vec![false, false], 4096, 512).unwrap());
        // Flow 1 has an empty range: its partition stays empty, and the loop ends.
        c.precondition_dirty(7, &[(0, 100, 140), (1, 50, 50)]);
        assert_eq!(c.flow_counts(0).dirty_pages_at_end, 8);
        assert_eq!(c.flow_counts(1).dirty_pages_at_end, 0);
        for e in c.dirty_pages(Some(0)) {
            let en = c.entry(e);
            assert!((100..140).contains(&en.lpn.0));
            assert_eq!((en.dirty, en.valid), (FULL, FULL));
        }
    }

    /// MQSim's write-back (`cache.write_back = "mqsim"`) with `pages` slots and write-backs
    /// in flight of at most `inflight` pages.
    fn mqsim_cache(pages: u64, inflight: u64) -> DataCache {
        let k = CacheConfig {
            mode: CacheMode::Write,
            capacity_bytes: pages * 4096,
            ..Default::default()
        };
        let mut s = CacheSettings::of(&k, vec![false], 4096, 512).unwrap();
        s.mqsim_inflight_sectors = Some(inflight * 8);
        *DataCache::new(&s)
    }

    #[test]
    fn mqsim_write_back_sends_cold_pages_at_once_and_keeps_hot_ones() {
        let mut c = mqsim_cache(64, 8);
        // The first write after time 0 opens the window (until 1 s + 1 us) and, as in MQSim,
        // clears the set after itself: its page is not remembered.
        let p = c.write(PS_PER_US, io(9, 0, 1, 1));
        assert_eq!(write_backs(&p).len(), 1);
        c.recycle(p);
        // A first write of page 5 in the window: to flash at once, then the write's data.
        let p = c.write(PS_PER_US, io(0, 0, 5, 1));
        let wbs = write_backs(&p);
        assert_eq!(wbs.len(), 1);
        assert_eq!((wbs[0].lpn, wbs[0].dirty), (Lpn(5), FULL));
        assert_eq!(p.actions.last(), Some(&Action::WriteData(ReqId(0))));
        c.recycle(p);
        // Written again in the same second: hot, it stays dirty in DRAM.
        let p = c.write(2 * PS_PER_US, io(1, 0, 5, 1));
        assert_eq!(p.actions, vec![Action::WriteData(ReqId(1))]);
        c.recycle(p);
        // The first write-back ends: the page, dirty again, stays.
        let p = c.write_back_done(3 * PS_PER_US, wbs[0].wb);
        c.recycle(p);
        assert!(c.lookup(Lpn(5)).is_some());
        assert_eq!(c.flow_counts(0).dirty_pages_at_end, 1);
        // A write after the window clears the set: the next write of page 5 is cold again.
        let p = c.write(PS_PER_S + 2 * PS_PER_US, io(2, 0, 9, 1));
        assert_eq!(write_backs(&p).len(), 1, "page 9 is new: {:?}", p.actions);
        c.recycle(p);
        let p = c.write(PS_PER_S + 3 * PS_PER_US, io(3, 0, 5, 1));
        let wbs = write_backs(&p);
        assert_eq!(wbs.len(), 1, "{:?}", p.actions);
        c.recycle(p);
        // Once programmed and not written since, the page leaves the cache.
        let p = c.write_back_done(PS_PER_S + 9 * PS_PER_US, wbs[0].wb);
        c.recycle(p);
        assert!(c.lookup(Lpn(5)).is_none());
        let s = c.flow_counts(0);
        assert_eq!((s.cold_write_backs, s.write_back_pages), (4, 4));
    }

    #[test]
    fn mqsim_write_back_holds_writes_while_one_page_per_plane_is_in_flight() {
        // Two pages in flight at most, 64 free slots.
        let mut c = mqsim_cache(64, 2);
        let mut first = Vec::new();
        for r in 0..2 {
            let p = c.write(PS_PER_US, io(r, 0, 10 + r as u64, 1));
            assert_eq!(p.actions.last(), Some(&Action::WriteData(ReqId(r))));
            first.extend(write_backs(&p));
            c.recycle(p);
        }
        // The third waits for a write-back, not for a slot, and starts no eviction.
        let p = c.write(2 * PS_PER_US, io(2, 0, 12, 1));
        assert!(p.actions.is_empty(), "{:?}", p.actions);
        c.recycle(p);
        let p = c.write_back_done(5 * PS_PER_US, first[0].wb);
        let wbs = write_backs(&p);
        assert_eq!(wbs.len(), 1);
        assert_eq!(wbs[0].lpn, Lpn(12));
        assert_eq!(p.actions.last(), Some(&Action::WriteData(ReqId(2))));
        c.recycle(p);
        let s = c.flow_counts(0);
        assert_eq!((s.writes_waited, s.dirty_evictions), (1, 0));
    }
}
