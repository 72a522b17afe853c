//! Steady-state write amplification against theory (DESIGN.md section 5.3, FACTS.md 6).
//!
//! Uniform random single-page overwrites after a full fill, page mapping, one plane, driven
//! through the FTL's own GC code (`ftl::Ftl::write_untimed`: the same victim choice, allocation
//! and mapping calls the timed simulator uses, without the timing, which does not change
//! which pages move).
//!
//! The closed form counts every physical page as able to hold data. The FTL keeps a few
//! blocks free (the GC reserve and start threshold) and two frontiers partly written, so
//! the effective spare is computed from the time-averaged number of pages that hold no data
//! during the measurement: alpha = (physical - mean free pages) / logical.

use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use ssdkit_core::api::{load, Source};
use ssdkit_core::config::Config;
use ssdkit_core::internals::ftl::precondition;
use ssdkit_core::internals::ftl::Ftl;
use ssdkit_core::internals::ids::{Lpn, PlaneId};

/// Principal branch of Lambert W by Halley's method; written here, apart from the
/// simulator's own copy, so the expectation does not come from the code under test.
fn w0(x: f64) -> f64 {
    let mut w = if x < -0.3 {
        -1.0 + (2.0 * (1.0 + std::f64::consts::E * x)).sqrt()
    } else {
        x
    };
    for _ in 0..100 {
        let e = w.exp();
        let f = w * e - x;
        let d = e * (w + 1.0) - f * (w + 2.0) / (2.0 * w + 2.0);
        let next = w - f / d;
        if (next - w).abs() < 1e-15 {
            return next;
        }
        w = next;
    }
    w
}

/// LRU/FIFO cleaning, Desnoyers 2012 / Xiang and Kurkoski 2012.
fn fifo_closed_form(alpha: f64) -> f64 {
    alpha / (alpha + w0(-alpha * (-alpha).exp()))
}

fn one_plane(spare: f64, blocks: u32, ppb: u32, policy: &str) -> Config {
    let o: Vec<String> = vec![
        // The bare controller: the closed form is of the FTL's GC alone.
        "ftl.cmt.mode=ideal".into(),
        "cache.mode=off".into(),
        "flash.channels=1".into(),
        "flash.chips_per_channel=1".into(),
        "flash.dies_per_chip=1".into(),
        "flash.planes_per_die=1".into(),
        format!("flash.blocks_per_plane={blocks}"),
        format!("flash.pages_per_block={ppb}"),
        "flash.page_size_bytes=4096".into(),
        format!("ftl.spare_factor={spare}"),
        // Keep only the minimum free: the 2-block reserve and GC one block above it.
        "ftl.gc_hard_threshold=0".into(),
        "ftl.gc_threshold=0.0001".into(),
        format!("ftl.gc_policy={policy}"),
        "precondition.mode=sequential".into(),
    ];
    load(Source::Preset("mqsim-paper"), &o).unwrap_or_else(|e| panic!("{e}"))
}

struct Measured {
    wa: f64,
    alpha_nominal: f64,
    alpha_effective: f64,
}

/// Fills the device, overwrites `warm` drive writes at random, then measures WA and the mean
/// free pages over `measure` drive writes.
fn measure(c: &Config, warm: f64, measure: f64, seed: u64) -> Measured {
    let mut ftl = Ftl::from_config(c);
    precondition::run(&mut ftl, c).unwrap();
    let u = ftl.logical_pages();
    let physical = ftl.geometry().total_pages() as f64;
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    for _ in 0..(warm * u as f64) as u64 {
        assert!(ftl.write_untimed(Lpn(rng.gen_range(0..u) as u32)));
    }
    let before = ftl.stats().clone();
    let n = (measure * u as f64) as u64;
    let mut free_sum = 0u64;
    for _ in 0..n {
        assert!(ftl.write_untimed(Lpn(rng.gen_range(0..u) as u32)));
        free_sum += ftl.free_pages(PlaneId(0));
    }
    ftl.check_invariants().unwrap();
    let user = ftl.stats().user_page_writes - before.user_page_writes;
    let moves = ftl.stats().gc_page_moves - before.gc_page_moves;
    let mean_free = free_sum as f64 / n as f64;
    Measured {
        wa: (user + moves) as f64 / user as f64,
        alpha_nominal: physical / u as f64,
        alpha_effective: (physical - mean_free) / u as f64,
    }
}

#[test]
fn fifo_matches_the_closed_form_within_2_percent() {
    for spare in [0.07, 0.10, 0.20, 0.30] {
        let c = one_plane(spare, 4096, 64, "fifo");
        let m = measure(&c, 3.0, 3.0, 11);
        let expected = fifo_closed_form(m.alpha_effective);
        let err = (m.wa - expected).abs() / expected;
        println!(
            "Sf {spare}: alpha {:.5} (effective {:.5}), WA simulated {:.4}, closed form {:.4} (nominal alpha: {:.4}), error {:.2} %",
            m.alpha_nominal,
            m.alpha_effective,
            m.wa,
            expected,
            fifo_closed_form(m.alpha_nominal),
            100.0 * err
        );
        assert!(
            err < 0.02,
            "Sf {spare}: FIFO WA {:.4} vs closed form {expected:.4}",
            m.wa
        );
    }
}

#[test]
fn greedy_is_never_above_fifo_and_approaches_it_as_blocks_grow() {
    let spare = 0.10;
    let mut gaps = Vec::new();
    for ppb in [8u32, 32, 128] {
        let c = one_plane(spare, 2048, ppb, "greedy");
        let g = measure(&c, 3.0, 2.0, 5);
        let f = measure(&one_plane(spare, 2048, ppb, "fifo"), 3.0, 2.0, 5);
        let fifo_theory = fifo_closed_form(f.alpha_effective);
        let gap = (f.wa - g.wa) / f.wa;
        println!(
            "pages/block {ppb}: greedy WA {:.4}, FIFO WA {:.4} (closed form {fifo_theory:.4}), gap {:.2} %",
            g.wa,
            f.wa,
            100.0 * gap
        );
        assert!(
            g.wa <= f.wa * 1.005,
            "b={ppb}: greedy {:.4} above FIFO {:.4}",
            g.wa,
            f.wa
        );
        gaps.push(gap);
    }
    assert!(
        gaps[0] > gaps[1] && gaps[1] > gaps[2],
        "greedy should approach FIFO as pages per block grow: gaps {gaps:?}"
    );
}
