//! Block-trace readers (docs/workloads.md section 3). A reader streams one file, detects its
//! compression (gzip, zstd) and, when asked, its format, and yields one [`TraceRecord`] per
//! request line; it never holds more than a buffer of the file.
//!
//! Replay policy (time scale, filters, folding, alignment, backwards timestamps) is not here but
//! in `workload::replay`: readers only turn text into records, so each format is small and
//! fuzzable on its own.

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
