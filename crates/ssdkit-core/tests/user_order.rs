//! `tsu.policy`: a die serves queued reads before queued writes (`out_of_order`, the
//! default) or in arrival order (`fifo`).
mod common;
use ssdkit_core::api::{load, run, Source};
use ssdkit_core::device::Device;
use ssdkit_core::internals::workload::Op;
use ssdkit_core::result::RunResult;

use common::ONE_DIE;

/// Completion times (ps) of a write and a read that both wait behind a first write on the
/// only die: which goes next is the policy's choice.
fn second_write_and_read(order: &str) -> (u64, u64) {
    let mut o = common::bare(&ONE_DIE);
    o.push(format!("tsu.policy=\"{order}\""));
    let c = load(Source::Preset("mqsim-paper"), &o).unwrap();
    let mut dev = Device::new(&c).unwrap();
    let us = 1_000_000u64;
    dev.submit(0, Op::Write, 0, 4096, 0).unwrap();
    // While the first program runs (hundreds of us): a write of another page, then a read of
    // the first write's page (mapped when that write was dispatched).
    let w2 = dev.submit(100 * us, Op::Write, 1 << 20, 4096, 0).unwrap();
    let r = dev.submit(200 * us, Op::Read, 0, 4096, 0).unwrap();
    dev.run_to_idle().unwrap();
    let done = dev.drain();
    let at = |id| done.iter().find(|c| c.id == id).unwrap().complete_ps;
    // Both were queued at the die before the first write finished.
    assert!(
        at(0) > 200 * us + 20 * us,
        "the first write is still on the die"
    );
    (at(w2), at(r))
}

#[test]
fn reads_first_lets_a_later_read_overtake_a_queued_write() {
    let (w2, r) = second_write_and_read("out_of_order");
    assert!(r < w2, "read {r} ps before write {w2} ps");
}

#[test]
fn arrival_order_serves_the_earlier_write_first() {
    let (w2, r) = second_write_and_read("fifo");
    assert!(w2 < r, "write {w2} ps before read {r} ps");
}

fn mixed(order: Option<&str>) -> RunResult {
    let mut o = common::bare(&ONE_DIE);
    o.extend(
        [
            // A steady-state device: reads hit flash, GC runs.
            "precondition.mode=\"fast\"",
            "flow.0.read_fraction=0.5",
            "flow.0.requests=4000",
        ]
        .map(String::from),
    );
    if let Some(order) = order {
        o.push(format!("tsu.policy=\"{order}\""));
    }
    let c = load(Source::Preset("mqsim-paper"), &o).unwrap();
    serde_json::from_value(run(&c, false, false).unwrap().result).unwrap()
}

#[test]
fn under_load_arrival_order_trades_read_latency_for_write_latency() {
    let default = mixed(None);
    let first = mixed(Some("out_of_order"));
    let arrival = mixed(Some("fifo"));
    let mean = |r: &RunResult, read: bool| {
        let s = &r.device.stats;
        if read {
            s.read.latency_us.mean
        } else {
            s.write.latency_us.mean
        }
    };
    // The default is reads first: the same run.
    assert_eq!(default.device.stats, first.device.stats);
    // At QD32 on one die, reads no longer skip the queued writes.
    assert!(mean(&arrival, true) > 2.0 * mean(&first, true));
    assert!(mean(&arrival, false) < mean(&first, false));
}
