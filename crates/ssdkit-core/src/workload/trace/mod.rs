//! Block-trace readers (docs/workloads.md section 3). A reader streams one file, detects its
//! compression (gzip, zstd) and, when asked, its format, and yields one [`TraceRecord`] per
//! request line; it never holds more than a buffer of the file.
//!
//! Replay policy (time scale, filters, folding, alignment, backwards timestamps) is not here but
//! in `workload::replay`: readers only turn text into records, so each format is small and
//! fuzzable on its own.
//!
//! # Formats (columns and units)
//!
//! | format | line | time unit | address unit | size unit | op |
//! |---|---|---|---|---|---|
//! | mqsim | `time device sector sectors type` | ns | 512 B | 512 B | 0 write, 1 read |
//! | msr | `Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime` | 100 ns | B | B | Read/Write |
//! | spc | `ASU,LBA,Size,Opcode,Timestamp[,...]` | s | 512 B | B | r/w (any case) |
//! | disksim | `time device block sectors flags` | ms | 512 B | 512 B | flags bit 0: 1 read |
//! | disksim_pages | as disksim | ms | 512 B | 4 KiB | as disksim |
//! | blkparse | `maj,min cpu seq time pid D rwbs sector + sectors [proc]` | s | 512 B | 512 B | rwbs D trim, W write, R read |
//! | fio_v2 | `file action [offset length]` | none (0) | B | B | read/write/trim |
//! | fio_v3 | `time file action [offset length]` | us | B | B | read/write/trim |
//! | wiscsee | `pid D\|C op offset size time ...` | s | B | B | read/write/discard |
//! | biotracer | `sector sectors bytes flags t1 t2 t3 t4` | s (t1) | 512 B | B (bytes column) | flags bit 0: 1 write |
//! | cloudphysics | `version,time,op,size,lbn` (header line) | s | 512 B | B | hex 28 read, 2a write, 42 trim |
//! | delimited | per [`DelimitedConfig`](crate::config::DelimitedConfig) | | | | |
//!
//! `wiscsee`, `biotracer` and `cloudphysics` are built-in descriptions of the generic
//! delimited reader ([`wiscsee_config`], [`biotracer_config`], [`cloudphysics_config`]).
//! Device numbers: mqsim/disksim device column, msr DiskNumber, spc ASU, blkparse the kernel
//! dev_t `major << 20 | minor` (what blktrace records: 8,16 is 8388624), 0 otherwise.
//!
//! Lines that are not requests: blank lines and, in the built-in formats, lines whose first
//! non-blank character is `#`; blkparse non-`D` actions and summary text; WiscSee `C` lines;
//! fio headers, file actions (add/open/close/unlink) and `wait`; the CloudPhysics header.
//! Requests without data (`no_data`): blkparse dispatches whose rwbs has no R/W/D (flushes,
//! `N`) or with 0 sectors; fio sync_file_range, and sync/datasync unless the flow takes
//! flushes (with a write cache they are Flush records).
//!
//! Malformed lines (wrong field count, bad number, size 0 or negative, unknown opcode, address
//! or end beyond 2^64 bytes, time beyond 2^64 ns, line longer than 1 MiB) give an
//! `Error::Trace` reading ``<file>:<line>: <reason>: `<text>` `` or are skipped and counted
//! with `skip_malformed`. Times are exact: decimals are converted to integer nanoseconds without
//! floating point, truncating below 1 ns.
//!
//! Detection (`TraceFormat::Auto`) is described in `detect`: DiskSim traces with sizes in
//! 4 KiB pages detect as `disksim` and must be named `disksim_pages`; `delimited` is never
//! detected.

mod delimited;
mod detect;
mod formats;
mod lines;
mod num;
mod reader;
#[cfg(test)]
mod tests;

pub use delimited::{
    biotracer_config, cloudphysics_config, validate_delimited, wiscsee_config, MAX_COLUMN,
};
pub use reader::TraceReader;

/// For the fuzz targets: the one-pass fast paths of mqsim and disksim must answer exactly what
/// the general parsers answer, for any line. Panics otherwise.
#[doc(hidden)]
pub fn check_fast_paths(line: &[u8]) {
    formats::check_fast_paths(line)
}

use crate::config::TraceFormat;
use crate::workload::Op;

/// One request as a trace file states it, in plain units.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TraceRecord {
    /// Timestamp in nanoseconds as written in the file (not rebased; epoch stamps fit in u64).
    pub time_ns: u64,
    /// Device, ASU or disk number; 0 when the format has none.
    pub device: u64,
    pub op: Op,
    /// Start address in bytes.
    pub offset_bytes: u64,
    /// Length in bytes; > 0.
    pub bytes: u64,
}

/// What a reader has seen so far; reported per trace flow in the result.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TraceCounters {
    /// Lines read (including headers, comments and skipped lines).
    pub lines: u64,
    /// Records returned.
    pub records: u64,
    /// Malformed lines skipped because `skip_malformed` is on.
    pub skipped_malformed: u64,
    /// Request events that move no data (blkparse flush `N`/`F`), skipped.
    pub no_data: u64,
    /// Lines that are valid but are not requests (blkparse Q/G/C..., WiscSee C, headers,
    /// comments, blank lines).
    pub not_requests: u64,
}

/// The formats [`TraceFormat::Auto`] can pick.
pub const DETECTABLE_FORMATS: [TraceFormat; 10] = [
    TraceFormat::Mqsim,
    TraceFormat::Msr,
    TraceFormat::Spc,
    TraceFormat::Disksim,
    TraceFormat::Blkparse,
    TraceFormat::FioV2,
    TraceFormat::FioV3,
    TraceFormat::Wiscsee,
    TraceFormat::Biotracer,
    TraceFormat::Cloudphysics,
];

/// Every format name, as written in `trace_format`.
pub const FORMAT_NAMES: [&str; 13] = [
    "auto",
    "mqsim",
    "msr",
    "spc",
    "disksim",
    "disksim_pages",
    "blkparse",
    "fio_v2",
    "fio_v3",
    "wiscsee",
    "biotracer",
    "cloudphysics",
    "delimited",
];

/// The name of a format as written in `trace_format`.
pub fn format_name(f: TraceFormat) -> &'static str {
    match f {
        TraceFormat::Auto => "auto",
        TraceFormat::Mqsim => "mqsim",
        TraceFormat::Msr => "msr",
        TraceFormat::Spc => "spc",
        TraceFormat::Disksim => "disksim",
        TraceFormat::DisksimPages => "disksim_pages",
        TraceFormat::Blkparse => "blkparse",
        TraceFormat::FioV2 => "fio_v2",
        TraceFormat::FioV3 => "fio_v3",
        TraceFormat::Wiscsee => "wiscsee",
        TraceFormat::Biotracer => "biotracer",
        TraceFormat::Cloudphysics => "cloudphysics",
        TraceFormat::Delimited => "delimited",
    }
}

/// The format named `name` (as in `trace_format`), if any.
pub fn parse_format_name(name: &str) -> Option<TraceFormat> {
    [
        TraceFormat::Auto,
        TraceFormat::Mqsim,
        TraceFormat::Msr,
        TraceFormat::Spc,
        TraceFormat::Disksim,
        TraceFormat::DisksimPages,
        TraceFormat::Blkparse,
        TraceFormat::FioV2,
        TraceFormat::FioV3,
        TraceFormat::Wiscsee,
        TraceFormat::Biotracer,
        TraceFormat::Cloudphysics,
        TraceFormat::Delimited,
    ]
    .into_iter()
    .find(|f| format_name(*f) == name)
}
