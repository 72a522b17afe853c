//! The latency breakdown's hooks (`run.latency_breakdown`) along the request path: each passes
//! the times the simulator has to `stats::breakdown::Tracker`, which does the accounting. With
//! the breakdown off, a hook is one inlined test.

use super::Simulator;
use crate::engine::Picoseconds;
use crate::ids::{DieId, ReqId, TxId};
use crate::stats::breakdown::{Parts, Step};

impl Simulator {
    /// The host submitted `r` now, which arrived at `arrived`.
    #[inline(always)]
    pub(super) fn bd_submitted(&mut self, r: ReqId, arrived: Picoseconds) {
        if let Some(b) = self.bd.as_mut() {
            let s = self.host.last_submit();
            b.submitted(r, self.q.now(), arrived, s.wire, s.stall, s.hba);
        }
    }

    /// The fetch unit took `r` now; its command is in the device at `t`, `stall` of which
    /// waited for the link.
    #[inline(always)]
    pub(super) fn bd_fetched(&mut self, r: ReqId, t: Picoseconds, stall: Picoseconds) {
        if let Some(b) = self.bd.as_mut() {
            b.fetched(r, self.q.now(), t, stall);
        }
    }

    /// A phase of `r` on its own path ended at `t` (write data, firmware).
    #[inline(always)]
    pub(super) fn bd_phase(&mut self, r: ReqId, step: Step, t: Picoseconds, stall: Picoseconds) {
        if let Some(b) = self.bd.as_mut() {
            b.phase(r, step, t, stall);
        }
    }

    /// A user transaction of `r` was created now (`stall`: its write data's wait for the
    /// link).
    #[inline(always)]
    pub(super) fn bd_tx_issued(&mut self, t: TxId, r: ReqId, read: bool, stall: Picoseconds) {
        if let Some(b) = self.bd.as_mut() {
            b.tx_issued(t, r, read, self.q.now(), stall);
        }
    }

    /// Transaction `t` joined its die's queue now.
    #[inline(always)]
    pub(super) fn bd_tx_ready(&mut self, t: TxId) {
        if let Some(b) = self.bd.as_mut() {
            b.tx_ready(t, self.q.now());
        }
    }

    /// The die started an operation now; the back end has its parts.
    #[inline(always)]
    pub(super) fn bd_die_began(&mut self, die: DieId) {
        if let Some(b) = self.bd.as_mut() {
            b.die_began(die, self.q.now(), self.backend.last_op);
        }
    }

    /// The die's read data started out of its registers; the back end has the parts.
    #[inline(always)]
    pub(super) fn bd_die_xfer(&mut self, die: DieId) {
        if let Some(b) = self.bd.as_mut() {
            b.die_xfer(die, self.backend.last_xfer);
        }
    }

    /// The flash work of `r` is done now.
    #[inline(always)]
    pub(super) fn bd_flash_done(&mut self, r: ReqId) {
        if let Some(b) = self.bd.as_mut() {
            b.flash_done(r, self.q.now());
        }
    }

    /// The completion of `r` is on its way; the host has the parts, ending at `t`.
    #[inline(always)]
    pub(super) fn bd_completing(&mut self, r: ReqId, t: Picoseconds) {
        if let Some(b) = self.bd.as_mut() {
            let c = self.host.last_complete();
            b.completing(r, t, c.data, c.completion, c.stall, c.hba);
        }
    }

    /// `r` completed with latency `lat`: its steps for the request log. Steps that do not
    /// sum to the latency stop the run.
    pub(super) fn bd_completed(
        &mut self,
        r: ReqId,
        flow: usize,
        write: Option<bool>,
        lat: Picoseconds,
    ) -> Option<Parts> {
        let (p, err) = self.bd.as_mut()?.completed(r, flow, write, lat);
        if let Some(e) = err {
            self.failure.get_or_insert(e);
        }
        Some(p)
    }

    /// The host finished processing a completion of `flow` that reached its completion
    /// queue at `cq_ps`.
    #[inline]
    pub(super) fn bd_host_done(&mut self, flow: usize, write: Option<bool>, cq_ps: Picoseconds) {
        if let (Some(b), Some(w)) = (self.bd.as_mut(), write) {
            b.host_done(flow, w, self.q.now() - cq_ps);
        }
    }
}
