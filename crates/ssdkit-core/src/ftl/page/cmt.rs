//! The cached mapping table (DFTL, Gupta et al., ASPLOS 2009; the MQSim paper, FAST'18,
//! section 4.3): which mapping entries the controller's DRAM holds, in LRU order per
//! partition, and which translation pages have changed entries not yet written back.
//!
//! By default (`ftl.cmt.granularity = "page"`) the cache holds entries a translation page at
//! a time: a miss reads the entry's whole translation page, and every entry of it is cached
//! from then on, so a sequential reader misses once per translation page and a write-back
//! never needs to read the page again. Capacity is counted in entries
//! (`capacity_bytes / entry_bytes`), rounded down to whole translation pages. With
//! `"entry"` it holds single entries, as MQSim does ([`EntryCache`]); see docs/ftl.md for
//! what differs.
//!
//! The truth of the map stays in the FTL's flat table; this module decides what a lookup or
//! an update costs in flash traffic, which the simulator then issues. State is flat arrays
//! indexed by translation page (a few per thousand logical pages), with an intrusive LRU list
//! per partition: every operation is O(1).

use crate::engine::Div;

const NIL: u32 = u32::MAX;

/// Counters of one flow's lookups.
#[derive(Debug, Clone, Copy, Default, serde::Serialize)]
pub struct CmtCounts {
    pub read_hits: u64,
    pub read_misses: u64,
    pub write_hits: u64,
    pub write_misses: u64,
}

/// A translation page that had to leave the cache dirty: it must be written back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Writeback(pub u32);

#[derive(Debug, Clone, Copy)]
struct Part {
    /// Most recently used page.
    head: u32,
    /// Least recently used: evicted first.
    tail: u32,
    len: u64,
    /// Capacity in translation pages.
    cap: u64,
}

pub struct Cmt {
    /// Granularity "entry": the cache of single entries, which then does all the work; the
    /// per-page arrays below stay empty.
    entry: Option<Box<EntryCache>>,
    /// Entries per translation page (MQSim's device: 1,365), divided by on every lookup.
    per_tpage: Div,
    logical_pages: u64,
    /// Per translation page: its partition while cached, else NIL.
    part: Vec<u32>,
    prev: Vec<u32>,
    next: Vec<u32>,
    /// Per translation page: cached with entries changed since its last write-back.
    dirty: Vec<bool>,
    parts: Vec<Part>,
    cached: u64,
}

impl Cmt {
    /// An empty cache with one partition per entry of `partition_entries` (capacities in
    /// entries, rounded down to whole translation pages).
    pub fn new(
        logical_pages: u64,
        entries_per_tpage: u32,
        translation_pages: u64,
        partition_entries: &[u64],
    ) -> Self {
        let n = translation_pages as usize;
        Self {
            entry: None,
            per_tpage: Div::new(entries_per_tpage),
            logical_pages,
            part: vec![NIL; n],
            prev: vec![NIL; n],
            next: vec![NIL; n],
            dirty: vec![false; n],
            parts: partition_entries
                .iter()
                .map(|&e| Part {
                    head: NIL,
                    tail: NIL,
                    len: 0,
                    cap: e / entries_per_tpage as u64,
                })
                .collect(),
            cached: 0,
        }
    }

    /// An empty cache of single entries (`ftl.cmt.granularity = "entry"`), one partition per
    /// entry of `partition_entries` (capacities in entries).
    pub fn new_entries(
        logical_pages: u64,
        entries_per_tpage: u32,
        translation_pages: u64,
        partition_entries: &[u64],
    ) -> Self {
        let mut c = Self::new(logical_pages, entries_per_tpage, 0, &[]);
        c.entry = Some(Box::new(EntryCache::new(
            entries_per_tpage,
            translation_pages,
            partition_entries,
        )));
        c
    }

    /// Single entries: where entries sit in the sectors of a translation page on flash
    /// (`on_flash_bytes` each, `sector_bytes` sectors, `sectors` of them a page), so that a
    /// write-back can read only the sectors of its page's clean cached entries.
    pub fn set_sectors(&mut self, on_flash_bytes: u32, sector_bytes: u32, sectors: u32) {
        if let Some(e) = self.entry.as_mut() {
            e.on_flash_bytes = on_flash_bytes;
            e.sector_bytes = Div::new(sector_bytes.max(1));
            e.sectors = sectors.clamp(1, 64);
            e.clean_in = vec![0; e.dirty_head.len() * e.sectors as usize];
        }
    }

    /// Single entries: the sectors (a mask) holding the clean cached entries of the page the
    /// last eviction wrote back, counted before the write-back cleaned its dirty ones: what
    /// MQSim reads to merge them (`Address_Mapping_Unit_Page_Level.cpp:1586-1612`; 0 when it
    /// holds none). None without `set_sectors`: the whole page.
    pub fn writeback_sectors(&self) -> Option<u64> {
        self.entry
            .as_ref()
            .filter(|e| e.sectors > 0)
            .map(|e| e.last_sectors)
    }

    /// `ftl.cmt.writeback_lru = "front"`: a write-back makes the dirty entries of its page
    /// the most recently used (single entries only).
    pub fn set_writeback_front(&mut self) {
        if let Some(e) = self.entry.as_mut() {
            e.front_on_writeback = true;
        }
    }

    /// Whether the cache holds single entries (granularity "entry").
    #[inline]
    pub fn by_entry(&self) -> bool {
        self.entry.is_some()
    }

    /// Whether a cached translation page (or, granularity "entry", an entry) is dirty.
    pub fn any_dirty(&self) -> bool {
        match &self.entry {
            Some(e) => e.dirty_head.iter().any(|&h| h != NIL),
            None => self.dirty.contains(&true),
        }
    }

    #[inline]
    pub fn tpage_of(&self, lpn: u32) -> u32 {
        self.per_tpage.quot(lpn)
    }
    pub fn entries_per_tpage(&self) -> u32 {
        self.per_tpage.get()
    }
    pub fn translation_pages(&self) -> u64 {
        match &self.entry {
            Some(e) => e.dirty_head.len() as u64,
            None => self.part.len() as u64,
        }
    }
    pub fn partitions(&self) -> usize {
        match &self.entry {
            Some(e) => e.parts.len(),
            None => self.parts.len(),
        }
    }
    /// Translation pages cached now, over every partition (none with granularity "entry").
    pub fn cached_pages(&self) -> u64 {
        self.cached
    }
    /// Entries cached now (the last translation page may be short).
    pub fn cached_entries(&self) -> u64 {
        if let Some(e) = &self.entry {
            return e.parts.iter().map(|p| p.len).sum();
        }
        (0..self.part.len() as u32)
            .filter(|&t| self.part[t as usize] != NIL)
            .map(|t| self.entries_in(t) as u64)
            .sum()
    }
    /// Capacity in translation pages of partition `p`.
    pub fn capacity_pages(&self, p: usize) -> u64 {
        self.parts[p].cap
    }
    /// Capacity in entries of partition `p` (granularity "entry").
    pub fn capacity_entries(&self, p: usize) -> u64 {
        match &self.entry {
            Some(e) => e.parts[p].cap,
            None => self.parts[p].cap * self.per_tpage.get() as u64,
        }
    }
    /// Entries of translation page `t` (the last page may be short).
    pub fn entries_in(&self, t: u32) -> u32 {
        let first = t as u64 * self.per_tpage.get() as u64;
        (self.logical_pages - first).min(self.per_tpage.get() as u64) as u32
    }
    /// Whether translation page `t` is cached whole (so a write-back needs no read of it);
    /// never with granularity "entry".
    #[inline]
    pub fn page_cached(&self, t: u32) -> bool {
        self.entry.is_none() && self.part[t as usize] != NIL
    }

    fn unlink(&mut self, t: u32) {
        let (prev, next) = (self.prev[t as usize], self.next[t as usize]);
        let p = &mut self.parts[self.part[t as usize] as usize];
        if prev == NIL {
            p.head = next;
        } else {
            self.next[prev as usize] = next;
        }
        if next == NIL {
            p.tail = prev;
        } else {
            self.prev[next as usize] = prev;
        }
    }

    fn push_front(&mut self, t: u32) {
        let p = self.part[t as usize] as usize;
        let head = self.parts[p].head;
        self.prev[t as usize] = NIL;
        self.next[t as usize] = head;
        if head == NIL {
            self.parts[p].tail = t;
        } else {
            self.prev[head as usize] = t;
        }
        self.parts[p].head = t;
    }

    /// Whether `lpn`'s entry is cached; a hit makes its page the most recently used.
    #[inline]
    pub fn lookup(&mut self, lpn: u32) -> bool {
        if let Some(e) = self.entry.as_mut() {
            return e.lookup(lpn);
        }
        let t = self.tpage_of(lpn);
        let p = self.part[t as usize];
        if p == NIL {
            return false;
        }
        if self.parts[p as usize].head != t {
            self.unlink(t);
            self.push_front(t);
        }
        true
    }

    /// Whether `lpn`'s entry is cached, without touching the LRU order.
    pub fn contains(&self, lpn: u32) -> bool {
        match &self.entry {
            Some(e) => e.index.contains_key(&lpn),
            None => self.page_cached(self.tpage_of(lpn)),
        }
    }

    /// Whether translation page `t` has cached changes not written back.
    pub fn is_dirty(&self, t: u32) -> bool {
        match &self.entry {
            Some(e) => e.dirty_head[t as usize] != NIL,
            None => self.dirty[t as usize],
        }
    }

    /// Marks `lpn`'s cached entry changed. Returns false when it is not cached.
    #[inline]
    pub fn mark_dirty(&mut self, lpn: u32) -> bool {
        if let Some(e) = self.entry.as_mut() {
            return e.mark_dirty(lpn);
        }
        let t = self.tpage_of(lpn) as usize;
        if self.part[t] == NIL {
            return false;
        }
        self.dirty[t] = true;
        true
    }

    /// Caches translation page `t` in partition `part` (clean, or dirty), as the most
    /// recently used. When the partition is full its least recently used page leaves; if that
    /// one was dirty it is returned, to be written back. A page already cached is only
    /// refreshed.
    pub fn insert(&mut self, t: u32, part: usize, dirty: bool) -> Option<Writeback> {
        debug_assert!(self.entry.is_none(), "granularity \"page\"");
        if self.part[t as usize] != NIL {
            if self.parts[self.part[t as usize] as usize].head != t {
                self.unlink(t);
                self.push_front(t);
            }
            self.dirty[t as usize] |= dirty;
            return None;
        }
        let mut out = None;
        if self.parts[part].len >= self.parts[part].cap {
            out = self.evict(part);
        }
        self.part[t as usize] = part as u32;
        self.dirty[t as usize] = dirty;
        self.push_front(t);
        self.parts[part].len += 1;
        self.cached += 1;
        out
    }

    fn evict(&mut self, part: usize) -> Option<Writeback> {
        let t = self.parts[part].tail;
        if t == NIL {
            return None;
        }
        self.unlink(t);
        self.parts[part].len -= 1;
        self.cached -= 1;
        self.part[t as usize] = NIL;
        std::mem::take(&mut self.dirty[t as usize]).then_some(Writeback(t))
    }

    /// Caches `lpn`'s entry alone in partition `part` (granularity "entry"), as the most
    /// recently used; see [`EntryCache::insert`].
    #[inline]
    pub fn insert_entry(&mut self, lpn: u32, part: usize, dirty: bool) -> Option<Writeback> {
        self.entry
            .as_mut()
            .expect("granularity \"entry\"")
            .insert(lpn, part, dirty)
    }

    /// Caches what `unit` names, a translation page or (granularity "entry") an entry: how a
    /// snapshot's cache is restored.
    pub fn restore(&mut self, unit: u32, part: usize, dirty: bool) -> Option<Writeback> {
        if self.entry.is_some() {
            self.insert_entry(unit, part, dirty)
        } else {
            self.insert(unit, part, dirty)
        }
    }

    /// Units a snapshot may name: translation pages, or logical pages with granularity
    /// "entry".
    pub fn units(&self) -> u64 {
        match &self.entry {
            Some(_) => self.logical_pages,
            None => self.part.len() as u64,
        }
    }

    /// Translation page `t` is being written back: its cached entries are clean from now.
    pub fn written_back(&mut self, t: u32) {
        match self.entry.as_mut() {
            Some(e) => e.clean(t, NIL),
            None => self.dirty[t as usize] = false,
        }
    }

    /// Cached units (translation pages, or entries with granularity "entry") in LRU order
    /// (least recently used first) per partition, with their dirty flag: what a snapshot
    /// saves.
    pub fn pages(&self) -> Vec<Vec<(u32, bool)>> {
        if let Some(e) = &self.entry {
            return e.units();
        }
        self.parts
            .iter()
            .map(|p| {
                let mut v = Vec::with_capacity(p.len as usize);
                let mut t = p.tail;
                while t != NIL {
                    v.push((t, self.dirty[t as usize]));
                    t = self.prev[t as usize];
                }
                v
            })
            .collect()
    }
}

/// The cache of single entries (`ftl.cmt.granularity = "entry"`), as MQSim's CMT
/// (Address_Mapping_Unit_Page_Level.cpp:10-165): LRU over entries per partition, each entry
/// clean or dirty. A dirty entry's eviction writes back its translation page with every dirty
/// entry of it (cpp:1585-1598), so each translation page keeps a list of its dirty entries.
/// Slots are preallocated for the capacity; a map finds an entry's slot: O(1) per operation,
/// memory in proportion to the capacity, not to the device.
pub struct EntryCache {
    per_tpage: Div,
    index: std::collections::HashMap<u32, u32, RunHash>,
    /// Per slot, its entry and links, together: an operation on a slot touches one cache
    /// line, where an array per field cost a miss per field (measured: 1 M random writes on
    /// MQSim's device under `--mqsim-compat`, loop 2.5-2.7 s with arrays, 1.9-2.0 s so).
    slots: Vec<Slot>,
    free: Vec<u32>,
    /// Per slot, its partition, when there are several (partitions are per flow, at most
    /// 65,535); empty with one, where every slot's is 0.
    part_of: Vec<u16>,
    /// Per translation page: the first of its dirty cached entries, or NIL.
    dirty_head: Vec<u32>,
    parts: Vec<Part>,
    /// `ftl.cmt.writeback_lru = "front"`: MQSim's write-back reads each dirty entry of its
    /// page with `Retrieve_ppa`, which moves it to the front of the LRU list, in ascending
    /// order (Address_Mapping_Unit_Page_Level.cpp:50, 1585-1592), so the next eviction takes
    /// an older entry, likely another page's and dirty.
    front_on_writeback: bool,
    /// `clean`'s buffer.
    moved: Vec<u32>,
    /// `Cmt::set_sectors`: bytes of an entry on flash, of a sector, sectors per page; and per
    /// translation page and sector, the clean cached entries in it.
    on_flash_bytes: u32,
    sector_bytes: Div,
    sectors: u32,
    clean_in: Vec<u16>,
    /// `Cmt::writeback_sectors`.
    last_sectors: u64,
}

/// Hashes a logical page so that the 64 of an aligned run (`lpn / 64` equal) take 64
/// neighbouring buckets of the table: a sequential reader's lookups, inserts and evictions
/// walk the table's control bytes and buckets in order, one random jump per run, where a
/// spreading hash sends each page elsewhere (measured: 100,000 128 KiB sequential reads on
/// MQSim's device under `--mqsim-compat`, loop 0.62 to 0.60 s with runs of eight pages, 0.41
/// to 0.36 s from eight to 64; random lookups cost the same). The table's bucket is the
/// hash's low bits and its tag the top seven: the run's number is mixed into both, the page
/// within the run fills the low six bits and is mixed into the tag too, so the pages of a
/// run do not all match one tag (each match costs a key comparison). Lookups alone depend
/// on it: nothing iterates the table, so the order of results does not.
#[derive(Debug, Clone, Copy, Default)]
struct RunHash;

impl std::hash::BuildHasher for RunHash {
    type Hasher = RunHasher;
    #[inline]
    fn build_hasher(&self) -> RunHasher {
        RunHasher(0)
    }
}

struct RunHasher(u64);

/// log2 of the pages of a run that take neighbouring buckets.
const RUN_BITS: u32 = 6;
/// The hash's bits below its tag (hashbrown's tag is the top seven).
const BELOW_TAG: u64 = (1 << 57) - 1;

impl std::hash::Hasher for RunHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        // Only `u32` keys reach it (`write_u32`); other bytes are folded in for safety.
        for &b in bytes {
            self.0 = (self.0 << 8) | b as u64;
        }
    }

    #[inline]
    fn write_u32(&mut self, n: u32) {
        self.0 = n as u64;
    }

    /// The run number mixed (every bit of it reaches every bit of the hash), the page
    /// within the run in the low bits and folded into the tag (the top seven bits).
    #[inline]
    fn finish(&self) -> u64 {
        let m = crate::engine::mix64(self.0 >> RUN_BITS);
        let k = self.0 & ((1 << RUN_BITS) - 1);
        (m & (BELOW_TAG & !((1 << RUN_BITS) - 1))) | k | ((m >> 57 ^ k) << 57)
    }
}

/// One slot of an `EntryCache`: the logical page it caches, its LRU neighbours within its
/// partition, and the next of its translation page's dirty entries (NIL after the last;
/// `CLEAN` when the entry is clean). 16 bytes, four to a cache line: with 262,144 entries
/// (MQSim's 2 MiB cache) the slots take 4 MiB, where 32-byte slots with the partition and a
/// dirty flag inside took 8 (measured: see docs/performance.md).
#[derive(Debug, Clone, Copy)]
#[repr(align(16))]
struct Slot {
    lpn: u32,
    prev: u32,
    next: u32,
    dnext: u32,
}

/// `Slot::dnext` of a clean entry. Slot numbers stay below it: the slots are counted in u32.
const CLEAN: u32 = u32::MAX - 1;

impl Slot {
    #[inline]
    fn dirty(&self) -> bool {
        self.dnext != CLEAN
    }
}

impl EntryCache {
    fn new(entries_per_tpage: u32, translation_pages: u64, partition_entries: &[u64]) -> Self {
        let n: u64 = partition_entries.iter().sum();
        let n = n as usize;
        Self {
            per_tpage: Div::new(entries_per_tpage),
            index: std::collections::HashMap::with_capacity_and_hasher(n, RunHash),
            // Reserved, not written: a slot is written when first taken (`take_slot`), so a
            // run that fills a tenth of the cache touches a tenth of the slots' pages (each
            // first touch costs about 2 us on the machines measured; MQSim's 2 MiB cache is
            // 4 MiB of slots).
            slots: Vec::with_capacity(n),
            free: Vec::new(),
            part_of: if partition_entries.len() > 1 {
                vec![0; n]
            } else {
                Vec::new()
            },
            dirty_head: vec![NIL; translation_pages as usize],
            parts: partition_entries
                .iter()
                .map(|&e| Part {
                    head: NIL,
                    tail: NIL,
                    len: 0,
                    cap: e,
                })
                .collect(),
            front_on_writeback: false,
            moved: Vec::new(),
            on_flash_bytes: 0,
            sector_bytes: Div::new(1),
            sectors: 0,
            clean_in: Vec::new(),
            last_sectors: 0,
        }
    }

    /// Where the clean count of `lpn`'s sector is in `clean_in`, if kept.
    #[inline]
    fn sector_slot(&self, lpn: u32) -> Option<usize> {
        if self.clean_in.is_empty() {
            return None;
        }
        let t = self.per_tpage.quot(lpn) as usize;
        let at = self.per_tpage.modulo(lpn) as u64 * self.on_flash_bytes as u64;
        let k = self.sector_bytes.quot64(at).min(self.sectors as u64 - 1) as usize;
        Some(t * self.sectors as usize + k)
    }

    /// Slot `s` (cached) turned clean (+1) or stopped being a clean cached entry (-1).
    #[inline]
    fn count_clean(&mut self, s: u32, up: bool) {
        if let Some(i) = self.sector_slot(self.slots[s as usize].lpn) {
            if up {
                self.clean_in[i] += 1;
            } else {
                self.clean_in[i] -= 1;
            }
        }
    }

    /// Slot `s`'s partition.
    #[inline]
    fn part(&self, s: u32) -> usize {
        match self.part_of.is_empty() {
            true => 0,
            false => self.part_of[s as usize] as usize,
        }
    }

    fn unlink(&mut self, s: u32) {
        let (prev, next) = (self.slots[s as usize].prev, self.slots[s as usize].next);
        let part = self.part(s);
        let p = &mut self.parts[part];
        if prev == NIL {
            p.head = next;
        } else {
            self.slots[prev as usize].next = next;
        }
        if next == NIL {
            p.tail = prev;
        } else {
            self.slots[next as usize].prev = prev;
        }
    }

    fn push_front(&mut self, s: u32) {
        let p = self.part(s);
        let head = self.parts[p].head;
        self.slots[s as usize].prev = NIL;
        self.slots[s as usize].next = head;
        if head == NIL {
            self.parts[p].tail = s;
        } else {
            self.slots[head as usize].prev = s;
        }
        self.parts[p].head = s;
    }

    #[inline]
    fn lookup(&mut self, lpn: u32) -> bool {
        let Some(&s) = self.index.get(&lpn) else {
            return false;
        };
        if self.parts[self.part(s)].head != s {
            self.unlink(s);
            self.push_front(s);
        }
        true
    }

    fn set_dirty(&mut self, s: u32) {
        if self.slots[s as usize].dirty() {
            return;
        }
        self.count_clean(s, false);
        let t = self.per_tpage.quot(self.slots[s as usize].lpn) as usize;
        self.slots[s as usize].dnext = self.dirty_head[t];
        self.dirty_head[t] = s;
    }

    #[inline]
    fn mark_dirty(&mut self, lpn: u32) -> bool {
        match self.index.get(&lpn) {
            Some(&s) => {
                self.set_dirty(s);
                true
            }
            None => false,
        }
    }

    /// Every cached entry of translation page `t` is clean (its write-back carries them).
    /// With `front_on_writeback`, each dirty one also becomes the most recently used of its
    /// partition, the highest logical page last. `left`: the slot whose eviction wrote the
    /// page back, no longer cached (NIL: none).
    fn clean(&mut self, t: u32, left: u32) {
        let mut s = std::mem::replace(&mut self.dirty_head[t as usize], NIL);
        let mut moved = std::mem::take(&mut self.moved);
        while s != NIL {
            let next = std::mem::replace(&mut self.slots[s as usize].dnext, CLEAN);
            if s != left {
                self.count_clean(s, true);
                if self.front_on_writeback {
                    moved.push(s);
                }
            }
            s = next;
        }
        moved.sort_unstable_by_key(|&s| self.slots[s as usize].lpn);
        for &s in &moved {
            if self.parts[self.part(s)].head != s {
                self.unlink(s);
                self.push_front(s);
            }
        }
        moved.clear();
        self.moved = moved;
    }

    /// Caches `lpn`'s entry in partition `part` as the most recently used (an entry already
    /// cached is only refreshed, and made dirty with `dirty`). When the partition is full its
    /// least recently used entry leaves; if it was dirty, its translation page is returned to
    /// be written back, and every dirty entry of that page is clean from now on (MQSim writes
    /// them back together and updates its on-flash table at once, cpp:1585-1598).
    fn insert(&mut self, lpn: u32, part: usize, dirty: bool) -> Option<Writeback> {
        if let Some(&s) = self.index.get(&lpn) {
            if self.parts[self.part(s)].head != s {
                self.unlink(s);
                self.push_front(s);
            }
            if dirty {
                self.set_dirty(s);
            }
            return None;
        }
        let mut out = None;
        if self.parts[part].len >= self.parts[part].cap {
            out = self.evict(part);
        }
        let s = self.take_slot();
        self.slots[s as usize].lpn = lpn;
        debug_assert!(!self.slots[s as usize].dirty(), "a free slot is clean");
        if !self.part_of.is_empty() {
            self.part_of[s as usize] = part as u16;
        }
        self.count_clean(s, true);
        self.index.insert(lpn, s);
        self.push_front(s);
        self.parts[part].len += 1;
        if dirty {
            self.set_dirty(s);
        }
        out
    }

    /// A free slot: one an eviction left, else the next never used (clean, unlinked).
    #[inline]
    fn take_slot(&mut self) -> u32 {
        if let Some(s) = self.free.pop() {
            return s;
        }
        assert!(
            self.slots.len() < self.slots.capacity(),
            "a partition full evicts first"
        );
        self.slots.push(Slot {
            lpn: 0,
            prev: NIL,
            next: NIL,
            dnext: CLEAN,
        });
        (self.slots.len() - 1) as u32
    }

    fn evict(&mut self, part: usize) -> Option<Writeback> {
        let s = self.parts[part].tail;
        if s == NIL {
            return None;
        }
        self.unlink(s);
        self.parts[part].len -= 1;
        let lpn = self.slots[s as usize].lpn;
        self.index.remove(&lpn);
        self.free.push(s);
        if !self.slots[s as usize].dirty() {
            self.count_clean(s, false);
            return None;
        }
        let t = self.per_tpage.quot(lpn);
        self.last_sectors = match self.sectors {
            0 => 0,
            n => {
                let at = t as usize * n as usize;
                (0..n as usize)
                    .filter(|&k| self.clean_in[at + k] > 0)
                    .fold(0, |m, k| m | 1 << k)
            }
        };
        self.clean(t, s);
        Some(Writeback(t))
    }

    fn units(&self) -> Vec<Vec<(u32, bool)>> {
        self.parts
            .iter()
            .map(|p| {
                let mut v = Vec::with_capacity(p.len as usize);
                let mut s = p.tail;
                while s != NIL {
                    v.push((self.slots[s as usize].lpn, self.slots[s as usize].dirty()));
                    s = self.slots[s as usize].prev;
                }
                v
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run_hash(lpn: u32) -> u64 {
        use std::hash::{BuildHasher, Hasher};
        let mut h = RunHash.build_hasher();
        h.write_u32(lpn);
        h.finish()
    }

    #[test]
    fn a_run_of_pages_takes_neighbouring_buckets_with_distinct_tags() {
        // hashbrown's bucket is the hash's low bits (masked to the table), its tag the top
        // seven: the 64 pages of an aligned run must differ in the low six bits alone, in
        // order, and carry 64 different tags; neighbouring runs must land apart.
        let run = 1u64 << RUN_BITS;
        for first in [0u32, 64, 4_096 * 64, 62_000_000 & !63, !63] {
            let base = run_hash(first) & BELOW_TAG;
            assert_eq!(base % run, 0, "run at {first}");
            let mut tags = std::collections::HashSet::new();
            for k in 0..run as u32 {
                let h = run_hash(first + k);
                assert_eq!(
                    h & BELOW_TAG,
                    base + k as u64,
                    "page {k} of the run at {first}"
                );
                tags.insert(h >> 57);
            }
            assert_eq!(tags.len(), run as usize, "tags of the run at {first}");
        }
        // The runs' positions in a table of 2^19 buckets (MQSim's 2 MiB cache): spread, not
        // consecutive (a spreading hash of the run number puts 4,096 runs on at least 3,000
        // of the 8,192 run-sized places; consecutive places would be 4,096 in a row).
        let places: std::collections::HashSet<u64> = (0..4_096u32)
            .map(|r| (run_hash(r * 64) & ((1 << 19) - 1)) >> RUN_BITS)
            .collect();
        assert!(places.len() > 3_000, "{} places", places.len());
        let in_a_row = (0..4_096u32)
            .filter(|&r| {
                let a = run_hash(r * 64) & ((1 << 19) - 1);
                let b = run_hash((r + 1) * 64) & ((1 << 19) - 1);
                b == a + run
            })
            .count();
        assert!(in_a_row < 10, "{in_a_row} runs follow the one before");
    }

    #[test]
    fn lru_evicts_the_least_recently_used_page_and_returns_it_if_dirty() {
        // Four entries per translation page, room for three pages (12 entries, 14 given).
        let mut c = Cmt::new(32, 4, 8, &[14]);
        assert_eq!(c.capacity_pages(0), 3);
        assert_eq!(c.insert(0, 0, true), None);
        assert_eq!(c.insert(1, 0, false), None);
        assert_eq!(c.insert(2, 0, false), None);
        assert!(
            c.lookup(1),
            "logical page 1 is in translation page 0, now the most recent"
        );
        // Page 1 is the LRU and clean: no write-back.
        assert_eq!(c.insert(3, 0, true), None);
        assert!(!c.page_cached(1) && !c.contains(5));
        // Page 2 (clean), then page 0 (dirty).
        assert_eq!(c.insert(4, 0, false), None);
        assert_eq!(c.insert(5, 0, false), Some(Writeback(0)));
        assert!(c.is_dirty(3), "page 3 stays dirty");
        assert_eq!(c.cached_pages(), 3);
        assert_eq!(c.cached_entries(), 12);
    }

    #[test]
    fn a_write_back_cleans_the_page_and_marking_needs_the_page_cached() {
        let mut c = Cmt::new(30, 4, 8, &[8]);
        c.insert(0, 0, false);
        assert!(c.mark_dirty(3), "entry 3 is in page 0");
        assert!(!c.mark_dirty(4), "page 1 is not cached");
        assert!(c.is_dirty(0));
        c.written_back(0);
        assert!(!c.is_dirty(0));
        assert_eq!(c.entries_in(7), 2, "the last page holds 30 - 28 entries");
    }

    #[test]
    fn partitions_evict_only_their_own_pages() {
        let mut c = Cmt::new(64, 8, 8, &[8, 16]);
        c.insert(0, 0, false);
        c.insert(1, 1, false);
        c.insert(2, 1, false);
        c.insert(3, 0, false); // partition 0 holds one page: page 0 leaves
        assert!(!c.page_cached(0));
        assert!(c.page_cached(1) && c.page_cached(2) && c.page_cached(3));
        assert_eq!(
            c.pages(),
            vec![vec![(3, false)], vec![(1, false), (2, false)]]
        );
    }

    /// A write-back reads the sectors of its page's clean cached entries, counted before it
    /// cleans the dirty ones (MQSim's merge read): 8 entries of 128 bytes a page, two sectors
    /// of 512 bytes (entries 0-3, 4-7).
    #[test]
    fn a_write_back_reads_the_sectors_of_its_clean_entries() {
        let mut c = Cmt::new_entries(32, 8, 4, &[4]);
        assert_eq!(c.writeback_sectors(), None, "the whole page until set");
        c.set_sectors(128, 512, 2);
        for (lpn, dirty) in [(0, true), (1, false), (5, false), (9, false)] {
            assert_eq!(c.insert_entry(lpn, 0, dirty), None);
        }
        // 0 leaves dirty: 1 (sector 0) and 5 (sector 1) are clean.
        assert_eq!(c.insert_entry(10, 0, false), Some(Writeback(0)));
        assert_eq!(c.writeback_sectors(), Some(0b11));
        // 1 and 5 dirty: 1 leaves, and the write-back cleans 5: nothing clean to read.
        assert!(c.mark_dirty(1) && c.mark_dirty(5));
        assert_eq!(c.insert_entry(11, 0, false), Some(Writeback(0)));
        assert_eq!(c.writeback_sectors(), Some(0));
        // 5, clean now, leaves without a write-back; then 9 dirty leaves with 10 and 11
        // clean in page 1's sector 0 (entries 8-11).
        assert_eq!(c.insert_entry(16, 0, false), None);
        assert!(c.mark_dirty(9));
        assert_eq!(c.insert_entry(20, 0, false), Some(Writeback(1)));
        assert_eq!(c.writeback_sectors(), Some(0b01));
    }

    #[test]
    fn entries_evict_alone_and_a_dirty_one_cleans_its_translation_page() {
        // Four entries per translation page, room for three entries.
        let mut c = Cmt::new_entries(32, 4, 8, &[3]);
        assert_eq!(c.insert_entry(0, 0, true), None);
        assert_eq!(c.insert_entry(1, 0, true), None);
        assert_eq!(c.insert_entry(9, 0, false), None);
        assert!(c.contains(1) && !c.contains(2), "one entry, not its page");
        assert!(c.is_dirty(0) && !c.is_dirty(2));
        // Entry 0 (dirty) leaves: page 0 is written back with entry 1, now clean.
        assert_eq!(c.insert_entry(20, 0, false), Some(Writeback(0)));
        assert!(!c.is_dirty(0) && c.contains(1));
        // Entry 1 leaves clean: nothing to write.
        assert_eq!(c.insert_entry(21, 0, false), None);
        assert!(c.lookup(9), "9 is now the most recent");
        assert!(c.mark_dirty(20) && !c.mark_dirty(1));
        assert_eq!(c.insert_entry(22, 0, false), Some(Writeback(5)));
        assert_eq!(c.cached_entries(), 3);
        assert_eq!(c.pages(), vec![vec![(21, false), (9, false), (22, false)]]);
        // MQSim's LRU (`set_writeback_front`): the two dirty entries of page 0 besides the one
        // evicted become the most recent, the higher page last, ahead of entry 9 used since.
        let mut c = Cmt::new_entries(32, 4, 8, &[4]);
        c.set_writeback_front();
        for (lpn, dirty) in [(0, true), (3, true), (1, true), (9, false)] {
            assert_eq!(c.insert_entry(lpn, 0, dirty), None);
        }
        assert_eq!(c.insert_entry(20, 0, false), Some(Writeback(0)));
        assert_eq!(
            c.pages(),
            vec![vec![(9, false), (1, false), (3, false), (20, false)]]
        );
        assert!(
            !c.page_cached(2),
            "a write-back always reads with single entries"
        );
    }

    /// Per-flow partitions (MQSim's CMT_Sharing_Mode EQUAL_PARTITIONING): each evicts its own
    /// least recently used entry, and a write-back cleans the page's dirty entries in either
    /// partition, each moved to the front of its own.
    #[test]
    fn partitions_evict_their_own_entries_and_share_write_backs() {
        let mut c = Cmt::new_entries(32, 4, 8, &[2, 2]);
        c.set_writeback_front();
        assert_eq!(c.insert_entry(0, 0, true), None);
        assert_eq!(c.insert_entry(1, 1, true), None);
        assert_eq!(c.insert_entry(8, 0, false), None);
        assert_eq!(c.insert_entry(12, 1, false), None);
        assert_eq!(
            c.pages(),
            vec![vec![(0, true), (8, false)], vec![(1, true), (12, false)]]
        );
        // Partition 1 is full: its oldest, dirty entry 1 leaves, and page 0's write-back
        // cleans entry 0 in partition 0, now the most recent there.
        assert_eq!(c.insert_entry(2, 1, false), Some(Writeback(0)));
        assert_eq!(
            c.pages(),
            vec![vec![(8, false), (0, false)], vec![(12, false), (2, false)]]
        );
        assert!(!c.is_dirty(0) && !c.contains(1));
        // Partition 0 evicts its own (8, clean), not partition 1's older 12.
        assert_eq!(c.insert_entry(16, 0, true), None);
        assert!(c.contains(12) && !c.contains(8));
        assert_eq!(c.cached_entries(), 4);
    }

    /// Slots are written when first taken: a cache holding k entries has written k slots,
    /// whatever its capacity, and an eviction's slot is reused before a new one is written.
    #[test]
    fn entry_slots_are_written_only_when_first_taken() {
        let mut c = Cmt::new_entries(1 << 20, 8, 1 << 17, &[1000, 24]);
        for lpn in 0..10 {
            assert_eq!(c.insert_entry(lpn, 0, false), None);
        }
        let e = c.entry.as_ref().unwrap();
        assert_eq!((e.slots.len(), e.slots.capacity()), (10, 1024));
        for lpn in 100..124 {
            c.insert_entry(lpn, 1, false);
        }
        // Partition 1 is full: each further insert evicts one of its entries and takes its
        // slot.
        for lpn in 200..300 {
            assert_eq!(c.insert_entry(lpn, 1, false), None);
        }
        let e = c.entry.as_ref().unwrap();
        assert_eq!(e.slots.len(), 34);
        assert_eq!(c.cached_entries(), 34);
        assert!(c.contains(299) && !c.contains(100) && c.contains(0));
    }
}
