//! Program/erase suspension (`tsu.suspension`): a read that reaches a die in the array phase of
//! a long program or erase suspends it; the read pays the suspension's time, the operation
//! resumes when the read is out of the die and ends later by exactly what it waited.

mod common;
use ssdkit_core::api::{load, Source};
use ssdkit_core::config::Config;
use ssdkit_core::device::{Completion, Device};
use ssdkit_core::internals::workload::Op;

const US: u64 = 1_000_000;

use common::ONE_DIE;

/// `ONE_DIE` (tests/common) with `extra`.
fn config(extra: &[&str]) -> Config {
    let o: Vec<String> = ONE_DIE.iter().chain(extra).map(|s| s.to_string()).collect();
    load(Source::Preset("mqsim-paper"), &o).unwrap_or_else(|e| panic!("{e}"))
}

const SUSPEND: [&str; 4] = [
    "tsu.suspension=\"program\"",
    "tsu.suspend_program_us=20",
    "tsu.resume_program_us=5",
    "tsu.program_suspend_above_us=100",
];

/// A first write (page 0), then at 2 ms a write of another page; reads of page 0 at
/// `reads_us` (during the second write's program) and one more at 10 ms on an idle die.
/// Returns the completions by id (0: first write, 1: second write, then the reads) and the
/// result.
fn scenario(c: &Config, reads_us: &[u64]) -> (Vec<Completion>, serde_json::Value) {
    let mut dev = Device::new(c).unwrap();
    dev.submit(0, Op::Write, 0, 4096, 0).unwrap();
    dev.submit(2000 * US, Op::Write, 1 << 20, 4096, 0).unwrap();
    for &t in reads_us {
        dev.submit(t * US, Op::Read, 0, 4096, 0).unwrap();
    }
    dev.submit(10_000 * US, Op::Read, 0, 4096, 0).unwrap();
    dev.run_to_idle().unwrap();
    let mut done = dev.drain();
    done.sort_by_key(|c| c.id);
    (done, dev.result())
}

/// The die's part of a 4 KiB read: command/address cycles, the sense, 4 KiB over the bus.
fn read_die_ps(c: &Config) -> u64 {
    let b = &c.flash.bus;
    let us = b.read_cmd_cycles as f64 * b.cmd_addr_cycle_ns / 1000.0
        + c.flash.read_us[0]
        + 4096.0 / (b.width_bits as f64 / 8.0) / b.rate_mts;
    (us * 1e6).round() as u64
}

#[test]
fn a_read_suspends_a_program_and_the_program_ends_later_by_its_wait() {
    let base = config(&[]);
    let susp = config(&SUSPEND);
    let (b, _) = scenario(&base, &[2300]);
    let (s, r) = scenario(&susp, &[2300]);
    let idle_read = s[3].latency_ps();
    assert_eq!(idle_read, b[3].latency_ps(), "a read on an idle die");
    // The read waits only for the suspension.
    assert_eq!(s[2].latency_ps(), idle_read + 20 * US);
    // Without suspension it waits for the rest of the program (about 480 us).
    assert!(
        b[2].latency_ps() > idle_read + 400 * US,
        "{}",
        b[2].latency_ps()
    );
    // The program resumes when the read's data is out of the die, 5 us later: it ends later
    // by the suspension, the read's die time and the resume, within 1 ns (the bus time is
    // rounded to picoseconds in the simulator, not here).
    let delay = s[1].complete_ps as i64 - b[1].complete_ps as i64;
    let want = (20 * US + read_die_ps(&susp) + 5 * US) as i64;
    assert!(
        (delay - want).abs() <= 1000,
        "delay {delay} ps, want {want} ps"
    );
    let st = &r["device"]["suspension"];
    assert_eq!(st["program_suspensions"], 1);
    assert_eq!(st["erase_suspensions"], 0);
    let suspended_us = st["suspended_us"].as_f64().unwrap();
    assert!(
        (suspended_us - want as f64 / 1e6).abs() < 1e-3,
        "{suspended_us}"
    );
    println!(
        "read at 2.3 ms: {:.3} us without suspension, {:.3} us with (idle read {:.3} us); program delayed {:.3} us",
        b[2].latency_ps() as f64 / 1e6,
        s[2].latency_ps() as f64 / 1e6,
        idle_read as f64 / 1e6,
        delay as f64 / 1e6
    );
}

#[test]
fn suspensions_per_operation_are_capped() {
    // Two reads during one program: with one suspension allowed the second waits for the
    // program; with two it suspends it again.
    let (one, r1) = scenario(&config(&SUSPEND), &[2300, 2500]);
    let mut two_o = SUSPEND.to_vec();
    two_o.push("tsu.max_suspensions=2");
    let (two, r2) = scenario(&config(&two_o), &[2300, 2500]);
    assert_eq!(r1["device"]["suspension"]["program_suspensions"], 1);
    assert_eq!(r2["device"]["suspension"]["program_suspensions"], 2);
    let idle = one[4].latency_ps();
    assert_eq!(two[3].latency_ps(), idle + 20 * US);
    assert!(one[3].latency_ps() > idle + 100 * US);
}

#[test]
fn nothing_suspends_below_the_threshold_or_outside_the_array_phase() {
    // 700 us above: the program never has that much left once a read arrives at 2.3 ms.
    let mut o = SUSPEND.to_vec();
    o[3] = "tsu.program_suspend_above_us=700";
    let (s, r) = scenario(&config(&o), &[2300]);
    let (b, _) = scenario(&config(&[]), &[2300]);
    assert_eq!(r["device"]["suspension"]["program_suspensions"], 0);
    assert_eq!(s[2].complete_ps, b[2].complete_ps);
    assert_eq!(s[1].complete_ps, b[1].complete_ps);
    // Erase suspension only: a program is not suspended.
    let (_, r) = scenario(&config(&["tsu.suspension=\"erase\""]), &[2300]);
    assert_eq!(r["device"]["suspension"]["program_suspensions"], 0);
}

/// The latency breakdown still sums for every request: the suspension is the read's die-queue
/// wait and part of the suspended program's array time.
#[test]
fn breakdown_sums_with_suspensions() {
    let mut o = SUSPEND.to_vec();
    o.push("run.latency_breakdown=true");
    let (s, _) = scenario(&config(&o), &[2300, 2500]);
    assert_eq!(s.len(), 5);
}

/// Results without suspension carry no suspension object.
#[test]
fn no_suspension_object_when_off() {
    let (_, r) = scenario(&config(&[]), &[]);
    assert!(r["device"].get("suspension").is_none());
}

#[test]
fn bad_suspension_settings_are_refused() {
    let err = |o: &[&str]| {
        let o: Vec<String> = o.iter().map(|s| s.to_string()).collect();
        load(Source::Preset("mqsim-paper"), &o)
            .expect_err("refused")
            .to_string()
    };
    let e = err(&["tsu.suspension=\"program\"", "tsu.suspend_program_us=200"]);
    assert!(
        e.contains("key `tsu.program_suspend_above_us` = 100")
            && e.contains("below `tsu.suspend_program_us` = 200"),
        "{e}"
    );
    let e = err(&["tsu.suspend_erase_us=10"]);
    assert!(
        e.contains("key `tsu.suspend_erase_us` = 10")
            && e.contains("\"erase\" or \"program_erase\""),
        "{e}"
    );
    let e = err(&["tsu.suspension=\"read\""]);
    assert!(
        e.contains("tsu.suspension") && e.contains("program_erase"),
        "{e}"
    );
    let e = err(&["tsu.suspension=\"program\"", "tsu.max_suspensions=0"]);
    assert!(e.contains("key `tsu.max_suspensions` = 0"), "{e}");
    let e = err(&["tsu.policy=\"lottery\""]);
    assert!(e.contains("tsu.policy") && e.contains("fifo"), "{e}");
    let e = err(&["ftl.user_order=\"arrival\""]);
    assert!(e.contains("moved to `tsu.policy`"), "{e}");
}

/// The MQSim paper's setting for suspension: a QD1 random-read flow beside a random-write
/// flow, on two dies of the mqsim-paper timing with room for the writes (no GC). A read that finds its die programming waits up to a program (750 us)
/// without suspension and the suspension's time (100 us) with it, so the read p99 falls by
/// about the program time minus the suspension cost.
fn reader_beside_writer(extra: &[&str]) -> serde_json::Value {
    let mut o: Vec<String> = common::TINY.iter().map(|s| s.to_string()).collect();
    o.extend(
        [
            // 512 MiB raw, the first half written: the writes below need no GC.
            "flash.blocks_per_plane=512",
            "precondition.mode=\"sequential\"",
            "precondition.occupancy=0.5",
            "flow.0.queue_depth=1",
            "flow.0.read_fraction=1.0",
            "flow.0.range_bytes=134217728",
            "flow.0.requests=4000",
            "flow.1.queue_depth=4",
            "flow.1.read_fraction=0.0",
            "flow.1.start_bytes=268435456",
            "flow.1.range_bytes=134217728",
            "flow.1.requests=4000",
        ]
        .map(String::from),
    );
    o.extend(extra.iter().map(|s| s.to_string()));
    let c = load(Source::Preset("mqsim-paper"), &o).unwrap_or_else(|e| panic!("{e}"));
    common::run_cfg(&c)
}

fn p99_us(r: &serde_json::Value) -> f64 {
    r["flows"][0]["stats"]["read"]["latency_us"]["p99"]
        .as_f64()
        .unwrap()
}

#[test]
fn program_suspension_cuts_the_read_tail_by_the_program_time_less_the_cost() {
    let off = reader_beside_writer(&[]);
    // As MQSim (no cap): every read that finds a long enough program suspends it.
    let on = reader_beside_writer(&["tsu.suspension=\"program\"", "tsu.max_suspensions=255"]);
    let (p_off, p_on) = (p99_us(&off), p99_us(&on));
    let s = &on["device"]["suspension"];
    let fall = p_off - p_on;
    println!(
        "read p99: {p_off:.1} us without suspension, {p_on:.1} us with program suspension ({} suspensions); fall {fall:.1} us (program 750 - cost 100 = 650)",
        s["program_suspensions"]
    );
    assert!(s["program_suspensions"].as_u64().unwrap() > 1000);
    assert!(
        (0.85 * 650.0..=1.15 * 650.0).contains(&fall),
        "the p99 fell by {fall:.1} us"
    );
    // One suspension per program: the reads after the first wait for the rest of it.
    let once = reader_beside_writer(&["tsu.suspension=\"program\""]);
    assert!(p99_us(&once) > p_on + 300.0, "{} {p_on}", p99_us(&once));
}

/// Under GC (the 64 MiB device of tests/common after a fast preconditioning, writes at QD4),
/// reads also suspend GC's erases (3.8 ms, 700 us to suspend).
#[test]
fn reads_suspend_gc_erases() {
    let run = |mode: &str| {
        let mut o: Vec<String> = common::TINY.iter().map(|s| s.to_string()).collect();
        o.extend(
            [
                "precondition.mode=\"fast\"",
                "flow.0.queue_depth=1",
                "flow.0.read_fraction=1.0",
                "flow.0.requests=3000",
                "flow.1.queue_depth=4",
                "flow.1.read_fraction=0.0",
                "flow.1.requests=6000",
                "tsu.max_suspensions=255",
            ]
            .map(String::from),
        );
        o.push(format!("tsu.suspension=\"{mode}\""));
        let c = load(Source::Preset("mqsim-paper"), &o).unwrap_or_else(|e| panic!("{e}"));
        common::run_cfg(&c)
    };
    let p = run("program");
    let pe = run("program_erase");
    let erases = pe["device"]["suspension"]["erase_suspensions"]
        .as_u64()
        .unwrap();
    let mean = |r: &serde_json::Value| {
        r["flows"][0]["stats"]["read"]["latency_us"]["mean"]
            .as_f64()
            .unwrap()
    };
    println!(
        "GC: {} block erases, {erases} suspended by reads; read mean {:.4} us -> {:.4} us",
        pe["device"]["flash"]["block_erases"],
        mean(&p),
        mean(&pe)
    );
    assert!(erases > 0);
    assert_eq!(p["device"]["suspension"]["erase_suspensions"], 0);
}
