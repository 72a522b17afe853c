//! Where a run stands against its marks: the time series' windows (`run.timeseries_window_ms`),
//! the steady-state rounds (`[steady_state]`), the last completion of the workload and
//! `run.end`. The simulator reports submissions, completions and the device's counters; this
//! type decides when a window or round closes, when the workload must stop and when the run
//! loop halts.

use crate::config::RunEnd;
use crate::engine::Picoseconds;
use crate::flash::BackendStats;
use crate::settings::Settings;
use crate::stats::report::AtLast;
use crate::stats::steady::Rounds;
use crate::stats::timeseries::{DeviceSample, Recorder};

pub(crate) struct RunMarks {
    /// The time series of `run.timeseries_window_ms` (off when 0).
    pub series: Recorder,
    /// The rounds of `[steady_state]` (off unless enabled).
    pub steady: Rounds,
    /// The earlier of the open time-series window's end and the open round's end: the run
    /// loop compares each event's time with this one value.
    pub next: Picoseconds,
    end_mode: RunEnd,
    /// Stop the run loop: `run.end = "last_completion"` reached it.
    pub halt: bool,
    /// The device's counters when the last request completed (every flow ended, nothing
    /// outstanding), to report the work done after it.
    pub at_last: Option<AtLast>,
}

/// What crossing the marks asks of the simulator.
pub(crate) struct Crossed {
    /// A time-series error (too many windows): it stops the run.
    pub error: Option<crate::Error>,
    /// The rounds are over (steady state, or the last round): no flow submits again.
    pub stop_workload: bool,
}

impl RunMarks {
    pub fn new(s: &Settings, end_mode: RunEnd, flows: usize, start: DeviceSample) -> Self {
        let series = Recorder::new(s.timeseries_window_ps, flows, start);
        let steady = Rounds::new(&s.steady, flows, start);
        Self {
            next: series.next_end.min(steady.next_end),
            series,
            steady,
            end_mode,
            halt: false,
            at_last: None,
        }
    }

    /// A request of `flow` entered its submission queue at `now`.
    #[inline]
    pub fn submitted(&mut self, flow: usize, now: Picoseconds) {
        if self.series.on() {
            self.series.submitted(flow, now);
        }
    }

    /// A request of `flow` completed at `now`; `user_page_writes` is the FTL's count, from
    /// which the steady-state rounds pick their length.
    #[inline]
    pub fn completed(
        &mut self,
        flow: usize,
        now: Picoseconds,
        lat: Picoseconds,
        bytes: u64,
        user_page_writes: impl FnOnce() -> u64,
    ) {
        if self.series.on() {
            self.series.completed(flow, now, lat, bytes);
        }
        if self.steady.on() {
            self.steady.completed(flow, lat, bytes);
            if self.steady.picking() && self.steady.pick(now, user_page_writes()) {
                self.next = self.series.next_end.min(self.steady.next_end);
            }
        }
    }

    /// Closes the windows and rounds that ended at or before `t` (the time of the event about
    /// to be handled), with the device's counters `sample`.
    #[cold]
    #[inline(never)]
    pub fn cross(&mut self, t: Picoseconds, sample: DeviceSample) -> Crossed {
        let mut error = None;
        if t >= self.series.next_end {
            error = self.series.close_through(t, sample).err();
        }
        let stop_workload =
            t >= self.steady.next_end && self.steady.close_through(t, sample).is_some();
        self.next = self.series.next_end.min(self.steady.next_end);
        Crossed {
            error,
            stop_workload,
        }
    }

    /// Whether the last completion of the workload was already seen.
    #[inline]
    pub fn workload_done(&self) -> bool {
        self.at_last.is_some()
    }

    /// The run's last completion, at `now`: records the counters (for the work done after it),
    /// ends the rounds and, with `run.end = "last_completion"`, halts the run loop.
    #[cold]
    pub fn last_completion(
        &mut self,
        now: Picoseconds,
        events: u64,
        flash: &BackendStats,
        sample: DeviceSample,
    ) {
        self.at_last = Some(AtLast {
            time: now,
            events,
            flash: flash.clone(),
            gc_runs: sample.gc_runs,
            gc_page_moves: sample.gc_page_moves,
        });
        if self.steady.on() {
            self.steady.workload_ended(now, sample);
            self.next = self.series.next_end.min(self.steady.next_end);
        }
        if self.end_mode == RunEnd::LastCompletion {
            self.halt = true;
        }
    }
}
