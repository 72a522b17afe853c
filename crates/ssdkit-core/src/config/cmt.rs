//! `[ftl.cmt]`: the cached mapping table (DFTL, Gupta et al., ASPLOS 2009; the MQSim paper,
//! FAST'18, sections 3.3 and 4.3). The whole page map lives in translation pages in flash; the
//! controller's DRAM holds a directory of where each translation page is and an LRU cache of
//! mapping entries. `ideal` (the default) keeps every entry in DRAM, as before this section
//! existed.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use ssdkit_macros::ranges;

/// `ftl.cmt.mode`.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum CmtMode {
    /// Every lookup hits: the whole map in DRAM (the MQSim paper's "perfect CMT"; MQSim's
    /// Ideal_Mapping_Table = true). No translation page is stored or read.
    #[default]
    Ideal,
    /// One LRU cache of `capacity_bytes` shared by every flow (MQSim's CMT_Sharing_Mode
    /// SHARED).
    Shared,
    /// One LRU partition per flow, sized by `shares` (equal by default; MQSim's
    /// EQUAL_PARTITIONING).
    PerFlow,
}

/// `ftl.cmt.gc_updates`.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum CmtGcUpdates {
    /// The translation page of an uncached entry is updated without flash traffic (MQSim's
    /// GC writes its global mapping table directly).
    #[default]
    Direct,
    /// DFTL's batch update: each translation page a victim's moves changed, and the cache
    /// does not hold, is read and written back once when the victim is erased.
    Batch,
}

/// `[ftl.cmt]`
#[ranges]
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct CmtConfig {
    /// "ideal" (every lookup hits), "shared" or "per_flow". Default "ideal".
    pub mode: CmtMode,
    /// DRAM given to cached mapping entries, in bytes (MQSim's CMT_Capacity). Taken only in
    /// "shared" and "per_flow" modes. Default 2097152 (2 MiB, MQSim's shipped
    /// ssdconfig.xml); the cache holds whole translation pages (a miss brings in every entry of
    /// the page it reads), so at least one page's entries, per partition.
    #[range(min = 0, max = 1u64 << 50)]
    pub capacity_bytes: u64,
    /// Bytes of one mapping entry, in DRAM and in a translation page; 0 = MQSim's size,
    /// ceil((2 log2(physical pages) + sectors per page) / 8). Default 0; 0 or 1..=page size.
    #[range(min = 0, max = 32768, note = "0: MQSim's size")]
    pub entry_bytes: u32,
    /// "per_flow": each flow's fraction of `capacity_bytes`, one per flow, summing to 1;
    /// [] = equal shares. Default [].
    #[range(gt = 0.0, max = 1.0)]
    pub shares: Vec<f64>,
    /// GC moves whose entries are not cached: "direct" (no flash traffic, as MQSim) or
    /// "batch" (DFTL: a read and a write-back of each changed translation page per victim).
    /// Cached entries are updated in DRAM either way. Default "direct".
    pub gc_updates: CmtGcUpdates,
}

impl Default for CmtConfig {
    fn default() -> Self {
        Self {
            mode: CmtMode::Ideal,
            capacity_bytes: 2 << 20,
            entry_bytes: 0,
            shares: vec![],
            gc_updates: CmtGcUpdates::Direct,
        }
    }
}

/// MQSim's mapping entry size in bytes: a physical page address, a logical one (its tag in
/// the cache) and a written-sector bitmap.
pub fn mqsim_entry_bytes(physical_pages: u64, sectors_per_page: u32) -> u32 {
    ((2.0 * (physical_pages.max(2) as f64).log2() + sectors_per_page as f64) / 8.0).ceil() as u32
}
