//! Fast preconditioning: the steady state of the GC policy without simulating the writes.
//!
//! Per plane (static striping makes each plane an independent GC system with uniform random
//! writes over its share of the footprint):
//! 1. cold pages (outside the footprint) fill whole blocks, fully valid, never collected;
//! 2. the free pool (`pool`: the reserve, or the GC start threshold) fixes the free blocks
//!    kept;
//! 3. the remaining K blocks are closed, and their valid counts are drawn from the mean-field
//!    steady-state distribution of the policy for K blocks holding the plane's hot pages
//!    (stratified quantiles, then a +-1 correction so they sum exactly to the hot pages);
//! 4. valid pages sit at pseudo-random offsets of their block (a keyed permutation of its
//!    slots), hot logical pages in logical order block after block;
//! 5. erase counts follow an assumed history of `history_drive_writes`.
//!
//! Without pinned flows the layout is a formula (`pagemap::FastLayout`): no per-page work. With
//! them, a pass in logical order writes the mapping tables (`place_pinned`).

use super::meanfield::{self, MfPolicy};
use super::pool::{reserve_level_pages, PoolLevel};
use super::{Footprint, PRECONDITION_STREAM};
use crate::config::{Config, GcPolicy};
use crate::engine::{derive_stream, Stream as Rng};
use crate::error::Error;
use crate::ftl::page::pagemap::{Base, FastLayout, HotBlocks};
use crate::ftl::{BlockState, PageFtl};
use crate::result::PreconditionRecord;
use crate::settings::Settings;
use rand::Rng as _;
use std::collections::HashMap;

/// The mean-field model that stands for `policy`, and its name for the preconditioning record.
pub fn mean_field_policy(policy: GcPolicy) -> (MfPolicy, &'static str) {
    match policy {
        GcPolicy::Greedy {} => (MfPolicy::Greedy, "mean-field greedy (Van Houdt 2013)"),
        GcPolicy::DChoices { d } => (
            MfPolicy::DChoices(d),
            "mean-field d-choices (Van Houdt 2013)",
        ),
        GcPolicy::Random {} => (MfPolicy::Random, "mean-field random (Van Houdt 2013)"),
        GcPolicy::Fifo {} => (
            MfPolicy::Fifo,
            "FIFO closed form (Desnoyers 2012): valid fraction u^age",
        ),
        // No mean-field model exists for cost-benefit; under uniform writes it ranks blocks
        // almost as greedy does, so greedy's distribution stands in (documented).
        GcPolicy::CostBenefit {} => (
            MfPolicy::Greedy,
            "mean-field greedy standing in for cost-benefit",
        ),
    }
}

/// Valid counts of `k` blocks holding exactly `hot` pages, drawn from `dist` by stratified
/// quantiles, in random block order. `hot` must fit in the blocks (checked by the caller).
fn draw_counts(dist: &[f64], k: usize, hot: u64, ppb: u32, rng: &mut Rng) -> Vec<u32> {
    debug_assert!(hot <= k as u64 * ppb as u64);
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
    // The quantiles reproduce the mean to within a page or so per block class.
    exact_total(&mut counts, hot, ppb, rng);
    for j in (1..k).rev() {
        counts.swap(j, rng.gen_range(0..=j));
    }
    counts
}

/// FIFO's steady state under uniform random writes (Desnoyers 2012): blocks close at a steady
/// rate, and each page of a block closed `a` of the way back to the oldest is still valid
/// with probability exp(-lambda a), independently. `lambda` makes the expected total
/// `pages`; counts are binomial draws, corrected by single pages to the exact total. Block
/// j is the j-th oldest.
fn fifo_counts(k: usize, pages: u64, ppb: u32, rng: &mut Rng) -> Vec<u32> {
    use rand_distr::{Binomial, Distribution};
    let target = pages as f64 / (k as f64 * ppb as f64);
    // Mean of exp(-lambda a) over a in [0, 1] is (1 - exp(-lambda)) / lambda: decreasing in
    // lambda from 1 to 0, so bisection finds the one with the target mean.
    let mean = |l: f64| {
        if l < 1e-12 {
            1.0
        } else {
            (1.0 - (-l).exp()) / l
        }
    };
    let (mut lo, mut hi) = (0.0f64, 1.0f64);
    while mean(hi) > target {
        hi *= 2.0;
    }
    for _ in 0..100 {
        let mid = 0.5 * (lo + hi);
        if mean(mid) > target {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    let lambda = 0.5 * (lo + hi);
    let mut counts: Vec<u32> = (0..k)
        .map(|j| {
            let age = 1.0 - (j as f64 + 0.5) / k as f64;
            let p = (-lambda * age).exp().clamp(0.0, 1.0);
            Binomial::new(ppb as u64, p)
                .expect("p in [0, 1]")
                .sample(rng) as u32
        })
        .collect();
    exact_total(&mut counts, pages, ppb, rng);
    counts
}

/// Moves single pages between random blocks until `counts` sum to `total` exactly (each in
/// 0..=ppb).
fn exact_total(counts: &mut [u32], total: u64, ppb: u32, rng: &mut Rng) {
    let k = counts.len();
    let mut sum: i64 = counts.iter().map(|&c| c as i64).sum();
    let target = total as i64;
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
}

/// The logical ranges holding data at `occupancy`: the first `occupancy` of each footprint
/// range (hot) and of each range around them (cold), as (first, end, hot), in order.
pub fn occupied_ranges(fp: &Footprint, logical: u64, occupancy: f64) -> Vec<(u64, u64, bool)> {
    let mut all = Vec::new();
    let mut at = 0;
    for &(a, b) in &fp.intervals {
        if a > at {
            all.push((at, a, false));
        }
        all.push((a, b, true));
        at = b;
    }
    if at < logical {
        all.push((at, logical, false));
    }
    all.into_iter()
        .map(|(a, b, hot)| {
            let n = ((b - a) as f64 * occupancy).round() as u64;
            (a, a + n, hot)
        })
        .filter(|r| r.1 > r.0)
        .collect()
}

/// Roughly normal noise with unit variance (Irwin-Hall): erase counts only need to look
/// plausible, and this is cheap and deterministic.
fn unit_noise(rng: &mut Rng) -> f64 {
    (0..12).map(|_| rng.gen::<f64>()).sum::<f64>() - 6.0
}

/// Where the next logical page of a plane goes: cold pages fill whole blocks in order; hot
/// pages take the valid slots of the hot blocks, whose offsets are drawn by selection
/// sampling (Knuth's algorithm S), so each block gets exactly its count at random offsets
/// in increasing order, with no buffer.
#[derive(Clone, Copy, Default)]
struct PlaneCursor {
    cold_next: u32,
    hot_block: u32,
    hot_end: u32,
    pos: u32,
    needed: u32,
}

/// Logical pages of the plane at stripe position `pos` (of `planes`) below `x`.
#[inline]
fn below(x: u64, pos: u64, planes: u64) -> u64 {
    if x > pos {
        (x - pos).div_ceil(planes)
    } else {
        0
    }
}

/// The plane of logical page `lpa` at stripe position `k` (`lpa` mod planes): a pinned
/// flow's pages go to its planes as its writes would under static placement (`set[lpa mod
/// n]`), the others stripe.
#[inline]
fn plane_of(lpa: u64, k: usize, stripe: &[u32], pinned: &[Pinned]) -> u32 {
    for &(a, b, set) in pinned {
        if (a..b).contains(&lpa) {
            return set[(lpa % set.len() as u64) as usize];
        }
    }
    stripe[k]
}

/// A pinned flow's logical pages (first, end) and its planes.
pub type Pinned<'a> = (u64, u64, &'a [u32]);

pub fn run(
    ftl: &mut PageFtl,
    c: &Config,
    fp: &Footprint,
    level: PoolLevel,
    s: &Settings,
    pinned: &[Pinned],
) -> Result<PreconditionRecord, Error> {
    let g = ftl.geo;
    let planes = g.planes();
    let ppb = g.pages_per_block;
    let bpp = g.blocks_per_plane;
    let logical = ftl.logical_pages as u64;
    let free_keep = match level {
        PoolLevel::GcStart => ftl.gc_start_free_pages,
        PoolLevel::Reserve => reserve_level_pages(s),
    }
    .div_ceil(ppb as u64) as u32;
    let (policy, model_name) = mean_field_policy(c.ftl.gc_policy);
    let mut rng = derive_stream(c.precondition_seed(), PRECONDITION_STREAM);
    // (closed-data blocks, hot pages) -> (distribution, WA, closed blocks, open pages).
    #[allow(clippy::type_complexity)]
    let mut cache: HashMap<(u32, u64), (Vec<f64>, f64, u32, u32)> = HashMap::new();
    let stripe: Vec<u32> = ftl.stripe.to_vec();
    let stamp_step = ppb as u64 * planes as u64;
    let mut cursors = vec![PlaneCursor::default(); planes as usize];
    let mut wa_weighted = 0.0;
    let mut hot_total = 0u64;
    let mut cold_total = 0u64;
    let mut max_k = 0u32;
    // Logical ranges that hold data, in order, and whether they are hot (footprint): with
    // `precondition.occupancy` below 1, the first part of each footprint range and of each
    // range between them (MQSim's Initial_Occupancy_Percentage); the rest stays unmapped.
    let ranges = occupied_ranges(fp, logical, c.precondition.occupancy);
    let count = |hot: bool, pos: u64| -> u64 {
        ranges
            .iter()
            .filter(|r| r.2 == hot)
            .map(|&(a, b, _)| below(b, pos, planes as u64) - below(a, pos, planes as u64))
            .sum()
    };
    // With pinned flows, each plane's hot and cold pages are counted page by page (phase 2
    // places them the same way); without, a closed form per stripe position.
    let mut per_plane: Vec<[u64; 2]> = Vec::new();
    if !pinned.is_empty() {
        per_plane = vec![[0; 2]; planes as usize];
        for &(a, b, hot) in &ranges {
            for lpa in a..b {
                let p = plane_of(lpa, (lpa % planes as u64) as usize, &stripe, pinned);
                per_plane[p as usize][hot as usize] += 1;
            }
        }
    }
    let mut cold_of = vec![0u64; planes as usize];
    // Phase 1, per plane: block roles and valid counts.
    for (pos, &p) in stripe.iter().enumerate() {
        let pos = pos as u64;
        let (hot, cold) = match per_plane.get(p as usize) {
            Some(&[cold, hot]) => (hot, cold),
            None => (count(true, pos), count(false, pos)),
        };
        // Pinned ranges can crowd a plane: validation admits the average share (with the GC
        // reserve and open blocks beside it) and no more, as sequential pinned filling does.
        let share = logical.div_ceil(planes as u64);
        if hot + cold > share {
            return Err(Error::Config(format!(
                "fast preconditioning: plane {p} would hold {} pages with pinned flows, more than its share of the logical space ({share} pages): GC would have no room; lower the pinned flows' `range_bytes`, or pin them to more planes",
                hot + cold
            )));
        }
        cold_total += cold;
        hot_total += hot;
        cold_of[p as usize] = cold;
        let first_block = p * bpp;
        let cold_blocks = cold.div_ceil(ppb as u64) as u32;
        for k in 0..cold_blocks {
            let b = (first_block + k) as usize;
            ftl.written[b] = ppb;
            ftl.valid[b] = (cold - k as u64 * ppb as u64).min(ppb as u64) as u32;
            ftl.block_state[b] = BlockState::Closed;
        }
        let cur = &mut cursors[p as usize];
        cur.cold_next = first_block * ppb;
        cur.hot_block = first_block + cold_blocks;
        cur.pos = 0;
        if hot == 0 {
            cur.hot_end = cur.hot_block;
            continue;
        }
        // At `GcStart`, GC keeps the free pages of a plane just at its start threshold: it
        // collects while they are below it, one victim (a gain of ppb - v pages) at a time,
        // so they average start + gain/2. At `Reserve`, the pool is the reserve blocks plus
        // about a block in the partly written frontiers. Whole free blocks plus a partly
        // written open user block hold that much; at low effective spare the write
        // amplification is very sensitive to it.
        let mf = |k: u32, pages: u64| -> Result<(Vec<f64>, f64), Error> {
            let err = |m: String| Error::Config(format!("fast preconditioning: {m}"));
            let dist = meanfield::valid_distribution(policy, k as u64, ppb, pages).map_err(err)?;
            let wa = meanfield::write_amplification(policy, k as u64, ppb, pages).map_err(err)?;
            Ok((dist, wa))
        };
        let k0 = bpp - cold_blocks - free_keep;
        if hot >= k0 as u64 * ppb as u64 {
            return Err(Error::Config(format!(
                "fast preconditioning: plane {p} must hold {hot} pages of random-write data in {k0} blocks of {ppb} pages after the cold data and the {free_keep} free blocks the free pool keeps (`precondition.free_pool` = \"{}\"); raise `ftl.spare_factor` or lower `ftl.gc_threshold`", level.name()
            )));
        }
        let key = (k0, hot);
        if let std::collections::hash_map::Entry::Vacant(slot) = cache.entry(key) {
            let (_, wa0) = mf(k0, hot)?;
            let free = match level {
                PoolLevel::GcStart => {
                    let gain = ppb as f64 / wa0;
                    ftl.gc_start_free_pages as f64 - 0.5 + gain / 2.0
                }
                // The reserve's blocks and the user and GC frontiers, each half written on
                // average (drawn per plane below): one block of the pool is open.
                PoolLevel::Reserve => (reserve_level_pages(s) - ppb as u64) as f64,
            };
            let free_blocks = (free / ppb as f64).floor() as u32;
            let open_free = (free - free_blocks as f64 * ppb as f64).round() as u32;
            // A plane whose footprint share is smaller than the open block's written part (a
            // flow writing a small range) holds all of it there.
            let open_written = if open_free > 0 && open_free < ppb {
                (ppb - open_free).min(hot as u32)
            } else {
                0
            };
            let open_written = if level == PoolLevel::Reserve {
                // Both frontiers: `ppb` written pages between them on average.
                ppb.min(hot as u32)
            } else {
                open_written
            };
            let opens = match level {
                PoolLevel::Reserve => 2,
                PoolLevel::GcStart => u32::from(open_written > 0),
            };
            let k = bpp - cold_blocks - free_blocks - opens;
            let closed_pages = hot - open_written as u64;
            let (dist, wa) = if closed_pages == 0 {
                // Everything sits in the open block: the closed blocks hold nothing valid.
                let mut d = vec![0.0; ppb as usize + 1];
                d[0] = 1.0;
                (d, 1.0)
            } else if closed_pages < k as u64 * ppb as u64 {
                mf(k, closed_pages)?
            } else {
                mf(k0, hot)?
            };
            slot.insert((dist, wa, k, open_written));
        }
        let (dist, wa, k, open_written) = cache.get(&key).expect("inserted above").clone();
        // Written pages of the open blocks after the closed ones: the user frontier, then
        // (at the reserve) the GC frontier.
        let opens: Vec<u32> = match level {
            PoolLevel::Reserve => {
                // Planes of a device under sustained writes are at every point of filling
                // their frontiers: drawing them per plane keeps the planes from all reaching
                // the reserve at once in the first blocks of a run. The closed blocks' counts
                // keep the mean distribution, brought to the plane's total by the draw.
                let u = rng.gen_range(1..ppb).min(hot as u32);
                let g = rng.gen_range(1..ppb).min(hot as u32 - u);
                vec![u, g]
            }
            PoolLevel::GcStart if open_written > 0 => vec![open_written],
            PoolLevel::GcStart => vec![],
        };
        let open_written: u32 = opens.iter().sum();
        cur.hot_end = cur.hot_block + k + opens.len() as u32;
        max_k = max_k.max(k);
        wa_weighted += wa * hot as f64;
        let closed_pages = hot - open_written as u64;
        if closed_pages > k as u64 * ppb as u64 {
            return Err(Error::Config(format!(
                "fast preconditioning: plane {p} must hold {closed_pages} pages of random-write data in {k} closed blocks of {ppb} pages; raise `ftl.spare_factor` or lower `ftl.gc_threshold`"
            )));
        }
        // Close order: FIFO victims are the oldest blocks, which hold the fewest valid
        // pages, so fuller blocks were closed later; cost-benefit reads the same ages.
        let (counts, order) = if c.ftl.gc_policy == (GcPolicy::Fifo {}) {
            // FIFO's victim is the oldest block, not the emptiest: its count must be what a
            // block of that age holds, with the spread independent overwrites give.
            // Sorting quantile counts would make the oldest blocks the emptiest of all,
            // and a short run's first victims too cheap.
            let counts = fifo_counts(k as usize, closed_pages, ppb, &mut rng);
            (counts, (0..k).collect::<Vec<u32>>())
        } else {
            let counts = draw_counts(&dist, k as usize, closed_pages, ppb, &mut rng);
            let mut order: Vec<u32> = (0..k).collect();
            order.sort_by_key(|&j| counts[j as usize]);
            (counts, order)
        };
        for (rank, &j) in order.iter().enumerate() {
            let b = (cur.hot_block + j) as usize;
            ftl.close_stamp[b] = (rank as u64 + 1) * stamp_step;
            ftl.mod_stamp[b] = ftl.close_stamp[b];
        }
        for (j, &v) in counts.iter().enumerate() {
            let b = (cur.hot_block + j as u32) as usize;
            ftl.valid[b] = v;
            ftl.written[b] = ppb;
            ftl.block_state[b] = BlockState::Closed;
        }
        for (i, &w) in opens.iter().enumerate() {
            // The open blocks hold the newest writes, all still valid.
            let b = (cur.hot_block + k) as usize + i;
            ftl.valid[b] = w;
            ftl.written[b] = w;
            ftl.block_state[b] = BlockState::Open;
        }
        cur.needed = ftl.valid[cur.hot_block as usize];
    }
    if pinned.is_empty() {
        // Without pinned flows the layout is a formula (`pagemap::FastLayout`): nothing per
        // page is written.
        let hot = (0..planes)
            .map(|p| {
                let cur = &cursors[p as usize];
                HotBlocks {
                    first: cur.hot_block - p * bpp,
                    blocks: (cur.hot_block..cur.hot_end)
                        .map(|b| (ftl.valid[b as usize], ftl.written[b as usize]))
                        .collect(),
                }
            })
            .collect();
        let layout = FastLayout::new(ppb, bpp, &stripe, &ranges, cold_of, hot, rng.gen());
        ftl.map.reset(Base::Fast(Box::new(layout)));
    } else {
        place_pinned(ftl, &ranges, &stripe, pinned, &mut cursors, &mut rng);
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
    // Every page mapped at full occupancy (checked where a debug build can afford a pass).
    debug_assert!(
        c.precondition.occupancy < 1.0
            || ftl.logical_pages() > 1 << 26
            || ftl.mapped_pages() == ftl.logical_pages()
    );
    ftl.rebuild_planes();
    Ok(PreconditionRecord {
        model: Some(model_name.to_string()),
        predicted_write_amplification: Some(predicted_wa),
        gc_start_free_pages: Some(ftl.gc_start_free_pages),
        reserve_blocks: Some(ftl.reserve_blocks),
        hot_pages: Some(hot_total),
        cold_pages: Some(cold_total),
        occupancy: Some(c.precondition.occupancy),
        history_drive_writes: Some(hist),
        mean_erase_count: Some(mean_erase),
        ..PreconditionRecord::of(crate::config::PreconditionMode::Fast)
    })
}

/// Phase 2 with pinned flows, in logical order so L2P is written sequentially and each plane's
/// P2L region too: hot pages take random slots of their plane's hot blocks (selection
/// sampling), cold pages the next page of the plane's cold blocks.
fn place_pinned(
    ftl: &mut PageFtl,
    ranges: &[(u64, u64, bool)],
    stripe: &[u32],
    pinned: &[Pinned],
    cursors: &mut [PlaneCursor],
    rng: &mut Rng,
) {
    let ppb = ftl.geo.pages_per_block;
    let planes = ftl.geo.planes();
    let logical = ftl.logical_pages as u64;
    let mut range = 0usize;
    let mut k = 0usize;
    for lpa in 0..logical {
        while range < ranges.len() && ranges[range].1 <= lpa {
            range += 1;
        }
        let plane = if pinned.is_empty() {
            stripe[k]
        } else {
            plane_of(lpa, k, stripe, pinned)
        };
        let cur = &mut cursors[plane as usize];
        k += 1;
        if k == planes as usize {
            k = 0;
        }
        if range == ranges.len() || ranges[range].0 > lpa {
            continue;
        }
        let ppa = if ranges[range].2 {
            while cur.needed == 0 {
                cur.hot_block += 1;
                cur.pos = 0;
                debug_assert!(cur.hot_block < cur.hot_end);
                cur.needed = ftl.valid[cur.hot_block as usize];
            }
            let limit = ftl.written[cur.hot_block as usize];
            loop {
                let left = limit - cur.pos;
                let take = rng.gen_range(0..left) < cur.needed;
                cur.pos += 1;
                if take {
                    break;
                }
            }
            cur.needed -= 1;
            cur.hot_block * ppb + cur.pos - 1
        } else {
            cur.cold_next += 1;
            cur.cold_next - 1
        };
        ftl.map.link(lpa as u32, ppa);
    }
}
