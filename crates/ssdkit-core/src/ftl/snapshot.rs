//! Device snapshots: the whole FTL state in one compact, versioned, checksummed file, so a
//! preconditioned device is built once and reused by many runs.
//!
//! The page map is stored as the FTL holds it (`pagemap`): the base layout's formula
//! parameters and the chunks of the change tables that were ever written, so a device that
//! preconditioning described by a formula saves and loads in time proportional to its blocks,
//! not its pages. The body is one zstd frame, written and read as a stream.
//!
//! Layout (all integers little-endian):
//! ```text
//! "SSDKSNAP"  u32 version  u32 header length  header (JSON: device keys, precondition
//!             record, GC random-stream state, array lengths)
//! zstd frame of:
//!   base       u64 length, `pagemap::Base::encode` (empty, striped or fast layout; a fast
//!              layout's block counts less the blocks' counts below)
//!   l2p, p2l   each: u32 entries per chunk (`PageMap::chunk_len`), u64 chunks, then per
//!              chunk u64 index, u32 n entries that differ from the base, then (`dense`) the
//!              chunk's entries (u32 each, fewer at the table's end; 0 = as the base says), or
//!              n u16 offsets and n u32 entries
//!   written    u32 x blocks             valid       u32 x blocks
//!   erases     u32 x blocks             state       u8  x blocks
//!   close      u64 x blocks             modified    u64 x blocks, less close
//!   planes     per plane: user_open, gc_open, runs_since_wl, free count, free blocks (u32)
//!   u64 FTL clock
//!   cached mapping table: u32 partitions, then per partition u32 pages cached, their
//!              translation pages (u32, least recently used first), dirty flags (u8)
//! u32 CRC-32 of the header's bytes from the magic on and the frame's content
//! ```
//! Block and hybrid mapping (the header's `ftl.mapping` says which, with the hybrid
//! parameters; its `gc_rng` is absent) store a different frame:
//! ```text
//!   l2p        u32 x logical pages (NONE: unmapped)
//!   written    u32 x blocks             erases      u32 x blocks
//!   kind       u8  x blocks (0 free, 1 data, 2 log)   owner   u32 x blocks
//!   planes     per plane: user programs so far, free count, free blocks in allocation order
//!   counters   u64 x 13 (`stats_words`)
//!   hybrid:    u64 log clock, u64 x blocks allocation stamps, per plane: sequential log
//!              block (u32, NONE), u32 n, n log blocks (u32) and their stamps (u64), oldest
//!              first; "set" only: u32 x logical blocks log-block counts, then the blocks
//! ```
//! A snapshot is taken between runs, so no GC victim or merge is in flight.

use super::block::{BlockFtl, Kind};
use super::ops::GcPhase;
use super::page::blocks::{FreePool, PlaneState};
use super::page::pagemap::{Base, Table};
use super::{BlockState, Ftl, FtlStats, PageFtl, NONE};
use crate::config::{Config, Mapping};
use crate::error::Error;
use crate::result::PreconditionRecord;
use crate::settings::Settings;
use serde_json::{json, Value};
use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Read, Write};
use std::path::Path;

const MAGIC: &[u8; 8] = b"SSDKSNAP";
/// Bump on any change of the layout above. Version 2 added the cached mapping table (its
/// translation pages are logical pages past the host's in P2L, and its entries follow the
/// clock); version 3 stores the page map as a base and its changes, compressed.
pub const VERSION: u32 = 3;

/// zstd level of the body: the fastest that still squeezes the change tables' zeros and the
/// per-block arrays (level 3 made files a few per cent smaller at twice the time).
const ZSTD_LEVEL: i32 = 1;

/// The configuration keys that shape the stored state; a snapshot only loads into a
/// configuration that agrees on all of them.
pub(crate) fn device_keys(c: &Config) -> Vec<(&'static str, String)> {
    let f = &c.flash;
    vec![
        ("flash.channels", f.channels.to_string()),
        ("flash.chips_per_channel", f.chips_per_channel.to_string()),
        ("flash.dies_per_chip", f.dies_per_chip.to_string()),
        ("flash.planes_per_die", f.planes_per_die.to_string()),
        ("flash.blocks_per_plane", f.blocks_per_plane.to_string()),
        ("flash.pages_per_block", f.pages_per_block.to_string()),
        ("flash.page_size_bytes", f.page_size_bytes.to_string()),
        ("ftl.spare_factor", c.ftl.spare_factor.to_string()),
        ("ftl.allocation_order", c.ftl.allocation_order.clone()),
        // The scheme: its name, as snapshots of the page map have always recorded it, with
        // the hybrid scheme's parameters (they shape its log blocks).
        (
            "ftl.mapping",
            match c.ftl.mapping {
                Mapping::Hybrid {
                    log_blocks,
                    associativity,
                } => format!(
                    "{{ scheme = \"hybrid\", log_blocks = {log_blocks}, associativity = \"{}\" }}",
                    format!("{associativity:?}").to_lowercase()
                ),
                m => format!("\"{}\"", m.name()),
            },
        ),
        // Translation pages live in flash beside the data: a cached map's state loads only
        // into a cached map with the same pages (the entry size decides their number).
        (
            "ftl.cmt",
            match Settings::resolve(c).sizes.cmt {
                None => "ideal".to_string(),
                Some(m) => format!(
                    "cached: {} translation pages of {} entries of {} bytes{}",
                    m.translation_pages,
                    m.entries_per_tpage,
                    m.entry_bytes,
                    // The cache's saved state names entries, not pages, with this.
                    if c.ftl.cmt.granularity == crate::config::CmtGranularity::Entry {
                        ", cached by entry"
                    } else {
                        ""
                    }
                ),
            },
        ),
    ]
}

/// A chunk of the change tables with `n` changed entries of `len` is stored whole, else as
/// (u16 offset, u32 entry) pairs: whichever is smaller.
fn dense(n: usize, len: usize) -> bool {
    6 * n >= 4 * len
}

/// Writes the CRC of everything that passes through.
struct CrcWriter<W: Write> {
    inner: W,
    crc: crc32fast::Hasher,
}
impl<W: Write> CrcWriter<W> {
    fn put(&mut self, b: &[u8]) -> std::io::Result<()> {
        self.crc.update(b);
        self.inner.write_all(b)
    }
    fn u32s(&mut self, v: &[u32]) -> std::io::Result<()> {
        let mut buf = Vec::with_capacity(64 * 1024);
        for chunk in v.chunks(16 * 1024) {
            buf.clear();
            for x in chunk {
                buf.extend_from_slice(&x.to_le_bytes());
            }
            self.put(&buf)?;
        }
        Ok(())
    }
    fn u64s(&mut self, v: &[u64]) -> std::io::Result<()> {
        let mut buf = Vec::with_capacity(64 * 1024);
        for chunk in v.chunks(8 * 1024) {
            buf.clear();
            for x in chunk {
                buf.extend_from_slice(&x.to_le_bytes());
            }
            self.put(&buf)?;
        }
        Ok(())
    }
}

/// Saves the state of `ftl` (built from `c`) with its preconditioning record. A regular file
/// (or a new path) is written to a temporary file beside it and renamed over it, so a crash
/// never leaves a half-written snapshot; through a symlink, its target is replaced. An existing
/// device, pipe or socket is written in place: renaming over `/dev/null` would replace the
/// device node. Returns the number of bytes written.
pub fn save(
    ftl: &Ftl,
    c: &Config,
    precondition: &PreconditionRecord,
    path: &Path,
) -> Result<u64, Error> {
    if ftl
        .page()
        .is_some_and(|f| f.planes.iter().any(|p| p.gc != GcPhase::Idle))
    {
        return Err(Error::Simulation(
            "snapshot requested while garbage collection is in flight".into(),
        ));
    }
    if let Some(f) = ftl.block() {
        if f.has_ops() || (0..f.geo.planes()).any(|p| f.busy(p)) {
            return Err(Error::Simulation(
                "snapshot requested while a merge is in flight".into(),
            ));
        }
    }
    let io =
        |e: std::io::Error| Error::Io(format!("{}: cannot write snapshot: {e}", path.display()));
    match std::fs::metadata(path) {
        Ok(m) if m.is_dir() => Err(Error::Io(format!(
            "{}: cannot write snapshot: it is a directory",
            path.display()
        ))),
        Ok(m) if !m.is_file() => {
            let file = std::fs::OpenOptions::new()
                .write(true)
                .open(path)
                .map_err(io)?;
            write_file(ftl, c, precondition, file, path)
        }
        _ => {
            let target = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
            // A fresh name per call (process id, time, counter), created exclusively: two
            // writers of the same output never share a temporary file, and an existing file
            // that happens to have the name is never truncated.
            static SEQ: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
            let nanos = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.subsec_nanos())
                .unwrap_or(0);
            let seq = SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let mut tmp_name = target.as_os_str().to_owned();
            tmp_name.push(format!(".{}-{nanos:08x}-{seq}.partial", std::process::id()));
            let tmp = std::path::PathBuf::from(tmp_name);
            let file = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&tmp)
                .map_err(io)?;
            let result = write_file(ftl, c, precondition, file, path).and_then(|n| {
                std::fs::rename(&tmp, &target).map_err(io)?;
                Ok(n)
            });
            if result.is_err() {
                let _ = std::fs::remove_file(&tmp);
            }
            result
        }
    }
}

/// Counts the bytes that reach the file (a device's size says nothing about them).
struct Counted<W: Write> {
    inner: W,
    bytes: u64,
}
impl<W: Write> Write for Counted<W> {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(b)?;
        self.bytes += n as u64;
        Ok(n)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

fn write_file(
    ftl: &Ftl,
    c: &Config,
    precondition: &PreconditionRecord,
    file: File,
    path: &Path,
) -> Result<u64, Error> {
    let io =
        |e: std::io::Error| Error::Io(format!("{}: cannot write snapshot: {e}", path.display()));
    let regular = file.metadata().map(|m| m.is_file()).unwrap_or(false);
    let mut w = CrcWriter {
        inner: BufWriter::with_capacity(
            1 << 20,
            Counted {
                inner: file,
                bytes: 0,
            },
        ),
        crc: crc32fast::Hasher::new(),
    };
    let keys: serde_json::Map<String, Value> = device_keys(c)
        .into_iter()
        .map(|(k, v)| (k.to_string(), Value::String(v)))
        .collect();
    let header = match (ftl.page(), ftl.block()) {
        (Some(ftl), _) => json!({
            "ssdkit_version": env!("CARGO_PKG_VERSION"),
            "device": keys,
            "precondition": precondition,
            "gc_rng": serde_json::to_value(&ftl.gc_rng).expect("rng state serialises"),
            "physical_pages": ftl.map.physical_len(),
            "blocks": ftl.written.len(),
            "logical_pages": ftl.logical_pages,
        }),
        (None, Some(f)) => json!({
            "ssdkit_version": env!("CARGO_PKG_VERSION"),
            "device": keys,
            "precondition": precondition,
            "physical_pages": f.p2l.len(),
            "blocks": f.written.len(),
            "logical_pages": f.logical_pages,
        }),
        (None, None) => unreachable!("every FTL is of one scheme"),
    };
    let h = serde_json::to_vec(&header).expect("header serialises");
    w.put(MAGIC).map_err(io)?;
    w.put(&VERSION.to_le_bytes()).map_err(io)?;
    w.put(&(h.len() as u32).to_le_bytes()).map_err(io)?;
    w.put(&h).map_err(io)?;
    let CrcWriter { inner, crc } = w;
    let mut w = CrcWriter {
        inner: zstd::stream::write::Encoder::new(inner, ZSTD_LEVEL).map_err(io)?,
        crc,
    };
    let Some(ftl) = ftl.page() else {
        write_block_body(ftl.block().expect("a block-mapped FTL"), &mut w).map_err(io)?;
        return finish_file(w, regular).map_err(io);
    };
    let base = ftl
        .map
        .base()
        .encode(|b| (ftl.valid[b as usize], ftl.written[b as usize]));
    w.put(&(base.len() as u64).to_le_bytes()).map_err(io)?;
    w.put(&base).map_err(io)?;
    for table in [Table::L2p, Table::P2l] {
        let chunks = ftl.map.touched_chunks(table);
        w.put(&(ftl.map.chunk_len(table) as u32).to_le_bytes())
            .map_err(io)?;
        w.put(&(chunks.len() as u64).to_le_bytes()).map_err(io)?;
        for i in chunks {
            w.put(&(i as u64).to_le_bytes()).map_err(io)?;
            let e = ftl.map.chunk(table, i);
            let n = e.iter().filter(|&&v| v != 0).count();
            w.put(&(n as u32).to_le_bytes()).map_err(io)?;
            if dense(n, e.len()) {
                w.u32s(&e).map_err(io)?;
            } else {
                let (mut at, mut values) = (Vec::with_capacity(n * 2), Vec::with_capacity(n));
                for (o, &v) in e.iter().enumerate().filter(|e| *e.1 != 0) {
                    at.extend_from_slice(&(o as u16).to_le_bytes());
                    values.push(v);
                }
                w.put(&at).map_err(io)?;
                w.u32s(&values).map_err(io)?;
            }
        }
    }
    w.u32s(&ftl.written).map_err(io)?;
    w.u32s(&ftl.valid).map_err(io)?;
    w.u32s(&ftl.erase_count).map_err(io)?;
    let states: Vec<u8> = ftl
        .block_state
        .iter()
        .map(|s| match s {
            BlockState::Free => 0,
            BlockState::Open => 1,
            BlockState::Closed => 2,
            BlockState::Victim => 3,
        })
        .collect();
    w.put(&states).map_err(io)?;
    w.u64s(&ftl.close_stamp).map_err(io)?;
    // Most blocks last changed when they closed: zeros.
    let since_close: Vec<u64> = (ftl.mod_stamp.iter().zip(&ftl.close_stamp))
        .map(|(m, c)| m.wrapping_sub(*c))
        .collect();
    w.u64s(&since_close).map_err(io)?;
    for p in &ftl.planes {
        let free: Vec<u32> = p.free.in_arrival_order();
        w.u32s(&[p.open[0], p.open[1], p.runs_since_wl, free.len() as u32])
            .map_err(io)?;
        w.u32s(&free).map_err(io)?;
    }
    w.put(&ftl.clock.to_le_bytes()).map_err(io)?;
    let parts = ftl.cmt.as_ref().map(|m| m.pages()).unwrap_or_default();
    w.u32s(&[parts.len() as u32]).map_err(io)?;
    for p in &parts {
        let lpns: Vec<u32> = p.iter().map(|e| e.0).collect();
        let dirty: Vec<u8> = p.iter().map(|e| u8::from(e.1)).collect();
        w.u32s(&[lpns.len() as u32]).map_err(io)?;
        w.u32s(&lpns).map_err(io)?;
        w.put(&dirty).map_err(io)?;
    }
    finish_file(w, regular).map_err(io)
}

type BodyWriter = CrcWriter<zstd::stream::write::Encoder<'static, BufWriter<Counted<File>>>>;

/// Ends the compressed body, appends the checksum and syncs a regular file. Returns the
/// bytes written.
fn finish_file(w: BodyWriter, regular: bool) -> std::io::Result<u64> {
    let crc = w.crc.clone().finalize();
    let mut w = w.inner.finish()?;
    w.write_all(&crc.to_le_bytes())?;
    let counted = w.into_inner().map_err(|e| e.into_error())?;
    if regular {
        // Durable before it replaces anything: a crash must not leave a torn snapshot. (Pipes
        // and most devices refuse fsync.)
        counted.inner.sync_all()?;
    }
    Ok(counted.bytes)
}

/// The FTL counters block and hybrid snapshots keep (merges included), in this order.
fn stats_words(s: &FtlStats) -> [u64; 13] {
    let m = &s.merges;
    [
        s.user_page_writes,
        s.gc_page_moves,
        s.gc_runs,
        s.gc_background_runs,
        s.gc_copyback_moves,
        s.wl_migrations,
        s.trimmed_pages,
        s.mapping_page_writes,
        s.gc_translation_moves,
        m.switch,
        m.partial,
        m.full,
        m.page_copies,
    ]
}

fn stats_from(w: [u64; 13]) -> FtlStats {
    FtlStats {
        user_page_writes: w[0],
        gc_page_moves: w[1],
        gc_runs: w[2],
        gc_background_runs: w[3],
        gc_copyback_moves: w[4],
        wl_migrations: w[5],
        trimmed_pages: w[6],
        mapping_page_writes: w[7],
        gc_translation_moves: w[8],
        merges: crate::result::MergeCounts {
            switch: w[9],
            partial: w[10],
            full: w[11],
            page_copies: w[12],
        },
        // Host-command counts (TRIM commands, read-modify-write and unmapped reads) start
        // at zero with each run, as the page scheme's do: they are not saved.
        ..Default::default()
    }
}

/// The body of a block or hybrid snapshot (layout in the module's documentation). The
/// reverse map and valid counts follow from the L2P table, a logical block's data block from
/// the blocks' kinds and owners: they are rebuilt on load, not stored.
fn write_block_body<W: Write>(f: &BlockFtl, w: &mut CrcWriter<W>) -> std::io::Result<()> {
    w.u32s(&f.l2p)?;
    w.u32s(&f.written)?;
    w.u32s(&f.erase_count)?;
    let kinds: Vec<u8> = f
        .kind
        .iter()
        .map(|k| match k {
            Kind::Free => 0,
            Kind::Data => 1,
            Kind::Log => 2,
            Kind::Erasing => unreachable!("no merge in flight at a snapshot"),
        })
        .collect();
    w.put(&kinds)?;
    w.u32s(&f.owner)?;
    for (p, free) in f.free.iter().enumerate() {
        w.u32s(&[f.rot[p], free.len() as u32])?;
        w.u32s(&free.iter().copied().collect::<Vec<_>>())?;
    }
    w.u64s(&stats_words(&f.stats))?;
    if let Some(l) = &f.logs {
        w.u64s(&[l.clock])?;
        w.u64s(&l.stamp)?;
        for p in 0..f.free.len() {
            let order = &l.order[p];
            w.u32s(&[l.sw[p].unwrap_or(NONE), order.len() as u32])?;
            w.u32s(&order.iter().map(|e| e.0).collect::<Vec<_>>())?;
            w.u64s(&order.iter().map(|e| e.1).collect::<Vec<_>>())?;
        }
        if !l.full {
            w.u32s(&l.of.iter().map(|v| v.len() as u32).collect::<Vec<_>>())?;
            w.u32s(&l.of.iter().flatten().copied().collect::<Vec<_>>())?;
        }
    }
    Ok(())
}

struct CrcReader<R: Read> {
    inner: R,
    crc: crc32fast::Hasher,
    origin: String,
    /// Reading the compressed body: a decoding error means damaged bytes.
    body: bool,
    /// Bytes of the integers being read, kept between calls (the change tables come in
    /// thousands of small reads).
    buf: Vec<u8>,
}
impl<R: BufRead> CrcReader<R> {
    /// The reader of the compressed body that follows the header (one zstd frame), checksum
    /// and buffer carried on.
    fn into_body(self) -> Result<CrcReader<zstd::stream::read::Decoder<'static, R>>, Error> {
        let dec = zstd::stream::read::Decoder::with_buffer(self.inner)
            .map_err(|e| Error::Io(format!("{}: cannot read snapshot: {e}", self.origin)))?
            .single_frame();
        Ok(CrcReader {
            inner: dec,
            crc: self.crc,
            origin: self.origin,
            body: true,
            buf: self.buf,
        })
    }
}

impl<R: Read> CrcReader<R> {
    fn get(&mut self, buf: &mut [u8]) -> Result<(), Error> {
        self.inner.read_exact(buf).map_err(|e| {
            if e.kind() == std::io::ErrorKind::UnexpectedEof {
                Error::Io(format!("{}: snapshot is truncated", self.origin))
            } else if self.body && e.kind() == std::io::ErrorKind::Other {
                Error::Io(format!(
                    "{}: snapshot is corrupt (its compressed body does not decode, found before the checksum: {e})",
                    self.origin
                ))
            } else {
                Error::Io(format!("{}: cannot read snapshot: {e}", self.origin))
            }
        })?;
        self.crc.update(buf);
        Ok(())
    }
    fn u32(&mut self) -> Result<u32, Error> {
        let mut b = [0u8; 4];
        self.get(&mut b)?;
        Ok(u32::from_le_bytes(b))
    }
    fn u32s(&mut self, out: &mut [u32]) -> Result<(), Error> {
        let mut buf = std::mem::take(&mut self.buf);
        buf.resize(64 * 1024, 0);
        for chunk in out.chunks_mut(16 * 1024) {
            let b = &mut buf[..chunk.len() * 4];
            self.get(b)?;
            for (x, c) in chunk.iter_mut().zip(b.chunks_exact(4)) {
                *x = u32::from_le_bytes(c.try_into().expect("4 bytes"));
            }
        }
        self.buf = buf;
        Ok(())
    }
    fn u64s(&mut self, out: &mut [u64]) -> Result<(), Error> {
        let mut buf = std::mem::take(&mut self.buf);
        buf.resize(64 * 1024, 0);
        for chunk in out.chunks_mut(8 * 1024) {
            let b = &mut buf[..chunk.len() * 8];
            self.get(b)?;
            for (x, c) in chunk.iter_mut().zip(b.chunks_exact(8)) {
                *x = u64::from_le_bytes(c.try_into().expect("8 bytes"));
            }
        }
        self.buf = buf;
        Ok(())
    }
}

/// Loads a snapshot into a fresh FTL for `c`. Refuses a file that is not a snapshot, of
/// another version, damaged (checksum), truncated, or taken on a device that differs from
/// `c` in any key of `device_keys` (the message names each differing key). Returns the FTL
/// and the snapshot's preconditioning record.
pub fn load(c: &Config, path: &Path) -> Result<(Ftl, PreconditionRecord), Error> {
    let origin = path.display().to_string();
    let bad = |m: String| Error::Io(format!("{origin}: {m}"));
    // Opening a directory succeeds on Unix; its first read fails, which would read as a
    // file too short to be a snapshot.
    if path.is_dir() {
        return Err(bad(
            "is a directory, not a snapshot file (`ssdkit precondition CONFIG -o FILE` writes one)"
                .into(),
        ));
    }
    let file = File::open(path).map_err(|e| bad(format!("cannot open snapshot: {e}")))?;
    let mut r = CrcReader {
        inner: BufReader::with_capacity(1 << 20, file),
        crc: crc32fast::Hasher::new(),
        origin: origin.clone(),
        body: false,
        buf: Vec::new(),
    };
    let mut magic = [0u8; 8];
    r.get(&mut magic).map_err(|e| match e {
        Error::Io(m) if m.ends_with("snapshot is truncated") => {
            bad("not an ssdkit snapshot (too short)".into())
        }
        other => other,
    })?;
    if &magic != MAGIC {
        return Err(bad("not an ssdkit snapshot (bad magic bytes)".into()));
    }
    let version = r.u32()?;
    if version != VERSION {
        return Err(bad(format!(
            "snapshot format version {version}; this ssdkit reads version {VERSION} (version 2 added the cached mapping table, version 3 stores the page map as a layout and its changes, compressed): precondition again to make a new snapshot (`ssdkit precondition`)"
        )));
    }
    let hlen = r.u32()? as usize;
    if hlen > 1 << 24 {
        return Err(bad(format!("corrupt snapshot header length {hlen}")));
    }
    let mut h = vec![0u8; hlen];
    r.get(&mut h)?;
    let header: Value = serde_json::from_slice(&h).map_err(|e| {
        bad(format!(
            "snapshot is corrupt: its header does not parse, found before the checksum ({e})"
        ))
    })?;
    let mut diffs = Vec::new();
    for (k, v) in device_keys(c) {
        let saved = header["device"][k].as_str().unwrap_or("<missing>");
        if saved != v {
            diffs.push(format!(
                "{k} = {saved} in the snapshot but {v} in the configuration{}",
                if k == "ftl.mapping" {
                    " (a snapshot holds one mapping scheme's state)"
                } else {
                    ""
                }
            ));
        }
    }
    if !diffs.is_empty() {
        return Err(bad(format!(
            "snapshot was taken on a different device: {}; use the configuration it was made with, or precondition again",
            diffs.join("; ")
        )));
    }
    if c.ftl.mapping != (Mapping::Page {}) {
        return load_block(c, &header, r);
    }
    let mut ftl = PageFtl::unbuilt(&Settings::resolve(c));
    let g = ftl.geo;
    if header["physical_pages"].as_u64() != Some(g.total_pages())
        || header["blocks"].as_u64() != Some(g.total_blocks() as u64)
        || header["logical_pages"].as_u64() != Some(ftl.logical_pages as u64)
    {
        return Err(bad("corrupt snapshot header (array sizes)".into()));
    }
    // The GC stream is the device's (seeded by `precondition.seed`): the run continues it
    // from where preconditioning left it, as a run that preconditions itself does.
    ftl.gc_rng = serde_json::from_value(header["gc_rng"].clone())
        .map_err(|e| bad(format!("corrupt snapshot header (gc_rng): {e}")))?;
    let mut r = r.into_body()?;
    // Found before the checksum is reached: a count that cannot be, in damaged bytes.
    let corrupt = |m: String| {
        bad(format!(
            "snapshot is corrupt ({m}, found before the checksum)"
        ))
    };
    let mut len = [0u8; 8];
    r.get(&mut len)?;
    let len = u64::from_le_bytes(len);
    // A fast layout stores a few words per plane and per block, and its occupied ranges (two
    // per flow at most): anything far larger is damage, not a layout to allocate for.
    if len > (1 << 20) + 64 * g.total_blocks() as u64 + 32 * g.planes() as u64 {
        return Err(corrupt(format!("a page-map base of {len} bytes")));
    }
    let mut base = vec![0u8; len as usize];
    r.get(&mut base)?;
    // The change tables go straight into the map (no second copy); they are checked with the
    // base once the checksum passed.
    let most = ftl
        .map
        .chunk_len(Table::L2p)
        .max(ftl.map.chunk_len(Table::P2l));
    let mut entries = vec![0u32; most];
    let mut at = vec![0u16; most];
    let mut at_bytes = vec![0u8; 2 * most];
    // The first chunk that could not be loaded, reported once the checksum passed.
    let mut unloadable: Option<String> = None;
    for table in [Table::L2p, Table::P2l] {
        let len = match table {
            Table::L2p => ftl.map.logical_len(),
            Table::P2l => ftl.map.physical_len(),
        };
        let chunk = ftl.map.chunk_len(table);
        let stored = r.u32()? as usize;
        if stored != chunk {
            return Err(corrupt(format!(
                "{table:?} chunks of {stored} entries, where this device's have {chunk}"
            )));
        }
        let mut n = [0u8; 8];
        r.get(&mut n)?;
        let n = u64::from_le_bytes(n);
        if n > len.div_ceil(chunk) as u64 {
            return Err(corrupt(format!(
                "{n} chunks of a {table:?} table of {len} entries"
            )));
        }
        let mut last = None;
        for _ in 0..n {
            let mut i = [0u8; 8];
            r.get(&mut i)?;
            let i = u64::from_le_bytes(i);
            if i >= len.div_ceil(chunk) as u64 || last.is_some_and(|l| l >= i) {
                return Err(corrupt(format!(
                    "{table:?} chunk {i} out of order or range"
                )));
            }
            last = Some(i);
            let size = (len - i as usize * chunk).min(chunk);
            let n = r.u32()? as usize;
            if n > size {
                return Err(corrupt(format!(
                    "{n} changes in a {table:?} chunk of {size}"
                )));
            }
            if dense(n, size) {
                let part = &mut entries[..size];
                r.u32s(part)?;
                if let Err(m) = ftl.map.load_chunk(table, i as usize, None, part) {
                    unloadable.get_or_insert(m);
                }
            } else {
                r.get(&mut at_bytes[..2 * n])?;
                for (o, b) in at.iter_mut().zip(at_bytes[..2 * n].chunks_exact(2)) {
                    *o = u16::from_le_bytes([b[0], b[1]]);
                }
                let part = &mut entries[..n];
                r.u32s(part)?;
                if let Err(m) = ftl.map.load_chunk(table, i as usize, Some(&at[..n]), part) {
                    unloadable.get_or_insert(m);
                }
            }
        }
    }
    r.u32s(&mut ftl.written)?;
    r.u32s(&mut ftl.valid)?;
    r.u32s(&mut ftl.erase_count)?;
    let mut states = vec![0u8; g.total_blocks() as usize];
    r.get(&mut states)?;
    r.u64s(&mut ftl.close_stamp)?;
    r.u64s(&mut ftl.mod_stamp)?;
    for (m, c) in ftl.mod_stamp.iter_mut().zip(&ftl.close_stamp) {
        *m = m.wrapping_add(*c);
    }
    let bpp = g.blocks_per_plane;
    let mut planes = Vec::with_capacity(g.planes() as usize);
    for p in 0..g.planes() {
        let user_open = r.u32()?;
        let gc_open = r.u32()?;
        let runs_since_wl = r.u32()?;
        let n = r.u32()?;
        if n > bpp {
            return Err(corrupt(format!("plane {p} lists {n} free blocks")));
        }
        let mut listed = vec![0u32; n as usize];
        r.u32s(&mut listed)?;
        if let Some(b) = listed.iter().find(|&&b| b / bpp != p) {
            return Err(corrupt(format!(
                "plane {p} lists free block {b} of another plane"
            )));
        }
        let free = FreePool::from_blocks(
            ftl.wl_dynamic,
            listed.iter().map(|&b| (b, ftl.erase_count[b as usize])),
        );
        for b in [user_open, gc_open] {
            if b != NONE && b / bpp != p {
                return Err(corrupt(format!(
                    "plane {p} has open block {b} of another plane"
                )));
            }
        }
        planes.push(PlaneState {
            free,
            open: [user_open, gc_open],
            gc: GcPhase::Idle,
            runs_since_wl,
        });
    }
    let mut clock = [0u8; 8];
    r.get(&mut clock)?;
    let nparts = r.u32()?;
    if nparts > 1 << 16 {
        return Err(corrupt(format!("{nparts} mapping-cache partitions")));
    }
    let mut cmt_parts = Vec::with_capacity(nparts as usize);
    for _ in 0..nparts {
        let n = r.u32()?;
        let units = ftl
            .cmt
            .as_ref()
            .map_or(ftl.translation_pages(), |m| m.units());
        if n as u64 > units {
            return Err(corrupt(format!("{n} cached mapping units of {units}")));
        }
        let mut lpns = vec![0u32; n as usize];
        r.u32s(&mut lpns)?;
        let mut dirty = vec![0u8; n as usize];
        r.get(&mut dirty)?;
        cmt_parts.push((lpns, dirty));
    }
    end_body(r)?;
    let planes_n = g.planes();
    let base = Base::decode(
        &base,
        planes_n,
        g.blocks_per_plane,
        g.pages_per_block,
        |b| (ftl.valid[b as usize], ftl.written[b as usize]),
    )
    .map_err(|m| bad(format!("inconsistent snapshot: {m}")))?;
    ftl.map.load_base(base);
    if let Some(m) = unloadable {
        return Err(bad(format!("inconsistent snapshot: {m}")));
    }
    ftl.clock = u64::from_le_bytes(clock);
    for (s, &b) in ftl.block_state.iter_mut().zip(&states) {
        *s = match b {
            0 => BlockState::Free,
            1 => BlockState::Open,
            2 => BlockState::Closed,
            _ => return Err(bad(format!("corrupt snapshot: block state {b}"))),
        };
    }
    ftl.planes = planes;
    let ppb = g.pages_per_block;
    for b in 0..g.total_blocks() as usize {
        if ftl.valid[b] > ftl.written[b] || ftl.written[b] > ppb {
            return Err(bad(format!(
                "inconsistent snapshot: block {b} has {} valid of {} written pages ({ppb} per block)",
                ftl.valid[b], ftl.written[b]
            )));
        }
    }
    for (p, ps) in ftl.planes.iter().enumerate() {
        for b in ps.free.in_arrival_order() {
            if ftl.block_state[b as usize] != BlockState::Free {
                return Err(bad(format!(
                    "inconsistent snapshot: plane {p} lists block {b} as free but its state is {:?}",
                    ftl.block_state[b as usize]
                )));
            }
        }
        for &b in &ps.open {
            if b != NONE && ftl.block_state[b as usize] != BlockState::Open {
                return Err(bad(format!(
                    "inconsistent snapshot: plane {p}'s open block {b} is not open"
                )));
            }
        }
    }
    // Past the checksum, the map's entries are in range (checked as they were loaded). That
    // both directions agree is checked in debug builds (the tests): it costs random accesses
    // to both tables per changed page, more than loading them, and only a faulty writer
    // (this file's `save`) could break it.
    if cfg!(debug_assertions) {
        ftl.map
            .check()
            .map_err(|m| bad(format!("inconsistent snapshot: {m}")))?;
    }
    ftl.rebuild_index();
    // The cache as it was: pages re-inserted least recently used first, into the same
    // partitions (the last one when this configuration has fewer); a smaller cache keeps the
    // most recently used.
    if let Some(cmt) = ftl.cmt.as_mut() {
        let last = cmt.partitions() - 1;
        let units = cmt.units();
        for (p, (pages, dirty)) in cmt_parts.iter().enumerate() {
            for (&l, &d) in pages.iter().zip(dirty) {
                if l as u64 >= units {
                    return Err(bad(format!(
                        "inconsistent snapshot: cached mapping unit {l} of {units}"
                    )));
                }
                // A write-back forced by a smaller cache happened before the run: no
                // traffic to account.
                let _ = cmt.restore(l, p.min(last), d != 0);
            }
        }
    }
    let rec = serde_json::from_value(header["precondition"].clone())
        .map_err(|e| bad(format!("snapshot header: preconditioning record: {e}")))?;
    Ok((Ftl::from_page(ftl), rec))
}

/// Reads the end of the compressed body and the checksum after it: the frame must end where
/// its content does, the checksum must match, and nothing may follow it.
fn end_body<R: std::io::BufRead>(
    mut r: CrcReader<zstd::stream::read::Decoder<'static, R>>,
) -> Result<(), Error> {
    let origin = r.origin.clone();
    let bad = |m: String| Error::Io(format!("{origin}: {m}"));
    let corrupt = |m: String| {
        bad(format!(
            "snapshot is corrupt ({m}, found before the checksum)"
        ))
    };
    let expected = r.crc.clone().finalize();
    // The frame must end where its content does (this also reads the frame's epilogue).
    let mut extra = [0u8; 1];
    match r.inner.read(&mut extra) {
        Ok(0) => {}
        Ok(_) => return Err(corrupt("bytes past the end of the compressed body".into())),
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => {
            return Err(bad("snapshot is truncated".into()))
        }
        Err(e) => return Err(corrupt(format!("its compressed body does not decode: {e}"))),
    }
    let mut file = r.inner.finish();
    let mut crc = [0u8; 4];
    file.read_exact(&mut crc)
        .map_err(|_| bad("snapshot is truncated (no checksum)".into()))?;
    if u32::from_le_bytes(crc) != expected {
        return Err(bad("snapshot is corrupt (checksum mismatch)".into()));
    }
    if file.read(&mut extra).unwrap_or(0) != 0 {
        return Err(bad("snapshot has trailing bytes after its checksum".into()));
    }
    Ok(())
}

/// Loads the body of a block or hybrid snapshot whose header agreed with `c` (so the scheme
/// and its parameters are `c`'s), then rebuilds and checks what it does not store.
fn load_block<R: std::io::BufRead>(
    c: &Config,
    header: &Value,
    r: CrcReader<R>,
) -> Result<(Ftl, PreconditionRecord), Error> {
    let origin = r.origin.clone();
    let bad = |m: String| Error::Io(format!("{origin}: {m}"));
    let corrupt = |m: String| {
        bad(format!(
            "snapshot is corrupt ({m}, found before the checksum)"
        ))
    };
    let mut f = BlockFtl::new(&Settings::resolve(c));
    let g = f.geo;
    let (nb, planes, bpp, ppb) = (
        g.total_blocks() as usize,
        g.planes() as usize,
        g.blocks_per_plane,
        f.ppb,
    );
    if header["physical_pages"].as_u64() != Some(g.total_pages())
        || header["blocks"].as_u64() != Some(nb as u64)
        || header["logical_pages"].as_u64() != Some(f.logical_pages as u64)
    {
        return Err(bad("corrupt snapshot header (array sizes)".into()));
    }
    let mut r = r.into_body()?;
    r.u32s(&mut f.l2p)?;
    r.u32s(&mut f.written)?;
    r.u32s(&mut f.erase_count)?;
    let mut kinds = vec![0u8; nb];
    r.get(&mut kinds)?;
    r.u32s(&mut f.owner)?;
    let mut free = Vec::with_capacity(planes);
    for p in 0..planes {
        f.rot[p] = r.u32()?;
        let n = r.u32()?;
        if n > bpp {
            return Err(corrupt(format!("plane {p} lists {n} free blocks")));
        }
        let mut listed = vec![0u32; n as usize];
        r.u32s(&mut listed)?;
        free.push(listed);
    }
    let mut words = [0u64; 13];
    r.u64s(&mut words)?;
    f.stats = stats_from(words);
    let lblocks = f.data.len();
    if let Some(l) = f.logs.as_mut() {
        let mut clock = [0u64; 1];
        r.u64s(&mut clock)?;
        l.clock = clock[0];
        r.u64s(&mut l.stamp)?;
        for p in 0..planes {
            let sw = r.u32()?;
            let n = r.u32()? as usize;
            if n > nb {
                return Err(corrupt(format!("plane {p} lists {n} log blocks")));
            }
            let (mut bs, mut st) = (vec![0u32; n], vec![0u64; n]);
            r.u32s(&mut bs)?;
            r.u64s(&mut st)?;
            l.sw[p] = (sw != NONE).then_some(sw);
            l.order[p] = bs.into_iter().zip(st).collect();
        }
        if !l.full {
            let mut counts = vec![0u32; lblocks];
            r.u32s(&mut counts)?;
            let total: u64 = counts.iter().map(|&n| n as u64).sum();
            if total > nb as u64 {
                return Err(corrupt(format!("{total} log blocks of {nb} blocks")));
            }
            for (of, &n) in l.of.iter_mut().zip(&counts) {
                of.resize(n as usize, 0);
                r.u32s(of)?;
            }
        }
    }
    end_body(r)?;
    // Past the checksum: what a faulty writer could still get wrong is refused, so that no
    // index below goes out of range.
    let inconsistent = |m: String| bad(format!("inconsistent snapshot: {m}"));
    for (b, &k) in kinds.iter().enumerate() {
        f.kind[b] = match k {
            0 => Kind::Free,
            1 => Kind::Data,
            2 => Kind::Log,
            _ => return Err(inconsistent(format!("block {b} has kind {k}"))),
        };
        if f.written[b] > ppb {
            return Err(inconsistent(format!(
                "block {b} has {} pages written of {ppb}",
                f.written[b]
            )));
        }
        if f.kind[b] == Kind::Data {
            let lbn = f.owner[b];
            if lbn as usize >= lblocks || f.data[lbn as usize] != NONE {
                return Err(inconsistent(format!(
                    "data block {b} of logical block {lbn}"
                )));
            }
            if f.plane_of_lbn(lbn) != b as u32 / bpp {
                return Err(inconsistent(format!(
                    "logical block {lbn}'s data block {b} is in another plane"
                )));
            }
            f.data[lbn as usize] = b as u32;
            f.unmapped[(b as u32 / bpp) as usize] -= 1;
        }
    }
    let mut listed = vec![false; nb];
    for (p, blocks) in free.iter().enumerate() {
        for &b in blocks {
            if b as usize >= nb
                || b / bpp != p as u32
                || listed[b as usize]
                || f.kind[b as usize] != Kind::Free
            {
                return Err(inconsistent(format!("plane {p} lists block {b} as free")));
            }
            listed[b as usize] = true;
        }
        f.free[p] = blocks.iter().copied().collect();
    }
    for (l, &p) in f.l2p.iter().enumerate() {
        if p == NONE {
            continue;
        }
        let b = (p / ppb) as usize;
        if b >= nb || p % ppb >= f.written[b] || f.p2l[p as usize] != NONE {
            return Err(inconsistent(format!("logical page {l} maps to page {p}")));
        }
        f.p2l[p as usize] = l as u32;
        f.valid[b] += 1;
    }
    if let Some(l) = &f.logs {
        let log = |b: u32| (b as usize) < nb && f.kind[b as usize] == Kind::Log;
        let listed = l.order.iter().flatten().map(|e| e.0);
        if let Some(b) = l.sw.iter().flatten().copied().find(|&b| !log(b)) {
            return Err(inconsistent(format!(
                "sequential log block {b} is not a log block"
            )));
        }
        if let Some(b) = l.of.iter().flatten().copied().find(|&b| !log(b)) {
            return Err(inconsistent(format!("log block {b} is not a log block")));
        }
        // "set" keeps merged blocks' entries (skipped by their stamp): any block will do.
        if let Some(b) = listed
            .clone()
            .find(|&b| b as usize >= nb || (l.full && !log(b)))
        {
            return Err(inconsistent(format!("log pool block {b}")));
        }
    }
    f.check_invariants().map_err(inconsistent)?;
    let rec = serde_json::from_value(header["precondition"].clone())
        .map_err(|e| bad(format!("snapshot header: preconditioning record: {e}")))?;
    Ok((Ftl::from_block(f), rec))
}
