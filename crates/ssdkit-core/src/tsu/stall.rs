//! What a stalled or livelocked run's error message says about the die queues: the first dies
//! with queued work, whether each is busy, and its planes as the FTL describes them.

use super::Tsu;
use crate::flash::Dies;
use crate::ids::{DieId, PlaneId};

impl Tsu {
    /// The first three dies with queued work; `plane` describes a plane's blocks.
    pub fn stall_report(&self, dies: &Dies, plane: impl Fn(PlaneId) -> String) -> String {
        let ppd = self.geo.planes_per_die;
        let mut parts = Vec::new();
        for d in 0..self.geo.dies() {
            let dq = self.queues(DieId(d));
            if dq.is_empty() {
                continue;
            }
            let planes: Vec<String> = (d * ppd..(d + 1) * ppd)
                .map(|p| plane(PlaneId(p)))
                .collect();
            parts.push(format!(
                "die {d} busy {}: {} [{}]",
                dies.busy(DieId(d)),
                dq.describe(),
                planes.join("; ")
            ));
            if parts.len() == 3 {
                break;
            }
        }
        parts.join(" | ")
    }
}
