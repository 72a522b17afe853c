//! The data cache's wiring (docs/cache.md): the cache (`crate::cache`) decides what a request
//! hits, what is written back and which waiting writes go, and answers with a plan; this file
//! turns the plan into flash transactions, host transfers and events, in the plan's order.
//!
//! Every flash page operation of this path goes through one function per direction:
//! `issue_read_page` (a read miss, or the missing sectors of a partial hit) and
//! `issue_write_page` (a write-back: eviction, flush or FUA). Both translate the logical page
//! there, so a mapping cache can delay them in one place.

use super::mapping::Parked;
use super::{Ev, Simulator};
use crate::cache::{Action, Answer, Plan};
use crate::frontend::split;
use crate::host::Request;
use crate::ids::{FlowId, Lpn, ReqId};
use crate::tsu::{Tx, TxKind};

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
        let now = self.q.now();
        match self.dc().request(now, req.op, req.io(r)) {
            Answer::Read => self.cache_read(r, req),
            Answer::Plan(plan) => self.cache_run(plan),
            Answer::Uncached => return false,
        }
        true
    }

    /// Carries out a plan of the cache, in its order.
    fn cache_run(&mut self, plan: Plan) {
        let mut parts = 0;
        for &a in &plan.actions {
            match a {
                Action::WriteBack(w) => {
                    self.issue_write_page(Parked {
                        kind: TxKind::CacheWrite,
                        req: w.req,
                        flow: w.flow,
                        lpn: w.lpn,
                        sectors: w.dirty,
                        cached: w.cached,
                        slot: w.wb,
                    });
                    parts += 1;
                }
                Action::WriteData(r) => self.cache_write_data(r),
                Action::Complete(r) => self.flash_done(r, 0),
            }
        }
        self.ftl.prefetch_write_back(plan.next_victim);
        if let Some(r) = self.dc().recycle(plan) {
            self.expect_parts(r, parts);
        }
    }

    // ----- reads -----

    /// A read: the cache answers page by page what comes from flash; its cached sectors come
    /// out of DRAM once the pages are issued.
    fn cache_read(&mut self, r: ReqId, req: &Request) {
        let spp = self.settings.geo.sectors_per_page;
        let mut pending = 0;
        let mut hits = 0;
        for c in split(req.start_sector, req.sectors, spp) {
            let Some(m) = self.dc().read_page(req.flow, c.lpn, c.sectors, &mut hits) else {
                continue;
            };
            if self.issue_read_page(r, req.flow, c.lpn, m.sectors, m.fill) {
                pending += 1;
            }
        }
        let now = self.q.now();
        if let Some(t) = self.dc().read_from_dram(now, r, hits) {
            self.at(t, Ev::CacheReadOut(r));
            pending += 1;
        }
        self.expect_parts(r, pending);
    }

    /// Reads `sectors` of `lpn` from flash for request `r` (filling cache entry `fill` unless
    /// NO_ENTRY). False when the page was never written and is answered without flash.
    pub(super) fn issue_read_page(
        &mut self,
        r: ReqId,
        flow: FlowId,
        lpn: Lpn,
        sectors: u64,
        fill: u32,
    ) -> bool {
        let p = Parked {
            kind: TxKind::CacheRead,
            req: r,
            flow,
            lpn,
            sectors,
            cached: 0,
            slot: fill,
        };
        if self.cmt_on && !self.cmt_lookup(p) {
            // Counted as a flash part of the request now; issued when its translation page is
            // in (`mapping_read_done`).
            return true;
        }
        self.issue_read(TxKind::CacheRead, r, flow, lpn, sectors, fill)
    }

    #[inline(never)]
    pub(super) fn cache_read_done(&mut self, tx: &Tx) {
        self.progress_at = self.q.processed();
        let now = self.q.now();
        let bytes = self.dc().read_page_done(now, tx.slot, tx.lpn, tx.sectors);
        self.part_done(tx.req, bytes);
    }

    #[inline(never)]
    pub(super) fn cache_read_out(&mut self, r: ReqId) {
        let sectors = self.dc().read_out_sectors(r);
        self.part_done(r, self.settings.geo.sector_bytes_of(sectors));
    }

    // ----- writes -----

    /// Write `r` has its slots: its data crosses the host link (a page at a time when
    /// transfers are pipelined, else it is already in) and goes into DRAM.
    fn cache_write_data(&mut self, r: ReqId) {
        let now = self.q.now();
        let mut data_in = now;
        if self.host.pipelined() {
            data_in = self
                .host
                .write_pages(now, r, self.settings.geo.sectors_per_page);
        }
        let bytes = self.host.request(r).bytes(self.host.sector_bytes());
        let end = self.dc().write_data(data_in, bytes);
        self.at(end, Ev::CacheWriteIn(r));
    }

    /// The write data of `r` is in DRAM: the write completes, or (FUA) its pages are written
    /// back and it completes when they are programmed.
    #[inline(never)]
    pub(super) fn cache_write_in(&mut self, r: ReqId) {
        let io = self.host.request(r).io(r);
        let plan = self.dc().write_in(io);
        self.cache_run(plan);
    }

    /// Programs page `p.lpn` with its cached data: `p.sectors` (the dirty ones) and the other
    /// `p.cached` sectors from DRAM; sectors the page holds on flash and the cache does not are
    /// read first (read-modify-write, as an uncached partial write). `p.slot` is the
    /// write-back record; `p.req` a FUA write waiting for it, or NONE.
    fn issue_write_page(&mut self, p: Parked) {
        if !self.cmt_on || self.cmt_lookup(p) {
            self.issue_write_page_mapped(p);
        }
    }

    /// [`Simulator::issue_write_page`] with the page's mapping entry at hand.
    pub(super) fn issue_write_page_mapped(&mut self, p: Parked) {
        let full = self.settings.geo.full_page_mask();
        let pinned = self.flows[p.flow.idx()].pinned();
        let (plane, rmw) = self
            .ftl
            .place_write(p.lpn, p.sectors | p.cached, full, pinned);
        let w = Tx {
            req: p.req,
            lpn: p.lpn,
            sectors: p.sectors,
            slot: p.slot,
            ..Tx::new(TxKind::CacheWrite, plane)
        };
        let (w, rr) = self.tsu.insert_write(w, rmw);
        self.enqueue_write(w, rr);
    }

    #[inline(never)]
    pub(super) fn cache_write_done(&mut self, tx: &Tx) {
        self.progress_at = self.q.processed();
        let now = self.q.now();
        let plan = self.dc().write_back_done(now, tx.slot);
        if tx.req.is_some() {
            // A FUA write's page is programmed.
            self.part_done(tx.req, 0);
        }
        self.cache_run(plan);
    }
}
