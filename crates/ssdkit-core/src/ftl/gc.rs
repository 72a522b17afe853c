//! Garbage-collection victim choice. Only greedy for now; the policy enum leaves room for the
//! others (random, d-choices, FIFO, cost-benefit).

use super::mapping::{BlockState, Ftl};

/// Greedy: the closed block of `plane` with the fewest valid pages (lowest index on ties, so
/// runs are deterministic). None when every closed block is fully valid: collecting one
/// would free nothing.
pub fn pick_victim_greedy(ftl: &Ftl, plane: u32) -> Option<u32> {
    let bpp = ftl.geo.blocks_per_plane;
    let first = plane * bpp;
    let ppb = ftl.geo.pages_per_block;
    let mut best: Option<(u32, u32)> = None;
    for b in first..first + bpp {
        if ftl.block_state[b as usize] != BlockState::Closed {
            continue;
        }
        let v = ftl.valid[b as usize];
        if v < ppb && best.is_none_or(|(_, bv)| v < bv) {
            best = Some((b, v));
            if v == 0 {
                break;
            }
        }
    }
    best.map(|(b, _)| b)
}
