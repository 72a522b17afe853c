//! Time series: per-flow and device figures over windows of fixed simulated length
//! (`run.timeseries_window_ms`).
//!
//! Cheap on the event path: a completion adds to its flow's open window, a submission or
//! completion moves the flow's queue-depth integral, and the run loop compares each event's
//! time with the end of the open window. Windows close when the first event at or past their
//! end is popped, so the device counters sampled then are the state at the boundary (nothing
//! happens between two events). Window i covers [i w, (i + 1) w); the last one ends at the end
//! of the run and may be shorter.

use crate::engine::{Picoseconds, PS_PER_S};
use crate::result::{DeviceSeries, FlowSeries, TimeSeries};

/// Most windows a run may record: past this the run stops with an error naming the key,
/// rather than filling memory (each window costs about 50 bytes per flow).
pub const MAX_WINDOWS: u64 = 10_000_000;

/// Cumulative device counters at a point in time.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DeviceSample {
    pub free_blocks: u64,
    pub gc_runs: u64,
    pub gc_page_moves: u64,
    pub user_page_writes: u64,
    pub page_programs: u64,
}

/// A flow's open window.
#[derive(Debug, Clone, Copy, Default)]
struct FlowAcc {
    completed: u64,
    bytes: u64,
    latency_sum_ps: u128,
    latency_max_ps: u64,
    /// Integral of the requests outstanding over time, in request-picoseconds.
    depth_area: u128,
    depth: u32,
    depth_since: Picoseconds,
}

#[derive(Debug, Clone)]
pub struct Recorder {
    window_ps: Picoseconds,
    /// End of the open window; `Picoseconds::MAX` when recording is off, so the run loop's
    /// one compare fires only for an event at the end of time.
    pub next_end: Picoseconds,
    acc: Vec<FlowAcc>,
    flows: Vec<FlowSeries>,
    device: DeviceSeries,
    start_ps: Vec<Picoseconds>,
    last: DeviceSample,
}

impl Recorder {
    /// `window_ps` 0 records nothing.
    pub fn new(window_ps: Picoseconds, flows: usize, start: DeviceSample) -> Self {
        Self {
            window_ps,
            next_end: if window_ps == 0 {
                Picoseconds::MAX
            } else {
                window_ps
            },
            acc: vec![FlowAcc::default(); if window_ps == 0 { 0 } else { flows }],
            flows: vec![FlowSeries::default(); if window_ps == 0 { 0 } else { flows }],
            device: DeviceSeries::default(),
            start_ps: Vec::new(),
            last: start,
        }
    }

    #[inline]
    pub fn on(&self) -> bool {
        self.window_ps != 0
    }

    /// A request of `flow` completed at `now` after `latency` (the window is open: the run
    /// loop closed every window that ended at or before `now`).
    #[inline]
    pub fn completed(&mut self, flow: usize, now: Picoseconds, latency: Picoseconds, bytes: u64) {
        let a = &mut self.acc[flow];
        a.completed += 1;
        a.bytes += bytes;
        a.latency_sum_ps += latency as u128;
        a.latency_max_ps = a.latency_max_ps.max(latency);
        Self::depth_to(a, now);
        a.depth -= 1;
    }

    /// A request of `flow` entered its submission queue at `now`.
    #[inline]
    pub fn submitted(&mut self, flow: usize, now: Picoseconds) {
        let a = &mut self.acc[flow];
        Self::depth_to(a, now);
        a.depth += 1;
    }

    fn depth_to(a: &mut FlowAcc, t: Picoseconds) {
        a.depth_area += a.depth as u128 * (t - a.depth_since) as u128;
        a.depth_since = t;
    }

    /// Closes every window that ends at or before `now`, sampling the device with `sample`
    /// (its state is the same at every boundary up to `now`). An error when the run would
    /// record more than [`MAX_WINDOWS`].
    #[cold]
    pub fn close_through(
        &mut self,
        now: Picoseconds,
        sample: DeviceSample,
    ) -> Result<(), crate::Error> {
        if !self.on() {
            // An event at the end of time (`Picoseconds::MAX`) reaches here with recording off.
            return Ok(());
        }
        let windows = (now / self.window_ps).saturating_sub(self.start_ps.len() as u64);
        if self.start_ps.len() as u64 + windows > MAX_WINDOWS {
            return Err(crate::Error::Config(format!(
                "key `run.timeseries_window_ms` = {} ms makes more than {MAX_WINDOWS} windows by simulated time {} ms; choose a longer window",
                self.window_ps as f64 / 1e9,
                now as f64 / 1e9
            )));
        }
        while self.next_end <= now {
            let end = self.next_end;
            self.push(end, self.window_ps, sample);
            self.next_end = end.saturating_add(self.window_ps);
        }
        Ok(())
    }

    /// Records the open window as ending at `end`, `len` long, and opens the next.
    fn push(&mut self, end: Picoseconds, len: Picoseconds, sample: DeviceSample) {
        self.start_ps.push(end - len);
        let secs = len as f64 / PS_PER_S as f64;
        for (a, s) in self.acc.iter_mut().zip(self.flows.iter_mut()) {
            Self::depth_to(a, end);
            s.completed.push(a.completed);
            s.bytes.push(a.bytes);
            s.iops.push(if secs > 0.0 {
                a.completed as f64 / secs
            } else {
                0.0
            });
            s.bandwidth_bytes_per_s.push(if secs > 0.0 {
                a.bytes as f64 / secs
            } else {
                0.0
            });
            s.mean_latency_us.push(
                (a.completed > 0).then(|| a.latency_sum_ps as f64 / a.completed as f64 / 1e6),
            );
            s.max_latency_us
                .push((a.completed > 0).then(|| a.latency_max_ps as f64 / 1e6));
            s.queue_depth.push(if len > 0 {
                a.depth_area as f64 / len as f64
            } else {
                a.depth as f64
            });
            *a = FlowAcc {
                depth: a.depth,
                depth_since: end,
                ..FlowAcc::default()
            };
        }
        let (l, d) = (self.last, &mut self.device);
        d.free_blocks.push(sample.free_blocks);
        d.gc_runs.push(sample.gc_runs - l.gc_runs);
        d.gc_page_moves.push(sample.gc_page_moves - l.gc_page_moves);
        let user = sample.user_page_writes - l.user_page_writes;
        let programs = sample.page_programs - l.page_programs;
        d.user_page_writes.push(user);
        d.page_programs.push(programs);
        d.write_amplification
            .push((user > 0).then(|| programs as f64 / user as f64));
        self.last = sample;
    }

    /// The series up to `now` (the end of the run): the windows closed so far, those that
    /// ended since the last event, and the open window cut at `now`. `None` when off.
    pub fn series(&self, now: Picoseconds, sample: DeviceSample) -> Option<TimeSeries> {
        if !self.on() {
            return None;
        }
        let mut r = self.clone();
        // Cannot exceed the limit: the loop checked at the last event and nothing ran since.
        while r.next_end <= now {
            let end = r.next_end;
            r.push(end, r.window_ps, sample);
            r.next_end = end.saturating_add(r.window_ps);
        }
        let open_start = r.next_end - r.window_ps;
        let active = r.acc.iter().any(|a| a.completed > 0) || sample != r.last;
        if now > open_start || r.start_ps.is_empty() || active {
            r.push(now, now - open_start, sample);
        }
        Some(TimeSeries {
            window_ps: self.window_ps,
            end_ps: now,
            start_ps: r.start_ps,
            flows: r.flows,
            device: r.device,
        })
    }
}
