//! The batch run: the configured workload run to its end on the run loop (`sim::run`), with
//! the progress bar and hook, the request log (kept or streamed), the time cap, and the result
//! document at the end (`report`).

use crate::config::Config;
use crate::error::Error;
use crate::sim::Simulator;
use crate::stats::run_hooks::{Bar, LogMode, Progress, RunHooks, RunOutput, REPORT_EVERY};
use std::time::Instant;

impl Simulator {
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
        self.start();
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
