//! A map from u32 keys to values whose slot for a key is known before the lookup, so the
//! simulator can start loading it while earlier work runs (`prefetch`). A std `HashMap` hides
//! where a key lives; on a large device a map keyed by logical page is a miss to memory on
//! nearly every lookup, and those misses were a quarter of a random-write run's time.
//!
//! Open addressing with linear probing and backward-shift deletion (no tombstones, so a long
//! run of inserts and removals never slows the probes). Keys and values sit side by side, 16
//! bytes a slot with u64 values and 8 with u32: a lookup that finds its key in the first slot
//! reads one cache line.

use super::prefetch;

/// The key no entry has: it marks an empty slot.
const EMPTY: u32 = u32::MAX;

/// A slot: aligned as its value, so a slot of a u32 value is 8 bytes, of a u64 value 16
/// (the system allocator hands these tables 16-byte aligned memory, so neither straddles two
/// cache lines) and of a pair of u32 12. The page map's paired slots (`pagemap::Paired`) were
/// 16 bytes at 8-byte alignment: at 12, an eighth of them straddle two lines, but MQSim's
/// ideal-map 1 M random writes fault and walk a 24 MiB table instead of 32 (`prof_case`,
/// seven alternations: 0.2606 to 0.2557 s whole, 0.3219 to 0.3107 s under
/// `--mqsim-compat`, peak memory 48 to 40 MB).
#[derive(Clone, Copy)]
#[repr(C)]
struct Slot<V> {
    key: u32,
    value: V,
}

pub struct KeyMap<V = u64> {
    slots: Vec<Slot<V>>,
    /// `slots.len() - 1` (a power of two minus one), or 0 before the first insert.
    mask: usize,
    len: usize,
}

impl<V: Copy + Default> Default for KeyMap<V> {
    fn default() -> Self {
        Self::new()
    }
}

impl<V: Copy + Default> KeyMap<V> {
    pub fn new() -> Self {
        Self {
            slots: Vec::new(),
            mask: 0,
            len: 0,
        }
    }

    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Bytes of its table.
    pub fn bytes(&self) -> usize {
        self.slots.len() * std::mem::size_of::<Slot<V>>()
    }

    /// Fibonacci hashing: the key times 2^64 / phi, top bits. Neighbouring logical pages land
    /// far apart, so a sequential run of keys does not build one long probe run.
    #[inline]
    fn home(&self, key: u32) -> usize {
        let h = (key as u64 | 1 << 32).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        (h >> 32) as usize & self.mask
    }

    /// Starts loading the slot where `key`'s search begins.
    #[inline]
    pub fn prefetch(&self, key: u32) {
        if !self.slots.is_empty() {
            prefetch(&self.slots, self.home(key));
        }
    }

    /// `key`'s slot (`Ok`), or where its probe run ends (`Err`): the run's first empty
    /// slot, which is where linear probing inserts an absent key. The table has slots.
    #[inline]
    fn probe(&self, key: u32) -> Result<usize, usize> {
        let mut i = self.home(key);
        loop {
            match self.slots[i].key {
                k if k == key => return Ok(i),
                EMPTY => return Err(i),
                _ => i = (i + 1) & self.mask,
            }
        }
    }

    /// The slot holding `key`, if any.
    #[inline]
    fn find(&self, key: u32) -> Option<usize> {
        if self.len == 0 {
            return None;
        }
        self.probe(key).ok()
    }

    #[inline]
    pub fn get(&self, key: u32) -> Option<V> {
        self.find(key).map(|i| self.slots[i].value)
    }

    #[inline]
    pub fn get_mut(&mut self, key: u32) -> Option<&mut V> {
        self.find(key).map(|i| &mut self.slots[i].value)
    }

    /// Sets `key`'s value. `key` must not be `u32::MAX` (no logical page has that number:
    /// it is the maps' "none").
    pub fn insert(&mut self, key: u32, value: V) {
        *self.value_mut(key) = value;
    }

    /// `key`'s value, inserted as `V::default()` if absent. `key` as for `insert`.
    pub fn value_mut(&mut self, key: u32) -> &mut V {
        assert!(key != EMPTY, "KeyMap key u32::MAX is reserved");
        // One probe run serves both: the run's first empty slot is where an absent key goes
        // (a lookup and then a second run to insert walked the same slots twice).
        let mut i = match self.slots.is_empty() {
            true => 0,
            false => match self.probe(key) {
                Ok(i) => return &mut self.slots[i].value,
                Err(vacant) => vacant,
            },
        };
        // At most three quarters full: probe runs stay short.
        if (self.len + 1) * 4 > self.slots.len() * 3 {
            self.grow();
            i = self.probe(key).expect_err("absent before growing");
        }
        self.slots[i] = Slot {
            key,
            value: V::default(),
        };
        self.len += 1;
        &mut self.slots[i].value
    }

    pub fn remove(&mut self, key: u32) -> Option<V> {
        let mut hole = self.find(key)?;
        let value = self.slots[hole].value;
        self.len -= 1;
        // Backward shift: later entries of the run move into the hole when their home does
        // not lie (cyclically) after it, so every entry stays reachable from its home.
        let mut j = hole;
        loop {
            j = (j + 1) & self.mask;
            let k = self.slots[j].key;
            if k == EMPTY {
                break;
            }
            let home = self.home(k);
            if (j.wrapping_sub(home) & self.mask) >= (j.wrapping_sub(hole) & self.mask) {
                self.slots[hole] = self.slots[j];
                hole = j;
            }
        }
        self.slots[hole] = Self::free();
        Some(value)
    }

    /// Every entry, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = (u32, V)> + '_ {
        self.slots
            .iter()
            .filter(|s| s.key != EMPTY)
            .map(|s| (s.key, s.value))
    }

    fn free() -> Slot<V> {
        Slot {
            key: EMPTY,
            value: V::default(),
        }
    }

    /// Makes room for `entries` entries at once, as `entries` inserts would have grown the
    /// table (to the same size), without the tables between: each growth moves every entry
    /// and takes fresh memory (measured: a fifth of a million random writes' map time).
    pub fn reserve(&mut self, entries: usize) {
        if entries * 4 <= self.slots.len() * 3 {
            return;
        }
        let mut n = self.slots.len().max(16);
        while entries * 4 > n * 3 {
            n *= 2;
        }
        self.resize(n);
    }

    #[cold]
    fn grow(&mut self) {
        self.resize((self.slots.len() * 2).max(16));
    }

    /// Moves every entry into a table of `n` slots (a power of two, more than the entries).
    #[cold]
    fn resize(&mut self, n: usize) {
        let old = std::mem::replace(&mut self.slots, vec![Self::free(); n]);
        self.mask = n - 1;
        for s in old.into_iter().filter(|s| s.key != EMPTY) {
            let mut i = self.home(s.key);
            while self.slots[i].key != EMPTY {
                i = (i + 1) & self.mask;
            }
            self.slots[i] = s;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::HashMap;

    #[test]
    fn slots_take_the_size_of_key_and_value() {
        assert_eq!(std::mem::size_of::<Slot<u64>>(), 16);
        assert_eq!(std::mem::size_of::<Slot<u32>>(), 8);
        assert_eq!(std::mem::size_of::<Slot<[u32; 2]>>(), 12);
    }

    #[test]
    fn empty_map_answers_none() {
        let mut m = KeyMap::<u64>::new();
        assert_eq!(m.get(7), None);
        assert_eq!(m.remove(7), None);
        m.prefetch(7);
        assert!(m.is_empty());
    }

    #[test]
    #[should_panic(expected = "reserved")]
    fn reserved_key_is_refused() {
        KeyMap::<u64>::new().insert(u32::MAX, 1);
    }

    /// Keys that all share one home slot: removal from the middle of their run keeps the
    /// rest reachable, with wrap-around at the table's end.
    #[test]
    fn removal_inside_a_wrapping_run_keeps_the_rest() {
        let mut m = KeyMap::<u64>::new();
        m.insert(1, 1);
        let probe = m.home(1);
        let same: Vec<u32> = (0..100_000u32)
            .filter(|&k| m.home(k) == probe)
            .take(5)
            .collect();
        assert_eq!(same.len(), 5);
        for &k in &same {
            m.insert(k, k as u64 * 10);
        }
        m.remove(same[1]);
        for &k in &same {
            let want = (k != same[1]).then_some(k as u64 * 10);
            assert_eq!(m.get(k), want, "key {k}");
        }
    }

    /// `reserve` gives the table `entries` inserts would grow it to, and nothing in it changes.
    #[test]
    fn reserve_sizes_as_inserts_would() {
        for entries in [1usize, 12, 13, 100, 1_000, 49_152, 49_153] {
            let mut grown = KeyMap::<u32>::new();
            for k in 0..entries as u32 {
                grown.insert(k * 7, k);
            }
            let mut reserved = KeyMap::<u32>::new();
            reserved.insert(0, 0);
            reserved.reserve(entries);
            assert_eq!(reserved.bytes(), grown.bytes(), "{entries} entries");
            assert_eq!(reserved.get(0), Some(0));
            let before = reserved.bytes();
            for k in 0..entries as u32 {
                reserved.insert(k * 7, k);
            }
            assert_eq!(
                reserved.bytes(),
                before,
                "{entries}: no growth after reserving"
            );
            assert!((0..entries as u32).all(|k| reserved.get(k * 7) == Some(k)));
        }
    }

    proptest! {
        /// Any sequence of inserts and removals answers as std's HashMap does.
        #[test]
        fn behaves_as_a_hash_map(ops in prop::collection::vec((0u32..300, any::<bool>(), any::<u64>()), 0..2000)) {
            let mut m = KeyMap::<u64>::new();
            let mut want: HashMap<u32, u64> = HashMap::new();
            for (k, insert, v) in ops {
                if insert {
                    m.insert(k, v);
                    want.insert(k, v);
                } else {
                    prop_assert_eq!(m.remove(k), want.remove(&k));
                }
                prop_assert_eq!(m.len(), want.len());
            }
            for k in 0..300 {
                prop_assert_eq!(m.get(k), want.get(&k).copied());
            }
        }
    }
}
