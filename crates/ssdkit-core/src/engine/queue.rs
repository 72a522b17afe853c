use super::Picoseconds;
use std::cmp::Ordering;
use std::collections::{BinaryHeap, HashSet};

/// One scheduled event, ordered by one key: the time in the high 64 bits and the sequence
/// number in the low, so two events at the same time fire in the order they were scheduled,
/// and a heap comparison is one 128-bit compare.
struct Entry<E> {
    key: u128,
    event: E,
}

impl<E> Entry<E> {
    #[inline]
    fn time(&self) -> Picoseconds {
        (self.key >> 64) as Picoseconds
    }
    #[inline]
    fn seq(&self) -> u64 {
        self.key as u64
    }
}

impl<E> PartialEq for Entry<E> {
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key
    }
}
impl<E> Eq for Entry<E> {}
impl<E> PartialOrd for Entry<E> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl<E> Ord for Entry<E> {
    // BinaryHeap is a max-heap; reverse so the earliest key pops first.
    #[inline]
    fn cmp(&self, other: &Self) -> Ordering {
        other.key.cmp(&self.key)
    }
}

/// Handle of a scheduled event, for `cancel`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct EventId(u64);

/// An event asked for a time before the clock: effects would precede their causes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PastEvent {
    pub at: Picoseconds,
    pub now: Picoseconds,
}

impl std::fmt::Display for PastEvent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "event scheduled in the past ({} ps < now {} ps)",
            self.at, self.now
        )
    }
}

/// Future event list. Events are plain data (`E: Copy` in practice); the heap's storage is
/// reused, so steady-state scheduling allocates nothing. Cancelled events stay in the heap
/// and are dropped when they reach its top (cancellation is rare: suspension of a program or
/// erase), so the common path pays one empty-set check.
pub struct EventQueue<E> {
    heap: BinaryHeap<Entry<E>>,
    cancelled: HashSet<u64>,
    now: Picoseconds,
    next_seq: u64,
    processed: u64,
    /// Events processed and the clock when `advance_to` last moved the clock with no event
    /// since: the last event's time is then that clock, not `now`.
    advanced_from: Option<(u64, Picoseconds)>,
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E> EventQueue<E> {
    pub fn new() -> Self {
        Self {
            heap: BinaryHeap::with_capacity(1024),
            cancelled: HashSet::new(),
            advanced_from: None,
            now: 0,
            next_seq: 0,
            processed: 0,
        }
    }

    pub fn now(&self) -> Picoseconds {
        self.now
    }

    /// Events handed out by `pop` so far.
    pub fn processed(&self) -> u64 {
        self.processed
    }

    /// Events pending (not cancelled).
    pub fn len(&self) -> usize {
        self.heap.len() - self.cancelled.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Schedules `event` at absolute time `at`; a time before the clock is refused.
    #[inline]
    pub fn schedule(&mut self, at: Picoseconds, event: E) -> Result<EventId, PastEvent> {
        if at < self.now {
            return Err(PastEvent { at, now: self.now });
        }
        let seq = self.next_seq;
        self.next_seq += 1;
        self.heap.push(Entry {
            key: ((at as u128) << 64) | seq as u128,
            event,
        });
        Ok(EventId(seq))
    }

    /// Cancels a pending event. Returns false if it already fired or was cancelled.
    pub fn cancel(&mut self, id: EventId) -> bool {
        if id.0 >= self.next_seq || !self.heap.iter().any(|e| e.seq() == id.0) {
            return false;
        }
        self.cancelled.insert(id.0)
    }

    /// Drops cancelled events from the top of the heap. Kept out of line: the common path
    /// only tests `cancelled.is_empty()`.
    #[cold]
    #[inline(never)]
    fn drop_cancelled(&mut self) {
        while !self.cancelled.is_empty() {
            match self.heap.peek() {
                Some(e) if self.cancelled.contains(&e.seq()) => {
                    let seq = e.seq();
                    self.heap.pop();
                    self.cancelled.remove(&seq);
                }
                _ => return,
            }
        }
    }

    /// Removes the earliest event and advances the clock to its time.
    #[inline]
    pub fn pop(&mut self) -> Option<(Picoseconds, E)> {
        self.pop_through(Picoseconds::MAX)
    }

    /// Removes the earliest event if it is due at or before `limit`, and advances the clock
    /// to its time; None (and the clock unchanged) otherwise. The simulation loops' one call
    /// per event: a peek and a pop in one.
    #[inline]
    pub fn pop_through(&mut self, limit: Picoseconds) -> Option<(Picoseconds, E)> {
        if !self.cancelled.is_empty() {
            self.drop_cancelled();
        }
        let t = self.heap.peek()?.time();
        if t > limit {
            return None;
        }
        let e = self.heap.pop().expect("peeked");
        self.now = t;
        self.processed += 1;
        Some((t, e.event))
    }

    /// Time of the earliest pending event.
    pub fn peek_time(&mut self) -> Option<Picoseconds> {
        if !self.cancelled.is_empty() {
            self.drop_cancelled();
        }
        self.heap.peek().map(|e| e.time())
    }

    /// Moves the clock forward to `t` when no event is pending before it (a step-by-step
    /// driver idles the device until its next submission). Returns false, and leaves the
    /// clock, if an earlier event is pending or `t` is in the past.
    pub fn advance_to(&mut self, t: Picoseconds) -> bool {
        if t < self.now || self.peek_time().is_some_and(|e| e < t) {
            return false;
        }
        let fresh = !matches!(self.advanced_from, Some((n, _)) if n == self.processed);
        if t > self.now && fresh {
            self.advanced_from = Some((self.processed, self.now));
        }
        self.now = t;
        true
    }

    /// Time of the last event processed: the clock, unless `advance_to` moved it since
    /// (0 before any event).
    pub fn last_event_time(&self) -> Picoseconds {
        match self.advanced_from {
            Some((n, t)) if n == self.processed => t,
            _ => self.now,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pops_in_time_order_and_ties_by_insertion() {
        let mut q = EventQueue::new();
        for (t, e) in [(10, 'a'), (5, 'b'), (10, 'c'), (5, 'd')] {
            q.schedule(t, e).unwrap();
        }
        let order: Vec<char> = std::iter::from_fn(|| q.pop().map(|(_, e)| e)).collect();
        assert_eq!(order, vec!['b', 'd', 'a', 'c']);
        assert_eq!(q.now(), 10);
        assert_eq!(q.processed(), 4);
    }

    #[test]
    fn refuses_past_events_with_an_error() {
        let mut q = EventQueue::new();
        q.schedule(10, ()).unwrap();
        q.pop();
        assert_eq!(q.schedule(9, ()), Err(PastEvent { at: 9, now: 10 }));
        assert!(q.schedule(10, ()).is_ok());
    }

    #[test]
    fn cancelled_events_never_fire() {
        let mut q = EventQueue::new();
        let a = q.schedule(5, 'a').unwrap();
        q.schedule(7, 'b').unwrap();
        let c = q.schedule(9, 'c').unwrap();
        assert!(q.cancel(a));
        assert!(!q.cancel(a), "second cancel of the same event");
        assert_eq!(q.len(), 2);
        assert_eq!(q.peek_time(), Some(7));
        assert_eq!(q.pop(), Some((7, 'b')));
        assert!(q.cancel(c));
        assert_eq!(q.pop(), None);
        assert!(q.is_empty());
        assert_eq!(q.processed(), 1);
    }

    #[test]
    fn pop_through_stops_at_the_limit() {
        let mut q = EventQueue::new();
        for (t, e) in [(10, 'a'), (20, 'b'), (20, 'c'), (30, 'd')] {
            q.schedule(t, e).unwrap();
        }
        let x = q.schedule(15, 'x').unwrap();
        assert!(q.cancel(x));
        assert_eq!(q.pop_through(9), None);
        assert_eq!(q.now(), 0, "nothing due: the clock stays");
        assert_eq!(q.pop_through(20), Some((10, 'a')));
        assert_eq!(
            q.pop_through(20),
            Some((20, 'b')),
            "the cancelled event at 15 is skipped"
        );
        assert_eq!(q.pop_through(20), Some((20, 'c')));
        assert_eq!(q.pop_through(20), None);
        assert_eq!((q.now(), q.processed(), q.len()), (20, 3, 1));
    }

    #[test]
    fn advance_to_only_over_idle_time() {
        let mut q = EventQueue::new();
        q.schedule(100, ()).unwrap();
        assert!(q.advance_to(50));
        assert_eq!(q.now(), 50);
        assert!(!q.advance_to(150), "an event at 100 is pending");
        assert!(!q.advance_to(10), "backwards");
        assert!(q.advance_to(100));
    }
    proptest::proptest! {
        /// The radix heap pops what a sorted list of (time, insertion order) pops, through
        /// schedules at the clock and later, cancels and limits.
        #[test]
        fn pops_as_a_sorted_reference(ops in proptest::collection::vec((0u8..4, 0u64..50, 0u64..4), 1..300)) {
            let mut q = EventQueue::new();
            let mut reference: Vec<(u64, u64)> = Vec::new(); // (time, id), pending
            let mut ids = Vec::new();
            for (op, dt, x) in ops {
                match op {
                    0 | 1 => {
                        // Many events share a time (dt small) or go far ahead (large times).
                        let at = q.now() + if x == 3 { dt << 40 } else { dt };
                        let id = q.schedule(at, ids.len() as u64).unwrap();
                        reference.push((at, ids.len() as u64));
                        ids.push(id);
                    }
                    2 => {
                        let limit = q.now() + dt * x;
                        reference.sort();
                        let want = reference.first().filter(|(t, _)| *t <= limit).copied();
                        let got = q.pop_through(limit);
                        proptest::prop_assert_eq!(got, want);
                        if want.is_some() {
                            reference.remove(0);
                        }
                    }
                    _ => {
                        if !ids.is_empty() {
                            let k = (dt as usize) % ids.len();
                            let pending = reference.iter().position(|&(_, e)| e == k as u64);
                            proptest::prop_assert_eq!(q.cancel(ids[k]), pending.is_some());
                            if let Some(i) = pending {
                                reference.remove(i);
                            }
                        }
                    }
                }
                proptest::prop_assert_eq!(q.len(), reference.len());
            }
            reference.sort();
            for want in reference {
                proptest::prop_assert_eq!(q.pop(), Some(want));
            }
            proptest::prop_assert_eq!(q.pop(), None);
        }
    }
}
