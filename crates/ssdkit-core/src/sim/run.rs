//! Driving the simulator: the batch run to the end of the workload, and the stepping
//! primitives (`step`, `run_until`, `is_idle`) that a step-by-step host drives. A watchdog
//! turns a run that keeps processing events without finishing any user work into an error
//! naming the state, rather than a hang.

use super::Simulator;
use crate::config::Config;
use crate::engine::{Picoseconds, PS_PER_MS};
use crate::error::Error;
use crate::ids::FlowId;
use serde_json::Value;
use std::io::{IsTerminal, Write};
use std::time::Instant;

/// Events in a row without a finished user transaction or request, with requests
/// outstanding, after which the run is declared livelocked. Collecting one victim takes a
/// few events per valid page, and other dies' user work resets the count, so a healthy
/// device never comes near it.
pub const WATCHDOG_EVENTS: u64 = 50_000_000;

/// One completed request, kept when a run asks for the request log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CompletionRecord {
    /// Submission order over the run: unique per request.
    pub id: u64,
    pub flow: u32,
    pub op: crate::workload::Op,
    pub start_sector: u64,
    pub sectors: u32,
    pub submit_ps: Picoseconds,
    pub complete_ps: Picoseconds,
}

pub struct RunOutput {
    pub result: Value,
    pub events: u64,
    pub log: Option<Vec<CompletionRecord>>,
}

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
        self.run_through(t, |_| {})?;
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
        mut tick: impl FnMut(&Self),
    ) -> Result<(), Error> {
        while let Some((_, ev)) = self.q.pop_through(limit) {
            self.handle(ev);
            if self.failure.is_some() || self.q.processed() & 0xFFFF == 0 {
                self.after_event()?;
                tick(self);
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

    /// Runs the configured workload to its end and returns the result document. Never inlined,
    /// so that profilers (callgrind's --toggle-collect) can count the simulation alone.
    #[inline(never)]
    pub fn run(
        mut self,
        c: &Config,
        progress: bool,
        keep_log: bool,
    ) -> Result<(RunOutput, Simulator), Error> {
        let wall = Instant::now();
        if keep_log {
            self.log = Some(Vec::new());
        }
        for f in 0..self.flows.len() {
            self.pump(FlowId(f as u32));
        }
        if let Some(e) = self.failure.take() {
            return Err(e);
        }
        let cap = self.settings.max_simulated_ps;
        let total: u64 = self
            .flows
            .iter()
            .map(|f| f.limit())
            .fold(0u64, |a, b| a.saturating_add(b));
        let show = progress && std::io::stderr().is_terminal();
        let mut shown = false;
        let mut tick = |sim: &Self| {
            if !show || wall.elapsed().as_secs_f64() <= 1.0 {
                return;
            }
            let done: u64 = sim.completed.iter().sum();
            let frac = if total == u64::MAX {
                0.0
            } else {
                done as f64 / total as f64
            };
            let width = 30;
            let fill = (frac * width as f64) as usize;
            eprint!(
                "\r[{}{}] {:5.1}%  {} requests  {:.3} ms simulated",
                "#".repeat(fill.min(width)),
                " ".repeat(width - fill.min(width)),
                frac * 100.0,
                done,
                sim.q.now() as f64 / PS_PER_MS as f64
            );
            shown = true;
        };
        self.run_through(cap, &mut tick)?;
        let capped = self.q.peek_time().is_some();
        if shown {
            eprint!("\r{}\r", " ".repeat(80));
            let _ = std::io::stderr().flush();
        }
        if !capped && self.outstanding() > 0 {
            return Err(Error::Simulation(format!(
                "simulation stalled at {} ps with {} requests outstanding and no event pending; {}",
                self.q.now(),
                self.outstanding(),
                self.stall_report()
            )));
        }
        let wall_s = wall.elapsed().as_secs_f64();
        let result = self.result_json(c, wall_s, capped);
        let events = self.q.processed();
        let log = self.log.take();
        Ok((
            RunOutput {
                result,
                events,
                log,
            },
            self,
        ))
    }
}
