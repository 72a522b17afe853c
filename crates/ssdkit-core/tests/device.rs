//! The step-by-step `Device`: a request stream submitted one request at a time completes at
//! the same picoseconds as the same stream replayed as a trace by the batch run; bad
//! submissions are errors that say what is wrong.

use ssdkit_core::api::{load, run, Source};
use ssdkit_core::device::Device;
use ssdkit_core::internals::workload::Op;
use ssdkit_core::Error;

const DEVICE: &str = r#"
[interface]
io_queue_depth = 8
[ftl]
spare_factor = 0.2
[flash]
channels = 2
chips_per_channel = 2
dies_per_chip = 1
planes_per_die = 2
blocks_per_plane = 64
pages_per_block = 32
page_size_bytes = 4096
[[flow]]
"#;

/// A request of the stream: arrival ns, op, start sector, sectors.
type Req = (u64, Op, u64, u32);

/// Bursts (many requests within a few ns, so the 8-entry submission queue fills and requests
/// wait in the host) and gaps, reads and writes of 1 to 64 sectors over the whole device.
fn stream(n: usize, sectors_total: u64) -> Vec<Req> {
    let mut x: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mut t = 0u64;
    (0..n)
        .map(|_| {
            t += match next() % 10 {
                0..=5 => next() % 3,
                6..=8 => next() % 20_000,
                _ => next() % 400_000,
            };
            let sectors = 1 + (next() % 64) as u32;
            let start = next() % (sectors_total - sectors as u64);
            let op = if next() % 3 == 0 { Op::Write } else { Op::Read };
            (t, op, start, sectors)
        })
        .collect()
}

fn config(extra: &[String]) -> ssdkit_core::config::Config {
    load(
        Source::Toml {
            text: DEVICE,
            origin: "test",
        },
        extra,
    )
    .unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn stepped_stream_equals_trace_replay() {
    let c = config(&[]);
    let mut dev = Device::new(&c).unwrap();
    let reqs = stream(4000, dev.capacity_bytes() / 512);
    for (i, &(t, op, start, sectors)) in reqs.iter().enumerate() {
        let id = dev
            .submit(t * 1000, op, start * 512, sectors as u64 * 512, 0)
            .unwrap();
        assert_eq!(id, i as u64);
    }
    dev.run_to_idle().unwrap();
    let mut stepped = dev.drain();
    assert_eq!(stepped.len(), reqs.len());
    assert!(
        dev.drain().is_empty(),
        "a drain returns each completion once"
    );

    let dir = tempfile_dir();
    let path = dir.join("stream.trace");
    let text: String = reqs
        .iter()
        .map(|&(t, op, start, sectors)| {
            format!("{t} 0 {start} {sectors} {}\n", u8::from(op == Op::Read))
        })
        .collect();
    std::fs::write(&path, text).unwrap();
    let c2 = config(&[
        format!("flow.0.trace={:?}", path.display().to_string()),
        "flow.0.trace_format=mqsim".into(),
    ]);
    let replayed = run(&c2, false, true).unwrap().log.unwrap();
    assert_eq!(replayed.len(), reqs.len());
    stepped.sort_by_key(|r| r.id);
    let mut replayed = replayed;
    replayed.sort_by_key(|r| r.id);
    let mut waited = 0;
    for (a, b) in stepped.iter().zip(&replayed) {
        assert_eq!(a, b, "request {} stepped vs replayed", a.id);
        let (t, op, start, sectors) = reqs[a.id as usize];
        assert_eq!(
            (a.submit_ps, a.op, a.offset_bytes, a.bytes),
            (t * 1000, op, start * 512, sectors as u64 * 512)
        );
        waited += u64::from(a.complete_ps - a.submit_ps > 1_000_000_000);
    }
    // The stream does what it is meant to: some requests waited behind full queues.
    assert!(
        waited > 0,
        "no request waited more than 1 ms: the bursts did not fill the queue"
    );
    std::fs::remove_dir_all(dir).ok();
}

fn tempfile_dir() -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("ssdkit-device-test-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn run_until_and_drain_step_through_time() {
    let c = config(&[]);
    let mut dev = Device::new(&c).unwrap();
    let id = dev.submit(1_000_000, Op::Read, 0, 4096, 0).unwrap();
    assert_eq!(dev.now_ps(), 1_000_000);
    dev.run_until(1_000_001).unwrap();
    assert!(
        dev.drain().is_empty(),
        "a read takes longer than a picosecond"
    );
    assert_eq!(dev.outstanding(), 1);
    dev.run_until(10_000_000_000).unwrap();
    assert_eq!(dev.now_ps(), 10_000_000_000);
    let done = dev.drain();
    assert_eq!(done.len(), 1);
    assert_eq!((done[0].id, done[0].submit_ps), (id, 1_000_000));
    assert!(done[0].complete_ps > done[0].submit_ps && done[0].complete_ps <= 10_000_000_000);
    assert_eq!(dev.outstanding(), 0);
    // A flush costs its command path only, and is counted apart in the result.
    dev.submit(dev.now_ps(), Op::Flush, 0, 0, 0).unwrap();
    dev.run_to_idle().unwrap();
    let f = dev.drain();
    assert_eq!((f.len(), f[0].op, f[0].bytes), (1, Op::Flush, 0));
    let r = dev.result();
    assert_eq!(
        r["device"]["stats"]["flush"]["count"], 1,
        "{}",
        r["device"]["stats"]
    );
    assert_eq!(r["device"]["stats"]["read"]["count"], 1);
}

#[test]
fn bad_submissions_are_errors_that_say_why() {
    let c = config(&["flow.1.queue_depth=1".into()]);
    let mut dev = Device::new(&c).unwrap();
    let cap = dev.capacity_bytes();
    dev.submit(5_000, Op::Write, 0, 4096, 1).unwrap();
    let cases: Vec<(u64, Op, u64, u64, u32, &str)> = vec![
        (
            4_999,
            Op::Read,
            0,
            4096,
            0,
            "before the device's current time",
        ),
        (
            6_000,
            Op::Read,
            100,
            4096,
            0,
            "multiples of the 512-byte sector",
        ),
        (
            6_000,
            Op::Read,
            0,
            1000,
            0,
            "multiples of the 512-byte sector",
        ),
        (6_000, Op::Read, 0, 0, 0, "outside 512..="),
        (
            6_000,
            Op::Read,
            cap - 512,
            1024,
            0,
            "past the device's logical capacity",
        ),
        (
            6_000,
            Op::Read,
            u64::MAX - 511,
            1024,
            0,
            "past the device's logical capacity",
        ),
        (6_000, Op::Read, 0, 4096, 2, "queue 2 does not exist"),
        (6_000, Op::Flush, 0, 4096, 0, "a flush takes no range"),
    ];
    for (t, op, off, bytes, q, want) in cases {
        match dev.submit(t, op, off, bytes, q) {
            Err(Error::Request(m)) => assert!(m.contains(want), "{m:?} lacks {want:?}"),
            other => panic!("{t} {op:?} {off} {bytes} {q}: {other:?}"),
        }
    }
    // Refused submissions changed nothing.
    assert_eq!(dev.outstanding(), 1);
    dev.run_to_idle().unwrap();
    assert_eq!(dev.drain().len(), 1);
}

/// A driver that sleeps until the next event and runs to it sees every completion at its
/// own picosecond: stepping event by event ends where `run_to_idle` ends, and an idle device
/// has nothing pending.
#[test]
fn next_event_steps_event_by_event_to_the_same_completions() {
    let c = config(&[]);
    let reqs = stream(300, Device::new(&c).unwrap().capacity_bytes() / 512);
    let mut a = Device::new(&c).unwrap();
    for &(t, op, start, sectors) in &reqs {
        a.submit(t * 1000, op, start * 512, sectors as u64 * 512, 0)
            .unwrap();
    }
    a.run_to_idle().unwrap();
    let whole = a.drain();

    // The driver of a wall-clock server: before each arrival, run event by event up to it.
    let mut b = Device::new(&c).unwrap();
    let mut stepped = Vec::new();
    let mut steps = 0u64;
    let mut step = |b: &mut Device, before: u64| {
        while let Some(t) = b.next_event_ps().filter(|&t| t < before) {
            assert!(t >= b.now_ps(), "the next event at {t} ps is in the past");
            b.run_until(t).unwrap();
            assert_eq!(b.now_ps(), t);
            for r in b.drain() {
                // Each completion is seen when the event that makes it is processed.
                assert_eq!(r.complete_ps, t, "request {} drained late", r.id);
                stepped.push(r);
            }
            steps += 1;
        }
    };
    for &(t, op, start, sectors) in &reqs {
        step(&mut b, t * 1000);
        b.submit(t * 1000, op, start * 512, sectors as u64 * 512, 0)
            .unwrap();
    }
    step(&mut b, u64::MAX);
    assert_eq!(b.outstanding(), 0);
    assert_eq!(stepped, whole);
    assert!(
        steps > reqs.len() as u64,
        "{steps} steps for {} requests: each request takes several events",
        reqs.len()
    );
    assert_eq!(Device::new(&c).unwrap().next_event_ps(), None);
}

/// Queue pairs added for a host that opens them as it goes are copies of the last flow:
/// each takes submissions, and the result reports each.
#[test]
fn widened_config_gives_more_queue_pairs() {
    let c = config(&[]);
    let w = Device::widened(&c, 4).unwrap();
    assert_eq!(w.flows.len(), 4);
    assert_eq!(w.flows[3].name, "queue3");
    let mut dev = Device::new(&w).unwrap();
    assert_eq!(dev.queues(), 4);
    for q in 0..4u32 {
        dev.submit(0, Op::Write, q as u64 * 65536, 4096, q).unwrap();
    }
    dev.run_to_idle().unwrap();
    let done = dev.drain();
    let mut queues: Vec<u32> = done.iter().map(|r| r.flow).collect();
    queues.sort();
    assert_eq!(queues, vec![0, 1, 2, 3]);
    let r = dev.result();
    assert_eq!(r["flows"].as_array().unwrap().len(), 4, "{}", r["flows"]);
    // The same device: capacity and preconditioning do not depend on the queue count.
    assert_eq!(
        dev.capacity_bytes(),
        Device::new(&c).unwrap().capacity_bytes()
    );
    for (n, why) in [(0, "0 queue pairs"), (70000, "70000 queue pairs")] {
        let e = Device::widened(&c, n).unwrap_err().to_string();
        assert!(e.contains(why) && e.contains("1..=65535"), "{e}");
    }
    // Per-flow shares given for the configured flows do not cover the added ones.
    let shared = config(&[
        "cache.mode=\"write\"".into(),
        "cache.capacity_bytes=1048576".into(),
        "cache.sharing=\"per_flow\"".into(),
        "cache.shares=[1.0]".into(),
    ]);
    let e = Device::widened(&shared, 2).unwrap_err().to_string();
    assert!(
        e.contains("with 2 queue pairs") && e.contains("cache.shares"),
        "{e}"
    );
}
