//! Configuration of the controller's DRAM data cache: `[cache]` (docs/cache.md).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use ssdkit_macros::ranges;

/// `cache.mode`.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum CacheMode {
    /// No data cache: every request goes to flash.
    #[default]
    Off,
    /// Write-back cache: writes complete once their data is in DRAM; reads of cached sectors
    /// are served from DRAM, read misses are not cached.
    Write,
    /// Read cache: pages read from flash stay in DRAM; writes go to flash and update the
    /// cached copy's valid sectors.
    Read,
    /// Both.
    ReadWrite,
}

impl CacheMode {
    pub fn caches_writes(self) -> bool {
        matches!(self, CacheMode::Write | CacheMode::ReadWrite)
    }
    pub fn caches_reads(self) -> bool {
        matches!(self, CacheMode::Read | CacheMode::ReadWrite)
    }
}

/// `cache.sharing`.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum CacheSharing {
    /// One LRU over the whole capacity, all flows together.
    #[default]
    Shared,
    /// One LRU per flow, each with its share of the capacity (`cache.shares`).
    PerFlow,
}

/// `cache.flush_scope`.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum FlushScope {
    /// A Flush waits for the dirty data its own flow wrote (NVMe: the namespace of the queue).
    #[default]
    Flow,
    /// A Flush waits for every dirty page of the device.
    Device,
}

/// `cache.precondition`.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum CachePrecondition {
    /// The cache starts empty.
    #[default]
    Empty,
    /// A write cache starts full of dirty pages (MQSim's "write cache warm"): whole pages
    /// drawn uniformly from the address ranges of the flows that write, each partition filled
    /// from its own flow (shared: the writing flows in turn).
    Dirty,
}

/// `cache.write_back`.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum CacheWriteBack {
    /// A dirty page is written to flash when it leaves the cache (least recently used, when
    /// a write needs its slot), for a Flush, or for a FUA write: the cache absorbs
    /// rewrites and bursts, as a drive's write-back cache does.
    #[default]
    OnEviction,
    /// MQSim's ADVANCED cache manager (Data_Cache_Manager_Flash_Advanced.cpp:266-345,
    /// 440-480): a write to a page not written in the current one-second window (a set of
    /// written pages per flow, cleared by the first write after each window,
    /// `.h:56-58`, `cpp:338-342`) goes to flash at once and leaves the cache once programmed
    /// unless written again; pages written again within the window stay dirty until evicted.
    /// Writes wait while write-backs in flight carry one page per plane of data
    /// (SSD_Device.cpp:335-339), whatever the free slots.
    Mqsim,
}

/// `[cache]`: the DRAM data cache and the DRAM it lives in (the MQSim paper, FAST'18, section 4.2.2).
#[ranges]
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct CacheConfig {
    /// "off" (default), "write" (write-back), "read" or "read_write". With "off",
    /// `capacity_bytes`, `sharing`, `shares` and `precondition` must stay at their defaults.
    pub mode: CacheMode,
    /// Capacity of the data cache in bytes, in whole flash pages (rounded down). Default
    /// 268435456 (256 MiB, MQSim's shipped ssdconfig.xml); at least one page per partition and
    /// at most `dram_bytes`. 0 is refused: set `cache.mode = "off"` instead.
    #[range(min = 0, max = 1u64 << 50)]
    pub capacity_bytes: u64,
    /// Size of the controller's DRAM, which holds the data cache and the cached mapping table
    /// (`ftl.cmt.capacity_bytes`, unless its mode is "ideal"): their capacities together must
    /// fit. Default 1073741824 (1 GiB); >= `capacity_bytes`.
    #[range(min = 1, max = 1u64 << 50)]
    pub dram_bytes: u64,
    /// DRAM row (page) size in bytes: each row an access touches costs tRCD + tCL, each row
    /// change tRP. Default 8192 (MQSim); 64..=1048576.
    #[range(min = 64, max = 1u64 << 20)]
    pub dram_row_bytes: u64,
    /// DRAM data rate in mega-transfers per second. Default 800 (MQSim's built-in default;
    /// its shipped ssdconfig.xml says 100); 1..=100000.
    #[range(min = 1, max = 100_000)]
    pub dram_data_rate_mts: u32,
    /// Bytes per DRAM burst. Default 4 (MQSim's built-in default; shipped: 1); 1..=1024.
    #[range(min = 1, max = 1024)]
    pub dram_burst_bytes: u32,
    /// Row-to-column delay in nanoseconds. Default 13 (MQSim); [0, 1e6].
    #[range(min = 0.0, max = 1e6)]
    pub dram_trcd_ns: f64,
    /// Column (CAS) latency in nanoseconds. Default 13 (MQSim); [0, 1e6].
    #[range(min = 0.0, max = 1e6)]
    pub dram_tcl_ns: f64,
    /// Row precharge time in nanoseconds. Default 13 (MQSim); [0, 1e6].
    #[range(min = 0.0, max = 1e6)]
    pub dram_trp_ns: f64,
    /// "shared" (default: one LRU for all flows) or "per_flow" (one partition per flow).
    pub sharing: CacheSharing,
    /// "per_flow": each flow's fraction of the capacity, one per `[[flow]]`, in (0, 1],
    /// summing to 1 (within 1e-9). Default [] (equal shares).
    #[range(gt = 0.0, max = 1.0)]
    pub shares: Vec<f64>,
    /// What a Flush waits for: "flow" (default: its flow's dirty data) or "device" (all).
    pub flush_scope: FlushScope,
    /// Cache state at time zero: "empty" (default) or "dirty" (a write cache full of dirty
    /// pages, needs a write mode).
    pub precondition: CachePrecondition,
    /// When dirty pages go to flash: "on_eviction" (default: when they leave the cache, or
    /// for a Flush or FUA write) or "mqsim" (MQSim's ADVANCED manager: pages not written in
    /// the last second at once, at most one page per plane of data in flight; needs a
    /// write mode).
    // At its default the key is left out of results, which stay as before it existed.
    #[serde(skip_serializing_if = "is_on_eviction")]
    pub write_back: CacheWriteBack,
}

fn is_on_eviction(w: &CacheWriteBack) -> bool {
    *w == CacheWriteBack::OnEviction
}

impl Default for CacheConfig {
    fn default() -> Self {
        Self {
            mode: CacheMode::Off,
            capacity_bytes: 256 << 20,
            dram_bytes: 1 << 30,
            dram_row_bytes: 8192,
            dram_data_rate_mts: 800,
            dram_burst_bytes: 4,
            dram_trcd_ns: 13.0,
            dram_tcl_ns: 13.0,
            dram_trp_ns: 13.0,
            sharing: CacheSharing::Shared,
            shares: vec![],
            flush_scope: FlushScope::Flow,
            precondition: CachePrecondition::Empty,
            write_back: CacheWriteBack::OnEviction,
        }
    }
}
