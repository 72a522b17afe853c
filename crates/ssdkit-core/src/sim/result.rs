//! Building the result document (`crate::result::RunResult`, docs/results.md) at the end of a
//! run.

use super::Simulator;
use crate::config::Config;
use crate::engine::PS_PER_S;
use crate::result::{AfterLast, DeviceResult, FlowResult, FtlCounts, RunResult};
use crate::stats::{RwStats, HISTOGRAM_SIGNIFICANT_DIGITS};
use serde_json::Value;

pub use crate::result::SCHEMA_VERSION;

impl Simulator {
    /// The result document of a run driven step by step (never capped).
    pub(crate) fn result_document(&self, c: &Config, wall_s: f64) -> Value {
        self.result_json(c, wall_s, false)
    }

    /// The document as JSON (fields in declaration order: the configuration last).
    pub(super) fn result_json(&self, c: &Config, wall_s: f64, capped: bool) -> Value {
        serde_json::to_value(self.result(c, wall_s, capped)).expect("result serialises")
    }

    pub(crate) fn result(&self, c: &Config, wall_s: f64, capped: bool) -> RunResult {
        // The measured window ends when the device went idle, unless the run stopped at its
        // last completion (run.end, the time cap) or is driven step by step (no last
        // completion is known: `at_last` stays None).
        // A step-by-step device with nothing pending and nothing outstanding is idle since its
        // last event, so its window ends there as a batch run's does.
        let device_idle = self.at_last.is_none()
            && self.flows.iter().any(|f| f.issued > 0)
            && self.q.is_empty()
            && self.outstanding() == 0;
        let idle = match &self.at_last {
            Some(_) if !capped && !self.halt => Some(self.q.now().max(self.last_completion)),
            None if device_idle => Some(self.q.last_event_time().max(self.last_completion)),
            _ => None,
        };
        let elapsed = idle.unwrap_or(self.last_completion);
        let after_last_completion = match (&self.at_last, idle) {
            (Some(a), Some(end)) => {
                let (b, f) = (&self.backend.stats, self.ftl.stats());
                Some(AfterLast {
                    time_ps: end - a.time,
                    page_reads: b.page_reads - a.flash.page_reads,
                    page_programs: b.page_programs - a.flash.page_programs,
                    block_erases: b.block_erases - a.flash.block_erases,
                    gc_runs: f.gc_runs - a.gc_runs,
                    gc_page_moves: f.gc_page_moves - a.gc_page_moves,
                })
            }
            _ => None,
        };
        let backlog = self.halt.then(|| self.ftl.backlog());
        let mut device = RwStats::default();
        let cache_counts = |i: usize| self.cache.as_ref().map(|k| k.flow_counts(i));
        let flows: Vec<FlowResult> = self
            .flow_stats
            .iter()
            .enumerate()
            .map(|(i, s)| {
                device.read.merge(&s.read);
                device.write.merge(&s.write);
                device.trim.merge(&s.trim);
                device.flush.merge(&s.flush);
                // A flow's rates are over its own active interval, as fio reports them: a
                // flow that ran 100 ms of a 19 s run is not diluted by the other 18.9 s.
                let active_ps = match self.flows[i].first_arrival {
                    Some(first) if self.completed[i] > 0 => {
                        self.flow_last_completion[i].saturating_sub(first)
                    }
                    _ => 0,
                };
                FlowResult {
                    index: i as u32,
                    name: c.flows[i].name.clone(),
                    completed: self.completed[i],
                    max_in_device: self.host.max_in_device(crate::ids::FlowId(i as u32)),
                    issued: self.flows[i].issued,
                    arrival_rate_iops: self.flows[i].arrival_rate_iops(),
                    priority: c.flows[i].priority,
                    trace: self.flows[i].trace_summary(),
                    active_time_s: active_ps as f64 / PS_PER_S as f64,
                    stats: s.summary(active_ps),
                    cmt: self.ftl.cmt_flow_result(i),
                    app_stats: self.host_side.as_ref().map(|h| {
                        let active = match self.flows[i].first_arrival {
                            Some(first) if self.completed[i] > 0 => {
                                h.flow_last_seen(i).saturating_sub(first)
                            }
                            _ => 0,
                        };
                        h.app_stats(i).summary(active)
                    }),
                    cache: cache_counts(i),
                    latency_breakdown: self.bd.as_ref().map(|b| b.flow(i).summary()),
                    gc_page_moves: self.owners.as_ref().map(|o| o.moves[i]),
                }
            })
            .collect();
        let b = &self.backend.stats;
        let f = self.ftl.stats();
        let programs = b.page_programs;
        let wa = if f.user_page_writes > 0 {
            programs as f64 / f.user_page_writes as f64
        } else {
            0.0
        };
        let completed: u64 = self.completed.iter().sum();
        let events = self.q.processed();
        let per_s = |n: u64| if wall_s > 0.0 { n as f64 / wall_s } else { 0.0 };
        RunResult {
            schema_version: SCHEMA_VERSION,
            ssdkit_version: env!("CARGO_PKG_VERSION").to_string(),
            seed: c.run.seed,
            config_hash: c.hash_hex(),
            simulated_time_ps: elapsed,
            simulated_time_s: elapsed as f64 / PS_PER_S as f64,
            last_completion_ps: self.last_completion,
            device_idle_ps: idle,
            after_last_completion,
            backlog,
            stopped_by_time_cap: capped,
            wall_time_s: wall_s,
            events,
            events_per_wall_s: per_s(events),
            requests_per_wall_s: per_s(completed),
            latency_histogram_significant_digits: HISTOGRAM_SIGNIFICANT_DIGITS,
            device: DeviceResult {
                capacity_bytes: self.settings.sizes.capacity_bytes,
                stats: device.summary(elapsed),
                flash: b.clone(),
                ftl: FtlCounts {
                    user_page_writes: f.user_page_writes,
                    gc_runs: f.gc_runs,
                    gc_page_moves: f.gc_page_moves,
                    gc_background_runs: f.gc_background_runs,
                    gc_copyback_moves: f.gc_copyback_moves,
                    wl_migrations: f.wl_migrations,
                    trim_requests: self.trims,
                    trimmed_pages: f.trimmed_pages,
                    write_amplification: wa,
                    rmw_reads: self.rmw_reads,
                    unmapped_page_reads: self.unmapped_reads,
                    pages_mapped_by_reads: self.mapped_by_reads,
                },
                cache: self.cache.as_ref().map(|k| {
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
                erase_counts: self.ftl.erase_count_summary(),
                cmt: self.ftl.cmt_device_result(b.page_programs, b.page_reads),
                app_stats: self
                    .host_side
                    .as_ref()
                    .map(|h| h.app_total().summary(elapsed)),
                host: self.host_side.as_ref().map(|h| h.result()),
                suspension: self.susp.as_ref().map(|s| s.result()),
                latency_breakdown: self.bd.as_ref().map(|b| b.total().summary()),
                precondition: self.precondition.clone(),
                random_streams: self.random_streams.clone(),
            },
            flows,
            timeseries: self.series.series(self.q.now(), self.device_sample()),
            steady_state: self.steady.finish(
                self.q.now(),
                self.device_sample(),
                capped.then_some(self.settings.max_simulated_ps),
                self.last_completion,
            ),
            config: c.clone(),
        }
    }
}
