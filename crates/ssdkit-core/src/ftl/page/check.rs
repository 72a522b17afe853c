//! Invariant checks (for tests; O(pages)) and the erase-count summary of the result.

use super::blocks::BlockState;
use super::{PageFtl, NONE};
use crate::config::GcPolicy;
use crate::ids::{BlockId, PlaneId};

impl PageFtl {
    /// Checks that the mapping and block state agree. Costs O(pages); for tests.
    pub fn check_invariants(&self) -> Result<(), String> {
        let g = self.geo;
        let (l2p, p2l) = (self.map.l2p(), self.map.p2l());
        for (lpa, &ppa) in l2p.iter().enumerate() {
            if ppa != NONE && p2l[ppa as usize] != lpa as u32 {
                return Err(format!(
                    "L2P[{lpa}] = {ppa} but P2L[{ppa}] = {}",
                    p2l[ppa as usize]
                ));
            }
        }
        let mut valid = vec![0u32; self.valid.len()];
        for (ppa, &lpa) in p2l.iter().enumerate() {
            if lpa == NONE {
                continue;
            }
            if lpa as usize >= l2p.len() || l2p[lpa as usize] != ppa as u32 {
                return Err(format!(
                    "P2L[{ppa}] = {lpa} is not the live copy (duplicate or stale)"
                ));
            }
            let b = g.block_of_ppa(ppa as u32);
            if g.page_in_block(ppa as u32) >= self.written[b as usize] {
                return Err(format!(
                    "valid page {ppa} beyond the write pointer of block {b}"
                ));
            }
            valid[b as usize] += 1;
        }
        if valid != self.valid {
            let b = (0..valid.len())
                .find(|&b| valid[b] != self.valid[b])
                .unwrap();
            return Err(format!(
                "block {b}: valid count {} but {} valid pages",
                self.valid[b], valid[b]
            ));
        }
        for (p, ps) in self.planes.iter().enumerate() {
            for (b, what) in [(ps.open[0], "user"), (ps.open[1], "GC")] {
                if b != NONE && self.block_state[b as usize] != BlockState::Open {
                    return Err(format!("plane {p}: {what} open block {b} is not open"));
                }
            }
            for b in ps.free.in_arrival_order() {
                if self.block_state[b as usize] != BlockState::Free || self.written[b as usize] != 0
                {
                    return Err(format!("plane {p}: free-list block {b} is not erased"));
                }
                if b / g.blocks_per_plane != p as u32 {
                    return Err(format!(
                        "plane {p}: free-list block {b} belongs to another plane"
                    ));
                }
            }
        }
        for (b, s) in self.block_state.iter().enumerate() {
            if *s == BlockState::Victim
                && self.planes[b / g.blocks_per_plane as usize].gc.victim()
                    != Some(BlockId(b as u32))
            {
                return Err(format!(
                    "block {b} is a GC victim but no collection of it is in progress (leaked)"
                ));
            }
        }
        let frees = self
            .block_state
            .iter()
            .filter(|&&s| s == BlockState::Free)
            .count();
        let listed: usize = self.planes.iter().map(|p| p.free.len()).sum();
        if frees != listed {
            return Err(format!("{frees} free blocks but {listed} on free lists"));
        }
        self.check_index()
    }

    /// The victim indexes answer what a scan of each plane in block order answers.
    fn check_index(&self) -> Result<(), String> {
        let g = self.geo;
        let bpp = g.blocks_per_plane;
        let ppb = g.pages_per_block;
        for p in 0..g.planes() {
            let plane = PlaneId(p);
            let closed: Vec<u32> = (p * bpp..(p + 1) * bpp)
                .filter(|&b| self.block_state[b as usize] == BlockState::Closed)
                .collect();
            let greedy = closed
                .iter()
                .filter(|&&b| self.valid[b as usize] < ppb)
                .min_by_key(|&&b| (self.valid[b as usize], b))
                .map(|&b| (self.valid[b as usize], BlockId(b)));
            if self.index.fewest_valid(plane) != greedy {
                return Err(format!(
                    "plane {p}: greedy index says {:?}, a scan {greedy:?}",
                    self.index.fewest_valid(plane)
                ));
            }
            if self.gc_policy == (GcPolicy::Fifo {}) {
                let fifo = closed
                    .iter()
                    .min_by_key(|&&b| (self.close_stamp[b as usize], b))
                    .map(|&b| BlockId(b));
                if self.index.oldest_closed(plane) != fifo {
                    return Err(format!("plane {p}: FIFO index disagrees with a scan"));
                }
            }
            if self.wl_static {
                let max = (p * bpp..(p + 1) * bpp)
                    .map(|b| self.erase_count[b as usize])
                    .max()
                    .unwrap_or(0);
                let cold = closed
                    .iter()
                    .min_by_key(|&&b| (self.erase_count[b as usize], b))
                    .map(|&b| (self.erase_count[b as usize], BlockId(b), max));
                if self.index.coldest_closed(plane) != cold {
                    return Err(format!(
                        "plane {p}: erase-count index disagrees with a scan"
                    ));
                }
            }
            if self.gc_policy == (GcPolicy::CostBenefit {}) && greedy.is_some_and(|(v, _)| v > 0) {
                let mut best: Option<(u32, f64)> = None;
                for &b in &closed {
                    let v = self.valid[b as usize] as f64;
                    if v >= ppb as f64 {
                        continue;
                    }
                    let age = (self.clock - self.mod_stamp[b as usize]) as f64 + 1.0;
                    let u = v / ppb as f64;
                    let score = age * (1.0 - u) / (2.0 * u);
                    if best.is_none_or(|(_, s)| score > s) {
                        best = Some((b, score));
                    }
                }
                let scan = best.map(|(b, _)| BlockId(b));
                if self.index.best_cost_benefit(plane, self.clock) != scan {
                    let ib = self.index.best_cost_benefit(plane, self.clock);
                    let desc = |b: Option<BlockId>| {
                        b.map(|b| {
                            (
                                b.0,
                                self.valid[b.idx()],
                                self.mod_stamp[b.idx()],
                                self.block_state[b.idx()],
                            )
                        })
                    };
                    return Err(format!(
                        "plane {p}: cost-benefit index says {:?}, a scan {:?} (clock {})",
                        desc(ib),
                        desc(scan),
                        self.clock
                    ));
                }
            }
        }
        Ok(())
    }
}

impl PageFtl {
    /// Erase-count distribution over every block: min, mean, max, standard deviation and a
    /// histogram of at most 32 equal-width integer bins (`bin_start[i]` is the lowest count
    /// of bin i, all bins `bin_width` wide).
    pub fn erase_count_summary(&self) -> crate::result::EraseCounts {
        summarize_erases(&self.erase_count)
    }
}

/// Erase-count distribution over `erase_count` (every scheme summarises its blocks so).
pub(in crate::ftl) fn summarize_erases(erase_count: &[u32]) -> crate::result::EraseCounts {
    let n = erase_count.len() as f64;
    // One pass for the extremes and the sum: the array has a count per block (262,144 on
    // MQSim's shipped device), read at the end of every run.
    let (mut min, mut max, mut sum) = (u32::MAX, 0u32, 0u64);
    for &e in erase_count {
        min = min.min(e);
        max = max.max(e);
        sum += e as u64;
    }
    if erase_count.is_empty() {
        min = 0;
    }
    let mean = sum as f64 / n;
    // Every block alike (a device that never erased): each term below is exactly 0 (the mean
    // of equal integers is that integer) and every block falls in the one bin.
    let uniform = min == max && !erase_count.is_empty();
    let var = if uniform {
        0.0
    } else {
        erase_count
            .iter()
            .map(|&e| (e as f64 - mean).powi(2))
            .sum::<f64>()
            / n
    };
    let width = (max - min + 1).div_ceil(32).max(1);
    let bins = ((max - min) / width + 1) as usize;
    let mut count = vec![0u64; bins];
    if uniform {
        count[0] = erase_count.len() as u64;
    } else {
        for &e in erase_count {
            count[((e - min) / width) as usize] += 1;
        }
    }
    let start: Vec<u32> = (0..bins as u32).map(|i| min + i * width).collect();
    crate::result::EraseCounts {
        blocks: erase_count.len() as u64,
        min,
        mean,
        max,
        std: var.sqrt(),
        histogram: crate::result::EraseHistogram {
            bin_start: start,
            bin_width: width,
            count,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::summarize_erases;

    /// The summary as defined: five plain passes (extremes, sum, squared deviations, bins).
    fn reference(e: &[u32]) -> (u32, u32, u64, u64, u32, Vec<u64>) {
        let n = e.len() as f64;
        let min = e.iter().copied().min().unwrap_or(0);
        let max = e.iter().copied().max().unwrap_or(0);
        let mean = e.iter().map(|&x| x as u64).sum::<u64>() as f64 / n;
        let var = e.iter().map(|&x| (x as f64 - mean).powi(2)).sum::<f64>() / n;
        let width = (max - min + 1).div_ceil(32).max(1);
        let mut count = vec![0u64; ((max - min) / width + 1) as usize];
        for &x in e {
            count[((x - min) / width) as usize] += 1;
        }
        (min, max, mean.to_bits(), var.sqrt().to_bits(), width, count)
    }

    #[test]
    fn the_one_pass_summary_equals_the_definition_bit_for_bit() {
        let mut seed = 12345u64;
        let mut rand = |m: u32| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((seed >> 33) % m as u64) as u32
        };
        let cases: Vec<Vec<u32>> = vec![
            vec![0; 262_144],
            vec![7; 13],
            vec![5],
            (0..1000).collect(),
            (0..5000).map(|_| rand(3)).collect(),
            (0..5000).map(|_| 100 + rand(1000)).collect(),
            {
                let mut v = vec![4; 999];
                v.push(5);
                v
            },
        ];
        for e in &cases {
            let s = summarize_erases(e);
            let got = (
                s.min,
                s.max,
                s.mean.to_bits(),
                s.std.to_bits(),
                s.histogram.bin_width,
                s.histogram.count.clone(),
            );
            assert_eq!(got, reference(e), "{} blocks", e.len());
            assert_eq!(s.blocks, e.len() as u64);
            assert_eq!(s.histogram.bin_start[0], s.min);
        }
    }
}
