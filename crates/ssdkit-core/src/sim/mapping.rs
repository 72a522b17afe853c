//! The cached mapping table's wiring: a page transaction whose entry the FTL does not hold
//! waits, parked here under a handle the FTL keeps with its translation page's read
//! (`ftl::Ftl::map_lookup`), and is issued when the FTL says the read ended. What hits, what
//! is read or written back and who waits is the FTL's (`ftl/page/cmt_path.rs`).

use super::Simulator;
use crate::frontend::PageChunk;
use crate::ids::{FlowId, Lpn, ReqId};

/// A page transaction waiting for its translation page, with what it needs to be issued.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Parked {
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

impl Simulator {
    /// Looks up the entry of a user page transaction. True: the transaction may be issued now.
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
        let h = self.parked.next();
        let now = self.ftl.map_lookup(lpn, parked.flow(), parked.write(), h);
        if !now {
            self.parked.park(h, parked);
        }
        self.queue_ftl_ops();
        now
    }

    /// A translation page is in: the FTL caches it (an eviction's write-back is queued
    /// first); the transactions that waited for it are issued, then the write-backs that
    /// waited for it released.
    pub(super) fn mapping_read_done(&mut self, tx: crate::tsu::Tx) {
        let resumed = self.ftl.mapping_read_done(tx.lpn);
        self.queue_ftl_ops();
        let Some(r) = resumed else {
            return;
        };
        for (h, _, _) in r.waiters {
            match self.parked.take(h) {
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
        for w in r.release {
            self.release_write(w);
        }
    }

    pub(super) fn full_page_mask(&self) -> u64 {
        let spp = self.settings.geo.sectors_per_page;
        if spp >= 64 {
            u64::MAX
        } else {
            (1u64 << spp) - 1
        }
    }
}
