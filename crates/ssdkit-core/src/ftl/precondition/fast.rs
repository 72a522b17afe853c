//! Fast preconditioning: the steady state of the GC policy without simulating the writes.
//!
//! Per plane (static striping makes each plane an independent GC system with uniform random
//! writes over its share of the footprint):
//! 1. cold pages (outside the footprint) fill whole blocks, fully valid, never collected;
//! 2. the GC start threshold fixes the free blocks kept;
//! 3. the remaining K blocks are closed, and their valid counts are drawn from the mean-field
//!    steady-state distribution of the policy for K blocks holding the plane's hot pages
//!    (stratified quantiles, then a +-1 correction so they sum exactly to the hot pages);
//! 4. valid pages sit at random offsets of their block, hot logical pages in random order;
//! 5. erase counts follow an assumed history of `history_drive_writes`.
//!
//! Every step streams over a plane's pages; nothing per page lives on the heap beyond the
//! mapping tables and one reusable buffer of the plane's logical pages.

use super::meanfield::{self, MfPolicy};
use super::{Footprint, PRECONDITION_STREAM};
use crate::config::{Config, GcPolicy};
use crate::engine::{derive_stream, Stream as Rng};
use crate::error::Error;
use crate::ftl::mapping::BlockState;
use crate::ftl::{Ftl, NONE};
use rand::Rng as _;
use serde_json::{json, Value};
use std::collections::HashMap;

fn model(policy: GcPolicy, d: u32) -> (MfPolicy, &'static str) {
    match policy {
        GcPolicy::Greedy => (MfPolicy::Greedy, "mean-field greedy (Van Houdt 2013)"),
        GcPolicy::DChoices => (
            MfPolicy::DChoices(d),
            "mean-field d-choices (Van Houdt 2013)",
        ),
        GcPolicy::Random => (MfPolicy::Random, "mean-field random (Van Houdt 2013)"),
        GcPolicy::Fifo => (
            MfPolicy::Fifo,
            "FIFO closed form (Desnoyers 2012): valid fraction u^age",
        ),
        // No mean-field model exists for cost-benefit; under uniform writes it ranks blocks
        // almost as greedy does, so greedy's distribution stands in (documented).
        GcPolicy::CostBenefit => (
            MfPolicy::Greedy,
            "mean-field greedy standing in for cost-benefit",
        ),
    }
}

/// Valid counts of `k` blocks holding exactly `hot` pages, drawn from `dist` by stratified
/// quantiles, in random block order.
fn draw_counts(dist: &[f64], k: usize, hot: u64, ppb: u32, rng: &mut Rng) -> Vec<u32> {
    let mut counts = Vec::with_capacity(k);
    let mut cdf = 0.0;
    let mut class = 0usize;
    for j in 0..k {
        let q = (j as f64 + 0.5) / k as f64;
        while class + 1 < dist.len() && cdf + dist[class] < q {
            cdf += dist[class];
            class += 1;
        }
        counts.push(class as u32);
    }
    // The quantiles reproduce the mean to within a page or so per block class; move single
    // pages between random blocks until the total is exact.
    let mut sum: i64 = counts.iter().map(|&c| c as i64).sum();
    let target = hot as i64;
    while sum != target {
        let j = rng.gen_range(0..k);
        if sum < target && counts[j] < ppb {
            counts[j] += 1;
            sum += 1;
        } else if sum > target && counts[j] > 0 {
            counts[j] -= 1;
            sum -= 1;
        }
    }
    for j in (1..k).rev() {
        counts.swap(j, rng.gen_range(0..=j));
    }
    counts
}

/// Roughly normal noise with unit variance (Irwin-Hall): erase counts only need to look
/// plausible, and this is cheap and deterministic.
fn unit_noise(rng: &mut Rng) -> f64 {
    (0..12).map(|_| rng.gen::<f64>()).sum::<f64>() - 6.0
}

pub fn run(ftl: &mut Ftl, c: &Config, fp: &Footprint) -> Result<Value, Error> {
    let g = ftl.geo;
    let planes = g.planes();
    let ppb = g.pages_per_block;
    let bpp = g.blocks_per_plane;
    let logical = ftl.logical_pages as u64;
    let free_keep = ftl.gc_start_free_pages.div_ceil(ppb as u64) as u32;
    let (policy, model_name) = model(c.ftl.gc_policy, c.ftl.gc_d);
    let mut rng = derive_stream(c.run.seed, PRECONDITION_STREAM);
    let mut cache: HashMap<(u32, u64), (Vec<f64>, f64)> = HashMap::new();
    let mut pos_of_plane = vec![0u32; planes as usize];
    for k in 0..planes {
        pos_of_plane[ftl.striping.plane_of_index(&g, k) as usize] = k;
    }
    let stamp_step = ppb as u64 * planes as u64;
    let mut hot_buf: Vec<u32> = Vec::new();
    let mut slots: Vec<u32> = (0..ppb).collect();
    let mut wa_weighted = 0.0;
    let mut hot_total = 0u64;
    let mut cold_total = 0u64;
    let mut max_k = 0u32;
    for p in 0..planes {
        let pos = pos_of_plane[p as usize] as u64;
        let share = logical / planes as u64 + u64::from(pos < logical % planes as u64);
        let first_block = p * bpp;
        // Cold pages first, in logical order, into whole blocks.
        hot_buf.clear();
        let mut cold_block = first_block;
        let mut cold_off = 0u32;
        for j in 0..share {
            let lpa = pos + j * planes as u64;
            if fp.contains(lpa) {
                hot_buf.push(lpa as u32);
                continue;
            }
            let ppa = cold_block * ppb + cold_off;
            ftl.l2p[lpa as usize] = ppa;
            ftl.p2l[ppa as usize] = lpa as u32;
            ftl.valid[cold_block as usize] += 1;
            cold_off += 1;
            if cold_off == ppb {
                cold_block += 1;
                cold_off = 0;
            }
        }
        let cold_blocks = cold_block - first_block + u32::from(cold_off > 0);
        for b in first_block..first_block + cold_blocks {
            ftl.written[b as usize] = ppb;
            ftl.block_state[b as usize] = BlockState::Closed;
        }
        let hot = hot_buf.len() as u64;
        cold_total += share - hot;
        hot_total += hot;
        if hot == 0 {
            continue;
        }
        let k = bpp - cold_blocks - free_keep;
        if hot >= k as u64 * ppb as u64 {
            return Err(Error::Config(format!(
                "fast preconditioning: plane {p} must hold {hot} pages of random-write data in {k} blocks of {ppb} pages after the cold data and the {free_keep} free blocks the GC threshold keeps; raise `ftl.spare_factor` or lower `ftl.gc_threshold`"
            )));
        }
        max_k = max_k.max(k);
        let (dist, wa) = match cache.get(&(k, hot)) {
            Some(v) => v.clone(),
            None => {
                let dist = meanfield::valid_distribution(policy, k as u64, ppb, hot)
                    .map_err(|m| Error::Config(format!("fast preconditioning: {m}")))?;
                let wa = meanfield::write_amplification(policy, k as u64, ppb, hot)
                    .map_err(|m| Error::Config(format!("fast preconditioning: {m}")))?;
                cache.insert((k, hot), (dist.clone(), wa));
                (dist, wa)
            }
        };
        wa_weighted += wa * hot as f64;
        let counts = draw_counts(&dist, k as usize, hot, ppb, &mut rng);
        // Close order: FIFO victims are the oldest blocks, which hold the fewest valid
        // pages, so fuller blocks were closed later. Other policies do not care about age
        // beyond cost-benefit, for which the same order is the natural one.
        let mut order: Vec<u32> = (0..k).collect();
        order.sort_by_key(|&j| counts[j as usize]);
        for (rank, &j) in order.iter().enumerate() {
            let b = (first_block + cold_blocks + j) as usize;
            ftl.close_stamp[b] = (rank as u64 + 1) * stamp_step;
            ftl.mod_stamp[b] = ftl.close_stamp[b];
        }
        for j in (1..hot_buf.len()).rev() {
            hot_buf.swap(j, rng.gen_range(0..=j));
        }
        let mut next = 0usize;
        for (j, &v) in counts.iter().enumerate() {
            let b = first_block + cold_blocks + j as u32;
            // v random offsets out of ppb: a partial Fisher-Yates over the offsets.
            for i in 0..v as usize {
                let r = rng.gen_range(i..ppb as usize);
                slots.swap(i, r);
                let ppa = b * ppb + slots[i];
                let lpa = hot_buf[next];
                next += 1;
                ftl.l2p[lpa as usize] = ppa;
                ftl.p2l[ppa as usize] = lpa;
            }
            ftl.valid[b as usize] = v;
            ftl.written[b as usize] = ppb;
            ftl.block_state[b as usize] = BlockState::Closed;
        }
    }
    ftl.clock = (max_k as u64 + 1) * stamp_step;
    let predicted_wa = if hot_total > 0 {
        wa_weighted / hot_total as f64
    } else {
        1.0
    };
    let hist = c.precondition.history_drive_writes;
    // Programs of the assumed history spread over the blocks that cycle (all but cold ones,
    // unless static wear levelling moved cold data too).
    let cycling_blocks = if c.ftl.wl_static {
        g.total_blocks() as f64
    } else {
        g.total_blocks() as f64 - (cold_total as f64 / ppb as f64)
    };
    let programs = hist * logical as f64 * predicted_wa;
    let mean_erase = if hot_total == 0 {
        0.0
    } else {
        programs / (cycling_blocks * ppb as f64)
    };
    for b in 0..g.total_blocks() as usize {
        let cold =
            ftl.block_state[b] == BlockState::Closed && ftl.close_stamp[b] == 0 && !c.ftl.wl_static;
        let e = if cold || mean_erase == 0.0 {
            0.0
        } else if c.ftl.wl_dynamic {
            mean_erase + (rng.gen_range(-1.0..=1.0))
        } else {
            mean_erase + mean_erase.sqrt() * unit_noise(&mut rng)
        };
        ftl.erase_count[b] = e.round().max(0.0) as u32;
    }
    debug_assert!(ftl.l2p.iter().all(|&p| p != NONE));
    ftl.rebuild_planes();
    Ok(json!({
        "mode": "fast",
        "model": model_name,
        "predicted_write_amplification": predicted_wa,
        "free_blocks_per_plane": free_keep,
        "hot_pages": hot_total,
        "cold_pages": cold_total,
        "history_drive_writes": hist,
        "mean_erase_count": mean_erase,
    }))
}
