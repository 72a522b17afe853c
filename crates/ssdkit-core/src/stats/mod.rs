//! Latency and throughput statistics. Latencies go into HDR histograms (3 significant digits,
//! so every percentile is within 0.1 % of the true value); the mean, minimum and maximum are
//! kept exactly beside them.

pub mod breakdown;
pub(crate) mod completions;
pub(crate) mod report;
pub mod run_hooks;
pub(crate) mod run_marks;
pub mod steady;
pub mod timeseries;

use crate::engine::{Picoseconds, PS_PER_S};
use crate::result::{LatencyHistogram, LatencySummary, OpResult, RwResult};
use hdrhistogram::Histogram;
use std::borrow::Cow;

pub const HISTOGRAM_SIGNIFICANT_DIGITS: u8 = 3;

/// Latencies kept as recorded before the histogram is built. A histogram that covers a
/// latency in picoseconds holds about 18,000 counters (150 KB); three per flow made a flow
/// cost ~290 KB, 19 GB for the 65,535 flows allowed. A light flow keeps this many values
/// instead (256 bytes); percentiles come from a histogram built from them, so they are the
/// same as if every value had gone into one from the start.
const FEW_LATENCIES: usize = 32;

fn new_histogram() -> Histogram<u64> {
    Histogram::new(HISTOGRAM_SIGNIFICANT_DIGITS).expect("valid precision")
}

#[derive(Clone)]
enum Latencies {
    Few(Vec<Picoseconds>),
    Hist(Box<Histogram<u64>>),
}

impl Latencies {
    #[inline]
    fn record(&mut self, v: Picoseconds) {
        match self {
            Latencies::Hist(h) => h.record(v).expect("auto-resizing histogram"),
            Latencies::Few(vals) if vals.len() < FEW_LATENCIES => vals.push(v),
            Latencies::Few(_) => self.hist_mut().record(v).expect("auto-resizing histogram"),
        }
    }

    /// The histogram, built from the kept values on first use.
    fn hist_mut(&mut self) -> &mut Histogram<u64> {
        if let Latencies::Few(vals) = self {
            let mut h = new_histogram();
            for &v in vals.iter() {
                h.record(v).expect("auto-resizing histogram");
            }
            *self = Latencies::Hist(Box::new(h));
        }
        match self {
            Latencies::Hist(h) => h,
            Latencies::Few(_) => unreachable!("converted above"),
        }
    }

    fn histogram(&self) -> Cow<'_, Histogram<u64>> {
        match self {
            Latencies::Hist(h) => Cow::Borrowed(&**h),
            Latencies::Few(vals) => {
                let mut h = new_histogram();
                for &v in vals {
                    h.record(v).expect("auto-resizing histogram");
                }
                Cow::Owned(h)
            }
        }
    }

    /// Forgets every value and keeps the storage, so a recorder reused every round allocates
    /// only while it grows.
    fn reset(&mut self) {
        match self {
            Latencies::Few(vals) => vals.clear(),
            Latencies::Hist(h) => h.reset(),
        }
    }

    fn merge(&mut self, o: &Latencies) {
        match o {
            Latencies::Few(theirs) => {
                if let Latencies::Few(mine) = self {
                    if mine.len() + theirs.len() <= FEW_LATENCIES {
                        mine.extend_from_slice(theirs);
                        return;
                    }
                }
                let h = self.hist_mut();
                for &v in theirs {
                    h.record(v).expect("auto-resizing histogram");
                }
            }
            Latencies::Hist(theirs) => {
                self.hist_mut()
                    .add(&**theirs)
                    .expect("auto-resizing histogram");
            }
        }
    }
}

#[derive(Clone)]
pub struct OpStats {
    pub count: u64,
    pub bytes: u64,
    sum_ps: u128,
    min_ps: Picoseconds,
    max_ps: Picoseconds,
    lat: Latencies,
}

impl Default for OpStats {
    fn default() -> Self {
        Self {
            count: 0,
            bytes: 0,
            sum_ps: 0,
            min_ps: Picoseconds::MAX,
            max_ps: 0,
            lat: Latencies::Few(Vec::new()),
        }
    }
}

impl OpStats {
    #[inline]
    pub fn record(&mut self, latency_ps: Picoseconds, bytes: u64) {
        self.count += 1;
        self.bytes += bytes;
        self.sum_ps += latency_ps as u128;
        self.min_ps = self.min_ps.min(latency_ps);
        self.max_ps = self.max_ps.max(latency_ps);
        // Histograms auto-resize; a value of 0 cannot occur for a request that crossed a
        // modeled link, but an ideal link and a read of an unwritten page can take no time.
        self.lat.record(latency_ps.max(1));
    }

    pub fn merge(&mut self, o: &OpStats) {
        self.count += o.count;
        self.bytes += o.bytes;
        self.sum_ps += o.sum_ps;
        self.min_ps = self.min_ps.min(o.min_ps);
        self.max_ps = self.max_ps.max(o.max_ps);
        self.lat.merge(&o.lat);
    }

    /// Forgets every request, keeping the histogram's storage.
    pub fn reset(&mut self) {
        self.count = 0;
        self.bytes = 0;
        self.sum_ps = 0;
        self.min_ps = Picoseconds::MAX;
        self.max_ps = 0;
        self.lat.reset();
    }

    /// The latency quantile `q` in microseconds, by the rule of the result's percentiles;
    /// None without requests.
    pub fn quantile_us(&self, q: f64) -> Option<f64> {
        (self.count > 0).then(|| Self::quantile_in(&self.lat.histogram(), q, self))
    }

    fn quantile_in(hist: &Histogram<u64>, q: f64, s: &OpStats) -> f64 {
        // A bucket reports its upper edge: clamp to the exact extremes.
        hist.value_at_quantile(q).clamp(s.min_ps, s.max_ps) as f64 / 1e6
    }

    pub fn mean_ps(&self) -> f64 {
        if self.count == 0 {
            0.0
        } else {
            self.sum_ps as f64 / self.count as f64
        }
    }

    /// The figures of the result document; latencies in microseconds.
    pub fn summary(&self, elapsed_ps: Picoseconds) -> OpResult {
        let secs = elapsed_ps as f64 / PS_PER_S as f64;
        let us = |ps: u64| ps as f64 / 1e6;
        let hist = self.lat.histogram();
        let q = |p: f64| {
            if self.count == 0 {
                0.0
            } else {
                Self::quantile_in(&hist, p, self)
            }
        };
        let mut buckets = LatencyHistogram::default();
        if self.count > 0 {
            for v in hist.iter_recorded() {
                let upper = v.value_iterated_to();
                buckets.lower_ps.push(hist.lowest_equivalent(upper));
                buckets.upper_ps.push(upper);
                buckets.count.push(v.count_at_value());
            }
        }
        OpResult {
            count: self.count,
            bytes: self.bytes,
            iops: if secs > 0.0 {
                self.count as f64 / secs
            } else {
                0.0
            },
            bandwidth_bytes_per_s: if secs > 0.0 {
                self.bytes as f64 / secs
            } else {
                0.0
            },
            latency_us: LatencySummary {
                mean: self.mean_ps() / 1e6,
                min: if self.count == 0 {
                    0.0
                } else {
                    us(self.min_ps)
                },
                p50: q(0.50),
                p90: q(0.90),
                p99: q(0.99),
                p99_9: q(0.999),
                p99_99: q(0.9999),
                max: us(self.max_ps),
            },
            latency_histogram: buckets,
        }
    }
}

/// Reads, writes and both, for one flow or the whole device.
#[derive(Clone, Default)]
pub struct RwStats {
    pub read: OpStats,
    pub write: OpStats,
    /// TRIM (deallocate) requests; not part of "all", which counts data transfers.
    pub trim: OpStats,
    /// Flush commands (only a host program's `Device` issues them); not part of "all".
    pub flush: OpStats,
}

impl RwStats {
    /// One request of `op` with latency `lat` moving `bytes`.
    #[inline]
    pub fn record(&mut self, op: crate::workload::Op, lat: Picoseconds, bytes: u64) {
        use crate::workload::Op;
        match op {
            Op::Read => self.read.record(lat, bytes),
            Op::Write => self.write.record(lat, bytes),
            Op::Trim => self.trim.record(lat, bytes),
            Op::Flush => self.flush.record(lat, bytes),
        }
    }

    pub fn merge(&mut self, o: &RwStats) {
        self.read.merge(&o.read);
        self.write.merge(&o.write);
        self.trim.merge(&o.trim);
        self.flush.merge(&o.flush);
    }

    /// Reads and writes together: their count and mean latency in microseconds (0 without
    /// any), equal to the bit to `summary(..).all`'s, without merging the histograms.
    pub fn all_mean_us(&self) -> (u64, f64) {
        let all = OpStats {
            count: self.read.count + self.write.count,
            sum_ps: self.read.sum_ps + self.write.sum_ps,
            ..OpStats::default()
        };
        (all.count, all.mean_ps() / 1e6)
    }

    pub fn summary(&self, elapsed_ps: Picoseconds) -> RwResult {
        let mut all = self.read.clone();
        all.merge(&self.write);
        RwResult {
            read: self.read.summary(elapsed_ps),
            write: self.write.summary(elapsed_ps),
            trim: self.trim.summary(elapsed_ps),
            all: all.summary(elapsed_ps),
            // Only a host program issues flushes; batch results keep their shape.
            flush: (self.flush.count > 0).then(|| self.flush.summary(elapsed_ps)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Kept values and a histogram from the start give the same document, whatever the
    /// count and however the stats are merged.
    #[test]
    fn few_kept_values_give_the_histogram_results() {
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            1 + x % 5_000_000_000
        };
        for n in [0usize, 1, 2, 31, 32, 33, 64, 1000] {
            let vals: Vec<u64> = (0..n).map(|_| next()).collect();
            let mut s = OpStats::default();
            let mut h = new_histogram();
            for &v in &vals {
                s.record(v, 4096);
                h.record(v).unwrap();
            }
            let dense = OpStats {
                lat: Latencies::Hist(Box::new(h)),
                ..s.clone()
            };
            assert_eq!(s.summary(1_000_000), dense.summary(1_000_000), "n = {n}");
            // Merging halves (kept values into kept values, into and from histograms).
            let (a, b) = vals.split_at(n / 2);
            let mut m = OpStats::default();
            let mut other = OpStats::default();
            for &v in a {
                m.record(v, 4096);
            }
            for &v in b {
                other.record(v, 4096);
            }
            m.merge(&other);
            assert_eq!(
                m.summary(1_000_000),
                dense.summary(1_000_000),
                "merged, n = {n}"
            );
            let mut into_dense = dense.clone();
            into_dense.merge(&OpStats::default());
            assert_eq!(into_dense.summary(7), dense.summary(7));
        }
    }

    /// The documented rule (docs/results.md) applied to the exported buckets gives the
    /// summary's percentiles exactly, and the buckets hold every recorded latency.
    #[test]
    fn percentiles_follow_from_the_exported_buckets() {
        let mut x: u64 = 0x2545_F491_4F6C_DD1D;
        for n in [1u64, 7, 32, 33, 500, 20_000] {
            let mut s = OpStats::default();
            let mut vals = Vec::new();
            for _ in 0..n {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                // Latencies from 1 ns to about 50 ms, log-spread like real ones.
                let v = (1_000u64 << (x % 26)) | ((x >> 40) % 1_000);
                vals.push(v);
                s.record(v, 4096);
            }
            let r = s.summary(1);
            let h = &r.latency_histogram;
            assert_eq!(h.count.iter().sum::<u64>(), n);
            for &v in &vals {
                let i = h.upper_ps.partition_point(|&u| u < v);
                assert!(
                    h.lower_ps[i] <= v && v <= h.upper_ps[i],
                    "{v} outside its bucket"
                );
            }
            let (min, max) = (*vals.iter().min().unwrap(), *vals.iter().max().unwrap());
            let pct = |q: f64| {
                let target = ((q * n as f64).ceil() as u64).max(1);
                let mut cum = 0;
                let i = h
                    .count
                    .iter()
                    .position(|&c| {
                        cum += c;
                        cum >= target
                    })
                    .unwrap();
                h.upper_ps[i].clamp(min, max) as f64 / 1e6
            };
            let l = &r.latency_us;
            assert_eq!(
                [l.p50, l.p90, l.p99, l.p99_9, l.p99_99],
                [pct(0.5), pct(0.9), pct(0.99), pct(0.999), pct(0.9999)],
                "n = {n}"
            );
        }
    }
}
