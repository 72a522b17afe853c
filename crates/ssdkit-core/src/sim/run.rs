use super::Simulator;
use crate::config::Config;
use crate::engine::{Picoseconds, PS_PER_MS, PS_PER_S};
use crate::error::Error;
use crate::stats::{RwStats, HISTOGRAM_SIGNIFICANT_DIGITS};
use serde_json::{json, Value};
use std::io::{IsTerminal, Write};
use std::time::Instant;

/// Version of the result JSON layout (docs/results.md). Bump on any incompatible change.
pub const SCHEMA_VERSION: u32 = 1;

/// One completed request, kept when a run asks for the request log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CompletionRecord {
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
    /// Runs the configured workload to its end and returns the result document.
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
            self.pump(f as u32);
        }
        let cap = if c.run.max_simulated_ms > 0.0 {
            (c.run.max_simulated_ms * PS_PER_MS as f64) as u64
        } else {
            u64::MAX
        };
        let total: u64 = self
            .flows
            .iter()
            .map(|f| f.limit())
            .fold(0u64, |a, b| a.saturating_add(b));
        let show = progress && std::io::stderr().is_terminal();
        let mut shown = false;
        let capped;
        loop {
            if self.q.peek_time().is_none_or(|t| t > cap) {
                capped = self.q.peek_time().is_some();
                break;
            }
            let (_, ev) = self.q.pop().expect("peeked");
            self.handle(ev);
            if self.failure.is_some() {
                capped = false;
                break;
            }
            if show && self.q.processed() & 0xFFFF == 0 && wall.elapsed().as_secs_f64() > 1.0 {
                let done: u64 = self.completed.iter().sum();
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
                    self.q.now() as f64 / PS_PER_MS as f64
                );
                shown = true;
            }
        }
        if shown {
            eprint!("\r{}\r", " ".repeat(80));
            let _ = std::io::stderr().flush();
        }
        if let Some(e) = self.failure.take() {
            return Err(e);
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

    fn result_json(&self, c: &Config, wall_s: f64, capped: bool) -> Value {
        let elapsed = self.last_completion;
        let mut device = RwStats::default();
        let flows: Vec<Value> = self
            .flow_stats
            .iter()
            .enumerate()
            .map(|(i, s)| {
                device.read.merge(&s.read);
                device.write.merge(&s.write);
                device.trim.merge(&s.trim);
                let queue = if self.sata { 0 } else { i };
                json!({
                    "index": i,
                    "name": c.flows[i].name,
                    "completed": self.completed[i],
                    "max_in_device": self.fetch.max_in_device[queue],
                    "issued": self.flows[i].issued,
                    "arrival_rate_iops": self.flows[i].arrival_rate_iops(),
                    "priority": c.flows[i].priority,
                    "trace": self.flows[i].trace_summary(),
                    "stats": s.to_json(elapsed),
                })
            })
            .collect();
        let b = &self.backend.stats;
        let f = &self.ftl.stats;
        let programs = b.page_programs;
        let wa = if f.user_page_writes > 0 {
            programs as f64 / f.user_page_writes as f64
        } else {
            0.0
        };
        let completed: u64 = self.completed.iter().sum();
        let events = self.q.processed();
        json!({
            "schema_version": SCHEMA_VERSION,
            "ssdkit_version": env!("CARGO_PKG_VERSION"),
            "seed": c.run.seed,
            "config_hash": c.hash_hex(),
            "config": serde_json::to_value(c).expect("config serialises"),
            "simulated_time_ps": elapsed,
            "simulated_time_s": elapsed as f64 / PS_PER_S as f64,
            "stopped_by_time_cap": capped,
            "wall_time_s": wall_s,
            "events": events,
            "events_per_wall_s": if wall_s > 0.0 { events as f64 / wall_s } else { 0.0 },
            "requests_per_wall_s": if wall_s > 0.0 { completed as f64 / wall_s } else { 0.0 },
            "latency_histogram_significant_digits": HISTOGRAM_SIGNIFICANT_DIGITS,
            "device": {
                "capacity_bytes": self.ftl.logical_pages as u64 * self.geo.page_size as u64,
                "stats": device.to_json(elapsed),
                "flash": {
                    "page_reads": b.page_reads,
                    "page_programs": b.page_programs,
                    "block_erases": b.block_erases,
                    "multiplane_reads": b.multiplane_reads,
                    "multiplane_programs": b.multiplane_programs,
                    "multiplane_erases": b.multiplane_erases,
                    "bus_bytes": b.bus_bytes,
                    "copyback_programs": b.copyback_programs,
                },
                "ftl": {
                    "user_page_writes": f.user_page_writes,
                    "gc_runs": f.gc_runs,
                    "gc_page_moves": f.gc_page_moves,
                    "gc_background_runs": f.gc_background_runs,
                    "gc_copyback_moves": f.gc_copyback_moves,
                    "wl_migrations": f.wl_migrations,
                    "trim_requests": self.trims,
                    "trimmed_pages": f.trimmed_pages,
                    "write_amplification": wa,
                    "rmw_reads": self.rmw_reads,
                    "unmapped_page_reads": self.unmapped_reads,
                },
                "erase_counts": self.ftl.erase_count_summary(),
                "precondition": self.precondition.clone(),
            },
            "flows": flows,
        })
    }
}
