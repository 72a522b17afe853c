//! Preconditioning: the device state at time zero.
//!
//! Real drives are measured in steady state; a fresh simulated drive never collects garbage
//! and reports fiction (the MQSim paper, FAST'18, sections 3.2 and 4.4). Four modes:
//! - `fast` sets each closed block's valid-page count from the steady-state distribution of
//!   the GC policy (mean-field model, `meanfield`), O(physical pages), no writes simulated;
//! - `write` simulates the writes through the FTL, untimed: sequential fill, then uniform
//!   random overwrites until the write amplification is stable (the ground truth);
//! - `sequential` maps every logical page in striping order (a freshly filled drive);
//! - `empty` leaves the drive erased.

pub mod fast;
pub mod meanfield;
pub mod pool;

use super::page::gc::{write_now, write_now_in};
use super::{Ftl, PageFtl};
use crate::config::{AddressPattern, Config, PreconditionMode, PreconditionPattern};
use crate::engine::derive_stream;
use crate::error::Error;
use crate::result::{PreconditionCmt, PreconditionRecord};
use rand::Rng;
use serde_json::{json, Value};
use std::time::Instant;

/// Random stream id of preconditioning.
pub const PRECONDITION_STREAM: u64 = 0x7072_0000;
/// Random stream id of the entries a warm mapping cache starts with.
pub const CMT_WARM_STREAM: u64 = 0x636d_0000;

/// Logical pages the workload overwrites at random: sorted, disjoint half-open intervals.
/// Empty means the steady state is that of sequential writes (every block fully valid).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Footprint {
    pub intervals: Vec<(u64, u64)>,
}

impl Footprint {
    pub fn pages(&self) -> u64 {
        self.intervals.iter().map(|(a, b)| b - a).sum()
    }

    /// The `k`-th page of the footprint, k < pages().
    #[inline]
    pub fn nth(&self, mut k: u64) -> u64 {
        for &(a, b) in &self.intervals {
            if k < b - a {
                return a + k;
            }
            k -= b - a;
        }
        unreachable!("index beyond the footprint")
    }

    #[inline]
    pub fn contains(&self, lpa: u64) -> bool {
        self.intervals.iter().any(|&(a, b)| lpa >= a && lpa < b)
    }

    pub fn describe(&self) -> Vec<[u64; 2]> {
        self.intervals.iter().map(|&(a, b)| [a, b]).collect()
    }
}

/// The footprint the configured pattern implies. `auto` takes the union of the page ranges
/// of flows that write at random; sequential writers leave blocks fully valid, so they add
/// nothing.
pub fn footprint(c: &Config, logical_pages: u64) -> Footprint {
    let page = c.flash.page_size_bytes as u64;
    let mut iv: Vec<(u64, u64)> = match c.precondition.pattern {
        PreconditionPattern::Uniform => vec![(0, logical_pages)],
        PreconditionPattern::Sequential => vec![],
        PreconditionPattern::Auto => c
            .flows
            .iter()
            .filter(|f| {
                f.pattern == AddressPattern::Random && f.read_fraction + f.trim_fraction < 1.0
            })
            .map(|f| {
                let capacity = logical_pages * page;
                let range = if f.range_bytes == 0 {
                    capacity - f.start_bytes
                } else {
                    f.range_bytes
                };
                let first = f.start_bytes / page;
                let end = (f.start_bytes + range).div_ceil(page);
                (first, end.min(logical_pages))
            })
            .collect(),
    };
    iv.sort_unstable();
    let mut merged: Vec<(u64, u64)> = Vec::new();
    for (a, b) in iv {
        match merged.last_mut() {
            Some(last) if a <= last.1 => last.1 = last.1.max(b),
            _ => merged.push((a, b)),
        }
    }
    Footprint { intervals: merged }
}

fn pattern_name(c: &Config) -> &'static str {
    match c.precondition.pattern {
        PreconditionPattern::Auto => "auto",
        PreconditionPattern::Uniform => "uniform",
        PreconditionPattern::Sequential => "sequential",
    }
}

/// What the preconditioned state of `c`'s device depends on, as JSON: two configurations with
/// equal keys precondition to the same device (the same snapshot bytes, apart from the
/// record's wall-clock time), whatever else differs (the host, scheduling, the data cache,
/// queue depths, run lengths). Sweeps make one snapshot per key (python/ssdkit/sweep.py).
///
/// It holds what preconditioning and `Ftl::new` read, resolved: the device (the snapshot's
/// device keys, the medium, the sector size), the whole `[ftl]` and `[precondition]`
/// sections, the seed, and what the flows decide: the footprint, the free pool with its
/// recorded reason, the pinned flows' pages and planes, and (with a mapping cache) every
/// flow's address range, from which each partition's warm entries are drawn. Resolved values
/// rather than flow keys, so that keys preconditioning never reads (a flow's queue depth when
/// the pool does not depend on it) leave the key alone. `seed_from` says whether the seed is
/// `precondition.seed` or the run's.
pub fn state_key(c: &Config) -> Value {
    let s = crate::settings::Settings::resolve(c);
    let fp = footprint(c, s.sizes.logical_pages);
    let (_, pool) = pool::resolve(c, &s, &fp);
    let page = c.flash.page_size_bytes as u64;
    let device: serde_json::Map<String, Value> = super::snapshot::device_keys(c)
        .into_iter()
        .map(|(k, v)| (k.to_string(), json!(v)))
        .collect();
    let mut precondition = serde_json::to_value(&c.precondition).expect("serialises");
    precondition
        .as_object_mut()
        .expect("a table")
        .remove("seed");
    let pinned: Vec<Value> = s
        .flows
        .iter()
        .filter_map(|f| {
            let set = f.planes.as_deref()?;
            let end = (f.start_bytes + f.range_bytes).div_ceil(page);
            Some(json!([f.start_bytes / page, end, set]))
        })
        .collect();
    let mut key = json!({
        "device": device,
        "medium": serde_json::to_value(c.flash.medium).expect("enum serialises"),
        "sector_bytes": c.interface.sector_bytes,
        "ftl": serde_json::to_value(&c.ftl).expect("serialises"),
        "precondition": precondition,
        "seed": c.precondition_seed(),
        "seed_from": if c.precondition.seed.is_some() { "precondition.seed" } else { "run.seed" },
        "footprint": fp.describe(),
        "free_pool": pool,
        "pinned": pinned,
    });
    if s.sizes.cmt.is_some() {
        key["flow_ranges"] = json!(s
            .flows
            .iter()
            .map(|f| json!([f.start_bytes, f.range_bytes]))
            .collect::<Vec<_>>());
    }
    key
}

/// Brings an erased `ftl` to the configured initial state and returns the record of what was
/// done (it goes into the result). Statistics start from zero afterwards; erase counts stay.
pub fn run(ftl: &mut Ftl, c: &Config) -> Result<PreconditionRecord, Error> {
    run_checked(ftl, c, &mut || Ok(()))
}

/// [`run`], calling `check` every 65,536 page writes of `write` mode (the mode that can take
/// minutes): an error from it stops preconditioning with that error (how a host program
/// interrupts it).
pub fn run_checked(
    ftl: &mut Ftl,
    c: &Config,
    check: &mut dyn FnMut() -> Result<(), Error>,
) -> Result<PreconditionRecord, Error> {
    // Each scheme reaches its steady state its own way; the page map's is here.
    if let Some(b) = ftl.block_mut() {
        return Ok(b.precondition(c));
    }
    let ftl = ftl.page_mut().expect("the page scheme");
    let wall = Instant::now();
    let p = &c.precondition;
    let fp = footprint(c, ftl.logical_pages as u64);
    let settings = crate::settings::Settings::resolve(c);
    let (level, pool_rec) = pool::resolve(c, &settings, &fp);
    ftl.set_untimed_pool(level);
    if ftl.in_place() {
        // Nothing to age: a page is where it always is, erased blocks do not exist, and the
        // write amplification is 1 in every state. Every mode but "empty" writes the first
        // `occupancy` of the logical space.
        let occupancy = if p.mode == PreconditionMode::Empty {
            0.0
        } else {
            p.occupancy
        };
        ftl.fill_in_place(occupancy);
        ftl.rebuild_planes();
        ftl.stats = Default::default();
        return Ok(PreconditionRecord {
            medium: Some(crate::config::Medium::InPlace),
            occupancy: Some(occupancy),
            wall_time_s: wall.elapsed().as_secs_f64(),
            ..PreconditionRecord::of(p.mode)
        });
    }
    // Pinned flows' logical pages go to their own planes (their writes could not move them).
    let page = ftl.geo.page_size as u64;
    let pinned: Vec<fast::Pinned> = settings
        .flows
        .iter()
        .filter_map(|f| {
            let set = f.planes.as_deref()?;
            let end = (f.start_bytes + f.range_bytes).div_ceil(page);
            Some((f.start_bytes / page, end, set))
        })
        .collect();
    let mut rec = match p.mode {
        // The FTL comes erased and built (`PageFtl::new`): nothing to rebuild.
        PreconditionMode::Empty => PreconditionRecord::of(PreconditionMode::Empty),
        PreconditionMode::Sequential => {
            if pinned.is_empty() {
                ftl.fill_sequential(p.occupancy);
            } else {
                ftl.fill_sequential_pinned(p.occupancy, &pinned)
                    .map_err(|m| Error::Config(format!("precondition: {m}")))?;
            }
            ftl.rebuild_planes();
            PreconditionRecord {
                occupancy: Some(p.occupancy),
                pinned_flows: Some(pinned.len() as u64),
                ..PreconditionRecord::of(PreconditionMode::Sequential)
            }
        }
        PreconditionMode::Write => {
            if pinned.is_empty() {
                ftl.fill_sequential(1.0);
            } else {
                ftl.fill_sequential_pinned(1.0, &pinned)
                    .map_err(|m| Error::Config(format!("precondition: {m}")))?;
            }
            ftl.rebuild_planes();
            let mut rec = write_overwrites(ftl, c, &fp, &pinned, check)?;
            rec.pinned_flows = Some(pinned.len() as u64);
            rec
        }
        PreconditionMode::Fast => {
            let mut rec = fast::run(ftl, c, &fp, level, &settings, &pinned)?;
            rec.pinned_flows = Some(pinned.len() as u64);
            rec
        }
    };
    if p.mode == PreconditionMode::Fast || p.mode == PreconditionMode::Write {
        rec.free_pool = Some(pool_rec.free_pool);
        rec.free_pool_auto = pool_rec.free_pool_auto;
        rec.free_pages_per_plane = Some(free_pages_per_plane(ftl));
        rec.pattern = Some(pattern_name(c).to_string());
        rec.footprint_pages = Some(fp.pages());
        rec.footprint = Some(fp.describe());
        rec.gc_policy = Some(c.ftl.gc_policy.name().to_string());
    }
    if ftl.cmt.is_some() && p.mode != PreconditionMode::Empty {
        rec.cmt = Some(place_mapping(ftl, c, &settings, true)?);
    } else if ftl.cmt.is_some() && settings.ftl.cmt_all_at_start {
        // MQSim's map, written whole at start; its cache starts empty.
        rec.cmt = Some(place_mapping(ftl, c, &settings, false)?);
    }
    rec.wall_time_s = wall.elapsed().as_secs_f64();
    ftl.stats = Default::default();
    Ok(rec)
}

/// Mean free pages per plane (free blocks and the unwritten part of open blocks).
fn free_pages_per_plane(ftl: &PageFtl) -> f64 {
    let planes = ftl.geometry().planes();
    (0..planes)
        .map(|p| ftl.free_pages(crate::ids::PlaneId(p)))
        .sum::<u64>() as f64
        / planes as f64
}

/// Write mode: random page overwrites of the footprint through the untimed FTL, in windows,
/// until two consecutive windows' write amplification agree within the tolerance.
fn write_overwrites(
    ftl: &mut PageFtl,
    c: &Config,
    fp: &Footprint,
    pinned: &[fast::Pinned],
    check: &mut dyn FnMut() -> Result<(), Error>,
) -> Result<PreconditionRecord, Error> {
    let p = &c.precondition;
    let n = fp.pages();
    let mut rec = PreconditionRecord {
        window_drive_writes: Some(p.write_window_drive_writes),
        tolerance: Some(p.write_tolerance),
        min_drive_writes: Some(p.write_min_drive_writes),
        max_drive_writes: Some(p.write_max_drive_writes),
        ..PreconditionRecord::of(PreconditionMode::Write)
    };
    if n == 0 {
        rec.drive_writes = Some(0.0);
        rec.stable = Some(true);
        rec.write_amplification = Some(1.0);
        return Ok(rec);
    }
    let mut rng = derive_stream(c.precondition_seed(), PRECONDITION_STREAM);
    let window = ((p.write_window_drive_writes * n as f64).ceil() as u64).max(1);
    let mut written = 0u64;
    let mut was: Vec<f64> = Vec::new();
    let mut stable = false;
    loop {
        let before = ftl.stats.user_page_writes + ftl.stats.gc_page_moves;
        for i in 0..window {
            if i & 0xFFFF == 0 {
                check()?;
            }
            let lpa = fp.nth(rng.gen_range(0..n)) as u32;
            let l = lpa as u64;
            // A pinned flow's page is rewritten in its planes (static placement's choice).
            let plane = pinned
                .iter()
                .find(|&&(a, b, _)| (a..b).contains(&l))
                .map(|&(_, _, set)| crate::ids::PlaneId(set[(l % set.len() as u64) as usize]));
            let done = match plane {
                None => write_now(ftl, crate::ids::Lpn(lpa)),
                Some(p) => write_now_in(ftl, crate::ids::Lpn(lpa), p),
            };
            if !done {
                return Err(Error::Simulation(format!(
                    "write preconditioning: no space can be freed for logical page {lpa}"
                )));
            }
        }
        written += window;
        let programs = ftl.stats.user_page_writes + ftl.stats.gc_page_moves - before;
        let wa = programs as f64 / window as f64;
        let drive_writes = written as f64 / n as f64;
        if let Some(&prev) = was.last() {
            if drive_writes >= p.write_min_drive_writes
                && (wa - prev).abs() <= p.write_tolerance * prev
            {
                stable = true;
            }
        }
        was.push(wa);
        if stable || drive_writes >= p.write_max_drive_writes {
            break;
        }
    }
    rec.drive_writes = Some(written as f64 / n as f64);
    rec.stable = Some(stable);
    rec.write_amplification = Some(was.last().copied().unwrap_or(1.0));
    rec.window_write_amplification = Some(was);
    Ok(rec)
}

/// A cached map on a filled device: every translation page holding a mapped entry (every one
/// with `ftl.cmt.translation_pages_at_start = "all"`) is written once, through the untimed writer (so GC makes room as the timed run would; they are the most recently
/// written pages, as translation pages rewritten by write-backs are in steady state), and the
/// cache starts full of clean translation pages drawn uniformly from those holding the
/// entries of each partition's flows (their address ranges): what LRU holds under uniform
/// random lookups. MQSim fills its CMT during preconditioning too. An empty device has no
/// translation page in flash yet: a first lookup needs no read (MQSim's unallocated
/// translation page), unless `ftl.cmt.translation_pages_at_start = "all"` writes them all
/// (without `warm`: the cache starts empty). With granularity "entry" the cache starts with
/// entries drawn uniformly from the partition's flows' logical pages instead.
fn place_mapping(
    ftl: &mut PageFtl,
    c: &Config,
    s: &crate::settings::Settings,
    warm_up: bool,
) -> Result<PreconditionCmt, Error> {
    let tpages = ftl.translation_pages() as u32;
    // A device preconditioned whole maps every logical page: no page needs looking at.
    let all = s.ftl.cmt_all_at_start
        || (c.precondition.mode != PreconditionMode::Empty && c.precondition.occupancy >= 1.0);
    let per = ftl.cmt.as_ref().expect("cached").entries_per_tpage() as u64;
    let logical = s.sizes.logical_pages;
    if all {
        // Each translation page written maps one logical page: room for them at once.
        ftl.expect_user_writes(tpages as u64, 0);
    }
    let mut stored = 0u64;
    for t in 0..tpages {
        // "written": a translation page exists when an entry of it is mapped.
        let first = t as u64 * per;
        if !all
            && !(first..(first + per).min(logical))
                .any(|l| ftl.translate(crate::ids::Lpn(l as u32)).is_some())
        {
            continue;
        }
        stored += 1;
        let lpn = ftl.tpage_lpn(t);
        if !write_now(ftl, lpn) {
            return Err(Error::Simulation(format!(
                "preconditioning: no space can be freed for translation page {t} of {tpages}: the mapping table's translation pages (their number set by `ftl.cmt.entry_bytes`) do not fit in flash beside the logical data of these planes; lower ftl.cmt.entry_bytes or raise ftl.spare_factor"
            )));
        }
    }
    if !warm_up {
        return Ok(PreconditionCmt {
            translation_pages: stored,
            warm_translation_pages: 0,
            warm_entries: s.ftl.cmt_entry.then_some(0),
        });
    }
    let page_bytes = c.flash.page_size_bytes as u64;
    let mut rng = derive_stream(c.precondition_seed(), CMT_WARM_STREAM);
    let cmt = ftl.cmt.as_mut().expect("checked by the caller");
    if cmt.by_entry() {
        let warm = warm_entries(cmt, s, page_bytes, &mut rng);
        return Ok(PreconditionCmt {
            translation_pages: stored,
            warm_translation_pages: 0,
            warm_entries: Some(warm),
        });
    }
    let parts = cmt.partitions();
    let mut warm = 0u64;
    for part in 0..parts {
        // The pages this partition's lookups address: its flow's range, or every flow's.
        let ranges: Vec<&crate::settings::FlowSettings> = if parts == 1 {
            s.flows.iter().collect()
        } else {
            vec![&s.flows[part]]
        };
        let mut iv: Vec<(u64, u64)> = ranges
            .iter()
            .map(|f| {
                let first = f.start_bytes / page_bytes;
                let end = (f.start_bytes + f.range_bytes).div_ceil(page_bytes);
                (first, end.min(s.sizes.logical_pages))
            })
            .collect();
        iv.sort_unstable();
        let own = Footprint { intervals: iv };
        // The translation pages holding the partition's entries, in random order: LRU
        // under uniform random lookups holds a uniform random subset of them.
        let e = cmt.entries_per_tpage() as u64;
        let mut pages: Vec<u32> = Vec::new();
        for &(a, b) in &own.intervals {
            if b > a {
                let first = (a / e) as u32;
                let last = ((b - 1) / e) as u32;
                // Intervals are sorted: a page shared with the previous one is listed once.
                let from = match pages.last() {
                    Some(&l) if l >= first => l + 1,
                    _ => first,
                };
                pages.extend(from..=last);
            }
        }
        for j in (1..pages.len()).rev() {
            pages.swap(j, rng.gen_range(0..=j));
        }
        let cap = cmt.capacity_pages(part) as usize;
        for &t in pages.iter().take(cap) {
            cmt.insert(t, part, false);
        }
        warm += pages.len().min(cap) as u64;
    }
    Ok(PreconditionCmt {
        translation_pages: stored,
        warm_translation_pages: warm,
        warm_entries: None,
    })
}

/// A cache of single entries starts full of clean entries drawn uniformly from each
/// partition's flows' logical pages (what LRU holds under uniform random lookups; MQSim
/// brings the preconditioned pages of each stream into its CMT, FTL.cpp:690-740). Returns the
/// entries cached.
fn warm_entries(
    cmt: &mut crate::ftl::cmt::Cmt,
    s: &crate::settings::Settings,
    page_bytes: u64,
    rng: &mut impl rand::Rng,
) -> u64 {
    let parts = cmt.partitions();
    let mut warm = 0;
    for part in 0..parts {
        let flows: Vec<&crate::settings::FlowSettings> = if parts == 1 {
            s.flows.iter().collect()
        } else {
            vec![&s.flows[part]]
        };
        let mut iv: Vec<(u64, u64)> = flows
            .iter()
            .map(|f| {
                let first = f.start_bytes / page_bytes;
                let end = (f.start_bytes + f.range_bytes).div_ceil(page_bytes);
                (first, end.min(s.sizes.logical_pages))
            })
            .filter(|(a, b)| b > a)
            .collect();
        iv.sort_unstable();
        // Overlapping ranges count once.
        let mut merged: Vec<(u64, u64)> = Vec::new();
        for (a, b) in iv {
            match merged.last_mut() {
                Some(m) if a <= m.1 => m.1 = m.1.max(b),
                _ => merged.push((a, b)),
            }
        }
        let total: u64 = merged.iter().map(|(a, b)| b - a).sum();
        let cap = cmt.capacity_entries(part);
        let nth = |mut k: u64| {
            for &(a, b) in &merged {
                if k < b - a {
                    return (a + k) as u32;
                }
                k -= b - a;
            }
            unreachable!("k < total")
        };
        if total <= cap {
            (0..total).for_each(|k| {
                cmt.insert_entry(nth(k), part, false);
            });
            warm += total;
            continue;
        }
        // Distinct draws, the cache being the set of those drawn. Another partition may hold
        // part of an overlapping range: the draws are bounded, and a partition left short
        // fills as the run goes.
        let (mut n, mut tries) = (0, 0u64);
        while n < cap && tries < cap.saturating_mul(64) {
            tries += 1;
            let lpn = nth(rng.gen_range(0..total));
            if !cmt.contains(lpn) {
                cmt.insert_entry(lpn, part, false);
                n += 1;
            }
        }
        warm += n;
    }
    warm
}
