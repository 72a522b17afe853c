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
//!   -> flash back end: channel bus, dies, planes       flash::{backend, channel, die, timing,
//!                                                         geometry}
//!   <- read data a page at a time as each page leaves    host::link
//!      its die, then the completion, over the link
//! ```
//!
//! `sim` owns one of each component, defines the event enum, dispatches events to the
//! components (`sim::dispatch`, `sim::gc`) and holds the run loop (`sim::run`: the
//! `start`/`run_until`/`run_through` primitives and the watchdog). The drivers sit above it: `api`
//! builds a simulator (`api::build`), runs a batch run (`api::batch`) and gathers its result
//! document (`api::report`); `device` drives one a request at a time. `engine` is the generic
//! event queue (its entries one integer each), slab and random streams; `config` holds the typed configuration
//! and its validation; `settings` its resolution (derived values, times in picoseconds), read by
//! every component; `ids` the index types; `result` the typed result document. Time is `u64`
//! picoseconds; every random stream derives from the run seed.
//!
//! The top-level modules are layers: each uses only those below it, lowest first `engine`,
//! `ids`, `error`, `config`, `flash`, `settings`, `workload`, `frontend`, `cache`, `tsu`,
//! `result`, `stats`, `ftl`, `host`, `sim`, `api`, `device`, `models` (docs/architecture.md says why; the test
//! `tests/layers.rs` holds the sources to it).

// The public API: configuration and presets, runs, the step-by-step device, the result
// document, errors.
pub mod api;
pub mod config;
pub mod device;
pub mod error;
pub mod models;
pub mod result;

pub use api::{load, run, Source};
pub use device::Device;
pub use error::Error;
pub use sim::{CompletionRecord, LogMode, Progress, RunHooks, RunOutput};
pub use stats::breakdown::{RESPONSE_STEPS, STEP_NAMES};
pub use workload::{mqsim_random, Op};

// The layers (docs/architecture.md).
pub(crate) mod cache;
pub(crate) mod engine;
pub(crate) mod flash;
pub(crate) mod frontend;
pub(crate) mod ftl;
pub(crate) mod host;
pub(crate) mod ids;
pub(crate) mod settings;
pub(crate) mod sim;
pub(crate) mod stats;
pub(crate) mod tsu;
pub(crate) mod workload;

/// The layers' own types, for this crate's integration tests, examples and fuzz targets,
/// which check and measure the inside of the simulator. Not a stable API: bindings and
/// programs use the modules above.
#[doc(hidden)]
pub mod internals {
    pub mod cache {
        pub use crate::cache::*;
    }
    pub mod engine {
        pub use crate::engine::*;
    }
    pub mod flash {
        pub use crate::flash::*;
    }
    pub mod frontend {
        pub use crate::frontend::*;
    }
    pub mod ftl {
        pub use crate::ftl::*;
    }
    pub mod host {
        pub use crate::host::*;
    }
    pub mod ids {
        pub use crate::ids::*;
    }
    pub mod settings {
        pub use crate::settings::*;
    }
    pub mod sim {
        pub use crate::sim::*;
    }
    pub mod stats {
        pub use crate::stats::*;
    }
    pub mod tsu {
        pub use crate::tsu::*;
    }
    pub mod workload {
        pub use crate::workload::*;
    }
}
