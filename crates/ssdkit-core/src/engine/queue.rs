use super::Picoseconds;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// An event type the queue can store inside its key: at most `EVENT_BITS` bits of plain data.
/// Holding the event in the key makes a heap entry one 16-byte integer, so a sift moves half
/// the bytes of a (key, event) pair and a comparison is one 128-bit compare.
pub trait Packed: Copy {
    /// The event as an integer below `1 << EVENT_BITS`.
    fn pack(self) -> u64;
    /// The event `pack` gave `bits` for.
    fn unpack(bits: u64) -> Self;
}

/// Declares an event enum `Ev` whose variants each carry one 32-bit index (a `u32` or a type
/// convertible to and from one) and its packing into a queue key ([`Packed`]): the variant's
/// tag, given with each variant, in the bits above 32, its index below.
macro_rules! packed_events {
    ($($(#[$doc:meta])* $tag:literal => $name:ident($ty:ty),)*) => {
        #[derive(Debug, Clone, Copy)]
        #[doc(hidden)]
        pub enum Ev {
            $($(#[$doc])* $name($ty),)*
        }

        impl crate::engine::Packed for Ev {
            #[inline]
            fn pack(self) -> u64 {
                let (tag, x): (u64, u32) = match self {
                    $(Ev::$name(x) => ($tag, x.into()),)*
                };
                (tag << 32) | x as u64
            }

            #[inline]
            fn unpack(bits: u64) -> Self {
                let x = bits as u32;
                match bits >> 32 {
                    $($tag => Ev::$name(<$ty>::from(x)),)*
                    t => unreachable!("event tag {t}: only `pack` makes keys"),
                }
            }
        }
    };
}
pub(crate) use packed_events;

/// Bits of a key that hold the event.
pub const EVENT_BITS: u32 = 36;
/// Bits of a key that hold the sequence number, between the time (high 64 bits) and the
/// event: events at one time fire in the order they were scheduled. When the numbers run
/// out the pending events are numbered again from zero in the order they hold, so the order
/// of events is never affected.
const SEQ_BITS: u32 = 128 - 64 - EVENT_BITS;
const EVENT_MASK: u128 = (1 << EVENT_BITS) - 1;
/// No key: later than every key (a key's sequence number is never all ones: numbers stop
/// one short, `seq_limit`).
const NONE: u128 = u128::MAX;

#[inline]
fn key_time(key: u128) -> Picoseconds {
    (key >> 64) as Picoseconds
}

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

/// Future event list: a binary heap of keys (time, sequence number, event), each one
/// integer. The heap's storage is reused, so steady-state scheduling allocates nothing.
pub struct EventQueue<E> {
    heap: BinaryHeap<Reverse<u128>>,
    /// An event scheduled earlier than everything in the heap, kept out of it (NONE when
    /// there is none): a step whose next event fires before any other event pending skips the
    /// heap's push and pop.
    next: u128,
    now: Picoseconds,
    next_seq: u64,
    /// `(1 << SEQ_BITS) - 1`, so no key is `NONE`; smaller in tests, to renumber often.
    seq_limit: u64,
    processed: u64,
    /// Events processed and the clock when `advance_to` last moved the clock with no event
    /// since: the last event's time is then that clock, not `now`.
    advanced_from: Option<(u64, Picoseconds)>,
    _event: std::marker::PhantomData<E>,
}

impl<E: Packed> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E: Packed> EventQueue<E> {
    pub fn new() -> Self {
        Self {
            heap: BinaryHeap::with_capacity(1024),
            next: NONE,
            advanced_from: None,
            now: 0,
            next_seq: 0,
            seq_limit: (1 << SEQ_BITS) - 1,
            processed: 0,
            _event: std::marker::PhantomData,
        }
    }

    pub fn now(&self) -> Picoseconds {
        self.now
    }

    /// Events handed out by `pop` so far.
    pub fn processed(&self) -> u64 {
        self.processed
    }

    /// Events pending.
    pub fn len(&self) -> usize {
        self.heap.len() + (self.next != NONE) as usize
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Schedules `event` at absolute time `at`; a time before the clock is refused.
    #[inline]
    pub fn schedule(&mut self, at: Picoseconds, event: E) -> Result<(), PastEvent> {
        if at < self.now {
            return Err(PastEvent { at, now: self.now });
        }
        if self.next_seq >= self.seq_limit {
            self.renumber();
        }
        let bits = event.pack();
        debug_assert!(bits <= EVENT_MASK as u64, "event wider than EVENT_BITS");
        let seq = self.next_seq;
        self.next_seq += 1;
        let key = ((at as u128) << 64) | ((seq as u128) << EVENT_BITS) | bits as u128;
        if self.next != NONE {
            if key < self.next {
                // Earlier than the held event, which is earlier than the heap: next now.
                self.heap.push(Reverse(self.next));
                self.next = key;
            } else {
                self.heap.push(Reverse(key));
            }
        } else if self.heap.peek().is_none_or(|k| key < k.0) {
            self.next = key;
        } else {
            self.heap.push(Reverse(key));
        }
        Ok(())
    }

    /// Numbers the pending events 0, 1, .. in the order they will fire (when the numbers run
    /// out, about every 2^28 events): their relative order, all a sequence number is for, is
    /// kept. Validation bounds the requests a run keeps in flight far below 2^28 (see
    /// `config::validate`), so the pending events always fit the numbers.
    #[cold]
    #[inline(never)]
    fn renumber(&mut self) {
        let mut keys: Vec<u128> = std::mem::take(&mut self.heap)
            .into_iter()
            .map(|Reverse(k)| k)
            .collect();
        if self.next != NONE {
            keys.push(self.next);
            self.next = NONE;
        }
        keys.sort_unstable();
        for (i, k) in keys.iter_mut().enumerate() {
            let time = *k >> 64 << 64;
            *k = time | ((i as u128) << EVENT_BITS) | (*k & EVENT_MASK);
        }
        debug_assert!(
            keys.len() < 1 << SEQ_BITS,
            "more events pending than numbers"
        );
        self.next_seq = keys.len() as u64;
        self.heap = keys.into_iter().map(Reverse).collect();
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
        let held = self.next != NONE;
        let key = if held { self.next } else { self.heap.peek()?.0 };
        let t = key_time(key);
        if t > limit {
            return None;
        }
        if held {
            self.next = NONE;
        } else {
            self.heap.pop();
        }
        self.now = t;
        self.processed += 1;
        Some((t, E::unpack((key & EVENT_MASK) as u64)))
    }

    /// Time of the earliest pending event.
    pub fn peek_time(&self) -> Option<Picoseconds> {
        if self.next != NONE {
            return Some(key_time(self.next));
        }
        self.heap.peek().map(|k| key_time(k.0))
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

    impl Packed for char {
        fn pack(self) -> u64 {
            self as u64
        }
        fn unpack(bits: u64) -> Self {
            char::from_u32(bits as u32).expect("packed from a char")
        }
    }
    impl Packed for () {
        fn pack(self) -> u64 {
            0
        }
        fn unpack(_: u64) -> Self {}
    }
    impl Packed for u64 {
        fn pack(self) -> u64 {
            self
        }
        fn unpack(bits: u64) -> Self {
            bits
        }
    }

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
    fn pop_through_stops_at_the_limit() {
        let mut q = EventQueue::new();
        for (t, e) in [(10, 'a'), (20, 'b'), (20, 'c'), (30, 'd')] {
            q.schedule(t, e).unwrap();
        }
        assert_eq!(q.pop_through(9), None);
        assert_eq!(q.now(), 0, "nothing due: the clock stays");
        assert_eq!(q.pop_through(20), Some((10, 'a')));
        assert_eq!(q.pop_through(20), Some((20, 'b')));
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
        /// The queue pops what a sorted list of (time, insertion order) pops, through
        /// schedules at the clock and later, limits, and sequence numbers that run out
        /// (`seq_limit` from 2 to 64: the pending events are numbered again many times).
        #[test]
        fn pops_as_a_sorted_reference(
            ops in proptest::collection::vec((0u8..3, 0u64..50, 0u64..4), 1..300),
            seq_limit in 2u64..64,
        ) {
            let mut q = EventQueue::new();
            q.seq_limit = seq_limit;
            let mut reference: Vec<(u64, u64)> = Vec::new(); // (time, id), pending
            let mut next_id = 0u64;
            for (op, dt, x) in ops {
                match op {
                    0 | 1 => {
                        // Many events share a time (dt small) or go far ahead (large times).
                        let at = q.now() + if x == 3 { dt << 40 } else { dt };
                        q.schedule(at, next_id).unwrap();
                        reference.push((at, next_id));
                        next_id += 1;
                        // Numbers stay within their bits (here, within the limit, or the
                        // pending count when more are pending than the limit).
                        proptest::prop_assert!(q.next_seq <= seq_limit.max(q.len() as u64));
                    }
                    _ => {
                        let limit = q.now() + dt * x;
                        reference.sort();
                        let want = reference.first().filter(|(t, _)| *t <= limit).copied();
                        let got = q.pop_through(limit);
                        proptest::prop_assert_eq!(got, want);
                        if want.is_some() {
                            reference.remove(0);
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
