//! Hybrid mapping (`ftl.mapping = { scheme = "hybrid", log_blocks = k, associativity }`):
//! block mapping (`ftl/block/`) whose overwrites go to log blocks instead of merging at once.
//!
//! - `associativity = "set"` (SimpleSSD, IEEE CAL 2018; its baseline gives a block eight log
//!   blocks): each log block serves one data block, which owns up to k of them. A log block
//!   is taken from the plane's free blocks while one stays back for a merge; when the last
//!   one beyond it is taken, the data block owning the oldest log block is merged.
//! - `associativity = "full"` (FAST, Lee et al., ACM TECS 2007): each plane has one
//!   sequential log block (an overwrite at offset 0 opens it, the next offsets of the same
//!   block continue it) and a pool of k random log blocks shared by every data block, written
//!   in turn; when the pool is full, its oldest block is reclaimed: every data block with a
//!   valid page in it is merged, then it is erased.
//!
//! Merges: a switch (a log block written in order from offset 0 over the whole block, every
//! page still current, becomes the data block: the old one is erased, nothing copied), a
//! partial merge (such a log block written from 0 to m: the newest copies of the pages from
//! m on are copied into it, then it switches) and a full merge (a new block takes the newest
//! copy of every page; the old data block and the block's own log blocks are erased).

use std::collections::VecDeque;

use crate::ftl::block::{BlockFtl, Kind, Pending};
use crate::ftl::page::NONE;
use crate::ids::Ppn;

/// The log blocks of a hybrid-mapped device.
pub(in crate::ftl) struct Logs {
    /// Log blocks a data block may own ("set"), or of each plane's random pool ("full").
    pub(in crate::ftl) k: u32,
    pub(in crate::ftl) full: bool,
    /// "set": the log blocks of each logical block, oldest first.
    pub(in crate::ftl) of: Vec<Vec<u32>>,
    /// Each plane's log blocks, oldest first, with their allocation stamp ("set": every log
    /// block, entries of merged ones are skipped by their stamp; "full": the random pool).
    pub(in crate::ftl) order: Vec<VecDeque<(u32, u64)>>,
    pub(in crate::ftl) stamp: Vec<u64>,
    pub(in crate::ftl) clock: u64,
    /// "full": each plane's sequential log block.
    pub(in crate::ftl) sw: Vec<Option<u32>>,
}

impl Logs {
    pub(in crate::ftl) fn new(
        k: u32,
        full: bool,
        lblocks: usize,
        nblocks: usize,
        planes: usize,
    ) -> Self {
        Self {
            k,
            full,
            of: if full {
                Vec::new()
            } else {
                vec![Vec::new(); lblocks]
            },
            order: vec![VecDeque::new(); planes],
            stamp: vec![0; nblocks],
            clock: 0,
            sw: vec![None; planes],
        }
    }
}

impl BlockFtl {
    fn logs(&mut self) -> &mut Logs {
        self.logs.as_mut().expect("hybrid mapping")
    }

    /// A new log block of plane `p` serving `lbn` ("set"; NONE: shared).
    fn new_log(&mut self, p: u32, lbn: u32) -> u32 {
        let b = self.alloc(p);
        self.kind[b as usize] = Kind::Log;
        self.owner[b as usize] = lbn;
        let l = self.logs();
        l.clock += 1;
        l.stamp[b as usize] = l.clock;
        b
    }

    /// An overwrite of `lpn` in plane `p` (its block's data block is written past it).
    pub(in crate::ftl) fn log_write(&mut self, lpn: u32, p: u32) -> Ppn {
        let lbn = lpn / self.ppb;
        let off = lpn % self.ppb;
        let ppb = self.ppb;
        let (k, full) = {
            let l = self.logs.as_ref().expect("hybrid mapping");
            (l.k, l.full)
        };
        if !full {
            let last = self.logs().of[lbn as usize].last().copied();
            if let Some(b) = last.filter(|&b| self.written[b as usize] < ppb) {
                let ppn = self.program_at(lpn, b, self.written[b as usize]);
                if self.written[b as usize] == ppb && self.qualifies(lbn, b) {
                    self.queue(p, Pending::Merge { lbn, seq: Some(b) });
                }
                return ppn;
            }
            let owned = self.logs().of[lbn as usize].len() as u32;
            if owned < k && self.spare_free(p) >= 2 {
                let b = self.new_log(p, lbn);
                let l = self.logs();
                l.of[lbn as usize].push(b);
                let st = l.stamp[b as usize];
                l.order[p as usize].push_back((b, st));
                let ppn = self.program_at(lpn, b, 0);
                if self.spare_free(p) < 2 {
                    // The last free block beyond the merge's: free some before the next write.
                    self.queue(p, Pending::ReclaimOldestLog);
                }
                return ppn;
            }
        } else {
            let sw = self.logs().sw[p as usize];
            if let Some(s) = sw.filter(|&s| self.owner[s as usize] == lbn) {
                if off == self.written[s as usize] {
                    let ppn = self.program_at(lpn, s, off);
                    if self.written[s as usize] == ppb {
                        self.logs().sw[p as usize] = None;
                        self.queue(p, Pending::Merge { lbn, seq: Some(s) });
                    }
                    return ppn;
                }
            } else if off == 0 && self.spare_free(p) >= 2 {
                let s = self.new_log(p, lbn);
                let ppn = self.program_at(lpn, s, 0);
                if let Some(o) = self.logs().sw[p as usize].replace(s) {
                    let owner = self.owner[o as usize];
                    self.queue(
                        p,
                        Pending::Merge {
                            lbn: owner,
                            seq: Some(o),
                        },
                    );
                }
                return ppn;
            }
            let back = self.logs().order[p as usize].back().map(|&(b, _)| b);
            let room = back.filter(|&b| self.written[b as usize] < ppb);
            let target = match room {
                Some(b) => Some(b),
                None if (self.logs().order[p as usize].len() as u32) < k
                    && self.spare_free(p) >= 2 =>
                {
                    let b = self.new_log(p, NONE);
                    let l = self.logs();
                    let st = l.stamp[b as usize];
                    l.order[p as usize].push_back((b, st));
                    Some(b)
                }
                None => None,
            };
            if let Some(b) = target {
                let ppn = self.program_at(lpn, b, self.written[b as usize]);
                let pool = self.logs().order[p as usize].len() as u32;
                if pool == k && self.written[b as usize] == ppb {
                    self.queue(p, Pending::ReclaimOldestLog);
                }
                return ppn;
            }
        }
        // No log block to take: the block merges now, the write going into its new block.
        self.start_merge(lbn, p, None, Some(lpn));
        Ppn(self.l2p[lpn as usize])
    }

    fn queue(&mut self, p: u32, m: Pending) {
        self.jobs[p as usize].queue.push_back(m);
        self.start_next(p);
    }

    /// The log block that could become `lbn`'s data block by a switch or a partial merge.
    pub(in crate::ftl) fn seq_candidate(&self, lbn: u32) -> Option<u32> {
        let l = self.logs.as_ref()?;
        if l.full {
            let p = self.plane_of_lbn(lbn);
            l.sw[p as usize].filter(|&s| self.owner[s as usize] == lbn)
        } else {
            l.of[lbn as usize]
                .iter()
                .copied()
                .find(|&b| self.qualifies(lbn, b))
        }
    }

    /// `lbn` is being merged into `dest`: its own log blocks other than `dest` are erased
    /// after the copies ("set": all of them; "full": its sequential log block).
    pub(in crate::ftl) fn detach_logs(&mut self, lbn: u32, dest: u32, erases: &mut VecDeque<u32>) {
        let p = self.plane_of_lbn(lbn);
        let Some(l) = self.logs.as_mut() else {
            return;
        };
        if l.full {
            if let Some(s) = l.sw[p as usize].filter(|&s| self.owner[s as usize] == lbn) {
                l.sw[p as usize] = None;
                if s != dest {
                    erases.push_back(s);
                }
            }
        } else {
            for b in l.of[lbn as usize].drain(..) {
                if b != dest {
                    erases.push_back(b);
                }
            }
        }
    }

    /// Frees log space in plane `p`: "set": merges the data block owning the oldest log block;
    /// "full": merges every data block with a valid page in the oldest pool block, then
    /// erases it.
    pub(in crate::ftl) fn reclaim_oldest_log(&mut self, p: u32) {
        let full = self.logs().full;
        if !full {
            while let Some((b, st)) = self.logs().order[p as usize].pop_front() {
                if self.kind[b as usize] == Kind::Log && self.logs().stamp[b as usize] == st {
                    let lbn = self.owner[b as usize];
                    let seq = self.seq_candidate(lbn);
                    self.start_merge(lbn, p, seq, None);
                    return;
                }
            }
            return;
        }
        let Some((v, _)) = self.logs().order[p as usize].pop_front() else {
            return;
        };
        let mut lbns: Vec<u32> = Vec::new();
        for i in 0..self.written[v as usize] {
            let l = self.p2l[(v * self.ppb + i) as usize];
            if l != NONE && !lbns.contains(&(l / self.ppb)) {
                lbns.push(l / self.ppb);
            }
        }
        let mut next: Vec<Pending> = lbns
            .into_iter()
            .map(|lbn| Pending::Merge { lbn, seq: None })
            .collect();
        next.push(Pending::EraseLog(v));
        // Pool blocks that hold no valid page any more go with it.
        let ppb = self.ppb;
        let order = &mut self.logs.as_mut().expect("hybrid").order[p as usize];
        let n = order.len();
        let mut kept = VecDeque::with_capacity(n);
        for (i, (b, st)) in order.drain(..).enumerate() {
            if i + 1 < n && self.valid[b as usize] == 0 && self.written[b as usize] == ppb {
                next.push(Pending::EraseLog(b));
            } else {
                kept.push_back((b, st));
            }
        }
        *order = kept;
        let q = &mut self.jobs[p as usize].queue;
        for m in next.into_iter().rev() {
            q.push_front(m);
        }
    }
}
