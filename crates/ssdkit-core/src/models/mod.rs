//! The papers' analytical models, computed from a configuration or from explicit parameters:
//! one source for each formula, called by the simulator's own tests and, through the Python
//! binding, by `ssdkit.models` and `ssdkit model`.
//!
//! - [`x25m`]: the X25-M latency model of multi-channel, multi-way SSDs, Eq. 1-7.
//! - [`nvme`]: NVMeSim's I/O request model, Eq. 1-3, on a configuration's PCIe link.
//! - [`wa`]: steady-state write amplification under uniform random overwrites, the closed
//!   forms and mean-field models the FTL's preconditioning uses.
//!
//! Models describe an idealised device; each function says where the simulator departs from
//! it.

pub mod nvme;
pub mod wa;
pub mod x25m;
