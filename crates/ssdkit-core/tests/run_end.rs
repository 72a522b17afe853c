//! Where a run ends (`run.end`): by default when the device has done the GC it owes, so that
//! work counts in time, rates and write amplification; optionally at the last completion,
//! reporting the backlog. The two runs are the same run cut at two points, so their counters
//! add up exactly. GC here refills the pool to its start threshold (`ftl.gc_refill`), so a
//! write burst leaves much GC owed; with the default one collection per block opened, only
//! collections in progress (and those of planes at their reserve) finish after it.
mod common;

use common::{preset, run_cfg, TINY};
use ssdkit_core::result::RunResult;

fn writes(extra: &[&str]) -> RunResult {
    let mut o = TINY.to_vec();
    o.extend([
        "flow.0.read_fraction=0",
        "flow.0.requests=20000",
        "ftl.gc_refill=true",
    ]);
    o.extend(extra);
    serde_json::from_value(run_cfg(&preset("mqsim-paper", &o))).unwrap()
}

#[test]
fn by_default_the_run_ends_when_the_owed_gc_is_done() {
    let r = writes(&[]);
    let after = r
        .after_last_completion
        .as_ref()
        .expect("a batch run reports it");
    assert!(after.page_programs > 0, "this write burst leaves GC owed");
    let idle = r.device_idle_ps.expect("ended idle");
    assert!(idle > r.last_completion_ps);
    assert_eq!(after.time_ps, idle - r.last_completion_ps);
    assert_eq!(r.simulated_time_ps, idle);
    assert!(r.backlog.is_none());
    // Every program is a user write or a GC move; every erase ends a collection.
    let (f, ftl) = (&r.device.flash, &r.device.ftl);
    assert_eq!(f.page_programs, ftl.user_page_writes + ftl.gc_page_moves);
    assert_eq!(f.block_erases, ftl.gc_runs);
    assert_eq!(
        ftl.write_amplification,
        f.page_programs as f64 / ftl.user_page_writes as f64
    );
    // The device's rates are over the whole window, idle time included.
    let done = r.device.stats.write.count as f64;
    assert_eq!(
        r.device.stats.write.iops,
        done / (idle as f64 / 1e12),
        "device IOPS over the window to idle"
    );
}

#[test]
fn stopping_at_the_last_completion_reports_what_is_left_and_adds_up() {
    let idle = writes(&[]);
    let last = writes(&["run.end=\"last_completion\""]);
    // The same run up to its last completion.
    assert_eq!(last.last_completion_ps, idle.last_completion_ps);
    assert_eq!(last.simulated_time_ps, last.last_completion_ps);
    assert_eq!(last.device_idle_ps, None);
    assert!(last.after_last_completion.is_none());
    assert_eq!(last.device.stats.write.count, idle.device.stats.write.count);
    // What was done by the last completion plus what was done after it is the idle run's
    // total, exactly.
    let after = idle.after_last_completion.as_ref().unwrap();
    let (a, b) = (&last.device.flash, &idle.device.flash);
    assert_eq!(a.page_programs + after.page_programs, b.page_programs);
    assert_eq!(a.page_reads + after.page_reads, b.page_reads);
    assert_eq!(a.block_erases + after.block_erases, b.block_erases);
    assert_eq!(
        last.device.ftl.gc_runs + after.gc_runs,
        idle.device.ftl.gc_runs
    );
    assert_eq!(
        last.device.ftl.gc_page_moves + after.gc_page_moves,
        idle.device.ftl.gc_page_moves
    );
    // The work owed shows in the backlog.
    let bl = last.backlog.as_ref().expect("reported");
    assert!(
        bl.planes_below_gc_start > 0 || bl.planes_collecting > 0,
        "{bl:?}"
    );
    assert!(last.device.ftl.write_amplification < idle.device.ftl.write_amplification);
}

#[test]
fn a_read_run_is_idle_at_its_last_completion() {
    let r = writes(&["flow.0.read_fraction=1"]);
    let after = r.after_last_completion.as_ref().unwrap();
    assert_eq!(after.time_ps, 0);
    assert_eq!(after.page_programs, 0);
    assert_eq!(r.device_idle_ps, Some(r.last_completion_ps));
    assert_eq!(r.simulated_time_ps, r.last_completion_ps);
}

/// A closed-loop flow stopped by its duration has drawn its next request and will never submit
/// it: its last completion is still the run's last, so the run ends there as any other.
#[test]
fn a_flow_stopped_by_its_duration_ends_at_its_last_completion() {
    let r = writes(&["flow.0.requests=0", "flow.0.duration_ms=300"]);
    let after = r
        .after_last_completion
        .as_ref()
        .expect("the last completion was seen");
    assert_eq!(r.device_idle_ps, Some(r.last_completion_ps + after.time_ps));
    let last = writes(&[
        "flow.0.requests=0",
        "flow.0.duration_ms=300",
        "run.end=\"last_completion\"",
    ]);
    assert_eq!(last.simulated_time_ps, r.last_completion_ps);
    assert!(last.backlog.is_some(), "stopped at the last completion");
}
