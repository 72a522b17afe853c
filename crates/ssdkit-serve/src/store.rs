//! The export's data: real bytes, stored sparsely. In memory (4 KiB chunks, created on first
//! write, bounded by a byte limit) or in a sparse backing file (holes punched on TRIM), so a
//! device far larger than RAM is served when the data written fits on disk. Never-written and
//! trimmed ranges read as zeros. Callable from every connection's threads at once; this is
//! not the simulator's event path.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::FileExt;
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

const CHUNK: u64 = 4096;
const SHARDS: usize = 64;

/// Why a store operation failed, as the NBD reply's error.
#[derive(Debug)]
pub enum StoreError {
    /// The in-memory store is at its limit.
    Full,
    Io(io::Error),
}

impl From<io::Error> for StoreError {
    fn from(e: io::Error) -> Self {
        StoreError::Io(e)
    }
}

pub enum Store {
    Mem(MemStore),
    File(FileStore),
}

impl Store {
    pub fn read(&self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        match self {
            Store::Mem(m) => {
                m.read(offset, buf);
                Ok(())
            }
            Store::File(f) => f.file.read_exact_at(buf, offset),
        }
    }

    pub fn write(&self, offset: u64, data: &[u8]) -> Result<(), StoreError> {
        match self {
            Store::Mem(m) => m.write(offset, data),
            Store::File(f) => Ok(f.file.write_all_at(data, offset)?),
        }
    }

    /// Makes the range read as zeros, freeing its space (TRIM, WRITE_ZEROES without NO_HOLE).
    pub fn discard(&self, offset: u64, len: u64) -> io::Result<()> {
        match self {
            Store::Mem(m) => {
                m.discard(offset, len);
                Ok(())
            }
            Store::File(f) => f.fallocate(
                libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE,
                offset,
                len,
            ),
        }
    }

    /// Makes the range read as zeros, keeping it allocated (WRITE_ZEROES with NO_HOLE).
    pub fn zero(&self, offset: u64, len: u64) -> Result<(), StoreError> {
        match self {
            // Zeros in memory are the absence of a chunk; NO_HOLE only promises that a later
            // write will not fail for lack of space, which a bounded memory store cannot.
            Store::Mem(m) => {
                m.discard(offset, len);
                Ok(())
            }
            Store::File(f) => Ok(f.fallocate(libc::FALLOC_FL_ZERO_RANGE, offset, len)?),
        }
    }

    /// Puts written data on stable storage (FLUSH and FUA with `--durable`, and at shutdown).
    /// Nothing to do in memory: the data dies with the process whatever the client asks.
    pub fn sync(&self) -> io::Result<()> {
        match self {
            Store::Mem(_) => Ok(()),
            Store::File(f) => f.file.sync_data(),
        }
    }

    /// Bytes held: chunks in memory, or the backing file's allocated blocks.
    pub fn stored_bytes(&self) -> u64 {
        match self {
            Store::Mem(m) => m.chunks.load(Ordering::Relaxed) * CHUNK,
            Store::File(f) => {
                use std::os::unix::fs::MetadataExt;
                f.file.metadata().map(|m| m.blocks() * 512).unwrap_or(0)
            }
        }
    }

    pub fn kind(&self) -> &'static str {
        match self {
            Store::Mem(_) => "memory",
            Store::File(_) => "file",
        }
    }

    /// The memory store's limit in bytes (None for a file).
    pub fn limit_bytes(&self) -> Option<u64> {
        match self {
            Store::Mem(m) => Some(m.limit_chunks * CHUNK),
            Store::File(_) => None,
        }
    }
}

pub struct MemStore {
    shards: Vec<Mutex<HashMap<u64, Box<[u8]>>>>,
    chunks: AtomicU64,
    limit_chunks: u64,
}

impl MemStore {
    pub fn new(limit_bytes: u64) -> Self {
        Self {
            shards: (0..SHARDS).map(|_| Mutex::new(HashMap::new())).collect(),
            chunks: AtomicU64::new(0),
            limit_chunks: limit_bytes / CHUNK,
        }
    }

    fn shard(&self, chunk: u64) -> std::sync::MutexGuard<'_, HashMap<u64, Box<[u8]>>> {
        // A panic while holding a shard cannot leave a chunk half-replaced: take it anyway.
        self.shards[(chunk % SHARDS as u64) as usize]
            .lock()
            .unwrap_or_else(|p| p.into_inner())
    }

    /// (chunk index, offset in it, bytes) of each chunk a range touches.
    fn pieces(offset: u64, len: u64) -> impl Iterator<Item = (u64, usize, usize)> {
        let end = offset + len;
        let mut at = offset;
        std::iter::from_fn(move || {
            if at >= end {
                return None;
            }
            let chunk = at / CHUNK;
            let within = (at % CHUNK) as usize;
            let n = ((CHUNK - within as u64).min(end - at)) as usize;
            at += n as u64;
            Some((chunk, within, n))
        })
    }

    fn read(&self, offset: u64, buf: &mut [u8]) {
        let mut done = 0;
        for (chunk, within, n) in Self::pieces(offset, buf.len() as u64) {
            let out = &mut buf[done..done + n];
            match self.shard(chunk).get(&chunk) {
                Some(c) => out.copy_from_slice(&c[within..within + n]),
                None => out.fill(0),
            }
            done += n;
        }
    }

    fn write(&self, offset: u64, data: &[u8]) -> Result<(), StoreError> {
        let mut done = 0;
        for (chunk, within, n) in Self::pieces(offset, data.len() as u64) {
            let mut shard = self.shard(chunk);
            let c = match shard.get_mut(&chunk) {
                Some(c) => c,
                None => {
                    if self.chunks.fetch_add(1, Ordering::Relaxed) >= self.limit_chunks {
                        self.chunks.fetch_sub(1, Ordering::Relaxed);
                        return Err(StoreError::Full);
                    }
                    shard
                        .entry(chunk)
                        .or_insert_with(|| vec![0u8; CHUNK as usize].into())
                }
            };
            c[within..within + n].copy_from_slice(&data[done..done + n]);
            done += n;
        }
        Ok(())
    }

    fn discard(&self, offset: u64, len: u64) {
        let first = offset.div_ceil(CHUNK);
        let last = (offset + len) / CHUNK; // whole chunks first..last are dropped
                                           // Partial chunks at the ends keep their other bytes.
        let head_end = (first * CHUNK).min(offset + len);
        if head_end > offset {
            self.zero_part(offset, head_end - offset);
        }
        if last >= first && offset + len > last * CHUNK && last * CHUNK >= head_end {
            self.zero_part(last * CHUNK, offset + len - last * CHUNK);
        }
        if last <= first {
            return;
        }
        let whole = last - first;
        let held = self.chunks.load(Ordering::Relaxed);
        for (i, s) in self.shards.iter().enumerate() {
            let mut shard = s.lock().unwrap_or_else(|p| p.into_inner());
            let before = shard.len();
            // A range larger than what is stored (a whole-device TRIM of a large device) is
            // cheaper to apply by scanning what is stored than by visiting every chunk in it.
            if whole > held {
                shard.retain(|&k, _| k < first || k >= last);
            } else {
                let mut k =
                    first + ((i as u64 + SHARDS as u64 - first % SHARDS as u64) % SHARDS as u64);
                while k < last {
                    shard.remove(&k);
                    k += SHARDS as u64;
                }
            }
            let freed = (before - shard.len()) as u64;
            self.chunks.fetch_sub(freed, Ordering::Relaxed);
        }
    }

    fn zero_part(&self, offset: u64, len: u64) {
        for (chunk, within, n) in Self::pieces(offset, len) {
            if let Some(c) = self.shard(chunk).get_mut(&chunk) {
                c[within..within + n].fill(0);
            }
        }
    }
}

pub struct FileStore {
    file: File,
    pub path: PathBuf,
}

impl FileStore {
    /// Opens (or creates, sparse, `size` bytes long) the backing file and locks it against a
    /// second server. Returns the store and whether the file was created here (to remove it if
    /// starting fails later: nothing half-made is left behind).
    pub fn open(path: &Path, size: u64, read_only: bool) -> Result<(Self, bool), String> {
        let shown = path.display();
        if let Ok(m) = std::fs::metadata(path) {
            if m.is_dir() {
                return Err(format!("--backing {shown} is a directory; give a file"));
            }
            if !m.is_file() {
                return Err(format!(
                    "--backing {shown} is not a regular file (a device or special file); give a file"
                ));
            }
        }
        let existed = path.exists();
        let file = OpenOptions::new()
            .read(true)
            .write(!read_only)
            .create(!existed && !read_only)
            .open(path)
            .map_err(|e| format!("cannot open --backing {shown}: {e}"))?;
        // SAFETY: flock on a descriptor this function owns.
        if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
            let e = io::Error::last_os_error();
            if !existed {
                std::fs::remove_file(path).ok();
            }
            return Err(if e.raw_os_error() == Some(libc::EWOULDBLOCK) {
                format!("--backing {shown} is in use by another ssdkit serve (it holds the file's lock)")
            } else {
                format!("cannot lock --backing {shown}: {e}")
            });
        }
        let len = file
            .metadata()
            .map_err(|e| format!("cannot read --backing {shown}: {e}"))?
            .len();
        let fail = |msg: String| {
            if !existed {
                std::fs::remove_file(path).ok();
            }
            Err(msg)
        };
        if existed && len < size {
            return fail(format!(
                "--backing {shown} holds {len} bytes, less than the device's {size}: give a new file (created sparse) or one at least that large"
            ));
        }
        if !existed {
            if let Err(e) = file.set_len(size) {
                let why = if e.raw_os_error() == Some(libc::EFBIG) {
                    format!(
                        "the file system's largest file is smaller than the device's {size} bytes (ext4 allows 16 TiB; XFS and Btrfs allow more)"
                    )
                } else {
                    e.to_string()
                };
                return fail(format!("cannot size --backing {shown}: {why}"));
            }
        }
        Ok((
            Self {
                file,
                path: path.to_path_buf(),
            },
            !existed,
        ))
    }

    fn fallocate(&self, mode: libc::c_int, offset: u64, len: u64) -> io::Result<()> {
        // SAFETY: fallocate on the store's own open descriptor; no memory is passed.
        let r = unsafe { libc::fallocate(self.file.as_raw_fd(), mode, offset as i64, len as i64) };
        if r == 0 {
            return Ok(());
        }
        let e = io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::EOPNOTSUPP) {
            return Err(e);
        }
        // A file system without the call: write the zeros.
        let zeros = vec![0u8; 1 << 20];
        let mut at = offset;
        while at < offset + len {
            let n = (offset + len - at).min(zeros.len() as u64) as usize;
            self.file.write_all_at(&zeros[..n], at)?;
            at += n as u64;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::MetadataExt;

    fn pattern(n: usize, seed: u8) -> Vec<u8> {
        (0..n)
            .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed))
            .collect()
    }

    /// The same operations on a plain byte vector (the model) and on the store read the same.
    fn agrees_with_model(store: &Store, size: usize) {
        let mut model = vec![0u8; size];
        let ops: [(u8, usize, usize); 9] = [
            (b'w', 512, 8192),
            (b'w', 4096 * 3 + 1024, 5000),
            (b'd', 1024, 4096 * 2),
            (b'w', 0, 512),
            (b'z', 4096 * 2 + 512, 4096 * 3),
            (b'w', size - 4096, 4096),
            (b'd', 4096 * 4, 4096 * 4),
            (b'd', 0, 100),
            (b'w', 7, 9),
        ];
        for (i, &(op, off, len)) in ops.iter().enumerate() {
            match op {
                b'w' => {
                    let d = pattern(len, i as u8 + 1);
                    store.write(off as u64, &d).unwrap();
                    model[off..off + len].copy_from_slice(&d);
                }
                b'd' => {
                    store.discard(off as u64, len as u64).unwrap();
                    model[off..off + len].fill(0);
                }
                _ => {
                    store.zero(off as u64, len as u64).unwrap();
                    model[off..off + len].fill(0);
                }
            }
            let mut all = vec![0xffu8; size];
            store.read(0, &mut all).unwrap();
            assert_eq!(all, model, "after op {i} {:?}", (op as char, off, len));
        }
    }

    /// Random 512-byte-aligned writes, discards and zeroings, checked against the model.
    fn random_ops_agree(store: &Store, size: u64) {
        let mut model = vec![0u8; size as usize];
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = |m: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % m
        };
        for i in 0..300u64 {
            let off = next(size / 512) * 512;
            let len = (1 + next(40)).min((size - off) / 512) * 512;
            let (o, l) = (off as usize, len as usize);
            match next(3) {
                0 => {
                    let d = pattern(l, i as u8);
                    store.write(off, &d).unwrap();
                    model[o..o + l].copy_from_slice(&d);
                }
                1 => {
                    store.discard(off, len).unwrap();
                    model[o..o + l].fill(0);
                }
                _ => {
                    store.zero(off, len).unwrap();
                    model[o..o + l].fill(0);
                }
            }
        }
        let mut all = vec![0xffu8; size as usize];
        store.read(0, &mut all).unwrap();
        assert!(all == model, "the store differs from the model");
    }

    #[test]
    fn random_operations_agree_with_a_byte_model() {
        random_ops_agree(&Store::Mem(MemStore::new(1 << 24)), 1 << 18);
        let d = tempfile::tempdir().unwrap();
        let (f, _) = FileStore::open(&d.path().join("b"), 1 << 18, false).unwrap();
        random_ops_agree(&Store::File(f), 1 << 18);
    }

    #[test]
    fn memory_store_reads_what_was_written_and_zeros_elsewhere() {
        agrees_with_model(&Store::Mem(MemStore::new(1 << 20)), 1 << 16);
    }

    #[test]
    fn file_store_reads_what_was_written_and_zeros_elsewhere() {
        let d = tempfile::tempdir().unwrap();
        let (f, created) = FileStore::open(&d.path().join("b"), 1 << 16, false).unwrap();
        assert!(created);
        agrees_with_model(&Store::File(f), 1 << 16);
    }

    #[test]
    fn memory_store_stops_at_its_limit_and_frees_on_discard() {
        let s = Store::Mem(MemStore::new(4 * 4096));
        s.write(0, &vec![1u8; 4 * 4096]).unwrap();
        assert!(matches!(
            s.write(4 * 4096, &[1u8; 512]),
            Err(StoreError::Full)
        ));
        assert_eq!(s.stored_bytes(), 4 * 4096);
        // A discard larger than what is stored takes the scanning path.
        s.discard(0, 1 << 40).unwrap();
        assert_eq!(s.stored_bytes(), 0);
        s.write(1 << 39, &[2u8; 4096]).unwrap();
        s.discard(4096, 1 << 40).unwrap();
        assert_eq!(s.stored_bytes(), 0);
    }

    #[test]
    fn file_store_is_sparse_punches_holes_and_locks() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("backing");
        let size = 1u64 << 40;
        let (f, _) = FileStore::open(&p, size, false).unwrap();
        assert_eq!(std::fs::metadata(&p).unwrap().len(), size);
        let s = Store::File(f);
        assert!(s.stored_bytes() < 1 << 20, "a new backing file is sparse");
        s.write(1 << 30, &vec![7u8; 1 << 20]).unwrap();
        let full = std::fs::metadata(&p).unwrap().blocks() * 512;
        assert!(full >= 1 << 20, "{full}");
        s.discard(1 << 30, 1 << 20).unwrap();
        let after = std::fs::metadata(&p).unwrap().blocks() * 512;
        assert!(
            after + (1 << 20) <= full,
            "the hole freed the space: {full} -> {after}"
        );
        let e = FileStore::open(&p, size, false).err().unwrap();
        assert!(e.contains("in use by another ssdkit serve"), "{e}");
        drop(s);
        // Smaller than the device: refused, and the file is left as it was.
        let e = FileStore::open(&p, size * 2, false).err().unwrap();
        assert!(e.contains("less than the device's"), "{e}");
        assert_eq!(std::fs::metadata(&p).unwrap().len(), size);
        let e = FileStore::open(d.path(), size, false).err().unwrap();
        assert!(e.contains("is a directory"), "{e}");
        let e = FileStore::open(Path::new("/dev/null"), size, false)
            .err()
            .unwrap();
        assert!(e.contains("not a regular file"), "{e}");
        let e = FileStore::open(&d.path().join("missing/b"), size, false)
            .err()
            .unwrap();
        assert!(e.contains("cannot open --backing"), "{e}");
    }
}
