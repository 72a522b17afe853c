//! The host's side of a completion (`host.completion`): after the completion entry is in
//! its queue (where response time ends), an MSI and the ISR, or a poll, on a host core; then
//! the completion-queue head doorbell, and the application sees the request: its latency to
//! that point goes to `app_stats`, and a closed-loop flow submits its next request.

use super::{Ev, Simulator};
use crate::engine::Picoseconds;
use crate::host::interrupts::{Action, HostCpu, Pending};
use crate::ids::FlowId;
use crate::result::HostResult;
use crate::stats::RwStats;
use crate::workload::Op;

/// Host-side state of a run with a host model.
pub(crate) struct HostSide {
    pub cpu: HostCpu,
    pub app_stats: Vec<RwStats>,
    pub flow_last_seen: Vec<Picoseconds>,
    /// Data buffers (and PRP lists or SGL segments) of requests submitted and not processed by
    /// the host: now, and the most.
    pub buffers: u64,
    pub buffers_peak: u64,
    queue_bytes: u64,
}

impl HostSide {
    pub fn new(c: &crate::config::Config) -> Self {
        let n = c.flows.len();
        let entries = c.interface.io_queue_depth as u64;
        Self {
            cpu: HostCpu::new(c),
            app_stats: vec![RwStats::default(); n],
            flow_last_seen: vec![0; n],
            buffers: 0,
            buffers_peak: 0,
            queue_bytes: n as u64 * entries * (64 + 16),
        }
    }

    pub fn result(&self) -> HostResult {
        self.cpu.result(self.queue_bytes + self.buffers_peak)
    }
}

impl Simulator {
    /// A request was submitted: its data buffer is held until the host has processed it.
    #[inline]
    pub(super) fn host_buffer_held(&mut self, bytes: u64) {
        if let Some(h) = self.host_side.as_mut() {
            h.buffers += bytes;
            h.buffers_peak = h.buffers_peak.max(h.buffers);
        }
    }

    /// The completion entry of a request of `flow` is in the host's queue: hand it to the
    /// host model.
    pub(super) fn host_completion(&mut self, p: Pending) {
        let now = self.q.now();
        let queue = self.host.queue_of(p.flow);
        let h = self.host_side.as_mut().expect("host model");
        match h.cpu.cq_inserted(now, queue, p) {
            Action::Wait => {}
            Action::Fire(v) => self.send_msi(v),
            Action::Timer(v, t) => self.at(t, Ev::CoalesceTimer(v)),
            Action::DoneAt(b, t) => self.at(t, Ev::HostDone(b)),
        }
    }

    fn send_msi(&mut self, v: u32) {
        let b = self.host_side.as_mut().expect("host model").cpu.fire(v);
        let t = self.host.msi(self.q.now());
        self.at(t, Ev::MsiArrived(b));
    }

    pub(super) fn coalesce_timer(&mut self, v: u32) {
        let now = self.q.now();
        let h = self.host_side.as_mut().expect("host model");
        if let Some(b) = h.cpu.timer(v, now) {
            let t = self.host.msi(now);
            self.at(t, Ev::MsiArrived(b));
        }
    }

    pub(super) fn msi_arrived(&mut self, b: u32) {
        let now = self.q.now();
        let end = self
            .host_side
            .as_mut()
            .expect("host model")
            .cpu
            .msi_arrived(now, b);
        self.at(end, Ev::HostDone(b));
    }

    /// The host finished processing batch `b`: one head doorbell per completion queue it
    /// served, then each request is seen by its application.
    pub(super) fn host_done(&mut self, b: u32) {
        let now = self.q.now();
        let items = self.host_side.as_mut().expect("host model").cpu.take(b);
        let mut queues: Vec<usize> = items.iter().map(|p| self.host.queue_of(p.flow)).collect();
        queues.sort_unstable();
        queues.dedup();
        for _ in &queues {
            self.host.cq_doorbell(now);
            self.host_side
                .as_mut()
                .expect("host model")
                .cpu
                .count_doorbell();
        }
        for p in items {
            let h = self.host_side.as_mut().expect("host model");
            let s = &mut h.app_stats[p.flow.idx()];
            let lat = now - p.submit_ps;
            match p.op {
                Op::Read => s.read.record(lat, p.bytes),
                Op::Write => s.write.record(lat, p.bytes),
                Op::Trim => s.trim.record(lat, p.bytes),
                Op::Flush => s.flush.record(lat, p.bytes),
            }
            h.flow_last_seen[p.flow.idx()] = now;
            let write = match p.op {
                Op::Read => Some(false),
                Op::Write => Some(true),
                _ => None,
            };
            self.bd_host_done(p.flow.idx(), write, p.cq_ps);
            let list = self.host.pointer_list_memory(p.op, p.bytes);
            let h = self.host_side.as_mut().expect("host model");
            h.buffers -= p.bytes + list;
            self.app_sees(p.flow);
        }
        if self.host.outstanding() == 0
            && self
                .host_side
                .as_ref()
                .is_some_and(|h| h.cpu.in_host() == 0)
        {
            self.maybe_last_completion(now);
        }
    }

    /// The application of `flow` has its completion: a closed-loop flow submits again.
    pub(super) fn app_sees(&mut self, flow: FlowId) {
        self.flows[flow.idx()].outstanding -= 1;
        self.pump(flow);
    }
}
