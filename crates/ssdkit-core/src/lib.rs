//! # ssdkit-core
//!
//! Discrete-event simulation of NVMe and SATA SSDs. A request travels:
//!
//! ```text
//! workload (synthetic flows)                         workload::synthetic
//!   -> host submission queue, doorbell               sim::submit, host::link
//!   -> PCIe link / SATA link (packets, FIFO)          host::link
//!   -> fetch unit: QueueFetchSize, round-robin       host::nvme
//!   -> firmware: split into page transactions        sim::{firmware, dispatch_request}
//!   -> FTL: mapping, allocation, GC                  ftl::{mapping, allocation, gc}
//!   -> per-die queues (user R, user W, GC)           ftl::scheduling
//!   -> flash back end: channel bus, dies, planes     flash::{backend, timing, geometry}
//!   <- data and completion back over the link into the host completion queue
//! ```
//!
//! One [`sim::Simulator`] owns every component; events are plain data; time is `u64`
//! picoseconds; every random stream derives from the run seed.

pub mod api;
pub mod config;
pub mod engine;
pub mod error;
pub mod flash;
pub mod ftl;
pub mod host;
pub mod sim;
pub mod stats;
pub mod workload;

pub use error::Error;
