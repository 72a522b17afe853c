//! The free pool of the preconditioned state: which steady state is built.
//!
//! A timed run holds one of two pools (docs/ftl.md, "Steady state and the GC thresholds"):
//! - under a writer that outpaces GC, user operations go before GC until a plane is down to its
//!   reserve, so the pool drains to the reserve and stays there, GC paid in the foreground;
//! - with `ftl.gc_refill`, under a load GC can keep up with, GC refills each plane to its start
//!   threshold.
//!
//! The pool decides the spare really left to hold data, and so the write amplification: on a
//! 7 % spare device a 5 % start threshold leaves 2 % (greedy WA about 22), the reserve 6.5 %
//! (greedy WA about 7.7). Building the wrong one makes a run drift from one steady state to the
//! other for millions of writes. With GC started once per block opened (the default) the pool
//! never refills, so `auto` builds the reserve; with `ftl.gc_refill` it compares the flows'
//! offered write load with what the back end sustains at the start threshold.

use super::meanfield::{self, MfPolicy};
use super::Footprint;
use crate::config::{Arrival, Config, FlowConfig, FreePool, GcPolicy, Replay, SizeDist};
use crate::settings::Settings;

/// The pool a preconditioned state keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PoolLevel {
    /// Reserve blocks plus the partly written frontiers.
    Reserve,
    /// The GC start threshold plus half a victim's gain.
    #[default]
    GcStart,
}

impl PoolLevel {
    pub fn name(self) -> &'static str {
        match self {
            PoolLevel::Reserve => "reserve",
            PoolLevel::GcStart => "gc_start",
        }
    }
}

/// Free pages per plane the reserve level averages: the reserve blocks, the user frontier
/// half written and the GC frontier half written (user writes take a new block only when GC
/// has freed one above the reserve, so whole free blocks stay at the reserve).
pub fn reserve_level_pages(s: &Settings) -> u64 {
    let ppb = s.geo.pages_per_block as u64;
    s.sizes.reserve_blocks as u64 * ppb + ppb
}

/// Seconds a die spends on a page program and a page read (mean over page types, with the
/// page's transfer) and on a block erase.
fn page_times(s: &Settings) -> (f64, f64, f64) {
    let t = &s.timing;
    let mean = |v: &[u64]| v.iter().sum::<u64>() as f64 / v.len() as f64 * 1e-12;
    let xfer = *t.xfer_ps.last().expect("a page has sectors") as f64 * 1e-12;
    (
        mean(&t.program_ps) + xfer,
        mean(&t.read_ps) + xfer,
        t.erase_ps as f64 * 1e-12,
    )
}

fn mean_request_bytes(f: &FlowConfig) -> f64 {
    match f.size {
        SizeDist::Fixed | SizeDist::Normal => f.request_bytes as f64,
        SizeDist::Uniform => (f.size_min_bytes + f.size_max_bytes) as f64 / 2.0,
        SizeDist::List => {
            let w: f64 = f.size_list.iter().map(|e| e.weight).sum();
            f.size_list
                .iter()
                .map(|e| e.bytes as f64 * e.weight)
                .sum::<f64>()
                / w
        }
    }
}

/// Write pages per second a flow offers at most: open-loop flows their rate; closed-loop
/// flows their queue depth over the shortest time a request can take on the back end (each
/// outstanding request is served as fast as a die allows). A timed trace offers an unknown
/// rate, taken as none (traces are usually far below saturation; set `free_pool` to
/// `reserve` to replay one as a saturating writer).
fn offered_write_pages_per_s(f: &FlowConfig, c: &Config, s: &Settings) -> f64 {
    let page = c.flash.page_size_bytes as f64;
    let (t_write, t_read, _) = page_times(s);
    if !f.trace.is_empty() {
        return match f.replay {
            Replay::Closed => f.queue_depth as f64 / t_write,
            Replay::Timed => 0.0,
        };
    }
    let wf = 1.0 - f.read_fraction - f.trim_fraction;
    if wf <= 0.0 {
        return 0.0;
    }
    let pages = (mean_request_bytes(f) / page).ceil().max(1.0);
    let rate = match f.arrival {
        Arrival::Closed => {
            let per_request = pages * (wf * t_write + f.read_fraction * t_read);
            f.queue_depth as f64 / per_request
        }
        Arrival::Onoff => f.rate_iops * f.on_ms / (f.on_ms + f.off_ms),
        _ => f.rate_iops,
    };
    rate * wf * pages
}

/// The level to build, and the record of why (it goes into the result).
/// The free pool chosen and why, for the preconditioning record (and the state key).
#[derive(serde::Serialize)]
pub struct PoolRecord {
    pub free_pool: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub free_pool_auto: Option<String>,
}

impl PoolRecord {
    fn new(level: PoolLevel, why: Option<String>) -> Self {
        Self {
            free_pool: level.name().to_string(),
            free_pool_auto: why,
        }
    }
}

pub fn resolve(c: &Config, s: &Settings, fp: &Footprint) -> (PoolLevel, PoolRecord) {
    match c.precondition.free_pool {
        FreePool::Reserve => {
            return (
                PoolLevel::Reserve,
                PoolRecord::new(PoolLevel::Reserve, None),
            )
        }
        FreePool::GcStart => {
            return (
                PoolLevel::GcStart,
                PoolRecord::new(PoolLevel::GcStart, None),
            )
        }
        FreePool::Auto => {}
    }
    if !c.ftl.gc_refill || c.ftl.gc_foreground {
        // One collection per block opened never refills the pool: it holds wherever writes
        // left it, and any writer faster than GC drains it to the reserve, where it stays.
        let why = if c.ftl.gc_foreground {
            "ftl.gc_foreground: GC starts only at the reserve"
        } else {
            "one collection per block opened below the GC start threshold (ftl.gc_refill = false) never refills the pool: writes leave it at the reserve"
        };
        return (
            PoolLevel::Reserve,
            PoolRecord::new(PoolLevel::Reserve, Some(why.to_string())),
        );
    }
    let g = s.geo;
    let ppb = g.pages_per_block;
    let planes = g.planes() as u64;
    // Write amplification at the start threshold, on a plane's share of the footprint.
    let hot = fp.pages().div_ceil(planes);
    let start_blocks = s.sizes.gc_start_free_pages.div_ceil(ppb as u64);
    let cold_blocks = s
        .sizes
        .logical_pages
        .div_ceil(planes)
        .saturating_sub(hot)
        .div_ceil(ppb as u64);
    let k = (g.blocks_per_plane as u64).saturating_sub(cold_blocks + start_blocks);
    let policy = match c.ftl.gc_policy {
        GcPolicy::DChoices { d } => MfPolicy::DChoices(d),
        GcPolicy::Random {} => MfPolicy::Random,
        GcPolicy::Fifo {} => MfPolicy::Fifo,
        GcPolicy::Greedy {} | GcPolicy::CostBenefit {} => MfPolicy::Greedy,
    };
    let wa = if hot == 0 {
        1.0
    } else {
        // A start threshold that leaves no room for the data cannot be held: a writer drains
        // the pool whatever its rate.
        meanfield::write_amplification(policy, k, ppb, hot).unwrap_or(f64::INFINITY)
    };
    let (t_write, t_read, t_erase) = page_times(s);
    // Die time one user page costs: its program, WA - 1 moves (a read and a program, both
    // with their transfer), and its share of the erases.
    let per_page = t_write + (wa - 1.0) * (t_read + t_write) + wa / ppb as f64 * t_erase;
    let sustained = g.dies() as f64 / per_page;
    let offered: f64 = c
        .flows
        .iter()
        .map(|f| offered_write_pages_per_s(f, c, s))
        .sum();
    let level = if offered > sustained {
        PoolLevel::Reserve
    } else {
        PoolLevel::GcStart
    };
    let why = format!(
        "ftl.gc_refill: the flows offer up to {offered:.0} write pages/s; at the GC start threshold (WA {wa:.2}) the back end sustains {sustained:.0}"
    );
    (level, PoolRecord::new(level, Some(why)))
}
