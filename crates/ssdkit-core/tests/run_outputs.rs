//! A batch run's outputs besides the result: the time series sums to the run's totals in
//! every window layout, recording it changes no other figure, the streamed request log is the
//! kept one cut into batches, and a progress hook can stop the run.
mod common;

use common::TINY;
use ssdkit_core::api::{run, run_with};
use ssdkit_core::internals::sim::{CompletionRecord, LogMode, Progress, RunHooks};
use ssdkit_core::result::RunResult;
use ssdkit_core::Error;

fn cfg(extra: &[&str]) -> ssdkit_core::config::Config {
    let mut o = TINY.to_vec();
    o.extend([
        "flow.0.read_fraction=0.3",
        "flow.0.trim_fraction=0.05",
        "flow.0.requests=5000",
        // A second, open-loop flow, so windows see two flows' depths and completions.
        "flow.1.arrival=exponential",
        "flow.1.rate_iops=20000",
        "flow.1.requests=3000",
    ]);
    o.extend(extra);
    common::preset("mqsim-paper", &o)
}

fn result(extra: &[&str]) -> RunResult {
    serde_json::from_value(run(&cfg(extra), false, false).unwrap().result).unwrap()
}

#[test]
fn windows_sum_to_the_run_totals() {
    for window in ["0.05", "0.3", "7", "100000"] {
        let r = result(&[&format!("run.timeseries_window_ms={window}")]);
        let ts = r.timeseries.as_ref().expect("recorded");
        let n = ts.start_ps.len();
        assert_eq!(
            n as u64,
            ts.end_ps.div_ceil(ts.window_ps).max(1),
            "window {window}"
        );
        for (i, f) in ts.flows.iter().enumerate() {
            let fr = &r.flows[i];
            assert_eq!(
                f.completed.iter().sum::<u64>(),
                fr.completed,
                "window {window}"
            );
            let bytes = fr.stats.all.bytes + fr.stats.trim.bytes;
            assert_eq!(f.bytes.iter().sum::<u64>(), bytes, "window {window}");
            for col in [f.iops.len(), f.queue_depth.len(), f.mean_latency_us.len()] {
                assert_eq!(col, n);
            }
        }
        let d = &ts.device;
        let ftl = &r.device.ftl;
        assert!(ftl.gc_runs > 0, "the case makes GC work");
        assert_eq!(d.gc_runs.iter().sum::<u64>(), ftl.gc_runs);
        assert_eq!(d.gc_page_moves.iter().sum::<u64>(), ftl.gc_page_moves);
        assert_eq!(d.user_page_writes.iter().sum::<u64>(), ftl.user_page_writes);
        assert_eq!(
            d.page_programs.iter().sum::<u64>(),
            r.device.flash.page_programs
        );
    }
}

#[test]
fn recording_a_time_series_changes_nothing_else() {
    let mut off = result(&[]);
    let mut on = result(&["run.timeseries_window_ms=0.2"]);
    assert!(off.timeseries.is_none() && on.timeseries.is_some());
    on.timeseries = None;
    for r in [&mut off, &mut on] {
        r.wall_time_s = 0.0;
        r.events_per_wall_s = 0.0;
        r.requests_per_wall_s = 0.0;
        r.config.run.timeseries_window_ms = 0.0;
        r.config_hash.clear();
        r.device.precondition.wall_time_s = 0.0;
    }
    assert_eq!(off, on);
}

#[test]
fn the_streamed_log_is_the_kept_log_in_batches() {
    let c = cfg(&["flow.0.requests=100000", "flow.1.requests=1"]);
    let kept = run(&c, false, true).unwrap().log.unwrap();
    let mut streamed: Vec<CompletionRecord> = Vec::new();
    let mut batches = 0;
    let mut sink = |b: &[CompletionRecord]| -> Result<(), Error> {
        assert!(b.len() <= 65_536, "batch of {}", b.len());
        batches += 1;
        streamed.extend_from_slice(b);
        Ok(())
    };
    let hooks = RunHooks {
        log: LogMode::Stream(&mut sink),
        ..RunHooks::default()
    };
    let out = run_with(&c, None, hooks).unwrap();
    assert!(out.log.is_none());
    assert!(batches > 1);
    assert_eq!(streamed, kept);
}

#[test]
fn a_progress_hook_can_stop_the_run() {
    let c = cfg(&[
        "flow.0.requests=0",
        "flow.0.duration_ms=100000",
        "flow.0.read_fraction=1",
        "flow.0.trim_fraction=0",
        "flow.1.requests=1",
    ]);
    let mut calls = 0;
    let mut hook = |p: &Progress| -> Result<(), Error> {
        calls += 1;
        let f = p.fraction.expect("a duration flow has a known end");
        assert!((0.0..1.0).contains(&f));
        Err(Error::Interrupted("stop".into()))
    };
    let hooks = RunHooks {
        on_progress: Some(&mut hook),
        ..RunHooks::default()
    };
    let e = run_with(&c, None, hooks).err().expect("stopped");
    assert_eq!(e, Error::Interrupted("stop".into()));
    assert_eq!(calls, 1);
}
