use super::Op;
use crate::config::{AddressPattern, FlowConfig};
use crate::engine::{derive_stream, Picoseconds, Stream, PS_PER_MS};
use rand::Rng;

/// One request as the host issues it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HostRequest {
    pub op: Op,
    pub start_sector: u64,
    pub sectors: u32,
}

/// A closed-loop synthetic flow: keeps `queue_depth` requests outstanding until its request
/// count or duration is reached.
pub struct SyntheticFlow {
    pub queue_depth: u32,
    read_fraction: f64,
    trim_fraction: f64,
    sectors: u32,
    pattern: AddressPattern,
    start_sector: u64,
    /// Request-size slots in the range (random pattern) or sectors in the range (sequential).
    slots: u64,
    range_sectors: u64,
    next_seq: u64,
    limit: u64,
    stop_ps: Picoseconds,
    rng: Stream,
    pub issued: u64,
}

impl SyntheticFlow {
    /// `capacity_bytes` is the logical capacity; the range was validated against it.
    pub fn new(f: &FlowConfig, capacity_bytes: u64, seed: u64, stream_id: u64) -> Self {
        let range = if f.range_bytes == 0 {
            capacity_bytes - f.start_bytes
        } else {
            f.range_bytes
        };
        let sectors = (f.request_bytes / 512) as u32;
        let range_sectors = range / 512;
        Self {
            queue_depth: f.queue_depth,
            read_fraction: f.read_fraction,
            trim_fraction: f.trim_fraction,
            sectors,
            pattern: f.pattern,
            start_sector: f.start_bytes / 512,
            slots: range_sectors / sectors as u64,
            range_sectors,
            next_seq: 0,
            limit: if f.requests == 0 {
                u64::MAX
            } else {
                f.requests
            },
            stop_ps: if f.duration_ms == 0.0 {
                Picoseconds::MAX
            } else {
                (f.duration_ms * PS_PER_MS as f64) as u64
            },
            rng: derive_stream(seed, stream_id),
            issued: 0,
        }
    }

    /// Whether the flow issues another request at `now`.
    #[inline]
    pub fn wants_more(&self, now: Picoseconds) -> bool {
        self.issued < self.limit && now < self.stop_ps
    }

    pub fn limit(&self) -> u64 {
        self.limit
    }

    #[inline]
    pub fn next_request(&mut self) -> HostRequest {
        self.issued += 1;
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
        let offset = match self.pattern {
            AddressPattern::Random => self.rng.gen_range(0..self.slots) * self.sectors as u64,
            AddressPattern::Sequential => {
                if self.next_seq + self.sectors as u64 > self.range_sectors {
                    self.next_seq = 0;
                }
                let o = self.next_seq;
                self.next_seq += self.sectors as u64;
                o
            }
        };
        HostRequest {
            op,
            start_sector: self.start_sector + offset,
            sectors: self.sectors,
        }
    }
}
