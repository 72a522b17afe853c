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

/// `ftl.cmt.granularity`.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum CmtGranularity {
    /// The cache holds whole translation pages: a miss reads the page and caches every entry
    /// of it, and a write-back writes the page from DRAM without reading it (DFTL's cached
    /// translation pages, Gupta et al., ASPLOS 2009, section 3.3).
    #[default]
    Page,
    /// The cache holds single entries, as MQSim's CMT does
    /// (Address_Mapping_Unit_Page_Level.cpp:10-165): a miss reads the sector holding its entry
    /// and caches that entry alone; a dirty entry leaving the cache writes back its translation
    /// page with every dirty entry of it, after a read of the page when it is on flash.
    Entry,
}

/// `ftl.cmt.translation_pages_at_start`.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum CmtStartPages {
    /// Only translation pages holding written entries exist: on an empty device a first
    /// lookup creates its entry without a read, as on a fresh drive.
    #[default]
    Written,
    /// Every translation page is on flash from the start, even on an empty device: every
    /// miss reads flash (MQSim writes its whole map at start, FTL.cpp:49 and
    /// Address_Mapping_Unit_Page_Level.cpp:423-442).
    All,
}

/// `ftl.cmt.writebacks`.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum CmtWritebacks {
    /// A translation page written back is programmed to flash; until the program ends its
    /// entries are in DRAM, so a miss on it reads nothing.
    #[default]
    Programmed,
    /// A translation page written back is never programmed and its entries stay in DRAM for
    /// the rest of the run: MQSim queues mapping writes but its schedulers never issue them
    /// (`TSU_OutofOrder.cpp:334-381` and `TSU_Priority_OutOfOrder.cpp` serve only the user
    /// and GC write queues), so its `DepartingMappingEntries` only grows and every later miss
    /// on such a page is answered from DRAM (`Address_Mapping_Unit_Page_Level.cpp:1519-1543`).
    /// The read of the page's unchanged entries is still made. Needs granularity "entry".
    Held,
}

/// `ftl.cmt.writeback_lru`.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum CmtWritebackLru {
    /// A write-back cleans the cached entries of its page where they are in the LRU order.
    #[default]
    Kept,
    /// A write-back also makes each dirty entry of its page the most recently used, in
    /// ascending logical order: MQSim reads them through its LRU list with `Retrieve_ppa`,
    /// which moves each to the front (`Address_Mapping_Unit_Page_Level.cpp:50`, `1585-1592`),
    /// so the next eviction is an older entry, often another page's and dirty. Needs
    /// granularity "entry".
    Front,
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
    /// ssdconfig.xml); with granularity "page" the cache holds whole translation pages, so at
    /// least one page's entries per partition; with "entry" at least one entry.
    #[range(min = 0, max = 1u64 << 50)]
    pub capacity_bytes: u64,
    /// Bytes of one mapping entry, in DRAM and in a translation page; 0 = MQSim's size,
    /// ceil((2 log2(physical pages) + sectors per page) / 8). Default 0; 0 or 1..=page size.
    #[range(min = 0, max = 32768, note = "0: MQSim's size")]
    pub entry_bytes: u32,
    /// Bytes of one entry in a translation page on flash, which sets how many entries a
    /// translation page holds; 0 = `entry_bytes`. MQSim stores no logical address there:
    /// ceil((log2(physical pages) + sectors per page) / 8) bytes (its GTD entry,
    /// `Address_Mapping_Unit_Page_Level.cpp:329-330`), which `ssdkit import mqsim` sets.
    /// Default 0; 0 or 1..=page size.
    #[range(min = 0, max = 32768, note = "0: entry_bytes")]
    // At its default the key is left out of results, which stay as before it existed.
    #[serde(skip_serializing_if = "is_zero")]
    pub translation_entry_bytes: u32,
    /// "per_flow": each flow's fraction of `capacity_bytes`, one per flow, summing to 1;
    /// [] = equal shares. Default [].
    #[range(gt = 0.0, max = 1.0)]
    pub shares: Vec<f64>,
    /// GC moves whose entries are not cached: "direct" (no flash traffic, as MQSim) or
    /// "batch" (DFTL: a read and a write-back of each changed translation page per victim).
    /// Cached entries are updated in DRAM either way. Default "direct".
    pub gc_updates: CmtGcUpdates,
    /// What the cache holds: "page" (whole translation pages, DFTL) or "entry" (single
    /// entries, MQSim). Default "page".
    // At its default the key is left out of results, which stay as before it existed.
    #[serde(skip_serializing_if = "is_page")]
    pub granularity: CmtGranularity,
    /// Which translation pages are on flash when the run starts: "written" (those holding
    /// written entries) or "all" (MQSim's map written whole at start). Matters only on an
    /// empty device (`precondition.mode = "empty"`): a filled device has every translation
    /// page. Default "written".
    #[serde(skip_serializing_if = "is_written")]
    pub translation_pages_at_start: CmtStartPages,
    /// What becomes of a translation page written back: "programmed" (to flash) or "held"
    /// (never programmed, its entries kept in DRAM: MQSim's schedulers never issue a mapping
    /// write). "held" needs granularity "entry". Default "programmed".
    #[serde(skip_serializing_if = "is_programmed")]
    pub writebacks: CmtWritebacks,
    /// Where a write-back leaves the dirty entries of its page in the LRU order: "kept" or
    /// "front" (made the most recently used, as MQSim's CMT does). "front" needs granularity
    /// "entry". Default "kept".
    #[serde(skip_serializing_if = "is_kept")]
    pub writeback_lru: CmtWritebackLru,
}

impl Default for CmtConfig {
    fn default() -> Self {
        Self {
            mode: CmtMode::Ideal,
            capacity_bytes: 2 << 20,
            entry_bytes: 0,
            translation_entry_bytes: 0,
            shares: vec![],
            gc_updates: CmtGcUpdates::Direct,
            granularity: CmtGranularity::Page,
            translation_pages_at_start: CmtStartPages::Written,
            writebacks: CmtWritebacks::Programmed,
            writeback_lru: CmtWritebackLru::Kept,
        }
    }
}

fn is_kept(w: &CmtWritebackLru) -> bool {
    *w == CmtWritebackLru::Kept
}

fn is_programmed(w: &CmtWritebacks) -> bool {
    *w == CmtWritebacks::Programmed
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

fn is_page(g: &CmtGranularity) -> bool {
    *g == CmtGranularity::Page
}

fn is_written(p: &CmtStartPages) -> bool {
    *p == CmtStartPages::Written
}

/// MQSim's mapping entry size in bytes: a physical page address, a logical one (its tag in
/// the cache) and a written-sector bitmap.
pub fn mqsim_entry_bytes(physical_pages: u64, sectors_per_page: u32) -> u32 {
    ((2.0 * (physical_pages.max(2) as f64).log2() + sectors_per_page as f64) / 8.0).ceil() as u32
}
