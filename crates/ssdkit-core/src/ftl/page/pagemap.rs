//! Storage of the page map: where each logical page lives (L2P) and which logical page each
//! physical page holds (P2L). The FTL's mapping operations (`mapping.rs`) and everything else
//! reach the tables only through this type, so their representation can change in one place.
//!
//! A layout the FTL can state as a formula is not written out: the map is a `Base` (nothing
//! mapped, or the first pages striped over the planes as sequential preconditioning and an
//! in-place medium lay them out) plus two tables of changes, one entry per logical and per
//! physical page: 0 = as the base says, `GONE` = unmapped (trimmed, invalidated), else the
//! page number + 1. The tables are allocated zeroed, so the operating system gives them
//! memory only where a page changes: building an empty or sequentially filled device does no
//! per-page work, and a run touches the tables only where it writes. A layout with no formula
//! (fast and write preconditioning) is written entry by entry into the change tables.

use super::sector_masks::SectorMasks;
use super::NONE;
use crate::engine::mix64 as mix;
use crate::engine::KeyMap;
use std::borrow::Cow;

/// Entry of a change table for a page that is unmapped whatever the base says.
const GONE: u32 = u32::MAX;

/// The layout the change tables start from.
#[derive(Debug, Clone)]
pub enum Base {
    /// Nothing mapped.
    Empty,
    /// The first `filled` logical pages, page l on plane `stripe[l mod planes]` at that
    /// plane's page `l / planes` (its blocks filled in order).
    Striped {
        filled: u32,
        planes: u32,
        pages_per_plane: u32,
        stripe: Box<[u32]>,
        /// The stripe unit of each plane (the inverse of `stripe`).
        unit: Box<[u32]>,
    },
    /// Fast preconditioning's layout without pinned flows (`FastLayout`).
    Fast(Box<FastLayout>),
}

/// Fast preconditioning's layout as a formula. Plane at stripe unit k holds the logical pages
/// l = k mod planes of the occupied ranges, in logical order: its cold pages (outside the
/// random-write footprint) from its first page on, its hot pages in its hot blocks, block after
/// block, each taking as many as its valid count; the i-th valid page of a hot block sits in
/// slot `pi_b(i)`, `pi_b` a keyed pseudo-random permutation of the block's written slots
/// (four Feistel rounds with cycle walking), so both directions are computed, not stored.
#[derive(Debug, Clone)]
pub struct FastLayout {
    planes: u32,
    /// `planes` as a divisor: every lookup divides by it.
    planes_div: crate::engine::Div,
    pages_per_plane: u32,
    pages_per_block: u32,
    blocks_per_plane: u32,
    stripe: Box<[u32]>,
    unit: Box<[u32]>,
    /// Occupied logical ranges (start, end, hot), sorted.
    ranges: Box<[(u64, u64, bool)]>,
    /// Pages of unit k in ranges of the same class before range i: `before[k * ranges + i]`.
    before: Box<[u64]>,
    /// Per plane: its cold pages, its first hot block (index in the plane) and where its
    /// prefix of hot blocks starts in `prefix`.
    cold: Box<[u64]>,
    hot_first: Box<[u32]>,
    prefix_at: Box<[usize]>,
    /// Per plane, hot pages in its hot blocks before each (and after the last): the blocks'
    /// valid counts at preconditioning.
    prefix: Box<[u64]>,
    /// Written slots of each hot block (same index as `prefix`, without the plane's last).
    written: Box<[u32]>,
    /// Per plane, the hot block holding rank m * DIR_STEP, for each m (where `dir_at` says):
    /// the search for a rank's block starts there, a block or two before its own, instead of
    /// bisecting the plane's prefix (a dozen dependent cache misses).
    dir: Box<[u32]>,
    dir_at: Box<[usize]>,
    key: u64,
}

/// Ranks between two entries of `FastLayout::dir`.
const DIR_STEP: u64 = 256;

/// The hot blocks of one plane, for `FastLayout::new`: first block (index in the plane),
/// and each block's (valid, written) pages.
pub struct HotBlocks {
    pub first: u32,
    pub blocks: Vec<(u32, u32)>,
}

/// A keyed permutation of 0..n (n <= 2^32): Feistel over the smallest even bit width that
/// holds n, walking the cycle until the value falls below n.
#[inline]
fn permute(key: u64, n: u32, x: u32, inverse: bool) -> u32 {
    if n <= 1 {
        return x;
    }
    let bits = 32 - (n - 1).leading_zeros();
    let half = bits.div_ceil(2);
    let mask = (1u64 << half) - 1;
    let mut v = x as u64;
    loop {
        let (mut l, mut r) = (v >> half, v & mask);
        if inverse {
            // Each forward round maps (l, r) to (r, l ^ F(r)); undone from the last round.
            for round in (0..4u64).rev() {
                (l, r) = (r ^ (mix(key ^ (l << 8) ^ round) & mask), l);
            }
        } else {
            for round in 0..4u64 {
                (l, r) = (r, l ^ (mix(key ^ (r << 8) ^ round) & mask));
            }
        }
        v = (l << half) | r;
        if v < n as u64 {
            return v as u32;
        }
    }
}

impl FastLayout {
    /// The layout of `ranges` (occupied logical ranges, sorted, hot or cold) over the planes:
    /// `cold[p]` cold pages and `hot[p]` hot blocks per plane.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        pages_per_block: u32,
        blocks_per_plane: u32,
        stripe: &[u32],
        ranges: &[(u64, u64, bool)],
        cold: Vec<u64>,
        hot: Vec<HotBlocks>,
        key: u64,
    ) -> Self {
        let planes = stripe.len() as u32;
        let mut unit = vec![0u32; stripe.len()].into_boxed_slice();
        for (k, &p) in stripe.iter().enumerate() {
            unit[p as usize] = k as u32;
        }
        let nr = ranges.len();
        let mut before = vec![0u64; planes as usize * nr];
        for k in 0..planes as u64 {
            let mut seen = [0u64; 2];
            for (i, &(a, b, h)) in ranges.iter().enumerate() {
                before[k as usize * nr + i] = seen[h as usize];
                seen[h as usize] +=
                    count_below(b, k, planes as u64) - count_below(a, k, planes as u64);
            }
        }
        let mut prefix = Vec::new();
        let mut written = Vec::new();
        let mut prefix_at = Vec::with_capacity(planes as usize);
        let mut hot_first = Vec::with_capacity(planes as usize);
        let mut dir = Vec::new();
        let mut dir_at = Vec::with_capacity(planes as usize);
        for h in &hot {
            prefix_at.push(prefix.len());
            dir_at.push(dir.len());
            hot_first.push(h.first);
            let mut sum = 0u64;
            prefix.push(0);
            for (j, &(v, w)) in h.blocks.iter().enumerate() {
                // Ranks m * DIR_STEP that fall in this block.
                while (dir.len() - dir_at.last().copied().unwrap_or(0)) as u64 * DIR_STEP
                    < sum + v as u64
                {
                    dir.push(j as u32);
                }
                sum += v as u64;
                prefix.push(sum);
                written.push(w);
            }
            // Keeps `written` aligned with `prefix` (one entry per prefix entry).
            written.push(0);
        }
        Self {
            planes,
            planes_div: crate::engine::Div::new(planes),
            pages_per_plane: blocks_per_plane * pages_per_block,
            pages_per_block,
            blocks_per_plane,
            stripe: stripe.into(),
            unit,
            ranges: ranges.into(),
            before: before.into(),
            cold: cold.into(),
            hot_first: hot_first.into(),
            prefix_at: prefix_at.into(),
            prefix: prefix.into(),
            written: written.into(),
            dir: dir.into(),
            dir_at: dir_at.into(),
            key,
        }
    }

    /// The plane's hot blocks: its prefix of valid counts (one more entry than blocks).
    #[inline]
    fn hot_prefix(&self, plane: u32) -> &[u64] {
        let at = self.prefix_at[plane as usize];
        let end = self
            .prefix_at
            .get(plane as usize + 1)
            .copied()
            .unwrap_or(self.prefix.len());
        &self.prefix[at..end]
    }

    #[inline]
    fn block_key(&self, block: u32) -> u64 {
        mix(self.key ^ block as u64)
    }

    #[inline]
    fn ppn(&self, l: u32) -> u32 {
        let l64 = l as u64;
        let i = self.ranges.partition_point(|r| r.0 <= l64);
        if i == 0 || l64 >= self.ranges[i - 1].1 {
            return NONE;
        }
        let (a, _, hot) = self.ranges[i - 1];
        let d = self.planes_div;
        let k = d.modulo(l) as u64;
        let p = self.stripe[k as usize];
        // `count_below` by the divisor (a shift for the usual power of two planes).
        let below = |x: u64| {
            if x > k {
                d.quot64(x - k + self.planes as u64 - 1)
            } else {
                0
            }
        };
        let rank = self.before[k as usize * self.ranges.len() + i - 1] + below(l64) - below(a);
        if !hot {
            return p * self.pages_per_plane + rank as u32;
        }
        let prefix = self.hot_prefix(p);
        // The block whose valid pages hold this rank: the first whose end is past it.
        let mut j = self.dir[self.dir_at[p as usize] + (rank / DIR_STEP) as usize] as usize;
        while prefix[j + 1] <= rank {
            j += 1;
        }
        let first = p * self.blocks_per_plane + self.hot_first[p as usize];
        let b = first + j as u32;
        let w = self.written[self.prefix_at[p as usize] + j];
        let slot = permute(self.block_key(b), w, (rank - prefix[j]) as u32, false);
        b * self.pages_per_block + slot
    }

    #[inline]
    fn lpn(&self, ppa: u32) -> u32 {
        let p = ppa / self.pages_per_plane;
        let local = ppa % self.pages_per_plane;
        let k = self.unit[p as usize] as u64;
        if (local as u64) < self.cold[p as usize] {
            return self.unrank(k, false, local as u64);
        }
        let block = local / self.pages_per_block;
        let prefix = self.hot_prefix(p);
        let first = self.hot_first[p as usize];
        if block < first || block - first + 1 >= prefix.len() as u32 {
            return NONE;
        }
        let j = (block - first) as usize;
        let w = self.written[self.prefix_at[p as usize] + j];
        let slot = local % self.pages_per_block;
        if slot >= w {
            return NONE;
        }
        let b = p * self.blocks_per_plane + block;
        let i = permute(self.block_key(b), w, slot, true) as u64;
        if i >= prefix[j + 1] - prefix[j] {
            return NONE;
        }
        self.unrank(k, true, prefix[j] + i)
    }

    /// Calls `f(slot, logical page)` for each page block `block` holds at preconditioning.
    fn block_pages(&self, block: u32, mut f: impl FnMut(u32, u32)) {
        let p = block / self.blocks_per_plane;
        let local_block = block % self.blocks_per_plane;
        let k = self.unit[p as usize] as u64;
        let ppb = self.pages_per_block as u64;
        let cold = self.cold[p as usize];
        let start = local_block as u64 * ppb;
        if start < cold {
            for c in start..(start + ppb).min(cold) {
                f((c - start) as u32, self.unrank(k, false, c));
            }
            return;
        }
        let prefix = self.hot_prefix(p);
        let first = self.hot_first[p as usize];
        if local_block < first || local_block - first + 1 >= prefix.len() as u32 {
            return;
        }
        let j = (local_block - first) as usize;
        let w = self.written[self.prefix_at[p as usize] + j];
        let key = self.block_key(block);
        for (i, r) in (prefix[j]..prefix[j + 1]).enumerate() {
            f(permute(key, w, i as u32, false), self.unrank(k, true, r));
        }
    }

    /// The logical page of rank `r` among unit k's pages of one class.
    fn unrank(&self, k: u64, hot: bool, r: u64) -> u32 {
        let nr = self.ranges.len();
        let before = &self.before[k as usize * nr..(k as usize + 1) * nr];
        // The last range of the class that starts at or below the rank.
        let mut found = None;
        for (i, &(a, b, h)) in self.ranges.iter().enumerate() {
            if h != hot || before[i] > r {
                continue;
            }
            let n = count_below(b, k, self.planes as u64) - count_below(a, k, self.planes as u64);
            if r < before[i] + n {
                found = Some((a, r - before[i]));
                break;
            }
        }
        match found {
            Some((a, off)) => {
                let planes = self.planes as u64;
                let first = a + (k + planes - a % planes) % planes;
                (first + off * planes) as u32
            }
            None => NONE,
        }
    }
}

/// Pages l < x with l = k mod planes.
#[inline]
fn count_below(x: u64, k: u64, planes: u64) -> u64 {
    if x > k {
        (x - k).div_ceil(planes)
    } else {
        0
    }
}

/// Little-endian encoding of a `Base` for snapshots.
struct Enc(Vec<u8>);
impl Enc {
    fn u32(&mut self, v: u32) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn u64(&mut self, v: u64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
}

struct Dec<'a>(&'a [u8]);
impl Dec<'_> {
    fn take<const N: usize>(&mut self) -> Result<[u8; N], String> {
        if self.0.len() < N {
            return Err("the page map's base description ends early".into());
        }
        let (a, b) = self.0.split_at(N);
        self.0 = b;
        Ok(a.try_into().expect("N bytes"))
    }
    fn u32(&mut self) -> Result<u32, String> {
        self.take::<4>().map(u32::from_le_bytes)
    }
    fn u64(&mut self) -> Result<u64, String> {
        self.take::<8>().map(u64::from_le_bytes)
    }
    /// A count of items of at least `size` bytes each, no more than the bytes left allow.
    fn count(&mut self, size: usize) -> Result<usize, String> {
        let n = self.u32()? as usize;
        if n.saturating_mul(size) > self.0.len() {
            return Err(format!(
                "the page map's base description lists {n} items past its end"
            ));
        }
        Ok(n)
    }
}

impl Base {
    /// The base as bytes (a snapshot stores it instead of the pages it describes): a tag, then
    /// the formula's parameters. A fast layout's blocks are stored as differences from `now(b)`
    /// (block b's valid and written pages when saved): zeros, which compress to nothing, until
    /// the device has run.
    pub fn encode(&self, now: impl Fn(u32) -> (u32, u32)) -> Vec<u8> {
        let mut e = Enc(Vec::new());
        match self {
            Base::Empty => e.0.push(0),
            Base::Striped {
                filled,
                pages_per_plane,
                stripe,
                ..
            } => {
                e.0.push(1);
                e.u32(*filled);
                e.u32(*pages_per_plane);
                e.u32(stripe.len() as u32);
                stripe.iter().for_each(|&x| e.u32(x));
            }
            Base::Fast(f) => {
                e.0.push(2);
                e.u32(f.pages_per_block);
                e.u32(f.blocks_per_plane);
                e.u32(f.planes);
                f.stripe.iter().for_each(|&x| e.u32(x));
                e.u32(f.ranges.len() as u32);
                for &(a, b, hot) in f.ranges.iter() {
                    e.u64(a);
                    e.u64(b);
                    e.0.push(u8::from(hot));
                }
                f.cold.iter().for_each(|&x| e.u64(x));
                for p in 0..f.planes {
                    let prefix = f.hot_prefix(p);
                    let at = f.prefix_at[p as usize];
                    let first = p * f.blocks_per_plane + f.hot_first[p as usize];
                    e.u32(f.hot_first[p as usize]);
                    e.u32(prefix.len() as u32 - 1);
                    for j in 0..prefix.len() - 1 {
                        let (v, w) = now(first + j as u32);
                        e.u32(((prefix[j + 1] - prefix[j]) as u32).wrapping_sub(v));
                        e.u32(f.written[at + j].wrapping_sub(w));
                    }
                }
                e.u64(f.key);
            }
        }
        e.0
    }

    /// The base `encode` wrote, for a device of `planes` planes of `blocks_per_plane` blocks of
    /// `pages_per_block` pages whose blocks now hold `now(b)` (valid, written) pages; or what is
    /// wrong with the bytes.
    pub fn decode(
        b: &[u8],
        planes: u32,
        blocks_per_plane: u32,
        pages_per_block: u32,
        now: impl Fn(u32) -> (u32, u32),
    ) -> Result<Base, String> {
        let mut d = Dec(b);
        let ppp = blocks_per_plane * pages_per_block;
        let stripe = |d: &mut Dec| -> Result<Vec<u32>, String> {
            let mut seen = vec![false; planes as usize];
            (0..planes)
                .map(|_| {
                    let p = d.u32()?;
                    match seen.get_mut(p as usize) {
                        Some(s) if !*s => {
                            *s = true;
                            Ok(p)
                        }
                        _ => Err(format!("the stripe names plane {p} twice or past {planes}")),
                    }
                })
                .collect()
        };
        let base = match d.take::<1>()?[0] {
            0 => Base::Empty,
            1 => {
                let filled = d.u32()?;
                if d.u32()? != ppp || d.u32()? != planes {
                    return Err("the striped base is of another geometry".into());
                }
                let s = stripe(&mut d)?;
                if filled as u64 > ppp as u64 * planes as u64 {
                    return Err(format!(
                        "the striped base fills {filled} pages, more than the device holds"
                    ));
                }
                Base::striped(filled, ppp, &s)
            }
            2 => {
                if d.u32()? != pages_per_block || d.u32()? != blocks_per_plane || d.u32()? != planes
                {
                    return Err("the fast layout is of another geometry".into());
                }
                let s = stripe(&mut d)?;
                let n = d.count(17)?;
                let mut ranges = Vec::with_capacity(n);
                for _ in 0..n {
                    let (a, b, hot) = (d.u64()?, d.u64()?, d.take::<1>()?[0]);
                    if a > b || hot > 1 || ranges.last().is_some_and(|r: &(u64, u64, bool)| r.1 > a)
                    {
                        return Err(format!("the fast layout's range {a}..{b} is out of order"));
                    }
                    ranges.push((a, b, hot == 1));
                }
                let cold = (0..planes)
                    .map(|_| d.u64())
                    .collect::<Result<Vec<_>, _>>()?;
                let mut hot = Vec::with_capacity(planes as usize);
                for p in 0..planes {
                    let first = d.u32()?;
                    let n = d.count(8)?;
                    if first as u64 + n as u64 > blocks_per_plane as u64 {
                        return Err(format!(
                            "the fast layout's plane {p} does not fit its blocks"
                        ));
                    }
                    let at = p * blocks_per_plane + first;
                    let mut blocks = Vec::with_capacity(n);
                    for j in 0..n as u32 {
                        let (v, w) = now(at + j);
                        blocks.push((d.u32()?.wrapping_add(v), d.u32()?.wrapping_add(w)));
                    }
                    if first as u64 + n as u64 > blocks_per_plane as u64
                        || blocks.iter().any(|&(v, w)| v > w || w > pages_per_block)
                        || cold[p as usize] > first as u64 * pages_per_block as u64
                    {
                        return Err(format!(
                            "the fast layout's plane {p} does not fit its blocks"
                        ));
                    }
                    hot.push(HotBlocks { first, blocks });
                }
                // Each plane holds exactly its unit's pages of the ranges: the formulas index
                // by rank and must not run past a plane's blocks.
                for (k, &p) in s.iter().enumerate() {
                    let mut n = [0u64; 2];
                    for &(a, b, h) in &ranges {
                        n[h as usize] += count_below(b, k as u64, planes as u64)
                            - count_below(a, k as u64, planes as u64);
                    }
                    let hot_pages: u64 = hot[p as usize].blocks.iter().map(|b| b.0 as u64).sum();
                    if n != [cold[p as usize], hot_pages] {
                        return Err(format!(
                            "the fast layout's plane {p} holds {} cold and {hot_pages} hot pages, its ranges {} and {}",
                            cold[p as usize], n[0], n[1]
                        ));
                    }
                }
                let key = d.u64()?;
                Base::Fast(Box::new(FastLayout::new(
                    pages_per_block,
                    blocks_per_plane,
                    &s,
                    &ranges,
                    cold,
                    hot,
                    key,
                )))
            }
            t => return Err(format!("unknown page-map base {t}")),
        };
        if !d.0.is_empty() {
            return Err("the page map's base description has bytes past its end".into());
        }
        Ok(base)
    }

    /// Logical pages striped from the first; `stripe` gives the plane of each unit.
    pub fn striped(filled: u32, pages_per_plane: u32, stripe: &[u32]) -> Self {
        let mut unit = vec![0u32; stripe.len()].into_boxed_slice();
        for (k, &p) in stripe.iter().enumerate() {
            unit[p as usize] = k as u32;
        }
        Base::Striped {
            filled,
            planes: stripe.len() as u32,
            pages_per_plane,
            stripe: stripe.into(),
            unit,
        }
    }

    #[inline]
    fn ppn(&self, l: u32) -> u32 {
        match self {
            Base::Empty => NONE,
            Base::Fast(f) => f.ppn(l),
            Base::Striped {
                filled,
                planes,
                pages_per_plane,
                stripe,
                ..
            } => {
                if l < *filled {
                    stripe[(l % planes) as usize] * pages_per_plane + l / planes
                } else {
                    NONE
                }
            }
        }
    }

    #[inline]
    fn lpn(&self, p: u32) -> u32 {
        match self {
            Base::Empty => NONE,
            Base::Fast(f) => f.lpn(p),
            Base::Striped {
                filled,
                planes,
                pages_per_plane,
                unit,
                ..
            } => {
                let plane = p / pages_per_plane;
                let local = (p % pages_per_plane) as u64;
                let l = local * *planes as u64 + unit[plane as usize] as u64;
                if l < *filled as u64 {
                    l as u32
                } else {
                    NONE
                }
            }
        }
    }
}

pub struct PageMap {
    base: Base,
    /// Changes of L2P (host pages, then the translation pages of a cached map).
    l2p: Changes,
    /// Changes of P2L.
    p2l: Changes,
}

/// A table of changes in chunks of `1 << shift` entries, with a bit per chunk that says
/// whether it was ever written (never: every entry 0, as the base says). A lookup in a chunk
/// never written reads the bit alone, and a snapshot finds the changes by the bits, in
/// chunks, whatever the layout.
struct Changes {
    shift: u32,
    len: usize,
    layout: Layout,
    /// The chunks written, a bit each. A bit, not a word: every lookup reads it first, and
    /// MQSim's shipped 500 GB device has 61,000 chunks of L2P and 65,000 of P2L, whose bits
    /// (16 KB) stay in the first-level cache where 4-byte entries (500 KB) missed it on a
    /// random lookup (measured: half the samples of request submission, `pump`, waited on
    /// that load, 4 % of MQSim's ideal-map 70/30 mix under `--mqsim-compat`).
    written: Vec<u64>,
    /// `Layout::Chunked`: each chunk's number in `pool` + 1 (0: never written); empty in the
    /// other layouts.
    dir: Vec<u32>,
    pool: Vec<u32>,
    /// `Layout::Sparse`: the entries written, by index, and how many chunks they fall in.
    sparse: KeyMap<u32>,
    chunks_written: usize,
    /// `Layout::Paired`: the entries written and the masks held, by index.
    paired: KeyMap<Paired>,
    /// Masks `paired` holds.
    paired_masks: usize,
    /// The valid sectors of partly written pages (`PageMap::mask`) in other layouts; only
    /// the L2P's are used.
    masks: SectorMasks,
}

/// An entry (0: none) and the valid sectors of its page while partly written (0: none held).
#[derive(Clone, Copy, Default)]
struct Paired {
    entry: u32,
    mask: u32,
}

/// How a `Changes` table stores its entries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Layout {
    /// `pool` is the whole table, allocated zeroed (the system gives it memory where it is
    /// written); the entry's address does not depend on a directory, so a lookup does not
    /// wait for one (measured: writes with GC 10 % faster than chunked).
    Dense,
    /// Tables of more than `DENSE_LIMIT` entries: a directory holds the chunk's number in
    /// `pool` + 1 and chunks are allocated when first written, so the device reserves no
    /// address space for pages it never changes.
    Chunked,
    /// The L2P of a table that would be dense, until a sixteenth of its entries are written:
    /// `sparse` holds the entries written. Random writes to a fresh device touch a new 4 KiB
    /// page of a dense L2P with nearly every write (the 500 GB device of MQSim's shipped
    /// configuration has 61,000 of them), and on a virtual machine each first touch costs
    /// microseconds (measured: a third of a 300,000-write run in page faults); here an entry
    /// takes an 8-byte slot of a hash table at most three quarters full (11 to 21 bytes an
    /// entry), one cache line to look up. Becomes `Dense` at the
    /// sixteenth, where the dense table's pages would nearly all be touched anyway, or
    /// earlier (from a 256th) when the dense table's chunks written take less memory than
    /// the hash table (writes in logical order).
    Sparse,
    /// `Sparse` with each page's valid-sector mask beside its entry (`paired`). Sub-page
    /// writes can leave every page they write partly written (MQSim's 4 KiB writes on 8 KiB
    /// pages), and each such write looks up and changes the page's mask as well as its
    /// entry: a mask in its own table cost a second random slot per write (measured on
    /// MQSim's shipped device with an ideal map, 1 M random 4 KiB writes: a tenth of the
    /// run's loop). Here both share a slot, found by one probe; the slot takes 12 bytes
    /// instead of two tables' 8, and a page may hold a mask before its entry (a write
    /// accepted, not yet programmed). Turns dense as `Sparse` does.
    Paired,
}

/// Tables up to this many entries are dense (1 GiB of address space each).
const DENSE_LIMIT: usize = 1 << 28;

impl Changes {
    /// `sparse`: start in `Layout::Sparse` when the table would be dense (the L2P).
    fn new(len: usize, shift: u32, sparse: bool) -> Self {
        let layout = match len <= DENSE_LIMIT {
            false => Layout::Chunked,
            true if sparse => Layout::Sparse,
            true => Layout::Dense,
        };
        let chunks = len.div_ceil(1 << shift);
        Self {
            shift,
            len,
            layout,
            written: vec![0; chunks.div_ceil(64)],
            dir: if layout == Layout::Chunked {
                vec![0; chunks]
            } else {
                Vec::new()
            },
            pool: if layout == Layout::Dense {
                vec![0; len]
            } else {
                Vec::new()
            },
            sparse: Default::default(),
            chunks_written: 0,
            paired: Default::default(),
            paired_masks: 0,
            masks: SectorMasks::new(1),
        }
    }

    /// Chunk d was written (d below the chunks).
    #[inline]
    fn is_written(&self, d: usize) -> bool {
        self.written[d >> 6] >> (d & 63) & 1 != 0
    }

    /// Marks chunk d written; true if it was not.
    #[inline]
    fn mark(&mut self, d: usize) -> bool {
        let (w, bit) = (&mut self.written[d >> 6], 1u64 << (d & 63));
        let fresh = *w & bit == 0;
        *w |= bit;
        fresh
    }

    #[inline]
    fn get(&self, i: usize) -> u32 {
        match self.layout {
            Layout::Dense => match self.is_written(i >> self.shift) {
                false => 0,
                true => self.pool[i],
            },
            // The chunk's bit first: the bits stay in cache, where the hash table does not.
            Layout::Sparse => match self.is_written(i >> self.shift) {
                false => 0,
                true => self.sparse.get(i as u32).unwrap_or(0),
            },
            Layout::Paired => match self.is_written(i >> self.shift) {
                false => 0,
                true => self.paired.get(i as u32).map_or(0, |p| p.entry),
            },
            Layout::Chunked => match self.dir[i >> self.shift] {
                0 => 0,
                c => self.pool[((c as usize - 1) << self.shift) | (i & ((1 << self.shift) - 1))],
            },
        }
    }

    /// Asks the CPU to bring the cache lines a later `get(i)` or `slot(i)` misses on.
    #[inline]
    fn prefetch(&self, i: usize) {
        // A table holding masks beside its entries: the mask's lookup reads the slot whatever
        // the chunk's bit says.
        if self.layout == Layout::Paired {
            return self.paired.prefetch(i as u32);
        }
        // Elsewhere only where the chunk was written: there `get` reads the chunk's bit alone,
        // and a prefetch would only evict lines in use (measured: GC steady-state writes from
        // fast preconditioning, whose map answers from its formula, 5 % slower).
        let d = i >> self.shift;
        if self
            .written
            .get(d >> 6)
            .is_none_or(|w| w >> (d & 63) & 1 == 0)
        {
            return;
        }
        match self.layout {
            Layout::Dense => crate::engine::prefetch(&self.pool, i),
            Layout::Sparse => self.sparse.prefetch(i as u32),
            Layout::Paired => {}
            // Only tables past `DENSE_LIMIT` entries are chunked; not measured, left alone.
            Layout::Chunked => {}
        }
    }

    #[inline]
    fn slot(&mut self, i: usize) -> &mut u32 {
        // A chunk's bit past the table would not panic (the last word has spare bits).
        debug_assert!(i < self.len, "entry {i} of a table of {}", self.len);
        let d = i >> self.shift;
        match self.layout {
            Layout::Dense => {
                self.mark(d);
                &mut self.pool[i]
            }
            Layout::Sparse | Layout::Paired => {
                if self.mark(d) {
                    self.chunks_written += 1;
                }
                // Dense at a sixteenth of the entries, or earlier, from a 256th on, if the
                // hash table takes more memory than the dense table's chunks written would (4
                // bytes an entry): writes that fill chunks in order. Not before the 256th: a
                // run of the table written first (the translation pages' entries, a 2,048th
                // of it, under `translation_pages_at_start = "all"`) must not make scattered
                // writes after it pay for dense pages. Pages holding only a mask count.
                let dense_bytes = self.chunks_written << (self.shift + 2);
                let (n, bytes) = match self.layout {
                    Layout::Paired => (self.paired.len(), self.paired.bytes()),
                    _ => (self.sparse.len(), self.sparse.bytes()),
                };
                if (n >= self.len >> 8 && bytes > dense_bytes) || (n + 1) * 16 > self.len {
                    self.densify();
                    return self.slot(i);
                }
                match self.layout {
                    Layout::Paired => &mut self.paired.value_mut(i as u32).entry,
                    _ => self.sparse.value_mut(i as u32),
                }
            }
            Layout::Chunked => {
                let c = match self.dir[d] {
                    0 => self.allocate(d),
                    c => c,
                };
                &mut self.pool[((c as usize - 1) << self.shift) | (i & ((1 << self.shift) - 1))]
            }
        }
    }

    #[cold]
    fn allocate(&mut self, d: usize) -> u32 {
        self.pool.resize(self.pool.len() + (1 << self.shift), 0);
        let c = (self.pool.len() >> self.shift) as u32;
        self.dir[d] = c;
        self.mark(d);
        c
    }

    /// A sparse table makes room for `entries` more entries now, if fewer than its turn to
    /// dense (a sixteenth of the table) would take; other layouts need nothing.
    fn reserve(&mut self, entries: usize) {
        match self.layout {
            Layout::Sparse if (entries + self.sparse.len()) * 16 < self.len => {
                self.sparse.reserve(entries + self.sparse.len())
            }
            Layout::Paired if (entries + self.paired.len()) * 16 < self.len => {
                self.paired.reserve(entries + self.paired.len())
            }
            _ => {}
        }
    }

    /// `Sparse` to `Dense`, the chunks' bits unchanged; masks held beside the entries move
    /// to their own table.
    #[cold]
    fn densify(&mut self) {
        self.unpair();
        let mut dense = vec![0u32; self.len];
        for (i, v) in self.sparse.iter() {
            dense[i as usize] = v;
        }
        self.pool = dense;
        self.sparse = Default::default();
        self.layout = Layout::Dense;
    }

    /// The valid sectors of page `i` if it is partly written.
    #[inline]
    fn mask(&self, i: usize) -> Option<u64> {
        match self.layout {
            Layout::Paired => self
                .paired
                .get(i as u32)
                .map(|p| p.mask)
                .filter(|&x| x != 0)
                .map(u64::from),
            _ => match self.masks.is_empty() {
                true => None,
                false => self.masks.get(i as u32),
            },
        }
    }

    /// Whether no page holds a mask.
    #[inline]
    fn masks_empty(&self) -> bool {
        match self.layout {
            Layout::Paired => self.paired_masks == 0,
            _ => self.masks.is_empty(),
        }
    }

    /// Page `i` is partly written: `mask` its valid sectors.
    #[inline]
    fn set_mask(&mut self, i: usize, mask: u64) {
        match self.layout {
            // A mask of no sector (a write-back of a cached page that carries none) cannot be
            // told from no mask beside an entry: the masks go to their own table for good.
            Layout::Paired if mask == 0 => {
                self.unpair();
                self.masks.insert(i as u32, 0);
            }
            Layout::Paired => {
                let p = self.paired.value_mut(i as u32);
                self.paired_masks += usize::from(p.mask == 0);
                p.mask = mask as u32;
            }
            _ => self.masks.insert(i as u32, mask),
        }
    }

    /// A write of `sectors` (not the whole page, `full`) to page `i` was accepted, in a
    /// table holding masks beside entries: the sectors the page held before (0 if unmapped)
    /// and its mask updated, with one probe (the separate lookups of the entry and the mask,
    /// and the mask's change, each probed the slot again: measured, most of what pairing
    /// gained). None in other layouts or for a write of no sector. Only for a map with no
    /// base (as every sparse one).
    #[inline]
    fn note_sub_page_write(&mut self, i: usize, sectors: u64, full: u64) -> Option<u64> {
        debug_assert!(sectors != full);
        if self.layout != Layout::Paired || sectors == 0 {
            return None;
        }
        let p = self.paired.value_mut(i as u32);
        let mapped = !matches!(p.entry, 0 | GONE);
        // What the page holds: its mask if it has one, else all of it if mapped (an
        // unmapped page holds only the sectors its accepted writes gave it).
        let held = match (p.mask, mapped) {
            (0, true) => full,
            (x, _) => x as u64,
        };
        let now = held | sectors;
        let was = p.mask != 0;
        p.mask = match now == full {
            true => 0,
            false => now as u32,
        };
        match (was, p.mask != 0) {
            (false, true) => self.paired_masks += 1,
            (true, false) => self.paired_masks -= 1,
            _ => {}
        }
        if p.entry == 0 && p.mask == 0 {
            self.paired.remove(i as u32);
        }
        Some(if mapped { held } else { 0 })
    }

    /// Page `i` holds no mask (whole, or unmapped).
    #[inline]
    fn clear_mask(&mut self, i: usize) {
        match self.layout {
            Layout::Paired => {
                let Some(p) = self.paired.get_mut(i as u32) else {
                    return;
                };
                if p.mask != 0 {
                    self.paired_masks -= 1;
                    p.mask = 0;
                }
                // A slot with no entry was the mask's alone (0 is what an absent key reads).
                if p.entry == 0 {
                    self.paired.remove(i as u32);
                }
            }
            _ => {
                if !self.masks.is_empty() {
                    self.masks.remove(i as u32);
                }
            }
        }
    }

    /// A sparse table of entries alone starts holding masks beside them (`Layout::Paired`),
    /// taking those of their own table. Only narrow masks (pages of at most 32 sectors) fit.
    fn pair_masks(&mut self) {
        if self.layout != Layout::Sparse || !matches!(self.masks, SectorMasks::Narrow(_)) {
            return;
        }
        let plain = std::mem::take(&mut self.sparse);
        self.paired.reserve(plain.len());
        for (i, entry) in plain.iter() {
            self.paired.value_mut(i).entry = entry;
        }
        self.layout = Layout::Paired;
        let masks = std::mem::replace(&mut self.masks, SectorMasks::new(32));
        for (i, mask) in masks.iter() {
            self.set_mask(i as usize, mask);
        }
    }

    /// `Paired` to `Sparse`: masks held beside the entries go to their own table, and the
    /// entries to a table of their own.
    #[cold]
    fn unpair(&mut self) {
        if self.layout != Layout::Paired {
            return;
        }
        let paired = std::mem::take(&mut self.paired);
        let mut masks = SectorMasks::new(32);
        masks.reserve(self.paired_masks);
        let mut plain = KeyMap::new();
        plain.reserve(paired.len());
        for (i, p) in paired.iter() {
            if p.mask != 0 {
                masks.insert(i, p.mask as u64);
            }
            if p.entry != 0 {
                plain.insert(i, p.entry);
            }
        }
        (self.masks, self.sparse, self.paired_masks) = (masks, plain, 0);
        self.layout = Layout::Sparse;
    }

    /// Entries of chunk d (shorter at the table's end); None if it was never written.
    fn chunk(&self, d: usize) -> Option<Cow<'_, [u32]>> {
        if d >= self.len.div_ceil(1 << self.shift) || !self.is_written(d) {
            return None;
        }
        let first = d << self.shift;
        let n = (self.len - first).min(1 << self.shift);
        Some(match self.layout {
            Layout::Dense => Cow::Borrowed(&self.pool[first..][..n]),
            Layout::Chunked => {
                Cow::Borrowed(&self.pool[(self.dir[d] as usize - 1) << self.shift..][..n])
            }
            // A lookup per entry: a sparse table reaches a snapshot only after `empty`
            // preconditioning, holding at most the translation pages' entries.
            Layout::Sparse | Layout::Paired => {
                Cow::Owned((first..first + n).map(|i| self.get(i)).collect())
            }
        })
    }

    /// The chunks written, in order.
    fn written(&self) -> impl Iterator<Item = usize> + '_ {
        self.written.iter().enumerate().flat_map(|(k, &w)| {
            let mut w = w;
            std::iter::from_fn(move || {
                (w != 0).then(|| {
                    let b = w.trailing_zeros() as usize;
                    w &= w - 1;
                    k * 64 + b
                })
            })
        })
    }

    /// Bytes held: the chunks' bits, the directory and the entries written (a dense table's
    /// untouched pages take no memory, so they are not counted).
    fn bytes(&self) -> u64 {
        let entries = match self.layout {
            Layout::Dense => self.written().count() << self.shift,
            Layout::Chunked => self.pool.len(),
            Layout::Sparse => self.sparse.bytes() / 4,
            Layout::Paired => self.paired.bytes() / 4,
        };
        // Masks in a table of their own are counted apart (`PageMap::mask_bytes`); those
        // beside the entries, here.
        (8 * self.written.len() + 4 * (self.dir.len() + entries)) as u64
    }
}

/// Which table of a `PageMap`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Table {
    L2p,
    P2l,
}

#[inline]
fn resolve(v: u32, base: impl FnOnce() -> u32) -> u32 {
    match v {
        0 => base(),
        GONE => NONE,
        _ => v - 1,
    }
}

/// Chunk sizes (log2 entries). P2L changes come a block at a time: 1,024 entries. L2P changes
/// scatter over the logical space with random writes: 1,024 entries (a directory of at most a
/// million entries, mostly in cache) up to a billion logical pages, 64 beyond, where a chunk
/// per scattered write would cost 4 KiB.
const P2L_SHIFT: u32 = 10;
fn l2p_shift(logical: usize) -> u32 {
    if logical <= 1 << 30 {
        10
    } else {
        6
    }
}

impl PageMap {
    /// Nothing mapped: `logical` logical pages (host and translation pages), `physical` pages
    /// of `sectors` sectors each (the width of the partly written pages' masks).
    pub fn new(logical: usize, physical: usize, sectors: u32) -> Self {
        // Entries hold a page number + 1 and GONE: the largest page + 1 must stay below GONE
        // (the configuration refuses larger devices by name).
        assert!(physical < GONE as usize && logical < GONE as usize);
        let mut l2p = Changes::new(logical, l2p_shift(logical), true);
        l2p.masks = SectorMasks::new(sectors);
        Self {
            base: Base::Empty,
            l2p,
            p2l: Changes::new(physical, P2L_SHIFT, false),
        }
    }

    /// Replaces the whole map by `base`, with no changes. The L2P starts sparse only with no
    /// base (a fresh device fills where it is written); a device that starts full changes
    /// everywhere, so its L2P starts dense (measured, with the lines layout sparse tables
    /// had before: steady-state random writes 10-17 % slower).
    pub fn reset(&mut self, base: Base) {
        let sparse = matches!(base, Base::Empty);
        self.base = base;
        // The masks are not the layout's: they stay.
        self.l2p.unpair();
        let masks = std::mem::replace(&mut self.l2p.masks, SectorMasks::new(1));
        self.l2p = Changes::new(self.l2p.len, self.l2p.shift, sparse);
        self.l2p.masks = masks;
        self.p2l = Changes::new(self.p2l.len, self.p2l.shift, false);
    }

    pub fn base(&self) -> &Base {
        &self.base
    }

    /// The physical page of logical page `l`, NONE if unmapped.
    #[inline]
    pub fn ppn(&self, l: u32) -> u32 {
        resolve(self.l2p.get(l as usize), || self.base.ppn(l))
    }

    /// Starts loading what `ppn(l)` and `mask(l)` will read, so that the misses overlap
    /// other work.
    #[inline]
    pub fn prefetch_ppn(&self, l: u32) {
        self.l2p.prefetch(l as usize);
        if self.l2p.layout != Layout::Paired {
            self.l2p.masks.prefetch(l);
        }
    }

    /// The logical page physical page `p` holds, NONE if it holds none (free or invalid).
    #[inline]
    pub fn lpn(&self, p: u32) -> u32 {
        resolve(self.p2l.get(p as usize), || self.base.lpn(p))
    }

    /// About `pages` logical pages not yet in the map will be written, `partial` of them
    /// perhaps partly: where the L2P is sparse, its table takes room for them beside its
    /// entries now, rather than growing as they come, and holds the masks of partly written
    /// pages beside their entries if at least half of them may be partly written and the
    /// table stays sparse (one probe for both; otherwise the masks' own table takes room for
    /// `partial`). What the map says is unchanged.
    pub fn expect_logical_writes(&mut self, pages: u64, partial: u64) {
        let pages = pages.min(self.l2p.len as u64) as usize;
        let partial = partial.min(pages as u64) as usize;
        // Not where the writes will turn the table dense (a sixteenth of it, with the
        // entries it holds): the masks would only move back to their own table then.
        let held = match self.l2p.layout {
            Layout::Paired => self.l2p.paired.len(),
            _ => self.l2p.sparse.len(),
        };
        let stays_sparse = (pages + held) * 16 < self.l2p.len;
        if partial > 0 && partial * 2 >= pages && stays_sparse {
            self.l2p.pair_masks();
        }
        self.l2p.reserve(pages);
        if self.l2p.layout != Layout::Paired && partial > 0 {
            self.l2p.masks.reserve(partial);
        }
    }

    /// The valid sectors of logical page `l` if it is partly written (set by `set_mask`).
    #[inline]
    pub fn mask(&self, l: u32) -> Option<u64> {
        self.l2p.mask(l as usize)
    }

    /// Whether no page is partly written: the full-page path asks this alone.
    #[inline]
    pub fn masks_empty(&self) -> bool {
        self.l2p.masks_empty()
    }

    /// Logical page `l` is partly written, in the sectors of `mask` (0: none, as a cached
    /// page's write-back that carries no sector leaves it; the masks then leave the L2P's
    /// slots for their own table). Independent of its entry: a write sets it when accepted,
    /// its program maps the page later.
    #[inline]
    pub fn set_mask(&mut self, l: u32, mask: u64) {
        self.l2p.set_mask(l as usize, mask);
    }

    /// A write of `sectors` to logical page `l` (less than the whole page, `full`) was
    /// accepted: the sectors the page held (0 if unmapped), with its mask updated as
    /// `PageFtl::note_write` would, in one lookup; None where the L2P's slots do not hold
    /// masks (the caller then asks `ppn`, `mask` and sets it).
    #[inline]
    pub fn note_sub_page_write(&mut self, l: u32, sectors: u64, full: u64) -> Option<u64> {
        debug_assert!(matches!(self.base, Base::Empty) || self.l2p.layout != Layout::Paired);
        self.l2p.note_sub_page_write(l as usize, sectors, full)
    }

    /// Logical page `l` is not partly written (whole, or unmapped).
    #[inline]
    pub fn clear_mask(&mut self, l: u32) {
        self.l2p.clear_mask(l as usize);
    }

    /// Bytes of the masks' own table (0 while the L2P's slots hold them: `change_bytes`
    /// counts those).
    pub fn mask_bytes(&self) -> u64 {
        self.l2p.masks.bytes() as u64
    }

    /// Logical page `l` is in physical page `p` (both directions).
    #[inline]
    pub fn link(&mut self, l: u32, p: u32) {
        *self.l2p.slot(l as usize) = p + 1;
        *self.p2l.slot(p as usize) = l + 1;
    }

    /// Logical page `l` is nowhere (trimmed).
    #[inline]
    pub fn clear_logical(&mut self, l: u32) {
        *self.l2p.slot(l as usize) = GONE;
    }

    /// Physical page `p` holds nothing valid.
    #[inline]
    pub fn clear_physical(&mut self, p: u32) {
        *self.p2l.slot(p as usize) = GONE;
    }

    /// Writes the base's answers for the pages of `block` into the change tables, both
    /// directions, where nothing changed them yet: a GC victim is scanned page by page and
    /// each of its valid pages looked up again when moved, and a formula's answer costs more
    /// than a table entry just written (in cache). Nothing changes what the map says.
    pub fn settle_block(&mut self, block: u32, pages_per_block: u32) {
        let Self { base, l2p, p2l } = self;
        let Base::Fast(f) = base else {
            return;
        };
        let first = block * pages_per_block;
        // The block's base pages, found by walking its ranks forward (no inversion per slot).
        f.block_pages(block, |slot, l| {
            let p = first + slot;
            let e = p2l.slot(p as usize);
            if *e == 0 {
                *e = l + 1;
                if l2p.get(l as usize) == 0 {
                    *l2p.slot(l as usize) = p + 1;
                }
            }
        });
        // What the base left unmapped in the block stays so, now without a formula.
        for p in first..first + pages_per_block {
            let e = p2l.slot(p as usize);
            if *e == 0 {
                *e = GONE;
            }
        }
    }

    /// Bytes the change tables hold (directories and written chunks; the base's formula
    /// parameters are per block and not counted).
    pub fn change_bytes(&self) -> u64 {
        self.l2p.bytes() + self.p2l.bytes()
    }

    /// Logical pages (host and translation pages).
    pub fn logical_len(&self) -> usize {
        self.l2p.len
    }

    pub fn physical_len(&self) -> usize {
        self.p2l.len
    }

    /// L2P written out (NONE where unmapped), for checks, tests and snapshots: O(pages).
    pub fn l2p(&self) -> Vec<u32> {
        (0..self.l2p.len as u32).map(|l| self.ppn(l)).collect()
    }

    /// P2L written out (NONE where a page holds nothing valid): O(pages).
    pub fn p2l(&self) -> Vec<u32> {
        (0..self.p2l.len as u32).map(|p| self.lpn(p)).collect()
    }

    fn table(&self, table: Table) -> &Changes {
        match table {
            Table::L2p => &self.l2p,
            Table::P2l => &self.p2l,
        }
    }

    /// Entries per chunk of `table`.
    pub fn chunk_len(&self, table: Table) -> usize {
        1 << self.table(table).shift
    }

    /// The chunks of `table` that were ever written (entries `i * chunk_len ..`), in order.
    pub fn touched_chunks(&self, table: Table) -> Vec<usize> {
        self.table(table).written().collect()
    }

    /// The change entries of chunk `i` of `table` (shorter at the table's end; empty if never
    /// written).
    pub fn chunk(&self, table: Table, i: usize) -> Cow<'_, [u32]> {
        self.table(table).chunk(i).unwrap_or(Cow::Borrowed(&[]))
    }

    /// Loading a snapshot: sets the base the loaded changes (`load_chunk`) apply to, keeping
    /// them; then `check`.
    pub fn load_base(&mut self, base: Base) {
        // As `reset`: only a map with no base keeps its L2P sparse.
        if !matches!(base, Base::Empty)
            && matches!(self.l2p.layout, Layout::Sparse | Layout::Paired)
        {
            self.l2p.densify();
        }
        self.base = base;
    }

    /// Loading a snapshot: change entries `values` at offsets `at` (ascending) of chunk `i` of
    /// `table`, or all its entries when `at` is None; unchecked against each other (`check`
    /// does that), or the reason they cannot be loaded (a chunk past the table, offsets out of
    /// order or past the chunk, an entry naming a page past the other table).
    pub fn load_chunk(
        &mut self,
        table: Table,
        i: usize,
        at: Option<&[u16]>,
        values: &[u32],
    ) -> Result<(), String> {
        let (t, other) = match table {
            Table::L2p => (&mut self.l2p, self.p2l.len),
            Table::P2l => (&mut self.p2l, self.l2p.len),
        };
        let start = i
            .checked_mul(1 << t.shift)
            .filter(|&s| s < t.len)
            .ok_or_else(|| format!("{table:?} chunk {i} is past the table ({} entries)", t.len))?;
        let n = (t.len - start).min(1 << t.shift);
        if let Some(&v) = values.iter().find(|&&v| v != GONE && v as usize > other) {
            return Err(format!(
                "{table:?} chunk {i} names page {} of {other}",
                v.wrapping_sub(1)
            ));
        }
        match at {
            None if values.len() == n => {
                for (k, &v) in values.iter().enumerate() {
                    *t.slot(start + k) = v;
                }
            }
            Some(at)
                if at.len() == values.len()
                    && at.windows(2).all(|w| w[0] < w[1])
                    && at.last().is_none_or(|&o| (o as usize) < n) =>
            {
                for (&o, &v) in at.iter().zip(values) {
                    *t.slot(start + o as usize) = v;
                }
                // A chunk written and changed back to the base is still a chunk.
                t.slot(start);
            }
            _ => return Err(format!("{table:?} chunk {i}: entries do not fit the chunk")),
        }
        Ok(())
    }

    /// (page, entry) of every entry of `table` that differs from the base.
    fn changes(&self, table: Table) -> impl Iterator<Item = (u32, u32)> + '_ {
        let t = self.table(table);
        t.written().flat_map(move |i| {
            let first = i << t.shift;
            let n = (t.len - first).min(1 << t.shift);
            (first..first + n).filter_map(move |k| match t.get(k) {
                0 => None,
                v => Some((k as u32, v)),
            })
        })
    }

    /// After loading: both directions agree wherever an entry changed. (Where neither a
    /// logical page nor its base physical page changed, the base agrees with itself; so a
    /// change in one direction must be met by a change in the other.) O(changed chunks).
    pub fn check(&self) -> Result<(), String> {
        for (l, v) in self.changes(Table::L2p) {
            if v != GONE && self.lpn(v - 1) != l {
                return Err(format!(
                    "logical page {l} is at physical page {}, which does not hold it",
                    v - 1
                ));
            }
            let b = self.base.ppn(l);
            if b != NONE && self.p2l.get(b as usize) == 0 {
                return Err(format!(
                    "logical page {l} moved but its physical page {b} still holds it"
                ));
            }
        }
        for (p, v) in self.changes(Table::P2l) {
            if v != GONE && self.ppn(v - 1) != p {
                return Err(format!(
                    "physical page {p} holds logical page {} which is mapped elsewhere",
                    v - 1
                ));
            }
            let b = self.base.lpn(p);
            if b != NONE && self.l2p.get(b as usize) == 0 {
                return Err(format!(
                    "physical page {p} changed but logical page {b} still maps to it"
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The striped base answers as the dense tables sequential filling wrote did, in both
    /// directions, and changes override it.
    #[test]
    fn striped_base_and_changes() {
        // 3 planes of 4 pages, units on planes 2, 0, 1; the first 10 logical pages.
        let stripe = [2u32, 0, 1];
        let mut m = PageMap::new(11, 12, 1);
        m.reset(Base::striped(10, 4, &stripe));
        let mut l2p = vec![NONE; 11];
        let mut p2l = vec![NONE; 12];
        for l in 0..10u32 {
            let p = stripe[(l % 3) as usize] * 4 + l / 3;
            l2p[l as usize] = p;
            p2l[p as usize] = l;
        }
        assert_eq!(m.l2p(), l2p);
        assert_eq!(m.p2l(), p2l);
        // Logical page 4 moves from physical page 1 to the free page 7 (plane 1 holds 3 of
        // its 4 pages); logical page 7 is trimmed.
        assert_eq!((m.ppn(4), m.lpn(7)), (1, NONE));
        m.clear_physical(1);
        m.link(4, 7);
        let p7 = m.ppn(7);
        m.clear_physical(p7);
        m.clear_logical(7);
        (l2p[4], p2l[1], p2l[7]) = (7, NONE, 4);
        (l2p[7], p2l[p7 as usize]) = (NONE, NONE);
        assert_eq!(m.l2p(), l2p);
        assert_eq!(m.p2l(), p2l);
        assert_eq!((m.ppn(10), m.lpn(3)), (NONE, NONE), "past the filled pages");
        // What a snapshot stores: the base and the touched chunks; loaded, the same map.
        let mut copy = PageMap::new(11, 12, 1);
        let base = Base::decode(&m.base().encode(|_| (0, 0)), 3, 1, 4, |_| (0, 0)).unwrap();
        copy.load_base(base);
        for t in [Table::L2p, Table::P2l] {
            for i in m.touched_chunks(t) {
                copy.load_chunk(t, i, None, &m.chunk(t, i)).unwrap();
            }
        }
        copy.check().unwrap();
        assert_eq!((copy.l2p(), copy.p2l()), (l2p, p2l.clone()));
        // A change in one direction only: P2L says physical page 1 holds logical page 4
        // again, while L2P has it at 7.
        let mut bad = PageMap::new(11, 12, 1);
        bad.load_base(Base::decode(&m.base().encode(|_| (0, 0)), 3, 1, 4, |_| (0, 0)).unwrap());
        for t in [Table::L2p, Table::P2l] {
            for i in m.touched_chunks(t) {
                let mut e = m.chunk(t, i).to_vec();
                if t == Table::P2l {
                    e[1] = 5;
                }
                bad.load_chunk(t, i, None, &e).unwrap();
            }
        }
        assert_eq!(
            bad.check(),
            Err("physical page 1 holds logical page 4 which is mapped elsewhere".into())
        );
        let mut m = PageMap::new(11, 12, 1);
        assert!(
            m.load_chunk(Table::L2p, 0, None, &[13; 11]).is_err(),
            "page 12 of 12"
        );
        assert!(
            m.load_chunk(Table::L2p, 0, Some(&[3, 2]), &[1, 1]).is_err(),
            "out of order"
        );
        assert!(
            m.load_chunk(Table::L2p, 0, Some(&[11]), &[1]).is_err(),
            "past the chunk"
        );
        m.load_chunk(Table::L2p, 0, Some(&[2, 5]), &[1, GONE])
            .unwrap();
        assert_eq!((m.ppn(2), m.ppn(5), m.ppn(3)), (0, NONE, NONE));
    }

    /// A table in `Layout::Sparse` answers every lookup, chunk and count of changes as the
    /// dense table given the same writes, in less memory while sparse, and turns dense when
    /// the entries written pass a sixteenth of the table (scattered writes: 50,000 entries, so
    /// after 3,125), or earlier, from a 256th, when they fill chunks in order: a run written
    /// first below the 256th keeps it sparse.
    #[test]
    fn sparse_layout_answers_as_dense_and_turns_dense_at_a_sixteenth() {
        let len = 50_000;
        let same = |a: &Changes, b: &Changes| {
            assert!((0..len).all(|k| a.get(k) == b.get(k)));
            assert!(a.written().eq(b.written()));
            for d in 0..len.div_ceil(1024) + 1 {
                assert_eq!(a.chunk(d), b.chunk(d), "chunk {d}");
            }
        };
        let mut sparse = Changes::new(len, 10, true);
        let mut dense = Changes::new(len, 10, false);
        assert_eq!(
            (sparse.layout, dense.layout),
            (Layout::Sparse, Layout::Dense)
        );
        let mut distinct = std::collections::BTreeSet::new();
        let mut x = 12345u64;
        for step in 0..4000u32 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            // The last entry first: the table's last chunk is short.
            let i = if step == 0 {
                len - 1
            } else {
                (x >> 33) as usize % len
            };
            let before = distinct.len();
            *sparse.slot(i) = step + 1;
            *dense.slot(i) = step + 1;
            distinct.insert(i);
            if before < 3125 {
                assert_eq!(sparse.layout, Layout::Sparse, "{before} entries written");
                if step > 200 {
                    assert!(sparse.bytes() < dense.bytes() / 2, "{before} entries");
                }
            } else {
                assert_eq!(sparse.layout, Layout::Dense, "{before} entries written");
            }
            if step < 100 || step % 101 == 0 || before == 3124 {
                same(&sparse, &dense);
            }
        }
        same(&sparse, &dense);
        assert_eq!(sparse.bytes(), dense.bytes());
        // In order: sparse below the 256th (195 entries), then dense before the first
        // chunk is full (its 4 KiB are less than a hash table of its entries).
        let mut ordered = Changes::new(len, 10, true);
        let mut dense = Changes::new(len, 10, false);
        for i in 0..1024 {
            *ordered.slot(i) = i as u32 + 7;
            *dense.slot(i) = i as u32 + 7;
            if i < 195 {
                assert_eq!(ordered.layout, Layout::Sparse, "{i}");
            }
        }
        assert_eq!(ordered.layout, Layout::Dense);
        same(&ordered, &dense);
        // A run of four chunks below the 256th (3,906 of 1,000,000 entries) first, then
        // scattered writes: sparse until the sixteenth, though the run alone takes less
        // memory dense.
        let mut mixed = Changes::new(1_000_000, 10, true);
        for i in 0..3800 {
            *mixed.slot(i) = 1;
        }
        assert!(mixed.sparse.bytes() > 4 << 12);
        // Each write in the next chunk, round the table, as random writes spread.
        for k in 0..20_000 {
            *mixed.slot((4000 + k * 1031) % 1_000_000) = 2;
        }
        assert_eq!(mixed.layout, Layout::Sparse);
    }

    /// Expected writes size a sparse L2P's table at once, to what as many more writes grow it
    /// to, what the map says unchanged; nothing is reserved from the sixteenth of the table on
    /// (the table would turn dense there) nor in a dense L2P.
    #[test]
    fn expected_writes_size_a_sparse_l2p_as_its_writes_would() {
        let n = 1usize << 20;
        let mut grown = PageMap::new(n, n, 1);
        let mut sized = PageMap::new(n, n, 1);
        sized.link(5, 9);
        sized.expect_logical_writes(10_000, 0);
        let reserved = sized.l2p.sparse.bytes();
        for l in 0..10_000u32 {
            grown.link(l * 97 % n as u32, l);
        }
        assert_eq!(reserved, grown.l2p.sparse.bytes());
        assert_eq!(sized.ppn(5), 9);
        for l in 0..10_000u32 {
            sized.link(l * 97 % n as u32, l);
        }
        assert_eq!(sized.l2p.sparse.bytes(), reserved, "no growth");
        assert!(
            (0..10_000u32).all(|l| sized.ppn(l * 97 % n as u32) == grown.ppn(l * 97 % n as u32))
        );
        // Entries already there count: 12,000 linked and 10,000 expected take the table
        // 22,000 links grow to (10,000 alone fit the table the 12,000 have).
        let mut before = PageMap::new(n, n, 1);
        let mut links = PageMap::new(n, n, 1);
        for l in 0..22_000u32 {
            links.link(l * 97 % n as u32, l);
            if l < 12_000 {
                before.link(l * 97 % n as u32, l);
            }
        }
        let had = before.l2p.sparse.bytes();
        before.expect_logical_writes(10_000, 0);
        assert!(before.l2p.sparse.bytes() > had);
        assert_eq!(before.l2p.sparse.bytes(), links.l2p.sparse.bytes());
        let mut big = PageMap::new(n, n, 1);
        big.expect_logical_writes((n / 16) as u64, 0);
        assert_eq!(
            big.l2p.sparse.bytes(),
            0,
            "a sixteenth turns dense: nothing reserved"
        );
        let mut full = PageMap::new(n, n, 1);
        full.reset(Base::striped(n as u32, 1 << 18, &[0, 1, 2, 3]));
        let before = full.change_bytes();
        full.expect_logical_writes(10_000, 0);
        assert_eq!(
            (full.l2p.layout, full.change_bytes()),
            (Layout::Dense, before)
        );
    }

    /// The L2P is sparse only over an empty base: a device that starts full (a base set by
    /// preconditioning or loaded from a snapshot) changes everywhere, so it starts dense,
    /// keeping the changes already loaded.
    #[test]
    fn l2p_starts_sparse_only_over_an_empty_base() {
        let stripe = [0u32, 1];
        let mut m = PageMap::new(40, 48, 1);
        assert_eq!(m.l2p.layout, Layout::Sparse);
        m.load_chunk(Table::L2p, 0, Some(&[3, 33]), &[8, GONE])
            .unwrap();
        m.load_base(Base::striped(36, 24, &stripe));
        assert_eq!(m.l2p.layout, Layout::Dense);
        // Changed entries as loaded, the others as the base says (page l on plane l mod 2).
        assert_eq!(
            (m.ppn(3), m.ppn(33), m.ppn(4), m.ppn(37)),
            (7, NONE, 2, NONE)
        );
        m.reset(Base::Empty);
        assert_eq!(m.l2p.layout, Layout::Sparse);
        m.reset(Base::striped(36, 24, &stripe));
        assert_eq!(m.l2p.layout, Layout::Dense);
        let mut e = PageMap::new(40, 48, 1);
        e.load_base(Base::Empty);
        assert_eq!(e.l2p.layout, Layout::Sparse);
    }

    /// Masks beside the entries (`Layout::Paired`) only where at least half the pages
    /// expected may be partly written, pages of at most 32 sectors, and a sparse L2P that
    /// the pages expected leave sparse; masks held move in when pairing starts and out when
    /// the table turns dense or is reset.
    #[test]
    fn masks_pair_with_entries_only_where_they_fit() {
        let paired = |m: &PageMap| m.l2p.layout == Layout::Paired;
        for (sectors, pages, partial, want) in [
            (16, 100, 50, true),
            (32, 100, 100, true),
            (16, 100, 49, false),
            (16, 100, 0, false),
            (64, 100, 100, false),
            // A sixteenth of the table: it will turn dense.
            (16, 2_500, 2_500, false),
            (16, 2_499, 2_499, true),
        ] {
            let mut m = PageMap::new(40_000, 40_000, sectors);
            m.expect_logical_writes(pages, partial);
            assert_eq!(paired(&m), want, "{sectors} sectors, {partial} of {pages}");
            // Room taken for the masks in their own table only where they are apart.
            assert_eq!(m.mask_bytes() > 0, !want && partial > 0);
        }
        let mut m = PageMap::new(40_000, 40_000, 16);
        m.set_mask(7, 3);
        m.link(7, 1);
        m.set_mask(9, 5);
        m.expect_logical_writes(100, 100);
        assert!(paired(&m) && m.mask_bytes() == 0);
        assert_eq!((m.mask(7), m.mask(9), m.mask(8)), (Some(3), Some(5), None));
        // A mask alone (page 9 not mapped) leaves no slot when cleared.
        m.clear_mask(9);
        assert_eq!((m.l2p.paired.len(), m.mask(9)), (1, None));
        m.set_mask(9, 5);
        m.reset(Base::Empty);
        assert!(
            !paired(&m) && m.mask_bytes() > 0,
            "reset: masks in their own table"
        );
        assert_eq!((m.ppn(7), m.mask(7), m.mask(9)), (NONE, Some(3), Some(5)));
        m.expect_logical_writes(100, 100);
        for l in 0..2_600u32 {
            m.link(l * 13 % 40_000, l);
        }
        assert_eq!(m.l2p.layout, Layout::Dense);
        assert!(
            !paired(&m) && m.mask_bytes() > 0,
            "dense: masks in their own table"
        );
        assert_eq!((m.mask(7), m.mask(9)), (Some(3), Some(5)));
        // Nothing to pair with in a dense L2P.
        m.expect_logical_writes(100, 100);
        assert!(!paired(&m));
        // A mask of no sector (Some(0), not None) ends pairing, entries and masks kept.
        let mut m = PageMap::new(40_000, 40_000, 16);
        m.expect_logical_writes(100, 100);
        m.link(4, 2);
        m.set_mask(4, 1);
        m.set_mask(5, 0);
        assert!(!paired(&m));
        assert_eq!(
            (m.ppn(4), m.mask(4), m.mask(5), m.mask(6)),
            (2, Some(1), Some(0), None)
        );
    }

    proptest::proptest! {
        /// A map holding masks beside its entries answers every entry and mask as one holding
        /// them in a table of their own, through the turn to dense (at a sixteenth of 4,000
        /// pages, mask-only slots counted) and resets.
        #[test]
        fn masks_beside_entries_answer_as_masks_apart(
            ops in proptest::collection::vec((0u16..400, 0u32..4_000, 0u64..1 << 16), 0..1_500)
        ) {
            let mut paired = PageMap::new(4_000, 8_000, 16);
            let mut apart = PageMap::new(4_000, 8_000, 16);
            paired.expect_logical_writes(200, 200);
            apart.expect_logical_writes(200, 0);
            proptest::prop_assert_eq!(paired.l2p.layout, Layout::Paired);
            // `PageFtl::note_write` and `valid_sectors` by separate lookups, as a map whose
            // masks are apart answers them.
            let full = 0xffffu64;
            let apart_write = |m: &mut PageMap, l: u32, sectors: u64| {
                let mapped = m.ppn(l) != NONE;
                let held = m.mask(l).unwrap_or(if mapped { full } else { 0 });
                match held | sectors {
                    now if now == full => m.clear_mask(l),
                    now => m.set_mask(l, now),
                }
                if mapped { held } else { 0 }
            };
            for (op, l, x) in ops {
                let sectors = x & full;
                if (150..=229).contains(&op) && sectors != full {
                    // Not paired once dense: then by separate lookups too.
                    let valid = match paired.note_sub_page_write(l, sectors, full) {
                        Some(v) => v,
                        None => apart_write(&mut paired, l, sectors),
                    };
                    proptest::prop_assert_eq!(valid, apart_write(&mut apart, l, sectors));
                    proptest::prop_assert_eq!(apart.note_sub_page_write(l, sectors, full), None);
                }
                for (m, partial) in [(&mut paired, 200), (&mut apart, 0)] {
                    match op {
                        0..=119 => m.link(l, x as u32 % 8_000),
                        120..=149 => m.clear_logical(l),
                        150..=229 => {}
                        230..=309 => m.set_mask(l, x),
                        310..=398 => m.clear_mask(l),
                        _ => {
                            m.reset(Base::Empty);
                            m.expect_logical_writes(200, partial);
                        }
                    }
                }
                proptest::prop_assert_eq!(paired.ppn(l), apart.ppn(l));
                proptest::prop_assert_eq!(paired.mask(l), apart.mask(l));
                proptest::prop_assert_eq!(paired.masks_empty(), apart.masks_empty());
            }
            for l in 0..4_000 {
                proptest::prop_assert_eq!(paired.ppn(l), apart.ppn(l));
                proptest::prop_assert_eq!(paired.mask(l), apart.mask(l));
            }
        }
    }
}
