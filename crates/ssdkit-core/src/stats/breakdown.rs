//! The latency breakdown (`run.latency_breakdown`): where each request's time went, one
//! step at a time along its path, after NVMeSim's Figure 2 (the NVMe handshake and T_stall)
//! and the MQSim paper's Figure 4 (the end-to-end request path). The sim module stamps the
//! steps (`sim::breakdown`); this one names them and keeps their statistics.

use super::OpStats;
use crate::engine::Picoseconds;
use crate::result::{BreakdownResult, LatencySummary, StepSummaries};

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
