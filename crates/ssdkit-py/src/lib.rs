//! `ssdkit._native`: the thin PyO3 layer over `ssdkit-core`. Everything crosses the boundary
//! as strings (TOML, JSON, `key=value` overrides) so the Python side owns the typed view and
//! the core stays free of Python types.

use pyo3::exceptions::{PyException, PyValueError};
use pyo3::prelude::*;
use ssdkit_core::api::{self, Source};
use ssdkit_core::config;
use ssdkit_core::Error;
use std::panic::{catch_unwind, AssertUnwindSafe};

mod device;

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
        _ => Err(PyValueError::new_err(
            "give exactly one of `toml_text` and `preset`",
        )),
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

/// Loads, validates and runs a configuration; returns the result document as JSON text.
/// With `snapshot`, the device starts from that saved state instead of preconditioning.
#[pyfunction]
#[pyo3(signature = (toml_text=None, origin="<string>".to_string(), preset=None, overrides=Vec::new(), progress=false, snapshot=None))]
fn run(
    py: Python<'_>,
    toml_text: Option<String>,
    origin: String,
    preset: Option<String>,
    overrides: Vec<String>,
    progress: bool,
    snapshot: Option<std::path::PathBuf>,
) -> PyResult<String> {
    let src = source(&toml_text, &origin, &preset)?;
    guarded(py, || {
        let cfg = api::load(src, &overrides)?;
        let out = match &snapshot {
            Some(path) => api::run_from_snapshot(&cfg, path, progress, false)?,
            None => api::run(&cfg, progress, false)?,
        };
        serde_json::to_string(&out.result)
            .map_err(|e| Error::Simulation(format!("result serialisation: {e}")))
    })
}

/// Like `run`, keeping the request log: returns the result document as JSON text and the
/// completed requests, in completion order, as columns of native-endian buffers (`id`,
/// `queue`, `op` codes, `offset_bytes`, `bytes`, `submit_ns`, `complete_ns`, `latency_ns`,
/// `submit_ps`, `complete_ps`; see `device::columns`).
#[pyfunction]
#[pyo3(signature = (toml_text=None, origin="<string>".to_string(), preset=None, overrides=Vec::new(), progress=false, snapshot=None))]
fn run_with_log<'py>(
    py: Python<'py>,
    toml_text: Option<String>,
    origin: String,
    preset: Option<String>,
    overrides: Vec<String>,
    progress: bool,
    snapshot: Option<std::path::PathBuf>,
) -> PyResult<(String, Bound<'py, pyo3::types::PyDict>)> {
    let src = source(&toml_text, &origin, &preset)?;
    let (text, log) = guarded(py, || {
        let cfg = api::load(src, &overrides)?;
        let out = match &snapshot {
            Some(path) => api::run_from_snapshot(&cfg, path, progress, true)?,
            None => api::run(&cfg, progress, true)?,
        };
        let text = serde_json::to_string(&out.result)
            .map_err(|e| Error::Simulation(format!("result serialisation: {e}")))?;
        Ok((text, out.log.unwrap_or_default()))
    })?;
    Ok((text, device::columns(py, &log)?))
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
    guarded(py, || {
        let cfg = api::load(src, &overrides)?;
        let rec = api::precondition_to_snapshot(&cfg, &output)?;
        serde_json::to_string(&rec)
            .map_err(|e| Error::Simulation(format!("record serialisation: {e}")))
    })
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
) -> PyResult<String> {
    let src = source(&toml_text, &origin, &preset)?;
    guarded(py, || {
        let cfg = api::load(src, &overrides)?;
        Ok(api::device_info(&cfg).to_string())
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
    m.add("SsdkitError", py.get_type::<SsdkitError>())?;
    m.add("ConfigError", py.get_type::<ConfigError>())?;
    m.add("PresetError", py.get_type::<PresetError>())?;
    m.add("SimulationError", py.get_type::<SimulationError>())?;
    m.add("SsdkitIoError", py.get_type::<SsdkitIoError>())?;
    m.add("TraceError", py.get_type::<TraceError>())?;
    m.add("RequestError", py.get_type::<RequestError>())?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(run_with_log, m)?)?;
    m.add_class::<device::PyDevice>()?;
    m.add_function(wrap_pyfunction!(precondition, m)?)?;
    m.add_function(wrap_pyfunction!(resolve_config, m)?)?;
    m.add_function(wrap_pyfunction!(presets, m)?)?;
    m.add_function(wrap_pyfunction!(device_info, m)?)?;
    m.add_function(wrap_pyfunction!(preset_toml, m)?)?;
    m.add_function(wrap_pyfunction!(config_schema, m)?)?;
    Ok(())
}
