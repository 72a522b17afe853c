//! Typed configuration, one section per layer. The structs here are the single source of truth:
//! every field carries its unit, default and allowed range in its doc comment (exported to the
//! JSON Schema), unknown keys are refused, and `validate` runs once at load with messages that
//! name the key path and the allowed values.

mod errors;
mod overrides;
mod presets;
mod settings;
mod validate;
mod workload;

pub use workload::*;

pub use overrides::apply_override;
pub use presets::{preset_names, preset_toml, PRESETS};
pub use settings::{FlowSettings, Settings};

use crate::error::Error;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The whole configuration of one run.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// Run control: seed and limits.
    #[serde(default)]
    pub run: RunConfig,
    /// Host interface logic: NVMe queues and fetch, or a SATA-class link.
    #[serde(default)]
    pub interface: InterfaceConfig,
    /// PCIe link between host and device (NVMe only).
    #[serde(default)]
    pub pcie: PcieConfig,
    /// Flash translation layer: mapping, allocation, garbage collection, wear levelling,
    /// firmware time.
    #[serde(default)]
    pub ftl: FtlConfig,
    /// Device state at time zero: steady state (fast or by writing), filled, or empty.
    #[serde(default)]
    pub precondition: PreconditionConfig,
    /// Flash back end: geometry, cell type, array timings and the channel bus.
    #[serde(default)]
    pub flash: FlashConfig,
    /// Workload flows; each gets its own submission/completion queue pair. At least one.
    #[serde(default, rename = "flow")]
    pub flows: Vec<FlowConfig>,
}

/// `[run]`
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct RunConfig {
    /// Seed from which every random stream of the run derives. Default 1; 0..=2^63-1 (TOML
    /// integers are signed 64-bit).
    pub seed: u64,
    /// Hard cap on simulated time in milliseconds; 0 means no cap. Default 0; >= 0.
    pub max_simulated_ms: f64,
}
impl Default for RunConfig {
    fn default() -> Self {
        Self {
            seed: 1,
            max_simulated_ms: 0.0,
        }
    }
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum InterfaceType {
    /// NVMe: one SQ/CQ pair per flow over PCIe, fetch bounded by `queue_fetch_size`.
    Nvme,
    /// SATA-class: one shared command queue of `ncq_depth` over a half-duplex serial link.
    Sata,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum LinkModel {
    /// Command, data and completion transfers take time on the configured link.
    Modeled,
    /// Host link transfers take zero time (to compare with models that fold them elsewhere).
    Ideal,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Arbitration {
    /// One command per non-empty queue in turn.
    RoundRobin,
    /// Urgent first, then weighted round robin over high, medium and low.
    Weighted,
}

/// `[interface]`
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct InterfaceConfig {
    /// Host interface protocol: "nvme" or "sata". Default "nvme".
    #[serde(rename = "type")]
    pub kind: InterfaceType,
    /// Whether host-link transfers cost time: "modeled" or "ideal". Default "modeled".
    pub link_model: LinkModel,
    /// NVMe: most requests of one submission queue held inside the device at once
    /// (MQSim's QueueFetchSize). Default 512; 1..=65535.
    pub queue_fetch_size: u32,
    /// NVMe: entries per submission queue; a flow's queue depth may not exceed it. Open-loop
    /// flows (NVMe and SATA) hold at most this many requests submitted and not completed.
    /// Default 1024; 2..=65536.
    pub io_queue_depth: u32,
    /// SATA: native command queue depth shared by all flows. Default 32; 1..=32.
    pub ncq_depth: u32,
    /// SATA: link payload rate in MB/s (10^6 B/s) after line coding. Default 300 (3 Gb/s);
    /// (0, 10000].
    pub sata_rate_mbps: f64,
    /// SATA: bytes of framing per FIS (SOF, CRC, EOF, primitives). Default 24; 0..=1024.
    pub sata_frame_overhead_bytes: u32,
    /// SATA: largest data FIS payload in bytes. Default 8192; 512..=65536.
    pub sata_max_data_fis_bytes: u32,
    /// NVMe command fetch arbitration between submission queues: "round_robin" (priorities
    /// must all be the default) or "weighted" (urgent queues first, then high/medium/low in
    /// turns of wrr_high/wrr_medium/wrr_low commands, as NVMe weighted round robin with urgent
    /// class). Default "round_robin".
    pub arbitration: Arbitration,
    /// Weighted arbitration: commands fetched from high-priority queues per turn. Default 4;
    /// 1..=256.
    pub wrr_high: u32,
    /// Weighted arbitration: commands per turn for medium. Default 2; 1..=256.
    pub wrr_medium: u32,
    /// Weighted arbitration: commands per turn for low. Default 1; 1..=256.
    pub wrr_low: u32,
}
impl Default for InterfaceConfig {
    fn default() -> Self {
        Self {
            kind: InterfaceType::Nvme,
            link_model: LinkModel::Modeled,
            queue_fetch_size: 512,
            io_queue_depth: 1024,
            ncq_depth: 32,
            sata_rate_mbps: 300.0,
            sata_frame_overhead_bytes: 24,
            sata_max_data_fis_bytes: 8192,
            arbitration: Arbitration::RoundRobin,
            wrr_high: 4,
            wrr_medium: 2,
            wrr_low: 1,
        }
    }
}

/// `[pcie]`
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct PcieConfig {
    /// PCIe generation: 1 and 2 use 8b/10b at 2.5/5 GT/s, 3/4/5 use 128b/130b at 8/16/32 GT/s.
    /// Default 3; 1..=5.
    pub generation: u32,
    /// Lane count. Default 4; one of 1, 2, 4, 8, 16.
    pub lanes: u32,
    /// Max payload size of one TLP in bytes. Default 128; power of two in 128..=4096.
    pub max_payload_bytes: u32,
    /// Max read request size in bytes (the device's reads of write data). Default 512;
    /// power of two in 128..=4096.
    pub max_read_request_bytes: u32,
    /// Bytes of overhead per TLP on the wire: header, sequence, LCRC, framing, and the share
    /// of DLLPs. Default 28 (MQSim: 20 B header + 6 B DLLP + 2 B PHY); 0..=256.
    pub packet_overhead_bytes: u32,
}
impl Default for PcieConfig {
    fn default() -> Self {
        Self {
            generation: 3,
            lanes: 4,
            max_payload_bytes: 128,
            max_read_request_bytes: 512,
            packet_overhead_bytes: 28,
        }
    }
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Placement {
    /// The logical page number alone fixes channel, way, die and plane (striped in
    /// `allocation_order`).
    Static,
    /// Each write goes to the next plane in `allocation_order` round-robin, skipping planes
    /// whose free space is at the hard GC threshold.
    Dynamic,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum PreconditionMode {
    /// Steady state of the GC policy for the workload's write pattern, set directly from a
    /// mean-field model (Van Houdt 2013) without simulating the writes. O(physical pages).
    Fast,
    /// Ground truth: sequential fill, then uniform random page overwrites through the FTL
    /// (GC, wear levelling; no timing) until the write amplification is stable.
    Write,
    /// Every logical page mapped in the static striping order, blocks filled in order; the
    /// remaining blocks are free (a freshly filled drive: GC starts late).
    Sequential,
    /// Nothing mapped; reads of never-written pages complete without touching flash.
    Empty,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum PreconditionPattern {
    /// From the flows: uniform random over the union of the ranges random-write flows cover
    /// (the rest of the logical space holds cold, fully valid blocks); sequential when no
    /// flow writes randomly.
    Auto,
    /// Uniform random overwrites of the whole logical space.
    Uniform,
    /// Sequential overwrites: every closed block fully valid or fully invalid.
    Sequential,
}

/// `[precondition]`: the device state at time zero.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct PreconditionConfig {
    /// "fast", "write", "sequential" or "empty". Default "fast".
    pub mode: PreconditionMode,
    /// Write pattern whose steady state is built: "auto", "uniform" or "sequential".
    /// Default "auto".
    pub pattern: PreconditionPattern,
    /// Fast mode: drive writes of history assumed when setting erase counts (their mean is
    /// history x write amplification x logical / physical pages). Default 10; [0, 1e6].
    pub history_drive_writes: f64,
    /// Write mode: the write amplification of consecutive windows of this many drive writes
    /// must agree within `write_tolerance`. Default 0.5; (0, 100].
    pub write_window_drive_writes: f64,
    /// Write mode: relative tolerance of the stability test. Default 0.01; (0, 1).
    pub write_tolerance: f64,
    /// Write mode: minimum drive writes of random overwrites after the fill. Default 2;
    /// [0, 1000].
    pub write_min_drive_writes: f64,
    /// Write mode: give up waiting for stability after this many drive writes (the result
    /// says whether it was reached). Default 20; >= `write_min_drive_writes`.
    pub write_max_drive_writes: f64,
}
impl Default for PreconditionConfig {
    fn default() -> Self {
        Self {
            mode: PreconditionMode::Fast,
            pattern: PreconditionPattern::Auto,
            history_drive_writes: 10.0,
            write_window_drive_writes: 0.5,
            write_tolerance: 0.01,
            write_min_drive_writes: 2.0,
            write_max_drive_writes: 20.0,
        }
    }
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum GcPolicy {
    /// The closed block with the fewest valid pages in the plane.
    Greedy,
    /// A uniformly random closed block.
    Random,
    /// Randomized greedy: the fewest valid pages among `gc_d` closed blocks drawn at random.
    DChoices,
    /// The block closed longest ago (LRU/FIFO cleaning).
    Fifo,
    /// Highest age x (1 - u) / 2u (Rosenblum and Ousterhout), u = valid fraction, age = page
    /// writes since the block last changed.
    CostBenefit,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Mapping {
    /// Page-level mapping, whole table in controller DRAM.
    Page,
}

/// `[ftl]`
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct FtlConfig {
    /// Address mapping scheme: "page". Default "page".
    pub mapping: Mapping,
    /// Striping order of logical pages over the parallel units, fastest-varying first:
    /// a permutation of the letters C (channel), W (way/chip), D (die), P (plane).
    /// Default "CWDP" (MQSim's default).
    pub allocation_order: String,
    /// Plane placement of writes: "static" or "dynamic". Default "static".
    pub placement: Placement,
    /// Spare factor (physical - logical) / physical. Default 0.07; [0.01, 0.9].
    pub spare_factor: f64,
    /// Garbage-collection victim policy: "greedy", "random", "d_choices", "fifo" or
    /// "cost_benefit". Default "greedy".
    pub gc_policy: GcPolicy,
    /// Candidates drawn by "d_choices". Default 10; 1..=blocks per plane minus the GC reserve.
    pub gc_d: u32,
    /// GC starts in a plane when its free pages fall below this fraction of its pages (and
    /// in any case one block before user writes would reach the GC reserve).
    /// Default 0.05 (MQSim's GC_Exec_Threshold); (0, 0.5], and above `gc_hard_threshold`.
    pub gc_threshold: f64,
    /// User writes to a plane wait when its free pages fall below this fraction; the rest is
    /// kept for GC. Default 0.005 (MQSim's GC_Hard_Threshold); [0, 0.5]. At least two blocks
    /// per plane are always kept back, whatever this value.
    pub gc_hard_threshold: f64,
    /// Background GC: a die with no queued work collects in its planes whose free pages are
    /// below `gc_background_threshold`. Default false (MQSim has none).
    pub gc_background: bool,
    /// Free-page fraction under which idle-time GC runs. Default 0.06 (just above MQSim's
    /// 0.05 `gc_threshold`); [`gc_threshold`, 0.5], and it must leave spare blocks to collect.
    pub gc_background_threshold: f64,
    /// Preemptible GC: user transactions go before GC transactions on a die, except when a
    /// plane is at its reserve or GC has waited `gc_starvation_limit` user operations. When
    /// false, queued GC transactions go first. Default true.
    pub gc_preemptible: bool,
    /// User operations a die may run in a row while GC transactions wait. Default 8; >= 1.
    pub gc_starvation_limit: u32,
    /// Copyback: GC moves a page inside its plane (read into the page register, program
    /// from it) without the channel. GC always writes into the victim's plane, which is the
    /// copyback constraint. Default false.
    pub gc_copyback: bool,
    /// Dynamic wear levelling: a new block is the free block with the fewest erases (else
    /// the oldest free block). Default true.
    pub wl_dynamic: bool,
    /// Static wear levelling: when a plane's erase-count spread (max - min) exceeds
    /// `wl_static_threshold`, the closed block with the fewest erases (cold data) is
    /// migrated so it returns to use. Default false.
    pub wl_static: bool,
    /// Erase-count spread that triggers static wear levelling. Default 100; >= 1.
    pub wl_static_threshold: u32,
    /// At most one static migration per this many GC runs of a plane. Default 16; >= 1.
    pub wl_static_interval: u32,
    /// Firmware time to process one request (parse, split, translate setup), microseconds.
    /// Default 1.0; [0, 10000].
    pub firmware_request_us: f64,
    /// Firmware time per page transaction (translation, scheduling), microseconds.
    /// Default 0.25; [0, 10000].
    pub firmware_transaction_us: f64,
}
impl Default for FtlConfig {
    fn default() -> Self {
        Self {
            mapping: Mapping::Page,
            allocation_order: "CWDP".into(),
            placement: Placement::Static,
            spare_factor: 0.07,
            gc_policy: GcPolicy::Greedy,
            gc_d: 10,
            gc_threshold: 0.05,
            gc_hard_threshold: 0.005,
            gc_background: false,
            gc_background_threshold: 0.06,
            gc_preemptible: true,
            gc_starvation_limit: 8,
            gc_copyback: false,
            wl_dynamic: true,
            wl_static: false,
            wl_static_threshold: 100,
            wl_static_interval: 16,
            firmware_request_us: 1.0,
            firmware_transaction_us: 0.25,
        }
    }
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
pub enum CellType {
    SLC,
    MLC,
    TLC,
    QLC,
}
impl CellType {
    pub fn bits(self) -> usize {
        match self {
            CellType::SLC => 1,
            CellType::MLC => 2,
            CellType::TLC => 3,
            CellType::QLC => 4,
        }
    }
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum PageTypeMapping {
    /// Page i of a block has type i mod bits-per-cell (LSB, CSB, ..., MSB).
    Cyclic,
    /// Seed 001 (SimpleSSD): the first 5 pages LSB, the next 3 CSB (the 8 "meta" pages),
    /// then type = ((i - 8) / planes_per_die) mod bits-per-cell.
    Simplessd,
}

/// `[flash]`
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct FlashConfig {
    /// Channels (independent buses). Default 8; 1..=256.
    pub channels: u32,
    /// Chips (ways) sharing each channel. Default 4; 1..=64.
    pub chips_per_channel: u32,
    /// Dies per chip; dies execute array operations independently (interleaving).
    /// Default 2; 1..=16.
    pub dies_per_chip: u32,
    /// Planes per die; planes of a die can work together in multi-plane operations.
    /// Default 2; 1..=16.
    pub planes_per_die: u32,
    /// Blocks per plane. Default 2048; 8..=1048576.
    pub blocks_per_plane: u32,
    /// Pages per block. Default 256; 4..=65536.
    pub pages_per_block: u32,
    /// Page size in bytes. Default 8192; a power of two in 512..=32768.
    pub page_size_bytes: u32,
    /// Cell type: "SLC", "MLC", "TLC" or "QLC". Default "MLC".
    pub cell_type: CellType,
    /// Page type of each page in a block: "cyclic" or "simplessd". Default "cyclic".
    pub page_type_mapping: PageTypeMapping,
    /// Array read time tR per page type (LSB first), microseconds; one value per bit of the
    /// cell type. Default [75, 75]; each in (0, 100000].
    pub read_us: Vec<f64>,
    /// Array program time tPROG per page type (LSB first), microseconds; one per bit.
    /// Default [750, 750]; each in (0, 100000].
    pub program_us: Vec<f64>,
    /// Block erase time tBERS, microseconds. Default 3800; (0, 1000000].
    pub erase_us: f64,
    /// Whether reads, programs and erases may run on several planes of a die at once (same
    /// page offset for reads/programs, same block offset for erases). Default true.
    pub multiplane: bool,
    /// Channel bus and controller timing.
    pub bus: BusConfig,
}
impl Default for FlashConfig {
    fn default() -> Self {
        Self {
            channels: 8,
            chips_per_channel: 4,
            dies_per_chip: 2,
            planes_per_die: 2,
            blocks_per_plane: 2048,
            pages_per_block: 256,
            page_size_bytes: 8192,
            cell_type: CellType::MLC,
            page_type_mapping: PageTypeMapping::Cyclic,
            read_us: vec![75.0, 75.0],
            program_us: vec![750.0, 750.0],
            erase_us: 3800.0,
            multiplane: true,
            bus: BusConfig::default(),
        }
    }
}

/// `[flash.bus]`
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct BusConfig {
    /// Data bus width in bits. Default 8; 8 or 16.
    pub width_bits: u32,
    /// Data transfer rate in MT/s (ONFI NV-DDR2 at 333 MT/s moves 333 MB/s on 8 bits).
    /// Default 333; (0, 10000].
    pub rate_mts: f64,
    /// Duration of one command or address cycle, nanoseconds. Default 5; [0, 1000].
    pub cmd_addr_cycle_ns: f64,
    /// Command + address cycles of a read (00h, 5 address, 30h). Default 7; 0..=64.
    pub read_cmd_cycles: u32,
    /// Command + address cycles of a program (80h, 5 address, 10h). Default 7; 0..=64.
    pub program_cmd_cycles: u32,
    /// Command + address cycles of an erase (60h, 3 address, D0h). Default 5; 0..=64.
    pub erase_cmd_cycles: u32,
    /// Seed 002's channel switch delay for reads: the controller issues one page operation
    /// per this delay, and the die is busy for it, microseconds. Default 0; [0, 10000].
    pub channel_switch_read_us: f64,
    /// Seed 002's channel switch delay for programs and erases, microseconds. Default 0;
    /// [0, 10000].
    pub channel_switch_write_us: f64,
    /// Seed 002's way switch delay: added to a bus transfer when the channel passes from one
    /// chip to another, microseconds. Default 0; [0, 10000].
    pub way_switch_us: f64,
}
impl Default for BusConfig {
    fn default() -> Self {
        Self {
            width_bits: 8,
            rate_mts: 333.0,
            cmd_addr_cycle_ns: 5.0,
            read_cmd_cycles: 7,
            program_cmd_cycles: 7,
            erase_cmd_cycles: 5,
            channel_switch_read_us: 0.0,
            channel_switch_write_us: 0.0,
            way_switch_us: 0.0,
        }
    }
}

/// One `[[flow]]`: a synthetic workload or a trace replay, with its own NVMe queue pair
/// (docs/workloads.md). Keys of the other kind must stay at their defaults.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct FlowConfig {
    /// Name shown in results. Default "flow<index>".
    pub name: String,
    /// Closed loop (synthetic `arrival = "closed"`, trace `replay = "closed"`): requests kept
    /// outstanding. Default 1; 1..=65535 and <= interface.io_queue_depth.
    pub queue_depth: u32,
    /// First byte of the flow's address range (working-set offset). Default 0; a multiple of
    /// 512 inside the capacity.
    pub start_bytes: u64,
    /// Length of the address range (working-set size) in bytes; 0 means to the end of the
    /// logical capacity. Default 0; a multiple of 512.
    pub range_bytes: u64,
    /// Stop after this many requests; 0 means no count limit. Default 10000 for synthetic
    /// flows, 0 (the whole trace) for trace flows.
    pub requests: u64,
    /// Stop after this many bytes have been requested; 0 means no byte limit. Default 0.
    pub io_bytes: u64,
    /// Stop issuing this long after `start_ms`, in simulated milliseconds; 0 means no time
    /// limit. Default 0; >= 0, and start_ms + duration_ms <= 18446744073 (2^64 ps, about 213
    /// days). A synthetic flow needs `requests`, `io_bytes` or `duration_ms`.
    pub duration_ms: f64,
    /// Simulated time of the flow's first request in milliseconds. Default 0; >= 0, and
    /// start_ms + duration_ms <= 18446744073 (simulated time ends at 2^64 ps).
    pub start_ms: f64,
    /// NVMe submission-queue priority class: "urgent", "high", "medium" or "low". Takes effect
    /// with interface.arbitration = "weighted". Default "medium".
    pub priority: Priority,
    /// Pinning: channel indices the flow's writes may use; [] = all. Default [].
    pub channels: Vec<u32>,
    /// Pinning: chip-in-channel indices; [] = all. Default [].
    pub chips: Vec<u32>,
    /// Pinning: die-in-chip indices; [] = all. Default [].
    pub dies: Vec<u32>,
    /// Pinning: plane-in-die indices; [] = all. Default [].
    pub planes: Vec<u32>,

    // ----- synthetic flows -----
    /// Synthetic: "closed" (queue_depth outstanding) or open loop "fixed", "uniform",
    /// "exponential", "onoff" at `rate_iops`. Default "closed".
    pub arrival: Arrival,
    /// Synthetic open loop: mean arrival rate in requests per second (during ON periods for
    /// "onoff"). Default 0; > 0 when open loop.
    pub rate_iops: f64,
    /// Synthetic "onoff": mean ON period in ms (exponential). Default 0; > 0 for onoff.
    pub on_ms: f64,
    /// Synthetic "onoff": mean OFF period in ms (exponential). Default 0; > 0 for onoff.
    pub off_ms: f64,
    /// Synthetic: fraction of requests that are reads. Default 1.0; [0, 1].
    pub read_fraction: f64,
    /// Synthetic: fraction of requests that are TRIMs (NVMe deallocate) of the request's range;
    /// the rest are writes. Default 0; [0, 1 - read_fraction].
    pub trim_fraction: f64,
    /// Synthetic: request size distribution: "fixed", "uniform", "normal" or "list".
    /// Default "fixed".
    pub size: SizeDist,
    /// Synthetic: request size in bytes (fixed), or the mean of "normal". Default 4096; a
    /// positive multiple of 512.
    pub request_bytes: u64,
    /// Synthetic "uniform": smallest size in bytes; a positive multiple of 512. Default 0.
    pub size_min_bytes: u64,
    /// Synthetic "uniform": largest size in bytes; a multiple of 512, >= size_min_bytes.
    /// Default 0.
    pub size_max_bytes: u64,
    /// Synthetic "normal": standard deviation in bytes (MQSim's Variance_Request_Size x 512).
    /// Default 0; >= 0.
    pub size_stdev_bytes: u64,
    /// Synthetic "list": sizes with weights, e.g. [{bytes = 4096, weight = 3}]. Default [].
    pub size_list: Vec<SizeWeight>,
    /// Synthetic address pattern: "random", "sequential", "hotcold", "zipf", "pareto" or
    /// "normal". Default "random".
    pub pattern: AddressPattern,
    /// Alignment of starts in bytes. Synthetic: 0 = request_bytes for fixed sizes, 4096
    /// otherwise. Trace: 0 = no alignment, else starts round down and ends up to it.
    /// Default 0; a multiple of 512.
    pub align_bytes: u64,
    /// Synthetic "sequential": distance between consecutive starts in bytes; 0 = the previous
    /// request's size. Default 0; a multiple of 512.
    pub stride_bytes: u64,
    /// Synthetic "hotcold": fraction of the range that is hot (its start). Default 0; (0, 1).
    pub hot_space_fraction: f64,
    /// Synthetic "hotcold": fraction of requests to the hot part. Default 0; (0, 1).
    pub hot_access_fraction: f64,
    /// Synthetic "zipf": exponent theta; P(rank k) ~ k^-theta. Default 0; (0, 100].
    pub zipf_theta: f64,
    /// Synthetic "pareto" (fio): h in (0, 1). Default 0.
    pub pareto_h: f64,
    /// Synthetic "normal" (fio): standard deviation as a fraction of the range. Default 0;
    /// (0, 10].
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
    pub delimited: Option<DelimitedConfig>,
    /// Trace: "timed" (timestamps x time_scale, open loop) or "closed" (as fast as possible
    /// with queue_depth outstanding). Default "timed".
    pub replay: Replay,
    /// Trace timed replay: simulated gap = trace gap x time_scale. Default 1; (0, 1e6].
    pub time_scale: f64,
    /// Trace: keep only these device/ASU/disk numbers; [] = all. Default [].
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

impl Config {
    /// Parses TOML text (after applying `key.path=value` overrides), fills in defaults and
    /// validates. `origin` names the source in error messages.
    pub fn load(text: &str, origin: &str, overrides: &[String]) -> Result<Config, Error> {
        let mut value: toml::Value =
            toml::from_str(text).map_err(|e| Error::Config(errors::syntax(text, origin, &e)))?;
        for o in overrides {
            apply_override(&mut value, o)?;
        }
        errors::check_shapes(&value).map_err(|m| Error::Config(format!("{origin}: {m}")))?;
        if let Some(flows) = value.get_mut("flow").and_then(|f| f.as_array_mut()) {
            for f in flows.iter_mut().filter_map(|f| f.as_table_mut()) {
                if f.contains_key("trace") && !f.contains_key("requests") {
                    f.insert("requests".into(), toml::Value::Integer(0));
                }
            }
        }
        let de = toml::Value::try_into::<toml::Value>(value)
            .map_err(|e| Error::Config(format!("{origin}: {e}")))?;
        let mut cfg: Config = serde_path_to_error::deserialize(de).map_err(|e| {
            let path = e.path().to_string();
            let inner = e.into_inner().to_string();
            // toml appends "\nin `a.b`"; the key path already leads the message.
            let inner = inner
                .split("\nin `")
                .next()
                .unwrap_or("")
                .trim_end()
                .replace('\n', " ");
            let inner = errors::overflowing_override(&inner).unwrap_or(inner);
            if path == "." || path.is_empty() {
                Error::Config(format!("{origin}: {inner}"))
            } else {
                Error::Config(format!(
                    "{origin}: key `{}`: {inner}",
                    path.replace("flow[", "flow.").replace(']', "")
                ))
            }
        })?;
        let base = std::path::Path::new(origin)
            .parent()
            .filter(|_| std::path::Path::new(origin).is_file());
        for (i, f) in cfg.flows.iter_mut().enumerate() {
            if f.name.is_empty() {
                f.name = format!("flow{i}");
            }
            if let Some(dir) = base {
                if f.is_trace() && std::path::Path::new(&f.trace).is_relative() {
                    f.trace = dir.join(&f.trace).to_string_lossy().into_owned();
                }
            }
        }
        validate::validate(&cfg).map_err(|m| Error::Config(format!("{origin}: {m}")))?;
        Ok(cfg)
    }

    /// The configuration as TOML, every default written out.
    pub fn to_toml(&self) -> String {
        toml::to_string(self).expect("configuration always serialises")
    }

    /// FNV-1a hash of the canonical JSON form: identifies the configuration in results.
    pub fn hash_hex(&self) -> String {
        let s = serde_json::to_string(self).expect("configuration always serialises");
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in s.bytes() {
            h ^= b as u64;
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
        format!("{h:016x}")
    }
}

/// JSON Schema of the configuration, for editors and for `docs/config.schema.json`.
pub fn schema_json() -> String {
    let schema = schemars::schema_for!(Config);
    serde_json::to_string_pretty(&schema).expect("schema serialises")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// docs/config.schema.json is generated from these structs; keep it current
    /// (`make schema` rewrites it).
    #[test]
    fn schema_file_is_current() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/config.schema.json");
        let now = schema_json() + "\n";
        if std::env::var_os("UPDATE_SCHEMA").is_some() {
            std::fs::write(path, &now).unwrap();
        }
        let on_disk = std::fs::read_to_string(path).unwrap_or_default();
        assert!(
            on_disk == now,
            "docs/config.schema.json is stale: run `make schema`"
        );
    }

    #[test]
    fn presets_load_and_unknown_keys_are_refused() {
        for (name, _) in preset_names() {
            Config::load(preset_toml(name).unwrap(), name, &[]).unwrap();
        }
        let e = Config::load(
            preset_toml("x25m").unwrap(),
            "x25m",
            &["flash.chanels=3".into()],
        )
        .unwrap_err();
        let m = e.to_string();
        assert!(m.contains("chanels") && m.contains("channels"), "{m}");
        let e = Config::load(
            "",
            "t",
            &[
                "flash.page_size_bytes=3000".into(),
                "flow.0.requests=1".into(),
            ],
        )
        .unwrap_err();
        assert!(e.to_string().contains("flash.page_size_bytes"), "{e}");
        let e = preset_toml("nope").unwrap_err();
        assert!(e.to_string().contains("mqsim-paper"), "{e}");
    }
}
