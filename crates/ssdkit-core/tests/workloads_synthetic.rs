//! Synthetic flows against their targets: open-loop arrival rates within 1 %, Zipf and hot/cold
//! address streams and size distributions against their distributions (chi-square and
//! binomial tests at significance 0.001), overload shows as latency, pinning and stop rules.

use serde_json::Value;
use ssdkit_core::api::run_keep_state;
use ssdkit_core::config::Config;
use ssdkit_core::internals::sim::CompletionRecord;

/// A small device (4 planes, 4 KiB pages, 512 KiB blocks) so runs are quick, with `flows`
/// appended as TOML.
fn load(flows: &str) -> Result<Config, ssdkit_core::error::Error> {
    let text = format!(
        r#"
[flash]
channels = 2
chips_per_channel = 1
dies_per_chip = 1
planes_per_die = 2
blocks_per_plane = 256
pages_per_block = 128
page_size_bytes = 4096
{flows}
"#
    );
    Config::load(&text, "test", &[])
}

fn cfg(flows: &str) -> Config {
    load(flows).unwrap_or_else(|e| panic!("{e}"))
}

fn run_log(c: &Config) -> (Value, Vec<CompletionRecord>) {
    let (out, _) = run_keep_state(c, true).unwrap_or_else(|e| panic!("{e}"));
    (out.result, out.log.expect("log kept"))
}

/// Upper 0.001 critical value of chi-square with `df` degrees of freedom (Wilson-Hilferty;
/// within 0.5 % of the exact quantile for df >= 10).
fn chi2_crit_001(df: f64) -> f64 {
    let z = 3.090_232; // standard normal 0.999 quantile
    let a = 2.0 / (9.0 * df);
    df * (1.0 - a + z * a.sqrt()).powi(3)
}

/// Pearson chi-square of `observed` counts against `expected` probabilities, merging
/// neighbouring bins until each expects at least 5; returns (statistic, degrees of freedom).
fn chi_square(observed: &[u64], probs: &[f64]) -> (f64, f64) {
    let n: u64 = observed.iter().sum();
    let (mut stat, mut bins) = (0.0, 0usize);
    let (mut o, mut e) = (0.0, 0.0);
    for (i, (&ob, &p)) in observed.iter().zip(probs).enumerate() {
        o += ob as f64;
        e += p * n as f64;
        if e >= 5.0 || i == observed.len() - 1 {
            stat += (o - e) * (o - e) / e;
            bins += 1;
            o = 0.0;
            e = 0.0;
        }
    }
    (stat, (bins - 1) as f64)
}

fn rate_case(arrival: &str, extra: &str, rate: f64, expected: f64, requests: u64) {
    let c = cfg(&format!(
        r#"
[[flow]]
arrival = "{arrival}"
rate_iops = {rate}
{extra}
requests = {requests}
"#
    ));
    let (r, _) = run_log(&c);
    let f = &r["flows"][0];
    assert_eq!(
        f["completed"].as_u64(),
        Some(requests),
        "{arrival}: every request completes"
    );
    let got = f["arrival_rate_iops"].as_f64().unwrap();
    let e = (got - expected).abs() / expected;
    println!(
        "{arrival}: arrival rate {got:.1} vs {expected:.1} IOPS ({:.3} %)",
        e * 100.0
    );
    assert!(
        e < 0.01,
        "{arrival}: arrival rate {got} vs {expected} (limit 1 %)"
    );
    // The device absorbs this load, so it completes at the offered rate too.
    let done = requests as f64 / r["simulated_time_s"].as_f64().unwrap();
    let e = (done - expected).abs() / expected;
    assert!(e < 0.01, "{arrival}: completion rate {done} vs {expected}");
}

#[test]
fn open_loop_rates_within_one_percent() {
    // Statistical error of the exponential and uniform cases at 200k arrivals is about
    // 0.22 % (one sigma); on/off averages over 80k ON/OFF cycles (0.25 % one sigma).
    rate_case("fixed", "", 20_000.0, 20_000.0, 50_000);
    rate_case("uniform", "", 20_000.0, 20_000.0, 200_000);
    rate_case("exponential", "", 20_000.0, 20_000.0, 200_000);
    rate_case(
        "onoff",
        "on_ms = 0.1\noff_ms = 0.1",
        40_000.0,
        20_000.0,
        400_000,
    );
}

#[test]
fn overload_shows_in_latency_not_in_lost_requests() {
    // 4 KiB random writes on 4 planes with 750 us... this device programs far fewer than
    // 200k pages/s: the open-loop flow outruns it.
    let c = cfg(r#"
[precondition]
mode = "empty"
[[flow]]
arrival = "fixed"
rate_iops = 200000
read_fraction = 0
requests = 20000
"#);
    let (r, log) = run_log(&c);
    assert_eq!(r["flows"][0]["completed"].as_u64(), Some(20_000));
    let lat = |recs: &[CompletionRecord]| {
        recs.iter()
            .map(|x| (x.complete_ps - x.submit_ps) as f64)
            .sum::<f64>()
            / recs.len() as f64
    };
    let mut by_submit = log.clone();
    by_submit.sort_by_key(|x| x.submit_ps);
    let first = lat(&by_submit[..2000]);
    let last = lat(&by_submit[18_000..]);
    assert!(
        last > 5.0 * first,
        "latency should grow as the backlog grows: first 10 % {first} ps, last 10 % {last} ps"
    );
    // Arrivals keep their schedule even while the submission queue is full.
    let rate = r["flows"][0]["arrival_rate_iops"].as_f64().unwrap();
    assert!((rate - 200_000.0).abs() / 200_000.0 < 1e-3, "{rate}");
}

/// Exact Zipf probabilities over n ranks.
fn zipf_probs(n: usize, theta: f64) -> Vec<f64> {
    let w: Vec<f64> = (1..=n).map(|k| (k as f64).powf(-theta)).collect();
    let s: f64 = w.iter().sum();
    w.into_iter().map(|x| x / s).collect()
}

#[test]
fn zipf_addresses_follow_zipf() {
    for theta in [0.8, 1.2] {
        // 1000 slots of 4 KiB at the start of the device.
        let c = cfg(&format!(
            r#"
[[flow]]
queue_depth = 16
pattern = "zipf"
zipf_theta = {theta}
range_bytes = 4096000
requests = 200000
"#
        ));
        let (_, log) = run_log(&c);
        let mut counts = vec![0u64; 1000];
        for x in &log {
            counts[((x.offset_bytes / 512) / 8) as usize] += 1;
        }
        let (stat, df) = chi_square(&counts, &zipf_probs(1000, theta));
        let crit = chi2_crit_001(df);
        println!("zipf theta {theta}: chi2 {stat:.1}, df {df}, critical (0.001) {crit:.1}");
        assert!(
            stat < crit,
            "zipf theta {theta}: chi2 {stat} >= {crit} (df {df})"
        );
        // A wrong exponent must fail the same test (the test has power).
        let (wrong, _) = chi_square(&counts, &zipf_probs(1000, theta + 0.05));
        assert!(
            wrong > crit,
            "theta {theta}: test cannot tell theta+0.05 ({wrong})"
        );
    }
}

#[test]
fn scrambled_zipf_has_the_same_rank_frequencies() {
    let c = cfg(r#"
[[flow]]
queue_depth = 16
pattern = "zipf"
zipf_theta = 1.0
scramble = true
range_bytes = 4096000
requests = 200000
"#);
    let (_, log) = run_log(&c);
    let mut counts = vec![0u64; 1000];
    for x in &log {
        counts[((x.offset_bytes / 512) / 8) as usize] += 1;
    }
    // The most popular slot is not slot 0 any more...
    let top = (0..1000).max_by_key(|&i| counts[i]).unwrap();
    assert_ne!(top, 0);
    // ...but sorted by popularity the counts follow the same law.
    counts.sort_unstable_by(|a, b| b.cmp(a));
    let (stat, df) = chi_square(&counts, &zipf_probs(1000, 1.0));
    // Sorting observed counts biases the head slightly upward; the 0.001 bound still holds
    // with a margin for this sample size.
    assert!(stat < chi2_crit_001(df) * 1.5, "chi2 {stat} df {df}");
}

#[test]
fn hot_cold_split_and_uniformity() {
    // 20 % of the space gets 80 % of the requests.
    let c = cfg(r#"
[[flow]]
queue_depth = 16
pattern = "hotcold"
hot_space_fraction = 0.2
hot_access_fraction = 0.8
range_bytes = 40960000
requests = 100000
"#);
    let (_, log) = run_log(&c);
    let n = log.len() as f64;
    let slots = 10_000u64;
    let hot_slots = 2_000u64;
    let hot = log
        .iter()
        .filter(|x| (x.offset_bytes / 512) / 8 < hot_slots)
        .count() as f64;
    // Binomial z-test, two-sided at 0.001 (|z| < 3.29).
    let z = (hot - 0.8 * n) / (n * 0.8 * 0.2).sqrt();
    println!("hot/cold: {:.4} of requests hot, z = {z:.2}", hot / n);
    assert!(z.abs() < 3.29, "hot fraction {} (z = {z})", hot / n);
    // Inside each part addresses are uniform: chi-square over 20 equal bins per part.
    for (lo, hi) in [(0, hot_slots), (hot_slots, slots)] {
        let w = (hi - lo) / 20;
        let mut bins = vec![0u64; 20];
        for x in log
            .iter()
            .map(|x| (x.offset_bytes / 512) / 8)
            .filter(|&s| s >= lo && s < hi)
        {
            bins[((x - lo) / w) as usize] += 1;
        }
        let (stat, df) = chi_square(&bins, &[0.05; 20]);
        assert!(stat < chi2_crit_001(df), "part {lo}..{hi}: chi2 {stat}");
    }
}

#[test]
fn size_distributions() {
    let c = cfg(r#"
[[flow]]
queue_depth = 8
size = "list"
size_list = [{ bytes = 4096, weight = 3 }, { bytes = 16384, weight = 1 }, { bytes = 65536, weight = 1 }]
requests = 50000
"#);
    let (_, log) = run_log(&c);
    let mut counts = [0u64; 3];
    for x in &log {
        let i = match x.bytes / 512 {
            8 => 0,
            32 => 1,
            128 => 2,
            s => panic!("size {s} sectors not in the list"),
        };
        counts[i] += 1;
        // Variable sizes align to 4 KiB by default.
        assert_eq!((x.offset_bytes / 512) % 8, 0);
    }
    let (stat, df) = chi_square(&counts, &[0.6, 0.2, 0.2]);
    assert!(stat < 13.82 && df == 2.0, "list sizes chi2 {stat}"); // chi2(2) 0.001 quantile

    let c = cfg(r#"
[[flow]]
queue_depth = 8
size = "normal"
request_bytes = 32768
size_stdev_bytes = 8192
requests = 50000
"#);
    let (_, log) = run_log(&c);
    let xs: Vec<f64> = log.iter().map(|x| (x.bytes / 512) as f64 * 512.0).collect();
    let m = xs.iter().sum::<f64>() / xs.len() as f64;
    let sd = (xs.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / xs.len() as f64).sqrt();
    // Standard errors: 8192/sqrt(50000) = 37 B for the mean; sd within 2 %.
    assert!((m - 32768.0).abs() < 4.0 * 37.0, "normal mean {m}");
    assert!((sd - 8192.0).abs() / 8192.0 < 0.02, "normal sd {sd}");

    let c = cfg(r#"
[[flow]]
queue_depth = 8
size = "uniform"
size_min_bytes = 4096
size_max_bytes = 8192
requests = 9000
"#);
    let (_, log) = run_log(&c);
    let mut counts = [0u64; 9];
    for x in &log {
        counts[((x.bytes / 512) - 8) as usize] += 1;
    }
    let (stat, _) = chi_square(&counts, &[1.0 / 9.0; 9]);
    assert!(stat < 26.12, "uniform sizes chi2 {stat}"); // chi2(8) 0.001 quantile
}

#[test]
fn sequential_stride_and_stop_rules() {
    let c = cfg(r#"
[[flow]]
queue_depth = 1
pattern = "sequential"
request_bytes = 4096
stride_bytes = 16384
start_bytes = 1048576
io_bytes = 409600
start_ms = 2.5
"#);
    let (r, log) = run_log(&c);
    // io_bytes: 100 requests of 4 KiB.
    assert_eq!(r["flows"][0]["completed"].as_u64(), Some(100));
    for (i, x) in log.iter().enumerate() {
        assert_eq!((x.offset_bytes / 512), 2048 + 32 * i as u64);
    }
    assert_eq!(log[0].submit_ps, 2_500_000_000, "start_ms");

    // duration_ms stops an open-loop flow: 10 ms at 10k IOPS is 100 arrivals.
    let c = cfg(r#"
[[flow]]
arrival = "fixed"
rate_iops = 10000
duration_ms = 10
requests = 0
"#);
    let (r, _) = run_log(&c);
    assert_eq!(r["flows"][0]["completed"].as_u64(), Some(100));
}

/// `first_offset_bytes` begins a sequential run inside its range (MQSim's STREAMING flows
/// begin at a drawn address); the run wraps to the range's start where the next request would
/// pass its end, then goes on from there.
#[test]
fn sequential_first_offset_begins_inside_the_range_and_wraps() {
    let c = cfg(r#"
[[flow]]
queue_depth = 1
pattern = "sequential"
request_bytes = 8192
start_bytes = 1048576
range_bytes = 65536
first_offset_bytes = 40960
requests = 12
"#);
    let (_, log) = run_log(&c);
    let starts: Vec<u64> = log
        .iter()
        .map(|x| (x.offset_bytes - 1_048_576) / 1024)
        .collect();
    // 40, 48, 56 KiB; 64 KiB would pass the 64 KiB range: back to 0, then on by 8 KiB.
    assert_eq!(starts, [40, 48, 56, 0, 8, 16, 24, 32, 40, 48, 56, 0]);
    // A first request that would pass the range's end begins at its start, as MQSim's.
    let c = cfg(r#"
[[flow]]
queue_depth = 1
pattern = "sequential"
request_bytes = 8192
range_bytes = 65536
first_offset_bytes = 61440
requests = 3
"#);
    let (_, log) = run_log(&c);
    let starts: Vec<u64> = log.iter().map(|x| x.offset_bytes / 1024).collect();
    assert_eq!(starts, [0, 8, 16]);

    let bad = |flow: &str| match load(&format!("[[flow]]\n{flow}")) {
        Ok(_) => panic!("accepted: {flow}"),
        Err(e) => e.to_string(),
    };
    let e = bad("pattern = \"sequential\"\nrange_bytes = 65536\nfirst_offset_bytes = 65536");
    assert!(
        e.contains("flow.0.first_offset_bytes") && e.contains("allowed 0..65536"),
        "{e}"
    );
    let e = bad("pattern = \"random\"\nfirst_offset_bytes = 4096");
    assert!(
        e.contains("first_offset_bytes") && e.contains("does not apply to this `pattern`"),
        "{e}"
    );
    let e = bad("pattern = \"sequential\"\nfirst_offset_bytes = 1000");
    assert!(e.contains("first_offset_bytes") && e.contains("512"), "{e}");
}

#[test]
fn pinned_flow_writes_only_to_its_planes() {
    let c = cfg(r#"
[precondition]
mode = "empty"
[[flow]]
queue_depth = 8
read_fraction = 0
channels = [1]
planes = [0]
range_bytes = 61440000
requests = 2000
"#);
    let (out, sim) = run_keep_state(&c, false).unwrap();
    assert_eq!(out.result["flows"][0]["completed"].as_u64(), Some(2000));
    let geo = ssdkit_core::internals::flash::Geometry::from_config(&c);
    let allowed = geo.plane_id(1, 0, 0, 0);
    let mut mapped = 0;
    for &ppa in sim
        .ftl
        .l2p_table()
        .iter()
        .filter(|&&p| p != ssdkit_core::internals::ftl::NONE)
    {
        assert_eq!(geo.plane_of_ppa(ppa), allowed);
        mapped += 1;
    }
    assert!(mapped > 1000);
}

/// Preconditioning with pinned flows, every mode that fills the device: each pinned flow's
/// range lies in its own planes, the rest stripes over all; the FTL's invariants hold and the
/// flows then run. Fast and write preconditioning bring the pinned ranges (random writers)
/// to their GC steady state inside their planes.
#[test]
fn preconditioning_places_pinned_ranges_in_their_planes() {
    for (mode, occupancy) in [("sequential", 0.6), ("fast", 1.0), ("write", 1.0)] {
        let c = cfg(&format!(
            r#"
[precondition]
mode = "{mode}"
occupancy = {occupancy}
[[flow]]
queue_depth = 4
read_fraction = 0.5
channels = [0]
range_bytes = 20480000
requests = 2000
[[flow]]
queue_depth = 4
read_fraction = 0.5
channels = [1]
start_bytes = 20480000
range_bytes = 20480000
requests = 2000
"#
        ));
        let sim = ssdkit_core::internals::sim::Simulator::new(&c).unwrap();
        sim.ftl.check_invariants().unwrap();
        let geo = ssdkit_core::internals::flash::Geometry::from_config(&c);
        let page = c.flash.page_size_bytes as u64;
        let l2p = sim.ftl.l2p_table();
        let channel_of = |ppa: u32| geo.channel_of_die(geo.plane_of_ppa(ppa) / geo.planes_per_die);
        let mut others = [0u64; 2];
        for (lpn, &ppa) in l2p.iter().enumerate() {
            if ppa == ssdkit_core::internals::ftl::NONE {
                continue;
            }
            let at = lpn as u64 * page;
            if at < 20480000 {
                assert_eq!(channel_of(ppa), 0, "{mode}: lpn {lpn}");
            } else if at < 40960000 {
                assert_eq!(channel_of(ppa), 1, "{mode}: lpn {lpn}");
            } else {
                // The unpinned rest stripes over every channel (the device has two).
                others[(channel_of(ppa) > 0) as usize] += 1;
            }
        }
        assert!(others[0] > 0 && others[1] > 0, "{mode}: {others:?}");
        let mapped = l2p
            .iter()
            .filter(|&&p| p != ssdkit_core::internals::ftl::NONE)
            .count();
        assert_eq!(
            mapped as f64,
            (sim.ftl.logical_pages() as f64 * occupancy).round(),
            "{mode}"
        );
        let (out, sim) = run_keep_state(&c, false).unwrap();
        sim.ftl.check_invariants().unwrap();
        assert_eq!(
            out.result["flows"][1]["completed"].as_u64(),
            Some(2000),
            "{mode}"
        );
        assert_eq!(out.result["device"]["precondition"]["pinned_flows"], 2);
        if mode != "sequential" {
            // Random writers in a full device: GC from the first requests.
            let gc = out.result["device"]["ftl"]["gc_runs"].as_u64().unwrap();
            assert!(gc > 0, "{mode}: no GC");
        }
    }
}

/// A pinned range larger than its planes' share of the logical space is refused by every mode
/// that fills the device, naming the plane (fast preconditioning used to build such a plane
/// full, and GC then found no free block to collect into).
#[test]
fn pinned_ranges_that_overfill_their_planes_are_refused() {
    for mode in ["sequential", "fast", "write"] {
        let text = format!(
            r#"
[precondition]
mode = "{mode}"
[[flow]]
read_fraction = 1.0
channels = [0]
range_bytes = 299999744
requests = 100
[[flow]]
read_fraction = 0.0
channels = [1]
start_bytes = 299999744
range_bytes = 20480000
requests = 100
"#
        );
        let c = cfg(&text);
        let e = ssdkit_core::internals::sim::Simulator::new(&c)
            .err()
            .unwrap_or_else(|| panic!("{mode}: must be refused"))
            .to_string();
        assert!(
            e.contains("plane 0") && e.contains("share of the logical space"),
            "{mode}: {e}"
        );
    }
}

#[test]
fn bad_flow_keys_are_refused_by_name() {
    for (flow, key) in [
        ("pattern = \"zipf\"", "zipf_theta"),
        ("zipf_theta = 0.9", "zipf_theta"),
        ("arrival = \"exponential\"", "rate_iops"),
        ("rate_iops = 100.0", "rate_iops"),
        ("size = \"list\"", "size_list"),
        (
            "size = \"uniform\"\nsize_min_bytes = 8192\nsize_max_bytes = 4096",
            "size_max_bytes",
        ),
        ("channels = [9]", "channels"),
        ("priority = \"high\"", "priority"),
        ("time_scale = 2.0", "time_scale"),
        ("read_fraction = 0.0\nchannels = [0]", "channels"),
        (
            "pattern = \"hotcold\"\nhot_space_fraction = 1.0\nhot_access_fraction = 0.5",
            "hot_space_fraction",
        ),
        ("trace = \"x.trace\"\nread_fraction = 0.5", "read_fraction"),
        (
            "trace = \"x.trace\"\ntrace_format = \"delimited\"",
            "delimited",
        ),
    ] {
        let text = format!("[[flow]]\n{flow}\n");
        let e = Config::load(&text, "t.toml", &[]).unwrap_err().to_string();
        assert!(e.contains(&format!("flow.0.{key}")), "{flow}: {e}");
    }
}
