//! The run loop: the primitives every driver is made of (`start`, `run_until`, `run_through`;
//! the batch run is in `api::batch`, the step-by-step device in `device`). A watchdog turns a run that keeps processing events without finishing any user
//! work into an error naming the state, rather than a hang.

use super::Simulator;
use crate::engine::Picoseconds;
use crate::error::Error;
use crate::ids::FlowId;

/// Events in a row without a finished user transaction or request, with requests
/// outstanding, after which the run is declared livelocked. Collecting one victim takes a
/// few events per valid page, and other dies' user work resets the count, so a healthy
/// device never comes near it.
pub const WATCHDOG_EVENTS: u64 = 50_000_000;

impl Simulator {
    /// Lets every flow submit what it may at time zero (the batch run does this first).
    pub fn start(&mut self) {
        for f in 0..self.flows.len() {
            self.pump(FlowId(f as u32));
        }
    }

    /// Processes every event up to and including time `t`, then moves the clock to `t`.
    pub fn run_until(&mut self, t: Picoseconds) -> Result<(), Error> {
        if t < self.q.now() {
            return Err(Error::Simulation(format!(
                "run_until({t} ps) is before the current time {} ps",
                self.q.now()
            )));
        }
        self.run_through(t, |_| Ok(()))?;
        self.q.advance_to(t);
        Ok(())
    }

    /// Processes every event due at or before `limit`, calling `tick` every 65,536 events.
    /// The loop every run and step-by-step driver spends its time in: one pop and one check
    /// per event; the watchdog and `tick` only on the 65,536th.
    #[inline]
    pub(crate) fn run_through(
        &mut self,
        limit: Picoseconds,
        mut tick: impl FnMut(&mut Self) -> Result<(), Error>,
    ) -> Result<(), Error> {
        while let Some((t, ev)) = self.q.pop_through(limit) {
            if t >= self.marks.next {
                self.cross_marks(t);
            }
            self.handle(ev);
            if self.failure.is_some() || self.marks.halt || self.q.processed() & 0xFFFF == 0 {
                self.after_event()?;
                tick(self)?;
                if self.marks.halt {
                    break;
                }
            }
        }
        Ok(())
    }

    /// The first error of the model or a request source, or a livelock: the watchdog counts
    /// events since a user transaction or request last finished. (The batch loop looks every
    /// 65,536 events, so it trips within that many events past the limit.)
    #[cold]
    fn after_event(&mut self) -> Result<(), Error> {
        if let Some(e) = self.failure.take() {
            return Err(e);
        }
        let idle_events = self.q.processed() - self.progress_at;
        if let Some(a) = &self.marks.at_last {
            // After the workload: the GC and mapping work owed must end. Work that feeds
            // itself (each collection writing back more translation pages than it frees, on
            // a device with very small blocks and translation pages) would not.
            let since = self.q.processed() - a.events;
            if since > WATCHDOG_EVENTS {
                return Err(Error::Simulation(format!(
                    "the device did not go idle: {since} events of GC and mapping write-backs after the last request completed, at simulated time {} ps (the work feeds itself: give blocks more pages or translation pages more entries); {}",
                    self.q.now(),
                    self.stall_report()
                )));
            }
        }
        if idle_events > WATCHDOG_EVENTS && self.outstanding() > 0 {
            return Err(Error::Simulation(format!(
                "no progress: {idle_events} events at simulated time {} ps without a finished user transaction while {} requests are outstanding (livelock); {}",
                self.q.now(),
                self.outstanding(),
                self.stall_report()
            )));
        }
        Ok(())
    }

    /// Current simulated time.
    pub fn now(&self) -> Picoseconds {
        self.q.now()
    }
}
