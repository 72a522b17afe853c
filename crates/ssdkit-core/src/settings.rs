//! Settings: the configuration resolved once, at load, into the values components read
//! (geometry, logical pages, GC reserve and start points in pages, times in picoseconds, the
//! stripe table, each flow's address range and pinned planes). Derived values are computed
//! here and nowhere else, so preconditioning, snapshots and the timed simulator all agree on
//! them; the sizes in pages and blocks come from `config::Sizes`, which validation checks.
//!
//! Above `config` and `flash` (docs/architecture.md): the flash geometry and timing are part
//! of what a configuration resolves to, and every other layer is built from these settings.

use crate::config::{CmtSettings, Config, FlowConfig, InterfaceType, Sizes};
use crate::engine::{us_to_ps, Picoseconds, PS_PER_MS};
use crate::flash::{Geometry, Timing};

/// One flow's resolved address range and pinning.
#[derive(Debug, Clone, PartialEq)]
pub struct FlowSettings {
    /// First byte of the flow's range.
    pub start_bytes: u64,
    /// Length of the range in bytes (range_bytes, or to the end of the capacity).
    pub range_bytes: u64,
    /// Planes the flow's writes may use, in allocation order; None = all.
    pub planes: Option<Box<[u32]>>,
}

/// The resolved configuration. Built by `Settings::resolve` from a configuration that passed
/// the range checks of `validate`; never panics on one.
#[derive(Debug, Clone)]
pub struct Settings {
    pub geo: Geometry,
    /// Flash durations in picoseconds.
    pub timing: Timing,
    /// Logical pages exported to the host: floor(physical * (1 - spare factor)).
    pub logical_pages: u64,
    pub capacity_bytes: u64,
    /// Blocks of logical data per plane (the plane's share, rounded up).
    pub share_blocks: u64,
    /// Blocks per plane that user writes may not take (kept for GC).
    pub reserve_blocks: u32,
    /// GC starts in a plane when its free pages fall below this.
    pub gc_start_free_pages: u64,
    /// Idle-time GC runs in planes whose free pages are below this.
    pub gc_background_free_pages: u64,
    /// Plane of each stripe unit k (0..planes) in `ftl.allocation_order`.
    pub stripe: Box<[u32]>,
    pub firmware_request_ps: Picoseconds,
    pub firmware_transaction_ps: Picoseconds,
    /// Simulated-time cap (u64::MAX = none).
    pub max_simulated_ps: Picoseconds,
    /// `run.timeseries_window_ms`; 0 = no time series.
    pub timeseries_window_ps: Picoseconds,
    /// `steady_state.round_ms` when `steady_state.enabled`; 0 = no rounds, or (rounds on)
    /// a length picked at run time.
    pub steady_round_ps: Picoseconds,
    pub sata: bool,
    pub flows: Vec<FlowSettings>,
    /// The cached mapping table; None with `ftl.cmt.mode = "ideal"`.
    pub cmt: Option<CmtSettings>,
}

impl Settings {
    pub fn resolve(c: &Config) -> Settings {
        let f = &c.flash;
        let sizes = Sizes::of(c);
        let geo = Geometry::from_config(c);
        let stripe = stripe_table(&c.ftl.allocation_order, &geo);
        let capacity_bytes = sizes.capacity_bytes;
        let flows = c
            .flows
            .iter()
            .map(|fl| FlowSettings {
                start_bytes: fl.start_bytes,
                range_bytes: if fl.range_bytes == 0 {
                    capacity_bytes.saturating_sub(fl.start_bytes)
                } else {
                    fl.range_bytes
                },
                planes: pinned_planes(fl, &geo, &stripe),
            })
            .collect();
        Settings {
            geo,
            timing: Timing::from_config(f, c.interface.sector_bytes),
            logical_pages: sizes.logical_pages,
            capacity_bytes,
            share_blocks: sizes.share_blocks,
            reserve_blocks: sizes.reserve_blocks,
            gc_start_free_pages: sizes.gc_start_free_pages,
            gc_background_free_pages: sizes.gc_background_free_pages,
            stripe,
            firmware_request_ps: us_to_ps(c.ftl.firmware_request_us),
            firmware_transaction_ps: us_to_ps(c.ftl.firmware_transaction_us),
            max_simulated_ps: if c.run.max_simulated_ms > 0.0 {
                (c.run.max_simulated_ms * PS_PER_MS as f64) as u64
            } else {
                u64::MAX
            },
            timeseries_window_ps: (c.run.timeseries_window_ms * PS_PER_MS as f64).round() as u64,
            steady_round_ps: if c.steady_state.enabled {
                c.steady_state
                    .round_ms
                    .map_or(0, |ms| (ms * PS_PER_MS as f64).round() as u64)
            } else {
                0
            },
            sata: c.interface.kind == InterfaceType::Sata,
            flows,
            cmt: sizes.cmt,
        }
    }
}

/// Plane of stripe unit k: `order` (a permutation of "CWDP", fastest-varying first) says
/// which level the unit index walks first.
fn stripe_table(order: &str, g: &Geometry) -> Box<[u32]> {
    let mut levels = [0usize; 4];
    for (i, ch) in order.chars().take(4).enumerate() {
        levels[i] = match ch {
            'C' => 0,
            'W' => 1,
            'D' => 2,
            _ => 3,
        };
    }
    let sizes = [
        g.channels,
        g.chips_per_channel,
        g.dies_per_chip,
        g.planes_per_die,
    ];
    (0..g.planes())
        .map(|mut k| {
            let mut coord = [0u32; 4];
            for &level in &levels {
                coord[level] = k % sizes[level];
                k /= sizes[level];
            }
            g.plane_id(coord[0], coord[1], coord[2], coord[3])
        })
        .collect()
}

fn pinned_planes(f: &FlowConfig, geo: &Geometry, stripe: &[u32]) -> Option<Box<[u32]>> {
    if !f.is_pinned() {
        return None;
    }
    let ok = |l: &Vec<u32>, x: u32| l.is_empty() || l.contains(&x);
    Some(
        stripe
            .iter()
            .copied()
            .filter(|&p| {
                let die = geo.die_of_plane(p);
                let chip = geo.chip_of_die(die);
                ok(&f.channels, geo.channel_of_die(die))
                    && ok(&f.chips, chip % geo.chips_per_channel)
                    && ok(&f.dies, die % geo.dies_per_chip)
                    && ok(&f.planes, p % geo.planes_per_die)
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cwdp_varies_channel_fastest_and_covers_every_plane() {
        let c = Config::default();
        let g = Geometry::from_config(&c);
        let s = stripe_table("CWDP", &g);
        assert_eq!(s[0], g.plane_id(0, 0, 0, 0));
        assert_eq!(s[1], g.plane_id(1, 0, 0, 0));
        assert_eq!(s[8], g.plane_id(0, 1, 0, 0));
        assert_eq!(s[32], g.plane_id(0, 0, 1, 0));
        let p = stripe_table("PDWC", &g);
        assert_eq!(p[1], g.plane_id(0, 0, 0, 1));
        let mut seen = s.to_vec();
        seen.sort_unstable();
        assert_eq!(seen, (0..g.planes()).collect::<Vec<_>>());
    }

    #[test]
    fn derived_values_of_the_default_device() {
        let c = Config::default();
        let s = Settings::resolve(&c);
        // 8 x 4 x 2 x 2 planes x 2048 blocks x 256 pages, 7 % spare.
        let physical = 128u64 * 2048 * 256;
        assert_eq!(s.logical_pages, (physical as f64 * 0.93).floor() as u64);
        assert_eq!(s.capacity_bytes, s.logical_pages * 8192);
        // ceil(0.005 * 2048) = 11 blocks kept for GC.
        assert_eq!(s.reserve_blocks, 11);
        // ceil(0.05 * 2048 * 256) = 26215 pages, above (11 + 1) * 256 + 1.
        assert_eq!(s.gc_start_free_pages, 26215);
        assert_eq!(s.firmware_request_ps, 1_000_000);
        assert_eq!(s.firmware_transaction_ps, 250_000);
    }
}
