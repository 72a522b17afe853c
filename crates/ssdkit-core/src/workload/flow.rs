//! A flow as the host sees it: a request source (synthetic or trace), its arrival discipline
//! (closed loop at a queue depth, or open loop by arrival time) and its stop conditions.
//!
//! Open-loop flows never build a backlog in memory: the next request is generated only when it
//! is due and the submission queue has room; a late one is submitted with its arrival time, so
//! host queueing shows in its latency.

use super::replay::TraceReplay;
use super::synthetic::{ArrivalGen, HostRequest, SyntheticGen};
use crate::engine::{derive_stream, Picoseconds};
use crate::error::Error;
use crate::settings::FlowSettings;
use serde_json::Value;
use std::collections::VecDeque;

pub enum Source {
    Synthetic {
        gen: Box<SyntheticGen>,
        arrivals: Option<ArrivalGen>,
    },
    Trace(Box<TraceReplay>),
    /// Requests a host program submits one at a time (`device::Device`), in time order, each
    /// with the id the program was given. Empty means "nothing yet", not "ended".
    External(VecDeque<(Picoseconds, u64, HostRequest)>),
    /// A switched-off flow (`enabled = false`): nothing to draw from and no trace opened.
    /// With many flows, each alone run of a fairness measurement switches all flows but one
    /// off: opening their traces (a decoder each) would cost more than the run.
    Off,
}

/// What a flow can do at a given time.
pub enum Next {
    /// A request that has arrived (at the given time) and may be submitted now.
    Due(Picoseconds, HostRequest),
    /// Nothing before this time.
    Later(Picoseconds),
    /// The flow has ended (or is at its queue cap; the caller checks that first).
    Done,
}

pub struct Flow {
    pub source: Source,
    pub open_loop: bool,
    /// Most requests outstanding: queue_depth (closed) or the submission queue size (open).
    pub cap: u32,
    pub outstanding: u32,
    pending: Option<(Picoseconds, HostRequest)>,
    /// The next arrival does not fit in simulated time. Reported only when the clock gets to
    /// its end: a run capped by `run.max_simulated_ms` stops before and is valid.
    beyond_time: Option<Box<Error>>,
    exhausted: bool,
    pub issued: u64,
    limit: u64,
    issued_bytes: u64,
    /// Bytes per sector, for `issued_bytes`.
    sector_bytes: u64,
    byte_limit: u64,
    start_ps: Picoseconds,
    stop_ps: Picoseconds,
    pub first_arrival: Option<Picoseconds>,
    pub last_arrival: Picoseconds,
    /// An Arrival event for this flow is in the event queue.
    pub arrival_scheduled: bool,
    /// Pinning: planes the flow's writes may use, in allocation order; None = all.
    pub planes: Option<Box<[u32]>>,
    pub plane_cursor: u32,
    /// Id of the external request `next` last returned (the host program's request id).
    pub tag: Option<u64>,
    /// `flow.flush_every` (0: no flushes).
    flush_every: u64,
    /// Requests (not flushes) issued since the last flush.
    since_flush: u64,
    /// Flushes issued (part of `issued`, not of the `requests` limit).
    flushes: u64,
    /// A flush was issued: the next request waits until it has completed.
    after_flush: bool,
    /// Where a request the flow will submit soon (drawn ahead) starts, for the simulator to
    /// start loading its map entries; None for sources that do not draw ahead.
    pub soon: Option<u64>,
}

impl Flow {
    /// The flow submits reads alone: a synthetic flow of reads without flushes, or a flow
    /// switched off. A trace or a host program may submit anything.
    pub fn reads_only(&self) -> bool {
        match &self.source {
            Source::Synthetic { gen, .. } => gen.reads_only() && self.flush_every == 0,
            Source::Off => true,
            Source::Trace(_) | Source::External(_) => false,
        }
    }

    /// The planes the flow's writes are pinned to and its cursor through them, if pinned.
    #[inline]
    pub fn pinned(&mut self) -> Option<(&[u32], &mut u32)> {
        match &self.planes {
            None => None,
            Some(set) => Some((set, &mut self.plane_cursor)),
        }
    }

    /// The flow `f` resolved; `index` is its position in the configuration (its random
    /// stream and error keys). `caches_writes`: a data cache takes writes, so a trace's fio
    /// `sync`/`datasync` lines are Flush requests, and a synthetic flow draws no requests
    /// ahead (see `synthetic::AHEAD`).
    pub fn new(
        f: &FlowSettings,
        index: usize,
        sector_bytes: u32,
        seed: u64,
        caches_writes: bool,
    ) -> Result<Self, Error> {
        let (start_ps, stop_ps) = f.window_ps.clone().map_err(Error::Config)?;
        let source = if let Some(t) = f.trace.as_ref() {
            Source::Trace(Box::new(TraceReplay::open(
                f,
                t,
                index,
                sector_bytes,
                caches_writes,
            )?))
        } else if let Some(s) = f.synthetic.as_ref() {
            // Two streams per flow: arrival times must not shift when the size or address
            // draws change, so each process has its own.
            let id = 1 + index as u64;
            Source::Synthetic {
                gen: Box::new(SyntheticGen::new(
                    s,
                    derive_stream(seed, id),
                    !caches_writes,
                )),
                arrivals: s.arrival.as_ref().map(|a| {
                    let rng = derive_stream(seed, id | 1 << 40);
                    ArrivalGen::new(a, &f.name, index, start_ps, rng)
                }),
            }
        } else {
            Source::Off
        };
        Ok(Self {
            source,
            open_loop: f.open_loop,
            cap: f.cap,
            outstanding: 0,
            pending: None,
            beyond_time: None,
            exhausted: false,
            issued: 0,
            limit: f.request_limit,
            issued_bytes: 0,
            sector_bytes: sector_bytes as u64,
            byte_limit: f.byte_limit,
            start_ps,
            stop_ps,
            first_arrival: None,
            last_arrival: 0,
            arrival_scheduled: false,
            planes: f.planes.clone(),
            plane_cursor: 0,
            tag: None,
            flush_every: f.flush_every,
            since_flush: 0,
            flushes: 0,
            after_flush: false,
            soon: None,
        })
    }

    /// The queue pair of a host program (`device::Device`): open loop, its requests held by
    /// the host while `sq_entries` are outstanding, as a trace flow's are.
    pub fn external(sq_entries: u32, sector_bytes: u32, planes: Option<Box<[u32]>>) -> Self {
        Self {
            source: Source::External(VecDeque::new()),
            open_loop: true,
            cap: sq_entries,
            outstanding: 0,
            pending: None,
            beyond_time: None,
            exhausted: false,
            issued: 0,
            limit: u64::MAX,
            issued_bytes: 0,
            sector_bytes: sector_bytes as u64,
            byte_limit: u64::MAX,
            start_ps: 0,
            stop_ps: Picoseconds::MAX,
            first_arrival: None,
            last_arrival: 0,
            arrival_scheduled: false,
            planes,
            plane_cursor: 0,
            tag: None,
            flush_every: 0,
            since_flush: 0,
            flushes: 0,
            after_flush: false,
            soon: None,
        }
    }

    /// Hands a host program's request to an external flow.
    pub fn push_external(&mut self, at: Picoseconds, id: u64, req: HostRequest) {
        match &mut self.source {
            Source::External(q) => q.push_back((at, id, req)),
            _ => unreachable!("push_external on a configured flow"),
        }
    }

    /// Requests the flow will issue at most (for progress display); u64::MAX if unknown.
    pub fn limit(&self) -> u64 {
        self.limit
    }

    /// Whether the flow will submit nothing more after `now` (and holds nothing back). A host
    /// program's queue never ends: more may come.
    pub fn ended(&self, now: Picoseconds) -> bool {
        // A closed-loop flow past its stop time holds the request it drew but will never
        // submit it.
        if !self.open_loop && now >= self.stop_ps {
            return true;
        }
        if self.pending.is_some() || self.flush_due() {
            return false;
        }
        if matches!(self.source, Source::External(_)) {
            return false;
        }
        self.exhausted
            || self.issued - self.flushes >= self.limit
            || self.issued_bytes >= self.byte_limit
    }

    /// `flow.flush_every` requests were issued since the last flush: a Flush comes next.
    #[inline]
    fn flush_due(&self) -> bool {
        self.flush_every > 0 && self.since_flush >= self.flush_every && !self.exhausted
    }

    /// Submits nothing more (steady-state rounds are over); a request held back (an
    /// open-loop arrival waiting for room) is dropped, never having been issued.
    pub fn stop(&mut self) {
        self.exhausted = true;
        self.pending = None;
        self.beyond_time = None;
    }

    /// How far the flow is towards its end at `now`, in [0, 1], after `completed` requests:
    /// the furthest of its limits (requests, bytes, duration, the trace file read). None
    /// when it has no known end (a host program's queue, a flow bounded by nothing).
    pub fn progress(&self, now: Picoseconds, completed: u64) -> Option<f64> {
        if self.exhausted && self.outstanding == 0 {
            return Some(1.0);
        }
        let mut best: Option<f64> = None;
        let mut see = |f: f64| best = Some(best.map_or(f, |b: f64| b.max(f)));
        if self.limit != u64::MAX {
            see(completed as f64 / self.limit as f64);
        }
        if self.byte_limit != u64::MAX {
            see(self.issued_bytes as f64 / self.byte_limit as f64);
        }
        if self.stop_ps != Picoseconds::MAX {
            let span = (self.stop_ps - self.start_ps) as f64;
            see(now.saturating_sub(self.start_ps) as f64 / span.max(1.0));
        }
        if let Source::Trace(t) = &self.source {
            if let Some((read, size)) = t.input_progress() {
                // The reader reads ahead, so a small file is read whole at the start: short of
                // 1 until the flow has ended (handled above).
                see((read as f64 / size as f64).min(0.99));
            }
        }
        best.map(|b| b.clamp(0.0, 1.0))
    }

    /// Whether the flow has as many requests outstanding as it may.
    #[inline]
    pub fn is_full(&self) -> bool {
        self.outstanding >= self.cap
    }

    /// The request `next` returned is submitted: it is outstanding from now; the host
    /// program's id for it, if it has one.
    #[inline]
    pub fn submitting(&mut self) -> Option<u64> {
        self.outstanding += 1;
        self.tag.take()
    }

    /// `next` said the flow has nothing before a later time: whether an Arrival is to be
    /// scheduled for it (once; the flow remembers it is).
    #[inline]
    pub fn wants_arrival(&mut self) -> bool {
        !std::mem::replace(&mut self.arrival_scheduled, true)
    }

    /// The flow's Arrival event fired.
    #[inline]
    pub fn woken(&mut self) {
        self.arrival_scheduled = false;
    }

    /// The application has the completion of one of the flow's requests.
    #[inline]
    pub fn seen(&mut self) {
        self.outstanding -= 1;
    }

    /// What the flow can submit at `now`, given that its queue has room.
    #[inline]
    pub fn next(&mut self, now: Picoseconds) -> Result<Next, Error> {
        if let Some(e) = &self.beyond_time {
            return if now == Picoseconds::MAX {
                Err((**e).clone())
            } else {
                Ok(Next::Later(Picoseconds::MAX))
            };
        }
        // A flush is a barrier, as a host's fsync is: it is issued once the flow's earlier
        // requests have completed, and the next request once it has.
        if self.flush_every > 0 && self.pending.is_none() && (self.flush_due() || self.after_flush)
        {
            if self.outstanding > 0 {
                return Ok(Next::Done);
            }
            self.after_flush = false;
        }
        if self.pending.is_none() && self.flush_due() {
            // At the previous request's arrival (a closed loop submits it now).
            self.since_flush = 0;
            self.after_flush = true;
            let flush = HostRequest {
                op: crate::workload::Op::Flush,
                start_sector: 0,
                sectors: 0,
            };
            self.pending = Some((self.last_arrival, flush));
        }
        if self.pending.is_none() {
            if self.exhausted
                || self.issued - self.flushes >= self.limit
                || self.issued_bytes >= self.byte_limit
            {
                return Ok(Next::Done);
            }
            let item = match &mut self.source {
                Source::Synthetic { gen, arrivals } => {
                    let at = match arrivals.as_mut().map(|a| a.next_arrival()) {
                        None => 0,
                        Some(Ok(at)) => at,
                        // Past the flow's stop time anyway: the flow has simply ended.
                        Some(Err(_)) if self.stop_ps != Picoseconds::MAX => {
                            self.exhausted = true;
                            return Ok(Next::Done);
                        }
                        Some(Err(e)) => {
                            self.beyond_time = Some(Box::new(e));
                            return self.next(now);
                        }
                    };
                    let (r, far) = gen.next_request();
                    self.soon = far;
                    Some((at, r))
                }
                Source::Trace(t) => t.next_request()?,
                Source::Off => None,
                Source::External(q) => match q.pop_front() {
                    Some((at, id, req)) => {
                        self.tag = Some(id);
                        Some((at, req))
                    }
                    // More may come: the flow waits, it has not ended.
                    None => return Ok(Next::Done),
                },
            };
            match item {
                Some(x) => self.pending = Some(x),
                None => {
                    self.exhausted = true;
                    return Ok(Next::Done);
                }
            }
        }
        let (at, req) = self.pending.expect("filled above");
        if self.open_loop {
            if at >= self.stop_ps {
                self.exhausted = true;
                self.pending = None;
                return Ok(Next::Done);
            }
            if at > now {
                return Ok(Next::Later(at));
            }
        } else {
            if now < self.start_ps {
                return Ok(Next::Later(self.start_ps));
            }
            if now >= self.stop_ps {
                return Ok(Next::Done);
            }
        }
        self.pending = None;
        let at = if self.open_loop { at } else { now };
        self.issued += 1;
        if req.op == crate::workload::Op::Flush && self.flush_every > 0 {
            self.flushes += 1;
        } else {
            self.since_flush += 1;
        }
        self.issued_bytes += req.sectors as u64 * self.sector_bytes;
        self.first_arrival.get_or_insert(at);
        self.last_arrival = at;
        Ok(Next::Due(at, req))
    }

    /// Issued requests over the span of their arrival (or submission) times.
    pub fn arrival_rate_iops(&self) -> f64 {
        match self.first_arrival {
            Some(first) if self.issued > 1 && self.last_arrival > first => {
                (self.issued - 1) as f64 / ((self.last_arrival - first) as f64 * 1e-12)
            }
            _ => 0.0,
        }
    }

    pub fn trace_summary(&self) -> Value {
        match &self.source {
            Source::Trace(t) => t.summary(),
            Source::Synthetic { .. } | Source::External(_) | Source::Off => Value::Null,
        }
    }
}

/// What the configured flows are expected to write (`Flow::expected_pages_written`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExpectedWrites {
    /// Distinct logical pages written.
    pub pages: u64,
    /// Of them, those a write may leave partly written (every one, for a flow whose writes
    /// can be smaller than a page or start inside one; none for whole-page writes).
    pub partial_pages: u64,
}

impl Flow {
    /// The distinct logical pages the configured flows of `s` are expected to write to flash,
    /// summed (`synthetic::expected_pages_written`) over the flows the configuration bounds:
    /// enabled synthetic flows with a request count and no time limit of their own (none
    /// when the run has one); less the pages a write cache can keep, which may never reach
    /// flash. None when that leaves nothing. A hint for the page map's size, not a result:
    /// where it falls short (traces, timed flows), the map grows as before.
    pub fn expected_pages_written(s: &crate::settings::Settings) -> Option<ExpectedWrites> {
        if s.max_simulated_ps != Picoseconds::MAX {
            return None;
        }
        let spp = s.geo.sectors_per_page as u64;
        let (pages, partial) = s
            .flows
            .iter()
            .filter(|f| f.enabled && f.request_limit != u64::MAX)
            .filter(|f| matches!(f.window_ps, Ok((_, Picoseconds::MAX))))
            .filter_map(|f| {
                let syn = f.synthetic.as_ref()?;
                let pages = super::synthetic::expected_pages_written(syn, f.request_limit, spp)?;
                let partial = match super::synthetic::writes_whole_pages(syn, spp) {
                    true => 0.0,
                    false => pages,
                };
                Some((pages, partial))
            })
            .fold((0.0, 0.0), |(a, b), (p, q)| (a + p, b + q));
        let cached = match &s.cache {
            Some(k) if k.mode.caches_writes() => k.partition_pages.iter().sum::<u64>(),
            _ => 0,
        };
        let pages = (pages.ceil() as u64).saturating_sub(cached);
        let partial_pages = (partial.ceil() as u64).saturating_sub(cached);
        (pages > 0).then_some(ExpectedWrites {
            pages,
            partial_pages,
        })
    }

    /// Every configured flow of `c` (switched-off flows stopped), after checking the rounds
    /// picked for steady state.
    pub fn all(
        c: &crate::config::Config,
        s: &crate::settings::Settings,
    ) -> Result<Vec<Flow>, Error> {
        crate::config::validate_picked_rounds(c).map_err(Error::Config)?;
        c.flows
            .iter()
            .enumerate()
            .map(|(i, f)| {
                Flow::new(
                    &s.flows[i],
                    i,
                    c.interface.sector_bytes,
                    c.run.seed,
                    // fio's sync/datasync reach the device as Flush commands only when a write
                    // cache gives them something to do: without one, results stay as they were.
                    c.cache.mode.caches_writes(),
                )
                .map(|mut flow| {
                    if !f.enabled {
                        flow.stop();
                    }
                    flow
                })
            })
            .collect()
    }
}
