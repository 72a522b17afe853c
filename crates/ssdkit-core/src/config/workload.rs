//! Workload configuration: the `[[flow]]` section and its types for synthetic distributions
//! and trace replay (docs/workloads.md).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use ssdkit_macros::ranges;

#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum AddressPattern {
    /// Uniform over the aligned slots of the range.
    Random,
    /// Consecutive requests `stride_bytes` apart, wrapping at the end of the range.
    Sequential,
    /// `hot_access_fraction` of requests to the first `hot_space_fraction` of the range.
    Hotcold,
    /// Slot rank k drawn with probability proportional to k^-zipf_theta.
    Zipf,
    /// fio's pareto: slot = floor(u^(ln h / ln(1-h)) x slots).
    Pareto,
    /// fio's normal: Normal(middle, normal_stdev_fraction x range), redrawn outside.
    Normal,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Arrival {
    /// Closed loop: `queue_depth` requests outstanding.
    Closed,
    /// Open loop, every 1/rate_iops.
    Fixed,
    /// Open loop, inter-arrival uniform on [0, 2/rate_iops].
    Uniform,
    /// Open loop, Poisson arrivals at rate_iops.
    Exponential,
    /// Open loop, Poisson at rate_iops during exponential ON periods (mean on_ms), silent during
    /// exponential OFF periods (mean off_ms).
    Onoff,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum SizeDist {
    /// Every request is `request_bytes`.
    Fixed,
    /// Uniform over the multiples of 512 in [size_min_bytes, size_max_bytes].
    Uniform,
    /// Normal(request_bytes, size_stdev_bytes) rounded to sectors, clamped to [512, range].
    Normal,
    /// Drawn from `size_list` by weight.
    List,
}

/// One entry of `size_list`.
#[ranges]
#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SizeWeight {
    /// Request size in bytes; a positive multiple of 512.
    #[range(min = 0, max = u64::MAX)]
    pub bytes: u64,
    /// Relative weight; > 0.
    #[range(gt = 0.0, max = 1e12)]
    pub weight: f64,
}

#[derive(
    Debug, Clone, Copy, Serialize, Deserialize, JsonSchema, PartialEq, Eq, PartialOrd, Ord,
)]
#[serde(rename_all = "lowercase")]
pub enum Priority {
    Urgent,
    High,
    Medium,
    Low,
}

impl Priority {
    /// The NVMe priority class at the die queues: 0 urgent .. 3 low.
    pub fn class(self) -> u8 {
        self as u8
    }
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Replay {
    /// Open loop at the trace's timestamps x time_scale.
    Timed,
    /// As fast as possible with `queue_depth` outstanding.
    Closed,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Fold {
    /// A request outside the flow's range is an error.
    None,
    /// Start address modulo the range.
    Modulo,
    /// Start address x range / trace span.
    Scale,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Backwards {
    /// A record earlier than the previous one is issued at the previous one's time (counted).
    Clamp,
    /// A record earlier than the previous one is an error naming the line.
    Error,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema, PartialEq, Eq, Hash)]
#[serde(rename_all = "snake_case")]
pub enum TraceFormat {
    /// Detect from the first lines (disksim_pages and delimited are never detected).
    Auto,
    /// MQSim/SSDsim ASCII: arrival ns, device, start sector, sectors, type 0=write 1=read.
    Mqsim,
    /// MSR Cambridge CSV: 100 ns ticks, host, disk, Read/Write, offset B, size B, response.
    Msr,
    /// SPC/UMass: ASU, LBA (512 B), size B, opcode r/w, timestamp s.
    Spc,
    /// DiskSim ASCII: ms, device, block (512 B), sectors, flags (bit 0 set = read).
    Disksim,
    /// DiskSim-like with sizes in 4 KiB pages (FlashSim traces).
    DisksimPages,
    /// blkparse default text output; dispatch (D) events.
    Blkparse,
    /// fio iolog version 2 (no timestamps).
    FioV2,
    /// fio iolog version 3 (timestamp first).
    FioV3,
    /// WiscSee blkparse events: pid, D|C, op, offset B, size B, time s, ...
    Wiscsee,
    /// Android BIOtracer: sector, sectors, bytes, flags (bit 0 = write), t1..t4 s.
    Biotracer,
    /// CloudPhysics vscsi CSV: version, time, SCSI op hex, size B, lbn (512 B).
    Cloudphysics,
    /// Generic delimited text described by `[flow.delimited]`.
    Delimited,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum TimeUnit {
    Ps,
    Ns,
    Us,
    Ms,
    S,
    /// 100 ns ticks (Windows filetime, MSR traces).
    Ticks100ns,
}

/// Highest column number a `[flow.delimited]` description may name: plenty for real traces,
/// and it bounds the reader's per-line scratch.
pub const MAX_TRACE_COLUMN: u32 = 1024;

/// `[flow.delimited]`: the generic delimited-text trace reader.
#[ranges]
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct DelimitedConfig {
    /// One character, or "whitespace" (runs of spaces and tabs). Default "whitespace".
    pub delimiter: String,
    /// Lines skipped at the top of the file. Default 0.
    #[range(min = 0, max = u64::MAX)]
    pub header_lines: u64,
    /// Lines starting with this text are skipped; "" = none. Default "#".
    pub comment: String,
    /// 1-based column of the timestamp; 0 = no timestamps (all requests at time 0). Default 0.
    #[range(min = 0, max = MAX_TRACE_COLUMN, note = "1-based column number; 0: no timestamps")]
    pub time_column: u32,
    /// Unit of the time column. Default "s".
    pub time_unit: TimeUnit,
    /// 1-based column of the start address. Required (>= 1).
    #[range(min = 1, max = MAX_TRACE_COLUMN, note = "1-based column number; required")]
    pub offset_column: u32,
    /// Bytes per unit of the offset column. Default 512; >= 1.
    #[range(min = 1, max = u64::MAX)]
    pub offset_unit_bytes: u64,
    /// 1-based column of the request size. Required (>= 1).
    #[range(min = 1, max = MAX_TRACE_COLUMN, note = "1-based column number; required")]
    pub size_column: u32,
    /// Bytes per unit of the size column. Default 1; >= 1.
    #[range(min = 1, max = u64::MAX)]
    pub size_unit_bytes: u64,
    /// 1-based column of the operation. Required (>= 1).
    #[range(min = 1, max = MAX_TRACE_COLUMN, note = "1-based column number; required")]
    pub op_column: u32,
    /// Exact texts of the op column meaning read.
    pub read_values: Vec<String>,
    /// Exact texts of the op column meaning write.
    pub write_values: Vec<String>,
    /// Exact texts of the op column meaning TRIM/discard.
    pub trim_values: Vec<String>,
    /// At least 0: the op column is an integer and this bit set means write, clear means
    /// read (read_values and write_values must then be empty). Default -1 (off).
    #[range(min = -1, max = 63, note = "-1: off, else the bit that means write")]
    pub op_write_bit: i32,
    /// 1-based column of the device/ASU number used by `devices`; 0 = none. Default 0.
    #[range(min = 0, max = MAX_TRACE_COLUMN, note = "1-based column number; 0: none")]
    pub device_column: u32,
    /// 1-based column that marks request lines; 0 = every line is a request. Default 0.
    #[range(min = 0, max = MAX_TRACE_COLUMN, note = "1-based column number; 0: every line is a request")]
    pub event_column: u32,
    /// Texts of `event_column` that mark a request; other lines are counted as not_requests.
    pub event_values: Vec<String>,
}
impl Default for DelimitedConfig {
    fn default() -> Self {
        Self {
            delimiter: "whitespace".into(),
            header_lines: 0,
            comment: "#".into(),
            time_column: 0,
            time_unit: TimeUnit::S,
            offset_column: 0,
            offset_unit_bytes: 512,
            size_column: 0,
            size_unit_bytes: 1,
            op_column: 0,
            read_values: vec![],
            write_values: vec![],
            trim_values: vec![],
            op_write_bit: -1,
            device_column: 0,
            event_column: 0,
            event_values: vec![],
        }
    }
}

/// One `[[flow]]`: a synthetic workload or a trace replay, with its own NVMe queue pair
/// (docs/workloads.md). Keys of the other kind must stay at their defaults.
#[ranges]
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct FlowConfig {
    /// Name shown in results. Default "flow<index>".
    pub name: String,
    /// false: the flow submits nothing, but keeps its place: its index and random streams,
    /// its queue pair, and its count in per-flow partitions stay as with it on, so the other
    /// flows run exactly as they would beside it (the alone runs of `ssdkit run --fairness`
    /// switch the other flows off). Default true.
    pub enabled: bool,
    /// Closed loop (synthetic `arrival = "closed"`, trace `replay = "closed"`): requests kept
    /// outstanding. Default 1; 1..=65535 and <= interface.io_queue_depth; all flows together
    /// keep at most 2^24 requests in flight (an open-loop flow counts interface.io_queue_depth).
    #[range(min = 1, max = 65535)]
    pub queue_depth: u32,
    /// First byte of the flow's address range (working-set offset). Default 0; a multiple of
    /// 512 inside the capacity.
    #[range(min = 0, max = u64::MAX)]
    pub start_bytes: u64,
    /// Length of the address range (working-set size) in bytes; 0 means to the end of the
    /// logical capacity. Default 0; a multiple of 512.
    #[range(min = 0, max = u64::MAX)]
    pub range_bytes: u64,
    /// Stop after this many requests; 0 means no count limit. Default 10000 for synthetic
    /// flows, 0 (the whole trace) for trace flows.
    #[range(min = 0, max = u64::MAX)]
    pub requests: u64,
    /// Stop after this many bytes have been requested; 0 means no byte limit. Default 0.
    #[range(min = 0, max = u64::MAX)]
    pub io_bytes: u64,
    /// Stop issuing this long after `start_ms`, in simulated milliseconds; 0 means no time
    /// limit. Default 0; >= 0, and start_ms + duration_ms <= 18446744073 (2^64 ps, about 213
    /// days). A synthetic flow needs `requests`, `io_bytes` or `duration_ms`.
    #[range(min = 0.0, max = super::ranges::END_OF_TIME_MS, note = "simulated time ends at 2^64 ps, about 213 days")]
    pub duration_ms: f64,
    /// Simulated time of the flow's first request in milliseconds. Default 0; >= 0, and
    /// start_ms + duration_ms <= 18446744073 (simulated time ends at 2^64 ps).
    #[range(min = 0.0, max = super::ranges::END_OF_TIME_MS, note = "simulated time ends at 2^64 ps, about 213 days")]
    pub start_ms: f64,
    /// NVMe submission-queue priority class: "urgent", "high", "medium" or "low". Takes effect
    /// with interface.arbitration = "weighted" (at command fetch) and with tsu.policy =
    /// "priority_out_of_order" (at the die queues). Default "medium".
    pub priority: Priority,
    /// Pinning: channel indices the flow's writes may use; [] = all. Default [].
    #[range(min = 0, max = 255)]
    pub channels: Vec<u32>,
    /// Pinning: chip-in-channel indices; [] = all. Default [].
    #[range(min = 0, max = 63)]
    pub chips: Vec<u32>,
    /// Pinning: die-in-chip indices; [] = all. Default [].
    #[range(min = 0, max = 15)]
    pub dies: Vec<u32>,
    /// Pinning: plane-in-die indices; [] = all. Default [].
    #[range(min = 0, max = 15)]
    pub planes: Vec<u32>,
    /// Issue an NVMe Flush after every this many requests of the flow (synthetic or trace);
    /// the flushes are extra requests, not counted against `requests`. Unset (default): none;
    /// >= 1. A flush waits for the dirty data of the write cache (`cache.flush_scope`).
    #[range(min = 1, max = u64::MAX, note = "a Flush after every that many requests; unset: no flushes")]
    pub flush_every: Option<u64>,
    /// Writes of this flow are Force Unit Access: with a write cache they complete only once
    /// their data is programmed (the cache keeps a clean copy). Default false.
    pub fua: bool,

    // ----- synthetic flows -----
    /// Synthetic: "closed" (queue_depth outstanding) or open loop "fixed", "uniform",
    /// "exponential", "onoff" at `rate_iops`. Default "closed".
    pub arrival: Arrival,
    /// Synthetic open loop: mean arrival rate in requests per second (during ON periods for
    /// "onoff"). Default 0; > 0 when open loop.
    #[range(or_zero, gt = 0.0, max = 1e10, note = "0: unset, closed loop")]
    pub rate_iops: f64,
    /// Synthetic "onoff": mean ON period in ms (exponential). Default 0; > 0 for onoff.
    #[range(or_zero, gt = 0.0, max = 1e9, note = "0: unset")]
    pub on_ms: f64,
    /// Synthetic "onoff": mean OFF period in ms (exponential). Default 0; > 0 for onoff.
    #[range(or_zero, gt = 0.0, max = 1e9, note = "0: unset")]
    pub off_ms: f64,
    /// Synthetic: fraction of requests that are reads. Default 1.0; [0, 1].
    #[range(min = 0.0, max = 1.0)]
    pub read_fraction: f64,
    /// Synthetic: fraction of requests that are TRIMs (NVMe deallocate) of the request's range;
    /// the rest are writes. Default 0; [0, 1 - read_fraction].
    #[range(min = 0.0, max = 1.0)]
    pub trim_fraction: f64,
    /// Synthetic: request size distribution: "fixed", "uniform", "normal" or "list".
    /// Default "fixed".
    pub size: SizeDist,
    /// Synthetic: request size in bytes (fixed), or the mean of "normal". Default 4096; a
    /// positive multiple of 512.
    #[range(min = 0, max = u64::MAX)]
    pub request_bytes: u64,
    /// Synthetic "uniform": smallest size in bytes; a positive multiple of 512. Default 0.
    #[range(min = 0, max = u64::MAX)]
    pub size_min_bytes: u64,
    /// Synthetic "uniform": largest size in bytes; a multiple of 512, >= size_min_bytes.
    /// Default 0.
    #[range(min = 0, max = u64::MAX)]
    pub size_max_bytes: u64,
    /// Synthetic "normal": standard deviation in bytes (MQSim's Variance_Request_Size x 512).
    /// Default 0; >= 0.
    #[range(min = 0, max = 1u64 << 40)]
    pub size_stdev_bytes: u64,
    /// Synthetic "list": sizes with weights, e.g. [{bytes = 4096, weight = 3}]. Default [].
    #[range(nested)]
    pub size_list: Vec<SizeWeight>,
    /// Synthetic address pattern: "random", "sequential", "hotcold", "zipf", "pareto" or
    /// "normal". Default "random".
    pub pattern: AddressPattern,
    /// Alignment of starts in bytes. Synthetic: 0 = request_bytes for fixed sizes, 4096
    /// otherwise. Trace: 0 = no alignment, else starts round down and ends up to it.
    /// Default 0; a multiple of 512.
    #[range(min = 0, max = u64::MAX)]
    pub align_bytes: u64,
    /// Synthetic "sequential": distance between consecutive starts in bytes; 0 = the previous
    /// request's size. Default 0; a multiple of 512.
    #[range(min = 0, max = u64::MAX)]
    pub stride_bytes: u64,
    /// Synthetic "sequential": where the run begins, in bytes from `start_bytes`; it wraps to
    /// the range's start at its end. MQSim begins a STREAMING flow at an address drawn at
    /// random in its working set (IO_Flow_Synthetic.cpp, `Start_simulation`); `ssdkit import
    /// mqsim` sets the one MQSim draws. Default 0; a multiple of 512, below the range's size.
    #[range(min = 0, max = u64::MAX)]
    // At its default the key is left out of results, which stay as before it existed.
    #[serde(skip_serializing_if = "is_zero_u64")]
    pub first_offset_bytes: u64,
    /// Synthetic "sequential": fraction of requests that go to a uniformly random slot of the
    /// range instead (the sequential run continues after them): the MQSim paper's Figure 7
    /// flow, random for a fraction of the time, mixed request by request. Default 0; [0, 1].
    #[range(min = 0.0, max = 1.0)]
    pub random_fraction: f64,
    /// Synthetic "hotcold": fraction of the range that is hot (its start). Default 0; (0, 1).
    #[range(
        or_zero,
        gt = 0.0,
        lt = 1.0,
        note = "0: unset; a cold part must remain"
    )]
    pub hot_space_fraction: f64,
    /// Synthetic "hotcold": fraction of requests to the hot part. Default 0; (0, 1).
    #[range(
        or_zero,
        gt = 0.0,
        lt = 1.0,
        note = "0: unset; a cold part must remain"
    )]
    pub hot_access_fraction: f64,
    /// Synthetic "zipf": exponent theta; P(rank k) ~ k^-theta. Default 0; (0, 100].
    #[range(or_zero, gt = 0.0, max = 100.0, note = "0: unset")]
    pub zipf_theta: f64,
    /// Synthetic "pareto" (fio): h in (0, 1). Default 0.
    #[range(or_zero, gt = 0.0, lt = 1.0, note = "0: unset")]
    pub pareto_h: f64,
    /// Synthetic "normal" (fio): standard deviation as a fraction of the range. Default 0;
    /// (0, 10].
    #[range(or_zero, gt = 0.0, max = 10.0, note = "0: unset")]
    pub normal_stdev_fraction: f64,
    /// Synthetic zipf/pareto/normal: spread popular slots over the range with a fixed keyed
    /// permutation instead of packing them at its start. Default false.
    pub scramble: bool,

    // ----- trace replay -----
    /// Trace file to replay (gzip/zstd read transparently); relative paths are taken from the
    /// config file's folder. Default "" (a synthetic flow).
    pub trace: String,
    /// Trace format name, or "auto" to detect it. Default "auto".
    pub trace_format: TraceFormat,
    /// Generic reader description, for trace_format = "delimited".
    #[range(nested)]
    pub delimited: Option<DelimitedConfig>,
    /// Trace: "timed" (timestamps x time_scale, open loop) or "closed" (as fast as possible
    /// with queue_depth outstanding). Default "timed".
    pub replay: Replay,
    /// Trace timed replay: simulated gap = trace gap x time_scale. Default 1; (0, 1e6].
    #[range(gt = 0.0, max = 1e6)]
    pub time_scale: f64,
    /// Trace: keep only these device/ASU/disk numbers; [] = all. Default [].
    #[range(min = 0, max = u64::MAX)]
    pub devices: Vec<u64>,
    /// Trace: "none" (out-of-range requests are errors), "modulo" or "scale" into the flow's
    /// range. Default "none".
    pub fold: Fold,
    /// Trace: skip and count malformed lines instead of stopping. Default false.
    pub skip_malformed: bool,
    /// Trace: timestamps going back: "clamp" (issue at the previous time, counted) or "error".
    /// Default "clamp".
    pub backwards: Backwards,
}
impl Default for FlowConfig {
    fn default() -> Self {
        Self {
            name: String::new(),
            enabled: true,
            queue_depth: 1,
            start_bytes: 0,
            range_bytes: 0,
            requests: 10_000,
            io_bytes: 0,
            duration_ms: 0.0,
            start_ms: 0.0,
            priority: Priority::Medium,
            channels: vec![],
            chips: vec![],
            dies: vec![],
            planes: vec![],
            flush_every: None,
            fua: false,
            arrival: Arrival::Closed,
            rate_iops: 0.0,
            on_ms: 0.0,
            off_ms: 0.0,
            read_fraction: 1.0,
            trim_fraction: 0.0,
            size: SizeDist::Fixed,
            request_bytes: 4096,
            size_min_bytes: 0,
            size_max_bytes: 0,
            size_stdev_bytes: 0,
            size_list: vec![],
            pattern: AddressPattern::Random,
            align_bytes: 0,
            stride_bytes: 0,
            first_offset_bytes: 0,
            random_fraction: 0.0,
            hot_space_fraction: 0.0,
            hot_access_fraction: 0.0,
            zipf_theta: 0.0,
            pareto_h: 0.0,
            normal_stdev_fraction: 0.0,
            scramble: false,
            trace: String::new(),
            trace_format: TraceFormat::Auto,
            delimited: None,
            replay: Replay::Timed,
            time_scale: 1.0,
            devices: vec![],
            fold: Fold::None,
            skip_malformed: false,
            backwards: Backwards::Clamp,
        }
    }
}

impl FlowConfig {
    pub fn is_trace(&self) -> bool {
        !self.trace.is_empty()
    }
    /// Whether the flow's writes are pinned to a subset of the planes.
    pub fn is_pinned(&self) -> bool {
        !(self.channels.is_empty()
            && self.chips.is_empty()
            && self.dies.is_empty()
            && self.planes.is_empty())
    }
    /// Alignment of generated starts in bytes (docs: 0 = the fixed request size, else 4096).
    pub fn effective_align(&self) -> u64 {
        if self.align_bytes > 0 {
            self.align_bytes
        } else if self.size == SizeDist::Fixed {
            self.request_bytes
        } else {
            4096
        }
    }
    /// Whether requests arrive by time (open loop) rather than keeping a queue depth.
    pub fn is_open_loop(&self) -> bool {
        if self.is_trace() {
            self.replay == Replay::Timed
        } else {
            self.arrival != Arrival::Closed
        }
    }
}

fn is_zero_u64(n: &u64) -> bool {
    *n == 0
}
