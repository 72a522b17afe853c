//! Load-time validation. Every message names the key path, the value and what is allowed.
//! This file holds the entry point, which runs the section checks (`device`, `flow`,
//! `pinning`) in a fixed order, and the range helpers they share.

mod cache;
mod cmt;
mod delimited;
mod device;
mod flow;
mod host;
mod mapping;
mod pinning;
mod tsu;

pub use delimited::{validate_delimited, MAX_COLUMN};

use super::{Config, Sizes, SteadyStateConfig};

fn int_range(key: &str, v: u64, lo: u64, hi: u64) -> Result<(), String> {
    if v < lo || v > hi {
        return Err(format!(
            "key `{key}` = {v} is out of range; allowed {lo}..={hi}"
        ));
    }
    Ok(())
}

fn float_range(key: &str, v: f64, lo: f64, hi: f64, lo_open: bool) -> Result<(), String> {
    let ok = v.is_finite() && (if lo_open { v > lo } else { v >= lo }) && v <= hi;
    if !ok {
        let l = if lo_open { "(" } else { "[" };
        return Err(format!(
            "key `{key}` = {v} is out of range; allowed {l}{lo}, {hi}]"
        ));
    }
    Ok(())
}

use super::ranges::END_OF_TIME_MS;

/// A key that takes effect only under another setting: its default is accepted (it is what an
/// unset key holds), any other value would be silently ignored, so it is refused with `why`.
fn unused(key: &str, set: bool, shown: impl std::fmt::Display, why: &str) -> Result<(), String> {
    if set {
        return Err(format!("key `{key}` = {shown} {why}; remove it"));
    }
    Ok(())
}

/// Checks the sections along the request path and returns the first error. The order is part
/// of the behaviour: with several errors, the one reported must not change from run to run or
/// release to release.
pub fn validate(c: &Config) -> Result<(), String> {
    // Each key's own range first (declared on its field, `ranges`), then the rules that
    // relate keys, which may rely on the ranges.
    super::ranges::Ranged::check_ranges(c, "")?;
    validate_steady_state(&c.steady_state)?;
    host::validate_host(c)?;
    device::validate_interface(&c.interface, &c.pcie)?;
    device::validate_pcie(&c.pcie)?;
    device::validate_flash(&c.flash)?;
    device::validate_sectors(c)?;
    device::validate_medium(c)?;
    device::validate_ftl(&c.ftl)?;
    // `Sizes::of` relies on the range checks above.
    let s = Sizes::of(c);
    device::validate_ftl_blocks(c, &s)?;
    mapping::validate_mapping(c, &s)?;
    device::validate_precondition(&c.precondition)?;
    device::validate_gc_start(c, &s)?;
    flow::validate_flow_count(c)?;
    cmt::validate_cmt(c)?;
    let weighted = device::validate_arbitration(&c.interface)?;
    let capacity = s.logical_pages * c.flash.page_size_bytes as u64;
    flow::validate_flows(c, capacity, weighted)?;
    pinning::validate_pinning(c, capacity)?;
    cache::validate_cache(c)?;
    tsu::validate_tsu(c)?;
    Ok(())
}

/// Rounds of a picked length hold about `PICK_REQUESTS` requests each: flows whose request
/// limits allow fewer than a window of them could never reach a verdict, so a batch run
/// refuses them before it starts, with the figures that would work. (Not part of `validate`:
/// a step-by-step Device refuses rounds altogether, and says so.)
pub fn validate_picked_rounds(c: &Config) -> Result<(), String> {
    use crate::config::{PICK_REQUESTS, WINDOW_ROUNDS};
    if !c.steady_state.enabled || c.steady_state.round_ms.is_some() {
        return Ok(());
    }
    let on: Vec<(usize, &crate::config::FlowConfig)> = c
        .flows
        .iter()
        .enumerate()
        .filter(|(_, f)| f.enabled)
        .collect();
    if on.is_empty() || on.iter().any(|(_, f)| f.requests == 0) {
        return Ok(()); // a flow runs until the rounds end, or for its time or bytes
    }
    let total: u64 = on.iter().map(|(_, f)| f.requests).sum();
    let needed = PICK_REQUESTS * WINDOW_ROUNDS as u64;
    if total >= needed {
        return Ok(());
    }
    let keys: Vec<String> = on
        .iter()
        .map(|(i, f)| format!("`flow.{i}.requests` = {}", f.requests))
        .collect();
    Err(format!(
        "key `steady_state.round_ms` is unset, so each round is picked to hold about {PICK_REQUESTS} requests, but {} allow{} {total} in all, fewer than the {WINDOW_ROUNDS} rounds of the window need ({needed}); set `flow.{}.requests` = 0 (run until the rounds end) or at least {needed} in all, or set `steady_state.round_ms` (a round should hold several hundred requests)",
        keys.join(", "),
        if keys.len() == 1 { "s" } else { "" },
        on[0].0
    ))
}

/// `[steady_state]`.
fn validate_steady_state(s: &SteadyStateConfig) -> Result<(), String> {
    let d = SteadyStateConfig::default();
    if !s.enabled {
        let why = "applies only with `steady_state.enabled` = true (CLI: --steady-state)";
        if let Some(ms) = s.round_ms {
            unused("steady_state.round_ms", true, ms, why)?;
        }
        unused(
            "steady_state.max_rounds",
            s.max_rounds != d.max_rounds,
            s.max_rounds,
            why,
        )?;
        unused(
            "steady_state.stop_when_steady",
            s.stop_when_steady != d.stop_when_steady,
            s.stop_when_steady,
            why,
        )?;
        let track = serde_json::to_string(&s.track).unwrap_or_default();
        return unused("steady_state.track", s.track != d.track, track, why);
    }
    let Some(round_ms) = s.round_ms else {
        return Ok(()); // picked at run time (stats::steady)
    };
    let total_ms = round_ms * s.max_rounds as f64;
    if total_ms > END_OF_TIME_MS as f64 {
        return Err(format!(
            "keys `steady_state.round_ms` = {} and `steady_state.max_rounds` = {} make {total_ms} ms of rounds, beyond the end of simulated time ({END_OF_TIME_MS} ms: 2^64 ps, about 213 days); allowed round_ms * max_rounds <= {END_OF_TIME_MS}",
            round_ms, s.max_rounds
        ));
    }
    Ok(())
}
