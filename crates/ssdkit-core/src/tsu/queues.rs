//! The queues of one die. User writes wait in one queue per plane, each in arrival order with
//! a sequence number, so the first write whose plane can take a page, and the partners of a
//! multi-plane program, are found from the planes' heads without walking the die's queue.

use super::Tx;
use super::TxKind;
use crate::ids::TxId;
use std::collections::VecDeque;

#[derive(Debug, Clone)]
pub struct DieQueues {
    /// User reads (and read-modify-write pre-reads): (arrival sequence, transaction).
    pub reads: VecDeque<(u64, TxId)>,
    /// User writes per plane of the die: (arrival sequence, transaction).
    writes: Vec<VecDeque<(u64, TxId)>>,
    write_count: usize,
    next_seq: u64,
    pub gc_reads: VecDeque<TxId>,
    pub gc_writes: VecDeque<TxId>,
    pub gc_erases: VecDeque<TxId>,
    /// Reads of translation pages (cached mapping table).
    pub mapping_reads: VecDeque<TxId>,
    /// User operations started in a row while GC transactions waited.
    pub user_streak: u32,
}

impl DieQueues {
    pub fn new(planes_per_die: u32) -> Self {
        Self {
            reads: VecDeque::new(),
            writes: vec![VecDeque::new(); planes_per_die as usize],
            write_count: 0,
            next_seq: 0,
            gc_reads: VecDeque::new(),
            gc_writes: VecDeque::new(),
            gc_erases: VecDeque::new(),
            mapping_reads: VecDeque::new(),
            user_streak: 0,
        }
    }

    pub(super) fn push(&mut self, t: TxId, tx: &Tx, planes_per_die: u32) {
        match tx.kind {
            TxKind::UserRead | TxKind::RmwRead | TxKind::CacheRead => {
                self.reads.push_back((self.next_seq, t));
                self.next_seq += 1;
            }
            TxKind::UserWrite | TxKind::MappingWrite | TxKind::CacheWrite => {
                let local = (tx.plane.0 % planes_per_die) as usize;
                self.writes[local].push_back((self.next_seq, t));
                self.next_seq += 1;
                self.write_count += 1;
            }
            TxKind::GcRead => self.gc_reads.push_back(t),
            TxKind::GcWrite => self.gc_writes.push_back(t),
            TxKind::GcErase => self.gc_erases.push_back(t),
            TxKind::MappingRead => self.mapping_reads.push_back(t),
        }
    }

    #[inline]
    pub fn gc_empty(&self) -> bool {
        self.gc_reads.is_empty() && self.gc_writes.is_empty() && self.gc_erases.is_empty()
    }
    #[inline]
    pub fn writes_len(&self) -> usize {
        self.write_count
    }
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.reads.is_empty()
            && self.write_count == 0
            && self.gc_empty()
            && self.mapping_reads.is_empty()
    }
    pub fn len(&self) -> usize {
        self.reads.len()
            + self.write_count
            + self.gc_reads.len()
            + self.gc_writes.len()
            + self.gc_erases.len()
            + self.mapping_reads.len()
    }

    /// Whether the oldest queued user write arrived before the oldest queued read (false when
    /// either queue is empty).
    pub fn write_is_older(&self) -> bool {
        let Some(&(read, _)) = self.reads.front() else {
            return false;
        };
        self.writes
            .iter()
            .filter_map(|q| q.front())
            .any(|&(w, _)| w < read)
    }

    /// Removes and returns the earliest queued write whose plane (local index) `ok` accepts.
    pub fn pop_first_write(&mut self, ok: impl Fn(usize) -> bool) -> Option<TxId> {
        let local = (0..self.writes.len())
            .filter(|&p| ok(p))
            .filter_map(|p| self.writes[p].front().map(|&(s, _)| (s, p)))
            .min()?
            .1;
        self.write_count -= 1;
        self.writes[local].pop_front().map(|(_, t)| t)
    }

    /// Multi-plane partners of a program just taken from the queue: walking the die's write
    /// queue in arrival order, a write joins if its plane is not yet in the batch and `fits`
    /// (same page offset); the walk gives up after passing `window` writes that could not
    /// join. Only a plane's first write can join (its others share its offset), so the walk
    /// is done over plane heads; the count of writes passed is found by binary search.
    pub fn take_write_partners(
        &mut self,
        used: u32,
        window: usize,
        max: usize,
        fits: impl Fn(usize) -> bool,
        out: &mut [TxId],
    ) -> usize {
        // Fixed arrays: this runs on every multi-plane write dispatch.
        let mut heads = [(u64::MAX, 0usize); crate::flash::MAX_BATCH];
        let mut nh = 0;
        for p in 0..self.writes.len() {
            // Each plane appears once, so a taken head never has a rival on its plane.
            if used & (1 << p) == 0 && fits(p) {
                if let Some(&(s, _)) = self.writes[p].front() {
                    heads[nh] = (s, p);
                    nh += 1;
                }
            }
        }
        let heads = &mut heads[..nh];
        heads.sort_unstable();
        let mut n = 0;
        for (taken, &(seq, p)) in heads.iter().enumerate() {
            // `max` counts the write the batch started with.
            if n + 1 >= max || n >= out.len() {
                break;
            }
            let before: usize = self
                .writes
                .iter()
                .map(|q| q.partition_point(|&(s, _)| s < seq))
                .sum();
            let passed = before - taken;
            if passed >= window {
                break;
            }
            let (_, t) = self.writes[p].pop_front().expect("head exists");
            self.write_count -= 1;
            out[n] = t;
            n += 1;
        }
        n
    }

    /// Takes every write queued for the planes (local indices) that `stuck` selects, in
    /// arrival order; `keep` returns those that stay, in the same order, to their places.
    pub fn drain_writes(&mut self, stuck: impl Fn(usize) -> bool) -> Vec<(u64, TxId)> {
        let mut out = Vec::new();
        for p in 0..self.writes.len() {
            if stuck(p) {
                out.extend(self.writes[p].drain(..));
            }
        }
        self.write_count -= out.len();
        out.sort_unstable();
        out
    }

    /// Puts back writes taken by `drain_writes` (with their original sequence numbers).
    pub fn keep_writes(&mut self, local_plane: usize, kept: &[(u64, TxId)]) {
        let q = &mut self.writes[local_plane];
        for &e in kept.iter().rev() {
            q.push_front(e);
        }
        self.write_count += kept.len();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::PlaneId;

    #[test]
    fn reads_and_writes_share_one_arrival_sequence() {
        let mut q = DieQueues::new(2);
        let tx = |kind, plane| Tx::new(kind, PlaneId(plane));
        assert!(!q.write_is_older(), "nothing queued");
        q.push(TxId(0), &tx(TxKind::UserWrite, 1), 2);
        assert!(!q.write_is_older(), "no read queued");
        q.push(TxId(1), &tx(TxKind::UserRead, 0), 2);
        assert!(q.write_is_older());
        assert_eq!(q.pop_first_write(|_| true), Some(TxId(0)));
        q.push(TxId(2), &tx(TxKind::UserWrite, 0), 2);
        assert!(!q.write_is_older(), "the read came first now");
        q.push(TxId(3), &tx(TxKind::RmwRead, 1), 2);
        assert_eq!(q.reads.iter().map(|&(s, _)| s).collect::<Vec<_>>(), [1, 3]);
    }
}
