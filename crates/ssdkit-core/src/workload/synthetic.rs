//! Synthetic request streams: op mix, size distribution, address pattern and open-loop
//! inter-arrival times (docs/workloads.md section 2).

use super::Op;
use crate::config::Arrival;
use crate::engine::{Picoseconds, Stream};
use crate::error::Error;
use crate::settings::{ArrivalSettings, PatternSettings, SizeSettings as Sizes, SyntheticSettings};
use rand::Rng;
use rand_distr::{Distribution, StandardNormal, Zipf};

/// One request as the host issues it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HostRequest {
    pub op: Op,
    pub start_sector: u64,
    pub sectors: u32,
}

enum Slots {
    Uniform,
    Sequential { next: u64, stride: u64, random: f64 },
    HotCold { hot: u64, hot_access: f64 },
    Zipf(Zipf<f64>),
    Pareto { pow: f64 },
    Normal { sd: f64 },
}

/// Draws ops, sizes and addresses of a synthetic flow; every draw comes from the flow's own
/// stream, in a fixed order per request (op, size, address), so results depend only on the
/// seed and the configuration.
pub struct SyntheticGen {
    read_fraction: f64,
    trim_fraction: f64,
    sizes: Sizes,
    slots: Slots,
    start_sector: u64,
    range_sectors: u64,
    align_sectors: u64,
    /// Number of aligned start positions in the range.
    n_slots: u64,
    scramble: Option<Feistel>,
    rng: Stream,
    /// Requests drawn ahead of the one handed out, oldest at `head`, for flows that write
    /// (`draws_ahead`): the simulator starts loading the map entries of the furthest while
    /// the nearer ones run. Draws stay in order, so results are as if drawn one at a time.
    ahead: [HostRequest; AHEAD],
    head: usize,
    draws_ahead: bool,
}

/// Requests a synthetic flow that writes draws ahead, unless a write cache takes its writes
/// (their map lookups come at write-back, long after: the prefetch would only evict lines in
/// use). Reads alone gain nothing: a read of a
/// page never written or written in order finds its place by formula, not in a table, and
/// the copies cost a read-only run 3-4 % (measured: 1 M 4 KiB random reads at QD32 on
/// MQSim's device, empty and sequentially filled). Writes gain: 1 M random 4 KiB writes on
/// the same device with an ideal map, loop 0.73 s to 0.55 s.
const AHEAD: usize = 8;

/// The number of distinct logical pages `requests` requests of flow `s` are expected to
/// write, on pages of `spp` sectors; None where it is not known from the configuration (an
/// address pattern other than uniform). Each write is taken at its largest size and its
/// worst alignment within a page, and lands on a uniform page of the range: w page writes
/// over r pages leave r (1 - e^(-w/r)) of them written (the expected occupancy of r bins
/// after w uniform draws).
pub fn expected_pages_written(s: &SyntheticSettings, requests: u64, spp: u64) -> Option<f64> {
    if s.pattern != PatternSettings::Uniform {
        return None;
    }
    let writes = requests as f64 * (1.0 - s.read_fraction - s.trim_fraction).max(0.0);
    // Starts fall on the range's start plus multiples of the alignment: within a page, at
    // offsets a multiple of gcd(alignment, page) past the range start's own offset.
    let step = gcd(s.align_sectors.max(1), spp);
    let last_offset = spp - step + s.start_sector % step;
    let pages = (last_offset + s.sizes.largest() as u64).div_ceil(spp);
    let range = s.range_sectors.div_ceil(spp).max(1) as f64;
    let w = writes * pages as f64;
    Some(range * -(-w / range).exp_m1())
}

/// Whether every write of flow `s` covers whole pages of `spp` sectors (its sizes are whole
/// pages and its starts page boundaries), so that none leaves a page partly written.
pub fn writes_whole_pages(s: &SyntheticSettings, spp: u64) -> bool {
    let whole = |n: u32| (n as u64).is_multiple_of(spp);
    let sizes = match &s.sizes {
        Sizes::Fixed(n) => whole(*n),
        Sizes::List { sectors, .. } => sectors.iter().all(|&n| whole(n)),
        Sizes::Uniform { .. } | Sizes::Normal { .. } => false,
    };
    sizes && gcd(s.align_sectors.max(1), spp) == spp && s.start_sector.is_multiple_of(spp)
}

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

impl SyntheticGen {
    /// The generators `s` describes, drawing from `rng`; drawing ahead if the flow writes
    /// and `hints` (its writes reach the page map when submitted: no write cache between).
    pub fn new(s: &SyntheticSettings, rng: Stream, hints: bool) -> Self {
        Self::drawing_ahead(s, rng, hints && s.read_fraction < 1.0)
    }

    /// Every request is a read (`draw` never gives a write or a TRIM).
    pub fn reads_only(&self) -> bool {
        self.read_fraction >= 1.0
    }

    fn drawing_ahead(s: &SyntheticSettings, rng: Stream, draws_ahead: bool) -> Self {
        let n_slots = s.n_slots;
        let slots = match s.pattern {
            PatternSettings::Uniform => Slots::Uniform,
            PatternSettings::Sequential {
                stride,
                first,
                random,
            } => Slots::Sequential {
                next: first,
                stride,
                random,
            },
            PatternSettings::HotCold { hot, hot_access } => Slots::HotCold { hot, hot_access },
            PatternSettings::Zipf { theta } => {
                Slots::Zipf(Zipf::new(n_slots, theta).expect("validated zipf parameters"))
            }
            PatternSettings::Pareto { pow } => Slots::Pareto { pow },
            PatternSettings::Normal { sd } => Slots::Normal { sd },
        };
        let scramble = s
            .scramble
            .then(|| Feistel::new(n_slots, 0x5EED_F00D ^ n_slots));
        Self {
            read_fraction: s.read_fraction,
            trim_fraction: s.trim_fraction,
            sizes: s.sizes.clone(),
            slots,
            start_sector: s.start_sector,
            range_sectors: s.range_sectors,
            align_sectors: s.align_sectors,
            n_slots,
            scramble,
            rng,
            ahead: [HostRequest {
                op: Op::Read,
                start_sector: 0,
                sectors: 0,
            }; AHEAD],
            head: 0,
            draws_ahead,
        }
        .primed()
    }

    fn primed(mut self) -> Self {
        if self.draws_ahead {
            for i in 0..AHEAD {
                self.ahead[i] = self.draw();
            }
        }
        self
    }

    /// The next request, and where the request `AHEAD` after it starts, if the flow draws
    /// ahead.
    #[inline(always)]
    pub fn next_request(&mut self) -> (HostRequest, Option<u64>) {
        if !self.draws_ahead {
            return (self.draw(), None);
        }
        let r = self.ahead[self.head];
        let far = self.draw();
        self.ahead[self.head] = far;
        self.head = (self.head + 1) % AHEAD;
        (r, Some(far.start_sector))
    }

    #[inline]
    fn draw(&mut self) -> HostRequest {
        // Pure read or write flows draw no op number, so their address streams do not
        // depend on the mix code path.
        let op = if self.read_fraction >= 1.0 {
            Op::Read
        } else if self.read_fraction <= 0.0 && self.trim_fraction <= 0.0 {
            Op::Write
        } else {
            let x = self.rng.gen::<f64>();
            if x < self.read_fraction {
                Op::Read
            } else if x < self.read_fraction + self.trim_fraction {
                Op::Trim
            } else {
                Op::Write
            }
        };
        let sectors = self.next_size();
        let offset = self.next_offset(sectors as u64);
        HostRequest {
            op,
            start_sector: self.start_sector + offset,
            sectors,
        }
    }

    #[inline]
    fn next_size(&mut self) -> u32 {
        match &self.sizes {
            Sizes::Fixed(s) => *s,
            Sizes::Uniform { min, span } => {
                let (min, span) = (*min, *span);
                min + self.rng.gen_range(0..=span)
            }
            Sizes::Normal { mean, sd, max } => {
                let (mean, sd, max) = (*mean, *sd, *max);
                let z: f64 = StandardNormal.sample(&mut self.rng);
                let v = (mean + sd * z).round();
                (v.max(1.0) as u64).min(max as u64) as u32
            }
            Sizes::List { cum, sectors } => {
                let total = *cum.last().expect("validated non-empty");
                let u = self.rng.gen::<f64>() * total;
                let i = cum.partition_point(|&c| c <= u).min(sectors.len() - 1);
                sectors[i]
            }
        }
    }

    /// Sector offset inside the range of a request of `sectors` sectors.
    #[inline]
    fn next_offset(&mut self, sectors: u64) -> u64 {
        let n = self.n_slots;
        let slot = match &mut self.slots {
            // Off the sequential run for this request; the run resumes where it was.
            Slots::Sequential { random, .. }
                if *random > 0.0 && self.rng.gen::<f64>() < *random =>
            {
                self.rng.gen_range(0..n)
            }
            Slots::Sequential { next, stride, .. } => {
                if *next + sectors > self.range_sectors {
                    *next = 0;
                }
                let o = *next;
                *next += if *stride == 0 { sectors } else { *stride };
                return o;
            }
            Slots::Uniform => self.rng.gen_range(0..n),
            Slots::HotCold { hot, hot_access } => {
                let (hot, x) = (*hot, *hot_access);
                if hot >= n {
                    // One slot only: nothing is cold.
                    self.rng.gen_range(0..n)
                } else if self.rng.gen::<f64>() < x {
                    self.rng.gen_range(0..hot)
                } else {
                    self.rng.gen_range(hot..n)
                }
            }
            Slots::Zipf(z) => {
                let k = z.sample(&mut self.rng) as u64;
                self.permute(k.clamp(1, n) - 1)
            }
            Slots::Pareto { pow } => {
                let pow = *pow;
                let u = self.rng.gen::<f64>();
                let k = ((u.powf(pow)) * n as f64) as u64;
                self.permute(k.min(n - 1))
            }
            Slots::Normal { sd } => {
                let sd = *sd;
                let mid = n as f64 / 2.0;
                let k = loop {
                    let z: f64 = StandardNormal.sample(&mut self.rng);
                    let v = (mid + sd * z).floor();
                    if v >= 0.0 && v < n as f64 {
                        break v as u64;
                    }
                };
                self.permute(k)
            }
        };
        let o = slot * self.align_sectors;
        if o + sectors > self.range_sectors {
            // A variable-size request at the last slots: end it at the range end, aligned.
            (self.range_sectors - sectors) / self.align_sectors * self.align_sectors
        } else {
            o
        }
    }

    #[inline]
    fn permute(&self, k: u64) -> u64 {
        match &self.scramble {
            Some(f) => f.permute(k),
            None => k,
        }
    }
}

/// A keyed bijection of [0, n): a four-round Feistel network on the smallest even-bit domain
/// holding n, with cycle walking. O(1) memory, unlike a stored permutation of a terabyte's
/// slots.
struct Feistel {
    n: u64,
    half_bits: u32,
    mask: u64,
    key: u64,
}

impl Feistel {
    fn new(n: u64, key: u64) -> Self {
        let bits = (64 - (n.max(2) - 1).leading_zeros()).max(2);
        let half_bits = bits.div_ceil(2);
        Self {
            n,
            half_bits,
            mask: (1u64 << half_bits) - 1,
            key,
        }
    }

    fn round(&self, x: u64, r: u64) -> u64 {
        // SplitMix64 finaliser as the round function.
        let mut z = x ^ self.key.wrapping_add(r.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        (z ^ (z >> 31)) & self.mask
    }

    fn permute(&self, mut x: u64) -> u64 {
        loop {
            let mut l = x >> self.half_bits;
            let mut r = x & self.mask;
            for i in 0..4 {
                let t = l ^ self.round(r, i);
                l = r;
                r = t;
            }
            x = (l << self.half_bits) | r;
            if x < self.n {
                return x;
            }
        }
    }
}

/// 2^64 as f64 (`u64::MAX as f64` rounds up to it): the first time that does not fit in
/// simulated picoseconds.
const END_OF_TIME: f64 = 18_446_744_073_709_551_616.0;

/// Open-loop arrival times of a synthetic flow.
pub struct ArrivalGen {
    /// `flow.N` and the flow's name, for the message when arrivals leave simulated time.
    key: String,
    name: String,
    kind: Arrival,
    /// Mean gap in picoseconds (during ON periods for on/off).
    gap: f64,
    on_mean: f64,
    off_mean: f64,
    /// Next arrival time, kept in f64 picoseconds so fixed gaps do not accumulate rounding.
    t: f64,
    on_end: f64,
    rng: Stream,
}

impl ArrivalGen {
    /// The arrivals `a` of flow `name`, the `index`th of the configuration (its key in
    /// messages), from `start_ps`.
    pub fn new(
        a: &ArrivalSettings,
        name: &str,
        index: usize,
        start_ps: Picoseconds,
        rng: Stream,
    ) -> Self {
        let mut g = Self {
            key: format!("flow.{index}"),
            name: name.to_string(),
            kind: a.kind,
            gap: a.gap_ps,
            on_mean: a.on_mean_ps,
            off_mean: a.off_mean_ps,
            t: start_ps as f64,
            on_end: 0.0,
            rng,
        };
        if g.kind == Arrival::Onoff {
            g.on_end = g.t + g.exp(g.on_mean);
        }
        g
    }

    fn exp(&mut self, mean: f64) -> f64 {
        // 1 - u is in (0, 1], so the logarithm is finite.
        -(1.0 - self.rng.gen::<f64>()).ln() * mean
    }

    /// The next arrival time; the first arrival is at the flow's start. An arrival at or after
    /// 2^64 ps cannot be simulated: an error naming the rate, rather than a request issued at
    /// the saturated end of time or lost.
    pub fn next_arrival(&mut self) -> Result<Picoseconds, Error> {
        if self.t.is_nan() || self.t >= END_OF_TIME {
            return Err(self.beyond_time());
        }
        let now = self.t as Picoseconds;
        match self.kind {
            Arrival::Closed => unreachable!("closed-loop flows have no arrival process"),
            Arrival::Fixed => self.t += self.gap,
            Arrival::Uniform => self.t += self.rng.gen::<f64>() * 2.0 * self.gap,
            Arrival::Exponential => self.t += self.exp(self.gap),
            Arrival::Onoff => {
                // Memoryless gaps: an arrival that would fall after the ON period ends is
                // redrawn from the start of the next ON period.
                let mut next = self.t + self.exp(self.gap);
                while next > self.on_end {
                    let on_start = self.on_end + self.exp(self.off_mean);
                    if on_start >= END_OF_TIME {
                        // No ON period starts in simulated time: the next call reports it.
                        next = on_start;
                        break;
                    }
                    self.on_end = on_start + self.exp(self.on_mean);
                    next = on_start + self.exp(self.gap);
                }
                self.t = next;
            }
        }
        Ok(now)
    }

    #[cold]
    fn beyond_time(&self) -> Error {
        let k = &self.key;
        let onoff = if self.kind == Arrival::Onoff {
            format!(", longer `{k}.on_ms` or shorter `{k}.off_ms`")
        } else {
            String::new()
        };
        Error::Config(format!(
            "flow `{}`: its next arrival would be at {:.3e} ps, beyond the end of simulated time (2^64 ps, about 213 days); raise `{k}.rate_iops`{onoff}, or end the flow sooner with `{k}.requests`, `{k}.io_bytes` or `{k}.duration_ms`",
            self.name, self.t
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::settings::SizeSettings;

    fn settings(read_fraction: f64, pattern: PatternSettings) -> SyntheticSettings {
        SyntheticSettings {
            read_fraction,
            trim_fraction: 0.0,
            sizes: SizeSettings::Uniform { min: 1, span: 15 },
            pattern,
            start_sector: 64,
            range_sectors: 1 << 20,
            align_sectors: 1,
            n_slots: (1 << 20) - 15,
            scramble: false,
            arrival: None,
        }
    }

    /// Drawing ahead hands out the requests one-at-a-time drawing gives, in order, from the
    /// first: for flows that read, write, or both, random or sequential.
    #[test]
    fn drawing_ahead_changes_no_request() {
        let seq = PatternSettings::Sequential {
            stride: 0,
            first: 0,
            random: 0.0,
        };
        for (read_fraction, pattern) in [
            (1.0, PatternSettings::Uniform),
            (0.0, PatternSettings::Uniform),
            (0.7, PatternSettings::Uniform),
            (0.0, seq.clone()),
        ] {
            let s = settings(read_fraction, pattern);
            let stream = || crate::engine::derive_stream(9, 1);
            let mut plain = SyntheticGen::drawing_ahead(&s, stream(), false);
            let mut ahead = SyntheticGen::new(&s, stream(), true);
            assert_eq!(ahead.draws_ahead, read_fraction < 1.0);
            let mut soon = Vec::new();
            for i in 0..100 {
                let want = plain.draw();
                let (got, far) = ahead.next_request();
                assert_eq!(got, want, "read fraction {read_fraction}, request {i}");
                soon.extend(far);
            }
            // Each hint is the start of the request handed out AHEAD calls later.
            let mut replay = SyntheticGen::drawing_ahead(&s, stream(), false);
            let starts: Vec<u64> = (0..100 + AHEAD)
                .map(|_| replay.draw().start_sector)
                .collect();
            if read_fraction < 1.0 {
                assert_eq!(soon, starts[AHEAD..].to_vec());
            } else {
                assert!(soon.is_empty());
            }
        }
    }

    /// Uniform writes of `size` sectors at `align`, from sector 0 of a 2^30-sector range.
    fn uniform_writes(size: u32, align: u64) -> SyntheticSettings {
        SyntheticSettings {
            sizes: SizeSettings::Fixed(size),
            start_sector: 0,
            range_sectors: 1 << 30,
            align_sectors: align,
            ..settings(0.0, PatternSettings::Uniform)
        }
    }

    /// The estimate of distinct pages written is the occupancy of uniform draws: counted
    /// over drawn requests (fixed 4 KiB writes at 4 KiB alignment on 8 KiB pages: a page
    /// each; 20,000 of them over 10,000 pages) it agrees within four standard deviations of
    /// the count (sqrt(r (e^-l - (1 + l) e^-2l)) with l = w / r: 28 pages here).
    #[test]
    fn expected_pages_written_is_the_occupancy_of_uniform_writes() {
        let (spp, pages) = (16u64, 10_000u64);
        let s = SyntheticSettings {
            sizes: SizeSettings::Fixed(8),
            start_sector: 0,
            range_sectors: pages * spp,
            align_sectors: 8,
            n_slots: pages * 2,
            ..settings(0.0, PatternSettings::Uniform)
        };
        let requests = 20_000;
        let want = expected_pages_written(&s, requests, spp).expect("uniform");
        let l = requests as f64 / pages as f64;
        assert!((want - pages as f64 * (1.0 - (-l).exp())).abs() < 1e-6);
        let mut g = SyntheticGen::new(&s, crate::engine::derive_stream(3, 1), false);
        let mut seen = std::collections::HashSet::new();
        for _ in 0..requests {
            let r = g.draw();
            assert_eq!(r.start_sector / spp, (r.start_sector + 7) / spp, "one page");
            seen.insert(r.start_sector / spp);
        }
        let sd = (pages as f64 * ((-l).exp() - (1.0 + l) * (-2.0 * l).exp())).sqrt();
        assert!(
            (seen.len() as f64 - want).abs() < 4.0 * sd,
            "{} pages written, {want:.1} expected (sd {sd:.1})",
            seen.len()
        );
    }

    /// A request counts the pages its worst-aligned start spans; reads, trims and patterns
    /// other than uniform are not estimated.
    #[test]
    fn expected_pages_written_takes_the_worst_alignment() {
        let base = uniform_writes(8, 8);
        let est = |s: &SyntheticSettings| expected_pages_written(s, 1000, 16);
        // Far fewer writes than pages: the estimate is the page writes themselves.
        let cases: [(&str, SyntheticSettings, f64); 4] = [
            (
                "8 sectors at 8 stay in a 16-sector page",
                base.clone(),
                1000.0,
            ),
            (
                "8 sectors at any sector can span two pages",
                SyntheticSettings {
                    align_sectors: 1,
                    ..base.clone()
                },
                2000.0,
            ),
            (
                "a range starting mid-page shifts every start",
                SyntheticSettings {
                    start_sector: 4,
                    ..base.clone()
                },
                2000.0,
            ),
            (
                "a fifth of the requests write",
                SyntheticSettings {
                    read_fraction: 0.7,
                    trim_fraction: 0.1,
                    ..base.clone()
                },
                200.0,
            ),
        ];
        for (what, s, w) in cases {
            let got = est(&s).expect("uniform");
            assert!((got - w).abs() < 1e-3 * w, "{what}: {got} against {w}");
        }
        let hot = SyntheticSettings {
            pattern: PatternSettings::Zipf { theta: 0.9 },
            ..base
        };
        assert_eq!(est(&hot), None);
    }

    /// Writes cover whole pages only when every size is whole pages and every start a page
    /// boundary; anything else may leave a page partly written.
    #[test]
    fn writes_whole_pages_needs_whole_sizes_at_page_boundaries() {
        let base = uniform_writes(16, 16);
        let cases: [(&str, SyntheticSettings, bool); 7] = [
            ("a page at page boundaries", base.clone(), true),
            (
                "two pages at every other page",
                SyntheticSettings {
                    sizes: SizeSettings::Fixed(32),
                    align_sectors: 32,
                    ..base.clone()
                },
                true,
            ),
            (
                "half a page",
                SyntheticSettings {
                    sizes: SizeSettings::Fixed(8),
                    ..base.clone()
                },
                false,
            ),
            (
                "a page at half-page boundaries",
                SyntheticSettings {
                    align_sectors: 8,
                    ..base.clone()
                },
                false,
            ),
            (
                "a range starting mid-page",
                SyntheticSettings {
                    start_sector: 4,
                    ..base.clone()
                },
                false,
            ),
            (
                "a list of whole and half pages",
                SyntheticSettings {
                    sizes: SizeSettings::List {
                        cum: vec![0.5, 1.0],
                        sectors: vec![16, 8],
                    },
                    ..base.clone()
                },
                false,
            ),
            (
                "sizes drawn from a range",
                SyntheticSettings {
                    sizes: SizeSettings::Uniform { min: 16, span: 16 },
                    ..base.clone()
                },
                false,
            ),
        ];
        for (what, s, whole) in cases {
            assert_eq!(writes_whole_pages(&s, 16), whole, "{what}");
        }
    }

    #[test]
    fn feistel_is_a_bijection() {
        for n in [1u64, 2, 3, 7, 100, 1000, 4097] {
            let f = Feistel::new(n, 42);
            let mut seen = vec![false; n as usize];
            for k in 0..n {
                let v = f.permute(k);
                assert!(v < n);
                assert!(!seen[v as usize], "n={n}: {v} twice");
                seen[v as usize] = true;
            }
        }
    }
}
