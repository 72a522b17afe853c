//! The queues of one die. User writes wait in one queue per plane, each in arrival order with
//! a sequence number, so the first write whose plane can take a page, and the partners of a
//! multi-plane program, are found from the planes' heads without walking the die's queue.
//! User reads and writes are kept per priority class when the policy serves classes
//! (`tsu.policy = "priority_out_of_order"`: urgent, high, medium, low); otherwise there is
//! one class.

use super::Tx;
use super::TxKind;
use crate::engine::Div;
use crate::ids::TxId;
use std::collections::VecDeque;

/// The user reads and writes of one priority class at a die.
#[derive(Debug, Clone)]
struct ClassQueues {
    /// User reads (and read-modify-write pre-reads, data-cache reads): (arrival sequence,
    /// transaction).
    reads: VecDeque<(u64, TxId)>,
    /// User writes per plane of the die: (arrival sequence, transaction).
    writes: Vec<VecDeque<(u64, TxId)>>,
    write_count: usize,
}

/// A write taken out of its queue, with what puts it back in place.
pub type TakenWrite = (u64, u8, TxId);

/// Laid out from a cache line's start, the counts and the translation-page reads first: the
/// questions asked of another die (`has_user_work`, `chip_rank`) and a read's queueing then
/// read one line.
#[derive(Debug, Clone)]
#[repr(C, align(64))]
pub struct DieQueues {
    read_count: usize,
    write_count: usize,
    /// Reads of translation pages (cached mapping table): (arrival sequence, transaction).
    pub mapping_reads: VecDeque<(u64, TxId)>,
    /// User operations started in a row while GC transactions waited.
    pub user_streak: u32,
    /// Class 0 (the only one without priority classes) inline, so that the common case
    /// reaches its queues without following a pointer; classes 1.. in `more`.
    first: ClassQueues,
    more: Vec<ClassQueues>,
    pub gc_reads: VecDeque<TxId>,
    pub gc_writes: VecDeque<TxId>,
    pub gc_erases: VecDeque<TxId>,
}

impl DieQueues {
    /// The queue lengths, for a stall message.
    pub fn describe(&self) -> String {
        format!(
            "reads {} writes {} gc reads {} gc writes {} gc erases {}",
            self.reads_len(),
            self.writes_len(),
            self.gc_reads.len(),
            self.gc_writes.len(),
            self.gc_erases.len()
        )
    }

    /// Queues for a die of `planes_per_die` planes and `classes` priority classes (1 or 4).
    pub fn new(planes_per_die: u32, classes: usize) -> Self {
        let q = ClassQueues {
            reads: VecDeque::new(),
            writes: vec![VecDeque::new(); planes_per_die as usize],
            write_count: 0,
        };
        Self {
            more: vec![q.clone(); classes.saturating_sub(1)],
            first: q,
            read_count: 0,
            write_count: 0,
            gc_reads: VecDeque::new(),
            gc_writes: VecDeque::new(),
            gc_erases: VecDeque::new(),
            mapping_reads: VecDeque::new(),
            user_streak: 0,
        }
    }

    #[inline(always)]
    fn user(&self, class: usize) -> &ClassQueues {
        if class == 0 {
            &self.first
        } else {
            &self.more[class - 1]
        }
    }

    #[inline(always)]
    fn user_mut(&mut self, class: usize) -> &mut ClassQueues {
        if class == 0 {
            &mut self.first
        } else {
            &mut self.more[class - 1]
        }
    }

    /// Queues `t` with arrival sequence `seq`: one counter for every die of the device
    /// (`Tsu::enqueue`), so that the dies of a chip compare their oldest work
    /// (`chip_rank`).
    pub(super) fn push(&mut self, t: TxId, tx: &Tx, planes_per_die: Div, class: usize, seq: u64) {
        match tx.kind {
            TxKind::UserRead | TxKind::RmwRead | TxKind::CacheRead => {
                self.user_mut(class).reads.push_back((seq, t));
                self.read_count += 1;
            }
            TxKind::UserWrite | TxKind::MappingWrite | TxKind::CacheWrite => {
                let local = planes_per_die.modulo(tx.plane.0) as usize;
                let q = self.user_mut(class);
                q.writes[local].push_back((seq, t));
                q.write_count += 1;
                self.write_count += 1;
            }
            TxKind::GcRead => self.gc_reads.push_back(t),
            TxKind::GcWrite => self.gc_writes.push_back(t),
            TxKind::GcErase => self.gc_erases.push_back(t),
            TxKind::MappingRead => self.mapping_reads.push_back((seq, t)),
        }
    }

    /// The die's place when the dies of a chip take turns (`flash.die_interleaving =
    /// false`), smallest first. MQSim queues transactions per chip and serves the chip's
    /// oldest translation-page read, else its oldest user read, else its oldest write, on
    /// whichever die that transaction is (`TSU_OutofOrder.cpp:171-199`, `225-288`;
    /// `TSU_Base.cpp:79-84` takes the die of the queue's first transaction). Dies with
    /// only GC work come last.
    pub fn chip_rank(&self) -> (u8, u64) {
        if let Some(&(s, _)) = self.mapping_reads.front() {
            return (0, s);
        }
        let all = || std::iter::once(&self.first).chain(self.more.iter());
        if self.read_count > 0 {
            let s = all().filter_map(|q| q.reads.front()).map(|r| r.0).min();
            return (1, s.unwrap_or(0));
        }
        if self.write_count > 0 {
            let s = all()
                .flat_map(|q| q.writes.iter().filter_map(|w| w.front()))
                .map(|w| w.0)
                .min();
            return (2, s.unwrap_or(0));
        }
        (3, 0)
    }

    /// Translation-page reads, user reads or writes queued: the die ranks before (3, 0) in
    /// `chip_rank`.
    #[inline]
    pub fn has_user_work(&self) -> bool {
        self.read_count > 0 || self.write_count > 0 || !self.mapping_reads.is_empty()
    }

    #[inline]
    pub fn gc_empty(&self) -> bool {
        self.gc_reads.is_empty() && self.gc_writes.is_empty() && self.gc_erases.is_empty()
    }
    /// User writes queued, every class.
    #[inline]
    pub fn writes_len(&self) -> usize {
        self.write_count
    }
    /// User reads queued, every class.
    #[inline]
    pub fn reads_len(&self) -> usize {
        self.read_count
    }
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.read_count == 0
            && self.write_count == 0
            && self.gc_empty()
            && self.mapping_reads.is_empty()
    }
    pub fn len(&self) -> usize {
        self.read_count
            + self.write_count
            + self.gc_reads.len()
            + self.gc_writes.len()
            + self.gc_erases.len()
            + self.mapping_reads.len()
    }

    /// Which classes have reads (writes) queued, indexed urgent, high, medium, low.
    pub fn classes_waiting(&self, writes: bool) -> [bool; 4] {
        let mut w = [false; 4];
        for (c, q) in std::iter::once(&self.first)
            .chain(self.more.iter())
            .enumerate()
            .take(4)
        {
            w[c] = if writes {
                q.write_count > 0
            } else {
                !q.reads.is_empty()
            };
        }
        w
    }

    /// Reads of `class` queued.
    #[inline]
    pub fn class_reads(&self, class: usize) -> usize {
        self.user(class).reads.len()
    }
    /// The `i`-th queued read of `class`.
    #[inline]
    pub fn read_at(&self, class: usize, i: usize) -> TxId {
        self.user(class).reads[i].1
    }
    /// Removes the `i`-th queued read of `class`.
    pub fn remove_read(&mut self, class: usize, i: usize) -> TxId {
        self.read_count -= 1;
        let reads = &mut self.user_mut(class).reads;
        // The first is the usual partner of a multi-plane read (a sequential request's next
        // page): `VecDeque::remove` would call its general move for it.
        let taken = if i == 0 {
            reads.pop_front()
        } else {
            reads.remove(i)
        };
        taken.expect("index in range").1
    }
    /// Removes the oldest queued read of `class`.
    #[inline]
    pub fn pop_read(&mut self, class: usize) -> Option<TxId> {
        let (_, t) = self.user_mut(class).reads.pop_front()?;
        self.read_count -= 1;
        Some(t)
    }
    /// User writes of `class` queued.
    #[inline]
    pub fn class_writes(&self, class: usize) -> usize {
        self.user(class).write_count
    }

    /// Whether the oldest queued user write arrived before the oldest queued read (false when
    /// either queue is empty). One class (the FIFO policy).
    pub fn write_is_older(&self) -> bool {
        let q = &self.first;
        let Some(&(read, _)) = q.reads.front() else {
            return false;
        };
        q.writes
            .iter()
            .filter_map(|w| w.front())
            .any(|&(w, _)| w < read)
    }

    /// Removes and returns the earliest queued write of `class` whose plane (local index)
    /// `ok` accepts.
    pub fn pop_first_write(&mut self, class: usize, ok: impl Fn(usize) -> bool) -> Option<TxId> {
        let q = self.user_mut(class);
        let local = (0..q.writes.len())
            .filter(|&p| ok(p))
            .filter_map(|p| q.writes[p].front().map(|&(s, _)| (s, p)))
            .min()?
            .1;
        q.write_count -= 1;
        let t = q.writes[local].pop_front().map(|(_, t)| t);
        self.write_count -= 1;
        t
    }

    /// Multi-plane partners of a program of `class` just taken from the queue: walking the
    /// class's write queue in arrival order, a write joins if its plane is not yet in the
    /// batch and `fits` (same page offset); the walk gives up after passing `window` writes
    /// that could not join. Only a plane's first write can join (its others share its
    /// offset), so the walk is done over plane heads; the count of writes passed is found by
    /// binary search.
    #[allow(clippy::too_many_arguments)]
    pub fn take_write_partners(
        &mut self,
        class: usize,
        used: u32,
        window: usize,
        max: usize,
        fits: impl Fn(usize) -> bool,
        out: &mut [TxId],
    ) -> usize {
        let q = self.user_mut(class);
        // Fixed arrays: this runs on every multi-plane write dispatch.
        let mut heads = [(u64::MAX, 0usize); crate::flash::MAX_BATCH];
        let mut nh = 0;
        for p in 0..q.writes.len() {
            // Each plane appears once, so a taken head never has a rival on its plane.
            if used & (1 << p) == 0 && fits(p) {
                if let Some(&(s, _)) = q.writes[p].front() {
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
            let before: usize = q
                .writes
                .iter()
                .map(|w| w.partition_point(|&(s, _)| s < seq))
                .sum();
            let passed = before - taken;
            if passed >= window {
                break;
            }
            let (_, t) = q.writes[p].pop_front().expect("head exists");
            q.write_count -= 1;
            out[n] = t;
            n += 1;
        }
        self.write_count -= n;
        n
    }

    /// User writes queued for plane `local` of the die, every class.
    pub fn plane_writes(&self, local: usize) -> usize {
        std::iter::once(&self.first)
            .chain(self.more.iter())
            .map(|q| q.writes[local].len())
            .sum()
    }

    /// `tsu.write_offsets = "at_queue"`: for each plane (local index) not in `used` that
    /// `ok` accepts, the first write of `class` queued there, anywhere in its queue, that
    /// `joins` (its page offset is the program's) joins the program (MQSim's
    /// `issue_command_to_chip` walks the whole queue, TSU_Base.cpp:84-95). Returns how many
    /// joined.
    pub fn take_tagged_partners(
        &mut self,
        class: usize,
        used: u32,
        max: usize,
        ok: impl Fn(usize) -> bool,
        joins: impl Fn(TxId) -> bool,
        out: &mut [TxId],
    ) -> usize {
        let q = self.user_mut(class);
        let mut n = 0;
        for p in 0..q.writes.len() {
            if n + 1 >= max || n >= out.len() {
                break;
            }
            if used & (1 << p) != 0 || !ok(p) {
                continue;
            }
            if let Some(i) = q.writes[p].iter().position(|&(_, t)| joins(t)) {
                let (_, t) = q.writes[p].remove(i).expect("index found");
                q.write_count -= 1;
                out[n] = t;
                n += 1;
            }
        }
        self.write_count -= n;
        n
    }

    /// The oldest (FLIN: first in service order) queued read of `class`.
    #[inline]
    pub fn read_head(&self, class: usize) -> Option<TxId> {
        self.user(class).reads.front().map(|&(_, t)| t)
    }

    /// The queued write of `class` with the smallest sequence number (FLIN: order key),
    /// whatever its plane.
    pub fn write_head(&self, class: usize) -> Option<TxId> {
        self.user(class)
            .writes
            .iter()
            .filter_map(|w| w.front())
            .min()
            .map(|&(_, t)| t)
    }

    /// FLIN: puts user read `t` at position `pos` of `class`'s read queue (the service
    /// order).
    pub fn insert_read_at(&mut self, t: TxId, class: usize, pos: usize) {
        self.user_mut(class).reads.insert(pos, (0, t));
        self.read_count += 1;
    }

    /// FLIN: the user writes of `class` in service order (by order key), with their keys.
    pub fn write_order(&self, class: usize, out: &mut Vec<(u64, TxId)>) {
        out.clear();
        for w in &self.user(class).writes {
            out.extend(w.iter().copied());
        }
        out.sort_unstable();
    }

    /// FLIN: queues user write `t` for plane `local` of the die with order key `key`, at its
    /// place among that plane's writes (kept sorted by key).
    pub fn insert_write_keyed(&mut self, t: TxId, local: usize, class: usize, key: u64) {
        let q = self.user_mut(class);
        let w = &mut q.writes[local];
        let at = w.partition_point(|&(k, _)| k < key);
        w.insert(at, (key, t));
        q.write_count += 1;
        self.write_count += 1;
    }

    /// FLIN: gives `class`'s queued writes the keys `gap`, 2 `gap`, ... in their order (when
    /// no key is left between two neighbours); returns the last key given (0: none queued).
    pub fn renumber_writes(&mut self, class: usize, gap: u64) -> u64 {
        let mut order = Vec::new();
        self.write_order(class, &mut order);
        let q = self.user_mut(class);
        for w in q.writes.iter_mut() {
            for e in w.iter_mut() {
                // Keys are unique, so each finds its own rank.
                let rank = order.partition_point(|&(k, _)| k < e.0) as u64;
                e.0 = (rank + 1) * gap;
            }
        }
        order.len() as u64 * gap
    }

    /// Takes every write queued for the planes (local indices) that `stuck` selects, every
    /// class, in arrival order; `keep_writes` returns those that stay to their places.
    pub fn drain_writes(&mut self, stuck: impl Fn(usize) -> bool) -> Vec<TakenWrite> {
        let mut out = Vec::new();
        for (c, q) in std::iter::once(&mut self.first)
            .chain(self.more.iter_mut())
            .enumerate()
        {
            for p in 0..q.writes.len() {
                if stuck(p) {
                    let before = out.len();
                    out.extend(q.writes[p].drain(..).map(|(s, t)| (s, c as u8, t)));
                    q.write_count -= out.len() - before;
                }
            }
        }
        self.write_count -= out.len();
        out.sort_unstable();
        out
    }

    /// Puts back writes taken by `drain_writes` (with their sequence numbers and classes),
    /// in arrival order, at the front of their plane's queues.
    pub fn keep_writes(&mut self, local_plane: usize, kept: &[TakenWrite]) {
        for &(s, c, t) in kept.iter().rev() {
            let q = self.user_mut(c as usize);
            q.writes[local_plane].push_front((s, t));
            q.write_count += 1;
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
        let mut q = DieQueues::new(2, 1);
        let tx = |kind, plane| Tx::new(kind, PlaneId(plane));
        assert!(!q.write_is_older(), "nothing queued");
        q.push(TxId(0), &tx(TxKind::UserWrite, 1), Div::new(2), 0, 0);
        assert!(!q.write_is_older(), "no read queued");
        q.push(TxId(1), &tx(TxKind::UserRead, 0), Div::new(2), 0, 1);
        assert!(q.write_is_older());
        assert_eq!(q.pop_first_write(0, |_| true), Some(TxId(0)));
        q.push(TxId(2), &tx(TxKind::UserWrite, 0), Div::new(2), 0, 2);
        assert!(!q.write_is_older(), "the read came first now");
        q.push(TxId(3), &tx(TxKind::RmwRead, 1), Div::new(2), 0, 3);
        assert_eq!(
            q.first.reads.iter().map(|&(s, _)| s).collect::<Vec<_>>(),
            [1, 3]
        );
    }
}

#[cfg(test)]
mod keyed_tests {
    use super::*;

    /// FLIN's write keys: writes on two planes in one order by key; renumbering keeps the
    /// order and leaves room between neighbours; the head is the smallest key of any plane.
    #[test]
    fn keyed_writes_keep_one_order_over_planes() {
        let mut q = DieQueues::new(2, 1);
        q.insert_write_keyed(TxId(0), 0, 0, 10);
        q.insert_write_keyed(TxId(1), 1, 0, 11);
        q.insert_write_keyed(TxId(2), 0, 0, 12);
        q.insert_write_keyed(TxId(3), 0, 0, 5);
        let mut o = Vec::new();
        q.write_order(0, &mut o);
        assert_eq!(
            o,
            [(5, TxId(3)), (10, TxId(0)), (11, TxId(1)), (12, TxId(2))]
        );
        assert_eq!(q.write_head(0), Some(TxId(3)));
        assert_eq!(q.renumber_writes(0, 100), 400);
        q.write_order(0, &mut o);
        let ids: Vec<TxId> = o.iter().map(|&(_, t)| t).collect();
        assert_eq!(ids, [TxId(3), TxId(0), TxId(1), TxId(2)]);
        assert_eq!(o[1].0, 200);
        assert_eq!(q.writes_len(), 4);
        assert_eq!(q.pop_first_write(0, |p| p == 1), Some(TxId(1)));
        assert_eq!(q.pop_first_write(0, |_| true), Some(TxId(3)));
    }
}
