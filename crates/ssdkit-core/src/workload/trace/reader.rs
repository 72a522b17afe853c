//! [`TraceReader`]: decompression, the binary check, format choice and the per-line loop.

use std::borrow::Cow;
use std::fs::File;
use std::io::{self, Cursor, Read};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use super::delimited::{
    biotracer_config, cloudphysics_config, validate_delimited, wiscsee_config, DelimSpec,
};
use super::detect::{detect_explained, first_line};
use super::formats::{
    parse_blkparse, parse_disksim, parse_fio, parse_mqsim, parse_msr, parse_spc, trim, ParseResult,
    Parsed,
};
use super::lines::{Line, LineReader, MAX_LINE};
use super::{format_name, TraceCounters, TraceRecord, DETECTABLE_FORMATS};
use crate::config::{DelimitedConfig, TraceFormat};
use crate::error::Error;

/// Bytes after decompression checked for NUL and invalid UTF-8 (docs/workloads.md).
const BINARY_CHECK: usize = 64 << 10;
/// Longest line text kept for messages, in characters.
const TEXT_CHARS: usize = 200;
/// Bytes of a record's line kept for [`TraceReader::line_text`]: enough for 200 characters of
/// any UTF-8.
const TEXT_BYTES: usize = 4 * TEXT_CHARS;

enum Parser {
    Mqsim,
    Msr,
    Spc,
    Disksim { size_unit: u64 },
    Blkparse,
    Fio { v3: bool },
    Delimited(Box<DelimSpec>),
}

impl Parser {
    #[inline]
    fn parse(&mut self, line: &[u8], line_no: u64) -> ParseResult {
        if let Parser::Delimited(spec) = self {
            // Headers, blank lines and comments follow the description.
            return spec.parse(line, line_no);
        }
        // Blank lines and `#` comments are not requests in every built-in format.
        match line.iter().position(|&b| b != b' ' && b != b'\t') {
            None => return Ok(Parsed::NotRequest),
            Some(i) if line[i] == b'#' => return Ok(Parsed::NotRequest),
            _ => {}
        }
        match self {
            Parser::Mqsim => parse_mqsim(line),
            Parser::Msr => parse_msr(line),
            Parser::Spc => parse_spc(line),
            Parser::Disksim { size_unit } => parse_disksim(line, *size_unit),
            Parser::Blkparse => parse_blkparse(line),
            Parser::Fio { v3 } => parse_fio(line, *v3),
            Parser::Delimited(_) => Ok(Parsed::NotRequest),
        }
    }
}

/// A streaming reader of one block-trace file; see the module documentation for formats.
///
/// Errors: a malformed line gives an `Error::Trace` reading
/// ``<file>:<line>: <reason>: `<text>` `` (or is skipped and counted with `skip_malformed`),
/// and the next call continues with the next line.
/// A read or decompression error, and "no requests" at the end of a file without records, are
/// final: later calls return `Ok(None)`.
pub struct TraceReader {
    name: String,
    format: TraceFormat,
    parser: Parser,
    lines: LineReader,
    skip_malformed: bool,
    counters: TraceCounters,
    line_no: u64,
    rec_line_no: u64,
    rec_text: Vec<u8>,
    done: bool,
    /// Bytes of the file read so far and its size (a file opened by path), for progress.
    input: Option<(Arc<AtomicU64>, u64)>,
    /// Why auto-detection chose the format; None when the format was named.
    detection: Option<String>,
    /// fio `sync`/`datasync` become Flush records (else they count as `no_data`).
    flushes: bool,
}

/// How long opening a FIFO may take before the wait for its writer is reported: a writer
/// already waiting makes the open return at once.
const FIFO_GRACE: std::time::Duration = std::time::Duration::from_millis(200);

/// Opens `path`. Opening a FIFO blocks until a program opens it for writing; with no writer
/// that would look like a hang, so the wait is said once on stderr, then kept.
fn open_waiting_for_writer(path: &Path, name: &str) -> io::Result<File> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        let fifo = std::fs::metadata(path).is_ok_and(|m| m.file_type().is_fifo());
        if fifo {
            let (tx, rx) = std::sync::mpsc::channel();
            let owned = path.to_path_buf();
            std::thread::spawn(move || {
                let _ = tx.send(File::open(owned));
            });
            return match rx.recv_timeout(FIFO_GRACE) {
                Ok(opened) => opened,
                Err(_) => {
                    eprintln!(
                        "ssdkit: waiting for a writer on FIFO {name}: the trace is read as a program writes it, and the run starts when one opens it"
                    );
                    rx.recv()
                        .unwrap_or_else(|_| Err(io::Error::other("the opening thread ended")))
                }
            };
        }
    }
    File::open(path)
}

/// Counts the bytes read through it, for a progress display (shared with the reader's owner:
/// the decompressor owns the stream).
struct Counting<R> {
    inner: R,
    read: Arc<AtomicU64>,
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

impl std::fmt::Debug for TraceReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TraceReader")
            .field("name", &self.name)
            .field("format", &self.format)
            .field("counters", &self.counters)
            .field("line", &self.line_no)
            .finish_non_exhaustive()
    }
}

impl TraceReader {
    /// Opens a file; detects gzip (1f 8b, multi-member) and zstd (28 b5 2f fd) by magic bytes,
    /// whatever the name.
    pub fn open(
        path: &Path,
        format: TraceFormat,
        delimited: Option<&DelimitedConfig>,
        skip_malformed: bool,
    ) -> Result<TraceReader, Error> {
        let name = path.display().to_string();
        let file = open_waiting_for_writer(path, &name)
            .map_err(|e| Error::Io(format!("cannot open trace file {name}: {e}")))?;
        let size = file.metadata().map(|m| m.len()).unwrap_or(0);
        let read = Arc::new(AtomicU64::new(0));
        let counted = Counting {
            inner: file,
            read: read.clone(),
        };
        let mut r = Self::from_reader(&name, Box::new(counted), format, delimited, skip_malformed)?;
        if size > 0 {
            r.input = Some((read, size));
        }
        Ok(r)
    }

    /// Bytes of the file read so far and the file's size (compressed bytes for a compressed
    /// file); None for a reader not opened from a regular file.
    pub fn input_progress(&self) -> Option<(u64, u64)> {
        self.input
            .as_ref()
            .map(|(read, size)| (read.load(Ordering::Relaxed), *size))
    }

    /// Why auto-detection read the file as it did; None when the format was named.
    pub fn detection(&self) -> Option<&str> {
        self.detection.as_deref()
    }

    /// Same over any reader; `name` is used in messages.
    pub fn from_reader(
        name: &str,
        mut r: Box<dyn Read + Send>,
        format: TraceFormat,
        delimited: Option<&DelimitedConfig>,
        skip_malformed: bool,
    ) -> Result<TraceReader, Error> {
        let mut magic = [0u8; 4];
        let got = read_up_to(&mut r, &mut magic)
            .map_err(|e| Error::Io(format!("cannot read trace file {name}: {e}")))?;
        let head = Cursor::new(magic[..got].to_vec());
        let (src, compression): (Box<dyn Read + Send>, &str) =
            if got >= 2 && magic[..2] == [0x1f, 0x8b] {
                (
                    Box::new(flate2::read::MultiGzDecoder::new(head.chain(r))),
                    " after gzip decompression",
                )
            } else if got == 4 && magic == [0x28, 0xb5, 0x2f, 0xfd] {
                let dec = zstd::stream::read::Decoder::new(head.chain(r)).map_err(|e| {
                    Error::Trace(format!("{name}: cannot start zstd decompression: {e}"))
                })?;
                (Box::new(dec), " after zstd decompression")
            } else {
                (Box::new(head.chain(r)), "")
            };
        let mut lines = LineReader::new(src);
        lines
            .fill_prefix(BINARY_CHECK)
            .map_err(|e| Error::Trace(format!("{name}: cannot read the start of the file: {e}")))?;
        let complete = lines.at_eof();
        let prefix = lines.prefix();
        let prefix_len = prefix.len();
        let checked = &prefix[..prefix_len.min(BINARY_CHECK)];
        if let Some(at) = memchr::memchr(0, checked) {
            return Err(Error::Trace(format!(
                "{name}: binary file (NUL byte at offset {at}{compression}); a trace must be text"
            )));
        }
        if let Err(e) = std::str::from_utf8(checked) {
            // A character cut by the 64 KiB limit is not an error.
            let more_follows = !complete || checked.len() < prefix_len;
            if e.error_len().is_some() || !more_follows {
                return Err(Error::Trace(format!(
                    "{name}: binary file (invalid UTF-8 at offset {}{compression}); a trace must be text",
                    e.valid_up_to()
                )));
            }
        }
        let mut detection = None;
        let format = match format {
            TraceFormat::Auto => {
                let prefix = lines.prefix();
                match detect_explained(prefix, complete) {
                    Some((f, why)) => {
                        detection = Some(why);
                        f
                    }
                    None => return Err(undetected(name, first_line(prefix, complete))),
                }
            }
            f => f,
        };
        let parser = match format {
            TraceFormat::Auto => unreachable_auto(),
            TraceFormat::Mqsim => Parser::Mqsim,
            TraceFormat::Msr => Parser::Msr,
            TraceFormat::Spc => Parser::Spc,
            TraceFormat::Disksim => Parser::Disksim { size_unit: 512 },
            TraceFormat::DisksimPages => Parser::Disksim { size_unit: 4096 },
            TraceFormat::Blkparse => Parser::Blkparse,
            TraceFormat::FioV2 => Parser::Fio { v3: false },
            TraceFormat::FioV3 => Parser::Fio { v3: true },
            TraceFormat::Wiscsee => Parser::Delimited(Box::new(DelimSpec::new(&wiscsee_config()))),
            TraceFormat::Biotracer => {
                Parser::Delimited(Box::new(DelimSpec::new(&biotracer_config())))
            }
            TraceFormat::Cloudphysics => {
                Parser::Delimited(Box::new(DelimSpec::new(&cloudphysics_config())))
            }
            TraceFormat::Delimited => {
                let d = delimited.ok_or_else(|| {
                    Error::Config(format!(
                        "trace_format = \"delimited\" needs a [flow.delimited] table describing the columns of {name}"
                    ))
                })?;
                validate_delimited(d).map_err(|m| Error::Config(format!("delimited.{m}")))?;
                Parser::Delimited(Box::new(DelimSpec::new(d)))
            }
        };
        Ok(TraceReader {
            name: name.to_string(),
            format,
            parser,
            lines,
            skip_malformed,
            counters: TraceCounters::default(),
            line_no: 0,
            rec_line_no: 0,
            rec_text: Vec::with_capacity(TEXT_BYTES),
            done: false,
            flushes: false,
            input: None,
            detection,
        })
    }

    /// Next request record, or `Ok(None)` at the end of the file.
    pub fn next_record(&mut self) -> Result<Option<TraceRecord>, Error> {
        if self.done {
            return Ok(None);
        }
        loop {
            let line = match self.lines.next_line() {
                Ok(Some(l)) => l,
                Ok(None) => {
                    self.done = true;
                    if self.counters.records == 0 {
                        return Err(self.no_requests());
                    }
                    return Ok(None);
                }
                Err(e) => {
                    self.done = true;
                    return Err(Error::Trace(format!(
                        "{}: read error after line {}: {e}",
                        self.name, self.line_no
                    )));
                }
            };
            self.line_no += 1;
            self.counters.lines += 1;
            let (start, end) = match line {
                Line::Text { start, end } => (start, end),
                Line::TooLong => {
                    let reason = format!("line longer than {MAX_LINE} bytes");
                    if let Some(e) = self.malformed(Cow::Owned(reason), None) {
                        return Err(e);
                    }
                    continue;
                }
            };
            let text = &self.lines.buf()[start..end];
            match self.parser.parse(text, self.line_no) {
                Ok(Parsed::Record(r)) => {
                    self.counters.records += 1;
                    self.rec_line_no = self.line_no;
                    self.rec_text.clear();
                    self.rec_text
                        .extend_from_slice(&text[..text.len().min(TEXT_BYTES)]);
                    return Ok(Some(r));
                }
                Ok(Parsed::NotRequest) => self.counters.not_requests += 1,
                Ok(Parsed::NoData) => self.counters.no_data += 1,
                Ok(Parsed::Flush(time_ns)) if self.flushes => {
                    self.counters.records += 1;
                    self.rec_line_no = self.line_no;
                    self.rec_text.clear();
                    self.rec_text
                        .extend_from_slice(&text[..text.len().min(TEXT_BYTES)]);
                    return Ok(Some(TraceRecord {
                        time_ns,
                        device: 0,
                        op: crate::workload::Op::Flush,
                        offset_bytes: 0,
                        bytes: 0,
                    }));
                }
                Ok(Parsed::Flush(_)) => self.counters.no_data += 1,
                Err(reason) => {
                    if let Some(e) = self.malformed(reason, Some((start, end))) {
                        return Err(e);
                    }
                }
            }
        }
    }

    /// Counts a skipped malformed line, or builds its error. `range` is the line in the
    /// buffer; `None` for an over-long line, whose head is kept aside.
    #[cold]
    fn malformed(
        &mut self,
        reason: Cow<'static, str>,
        range: Option<(usize, usize)>,
    ) -> Option<Error> {
        if self.skip_malformed {
            self.counters.skipped_malformed += 1;
            return None;
        }
        let text = match range {
            Some((s, e)) => &self.lines.buf()[s..e],
            None => self.lines.long_head(),
        };
        Some(Error::Trace(format!(
            "{}:{}: {reason}: `{}`",
            self.name,
            self.line_no,
            shown(text)
        )))
    }

    #[cold]
    fn no_requests(&self) -> Error {
        let c = &self.counters;
        Error::Trace(format!(
            "{}: no requests in the file (read as {}: {} lines, {} not requests, {} without data, \
             {} malformed skipped)",
            self.name,
            format_name(self.format),
            c.lines,
            c.not_requests,
            c.no_data,
            c.skipped_malformed
        ))
    }

    /// fio `sync`/`datasync` lines become Flush records (`on`) or count as `no_data`.
    pub fn take_flushes(&mut self, on: bool) {
        self.flushes = on;
    }

    pub fn counters(&self) -> TraceCounters {
        self.counters
    }

    /// The format in use (the detected one when opened with Auto).
    pub fn format(&self) -> TraceFormat {
        self.format
    }

    /// 1-based number of the line of the last returned record (0 before the first).
    pub fn line_number(&self) -> u64 {
        self.rec_line_no
    }

    /// Text of the line of the last returned record: lossy UTF-8, at most 200 characters.
    pub fn line_text(&self) -> String {
        shown(&self.rec_text)
    }

    /// The name used in messages (the path for [`TraceReader::open`]).
    pub fn name(&self) -> &str {
        &self.name
    }
}

#[cold]
fn unreachable_auto() -> Parser {
    // detect() never answers Auto; keep a harmless parser rather than a panic path.
    Parser::Mqsim
}

/// Lossy text cut at [`TEXT_CHARS`] characters ("..." marks a cut).
fn shown(text: &[u8]) -> String {
    let t = String::from_utf8_lossy(text);
    let t = t.trim_end_matches(['\r', '\n']);
    match t.char_indices().nth(TEXT_CHARS) {
        Some((i, _)) => format!("{}...", &t[..i]),
        None => t.to_string(),
    }
}

#[cold]
fn undetected(name: &str, first: Option<&[u8]>) -> Error {
    let names = DETECTABLE_FORMATS
        .iter()
        .map(|f| format_name(*f))
        .collect::<Vec<_>>()
        .join(", ");
    match first {
        None => Error::Trace(format!("{name}: empty file: no requests")),
        Some(l) => Error::Trace(format!(
            "{name}: cannot detect the trace format from the first line `{}`; set trace_format to one \
             of: {names}, disksim_pages (DiskSim with sizes in 4 KiB pages) or delimited (with a \
             [flow.delimited] table)",
            shown(trim(l))
        )),
    }
}

fn read_up_to(r: &mut Box<dyn Read + Send>, out: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < out.len() {
        match r.read(&mut out[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}
