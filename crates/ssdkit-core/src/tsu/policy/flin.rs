//! `tsu.policy = "flin"`: a fairness-aware scheduler in the manner of FLIN (Tavakkol et al.,
//! "FLIN: Enabling Fairness and Enhancing Performance in Modern NVMe Solid State Drives",
//! ISCA 2018), for each die's queues. Its three stages:
//!
//! 1. **Fairness-aware queue insertion.** Each die counts, per epoch (`tsu.flin_epoch_us`,
//!    10 ms), the transactions each flow brings it, reads and writes apart; a flow that brought
//!    at least alpha (`tsu.flin_alpha_read_bytes` 32 MiB, `flin_alpha_write_bytes` 256 KiB, per
//!    epoch over the whole device, divided by the dies and the page size, at least 1) is
//!    high-intensity in the next epoch; every flow starts low. A queue holds the transactions
//!    of low-intensity flows first, then those of high-intensity ones. Each transaction carries
//!    an estimate of the time it would have waited alone (its flow's previous transaction at
//!    this die: that one's arrival + its alone wait + its service time - now, or 0), so each
//!    queued transaction has an estimated slowdown S = (waited + die busy time left + service
//!    of everything up to it in the queue) / (alone wait + own service). A low-intensity
//!    transaction joins the end of the low segment and moves to the place in that segment
//!    (never past its own flow) that maximises min S / max S; a high-intensity one joins the
//!    end, then, if the fairness of the per-flow mean slowdowns is below
//!    `tsu.flin_fairness_threshold` (0.6) and its flow has the largest mean, moves forward
//!    past other flows' transactions until one of its own, a transaction moved this way
//!    before (tagged), or the low segment; otherwise it takes the fairest place in the high
//!    segment.
//! 2. **Priority-aware arbitration.** Queues are per NVMe priority class, and each die picks a
//!    read slot and a write slot among them with `priority.rs`'s turns (urgent first, then
//!    `tsu.weight_*`, MQSim's 4:2:1; the paper weighs all four classes 8:4:2:1, ssdkit keeps
//!    urgent strict, as NVMe does).
//! 3. **Wait-balancing selection.** The die serves the slot whose head has the larger
//!    proportional wait, time waited / service time, so a long-waiting write eventually goes
//!    before a fresh read. GC is charged to the writers: when the write slot wins and the die
//!    has GC work queued, its flow first runs its share of it, the queued GC operations times
//!    its share of the die's user writes since the die's last GC erase (rounded down).
//!    Otherwise GC runs as under every policy (`gc.rs`): when the die has no user work, or a
//!    plane is at its reserve, or GC has waited `ftl.gc_starvation_limit` operations.
//!
//! Sources: the paper's sections 5.1-5.3 as far as they could be read (the abstract and
//! secondary descriptions); MQSim's TSU_FLIN, which MQSim cannot run (its construction is
//! commented out) and whose stages 2 and 3 are unfinished; a published re-implementation of
//! stage 3's proportional waits. Simplified here: intensity is per die (the paper: per chip);
//! service times are estimates from the configured timings (command, one page's transfer and
//! the mean array time of a page), not the actual page type; one transaction's alone wait
//! follows only its own flow's queue at this die.

use crate::config::{FlinConfig, TsuPolicy};
use crate::ids::{DieId, TxId};
use crate::settings::Settings;
use crate::tsu::plan::{user_read, user_write};
use crate::tsu::{Attempt, Attempts, Tsu, TxKind};

/// A transaction that belongs to no flow (a translation-page write-back): it is neither
/// counted nor reordered, and goes at the end of its queue.
pub const NO_FLOW: u16 = u16::MAX;

/// Gap between the order keys of consecutive writes, so that a write can be placed between
/// two others by a new key.
pub const KEY_GAP: u64 = 1 << 20;

/// FLIN's constants.
#[derive(Debug, Clone, Copy)]
pub struct FlinParams {
    pub epoch_ps: u64,
    /// Transactions per die per epoch from which a flow is high-intensity: reads, writes.
    pub alpha: [u32; 2],
    pub fairness_threshold: f64,
    /// Estimated service time of one page's read and write at a die, picoseconds.
    pub svc: [u64; 2],
}

/// What FLIN knows of a queued (or running) user transaction.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Entry {
    pub flow: u16,
    /// Placed in the low-intensity segment.
    pub low: bool,
    /// Moved forward for fairness: later high-intensity transactions do not pass it.
    pub tagged: bool,
    pub arrival: u64,
    /// Estimated wait had its flow been alone, picoseconds.
    pub alone: u64,
    pub svc: u64,
}

impl Entry {
    /// Estimated response time alone.
    #[inline]
    fn alone_rt(&self) -> f64 {
        (self.alone + self.svc) as f64
    }
}

#[derive(Debug, Clone)]
struct DieState {
    epoch: u64,
    /// Per flow: transactions brought this epoch (reads, writes).
    counts: Vec<[u32; 2]>,
    /// Per flow: high-intensity this epoch (reads, writes).
    high: Vec<[bool; 2]>,
    /// The first transaction of the operation the die runs (user operations only) and when
    /// the operation is expected to end.
    running: Option<Entry>,
    busy_until: u64,
    /// Per flow: user pages written at this die since its last GC erase.
    writes_since_gc: Vec<u32>,
    /// GC operations the write slot's head still owes before it goes, and that write.
    gc_due: u32,
    paid_for: TxId,
}

/// FLIN's state: per die, and per transaction by id.
#[derive(Debug, Clone)]
pub struct Flin {
    pub p: FlinParams,
    dies: Vec<DieState>,
    entries: Vec<Entry>,
    /// Reused by each placement.
    scratch: Scratch,
    /// Reused by each insertion: the queue's order and its entries.
    buffers: (Vec<(u64, TxId)>, Vec<Entry>),
}

#[derive(Debug, Clone, Default)]
struct Scratch {
    s: Vec<f64>,
    pre_min: Vec<f64>,
    pre_max: Vec<f64>,
    /// Per flow: (flow, sum of S, count) for the mean slowdowns.
    means: Vec<(u16, f64, u32)>,
}

impl Flin {
    pub fn new(dies: u32, flows: usize, p: FlinParams) -> Self {
        let d = DieState {
            epoch: 0,
            counts: vec![[0; 2]; flows],
            high: vec![[false; 2]; flows],
            running: None,
            busy_until: 0,
            writes_since_gc: vec![0; flows],
            gc_due: 0,
            paid_for: TxId::NONE,
        };
        Self {
            p,
            dies: vec![d; dies as usize],
            entries: Vec::new(),
            scratch: Scratch::default(),
            buffers: Default::default(),
        }
    }

    /// The insertion buffers, to fill and hand back with `put_buffers`.
    pub fn take_buffers(&mut self) -> (Vec<(u64, TxId)>, Vec<Entry>) {
        std::mem::take(&mut self.buffers)
    }
    pub fn put_buffers(&mut self, order: Vec<(u64, TxId)>, queued: Vec<Entry>) {
        self.buffers = (order, queued);
    }

    /// The entry of queued or running transaction `t`.
    #[inline]
    pub fn entry(&self, t: TxId) -> Entry {
        self.entries[t.0 as usize]
    }

    /// A user transaction of `flow` reaches `die` now: counts it, and returns its entry
    /// (alone wait not yet estimated).
    pub fn arrive(&mut self, die: DieId, flow: u16, write: bool, now: u64) -> Entry {
        let p = self.p;
        let d = &mut self.dies[die.idx()];
        let e = now / p.epoch_ps;
        if e != d.epoch {
            // The epoch just ended classifies; after an idle epoch every flow is low.
            let fresh = e == d.epoch + 1;
            for (h, c) in d.high.iter_mut().zip(d.counts.iter_mut()) {
                for k in 0..2 {
                    h[k] = fresh && c[k] >= p.alpha[k];
                    c[k] = 0;
                }
            }
            d.epoch = e;
        }
        let k = write as usize;
        let low = match d.counts.get_mut(flow as usize) {
            Some(c) => {
                c[k] += 1;
                !d.high[flow as usize][k]
            }
            None => false,
        };
        Entry {
            flow,
            low,
            tagged: false,
            arrival: now,
            alone: 0,
            svc: p.svc[k],
        }
    }

    /// Records the entry of transaction `t` (placed).
    pub fn set(&mut self, t: TxId, e: Entry) {
        let i = t.0 as usize;
        if self.entries.len() <= i {
            self.entries.resize(i + 1, Entry::default());
        }
        self.entries[i] = e;
    }

    /// Where `new` goes in the queue `q` (service order, the low segment first), and whether
    /// it is tagged; estimates its alone wait first.
    pub fn place(&mut self, die: DieId, q: &[Entry], new: &mut Entry, now: u64) -> (usize, bool) {
        let d = &self.dies[die.idx()];
        let low_len = q.iter().take_while(|e| e.low).count();
        let at = if new.low { low_len } else { q.len() };
        if new.flow == NO_FLOW {
            return (q.len(), false);
        }
        let prev = q[..at]
            .iter()
            .rev()
            .find(|e| e.flow == new.flow)
            .or(d.running.as_ref().filter(|e| e.flow == new.flow));
        new.alone = prev.map_or(0, |e| (e.arrival + e.alone + e.svc).saturating_sub(now));
        // Nothing of another flow to weigh against: its place is where it joins.
        if q.iter().all(|e| e.flow == new.flow) {
            return (at, false);
        }
        let rem = d.busy_until.saturating_sub(now);
        let sc = &mut self.scratch;
        sc.s.clear();
        let mut cum = rem as f64;
        for e in q {
            cum += e.svc as f64;
            sc.s.push(((now - e.arrival) as f64 + cum) / e.alone_rt());
        }
        let cum_at: f64 = rem as f64 + q[..at].iter().map(|e| e.svc as f64).sum::<f64>();
        let s_new = (cum_at + new.svc as f64) / new.alone_rt();
        if new.low {
            return (reorder(sc, q, 0, at, new, s_new), false);
        }
        // Fairness of the per-flow mean slowdowns, the new transaction included.
        sc.means.clear();
        for (e, &s) in q.iter().zip(&sc.s).chain(std::iter::once((&*new, &s_new))) {
            match sc.means.iter_mut().find(|m| m.0 == e.flow) {
                Some(m) => {
                    m.1 += s;
                    m.2 += 1;
                }
                None => sc.means.push((e.flow, s, 1)),
            }
        }
        let (mut lo, mut hi, mut worst) = (f64::INFINITY, 0.0, NO_FLOW);
        for &(f, sum, n) in &sc.means {
            let m = sum / n as f64;
            lo = f64::min(lo, m);
            if m > hi {
                hi = m;
                worst = f;
            }
        }
        if lo / hi < self.p.fairness_threshold && worst == new.flow {
            let mut k = at;
            while k > low_len && q[k - 1].flow != new.flow && !q[k - 1].tagged {
                k -= 1;
            }
            return (k, true);
        }
        (reorder(sc, q, low_len, at, new, s_new), false)
    }

    /// The die began an operation of `kind` whose first transaction is `first`, expected to
    /// take `svc`; `writes` are the flows of the user pages it programs.
    pub fn began(
        &mut self,
        die: DieId,
        first: Option<TxId>,
        writes: impl Iterator<Item = TxId>,
        gc_erase: bool,
        now: u64,
    ) {
        let running = first.map(|t| self.entries[t.0 as usize]);
        let svc = running.map_or(0, |e| e.svc);
        for t in writes {
            let f = self.entries[t.0 as usize].flow as usize;
            if let Some(w) = self.dies[die.idx()].writes_since_gc.get_mut(f) {
                *w += 1;
            }
        }
        let d = &mut self.dies[die.idx()];
        d.running = running;
        d.busy_until = now + svc;
        if gc_erase {
            d.writes_since_gc.iter_mut().for_each(|w| *w = 0);
        }
    }

    /// Time waited over service time of queued transaction `t`.
    #[inline]
    pub fn proportional_wait(&self, t: TxId, now: u64) -> f64 {
        let e = self.entries[t.0 as usize];
        (now - e.arrival) as f64 / e.svc as f64
    }

    /// The write slot won with write `w` while `pending` GC operations wait at the die:
    /// whether a GC operation goes first, on the write's flow's account.
    pub fn gc_owed(&mut self, die: DieId, w: TxId, pending: usize) -> bool {
        let flow = self.entries[w.0 as usize].flow as usize;
        let d = &mut self.dies[die.idx()];
        if d.paid_for != w {
            d.paid_for = w;
            let total: u64 = d.writes_since_gc.iter().map(|&x| x as u64).sum();
            let mine = d.writes_since_gc.get(flow).copied().unwrap_or(0) as u64;
            // Nobody wrote since the last erase: nobody owes GC (it runs when the die idles).
            d.gc_due = (pending as u64 * mine)
                .checked_div(total)
                .map_or(0, |n| n as u32);
        }
        if d.gc_due > 0 {
            d.gc_due -= 1;
            true
        } else {
            false
        }
    }
}

impl Flin {
    /// FLIN's state for `tsu.policy = { type = "flin" }`: its constants, each die's share of
    /// the intensity thresholds, and the estimated service time of a page's read and program
    /// (command, one page over the bus, the mean array time of the page types).
    pub fn from_config(c: &FlinConfig, s: &Settings, flows: usize) -> Self {
        let t = &s.timing;
        let mean = |v: &[u64]| v.iter().sum::<u64>() / v.len().max(1) as u64;
        let page = *t.xfer_ps.last().expect("a page has sectors");
        let per_die = |bytes: u64| {
            let pages = bytes / s.geo.dies() as u64 / s.geo.page_size as u64;
            pages.clamp(1, u32::MAX as u64) as u32
        };
        Flin::new(
            s.geo.dies(),
            flows,
            FlinParams {
                epoch_ps: crate::engine::us_to_ps(c.epoch_us).max(1),
                alpha: [per_die(c.alpha_read_bytes), per_die(c.alpha_write_bytes)],
                fairness_threshold: c.fairness_threshold,
                svc: [
                    t.read_cmd_ps + page + mean(&t.read_ps),
                    t.program_cmd_ps + page + mean(&t.program_ps),
                ],
            },
        )
    }
}

/// FLIN at the die queues: the first stage at insertion, the second and third when a die is
/// free, and what each die runs.
impl Tsu {
    /// `tsu.policy = "flin"`: queues user transaction `t` of `flow` (None: no flow) in
    /// priority class `class` at the place FLIN's first stage gives it; returns the die.
    pub(in crate::tsu) fn enqueue_flin(
        &mut self,
        t: TxId,
        class: usize,
        flow: Option<crate::ids::FlowId>,
        now: u64,
    ) -> DieId {
        let flow = flow.map_or(NO_FLOW, |f| f.0 as u16);
        let tx = *self.txs.get(t.0);
        let die = self.die_of(tx.plane);
        let write = match tx.kind {
            k if user_read(k) => false,
            k if user_write(k) => true,
            _ => {
                let seq = self.next_seq();
                self.queues[die.idx()].push(t, &tx, self.ppd, class, seq);
                return die;
            }
        };
        let flin = self.flin.as_mut().expect("flin policy");
        let mut e = flin.arrive(die, flow, write, now);
        let q = &mut self.queues[die.idx()];
        // Buffers kept between calls: this runs for every user transaction.
        let (mut order, mut queued) = flin.take_buffers();
        if write {
            q.write_order(class, &mut order);
        } else {
            order.clear();
            order.extend((0..q.class_reads(class)).map(|i| (0, q.read_at(class, i))));
        }
        queued.clear();
        queued.extend(order.iter().map(|&(_, t)| flin.entry(t)));
        let (pos, tagged) = flin.place(die, &queued, &mut e, now);
        e.tagged = tagged;
        flin.set(t, e);
        if !write {
            q.insert_read_at(t, class, pos);
            flin.put_buffers(order, queued);
            return die;
        }
        let gap = KEY_GAP;
        let key = |order: &[(u64, TxId)]| {
            let prev = if pos > 0 { order[pos - 1].0 } else { 0 };
            match order.get(pos) {
                None => Some(prev + gap),
                Some(&(next, _)) => (next - prev >= 2).then(|| prev + (next - prev) / 2),
            }
        };
        let key = match key(&order) {
            Some(k) => k,
            None => {
                q.renumber_writes(class, gap);
                q.write_order(class, &mut order);
                key(&order).expect("renumbered keys leave room")
            }
        };
        let local = (tx.plane.0 % self.geo.planes_per_die) as usize;
        q.insert_write_keyed(t, local, class, key);
        flin.put_buffers(order, queued);
        die
    }

    /// FLIN's second and third stages: a read slot and a write slot by the classes' turns;
    /// the slot whose head waited longer for its service time goes, a winning write first
    /// paying its flow's share of the GC queued at the die.
    #[inline(never)]
    pub(in crate::tsu) fn flin_steps(&mut self, die: DieId, now: u64, s: &mut Attempts) {
        debug_assert!(matches!(self.user, TsuPolicy::Flin(_)));
        let q = &self.queues[die.idx()];
        if !q.mapping_reads.is_empty() {
            s.push(Attempt::Reads(0));
            return;
        }
        let (rw, ww) = (q.classes_waiting(false), q.classes_waiting(true));
        let w = self.weights;
        let cr = self.turns[die.idx()][0].pick(rw, w);
        let cw = self.turns[die.idx()][1].pick(ww, w);
        let q = &self.queues[die.idx()];
        let flin = self.flin.as_mut().expect("flin policy");
        let head_r = cr.and_then(|c| q.read_head(c));
        let head_w = cw.and_then(|c| q.write_head(c));
        let pw = |t: Option<TxId>| t.map_or(-1.0, |t| flin.proportional_wait(t, now));
        if head_r.is_some() && pw(head_r) >= pw(head_w) {
            let c = cr.expect("a head");
            self.turns[die.idx()][0].served(c);
            s.push(Attempt::Reads(c as u8));
            return;
        }
        let (Some(c), Some(head)) = (cw, head_w) else {
            return;
        };
        let pending = q.gc_reads.len() + q.gc_writes.len() + q.gc_erases.len();
        if pending > 0 && flin.gc_owed(die, head, pending) {
            s.push(Attempt::Gc);
        }
        s.push(Attempt::Writes {
            class: c as u8,
            turn: true,
        });
        // The slot's writes wait at their planes' GC reserve: other classes', then reads.
        for k in (0..4).filter(|&k| k != c && ww[k]) {
            s.push(Attempt::Writes {
                class: k as u8,
                turn: false,
            });
        }
        if let Some(c) = cr {
            s.push(Attempt::Reads(c as u8));
        }
    }

    /// What the die runs now (for the alone-wait estimates and the busy time left) and the
    /// pages each flow writes (for GC's charge).
    #[inline(never)]
    pub(in crate::tsu) fn flin_began(&mut self, die: DieId, batch: &[TxId], now: u64) {
        let kind = self.txs.get(batch[0].0).kind;
        let writes = user_write(kind);
        let user = writes || user_read(kind);
        self.flin.as_mut().expect("flin policy").began(
            die,
            user.then_some(batch[0]),
            batch.iter().copied().filter(|_| writes),
            kind == TxKind::GcErase,
            now,
        );
    }
}

/// The place in `lo..=hi` for `new` (joining at `hi`, slowdown `s_new` there) that maximises
/// min S / max S over the segment `lo..hi` and itself, never ahead of its own flow; ties keep
/// the later place. Passing transaction j adds new's service to j's wait (S_j grows by
/// svc_new / alone_rt_j) and takes j's service from new's (S_new falls by svc_j /
/// alone_rt_new). `sc.s` holds the queue's slowdowns.
fn reorder(sc: &mut Scratch, q: &[Entry], lo: usize, hi: usize, new: &Entry, s_new: f64) -> usize {
    let stop = q[lo..hi]
        .iter()
        .rposition(|e| e.flow == new.flow)
        .map_or(lo, |i| lo + i + 1);
    if stop == hi {
        return hi;
    }
    // Prefix min/max of the slowdowns that a place leaves unchanged.
    sc.pre_min.clear();
    sc.pre_max.clear();
    let (mut mn, mut mx) = (f64::INFINITY, 0.0f64);
    for j in lo..hi {
        sc.pre_min.push(mn);
        sc.pre_max.push(mx);
        mn = mn.min(sc.s[j]);
        mx = mx.max(sc.s[j]);
    }
    let fair = |a: f64, b: f64| if b > 0.0 { a / b } else { 1.0 };
    let mut best = (fair(mn.min(s_new), mx.max(s_new)), hi);
    let (mut suf_min, mut suf_max, mut passed) = (f64::INFINITY, 0.0f64, 0.0);
    for pos in (stop..hi).rev() {
        let e = &q[pos];
        let s = sc.s[pos] + new.svc as f64 / e.alone_rt();
        suf_min = suf_min.min(s);
        suf_max = suf_max.max(s);
        passed += e.svc as f64;
        let sn = s_new - passed / new.alone_rt();
        let k = pos - lo;
        let f = fair(
            sc.pre_min[k].min(suf_min).min(sn),
            sc.pre_max[k].max(suf_max).max(sn),
        );
        if f > best.0 {
            best = (f, pos);
        }
    }
    best.1
}

#[cfg(test)]
mod tests {
    use super::*;

    const US: u64 = 1_000_000;

    fn params() -> FlinParams {
        FlinParams {
            epoch_ps: 10_000 * US,
            alpha: [4, 1],
            fairness_threshold: 0.6,
            svc: [100 * US, 1000 * US],
        }
    }

    fn entry(flow: u16, low: bool, arrival: u64) -> Entry {
        Entry {
            flow,
            low,
            tagged: false,
            arrival,
            alone: 0,
            svc: 100 * US,
        }
    }

    /// A flow is low-intensity until an epoch in which it brought alpha transactions; an
    /// idle epoch makes every flow low again.
    #[test]
    fn intensity_per_epoch() {
        let mut f = Flin::new(1, 2, params());
        let d = DieId(0);
        for _ in 0..4 {
            assert!(f.arrive(d, 0, false, 0).low);
        }
        assert!(f.arrive(d, 1, false, 0).low);
        let e = 10_000 * US;
        assert!(!f.arrive(d, 0, false, e).low, "4 reads = alpha: high");
        assert!(f.arrive(d, 1, false, e).low, "1 read: low");
        assert!(f.arrive(d, 0, true, e).low, "writes are counted apart");
        assert!(f.arrive(d, 0, false, 3 * e).low, "after an idle epoch");
    }

    /// A low-intensity transaction goes ahead of a high-intensity flow's queue; the
    /// high-intensity flow's own order is kept.
    #[test]
    fn low_intensity_goes_first() {
        let mut f = Flin::new(1, 2, params());
        let q: Vec<Entry> = (0..6).map(|i| entry(1, false, i * US)).collect();
        let mut new = entry(0, true, 10 * US);
        assert_eq!(f.place(DieId(0), &q, &mut new, 10 * US), (0, false));
        assert_eq!(new.alone, 0, "nothing of its flow ahead");
        // Its second transaction waits behind its first, alone as shared.
        let mut q2 = q.clone();
        q2.insert(0, new);
        let mut second = entry(0, true, 11 * US);
        assert_eq!(f.place(DieId(0), &q2, &mut second, 11 * US).0, 1);
        assert_eq!(second.alone, (10 + 100 - 11) * US);
    }

    /// The fairest place, computed by hand (service 100 us each, die idle). Flow 1 has two
    /// fresh transactions queued, S = 100/100 = 1 and (alone 100) 200/200 = 1; flow 2's new
    /// one would have S = 300/100 = 3 at the end (F = 1/3), 2 ahead of flow 1's second (which
    /// becomes 1.5: F = 1/2) and 1 at the front (flow 1's become 2 and 1.5: F = 1/2): the tie
    /// keeps the later place. As a high-intensity arrival below the threshold (means 1 and 3)
    /// it moves to the front instead, tagged.
    #[test]
    fn reorder_picks_the_fairest_place() {
        let mut f = Flin::new(1, 3, params());
        let now = 400 * US;
        let queued = |low| {
            let mut q = vec![entry(1, low, now), entry(1, low, now)];
            q[1].alone = 100 * US;
            q
        };
        let mut new = entry(2, true, now);
        assert_eq!(f.place(DieId(0), &queued(true), &mut new, now), (1, false));
        let mut new = entry(2, false, now);
        assert_eq!(f.place(DieId(0), &queued(false), &mut new, now), (0, true));
        // Flow 1 waited long (S 5 and 6): flow 2's fresh transaction (S 3 at the end) gains
        // nothing by passing them (2/7, then 1/7), and stays last.
        let q = vec![entry(1, false, 0), entry(1, false, 0)];
        let mut new = entry(2, false, now);
        assert_eq!(f.place(DieId(0), &q, &mut new, now), (2, false));
        // Never ahead of its own flow.
        let mut q = q;
        q.push(entry(2, false, now));
        let mut late = entry(1, false, now);
        assert_eq!(f.place(DieId(0), &q, &mut late, now), (3, false));
    }

    /// Below the fairness threshold, the most slowed flow's transaction moves forward past
    /// other flows until a tagged transaction, and is tagged.
    #[test]
    fn move_forward_stops_at_a_tag() {
        let mut f = Flin::new(1, 2, params());
        let now = 1000 * US;
        // Flow 0 waited 900 us behind flow 1's fresh transactions.
        let mut q = vec![entry(0, false, 100 * US)];
        q.extend((0..5).map(|_| entry(1, false, now)));
        q[2].tagged = true;
        let mut new = entry(0, false, now);
        let (pos, tag) = f.place(DieId(0), &q, &mut new, now);
        assert_eq!((pos, tag), (3, true), "stops behind the tagged transaction");
    }

    /// GC goes on the account of the flows that wrote since the die's last GC erase.
    #[test]
    fn gc_is_charged_to_writers() {
        let mut f = Flin::new(1, 2, params());
        let d = DieId(0);
        for (i, flow) in [0u16, 0, 0, 1].iter().enumerate() {
            let e = f.arrive(d, *flow, true, 0);
            f.set(TxId(i as u32), e);
        }
        f.began(d, Some(TxId(0)), (0..4).map(TxId), false, 0);
        // Flow 0 wrote 3 of 4 pages: 3 of 4 pending GC operations; flow 1: 1.
        assert!((0..3).all(|_| f.gc_owed(d, TxId(0), 4)));
        assert!(!f.gc_owed(d, TxId(0), 4));
        assert!(f.gc_owed(d, TxId(3), 4));
        assert!(!f.gc_owed(d, TxId(3), 4));
        f.began(d, None, std::iter::empty(), true, 0);
        assert!(!f.gc_owed(d, TxId(1), 4), "nothing written since the erase");
    }
}
