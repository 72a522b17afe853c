//! The host's side of a completion (`host.completion`): after the completion entry is in its
//! queue (where response time ends), an MSI and the ISR, or a poll, on a host core (`HostCpu`);
//! then the completion-queue head doorbell, and the application sees the request: its latency
//! to that point goes to the application's statistics. The host also holds each request's
//! data buffer from submission to the end of its processing.
//!
//! The simulator only turns the `Wake`s returned here into events and reports them back.

use super::interrupts::{Action, HostCpu, Pending};
use super::Host;
use crate::engine::Picoseconds;
use crate::result::HostResult;
use crate::settings::CompletionSettings;
use crate::stats::RwStats;
use crate::workload::Op;

/// An event the host model needs, with the id it gives back when it happens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wake {
    /// The MSI of batch `b` reaches the host (`HostSide::msi_arrived`).
    Msi(u32),
    /// Vector `v`'s aggregation time is up (`HostSide::timer`).
    Timer(u32),
    /// The host has processed batch `b` (`HostSide::done`).
    Done(u32),
}

/// Host-side state of a run with a host model.
pub struct HostSide {
    cpu: HostCpu,
    app_stats: Vec<RwStats>,
    flow_last_seen: Vec<Picoseconds>,
    /// Data buffers (and PRP lists or SGL segments) of requests submitted and not processed by
    /// the host: now, and the most.
    buffers: u64,
    buffers_peak: u64,
    queue_bytes: u64,
    /// Reused: the completion queues a batch served.
    queues: Vec<usize>,
}

impl HostSide {
    pub fn new(h: &CompletionSettings) -> Self {
        let n = h.queues;
        let entries = h.queue_entries;
        Self {
            cpu: HostCpu::new(h),
            app_stats: vec![RwStats::default(); n],
            flow_last_seen: vec![0; n],
            buffers: 0,
            buffers_peak: 0,
            queue_bytes: n as u64 * entries * (64 + 16),
            queues: Vec::new(),
        }
    }

    pub fn result(&self) -> HostResult {
        self.cpu.result(self.queue_bytes + self.buffers_peak)
    }

    /// Completions the host has not finished processing.
    #[inline]
    pub fn in_host(&self) -> usize {
        self.cpu.in_host()
    }

    /// The statistics of flow `i`'s requests as its application saw them.
    pub fn app_stats(&self, i: usize) -> &RwStats {
        &self.app_stats[i]
    }

    /// The statistics of every flow's requests together, as the applications saw them.
    pub fn app_total(&self) -> RwStats {
        let mut all = RwStats::default();
        for s in &self.app_stats {
            all.merge(s);
        }
        all
    }

    /// When flow `i`'s application last saw a completion.
    pub fn flow_last_seen(&self, i: usize) -> Picoseconds {
        self.flow_last_seen[i]
    }

    /// Request `r` of `host` was submitted (`submitted`).
    #[inline]
    pub fn request_submitted(&mut self, host: &Host, r: crate::ids::ReqId) {
        let req = host.request(r);
        self.submitted(host, req.op, req.bytes(host.sector_bytes()));
    }

    /// A request of `op` over `bytes` was submitted: its data buffer (and pointer list) is
    /// held until the host has processed its completion.
    #[inline]
    pub fn submitted(&mut self, host: &Host, op: Op, bytes: u64) {
        self.buffers += bytes + host.pointer_list_memory(op, bytes);
        self.buffers_peak = self.buffers_peak.max(self.buffers);
    }

    /// The completion entry of `p` is in the host's completion queue at `now`: what the host
    /// needs next, if anything (the MSI goes on `host`'s link now).
    pub fn cq_inserted(
        &mut self,
        host: &mut Host,
        now: Picoseconds,
        p: Pending,
    ) -> Option<(Picoseconds, Wake)> {
        let queue = host.queue_of(p.flow);
        match self.cpu.cq_inserted(now, queue, p) {
            Action::Wait => None,
            Action::Fire(v) => {
                let b = self.cpu.fire(v);
                Some((host.msi(now), Wake::Msi(b)))
            }
            Action::Timer(v, t) => Some((t, Wake::Timer(v))),
            Action::DoneAt(b, t) => Some((t, Wake::Done(b))),
        }
    }

    /// Wake-up `w` (an MSI's arrival, a coalescing timer) happened at `now`: what the host
    /// needs next, if anything. `Done` is `done`'s, which returns the completions.
    pub fn woken(
        &mut self,
        host: &mut Host,
        now: Picoseconds,
        w: Wake,
    ) -> Option<(Picoseconds, Wake)> {
        match w {
            Wake::Msi(b) => Some(self.msi_arrived(now, b)),
            Wake::Timer(v) => self.timer(host, now, v),
            Wake::Done(_) => unreachable!("a batch's end is `done`'s"),
        }
    }

    /// Vector `v`'s aggregation timer went off at `now`: the MSI of its pending completions,
    /// or nothing when they went with an interrupt already.
    pub fn timer(
        &mut self,
        host: &mut Host,
        now: Picoseconds,
        v: u32,
    ) -> Option<(Picoseconds, Wake)> {
        let b = self.cpu.timer(v, now)?;
        Some((host.msi(now), Wake::Msi(b)))
    }

    /// The MSI of batch `b` reached the host at `now`: when the ISR and DPC have processed it.
    pub fn msi_arrived(&mut self, now: Picoseconds, b: u32) -> (Picoseconds, Wake) {
        (self.cpu.msi_arrived(now, b), Wake::Done(b))
    }

    /// The host finished processing batch `b` at `now`: one head doorbell per completion
    /// queue it served goes on `host`'s link; returns the completions, each for `seen`.
    pub fn done(&mut self, host: &mut Host, now: Picoseconds, b: u32) -> Vec<Pending> {
        let items = self.cpu.take(b);
        self.queues.clear();
        self.queues
            .extend(items.iter().map(|p| host.queue_of(p.flow)));
        self.queues.sort_unstable();
        self.queues.dedup();
        for _ in &self.queues {
            host.cq_doorbell(now);
            self.cpu.count_doorbell();
        }
        items
    }

    /// The application of `p`'s flow sees it at `now`: its latency is recorded and its data
    /// buffer freed.
    pub fn seen(&mut self, host: &Host, now: Picoseconds, p: &Pending) {
        self.app_stats[p.flow.idx()].record(p.op, now - p.submit_ps, p.bytes);
        self.flow_last_seen[p.flow.idx()] = now;
        self.buffers -= p.bytes + host.pointer_list_memory(p.op, p.bytes);
    }
}

#[cfg(test)]
mod tests {
    use super::{HostSide, Wake};
    use crate::config::Config;
    use crate::engine::us_to_ps;
    use crate::host::interrupts::Pending;
    use crate::host::Host;
    use crate::ids::FlowId;
    use crate::settings::Settings;
    use crate::workload::Op;

    fn setup(keys: &[&str]) -> (Config, Host, HostSide) {
        let o: Vec<String> = keys.iter().map(|s| s.to_string()).collect();
        let c = Config::load_preset("mqsim-paper", &o).unwrap();
        let s = Settings::resolve(&c);
        let host = Host::new(&s);
        let side = HostSide::new(&s.host.completion);
        (c, host, side)
    }

    fn pending(flow: u32, cq_ps: u64) -> Pending {
        Pending {
            flow: FlowId(flow),
            op: Op::Read,
            submit_ps: 0,
            cq_ps,
            bytes: 4096,
        }
    }

    /// Interrupt Coalescing of two completions: the first sets the vector's timer, the second
    /// fires the MSI (which crosses the link, so arrives later than now); the timer then finds
    /// nothing to signal; the ISR and DPC end after the ISR, one queue scan and two
    /// completions; the batch rings one head doorbell for its one queue.
    #[test]
    fn coalesced_completions_wake_the_host_once() {
        let (c, mut host, mut side) = setup(&[
            "host.completion=\"interrupt\"",
            "host.coalesce_completions=2",
            "host.coalesce_time_us=10",
        ]);
        let t0 = us_to_ps(5.0);
        let due = t0 + us_to_ps(10.0);
        assert_eq!(
            side.cq_inserted(&mut host, t0, pending(0, t0)),
            Some((due, Wake::Timer(0)))
        );
        let t1 = us_to_ps(6.0);
        let Some((arrives, Wake::Msi(b))) = side.cq_inserted(&mut host, t1, pending(0, t1)) else {
            panic!("the second completion fires the MSI");
        };
        assert!(arrives > t1, "the MSI crosses the link");
        assert_eq!(side.in_host(), 2);
        assert_eq!(side.timer(&mut host, due, 0), None, "signalled already");
        let h = &c.host;
        let isr = us_to_ps(h.isr_us) + us_to_ps(h.queue_scan_us) + 2 * us_to_ps(h.completion_us);
        assert_eq!(side.msi_arrived(arrives, b), (arrives + isr, Wake::Done(b)));
        let items = side.done(&mut host, arrives + isr, b);
        assert_eq!(items.len(), 2);
        assert_eq!(side.in_host(), 0);
        let r = side.result();
        assert_eq!((r.interrupts, r.timer_interrupts), (1, 0));
        assert_eq!(r.cq_doorbells, 1);
        assert_eq!(r.largest_batch, 2);
    }

    /// A lone completion under coalescing goes when its vector's timer is due, not before.
    #[test]
    fn a_lone_completion_goes_with_the_timer() {
        let (_, mut host, mut side) = setup(&[
            "host.completion=\"interrupt\"",
            "host.coalesce_completions=4",
            "host.coalesce_time_us=10",
        ]);
        let due = us_to_ps(10.0);
        assert_eq!(
            side.cq_inserted(&mut host, 0, pending(0, 0)),
            Some((due, Wake::Timer(0)))
        );
        assert_eq!(side.timer(&mut host, due - 1, 0), None, "not the timer set");
        let Some((arrives, Wake::Msi(_))) = side.timer(&mut host, due, 0) else {
            panic!("the timer signals the lone completion");
        };
        assert!(arrives > due);
        assert_eq!(side.result().timer_interrupts, 1);
    }

    /// Polling: each completion is processed on its queue's core after the poll and the
    /// completion work, one after the other on a shared core; completions of two queues on
    /// one batch each ring their own doorbell.
    #[test]
    fn polled_completions_queue_on_their_core() {
        let (c, mut host, mut side) = setup(&["host.completion=\"polled\"", "host.cores=1"]);
        let each = us_to_ps(c.host.poll_us) + us_to_ps(c.host.completion_us);
        let Some((t, Wake::Done(b0))) = side.cq_inserted(&mut host, 0, pending(0, 0)) else {
            panic!("a poll");
        };
        assert_eq!(t, each);
        let Some((t, Wake::Done(_))) = side.cq_inserted(&mut host, 0, pending(0, 0)) else {
            panic!("a poll");
        };
        assert_eq!(t, 2 * each, "behind the first poll on the one core");
        assert_eq!(side.done(&mut host, each, b0).len(), 1);
        assert_eq!(side.result().cq_doorbells, 1);
    }

    /// Data buffers are held from submission to the application's sight of the completion;
    /// the host memory reported is the queues' plus the most buffers held at once.
    #[test]
    fn buffers_are_held_until_the_application_sees_the_request() {
        let (c, mut host, mut side) = setup(&["host.completion=\"polled\""]);
        let queues = c.flows.len() as u64 * c.interface.io_queue_depth as u64 * (64 + 16);
        side.submitted(&host, Op::Read, 4096);
        side.submitted(&host, Op::Read, 4096);
        let p = pending(0, 0);
        let Some((t, Wake::Done(b))) = side.cq_inserted(&mut host, 0, p) else {
            panic!("a poll");
        };
        for p in side.done(&mut host, t, b) {
            side.seen(&host, t, &p);
        }
        side.submitted(&host, Op::Read, 4096);
        assert_eq!(side.result().host_memory_bytes, queues + 2 * 4096);
        assert_eq!(side.app_stats(0).read.count, 1);
        assert_eq!(side.flow_last_seen(0), t);
    }
}
