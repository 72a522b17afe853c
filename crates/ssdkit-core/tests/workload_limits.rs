//! Requests must not vanish (issue 9): times past the end of the simulated clock (2^64 ps) are
//! refused or reported with the key, a trace `devices` filter that keeps nothing is an error,
//! and a trace given as a pipe is read once (two-pass `fold = "scale"` refuses it).

use ssdkit_core::api::run;
use ssdkit_core::config::Config;
use std::path::PathBuf;
use std::sync::mpsc;
use std::time::Duration;

const DEVICE: &str = r#"
[ftl]
spare_factor = 0.2
[precondition]
mode = "empty"
[flash]
channels = 2
chips_per_channel = 1
dies_per_chip = 1
planes_per_die = 2
blocks_per_plane = 128
pages_per_block = 64
page_size_bytes = 4096
"#;

fn load(flows: &str) -> Result<Config, String> {
    Config::load(&format!("{DEVICE}\n{flows}"), "test.toml", &[]).map_err(|e| e.to_string())
}

fn run_err(flows: &str) -> String {
    let c = load(flows).unwrap_or_else(|e| panic!("{e}"));
    match run(&c, false, false) {
        Ok(o) => panic!("must fail; issued {}", o.result["flows"][0]["issued"]),
        Err(e) => e.to_string(),
    }
}

fn issued(flows: &str) -> u64 {
    let c = load(flows).unwrap_or_else(|e| panic!("{e}"));
    let r = run(&c, false, false)
        .unwrap_or_else(|e| panic!("{e}"))
        .result;
    r["flows"][0]["issued"].as_u64().unwrap()
}

/// Runs `f` on a thread and fails the test if it takes longer than `secs`: a trace reader
/// that reopens a FIFO would block forever.
fn within<T: Send + 'static>(secs: u64, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(Duration::from_secs(secs))
        .expect("blocked: the trace was opened a second time")
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("ssdkit-limits-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// mqsim format: time ns, device, start sector, sectors, 1 = read.
const TRACE: &str = "0 0 0 8 1\n1000 0 8 8 1\n2000 1 16 8 1\n3000 0 24 8 0\n";

#[test]
fn start_and_duration_must_end_inside_simulated_time() {
    let e = load("[[flow]]\nstart_ms = 2e10\n").unwrap_err();
    assert!(e.contains("key `flow.0.start_ms` = 20000000000"), "{e}");
    assert!(e.contains("18446744073"), "{e}");
    let e = load("[[flow]]\nrequests = 1\n[[flow]]\nduration_ms = 2e10\n").unwrap_err();
    assert!(e.contains("key `flow.1.duration_ms`"), "{e}");
    let e = load("[[flow]]\nstart_ms = 1e10\nduration_ms = 1e10\n").unwrap_err();
    assert!(
        e.contains("`flow.0.start_ms`") && e.contains("`flow.0.duration_ms`"),
        "{e}"
    );
    assert!(e.contains("start_ms + duration_ms <= 18446744073"), "{e}");
    load("[[flow]]\nstart_ms = 1e10\nduration_ms = 8e9\n").unwrap();
    // A flow may start late in simulated time and still run.
    assert_eq!(issued("[[flow]]\nstart_ms = 1.8e10\nrequests = 3\n"), 3);
}

#[test]
fn open_loop_arrivals_beyond_simulated_time_are_errors() {
    let e =
        run_err("[[flow]]\nname = \"slow\"\narrival = \"fixed\"\nrate_iops = 1e-9\nrequests = 3\n");
    assert!(
        e.contains("flow `slow`") && e.contains("`flow.0.rate_iops`"),
        "{e}"
    );
    assert!(e.contains("2^64 ps"), "{e}");
    let e = run_err("[[flow]]\nrequests = 2\n[[flow]]\narrival = \"exponential\"\nrate_iops = 1e-9\nrequests = 5\n");
    assert!(e.contains("`flow.1.rate_iops`"), "{e}");
    let e = run_err(
        "[[flow]]\narrival = \"onoff\"\nrate_iops = 1e-6\non_ms = 1\noff_ms = 1e9\nrequests = 4\n",
    );
    assert!(
        e.contains("`flow.0.rate_iops`") && e.contains("`flow.0.off_ms`"),
        "{e}"
    );
    // A duration ends the flow before its next arrival, and a capped run stops before the
    // end of time: both are complete, valid runs.
    let slow = "[[flow]]\narrival = \"fixed\"\nrate_iops = 1e-9\nrequests = 3\n";
    assert_eq!(issued(&format!("{slow}duration_ms = 1000\n")), 1);
    let capped = format!("[run]\nmax_simulated_ms = 1000\n{slow}");
    let c = load(&capped).unwrap();
    let r = run(&c, false, false).unwrap().result;
    assert_eq!(r["flows"][0]["issued"], 1);
}

#[test]
fn a_devices_filter_that_keeps_nothing_is_an_error() {
    let d = scratch("devices");
    let path = d.join("t.trace");
    std::fs::write(&path, TRACE).unwrap();
    let p = path.display().to_string();
    for fold in ["none", "scale"] {
        let e = run_err(&format!(
            "[[flow]]\nrequests = 1\n[[flow]]\ntrace = \"{p}\"\ndevices = [5, 7]\nfold = \"{fold}\"\n"
        ));
        assert!(
            e.contains("key `flow.1.devices` = [5, 7]") && e.contains(&p),
            "{fold}: {e}"
        );
        assert!(
            e.contains("devices in the file include 0, 1"),
            "{fold}: {e}"
        );
    }
    // A filter that keeps some records replays them.
    let f = format!("[[flow]]\ntrace = \"{p}\"\ndevices = [1]\n");
    assert_eq!(issued(&f), 1);
    std::fs::remove_dir_all(&d).unwrap();
}

#[cfg(unix)]
fn mkfifo(path: &std::path::Path) {
    let ok = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .expect("mkfifo runs")
        .success();
    assert!(ok, "mkfifo {}", path.display());
}

#[cfg(unix)]
#[test]
fn a_trace_pipe_is_read_once() {
    let d = scratch("fifo");
    let fifo = d.join("t.fifo");
    mkfifo(&fifo);
    let p = fifo.display().to_string();
    // One pass: the writer's data is replayed in full; a second open would block.
    for fold in ["none", "modulo"] {
        let writer = {
            let fifo = fifo.clone();
            std::thread::spawn(move || std::fs::write(&fifo, TRACE).unwrap())
        };
        let flows = format!("[[flow]]\ntrace = \"{p}\"\nfold = \"{fold}\"\n");
        assert_eq!(within(60, move || issued(&flows)), 4, "{fold}");
        writer.join().unwrap();
    }
    // fold = "scale" reads the file twice: refused before it is opened (no writer needed).
    let flows = format!("[[flow]]\ntrace = \"{p}\"\nfold = \"scale\"\n");
    let e = within(60, move || run_err(&flows));
    assert!(
        e.contains("key `flow.0.fold` = \"scale\"") && e.contains(&p),
        "{e}"
    );
    assert!(e.contains("not a regular file"), "{e}");
    std::fs::remove_dir_all(&d).unwrap();
}
