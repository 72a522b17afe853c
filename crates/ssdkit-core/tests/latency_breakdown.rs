//! The latency breakdown (`run.latency_breakdown`): the steps of every request sum to its
//! latency exactly, whatever contends (checked per request on devices that exercise every
//! step); at QD1 on a bare NVMe device each step equals its term of NVMeSim's Eq. 1 computed
//! from the configuration; and the result's step means sum to the mean latency.

mod common;
use common::pcie::Parts;
use common::*;
use ssdkit_core::api::run;
use ssdkit_core::config::Config;
use ssdkit_core::internals::sim::CompletionRecord;
use ssdkit_core::internals::stats::breakdown::{Step, RESPONSE_STEPS, STEP_NAMES};

fn logged(c: &Config) -> (serde_json::Value, Vec<CompletionRecord>) {
    let out = run(c, false, true).unwrap_or_else(|e| panic!("{e}"));
    (out.result, out.log.expect("log requested"))
}

fn with(preset_name: &str, base: &[&str], extra: &[&str]) -> Config {
    let mut o: Vec<&str> = vec!["run.latency_breakdown=true"];
    o.extend(base);
    o.extend(extra);
    preset(preset_name, &o)
}

/// Every request's response-time steps sum to its latency, to the picosecond; returns the
/// per-step totals over the requests (picoseconds).
fn check_sums(log: &[CompletionRecord], what: &str) -> [u128; RESPONSE_STEPS] {
    assert!(!log.is_empty(), "{what}: no requests");
    let mut totals = [0u128; RESPONSE_STEPS];
    for r in log {
        let s = r.steps.as_ref().expect("steps recorded");
        let sum: u64 = s[..RESPONSE_STEPS].iter().sum();
        assert_eq!(
            sum,
            r.complete_ps - r.submit_ps,
            "{what}: request {} steps {s:?}",
            r.id
        );
        for (t, &v) in totals.iter_mut().zip(s.iter()) {
            *t += v as u128;
        }
    }
    totals
}

fn total(t: &[u128; RESPONSE_STEPS], step: Step) -> u128 {
    t[step as usize]
}

// ----- QD1: each step is its term of the sum of parts -----

/// Picoseconds of `payload` bytes as TLPs of at most `max` bytes.
fn tlps(l: &Parts, payload: f64, max: f64) -> f64 {
    l.tlps_us(payload, max) * 1e6
}

/// QD1 4 KiB reads on the bare mqsim-paper device: doorbell, command fetch (request and
/// SQE), firmware, command/address cycles, tR, the page's 4 KiB on the ONFI bus, the data
/// DMA and the CQE, each within 2 ps (fixed-point link arithmetic); the waits are 0.
#[test]
fn qd1_read_steps_are_the_terms_of_the_sum_of_parts() {
    let base = bare(&[
        "flow.0.queue_depth=1",
        "flow.0.read_fraction=1",
        "flow.0.requests=500",
        "precondition.mode=sequential",
    ]);
    let base: Vec<&str> = base.iter().map(String::as_str).collect();
    let c = with("mqsim-paper", &base, &[]);
    let (r, log) = logged(&c);
    let totals = check_sums(&log, "QD1 read");
    let l = Parts::from_config(&c);
    let b = &c.flash.bus;
    let expect = [
        (Step::Doorbell, tlps(&l, 4.0, 4.0)),
        (
            Step::CommandFetch,
            tlps(&l, 0.0, 1.0) + tlps(&l, 64.0, l.mps),
        ),
        (
            Step::Firmware,
            (c.ftl.firmware_request_us + c.ftl.firmware_transaction_us) * 1e6,
        ),
        (
            Step::CmdAddr,
            b.read_cmd_cycles as f64 * b.cmd_addr_cycle_ns * 1e3,
        ),
        (Step::Array, c.flash.read_us[0] * 1e6),
        (
            Step::OnfiTransfer,
            4096.0 / (b.width_bits as f64 / 8.0) / b.rate_mts * 1e6,
        ),
        (Step::DataDma, tlps(&l, 4096.0, l.mps)),
        (Step::Completion, tlps(&l, 16.0, 16.0)),
    ];
    let n = log.len() as f64;
    let mut named = 0.0;
    for (step, ps) in expect {
        let got = total(&totals, step) as f64 / n;
        assert!(
            (got - ps).abs() <= 2.0,
            "{}: {got} ps per request, the term is {ps:.1} ps",
            STEP_NAMES[step as usize]
        );
        named += ps;
    }
    // Nothing else takes time at QD1 without DLLPs.
    let all: u128 = totals.iter().sum();
    assert!((all as f64 / n - named).abs() <= 16.0);
    for step in [
        Step::HostQueue,
        Step::SqWait,
        Step::Mapping,
        Step::Cache,
        Step::DieQueue,
        Step::ChannelWait,
        Step::TStall,
    ] {
        assert_eq!(total(&totals, step), 0, "{}", STEP_NAMES[step as usize]);
    }
    // The result's step means sum to the mean latency.
    let bd = &r["device"]["latency_breakdown"]["read"];
    assert_eq!(bd["count"].as_u64(), Some(500));
    let means: f64 = STEP_NAMES[..RESPONSE_STEPS]
        .iter()
        .map(|s| bd[s]["mean"].as_f64().unwrap())
        .sum();
    let mean = r["device"]["stats"]["read"]["latency_us"]["mean"]
        .as_f64()
        .unwrap();
    assert!((means - mean).abs() < 1e-9 * mean, "{means} vs {mean}");
    assert!(bd["host_processing"].is_null(), "no host model");
    assert_eq!(
        r["flows"][0]["latency_breakdown"]["read"]["array"],
        bd["array"]
    );
}

// ----- contention: the sum holds per request, and the waits show where they are -----

/// Random 4 KiB reads at QD32 on the bare device with DLLPs on the link: requests wait for
/// their dies and for the channel, and packets wait behind DLLPs and each other (T_stall).
#[test]
fn contended_reads_wait_in_die_queues_and_on_the_link() {
    let base = bare(&[
        "flow.0.queue_depth=64",
        "flow.0.read_fraction=1",
        "flow.0.requests=20000",
        "precondition.mode=sequential",
        "pcie.lanes=1",
        "pcie.generation=1",
        "pcie.ack_every_tlps=1",
    ]);
    let base: Vec<&str> = base.iter().map(String::as_str).collect();
    let (_, log) = logged(&with("mqsim-paper", &base, &[]));
    let t = check_sums(&log, "QD64 reads");
    assert!(total(&t, Step::DieQueue) > 0);
    assert!(total(&t, Step::TStall) > 0);
    assert!(total(&t, Step::ChannelWait) > 0);
}

/// The mqsim-paper controller as shipped (4 MiB shared mapping cache, 256 MiB write cache),
/// mixed random traffic: reads wait for translation pages (mapping), writes complete from the
/// write cache (cache), and GC runs on a small device.
#[test]
fn mapping_cache_and_gc_steps_sum_per_request() {
    let (_, log) = logged(&with(
        "mqsim-paper",
        &[
            "flow.0.queue_depth=32",
            "flow.0.read_fraction=0.5",
            "flow.0.requests=20000",
        ],
        &[],
    ));
    let t = check_sums(&log, "mqsim-paper mixed");
    assert!(total(&t, Step::Mapping) > 0, "translation-page reads");
    assert!(total(&t, Step::Cache) > 0, "write cache");
    let mut o: Vec<&str> = TINY.to_vec();
    o.extend([
        "flow.0.queue_depth=16",
        "flow.0.read_fraction=0.3",
        "flow.0.requests=20000",
        "ftl.cmt.mode=shared",
        "ftl.cmt.capacity_bytes=8192",
    ]);
    let (r, log) = logged(&with("mqsim-paper", &o, &[]));
    assert!(r["device"]["ftl"]["gc_runs"].as_u64().unwrap() > 0);
    let t = check_sums(&log, "tiny, GC, small CMT");
    assert!(total(&t, Step::Mapping) > 0 && total(&t, Step::DieQueue) > 0);
}

/// An open-loop flow above the device's rate fills its submission queue: arrivals wait in the
/// host (host_queue). Whole-request transfers (pipelined off), TRIM-free writes.
#[test]
fn overload_waits_in_the_host_queue() {
    let base = bare(&[
        "flow.0.arrival=fixed",
        "flow.0.rate_iops=400000",
        "flow.0.read_fraction=0.7",
        "flow.0.requests=20000",
        "interface.io_queue_depth=64",
        "interface.pipelined_transfers=false",
        "precondition.mode=sequential",
    ]);
    let base: Vec<&str> = base.iter().map(String::as_str).collect();
    let (_, log) = logged(&with("mqsim-paper", &base, &[]));
    let t = check_sums(&log, "open loop overload");
    assert!(total(&t, Step::HostQueue) > 0);
    assert!(total(&t, Step::SqWait) > 0 || total(&t, Step::DieQueue) > 0);
}

/// SATA: the X25-M at QD32 with the host bus adapter's delay: the NCQ's wait (sq_wait), the
/// HBA's stages in doorbell and completion, the channel-switch delays in cmd_addr.
#[test]
fn sata_steps_sum_per_request() {
    let (_, log) = logged(&with(
        "x25m",
        &[
            "precondition.mode=sequential",
            "flow.0.queue_depth=48",
            "flow.0.read_fraction=0.6",
            "flow.0.request_bytes=16384",
            "flow.0.requests=4000",
            "interface.sata_processing_delay_us=3",
        ],
        &[],
    ));
    let t = check_sums(&log, "x25m QD48");
    let n = log.len() as u128;
    assert!(total(&t, Step::SqWait) > 0, "more requests than NCQ slots");
    assert!(total(&t, Step::Doorbell) >= n * 3_000_000);
    assert!(total(&t, Step::Completion) >= n * 3_000_000);
    assert!(total(&t, Step::CmdAddr) >= n * 16_000_000);
}

/// With a host model the host's processing is reported after the response time: at QD1 with
/// one interrupt per completion, MSI + ISR + scan + DPC (1.6081 us, tests/host_completion.rs).
#[test]
fn host_processing_follows_the_response_time() {
    let base = bare(&[
        "flow.0.queue_depth=1",
        "flow.0.read_fraction=1",
        "flow.0.requests=300",
        "precondition.mode=sequential",
        "host.completion=interrupt",
    ]);
    let base: Vec<&str> = base.iter().map(String::as_str).collect();
    let (r, log) = logged(&with("mqsim-paper", &base, &[]));
    check_sums(&log, "interrupts");
    let hp = &r["device"]["latency_breakdown"]["read"]["host_processing"];
    let app = r["device"]["app_stats"]["read"]["latency_us"]["mean"]
        .as_f64()
        .unwrap();
    let resp = r["device"]["stats"]["read"]["latency_us"]["mean"]
        .as_f64()
        .unwrap();
    let mean = hp["mean"].as_f64().unwrap();
    assert!(
        (mean - (app - resp)).abs() < 1e-6,
        "{mean} vs {}",
        app - resp
    );
    assert!((mean - 1.6081).abs() < 0.001, "{mean}");
}

/// Off by default: no steps in the log or the result.
#[test]
fn off_by_default() {
    let base = bare(&["flow.0.requests=200"]);
    let base: Vec<&str> = base.iter().map(String::as_str).collect();
    let (r, log) = logged(&preset("mqsim-paper", &base));
    assert!(log.iter().all(|x| x.steps.is_none()));
    assert!(r["device"].get("latency_breakdown").is_none());
    assert!(r["flows"][0].get("latency_breakdown").is_none());
}

/// Recording the breakdown changes nothing else: the same configuration and seed give the
/// same results with it on and off.
#[test]
fn recording_changes_no_result() {
    let o = [
        "flow.0.queue_depth=32",
        "flow.0.read_fraction=0.5",
        "flow.0.requests=5000",
    ];
    let off = run_cfg(&preset("mqsim-paper", &o));
    let on = run_cfg(&with("mqsim-paper", &o, &[]));
    assert_eq!(off["device"]["stats"], on["device"]["stats"]);
    assert_eq!(off["device"]["ftl"], on["device"]["ftl"]);
    assert_eq!(off["device"]["flash"], on["device"]["flash"]);
    assert_eq!(off["device"]["cache"], on["device"]["cache"]);
}
