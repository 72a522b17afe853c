//! The cached mapping table's wiring: a page transaction whose entry the FTL does not hold
//! waits, parked here under a handle the FTL keeps with its translation page's read
//! (`ftl::Ftl::map_lookup`), and is issued when the FTL says the read ended. What hits, what
//! is read or written back and who waits is the FTL's (`ftl/page/cmt_path.rs`).

use super::Simulator;
use crate::ids::{FlowId, Lpn, ReqId};
use crate::tsu::TxKind;

/// A page transaction waiting for its translation page, with what it needs to be issued:
/// a request's page on the uncached path (`UserRead`, `UserWrite`), a data-cache read miss
/// filling entry `slot` (`CacheRead`), or a data-cache write-back of record `slot` with the
/// other `cached` sectors (`CacheWrite`; `req` a FUA write waiting for it, or NONE).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Parked {
    pub kind: TxKind,
    pub req: ReqId,
    pub flow: FlowId,
    pub lpn: Lpn,
    pub sectors: u64,
    pub cached: u64,
    pub slot: u32,
}

impl Parked {
    /// A request's page on the uncached path.
    #[inline]
    pub fn page(write: bool, req: ReqId, flow: FlowId, lpn: Lpn, sectors: u64) -> Self {
        Self {
            kind: TxKind::user(write),
            req,
            flow,
            lpn,
            sectors,
            cached: 0,
            slot: u32::MAX,
        }
    }
}

impl Simulator {
    /// Looks up the entry of page transaction `p`. True: it may be issued now. False: it
    /// waits for its translation page and is issued from `mapping_read_done`.
    pub(super) fn cmt_lookup(&mut self, p: Parked) -> bool {
        let h = self.parked.next();
        let write = matches!(p.kind, TxKind::UserWrite | TxKind::CacheWrite);
        let now = self.ftl.map_lookup(p.lpn, p.flow, write, h);
        if !now {
            self.parked.park(h, p);
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
        for (h, ..) in r.waiters {
            let p = self.parked.take(h);
            match p.kind {
                TxKind::CacheRead => {
                    if !self.issue_read(p.kind, p.req, p.flow, p.lpn, p.sectors, p.slot) {
                        self.part_done(p.req, 0);
                    }
                }
                TxKind::CacheWrite => self.issue_write_page_mapped(p),
                _ => {
                    let read = p.kind == TxKind::UserRead;
                    if !self.issue_page(p.req, p.flow, read, p.lpn, p.sectors)
                        && self.firmware.part_done(p.req)
                    {
                        self.flash_done(p.req, 0);
                    }
                }
            }
        }
        for w in r.release {
            self.release_write(w);
        }
    }
}
