//! Generic discrete-event engine: integer time, a priority queue whose ties break by insertion
//! order, slabs for plain-data records, random streams derived from one run seed, and for
//! tables too large for the CPU's caches a prefetch hint and a map that can take one. It knows
//! nothing about SSDs; the simulator that owns it defines the event type.

mod div;
mod keymap;
mod queue;
mod rng;
mod slab;

pub use div::Div;
pub use keymap::KeyMap;
pub(crate) use queue::packed_events;
pub use queue::{EventQueue, Packed, PastEvent, EVENT_BITS};
pub(crate) use rng::mix64;
pub use rng::{derive_stream, Stream};
pub use slab::{Parking, Slab};

/// A hash map for integer keys on the event path (in-flight lookups, cache indexes):
/// foldhash's fixed-seed hasher is several times cheaper than std's SipHash, which guards
/// against hash flooding that simulated addresses cannot mount. Fixed seed: the same run
/// behaves the same (no iteration order is ever used, but nothing random hides there either).
pub type FastMap<K, V> = std::collections::HashMap<K, V, foldhash::fast::FixedState>;

/// A hint that `v[i]` will be read soon: the CPU starts loading its cache line and goes on.
/// For tables indexed by logical page on large devices, where each lookup misses to memory;
/// the simulator issues it for a request drawn ahead, so the miss overlaps the requests
/// before it. No effect on results; an index out of range does nothing.
#[inline(always)]
pub fn prefetch<T>(v: &[T], i: usize) {
    #[cfg(target_arch = "x86_64")]
    if let Some(x) = v.get(i) {
        // SAFETY: `_mm_prefetch` needs SSE, which every x86_64 CPU has; a prefetch never
        // faults and reads nothing into the program, and `x` is a valid reference anyway.
        unsafe {
            std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
                x as *const T as *const i8,
            )
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (v, i);
}

/// Simulation time in picoseconds. u64 covers about 213 days, far beyond any run.
pub type Picoseconds = u64;

pub const PS_PER_NS: u64 = 1_000;
pub const PS_PER_US: u64 = 1_000_000;
pub const PS_PER_MS: u64 = 1_000_000_000;
pub const PS_PER_S: u64 = 1_000_000_000_000;

/// Converts a configured duration in microseconds to picoseconds once, at load time, so the
/// event path never sees floating point.
pub fn us_to_ps(us: f64) -> Picoseconds {
    (us * PS_PER_US as f64).round() as Picoseconds
}
