//! NVMe weighted round robin with urgent priority class (NVMe base specification 2.1, section
//! 3.4.4) acts once fetching contends: with `interface.max_inflight_commands` below the flows'
//! total queue depth, a completion frees one slot and the arbitration picks the queue served
//! next. Four saturating flows, one per class: the urgent flow takes a slot whenever it has a
//! command (its small queue depth leaves the others most of the slots), and high, medium and
//! low complete commands in the ratio of `wrr_high : wrr_medium : wrr_low`.
//!
//! `cargo test -p ssdkit-core --test host_arbitration -- --nocapture` prints the figures.

mod common;
use common::*;
use serde_json::Value;

const CLASSES: [&str; 4] = ["urgent", "high", "medium", "low"];
/// Queue depths: the urgent flow keeps a few commands in flight, the others far more than
/// their share of the controller's slots, so all four always have a command waiting.
const DEPTHS: [u32; 4] = [4, 64, 64, 64];

/// The four flows on mqsim-paper's back end (bare controller, 128 blocks per plane): 4 KiB
/// random reads, all starting at 0, for the `DURATION_MS` simulated milliseconds of the run.
fn four_classes(arbitration: &str, limit: u32, weights: [u32; 3]) -> Value {
    let mut keys: Vec<String> = bare(&["flash.blocks_per_plane=128"]);
    keys.push(format!("interface.arbitration={arbitration}"));
    if arbitration == "weighted" {
        keys.push(format!("interface.wrr_high={}", weights[0]));
        keys.push(format!("interface.wrr_medium={}", weights[1]));
        keys.push(format!("interface.wrr_low={}", weights[2]));
    }
    if limit > 0 {
        keys.push(format!("interface.max_inflight_commands={limit}"));
    }
    for (i, class) in CLASSES.iter().enumerate() {
        keys.push(format!("flow.{i}.name={class}"));
        // Round robin refuses a non-default priority; its flows are told apart by index.
        if arbitration == "weighted" {
            keys.push(format!("flow.{i}.priority={class}"));
        }
        keys.push(format!("flow.{i}.queue_depth={}", DEPTHS[i]));
        keys.push(format!("flow.{i}.read_fraction=1.0"));
        keys.push(format!("flow.{i}.request_bytes=4096"));
        keys.push(format!("flow.{i}.pattern=\"random\""));
        keys.push(format!("flow.{i}.requests=0"));
        keys.push(format!("flow.{i}.duration_ms={}", 10.0 * DURATION_MS));
    }
    // The run stops with every flow saturating: the commands queued at a flow's end would
    // all complete after it, the same number for each deep queue, and blur the ratio.
    keys.push(format!("run.max_simulated_ms={DURATION_MS}"));
    let o: Vec<&str> = keys.iter().map(|s| s.as_str()).collect();
    run_cfg(&preset("mqsim-paper", &o))
}

const DURATION_MS: f64 = 40.0;

fn completed(r: &Value, flow: usize) -> f64 {
    r["flows"][flow]["completed"].as_f64().unwrap()
}

fn mean_latency_us(r: &Value, flow: usize) -> f64 {
    r["flows"][flow]["stats"]["all"]["latency_us"]["mean"]
        .as_f64()
        .unwrap()
}

fn show(label: &str, r: &Value) {
    let parts: Vec<String> = (0..4)
        .map(|f| {
            format!(
                "{} {:.0} cmds {:.1} us",
                CLASSES[f],
                completed(r, f),
                mean_latency_us(r, f)
            )
        })
        .collect();
    println!("{label}: {}", parts.join(", "));
}

/// High, medium and low complete commands in the ratio of their weights within 5 %, and the
/// urgent flow's mean latency is the lowest of the four and below its latency under round
/// robin with the same limit (there it waits its turn behind the other three).
fn check_weights(limit: u32, weights: [u32; 3]) {
    let w = four_classes("weighted", limit, weights);
    let rr = four_classes("round_robin", limit, weights);
    show(&format!("weighted {weights:?}, limit {limit}"), &w);
    show(&format!("round robin, limit {limit}"), &rr);
    let (h, m, l) = (completed(&w, 1), completed(&w, 2), completed(&w, 3));
    let total = h + m + l;
    let wsum = (weights[0] + weights[1] + weights[2]) as f64;
    for (got, weight, class) in [
        (h, weights[0], "high"),
        (m, weights[1], "medium"),
        (l, weights[2], "low"),
    ] {
        let want = total * weight as f64 / wsum;
        assert!(
            rel(got, want) < 0.05,
            "{class}: {got} of {total} completed commands, want {want:.0} (weights {weights:?})"
        );
    }
    let urgent = mean_latency_us(&w, 0);
    for (f, class) in CLASSES.iter().enumerate().skip(1) {
        let other = mean_latency_us(&w, f);
        assert!(
            urgent < other,
            "urgent mean {urgent:.1} us is not below {class}'s {other:.1} us"
        );
    }
    assert!(
        urgent < mean_latency_us(&rr, 0),
        "urgent mean {urgent:.1} us under weighted arbitration, {:.1} us under round robin",
        mean_latency_us(&rr, 0)
    );
    // Round robin with the same limit serves the three deep queues alike.
    let (rh, rl) = (completed(&rr, 1), completed(&rr, 3));
    assert!(rel(rh, rl) < 0.05, "round robin: high {rh}, low {rl}");
}

#[test]
fn classes_complete_commands_by_their_weights() {
    check_weights(16, [4, 2, 1]);
}

#[test]
fn other_weights_and_a_wider_limit() {
    check_weights(48, [8, 3, 1]);
}

/// Without a limit (the default) weighted arbitration gives round robin's results: fetching
/// never contends. A limit no flow mix can reach changes nothing either, and a limit that
/// binds makes weighted arbitration differ from round robin.
#[test]
fn a_limit_changes_results_only_where_it_binds() {
    let stats = |r: &Value| -> Vec<Value> {
        (0..4)
            .map(|f| r["flows"][f]["stats"].clone())
            .chain([
                r["device"]["stats"].clone(),
                r["events"].clone(),
                r["simulated_time_ps"].clone(),
            ])
            .collect()
    };
    let free = four_classes("round_robin", 0, [4, 2, 1]);
    let weighted_free = four_classes("weighted", 0, [4, 2, 1]);
    assert!(
        stats(&free) == stats(&weighted_free),
        "no limit: weighted results differ from round robin's"
    );
    let total_depth: u32 = DEPTHS.iter().sum();
    let roomy = four_classes("round_robin", total_depth, [4, 2, 1]);
    assert!(
        stats(&free) == stats(&roomy),
        "a limit of the flows' total depth changes results"
    );
    // Unset, the key stays out of the result's configuration (documents and digests as before).
    assert!(free["config"]["interface"]
        .get("max_inflight_commands")
        .is_none());
    assert_eq!(
        roomy["config"]["interface"]["max_inflight_commands"].as_u64(),
        Some(total_depth as u64)
    );
    let rr = four_classes("round_robin", 16, [4, 2, 1]);
    let w = four_classes("weighted", 16, [4, 2, 1]);
    // (Compared whole: a difference printed would be pages of histograms.)
    assert!(
        stats(&rr) != stats(&w),
        "a limit of 16: weighted results equal round robin's"
    );
    assert!(stats(&rr) != stats(&free), "a limit of 16 changes nothing");
    // At most 16 commands inside the device: no flow holds more, the urgent one its depth.
    for f in 0..4 {
        let held = w["flows"][f]["max_in_device"].as_u64().unwrap();
        assert!(held <= 16, "flow {f} held {held}");
    }
    assert_eq!(w["flows"][0]["max_in_device"].as_u64(), Some(4));
}

fn refused(name: &str, set: &str) -> String {
    let o = vec![set.to_string()];
    match ssdkit_core::api::load(ssdkit_core::api::Source::Preset(name), &o) {
        Ok(_) => panic!("{name} with {set} must be refused"),
        Err(e) => e.to_string(),
    }
}

/// Past 2^24 (the most requests the flows may keep in flight) a limit could never bind; SATA
/// has its own device-wide limit, the NCQ depth.
#[test]
fn the_key_is_checked() {
    let e = refused("mqsim-paper", "interface.max_inflight_commands=16777217");
    assert!(
        e.contains("key `interface.max_inflight_commands` = 16777217")
            && e.contains("0..=16777216")
            && e.contains("0: no limit"),
        "{e}"
    );
    let e = refused("x25m", "interface.max_inflight_commands=8");
    assert!(
        e.contains("key `interface.max_inflight_commands` = 8")
            && e.contains("\"nvme\" only")
            && e.contains("interface.ncq_depth"),
        "{e}"
    );
    // The default, written out, is accepted everywhere.
    preset("x25m", &["interface.max_inflight_commands=0"]);
    preset("mqsim-paper", &["interface.max_inflight_commands=16777216"]);
}
