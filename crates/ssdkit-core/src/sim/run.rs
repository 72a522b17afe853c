//! Driving the simulator: the batch run to the end of the workload, and the stepping
//! primitives (`step`, `run_until`, `is_idle`) that a step-by-step host drives. A watchdog
//! turns a run that keeps processing events without finishing any user work into an error
//! naming the state, rather than a hang.

use super::Simulator;
use crate::config::Config;
use crate::engine::Picoseconds;
use crate::error::Error;
use crate::ids::FlowId;
use crate::stats::run_hooks::{
    Bar, CompletionRecord, LogMode, Progress, RunHooks, RunOutput, REPORT_EVERY,
};
use std::time::Instant;

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

    /// Processes the next event, if any; returns its time. Errors of the model or of a flow's
    /// request source (and a livelock) end the run with an error.
    pub fn step(&mut self) -> Result<Option<Picoseconds>, Error> {
        let Some((t, ev)) = self.q.pop() else {
            return Ok(None);
        };
        if t >= self.marks.next {
            self.cross_marks(t);
        }
        self.handle(ev);
        self.after_event()?;
        Ok(Some(t))
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

    /// No event pending and no request inside the device.
    pub fn is_idle(&mut self) -> bool {
        self.q.peek_time().is_none() && self.outstanding() == 0
    }

    /// Current simulated time.
    pub fn now(&self) -> Picoseconds {
        self.q.now()
    }

    // ----- a host program's queues (`Device`) -----

    /// Keeps each completion for `drain_completions`.
    pub(crate) fn keep_completions(&mut self) {
        self.done.keep_log();
    }

    /// Queue pairs: the configured flows.
    pub(crate) fn queues(&self) -> u32 {
        self.flows.len() as u32
    }

    /// Requests completed so far (their completion entries posted).
    pub(crate) fn completed_total(&self) -> u64 {
        self.done.total()
    }

    /// Processes every event strictly before `t`, then moves the clock to `t`.
    pub(crate) fn advance_before(&mut self, t: Picoseconds) -> Result<(), Error> {
        if t > 0 {
            self.run_through(t - 1, |_| Ok(()))?;
        }
        self.q.advance_to(t);
        Ok(())
    }

    /// A host program's request, given id `id`, on queue pair `queue` now: submitted at once
    /// when the queue has room, otherwise held in the host until it has.
    pub(crate) fn submit_external(
        &mut self,
        id: u64,
        req: crate::workload::synthetic::HostRequest,
        queue: FlowId,
    ) -> Result<(), Error> {
        let now = self.q.now();
        self.flows[queue.idx()].push_external(now, id, req);
        self.pump(queue);
        match self.failure.take() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// Moves the completions kept since the last call to `out`, in completion order.
    pub(crate) fn drain_completions(&mut self, out: &mut Vec<CompletionRecord>) {
        self.done.drain_log(out);
    }

    /// The completions kept since the last call, in completion order.
    pub(crate) fn take_completions(&mut self) -> Vec<CompletionRecord> {
        let mut out = Vec::new();
        self.done.drain_log(&mut out);
        out
    }

    /// Runs the configured workload to its end and returns the result document: the batch
    /// run with a progress bar (`progress`, on a terminal) and the request log in memory
    /// (`keep_log`). [`Simulator::run_with`] takes every option.
    pub fn run(
        self,
        c: &Config,
        progress: bool,
        keep_log: bool,
    ) -> Result<(RunOutput, Simulator), Error> {
        self.run_with(
            c,
            RunHooks {
                bar: progress,
                log: if keep_log {
                    LogMode::Keep
                } else {
                    LogMode::Off
                },
                ..RunHooks::default()
            },
        )
    }

    /// Runs the configured workload to its end with `hooks`. Never inlined, so that profilers
    /// (callgrind's --toggle-collect) can count the simulation alone.
    #[inline(never)]
    pub fn run_with(
        self,
        c: &Config,
        hooks: RunHooks<'_>,
    ) -> Result<(RunOutput, Simulator), Error> {
        let wall = Instant::now();
        let (mut sim, capped) = self.run_to_end(hooks)?;
        let wall_s = wall.elapsed().as_secs_f64();
        let result = sim.result_json(c, wall_s, capped);
        let events = sim.q.processed();
        let log = sim.done.take_log();
        Ok((
            RunOutput {
                result,
                events,
                log,
            },
            sim,
        ))
    }

    /// Runs the workload to its end with `hooks` and builds no result document (a caller
    /// that wants a few figures, such as the alone runs of a fairness measurement, reads them
    /// from the simulator: building the document costs more than a short run of a few
    /// requests beside many switched-off flows). Returns whether the time cap stopped it.
    pub fn run_to_end(mut self, mut hooks: RunHooks<'_>) -> Result<(Simulator, bool), Error> {
        let wall = Instant::now();
        if !matches!(hooks.log, LogMode::Off) {
            self.done.keep_log();
        }
        for f in 0..self.flows.len() {
            self.pump(FlowId(f as u32));
        }
        if let Some(e) = self.failure.take() {
            return Err(e);
        }
        let cap = self.settings.max_simulated_ps;
        let mut bar = Bar::new(hooks.bar);
        let mut last_report = wall;
        let mut tick = |sim: &mut Self| -> Result<(), Error> {
            if let LogMode::Stream(sink) = &mut hooks.log {
                sink(sim.done.kept())?;
                sim.done.clear_kept();
            }
            let now = Instant::now();
            if now.duration_since(last_report) < REPORT_EVERY {
                return Ok(());
            }
            last_report = now;
            let p = Progress {
                fraction: crate::stats::completions::progress(
                    &sim.flows,
                    &sim.done,
                    sim.q.now(),
                    sim.settings.max_simulated_ps,
                    sim.marks.steady.max_ps(),
                ),
                requests: sim.done.total(),
                simulated_ps: sim.q.now(),
                elapsed_s: now.duration_since(wall).as_secs_f64(),
                draining: sim.marks.workload_done(),
            };
            bar.show(&p);
            match hooks.on_progress.as_mut() {
                Some(f) => f(&p),
                None => Ok(()),
            }
        };
        let ran = self.run_through(cap, &mut tick);
        bar.clear();
        ran?;
        if let LogMode::Stream(sink) = &mut hooks.log {
            sink(self.done.kept())?;
            self.done.take_log();
        }
        let capped = !self.marks.halt && self.q.peek_time().is_some();
        if !capped && self.outstanding() > 0 {
            return Err(Error::Simulation(format!(
                "simulation stalled at {} ps with {} requests outstanding and no event pending; {}",
                self.q.now(),
                self.outstanding(),
                self.stall_report()
            )));
        }
        Ok((self, capped))
    }

    /// Flow `i`'s reads and writes: how many completed and their mean latency in
    /// microseconds (0 without any), the `flows[i].stats.all` figures of the result document
    /// to the bit.
    pub fn flow_mean_latency_us(&self, i: usize) -> (u64, f64) {
        self.done.stats(i).all_mean_us()
    }
}
