//! # ssdkit-core
//!
//! Discrete-event simulation of NVMe and SATA SSDs. A request travels, and each step lives in
//! its own module:
//!
//! ```text
//! workload (synthetic flows, trace replay)            workload::{flow, synthetic, replay, trace}
//!   -> host submission queue, doorbell                 host (Host::submit), host::link
//!   -> PCIe link / SATA link (packets, FIFO)            host::link
//!   -> fetch unit: QueueFetchSize, arbitration         host::nvme
//!   -> firmware CPU; split into page transactions      frontend (Firmware, split)
//!      with sector bitmaps
//!   -> DRAM data cache (off by default): LRU pages,     cache::{lru, dram}, sim::cache
//!      write-back, DRAM timing
//!   -> FTL: translation, plane allocation, GC          ftl::{mapping, allocation, blocks,
//!      lifecycle, wear levelling, TRIM                       gc, wear, index}
//!   -> per-die queues and the scheduling policy        tsu::{queues, policy}
//!   -> flash back end: channel bus, dies, planes       flash::{backend, die, timing, geometry}
//!   <- read data a page at a time as each page leaves    host::link
//!      its die, then the completion, over the link
//! ```
//!
//! `sim` owns one of each component, defines the event enum and dispatches events to the
//! components (`sim::dispatch`, `sim::gc`), and drives runs (`sim::run`: the batch run and the
//! `step`/`run_until`/`is_idle` primitives). `engine` is the generic event queue (its
//! entries one integer each), slab and random streams; `config` holds the typed configuration
//! and its validation; `settings` its resolution (derived values, times in picoseconds), read by
//! every component; `ids` the index types; `result` the typed result document. Time is `u64`
//! picoseconds; every random stream derives from the run seed.
//!
//! The top-level modules are layers: each uses only those below it, lowest first `engine`,
//! `ids`, `error`, `config`, `flash`, `settings`, `workload`, `cache`, `tsu`, `result`, `stats`,
//! `ftl`, `frontend`, `host`, `sim`, `api`, `device` (docs/architecture.md says why; the test
//! `tests/layers.rs` holds the sources to it).

pub mod api;
pub mod cache;
pub mod config;
pub mod device;
pub mod engine;
pub mod error;
pub mod flash;
pub mod frontend;
pub mod ftl;
pub mod host;
pub mod ids;
pub mod result;
pub mod settings;
pub mod sim;
pub mod stats;
pub mod tsu;
pub mod workload;

pub use error::Error;
