//! Flash back end: geometry and addressing, timings converted once to picoseconds, the shared
//! resources (channel buses, the controller's issue slot) on which operations contend, and die
//! state. It knows pages, planes and dies, never flows or logical addresses.

mod backend;
mod channel;
mod die;
mod geometry;
mod timing;

pub use backend::{Backend, BackendStats, OpSplit, XferSplit};
pub use channel::{ChannelQueues, DataClass};
pub use die::{Dies, MAX_BATCH};
pub use geometry::Geometry;
pub use timing::Timing;
