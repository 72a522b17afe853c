//! Stamping the latency breakdown (`run.latency_breakdown`) along the request path.
//!
//! Each request keeps a cursor: the time up to which its steps are accounted. Every phase of
//! the request's own path (submission, fetch, write data, firmware, completion) adds its time
//! to its steps and moves the cursor to its end. The flash part runs page by page in
//! parallel; the page whose end ends the request's flash work is its critical path, and its
//! transaction carries stamps (issued, ready for its die, the die operation's parts) from
//! which its steps from the cursor to that end are taken. A request that ends without such a
//! transaction (a cache hit, a flush, a TRIM) spends that time in `cache` (0 for TRIMs and for
//! reads of pages never written). So the steps of every request sum to its latency exactly;
//! `complete` checks it.

use super::Simulator;
use crate::engine::Picoseconds;
use crate::flash::{OpSplit, XferSplit};
use crate::ids::{DieId, ReqId, TxId};
use crate::stats::breakdown::{BreakdownStats, Parts, Step, RESPONSE_STEPS, STEPS};

#[derive(Clone, Copy, Default)]
struct ReqParts {
    cursor: Picoseconds,
    p: Parts,
}

#[derive(Clone, Copy)]
struct TxStamp {
    req: ReqId,
    read: bool,
    /// What the transaction waited for between its request's cursor and its creation.
    pre: Step,
    issued: Picoseconds,
    /// When it joined its die's queue.
    ready: Picoseconds,
    /// Its page of write data's wait for the host link (pipelined writes).
    stall: Picoseconds,
}

impl Default for TxStamp {
    fn default() -> Self {
        Self {
            req: ReqId::NONE,
            read: true,
            pre: Step::Cache,
            issued: 0,
            ready: 0,
            stall: 0,
        }
    }
}

/// The parts of a die's operation, taken when it began (and its transfer out).
#[derive(Clone, Copy, Default)]
pub(crate) struct DieSplit {
    start: Picoseconds,
    op: OpSplit,
    xfer: XferSplit,
}

pub(crate) struct Tracker {
    req: Vec<ReqParts>,
    tx: Vec<TxStamp>,
    die: Vec<DieSplit>,
    /// The parts of suspended operations, by die.
    saved: Vec<(DieId, DieSplit)>,
    /// Per flow.
    pub stats: Vec<BreakdownStats>,
    /// What a transaction created now has waited for since its request's cursor: `Mapping`
    /// while translation pages that arrived release their waiters, `Cache` otherwise (the
    /// data cache's waits for room; nothing when created at the firmware's end).
    pub pre: Step,
    /// The transaction whose end is being handled, with its die operation's parts (copied:
    /// ending one transaction of a batch can start the die's next operation before the
    /// others are handled): its request may end with it.
    pub current: Option<(TxId, DieSplit)>,
}

#[inline]
fn slot<T: Default + Clone>(v: &mut Vec<T>, i: usize) -> &mut T {
    if v.len() <= i {
        v.resize(i + 1, T::default());
    }
    &mut v[i]
}

impl Tracker {
    /// The parts of the operation `die` is ending.
    pub fn die_split(&self, die: DieId) -> DieSplit {
        self.die[die.idx()]
    }

    /// The die's operation is suspended: keep its parts while another runs.
    pub fn save_die(&mut self, die: DieId) {
        self.saved.push((die, self.die[die.idx()]));
    }

    /// The die's suspended operation resumes, `delay` later than it would have ended: its
    /// parts come back with the delay in its array phase (the operation held the die).
    pub fn restore_die(&mut self, die: DieId, delay: Picoseconds) {
        let i = self
            .saved
            .iter()
            .position(|&(d, _)| d == die)
            .expect("saved at suspension");
        let (_, mut split) = self.saved.swap_remove(i);
        split.op.array += delay;
        self.die[die.idx()] = split;
    }

    pub fn new(flows: usize, dies: usize) -> Self {
        Self {
            req: Vec::new(),
            tx: Vec::new(),
            die: vec![DieSplit::default(); dies],
            saved: Vec::new(),
            stats: vec![BreakdownStats::default(); flows],
            pre: Step::Cache,
            current: None,
        }
    }

    fn parts(&mut self, r: ReqId) -> &mut ReqParts {
        slot(&mut self.req, r.idx())
    }

    /// The request's own path reached `end` from its cursor: `step` takes the time, but for
    /// `stall` of it spent waiting for the host link.
    fn phase(&mut self, r: ReqId, step: Step, end: Picoseconds, stall: Picoseconds) {
        let rp = self.parts(r);
        rp.p[step as usize] += end - rp.cursor - stall;
        rp.p[Step::TStall as usize] += stall;
        rp.cursor = end;
    }
}

impl Simulator {
    /// The host submitted `r` now, which arrived at `arrived`.
    #[inline(always)]
    pub(super) fn bd_submitted(&mut self, r: ReqId, arrived: Picoseconds) {
        if self.bd.is_some() {
            self.bd_submitted_rec(r, arrived);
        }
    }

    // Out of line: with the breakdown off the hot path keeps only the test above.
    #[inline(never)]
    fn bd_submitted_rec(&mut self, r: ReqId, arrived: Picoseconds) {
        let b = self.bd.as_mut().expect("checked");
        let now = self.q.now();
        let s = self.host.last_submit;
        let rp = b.parts(r);
        rp.p = [0; STEPS];
        rp.p[Step::HostQueue as usize] = now - arrived;
        rp.p[Step::Doorbell as usize] = s.wire + s.hba;
        rp.p[Step::TStall as usize] = s.stall;
        rp.cursor = now + s.wire + s.stall + s.hba;
    }

    /// The fetch unit took `r` now; its command is in the device at `t`, `stall` of which
    /// waited for the link.
    #[inline(always)]
    pub(super) fn bd_fetched(&mut self, r: ReqId, t: Picoseconds, stall: Picoseconds) {
        if self.bd.is_some() {
            self.bd_fetched_rec(r, t, stall);
        }
    }

    // Out of line: with the breakdown off the hot path keeps only the test above.
    #[inline(never)]
    fn bd_fetched_rec(&mut self, r: ReqId, t: Picoseconds, stall: Picoseconds) {
        let b = self.bd.as_mut().expect("checked");
        let now = self.q.now();
        b.phase(r, Step::SqWait, now, 0);
        b.phase(r, Step::CommandFetch, t, stall);
    }

    /// A phase of `r` on its own path ended at `t` (write data, firmware).
    #[inline(always)]
    pub(super) fn bd_phase(&mut self, r: ReqId, step: Step, t: Picoseconds, stall: Picoseconds) {
        if self.bd.is_some() {
            self.bd_phase_rec(r, step, t, stall);
        }
    }

    // Out of line: with the breakdown off the hot path keeps only the test above.
    #[inline(never)]
    fn bd_phase_rec(&mut self, r: ReqId, step: Step, t: Picoseconds, stall: Picoseconds) {
        let b = self.bd.as_mut().expect("checked");
        b.phase(r, step, t, stall);
    }

    /// A user transaction of `r` was created now (`stall`: its write data's wait for the
    /// link).
    #[inline(always)]
    pub(super) fn bd_tx_issued(&mut self, t: TxId, r: ReqId, read: bool, stall: Picoseconds) {
        if self.bd.is_some() {
            self.bd_tx_issued_rec(t, r, read, stall);
        }
    }

    // Out of line: with the breakdown off the hot path keeps only the test above.
    #[inline(never)]
    fn bd_tx_issued_rec(&mut self, t: TxId, r: ReqId, read: bool, stall: Picoseconds) {
        let b = self.bd.as_mut().expect("checked");
        let now = self.q.now();
        let pre = b.pre;
        *slot(&mut b.tx, t.idx()) = TxStamp {
            req: r,
            read,
            pre,
            issued: now,
            ready: now,
            stall,
        };
    }

    /// Transaction `t` joined its die's queue now.
    #[inline(always)]
    pub(super) fn bd_tx_ready(&mut self, t: TxId) {
        if self.bd.is_some() {
            self.bd_tx_ready_rec(t);
        }
    }

    // Out of line: with the breakdown off the hot path keeps only the test above.
    #[inline(never)]
    fn bd_tx_ready_rec(&mut self, t: TxId) {
        let b = self.bd.as_mut().expect("checked");
        slot(&mut b.tx, t.idx()).ready = self.q.now();
    }

    /// The die started an operation now; the back end has its parts.
    #[inline(always)]
    pub(super) fn bd_die_began(&mut self, die: DieId) {
        if self.bd.is_some() {
            self.bd_die_began_rec(die);
        }
    }

    // Out of line: with the breakdown off the hot path keeps only the test above.
    #[inline(never)]
    fn bd_die_began_rec(&mut self, die: DieId) {
        let b = self.bd.as_mut().expect("checked");
        b.die[die.idx()].start = self.q.now();
        b.die[die.idx()].op = self.backend.last_op;
    }

    /// The die's read data started out of its registers; the back end has the parts.
    #[inline(always)]
    pub(super) fn bd_die_xfer(&mut self, die: DieId) {
        if self.bd.is_some() {
            self.bd_die_xfer_rec(die);
        }
    }

    // Out of line: with the breakdown off the hot path keeps only the test above.
    #[inline(never)]
    fn bd_die_xfer_rec(&mut self, die: DieId) {
        let b = self.bd.as_mut().expect("checked");
        b.die[die.idx()].xfer = self.backend.last_xfer;
    }

    /// The flash work of `r` is done now: the steps from its cursor to now. If the
    /// transaction being handled is the request's, they are its path's; otherwise the
    /// request waited on the data cache (or on nothing).
    #[inline(always)]
    pub(super) fn bd_flash_done(&mut self, r: ReqId) {
        if self.bd.is_some() {
            self.bd_flash_done_rec(r);
        }
    }

    // Out of line: with the breakdown off the hot path keeps only the test above.
    #[inline(never)]
    fn bd_flash_done_rec(&mut self, r: ReqId) {
        let now = self.q.now();
        let b = self.bd.as_mut().expect("checked");
        let current = b
            .current
            .map(|(t, d)| (*slot(&mut b.tx, t.idx()), d))
            .filter(|(s, _)| s.req == r);
        let rp = b.parts(r);
        let Some((s, d)) = current else {
            rp.p[Step::Cache as usize] += now - rp.cursor;
            rp.cursor = now;
            return;
        };
        let p = &mut rp.p;
        p[s.pre as usize] += s.issued - rp.cursor;
        let before_queue = s.ready - s.issued;
        let stall = s.stall.min(before_queue);
        p[Step::TStall as usize] += stall;
        p[Step::DataDma as usize] += before_queue - stall;
        p[Step::DieQueue as usize] += d.start - s.ready;
        p[Step::ChannelWait as usize] += d.op.wait;
        p[Step::CmdAddr as usize] += d.op.cmd;
        p[Step::OnfiTransfer as usize] += d.op.data;
        p[Step::Array as usize] += d.op.array;
        if s.read {
            p[Step::ChannelWait as usize] += d.xfer.wait;
            p[Step::OnfiTransfer as usize] += d.xfer.data;
        }
        rp.cursor = now;
    }

    /// The completion of `r` is on its way; the host has the parts, ending at `t`.
    #[inline(always)]
    pub(super) fn bd_completing(&mut self, r: ReqId, t: Picoseconds) {
        if self.bd.is_some() {
            self.bd_completing_rec(r, t);
        }
    }

    #[inline(never)]
    fn bd_completing_rec(&mut self, r: ReqId, t: Picoseconds) {
        let c = self.host.last_complete;
        let b = self.bd.as_mut().expect("checked");
        let rp = b.parts(r);
        rp.p[Step::DataDma as usize] += c.data;
        rp.p[Step::Completion as usize] += c.completion + c.hba;
        rp.p[Step::TStall as usize] += c.stall;
        debug_assert_eq!(rp.cursor + c.data + c.completion + c.hba + c.stall, t);
        rp.cursor = t;
    }

    /// `r` completed with latency `lat`: records its steps, which must sum to it, and
    /// returns them for the request log. A mismatch is a model error that stops the run.
    pub(super) fn bd_completed(
        &mut self,
        r: ReqId,
        flow: usize,
        write: Option<bool>,
        lat: Picoseconds,
    ) -> Option<Parts> {
        let b = self.bd.as_mut()?;
        let p = b.parts(r).p;
        let sum: Picoseconds = p[..RESPONSE_STEPS].iter().sum();
        if sum != lat {
            self.failure.get_or_insert(crate::Error::Simulation(format!(
                "latency breakdown of request {} sums to {sum} ps, its latency is {lat} ps: {p:?}",
                r.0
            )));
        }
        if let Some(w) = write {
            b.stats[flow].record(w, &p);
        }
        Some(p)
    }

    /// The host finished processing a completion of `flow` that reached its completion
    /// queue at `cq_ps`.
    #[inline]
    pub(super) fn bd_host_done(&mut self, flow: usize, write: Option<bool>, cq_ps: Picoseconds) {
        if let (Some(b), Some(w)) = (self.bd.as_mut(), write) {
            b.stats[flow].record_host(w, self.q.now() - cq_ps);
        }
    }
}
