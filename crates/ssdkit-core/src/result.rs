//! The result document of a run, as types: what `ssdkit run -o out.json` writes and
//! `ssdkit.run` returns. Its JSON Schema (`docs/result.schema.json`) is generated from these
//! types and kept current by a test, and the Python reader (`python/ssdkit/result.py`) is
//! checked against a real document, so the three cannot drift. docs/results.md explains every
//! field. Fields serialise in declaration order: the results first, the configuration last,
//! so `ssdkit run --json | head` shows results.

pub use crate::cache::CacheCounts;
use crate::config::{CacheMode, Config, Priority, SteadyTrack};
use crate::flash::BackendStats;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Version of the result layout. Bumped on any incompatible change; fields are added without a
/// bump.
pub const SCHEMA_VERSION: u32 = 1;

/// One run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RunResult {
    /// Layout version: 1.
    pub schema_version: u32,
    /// Version of the core that produced the document.
    pub ssdkit_version: String,
    /// `run.seed`.
    pub seed: u64,
    /// FNV-1a 64 of the canonical JSON of `config`, as 16 hex digits.
    pub config_hash: String,
    /// End of the measured window, in picoseconds: with `run.end = "idle"` the time the device
    /// went idle (every request completed, GC and erases done); with `"last_completion"`, a
    /// time cap, or a step-by-step device, the last completion. Device rates and write
    /// amplification are over this window.
    pub simulated_time_ps: u64,
    /// The same in seconds.
    pub simulated_time_s: f64,
    /// Time of the last request's completion.
    #[serde(default)]
    pub last_completion_ps: u64,
    /// When the device went idle after the last completion (`run.end = "idle"`); null when the
    /// run stopped at the last completion or by the time cap.
    #[serde(default)]
    pub device_idle_ps: Option<u64>,
    /// Work the device did after the last completion (`run.end = "idle"`): GC catching up.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after_last_completion: Option<AfterLast>,
    /// GC work left undone when the run stopped at the last completion
    /// (`run.end = "last_completion"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backlog: Option<Backlog>,
    /// `run.max_simulated_ms` cut the run short.
    pub stopped_by_time_cap: bool,
    /// Wall time of the simulation loop (excludes building and preconditioning the device).
    pub wall_time_s: f64,
    /// Events processed.
    pub events: u64,
    pub events_per_wall_s: f64,
    pub requests_per_wall_s: f64,
    /// Significant digits of the latency histograms: percentiles are within 10^-digits of
    /// the exact value.
    pub latency_histogram_significant_digits: u8,
    /// All flows together, and the device's own counters.
    pub device: DeviceResult,
    /// One per configured flow (or queue pair of a step-by-step device), in order.
    pub flows: Vec<FlowResult>,
    /// Figures over windows of `run.timeseries_window_ms`; absent when that is 0 (the
    /// default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeseries: Option<TimeSeries>,
    /// The rounds of `[steady_state]` and their verdict by the SNIA PTS steady-state
    /// criteria; absent unless `steady_state.enabled`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steady_state: Option<SteadyState>,
    /// What `ssdkit serve` did as an NBD server (docs/serve.md); absent from batch runs and
    /// step-by-step devices.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub emulator: Option<EmulatorResult>,
    /// The whole resolved configuration, every default written out.
    pub config: Config,
}

/// `ssdkit serve`'s own figures: its clients, its data store, and (real clock) how late
/// replies left compared with the simulated completion times.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct EmulatorResult {
    /// `"real"`: simulated time follows the wall clock and each reply leaves at its request's
    /// arrival plus its simulated latency; `"fast"`: replies leave as soon as simulated.
    pub clock: String,
    /// Where the export was served (`nbd+unix:///?socket=...` or `nbd://host:port/`).
    pub uri: String,
    /// Wall time from the first listening moment to this document.
    pub uptime_s: f64,
    /// Queue pairs of the device: the most connections served at once.
    pub queues: u32,
    /// Connections that reached transmission, in total.
    pub connections_total: u64,
    /// The last connections (at most 1,000; each used one queue pair while it lasted).
    pub connections: Vec<EmulatorConnection>,
    /// NBD requests answered (all connections, errors included), and those answered with an
    /// error (refused by the protocol's checks, or a store that could not take the data).
    pub requests: u64,
    pub errors: u64,
    /// Arrivals the simulator saw after it had already moved past their arrival time (real
    /// clock): submitted at its current time instead, at most `clamped_max_us` later.
    pub clamped_arrivals: u64,
    pub clamped_max_us: f64,
    /// Real clock: how late replies were handed to their socket after their target time
    /// (arrival plus simulated latency), in microseconds. Absent with the fast clock.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lateness: Option<LatencySummary>,
    /// The same lateness as a histogram (in picoseconds, as `latency_histogram`); absent
    /// with the fast clock.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lateness_histogram: Option<LatencyHistogram>,
    pub store: EmulatorStore,
}

/// One NBD connection of `ssdkit serve`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct EmulatorConnection {
    /// Its queue pair (flow index of the result).
    pub queue: u32,
    /// Wall seconds since the server started listening.
    pub opened_s: f64,
    /// Null while the connection is open.
    pub closed_s: Option<f64>,
    pub requests: u64,
}

/// Where `ssdkit serve` keeps the export's data.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct EmulatorStore {
    /// `"memory"` or `"file"` (`--backing`).
    pub kind: String,
    /// The backing file; null in memory.
    pub path: Option<String>,
    /// Bytes held: 4 KiB chunks in memory, or the backing file's allocated blocks.
    pub stored_bytes: u64,
    /// The memory store's limit (`--memory-limit`); null for a file.
    pub limit_bytes: Option<u64>,
    /// `--durable`: FLUSH and FUA put data on stable storage before their reply.
    pub durable: bool,
    /// fdatasync calls made for FLUSH and FUA.
    pub fsyncs: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct DeviceResult {
    /// Logical capacity exported to the host.
    pub capacity_bytes: u64,
    pub stats: RwResult,
    /// The flash back end's operation counts, user and GC traffic together.
    pub flash: BackendStats,
    pub ftl: FtlCounts,
    /// The DRAM data cache, all flows together; absent with `cache.mode = "off"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache: Option<CacheResult>,
    pub erase_counts: EraseCounts,
    /// The cached mapping table's lookups and flash traffic; absent with `ftl.cmt.mode =
    /// "ideal"` (every lookup hits, no translation page exists).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cmt: Option<CmtDevice>,
    /// The latency an application sees, to the end of the host's processing of each
    /// completion (its ISR and DPC, or the poll that found it); absent with `host.completion =
    /// "none"`, where it is `stats`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub app_stats: Option<RwResult>,
    /// Interrupts, polls and host CPU time; absent with `host.completion = "none"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<HostResult>,
    /// Program/erase suspensions; absent with `tsu.suspension = "none"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suspension: Option<crate::tsu::suspension::SuspensionStats>,
    /// Where the requests' time went, step by step (`run.latency_breakdown`; absent when
    /// off).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_breakdown: Option<BreakdownResult>,
    /// How the device was brought to its starting state; the keys depend on the mode
    /// (docs/results.md).
    pub precondition: PreconditionRecord,
    /// Where each random stream came from.
    pub random_streams: RandomStreams,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FlowResult {
    pub index: u32,
    pub name: String,
    /// Requests completed (reads, writes, TRIMs and flushes).
    pub completed: u64,
    /// Most requests of the flow's device queue inside the device at once (for SATA, the
    /// shared NCQ).
    pub max_in_device: u32,
    /// Requests handed to the host.
    pub issued: u64,
    /// Issued requests over the span of their arrival (open loop) or submission times.
    pub arrival_rate_iops: f64,
    /// NVMe submission-queue priority class.
    pub priority: Priority,
    /// Trace flows: what the reader and the replayer did; null for synthetic flows.
    pub trace: Value,
    /// The flow's active interval, from its first request's arrival (its submission, closed
    /// loop) to its last completion; 0 when it completed nothing. Its `stats` rates (iops,
    /// bandwidth) are over this interval, the device's over the whole run.
    pub active_time_s: f64,
    pub stats: RwResult,
    /// The flow's lookups in the cached mapping table; absent with `ftl.cmt.mode = "ideal"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cmt: Option<CmtLookups>,
    /// As `device.app_stats`, for the flow (rates over its active interval).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub app_stats: Option<RwResult>,
    /// What the data cache did for the flow's requests (write-backs: for the data it wrote);
    /// absent with `cache.mode = "off"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache: Option<CacheCounts>,
    /// Pages GC moved whose data this flow wrote last (runs of 2 to 255 flows; absent
    /// otherwise). Moves of data preconditioning wrote belong to no flow: the device's
    /// `ftl.gc_page_moves` is the sum of these and those.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gc_page_moves: Option<u64>,
    /// As `device.latency_breakdown`, for the flow's requests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_breakdown: Option<BreakdownResult>,
}

/// The host's side of completions (`host.completion` = "interrupt" or "polled").
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct HostResult {
    pub completion: crate::config::CompletionMode,
    /// Cores that serviced completions, and interrupt vectors (0 when polled).
    pub cores: u32,
    pub vectors: u32,
    /// Completion entries the host received.
    pub completions: u64,
    /// MSI-X messages sent, and how many of them the aggregation timer sent.
    pub interrupts: u64,
    pub timer_interrupts: u64,
    /// Completions signalled over interrupts (0 without interrupts).
    pub completions_per_interrupt: f64,
    /// Most completions one interrupt or poll carried.
    pub largest_batch: u64,
    pub polls: u64,
    /// Completion-queue head doorbells written (one per queue per processed batch).
    pub cq_doorbells: u64,
    /// Busy time of each core, microseconds.
    pub core_busy_us: Vec<f64>,
    /// Host memory for the queues (`interface.io_queue_depth` entries of 64 B per submission
    /// queue and 16 B per completion queue, a pair per flow) and the most data buffers
    /// outstanding at once (the bytes of requests submitted and not yet processed by the
    /// host, with their PRP list or SGL segment pages under `interface.data_pointers`), as
    /// NVMeSim counts it.
    pub host_memory_bytes: u64,
}

/// Lookups of mapping entries by user reads and writes (one per page transaction).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CmtLookups {
    pub read_hits: u64,
    pub read_misses: u64,
    /// read_hits / (read_hits + read_misses); 0 with no lookup.
    pub read_hit_rate: f64,
    pub write_hits: u64,
    pub write_misses: u64,
    pub write_hit_rate: f64,
    /// All lookups: hits / (hits + misses).
    pub hit_rate: f64,
    /// Translation-page reads issued for this flow's misses (misses on a page already being
    /// read wait for that read instead, and misses on a translation page never written need
    /// none).
    pub mapping_reads: u64,
    /// Translation-page write-backs of dirty pages evicted to make room for the pages this
    /// flow's lookups (and TRIMs) brought in. GC's write-backs belong to no flow
    /// (`device.cmt.gc_writebacks`).
    pub eviction_writebacks: u64,
}

impl CmtLookups {
    pub fn new(
        read_hits: u64,
        read_misses: u64,
        write_hits: u64,
        write_misses: u64,
        mapping_reads: u64,
        eviction_writebacks: u64,
    ) -> Self {
        let rate = |h: u64, m: u64| {
            if h + m > 0 {
                h as f64 / (h + m) as f64
            } else {
                0.0
            }
        };
        Self {
            read_hits,
            read_misses,
            read_hit_rate: rate(read_hits, read_misses),
            write_hits,
            write_misses,
            write_hit_rate: rate(write_hits, write_misses),
            hit_rate: rate(read_hits + write_hits, read_misses + write_misses),
            mapping_reads,
            eviction_writebacks,
        }
    }
}

/// The cached mapping table over the whole device.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CmtDevice {
    /// Every flow's lookups together.
    pub lookups: CmtLookups,
    /// Entries the cache holds (over its partitions) and the bytes of one entry.
    pub capacity_entries: u64,
    pub entry_bytes: u32,
    pub entries_per_translation_page: u32,
    pub translation_pages: u64,
    /// Entries cached at the end of the run.
    pub cached_entries: u64,
    /// Requests' page transactions that missed on a translation page already being read and
    /// waited for that read.
    pub coalesced_misses: u64,
    /// Translation-page reads for lookups.
    pub lookup_reads: u64,
    /// Translation-page reads of the unchanged entries before a write-back (none when the
    /// cache holds every entry of the page, or the page was never written).
    pub writeback_reads: u64,
    /// Translation pages written back because a dirty entry left the cache.
    pub eviction_writebacks: u64,
    /// Translation pages written back for GC moves whose entries were not cached (once per
    /// page per victim: DFTL's batch update).
    pub gc_writebacks: u64,
    /// GC moves whose entry was cached (updated in DRAM, written back with its page later).
    pub gc_updates_cached: u64,
    /// GC moves whose entry was not cached (batched into `gc_writebacks`).
    pub gc_updates_uncached: u64,
    /// TRIMmed pages whose entries were updated through the cache.
    pub trim_updates: u64,
    /// Translation pages programmed (write-backs; GC moves of translation pages count in
    /// `gc_translation_moves`).
    pub mapping_page_writes: u64,
    /// Translation pages moved by GC.
    pub gc_translation_moves: u64,
    /// Share of all page programs spent on translation pages: (mapping_page_writes +
    /// gc_translation_moves) / page programs; 0 with no program.
    pub write_amplification_share: f64,
    /// Page reads of translation pages (lookups and write-back reads) over all page reads.
    pub read_share: f64,
}

/// The data cache of the device (docs/cache.md).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CacheResult {
    /// `cache.mode`.
    pub mode: CacheMode,
    /// Slots (flash pages) of the cache, all partitions together.
    pub capacity_pages: u64,
    /// Pages in the cache at the end of the run.
    pub pages_at_end: u64,
    /// Accesses to the DRAM (request data in and out, read-cache fills).
    pub dram_accesses: u64,
    /// Time the DRAM was busy, in microseconds.
    pub dram_busy_us: f64,
    /// The counts of every flow together.
    pub totals: CacheCounts,
}

/// Completed requests by kind.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RwResult {
    pub read: OpResult,
    pub write: OpResult,
    /// TRIM (deallocate) requests; not part of `all`.
    pub trim: OpResult,
    /// Reads and writes together.
    pub all: OpResult,
    /// NVMe Flush commands: present only when some completed (only a step-by-step device's
    /// host program issues them); not part of `all`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flush: Option<OpResult>,
}

/// The latency breakdown of reads and of writes (`run.latency_breakdown`; docs/breakdown.md).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct BreakdownResult {
    pub read: StepSummaries,
    pub write: StepSummaries,
}

/// Microseconds each request spent in each step of its path (mean, minimum, percentiles,
/// maximum over the requests). For every request the steps from `host_queue` to `t_stall`
/// sum to its response time; the means therefore sum to the mean latency. A step's time is
/// on the request's critical path: of a request's pages, the one that finished last.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct StepSummaries {
    /// Requests broken down.
    pub count: u64,
    /// Open-loop arrivals waiting in the host for room in a full submission queue.
    pub host_queue: LatencySummary,
    /// The submission-queue tail doorbell's wire time (NVMe); SATA: the host bus adapter's
    /// submission stage (its wait and `interface.sata_processing_delay_us`).
    pub doorbell: LatencySummary,
    /// In the submission queue (SATA: the host queue in front of the NCQ) until the device
    /// fetches the command: arbitration, `queue_fetch_size`, NCQ slots.
    pub sq_wait: LatencySummary,
    /// The command's wire time: the SQE's memory read request and 64-byte completion, or the
    /// Register H2D FIS.
    pub command_fetch: LatencySummary,
    /// The controller CPU: the request's firmware time and its wait for the CPU.
    pub firmware: LatencySummary,
    /// Waiting for the mapping entries of the last page: translation-page reads of the
    /// cached mapping table.
    pub mapping: LatencySummary,
    /// The data cache: DRAM transfers, waits for room (write-backs), flushes; a request the
    /// cache serves spends its whole device time after the firmware here.
    pub cache: LatencySummary,
    /// The last page's transaction waiting in its die's queue (behind other transactions,
    /// GC included).
    pub die_queue: LatencySummary,
    /// Waits for the controller's issue slot and the channel bus (command and data out).
    pub channel_wait: LatencySummary,
    /// Command and address cycles, with the channel- and way-switch delays.
    pub cmd_addr: LatencySummary,
    /// The array: sense (read) or program (write).
    pub array: LatencySummary,
    /// Page data on the channel bus (ONFI): out of the registers, or into them for a program.
    pub onfi_transfer: LatencySummary,
    /// Data on the host link, wire time: a write's data (whole, or the last page's wait for
    /// its own page with pipelined transfers; a partial-page write's read of its kept
    /// sectors when that ends later counts here), a read's data not sent before the
    /// completion.
    pub data_dma: LatencySummary,
    /// The completion's wire time (16-byte CQE, or the Set Device Bits FIS); SATA: the host
    /// bus adapter's completion stage.
    pub completion: LatencySummary,
    /// NVMeSim's T_stall: host-link packets of this request waiting for their direction
    /// behind other packets (other queues' doorbells, fetches, data, completions,
    /// interrupts, DLLPs).
    pub t_stall: LatencySummary,
    /// After the response time: from the completion-queue entry to the end of the host's
    /// processing (MSI, interrupt coalescing, ISR, queue scans, DPC; or the poll). Absent
    /// with `host.completion = "none"`.
    pub host_processing: Option<LatencySummary>,
}

/// Completed requests of one kind. With `count` 0 every other figure is 0 and the histogram
/// is empty.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct OpResult {
    pub count: u64,
    pub bytes: u64,
    /// Requests per simulated second: over `simulated_time_s` for the device, over the flow's
    /// `active_time_s` for a flow.
    pub iops: f64,
    /// Bytes per simulated second, over the same interval as `iops`.
    pub bandwidth_bytes_per_s: f64,
    pub latency_us: LatencySummary,
    /// Every latency recorded, in HDR buckets: any percentile and the CDF can be computed
    /// from it after the run.
    pub latency_histogram: LatencyHistogram,
}

/// Latency from submission-queue insertion to completion-queue insertion, in microseconds.
/// Mean, min and max are exact; percentiles come from the histogram (see
/// `LatencyHistogram`), clamped to [min, max].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct LatencySummary {
    pub mean: f64,
    pub min: f64,
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    pub p99_9: f64,
    pub p99_99: f64,
    pub max: f64,
}

/// The non-empty buckets of an HDR histogram of latencies in picoseconds, ascending. Bucket `i`
/// holds `count[i]` latencies `l` with `lower_ps[i] <= l <= upper_ps[i]` (a latency of 0 is
/// recorded as 1). The percentile `q` is `upper_ps[i]` of the first bucket whose cumulative
/// count reaches `max(1, ceil(q * total))`, clamped to the exact [min, max]: the summary's
/// percentiles are computed this way.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct LatencyHistogram {
    pub lower_ps: Vec<u64>,
    pub upper_ps: Vec<u64>,
    pub count: Vec<u64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FtlCounts {
    /// Pages programmed for host writes.
    pub user_page_writes: u64,
    /// Victim blocks collected (foreground and background).
    pub gc_runs: u64,
    /// Valid pages GC moved out of victims.
    pub gc_page_moves: u64,
    /// GC runs started by idle-time collection; included in gc_runs.
    pub gc_background_runs: u64,
    /// GC page moves done by copyback; included in gc_page_moves.
    pub gc_copyback_moves: u64,
    /// Blocks static wear levelling made the GC victim.
    pub wl_migrations: u64,
    /// TRIM requests the FTL handled.
    pub trim_requests: u64,
    /// Mapped logical pages the TRIMs unmapped.
    pub trimmed_pages: u64,
    /// page_programs / user_page_writes; 0 without user writes.
    pub write_amplification: f64,
    /// Read-modify-write pre-reads of partial-page writes.
    pub rmw_reads: u64,
    /// Reads of never-written (or trimmed) pages, answered without flash.
    pub unmapped_page_reads: u64,
    /// Never-written pages mapped by their first read (`ftl.unmapped_reads = "read_flash"`).
    #[serde(default)]
    pub pages_mapped_by_reads: u64,
    /// Merges of block and hybrid mapping (absent under page mapping).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub merges: Option<MergeCounts>,
}

/// Merges of block and hybrid mapping (docs/ftl.md): each is one reclaim job (page copies,
/// then erases), timed like a GC victim's.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct MergeCounts {
    /// A log block written in order over the whole block became the data block (no copy).
    pub switch: u64,
    /// A log block written in order from offset 0 took copies of the remaining pages, then
    /// became the data block.
    pub partial: u64,
    /// A new block took the newest copy of every page (every overwrite under block mapping).
    pub full: u64,
    /// Pages copied by merges (one read and one program each).
    pub page_copies: u64,
}

impl MergeCounts {
    /// None when no merge happened (page mapping never merges).
    pub fn if_any(self) -> Option<MergeCounts> {
        (!self.is_zero()).then_some(self)
    }
    pub fn is_zero(&self) -> bool {
        *self == MergeCounts::default()
    }
}

/// Erase counts of every block at the end of the run, preconditioning included.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct EraseCounts {
    pub blocks: u64,
    pub min: u32,
    pub mean: f64,
    pub max: u32,
    /// Population standard deviation over blocks.
    pub std: f64,
    pub histogram: EraseHistogram,
}

/// `count[i]` blocks have an erase count in `[bin_start[i], bin_start[i] + bin_width)`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct EraseHistogram {
    pub bin_start: Vec<u32>,
    pub bin_width: u32,
    pub count: Vec<u64>,
}

/// Work between the last completion and the device going idle.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AfterLast {
    /// device_idle_ps - last_completion_ps.
    pub time_ps: u64,
    pub page_reads: u64,
    pub page_programs: u64,
    pub block_erases: u64,
    pub gc_runs: u64,
    pub gc_page_moves: u64,
}

/// GC work owed at the end of a run stopped at its last completion.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Backlog {
    /// Free blocks over all planes.
    pub free_blocks: u64,
    /// Planes with fewer free pages than their GC start point.
    pub planes_below_gc_start: u64,
    /// Free pages those planes lack to reach their GC start point.
    pub free_pages_short_of_gc_start: u64,
    /// Planes with a victim being collected (moving or erasing).
    pub planes_collecting: u64,
    /// Valid pages of those victims not yet moved.
    pub gc_moves_pending: u64,
}

/// Windows of simulated time: window `i` covers `[start_ps[i], start_ps[i+1])`, the last one
/// `[start_ps[n-1], end_ps]` (shorter than `window_ps` unless the run ended on a boundary).
/// Every column has one value per window; counts sum over the windows to the run's totals.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TimeSeries {
    /// Window length (`run.timeseries_window_ms` in picoseconds).
    pub window_ps: u64,
    /// End of the last window: the end of the run (the last event).
    pub end_ps: u64,
    pub start_ps: Vec<u64>,
    /// One per flow, in flow order.
    pub flows: Vec<FlowSeries>,
    pub device: DeviceSeries,
}

/// A flow's figures per window. Requests count in the window in which they complete.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FlowSeries {
    /// Requests completed in the window (every op).
    pub completed: Vec<u64>,
    /// Bytes of those requests.
    pub bytes: Vec<u64>,
    /// completed / window length in seconds.
    pub iops: Vec<f64>,
    /// bytes / window length in seconds.
    pub bandwidth_bytes_per_s: Vec<f64>,
    /// Mean latency of the requests completed in the window; null when none completed.
    pub mean_latency_us: Vec<Option<f64>>,
    /// Largest latency of those requests; null when none completed.
    pub max_latency_us: Vec<Option<f64>>,
    /// Time-averaged requests outstanding (submitted, not completed) over the window.
    pub queue_depth: Vec<f64>,
}

/// The device's figures per window.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct DeviceSeries {
    /// Free blocks over all planes at the end of the window.
    pub free_blocks: Vec<u64>,
    /// Victim blocks whose collection finished in the window.
    pub gc_runs: Vec<u64>,
    /// Valid pages GC moved in the window.
    pub gc_page_moves: Vec<u64>,
    /// Pages programmed for host writes in the window.
    pub user_page_writes: Vec<u64>,
    /// Pages programmed in the window (host, GC and wear levelling).
    pub page_programs: Vec<u64>,
    /// page_programs / user_page_writes in the window; null without user writes.
    pub write_amplification: Vec<Option<f64>>,
}

/// Rounds of the workload and the verdict of the steady-state criteria of the SNIA Solid State
/// Storage Performance Test Specification (PTS): the measurement window is the last
/// `window_rounds` complete rounds; it is steady when the tracking variable's data excursion
/// (max - min) is at most `data_excursion_limit_fraction` of the window's average and its
/// slope excursion (the least-squares line's value at the window's last round minus its value
/// at the first, in absolute value) at most `slope_excursion_limit_fraction` of it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SteadyState {
    /// The tracking variable (`steady_state.track`), over all flows together.
    pub track: SteadyTrack,
    /// Round length (`steady_state.round_ms` in picoseconds, or the length picked: the last
    /// one if the rounds were lengthened).
    pub round_ps: u64,
    /// How the length was picked, without `steady_state.round_ms`; absent with it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub round_picked: Option<RoundPick>,
    /// `steady_state.max_rounds`.
    pub max_rounds: u32,
    /// `steady_state.stop_when_steady`.
    pub stop_when_steady: bool,
    /// Rounds in the measurement window: 5.
    pub window_rounds: u32,
    /// Largest data excursion allowed, as a fraction of the window's average: 0.2.
    pub data_excursion_limit_fraction: f64,
    /// Largest slope excursion allowed, as a fraction of the window's average: 0.1.
    pub slope_excursion_limit_fraction: f64,
    /// Every round, in order.
    pub rounds: Vec<SteadyRound>,
    pub verdict: SteadyVerdict,
}

/// A round length picked from the run (`steady_state.round_ms` unset): the smallest of 1, 2
/// or 5 times a power of ten above `at_ps`, the time by which `requests` requests had
/// completed counting from `from_ps`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RoundPick {
    /// Completion at which the length was picked (or the workload's end or the time cap, when
    /// they came first).
    pub at_ps: u64,
    /// Start of the count: 0, or the first write-back when writes went to a write cache
    /// (`at_ps` when the run ended before one).
    pub from_ps: u64,
    /// Requests completed from `from_ps` to `at_ps`: 1,000 unless the run ended first.
    pub requests: u64,
    /// The count waited for the first write-back (a writing workload and a write cache).
    pub after_write_back: bool,
    /// Rounds (numbered from 1) from which the rounds were lengthened because the round
    /// before held fewer than 250 requests; each starts the windows again.
    pub lengthened_at_rounds: Vec<u32>,
}

/// One round: `[start_ps, end_ps)` of simulated time. Requests count in the round in which
/// they complete; every op counts (reads, writes, TRIMs), as in the time series.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SteadyRound {
    /// 1, 2, ...: rounds are numbered from 1, as the PTS numbers them.
    pub round: u32,
    pub start_ps: u64,
    pub end_ps: u64,
    /// A full `round_ps` long. Only the last round can be incomplete: the workload's end or
    /// the time cap cut it short. An incomplete round is never part of a window.
    pub complete: bool,
    /// Requests completed in the round, all flows together.
    pub completed: u64,
    pub bytes: u64,
    /// completed / round length in seconds.
    pub iops: f64,
    /// bytes / round length in seconds.
    pub bandwidth_bytes_per_s: f64,
    /// Mean latency of the requests completed in the round; null when none completed.
    pub mean_latency_us: Option<f64>,
    /// Their 99th percentile (HDR histogram, 3 significant digits, reset every round); null
    /// when none completed.
    pub p99_latency_us: Option<f64>,
    /// Free blocks over all planes at the end of the round.
    pub free_blocks: u64,
    /// Victim blocks whose collection finished in the round.
    pub gc_runs: u64,
    /// Pages programmed for host writes in the round.
    pub user_page_writes: u64,
    /// Pages programmed in the round (host, GC and wear levelling).
    pub page_programs: u64,
    /// page_programs / user_page_writes in the round; null without user writes.
    pub write_amplification: Option<f64>,
    /// The same request figures per flow, in flow order.
    pub flows: Vec<RoundFlow>,
    /// The criteria over the window of the rounds ending with this one; null before the
    /// window is full, for an incomplete round, and when a round of the window completed
    /// nothing (no figure to judge).
    pub window: Option<WindowCheck>,
}

/// A flow's requests in one round.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RoundFlow {
    pub completed: u64,
    pub bytes: u64,
    /// completed / round length in seconds.
    pub iops: f64,
    /// Null when the flow completed nothing in the round.
    pub mean_latency_us: Option<f64>,
    /// Null when the flow completed nothing in the round.
    pub p99_latency_us: Option<f64>,
}

/// The steady-state criteria over one measurement window of the tracking variable `y`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct WindowCheck {
    pub first_round: u32,
    pub last_round: u32,
    /// Mean of y over the window.
    pub average: f64,
    /// max(y) - min(y).
    pub data_excursion: f64,
    /// data_excursion_limit_fraction * average.
    pub data_excursion_limit: f64,
    pub data_ok: bool,
    /// Slope of the least-squares line of y against the round number, per round.
    pub slope: f64,
    /// The line's value at the window's first round.
    pub fit_first: f64,
    /// The line's value at the window's last round.
    pub fit_last: f64,
    /// |fit_last - fit_first|.
    pub slope_excursion: f64,
    /// slope_excursion_limit_fraction * average.
    pub slope_excursion_limit: f64,
    pub slope_ok: bool,
    /// data_ok and slope_ok (and the average above 0).
    pub steady: bool,
}

/// The outcome of the rounds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SteadyVerdict {
    /// Some window met both criteria.
    pub steady: bool,
    /// The first round whose window met both criteria: steady state from here; null when
    /// none did.
    pub steady_round: Option<u32>,
    /// The window of `steady_round`; when not steady, the last window judged; null when no
    /// window was (fewer than 5 complete rounds).
    pub window: Option<WindowCheck>,
    /// Complete rounds run.
    pub complete_rounds: u32,
    /// Why the rounds ended.
    pub ended_by: RoundsEnd,
    /// Requests that completed after the rounds ended (those in flight when the workload was
    /// stopped); in no round, but in the run's totals.
    pub after_rounds_completed: u64,
}

/// Why the rounds ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RoundsEnd {
    /// A window met the criteria and `stop_when_steady` stopped the workload.
    Steady,
    /// `max_rounds` rounds were run; the workload was stopped.
    MaxRounds,
    /// The workload's own limits (requests, bytes, duration, the trace's end) ended it first.
    Workload,
    /// `run.max_simulated_ms` cut the run short.
    TimeCap,
}

/// `device.precondition`: how the device got its starting state (`[precondition]`, or the
/// record saved in the snapshot the run started from; docs/results.md). Which keys are present
/// depends on the mode; they serialise in this order whatever the mode.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PreconditionRecord {
    /// `precondition.mode`: fast, write, sequential or empty.
    pub mode: crate::config::PreconditionMode,
    /// "in_place" on a medium written in place (`flash.medium`), where every mode but empty
    /// maps the first `occupancy` of the logical pages and nothing else is recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub medium: Option<crate::config::Medium>,
    /// Mode fast: the analytical model used, e.g. "mean-field greedy (Van Houdt 2013)".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Mode fast: the model's steady-state write amplification for the footprint (1.0
    /// without random writes; null where the model has none).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "null_as_nan"
    )]
    pub predicted_write_amplification: Option<f64>,
    /// Mode fast: the GC start threshold per plane, pages.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gc_start_free_pages: Option<u64>,
    /// Mode fast: the GC reserve per plane, blocks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reserve_blocks: Option<u32>,
    /// Mode fast: pages of footprint data (valid counts drawn from the model).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hot_pages: Option<u64>,
    /// Mode fast: pages outside the footprint, in fully valid blocks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cold_pages: Option<u64>,
    /// Modes fast and sequential (and any mode in place): `precondition.occupancy`, the
    /// fraction of logical pages mapped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub occupancy: Option<f64>,
    /// Mode fast: the assumed history behind the erase counts, drive writes
    /// (`precondition.history_drive_writes`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub history_drive_writes: Option<f64>,
    /// Mode fast: the mean erase count that history gives the cycling blocks.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "null_as_nan"
    )]
    pub mean_erase_count: Option<f64>,
    /// Mode write: `precondition.write_window_drive_writes`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window_drive_writes: Option<f64>,
    /// Mode write: `precondition.write_tolerance`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tolerance: Option<f64>,
    /// Mode write: `precondition.write_min_drive_writes`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_drive_writes: Option<f64>,
    /// Mode write: `precondition.write_max_drive_writes`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_drive_writes: Option<f64>,
    /// Mode write: the overwrites done, in footprints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drive_writes: Option<f64>,
    /// Mode write: two consecutive windows agreed within `tolerance` before
    /// `max_drive_writes`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stable: Option<bool>,
    /// Mode write: the write amplification of the last window.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "null_as_nan"
    )]
    pub write_amplification: Option<f64>,
    /// Mode write: the write amplification of every window.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window_write_amplification: Option<Vec<f64>>,
    /// Modes fast, write and sequential: flows pinned to a subset of the planes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pinned_flows: Option<u64>,
    /// Modes fast and write: the free pool built (`precondition.free_pool`, docs/ftl.md):
    /// "reserve" or "gc_start".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub free_pool: Option<String>,
    /// Modes fast and write, with `free_pool = "auto"`: why that pool was chosen.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub free_pool_auto: Option<String>,
    /// Modes fast and write: mean free pages per plane in the state built (free blocks and
    /// the unwritten part of open blocks).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub free_pages_per_plane: Option<f64>,
    /// Modes fast and write: `precondition.pattern`: auto, uniform or sequential.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pattern: Option<String>,
    /// Modes fast and write: pages in `footprint`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub footprint_pages: Option<u64>,
    /// Modes fast and write: the logical page ranges `[first, end)` written at random (the
    /// hot data); empty when no flow writes at random.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub footprint: Option<Vec<[u64; 2]>>,
    /// Modes fast and write: `ftl.gc_policy` the state was built for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gc_policy: Option<String>,
    /// With a cached mapping table, every mode but empty: the translation pages written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cmt: Option<PreconditionCmt>,
    /// Wall time of preconditioning itself (not building the device, not saving), seconds.
    pub wall_time_s: f64,
    /// `ssdkit precondition`: the size of the snapshot written, bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snapshot_bytes: Option<u64>,
    /// `ssdkit precondition`: wall time to write the snapshot, seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snapshot_save_s: Option<f64>,
    /// The snapshot file written (`ssdkit precondition`) or the run started from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snapshot: Option<String>,
    /// A run from a snapshot: wall time to read, check and load it, seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snapshot_load_s: Option<f64>,
}

impl PreconditionRecord {
    /// The record of `mode` with none of the keys that depend on it.
    pub fn of(mode: crate::config::PreconditionMode) -> Self {
        Self {
            mode,
            medium: None,
            model: None,
            predicted_write_amplification: None,
            gc_start_free_pages: None,
            reserve_blocks: None,
            hot_pages: None,
            cold_pages: None,
            occupancy: None,
            history_drive_writes: None,
            mean_erase_count: None,
            window_drive_writes: None,
            tolerance: None,
            min_drive_writes: None,
            max_drive_writes: None,
            drive_writes: None,
            stable: None,
            write_amplification: None,
            window_write_amplification: None,
            pinned_flows: None,
            free_pool: None,
            free_pool_auto: None,
            free_pages_per_plane: None,
            pattern: None,
            footprint_pages: None,
            footprint: None,
            gc_policy: None,
            cmt: None,
            wall_time_s: 0.0,
            snapshot_bytes: None,
            snapshot_save_s: None,
            snapshot: None,
            snapshot_load_s: None,
        }
    }
}

/// `device.precondition.cmt`: the cached mapping table's translation pages, written to flash
/// by preconditioning, and those it left in the cache.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PreconditionCmt {
    /// Translation pages written: those holding a mapped entry, or all of them with
    /// `ftl.cmt.translation_pages_at_start = "all"` (on an empty device too).
    pub translation_pages: u64,
    /// Translation pages the cache starts with (clean): what LRU holds under uniform random
    /// lookups of each partition's flows.
    pub warm_translation_pages: u64,
    /// With `ftl.cmt.granularity = "entry"`: the entries the cache starts with (clean),
    /// drawn uniformly from each partition's flows' logical pages.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warm_entries: Option<u64>,
}

/// JSON writes a ratio that is not a number (0/0, an infinite prediction) as null: read it
/// back as NaN, which writes as null again.
fn null_as_nan<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    Ok(Some(Option::<f64>::deserialize(d)?.unwrap_or(f64::NAN)))
}

/// `device.random_streams`: where each random stream of the run came from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RandomStreams {
    /// `run.seed`.
    pub seed: u64,
    /// What the flows' streams derive from (one stream per flow for sizes and addresses, one
    /// for arrivals).
    pub flows: String,
    /// What the GC victim choice's stream derives from: the device's stream, continued from
    /// preconditioning.
    pub gc_victims: String,
    /// The seed of the device's streams: `precondition.seed`, or `run.seed` without it.
    pub precondition_seed: u64,
}

impl RandomStreams {
    /// Where the streams of a run of `c` come from. GC's stream belongs to the device:
    /// preconditioning seeds it and the run continues it (from a snapshot too: the snapshot
    /// saves it).
    pub fn for_config(c: &Config) -> Self {
        Self {
            seed: c.run.seed,
            flows: "run.seed (one stream per flow for sizes and addresses, one for arrivals)"
                .into(),
            gc_victims: if c.precondition.seed.is_some() {
                "precondition.seed (the device's stream, continued from preconditioning)"
            } else {
                "run.seed (the device's stream, continued from preconditioning)"
            }
            .into(),
            precondition_seed: c.precondition_seed(),
        }
    }
}

/// JSON Schema of the result document, for `docs/result.schema.json`.
pub fn schema_json() -> String {
    let schema = schemars::schema_for!(RunResult);
    serde_json::to_string_pretty(&schema).expect("schema serialises")
}

#[cfg(test)]
mod tests {
    /// docs/result.schema.json is generated from these types; keep it current with
    /// `make schema`.
    #[test]
    fn committed_schema_is_current() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/result.schema.json");
        let now = super::schema_json() + "\n";
        if std::env::var_os("UPDATE_SCHEMA").is_some() {
            std::fs::write(path, &now).expect("write docs/result.schema.json");
        }
        let committed = std::fs::read_to_string(path).unwrap_or_default();
        assert!(
            committed == now,
            "docs/result.schema.json is stale: run `make schema`"
        );
    }
}
