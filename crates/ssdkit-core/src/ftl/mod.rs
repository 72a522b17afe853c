//! Flash translation layer: page-level mapping (flat L2P and P2L arrays), block states,
//! plane allocation (static striping or dynamic round-robin), garbage-collection victim
//! choice and wear levelling, preconditioning to steady state, snapshots of the whole state,
//! and the per-die transaction queues of the scheduling unit.
//!
//! The FTL decides *what* happens to which physical page; the simulator owner decides *when*
//! by driving the flash back end. The FTL never touches channel state.

pub mod allocation;
pub mod gc;
pub mod mapping;
pub mod precondition;
pub mod scheduling;
pub mod snapshot;

pub use mapping::{Ftl, FtlStats, NONE};

use crate::config::Config;

/// Logical pages exported to the host: floor(physical * (1 - spare factor)).
pub fn logical_pages(c: &Config) -> u64 {
    let f = &c.flash;
    let physical = f.channels as u64
        * f.chips_per_channel as u64
        * f.dies_per_chip as u64
        * f.planes_per_die as u64
        * f.blocks_per_plane as u64
        * f.pages_per_block as u64;
    (physical as f64 * (1.0 - c.ftl.spare_factor)).floor() as u64
}

/// Blocks per plane that user writes may not take (kept for GC): from the hard threshold,
/// never fewer than two so GC always has a block to move valid pages into.
pub fn reserve_blocks(c: &Config) -> u32 {
    let f = &c.flash;
    let pages = f.blocks_per_plane as f64 * f.pages_per_block as f64;
    let blocks = (c.ftl.gc_hard_threshold * pages / f.pages_per_block as f64).ceil() as u32;
    blocks.max(2)
}

/// GC starts in a plane when its free pages fall below this many: the configured fraction,
/// but never later than one block before user writes would have to wait for the reserve,
/// else a small plane could block its writers without ever starting GC.
pub fn gc_start_free_pages(c: &Config) -> u64 {
    let f = &c.flash;
    let ppb = f.pages_per_block as u64;
    let configured = (c.ftl.gc_threshold * f.blocks_per_plane as f64 * ppb as f64).ceil() as u64;
    configured.max((reserve_blocks(c) as u64 + 1) * ppb + 1)
}
