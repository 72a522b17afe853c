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

/// Pending keys, earliest first. While few are pending (as in most runs: a few per die in
/// flight) they are one sorted run inside a buffer with room at both ends: the earliest is
/// taken from the run's front, and a new key moves the keys between it and the nearer end by
/// one (it goes in from the end of the half it falls in). That is one predictable loop where
/// a binary heap's sift-down takes an unpredictable branch at each level: MQSim's 4 KiB
/// random reads at QD32 under `--mqsim-compat` ran 8 % faster, its 128 KiB sequential reads
/// 12 %. Past `TO_HEAP` keys a move would cost more than a heap's levels, so they go to a
/// binary heap until fewer than `TO_SORTED` remain. The order popped is the keys' order
/// either way.
struct Pending {
    /// The sorted run is `buf[head..tail]` (while `!big`).
    buf: Box<[u128]>,
    head: usize,
    tail: usize,
    heap: BinaryHeap<Reverse<u128>>,
    /// The keys are in `heap`, not in the run. Always `!heap.is_empty()` (the heap holds at
    /// least `TO_SORTED` keys or none); a flag, as measured.
    big: bool,
}

const RUN_CAP: usize = 256;
/// Keys the run holds at most; a key more moves them all to the heap.
const TO_HEAP: usize = 96;
/// Keys below which the heap's go back to the run.
const TO_SORTED: usize = 32;

impl Pending {
    fn new() -> Self {
        Self {
            buf: vec![0; RUN_CAP].into_boxed_slice(),
            head: RUN_CAP / 2,
            tail: RUN_CAP / 2,
            heap: BinaryHeap::new(),
            big: false,
        }
    }

    #[inline]
    fn len(&self) -> usize {
        if self.big {
            self.heap.len()
        } else {
            self.tail - self.head
        }
    }

    #[inline]
    fn peek(&self) -> Option<u128> {
        if self.big {
            return self.heap.peek().map(|k| k.0);
        }
        (self.head != self.tail).then(|| self.buf[self.head])
    }

    #[inline]
    fn push(&mut self, k: u128) {
        if self.big {
            return self.heap.push(Reverse(k));
        }
        let n = self.tail - self.head;
        if n == 0 {
            (self.head, self.tail) = (RUN_CAP / 2, RUN_CAP / 2 + 1);
            self.buf[self.head] = k;
            return;
        }
        if n >= TO_HEAP {
            return self.move_to_heap(k);
        }
        // Keys are distinct (each has its own sequence number).
        if k > self.buf[self.head + n / 2] {
            if self.tail == RUN_CAP {
                self.recenter();
            }
            let b = &mut self.buf;
            let mut j = self.tail;
            // Stops above the middle key, which is below k.
            while b[j - 1] > k {
                b[j] = b[j - 1];
                j -= 1;
            }
            b[j] = k;
            self.tail += 1;
        } else {
            if self.head == 0 {
                self.recenter();
            }
            let b = &mut self.buf;
            let mut j = self.head;
            // Stops at the middle key at the latest, which is above k.
            while b[j] < k {
                b[j - 1] = b[j];
                j += 1;
            }
            b[j - 1] = k;
            self.head -= 1;
        }
    }

    #[inline]
    fn pop(&mut self) -> Option<u128> {
        if self.big {
            let k = self.heap.pop().map(|k| k.0);
            if self.heap.len() < TO_SORTED {
                self.move_to_run();
            }
            return k;
        }
        if self.head == self.tail {
            return None;
        }
        self.head += 1;
        Some(self.buf[self.head - 1])
    }

    /// The run moved to the middle of the buffer: room at both ends.
    #[cold]
    fn recenter(&mut self) {
        let n = self.tail - self.head;
        let h = (RUN_CAP - n) / 2;
        self.buf.copy_within(self.head..self.tail, h);
        (self.head, self.tail) = (h, h + n);
    }

    #[cold]
    #[inline(never)]
    fn move_to_heap(&mut self, k: u128) {
        let run = &self.buf[self.head..self.tail];
        self.heap
            .extend(run.iter().chain([&k]).map(|&x| Reverse(x)));
        (self.head, self.tail) = (RUN_CAP / 2, RUN_CAP / 2);
        self.big = true;
    }

    #[cold]
    #[inline(never)]
    fn move_to_run(&mut self) {
        // In the buffer, not a new vector: a run near the bounds may switch often.
        let n = self.heap.len();
        for (slot, k) in self.buf[..n].iter_mut().zip(self.heap.drain()) {
            *slot = k.0;
        }
        self.buf[..n].sort_unstable();
        self.big = false;
        (self.head, self.tail) = (0, n);
        self.recenter();
    }

    /// Holds `keys` (in order, earliest first) in place of those it holds.
    fn set_run(&mut self, keys: impl ExactSizeIterator<Item = u128>) {
        let n = keys.len();
        if n > TO_HEAP {
            self.heap = keys.map(Reverse).collect();
            self.big = true;
            (self.head, self.tail) = (RUN_CAP / 2, RUN_CAP / 2);
            return;
        }
        self.heap.clear();
        self.big = false;
        (self.head, self.tail) = ((RUN_CAP - n) / 2, (RUN_CAP - n) / 2 + n);
        for (slot, k) in self.buf[self.head..self.tail].iter_mut().zip(keys) {
            *slot = k;
        }
    }

    /// Every key, in no particular order.
    fn keys(&self) -> Vec<u128> {
        if self.big {
            self.heap.iter().map(|k| k.0).collect()
        } else {
            self.buf[self.head..self.tail].to_vec()
        }
    }
}

/// Future event list: keys (time, sequence number, event), each one integer, in `Pending`.
/// Its storage is reused, so steady-state scheduling allocates nothing.
pub struct EventQueue<E> {
    pending: Pending,
    /// An event scheduled earlier than everything in `pending`, kept out of it (NONE when
    /// there is none): a step whose next event fires before any other event pending skips its
    /// push and pop.
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
            pending: Pending::new(),
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
        self.pending.len() + (self.next != NONE) as usize
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
                // Earlier than the held event, which is earlier than the rest: next now.
                self.pending.push(self.next);
                self.next = key;
            } else {
                self.pending.push(key);
            }
        } else if self.pending.peek().is_none_or(|k| key < k) {
            self.next = key;
        } else {
            self.pending.push(key);
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
        let mut keys = self.pending.keys();
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
        self.pending.set_run(keys.into_iter());
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
        let key = if held {
            self.next
        } else {
            self.pending.peek()?
        };
        let t = key_time(key);
        if t > limit {
            return None;
        }
        if held {
            self.next = NONE;
        } else {
            self.pending.pop();
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
        self.pending.peek().map(key_time)
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
    /// Filled past the sorted run's bound (into the heap) and emptied below the heap's (back
    /// to the run), again and again, with sequence numbers renumbered in both: the order popped
    /// is a sorted reference's, and both switches happen.
    #[test]
    fn run_and_heap_pop_the_same_order() {
        let mut q = EventQueue::new();
        q.seq_limit = 700;
        let mut reference: Vec<(u64, u64)> = Vec::new();
        let mut x = 7u64;
        let (mut id, mut to_heap, mut to_run) = (0u64, 0, 0);
        for round in 0..24 {
            let target = if round % 2 == 0 {
                100 + 40 * (round % 5)
            } else {
                round % 4
            };
            while q.len() != target {
                let big = q.pending.big;
                if q.len() < target {
                    x = x
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    // Ties (the same time) and spread times both.
                    let at = q.now() + (x >> 40) % if round % 3 == 0 { 8 } else { 100_000 };
                    q.schedule(at, id).unwrap();
                    reference.push((at, id));
                    id += 1;
                } else {
                    let i = (0..reference.len()).min_by_key(|&i| reference[i]).unwrap();
                    assert_eq!(q.pop(), Some(reference.swap_remove(i)));
                }
                to_heap += (!big && q.pending.big) as u32;
                to_run += (big && !q.pending.big) as u32;
                assert_eq!(q.len(), reference.len());
            }
        }
        reference.sort();
        for want in reference {
            assert_eq!(q.pop(), Some(want));
        }
        assert_eq!(q.pop(), None);
        assert!(
            to_heap >= 10 && to_run >= 10,
            "{to_heap} to the heap, {to_run} back"
        );
    }

    /// A steady number pending, each event scheduled later than all the others: the run
    /// walks to the buffer's end and is moved back to its middle, again and again, and the
    /// order popped is a sorted reference's. (The run never walks to the buffer's start: it
    /// grows toward it only by events earlier than all, from the middle, and holds at most
    /// 96.)
    #[test]
    fn a_run_that_walks_to_the_end_is_moved_back() {
        let mut q = EventQueue::new();
        let mut reference = std::collections::BTreeSet::new();
        let mut at_end = 0;
        for id in 0..2_000u64 {
            let at = q.now() + 1_000 + id;
            q.schedule(at, id).unwrap();
            reference.insert((at, id));
            at_end += (q.pending.tail == RUN_CAP) as u32;
            if q.len() > 40 {
                assert_eq!(q.pop(), reference.pop_first());
            }
        }
        assert!(!q.pending.big, "41 pending stay in the run");
        assert!(at_end >= 10, "the run reached the end {at_end} times");
        for want in reference {
            assert_eq!(q.pop(), Some(want));
        }
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
