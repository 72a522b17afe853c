//! Latency and throughput statistics. Latencies go into HDR histograms (3 significant digits,
//! so every percentile is within 0.1 % of the true value); the mean, minimum and maximum are
//! kept exactly beside them.

use crate::engine::{Picoseconds, PS_PER_S};
use hdrhistogram::Histogram;
use serde_json::{json, Value};

pub const HISTOGRAM_SIGNIFICANT_DIGITS: u8 = 3;

#[derive(Clone)]
pub struct OpStats {
    pub count: u64,
    pub bytes: u64,
    sum_ps: u128,
    min_ps: Picoseconds,
    max_ps: Picoseconds,
    hist: Histogram<u64>,
}

impl Default for OpStats {
    fn default() -> Self {
        Self {
            count: 0,
            bytes: 0,
            sum_ps: 0,
            min_ps: Picoseconds::MAX,
            max_ps: 0,
            hist: Histogram::new(HISTOGRAM_SIGNIFICANT_DIGITS).expect("valid precision"),
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
        self.hist
            .record(latency_ps.max(1))
            .expect("auto-resizing histogram");
    }

    pub fn merge(&mut self, o: &OpStats) {
        self.count += o.count;
        self.bytes += o.bytes;
        self.sum_ps += o.sum_ps;
        self.min_ps = self.min_ps.min(o.min_ps);
        self.max_ps = self.max_ps.max(o.max_ps);
        self.hist.add(&o.hist).expect("auto-resizing histogram");
    }

    pub fn mean_ps(&self) -> f64 {
        if self.count == 0 {
            0.0
        } else {
            self.sum_ps as f64 / self.count as f64
        }
    }

    /// JSON form; latencies in microseconds.
    pub fn to_json(&self, elapsed_ps: Picoseconds) -> Value {
        let secs = elapsed_ps as f64 / PS_PER_S as f64;
        let us = |ps: f64| ps / 1e6;
        let q = |p: f64| {
            if self.count == 0 {
                0.0
            } else {
                // A bucket reports its upper edge: clamp to the exact extremes.
                us(self
                    .hist
                    .value_at_quantile(p)
                    .clamp(self.min_ps, self.max_ps) as f64)
            }
        };
        json!({
            "count": self.count,
            "bytes": self.bytes,
            "iops": if secs > 0.0 { self.count as f64 / secs } else { 0.0 },
            "bandwidth_bytes_per_s": if secs > 0.0 { self.bytes as f64 / secs } else { 0.0 },
            "latency_us": {
                "mean": us(self.mean_ps()),
                "min": if self.count == 0 { 0.0 } else { us(self.min_ps as f64) },
                "p50": q(0.50),
                "p90": q(0.90),
                "p99": q(0.99),
                "p99_9": q(0.999),
                "p99_99": q(0.9999),
                "max": us(self.max_ps as f64),
            }
        })
    }
}

/// Reads, writes and both, for one flow or the whole device.
#[derive(Clone, Default)]
pub struct RwStats {
    pub read: OpStats,
    pub write: OpStats,
    /// TRIM (deallocate) requests; not part of "all", which counts data transfers.
    pub trim: OpStats,
}

impl RwStats {
    pub fn to_json(&self, elapsed_ps: Picoseconds) -> Value {
        let mut all = self.read.clone();
        all.merge(&self.write);
        json!({
            "read": self.read.to_json(elapsed_ps),
            "write": self.write.to_json(elapsed_ps),
            "trim": self.trim.to_json(elapsed_ps),
            "all": all.to_json(elapsed_ps),
        })
    }
}
