//! Check of flow pinning against preconditioning and the planes' capacity.

use crate::config::{Config, FlowConfig};

/// Pinned flows place their writes on a subset of planes. A plane's valid data cannot leave
/// it (GC moves stay in the plane), so the planes must hold what is written to them.
/// Preconditioning (every mode) places each pinned flow's range in its own planes.
pub(super) fn validate_pinning(c: &Config, capacity: u64) -> Result<(), String> {
    let pinned = |f: &FlowConfig| {
        !(f.channels.is_empty() && f.chips.is_empty() && f.dies.is_empty() && f.planes.is_empty())
    };
    if !c.flows.iter().any(pinned) {
        return Ok(());
    }
    let g = &c.flash;
    let planes = g.channels * g.chips_per_channel * g.dies_per_chip * g.planes_per_die;
    let share = capacity / planes as u64;
    let in_set = |f: &FlowConfig, p: u32| {
        let pl = p % g.planes_per_die;
        let die = p / g.planes_per_die;
        let d = die % g.dies_per_chip;
        let chip = die / g.dies_per_chip;
        let ch = chip / g.chips_per_channel;
        let chp = chip % g.chips_per_channel;
        let ok = |l: &Vec<u32>, x: u32| l.is_empty() || l.contains(&x);
        ok(&f.channels, ch) && ok(&f.chips, chp) && ok(&f.dies, d) && ok(&f.planes, pl)
    };
    let writes = |f: &FlowConfig| f.is_trace() || f.read_fraction < 1.0;
    for p in 0..planes {
        let mut demand = 0.0;
        for f in c.flows.iter().filter(|f| writes(f)) {
            let range = if f.range_bytes == 0 {
                capacity - f.start_bytes
            } else {
                f.range_bytes
            } as f64;
            let n = (0..planes).filter(|&q| in_set(f, q)).count() as f64;
            if n == 0.0 {
                return Err(format!(
                    "flow `{}`: its `channels`/`chips`/`dies`/`planes` lists select no plane",
                    f.name
                ));
            }
            if in_set(f, p) {
                demand += range / n;
            }
        }
        if demand > share as f64 * 1.0001 {
            // Name the keys of the first pinned writer on this plane.
            let culprit = c
                .flows
                .iter()
                .position(|f| writes(f) && pinned(f) && in_set(f, p))
                .map_or_else(String::new, |i| {
                    format!("keys `flow.{i}.range_bytes` and `flow.{i}.channels`/`chips`/`dies`/`planes`: ")
                });
            return Err(format!(
                "{culprit}plane {p} would receive {:.0} bytes of logical data from the flows that write to it (range_bytes spread over each flow's pinned planes) but holds {share}; shrink the pinned flows' `range_bytes` or pin the other flows elsewhere",
                demand
            ));
        }
    }
    Ok(())
}
