//! Flash back end: geometry and addressing, timings converted once to picoseconds, and the
//! shared resources (channel buses, the controller's issue slot) on which operations contend.
//! It knows pages, planes and dies, never flows or logical addresses.

mod backend;
mod geometry;
mod timing;

pub use backend::{Backend, BackendStats};
pub use geometry::Geometry;
pub use timing::Timing;
