//! Fixed-layout formats: mqsim, msr, spc, disksim, disksim_pages, blkparse, fio_v2, fio_v3.
//! (wiscsee, biotracer and cloudphysics are presets of the generic reader, see `delimited`.)
//!
//! Every parser takes one line without its newline and answers a [`Parsed`] or the reason the
//! line is malformed; the reader adds the file name, line number and text. Blank lines and
//! lines whose first non-blank character is `#` are counted as not requests before a parser is
//! called.
//!
//! | format | fields | units |
//! |---|---|---|
//! | mqsim | `time device sector sectors type`, whitespace | ns; 512 B sectors; type 0 = write, 1 = read |
//! | msr | `Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime` | 100 ns ticks; bytes; Type Read/Write (any case) |
//! | spc | `ASU,LBA,Size,Opcode,Timestamp[,...]` | LBA 512 B; size bytes; opcode r/R/w/W; seconds |
//! | disksim | `time device block sectors flags`, whitespace | ms; 512 B; flags bit 0 set = read |
//! | disksim_pages | as disksim, size in 4 KiB pages | |
//! | blkparse | `maj,min cpu seq time pid action rwbs sector + sectors [proc]` | s; 512 B sectors |
//! | fio_v2 | `file action [offset length]` | bytes; no time (all records at 0) |
//! | fio_v3 | `time file action [offset length]` | microseconds; bytes |

use std::borrow::Cow;

use super::num::{check_end, field_offset, field_size, field_time, field_u64, show, Reason};
use super::TraceRecord;
use crate::workload::Op;

/// What one line is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Parsed {
    Record(TraceRecord),
    /// Valid, but not a request (header, comment, blank, other blkparse action, fio file action).
    NotRequest,
    /// A request event that moves no data (blkparse flush, fio sync_file_range).
    NoData,
    /// fio `sync`/`datasync` at this time (ns): an NVMe Flush when the flow takes flushes (a
    /// write cache is configured), else counted as `no_data` like the others.
    Flush(u64),
}

pub(crate) type ParseResult = Result<Parsed, Reason>;

/// Powers of ten of nanoseconds per time unit, for `num::parse_time_ns`.
pub(crate) const EXP_NS: i32 = 0;
pub(crate) const EXP_TICKS100NS: i32 = 2;
pub(crate) const EXP_US: i32 = 3;
pub(crate) const EXP_MS: i32 = 6;
pub(crate) const EXP_S: i32 = 9;

#[inline]
pub(crate) fn is_blank(b: u8) -> bool {
    b == b' ' || b == b'\t'
}

/// Splits on runs of spaces and tabs. Stores the first `N` fields and returns how many there
/// are in all, so a caller can tell "too many" without storing them.
#[inline]
pub(crate) fn split_ws<'a, const N: usize>(line: &'a [u8], out: &mut [&'a [u8]; N]) -> usize {
    let mut n = 0;
    let mut i = 0;
    let len = line.len();
    while i < len {
        while i < len && is_blank(line[i]) {
            i += 1;
        }
        if i == len {
            break;
        }
        let s = i;
        while i < len && !is_blank(line[i]) {
            i += 1;
        }
        if n < N {
            out[n] = &line[s..i];
        }
        n += 1;
    }
    n
}

/// Removes spaces and tabs at both ends.
#[inline]
pub(crate) fn trim(mut s: &[u8]) -> &[u8] {
    while let [first, rest @ ..] = s {
        if is_blank(*first) {
            s = rest;
        } else {
            break;
        }
    }
    while let [rest @ .., last] = s {
        if is_blank(*last) {
            s = rest;
        } else {
            break;
        }
    }
    s
}

/// Splits on one delimiter byte, trimming blanks around each field; same contract as
/// [`split_ws`]. Consecutive delimiters make empty fields.
#[inline]
pub(crate) fn split_byte<'a, const N: usize>(
    line: &'a [u8],
    d: u8,
    out: &mut [&'a [u8]; N],
) -> usize {
    let mut n = 0;
    for f in line.split(|&b| b == d) {
        if n < N {
            out[n] = trim(f);
        }
        n += 1;
    }
    n
}

#[cold]
fn field_count(want: &str, n: usize) -> Reason {
    Cow::Owned(format!(
        "expected {want}, found {n} field{}",
        if n == 1 { "" } else { "s" }
    ))
}

#[cold]
fn unknown_op(v: &[u8], allowed: &str) -> Reason {
    Cow::Owned(format!("unknown opcode `{}` (expected {allowed})", show(v)))
}

#[inline]
pub(crate) fn record(
    time_ns: u64,
    device: u64,
    op: Op,
    offset_bytes: u64,
    bytes: u64,
) -> ParseResult {
    check_end(offset_bytes, bytes)?;
    Ok(Parsed::Record(TraceRecord {
        time_ns,
        device,
        op,
        offset_bytes,
        bytes,
    }))
}

/// One-pass reading of blank-separated plain numbers for the common well-formed line: each
/// byte is looked at once, where splitting then parsing would look twice. Any surprise
/// (decimal point in an integer field, sign, overflow, extra text) answers `None` and the
/// caller falls back to the general path, which gives the exact reason.
struct Fast<'a> {
    line: &'a [u8],
    i: usize,
}

impl<'a> Fast<'a> {
    #[inline(always)]
    fn skip_blanks(&mut self) {
        while self.i < self.line.len() && is_blank(self.line[self.i]) {
            self.i += 1;
        }
    }

    /// Digits up to the next blank or the end; at most 19 (cannot overflow).
    #[inline(always)]
    fn digits(&mut self) -> Option<u64> {
        self.skip_blanks();
        let start = self.i;
        let mut v: u64 = 0;
        while self.i < self.line.len() {
            let d = self.line[self.i].wrapping_sub(b'0');
            if d > 9 {
                break;
            }
            if self.i - start == 19 {
                return None;
            }
            v = v * 10 + d as u64;
            self.i += 1;
        }
        if self.i == start || (self.i < self.line.len() && !is_blank(self.line[self.i])) {
            return None;
        }
        Some(v)
    }

    /// `digits[.digits]` in units of 10^exp ns (exp >= 0), truncated below 1 ns.
    #[inline(always)]
    fn decimal(&mut self, exp: u32) -> Option<u64> {
        self.skip_blanks();
        let start = self.i;
        let mut int: u64 = 0;
        while self.i < self.line.len() {
            let d = self.line[self.i].wrapping_sub(b'0');
            if d > 9 {
                break;
            }
            if self.i - start == 19 {
                return None;
            }
            int = int * 10 + d as u64;
            self.i += 1;
        }
        if self.i == start {
            return None;
        }
        let mut frac: u64 = 0;
        let mut taken = 0;
        if self.i < self.line.len() && self.line[self.i] == b'.' {
            self.i += 1;
            while self.i < self.line.len() {
                let d = self.line[self.i].wrapping_sub(b'0');
                if d > 9 {
                    break;
                }
                if taken < exp {
                    frac = frac * 10 + d as u64;
                    taken += 1;
                }
                self.i += 1;
            }
        }
        if self.i < self.line.len() && !is_blank(self.line[self.i]) {
            return None;
        }
        let scale = 10u64.pow(exp);
        int.checked_mul(scale)?
            .checked_add(frac * 10u64.pow(exp - taken))
    }

    #[inline(always)]
    fn at_end(&mut self) -> bool {
        self.skip_blanks();
        self.i == self.line.len()
    }
}

/// The well-formed 5-number line of mqsim or disksim, in one pass; `None` sends the line to
/// the general parser.
#[inline(always)]
fn fast_five(line: &[u8], time_exp: u32) -> Option<(u64, u64, u64, u64, u64, usize)> {
    let mut f = Fast { line, i: 0 };
    let t = if time_exp == 0 {
        f.digits()?
    } else {
        f.decimal(time_exp)?
    };
    let dev = f.digits()?;
    let addr = f.digits()?;
    let size = f.digits()?;
    f.skip_blanks();
    let op_start = f.i;
    let op = f.digits()?;
    let op_len = f.i - op_start;
    if !f.at_end() {
        return None;
    }
    Some((t, dev, addr, size, op, op_len))
}

/// MQSim / SSDsim ASCII: `arrival_ns device start_sector size_sectors type(0=W,1=R)`.
#[inline]
pub(crate) fn parse_mqsim(line: &[u8]) -> ParseResult {
    if let Some((t, dev, sector, sectors, ty, ty_len)) = fast_five(line, 0) {
        // The type must be the text "0" or "1", as in the general parser ("01" is refused).
        if let (Some(offset), Some(bytes), true, true) = (
            sector.checked_mul(512),
            sectors.checked_mul(512),
            sectors > 0,
            ty <= 1 && ty_len == 1,
        ) {
            if offset.checked_add(bytes).is_some() {
                let op = if ty == 1 { Op::Read } else { Op::Write };
                return Ok(Parsed::Record(TraceRecord {
                    time_ns: t,
                    device: dev,
                    op,
                    offset_bytes: offset,
                    bytes,
                }));
            }
        }
    }
    parse_mqsim_general(line)
}

#[cold]
fn parse_mqsim_general(line: &[u8]) -> ParseResult {
    let mut f: [&[u8]; 5] = [&[]; 5];
    let n = split_ws(line, &mut f);
    if n != 5 {
        return Err(field_count(
            "5 fields `time_ns device sector sectors type`",
            n,
        ));
    }
    let op = match f[4] {
        b"0" => Op::Write,
        b"1" => Op::Read,
        v => return Err(unknown_op(v, "0 = write or 1 = read")),
    };
    let time = field_time(f[0], EXP_NS, "time")?;
    let device = field_u64(f[1], "device")?;
    let offset = field_offset(f[2], 512, "start sector")?;
    let bytes = field_size(f[3], 512, "size")?;
    record(time, device, op, offset, bytes)
}

/// DiskSim ASCII: `time_ms device block size flags`; `size_unit` is 512 (sectors) or 4096
/// (disksim_pages). Flags bit 0 set = read, as in DiskSim's `DISKSIM_READ`.
#[inline]
pub(crate) fn parse_disksim(line: &[u8], size_unit: u64) -> ParseResult {
    if let Some((t, dev, block, size, flags, _)) = fast_five(line, EXP_MS as u32) {
        if let (Some(offset), Some(bytes), true) = (
            block.checked_mul(512),
            size.checked_mul(size_unit),
            size > 0,
        ) {
            if offset.checked_add(bytes).is_some() {
                let op = if flags & 1 == 1 { Op::Read } else { Op::Write };
                return Ok(Parsed::Record(TraceRecord {
                    time_ns: t,
                    device: dev,
                    op,
                    offset_bytes: offset,
                    bytes,
                }));
            }
        }
    }
    parse_disksim_general(line, size_unit)
}

#[cold]
fn parse_disksim_general(line: &[u8], size_unit: u64) -> ParseResult {
    let mut f: [&[u8]; 5] = [&[]; 5];
    let n = split_ws(line, &mut f);
    if n != 5 {
        return Err(field_count("5 fields `time_ms device block size flags`", n));
    }
    let flags = field_u64(f[4], "flags")?;
    let op = if flags & 1 == 1 { Op::Read } else { Op::Write };
    let time = field_time(f[0], EXP_MS, "time")?;
    let device = field_u64(f[1], "device")?;
    let offset = field_offset(f[2], 512, "block")?;
    let bytes = field_size(f[3], size_unit, "size")?;
    record(time, device, op, offset, bytes)
}

/// SPC / UMass: `ASU,LBA,Size,Opcode,Timestamp[,optional fields]` (the SPC trace format allows
/// extra fields after the timestamp).
pub(crate) fn parse_spc(line: &[u8]) -> ParseResult {
    let mut f: [&[u8]; 5] = [&[]; 5];
    let n = split_byte(line, b',', &mut f);
    if n < 5 {
        return Err(field_count(
            "at least 5 comma-separated fields `ASU,LBA,size,opcode,time`",
            n,
        ));
    }
    let op = match f[3] {
        b"r" | b"R" => Op::Read,
        b"w" | b"W" => Op::Write,
        v => return Err(unknown_op(v, "r or w")),
    };
    let device = field_u64(f[0], "ASU")?;
    let offset = field_offset(f[1], 512, "LBA")?;
    let bytes = field_size(f[2], 1, "size")?;
    let time = field_time(f[4], EXP_S, "timestamp")?;
    record(time, device, op, offset, bytes)
}

/// MSR Cambridge: `Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime`, timestamps
/// in Windows filetime (100 ns ticks).
pub(crate) fn parse_msr(line: &[u8]) -> ParseResult {
    let mut f: [&[u8]; 7] = [&[]; 7];
    let n = split_byte(line, b',', &mut f);
    if n != 7 {
        return Err(field_count(
            "7 comma-separated fields `Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime`",
            n,
        ));
    }
    let op = if f[3].eq_ignore_ascii_case(b"read") {
        Op::Read
    } else if f[3].eq_ignore_ascii_case(b"write") {
        Op::Write
    } else {
        return Err(unknown_op(f[3], "Read or Write"));
    };
    let time = field_time(f[0], EXP_TICKS100NS, "timestamp")?;
    let device = field_u64(f[2], "disk number")?;
    let offset = field_offset(f[4], 1, "offset")?;
    let bytes = field_size(f[5], 1, "size")?;
    record(time, device, op, offset, bytes)
}

/// `maj,min` as the kernel's dev_t (major << 20 | minor), which is what blktrace records.
fn blk_device(s: &[u8]) -> Option<u64> {
    let c = s.iter().position(|&b| b == b',')?;
    let maj = super::num::parse_u64(&s[..c])?;
    let min = super::num::parse_u64(&s[c + 1..])?;
    if maj >= 1 << 12 || min >= 1 << 20 {
        return None;
    }
    Some(maj << 20 | min)
}

/// True when the first field looks like blkparse's `maj,min`.
pub(crate) fn is_blk_device(s: &[u8]) -> bool {
    match s.iter().position(|&b| b == b',') {
        Some(c) => {
            c > 0
                && c + 1 < s.len()
                && s[..c].iter().all(u8::is_ascii_digit)
                && s[c + 1..].iter().all(u8::is_ascii_digit)
        }
        None => false,
    }
}

/// blkparse default output. Only dispatch (`D`) events are requests; lines that are not
/// events (per-CPU and total summaries) and other actions are not requests.
pub(crate) fn parse_blkparse(line: &[u8]) -> ParseResult {
    let mut f: [&[u8]; 10] = [&[]; 10];
    let n = split_ws(line, &mut f);
    if n == 0 || !is_blk_device(f[0]) {
        // "CPU0 (8,16):", "Total (8,16):", " Reads Queued: ...", "Throughput ..." etc.
        return Ok(Parsed::NotRequest);
    }
    if n < 7 {
        return Err(field_count(
            "a blkparse event `maj,min cpu seq time pid action rwbs ...`",
            n,
        ));
    }
    if f[5] != b"D" {
        return Ok(Parsed::NotRequest);
    }
    // rwbs: leading F = preflush, D discard, W write, R read, N no data, then F (FUA),
    // A (readahead), S (sync), M (metadata), B (barrier, old kernels), E (secure erase).
    let mut discard = false;
    let mut write = false;
    let mut read = false;
    for &b in f[6] {
        match b {
            b'D' => discard = true,
            b'W' => write = true,
            b'R' => read = true,
            b'F' | b'N' | b'A' | b'S' | b'M' | b'B' | b'E' => {}
            _ => return Err(Cow::Owned(format!("unknown rwbs `{}`", show(f[6])))),
        }
    }
    let op = if discard {
        Op::Trim
    } else if write {
        Op::Write
    } else if read {
        Op::Read
    } else {
        // Flush-only or `N` (e.g. `D N 0 (00 ..)`): a dispatch that moves no data.
        return Ok(Parsed::NoData);
    };
    if n >= 10 && f[8] == b"+" {
        let device = blk_device(f[0])
            .ok_or_else(|| Cow::Owned(format!("device `{}` is not a valid maj,min", show(f[0]))))?;
        let time = field_time(f[3], EXP_S, "time")?;
        let offset = field_offset(f[7], 512, "sector")?;
        if f[9] == b"0" {
            return Ok(Parsed::NoData);
        }
        let bytes = field_size(f[9], 512, "sectors")?;
        return record(time, device, op, offset, bytes);
    }
    if n >= 9 && f[8].first() == Some(&b'(') {
        // Passthrough (SCSI command bytes in parentheses), no block range.
        return Ok(Parsed::NoData);
    }
    Err(Cow::Borrowed("dispatch event without `sector + sectors`"))
}

/// fio iolog version 2 (`v3 = false`) or 3. v2 has no timestamps, so every record is at 0;
/// v3 stamps are microseconds since the start of the job (fio's iolog.c writes
/// `utime_since_now(&td->io_log_start_time)` and replays the gaps as microseconds).
pub(crate) fn parse_fio(line: &[u8], v3: bool) -> ParseResult {
    let t = trim(line);
    if let Some(rest) = t.strip_prefix(b"fio version ") {
        return match (rest, v3) {
            (b"2 iolog", false) | (b"3 iolog", true) => Ok(Parsed::NotRequest),
            (b"2 iolog", true) => Err(Cow::Borrowed(
                "this is a fio version 2 iolog; use trace_format = \"fio_v2\"",
            )),
            (b"3 iolog", false) => Err(Cow::Borrowed(
                "this is a fio version 3 iolog; use trace_format = \"fio_v3\"",
            )),
            _ => Err(Cow::Borrowed(
                "unsupported fio iolog version (only 2 and 3 are read)",
            )),
        };
    }
    let mut f: [&[u8]; 5] = [&[]; 5];
    let n = split_ws(line, &mut f);
    // v3 prefixes every line with the timestamp; after it the layout is v2's.
    let (time, rest): (u64, &[&[u8]]) = if v3 {
        if n != 3 && n != 5 {
            return Err(field_count(
                "`time file action` or `time file action offset length`",
                n,
            ));
        }
        (field_time(f[0], EXP_US, "time")?, &f[1..n])
    } else {
        if n != 2 && n != 4 {
            return Err(field_count(
                "`file action` or `file action offset length`",
                n,
            ));
        }
        (0, &f[..n])
    };
    let act = rest[1];
    if rest.len() == 2 {
        return match act {
            b"add" | b"open" | b"close" | b"unlink" => Ok(Parsed::NotRequest),
            v => Err(Cow::Owned(format!(
                "unknown file action `{}` (expected add, open, close or unlink)",
                show(v)
            ))),
        };
    }
    let op = match act {
        b"read" => Op::Read,
        b"write" => Op::Write,
        b"trim" => Op::Trim,
        b"sync" | b"datasync" => return Ok(Parsed::Flush(time)),
        b"sync_file_range" => return Ok(Parsed::NoData),
        // v2: a pause; v3: ignored by fio itself. Either way no request.
        b"wait" => return Ok(Parsed::NotRequest),
        v => {
            return Err(unknown_op(
                v,
                "read, write, trim, sync, datasync, sync_file_range or wait",
            ))
        }
    };
    let offset = field_offset(rest[2], 1, "offset")?;
    let bytes = field_size(rest[3], 1, "length")?;
    record(time, 0, op, offset, bytes)
}

/// See `trace::check_fast_paths`.
pub(crate) fn check_fast_paths(line: &[u8]) {
    assert_eq!(
        parse_mqsim(line),
        parse_mqsim_general(line),
        "mqsim fast path differs on {line:?}"
    );
    for unit in [512, 4096] {
        assert_eq!(
            parse_disksim(line, unit),
            parse_disksim_general(line, unit),
            "disksim fast path differs on {line:?}"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn fast_paths_agree_with_general_parsers(line in "[0-9 .\t+e-]{0,40}") {
            check_fast_paths(line.as_bytes());
        }

        #[test]
        fn fast_paths_agree_on_near_valid_lines(
            t in "[0-9]{1,21}(\\.[0-9]{0,12})?",
            rest in proptest::collection::vec("[0-9]{1,21}|-1|x|1\\.0", 4),
        ) {
            let line = format!("{t} {}", rest.join(" "));
            check_fast_paths(line.as_bytes());
        }
    }

    use super::record as rec;

    #[test]
    fn splitting() {
        let mut f: [&[u8]; 3] = [&[]; 3];
        assert_eq!(split_ws(b"  a\t\tbb  c d ", &mut f), 4);
        assert_eq!(f, [&b"a"[..], b"bb", b"c"]);
        assert_eq!(split_ws(b"   ", &mut f), 0);
        assert_eq!(split_byte(b" 1 ,, x", b',', &mut f), 3);
        assert_eq!(f, [&b"1"[..], b"", b"x"]);
        assert_eq!(trim(b" \t "), b"");
    }

    #[test]
    fn mqsim_columns() {
        // tpcc-small.trace line 1: 938513000 ns, device 4, sector 264719034, 16 sectors, write.
        assert_eq!(
            parse_mqsim(b"938513000 4 264719034 16 0"),
            rec(938513000, 4, Op::Write, 264719034 * 512, 8192)
        );
        // wsrch-small.trace line 1 = WebSearch1 "0,657728,8192,R,0.011413".
        assert_eq!(
            parse_mqsim(b"11413000 0 657728 16 1"),
            rec(11413000, 0, Op::Read, 657728 * 512, 8192)
        );
        assert_eq!(
            parse_mqsim(b"1\t2\t3\t4\t1"),
            rec(1, 2, Op::Read, 1536, 2048)
        );
        assert_eq!(
            parse_mqsim(b"1 2 3 4 2").unwrap_err(),
            "unknown opcode `2` (expected 0 = write or 1 = read)"
        );
        assert_eq!(parse_mqsim(b"1 2 3 0 1").unwrap_err(), "size is 0");
        assert_eq!(
            parse_mqsim(b"1 2 3 -4 1").unwrap_err(),
            "size `-4` is negative"
        );
        assert_eq!(
            parse_mqsim(b"1 2 3 4").unwrap_err(),
            "expected 5 fields `time_ns device sector sectors type`, found 4 fields"
        );
        assert!(parse_mqsim(b"1 2 3 4 1 6").is_err());
        assert!(
            parse_mqsim(b"1 2 36028797018963968 1 1").is_err(),
            "sector x 512 overflows"
        );
        assert!(
            parse_mqsim(b"1 2 36028797018963967 1 1").is_err(),
            "end overflows"
        );
    }

    #[test]
    fn disksim_columns() {
        // ssd-iozone-aligned2-100K.trace line 1.
        assert_eq!(
            parse_disksim(b"5265.313 0 6357144 8 0", 512),
            rec(5265313000, 0, Op::Write, 6357144 * 512, 4096)
        );
        // ascii.trace line 1 (tab separated).
        assert_eq!(
            parse_disksim(b"13.191135\t30\t0\t5\t1", 512),
            rec(13191135, 30, Op::Read, 0, 2560)
        );
        // fin1.trace line 1: sizes in 4 KiB pages.
        assert_eq!(
            parse_disksim(b"26.214000\t0\t303574\t1\t0", 4096),
            rec(26214000, 0, Op::Write, 303574 * 512, 4096)
        );
        // web1.trace line 1 = WebSearch1 "0,657728,8192,R,0.011413".
        assert_eq!(
            parse_disksim(b"11.413000\t0\t657728\t2\t1", 4096),
            rec(11413000, 0, Op::Read, 657728 * 512, 8192)
        );
        assert_eq!(
            parse_disksim(b"1 0 0 8 3", 512),
            rec(1000000, 0, Op::Read, 0, 4096),
            "bit 0 decides"
        );
        assert_eq!(
            parse_disksim(b"1 0 0 8 2", 512),
            rec(1000000, 0, Op::Write, 0, 4096)
        );
        assert_eq!(
            parse_disksim(b"1 0 0 8 x", 512).unwrap_err(),
            "flags `x` is not a non-negative integer"
        );
        assert_eq!(
            parse_disksim(b"-1 0 0 8 1", 512).unwrap_err(),
            "time `-1` is negative"
        );
    }

    #[test]
    fn spc_and_msr_columns() {
        // Financial1.spc record 1 and WebSearch1.spc record 1 (SOURCES.txt).
        assert_eq!(
            parse_spc(b"0,303567,3584,w,0.000000"),
            rec(0, 0, Op::Write, 303567 * 512, 3584)
        );
        assert_eq!(
            parse_spc(b"0,657728,8192,R,0.011413"),
            rec(11413000, 0, Op::Read, 657728 * 512, 8192)
        );
        assert_eq!(
            parse_spc(b"2, 10, 512, r, 1.5, extra"),
            rec(1500000000, 2, Op::Read, 5120, 512)
        );
        assert_eq!(
            parse_spc(b"0,1,512,x,0").unwrap_err(),
            "unknown opcode `x` (expected r or w)"
        );
        assert!(parse_spc(b"0,1,512,r").is_err());
        assert_eq!(
            parse_msr(b"128166372003061629,wdev,0,Read,3154128896,4096,1331"),
            rec(12816637200306162900, 0, Op::Read, 3154128896, 4096)
        );
        assert_eq!(
            parse_msr(b"128166372016382155,hm,1,write,7014609920,24576,41286"),
            rec(12816637201638215500, 1, Op::Write, 7014609920, 24576)
        );
        assert_eq!(
            parse_msr(b"1,h,0,Flush,0,4096,1").unwrap_err(),
            "unknown opcode `Flush` (expected Read or Write)"
        );
        assert!(parse_msr(b"1,h,0,Read,0,0,1").is_err());
        assert!(parse_msr(b"1,h,0,Read,0,4096").is_err());
        assert!(
            parse_msr(b"999999999999999999,h,0,Read,0,4096,1").is_err(),
            "x100 overflows u64"
        );
    }

    #[test]
    fn blkparse_events() {
        let d = 8 << 20 | 16;
        // blktrace.txt (apress) dispatches.
        assert_eq!(
            parse_blkparse(
                b"  8,16   5        6     0.000031865 18615  D   R 1444645666 + 256 [java]"
            ),
            rec(31865, d, Op::Read, 1444645666 * 512, 256 * 512)
        );
        assert_eq!(
            parse_blkparse(b"259,2    0        5     0.000012345  4020  D  RS 282624 + 8 [java]"),
            rec(12345, 259 << 20 | 2, Op::Read, 282624 * 512, 4096)
        );
        assert_eq!(
            parse_blkparse(b"8,33 8 1 0.5 1 D WS 100 + 8 [x]"),
            rec(500000000, 8 << 20 | 33, Op::Write, 51200, 4096)
        );
        assert_eq!(
            parse_blkparse(b"8,33 8 1 0.5 1 D DS 100 + 8 [x]"),
            rec(500000000, 8 << 20 | 33, Op::Trim, 51200, 4096)
        );
        assert_eq!(
            parse_blkparse(b"8,33 8 1 0.5 1 D FWFS 100 + 8 [x]"),
            rec(500000000, 8 << 20 | 33, Op::Write, 51200, 4096)
        );
        // No data: WiscSee blkparse-output.txt line 1, a flush, a zero-length dispatch.
        assert_eq!(
            parse_blkparse(
                b"  8,33   4        1     0.000000000  3922  D   N 0 (00 ..) [kworker/u65:0]"
            ),
            Ok(Parsed::NoData)
        );
        assert_eq!(
            parse_blkparse(b"8,0 1 2 0.1 5 D FN [kworker]"),
            Ok(Parsed::NoData)
        );
        assert_eq!(
            parse_blkparse(b"8,0 1 2 0.1 5 D W 100 + 0 [x]"),
            Ok(Parsed::NoData)
        );
        assert_eq!(
            parse_blkparse(b"8,0 1 2 0.1 5 D R 0 (12 34) [x]"),
            Ok(Parsed::NoData)
        );
        // Other actions, CFQ messages and summaries.
        assert_eq!(parse_blkparse(b"  8,16   5        1     0.000000000 18615  A   R 1444645666 + 256 <- (8,17) 1444645632"), Ok(Parsed::NotRequest));
        assert_eq!(
            parse_blkparse(
                b"  8,16   5        0     0.000012990     0  m   N cfq18615S / insert_request"
            ),
            Ok(Parsed::NotRequest)
        );
        assert_eq!(
            parse_blkparse(b"  8,16   5      324     3.832956675     0  C  WS 1950885322 [0]"),
            Ok(Parsed::NotRequest)
        );
        assert_eq!(parse_blkparse(b"CPU0 (8,16):"), Ok(Parsed::NotRequest));
        assert_eq!(parse_blkparse(b"Total (8,33):"), Ok(Parsed::NotRequest));
        assert_eq!(parse_blkparse(b" Reads Queued:           0,        0KiB\t Writes Queued:           0,        0KiB"), Ok(Parsed::NotRequest));
        assert_eq!(
            parse_blkparse(b"Events (8,33): 677 entries"),
            Ok(Parsed::NotRequest)
        );
        // Malformed.
        assert_eq!(
            parse_blkparse(b"8,0 1 2 0.1 5 D X 1 + 8").unwrap_err(),
            "unknown rwbs `X`"
        );
        assert_eq!(
            parse_blkparse(b"8,0 1 2 0.1 5 D W 1 [x]").unwrap_err(),
            "dispatch event without `sector + sectors`"
        );
        assert!(parse_blkparse(b"8,0 1 2 0.1 5").is_err());
        assert!(parse_blkparse(b"8,0 1 2 x 5 D W 1 + 8").is_err());
        assert!(
            parse_blkparse(b"4096,0 1 2 0.1 5 D W 1 + 8").is_err(),
            "major beyond 12 bits"
        );
    }

    #[test]
    fn fio_iologs() {
        assert_eq!(
            parse_fio(b"fio version 2 iolog", false),
            Ok(Parsed::NotRequest)
        );
        assert!(parse_fio(b"fio version 3 iolog", false).is_err());
        assert_eq!(parse_fio(b"/dev/sdb add", false), Ok(Parsed::NotRequest));
        assert_eq!(parse_fio(b"/dev/sdb open", false), Ok(Parsed::NotRequest));
        assert_eq!(
            parse_fio(b"/dev/sdb write 8192 4096", false),
            rec(0, 0, Op::Write, 8192, 4096)
        );
        assert_eq!(
            parse_fio(b"/dev/sdb read 0 512", false),
            rec(0, 0, Op::Read, 0, 512)
        );
        assert_eq!(
            parse_fio(b"/dev/sdb trim 4096 4096", false),
            rec(0, 0, Op::Trim, 4096, 4096)
        );
        assert_eq!(parse_fio(b"/dev/sdb sync 0 0", false), Ok(Parsed::Flush(0)));
        assert_eq!(
            parse_fio(b"/dev/sdb datasync 0 0", false),
            Ok(Parsed::Flush(0))
        );
        assert_eq!(
            parse_fio(b"/dev/sdb sync_file_range 0 4096", false),
            Ok(Parsed::NoData)
        );
        assert_eq!(
            parse_fio(b"7 /dev/sdb sync 0 0", true),
            Ok(Parsed::Flush(7000))
        );
        assert_eq!(
            parse_fio(b"/dev/sdb wait 1000 0", false),
            Ok(Parsed::NotRequest)
        );
        assert_eq!(parse_fio(b"/dev/sdb close", false), Ok(Parsed::NotRequest));
        assert!(parse_fio(b"/dev/sdb write 0 0", false).is_err());
        assert!(parse_fio(b"/dev/sdb frob 0 4096", false).is_err());
        assert!(parse_fio(b"/dev/sdb frob", false).is_err());
        assert!(parse_fio(b"/dev/sdb write 0", false).is_err());

        assert_eq!(
            parse_fio(b"fio version 3 iolog", true),
            Ok(Parsed::NotRequest)
        );
        assert_eq!(parse_fio(b"2 Nvme1n1 add", true), Ok(Parsed::NotRequest));
        assert_eq!(
            parse_fio(b"878 Nvme1n1 write 0 16384", true),
            rec(878_000, 0, Op::Write, 0, 16384)
        );
        assert_eq!(
            parse_fio(b"10001677 Nvme1n1 read 4096 4096", true),
            rec(10_001_677_000, 0, Op::Read, 4096, 4096)
        );
        assert_eq!(
            parse_fio(b"5 f trim 0 8192", true),
            rec(5000, 0, Op::Trim, 0, 8192)
        );
        assert_eq!(parse_fio(b"5 f wait 0 0", true), Ok(Parsed::NotRequest));
        assert!(parse_fio(b"f write 0 4096", true).is_err());
        assert!(parse_fio(b"x f write 0 4096", true).is_err());
        assert!(parse_fio(b"fio version 9 iolog", true).is_err());
    }
}
