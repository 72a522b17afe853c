//! Trace reader speed, and a synthetic trace generator.
//!
//! ```text
//! cargo run --release -p ssdkit-core --example trace_parse -- FILE [FORMAT]
//! cargo run --release -p ssdkit-core --example trace_parse -- --generate N OUT [FORMAT]
//! ```
//!
//! The first form parses FILE (FORMAT defaults to auto) without simulating and prints lines,
//! records, seconds, lines/s and MB/s (MB of the file as stored, so compressed files show
//! their compressed size). The second writes an N-line synthetic trace to OUT, gzip- or
//! zstd-compressed when OUT ends in .gz or .zst. FORMAT defaults to mqsim; the other formats
//! (disksim, msr, spc, blkparse, fio_v3, wiscsee, biotracer, cloudphysics) exist to compare
//! parsing speed. The output depends only on N and FORMAT.

use std::io::{BufWriter, Write};
use std::path::Path;
use std::process::ExitCode;
use std::time::Instant;

use ssdkit_core::config::TraceFormat;
use ssdkit_core::internals::workload::trace::{
    format_name, parse_format_name, TraceReader, FORMAT_NAMES,
};
use ssdkit_core::internals::workload::Op;

fn usage() -> ExitCode {
    eprintln!(
        "usage: trace_parse FILE [FORMAT]\n       trace_parse --generate N OUT [FORMAT]\nformats: {}",
        FORMAT_NAMES.join(", ")
    );
    ExitCode::from(2)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let format = |i: usize, default: TraceFormat| match args.get(i) {
        None => Some(default),
        Some(s) => parse_format_name(s),
    };
    if args.first().map(String::as_str) == Some("--generate") {
        let (Some(n), Some(out), Some(f)) = (
            args.get(1).and_then(|s| s.parse::<u64>().ok()),
            args.get(2),
            format(3, TraceFormat::Mqsim),
        ) else {
            return usage();
        };
        return match generate(n, Path::new(out), f) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("error: {e}");
                ExitCode::FAILURE
            }
        };
    }
    let (Some(file), Some(f)) = (args.first(), format(1, TraceFormat::Auto)) else {
        return usage();
    };
    let path = Path::new(file);
    let size = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
    let t0 = Instant::now();
    let mut r = match TraceReader::open(path, f, None, false) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    let (mut reads, mut writes, mut trims, mut bytes) = (0u64, 0u64, 0u64, 0u128);
    loop {
        match r.next_record() {
            Ok(Some(rec)) => {
                match rec.op {
                    Op::Read => reads += 1,
                    Op::Write => writes += 1,
                    Op::Trim => trims += 1,
                    // No trace format produces flushes; only a host program's Device does.
                    Op::Flush => {}
                }
                bytes += rec.bytes as u128;
            }
            Ok(None) => break,
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::FAILURE;
            }
        }
    }
    let secs = t0.elapsed().as_secs_f64();
    let c = r.counters();
    println!("file      {file} ({:.1} MB)", size as f64 / 1e6);
    println!("format    {}", format_name(r.format()));
    println!("lines     {}", c.lines);
    println!(
        "records   {} (reads {reads}, writes {writes}, trims {trims}; {:.1} MiB requested)",
        c.records,
        bytes as f64 / (1u64 << 20) as f64
    );
    println!(
        "skipped   not_requests {}, no_data {}, malformed {}",
        c.not_requests, c.no_data, c.skipped_malformed
    );
    println!("seconds   {secs:.3}");
    println!("lines/s   {:.0}", c.lines as f64 / secs);
    println!("MB/s      {:.1}", size as f64 / 1e6 / secs);
    ExitCode::SUCCESS
}

/// SplitMix64: deterministic, no dependency on the rand crate's stream stability.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

fn generate(n: u64, out: &Path, format: TraceFormat) -> std::io::Result<()> {
    let file = std::fs::File::create(out)?;
    let name = out.to_string_lossy();
    if name.ends_with(".gz") {
        write_lines(
            flate2::write::GzEncoder::new(file, flate2::Compression::fast()),
            n,
            format,
        )?
        .finish()?;
    } else if name.ends_with(".zst") {
        write_lines(zstd::stream::write::Encoder::new(file, 3)?, n, format)?.finish()?;
    } else {
        write_lines(file, n, format)?.sync_all()?;
    }
    Ok(())
}

/// Writes the lines and hands back the sink so the caller can finish the compressor and see
/// its errors.
fn write_lines<W: Write>(sink: W, n: u64, format: TraceFormat) -> std::io::Result<W> {
    let mut w = BufWriter::with_capacity(1 << 20, sink);
    let mut rng = Rng(0x5eed_0000_0000_0001);
    // 64 GiB of 512 B sectors, 4 KiB aligned; sizes 4..128 KiB; 70 % reads; mean gap 10 us.
    const SIZES: [u64; 6] = [8, 8, 8, 16, 64, 256];
    let mut t_ns: u64 = 0;
    match format {
        TraceFormat::Cloudphysics => writeln!(w, "version,time,op,size,lbn")?,
        TraceFormat::FioV3 => writeln!(w, "fio version 3 iolog\n0 /dev/nvme0n1 add")?,
        _ => {}
    }
    for i in 0..n {
        let r = rng.next();
        t_ns += r % 20_000;
        let dev = (r >> 16) % 4;
        let read = (r >> 24) % 10 < 7;
        let sectors = SIZES[((r >> 32) % SIZES.len() as u64) as usize];
        let sector = (rng.next() % (1 << 24)) * 8;
        let (s, ns) = (t_ns / 1_000_000_000, t_ns % 1_000_000_000);
        match format {
            TraceFormat::Mqsim => writeln!(w, "{t_ns} {dev} {sector} {sectors} {}", read as u8)?,
            TraceFormat::Disksim | TraceFormat::DisksimPages => {
                writeln!(w, "{}.{:06}\t{dev}\t{sector}\t{sectors}\t{}", t_ns / 1_000_000, t_ns % 1_000_000, read as u8)?
            }
            TraceFormat::Msr => writeln!(
                w,
                "{},host,{dev},{},{},{},{}",
                128166372000000000 + t_ns / 100,
                if read { "Read" } else { "Write" },
                sector * 512,
                sectors * 512,
                r % 5000
            )?,
            TraceFormat::Spc => {
                writeln!(w, "{dev},{sector},{},{},{s}.{:06}", sectors * 512, if read { 'r' } else { 'w' }, ns / 1000)?
            }
            TraceFormat::Blkparse => writeln!(
                w,
                "  8,16   {}   {:>6}   {s:>5}.{ns:09}  4020  D   {} {sector} + {sectors} [java]",
                dev,
                i + 1,
                if read { "R" } else { "WS" }
            )?,
            TraceFormat::FioV2 | TraceFormat::FioV3 => writeln!(
                w,
                "{} /dev/nvme0n1 {} {} {}",
                t_ns / 1000,
                if read { "read" } else { "write" },
                sector * 512,
                sectors * 512
            )?,
            TraceFormat::Wiscsee => writeln!(
                w,
                "{} D {} {} {} {s}.{ns:09} 0 False",
                1000 + dev,
                if read { "read" } else { "write" },
                sector * 512,
                sectors * 512
            )?,
            TraceFormat::Biotracer => writeln!(
                w,
                "{sector}\t\t{sectors}\t\t{}\t\t{}\t\t{s}.{ns:09}\t\t{s}.{ns:09}\t\t{s}.{ns:09}\t\t{s}.{ns:09}",
                sectors * 512,
                if read { 4 } else { 5 }
            )?,
            TraceFormat::Cloudphysics => {
                writeln!(w, "1,{s},{},{},{sector}", if read { "28" } else { "2a" }, sectors * 512)?
            }
            TraceFormat::Auto | TraceFormat::Delimited => {
                return Err(std::io::Error::other("pick a concrete format to generate"));
            }
        }
    }
    w.into_inner().map_err(|e| e.into_error())
}
