//! Configuration of the flash translation layer and of the device state at time zero:
//! `[ftl]` and `[precondition]`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use ssdkit_macros::ranges;

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

/// `ftl.gc_policy`: the garbage-collection victim policy, one variant per policy carrying
/// its own parameters. A table tagged by `type`
/// (`ftl.gc_policy = { type = "d_choices", d = 10 }`) or the bare name for the policy with
/// its default parameters (`ftl.gc_policy = "d_choices"`).
#[ranges]
#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum GcPolicy {
    /// The closed block with the fewest valid pages in the plane.
    Greedy {},
    /// A uniformly random closed block.
    Random {},
    /// Randomized greedy: the fewest valid pages among `d` closed blocks drawn at random.
    DChoices {
        /// Candidates drawn. Default 10; 1..=blocks per plane minus the GC reserve and the
        /// 2 open blocks.
        #[serde(default = "default_gc_d")]
        #[range(min = 1, max = 1u64 << 20, note = "at most the closed blocks of a plane")]
        d: u32,
    },
    /// The block closed longest ago (LRU/FIFO cleaning).
    Fifo {},
    /// Highest age x (1 - u) / 2u (Rosenblum and Ousterhout), u = valid fraction, age = page
    /// writes since the block last changed.
    CostBenefit {},
}

fn default_gc_d() -> u32 {
    10
}

impl Default for GcPolicy {
    fn default() -> Self {
        GcPolicy::Greedy {}
    }
}

impl GcPolicy {
    /// The policy's name, its `type`.
    pub fn name(&self) -> String {
        super::tagged::type_name(self)
    }
}

/// `ftl.mapping`: the address mapping scheme, one variant per scheme carrying its own
/// parameters. A table tagged by `scheme` (`ftl.mapping = { scheme = "hybrid", log_blocks = 8 }`)
/// or the bare name for the scheme with its defaults (`ftl.mapping = "block"`).
#[ranges]
#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(tag = "scheme", rename_all = "snake_case", deny_unknown_fields)]
pub enum Mapping {
    /// Page-level mapping: any logical page in any physical page, the map whole in DRAM or
    /// cached (`ftl.cmt`).
    Page {},
    /// Block-level mapping: a logical block maps to one physical block of a fixed plane, page
    /// offsets fixed; an overwrite merges the block into a new one.
    Block {},
    /// Block mapping with log blocks that absorb overwrites (switch, partial and full merges).
    Hybrid {
        /// "set": log blocks a data block may own (SimpleSSD's baseline: 8); "full": the log
        /// pool of each plane, shared by every data block (FAST). Default 8; 1..=2^20, and
        /// at most what the plane's spare blocks allow (docs/ftl.md).
        #[serde(default = "default_log_blocks")]
        #[range(min = 1, max = 1u64 << 20, note = "at most the spare blocks of a plane allow")]
        log_blocks: u32,
        /// "set" (each log block serves one data block) or "full" (one log pool per plane
        /// shared by every data block). Default "set".
        #[serde(default)]
        associativity: Associativity,
    },
}

fn default_log_blocks() -> u32 {
    8
}

impl Default for Mapping {
    fn default() -> Self {
        Mapping::Page {}
    }
}

impl Mapping {
    /// The scheme's name, its `scheme`.
    pub fn name(&self) -> &'static str {
        match self {
            Mapping::Page {} => "page",
            Mapping::Block {} => "block",
            Mapping::Hybrid { .. } => "hybrid",
        }
    }
}

/// `ftl.mapping.associativity` of the hybrid scheme.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Associativity {
    /// Set associative: each log block serves one data block, which owns up to `log_blocks`
    /// of them (SimpleSSD, IEEE CAL 2018).
    #[default]
    Set,
    /// Fully associative: one pool of `log_blocks` log blocks per plane shared by every data
    /// block, oldest reclaimed first (FAST, Lee et al., ACM TECS 2007).
    Full,
}

/// `[ftl]`
#[ranges]
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct FtlConfig {
    /// Address mapping scheme, a table tagged by `scheme` with its parameters, or its name
    /// alone for its defaults: "page" (the cached map of `ftl.cmt` applies), "block" or
    /// "hybrid" (`log_blocks`: default 8; `associativity`: "set" or "full", default "set").
    /// Default "page".
    #[serde(deserialize_with = "super::tagged::name_or_scheme")]
    #[schemars(schema_with = "super::tagged::schema_by::<Mapping>")]
    #[range(nested)]
    pub mapping: Mapping,
    /// The cached mapping table: which mapping entries the controller's DRAM holds.
    #[range(nested)]
    pub cmt: super::CmtConfig,
    /// Striping order of logical pages over the parallel units, fastest-varying first:
    /// a permutation of the letters C (channel), W (way/chip), D (die), P (plane).
    /// Default "CWDP" (MQSim's default).
    pub allocation_order: String,
    /// Plane placement of writes: "static" or "dynamic". Default "static".
    pub placement: Placement,
    /// Spare factor (physical - logical) / physical. Default 0.07; [0.01, 0.9].
    #[range(min = 0.01, max = 0.9)]
    pub spare_factor: f64,
    /// Garbage-collection victim policy, a table tagged by `type` with the policy's
    /// parameters, or its name alone for its defaults: "greedy", "random", "d_choices"
    /// (`d`, the candidates drawn: default 10), "fifo" or "cost_benefit". Default "greedy".
    #[serde(deserialize_with = "super::tagged::name_or_table")]
    #[schemars(schema_with = "super::tagged::schema::<GcPolicy>")]
    #[range(nested)]
    pub gc_policy: GcPolicy,
    /// GC start threshold: while a plane's free pages are below this fraction of its pages,
    /// each block a write frontier opens starts a collection (one victim) if none runs in the
    /// plane, as MQSim's GC_Exec_Threshold does; with `gc_refill`, GC instead collects victim
    /// after victim until the plane is back above it. It is never later than one block before
    /// user writes would reach the GC reserve.
    /// Default 0.05 (MQSim's GC_Exec_Threshold); (0, 0.5], and above `gc_hard_threshold`.
    #[range(gt = 0.0, max = 0.5)]
    pub gc_threshold: f64,
    /// GC reserve: when a plane's free blocks fall to this fraction of its blocks, GC becomes
    /// foreground (its transactions go before user ones on the die) and user writes to the
    /// plane wait until a collection frees a block; the reserve is kept for GC's moves. Default 0.005 (MQSim's GC_Hard_Threshold); [0, 0.5]. At least two blocks
    /// per plane are always kept back, whatever this value.
    #[range(min = 0.0, max = 0.5)]
    pub gc_hard_threshold: f64,
    /// Background GC: a die with no queued work collects in its planes whose free pages are
    /// below `gc_background_threshold`. Default false (MQSim has none).
    pub gc_background: bool,
    /// Free-page fraction under which idle-time GC runs. Default 0.06 (just above MQSim's
    /// 0.05 `gc_threshold`); (`gc_hard_threshold`, 0.5], and it must leave spare blocks to
    /// collect. Below `gc_threshold` it makes idle dies keep a small margin above the reserve
    /// without refilling the whole start threshold.
    #[range(gt = 0.0, max = 0.5)]
    pub gc_background_threshold: f64,
    /// Refill: after a collection ends, a plane still below `gc_threshold` collects the
    /// next victim at once, so GC running beside user I/O refills the pool to the threshold
    /// whenever the dies have time (hysteresis firmware). The spare it holds free is lost to
    /// the data, which raises write amplification, and under a load just below saturation
    /// the pool drifts for a long time. Default false: one collection per block opened below
    /// the threshold (MQSim), so under sustained writes the pool settles at the reserve.
    pub gc_refill: bool,
    /// Foreground GC, as simple firmware and classic simulators run it: a plane collects only
    /// when a user write has taken the last page it may use (the plane is at its reserve,
    /// `gc_hard_threshold`), and the cycle (victim moves and erase) goes before user operations
    /// on its die, so the next write to that plane waits for the whole cycle. `gc_threshold`
    /// does not apply. Default false: GC starts at `gc_threshold` and runs beside user I/O.
    pub gc_foreground: bool,
    /// Preemptible GC: user transactions go before GC transactions on a die, except when a
    /// plane is at its reserve or GC has waited `gc_starvation_limit` user operations. When
    /// false, queued GC transactions go first. Default true.
    pub gc_preemptible: bool,
    /// User operations a die may run in a row while GC transactions wait. Default 8; >= 1.
    #[range(min = 1, max = u32::MAX)]
    pub gc_starvation_limit: u32,
    /// Reads of never-written (or trimmed) pages: `complete` (default: answered from the
    /// mapping table without flash, as drives do, counted in `unmapped_page_reads`) or
    /// `read_flash` (as MQSim does: the read takes the next page of its plane's user frontier
    /// and reads it from flash; counted in `pages_mapped_by_reads`). MQSim also maps the page
    /// there, so its later reads find it and GC moves it; ssdkit keeps no mapping (no table
    /// grows with such reads): each read takes a page, which GC erases without moving. A
    /// plane whose user writes wait at the GC reserve cannot give a page; such a read is
    /// answered without flash.
    pub unmapped_reads: UnmappedReads,
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
    #[range(min = 1, max = u32::MAX)]
    pub wl_static_threshold: u32,
    /// At most one static migration per this many GC runs of a plane. Default 16; >= 1.
    #[range(min = 1, max = u32::MAX)]
    pub wl_static_interval: u32,
    /// Firmware time to process one request (parse, split, translate setup), microseconds.
    /// Default 1.0; [0, 10000].
    #[range(min = 0.0, max = 10000.0)]
    pub firmware_request_us: f64,
    /// Firmware time per page transaction (translation, scheduling), microseconds.
    /// Default 0.25; [0, 10000].
    #[range(min = 0.0, max = 10000.0)]
    pub firmware_transaction_us: f64,
}
impl Default for FtlConfig {
    fn default() -> Self {
        Self {
            mapping: Mapping::Page {},
            cmt: Default::default(),
            allocation_order: "CWDP".into(),
            placement: Placement::Static,
            spare_factor: 0.07,
            gc_policy: GcPolicy::default(),
            gc_threshold: 0.05,
            gc_hard_threshold: 0.005,
            gc_background: false,
            gc_background_threshold: 0.06,
            gc_refill: false,
            gc_foreground: false,
            gc_preemptible: true,
            gc_starvation_limit: 8,
            unmapped_reads: UnmappedReads::Complete,
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

/// `ftl.unmapped_reads`.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum UnmappedReads {
    /// Answered without flash.
    #[default]
    Complete,
    /// Mapped on first read and read from flash (MQSim).
    ReadFlash,
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

/// `precondition.free_pool`: the free space per plane the preconditioned state keeps, that
/// is which steady state it builds (docs/ftl.md, "Steady state and the GC thresholds").
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum FreePool {
    /// `reserve`; with `ftl.gc_refill`, `reserve` only when the flows write faster than GC
    /// can refill the pool at the GC start threshold (a back-end load estimate, recorded in
    /// the result), else `gc_start`.
    #[default]
    Auto,
    /// The pool a saturating writer holds: user writes wait at the GC reserve
    /// (`ftl.gc_hard_threshold`), so each plane keeps its reserve blocks plus the
    /// partly written user and GC frontiers, about one block (the MQSim paper, FAST'18, section 4.4: "only
    /// very few flash blocks are assumed to remain free").
    Reserve,
    /// The pool GC refills when the load leaves it time: the GC start threshold
    /// (`ftl.gc_threshold`) plus half a victim's gain.
    GcStart,
}

/// `[precondition]`: the device state at time zero.
#[ranges]
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct PreconditionConfig {
    /// "fast", "write", "sequential" or "empty". Default "fast".
    pub mode: PreconditionMode,
    /// Write pattern whose steady state is built: "auto", "uniform" or "sequential".
    /// Default "auto".
    pub pattern: PreconditionPattern,
    /// Fast and write modes: the free pool of the steady state built, "auto", "reserve" or
    /// "gc_start" (see `FreePool`). It sets the spare really left to hold data, so the
    /// write amplification: on mqsim-paper (7 % spare) greedy's is about 7.7 at the reserve
    /// and about 22 at the 5 % GC start threshold. Default "auto".
    pub free_pool: FreePool,
    /// Fraction of the logical space that holds data at the start (MQSim's
    /// Initial_Occupancy_Percentage / 100), for fast and sequential modes: the first part of
    /// every footprint range and of every range around them in fast mode, the first part of
    /// the logical space in sequential mode; the rest is unmapped (reads of it follow
    /// `ftl.unmapped_reads`, writes fill it). Default 1; (0, 1].
    #[range(gt = 0.0, max = 1.0)]
    pub occupancy: f64,
    /// Fast mode: drive writes of history assumed when setting erase counts (their mean is
    /// history x write amplification x logical / physical pages). Default 10; [0, 1e6].
    #[range(min = 0.0, max = 1e6)]
    pub history_drive_writes: f64,
    /// Write mode: the write amplification of consecutive windows of this many drive writes
    /// must agree within `write_tolerance`. Default 0.5; (0, 100].
    #[range(gt = 0.0, max = 100.0)]
    pub write_window_drive_writes: f64,
    /// Write mode: relative tolerance of the stability test. Default 0.01; (0, 1).
    #[range(gt = 0.0, lt = 1.0)]
    pub write_tolerance: f64,
    /// Write mode: minimum drive writes of random overwrites after the fill. Default 2;
    /// [0, 1000].
    #[range(min = 0.0, max = 1000.0)]
    pub write_min_drive_writes: f64,
    /// Write mode: give up waiting for stability after this many drive writes (the result
    /// says whether it was reached). Default 20; >= `write_min_drive_writes`.
    #[range(min = 0.0, max = 1e4)]
    pub write_max_drive_writes: f64,
    /// Seed of the preconditioned device: the random draws of fast and write modes, the
    /// entries a warm mapping cache starts with, and the GC's random stream (d-choices and
    /// random victims), which the device carries into the run as a snapshot does. Unset
    /// (default): `run.seed`. Sweeps set it so that points on one device start from one state
    /// while their workloads draw from their own seeds; 0..=2^63-1.
    #[range(min = 0, max = u64::MAX, note = "any 64-bit seed")]
    pub seed: Option<u64>,
}
impl Default for PreconditionConfig {
    fn default() -> Self {
        Self {
            mode: PreconditionMode::Fast,
            pattern: PreconditionPattern::Auto,
            free_pool: FreePool::Auto,
            occupancy: 1.0,
            history_drive_writes: 10.0,
            write_window_drive_writes: 0.5,
            write_tolerance: 0.01,
            write_min_drive_writes: 2.0,
            write_max_drive_writes: 20.0,
            seed: None,
        }
    }
}
