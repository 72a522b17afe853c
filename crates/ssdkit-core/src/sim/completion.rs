//! Wiring of the host's side of a completion (`host.completion`, `host::completion`): the
//! events the host model asks for, reported back to it, and the application's next request.

use super::{Ev, Simulator};
use crate::engine::Picoseconds;
use crate::host::completion::Wake;
use crate::host::interrupts::Pending;
use crate::ids::FlowId;
use crate::stats::breakdown::Hooks;

impl Simulator {
    /// What the host model asked for, as an event.
    fn wake_host(&mut self, w: Option<(Picoseconds, Wake)>) {
        if let Some((t, w)) = w {
            let ev = match w {
                Wake::Msi(b) => Ev::MsiArrived(b),
                Wake::Timer(v) => Ev::CoalesceTimer(v),
                Wake::Done(b) => Ev::HostDone(b),
            };
            self.at(t, ev);
        }
    }

    /// The completion entry of a request is in the host's queue: hand it to the host model.
    pub(super) fn host_completion(&mut self, p: Pending) {
        let now = self.q.now();
        let h = self.host_side.as_mut().expect("host model");
        let w = h.cq_inserted(&mut self.host, now, p);
        self.wake_host(w);
    }

    /// A wake-up the host model asked for happened.
    pub(super) fn host_woken(&mut self, w: Wake) {
        let now = self.q.now();
        let h = self.host_side.as_mut().expect("host model");
        let next = h.woken(&mut self.host, now, w);
        self.wake_host(next);
    }

    /// The host finished processing batch `b`: each request is seen by its application (one
    /// at a time: a closed-loop flow submits again before the next is seen).
    pub(super) fn host_done(&mut self, b: u32) {
        let now = self.q.now();
        let h = self.host_side.as_mut().expect("host model");
        for p in h.done(&mut self.host, now, b) {
            self.host_side
                .as_mut()
                .expect("host model")
                .seen(&self.host, now, &p);
            self.bd.host_done(p.flow.idx(), p.op, now - p.cq_ps);
            self.app_sees(p.flow);
        }
        if self.outstanding() == 0 {
            self.maybe_last_completion(now);
        }
    }

    /// The application of `flow` has its completion: a closed-loop flow submits again.
    pub(super) fn app_sees(&mut self, flow: FlowId) {
        self.flows[flow.idx()].seen();
        self.pump(flow);
    }
}
