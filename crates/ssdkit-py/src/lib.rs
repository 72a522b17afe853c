//! `ssdkit._native`: the thin PyO3 layer over `ssdkit-core`. Everything crosses the boundary
//! as strings (TOML, JSON, `key=value` overrides; a run's result document also as the plain
//! dicts and lists `json.loads` makes of its JSON, `run(parsed=True)`) so the Python side owns
//! the typed view and the core stays free of Python types.

use pyo3::exceptions::{PyException, PyValueError};
use pyo3::prelude::*;
use ssdkit_core::api::{self, Source};
use ssdkit_core::config;
use ssdkit_core::Error;
use std::panic::{catch_unwind, AssertUnwindSafe};

mod device;
mod models;
mod serve;

// The module name given here becomes `__module__`, so tracebacks read `ssdkit.ConfigError`,
// the name users import, rather than the private `ssdkit._native`.
pyo3::create_exception!(
    ssdkit,
    SsdkitError,
    PyException,
    "Base class of every ssdkit error."
);
pyo3::create_exception!(
    ssdkit,
    ConfigError,
    SsdkitError,
    "Invalid configuration or override; the message names the key and what is allowed."
);
pyo3::create_exception!(
    ssdkit,
    PresetError,
    SsdkitError,
    "Unknown preset name; the message lists the available presets."
);
pyo3::create_exception!(
    ssdkit,
    SimulationError,
    SsdkitError,
    "The simulation could not finish (a model bug reported instead of a hang or crash)."
);
pyo3::create_exception!(
    ssdkit,
    SsdkitIoError,
    SsdkitError,
    "A file could not be read or written."
);

pyo3::create_exception!(
    ssdkit,
    TraceError,
    SsdkitError,
    "A trace file could not be read or has a bad line; the message names the file, line and text."
);

pyo3::create_exception!(
    ssdkit,
    RequestError,
    SsdkitError,
    "A request a Device cannot take (time in the past, range outside the device, misaligned, unknown queue or op)."
);

/// The one place core errors become Python exceptions.
pub(crate) fn to_py(e: Error) -> PyErr {
    match e {
        Error::Config(m) => ConfigError::new_err(m),
        Error::Preset(m) => PresetError::new_err(m),
        Error::Io(m) => SsdkitIoError::new_err(m),
        Error::Simulation(m) => SimulationError::new_err(m),
        Error::Trace(m) => TraceError::new_err(m),
        Error::Request(m) => RequestError::new_err(m),
        Error::Interrupted(m) => pyo3::exceptions::PyKeyboardInterrupt::new_err(m),
    }
}

pub(crate) fn source<'a>(
    toml_text: &'a Option<String>,
    origin: &'a str,
    preset: &'a Option<String>,
) -> PyResult<Source<'a>> {
    match (toml_text, preset) {
        (Some(text), None) => Ok(Source::Toml { text, origin }),
        (None, Some(name)) => Ok(Source::Preset(name)),
        (Some(text), Some(preset)) => Ok(Source::TomlOnPreset {
            text,
            origin,
            preset,
        }),
        _ => Err(PyValueError::new_err("give `toml_text`, `preset` or both")),
    }
}

/// Runs `f` without the GIL and turns a panic into `SimulationError`: a bug in the model must
/// not take the interpreter (a notebook, a sweep driver) down with it.
pub(crate) fn guarded<T: Send>(
    py: Python<'_>,
    f: impl FnOnce() -> Result<T, Error> + Send,
) -> PyResult<T> {
    let outcome = py.allow_threads(|| catch_unwind(AssertUnwindSafe(f)));
    match outcome {
        Ok(r) => r.map_err(to_py),
        Err(payload) => {
            let msg = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".into());
            Err(SimulationError::new_err(format!("internal error: {msg}")))
        }
    }
}

/// Loads, validates and runs a configuration; returns the result document as JSON text,
/// indented as `json.dumps(doc, indent=2)` writes it (`ssdkit run -o` writes it as it is).
/// With `snapshot`, the device starts from that saved state instead of preconditioning.
/// `on_progress(fraction, requests, simulated_ns, elapsed_s)` is called every 100 ms of wall
/// time (`fraction` None where the workload has no known end); `log_sink(columns)` receives
/// the request log in batches as the run goes (the columns of `run_with_log`). Every 100 ms
/// the run also lets Python handle signals: Ctrl-C stops it with KeyboardInterrupt, and an
/// exception from either callback stops it with that exception. With `parsed`, returns
/// `(text, doc)`: the text and the document as `json.loads(text)` would give it, built from
/// the core's own document while another thread writes the text (on a 1 M-request run, parsing
/// the 1.4 MB text took 3.5-5 ms of the process).
#[pyfunction]
#[pyo3(signature = (toml_text=None, origin="<string>".to_string(), preset=None, overrides=Vec::new(), progress=false, snapshot=None, on_progress=None, log_sink=None, parsed=false))]
#[allow(clippy::too_many_arguments)]
fn run(
    py: Python<'_>,
    toml_text: Option<String>,
    origin: String,
    preset: Option<String>,
    overrides: Vec<String>,
    progress: bool,
    snapshot: Option<std::path::PathBuf>,
    on_progress: Option<PyObject>,
    log_sink: Option<PyObject>,
    parsed: bool,
) -> PyResult<PyObject> {
    let src = source(&toml_text, &origin, &preset)?;
    let opts = Hooked {
        bar: progress,
        on_progress,
        log_sink,
        keep_log: false,
    };
    let (doc, _) = run_hooked(py, src, overrides, snapshot, opts)?;
    if !parsed {
        let text = py.allow_threads(|| api::json_text::dumps_indent2(&doc));
        api::drop_aside(doc);
        return Ok(text.into_pyobject(py)?.into_any().unbind());
    }
    let (text, obj) = std::thread::scope(|s| {
        // Where no thread can start, the text is written here after the objects.
        let writer = std::thread::Builder::new()
            .spawn_scoped(s, || api::json_text::dumps_indent2(&doc))
            .ok();
        let obj = json_to_py(py, &doc);
        let text = match writer {
            Some(w) => w.join().ok(),
            None => Some(api::json_text::dumps_indent2(&doc)),
        };
        (text, obj)
    });
    api::drop_aside(doc);
    let text =
        text.ok_or_else(|| SimulationError::new_err("internal error: the result document's text"))?;
    Ok((text, obj?).into_pyobject(py)?.into_any().unbind())
}

/// The document as Python objects, as `json.loads` gives them for its JSON text: a number
/// written with a fraction or exponent (a float in serde_json) as a float, else an int; keys
/// in the document's order.
fn json_to_py(py: Python<'_>, v: &serde_json::Value) -> PyResult<PyObject> {
    use pyo3::types::{PyDict, PyFloat, PyList};
    use serde_json::Value;
    Ok(match v {
        Value::Null => py.None(),
        Value::Bool(b) => b.into_pyobject(py)?.to_owned().into_any().unbind(),
        Value::Number(n) => match (n.as_u64(), n.as_i64()) {
            (Some(u), _) => u.into_pyobject(py)?.into_any().unbind(),
            (None, Some(i)) => i.into_pyobject(py)?.into_any().unbind(),
            _ => PyFloat::new(py, n.as_f64().expect("a float"))
                .into_any()
                .unbind(),
        },
        Value::String(s) => s.into_pyobject(py)?.into_any().unbind(),
        Value::Array(a) => {
            let items = a
                .iter()
                .map(|x| json_to_py(py, x))
                .collect::<PyResult<Vec<_>>>()?;
            PyList::new(py, items)?.into_any().unbind()
        }
        Value::Object(m) => {
            let d = PyDict::new(py);
            for (k, x) in m {
                d.set_item(k, json_to_py(py, x)?)?;
            }
            d.into_any().unbind()
        }
    })
}

/// Like `run`, keeping the request log: returns the result document as JSON text and the
/// completed requests, in completion order, as columns of native-endian buffers (`id`,
/// `queue`, `op` codes, `offset_bytes`, `bytes`, `submit_ns`, `complete_ns`, `latency_ns`,
/// `submit_ps`, `complete_ps`; see `device::columns`).
#[pyfunction]
#[pyo3(signature = (toml_text=None, origin="<string>".to_string(), preset=None, overrides=Vec::new(), progress=false, snapshot=None, on_progress=None))]
#[allow(clippy::too_many_arguments)]
fn run_with_log<'py>(
    py: Python<'py>,
    toml_text: Option<String>,
    origin: String,
    preset: Option<String>,
    overrides: Vec<String>,
    progress: bool,
    snapshot: Option<std::path::PathBuf>,
    on_progress: Option<PyObject>,
) -> PyResult<(String, Bound<'py, pyo3::types::PyDict>)> {
    let src = source(&toml_text, &origin, &preset)?;
    let opts = Hooked {
        bar: progress,
        on_progress,
        log_sink: None,
        keep_log: true,
    };
    let (doc, log) = run_hooked(py, src, overrides, snapshot, opts)?;
    let text = py.allow_threads(|| api::json_text::dumps_indent2(&doc));
    Ok((text, device::columns(py, &log)?))
}

/// The JSON text `text` (a document serde_json reads) written as the result documents of `run`
/// are: as `json.dumps(json.loads(text), indent=2)` would write it. For the tests that hold the
/// two encoders to the same bytes.
#[pyfunction]
fn json_dumps_indent2(text: &str) -> PyResult<String> {
    let v: serde_json::Value =
        serde_json::from_str(text).map_err(|e| PyValueError::new_err(format!("not JSON: {e}")))?;
    Ok(api::json_text::dumps_indent2(&v))
}

/// The document of the JSON text `text` (a document serde_json reads) as `run(parsed=True)`
/// builds it: for the tests that hold it to `json.loads(text)`.
#[pyfunction]
fn json_loads_core(py: Python<'_>, text: &str) -> PyResult<PyObject> {
    let v: serde_json::Value =
        serde_json::from_str(text).map_err(|e| PyValueError::new_err(format!("not JSON: {e}")))?;
    json_to_py(py, &v)
}

/// The Python side of a batch run's hooks.
struct Hooked {
    bar: bool,
    on_progress: Option<PyObject>,
    log_sink: Option<PyObject>,
    keep_log: bool,
}

/// Runs with the GIL released; every 100 ms (the core's progress hook) takes the GIL to let
/// Python handle signals and call `on_progress`, and hands each batch of the request log to
/// `log_sink`. The first Python exception raised there stops the run and is re-raised as is.
fn run_hooked(
    py: Python<'_>,
    src: Source<'_>,
    overrides: Vec<String>,
    snapshot: Option<std::path::PathBuf>,
    opts: Hooked,
) -> PyResult<(serde_json::Value, Vec<ssdkit_core::CompletionRecord>)> {
    use ssdkit_core::{CompletionRecord, LogMode, Progress, RunHooks};
    use std::cell::RefCell;
    let (outcome, raised) = guarded(py, move || {
        let raised: RefCell<Option<PyErr>> = RefCell::new(None);
        let stop = |e: PyErr, what: &str| {
            raised.borrow_mut().get_or_insert(e);
            Error::Interrupted(format!("the run was stopped by {what}"))
        };
        let mut on_progress = |p: &Progress| -> Result<(), Error> {
            Python::with_gil(|py| {
                py.check_signals().map_err(|e| stop(e, "a signal"))?;
                if let Some(cb) = &opts.on_progress {
                    let args = (p.fraction, p.requests, p.simulated_ps / 1000, p.elapsed_s);
                    cb.call1(py, args)
                        .map_err(|e| stop(e, "the progress callback"))?;
                }
                Ok(())
            })
        };
        let mut sink = |recs: &[CompletionRecord]| -> Result<(), Error> {
            if recs.is_empty() {
                return Ok(());
            }
            Python::with_gil(|py| {
                let cb = opts.log_sink.as_ref().expect("sink set");
                device::columns(py, recs)
                    .and_then(|cols| cb.call1(py, (cols,)))
                    .map(|_| ())
                    .map_err(|e| stop(e, "the request-log writer"))
            })
        };
        let mut building = signal_check(|e| stop(e, "a signal"));
        let log = if opts.log_sink.is_some() {
            LogMode::Stream(&mut sink)
        } else if opts.keep_log {
            LogMode::Keep
        } else {
            LogMode::Off
        };
        let hooks = RunHooks {
            bar: opts.bar,
            on_progress: Some(&mut on_progress),
            log,
            while_building: Some(&mut building),
        };
        let run = (|| {
            let cfg = api::load(src, &overrides)?;
            let out = api::run_with(&cfg, snapshot.as_deref(), hooks)?;
            Ok((out.result, out.log.unwrap_or_default()))
        })();
        drop(building);
        Ok((run, raised.into_inner()))
    })?;
    if let Some(e) = raised {
        return Err(e);
    }
    outcome.map_err(to_py)
}

/// The alone runs of a fairness measurement (the MQSim paper, FAST'18): for each index k of
/// `flows`, one run with every other flow switched off, from `snapshot` (else preconditioned
/// as configured). Returns `(k, name, count, mean_us)` per flow: its reads and writes
/// completed and their mean latency in microseconds, equal to the bit to
/// `flows[k].stats.all` of the run's result. The configuration is read once for all of
/// them, and no result document is built. Every 100 ms the runs let Python handle signals.
#[pyfunction]
#[pyo3(signature = (flows, toml_text=None, origin="<string>".to_string(), preset=None, overrides=Vec::new(), snapshot=None))]
fn run_alone(
    py: Python<'_>,
    flows: Vec<usize>,
    toml_text: Option<String>,
    origin: String,
    preset: Option<String>,
    overrides: Vec<String>,
    snapshot: Option<std::path::PathBuf>,
) -> PyResult<Vec<(usize, String, u64, f64)>> {
    use ssdkit_core::{Progress, RunHooks};
    use std::cell::RefCell;
    let src = source(&toml_text, &origin, &preset)?;
    let (outcome, raised) = guarded(py, move || {
        let raised: RefCell<Option<PyErr>> = RefCell::new(None);
        let stop = |e: PyErr| {
            raised.borrow_mut().get_or_insert(e);
            Error::Interrupted("the run was stopped by a signal".into())
        };
        let run = (|| {
            let mut cfg = api::load(src, &overrides)?;
            let mut out = Vec::with_capacity(flows.len());
            for &k in &flows {
                let mut on_progress = |_: &Progress| -> Result<(), Error> {
                    Python::with_gil(|py| py.check_signals()).map_err(&stop)
                };
                let mut building = signal_check(&stop);
                let hooks = RunHooks {
                    on_progress: Some(&mut on_progress),
                    while_building: Some(&mut building),
                    ..RunHooks::default()
                };
                let a = api::run_alone(&mut cfg, k, snapshot.as_deref(), hooks)?;
                out.push((a.index, a.name, a.count, a.mean_latency_us));
            }
            Ok(out)
        })();
        Ok((run, raised.into_inner()))
    })?;
    if let Some(e) = raised {
        return Err(e);
    }
    outcome.map_err(to_py)
}

/// The state MQSim's random generator starts seed `seed`'s stream from
/// (`ssdkit_core::mqsim_random`): for the import of MQSim's STREAMING flows.
#[pyfunction]
fn mqsim_random_state(seed: u32) -> [[i64; 3]; 2] {
    ssdkit_core::mqsim_random::start_state(seed)
}

/// Whether each flow of the configuration is switched on (`enabled`), in order: what a
/// fairness measurement checks first, without the whole resolved configuration crossing to
/// Python (with a thousand flows, reading that back took longer than the alone runs).
#[pyfunction]
#[pyo3(signature = (toml_text=None, origin="<string>".to_string(), preset=None, overrides=Vec::new()))]
fn flows_enabled(
    py: Python<'_>,
    toml_text: Option<String>,
    origin: String,
    preset: Option<String>,
    overrides: Vec<String>,
) -> PyResult<Vec<bool>> {
    let src = source(&toml_text, &origin, &preset)?;
    guarded(py, || {
        let cfg = api::load(src, &overrides)?;
        Ok(cfg.flows.iter().map(|f| f.enabled).collect())
    })
}

/// A check for long core work that does not report progress (preconditioning): every 100 ms of
/// wall time it takes the GIL and lets Python handle signals; a raised exception goes to
/// `stop`, which returns the error that ends the work.
fn signal_check(stop: impl Fn(PyErr) -> Error) -> impl FnMut() -> Result<(), Error> {
    let mut last = std::time::Instant::now();
    move || {
        if last.elapsed() < std::time::Duration::from_millis(100) {
            return Ok(());
        }
        last = std::time::Instant::now();
        Python::with_gil(|py| py.check_signals()).map_err(&stop)
    }
}

/// Preconditions the configured device and saves it as a snapshot at `output`; returns the
/// preconditioning record (mode, model, times, file size) as JSON text.
#[pyfunction]
#[pyo3(signature = (output, toml_text=None, origin="<string>".to_string(), preset=None, overrides=Vec::new()))]
fn precondition(
    py: Python<'_>,
    output: std::path::PathBuf,
    toml_text: Option<String>,
    origin: String,
    preset: Option<String>,
    overrides: Vec<String>,
) -> PyResult<String> {
    let src = source(&toml_text, &origin, &preset)?;
    let (outcome, raised) = guarded(py, || {
        let raised: std::cell::RefCell<Option<PyErr>> = std::cell::RefCell::new(None);
        let mut check = signal_check(|e| {
            raised.borrow_mut().get_or_insert(e);
            Error::Interrupted("preconditioning was stopped by a signal".into())
        });
        let run = (|| {
            let cfg = api::load(src, &overrides)?;
            let rec = api::precondition_to_snapshot_checked(&cfg, &output, &mut check)?;
            serde_json::to_string(&rec)
                .map_err(|e| Error::Simulation(format!("record serialisation: {e}")))
        })();
        drop(check);
        Ok((run, raised.into_inner()))
    })?;
    if let Some(e) = raised {
        return Err(e);
    }
    outcome.map_err(to_py)
}

/// The validated configuration, every default written out, as TOML.
#[pyfunction]
#[pyo3(signature = (toml_text=None, origin="<string>".to_string(), preset=None, overrides=Vec::new()))]
fn resolve_config(
    py: Python<'_>,
    toml_text: Option<String>,
    origin: String,
    preset: Option<String>,
    overrides: Vec<String>,
) -> PyResult<String> {
    let src = source(&toml_text, &origin, &preset)?;
    guarded(py, || Ok(api::load(src, &overrides)?.to_toml()))
}

/// Each flow's trace file as the run opens it (relative paths resolved from the
/// configuration file's folder), "" for a synthetic flow: the inputs an output must not
/// overwrite, without the whole resolved configuration as TOML for Python to parse.
#[pyfunction]
#[pyo3(signature = (toml_text=None, origin="<string>".to_string(), preset=None, overrides=Vec::new()))]
fn trace_files(
    py: Python<'_>,
    toml_text: Option<String>,
    origin: String,
    preset: Option<String>,
    overrides: Vec<String>,
) -> PyResult<Vec<String>> {
    let src = source(&toml_text, &origin, &preset)?;
    guarded(py, || {
        let cfg = api::load(src, &overrides)?;
        Ok(cfg.flows.iter().map(|f| f.trace.clone()).collect())
    })
}

/// Geometry and logical capacity of the configured device, as JSON text: what converters
/// (fio, MQSim import) need to turn percentages into byte ranges.
#[pyfunction]
#[pyo3(signature = (toml_text=None, origin="<string>".to_string(), preset=None, overrides=Vec::new()))]
fn device_info(
    py: Python<'_>,
    toml_text: Option<String>,
    origin: String,
    preset: Option<String>,
    overrides: Vec<String>,
) -> PyResult<PyObject> {
    let src = source(&toml_text, &origin, &preset)?;
    let info = guarded(py, || {
        let cfg = api::load(src, &overrides)?;
        Ok(api::device_info(&cfg))
    })?;
    // Objects, not JSON text: the MQSim and fio converters ask for the capacity before every
    // converted run, and parsing text would import `json` there (1 ms of the process).
    json_to_py(py, &info)
}

/// What the preconditioned state depends on (JSON): configurations with equal keys
/// precondition to the same device.
#[pyfunction]
#[pyo3(signature = (toml_text=None, origin="<string>".to_string(), preset=None, overrides=Vec::new()))]
fn precondition_key(
    py: Python<'_>,
    toml_text: Option<String>,
    origin: String,
    preset: Option<String>,
    overrides: Vec<String>,
) -> PyResult<String> {
    let src = source(&toml_text, &origin, &preset)?;
    guarded(py, || {
        let cfg = api::load(src, &overrides)?;
        Ok(api::precondition_key(&cfg).to_string())
    })
}

/// Built-in presets as (name, description) pairs.
#[pyfunction]
fn presets() -> Vec<(&'static str, &'static str)> {
    config::preset_names()
}

/// The TOML text of a built-in preset.
#[pyfunction]
fn preset_toml(name: &str) -> PyResult<&'static str> {
    config::preset_toml(name).map_err(to_py)
}

/// JSON Schema of the configuration.
#[pyfunction]
fn config_schema() -> String {
    config::schema_json()
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    // The latency breakdown's response-time steps, in path order: the names of the request
    // log's `<step>_ps` columns.
    m.add(
        "BREAKDOWN_STEPS",
        ssdkit_core::STEP_NAMES[..ssdkit_core::RESPONSE_STEPS].to_vec(),
    )?;
    m.add("SsdkitError", py.get_type::<SsdkitError>())?;
    m.add("ConfigError", py.get_type::<ConfigError>())?;
    m.add("PresetError", py.get_type::<PresetError>())?;
    m.add("SimulationError", py.get_type::<SimulationError>())?;
    m.add("SsdkitIoError", py.get_type::<SsdkitIoError>())?;
    m.add("TraceError", py.get_type::<TraceError>())?;
    m.add("RequestError", py.get_type::<RequestError>())?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(run_with_log, m)?)?;
    m.add_function(wrap_pyfunction!(json_dumps_indent2, m)?)?;
    m.add_function(wrap_pyfunction!(json_loads_core, m)?)?;
    m.add_function(wrap_pyfunction!(run_alone, m)?)?;
    m.add_function(wrap_pyfunction!(flows_enabled, m)?)?;
    m.add_function(wrap_pyfunction!(mqsim_random_state, m)?)?;
    m.add_class::<device::PyDevice>()?;
    m.add_function(wrap_pyfunction!(serve::serve, m)?)?;
    m.add_function(wrap_pyfunction!(serve::timer_floor, m)?)?;
    m.add_function(wrap_pyfunction!(models::x25m_params, m)?)?;
    m.add_function(wrap_pyfunction!(models::x25m_eval, m)?)?;
    m.add_function(wrap_pyfunction!(models::wa_steady_state, m)?)?;
    m.add_function(wrap_pyfunction!(models::wa_of_config, m)?)?;
    m.add_function(wrap_pyfunction!(models::nvme_eval, m)?)?;
    m.add_function(wrap_pyfunction!(precondition, m)?)?;
    m.add_function(wrap_pyfunction!(resolve_config, m)?)?;
    m.add_function(wrap_pyfunction!(trace_files, m)?)?;
    m.add_function(wrap_pyfunction!(presets, m)?)?;
    m.add_function(wrap_pyfunction!(device_info, m)?)?;
    m.add_function(wrap_pyfunction!(precondition_key, m)?)?;
    m.add_function(wrap_pyfunction!(preset_toml, m)?)?;
    m.add_function(wrap_pyfunction!(config_schema, m)?)?;
    Ok(())
}
