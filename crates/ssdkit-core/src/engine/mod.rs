//! Generic discrete-event engine: integer time, a priority queue whose ties break by insertion
//! order, slabs for plain-data records, and random streams derived from one
//! run seed. It knows nothing about SSDs; the simulator that owns it defines the event type.

mod div;
mod queue;
mod rng;
mod slab;

pub use div::Div;
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
