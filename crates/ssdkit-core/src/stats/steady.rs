//! Steady state by the SNIA Solid State Storage Performance Test Specification (PTS,
//! Enterprise v1.1 / Client v2.0): the run is cut into rounds of fixed simulated length, and
//! the tracking variable of the last five complete rounds (the measurement window) is steady
//! when
//! - its data excursion, max(y) - min(y), is at most 20 % of the window's average, and
//! - its slope excursion, the change of its least-squares line from the window's first round to
//!   its last, is at most 10 % of the average.
//!
//! Like the time series, a round closes when the first event at or past its end is popped, so
//! the device counters sampled then are the state at the boundary.
//!
//! Without `round_ms` the length is picked from the run: the simulated time by which
//! [`PICK_REQUESTS`] requests have completed (counted from the first write-back when writes
//! go to a write cache: until the cache is full it absorbs writes far faster than the flash
//! behind it takes them), rounded up to 1, 2 or 5 times a power of ten. Round 1 runs from 0
//! and holds those requests; a later complete round with fewer than [`MIN_ROUND_REQUESTS`]
//! (the device slowed down) lengthens the rounds after it to hold [`PICK_REQUESTS`] at that
//! round's rate, and windows start again with the new length. Per completion the cost is
//! two latency records (the flow's and the device's round histograms, reset every round, so
//! they allocate only while they grow).

use super::timeseries::DeviceSample;
use super::OpStats;
use crate::config::SteadyTrack;
use crate::engine::{Picoseconds, PS_PER_S};
use crate::result::{
    RoundFlow, RoundPick, RoundsEnd, SteadyRound, SteadyState, SteadyVerdict, WindowCheck,
};
use crate::settings::SteadySettings;

/// Defined with `[steady_state]`, whose validation needs them.
pub use crate::config::{PICK_REQUESTS, WINDOW_ROUNDS};
/// Largest data excursion, as a fraction of the window's average.
pub const DATA_EXCURSION_LIMIT: f64 = 0.20;
/// Largest slope excursion, as a fraction of the window's average.
pub const SLOPE_EXCURSION_LIMIT: f64 = 0.10;
/// A complete round of a picked length with fewer requests lengthens the rounds.
pub const MIN_ROUND_REQUESTS: u64 = 250;
/// Longest round picked: `steady_state.round_ms`'s largest value, 1e9 ms.
const MAX_PICKED_PS: Picoseconds = 1_000_000_000 * 1_000_000_000;

/// The smallest of 1, 2 and 5 times a power of ten (from 1 us) above `ps`.
pub fn nice_above(ps: Picoseconds) -> Picoseconds {
    let mut decade: Picoseconds = 1_000_000;
    loop {
        for m in [1, 2, 5] {
            let v = decade.saturating_mul(m);
            if v > ps || v >= MAX_PICKED_PS {
                return v.min(MAX_PICKED_PS);
            }
        }
        decade = decade.saturating_mul(10);
    }
}

/// The criteria over one window: `y[i]` is the tracking variable of round `first_round + i`.
/// Any window length of 2 or more; the PTS's is [`WINDOW_ROUNDS`]. A window whose average is
/// not above 0 (nothing measured) is never steady.
pub fn check_window(first_round: u32, y: &[f64]) -> WindowCheck {
    assert!(y.len() >= 2, "a window needs two rounds for a slope");
    let n = y.len() as f64;
    let average = y.iter().sum::<f64>() / n;
    let max = y.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let min = y.iter().copied().fold(f64::INFINITY, f64::min);
    // Least squares against round numbers centred on the window's middle, where the line
    // passes through the average; the centred sums are exact for small integer data.
    let mid = (n - 1.0) / 2.0;
    let (mut sxx, mut sxy) = (0.0, 0.0);
    for (i, &v) in y.iter().enumerate() {
        let x = i as f64 - mid;
        sxx += x * x;
        sxy += x * v;
    }
    let slope = sxy / sxx;
    let fit_first = average - slope * mid;
    let fit_last = average + slope * mid;
    let data_excursion = max - min;
    let slope_excursion = (fit_last - fit_first).abs();
    let data_excursion_limit = DATA_EXCURSION_LIMIT * average;
    let slope_excursion_limit = SLOPE_EXCURSION_LIMIT * average;
    let data_ok = data_excursion <= data_excursion_limit;
    let slope_ok = slope_excursion <= slope_excursion_limit;
    WindowCheck {
        first_round,
        last_round: first_round + y.len() as u32 - 1,
        average,
        data_excursion,
        data_excursion_limit,
        data_ok,
        slope,
        fit_first,
        fit_last,
        slope_excursion,
        slope_excursion_limit,
        slope_ok,
        steady: data_ok && slope_ok && average > 0.0,
    }
}

/// The first round (numbered from 1) whose window of [`WINDOW_ROUNDS`] rounds ending there is
/// steady, for a sequence of the tracking variable of consecutive complete rounds.
pub fn first_steady_round(y: &[f64]) -> Option<u32> {
    (WINDOW_ROUNDS..=y.len())
        .find(|&end| {
            check_window(
                (end - WINDOW_ROUNDS + 1) as u32,
                &y[end - WINDOW_ROUNDS..end],
            )
            .steady
        })
        .map(|end| end as u32)
}

/// The rounds of a run (`[steady_state]`); inert when off.
#[derive(Clone)]
pub struct Rounds {
    enabled: bool,
    /// 0 until a picked length is known.
    round_ps: Picoseconds,
    /// End of the open round; `Picoseconds::MAX` when off, while the length is being picked,
    /// or once the rounds have ended, so the run loop's one compare never fires for them.
    pub next_end: Picoseconds,
    max_rounds: u32,
    stop_when_steady: bool,
    track: SteadyTrack,
    start: Picoseconds,
    flows: Vec<OpStats>,
    device: OpStats,
    last: DeviceSample,
    rounds: Vec<SteadyRound>,
    steady_round: Option<u32>,
    ended: Option<RoundsEnd>,
    after: u64,
    /// Picking the length: whether to wait for the first write-back, when it came, and the
    /// requests completed since.
    picking: Option<Picking>,
    picked: Option<RoundPick>,
    /// Rounds before this one (numbered from 1) have another length: no window spans them.
    window_from: u32,
}

#[derive(Clone, Copy)]
struct Picking {
    wait_for_write_back: bool,
    /// The FTL's user page writes at time 0 (preconditioning may have counted some).
    user_page_writes_at_0: u64,
    from: Option<Picoseconds>,
    count: u64,
}

impl Rounds {
    /// `enabled` false: no rounds. `round_ps` 0 with rounds on: the length is picked from
    /// the run.
    pub fn new(cfg: &SteadySettings, flows: usize, start: DeviceSample) -> Self {
        let SteadySettings {
            enabled,
            round_ps,
            wait_for_write_back,
            ..
        } = *cfg;
        let pick = enabled && round_ps == 0;
        Self {
            enabled,
            round_ps,
            next_end: if enabled && !pick {
                round_ps
            } else {
                Picoseconds::MAX
            },
            max_rounds: cfg.max_rounds,
            stop_when_steady: cfg.stop_when_steady,
            track: cfg.track,
            start: 0,
            flows: vec![OpStats::default(); if enabled { flows } else { 0 }],
            device: OpStats::default(),
            last: start,
            rounds: Vec::new(),
            steady_round: None,
            ended: None,
            after: 0,
            picking: pick.then_some(Picking {
                wait_for_write_back,
                user_page_writes_at_0: start.user_page_writes,
                from: None,
                count: 0,
            }),
            picked: None,
            window_from: 1,
        }
    }

    #[inline]
    pub fn on(&self) -> bool {
        self.enabled
    }

    /// Whether the round length is still being picked ([`Rounds::pick`] after each
    /// completion).
    #[inline]
    pub fn picking(&self) -> bool {
        self.picking.is_some()
    }

    /// Simulated time by which `max_rounds` rounds end; None when off or not yet known.
    pub fn max_ps(&self) -> Option<Picoseconds> {
        (self.on() && self.round_ps != 0)
            .then(|| self.round_ps.saturating_mul(self.max_rounds as u64))
    }

    /// After a completion at `now` while picking, with the FTL's count of user page writes:
    /// fixes the length once enough requests have completed. Returns true when it did (the
    /// first round's end is then `next_end`).
    #[cold]
    pub fn pick(&mut self, now: Picoseconds, user_page_writes: u64) -> bool {
        let Some(p) = self.picking.as_mut() else {
            return false;
        };
        if p.from.is_none() {
            if p.wait_for_write_back && user_page_writes == p.user_page_writes_at_0 {
                return false;
            }
            // Without a write cache to fill, the count runs from time 0.
            p.from = Some(if p.wait_for_write_back { now } else { 0 });
        }
        p.count += 1;
        if p.count < PICK_REQUESTS {
            return false;
        }
        self.fix_length(now);
        true
    }

    /// The length picked at `at` from the requests counted: round 1 runs from 0 past `at`.
    fn fix_length(&mut self, at: Picoseconds) {
        let Some(p) = self.picking.take() else {
            return;
        };
        self.round_ps = nice_above(at);
        self.next_end = self.round_ps;
        self.picked = Some(RoundPick {
            at_ps: at,
            from_ps: p.from.unwrap_or(at),
            requests: p.count,
            after_write_back: p.wait_for_write_back,
            lengthened_at_rounds: Vec::new(),
        });
    }

    /// A request of `flow` completed after `latency` (every round that ended at or before now
    /// is closed).
    #[inline]
    pub fn completed(&mut self, flow: usize, latency: Picoseconds, bytes: u64) {
        if self.ended.is_some() {
            self.after += 1;
            return;
        }
        self.flows[flow].record(latency, bytes);
        self.device.record(latency, bytes);
    }

    /// Closes every round that ends at or before `now`, sampling the device with `sample`.
    /// Returns why the rounds ended when the workload must now stop (steady, or the last
    /// round).
    #[cold]
    pub fn close_through(&mut self, now: Picoseconds, sample: DeviceSample) -> Option<RoundsEnd> {
        if !self.on() || self.round_ps == 0 {
            // An event at the end of time (`Picoseconds::MAX`) reaches here with rounds off
            // or while their length is being picked.
            return None;
        }
        while self.ended.is_none() && self.next_end <= now {
            let end = self.next_end;
            self.push(end, true, sample);
            let k = self.rounds.len() as u32;
            let window = self.rounds.last().and_then(|r| r.window.as_ref());
            if self.steady_round.is_none() && window.is_some_and(|w| w.steady) {
                self.steady_round = Some(k);
            }
            if self.steady_round.is_some() && self.stop_when_steady {
                self.end(RoundsEnd::Steady);
            } else if k >= self.max_rounds {
                self.end(RoundsEnd::MaxRounds);
            } else {
                self.lengthen_if_short();
                self.next_end = end.saturating_add(self.round_ps);
            }
            if self.ended.is_some() {
                return self.ended;
            }
        }
        None
    }

    /// A picked length whose last round held fewer than [`MIN_ROUND_REQUESTS`]: the next
    /// rounds are long enough for [`PICK_REQUESTS`] at that round's rate (ten times longer
    /// for a round with none), and windows start with them.
    fn lengthen_if_short(&mut self) {
        let Some(pick) = self.picked.as_mut() else {
            return;
        };
        let Some(last) = self.rounds.last() else {
            return;
        };
        if last.completed >= MIN_ROUND_REQUESTS || self.steady_round.is_some() {
            return;
        }
        let wanted = if last.completed == 0 {
            self.round_ps.saturating_mul(10)
        } else {
            let w = self.round_ps as u128 * PICK_REQUESTS as u128 / last.completed as u128;
            w.min(u64::MAX as u128) as u64
        };
        self.round_ps = nice_above(wanted.saturating_sub(1)).max(self.round_ps);
        pick.lengthened_at_rounds.push(last.round + 1);
        self.window_from = last.round + 1;
    }

    /// The workload ended at `now` (its last completion) while rounds were running: the open
    /// round ends there, incomplete.
    #[cold]
    pub fn workload_ended(&mut self, now: Picoseconds, sample: DeviceSample) {
        self.cut(now, sample, RoundsEnd::Workload);
    }

    fn end(&mut self, why: RoundsEnd) {
        self.ended = Some(why);
        self.next_end = Picoseconds::MAX;
    }

    /// Ends the rounds at `at`, before a full round: the open round is kept, incomplete, if
    /// it has a length (a completion exactly at a boundary would give one of length 0; it is
    /// counted after the rounds instead).
    fn cut(&mut self, at: Picoseconds, sample: DeviceSample, why: RoundsEnd) {
        if self.ended.is_some() || !self.on() {
            return;
        }
        if self.picking.is_some() {
            // Too few requests to pick from: the one round, incomplete, names a length it
            // did not reach.
            self.fix_length(at);
        }
        if at > self.start {
            self.push(at, false, sample);
        } else {
            self.after += self.device.count;
        }
        self.end(why);
    }

    /// Records the open round as ending at `end` and opens the next.
    fn push(&mut self, end: Picoseconds, complete: bool, sample: DeviceSample) {
        let secs = (end - self.start) as f64 / PS_PER_S as f64;
        let rate = |n: u64| if secs > 0.0 { n as f64 / secs } else { 0.0 };
        let mean = |s: &OpStats| (s.count > 0).then(|| s.mean_ps() / 1e6);
        let flows = self
            .flows
            .iter()
            .map(|s| RoundFlow {
                completed: s.count,
                bytes: s.bytes,
                iops: rate(s.count),
                mean_latency_us: mean(s),
                p99_latency_us: s.quantile_us(0.99),
            })
            .collect();
        let d = &self.device;
        let l = self.last;
        let user = sample.user_page_writes - l.user_page_writes;
        let programs = sample.page_programs - l.page_programs;
        let mut round = SteadyRound {
            round: self.rounds.len() as u32 + 1,
            start_ps: self.start,
            end_ps: end,
            complete,
            completed: d.count,
            bytes: d.bytes,
            iops: rate(d.count),
            bandwidth_bytes_per_s: rate(d.bytes),
            mean_latency_us: mean(d),
            p99_latency_us: d.quantile_us(0.99),
            free_blocks: sample.free_blocks,
            gc_runs: sample.gc_runs - l.gc_runs,
            user_page_writes: user,
            page_programs: programs,
            write_amplification: (user > 0).then(|| programs as f64 / user as f64),
            flows,
            window: None,
        };
        if complete {
            round.window = self.window_ending_with(&round);
        }
        self.rounds.push(round);
        self.last = sample;
        self.start = end;
        self.device.reset();
        for s in &mut self.flows {
            s.reset();
        }
    }

    /// The criteria over the window ending with `round` (not yet pushed), when it is full and
    /// every round of it measured something.
    fn window_ending_with(&self, round: &SteadyRound) -> Option<WindowCheck> {
        let n = self.rounds.len();
        if n + 1 < WINDOW_ROUNDS || round.round + 1 < self.window_from + WINDOW_ROUNDS as u32 {
            return None;
        }
        let mut y = [0.0; WINDOW_ROUNDS];
        let window = self.rounds[n + 1 - WINDOW_ROUNDS..].iter().chain([round]);
        for (slot, r) in y.iter_mut().zip(window) {
            if r.completed == 0 {
                return None;
            }
            *slot = match self.track {
                SteadyTrack::Iops => r.iops,
                SteadyTrack::MeanLatency => r.mean_latency_us?,
            };
        }
        Some(check_window(round.round + 1 - WINDOW_ROUNDS as u32, &y))
    }

    /// The rounds and the verdict at the end of the run, at `now` (the last event), with the
    /// device in state `sample`. `cap` is the time cap when it stopped the run; `last_completion`
    /// ends the rounds if the workload's end was not seen (nothing left to end them).
    pub fn finish(
        &self,
        now: Picoseconds,
        sample: DeviceSample,
        cap: Option<Picoseconds>,
        last_completion: Picoseconds,
    ) -> Option<SteadyState> {
        if !self.on() {
            return None;
        }
        let mut r = self.clone();
        match cap {
            Some(cap) => {
                // Rounds that ended by the cap had every event they would ever see.
                if r.close_through(cap.max(now), sample).is_none() {
                    r.cut(cap.max(now), sample, RoundsEnd::TimeCap);
                }
            }
            None => r.cut(last_completion, sample, RoundsEnd::Workload),
        }
        let complete_rounds = r.rounds.iter().filter(|x| x.complete).count() as u32;
        let window = match r.steady_round {
            Some(k) => r.rounds[k as usize - 1].window.clone(),
            None => r.rounds.iter().rev().find_map(|x| x.window.clone()),
        };
        Some(SteadyState {
            track: r.track,
            round_ps: r.round_ps,
            round_picked: r.picked,
            max_rounds: r.max_rounds,
            stop_when_steady: r.stop_when_steady,
            window_rounds: WINDOW_ROUNDS as u32,
            data_excursion_limit_fraction: DATA_EXCURSION_LIMIT,
            slope_excursion_limit_fraction: SLOPE_EXCURSION_LIMIT,
            verdict: SteadyVerdict {
                steady: r.steady_round.is_some(),
                steady_round: r.steady_round,
                window,
                complete_rounds,
                ended_by: r.ended.unwrap_or(RoundsEnd::Workload),
                after_rounds_completed: r.after,
            },
            rounds: r.rounds,
        })
    }
}
