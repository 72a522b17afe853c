//! `ssdkit serve` from Python: builds the device, serves it (crates/ssdkit-serve) on other
//! threads, and meanwhile keeps the calling thread for Python: every 50 ms it lets Python
//! handle signals, asks `control()` what to do, writes results when asked and hands the
//! latency log over in batches.

use crate::{guarded, source, to_py};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use ssdkit_core::api;
use ssdkit_core::device::Device;
use ssdkit_core::internals::workload::Op;
use ssdkit_serve::{Clock, Endpoint, LogRow, Options, Prepared, Server};
use std::time::{Duration, Instant};

/// The log rows as columns of native-endian int64 (`op` as codes 0 read, 1 write, 2 trim,
/// 3 flush), nanoseconds.
fn log_columns<'py>(py: Python<'py>, rows: &[LogRow]) -> PyResult<Bound<'py, PyDict>> {
    type Get = fn(&LogRow) -> u64;
    let cols: [(&str, Get); 9] = [
        ("queue", |r| r.queue as u64),
        ("op", |r| match r.op {
            Op::Read => 0,
            Op::Write => 1,
            Op::Trim => 2,
            Op::Flush => 3,
        }),
        ("offset_bytes", |r| r.offset_bytes),
        ("bytes", |r| r.bytes),
        ("submit_ns", |r| r.submit_ps / 1000),
        ("complete_ns", |r| r.complete_ps / 1000),
        ("latency_ns", |r| (r.complete_ps - r.submit_ps) / 1000),
        ("arrival_ns", |r| r.arrival_ns),
        ("reply_ns", |r| r.reply_ns),
    ];
    let d = PyDict::new(py);
    for (name, get) in cols {
        d.set_item(name, crate::device::u64_column(py, rows, get)?)?;
    }
    Ok(d)
}

/// Serves the configured device as an NBD export until `control()` returns 2 (or a signal
/// handler raises). `on_ready(uri, capacity_bytes, queues)` is called once clients can
/// connect; `control()` returns 0 (go on), 1 (write the result now: `on_result(json)`) or 2
/// (stop); `on_result(json)` also runs every `result_every` seconds; `log_sink(columns)`
/// receives the latency log in batches when given. Returns the final result as JSON text.
#[pyfunction]
#[pyo3(signature = (toml_text=None, origin="<string>".to_string(), preset=None, overrides=Vec::new(),
    snapshot=None, socket=None, listen=None, allow_remote=false, clock="real".to_string(), queues=16,
    read_only=false, backing=None, durable=false, memory_limit=1<<30, export_name="ssdkit".to_string(),
    spin_us=50, result_every=None, on_ready=None, control=None, on_result=None, log_sink=None))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn serve(
    py: Python<'_>,
    toml_text: Option<String>,
    origin: String,
    preset: Option<String>,
    overrides: Vec<String>,
    snapshot: Option<std::path::PathBuf>,
    socket: Option<std::path::PathBuf>,
    listen: Option<String>,
    allow_remote: bool,
    clock: String,
    queues: u32,
    read_only: bool,
    backing: Option<std::path::PathBuf>,
    durable: bool,
    memory_limit: u64,
    export_name: String,
    spin_us: u64,
    result_every: Option<f64>,
    on_ready: Option<PyObject>,
    control: Option<PyObject>,
    on_result: Option<PyObject>,
    log_sink: Option<PyObject>,
) -> PyResult<String> {
    let src = source(&toml_text, &origin, &preset)?;
    let endpoint = match (socket, listen) {
        (Some(p), None) => Endpoint::Unix(p),
        (None, Some(a)) => Endpoint::Tcp(a),
        _ => {
            return Err(to_py(ssdkit_core::Error::Config(
                "give exactly one of --socket PATH and --listen HOST:PORT".into(),
            )))
        }
    };
    let clock = match clock.as_str() {
        "real" => Clock::Real,
        "fast" => Clock::Fast,
        other => {
            return Err(to_py(ssdkit_core::Error::Config(format!(
                "--clock {other:?}: allowed values are \"real\" and \"fast\""
            ))))
        }
    };
    if durable && backing.is_none() {
        return Err(to_py(ssdkit_core::Error::Config(
            "--durable needs --backing FILE: the in-memory store has nothing to make durable"
                .into(),
        )));
    }
    let opts = Options {
        endpoint,
        allow_remote,
        clock,
        read_only,
        backing,
        durable,
        memory_limit,
        export_name,
        spin_us,
        keep_log: log_sink.is_some(),
    };
    let (cfg, prepared) = guarded(py, || {
        let cfg = Device::widened(&api::load(src, &overrides)?, queues)?;
        let capacity = api::device_info(&cfg)["capacity_bytes"]
            .as_u64()
            .expect("capacity is an integer");
        let prepared = Prepared::new(opts, capacity)?;
        Ok((cfg, prepared))
    })?;
    let description = format!(
        "a simulated SSD (ssdkit {}): {}",
        env!("CARGO_PKG_VERSION"),
        preset.clone().unwrap_or_else(|| origin.clone())
    );
    // Building (preconditioning, or loading the snapshot) is the slow part; nothing is
    // served before it is done, and a failure removes the socket and a new backing file.
    let built = std::sync::Mutex::new(Some(prepared));
    let server = guarded(py, || {
        let dev = match &snapshot {
            Some(path) => Device::from_snapshot(&cfg, path),
            None => Device::new(&cfg),
        };
        let p = built.lock().unwrap().take().expect("prepared once");
        match dev {
            Ok(dev) => p.start(dev, description),
            Err(e) => {
                p.abandon();
                Err(e)
            }
        }
    });
    if let Some(p) = built.lock().unwrap().take() {
        p.abandon(); // a panic while building
    }
    let mut server = server?;
    let outcome = run_loop(
        py,
        &mut server,
        result_every,
        on_ready,
        control,
        on_result,
        log_sink.as_ref(),
    );
    let (text, rows) = py.allow_threads(|| server.stop()).map_err(to_py)?;
    if let Some(sink) = &log_sink {
        if !rows.is_empty() {
            sink.call1(py, (log_columns(py, &rows)?,))?;
        }
    }
    outcome?;
    Ok(text)
}

fn run_loop(
    py: Python<'_>,
    server: &mut Server,
    result_every: Option<f64>,
    on_ready: Option<PyObject>,
    control: Option<PyObject>,
    on_result: Option<PyObject>,
    log_sink: Option<&PyObject>,
) -> PyResult<()> {
    if let Some(f) = on_ready {
        let cap = server.capacity_bytes();
        f.call1(py, (server.uri().to_string(), cap, server.queues()))?;
    }
    let every = result_every
        .filter(|s| *s > 0.0)
        .map(Duration::from_secs_f64);
    let mut last = Instant::now();
    loop {
        py.allow_threads(|| std::thread::sleep(Duration::from_millis(50)));
        py.check_signals()?;
        if let Some(e) = server.failed() {
            return Err(to_py(e));
        }
        if let Some(sink) = log_sink {
            let rows = server.take_log();
            if !rows.is_empty() {
                sink.call1(py, (log_columns(py, &rows)?,))?;
            }
        }
        let asked: u8 = match &control {
            Some(c) => c.call0(py)?.extract(py)?,
            None => 0,
        };
        if asked == 2 {
            return Ok(());
        }
        let due = every.is_some_and(|e| last.elapsed() >= e);
        if asked == 1 || due {
            if due {
                last = Instant::now();
            }
            if let Some(f) = &on_result {
                let text = py.allow_threads(|| server.result_json()).map_err(to_py)?;
                f.call1(py, (text,))?;
            }
        }
    }
}

/// Lateness of a bare timer loop, in nanoseconds: `ssdkit_serve::timer_floor`, with the GIL
/// released so that the caller's other threads (a benchmark's fio) run meanwhile.
#[pyfunction]
#[pyo3(signature = (period_us, spin_us, seconds))]
pub(crate) fn timer_floor(
    py: Python<'_>,
    period_us: u64,
    spin_us: u64,
    seconds: f64,
) -> PyResult<Vec<u64>> {
    if period_us == 0 || !(seconds > 0.0 && seconds <= 3600.0) {
        return Err(pyo3::exceptions::PyValueError::new_err(format!(
            "timer_floor: period_us must be at least 1 and seconds in (0, 3600]; got {period_us} and {seconds}"
        )));
    }
    Ok(py.allow_threads(|| {
        ssdkit_serve::timer_floor(
            Duration::from_micros(period_us),
            Duration::from_micros(spin_us),
            Duration::from_secs_f64(seconds),
        )
    }))
}
