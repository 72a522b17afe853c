//! Dirty data in the order it was written, per flow: what a Flush waits for (`persisted`)
//! and writes back first (`dirty_pages`), and the oldest data in write-backs in flight.
//!
//! Items are write sequence numbers, each with the id of what holds it (a cached page, a
//! write-back), and leave in any order. Sorted sets made every write and write-back a tree
//! search or two (MQSim's 1 M random writes through its 256 MiB write cache, a cache of
//! 32,768 pages: `prof_case` loop 1.150 to 0.963 s with these, five alternations, results
//! equal). Here a removal only counts: the item goes stale, which the owner tells by its
//! own state (`live`: the page's or write-back's sequence number is no longer the item's),
//! and leaves when it reaches the front, or at a compaction once the stale outnumber the
//! live twice over (a page kept dirty by rewrites holds the front while the writes after it
//! come and go).

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

/// Live and stale items, oldest first; the front is live (or the queue empty).
#[derive(Debug, Clone, Default)]
pub struct SeqQueue {
    items: VecDeque<(u64, u32)>,
    live: usize,
}

impl SeqQueue {
    /// `seq` (above every sequence number pushed before) is held by `id`.
    #[inline]
    pub fn push(&mut self, seq: u64, id: u32) {
        debug_assert!(self.items.back().is_none_or(|&(s, _)| s < seq));
        self.items.push_back((seq, id));
        self.live += 1;
    }

    /// One item went stale: its holder's state no longer gives it (`live(seq, id)` is false
    /// for it now, and stays false).
    #[inline]
    pub fn remove(&mut self, live: impl Fn(u64, u32) -> bool) {
        self.live -= 1;
        while let Some(&(s, i)) = self.items.front() {
            if live(s, i) {
                break;
            }
            self.items.pop_front();
        }
        if self.items.len() > 2 * self.live + 32 {
            self.items.retain(|&(s, i)| live(s, i));
        }
    }

    /// The oldest live sequence number.
    #[inline]
    pub fn first(&self) -> Option<u64> {
        self.items.front().map(|&(s, _)| s)
    }

    /// Live items.
    #[inline]
    pub fn len(&self) -> usize {
        self.live
    }

    /// The live items' ids, oldest first.
    pub fn ids<'a>(
        &'a self,
        live: impl Fn(u64, u32) -> bool + 'a,
    ) -> impl Iterator<Item = u32> + 'a {
        self.items
            .iter()
            .filter(move |&&(s, i)| live(s, i))
            .map(|&(_, i)| i)
    }

    /// The live items, oldest first.
    pub fn live_items<'a>(
        &'a self,
        live: impl Fn(u64, u32) -> bool + 'a,
    ) -> impl Iterator<Item = (u64, u32)> + 'a {
        self.items.iter().copied().filter(move |&(s, i)| live(s, i))
    }
}

/// Sequence numbers pushed in any order (write-backs are issued by recency, not by when their
/// data was written), with the same lazy removal: the oldest live one is the heap's top.
#[derive(Debug, Clone, Default)]
pub struct SeqHeap {
    items: BinaryHeap<Reverse<(u64, u32)>>,
    live: usize,
}

impl SeqHeap {
    /// `seq` (not live in the heap already) is held by `id`.
    #[inline]
    pub fn push(&mut self, seq: u64, id: u32) {
        self.items.push(Reverse((seq, id)));
        self.live += 1;
    }

    /// One item went stale, as for `SeqQueue::remove`.
    #[inline]
    pub fn remove(&mut self, live: impl Fn(u64, u32) -> bool) {
        self.live -= 1;
        while let Some(&Reverse((s, i))) = self.items.peek() {
            if live(s, i) {
                break;
            }
            self.items.pop();
        }
        if self.items.len() > 2 * self.live + 32 {
            self.items.retain(|&Reverse((s, i))| live(s, i));
        }
    }

    /// The oldest live sequence number.
    #[inline]
    pub fn first(&self) -> Option<u64> {
        self.items.peek().map(|&Reverse((s, _))| s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeMap;

    /// What the two structures share, for one driver of both.
    trait Lazy {
        fn push(&mut self, seq: u64, id: u32);
        fn remove(&mut self, live: impl Fn(u64, u32) -> bool);
        fn first(&self) -> Option<u64>;
        /// (live items, items stored, stale ones included).
        fn counts(&self) -> (usize, usize);
    }

    impl Lazy for SeqQueue {
        fn push(&mut self, seq: u64, id: u32) {
            SeqQueue::push(self, seq, id)
        }
        fn remove(&mut self, live: impl Fn(u64, u32) -> bool) {
            SeqQueue::remove(self, live)
        }
        fn first(&self) -> Option<u64> {
            SeqQueue::first(self)
        }
        fn counts(&self) -> (usize, usize) {
            (self.len(), self.items.len())
        }
    }

    impl Lazy for SeqHeap {
        fn push(&mut self, seq: u64, id: u32) {
            SeqHeap::push(self, seq, id)
        }
        fn remove(&mut self, live: impl Fn(u64, u32) -> bool) {
            SeqHeap::remove(self, live)
        }
        fn first(&self) -> Option<u64> {
            SeqHeap::first(self)
        }
        fn counts(&self) -> (usize, usize) {
            (self.live, self.items.len())
        }
    }

    /// Replays `ops` on `q` and on a sorted map of the live items: a push gives a free holder
    /// (of 64) the number `next(k)` draws, a removal takes a busy holder's away. After each,
    /// the same first item and count, stale items never more than twice the live ones and 32,
    /// and `check(q, live, map)` for what else the structure answers.
    fn replay<Q: Lazy>(
        q: &mut Q,
        ops: Vec<(bool, u16)>,
        mut next: impl FnMut(u16) -> u64,
        check: impl Fn(&Q, &dyn Fn(u64, u32) -> bool, &BTreeMap<u64, u32>) -> Result<(), TestCaseError>,
    ) -> Result<(), TestCaseError> {
        let mut map: BTreeMap<u64, u32> = BTreeMap::new();
        // The holders' state: id -> the sequence number it holds now (0: none).
        let mut held = vec![0u64; 64];
        for (push, k) in ops {
            let id = k as u32 % 64;
            if push && held[id as usize] == 0 {
                let s = next(k);
                held[id as usize] = s;
                q.push(s, id);
                map.insert(s, id);
            } else if !push && held[id as usize] != 0 {
                map.remove(&held[id as usize]);
                held[id as usize] = 0;
                q.remove(|s, i| held[i as usize] == s);
            }
            prop_assert_eq!(q.first(), map.keys().next().copied());
            let (live, stored) = q.counts();
            prop_assert_eq!(live, map.len());
            prop_assert!(stored <= 2 * live + 33);
            check(q, &|s: u64, i: u32| held[i as usize] == s, &map)?;
        }
        Ok(())
    }

    proptest! {
        /// The queue, its numbers pushed in increasing order, against a sorted map: also the
        /// order of its live items and their ids.
        #[test]
        fn answers_as_a_sorted_map(ops in prop::collection::vec((any::<bool>(), any::<u16>()), 0..2000)) {
            let mut seq = 0;
            let next = |k: u16| {
                seq += 1 + k as u64 % 3;
                seq
            };
            replay(&mut SeqQueue::default(), ops, next, |q, live, map| {
                let got: Vec<(u64, u32)> = q.live_items(live).collect();
                let want: Vec<(u64, u32)> = map.iter().map(|(&s, &i)| (s, i)).collect();
                prop_assert_eq!(&got, &want);
                let ids: Vec<u32> = q.ids(live).collect();
                prop_assert_eq!(ids, want.iter().map(|&(_, i)| i).collect::<Vec<_>>());
                Ok(())
            })?;
        }

        /// The heap, its numbers pushed in any order (unique: a new one a few below or above
        /// the last), against a sorted map.
        #[test]
        fn heap_answers_as_a_sorted_map(ops in prop::collection::vec((any::<bool>(), any::<u16>()), 0..2000)) {
            let mut seq = 0;
            let next = |k: u16| {
                seq += 8;
                seq - (k as u64 % 7)
            };
            replay(&mut SeqHeap::default(), ops, next, |_, _, _| Ok(()))?;
        }
    }
}
