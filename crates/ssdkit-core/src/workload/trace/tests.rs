//! Reader-level tests: compression, binary check, detection through the reader, the bad-input
//! rules with their exact messages, counters and line reporting.

use std::io::{self, Read, Write};

use super::*;
use crate::config::{DelimitedConfig, TimeUnit, TraceFormat};
use crate::error::Error;
use crate::workload::Op;

fn reader(text: &[u8], format: TraceFormat, skip: bool) -> Result<TraceReader, Error> {
    TraceReader::from_reader(
        "t.txt",
        Box::new(io::Cursor::new(text.to_vec())),
        format,
        None,
        skip,
    )
}

/// All records, or the first error.
fn all(text: &[u8], format: TraceFormat) -> Result<Vec<TraceRecord>, Error> {
    let mut r = reader(text, format, false)?;
    let mut out = vec![];
    while let Some(rec) = r.next_record()? {
        out.push(rec);
    }
    Ok(out)
}

fn rec(time_ns: u64, device: u64, op: Op, offset_bytes: u64, bytes: u64) -> TraceRecord {
    TraceRecord {
        time_ns,
        device,
        op,
        offset_bytes,
        bytes,
    }
}

fn trace_err(r: Result<impl std::fmt::Debug, Error>) -> String {
    match r {
        Err(Error::Trace(m)) => m,
        other => panic!("expected Error::Trace, got {other:?}"),
    }
}

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

fn zstd_bytes(data: &[u8]) -> Vec<u8> {
    zstd::stream::encode_all(data, 3).unwrap()
}

#[test]
fn reader_is_send() {
    fn assert_send<T: Send>() {}
    assert_send::<TraceReader>();
}

/// The first lines of each reference trace, read through Auto, with values worked out by hand
/// from the columns in SOURCES.txt.
#[test]
fn reference_trace_heads() {
    let cases: &[(&str, TraceFormat, TraceRecord)] = &[
        // tpcc-small.trace: ns, device 4, sector 264719034, 16 sectors, 0 = write.
        ("938513000 4 264719034 16 0\n938828000 3 197570570 16 0\n", TraceFormat::Mqsim, rec(938513000, 4, Op::Write, 135536145408, 8192)),
        // DTRS1K.trace.
        ("0 0 280605840 2 1\n979 0 287641400 128 1\n", TraceFormat::Mqsim, rec(0, 0, Op::Read, 143670190080, 1024)),
        // ssdsim_example.ascii = Financial1 "0,303567,3584,w,0.000000" (size rounded up to 7).
        ("0 0 303567 7 0\n0 1 55590 6 0\n", TraceFormat::Mqsim, rec(0, 0, Op::Write, 155426304, 3584)),
        // ssd-postmark-aligned2.trace: 7961.833 ms.
        ("7961.833 0 20228336 8 0\n8346.206 0 6397360 496 0\n", TraceFormat::Disksim, rec(7961833000, 0, Op::Write, 10356908032, 4096)),
        // ascii.trace: 17.829285 ms, device 20, 6 sectors, read.
        ("17.829285\t20\t576560\t6\t1\n", TraceFormat::Disksim, rec(17829285, 20, Op::Read, 295198720, 3072)),
        // desktop.trace: detected as disksim (sizes would need disksim_pages).
        ("640.875000\t0\t522424\t16\t1\n", TraceFormat::Disksim, rec(640875000, 0, Op::Read, 267481088, 8192)),
        // blkparse-output.txt: line 1 is a no-data dispatch, line 2 the first request.
        (
            "  8,33   4        1     0.000000000  3922  D   N 0 (00 ..) [kworker/u65:0]\n  8,33  30        1     0.001368096  5025  D   R 540544 + 8 [systemd-udevd]\n",
            TraceFormat::Blkparse,
            rec(1368096, 8 << 20 | 33, Op::Read, 276758528, 4096),
        ),
        // sample.txt (NVMe): Q, G, U, I, then D.
        (
            "259,2    0        1     0.000000000  4020  Q   R 282624 + 8 [java]\n259,2    0        2     0.000001581  4020  G   R 282624 + 8 [java]\n259,2    0        3     0.000003650  4020  U   N [java] 1\n259,2    0        4     0.000003858  4020  I  RS 282624 + 8 [java]\n259,2    0        5     0.000005123  4020  D  RS 282624 + 8 [java]\n",
            TraceFormat::Blkparse,
            rec(5123, 259 << 20 | 2, Op::Read, 144703488, 4096),
        ),
        // sqlitewal WiscSee events.
        ("39949 D read 299008 4096 0.000000000 0 False\n0 C read 299008 4096 0.000122793 0.000122793 False\n", TraceFormat::Wiscsee, rec(0, 0, Op::Read, 299008, 4096)),
        // Movie_log121.txt: flags 0 = read, epoch seconds.
        (
            "8681184\t\t88\t\t45056\t\t0\t\t1398403999.646690157\t\t1398403999.652921876\t\t1398403999.653009063\t\t1398403999.653717136\n",
            TraceFormat::Biotracer,
            rec(1398403999646690157, 0, Op::Read, 4444766208, 45056),
        ),
        // cloudPhysicsIO.csv.
        ("version,time,op,size,lbn\n1,5633898,2a,512,42932745\n", TraceFormat::Cloudphysics, rec(5633898000000000, 0, Op::Write, 21981565440, 512)),
    ];
    for (text, want_format, want) in cases {
        let mut r = reader(text.as_bytes(), TraceFormat::Auto, false).unwrap();
        assert_eq!(r.format(), *want_format, "{text}");
        assert_eq!(r.next_record().unwrap(), Some(*want), "{text}");
    }
}

#[test]
fn gzip_multi_member_and_zstd_are_read_whatever_the_name() {
    let a = b"938513000 4 264719034 16 0\n";
    let b = b"938828000 3 197570570 16 1\n";
    let want = all(&[&a[..], &b[..]].concat(), TraceFormat::Mqsim).unwrap();
    assert_eq!(want.len(), 2);
    // Two gzip members, as `cat a.gz b.gz` makes.
    let gz = [gzip(a), gzip(b)].concat();
    assert_eq!(all(&gz, TraceFormat::Auto).unwrap(), want);
    // Two zstd frames.
    let zs = [zstd_bytes(a), zstd_bytes(b)].concat();
    assert_eq!(all(&zs, TraceFormat::Auto).unwrap(), want);
    // A big compressed stream crosses buffer refills.
    let mut big = Vec::new();
    for i in 0..200_000u64 {
        big.extend_from_slice(format!("{} {} {} 8 {}\n", i * 1000, i % 4, i * 8, i % 2).as_bytes());
    }
    for data in [gzip(&big), zstd_bytes(&big)] {
        let mut r = reader(&data, TraceFormat::Auto, false).unwrap();
        let mut n = 0u64;
        let mut last = None;
        while let Some(x) = r.next_record().unwrap() {
            n += 1;
            last = Some(x);
        }
        assert_eq!(n, 200_000);
        assert_eq!(
            last,
            Some(rec(199_999_000, 3, Op::Read, 199_999 * 8 * 512, 4096))
        );
        assert_eq!(r.counters().lines, 200_000);
    }
    // And through a real file.
    let dir = std::env::temp_dir().join(format!("ssdkit-trace-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("plain-name.trace");
    std::fs::write(&p, zstd_bytes(a)).unwrap();
    let mut r = TraceReader::open(&p, TraceFormat::Auto, None, false).unwrap();
    assert_eq!(r.next_record().unwrap(), Some(want[0]));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn corrupt_compressed_data_is_a_trace_error() {
    let mut gz = gzip(&b"938513000 4 264719034 16 0\n".repeat(1000));
    let n = gz.len();
    gz.truncate(n / 2);
    let msg = match reader(&gz, TraceFormat::Mqsim, false) {
        Err(Error::Trace(m)) => m,
        Ok(mut r) => loop {
            match r.next_record() {
                Ok(Some(_)) => {}
                Ok(None) => panic!("truncated gzip read to the end"),
                Err(Error::Trace(m)) => {
                    assert_eq!(r.next_record(), Ok(None), "read errors are final");
                    break m;
                }
                Err(e) => panic!("{e:?}"),
            }
        },
        Err(e) => panic!("{e:?}"),
    };
    assert!(msg.starts_with("t.txt: "), "{msg}");
}

#[test]
fn open_failure_is_io() {
    let e = TraceReader::open(
        std::path::Path::new("/nonexistent/x.trace"),
        TraceFormat::Auto,
        None,
        false,
    );
    match e {
        Err(Error::Io(m)) => assert!(m.contains("/nonexistent/x.trace"), "{m}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn crlf_line_endings() {
    let text = b"938513000 4 264719034 16 0\r\n938828000 3 197570570 16 1\r\n\r\n";
    let recs = all(text, TraceFormat::Auto).unwrap();
    assert_eq!(recs.len(), 2);
    assert_eq!(recs[1], rec(938828000, 3, Op::Read, 197570570 * 512, 8192));
    let recs = all(
        b"version,time,op,size,lbn\r\n1,5,28,512,7\r\n",
        TraceFormat::Auto,
    )
    .unwrap();
    assert_eq!(recs, vec![rec(5_000_000_000, 0, Op::Read, 3584, 512)]);
    let recs = all(
        b"0\t\t8\t\t4096\t\t1\t\t1.5\t\t1.6\t\t1.7\t\t1.8\r\n",
        TraceFormat::Auto,
    )
    .unwrap();
    assert_eq!(recs, vec![rec(1_500_000_000, 0, Op::Write, 0, 4096)]);
}

#[test]
fn exact_nanosecond_timestamps() {
    let recs = all(
        b"4043872\t\t96\t\t49152\t\t5\t\t1398396860.168065791\t\t1398396860.168307510\t\t1398396860.168322874\t\t1398396860.171732249\n",
        TraceFormat::Biotracer,
    )
    .unwrap();
    assert_eq!(recs[0].time_ns, 1398396860168065791);
    let recs = all(b"5265.313 0 6357144 8 0\n", TraceFormat::Disksim).unwrap();
    assert_eq!(recs[0].time_ns, 5265313000);
    let recs = all(b"0,1,512,r,0.011413\n", TraceFormat::Spc).unwrap();
    assert_eq!(recs[0].time_ns, 11413000);
    let recs = all(
        b"128166372003061629,wdev,0,Read,3154128896,4096,1331\n",
        TraceFormat::Msr,
    )
    .unwrap();
    assert_eq!(recs[0].time_ns, 12816637200306162900);
    let recs = all(
        b"fio version 3 iolog\n0 /dev/x add\n1234567 /dev/x write 0 4096\n",
        TraceFormat::Auto,
    )
    .unwrap();
    assert_eq!(recs, vec![rec(1_234_567_000, 0, Op::Write, 0, 4096)]);
}

#[test]
fn malformed_line_messages_name_file_line_and_text() {
    let text = b"938513000 4 264719034 16 0\n\n938513001 4 5 0 1\n";
    let mut r = reader(text, TraceFormat::Mqsim, false).unwrap();
    assert!(r.next_record().unwrap().is_some());
    assert_eq!(
        trace_err(r.next_record()),
        "t.txt:3: size is 0: `938513001 4 5 0 1`"
    );
    // The error is not final: the reader goes on after the bad line.
    assert_eq!(r.next_record(), Ok(None));

    let cases: &[(TraceFormat, &str, &str)] = &[
        (TraceFormat::Mqsim, "1 0 5 -8 1", "t.txt:2: size `-8` is negative: `1 0 5 -8 1`"),
        (TraceFormat::Mqsim, "1 0 5 8 7", "t.txt:2: unknown opcode `7` (expected 0 = write or 1 = read): `1 0 5 8 7`"),
        (TraceFormat::Mqsim, "1 0 5 8", "t.txt:2: expected 5 fields `time_ns device sector sectors type`, found 4 fields: `1 0 5 8`"),
        (TraceFormat::Mqsim, "1 0 x 8 1", "t.txt:2: start sector `x` is not a non-negative integer: `1 0 x 8 1`"),
        (TraceFormat::Disksim, "1.5 0 5 0 1", "t.txt:2: size is 0: `1.5 0 5 0 1`"),
        (TraceFormat::Spc, "0,1,512,q,0.5", "t.txt:2: unknown opcode `q` (expected r or w): `0,1,512,q,0.5`"),
        (TraceFormat::Msr, "1,h,0,Read,0,0,1", "t.txt:2: size is 0: `1,h,0,Read,0,0,1`"),
        (TraceFormat::Blkparse, "8,0 1 2 0.1 5 D W 1 + -8 [x]", "t.txt:2: sectors `-8` is negative: `8,0 1 2 0.1 5 D W 1 + -8 [x]`"),
        (TraceFormat::FioV2, "/dev/x write 0 0", "t.txt:2: length is 0: `/dev/x write 0 0`"),
        (TraceFormat::Wiscsee, "1 D frob 0 4096 0.1 0 False", "t.txt:2: unknown opcode `frob` in column 3 (op): `1 D frob 0 4096 0.1 0 False`"),
        (TraceFormat::Cloudphysics, "1,5,28,-512,7", "t.txt:2: column 4 (size) `-512` is negative: `1,5,28,-512,7`"),
    ];
    for (format, bad, want) in cases {
        let good = match format {
            TraceFormat::Mqsim => "1 0 5 8 1",
            TraceFormat::Disksim => "1.5 0 5 8 1",
            TraceFormat::Spc => "0,1,512,r,0.5",
            TraceFormat::Msr => "1,h,0,Read,0,512,1",
            TraceFormat::Blkparse => "8,0 1 2 0.1 5 D W 1 + 8 [x]",
            TraceFormat::FioV2 => "fio version 2 iolog",
            TraceFormat::Wiscsee => "1 D read 0 4096 0.1 0 False",
            TraceFormat::Cloudphysics => "version,time,op,size,lbn",
            _ => unreachable!(),
        };
        let text = format!("{good}\n{bad}\n");
        let mut r = reader(text.as_bytes(), *format, false).unwrap();
        let first = r.next_record();
        let msg = if first.as_ref().map(|x| x.is_some()).unwrap_or(false) {
            trace_err(r.next_record())
        } else {
            trace_err(first)
        };
        assert_eq!(&msg, want, "{format:?}");
    }
}

#[test]
fn skip_malformed_counts_and_continues() {
    let text = b"# header comment\n938513000 4 264719034 16 0\nbad line\n1 0 5 0 1\n\n2 0 5 8 1\n";
    let mut r = reader(text, TraceFormat::Mqsim, true).unwrap();
    let mut recs = vec![];
    while let Some(x) = r.next_record().unwrap() {
        recs.push(x);
        assert!(r.line_number() == 2 || r.line_number() == 6);
    }
    assert_eq!(recs.len(), 2);
    assert_eq!(
        r.counters(),
        TraceCounters {
            lines: 6,
            records: 2,
            skipped_malformed: 2,
            no_data: 0,
            not_requests: 2
        }
    );
}

#[test]
fn blkparse_counters() {
    let text =
        b"  8,16   5        1     0.000000000 18615  A   R 1444645666 + 256 <- (8,17) 1444645632
  8,16   5        6     0.000031865 18615  D   R 1444645666 + 256 [java]
  8,33   4        1     0.000000000  3922  D   N 0 (00 ..) [kworker/u65:0]
  8,16   5        0     0.000012990     0  m   N cfq18615S / insert_request
CPU0 (8,16):
 Reads Queued:           0,        0KiB\t Writes Queued:           0,        0KiB

Total (8,16):
";
    let mut r = reader(text, TraceFormat::Auto, false).unwrap();
    assert_eq!(r.format(), TraceFormat::Blkparse);
    assert!(r.next_record().unwrap().is_some());
    assert_eq!(r.next_record().unwrap(), None);
    assert_eq!(
        r.counters(),
        TraceCounters {
            lines: 8,
            records: 1,
            skipped_malformed: 0,
            no_data: 1,
            not_requests: 6
        }
    );
}

#[test]
fn line_number_and_text_of_the_last_record() {
    let long_tail = "x".repeat(500);
    let text = format!("\n\n1 0 5 8 1 \n2 0 5 8 1 {long_tail}\n");
    let mut r = reader(text.as_bytes(), TraceFormat::Mqsim, true).unwrap();
    assert_eq!(r.line_number(), 0);
    r.next_record().unwrap();
    assert_eq!(r.line_number(), 3);
    assert_eq!(r.line_text(), "1 0 5 8 1 ");
    // Line 4 is malformed (6 fields) and skipped: the last record stays line 3.
    assert_eq!(r.next_record().unwrap(), None);
    assert_eq!(r.line_number(), 3);
    // Long lines are cut at 200 characters.
    let mut r = reader(
        format!("1 0 5 8 {}1\n", " ".repeat(300)).as_bytes(),
        TraceFormat::Mqsim,
        false,
    )
    .unwrap();
    r.next_record().unwrap();
    assert_eq!(r.line_text().chars().count(), 203);
    assert!(r.line_text().ends_with("..."));
    let bad = format!("1 0 5 8 {long_tail}\n");
    let msg = trace_err(all(bad.as_bytes(), TraceFormat::Mqsim));
    assert!(
        msg.starts_with("t.txt:1: unknown opcode `xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx...`"),
        "{msg}"
    );
    assert!(msg.ends_with("xxx...`"), "{msg}");
}

#[test]
fn empty_and_request_free_files() {
    let msg = trace_err(all(b"", TraceFormat::Mqsim));
    assert!(
        msg.starts_with("t.txt: no requests in the file (read as mqsim: 0 lines"),
        "{msg}"
    );
    let msg = trace_err(all(b"", TraceFormat::Auto));
    assert_eq!(msg, "t.txt: empty file: no requests");
    let msg = trace_err(all(b"\n  \n# x\n", TraceFormat::Auto));
    assert_eq!(msg, "t.txt: empty file: no requests");
    let msg = trace_err(all(
        b"fio version 2 iolog\n/dev/x add\n/dev/x sync 0 0\n",
        TraceFormat::Auto,
    ));
    assert_eq!(
        msg,
        "t.txt: no requests in the file (read as fio_v2: 3 lines, 2 not requests, 1 without data, 0 malformed skipped)"
    );
    // Everything skipped as malformed is "no requests" too, and it is final.
    let mut r = reader(b"bad\nworse\n", TraceFormat::Mqsim, true).unwrap();
    assert!(trace_err(r.next_record()).contains("2 malformed skipped"));
    assert_eq!(r.next_record(), Ok(None));
}

#[test]
fn binary_files_are_refused_at_open() {
    let msg = trace_err(reader(b"1 0 5 8 1\n\x00\x01\x02", TraceFormat::Auto, false));
    assert_eq!(
        msg,
        "t.txt: binary file (NUL byte at offset 10); a trace must be text"
    );
    let msg = trace_err(reader(b"1 0 5 8 1\n\xff\xfe", TraceFormat::Mqsim, false));
    assert_eq!(
        msg,
        "t.txt: binary file (invalid UTF-8 at offset 10); a trace must be text"
    );
    let msg = trace_err(reader(
        &gzip(b"\x00\x00\x00\x00"),
        TraceFormat::Mqsim,
        false,
    ));
    assert_eq!(
        msg,
        "t.txt: binary file (NUL byte at offset 0 after gzip decompression); a trace must be text"
    );
    let msg = trace_err(reader(&zstd_bytes(b"ok\xc3"), TraceFormat::Mqsim, false));
    assert_eq!(msg, "t.txt: binary file (invalid UTF-8 at offset 2 after zstd decompression); a trace must be text");
    // A UTF-8 character cut by the 64 KiB limit is fine, and so is valid non-ASCII text.
    let mut t = "#".repeat((64 << 10) - 1).into_bytes();
    t.extend_from_slice("é\n1 0 5 8 1\n".as_bytes());
    assert_eq!(all(&t, TraceFormat::Mqsim).unwrap().len(), 1);
    assert_eq!(
        all("# déjà vu\n1 0 5 8 1\n".as_bytes(), TraceFormat::Auto)
            .unwrap()
            .len(),
        1
    );
    // Past 64 KiB nothing is checked: a NUL there is just a malformed line.
    let mut t = "#\n".repeat(40 << 10).into_bytes();
    t.extend_from_slice(b"1 0 5 8 1\n1 0 5 8 \x001\n");
    let msg = trace_err(all(&t, TraceFormat::Mqsim));
    assert!(msg.starts_with("t.txt:40962: unknown opcode"), "{msg}");
}

#[test]
fn undetectable_names_file_line_and_formats() {
    let msg = trace_err(reader(
        b"\nhello there world\n1 2 3\n",
        TraceFormat::Auto,
        false,
    ));
    assert_eq!(
        msg,
        "t.txt: cannot detect the trace format from the first line `hello there world`; set trace_format \
         to one of: mqsim, msr, spc, disksim, blkparse, fio_v2, fio_v3, wiscsee, biotracer, cloudphysics, \
         disksim_pages (DiskSim with sizes in 4 KiB pages) or delimited (with a [flow.delimited] table)"
    );
}

#[test]
fn over_long_lines_are_malformed() {
    let mut t = b"1 0 5 8 1\n".to_vec();
    t.extend(std::iter::repeat_n(b'7', (1 << 20) + 10));
    t.extend_from_slice(b"\n2 0 5 8 1\n");
    let mut r = reader(&t, TraceFormat::Mqsim, false).unwrap();
    assert!(r.next_record().unwrap().is_some());
    let msg = trace_err(r.next_record());
    assert!(
        msg.starts_with("t.txt:2: line longer than 1048576 bytes: `7777"),
        "{msg}"
    );
    assert!(msg.len() < 400);
    assert_eq!(r.next_record().unwrap().map(|x| x.time_ns), Some(2));
    let mut r = reader(&t, TraceFormat::Mqsim, true).unwrap();
    while r.next_record().unwrap().is_some() {}
    assert_eq!(r.counters().skipped_malformed, 1);
    assert_eq!(r.counters().records, 2);
}

#[test]
fn delimited_needs_a_valid_table() {
    let text = b"1,2,R\n";
    let open = |d: Option<&DelimitedConfig>| {
        TraceReader::from_reader(
            "t.csv",
            Box::new(io::Cursor::new(text.to_vec())),
            TraceFormat::Delimited,
            d,
            false,
        )
    };
    assert!(matches!(open(None), Err(Error::Config(m)) if m.contains("[flow.delimited]")));
    let bad = DelimitedConfig::default();
    assert!(
        matches!(open(Some(&bad)), Err(Error::Config(m)) if m.starts_with("delimited.offset_column: 0 is out of range; allowed 1..=1024"))
    );
    let good = DelimitedConfig {
        delimiter: ",".into(),
        offset_column: 1,
        size_column: 2,
        size_unit_bytes: 512,
        op_column: 3,
        read_values: vec!["R".into()],
        time_unit: TimeUnit::Ms,
        ..DelimitedConfig::default()
    };
    let mut r = open(Some(&good)).unwrap();
    assert_eq!(r.format(), TraceFormat::Delimited);
    assert_eq!(
        r.next_record().unwrap(),
        Some(rec(0, 0, Op::Read, 512, 1024))
    );
}

#[test]
fn disksim_pages_only_when_named() {
    let text = b"26.214000\t0\t303574\t1\t0\n";
    let mut r = reader(text, TraceFormat::Auto, false).unwrap();
    assert_eq!(r.format(), TraceFormat::Disksim);
    assert_eq!(r.next_record().unwrap().map(|x| x.bytes), Some(512));
    assert_eq!(all(text, TraceFormat::DisksimPages).unwrap()[0].bytes, 4096);
}

/// A stream of `lines` copies of "1 0 5 8 1\n" that then fails, like a disk error.
struct Failing {
    at: usize,
    lines: usize,
}
impl Read for Failing {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let line = b"1 0 5 8 1\n";
        let total = self.lines * line.len();
        if self.at == total {
            return Err(io::Error::other("device on fire"));
        }
        let k = out.len().min(total - self.at).min(4096);
        for (i, o) in out[..k].iter_mut().enumerate() {
            *o = line[(self.at + i) % line.len()];
        }
        self.at += k;
        Ok(k)
    }
}

#[test]
fn read_errors_are_final() {
    match TraceReader::from_reader(
        "f",
        Box::new(Failing { at: 0, lines: 1 }),
        TraceFormat::Mqsim,
        None,
        false,
    ) {
        Err(Error::Trace(m)) => assert!(
            m.starts_with("f: cannot read the start of the file: device on fire"),
            "{m}"
        ),
        other => panic!("{other:?}"),
    }
    // 7000 lines fill the first 64 KiB, then the failure comes mid-stream.
    let mut r = TraceReader::from_reader(
        "f",
        Box::new(Failing { at: 0, lines: 7000 }),
        TraceFormat::Mqsim,
        None,
        false,
    )
    .unwrap();
    let mut n = 0;
    let msg = loop {
        match r.next_record() {
            Ok(Some(_)) => n += 1,
            Ok(None) => panic!("no error"),
            Err(Error::Trace(m)) => break m,
            Err(e) => panic!("{e:?}"),
        }
    };
    assert_eq!(
        (n, msg.as_str()),
        (7000, "f: read error after line 7000: device on fire")
    );
    assert_eq!(msg, "f: read error after line 7000: device on fire");
    assert_eq!(r.next_record(), Ok(None));
}

#[test]
fn format_names_round_trip() {
    for name in FORMAT_NAMES {
        let f = parse_format_name(name).unwrap();
        assert_eq!(format_name(f), name);
        // The same spelling serde uses in configs.
        assert_eq!(serde_json::to_string(&f).unwrap(), format!("\"{name}\""));
    }
    assert_eq!(parse_format_name("MQSim"), None);
}
