//! `[ftl.cmt]`: capacity, entry size and per-flow shares of the cached mapping table.

use super::int_range;
use crate::config::{CmtMode, Config};

pub(super) fn validate_cmt(c: &Config) -> Result<(), String> {
    let t = &c.ftl.cmt;
    let page = c.flash.page_size_bytes as u64;
    int_range("ftl.cmt.entry_bytes", t.entry_bytes as u64, 0, page)?;
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
    let s = crate::config::Settings::resolve(c);
    let cmt = s.cmt.as_ref().expect("a cached mode resolves its settings");
    // The cache holds whole translation pages (a miss brings in every entry of its page).
    let page_of_entries = cmt.entries_per_tpage as u64 * cmt.entry_bytes as u64;
    if t.capacity_bytes < page_of_entries {
        return Err(format!(
            "key `ftl.cmt.capacity_bytes` = {} cannot hold one translation page's entries ({} entries of {} bytes); allowed >= {page_of_entries}",
            t.capacity_bytes, cmt.entries_per_tpage, cmt.entry_bytes
        ));
    }
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
        if let Some((i, v)) = t
            .shares
            .iter()
            .enumerate()
            .find(|(_, v)| !v.is_finite() || **v <= 0.0 || **v > 1.0)
        {
            return Err(format!(
                "key `ftl.cmt.shares[{i}]` = {v} is out of range; allowed (0, 1]"
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
    if let Some(i) = cmt
        .partition_entries
        .iter()
        .position(|&e| e < cmt.entries_per_tpage as u64)
    {
        return Err(format!(
            "key `ftl.cmt.capacity_bytes` = {}: flow {i}'s partition ({} entries) cannot hold one translation page's {} entries; give it a larger share (ftl.cmt.shares) or capacity",
            t.capacity_bytes, cmt.partition_entries[i], cmt.entries_per_tpage
        ));
    }
    Ok(())
}
