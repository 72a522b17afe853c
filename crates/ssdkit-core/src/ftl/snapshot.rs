//! Device snapshots: the whole FTL state in one compact, versioned, checksummed file, so a
//! preconditioned device is built once and reused by many runs.
//!
//! Layout (all integers little-endian):
//! ```text
//! "SSDKSNAP"  u32 version  u32 header length  header (JSON: device keys, precondition
//!             record, GC random-stream state, array lengths)
//! p2l        u32 x physical pages     (L2P is rebuilt from it on load)
//! written    u32 x blocks             valid       u32 x blocks
//! erases     u32 x blocks             state       u8  x blocks
//! close      u64 x blocks             modified    u64 x blocks
//! planes     per plane: user_open, gc_open, runs_since_wl, free count, free blocks (u32)
//! u64 FTL clock
//! cached mapping table (version 2): u32 partitions, then per partition u32 pages cached,
//!             their translation pages (u32, least recently used first), dirty flags (u8)
//! u32 CRC-32 of every byte before it
//! ```
//! A snapshot is taken between runs, so no GC victim is in flight.

use super::blocks::{FreePool, PlaneState};
use super::gc::GcPhase;
use super::{BlockState, Ftl, NONE};
use crate::config::Config;
use crate::config::Settings;
use crate::error::Error;
use serde_json::{json, Value};
use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::Path;

const MAGIC: &[u8; 8] = b"SSDKSNAP";
/// Bump on any change of the layout above. Version 2 added the cached mapping table (its
/// translation pages are logical pages past the host's in P2L, and its entries follow the
/// clock).
pub const VERSION: u32 = 2;

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
        (
            "ftl.mapping",
            serde_json::to_string(&c.ftl.mapping).expect("enum serialises"),
        ),
        // Translation pages live in flash beside the data: a cached map's state loads only
        // into a cached map with the same pages (the entry size decides their number).
        (
            "ftl.cmt",
            match Settings::resolve(c).cmt {
                None => "ideal".to_string(),
                Some(m) => format!(
                    "cached: {} translation pages of {} entries of {} bytes",
                    m.translation_pages, m.entries_per_tpage, m.entry_bytes
                ),
            },
        ),
    ]
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
    /// `n` values computed by `f` (a table that is not stored whole, such as P2L).
    fn u32s_from(&mut self, n: usize, f: impl Fn(usize) -> u32) -> std::io::Result<()> {
        let mut buf = Vec::with_capacity(64 * 1024);
        for start in (0..n).step_by(16 * 1024) {
            buf.clear();
            for i in start..(start + 16 * 1024).min(n) {
                buf.extend_from_slice(&f(i).to_le_bytes());
            }
            self.put(&buf)?;
        }
        Ok(())
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
pub fn save(ftl: &Ftl, c: &Config, precondition: &Value, path: &Path) -> Result<u64, Error> {
    if ftl.planes.iter().any(|p| p.gc != GcPhase::Idle) {
        return Err(Error::Simulation(
            "snapshot requested while garbage collection is in flight".into(),
        ));
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
    precondition: &Value,
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
    let header = json!({
        "ssdkit_version": env!("CARGO_PKG_VERSION"),
        "device": keys,
        "precondition": precondition,
        "gc_rng": serde_json::to_value(&ftl.gc_rng).expect("rng state serialises"),
        "physical_pages": ftl.map.physical_len(),
        "blocks": ftl.written.len(),
        "logical_pages": ftl.logical_pages,
    });
    let h = serde_json::to_vec(&header).expect("header serialises");
    w.put(MAGIC).map_err(io)?;
    w.put(&VERSION.to_le_bytes()).map_err(io)?;
    w.put(&(h.len() as u32).to_le_bytes()).map_err(io)?;
    w.put(&h).map_err(io)?;
    w.u32s_from(ftl.map.physical_len(), |p| ftl.map.lpn(p as u32))
        .map_err(io)?;
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
    w.u64s(&ftl.mod_stamp).map_err(io)?;
    for p in &ftl.planes {
        let free: Vec<u32> = p.free.in_arrival_order();
        w.u32s(&[p.user_open, p.gc_open, p.runs_since_wl, free.len() as u32])
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
    let crc = w.crc.clone().finalize();
    w.inner.write_all(&crc.to_le_bytes()).map_err(io)?;
    let counted = w.inner.into_inner().map_err(|e| io(e.into_error()))?;
    if regular {
        // Durable before it replaces anything: a crash must not leave a torn snapshot. (Pipes
        // and most devices refuse fsync.)
        counted.inner.sync_all().map_err(io)?;
    }
    Ok(counted.bytes)
}

struct CrcReader<R: Read> {
    inner: R,
    crc: crc32fast::Hasher,
    origin: String,
}
impl<R: Read> CrcReader<R> {
    fn get(&mut self, buf: &mut [u8]) -> Result<(), Error> {
        self.inner.read_exact(buf).map_err(|e| {
            if e.kind() == std::io::ErrorKind::UnexpectedEof {
                Error::Io(format!("{}: snapshot is truncated", self.origin))
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
        let mut buf = vec![0u8; 64 * 1024];
        for chunk in out.chunks_mut(16 * 1024) {
            let b = &mut buf[..chunk.len() * 4];
            self.get(b)?;
            for (x, c) in chunk.iter_mut().zip(b.chunks_exact(4)) {
                *x = u32::from_le_bytes(c.try_into().expect("4 bytes"));
            }
        }
        Ok(())
    }
    fn u64s(&mut self, out: &mut [u64]) -> Result<(), Error> {
        let mut buf = vec![0u8; 64 * 1024];
        for chunk in out.chunks_mut(8 * 1024) {
            let b = &mut buf[..chunk.len() * 8];
            self.get(b)?;
            for (x, c) in chunk.iter_mut().zip(b.chunks_exact(8)) {
                *x = u64::from_le_bytes(c.try_into().expect("8 bytes"));
            }
        }
        Ok(())
    }
}

/// Loads a snapshot into a fresh FTL for `c`. Refuses a file that is not a snapshot, of
/// another version, damaged (checksum), truncated, or taken on a device that differs from
/// `c` in any key of `device_keys` (the message names each differing key). Returns the FTL
/// and the snapshot's preconditioning record.
pub fn load(c: &Config, path: &Path) -> Result<(Ftl, Value), Error> {
    let origin = path.display().to_string();
    let bad = |m: String| Error::Io(format!("{origin}: {m}"));
    let file = File::open(path).map_err(|e| bad(format!("cannot open snapshot: {e}")))?;
    let mut r = CrcReader {
        inner: BufReader::with_capacity(1 << 20, file),
        crc: crc32fast::Hasher::new(),
        origin: origin.clone(),
    };
    let mut magic = [0u8; 8];
    r.get(&mut magic)
        .map_err(|_| bad("not an ssdkit snapshot (too short)".into()))?;
    if &magic != MAGIC {
        return Err(bad("not an ssdkit snapshot (bad magic bytes)".into()));
    }
    let version = r.u32()?;
    if version != VERSION {
        return Err(bad(format!(
            "snapshot format version {version}; this ssdkit reads version {VERSION} (version 2 added the cached mapping table): precondition again to make a new snapshot (`ssdkit precondition`)"
        )));
    }
    let hlen = r.u32()? as usize;
    if hlen > 1 << 24 {
        return Err(bad(format!("corrupt snapshot header length {hlen}")));
    }
    let mut h = vec![0u8; hlen];
    r.get(&mut h)?;
    let header: Value =
        serde_json::from_slice(&h).map_err(|e| bad(format!("corrupt snapshot header: {e}")))?;
    let mut diffs = Vec::new();
    for (k, v) in device_keys(c) {
        let saved = header["device"][k].as_str().unwrap_or("<missing>");
        if saved != v {
            diffs.push(format!(
                "{k} = {saved} in the snapshot but {v} in the configuration"
            ));
        }
    }
    if !diffs.is_empty() {
        return Err(bad(format!(
            "snapshot was taken on a different device: {}; use the configuration it was made with, or precondition again",
            diffs.join("; ")
        )));
    }
    let mut ftl = Ftl::new(c, &Settings::resolve(c));
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
    // P2L goes into the map as it is read (no second copy of it); L2P is rebuilt below, once
    // the checksum and the blocks are checked.
    let mut chunk = vec![0u32; 16 * 1024];
    let physical = ftl.map.physical_len();
    for start in (0..physical).step_by(chunk.len()) {
        let part = &mut chunk[..(physical - start).min(16 * 1024)];
        r.u32s(part)?;
        ftl.map.load_p2l(start, part);
    }
    r.u32s(&mut ftl.written)?;
    r.u32s(&mut ftl.valid)?;
    r.u32s(&mut ftl.erase_count)?;
    let mut states = vec![0u8; g.total_blocks() as usize];
    r.get(&mut states)?;
    r.u64s(&mut ftl.close_stamp)?;
    r.u64s(&mut ftl.mod_stamp)?;
    let bpp = g.blocks_per_plane;
    let mut planes = Vec::with_capacity(g.planes() as usize);
    for p in 0..g.planes() {
        let user_open = r.u32()?;
        let gc_open = r.u32()?;
        let runs_since_wl = r.u32()?;
        let n = r.u32()?;
        if n > bpp {
            return Err(bad(format!(
                "corrupt snapshot: plane {p} lists {n} free blocks"
            )));
        }
        let mut listed = vec![0u32; n as usize];
        r.u32s(&mut listed)?;
        let mut free = FreePool::new(ftl.wl_dynamic);
        for b in listed {
            if b / bpp != p {
                return Err(bad(format!(
                    "corrupt snapshot: plane {p} lists free block {b} of another plane"
                )));
            }
            free.push(b, ftl.erase_count[b as usize]);
        }
        for b in [user_open, gc_open] {
            if b != NONE && b / bpp != p {
                return Err(bad(format!(
                    "corrupt snapshot: plane {p} has open block {b} of another plane"
                )));
            }
        }
        planes.push(PlaneState {
            free,
            user_open,
            gc_open,
            gc: GcPhase::Idle,
            runs_since_wl,
        });
    }
    let mut clock = [0u8; 8];
    r.get(&mut clock)?;
    let nparts = r.u32()?;
    if nparts > 1 << 16 {
        return Err(bad(format!(
            "corrupt snapshot: {nparts} mapping-cache partitions"
        )));
    }
    let mut cmt_parts = Vec::with_capacity(nparts as usize);
    for _ in 0..nparts {
        let n = r.u32()?;
        if n as u64 > ftl.translation_pages() {
            return Err(bad(format!(
                "corrupt snapshot: {n} cached translation pages of {}",
                ftl.translation_pages()
            )));
        }
        let mut lpns = vec![0u32; n as usize];
        r.u32s(&mut lpns)?;
        let mut dirty = vec![0u8; n as usize];
        r.get(&mut dirty)?;
        cmt_parts.push((lpns, dirty));
    }
    let expected = r.crc.clone().finalize();
    let mut crc = [0u8; 4];
    r.inner
        .read_exact(&mut crc)
        .map_err(|_| bad("snapshot is truncated (no checksum)".into()))?;
    if u32::from_le_bytes(crc) != expected {
        return Err(bad("snapshot is corrupt (checksum mismatch)".into()));
    }
    let mut extra = [0u8; 1];
    if r.inner.read(&mut extra).unwrap_or(0) != 0 {
        return Err(bad("snapshot has trailing bytes after its checksum".into()));
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
        for b in [ps.user_open, ps.gc_open] {
            if b != NONE && ftl.block_state[b as usize] != BlockState::Open {
                return Err(bad(format!(
                    "inconsistent snapshot: plane {p}'s open block {b} is not open"
                )));
            }
        }
    }
    // Rebuild L2P; the checksum passed, but a snapshot from a buggy writer must still not
    // produce an inconsistent device.
    if let Err((ppa, lpa)) = ftl.map.rebuild_l2p() {
        return Err(bad(format!(
            "inconsistent snapshot: logical page {lpa} at physical page {ppa}"
        )));
    }
    ftl.rebuild_index();
    // The cache as it was: pages re-inserted least recently used first, into the same
    // partitions (the last one when this configuration has fewer); a smaller cache keeps the
    // most recently used.
    let tpages = ftl.translation_pages();
    if let Some(cmt) = ftl.cmt.as_mut() {
        let last = cmt.partitions() - 1;
        for (p, (pages, dirty)) in cmt_parts.iter().enumerate() {
            for (&l, &d) in pages.iter().zip(dirty) {
                if l as u64 >= tpages {
                    return Err(bad(format!(
                        "inconsistent snapshot: cached translation page {l} of {tpages}"
                    )));
                }
                // A write-back forced by a smaller cache happened before the run: no
                // traffic to account.
                let _ = cmt.insert(l, p.min(last), d != 0);
            }
        }
    }
    let rec = header["precondition"].clone();
    Ok((ftl, rec))
}
