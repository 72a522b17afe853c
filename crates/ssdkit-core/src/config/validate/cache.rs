//! Check of `[cache]` and of the flows' cache keys (`flush_every`, `fua`).

use super::unused;
use crate::config::{
    CacheConfig, CacheMode, CachePrecondition, CacheSharing, CacheWriteBack, Config,
};

const MODES: &str = "\"off\", \"write\", \"read\" or \"read_write\"";

pub(super) fn validate_cache(c: &Config) -> Result<(), String> {
    let k = &c.cache;
    let d = CacheConfig::default();
    if k.mode == CacheMode::Off {
        let why =
            format!("applies only with a data cache (`cache.mode` = {MODES} other than \"off\")");
        unused(
            "cache.capacity_bytes",
            k.capacity_bytes != d.capacity_bytes,
            k.capacity_bytes,
            &why,
        )?;
        unused(
            "cache.sharing",
            k.sharing != d.sharing,
            "\"per_flow\"",
            &why,
        )?;
        unused("cache.shares", !k.shares.is_empty(), "[..]", &why)?;
        unused(
            "cache.precondition",
            k.precondition != d.precondition,
            "\"dirty\"",
            &why,
        )?;
        unused(
            "cache.write_back",
            k.write_back != d.write_back,
            "\"mqsim\"",
            &why,
        )?;
    }
    if k.mode != CacheMode::Off && k.capacity_bytes == 0 {
        return Err(
            "key `cache.capacity_bytes` = 0: 0 means off: set cache.mode = \"off\" (allowed: at least one flash page per partition, at most `cache.dram_bytes`)"
                .into(),
        );
    }
    if k.capacity_bytes > k.dram_bytes {
        return Err(format!(
            "key `cache.capacity_bytes` = {} is larger than the DRAM it lives in (`cache.dram_bytes` = {}); allowed 1..={}",
            k.capacity_bytes, k.dram_bytes, k.dram_bytes
        ));
    }
    if k.sharing == CacheSharing::Shared && !k.shares.is_empty() {
        return Err(
            "key `cache.shares` applies only with `cache.sharing` = \"per_flow\"; remove it".into(),
        );
    }
    let n = c.flows.len().max(1);
    let page = c.flash.page_size_bytes as u64;
    if k.mode != CacheMode::Off {
        if !k.shares.is_empty() {
            if k.shares.len() != c.flows.len() {
                return Err(format!(
                    "key `cache.shares` has {} value(s) but there are {} flow(s); give one share per [[flow]], in (0, 1], summing to 1",
                    k.shares.len(),
                    c.flows.len()
                ));
            }
            let sum: f64 = k.shares.iter().sum();
            if (sum - 1.0).abs() > 1e-9 {
                return Err(format!(
                    "key `cache.shares` sums to {sum}; the shares of the flows must sum to 1 (within 1e-9)"
                ));
            }
        }
        let pages = k.capacity_bytes / page;
        let smallest = match k.sharing {
            CacheSharing::Shared => pages,
            CacheSharing::PerFlow if k.shares.is_empty() => pages / n as u64,
            CacheSharing::PerFlow => k
                .shares
                .iter()
                .map(|s| (pages as f64 * s).floor() as u64)
                .min()
                .unwrap_or(0),
        };
        if smallest == 0 {
            return Err(format!(
                "key `cache.capacity_bytes` = {} gives a partition no whole {page}-byte flash page; allowed at least {} bytes (one page per partition)",
                k.capacity_bytes,
                match k.sharing {
                    CacheSharing::Shared => page,
                    CacheSharing::PerFlow => page * n as u64,
                }
            ));
        }
        if k.write_back == CacheWriteBack::Mqsim && !k.mode.caches_writes() {
            return Err(format!(
                "key `cache.write_back` = \"mqsim\" needs a write cache (`cache.mode` = \"write\" or \"read_write\"), not {}; allowed with it: \"on_eviction\"",
                serde_json::to_string(&k.mode).unwrap_or_default()
            ));
        }
        if k.precondition == CachePrecondition::Dirty && !k.mode.caches_writes() {
            return Err(format!(
                "key `cache.precondition` = \"dirty\" needs a write cache (`cache.mode` = \"write\" or \"read_write\"), not {:?}",
                serde_json::to_string(&k.mode).unwrap_or_default()
            ));
        }
    }
    Ok(())
}
