//! The latency breakdown's hooks that need the host's parts or stop the run; the others are
//! `stats::breakdown::Hooks`, called on the tracker directly. With the breakdown off, a hook
//! is one inlined test.

use super::Simulator;
use crate::engine::Picoseconds;
use crate::ids::ReqId;
use crate::stats::breakdown::Parts;

impl Simulator {
    /// The host submitted `r` now, which arrived at `arrived`.
    #[inline(always)]
    pub(super) fn bd_submitted(&mut self, r: ReqId, arrived: Picoseconds) {
        if let Some(b) = self.bd.as_mut() {
            let s = self.host.last_submit();
            b.submitted(r, self.q.now(), arrived, s.wire, s.stall, s.hba);
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
}
