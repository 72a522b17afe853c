//! The latency breakdown (`run.latency_breakdown`): where each request's time went, one
//! step at a time along its path, after NVMeSim's Figure 2 (the NVMe handshake and T_stall)
//! and the MQSim paper's Figure 4 (the end-to-end request path). This module names the
//! steps, keeps their statistics and does the stamping: the simulator reports each point of a
//! request's path with the times it has (`Tracker`), and the steps are taken from them here.
//!
//! Each request keeps a cursor: the time up to which its steps are accounted. Every phase of
//! the request's own path (submission, fetch, write data, firmware, completion) adds its time
//! to its steps and moves the cursor to its end. The flash part runs page by page in
//! parallel; the page whose end ends the request's flash work is its critical path, and its
//! transaction carries stamps (issued, ready for its die, the die operation's parts) from
//! which its steps from the cursor to that end are taken. A request that ends without such a
//! transaction (a cache hit, a flush, a TRIM) spends that time in `cache` (0 for TRIMs and for
//! reads of pages never written). So the steps of every request sum to its latency exactly;
//! `Tracker::completed` checks it.

use super::OpStats;
use crate::engine::Picoseconds;
use crate::flash::{OpSplit, XferSplit};
use crate::ids::{DieId, ReqId, TxId};
use crate::result::{BreakdownResult, LatencySummary, StepSummaries};
use crate::workload::Op;

/// The steps, in path order. The first [`RESPONSE_STEPS`] sum to a request's response time
/// (submission to completion-queue entry); `HostProcessing` follows it, with a host model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Step {
    HostQueue,
    Doorbell,
    SqWait,
    CommandFetch,
    Firmware,
    Mapping,
    Cache,
    DieQueue,
    ChannelWait,
    CmdAddr,
    Array,
    OnfiTransfer,
    DataDma,
    Completion,
    TStall,
    HostProcessing,
}

pub const STEPS: usize = 16;
pub const RESPONSE_STEPS: usize = 15;

/// Names of the steps, in path order: result keys, log columns (with `_ns`) and summary.
pub const STEP_NAMES: [&str; STEPS] = [
    "host_queue",
    "doorbell",
    "sq_wait",
    "command_fetch",
    "firmware",
    "mapping",
    "cache",
    "die_queue",
    "channel_wait",
    "cmd_addr",
    "array",
    "onfi_transfer",
    "data_dma",
    "completion",
    "t_stall",
    "host_processing",
];

/// One request's time per step, picoseconds.
pub type Parts = [Picoseconds; STEPS];

/// Per step, the statistics of reads and of writes (TRIMs and flushes are not broken down).
#[derive(Clone, Default)]
pub struct BreakdownStats {
    pub read: [OpStats; STEPS],
    pub write: [OpStats; STEPS],
}

impl BreakdownStats {
    /// Records the response-time steps of one request.
    pub fn record(&mut self, write: bool, parts: &Parts) {
        let s = if write {
            &mut self.write
        } else {
            &mut self.read
        };
        for (st, &v) in s.iter_mut().zip(parts.iter()).take(RESPONSE_STEPS) {
            st.record(v, 0);
        }
    }

    /// Records the host's processing of one completion (host models only).
    pub fn record_host(&mut self, write: bool, ps: Picoseconds) {
        let s = if write {
            &mut self.write
        } else {
            &mut self.read
        };
        s[Step::HostProcessing as usize].record(ps, 0);
    }

    pub fn merge(&mut self, o: &BreakdownStats) {
        for (a, b) in self.read.iter_mut().zip(o.read.iter()) {
            a.merge(b);
        }
        for (a, b) in self.write.iter_mut().zip(o.write.iter()) {
            a.merge(b);
        }
    }

    pub fn summary(&self) -> BreakdownResult {
        BreakdownResult {
            read: steps(&self.read),
            write: steps(&self.write),
        }
    }
}

fn steps(s: &[OpStats; STEPS]) -> StepSummaries {
    let l = |st: Step| -> LatencySummary { s[st as usize].summary(1).latency_us };
    StepSummaries {
        count: s[0].count,
        host_queue: l(Step::HostQueue),
        doorbell: l(Step::Doorbell),
        sq_wait: l(Step::SqWait),
        command_fetch: l(Step::CommandFetch),
        firmware: l(Step::Firmware),
        mapping: l(Step::Mapping),
        cache: l(Step::Cache),
        die_queue: l(Step::DieQueue),
        channel_wait: l(Step::ChannelWait),
        cmd_addr: l(Step::CmdAddr),
        array: l(Step::Array),
        onfi_transfer: l(Step::OnfiTransfer),
        data_dma: l(Step::DataDma),
        completion: l(Step::Completion),
        t_stall: l(Step::TStall),
        host_processing: (s[Step::HostProcessing as usize].count > 0)
            .then(|| l(Step::HostProcessing)),
    }
}

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
#[derive(Debug, Clone, Copy, Default)]
pub struct DieSplit {
    start: Picoseconds,
    op: OpSplit,
    xfer: XferSplit,
}

/// The stamps of the latency breakdown along the request path, and its statistics per flow.
/// The stamping methods are out of line: the simulator calls them behind one test of whether
/// the breakdown is on, so that with it off its hot path keeps only that test.
pub struct Tracker {
    req: Vec<ReqParts>,
    tx: Vec<TxStamp>,
    die: Vec<DieSplit>,
    /// The parts of suspended operations, by die.
    saved: Vec<(DieId, DieSplit)>,
    /// Per flow.
    stats: Vec<BreakdownStats>,
    /// What a transaction created now has waited for since its request's cursor: `Mapping`
    /// while translation pages that arrived release their waiters, `Cache` otherwise (the
    /// data cache's waits for room; nothing when created at the firmware's end).
    pre: Step,
    /// The transaction whose end is being handled, with its die operation's parts (copied:
    /// ending one transaction of a batch can start the die's next operation before the
    /// others are handled): its request may end with it.
    current: Option<(TxId, DieSplit)>,
}

#[inline]
fn slot<T: Default + Clone>(v: &mut Vec<T>, i: usize) -> &mut T {
    if v.len() <= i {
        v.resize(i + 1, T::default());
    }
    &mut v[i]
}

impl Tracker {
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

    /// The statistics of flow `i`.
    pub fn flow(&self, i: usize) -> &BreakdownStats {
        &self.stats[i]
    }

    /// The statistics of every flow together.
    pub fn total(&self) -> BreakdownStats {
        let mut all = BreakdownStats::default();
        for s in &self.stats {
            all.merge(s);
        }
        all
    }

    fn parts(&mut self, r: ReqId) -> &mut ReqParts {
        slot(&mut self.req, r.idx())
    }

    /// The request's own path reached `end` from its cursor: `step` takes the time, but for
    /// `stall` of it spent waiting for the host link.
    #[inline(never)]
    pub fn phase(&mut self, r: ReqId, step: Step, end: Picoseconds, stall: Picoseconds) {
        let rp = self.parts(r);
        rp.p[step as usize] += end - rp.cursor - stall;
        rp.p[Step::TStall as usize] += stall;
        rp.cursor = end;
    }

    /// The host submitted `r` at `now`, which arrived at `arrived`; its doorbell took `wire`
    /// on the link after waiting `stall` for it, then `hba` in a SATA host bus adapter.
    #[inline(never)]
    pub fn submitted(&mut self, r: ReqId, now: Picoseconds, arrived: Picoseconds, s: SubmitSplit) {
        let SubmitSplit { wire, stall, hba } = s;
        let rp = self.parts(r);
        rp.p = [0; STEPS];
        rp.p[Step::HostQueue as usize] = now - arrived;
        rp.p[Step::Doorbell as usize] = wire + hba;
        rp.p[Step::TStall as usize] = stall;
        rp.cursor = now + wire + stall + hba;
    }

    /// The fetch unit took `r` at `now`; its command is in the device at `t`, `stall` of
    /// which waited for the link.
    #[inline(never)]
    pub fn fetched(&mut self, r: ReqId, now: Picoseconds, t: Picoseconds, stall: Picoseconds) {
        self.phase(r, Step::SqWait, now, 0);
        self.phase(r, Step::CommandFetch, t, stall);
    }

    /// A user transaction `t` of `r` was created at `now` (`stall`: its write data's wait
    /// for the link).
    #[inline(never)]
    pub fn tx_issued(
        &mut self,
        t: TxId,
        r: ReqId,
        read: bool,
        now: Picoseconds,
        stall: Picoseconds,
    ) {
        let pre = self.pre;
        *slot(&mut self.tx, t.idx()) = TxStamp {
            req: r,
            read,
            pre,
            issued: now,
            ready: now,
            stall,
        };
    }

    /// Transaction `t` joined its die's queue at `now`.
    #[inline(never)]
    pub fn tx_ready(&mut self, t: TxId, now: Picoseconds) {
        slot(&mut self.tx, t.idx()).ready = now;
    }

    /// Transactions created from now on waited for a translation page (`true`) or, as
    /// otherwise, for the data cache.
    #[inline]
    pub fn after_mapping(&mut self, mapping: bool) {
        self.pre = if mapping { Step::Mapping } else { Step::Cache };
    }

    /// The die started an operation at `now` with these parts.
    #[inline(never)]
    pub fn die_began(&mut self, die: DieId, now: Picoseconds, op: OpSplit) {
        let d = &mut self.die[die.idx()];
        d.start = now;
        d.op = op;
    }

    /// The die's read data started out of its registers, with these parts.
    #[inline(never)]
    pub fn die_xfer(&mut self, die: DieId, xfer: XferSplit) {
        self.die[die.idx()].xfer = xfer;
    }

    /// The parts of the operation `die` is ending.
    pub fn die_split(&self, die: DieId) -> DieSplit {
        self.die[die.idx()]
    }

    /// The end of transaction `t` of a die operation with parts `split` is being handled
    /// (None: no user transaction is): its request may end with it.
    #[inline]
    pub fn handling(&mut self, current: Option<(TxId, DieSplit)>) {
        self.current = current;
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

    /// The flash work of `r` is done at `now`: the steps from its cursor to now. If the
    /// transaction being handled is the request's, they are its path's; otherwise the
    /// request waited on the data cache (or on nothing).
    #[inline(never)]
    pub fn flash_done(&mut self, r: ReqId, now: Picoseconds) {
        let current = self
            .current
            .map(|(t, d)| (*slot(&mut self.tx, t.idx()), d))
            .filter(|(s, _)| s.req == r);
        let rp = self.parts(r);
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

    /// The completion of `r` is on its way, ending at `t`: the read data not sent yet took
    /// `data` on the link, the completion entry `completion`, their waits for the link
    /// `stall`, a SATA host bus adapter `hba`.
    #[inline(never)]
    pub fn completing(&mut self, r: ReqId, t: Picoseconds, c: CompleteSplit) {
        let CompleteSplit {
            data,
            completion,
            stall,
            hba,
        } = c;
        let rp = self.parts(r);
        rp.p[Step::DataDma as usize] += data;
        rp.p[Step::Completion as usize] += completion + hba;
        rp.p[Step::TStall as usize] += stall;
        debug_assert_eq!(rp.cursor + data + completion + hba + stall, t);
        rp.cursor = t;
    }

    /// `r` of flow `flow` completed with latency `lat`: records its steps (for reads,
    /// `write` Some(false), and writes) and returns them for the request log, with an error
    /// when they do not sum to its latency (a model error that stops the run).
    pub fn completed(
        &mut self,
        r: ReqId,
        flow: usize,
        write: Option<bool>,
        lat: Picoseconds,
    ) -> (Parts, Option<crate::Error>) {
        let p = self.parts(r).p;
        let sum: Picoseconds = p[..RESPONSE_STEPS].iter().sum();
        let err = (sum != lat).then(|| {
            crate::Error::Simulation(format!(
                "latency breakdown of request {} sums to {sum} ps, its latency is {lat} ps: {p:?}",
                r.0
            ))
        });
        if let Some(w) = write {
            self.stats[flow].record(w, &p);
        }
        (p, err)
    }

    /// The host finished processing a completion of `flow` (a read, or a write with `write`)
    /// `ps` after it reached the completion queue.
    #[inline(never)]
    pub fn host_done(&mut self, flow: usize, write: bool, ps: Picoseconds) {
        self.stats[flow].record_host(write, ps);
    }
}

/// Where the time of one submission went: the doorbell's wire time, its wait for the link,
/// the SATA host bus adapter's stage (its wait and processing).
#[derive(Debug, Clone, Copy, Default)]
pub struct SubmitSplit {
    pub wire: Picoseconds,
    pub stall: Picoseconds,
    pub hba: Picoseconds,
}

/// Where the time from the end of a request's flash work to its completion-queue entry
/// went: data wire time (the read data not sent yet), completion wire time (CQE or Set
/// Device Bits FIS), their waits for the link, the SATA HBA's completion stage.
#[derive(Debug, Clone, Copy, Default)]
pub struct CompleteSplit {
    pub data: Picoseconds,
    pub completion: Picoseconds,
    pub stall: Picoseconds,
    pub hba: Picoseconds,
}

/// The request path's hooks into the breakdown, called on the simulator's
/// `Option<Box<Tracker>>` (None unless `run.latency_breakdown`): with the breakdown off, each
/// is one inlined test.
pub(crate) trait Hooks {
    /// See [`Tracker::submitted`].
    fn submitted(&mut self, r: ReqId, now: Picoseconds, arrived: Picoseconds, s: SubmitSplit);
    /// See [`Tracker::completing`].
    fn completing(&mut self, r: ReqId, t: Picoseconds, c: CompleteSplit);
    /// See [`Tracker::fetched`].
    fn fetched(&mut self, r: ReqId, now: Picoseconds, t: Picoseconds, stall: Picoseconds);
    /// A phase of `r` on its own path ended at `t` (write data, firmware).
    fn phase(&mut self, r: ReqId, step: Step, t: Picoseconds, stall: Picoseconds);
    /// See [`Tracker::tx_issued`].
    fn tx_issued(&mut self, t: TxId, r: ReqId, read: bool, now: Picoseconds, stall: Picoseconds);
    fn tx_ready(&mut self, t: TxId, now: Picoseconds);
    /// The die started an operation at `now`; the back end has its parts.
    fn die_began(&mut self, die: DieId, now: Picoseconds, backend: &crate::flash::Backend);
    /// The die's read data started out of its registers; the back end has the parts.
    fn die_xfer(&mut self, die: DieId, backend: &crate::flash::Backend);
    fn flash_done(&mut self, r: ReqId, now: Picoseconds);
    /// The host finished processing a completion (of a read or write: `write`) of `flow`
    /// `ps` after it reached the completion queue.
    fn host_done(&mut self, flow: usize, op: Op, ps: Picoseconds);
    /// Transactions created from now on waited for a translation page (`true`) or, as
    /// otherwise, for the data cache.
    fn after_mapping(&mut self, mapping: bool);
    /// The die's operation is suspended: its parts so far are kept (`Tracker::save_die`).
    fn save_die(&mut self, die: DieId);
    /// The die's suspended operation resumes, `delay` later (`Tracker::restore_die`).
    fn restore_die(&mut self, die: DieId, delay: Picoseconds);
    /// Request `r` of `flow` completed after `lat`: its steps for the request log; steps that
    /// do not sum to the latency are a model error, kept in `failure` (the run stops).
    fn request_done(
        &mut self,
        r: ReqId,
        flow: usize,
        op: Op,
        lat: Picoseconds,
        failure: &mut Option<crate::Error>,
    ) -> Option<Parts>;
}

/// The breakdown's statistics split reads (false) and writes (true); TRIMs and flushes are
/// left out.
#[inline]
fn write_of(op: Op) -> Option<bool> {
    match op {
        Op::Read => Some(false),
        Op::Write => Some(true),
        _ => None,
    }
}

impl Hooks for Option<Box<Tracker>> {
    #[inline(always)]
    fn submitted(&mut self, r: ReqId, now: Picoseconds, arrived: Picoseconds, s: SubmitSplit) {
        if let Some(b) = self {
            b.submitted(r, now, arrived, s);
        }
    }
    #[inline(always)]
    fn completing(&mut self, r: ReqId, t: Picoseconds, c: CompleteSplit) {
        if let Some(b) = self {
            b.completing(r, t, c);
        }
    }
    #[inline(always)]
    fn fetched(&mut self, r: ReqId, now: Picoseconds, t: Picoseconds, stall: Picoseconds) {
        if let Some(b) = self {
            b.fetched(r, now, t, stall);
        }
    }
    #[inline(always)]
    fn phase(&mut self, r: ReqId, step: Step, t: Picoseconds, stall: Picoseconds) {
        if let Some(b) = self {
            b.phase(r, step, t, stall);
        }
    }
    #[inline(always)]
    fn tx_issued(&mut self, t: TxId, r: ReqId, read: bool, now: Picoseconds, stall: Picoseconds) {
        if let Some(b) = self {
            b.tx_issued(t, r, read, now, stall);
        }
    }
    #[inline(always)]
    fn tx_ready(&mut self, t: TxId, now: Picoseconds) {
        if let Some(b) = self {
            b.tx_ready(t, now);
        }
    }
    #[inline(always)]
    fn die_began(&mut self, die: DieId, now: Picoseconds, backend: &crate::flash::Backend) {
        if let Some(b) = self {
            b.die_began(die, now, backend.last_op);
        }
    }
    #[inline(always)]
    fn die_xfer(&mut self, die: DieId, backend: &crate::flash::Backend) {
        if let Some(b) = self {
            b.die_xfer(die, backend.last_xfer);
        }
    }
    #[inline(always)]
    fn flash_done(&mut self, r: ReqId, now: Picoseconds) {
        if let Some(b) = self {
            b.flash_done(r, now);
        }
    }
    #[inline(always)]
    fn save_die(&mut self, die: DieId) {
        if let Some(b) = self {
            b.save_die(die);
        }
    }
    #[inline(always)]
    fn restore_die(&mut self, die: DieId, delay: Picoseconds) {
        if let Some(b) = self {
            b.restore_die(die, delay);
        }
    }
    #[inline(always)]
    fn after_mapping(&mut self, mapping: bool) {
        if let Some(b) = self {
            b.after_mapping(mapping);
        }
    }
    #[inline]
    fn host_done(&mut self, flow: usize, op: Op, ps: Picoseconds) {
        if let (Some(b), Some(w)) = (self, write_of(op)) {
            b.host_done(flow, w, ps);
        }
    }
    #[inline(always)]
    fn request_done(
        &mut self,
        r: ReqId,
        flow: usize,
        op: Op,
        lat: Picoseconds,
        failure: &mut Option<crate::Error>,
    ) -> Option<Parts> {
        let (p, err) = self.as_mut()?.completed(r, flow, write_of(op), lat);
        if let Some(e) = err {
            failure.get_or_insert(e);
        }
        Some(p)
    }
}

#[cfg(test)]
mod tests {
    use super::{CompleteSplit, Step, SubmitSplit, Tracker, RESPONSE_STEPS};
    use crate::flash::{OpSplit, XferSplit};
    use crate::ids::{DieId, ReqId, TxId};

    /// One read along its whole path: each step takes the time between its stamps, and the
    /// steps sum to the latency.
    #[test]
    fn a_read_on_its_critical_path_sums_to_its_latency() {
        let mut b = Tracker::new(1, 2);
        let (r, t, die) = (ReqId(3), TxId(7), DieId(1));
        // Arrived at 10, submitted at 40: doorbell 5 on the wire after 2 of stall.
        b.submitted(
            r,
            40,
            10,
            SubmitSplit {
                wire: 5,
                stall: 2,
                hba: 0,
            },
        );
        b.fetched(r, 60, 70, 1);
        b.phase(r, Step::Firmware, 100, 0);
        b.tx_issued(t, r, true, 100, 0);
        b.tx_ready(t, 104);
        let op = OpSplit {
            wait: 3,
            cmd: 2,
            data: 0,
            array: 50,
        };
        b.die_began(die, 110, op);
        b.die_xfer(die, XferSplit { wait: 1, data: 20 });
        b.handling(Some((t, b.die_split(die))));
        // The die's parts end at 110 + 3 + 2 + 50 + 1 + 20.
        b.flash_done(r, 186);
        b.handling(None);
        b.completing(
            r,
            216,
            CompleteSplit {
                data: 20,
                completion: 8,
                stall: 2,
                hba: 0,
            },
        );
        let (p, err) = b.completed(r, 0, Some(false), 216 - 10);
        assert!(err.is_none());
        assert_eq!(p[Step::HostQueue as usize], 30);
        assert_eq!(p[Step::Doorbell as usize], 5);
        assert_eq!(p[Step::SqWait as usize], 60 - 47);
        assert_eq!(p[Step::CommandFetch as usize], 70 - 60 - 1);
        assert_eq!(p[Step::Firmware as usize], 30);
        assert_eq!(p[Step::DataDma as usize], 4 + 20);
        assert_eq!(p[Step::DieQueue as usize], 6);
        assert_eq!(p[Step::ChannelWait as usize], 3 + 1);
        assert_eq!(p[Step::Array as usize], 50);
        assert_eq!(p[Step::OnfiTransfer as usize], 20);
        assert_eq!(p[Step::TStall as usize], 2 + 1 + 2);
        assert_eq!(p[..RESPONSE_STEPS].iter().sum::<u64>(), 206);
        assert_eq!(p[Step::Completion as usize], 8);
        assert_eq!(b.flow(0).read[Step::Array as usize].count, 1);
        assert_eq!(b.total().write[0].count, 0);
    }

    /// A request whose flash work ends with no transaction of its own being handled (a cache
    /// hit) spends that time in `cache`; steps that miss the latency are an error.
    #[test]
    fn without_its_transaction_the_time_goes_to_cache_and_a_mismatch_is_an_error() {
        let mut b = Tracker::new(1, 1);
        let r = ReqId(0);
        b.submitted(
            r,
            0,
            0,
            SubmitSplit {
                wire: 0,
                stall: 0,
                hba: 0,
            },
        );
        b.phase(r, Step::Firmware, 10, 0);
        b.tx_issued(TxId(0), ReqId(1), true, 10, 0);
        b.handling(Some((TxId(0), b.die_split(DieId(0)))));
        b.flash_done(r, 25);
        b.completing(
            r,
            30,
            CompleteSplit {
                data: 0,
                completion: 5,
                stall: 0,
                hba: 0,
            },
        );
        let (p, err) = b.completed(r, 0, Some(true), 30);
        assert!(err.is_none());
        assert_eq!(p[Step::Cache as usize], 15);
        let (_, err) = b.completed(r, 0, None, 31);
        assert!(err.is_some_and(|e| e.to_string().contains("sums to 30 ps")));
        assert_eq!(
            b.flow(0).write[0].count,
            1,
            "TRIMs and flushes are not recorded"
        );
    }

    /// A resumed operation takes its suspension's delay in its array phase; transactions
    /// released by a translation page take their wait as mapping.
    #[test]
    fn suspension_delay_goes_to_the_array_and_mapping_waits_to_mapping() {
        let mut b = Tracker::new(1, 1);
        let (r, t, die) = (ReqId(0), TxId(0), DieId(0));
        b.submitted(
            r,
            0,
            0,
            SubmitSplit {
                wire: 0,
                stall: 0,
                hba: 0,
            },
        );
        b.after_mapping(true);
        b.tx_issued(t, r, false, 40, 0);
        b.after_mapping(false);
        let op = OpSplit {
            array: 100,
            ..OpSplit::default()
        };
        b.die_began(die, 40, op);
        b.save_die(die);
        b.die_began(die, 60, OpSplit::default());
        b.restore_die(die, 30);
        b.handling(Some((t, b.die_split(die))));
        b.flash_done(r, 170);
        let (p, _) = b.completed(r, 0, Some(true), 170);
        assert_eq!(p[Step::Mapping as usize], 40);
        assert_eq!(p[Step::Array as usize], 130);
        assert_eq!(p[Step::Cache as usize], 0);
    }
}
