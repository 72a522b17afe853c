//! Building the result document (`crate::result::RunResult`, docs/results.md) at the end of a
//! run, from the figures each layer hands over: the simulator gathers them (`api::report`),
//! this module decides the measured window, the per-flow rates and the totals.

use super::breakdown::Tracker;
use super::completions::{Completions, GcOwners};
use super::steady::Rounds;
use super::timeseries::{DeviceSample, Recorder};
use super::{RwStats, HISTOGRAM_SIGNIFICANT_DIGITS};
use crate::cache::DataCache;
use crate::config::Config;
use crate::engine::{Picoseconds, PS_PER_S};
use crate::flash::BackendStats;
use crate::result::{
    AfterLast, Backlog, CmtDevice, CmtLookups, DeviceResult, EraseCounts, FlowResult, FtlCounts,
    HostResult, RunResult, SCHEMA_VERSION,
};
use crate::tsu::suspension::SuspensionStats;
use crate::workload::flow::Flow;

/// The state of the counters at the last completion of a batch run.
#[derive(Debug, Clone)]
pub(crate) struct AtLast {
    pub time: Picoseconds,
    /// Events processed by then.
    pub events: u64,
    pub flash: BackendStats,
    pub gc_runs: u64,
    pub gc_page_moves: u64,
}

/// Where the run stands: the event queue, the run's end and the wall time.
pub(crate) struct RunState<'a> {
    pub config: &'a Config,
    pub wall_s: f64,
    /// The time cap stopped the run.
    pub capped: bool,
    /// `run.end = "last_completion"` stopped the run loop.
    pub halt: bool,
    pub now: Picoseconds,
    pub last_event_time: Picoseconds,
    /// No event pending and no request inside the device.
    pub quiet: bool,
    pub events: u64,
    pub at_last: Option<&'a AtLast>,
    pub max_simulated_ps: Picoseconds,
    pub capacity_bytes: u64,
}

/// One flow's figures from the layers above this one (host, FTL).
pub(crate) struct FlowAbove<'a> {
    pub max_in_device: u32,
    pub cmt: Option<CmtLookups>,
    /// With the host model: the application's statistics and when it last saw a completion.
    pub app: Option<(&'a RwStats, Picoseconds)>,
}

/// The device's figures from the layers above this one and the simulator's own counters.
pub(crate) struct DeviceAbove {
    /// Without `write_amplification`, which is derived here.
    pub ftl: FtlCounts,
    pub backlog: Option<Backlog>,
    pub erase_counts: EraseCounts,
    pub cmt: Option<CmtDevice>,
    pub app_total: Option<RwStats>,
    pub host: Option<HostResult>,
    pub suspension: Option<SuspensionStats>,
    pub precondition: crate::result::PreconditionRecord,
    pub random_streams: crate::result::RandomStreams,
}

/// The statistics kept in this layer.
pub(crate) struct Kept<'a> {
    pub flows: &'a [Flow],
    pub done: &'a Completions,
    pub flash: &'a BackendStats,
    pub cache: Option<&'a DataCache>,
    pub breakdown: Option<&'a Tracker>,
    pub owners: Option<&'a GcOwners>,
    pub series: &'a Recorder,
    pub steady: &'a Rounds,
    pub sample: DeviceSample,
}

pub(crate) fn build<'a>(
    run: RunState<'_>,
    kept: Kept<'a>,
    device_above: DeviceAbove,
    flow_above: impl Fn(usize) -> FlowAbove<'a>,
) -> RunResult {
    let c = run.config;
    let done = kept.done;
    // The measured window ends when the device went idle, unless the run stopped at its
    // last completion (run.end, the time cap) or is driven step by step (no last
    // completion is known: `at_last` stays None).
    // A step-by-step device with nothing pending and nothing outstanding is idle since its
    // last event, so its window ends there as a batch run's does.
    let device_idle = run.at_last.is_none() && kept.flows.iter().any(|f| f.issued > 0) && run.quiet;
    let idle = match run.at_last {
        Some(_) if !run.capped && !run.halt => Some(run.now.max(done.last())),
        None if device_idle => Some(run.last_event_time.max(done.last())),
        _ => None,
    };
    let elapsed = idle.unwrap_or(done.last());
    let mut ftl = device_above.ftl;
    let b = kept.flash;
    let after_last_completion = match (run.at_last, idle) {
        (Some(a), Some(end)) => Some(AfterLast {
            time_ps: end - a.time,
            page_reads: b.page_reads - a.flash.page_reads,
            page_programs: b.page_programs - a.flash.page_programs,
            block_erases: b.block_erases - a.flash.block_erases,
            gc_runs: ftl.gc_runs - a.gc_runs,
            gc_page_moves: ftl.gc_page_moves - a.gc_page_moves,
        }),
        _ => None,
    };
    let mut device = RwStats::default();
    let cache_counts = |i: usize| kept.cache.map(|k| k.flow_counts(i));
    let flows: Vec<FlowResult> = (0..done.flows())
        .map(|i| {
            let s = done.stats(i);
            device.read.merge(&s.read);
            device.write.merge(&s.write);
            device.trim.merge(&s.trim);
            device.flush.merge(&s.flush);
            let flow = &kept.flows[i];
            // A flow's rates are over its own active interval, as fio reports them: a
            // flow that ran 100 ms of a 19 s run is not diluted by the other 18.9 s.
            let active_until = |last: Picoseconds| match flow.first_arrival {
                Some(first) if done.completed(i) > 0 => last.saturating_sub(first),
                _ => 0,
            };
            let active_ps = active_until(done.flow_last(i));
            let above = flow_above(i);
            FlowResult {
                index: i as u32,
                name: c.flows[i].name.clone(),
                completed: done.completed(i),
                max_in_device: above.max_in_device,
                issued: flow.issued,
                arrival_rate_iops: flow.arrival_rate_iops(),
                priority: c.flows[i].priority,
                trace: flow.trace_summary(),
                active_time_s: active_ps as f64 / PS_PER_S as f64,
                stats: s.summary(active_ps),
                cmt: above.cmt,
                app_stats: above
                    .app
                    .map(|(stats, last_seen)| stats.summary(active_until(last_seen))),
                cache: cache_counts(i),
                latency_breakdown: kept.breakdown.map(|b| b.flow(i).summary()),
                gc_page_moves: kept.owners.map(|o| o.moves(i)),
            }
        })
        .collect();
    ftl.write_amplification = if ftl.user_page_writes > 0 {
        b.page_programs as f64 / ftl.user_page_writes as f64
    } else {
        0.0
    };
    let completed = done.total();
    let per_s = |n: u64| {
        if run.wall_s > 0.0 {
            n as f64 / run.wall_s
        } else {
            0.0
        }
    };
    RunResult {
        schema_version: SCHEMA_VERSION,
        ssdkit_version: env!("CARGO_PKG_VERSION").to_string(),
        seed: c.run.seed,
        config_hash: c.hash_hex(),
        simulated_time_ps: elapsed,
        simulated_time_s: elapsed as f64 / PS_PER_S as f64,
        last_completion_ps: done.last(),
        device_idle_ps: idle,
        after_last_completion,
        backlog: device_above.backlog,
        stopped_by_time_cap: run.capped,
        wall_time_s: run.wall_s,
        events: run.events,
        events_per_wall_s: per_s(run.events),
        requests_per_wall_s: per_s(completed),
        latency_histogram_significant_digits: HISTOGRAM_SIGNIFICANT_DIGITS,
        device: DeviceResult {
            capacity_bytes: run.capacity_bytes,
            stats: device.summary(elapsed),
            flash: b.clone(),
            ftl,
            cache: kept.cache.map(|k| {
                let mut totals = crate::cache::CacheCounts::default();
                for i in 0..k.flows() {
                    totals.merge(&cache_counts(i).unwrap_or_default());
                }
                let (dram_accesses, dram_busy_ps) = k.dram_use();
                crate::result::CacheResult {
                    mode: k.mode(),
                    capacity_pages: k.capacity_pages(),
                    pages_at_end: k.pages(),
                    dram_accesses,
                    dram_busy_us: dram_busy_ps as f64 / crate::engine::PS_PER_US as f64,
                    totals,
                }
            }),
            erase_counts: device_above.erase_counts,
            cmt: device_above.cmt,
            app_stats: device_above.app_total.map(|a| a.summary(elapsed)),
            host: device_above.host,
            suspension: device_above.suspension,
            latency_breakdown: kept.breakdown.map(|b| b.total().summary()),
            precondition: device_above.precondition,
            random_streams: device_above.random_streams,
        },
        flows,
        timeseries: kept.series.series(run.now, kept.sample),
        steady_state: kept.steady.finish(
            run.now,
            kept.sample,
            run.capped.then_some(run.max_simulated_ps),
            done.last(),
        ),
        emulator: None,
        config: c.clone(),
    }
}
