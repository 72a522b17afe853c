//! Gathering the layers' figures for the result document at the end of a batch run or
//! whenever a `Device` asks; `stats::report` builds it.

use crate::config::Config;
use crate::result::{FtlCounts, RunResult};
use crate::sim::Simulator;
use crate::stats::report::{self, DeviceAbove, FlowAbove, Kept, RunState};
use serde_json::Value;

impl Simulator {
    /// The result document of a run driven step by step (never capped).
    pub(crate) fn result_document(&self, c: &Config, wall_s: f64) -> Value {
        self.result_json(c, wall_s, false)
    }

    /// The document as JSON (fields in declaration order: the configuration last).
    pub(crate) fn result_json(&self, c: &Config, wall_s: f64, capped: bool) -> Value {
        serde_json::to_value(self.result(c, wall_s, capped)).expect("result serialises")
    }

    pub(crate) fn result(&self, c: &Config, wall_s: f64, capped: bool) -> RunResult {
        let (b, f) = (&self.backend.stats, self.ftl.stats());
        let run = RunState {
            config: c,
            wall_s,
            capped,
            halt: self.marks.halt,
            now: self.q.now(),
            last_event_time: self.q.last_event_time(),
            quiet: self.q.is_empty() && self.outstanding() == 0,
            events: self.q.processed(),
            at_last: self.marks.at_last.as_ref(),
            max_simulated_ps: self.settings.max_simulated_ps,
            capacity_bytes: self.settings.sizes.capacity_bytes,
        };
        let kept = Kept {
            flows: &self.flows,
            done: &self.done,
            flash: b,
            cache: self.cache.as_deref(),
            breakdown: self.bd.as_deref(),
            owners: self.owners.as_deref(),
            series: &self.marks.series,
            steady: &self.marks.steady,
            sample: self.ftl.sample(self.backend.stats.page_programs),
        };
        let device = DeviceAbove {
            ftl: FtlCounts {
                user_page_writes: f.user_page_writes,
                gc_runs: f.gc_runs,
                gc_page_moves: f.gc_page_moves,
                gc_background_runs: f.gc_background_runs,
                gc_copyback_moves: f.gc_copyback_moves,
                wl_migrations: f.wl_migrations,
                trim_requests: f.trim_requests,
                trimmed_pages: f.trimmed_pages,
                write_amplification: 0.0,
                rmw_reads: f.rmw_reads,
                unmapped_page_reads: f.unmapped_page_reads,
                pages_mapped_by_reads: f.pages_mapped_by_reads,
                merges: f.merges.if_any(),
            },
            backlog: self.marks.halt.then(|| self.ftl.backlog()),
            erase_counts: self.ftl.erase_count_summary(),
            cmt: self.ftl.cmt_device_result(b.page_programs, b.page_reads),
            app_total: self.host_side.as_ref().map(|h| h.app_total()),
            host: self.host_side.as_ref().map(|h| h.result()),
            suspension: self.susp.as_ref().map(|s| s.result()),
            precondition: self.precondition.clone(),
            random_streams: self.random_streams.clone(),
        };
        report::build(run, kept, device, |i| FlowAbove {
            max_in_device: self.host.max_in_device(crate::ids::FlowId(i as u32)),
            cmt: self.ftl.cmt_flow_result(i),
            app: self
                .host_side
                .as_ref()
                .map(|h| (h.app_stats(i), h.flow_last_seen(i))),
        })
    }
}
