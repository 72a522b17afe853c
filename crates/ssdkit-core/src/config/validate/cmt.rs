//! `[ftl.cmt]`: capacity, entry size and per-flow shares of the cached mapping table.

use super::int_range;
use crate::config::{CmtGranularity, CmtMode, Config};

pub(super) fn validate_cmt(c: &Config) -> Result<(), String> {
    let t = &c.ftl.cmt;
    let page = c.flash.page_size_bytes as u64;
    // At most a page: a translation page holds at least one entry.
    int_range("ftl.cmt.entry_bytes", t.entry_bytes as u64, 0, page)?;
    int_range(
        "ftl.cmt.translation_entry_bytes",
        t.translation_entry_bytes as u64,
        0,
        page,
    )?;
    if t.mode == CmtMode::Ideal {
        if t.gc_updates != crate::config::CmtGcUpdates::Direct {
            return Err(
                "key `ftl.cmt.gc_updates` = \"batch\" is taken only with a cached map (ftl.cmt.mode \"shared\" or \"per_flow\"; it is \"ideal\"); remove it"
                    .into(),
            );
        }
        if !t.shares.is_empty() {
            return Err(format!(
                "key `ftl.cmt.shares` = {:?} is taken only with ftl.cmt.mode = \"per_flow\" (it is \"ideal\"); remove it",
                t.shares
            ));
        }
        if t.granularity != CmtGranularity::Page {
            return Err("key `ftl.cmt.granularity` = \"entry\" is taken only with a cached map (ftl.cmt.mode \"shared\" or \"per_flow\"; it is \"ideal\"); remove it".into());
        }
        if t.writeback_lru != crate::config::CmtWritebackLru::Kept {
            return Err("key `ftl.cmt.writeback_lru` = \"front\" is taken only with a cached map (ftl.cmt.mode \"shared\" or \"per_flow\"; it is \"ideal\"); remove it".into());
        }
        if t.writebacks != crate::config::CmtWritebacks::Programmed {
            return Err("key `ftl.cmt.writebacks` = \"held\" is taken only with a cached map (ftl.cmt.mode \"shared\" or \"per_flow\"; it is \"ideal\"); remove it".into());
        }
        if t.translation_pages_at_start != crate::config::CmtStartPages::Written {
            return Err("key `ftl.cmt.translation_pages_at_start` = \"all\" is taken only with a cached map (ftl.cmt.mode \"shared\" or \"per_flow\"; it is \"ideal\"); remove it".into());
        }
        return Ok(());
    }
    if t.capacity_bytes == 0 {
        return Err(
            "key `ftl.cmt.capacity_bytes` = 0: a mapping cache needs room for at least one entry; for the whole map in DRAM (no cache) set ftl.cmt.mode = \"ideal\""
                .into(),
        );
    }
    let dram = c.cache.dram_bytes;
    let data = if c.cache.mode == crate::config::CacheMode::Off {
        0
    } else {
        c.cache.capacity_bytes
    };
    if t.capacity_bytes.saturating_add(data) > dram {
        return Err(format!(
            "key `ftl.cmt.capacity_bytes` = {} does not fit in the controller DRAM beside the data cache ({data} bytes): `cache.dram_bytes` = {dram}; allowed 1..={}",
            t.capacity_bytes,
            dram.saturating_sub(data)
        ));
    }
    let s = crate::config::Sizes::of(c);
    let cmt = s.cmt.as_ref().expect("a cached mode resolves its settings");
    let entry = t.granularity == CmtGranularity::Entry;
    if entry && t.gc_updates == crate::config::CmtGcUpdates::Batch {
        return Err("key `ftl.cmt.gc_updates` = \"batch\" (DFTL's batch update of cached translation pages) needs ftl.cmt.granularity = \"page\"; with \"entry\" use \"direct\" (MQSim's)".into());
    }
    if !entry && t.writebacks != crate::config::CmtWritebacks::Programmed {
        return Err("key `ftl.cmt.writebacks` = \"held\" (MQSim's mapping writes, never issued) needs ftl.cmt.granularity = \"entry\" (it is \"page\"); allowed with \"page\": \"programmed\"".into());
    }
    if !entry && t.writeback_lru != crate::config::CmtWritebackLru::Kept {
        return Err("key `ftl.cmt.writeback_lru` = \"front\" (MQSim's LRU order of single entries) needs ftl.cmt.granularity = \"entry\" (it is \"page\"); allowed with \"page\": \"kept\"".into());
    }
    if entry && t.capacity_bytes < cmt.entry_bytes as u64 {
        return Err(format!(
            "key `ftl.cmt.capacity_bytes` = {} cannot hold one entry of {} bytes; allowed >= {}",
            t.capacity_bytes, cmt.entry_bytes, cmt.entry_bytes
        ));
    }
    // With granularity "page" the cache holds whole translation pages (a miss brings in every
    // entry of its page).
    let page_of_entries = cmt.entries_per_tpage as u64 * cmt.entry_bytes as u64;
    if !entry && t.capacity_bytes < page_of_entries {
        return Err(format!(
            "key `ftl.cmt.capacity_bytes` = {} cannot hold one translation page's entries ({} entries of {} bytes); allowed >= {page_of_entries}",
            t.capacity_bytes, cmt.entries_per_tpage, cmt.entry_bytes
        ));
    }
    translation_pages_fit(c, &s, cmt)?;
    if t.mode == CmtMode::Shared {
        if !t.shares.is_empty() {
            return Err(format!(
                "key `ftl.cmt.shares` = {:?} is taken only with ftl.cmt.mode = \"per_flow\" (it is \"shared\"); remove it",
                t.shares
            ));
        }
        return Ok(());
    }
    let n = c.flows.len();
    if !t.shares.is_empty() {
        if t.shares.len() != n {
            return Err(format!(
                "key `ftl.cmt.shares` has {} entries; it needs one per flow ({n}), or [] for equal shares",
                t.shares.len()
            ));
        }
        let sum: f64 = t.shares.iter().sum();
        if (sum - 1.0).abs() > 1e-9 {
            return Err(format!(
                "key `ftl.cmt.shares` = {:?} sums to {sum}; the shares must sum to 1",
                t.shares
            ));
        }
    }
    let least = if entry {
        1
    } else {
        cmt.entries_per_tpage as u64
    };
    if let Some(i) = cmt.partition_entries.iter().position(|&e| e < least) {
        return Err(format!(
            "key `ftl.cmt.capacity_bytes` = {}: flow {i}'s partition ({} entries) cannot hold {least} entries (a translation page's with granularity \"page\", one with \"entry\"); give it a larger share (ftl.cmt.shares) or capacity",
            t.capacity_bytes, cmt.partition_entries[i]
        ));
    }
    Ok(())
}

/// The translation pages are stored in flash beside the logical data, so the spare-factor rule
/// (`device::validate_ftl_blocks`: a plane keeps the GC reserve and 2 open blocks beside what
/// it stores) holds for both together; otherwise preconditioning finds no block to collect
/// while it writes them. Names the largest entry size that fits.
fn translation_pages_fit(
    c: &Config,
    s: &crate::config::Sizes,
    cmt: &crate::config::CmtSettings,
) -> Result<(), String> {
    let f = &c.flash;
    if f.medium != crate::config::Medium::Nand {
        return Ok(());
    }
    let planes = s.planes;
    let ppb = f.pages_per_block as u64;
    let keep = s.reserve_blocks as u64 + 2;
    let Some(most_blocks) = (f.blocks_per_plane as u64).checked_sub(keep + 1) else {
        return Ok(()); // refused by the spare-factor rule, which runs first
    };
    let logical = s.logical_pages;
    let stored_blocks = (logical + cmt.translation_pages)
        .div_ceil(planes)
        .div_ceil(ppb);
    if stored_blocks <= most_blocks {
        return Ok(());
    }
    let page = f.page_size_bytes as u64;
    let room = (most_blocks * ppb * planes).saturating_sub(logical);
    let fits = if room == 0 {
        0
    } else {
        page / logical.div_ceil(room).max(1)
    };
    let allowed = if fits == 0 {
        "no entry size fits: raise ftl.spare_factor".to_string()
    } else {
        format!("allowed 1..={fits}, or raise ftl.spare_factor")
    };
    // The key that sizes the translation pages: the entry on flash when given apart.
    let on_flash = c.ftl.cmt.translation_entry_bytes;
    let (key, shown, bytes) = if on_flash != 0 {
        ("translation_entry_bytes", on_flash.to_string(), on_flash)
    } else if c.ftl.cmt.entry_bytes == 0 {
        let b = cmt.entry_bytes;
        ("entry_bytes", format!("0 (MQSim's size, {b} bytes)"), b)
    } else {
        ("entry_bytes", cmt.entry_bytes.to_string(), cmt.entry_bytes)
    };
    Err(format!(
        "key `ftl.cmt.{key}` = {shown} leaves no room for the mapping table in flash: its {} translation pages ({} entries of {bytes} bytes per {page}-byte page) are stored beside the logical data, so each plane would hold {stored_blocks} blocks and needs {keep} more (GC reserve from `ftl.gc_hard_threshold` + 2 open blocks) out of {}; {allowed}",
        cmt.translation_pages, cmt.entries_per_tpage, f.blocks_per_plane
    ))
}
