//! The data cache's request path (docs/cache.md). The cache's state lives in `crate::cache`;
//! these handlers decide what goes to DRAM and what to flash, and issue the flash work.
//!
//! Every flash page operation of this path goes through one function per direction:
//! `issue_read_page` (a read miss, or the missing sectors of a partial hit) and
//! `issue_write_page` (a write-back: eviction, flush or FUA). Both translate the logical page
//! there, so a mapping cache can delay them in one place.
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

use super::{Ev, Simulator};
use crate::cache::PendingFlush;
use crate::config::Config;
use crate::engine::{derive_stream, PS_PER_US};
use crate::frontend::split;
use crate::host::Request;
use crate::ids::{FlowId, Lpn, ReqId};
use crate::tsu::{Tx, TxKind};
use crate::workload::Op;
use rand::Rng;

const NONE: u32 = u32::MAX;

impl Simulator {
    #[inline]
    fn dc(&mut self) -> &mut crate::cache::DataCache {
        self.cache.as_mut().expect("the data cache is on")
    }

    /// The cache's part of request `r` after the firmware. False: the request takes the
    /// uncached path (writes with a read-only cache, TRIMs, flushes without a write cache),
    /// after the cache dropped what they make stale.
    // Out of line: with the cache off the handlers of the uncached path stay as small as
    // before.
    #[inline(never)]
    pub(super) fn cache_dispatch(&mut self, r: ReqId, req: &Request) -> bool {
        let write = self.dc().write;
        match req.op {
            Op::Read => {
                self.cache_read(r, req);
                true
            }
            Op::Write if write => {
                self.cache_write(r, req);
                true
            }
            Op::Flush if write => {
                self.cache_flush(r, req.flow);
                true
            }
            Op::Write | Op::Trim => {
                // A write around a read cache, or a TRIM: cached copies of those sectors are
                // stale (TRIM: whole pages, as the FTL trims them).
                let spp = self.settings.geo.sectors_per_page;
                let trim = req.op == Op::Trim;
                for c in split(req.start_sector, req.sectors, spp) {
                    if trim && !c.full {
                        continue;
                    }
                    let cache = self.dc();
                    if let Some(e) = cache.lookup(c.lpn) {
                        cache.forget(e, c.sectors);
                    }
                }
                false
            }
            Op::Flush => false,
        }
    }

    // ----- reads -----

    fn cache_read(&mut self, r: ReqId, req: &Request) {
        let spp = self.settings.geo.sectors_per_page;
        let flow = req.flow.0;
        let mut pending = 0;
        let mut hit_total = 0u64;
        for c in split(req.start_sector, req.sectors, spp) {
            let cache = self.dc();
            let e = cache.lookup(c.lpn);
            let hit = e.map_or(0, |e| cache.entry(e).valid & c.sectors);
            let miss = c.sectors & !hit;
            let s = &mut cache.stats[flow as usize];
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
                cache.touch(e.expect("a hit has a page"));
                hit_total += hit.count_ones() as u64;
            }
            if miss != 0 {
                let fill = match (cache.read, e) {
                    (false, _) => NONE,
                    (true, Some(e)) => e,
                    (true, None) => self.cache_slot_now(c.lpn, flow),
                };
                if self.issue_read_page(r, req.flow, c.lpn, miss, fill) {
                    pending += 1;
                }
            }
        }
        if hit_total > 0 {
            let now = self.q.now();
            let bytes = self.settings.geo.sector_bytes_of(hit_total);
            let cache = self.dc();
            let t = cache.dram.access(now, bytes);
            if cache.hit_sectors.len() <= r.idx() {
                cache.hit_sectors.resize(r.idx() + 1, 0);
            }
            cache.hit_sectors[r.idx()] = hit_total as u32;
            self.at(t, Ev::CacheReadOut(r));
            pending += 1;
        }
        self.firmware.expect_parts(r, pending);
        if pending == 0 {
            self.flash_done(r, 0);
        }
    }

    /// A slot for a page read from flash (read cache): free or clean, never by waiting, and
    /// never taken from writes waiting for room. NONE when there is none.
    fn cache_slot_now(&mut self, lpn: Lpn, flow: u32) -> u32 {
        let cache = self.dc();
        let part = cache.part_of(flow);
        if !cache.parts[part].waiters.is_empty() {
            return NONE;
        }
        self.cache_take_slot(part, lpn, flow).unwrap_or(NONE)
    }

    /// Reads `sectors` of `lpn` from flash for request `r` (filling cache entry `fill` unless
    /// NONE). False when the page was never written and is answered without flash.
    pub(super) fn issue_read_page(
        &mut self,
        r: ReqId,
        flow: FlowId,
        lpn: Lpn,
        sectors: u64,
        fill: u32,
    ) -> bool {
        if self.cmt_on {
            let parked = super::mapping::Parked::CacheRead {
                req: r,
                flow,
                lpn,
                sectors,
                fill,
            };
            if !self.cmt_lookup_for(lpn, parked) {
                // Counted as a flash part of the request now; issued when its translation
                // page is in (`cache_read_resumed`).
                return true;
            }
        }
        self.issue_read_page_mapped(r, flow, lpn, sectors, fill)
    }

    /// A read miss whose translation page just arrived: issued now; a page never written
    /// ends its part of the request at once.
    pub(super) fn cache_read_resumed(
        &mut self,
        r: ReqId,
        flow: FlowId,
        lpn: Lpn,
        sectors: u64,
        fill: u32,
    ) {
        if !self.issue_read_page_mapped(r, flow, lpn, sectors, fill) {
            self.cache_part_done(r, 0);
        }
    }

    /// [`Simulator::issue_read_page`] with the page's mapping entry at hand.
    fn issue_read_page_mapped(
        &mut self,
        r: ReqId,
        flow: FlowId,
        lpn: Lpn,
        sectors: u64,
        fill: u32,
    ) -> bool {
        let mapped = match self.ftl.translate(lpn) {
            None if self.read_flash_unmapped => self.map_for_read(flow, lpn),
            m => m,
        };
        let Some(ppn) = mapped else {
            self.unmapped_read_page(sectors);
            return false;
        };
        let t = self.tsu.insert(Tx {
            req: r,
            lpn,
            ppn,
            sectors,
            slot: fill,
            ..Tx::new(TxKind::CacheRead, self.settings.geo.plane_of(ppn))
        });
        self.bd_tx_issued(t, r, true, 0);
        self.enqueue(t);
        true
    }

    #[inline(never)]
    pub(super) fn cache_read_done(&mut self, tx: &Tx) {
        self.progress_at = self.q.processed();
        let now = self.q.now();
        let bytes = self.settings.geo.sector_bytes_of(tx.sector_count() as u64);
        if tx.slot != NONE {
            let cache = self.dc();
            if cache.fill(tx.slot, tx.lpn, tx.sectors) {
                // The page's data is written into DRAM beside the transfer to the host.
                cache.dram.access(now, bytes);
            }
        }
        self.cache_part_done(tx.req, bytes);
    }

    #[inline(never)]
    pub(super) fn cache_read_out(&mut self, r: ReqId) {
        let sectors = self.dc().hit_sectors[r.idx()] as u64;
        self.cache_part_done(r, self.settings.geo.sector_bytes_of(sectors));
    }

    /// One part of read request `r` (a page from flash, or the sectors from DRAM) is ready:
    /// with pipelined transfers its data leaves for the host now; the last goes with the
    /// completion.
    fn cache_part_done(&mut self, r: ReqId, bytes: u64) {
        let page_bytes = if self.host.pipelined() { bytes } else { 0 };
        if self.firmware.part_done(r) {
            self.flash_done(r, page_bytes);
        } else if page_bytes > 0 {
            let now = self.q.now();
            self.host.read_chunk(now, page_bytes);
        }
    }

    // ----- writes -----

    fn cache_write(&mut self, r: ReqId, req: &Request) {
        let flow = req.flow.0;
        let now = self.q.now();
        let cache = self.dc();
        cache.stats[flow as usize].write_sectors += req.sectors as u64;
        let part = cache.part_of(flow);
        let blocked = if cache.parts[part].waiters.is_empty() {
            self.cache_reserve(r, 0, false)
        } else {
            Some(0)
        };
        let Some(k) = blocked else {
            self.cache_write_data(r);
            return;
        };
        let pages = split(
            req.start_sector,
            req.sectors,
            self.settings.geo.sectors_per_page,
        )
        .count() as u64;
        let p = &mut self.dc().parts[part];
        p.waiters.push_back(crate::cache::Waiter {
            req: r,
            page: k,
            since: now,
        });
        p.wanted += pages - k as u64;
        self.cache_pump(part);
    }

    /// Gives the pages of write `r` from its `from`-th on their slots: merged into the cached
    /// page, or a slot taken. Some(k): page k found no room. `waiting`: the request is a
    /// waiter, whose pages count in its partition's `wanted`.
    fn cache_reserve(&mut self, r: ReqId, from: u32, waiting: bool) -> Option<u32> {
        let req = *self.host.request(r);
        let flow = req.flow.0;
        let spp = self.settings.geo.sectors_per_page;
        for (k, c) in split(req.start_sector, req.sectors, spp)
            .enumerate()
            .skip(from as usize)
        {
            let cache = self.dc();
            let part = cache.part_of(flow);
            let e = match cache.lookup(c.lpn) {
                Some(e) => {
                    cache.stats[flow as usize].write_page_hits += 1;
                    cache.touch(e);
                    e
                }
                None => match self.cache_take_slot(part, c.lpn, flow) {
                    Some(e) => {
                        self.dc().stats[flow as usize].write_page_misses += 1;
                        e
                    }
                    None => return Some(k as u32),
                },
            };
            let cache = self.dc();
            let absorbed = cache.write_into(e, c.sectors, flow);
            cache.stats[flow as usize].write_absorbed_sectors += absorbed.count_ones() as u64;
            if waiting {
                cache.parts[part].wanted -= 1;
            }
        }
        None
    }

    /// A new page for `lpn` in `part`: a free slot, or the least recently used idle page if it
    /// is clean (dropped). None when that page is dirty (or every page is being written back).
    fn cache_take_slot(&mut self, part: usize, lpn: Lpn, flow: u32) -> Option<u32> {
        let cache = self.dc();
        let p = &cache.parts[part];
        if p.used >= p.cap {
            let v = cache.lru_idle(part)?;
            if cache.entry(v).dirty != 0 {
                return None;
            }
            cache.drop_entry(v);
            cache.stats[flow as usize].clean_evictions += 1;
        }
        Some(cache.insert(part, lpn, flow))
    }

    /// Serves the writes waiting for room in `part`, in order, and starts the evictions they
    /// need.
    fn cache_pump(&mut self, part: usize) {
        loop {
            let Some(&w) = self.dc().parts[part].waiters.front() else {
                return;
            };
            match self.cache_reserve(w.req, w.page, true) {
                None => {
                    let now = self.q.now();
                    let cache = self.dc();
                    cache.parts[part].waiters.pop_front();
                    let flow = self.host.request(w.req).flow.idx();
                    let s = &mut self.dc().stats[flow];
                    s.writes_waited += 1;
                    s.write_wait_us += (now - w.since) as f64 / PS_PER_US as f64;
                    self.cache_write_data(w.req);
                }
                Some(k) => {
                    let cache = self.dc();
                    let p = &mut cache.parts[part];
                    p.waiters.front_mut().expect("the head waits").page = k;
                    if p.incoming >= p.wanted {
                        return;
                    }
                    // The least recently used idle page is dirty (else the slot was taken):
                    // write it back to make room, then look again.
                    let Some(v) = cache.lru_idle(part) else {
                        return;
                    };
                    let owner = cache.entry(v).owner as usize;
                    cache.stats[owner].dirty_evictions += 1;
                    self.start_write_back(v, true, ReqId::NONE);
                }
            }
        }
    }

    /// Write `r` has its slots: its data crosses the host link (a page at a time when
    /// transfers are pipelined, else it is already in) and goes into DRAM.
    fn cache_write_data(&mut self, r: ReqId) {
        let now = self.q.now();
        let req = *self.host.request(r);
        let mut data_in = now;
        if self.host.pipelined() {
            let spp = self.settings.geo.sectors_per_page;
            for c in split(req.start_sector, req.sectors, spp) {
                data_in = self.host.write_chunk(
                    now,
                    self.settings
                        .geo
                        .sector_bytes_of(c.sectors.count_ones() as u64),
                );
            }
        }
        let bytes = req.bytes(self.settings.geo.sector_bytes as u64);
        let end = self.dc().dram.access(data_in, bytes);
        self.at(end, Ev::CacheWriteIn(r));
    }

    /// The write data of `r` is in DRAM: the write completes, or (FUA) its pages are written
    /// back and it completes when they are programmed.
    #[inline(never)]
    pub(super) fn cache_write_in(&mut self, r: ReqId) {
        let req = *self.host.request(r);
        if !self.dc().fua[req.flow.idx()] {
            self.flash_done(r, 0);
            return;
        }
        let spp = self.settings.geo.sectors_per_page;
        let mut pending = 0;
        for c in split(req.start_sector, req.sectors, spp) {
            let cache = self.dc();
            // The page may have been written back and dropped meanwhile: its data is on
            // flash already.
            let Some(e) = cache.lookup(c.lpn) else {
                continue;
            };
            let owner = cache.entry(e).owner as usize;
            cache.stats[owner].fua_write_backs += 1;
            self.start_write_back(e, false, r);
            pending += 1;
        }
        self.firmware.expect_parts(r, pending);
        if pending == 0 {
            self.flash_done(r, 0);
        }
    }

    /// Writes cached page `e` back through the FTL (`evict`: it leaves the cache after;
    /// `req`: a FUA write that completes with it).
    fn start_write_back(&mut self, e: u32, evict: bool, req: ReqId) {
        let cache = self.dc();
        let (wb, dirty) = cache.begin_write_back(e, evict);
        let en = *cache.entry(e);
        self.issue_write_page(en.lpn, dirty, en.valid, FlowId(en.owner), wb, req);
    }

    /// Programs `lpn` with its cached data: `sectors` (the dirty ones) and the other
    /// `cached` sectors from DRAM; sectors the page holds on flash and the cache does not are
    /// read first (read-modify-write, as an uncached partial write). `wb` is the write-back
    /// record; `req` a FUA write waiting for it, or NONE.
    pub(super) fn issue_write_page(
        &mut self,
        lpn: Lpn,
        sectors: u64,
        cached: u64,
        flow: FlowId,
        wb: u32,
        req: ReqId,
    ) {
        if self.cmt_on {
            let parked = super::mapping::Parked::CacheWrite {
                lpn,
                sectors,
                cached,
                flow,
                wb,
                req,
            };
            if !self.cmt_lookup_for(lpn, parked) {
                return;
            }
        }
        self.issue_write_page_mapped(lpn, sectors, cached, flow, wb, req);
    }

    /// [`Simulator::issue_write_page`] with the page's mapping entry at hand.
    pub(super) fn issue_write_page_mapped(
        &mut self,
        lpn: Lpn,
        sectors: u64,
        cached: u64,
        flow: FlowId,
        wb: u32,
        req: ReqId,
    ) {
        let full = self.full_page_mask();
        let f = &mut self.flows[flow.idx()];
        let plane = match &f.planes {
            None => self.ftl.target_plane(lpn),
            Some(set) => self.ftl.target_plane_in(lpn, set, &mut f.plane_cursor),
        };
        let mapped = self.ftl.translate(lpn);
        let w = self.tsu.insert(Tx {
            req,
            lpn,
            sectors,
            slot: wb,
            ..Tx::new(TxKind::CacheWrite, plane)
        });
        // An in-place medium writes just the sectors given: nothing to read first.
        let keep = if self.ftl.in_place() {
            0
        } else {
            self.ftl.valid_sectors(lpn, full) & !cached & !sectors
        };
        self.ftl.note_write(lpn, sectors | cached, full);
        match mapped.filter(|_| keep != 0) {
            Some(old) => {
                self.rmw_reads += 1;
                let rr = self.tsu.insert(Tx {
                    req,
                    lpn,
                    ppn: old,
                    sectors: keep,
                    link: w,
                    ..Tx::new(TxKind::RmwRead, self.settings.geo.plane_of(old))
                });
                self.tsu.get_mut(w).waits = 1;
                self.enqueue(rr);
            }
            None => self.enqueue(w),
        }
    }

    #[inline(never)]
    pub(super) fn cache_write_done(&mut self, tx: &Tx) {
        self.progress_at = self.q.processed();
        let part = self.dc().end_write_back(tx.slot);
        if tx.req.is_some() {
            // A FUA write's page is programmed.
            self.cache_part_done(tx.req, 0);
        }
        self.cache_pump(part);
        if !self.dc().flushes.is_empty() {
            self.check_flushes();
        }
    }

    // ----- flush -----

    fn cache_flush(&mut self, r: ReqId, flow: FlowId) {
        let cache = self.dc();
        cache.stats[flow.idx()].flushes += 1;
        let scope = (!cache.flush_device).then_some(flow.0);
        let seq = cache.seq();
        for e in cache.dirty_pages(scope) {
            let cache = self.dc();
            let owner = cache.entry(e).owner as usize;
            cache.stats[owner].flush_write_backs += 1;
            self.start_write_back(e, false, ReqId::NONE);
        }
        let cache = self.dc();
        if cache.persisted(scope, seq) {
            self.flash_done(r, 0);
        } else {
            cache.flushes.push(PendingFlush {
                req: r,
                seq,
                flow: scope,
            });
        }
    }

    fn check_flushes(&mut self) {
        let mut i = 0;
        while i < self.dc().flushes.len() {
            let cache = self.dc();
            let f = cache.flushes[i];
            if cache.persisted(f.flow, f.seq) {
                cache.flushes.remove(i);
                self.flash_done(f.req, 0);
            } else {
                i += 1;
            }
        }
    }

    // ----- preconditioning -----

    /// `cache.precondition = "dirty"`: every partition full of dirty whole pages drawn
    /// uniformly from the address ranges of the flows that write (a per-flow partition from
    /// its own flow; the shared one from the writing flows in turn).
    pub(super) fn cache_precondition(&mut self, c: &Config) {
        let page = c.flash.page_size_bytes as u64;
        let full = self.full_page_mask();
        let writers: Vec<usize> = c
            .flows
            .iter()
            .enumerate()
            .filter(|(_, f)| f.is_trace() || f.read_fraction < 1.0)
            .map(|(i, _)| i)
            .collect();
        if writers.is_empty() {
            return;
        }
        let mut rng = derive_stream(c.run.seed, 0xCAC4E << 40);
        let nparts = self.dc().parts.len();
        for part in 0..nparts {
            let flows: Vec<usize> = if nparts == 1 {
                writers.clone()
            } else if writers.contains(&part) {
                vec![part]
            } else {
                continue;
            };
            let cap = self.dc().parts[part].cap;
            let mut misses = 0u64;
            let mut turn = 0usize;
            while self.dc().parts[part].used < cap && misses < 64 * cap + 1024 {
                let f = flows[turn % flows.len()];
                turn += 1;
                let fs = &self.settings.flows[f];
                let first = fs.start_bytes.div_ceil(page);
                let end = (fs.start_bytes + fs.range_bytes) / page;
                if end <= first {
                    misses += 1;
                    continue;
                }
                let lpn = Lpn(rng.gen_range(first..end) as u32);
                let cache = self.dc();
                if cache.lookup(lpn).is_some() {
                    misses += 1;
                    continue;
                }
                let e = cache.insert(part, lpn, f as u32);
                cache.write_into(e, full, f as u32);
            }
        }
    }
}
