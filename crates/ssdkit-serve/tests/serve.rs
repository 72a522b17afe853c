//! An in-process server and a raw NBD client over a Unix socket: data round trips, replies out
//! of order, one queue pair per connection, the spec's errors, hard closes that spare the
//! other connections, and a clean stop.

use ssdkit_core::api::{load, Source};
use ssdkit_core::device::Device;
use ssdkit_serve::proto::*;
use ssdkit_serve::{Clock, Endpoint, Options, Prepared, Server};
use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;

const DEVICE: &str = r#"
[interface]
io_queue_depth = 64
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

fn options(dir: &Path, clock: Clock) -> Options {
    Options {
        endpoint: Endpoint::Unix(dir.join("nbd.sock")),
        allow_remote: false,
        clock,
        read_only: false,
        backing: None,
        durable: false,
        memory_limit: 1 << 30,
        export_name: "ssdkit".into(),
        spin_us: 50,
        keep_log: true,
    }
}

fn server(dir: &Path, clock: Clock, queues: u32) -> Server {
    let c = load(
        Source::Toml {
            text: DEVICE,
            origin: "test",
        },
        &[],
    )
    .unwrap();
    let c = Device::widened(&c, queues).unwrap();
    let dev = Device::new(&c).unwrap();
    let p = Prepared::new(options(dir, clock), dev.capacity_bytes()).unwrap();
    p.start(dev, "test device".into()).unwrap()
}

struct Client {
    s: UnixStream,
    size: u64,
}

fn read_n(s: &mut UnixStream, n: usize) -> Vec<u8> {
    let mut b = vec![0u8; n];
    s.read_exact(&mut b).unwrap();
    b
}

impl Client {
    fn connect(path: &Path) -> Client {
        let mut s = UnixStream::connect(path).unwrap();
        let g = read_n(&mut s, 18);
        assert_eq!(&g[..16], b"NBDMAGICIHAVEOPT");
        s.write_all(&3u32.to_be_bytes()).unwrap();
        let mut o = IHAVEOPT.to_be_bytes().to_vec();
        o.extend_from_slice(&OPT_GO.to_be_bytes());
        o.extend_from_slice(&6u32.to_be_bytes());
        o.extend_from_slice(&[0, 0, 0, 0, 0, 0]);
        s.write_all(&o).unwrap();
        let mut size = 0;
        loop {
            let h = read_n(&mut s, 20);
            let kind = u32::from_be_bytes(h[12..16].try_into().unwrap());
            let len = u32::from_be_bytes(h[16..20].try_into().unwrap()) as usize;
            let d = read_n(&mut s, len);
            if kind == REP_ACK {
                break;
            }
            assert_eq!(kind, REP_INFO, "{}", String::from_utf8_lossy(&d));
            if u16::from_be_bytes([d[0], d[1]]) == INFO_EXPORT {
                size = u64::from_be_bytes(d[2..10].try_into().unwrap());
            }
        }
        Client { s, size }
    }

    fn send(&mut self, kind: u16, flags: u16, cookie: u64, offset: u64, length: u32, data: &[u8]) {
        let r = Request {
            magic: REQUEST_MAGIC,
            flags,
            kind,
            cookie,
            offset,
            length,
        };
        let mut b = r.encode().to_vec();
        b.extend_from_slice(data);
        self.s.write_all(&b).unwrap();
    }

    /// (cookie, error, data of a successful read of `read_len(cookie)` bytes).
    fn reply(&mut self, read_len: &dyn Fn(u64) -> usize) -> (u64, u32, Vec<u8>) {
        let h = read_n(&mut self.s, 16);
        assert_eq!(&h[..4], &SIMPLE_REPLY_MAGIC.to_be_bytes());
        let err = u32::from_be_bytes(h[4..8].try_into().unwrap());
        let cookie = u64::from_be_bytes(h[8..16].try_into().unwrap());
        let n = if err == 0 { read_len(cookie) } else { 0 };
        (cookie, err, read_n(&mut self.s, n))
    }
}

fn pattern(n: usize, seed: u8) -> Vec<u8> {
    (0..n)
        .map(|i| (i as u8).wrapping_mul(13).wrapping_add(seed))
        .collect()
}

#[test]
fn data_round_trips_and_errors_follow_the_spec() {
    let d = tempfile::tempdir().unwrap();
    let srv = server(d.path(), Clock::Fast, 4);
    let sock = d.path().join("nbd.sock");
    let mut c = Client::connect(&sock);
    assert!(c.size > 1 << 20);
    let data = pattern(8192, 1);
    c.send(CMD_WRITE, CMDF_FUA, 1, 4096, 8192, &data);
    assert_eq!(c.reply(&|_| 0), (1, 0, vec![]));
    c.send(CMD_READ, 0, 2, 0, 16384, &[]);
    let (_, e, got) = c.reply(&|_| 16384);
    assert_eq!(e, 0);
    assert!(
        got[..4096].iter().all(|&b| b == 0),
        "never written reads as zeros"
    );
    assert_eq!(&got[4096..12288], &data[..]);
    c.send(CMD_TRIM, 0, 3, 4096, 4096, &[]);
    c.send(CMD_WRITE_ZEROES, CMDF_NO_HOLE, 4, 8192 + 512, 512, &[]);
    c.send(CMD_FLUSH, 0, 5, 0, 0, &[]);
    let mut cookies: Vec<(u64, u32)> = (0..3)
        .map(|_| c.reply(&|_| 0))
        .map(|r| (r.0, r.1))
        .collect();
    cookies.sort();
    assert_eq!(cookies, vec![(3, 0), (4, 0), (5, 0)]);
    c.send(CMD_READ, 0, 6, 4096, 8192, &[]);
    let (_, _, got) = c.reply(&|_| 8192);
    let mut want = data.clone();
    want[..4096].fill(0);
    want[4096 + 512..4096 + 1024].fill(0);
    assert!(got == want, "TRIM and WRITE_ZEROES read back as zeros");
    // The spec's errors; the connection goes on after each.
    let size = c.size;
    c.send(CMD_READ, 0, 10, 100, 512, &[]);
    c.send(CMD_READ, 0, 11, size - 512, 1024, &[]);
    c.send(CMD_WRITE, 0, 12, size - 512, 1024, &[0u8; 1024]);
    c.send(42, 0, 13, 0, 512, &[]);
    c.send(CMD_READ, 1 << 4, 14, 0, 512, &[]);
    c.send(CMD_READ, 0, 15, 0, MAX_PAYLOAD + 512, &[]);
    // An oversize write's payload is read and dropped: the stream stays in step.
    c.send(
        CMD_WRITE,
        0,
        16,
        0,
        MAX_PAYLOAD + 512,
        &vec![9u8; MAX_PAYLOAD as usize + 512],
    );
    let mut errs: Vec<(u64, u32)> = (0..7)
        .map(|_| c.reply(&|_| 0))
        .map(|r| (r.0, r.1))
        .collect();
    errs.sort();
    assert_eq!(
        errs,
        vec![
            (10, EINVAL),
            (11, EINVAL),
            (12, ENOSPC),
            (13, EINVAL),
            (14, EINVAL),
            (15, EINVAL),
            (16, EINVAL)
        ]
    );
    c.send(CMD_READ, 0, 17, 4096 * 2, 4096, &[]);
    assert!(c.reply(&|_| 4096).2 == want[4096..8192]);
    // DISC: what is outstanding is answered, then the server closes.
    c.send(CMD_READ, 0, 18, 0, 4096, &[]);
    c.send(CMD_DISC, 0, 19, 0, 0, &[]);
    assert_eq!(c.reply(&|_| 4096).0, 18);
    let mut rest = Vec::new();
    c.s.read_to_end(&mut rest).unwrap();
    assert!(rest.is_empty());
    let r: serde_json::Value = serde_json::from_str(&srv.stop().unwrap().0).unwrap();
    let em = &r["emulator"];
    assert_eq!(em["requests"], 15, "{em}");
    assert_eq!(em["errors"], 7, "{em}");
    assert_eq!(em["connections_total"], 1);
    assert!(em["connections"][0]["closed_s"].is_number());
    assert!(!sock.exists(), "the socket is removed at stop");
    // The 8 requests that passed the checks were simulated; the 7 refused were not.
    assert_eq!(r["flows"][0]["completed"], 8, "{}", r["flows"][0]);
}

#[test]
fn replies_leave_out_of_order_and_each_connection_is_a_queue_pair() {
    let d = tempfile::tempdir().unwrap();
    // The real clock: with the fast one the simulator may finish the write before the read
    // has even arrived.
    let srv = server(d.path(), Clock::Real, 3);
    let sock = d.path().join("nbd.sock");
    let mut a = Client::connect(&sock);
    // A 4 MiB write (about 100 ms simulated) then a 4 KiB read, sent together: the read
    // finishes first, and its reply comes first.
    a.send(CMD_WRITE, 0, 1, 0, 4 << 20, &vec![5u8; 4 << 20]);
    a.send(CMD_READ, 0, 2, 16 << 20, 4096, &[]);
    let len = |c: u64| if c == 2 { 4096 } else { 0 };
    assert_eq!(a.reply(&len), (2, 0, vec![0u8; 4096]));
    assert_eq!(a.reply(&len), (1, 0, vec![]));
    let mut b = Client::connect(&sock);
    let mut c = Client::connect(&sock);
    for (i, cl) in [&mut a, &mut b, &mut c].into_iter().enumerate() {
        cl.send(CMD_READ, 0, 100 + i as u64, 0, 4096, &[]);
        assert_eq!(cl.reply(&|_| 4096).2, vec![5u8; 4096]);
    }
    // Every queue pair is taken: a fourth GO is refused by policy, and the others go on.
    let mut s = UnixStream::connect(&sock).unwrap();
    read_n(&mut s, 18);
    s.write_all(&1u32.to_be_bytes()).unwrap();
    let mut o = IHAVEOPT.to_be_bytes().to_vec();
    o.extend_from_slice(&OPT_GO.to_be_bytes());
    o.extend_from_slice(&6u32.to_be_bytes());
    o.extend_from_slice(&[0; 6]);
    s.write_all(&o).unwrap();
    let h = read_n(&mut s, 20);
    assert_eq!(
        u32::from_be_bytes(h[12..16].try_into().unwrap()),
        REP_ERR_POLICY
    );
    drop(s);
    // A bad magic closes that connection only.
    b.s.write_all(&[0u8; 28]).unwrap();
    let mut rest = Vec::new();
    b.s.read_to_end(&mut rest).unwrap();
    c.send(CMD_READ, 0, 7, 0, 512, &[]);
    assert_eq!(c.reply(&|_| 512).0, 7);
    let r: serde_json::Value = serde_json::from_str(&srv.stop().unwrap().0).unwrap();
    let completed: Vec<u64> = r["flows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["completed"].as_u64().unwrap())
        .collect();
    assert_eq!(
        completed,
        vec![3, 1, 2],
        "one queue pair per connection: {}",
        r["emulator"]
    );
    assert_eq!(r["emulator"]["connections_total"], 3);
}

#[test]
fn the_real_clock_releases_replies_at_arrival_plus_simulated_latency() {
    let d = tempfile::tempdir().unwrap();
    let srv = server(d.path(), Clock::Real, 1);
    let mut c = Client::connect(&d.path().join("nbd.sock"));
    c.send(CMD_WRITE, 0, 1, 0, 65536, &pattern(65536, 3));
    assert_eq!(c.reply(&|_| 0), (1, 0, vec![]));
    for i in 0..200u64 {
        c.send(CMD_READ, 0, i, (i % 16) * 4096, 4096, &[]);
        c.reply(&|_| 4096);
    }
    // A row is kept once its reply is written: the last may come after the client read it.
    let mut log = srv.take_log();
    let (text, rest) = srv.stop().unwrap();
    log.extend(rest);
    assert_eq!(log.len(), 201);
    for row in &log {
        let sim_ns = (row.complete_ps - row.submit_ps) / 1000;
        let observed = row.reply_ns - row.arrival_ns;
        // The reply never leaves before its simulated completion.
        assert!(
            observed + 1 >= sim_ns,
            "observed {observed} ns < simulated {sim_ns} ns"
        );
        assert!(row.submit_ps / 1000 + 1 >= row.arrival_ns, "{row:?}");
    }
    let r: serde_json::Value = serde_json::from_str(&text).unwrap();
    let late = &r["emulator"]["lateness"];
    assert!(late["p50"].as_f64().unwrap() >= 0.0, "{late}");
    // Every simulated reply is in the lateness histogram once.
    let counts = r["emulator"]["lateness_histogram"]["count"]
        .as_array()
        .unwrap();
    assert_eq!(counts.iter().map(|c| c.as_u64().unwrap()).sum::<u64>(), 201);
    assert_eq!(r["emulator"]["clock"], "real");
}

#[test]
fn bad_endpoints_are_refused_before_serving() {
    let d = tempfile::tempdir().unwrap();
    let cap = 1 << 30;
    let mut o = options(d.path(), Clock::Fast);
    o.endpoint = Endpoint::Unix(d.path().join("missing/nbd.sock"));
    let e = Prepared::new(o.clone(), cap).err().unwrap().to_string();
    assert!(e.contains("does not exist"), "{e}");
    let f = d.path().join("file");
    std::fs::write(&f, b"x").unwrap();
    o.endpoint = Endpoint::Unix(f.clone());
    let e = Prepared::new(o.clone(), cap).err().unwrap().to_string();
    assert!(e.contains("is not a socket"), "{e}");
    assert_eq!(std::fs::read(&f).unwrap(), b"x");
    o.endpoint = Endpoint::Tcp("0.0.0.0:0".into());
    let e = Prepared::new(o.clone(), cap).err().unwrap().to_string();
    assert!(
        e.contains("not a loopback address") && e.contains("--allow-remote"),
        "{e}"
    );
    o.endpoint = Endpoint::Tcp("127.0.0.1:0".into());
    let p = Prepared::new(o.clone(), cap).unwrap();
    let port = p
        .uri()
        .rsplit(':')
        .next()
        .unwrap()
        .trim_end_matches('/')
        .to_string();
    o.endpoint = Endpoint::Tcp(format!("127.0.0.1:{port}"));
    let e = Prepared::new(o.clone(), cap).err().unwrap().to_string();
    assert!(e.contains("already in use"), "{e}");
    p.abandon();
    // A backing file made for a server that then cannot bind is removed again.
    o.backing = Some(d.path().join("backing"));
    o.endpoint = Endpoint::Unix(d.path().join("missing/s"));
    assert!(Prepared::new(o, cap).is_err());
    assert!(!d.path().join("backing").exists());
}

#[test]
fn the_timer_floor_waits_for_each_deadline_once() {
    use std::time::{Duration, Instant};
    let (period, run) = (Duration::from_micros(500), Duration::from_millis(100));
    let t = Instant::now();
    let late = ssdkit_serve::timer_floor(period, Duration::from_micros(50), run);
    // One sample per deadline inside the run (fewer when a deadline was missed by more than a
    // period), and the loop waits for its deadlines rather than running through them.
    assert!(!late.is_empty() && late.len() <= 199, "{}", late.len());
    assert!(
        t.elapsed() >= period * late.len() as u32,
        "{:?}",
        t.elapsed()
    );
}
