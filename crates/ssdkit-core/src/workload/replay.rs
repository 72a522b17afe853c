//! Trace replay policy on top of a streaming [`TraceReader`]: device filter, folding into the
//! flow's range, alignment, rebased and scaled timestamps, backwards timestamps
//! (docs/workloads.md section 3). One record is read ahead at most, so memory does not depend
//! on the trace length.

use super::synthetic::HostRequest;
use super::trace::TraceReader;
use crate::config::{Backwards, Fold, TraceFormat};
use crate::engine::Picoseconds;
use crate::error::Error;
use crate::settings::{FlowSettings, TraceSettings};
use serde_json::{json, Value};
use std::path::Path;

/// Replay counters beyond the reader's own.
#[derive(Debug, Clone, Copy, Default)]
pub struct ReplayCounters {
    pub filtered_out: u64,
    pub folded: u64,
    pub aligned: u64,
    pub backwards_clamped: u64,
}

pub struct TraceReplay {
    reader: TraceReader,
    path: String,
    key: String,
    devices: Vec<u64>,
    fold: Fold,
    /// Flow range in bytes.
    range_start: u64,
    range_len: u64,
    /// Largest end address of the trace (fold = "scale").
    span: u64,
    align: u64,
    /// log2 of the bytes per sector (`interface.sector_bytes`, a power of two): a shift, not
    /// a division, per record.
    sector_shift: u32,
    timed: bool,
    scale: f64,
    start_ps: Picoseconds,
    backwards: Backwards,
    first_ns: Option<u64>,
    prev_ns: u64,
    /// Records that passed the device filter.
    kept: u64,
    /// A few distinct device numbers of filtered-out records, to show when none is kept.
    seen_devices: Vec<u64>,
    pub counters: ReplayCounters,
}

/// Distinct device numbers remembered for the "no record kept" message.
const SEEN_DEVICES: usize = 8;

impl TraceReplay {
    /// Opens the trace of flow `index` (already validated); `capacity_bytes` is the logical
    /// capacity. With `fold = "scale"` the file is streamed once first to find its span, so it
    /// must be a regular file; otherwise it is opened and read once (a pipe works).
    /// `flushes`: fio `sync`/`datasync` lines are NVMe Flush requests (with a write cache);
    /// else they are counted as `no_data`, as before the cache existed.
    pub fn open(
        fs: &FlowSettings,
        f: &TraceSettings,
        index: usize,
        sector_bytes: u32,
        flushes: bool,
    ) -> Result<Self, Error> {
        let key = format!("flow.{index}.trace");
        let path = Path::new(&f.path);
        if f.fold == Fold::Scale {
            // Only a regular file can be read a second time: a pipe or FIFO would be empty,
            // or block, on the second open.
            if let Ok(m) = std::fs::metadata(path) {
                if !m.is_file() {
                    return Err(Error::Config(format!(
                        "key `flow.{index}.fold` = \"scale\" reads the trace twice (a first pass finds its span), but {} is not a regular file (a pipe, FIFO or device can be read once); use `flow.{index}.fold` = \"modulo\" or \"none\", or save the trace to a file",
                        f.path
                    )));
                }
            }
        }
        let open = || {
            TraceReader::open(path, f.format, f.delimited.as_ref(), f.skip_malformed)
                .map_err(|e| prefix(&key, e))
        };
        let range_len = fs.range_bytes;
        let mut span = 0;
        if f.fold == Fold::Scale {
            let mut r = open()?;
            let mut kept = false;
            let mut seen = Vec::new();
            while let Some(rec) = r.next_record()? {
                if f.devices.is_empty() || f.devices.contains(&rec.device) {
                    kept = true;
                    span = span.max(rec.offset_bytes.saturating_add(rec.bytes));
                } else {
                    remember_device(&mut seen, rec.device);
                }
            }
            if !kept {
                return Err(no_record_kept(
                    &format!("flow.{index}.devices"),
                    &f.devices,
                    &f.path,
                    r.counters().records,
                    &seen,
                ));
            }
        }
        let mut reader = open()?;
        reader.take_flushes(flushes);
        Ok(Self {
            reader,
            path: f.path.clone(),
            key,
            devices: f.devices.clone(),
            fold: f.fold,
            range_start: fs.start_bytes,
            range_len,
            span,
            align: f.align_bytes,
            sector_shift: sector_bytes.trailing_zeros(),
            timed: fs.open_loop,
            scale: f.time_scale,
            start_ps: f.start_ps,
            backwards: f.backwards,
            first_ns: None,
            prev_ns: 0,
            kept: 0,
            seen_devices: Vec::new(),
            counters: ReplayCounters::default(),
        })
    }

    fn line_error(&self, msg: String) -> Error {
        Error::Trace(format!(
            "{}:{}: {msg}: `{}`",
            self.path,
            self.reader.line_number(),
            self.reader.line_text()
        ))
    }

    /// The next request and its arrival time (0 offsets for closed replay), or None at the end.
    pub fn next_request(&mut self) -> Result<Option<(Picoseconds, HostRequest)>, Error> {
        let rec = loop {
            match self.reader.next_record()? {
                None if self.kept == 0 && !self.devices.is_empty() => {
                    return Err(self.nothing_kept());
                }
                None => return Ok(None),
                Some(r) if !self.devices.is_empty() && !self.devices.contains(&r.device) => {
                    self.counters.filtered_out += 1;
                    if self.kept == 0 {
                        remember_device(&mut self.seen_devices, r.device);
                    }
                }
                Some(r) => break r,
            }
        };
        self.kept += 1;
        if rec.op == crate::workload::Op::Flush {
            let flush = HostRequest {
                op: rec.op,
                start_sector: 0,
                sectors: 0,
            };
            return self.arrival(rec.time_ns, flush);
        }
        let mut start = rec.offset_bytes;
        let mut end = rec.offset_bytes.saturating_add(rec.bytes);
        if let Some(q) = start.checked_div(self.align) {
            let s = q * self.align;
            let e = end.div_ceil(self.align).saturating_mul(self.align);
            if (s, e) != (start, end) {
                self.counters.aligned += 1;
                start = s;
                end = e;
            }
        }
        let len = end - start;
        if len > self.range_len {
            return Err(self.line_error(format!(
                "request of {len} bytes is larger than the flow's range of {} bytes",
                self.range_len
            )));
        }
        if end > self.range_len {
            let folded = match self.fold {
                Fold::None => {
                    return Err(self.line_error(format!(
                        "request {start}..{end} is beyond the flow's range of {} bytes; set `{}` = \"modulo\" or \"scale\" to fold it in",
                        self.range_len,
                        self.key.replace(".trace", ".fold")
                    )))
                }
                Fold::Modulo => start % self.range_len,
                Fold::Scale => {
                    ((start as u128 * self.range_len as u128) / self.span.max(1) as u128) as u64
                }
            };
            // A request that would now cross the range end ends at it instead.
            start = folded.min(self.range_len - len);
            self.counters.folded += 1;
        }
        // Byte-granular traces: the request covers every sector it touches.
        let sh = self.sector_shift;
        let first_sector = start >> sh;
        let sectors = ((start + len + (1 << sh) - 1) >> sh) - first_sector;
        let sectors = u32::try_from(sectors).map_err(|_| {
            self.line_error(format!("request of {len} bytes is above the 2 TiB limit"))
        })?;
        let req = HostRequest {
            op: rec.op,
            start_sector: (self.range_start >> sh) + first_sector,
            sectors,
        };
        self.arrival(rec.time_ns, req)
    }

    /// Request `req` of a record stamped `time_ns`: when it arrives (timed replay).
    fn arrival(
        &mut self,
        time_ns: u64,
        req: HostRequest,
    ) -> Result<Option<(Picoseconds, HostRequest)>, Error> {
        if !self.timed {
            return Ok(Some((0, req)));
        }
        let mut t = time_ns;
        let first = *self.first_ns.get_or_insert(t);
        if t < self.prev_ns {
            match self.backwards {
                Backwards::Clamp => {
                    self.counters.backwards_clamped += 1;
                    t = self.prev_ns;
                }
                Backwards::Error => {
                    return Err(self.line_error(format!(
                        "timestamp goes back ({} ns after {} ns); set `{}` = \"clamp\" to issue such requests at the previous time",
                        t,
                        self.prev_ns,
                        self.key.replace(".trace", ".backwards")
                    )))
                }
            }
        }
        self.prev_ns = t;
        // A first record later than a clamped one is impossible, so t >= first here.
        let gap_ns = t.saturating_sub(first);
        let ps = if self.scale == 1.0 {
            gap_ns.checked_mul(1000)
        } else {
            let v = gap_ns as f64 * 1000.0 * self.scale;
            (v < u64::MAX as f64).then_some(v.round() as u64)
        };
        let at = ps.and_then(|p| p.checked_add(self.start_ps)).ok_or_else(|| {
            self.line_error(format!(
                "arrival {gap_ns} ns after the first record does not fit in simulated time (2^64 ps); use a smaller `{}` or `{}` = \"closed\"",
                self.key.replace(".trace", ".time_scale"),
                self.key.replace(".trace", ".replay")
            ))
        })?;
        Ok(Some((at, req)))
    }

    #[cold]
    fn nothing_kept(&self) -> Error {
        no_record_kept(
            &self.key.replace(".trace", ".devices"),
            &self.devices,
            &self.path,
            self.reader.counters().records,
            &self.seen_devices,
        )
    }

    pub fn format(&self) -> TraceFormat {
        self.reader.format()
    }

    pub fn summary(&self) -> Value {
        let r = self.reader.counters();
        let c = &self.counters;
        let mut v = json!({
            "path": self.path,
            "format": self.format(),
            "lines": r.lines,
            "records": r.records,
            "skipped_malformed": r.skipped_malformed,
            "no_data": r.no_data,
            "not_requests": r.not_requests,
            "filtered_out": c.filtered_out,
            "folded": c.folded,
            "aligned": c.aligned,
            "backwards_clamped": c.backwards_clamped,
        });
        if let Some(why) = self.reader.detection() {
            v["detection"] = json!(why);
        }
        v
    }

    /// Bytes of the trace file read so far and its size, for progress.
    pub fn input_progress(&self) -> Option<(u64, u64)> {
        self.reader.input_progress()
    }
}

fn remember_device(seen: &mut Vec<u64>, device: u64) {
    if seen.len() < SEEN_DEVICES && !seen.contains(&device) {
        seen.push(device);
    }
}

/// The `devices` filter (`key`) kept none of the `records` records of the file at `path`;
/// `seen` are some device numbers the file has.
#[cold]
fn no_record_kept(key: &str, devices: &[u64], path: &str, records: u64, seen: &[u64]) -> Error {
    let list = |v: &[u64]| {
        v.iter()
            .map(|d| d.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let seen = if seen.is_empty() {
        String::new()
    } else {
        format!("; devices in the file include {}", list(seen))
    };
    Error::Trace(format!(
        "key `{key}` = [{}] keeps no record of {path}: all {records} records are on other devices{seen}",
        list(devices)
    ))
}

/// Names the flow key in an open error (the reader's own messages name the file).
fn prefix(key: &str, e: Error) -> Error {
    match e {
        Error::Io(m) => Error::Io(format!("{key}: {m}")),
        Error::Trace(m) => Error::Trace(format!("{key}: {m}")),
        Error::Config(m) => Error::Config(format!("{key}: {m}")),
        other => other,
    }
}
