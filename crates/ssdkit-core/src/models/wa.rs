//! Steady-state write amplification under uniform random single-page overwrites, as a
//! function of the spare factor, pages per block and the GC victim policy: the closed form
//! for FIFO (Desnoyers 2012) and the mean-field model for greedy, random and d-choices (Van
//! Houdt, SIGMETRICS 2013). These are the functions the FTL's fast preconditioning uses to
//! start from a steady-state device; `tests/steady_state_wa.rs` checks the simulator against
//! them.
//!
//! Assumptions, where the model stops holding: writes are uniform over the logical space,
//! one page each; one write frontier per plane; the mean-field limit (many blocks per plane:
//! with few blocks the simulator's WA differs by a few percent); no TRIM, no hot/cold
//! separation, no wear levelling moves.

use crate::config::{Config, GcPolicy};
pub use crate::ftl::precondition::fast::mean_field_policy;
pub use crate::ftl::precondition::meanfield::{
    fifo_write_amplification, valid_distribution, write_amplification, MfPolicy,
};

/// Physical over logical capacity, alpha = N b / U, of a device whose spare factor is
/// `spare` (the share of physical pages not exported, as `ftl.spare_factor`).
pub fn alpha_of_spare(spare: f64) -> f64 {
    1.0 / (1.0 - spare)
}

/// Write amplification for spare factor `spare` and `pages_per_block` under `policy`, in the
/// mean-field limit (computed on a 4096-block plane; the answer depends on the blocks and
/// logical pages only through their ratio).
pub fn steady_state(policy: MfPolicy, spare: f64, pages_per_block: u32) -> Result<f64, String> {
    if !(spare > 0.0 && spare < 1.0) {
        return Err(format!("spare factor must be in (0, 1), got {spare}"));
    }
    if policy == MfPolicy::Fifo {
        return Ok(fifo_write_amplification(alpha_of_spare(spare)));
    }
    let blocks: u64 = 4096;
    let physical = blocks * pages_per_block as u64;
    let logical = ((physical as f64) * (1.0 - spare)).round() as u64;
    write_amplification(policy, blocks, pages_per_block, logical.min(physical - 1))
}

/// Write amplification for a configured GC policy (its mean-field model; cost-benefit is
/// modelled as greedy), spare factor and pages per block, with the model's name.
pub fn of_policy(
    policy: GcPolicy,
    spare: f64,
    pages_per_block: u32,
) -> Result<(f64, &'static str), String> {
    let (model, name) = mean_field_policy(policy);
    steady_state(model, spare, pages_per_block).map(|wa| (wa, name))
}

/// The idealised steady-state write amplification of `c`'s device: its `ftl.spare_factor`,
/// pages per block and GC policy (cost-benefit modelled as greedy), with the model's name.
/// The simulator's steady state is a little higher: GC keeps `ftl.gc_threshold` of each
/// plane free, which the model's single write frontier does not.
pub fn of_config(c: &Config) -> Result<(f64, &'static str), String> {
    of_policy(c.ftl.gc_policy, c.ftl.spare_factor, c.flash.pages_per_block)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn random_victims_give_one_over_the_spare_factor() {
        // A uniformly random victim holds the mean valid count b (1 - s), so each GC frees
        // b s pages: WA = 1 / s exactly (4096 blocks x 64 pages keep U = N b (1 - s) whole).
        for s in [0.0625, 0.125, 0.25, 0.5] {
            let wa = steady_state(MfPolicy::Random, s, 64).unwrap();
            assert!((wa - 1.0 / s).abs() < 1e-9 * wa, "{s}: {wa}");
        }
    }

    #[test]
    fn fifo_solves_its_fixed_point_and_greedy_beats_the_others() {
        for s in [0.07, 0.15, 0.28] {
            let fifo = steady_state(MfPolicy::Fifo, s, 256).unwrap();
            let alpha = alpha_of_spare(s);
            let u = 1.0 - 1.0 / fifo;
            assert!((u - (-alpha * (1.0 - u)).exp()).abs() < 1e-12, "{s}");
            let greedy = steady_state(MfPolicy::Greedy, s, 256).unwrap();
            let d2 = steady_state(MfPolicy::DChoices(2), s, 256).unwrap();
            let random = steady_state(MfPolicy::Random, s, 256).unwrap();
            assert!(
                greedy < d2 && d2 < random && greedy < fifo,
                "{greedy} {d2} {fifo} {random}"
            );
        }
        assert!(steady_state(MfPolicy::Greedy, 1.0, 256).is_err());
    }
}
