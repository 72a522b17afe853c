//! Garbage collection: victim choice for each policy, the static wear-levelling victim, and
//! an untimed collector used by write-mode preconditioning and the steady-state checks.
//!
//! The timed simulator (sim/) turns a chosen victim into GC read, write and erase
//! transactions; `collect_now` performs the same moves at once, through the same allocation
//! and mapping calls, so both reach the same states.

use super::mapping::{BlockState, Ftl, Stream};
use crate::config::GcPolicy;
use rand::Rng;

/// The next victim of `plane` under the configured policy, or None when collecting would
/// free nothing (no closed block, or, for greedy, every closed block fully valid).
pub fn pick_victim(ftl: &mut Ftl, plane: u32) -> Option<u32> {
    match ftl.gc_policy {
        GcPolicy::Greedy => greedy(ftl, plane),
        GcPolicy::Random => sample_min(ftl, plane, 1),
        GcPolicy::DChoices => sample_min(ftl, plane, ftl.gc_d),
        GcPolicy::Fifo => fifo(ftl, plane),
        GcPolicy::CostBenefit => cost_benefit(ftl, plane),
    }
}

#[inline]
fn plane_blocks(ftl: &Ftl, plane: u32) -> std::ops::Range<u32> {
    let bpp = ftl.geo.blocks_per_plane;
    plane * bpp..(plane + 1) * bpp
}

/// Fewest valid pages; lowest block number on ties, so runs are deterministic.
fn greedy(ftl: &Ftl, plane: u32) -> Option<u32> {
    let ppb = ftl.geo.pages_per_block;
    let mut best: Option<(u32, u32)> = None;
    for b in plane_blocks(ftl, plane) {
        if ftl.block_state[b as usize] != BlockState::Closed {
            continue;
        }
        let v = ftl.valid[b as usize];
        if v < ppb && best.is_none_or(|(_, bv)| v < bv) {
            best = Some((b, v));
            if v == 0 {
                break;
            }
        }
    }
    best.map(|(b, _)| b)
}

/// Fewest valid pages among `d` closed blocks drawn uniformly with replacement (d = 1 is
/// random GC). Fully valid blocks are legitimate candidates, as in Van Houdt's model.
fn sample_min(ftl: &mut Ftl, plane: u32, d: u32) -> Option<u32> {
    let range = plane_blocks(ftl, plane);
    let mut best: Option<(u32, u32)> = None;
    let mut drawn = 0;
    // Most blocks are closed in any state where GC runs; the attempt bound only guards a
    // plane that has almost none (then greedy decides).
    let mut attempts = 0u32;
    while drawn < d && attempts < 64 * d + 64 {
        attempts += 1;
        let b = ftl.gc_rng.gen_range(range.clone());
        if ftl.block_state[b as usize] != BlockState::Closed {
            continue;
        }
        drawn += 1;
        let v = ftl.valid[b as usize];
        if best.is_none_or(|(_, bv)| v < bv) {
            best = Some((b, v));
        }
    }
    match best {
        Some((b, _)) => Some(b),
        None => greedy(ftl, plane),
    }
}

/// The block closed longest ago, whatever its valid count (LRU cleaning).
fn fifo(ftl: &Ftl, plane: u32) -> Option<u32> {
    plane_blocks(ftl, plane)
        .filter(|&b| ftl.block_state[b as usize] == BlockState::Closed)
        .min_by_key(|&b| (ftl.close_stamp[b as usize], b))
}

/// Highest age * (1 - u) / (2u); an empty block wins outright; fully valid blocks never.
fn cost_benefit(ftl: &Ftl, plane: u32) -> Option<u32> {
    let ppb = ftl.geo.pages_per_block as f64;
    let mut best: Option<(u32, f64)> = None;
    for b in plane_blocks(ftl, plane) {
        if ftl.block_state[b as usize] != BlockState::Closed {
            continue;
        }
        let v = ftl.valid[b as usize] as f64;
        if v >= ppb {
            continue;
        }
        if v == 0.0 {
            return Some(b);
        }
        let age = (ftl.clock - ftl.mod_stamp[b as usize]) as f64 + 1.0;
        let u = v / ppb;
        let score = age * (1.0 - u) / (2.0 * u);
        if best.is_none_or(|(_, s)| score > s) {
            best = Some((b, score));
        }
    }
    best.map(|(b, _)| b)
}

/// Static wear levelling, checked once per `wl_static_interval` GC runs of a plane: when
/// the plane's erase-count spread exceeds the threshold, the closed block with the fewest
/// erases (it holds cold data, else it would have been collected) is the next victim.
pub fn pick_wl_victim(ftl: &mut Ftl, plane: u32) -> Option<u32> {
    if !ftl.wl_static {
        return None;
    }
    let ps = &mut ftl.planes[plane as usize];
    if ps.runs_since_wl < ftl.wl_static_interval {
        return None;
    }
    ps.runs_since_wl = 0;
    let mut max = 0;
    let mut coldest: Option<(u32, u32)> = None;
    for b in plane_blocks(ftl, plane) {
        let e = ftl.erase_count[b as usize];
        max = max.max(e);
        if ftl.block_state[b as usize] == BlockState::Closed && coldest.is_none_or(|(_, ce)| e < ce)
        {
            coldest = Some((b, e));
        }
    }
    let (b, e) = coldest?;
    if max - e > ftl.wl_static_threshold {
        ftl.stats.wl_migrations += 1;
        Some(b)
    } else {
        None
    }
}

/// Collects `victim` at once: moves its valid pages to the plane's GC frontier and erases
/// it. Untimed; the caller made sure the GC frontier has room (the reserve guarantees it).
pub fn collect_now(ftl: &mut Ftl, plane: u32, victim: u32) {
    let ppb = ftl.geo.pages_per_block;
    ftl.block_state[victim as usize] = BlockState::Victim;
    for ppa in victim * ppb..victim * ppb + ftl.written[victim as usize] {
        let lpa = ftl.p2l[ppa as usize];
        if lpa != super::NONE {
            let dst = ftl.allocate(plane, Stream::Gc);
            ftl.map(lpa, dst);
            ftl.stats.gc_page_moves += 1;
        }
    }
    ftl.erase(victim);
    ftl.stats.gc_runs += 1;
    ftl.planes[plane as usize].runs_since_wl += 1;
}

/// Untimed write of one logical page: GC in the target plane until it is above its start
/// threshold (as the timed simulator's GC would keep it), then program the page. Returns
/// false if the plane cannot free space (every closed block fully valid).
pub fn write_now(ftl: &mut Ftl, lpa: u32) -> bool {
    let plane = ftl.target_plane(lpa);
    while ftl.free_pages(plane) < ftl.gc_start_free_pages {
        let v = match pick_wl_victim(ftl, plane) {
            Some(v) => v,
            None => match pick_victim(ftl, plane) {
                Some(v) => v,
                None => break,
            },
        };
        collect_now(ftl, plane, v);
    }
    if ftl.next_page_offset(plane, Stream::User).is_none() {
        return false;
    }
    let ppa = ftl.allocate(plane, Stream::User);
    ftl.map(lpa, ppa);
    ftl.stats.user_page_writes += 1;
    true
}
