//! The host's side of completions (`[host]`, docs/host.md): MSI-X and the interrupt service
//! routine, Interrupt Coalescing, polling, and the completion-queue head doorbell, each
//! against a time or count computed from the configuration (NVMeSim, Choi et al., Figure 2b
//! steps 6-7 and Figure 5b).

mod common;
use common::*;
use serde_json::Value;
use ssdkit_core::config::Config;

/// QD1 4 KiB random reads on a freshly filled mqsim-paper device with a bare controller.
fn qd1_reads(extra: &[&str]) -> Config {
    let mut o = bare(&[
        "flash.blocks_per_plane=128",
        "precondition.mode=sequential",
        "flow.0.queue_depth=1",
        "flow.0.requests=400",
    ]);
    o.extend(extra.iter().map(|s| s.to_string()));
    let o: Vec<&str> = o.iter().map(String::as_str).collect();
    preset("mqsim-paper", &o)
}

/// Microseconds on the PCIe 3.0 link of `c` for a TLP of `payload` bytes.
fn tlp_us(c: &Config, payload: f64) -> f64 {
    let bytes_per_s = c.pcie.lanes as f64 * 8e9 * 128.0 / 130.0 / 8.0;
    (payload + c.pcie.packet_overhead_bytes as f64) / bytes_per_s * 1e6
}

fn app(r: &Value, op: &str) -> Value {
    r["device"]["app_stats"][op]["latency_us"].clone()
}

fn f(v: &Value, k: &str) -> f64 {
    v[k].as_f64().unwrap_or_else(|| panic!("{k} in {v}"))
}

/// Per request: the application sees a completion the host's processing after its entry is
/// in the completion queue; checks min, mean and max of the two latencies differ by `extra`.
fn assert_app_is_cq_plus(r: &Value, extra_us: f64, what: &str) {
    let cq = &r["device"]["stats"]["read"]["latency_us"];
    let a = app(r, "read");
    for k in ["min", "mean", "max"] {
        let d = f(&a, k) - f(cq, k);
        assert!(
            (d - extra_us).abs() < 1e-3,
            "{what}: {k} app {} - completion queue {} = {d} us, expected {extra_us} us",
            f(&a, k),
            f(cq, k)
        );
    }
    println!("{what}: the application sees each read {extra_us:.4} us after its completion entry");
}

#[test]
fn qd1_interrupt_adds_msi_and_isr_and_the_head_doorbell_delays_the_next_submission() {
    let c = qd1_reads(&["host.completion=interrupt"]);
    let r = run_cfg(&c);
    let h = &c.host;
    let isr = h.isr_us + h.queue_scan_us + h.completion_us;
    assert_app_is_cq_plus(
        &r,
        tlp_us(&c, 4.0) + isr,
        "QD1, an interrupt per completion",
    );
    let host = &r["device"]["host"];
    assert_eq!(host["interrupts"].as_u64(), Some(400));
    assert_eq!(host["cq_doorbells"].as_u64(), Some(400));
    // Each request after the first rings its submission doorbell just after the previous
    // one's head doorbell: it waits one doorbell on the link.
    let lat = latencies_ps(&c);
    let first = lat[0] as f64 / 1e6;
    let later = first + tlp_us(&c, 4.0);
    assert_all_equal_to(&lat[1..], later, "QD1 reads after the first");
    // The host's CPU time: every interrupt's ISR and scan and every completion's work.
    let busy: f64 = host["core_busy_us"][0].as_f64().unwrap();
    assert!(
        (busy - 400.0 * isr).abs() < 1e-6,
        "{busy} vs {}",
        400.0 * isr
    );
}

#[test]
fn qd1_polling_adds_the_poll_and_the_completion_work() {
    let c = qd1_reads(&["host.completion=polled"]);
    let r = run_cfg(&c);
    let extra = c.host.poll_us + c.host.completion_us;
    assert_app_is_cq_plus(&r, extra, "QD1, polled");
    let host = &r["device"]["host"];
    assert_eq!(host["polls"].as_u64(), Some(400));
    assert_eq!(host["interrupts"].as_u64(), Some(0));
}

#[test]
fn qd1_coalescing_waits_for_the_aggregation_time() {
    // A threshold of 2 is never met at QD1 (the next request waits for this one): every
    // interrupt goes when the aggregation time is up.
    let c = qd1_reads(&[
        "host.completion=interrupt",
        "host.coalesce_completions=2",
        "host.coalesce_time_us=50",
    ]);
    let r = run_cfg(&c);
    let h = &c.host;
    let extra = 50.0 + tlp_us(&c, 4.0) + h.isr_us + h.queue_scan_us + h.completion_us;
    assert_app_is_cq_plus(&r, extra, "QD1, threshold 2, 50 us");
    let host = &r["device"]["host"];
    assert_eq!(host["timer_interrupts"].as_u64(), Some(400));
}

#[test]
fn under_saturation_coalescing_sends_one_interrupt_per_threshold() {
    for k in [2u64, 4, 8] {
        let kk = format!("host.coalesce_completions={k}");
        let c = qd1_reads(&[
            "host.completion=interrupt",
            &kk,
            "host.coalesce_time_us=100",
            "flow.0.queue_depth=64",
            "flow.0.requests=20000",
        ]);
        let r = run_cfg(&c);
        let host = &r["device"]["host"];
        let n = host["completions"].as_u64().unwrap() as f64;
        let i = host["interrupts"].as_u64().unwrap() as f64;
        println!(
            "threshold {k}: {n} completions, {i} interrupts ({} by the timer), {:.3} per interrupt",
            host["timer_interrupts"],
            n / i
        );
        assert_eq!(n, 20000.0);
        assert!(((n / k as f64) / i - 1.0).abs() < 0.01, "{n} / {k} vs {i}");
        assert_eq!(count(&r, "read"), 20000);
        let seen = r["device"]["app_stats"]["read"]["count"].as_u64();
        assert_eq!(seen, Some(20000), "every completion is seen");
    }
}

#[test]
fn a_shared_vector_scans_every_queue_on_it() {
    // Three flows on one vector and one core: every ISR scans three completion queues.
    let c = qd1_reads(&[
        "host.completion=interrupt",
        "host.vectors=1",
        "host.cores=1",
        "flow.1.queue_depth=1",
        "flow.1.requests=400",
        "flow.2.queue_depth=1",
        "flow.2.requests=400",
    ]);
    let r = run_cfg(&c);
    let host = &r["device"]["host"];
    let h = &c.host;
    let (i, n) = (
        host["interrupts"].as_u64().unwrap() as f64,
        host["completions"].as_u64().unwrap() as f64,
    );
    assert_eq!(n, 1200.0);
    let busy = host["core_busy_us"][0].as_f64().unwrap();
    let expected = i * (h.isr_us + 3.0 * h.queue_scan_us) + n * h.completion_us;
    assert!((busy - expected).abs() < 1e-6, "{busy} vs {expected}");
    assert_eq!(host["vectors"].as_u64(), Some(1));
    assert_eq!(host["cores"].as_u64(), Some(1));
    for fl in 0..3 {
        assert_eq!(
            r["flows"][fl]["app_stats"]["read"]["count"].as_u64(),
            Some(400)
        );
    }
}

#[test]
fn without_a_host_model_the_result_is_unchanged() {
    let a = run_cfg(&qd1_reads(&[]));
    assert!(a["device"].get("host").is_none() && a["device"].get("app_stats").is_none());
    assert!(a["flows"][0].get("app_stats").is_none());
}

#[test]
fn host_memory_counts_queues_and_outstanding_buffers() {
    let c = qd1_reads(&["host.completion=polled", "flow.0.queue_depth=8"]);
    let r = run_cfg(&c);
    let mem = r["device"]["host"]["host_memory_bytes"].as_u64().unwrap();
    let queues = c.interface.io_queue_depth as u64 * (64 + 16);
    // At most 8 requests of 4 KiB held at once, and at some point all 8.
    assert_eq!(mem, queues + 8 * 4096);
}
