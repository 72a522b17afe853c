//! The generic delimited-text reader (`[flow.delimited]`, docs/workloads.md) and the built-in
//! formats that are only a fixed description of it:
//!
//! * `wiscsee`: WiscSee's preprocessed blkparse events, whitespace separated:
//!   `pid action op offset_B size_B time_s pre_wait_s sync`. Only `D` (dispatch) lines are
//!   requests (`C` completions are not); op is `read`, `write` or `discard` (TRIM).
//! * `biotracer`: Android BIOtracer, fields separated by runs of tabs:
//!   `start_sector sectors bytes flags t1 t2 t3 t4`, flags bit 0 set = write, times in seconds;
//!   the request time is t1 and its size the bytes column.
//! * `cloudphysics`: CloudPhysics vscsi CSV with a header line `version,time,op,size,lbn`;
//!   time in the trace's own unit, taken as seconds; op the SCSI opcode in hex (28/08/88/a8 read,
//!   2a/0a/8a/aa write, 42 UNMAP = TRIM); size bytes; lbn 512 B blocks.
//!
//! Only the columns a description names are split and parsed, so extra columns (WiscSee's
//! latency in exponent notation, BIOtracer's t2..t4) cost nothing and are never checked.

use std::borrow::Cow;

use super::formats::{
    is_blank, trim, ParseResult, Parsed, EXP_MS, EXP_NS, EXP_S, EXP_TICKS100NS, EXP_US,
};
use super::num::{check_end, field_offset, field_size, field_time, field_u64, show};
use super::TraceRecord;
use crate::config::{DelimitedConfig, TimeUnit};
use crate::workload::Op;

// The checks of a description live with the configuration, whose validation runs them.
pub use crate::config::{validate_delimited, MAX_COLUMN};

pub(crate) fn time_unit_exp(u: TimeUnit) -> i32 {
    match u {
        TimeUnit::Ps => -3,
        TimeUnit::Ns => EXP_NS,
        TimeUnit::Us => EXP_US,
        TimeUnit::Ms => EXP_MS,
        TimeUnit::S => EXP_S,
        TimeUnit::Ticks100ns => EXP_TICKS100NS,
    }
}

/// The WiscSee built-in description.
pub fn wiscsee_config() -> DelimitedConfig {
    DelimitedConfig {
        delimiter: "whitespace".into(),
        time_column: 6,
        time_unit: TimeUnit::S,
        offset_column: 4,
        offset_unit_bytes: 1,
        size_column: 5,
        size_unit_bytes: 1,
        op_column: 3,
        read_values: vec!["read".into()],
        write_values: vec!["write".into()],
        trim_values: vec!["discard".into()],
        event_column: 2,
        event_values: vec!["D".into()],
        ..DelimitedConfig::default()
    }
}

/// The BIOtracer built-in description ("runs of tabs" is covered by "whitespace").
pub fn biotracer_config() -> DelimitedConfig {
    DelimitedConfig {
        delimiter: "whitespace".into(),
        time_column: 5,
        time_unit: TimeUnit::S,
        offset_column: 1,
        offset_unit_bytes: 512,
        size_column: 3,
        size_unit_bytes: 1,
        op_column: 4,
        op_write_bit: 0,
        ..DelimitedConfig::default()
    }
}

/// The CloudPhysics vscsi CSV built-in description.
pub fn cloudphysics_config() -> DelimitedConfig {
    let v = |s: &[&str]| s.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    DelimitedConfig {
        delimiter: ",".into(),
        header_lines: 1,
        time_column: 2,
        time_unit: TimeUnit::S,
        offset_column: 5,
        offset_unit_bytes: 512,
        size_column: 4,
        size_unit_bytes: 1,
        op_column: 3,
        // READ/WRITE(10) are what the traces hold; (6), (12), (16) variants mean the same,
        // written with and without leading zero and in either case.
        read_values: v(&["28", "08", "8", "a8", "88", "A8"]),
        write_values: v(&["2a", "2A", "0a", "0A", "a", "A", "aa", "AA", "8a", "8A"]),
        trim_values: v(&["42"]),
        ..DelimitedConfig::default()
    }
}

enum Delim {
    Whitespace,
    Byte(u8),
}

/// A validated description, compiled for the per-line loop.
pub(crate) struct DelimSpec {
    delim: Delim,
    header_lines: u64,
    comment: Vec<u8>,
    time_col: usize,
    time_exp: i32,
    offset_col: usize,
    offset_unit: u64,
    size_col: usize,
    size_unit: u64,
    op_col: usize,
    read_values: Vec<Vec<u8>>,
    write_values: Vec<Vec<u8>>,
    trim_values: Vec<Vec<u8>>,
    op_write_bit: Option<u32>,
    device_col: usize,
    event_col: usize,
    event_values: Vec<Vec<u8>>,
    /// Highest column used: splitting stops there.
    max_col: usize,
    /// Reused field ranges of the current line.
    fields: Vec<(usize, usize)>,
    names: Names,
}

/// Column labels for messages, built once.
struct Names {
    time: String,
    offset: String,
    size: String,
    op: String,
    device: String,
}

impl DelimSpec {
    /// Compiles `d`; it must have passed [`validate_delimited`].
    pub(crate) fn new(d: &DelimitedConfig) -> Self {
        let bytes = |v: &Vec<String>| v.iter().map(|s| s.as_bytes().to_vec()).collect::<Vec<_>>();
        let col = |c: u32| c as usize;
        let max_col = [
            d.time_column,
            d.offset_column,
            d.size_column,
            d.op_column,
            d.device_column,
            d.event_column,
        ]
        .into_iter()
        .max()
        .unwrap_or(0) as usize;
        let name = |c: u32, what: &str| format!("column {c} ({what})");
        Self {
            delim: if d.delimiter == "whitespace" {
                Delim::Whitespace
            } else {
                Delim::Byte(d.delimiter.as_bytes().first().copied().unwrap_or(b','))
            },
            header_lines: d.header_lines,
            comment: d.comment.as_bytes().to_vec(),
            time_col: col(d.time_column),
            time_exp: time_unit_exp(d.time_unit),
            offset_col: col(d.offset_column),
            offset_unit: d.offset_unit_bytes.max(1),
            size_col: col(d.size_column),
            size_unit: d.size_unit_bytes.max(1),
            op_col: col(d.op_column),
            read_values: bytes(&d.read_values),
            write_values: bytes(&d.write_values),
            trim_values: bytes(&d.trim_values),
            op_write_bit: u32::try_from(d.op_write_bit).ok().filter(|b| *b < 64),
            device_col: col(d.device_column),
            event_col: col(d.event_column),
            event_values: bytes(&d.event_values),
            max_col,
            fields: Vec::with_capacity(max_col),
            names: Names {
                time: name(d.time_column, "time"),
                offset: name(d.offset_column, "offset"),
                size: name(d.size_column, "size"),
                op: name(d.op_column, "op"),
                device: name(d.device_column, "device"),
            },
        }
    }

    /// Splits `line` into at most `max_col` fields; returns how many were found.
    #[inline]
    fn split(&mut self, line: &[u8]) -> usize {
        self.fields.clear();
        let max = self.max_col;
        match self.delim {
            Delim::Whitespace => {
                let mut i = 0;
                let len = line.len();
                while i < len && self.fields.len() < max {
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
                    self.fields.push((s, i));
                }
            }
            Delim::Byte(d) => {
                let mut s = 0;
                while self.fields.len() < max {
                    match memchr::memchr(d, &line[s..]) {
                        Some(k) => {
                            self.fields.push((s, s + k));
                            s += k + 1;
                        }
                        None => {
                            self.fields.push((s, line.len()));
                            break;
                        }
                    }
                }
            }
        }
        self.fields.len()
    }

    /// Field `col` (1-based, <= max_col, present), trimmed.
    #[inline]
    fn field<'a>(&self, line: &'a [u8], col: usize) -> &'a [u8] {
        let (s, e) = self.fields[col - 1];
        trim(&line[s..e])
    }

    pub(crate) fn parse(&mut self, line: &[u8], line_no: u64) -> ParseResult {
        if line_no <= self.header_lines {
            return Ok(Parsed::NotRequest);
        }
        let t = trim(line);
        if t.is_empty() || (!self.comment.is_empty() && t.starts_with(&self.comment)) {
            return Ok(Parsed::NotRequest);
        }
        let n = self.split(line);
        if self.event_col > 0 {
            if n < self.event_col {
                return Err(too_few(self.max_col, n));
            }
            let ev = self.field(line, self.event_col);
            if !self.event_values.iter().any(|v| v.as_slice() == ev) {
                return Ok(Parsed::NotRequest);
            }
        }
        if n < self.max_col {
            return Err(too_few(self.max_col, n));
        }
        let opf = self.field(line, self.op_col);
        let op = if self.trim_values.iter().any(|v| v.as_slice() == opf) {
            Op::Trim
        } else if let Some(bit) = self.op_write_bit {
            let flags = field_u64(opf, &self.names.op)?;
            if flags >> bit & 1 == 1 {
                Op::Write
            } else {
                Op::Read
            }
        } else if self.read_values.iter().any(|v| v.as_slice() == opf) {
            Op::Read
        } else if self.write_values.iter().any(|v| v.as_slice() == opf) {
            Op::Write
        } else {
            return Err(Cow::Owned(format!(
                "unknown opcode `{}` in {}",
                show(opf),
                self.names.op
            )));
        };
        let offset = field_offset(
            self.field(line, self.offset_col),
            self.offset_unit,
            &self.names.offset,
        )?;
        let bytes = field_size(
            self.field(line, self.size_col),
            self.size_unit,
            &self.names.size,
        )?;
        let time_ns = if self.time_col > 0 {
            field_time(
                self.field(line, self.time_col),
                self.time_exp,
                &self.names.time,
            )?
        } else {
            0
        };
        let device = if self.device_col > 0 {
            field_u64(self.field(line, self.device_col), &self.names.device)?
        } else {
            0
        };
        check_end(offset, bytes)?;
        Ok(Parsed::Record(TraceRecord {
            time_ns,
            device,
            op,
            offset_bytes: offset,
            bytes,
        }))
    }
}

#[cold]
fn too_few(want: usize, n: usize) -> Cow<'static, str> {
    Cow::Owned(format!("expected at least {want} fields, found {n}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::workload::trace::formats::record as rec;

    #[test]
    fn presets_are_valid_descriptions() {
        for c in [wiscsee_config(), biotracer_config(), cloudphysics_config()] {
            assert_eq!(validate_delimited(&c), Ok(()));
        }
    }

    #[test]
    fn wiscsee_columns() {
        let mut s = DelimSpec::new(&wiscsee_config());
        // sqlitewal-update_blkparse-events-for-ftlsim.txt lines 1, 2, 3 and 31.
        assert_eq!(
            s.parse(b"39949 D read 299008 4096 0.000000000 0 False", 1),
            rec(0, 0, Op::Read, 299008, 4096)
        );
        assert_eq!(
            s.parse(b"0 C read 299008 4096 0.000122793 0.000122793 False", 2),
            Ok(Parsed::NotRequest)
        );
        assert_eq!(
            s.parse(b"39949 D read 331776 4096 0.000196695 7.3902e-05 False", 3),
            rec(196695, 0, Op::Read, 331776, 4096)
        );
        assert_eq!(
            s.parse(
                b"1386 D discard 136314880 4096 0.439239477 4.43e-06 False",
                31
            ),
            rec(439239477, 0, Op::Trim, 136314880, 4096)
        );
        assert_eq!(
            s.parse(b"1 D write 0 8192 1.5 0 True", 4),
            rec(1500000000, 0, Op::Write, 0, 8192)
        );
        assert_eq!(
            s.parse(b"1 D flush 0 8192 1.5 0 True", 4).unwrap_err(),
            "unknown opcode `flush` in column 3 (op)"
        );
        assert_eq!(
            s.parse(b"1 D write 0 0 1.5 0 True", 4).unwrap_err(),
            "column 5 (size) is 0"
        );
        assert_eq!(
            s.parse(b"1 D write 0", 4).unwrap_err(),
            "expected at least 6 fields, found 4"
        );
        assert_eq!(
            s.parse(b"1", 4).unwrap_err(),
            "expected at least 6 fields, found 1"
        );
    }

    #[test]
    fn biotracer_columns() {
        let mut s = DelimSpec::new(&biotracer_config());
        // Installing_log181.txt line 1: flags 5 (bit 0 set) = write.
        assert_eq!(
            s.parse(b"4043872\t\t96\t\t49152\t\t5\t\t1398396860.168065791\t\t1398396860.168307510\t\t1398396860.168322874\t\t1398396860.171732249", 1),
            rec(1398396860168065791, 0, Op::Write, 4043872 * 512, 49152)
        );
        // Booting_log176.txt line 1: flags 4 (bit 0 clear) = read, relative time.
        assert_eq!(
            s.parse(
                b"0\t\t8\t\t4096\t\t4\t\t1.740780627\t\t1.740812815\t\t1.740851877\t\t1.741075471",
                1
            ),
            rec(1740780627, 0, Op::Read, 0, 4096)
        );
        assert_eq!(
            s.parse(b"0 8 4096 x 1.0", 1).unwrap_err(),
            "column 4 (op) `x` is not a non-negative integer"
        );
    }

    #[test]
    fn cloudphysics_columns() {
        let mut s = DelimSpec::new(&cloudphysics_config());
        assert_eq!(
            s.parse(b"version,time,op,size,lbn", 1),
            Ok(Parsed::NotRequest)
        );
        // cloudPhysicsIO.csv line 2.
        assert_eq!(
            s.parse(b"1,5633898,2a,512,42932745", 2),
            rec(5633898000000000, 0, Op::Write, 42932745 * 512, 512)
        );
        assert_eq!(
            s.parse(b"1,5633898,28,4096,8", 3),
            rec(5633898000000000, 0, Op::Read, 4096, 4096)
        );
        assert_eq!(
            s.parse(b"1,5633898,42,4096,8", 3),
            rec(5633898000000000, 0, Op::Trim, 4096, 4096)
        );
        assert_eq!(
            s.parse(b"1,5633898,35,0,0", 3).unwrap_err(),
            "unknown opcode `35` in column 3 (op)"
        );
    }

    #[test]
    fn generic_options() {
        let mut c = DelimitedConfig {
            delimiter: ";".into(),
            header_lines: 2,
            comment: "//".into(),
            time_column: 1,
            time_unit: TimeUnit::Us,
            offset_column: 2,
            offset_unit_bytes: 4096,
            size_column: 3,
            size_unit_bytes: 512,
            op_column: 4,
            read_values: vec!["R".into(), "RS".into()],
            write_values: vec!["W".into()],
            trim_values: vec!["T".into()],
            device_column: 5,
            ..DelimitedConfig::default()
        };
        assert_eq!(validate_delimited(&c), Ok(()));
        let mut s = DelimSpec::new(&c);
        assert_eq!(s.parse(b"anything", 1), Ok(Parsed::NotRequest));
        assert_eq!(s.parse(b"anything", 2), Ok(Parsed::NotRequest));
        assert_eq!(s.parse(b"  // note", 3), Ok(Parsed::NotRequest));
        assert_eq!(s.parse(b"  ", 3), Ok(Parsed::NotRequest));
        assert_eq!(
            s.parse(b"1.5; 2 ;8;RS;7;ignored", 3),
            rec(1500, 7, Op::Read, 8192, 4096)
        );
        assert_eq!(s.parse(b"0;0;1;T;0", 3), rec(0, 0, Op::Trim, 0, 512));
        assert_eq!(
            s.parse(b"0;;1;W;0", 3).unwrap_err(),
            "column 2 (offset) is empty"
        );
        assert_eq!(
            s.parse(b"0;0;1;r;0", 3).unwrap_err(),
            "unknown opcode `r` in column 4 (op)"
        );
        assert_eq!(
            s.parse(b"0;0;1;W", 3).unwrap_err(),
            "expected at least 5 fields, found 4"
        );

        // No time column: all at 0; op by bit 3; tab delimiter keeps empty fields.
        c = DelimitedConfig {
            delimiter: "\t".into(),
            comment: String::new(),
            offset_column: 1,
            size_column: 2,
            op_column: 4,
            op_write_bit: 3,
            ..DelimitedConfig::default()
        };
        assert_eq!(validate_delimited(&c), Ok(()));
        let mut s = DelimSpec::new(&c);
        assert_eq!(s.parse(b"1\t8\t\t8", 1), rec(0, 0, Op::Write, 512, 8));
        assert_eq!(s.parse(b"1\t8\t\t7", 1), rec(0, 0, Op::Read, 512, 8));
        assert_eq!(
            s.parse(b"#1\t8\t\t7", 1).unwrap_err(),
            "column 1 (offset) `#1` is not a non-negative integer"
        );

        // Event filter.
        c = DelimitedConfig {
            offset_column: 2,
            size_column: 3,
            op_column: 1,
            read_values: vec!["r".into()],
            event_column: 4,
            event_values: vec!["issue".into()],
            ..DelimitedConfig::default()
        };
        let mut s = DelimSpec::new(&c);
        assert_eq!(s.parse(b"r 1 1 issue", 1), rec(0, 0, Op::Read, 512, 1));
        assert_eq!(s.parse(b"r 1 1 done", 1), Ok(Parsed::NotRequest));
        assert!(s.parse(b"r 1", 1).is_err());
    }

    #[test]
    fn validation_messages() {
        let ok = DelimitedConfig {
            offset_column: 1,
            size_column: 2,
            op_column: 3,
            read_values: vec!["r".into()],
            ..DelimitedConfig::default()
        };
        assert_eq!(validate_delimited(&ok), Ok(()));
        let err = |f: &dyn Fn(&mut DelimitedConfig)| {
            let mut c = ok.clone();
            f(&mut c);
            validate_delimited(&c).unwrap_err()
        };
        assert!(err(&|c| c.offset_column = 0)
            .starts_with("offset_column: 0 is out of range; allowed 1..=1024"));
        assert!(err(&|c| c.size_column = 0)
            .starts_with("size_column: 0 is out of range; allowed 1..=1024"));
        assert!(
            err(&|c| c.op_column = 0).starts_with("op_column: 0 is out of range; allowed 1..=1024")
        );
        assert!(err(&|c| c.time_column = 5000)
            .starts_with("time_column: 5000 is out of range; allowed 0..=1024"));
        assert!(
            err(&|c| c.delimiter = "ab".into()).starts_with("delimiter: must be \"whitespace\"")
        );
        assert!(err(&|c| c.delimiter = "\n".into()).starts_with("delimiter:"));
        assert!(err(&|c| c.delimiter = "é".into()).starts_with("delimiter:"));
        assert!(err(&|c| c.delimiter = String::new()).starts_with("delimiter:"));
        assert!(err(&|c| c.offset_unit_bytes = 0)
            .starts_with("offset_unit_bytes: 0 is out of range; allowed >= 1"));
        assert!(err(&|c| c.size_unit_bytes = 0)
            .starts_with("size_unit_bytes: 0 is out of range; allowed >= 1"));
        assert!(err(&|c| c.op_write_bit = 64)
            .starts_with("op_write_bit: 64 is out of range; allowed -1..=63 (-1: off"));
        assert!(err(&|c| c.op_write_bit = -2).starts_with("op_write_bit:"));
        assert!(err(&|c| c.op_write_bit = 0)
            .starts_with("read_values: must be empty when op_write_bit"));
        assert!(
            err(&|c| c.read_values.clear()).starts_with("read_values: list the op column's texts")
        );
        assert!(err(&|c| c.write_values = vec!["r".into()])
            .starts_with("write_values: \"r\" is also in read_values"));
        assert!(err(&|c| c.read_values.push("r".into()))
            .starts_with("read_values: \"r\" is listed twice"));
        assert!(err(&|c| c.event_column = 4).starts_with("event_values: must list"));
        assert!(
            err(&|c| c.event_values = vec!["D".into()]).starts_with("event_column: must be >= 1")
        );
        let mut trim_only = ok.clone();
        trim_only.read_values.clear();
        trim_only.trim_values = vec!["t".into()];
        assert_eq!(validate_delimited(&trim_only), Ok(()));
    }
}
