//! Workload configuration types: synthetic distributions and trace replay (docs/workloads.md).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

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
#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SizeWeight {
    /// Request size in bytes; a positive multiple of 512.
    pub bytes: u64,
    /// Relative weight; > 0.
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

/// `[flow.delimited]`: the generic delimited-text trace reader.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct DelimitedConfig {
    /// One character, or "whitespace" (runs of spaces and tabs). Default "whitespace".
    pub delimiter: String,
    /// Lines skipped at the top of the file. Default 0.
    pub header_lines: u64,
    /// Lines starting with this text are skipped; "" = none. Default "#".
    pub comment: String,
    /// 1-based column of the timestamp; 0 = no timestamps (all requests at time 0). Default 0.
    pub time_column: u32,
    /// Unit of the time column. Default "s".
    pub time_unit: TimeUnit,
    /// 1-based column of the start address. Required (>= 1).
    pub offset_column: u32,
    /// Bytes per unit of the offset column. Default 512; >= 1.
    pub offset_unit_bytes: u64,
    /// 1-based column of the request size. Required (>= 1).
    pub size_column: u32,
    /// Bytes per unit of the size column. Default 1; >= 1.
    pub size_unit_bytes: u64,
    /// 1-based column of the operation. Required (>= 1).
    pub op_column: u32,
    /// Exact texts of the op column meaning read.
    pub read_values: Vec<String>,
    /// Exact texts of the op column meaning write.
    pub write_values: Vec<String>,
    /// Exact texts of the op column meaning TRIM/discard.
    pub trim_values: Vec<String>,
    /// At least 0: the op column is an integer and this bit set means write, clear means
    /// read (read_values and write_values must then be empty). Default -1 (off).
    pub op_write_bit: i32,
    /// 1-based column of the device/ASU number used by `devices`; 0 = none. Default 0.
    pub device_column: u32,
    /// 1-based column that marks request lines; 0 = every line is a request. Default 0.
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
