//! The FTL's side of host I/O beyond one page's translation: what a read of a never-written
//! page does (`ftl.unmapped_reads`), whether a write reads its kept sectors first, and TRIM
//! commands. The FTL decides and counts; the simulator only queues what it is given.

use super::{Ftl, FtlStats, Scheme};
use crate::config::UnmappedReads;
use crate::ids::{Lpn, PlaneId, Ppn};

impl Ftl {
    /// `ftl.unmapped_reads` for the run (a snapshot's FTL is built without the setting).
    pub fn set_unmapped_reads(&mut self, mode: UnmappedReads) {
        self.read_flash_unmapped = mode == UnmappedReads::ReadFlash;
    }

    /// Whether reads alone leave every map entry as it is, so that a cached map never writes
    /// a translation page back: no page holds data (GC has nothing to move), no cached
    /// translation page is dirty, no block is rewritten in place, and a read of a
    /// never-written page maps nothing (with `read_flash`, MQSim's cache of single entries
    /// makes the page's entry dirty: `read_unwritten`). False without a cached map.
    pub fn reads_keep_map(&self) -> bool {
        let Some(f) = self.page() else {
            return false;
        };
        let maps_on_read = |c: &super::page::cmt::Cmt| c.by_entry() && self.read_flash_unmapped;
        f.cmt
            .as_ref()
            .is_some_and(|c| !maps_on_read(c) && !c.any_dirty())
            && !f.in_place
            && f.valid.iter().all(|&v| v == 0)
    }

    /// The run was built on `reads_keep_map` (its scheduler queues no write-back beside the
    /// flows' reads): a write-back would break that, and stops the run.
    pub fn keep_map(&mut self) {
        if let Some(f) = self.page_mut() {
            f.cmt_conf.map_kept = true;
        }
    }

    /// A read of `lpn`, which `translate` found unmapped: with `read_flash` (MQSim's first read
    /// of a never-written page), the page takes the next page of its plane's user frontier (no
    /// program: the page is only assigned) and is read from there; otherwise, or when the
    /// plane's user writes wait at the reserve, None: the read needs no flash. `pinned` is the
    /// reading flow's plane set, as for `user_plane`. Out of line: a filled drive never runs it.
    #[cold]
    pub fn read_unmapped(&mut self, lpn: Lpn, pinned: Option<(&[u32], &mut u32)>) -> Option<Ppn> {
        if self.read_flash_unmapped {
            let plane = self.user_plane(lpn, pinned);
            if let Some(ppn) = self.read_unwritten(lpn, plane) {
                self.counts_mut().pages_mapped_by_reads += 1;
                return Some(ppn);
            }
        }
        self.counts_mut().unmapped_page_reads += 1;
        None
    }

    /// A write of `sectors` to `lpn` by a flow pinned to `pinned` (as for `user_plane`;
    /// `full`: the whole-page mask): the plane it goes to, and the page to read first with the
    /// sectors the write keeps, if any (`write_needs_read`).
    #[inline(always)]
    pub fn place_write(
        &mut self,
        lpn: Lpn,
        sectors: u64,
        full: u64,
        pinned: Option<(&[u32], &mut u32)>,
    ) -> (PlaneId, Option<(Ppn, u64)>) {
        let mapped = self.translate(lpn);
        let plane = self.user_plane(lpn, pinned);
        (plane, self.write_needs_read(lpn, mapped, sectors, full))
    }

    /// A write of `sectors` to `lpn` (mapped at `mapped` when the write was taken; `full`: the
    /// whole-page mask) was accepted: the page to read first and its sectors the write keeps
    /// (read-modify-write), if any. Notes the write (`plan_write`).
    // Always inlined: one call per page written, and the callers' order of FTL calls differs.
    #[inline(always)]
    pub fn write_needs_read(
        &mut self,
        lpn: Lpn,
        mapped: Option<Ppn>,
        sectors: u64,
        full: u64,
    ) -> Option<(Ppn, u64)> {
        let keep = self.plan_write(lpn, sectors, full);
        let old = mapped.filter(|_| keep != 0)?;
        self.counts_mut().rmw_reads += 1;
        Some((old, keep))
    }

    /// A TRIM command arrived; its whole pages follow through `trim_page`.
    pub fn trim_command(&mut self) {
        self.counts_mut().trim_requests += 1;
    }

    #[inline]
    fn counts_mut(&mut self) -> &mut FtlStats {
        match &mut self.scheme {
            Scheme::Page(f) => &mut f.stats,
            Scheme::Block(f) => &mut f.stats,
        }
    }
}
