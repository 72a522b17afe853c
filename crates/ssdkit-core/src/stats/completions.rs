//! Per-flow completion accounting of a run: each flow's latency statistics, its completed
//! requests and the time of its last completion (the end of its active interval), the
//! device's last completion, the submission order that names requests in the log, and the
//! request log itself when a run keeps one.

use super::run_hooks::CompletionRecord;
use super::RwStats;
use crate::engine::Picoseconds;
use crate::workload::Op;

pub(crate) struct Completions {
    stats: Vec<RwStats>,
    completed: Vec<u64>,
    /// Per flow: time of its last completion.
    flow_last: Vec<Picoseconds>,
    last: Picoseconds,
    /// Requests submitted so far: each request's id in the log.
    submitted: u64,
    log: Option<Vec<CompletionRecord>>,
}

impl Completions {
    pub fn new(flows: usize) -> Self {
        Self {
            stats: vec![RwStats::default(); flows],
            completed: vec![0; flows],
            flow_last: vec![0; flows],
            last: 0,
            submitted: 0,
            log: None,
        }
    }

    /// The id of the request submitted now (submission order).
    #[inline]
    pub fn next_id(&mut self) -> u64 {
        let id = self.submitted;
        self.submitted += 1;
        id
    }

    /// A request of `flow` completed at `now` after `lat`.
    #[inline]
    pub fn record(&mut self, flow: usize, op: Op, lat: Picoseconds, bytes: u64, now: Picoseconds) {
        self.stats[flow].record(op, lat, bytes);
        self.completed[flow] += 1;
        self.last = now;
        self.flow_last[flow] = now;
    }

    /// A request of `flow` completed at `now` after `lat`: recorded, and kept in the log (its
    /// record made by `entry`) when a log is kept.
    #[inline]
    pub fn complete(
        &mut self,
        (flow, op): (usize, Op),
        lat: Picoseconds,
        bytes: u64,
        now: Picoseconds,
        entry: impl FnOnce() -> CompletionRecord,
    ) {
        self.record(flow, op, lat, bytes, now);
        if let Some(log) = self.log.as_mut() {
            log.push(entry());
        }
    }

    /// Keeps each completion from now on.
    pub fn keep_log(&mut self) {
        self.log = Some(Vec::new());
    }

    /// The records kept and not handed out yet.
    pub fn kept(&self) -> &[CompletionRecord] {
        self.log.as_deref().unwrap_or_default()
    }

    /// Forgets the records handed out (the log stays on).
    pub fn clear_kept(&mut self) {
        if let Some(l) = self.log.as_mut() {
            l.clear();
        }
    }

    /// The log, which stops keeping records.
    pub fn take_log(&mut self) -> Option<Vec<CompletionRecord>> {
        self.log.take()
    }

    /// Moves the records kept since the last call to `out`, in completion order.
    pub fn drain_log(&mut self, out: &mut Vec<CompletionRecord>) {
        out.append(self.log.as_mut().expect("the log is kept"));
    }

    pub fn stats(&self, flow: usize) -> &RwStats {
        &self.stats[flow]
    }

    pub fn flows(&self) -> usize {
        self.stats.len()
    }

    pub fn completed(&self, flow: usize) -> u64 {
        self.completed[flow]
    }

    pub fn total(&self) -> u64 {
        self.completed.iter().sum()
    }

    pub fn last(&self) -> Picoseconds {
        self.last
    }

    pub fn flow_last(&self, flow: usize) -> Picoseconds {
        self.flow_last[flow]
    }
}

/// How far a run is at `now`: the least advanced flow (the run ends with the last one), or
/// the fraction of the time cap `cap` (or of the steady-state rounds' longest run,
/// `rounds_ps`) if that is further. None when neither is known.
pub(crate) fn progress(
    flows: &[crate::workload::flow::Flow],
    done: &Completions,
    now: Picoseconds,
    cap: Picoseconds,
    rounds_ps: Option<Picoseconds>,
) -> Option<f64> {
    let mut least: Option<f64> = Some(1.0);
    for (i, f) in flows.iter().enumerate() {
        least = match (least, f.progress(now, done.completed(i))) {
            (Some(a), Some(b)) => Some(a.min(b)),
            _ => None,
        };
    }
    let by_cap = (cap != Picoseconds::MAX).then(|| now as f64 / cap.max(1) as f64);
    let by_cap = match (by_cap, rounds_ps) {
        (a, Some(r)) => Some(a.unwrap_or(0.0).max(now as f64 / r.max(1) as f64)),
        (a, None) => a,
    };
    match (least, by_cap) {
        (Some(a), Some(b)) => Some(a.max(b)),
        (a, b) => a.or(b),
    }
}

/// Per-flow GC accounting (runs of 2 to 255 flows): which flow last wrote each logical page,
/// one byte per page (flow index + 1; 0: preconditioning, or no flow), and the GC page moves
/// charged to each flow. Zero means no flow so that the table is allocated zeroed: the system
/// gives it memory only where flows write.
pub(crate) struct GcOwners {
    by_lpn: Vec<u8>,
    moves: Vec<u64>,
}

impl GcOwners {
    /// Per-flow accounting for `flows` flows over `logical_pages` pages, when the flows fit
    /// a byte each (2 to 255).
    pub fn for_flows(flows: usize, logical_pages: u64) -> Option<Box<Self>> {
        (2..=255).contains(&flows).then(|| {
            Box::new(Self {
                by_lpn: vec![0; logical_pages as usize],
                moves: vec![0; flows],
            })
        })
    }

    /// `flow` wrote `lpn`: it owns the data now.
    #[inline]
    pub fn wrote(&mut self, lpn: crate::ids::Lpn, flow: u32) {
        if let Some(slot) = self.by_lpn.get_mut(lpn.0 as usize) {
            *slot = flow as u8 + 1;
        }
    }

    /// GC moved `lpn`: the move is charged to the flow that owns it, if any.
    #[inline]
    pub fn moved(&mut self, lpn: crate::ids::Lpn) {
        let w = self.by_lpn.get(lpn.0 as usize).copied().unwrap_or(0);
        if w != 0 {
            self.moves[w as usize - 1] += 1;
        }
    }

    pub fn moves(&self, flow: usize) -> u64 {
        self.moves[flow]
    }
}
