//! Settings: the configuration resolved once, at load, into the values components read
//! (geometry, logical pages, GC reserve and start points in pages, times in picoseconds, the
//! stripe table, each flow's address range and pinned planes). Derived values are computed
//! here and nowhere else, so preconditioning, snapshots and the timed simulator all agree on
//! them; the sizes in pages and blocks come from `config::Sizes`, which validation checks.
//!
//! Above `config` and `flash` (docs/architecture.md): the flash geometry and timing are part
//! of what a configuration resolves to, and every other layer is built from these settings.

use crate::config::{
    AddressPattern, Arbitration, Arrival, Backwards, CacheConfig, CacheMode, CacheSharing,
    CacheWriteBack, CompletionMode, Config, DataPointers, DelimitedConfig, FlowConfig, FlushScope,
    Fold, GcPolicy, InterfaceType, LinkModel, Medium, Placement, Priority, SizeDist, Sizes,
    SteadyTrack, TraceFormat, TsuConfig,
};
use crate::engine::{us_to_ps, Picoseconds, PS_PER_MS, PS_PER_NS, PS_PER_S};
use crate::flash::{Geometry, Timing};

/// One flow's resolved address range, pinning and (synthetic) request generators.
#[derive(Debug, Clone, PartialEq)]
pub struct FlowSettings {
    /// First byte of the flow's range.
    pub start_bytes: u64,
    /// Length of the range in bytes (range_bytes, or to the end of the capacity).
    pub range_bytes: u64,
    /// Planes the flow's writes may use, in allocation order; None = all.
    pub planes: Option<Box<[u32]>>,
    /// The request generators of an enabled synthetic flow.
    pub synthetic: Option<SyntheticSettings>,
    /// The replay of an enabled trace flow.
    pub trace: Option<TraceSettings>,
    /// `flow.name`, for messages.
    pub name: String,
    pub enabled: bool,
    /// Requests arrive by time (synthetic arrivals, or a timed trace) rather than as others
    /// complete.
    pub open_loop: bool,
    /// Most requests outstanding: `flow.queue_depth` (closed loop) or, open loop, the NVMe
    /// submission queue's entries (for SATA the host's queue in front of the NCQ;
    /// `interface.io_queue_depth`).
    pub cap: u32,
    /// When the flow starts and stops issuing (u64::MAX: no time limit), picoseconds; Err
    /// names the keys beyond simulated time (a configuration that skipped validation).
    pub window_ps: Result<(Picoseconds, Picoseconds), String>,
    /// `flow.requests` and `flow.io_bytes`; u64::MAX = no limit.
    pub request_limit: u64,
    pub byte_limit: u64,
    /// `flow.flush_every`; 0 = no flushes.
    pub flush_every: u64,
}

/// A trace flow's replay resolved.
#[derive(Debug, Clone, PartialEq)]
pub struct TraceSettings {
    pub path: String,
    pub format: TraceFormat,
    /// The columns of a `trace_format = "delimited"` trace: a description that the trace
    /// reader compiles into its parser.
    pub delimited: Option<DelimitedConfig>,
    pub skip_malformed: bool,
    /// Device numbers kept; empty = all.
    pub devices: Vec<u64>,
    pub fold: Fold,
    pub align_bytes: u64,
    pub time_scale: f64,
    /// `flow.start_ms`, added to each timed arrival, picoseconds.
    pub start_ps: Picoseconds,
    pub backwards: Backwards,
}

impl TraceSettings {
    fn resolve(f: &FlowConfig) -> Self {
        Self {
            path: f.trace.clone(),
            format: f.trace_format,
            delimited: f.delimited.clone(),
            skip_malformed: f.skip_malformed,
            devices: f.devices.clone(),
            fold: f.fold,
            align_bytes: f.align_bytes,
            time_scale: f.time_scale,
            start_ps: (f.start_ms * PS_PER_MS as f64) as Picoseconds,
            backwards: f.backwards,
        }
    }
}

/// The start and stop of flow `index` in picoseconds; Err names the key that does not fit
/// in simulated time.
fn flow_window(f: &FlowConfig, index: usize) -> Result<(Picoseconds, Picoseconds), String> {
    let start_ps = ms_to_ps(f.start_ms, index, "start_ms")?;
    let stop_ps = if f.duration_ms == 0.0 {
        Picoseconds::MAX
    } else {
        ms_to_ps(f.duration_ms, index, "duration_ms")?
            .checked_add(start_ps)
            .ok_or_else(|| {
                format!(
                    "keys `flow.{index}.start_ms` + `flow.{index}.duration_ms` end beyond simulated time (2^64 ps, about 213 days)"
                )
            })?
    };
    Ok((start_ps, stop_ps))
}

/// A validated time in milliseconds as picoseconds; an error naming the key if it does not
/// fit (a configuration that skipped validation).
fn ms_to_ps(ms: f64, index: usize, name: &str) -> Result<Picoseconds, String> {
    let ps = ms * PS_PER_MS as f64;
    // 2^64 as f64: the first value that does not fit.
    if (0.0..18_446_744_073_709_551_616.0).contains(&ps) {
        Ok(ps as Picoseconds)
    } else {
        Err(format!(
            "key `flow.{index}.{name}` = {ms} is beyond simulated time (2^64 ps, about 213 days)"
        ))
    }
}

/// A synthetic flow's request sizes, in sectors.
#[derive(Debug, Clone, PartialEq)]
pub enum SizeSettings {
    Fixed(u32),
    Uniform {
        min: u32,
        span: u32,
    },
    /// Draws above `max` are cut to it.
    Normal {
        mean: f64,
        sd: f64,
        max: u32,
    },
    /// Cumulative weights and the sizes they pick.
    List {
        cum: Vec<f64>,
        sectors: Vec<u32>,
    },
}

impl SizeSettings {
    /// The largest request drawn, in sectors.
    pub fn largest(&self) -> u32 {
        match self {
            SizeSettings::Fixed(s) => *s,
            SizeSettings::Uniform { min, span } => min + span,
            SizeSettings::Normal { max, .. } => *max,
            SizeSettings::List { sectors, .. } => sectors.iter().copied().max().unwrap_or(1),
        }
    }
}

/// A synthetic flow's address pattern over its `n_slots` aligned start positions.
#[derive(Debug, Clone, PartialEq)]
pub enum PatternSettings {
    Uniform,
    /// `stride` sectors apart from `first` (sectors into the range); a `random` fraction of
    /// requests go to a uniform slot.
    Sequential {
        stride: u64,
        first: u64,
        random: f64,
    },
    /// The first `hot` slots take a `hot_access` fraction of the requests.
    HotCold {
        hot: u64,
        hot_access: f64,
    },
    Zipf {
        theta: f64,
    },
    /// The exponent of the power law of `flow.pareto_h`.
    Pareto {
        pow: f64,
    },
    /// A standard deviation in slots.
    Normal {
        sd: f64,
    },
}

/// A synthetic flow resolved: sizes and addresses in sectors, arrival gaps in picoseconds.
#[derive(Debug, Clone, PartialEq)]
pub struct SyntheticSettings {
    pub read_fraction: f64,
    pub trim_fraction: f64,
    pub sizes: SizeSettings,
    pub pattern: PatternSettings,
    pub start_sector: u64,
    pub range_sectors: u64,
    pub align_sectors: u64,
    /// Aligned start positions from which the largest request still fits in the range.
    pub n_slots: u64,
    /// `flow.scramble`: slots are visited in a pseudo-random permutation.
    pub scramble: bool,
    /// The arrival process of an open-loop flow; None when closed.
    pub arrival: Option<ArrivalSettings>,
}

/// An open-loop flow's arrival process.
#[derive(Debug, Clone, PartialEq)]
pub struct ArrivalSettings {
    pub kind: Arrival,
    /// Mean gap between arrivals (1 / `flow.rate_iops`), picoseconds.
    pub gap_ps: f64,
    /// Mean ON and OFF periods (`flow.on_ms`, `flow.off_ms`), picoseconds.
    pub on_mean_ps: f64,
    pub off_mean_ps: f64,
}

impl SyntheticSettings {
    /// An enabled synthetic flow `f` over `range_bytes` of a device with sectors of
    /// `sector_bytes`; the configuration was validated against its capacity.
    pub fn resolve(f: &FlowConfig, range_bytes: u64, sector_bytes: u32) -> Self {
        let sector = sector_bytes as u64;
        let range_sectors = range_bytes / sector;
        let align_sectors = f.effective_align() / sector;
        let sizes = match f.size {
            SizeDist::Fixed => SizeSettings::Fixed((f.request_bytes / sector) as u32),
            SizeDist::Uniform => SizeSettings::Uniform {
                min: (f.size_min_bytes / sector) as u32,
                span: ((f.size_max_bytes - f.size_min_bytes) / sector) as u32,
            },
            SizeDist::Normal => {
                let (mean, sd) = (
                    f.request_bytes as f64 / sector as f64,
                    f.size_stdev_bytes as f64 / sector as f64,
                );
                // Six standard deviations bound the draws, so slots near the range end
                // stay usable however wide the distribution.
                let cap = ((mean + 6.0 * sd).ceil() as u64).clamp(mean as u64, range_sectors);
                SizeSettings::Normal {
                    mean,
                    sd,
                    max: cap.min(u32::MAX as u64) as u32,
                }
            }
            SizeDist::List => {
                let mut acc = 0.0;
                let cum = f
                    .size_list
                    .iter()
                    .map(|e| {
                        acc += e.weight;
                        acc
                    })
                    .collect();
                SizeSettings::List {
                    cum,
                    sectors: f
                        .size_list
                        .iter()
                        .map(|e| (e.bytes / sector) as u32)
                        .collect(),
                }
            }
        };
        let largest = sizes.largest() as u64;
        let n_slots = (range_sectors.saturating_sub(largest) / align_sectors + 1).max(1);
        let pattern = match f.pattern {
            AddressPattern::Random => PatternSettings::Uniform,
            AddressPattern::Sequential => PatternSettings::Sequential {
                stride: f.stride_bytes / sector,
                first: f.first_offset_bytes / sector,
                random: f.random_fraction,
            },
            AddressPattern::Hotcold => PatternSettings::HotCold {
                hot: ((f.hot_space_fraction * n_slots as f64).round() as u64)
                    .clamp(1, n_slots.saturating_sub(1).max(1)),
                hot_access: f.hot_access_fraction,
            },
            AddressPattern::Zipf => PatternSettings::Zipf {
                theta: f.zipf_theta,
            },
            AddressPattern::Pareto => PatternSettings::Pareto {
                pow: f.pareto_h.ln() / (1.0 - f.pareto_h).ln(),
            },
            AddressPattern::Normal => PatternSettings::Normal {
                sd: f.normal_stdev_fraction * n_slots as f64,
            },
        };
        Self {
            read_fraction: f.read_fraction,
            trim_fraction: f.trim_fraction,
            sizes,
            pattern,
            start_sector: f.start_bytes / sector,
            range_sectors,
            align_sectors,
            n_slots,
            scramble: f.scramble,
            arrival: f.is_open_loop().then(|| ArrivalSettings {
                kind: f.arrival,
                gap_ps: PS_PER_S as f64 / f.rate_iops,
                on_mean_ps: f.on_ms * PS_PER_MS as f64,
                off_mean_ps: f.off_ms * PS_PER_MS as f64,
            }),
        }
    }
}

/// The resolved configuration. Built by `Settings::resolve` from a configuration that passed
/// the range checks of `validate`; never panics on one.
#[derive(Debug, Clone)]
pub struct Settings {
    pub geo: Geometry,
    /// Flash durations in picoseconds.
    pub timing: Timing,
    /// The sizes in pages and blocks (logical pages, capacity, each plane's share and GC
    /// reserve, the GC start points, the cached mapping table's partitions), as validation
    /// checked them.
    pub sizes: Sizes,
    /// Plane of each stripe unit k (0..planes) in `ftl.allocation_order`.
    pub stripe: Box<[u32]>,
    pub firmware_request_ps: Picoseconds,
    pub firmware_transaction_ps: Picoseconds,
    /// Simulated-time cap (u64::MAX = none).
    pub max_simulated_ps: Picoseconds,
    /// `run.timeseries_window_ms`; 0 = no time series.
    pub timeseries_window_ps: Picoseconds,
    /// The rounds of `[steady_state]`.
    pub steady: SteadySettings,
    /// The data cache; None with `cache.mode = "off"`.
    pub cache: Option<CacheSettings>,
    /// Program/erase suspension; None with `tsu.suspension = "none"`.
    pub suspension: Option<SuspensionSettings>,
    pub sata: bool,
    pub flows: Vec<FlowSettings>,
    /// The host interface: queues, fetch, data pointers, the link.
    pub host: HostSettings,
    /// The FTL's policies.
    pub ftl: FtlSettings,
    /// `run.latency_breakdown`: components record where each request's time went.
    pub latency_breakdown: bool,
}

/// The FTL's policies (`[ftl]`) and the seed of the device's random stream.
#[derive(Debug, Clone, PartialEq)]
pub struct FtlSettings {
    /// `ftl.mapping`: the mapping scheme and its parameters.
    pub mapping: crate::config::Mapping,
    pub gc_policy: GcPolicy,
    /// `ftl.gc_foreground`: GC starts only when user writes are blocked.
    pub gc_foreground: bool,
    /// `ftl.gc_refill`: GC refills the free pool to its start threshold.
    pub gc_refill: bool,
    pub wl_dynamic: bool,
    pub wl_static: bool,
    pub wl_static_threshold: u32,
    pub wl_static_interval: u32,
    pub placement: Placement,
    /// `flash.medium = "in_place"`: pages are overwritten where they are.
    pub in_place: bool,
    /// Seed of the device's streams (GC victims): `precondition.seed`, or `run.seed`.
    pub device_seed: u64,
    /// `ftl.gc_copyback`: GC moves pages inside their plane.
    pub gc_copyback: bool,
    /// `ftl.cmt.mode = "per_flow"`: one mapping-cache partition per flow.
    pub cmt_per_flow: bool,
    /// `ftl.cmt.gc_updates = "batch"`: GC's map updates are written back in batches.
    pub cmt_gc_batch: bool,
    /// `ftl.cmt.granularity = "entry"`: the cache holds single entries (MQSim).
    pub cmt_entry: bool,
    /// `ftl.cmt.translation_pages_at_start = "all"`: the whole map is on flash at start.
    pub cmt_all_at_start: bool,
    /// `ftl.cmt.writebacks = "held"`: write-backs are never programmed (MQSim).
    pub cmt_writebacks_held: bool,
    /// `ftl.cmt.writeback_lru = "front"`: a write-back refreshes its dirty entries (MQSim).
    pub cmt_writeback_front: bool,
    /// `ftl.unmapped_reads`: what a read of a never-written page does.
    pub unmapped_reads: crate::config::UnmappedReads,
}

impl FtlSettings {
    pub fn resolve(c: &Config) -> Self {
        let f = &c.ftl;
        Self {
            mapping: f.mapping,
            gc_policy: f.gc_policy,
            gc_foreground: f.gc_foreground,
            gc_refill: f.gc_refill,
            wl_dynamic: f.wl_dynamic,
            wl_static: f.wl_static,
            wl_static_threshold: f.wl_static_threshold,
            wl_static_interval: f.wl_static_interval,
            placement: f.placement,
            in_place: c.flash.medium == Medium::InPlace,
            gc_copyback: f.gc_copyback,
            cmt_per_flow: f.cmt.mode == crate::config::CmtMode::PerFlow,
            cmt_gc_batch: f.cmt.gc_updates == crate::config::CmtGcUpdates::Batch,
            cmt_entry: f.cmt.granularity == crate::config::CmtGranularity::Entry,
            cmt_all_at_start: f.cmt.translation_pages_at_start == crate::config::CmtStartPages::All,
            cmt_writebacks_held: f.cmt.writebacks == crate::config::CmtWritebacks::Held,
            cmt_writeback_front: f.cmt.writeback_lru == crate::config::CmtWritebackLru::Front,
            unmapped_reads: f.unmapped_reads,
            device_seed: c.precondition_seed(),
        }
    }
}

/// The host interface resolved (`[interface]`, `[pcie]`, the flows' priorities).
#[derive(Debug, Clone, PartialEq)]
pub struct HostSettings {
    /// Device-side queues: one per flow (NVMe), or the one shared NCQ (SATA).
    pub queues: usize,
    /// Requests of one queue inside the device at once: `interface.queue_fetch_size` (NVMe,
    /// MQSim's QueueFetchSize) or `interface.ncq_depth` (SATA).
    pub fetch_limit: u32,
    /// Commands inside the device over all queues (`interface.max_inflight_commands`);
    /// u32::MAX = no limit.
    pub max_inflight: u32,
    /// NVMe weighted round robin with urgent class; None = round robin.
    pub weighted: Option<WeightedArbitration>,
    /// `interface.pipelined_transfers`.
    pub pipelined_transfers: bool,
    /// `interface.data_pointers`, and the sizes its lists are counted in.
    pub data_pointers: DataPointers,
    pub memory_page_bytes: u64,
    pub buffer_extent_bytes: u64,
    /// Bytes per logical sector.
    pub sector_bytes: u64,
    /// Each stage of the SATA host bus adapter (`interface.sata_processing_delay_us`); 0 for
    /// NVMe.
    pub hba_ps: Picoseconds,
    pub link: LinkSettings,
    /// The host's side of a completion (`[host]`).
    pub completion: CompletionSettings,
}

/// `[host]` resolved: how the host learns of completions and what its cores spend on them.
#[derive(Debug, Clone, PartialEq)]
pub struct CompletionSettings {
    pub mode: CompletionMode,
    /// Host cores (`host.cores`, 0 = one per queue).
    pub cores: usize,
    /// MSI-X vectors (`host.vectors`, 0 = one per queue).
    pub vectors: usize,
    /// The host's queue pairs: one per flow.
    pub queues: usize,
    /// Entries of each queue pair (`interface.io_queue_depth`).
    pub queue_entries: u64,
    pub isr_ps: Picoseconds,
    pub scan_ps: Picoseconds,
    pub completion_ps: Picoseconds,
    pub poll_ps: Picoseconds,
    /// Completions per coalesced interrupt, and the aggregation time.
    pub coalesce: usize,
    pub coalesce_ps: Picoseconds,
}

impl CompletionSettings {
    pub fn resolve(c: &Config) -> Self {
        let h = &c.host;
        let queues = c.flows.len();
        let or_queues = |n: u32| if n == 0 { queues } else { n as usize };
        Self {
            mode: h.completion,
            cores: or_queues(h.cores),
            vectors: or_queues(h.vectors),
            queues,
            queue_entries: c.interface.io_queue_depth as u64,
            isr_ps: us_to_ps(h.isr_us),
            scan_ps: us_to_ps(h.queue_scan_us),
            completion_ps: us_to_ps(h.completion_us),
            poll_ps: us_to_ps(h.poll_us),
            coalesce: h.coalesce_completions as usize,
            coalesce_ps: us_to_ps(h.coalesce_time_us),
        }
    }
}

/// `[steady_state]` resolved.
#[derive(Debug, Clone, PartialEq)]
pub struct SteadySettings {
    pub enabled: bool,
    /// `steady_state.round_ms` when enabled; 0 = no rounds, or (rounds on) a length picked
    /// at run time.
    pub round_ps: Picoseconds,
    pub max_rounds: u32,
    pub stop_when_steady: bool,
    pub track: SteadyTrack,
    /// A picked length counts from the first write-back: enabled flows write into a write
    /// cache, which absorbs writes far faster than the flash until it is full.
    pub wait_for_write_back: bool,
}

impl SteadySettings {
    pub fn resolve(c: &Config) -> Self {
        let st = &c.steady_state;
        let writes = c
            .flows
            .iter()
            .any(|f| f.enabled && (f.is_trace() || f.read_fraction < 1.0));
        Self {
            enabled: st.enabled,
            round_ps: if st.enabled {
                st.round_ms
                    .map_or(0, |ms| (ms * PS_PER_MS as f64).round() as u64)
            } else {
                0
            },
            max_rounds: st.max_rounds,
            stop_when_steady: st.stop_when_steady,
            track: st.track,
            wait_for_write_back: c.cache.mode.caches_writes() && writes,
        }
    }
}

/// `[cache]` resolved: the partitions in pages and the DRAM's timing.
#[derive(Debug, Clone, PartialEq)]
pub struct CacheSettings {
    pub mode: CacheMode,
    /// Slots (pages) of each LRU partition: one ("shared") or one per flow.
    pub partition_pages: Vec<u64>,
    /// `cache.sharing = "per_flow"`: a flow's pages go to its own partition.
    pub per_flow: bool,
    /// `cache.flush_scope = "device"`: a Flush waits for every flow's dirty data.
    pub flush_device: bool,
    /// Per flow: `flow.fua`.
    pub fua: Vec<bool>,
    pub sectors_per_page: u32,
    pub sector_bytes: u64,
    pub dram: DramSettings,
    /// `cache.write_back = "mqsim"`: the most sectors write-backs in flight may carry before
    /// writes wait (one page per plane); None: "on_eviction".
    pub mqsim_inflight_sectors: Option<u64>,
}

/// The controller DRAM's timing (`cache.dram_*`) in picoseconds.
#[derive(Debug, Clone, PartialEq)]
pub struct DramSettings {
    pub row_bytes: u64,
    /// tRCD + tCL.
    pub open_ps: Picoseconds,
    pub trp_ps: Picoseconds,
    /// 2 x burst bytes x data rate (MT/s): data time = bytes x 10^6 / this, in picoseconds.
    pub transfer_denominator: u128,
}

fn ns_to_ps(ns: f64) -> Picoseconds {
    (ns * PS_PER_NS as f64).round() as Picoseconds
}

impl DramSettings {
    pub fn resolve(k: &CacheConfig) -> Self {
        Self {
            row_bytes: k.dram_row_bytes,
            open_ps: ns_to_ps(k.dram_trcd_ns) + ns_to_ps(k.dram_tcl_ns),
            trp_ps: ns_to_ps(k.dram_trp_ns),
            transfer_denominator: 2 * k.dram_burst_bytes as u128 * k.dram_data_rate_mts as u128,
        }
    }
}

impl CacheSettings {
    pub fn resolve(c: &Config) -> Option<Self> {
        let f = &c.flash;
        let planes = f.channels as u64
            * f.chips_per_channel as u64
            * f.dies_per_chip as u64
            * f.planes_per_die as u64;
        Self::of(
            &c.cache,
            c.flows.iter().map(|f| f.fua).collect(),
            c.flash.page_size_bytes as u64,
            c.interface.sector_bytes as u64,
        )
        .map(|mut k| {
            if c.cache.write_back == CacheWriteBack::Mqsim {
                k.mqsim_inflight_sectors = Some(planes * k.sectors_per_page as u64);
            }
            k
        })
    }

    /// `[cache]` for flows whose `fua` is given, with pages of `page_bytes` and sectors of
    /// `sector_bytes`; None when off.
    pub fn of(k: &CacheConfig, fua: Vec<bool>, page_bytes: u64, sector_bytes: u64) -> Option<Self> {
        if k.mode == CacheMode::Off {
            return None;
        }
        let flows = fua.len().max(1);
        let pages = k.capacity_bytes / page_bytes;
        let partition_pages = match k.sharing {
            CacheSharing::Shared => vec![pages],
            CacheSharing::PerFlow if k.shares.is_empty() => vec![pages / flows as u64; flows],
            CacheSharing::PerFlow => k
                .shares
                .iter()
                .map(|s| ((pages as f64 * s).floor() as u64).max(1))
                .collect(),
        };
        Some(Self {
            mode: k.mode,
            partition_pages,
            per_flow: k.sharing == CacheSharing::PerFlow,
            flush_device: k.flush_scope == FlushScope::Device,
            fua,
            sectors_per_page: (page_bytes / sector_bytes) as u32,
            sector_bytes,
            dram: DramSettings::resolve(k),
            mqsim_inflight_sectors: None,
        })
    }
}

/// Program/erase suspension (`[tsu]`'s suspension keys) in picoseconds.
#[derive(Debug, Clone, PartialEq)]
pub struct SuspensionSettings {
    pub program: bool,
    pub erase: bool,
    pub writes_suspend_erase: bool,
    /// Suspend only operations with at least this much array time left.
    pub program_above_ps: Picoseconds,
    pub erase_above_ps: Picoseconds,
    pub suspend_program_ps: Picoseconds,
    pub suspend_erase_ps: Picoseconds,
    pub resume_program_ps: Picoseconds,
    pub resume_erase_ps: Picoseconds,
    /// Suspensions of one operation at most.
    pub max: u32,
}

impl SuspensionSettings {
    /// None when `tsu.suspension = "none"`.
    pub fn resolve(t: &TsuConfig) -> Option<Self> {
        let (program, erase) = (t.suspension.program(), t.suspension.erase());
        (program || erase).then(|| Self {
            program,
            erase,
            writes_suspend_erase: t.writes_suspend_erase,
            program_above_ps: us_to_ps(t.program_suspend_above_us),
            erase_above_ps: us_to_ps(t.erase_suspend_above_us),
            suspend_program_ps: us_to_ps(t.suspend_program_us),
            suspend_erase_ps: us_to_ps(t.suspend_erase_us),
            resume_program_ps: us_to_ps(t.resume_program_us),
            resume_erase_ps: us_to_ps(t.resume_erase_us),
            max: t.max_suspensions,
        })
    }
}

/// `interface.arbitration = "weighted"`: each queue's class and the classes' turns.
#[derive(Debug, Clone, PartialEq)]
pub struct WeightedArbitration {
    /// Class of each queue: 0 urgent, 1 high, 2 medium, 3 low.
    pub classes: Vec<u8>,
    /// Commands per turn of the high, medium and low classes (`interface.wrr_*`).
    pub weights: [u32; 3],
}

/// Which wire a link models.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkKind {
    /// PCIe: full duplex, TLPs with header overhead.
    Pcie,
    /// SATA: half duplex, FISes with frame overhead.
    Sata,
    /// `interface.link_model = "ideal"`: transfers take no time.
    Ideal,
}

/// The host link resolved.
#[derive(Debug, Clone, PartialEq)]
pub struct LinkSettings {
    pub kind: LinkKind,
    /// Payload bytes per second (1 for the ideal link, which never uses it).
    pub bytes_per_s: f64,
    /// Bytes each packet adds to its payload (TLP header, SATA frame).
    pub overhead_bytes: u64,
    /// Largest payload of one packet (PCIe max payload size, SATA data FIS).
    pub max_payload_bytes: u64,
    /// Largest read request (PCIe max read request size; unbounded for SATA).
    pub max_read_request_bytes: u64,
    /// A DLLP (Ack, UpdateFC) per this many TLPs received; 0 = none (PCIe modelled only).
    pub ack_every_tlps: u64,
    pub update_fc_every_tlps: u64,
    pub dllp_bytes: u64,
}

/// Payload bytes per second of a SATA link of `gbps` line rate: 8b/10b coded, so 150, 300 and
/// 600 MB/s for SATA 1.5, 3 and 6 Gb/s.
pub fn sata_bytes_per_s(gbps: f64) -> f64 {
    gbps * 1e9 * (8.0 / 10.0) / 8.0
}

/// Payload bytes per second of a PCIe link: lanes x transfer rate x line-code efficiency.
pub fn pcie_bytes_per_s(generation: u32, lanes: u32) -> f64 {
    let (gts, eff) = match generation {
        1 => (2.5e9, 8.0 / 10.0),
        2 => (5.0e9, 8.0 / 10.0),
        3 => (8.0e9, 128.0 / 130.0),
        4 => (16.0e9, 128.0 / 130.0),
        _ => (32.0e9, 128.0 / 130.0),
    };
    lanes as f64 * gts * eff / 8.0
}

impl LinkSettings {
    pub fn resolve(c: &Config) -> Self {
        let i = &c.interface;
        let dllps = i.link_model != LinkModel::Ideal
            && i.kind == InterfaceType::Nvme
            && (c.pcie.ack_every_tlps > 0 || c.pcie.update_fc_every_tlps > 0);
        let (kind, bytes_per_s, overhead, mps, mrrs) = match (i.link_model, i.kind) {
            (LinkModel::Ideal, _) => (LinkKind::Ideal, 1.0, 0, 4096, 4096),
            (_, InterfaceType::Nvme) => (
                LinkKind::Pcie,
                pcie_bytes_per_s(c.pcie.generation, c.pcie.lanes),
                c.pcie.packet_overhead_bytes as u64,
                c.pcie.max_payload_bytes as u64,
                c.pcie.max_read_request_bytes as u64,
            ),
            (_, InterfaceType::Sata) => (
                LinkKind::Sata,
                sata_bytes_per_s(i.sata_gbps),
                i.sata_frame_overhead_bytes as u64,
                i.sata_max_data_fis_bytes as u64,
                u64::MAX,
            ),
        };
        Self {
            kind,
            bytes_per_s,
            overhead_bytes: overhead,
            max_payload_bytes: mps,
            max_read_request_bytes: mrrs,
            ack_every_tlps: if dllps {
                c.pcie.ack_every_tlps as u64
            } else {
                0
            },
            update_fc_every_tlps: if dllps {
                c.pcie.update_fc_every_tlps as u64
            } else {
                0
            },
            dllp_bytes: c.pcie.dllp_bytes as u64,
        }
    }
}

impl HostSettings {
    pub fn resolve(c: &Config) -> Self {
        let i = &c.interface;
        let sata = i.kind == InterfaceType::Sata;
        let (queues, fetch_limit) = if sata {
            (1, i.ncq_depth)
        } else {
            (c.flows.len(), i.queue_fetch_size)
        };
        let weighted =
            (i.arbitration == Arbitration::Weighted && queues == c.flows.len()).then(|| {
                WeightedArbitration {
                    classes: c
                        .flows
                        .iter()
                        .map(|f| match f.priority {
                            Priority::Urgent => 0,
                            Priority::High => 1,
                            Priority::Medium => 2,
                            Priority::Low => 3,
                        })
                        .collect(),
                    weights: [i.wrr_high, i.wrr_medium, i.wrr_low],
                }
            });
        Self {
            queues,
            fetch_limit,
            max_inflight: match i.max_inflight_commands {
                0 => u32::MAX,
                n => n,
            },
            weighted,
            pipelined_transfers: i.pipelined_transfers,
            data_pointers: i.data_pointers,
            memory_page_bytes: i.memory_page_bytes as u64,
            buffer_extent_bytes: i.buffer_extent_bytes as u64,
            sector_bytes: i.sector_bytes as u64,
            hba_ps: if sata {
                us_to_ps(i.sata_processing_delay_us)
            } else {
                0
            },
            link: LinkSettings::resolve(c),
            completion: CompletionSettings::resolve(c),
        }
    }
}

impl Settings {
    pub fn resolve(c: &Config) -> Settings {
        let f = &c.flash;
        let sizes = Sizes::of(c);
        let geo = Geometry::from_config(c);
        let stripe = stripe_table(&c.ftl.allocation_order, &geo);
        let capacity_bytes = sizes.capacity_bytes;
        let flows = c
            .flows
            .iter()
            .enumerate()
            .map(|(i, fl)| {
                let range_bytes = if fl.range_bytes == 0 {
                    capacity_bytes.saturating_sub(fl.start_bytes)
                } else {
                    fl.range_bytes
                };
                FlowSettings {
                    start_bytes: fl.start_bytes,
                    range_bytes,
                    planes: pinned_planes(fl, &geo, &stripe),
                    synthetic: (fl.enabled && !fl.is_trace()).then(|| {
                        SyntheticSettings::resolve(fl, range_bytes, c.interface.sector_bytes)
                    }),
                    trace: (fl.enabled && fl.is_trace()).then(|| TraceSettings::resolve(fl)),
                    name: fl.name.clone(),
                    enabled: fl.enabled,
                    open_loop: fl.is_open_loop(),
                    cap: if fl.is_open_loop() {
                        c.interface.io_queue_depth
                    } else {
                        fl.queue_depth
                    },
                    window_ps: flow_window(fl, i),
                    request_limit: if fl.requests == 0 {
                        u64::MAX
                    } else {
                        fl.requests
                    },
                    byte_limit: if fl.io_bytes == 0 {
                        u64::MAX
                    } else {
                        fl.io_bytes
                    },
                    flush_every: fl.flush_every.unwrap_or(0),
                }
            })
            .collect();
        Settings {
            geo,
            timing: Timing::from_config(f, c.interface.sector_bytes),
            sizes,
            stripe,
            firmware_request_ps: us_to_ps(c.ftl.firmware_request_us),
            firmware_transaction_ps: us_to_ps(c.ftl.firmware_transaction_us),
            max_simulated_ps: if c.run.max_simulated_ms > 0.0 {
                (c.run.max_simulated_ms * PS_PER_MS as f64) as u64
            } else {
                u64::MAX
            },
            timeseries_window_ps: (c.run.timeseries_window_ms * PS_PER_MS as f64).round() as u64,
            steady: SteadySettings::resolve(c),
            cache: CacheSettings::resolve(c),
            suspension: SuspensionSettings::resolve(&c.tsu),
            sata: c.interface.kind == InterfaceType::Sata,
            flows,
            host: HostSettings::resolve(c),
            ftl: FtlSettings::resolve(c),
            latency_breakdown: c.run.latency_breakdown,
        }
    }
}

/// Plane of stripe unit k: `order` (a permutation of "CWDP", fastest-varying first) says
/// which level the unit index walks first.
fn stripe_table(order: &str, g: &Geometry) -> Box<[u32]> {
    let mut levels = [0usize; 4];
    for (i, ch) in order.chars().take(4).enumerate() {
        levels[i] = match ch {
            'C' => 0,
            'W' => 1,
            'D' => 2,
            _ => 3,
        };
    }
    let sizes = [
        g.channels,
        g.chips_per_channel,
        g.dies_per_chip,
        g.planes_per_die,
    ];
    (0..g.planes())
        .map(|mut k| {
            let mut coord = [0u32; 4];
            for &level in &levels {
                coord[level] = k % sizes[level];
                k /= sizes[level];
            }
            g.plane_id(coord[0], coord[1], coord[2], coord[3])
        })
        .collect()
}

fn pinned_planes(f: &FlowConfig, geo: &Geometry, stripe: &[u32]) -> Option<Box<[u32]>> {
    if !f.is_pinned() {
        return None;
    }
    let ok = |l: &Vec<u32>, x: u32| l.is_empty() || l.contains(&x);
    Some(
        stripe
            .iter()
            .copied()
            .filter(|&p| {
                let die = geo.die_of_plane(p);
                let chip = geo.chip_of_die(die);
                ok(&f.channels, geo.channel_of_die(die))
                    && ok(&f.chips, chip % geo.chips_per_channel)
                    && ok(&f.dies, die % geo.dies_per_chip)
                    && ok(&f.planes, p % geo.planes_per_die)
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cwdp_varies_channel_fastest_and_covers_every_plane() {
        let c = Config::default();
        let g = Geometry::from_config(&c);
        let s = stripe_table("CWDP", &g);
        assert_eq!(s[0], g.plane_id(0, 0, 0, 0));
        assert_eq!(s[1], g.plane_id(1, 0, 0, 0));
        assert_eq!(s[8], g.plane_id(0, 1, 0, 0));
        assert_eq!(s[32], g.plane_id(0, 0, 1, 0));
        let p = stripe_table("PDWC", &g);
        assert_eq!(p[1], g.plane_id(0, 0, 0, 1));
        let mut seen = s.to_vec();
        seen.sort_unstable();
        assert_eq!(seen, (0..g.planes()).collect::<Vec<_>>());
    }

    #[test]
    fn derived_values_of_the_default_device() {
        let c = Config::default();
        let s = Settings::resolve(&c);
        // The sizes are config::Sizes' (checked there), held once.
        assert_eq!(s.sizes, Sizes::of(&c));
        assert_eq!(s.firmware_request_ps, 1_000_000);
        assert_eq!(s.firmware_transaction_ps, 250_000);
    }
}
