//! The core's analytical models (`ssdkit_core::models`) for `ssdkit.models`: the formulas stay
//! in Rust, where the simulator's tests call them, and Python only arranges their answers.

use crate::{guarded, source};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use ssdkit_core::api;
use ssdkit_core::config::GcPolicy;
use ssdkit_core::models::wa;
use ssdkit_core::models::x25m::X25mParams;

/// The X25-M latency model's parameters of a configuration, for writes or reads:
/// (ch_us, reg_us, cell_us, rho, page_bytes).
#[pyfunction]
#[pyo3(signature = (write, toml_text=None, origin="<string>".to_string(), preset=None, overrides=Vec::new()))]
pub(crate) fn x25m_params(
    py: Python<'_>,
    write: bool,
    toml_text: Option<String>,
    origin: String,
    preset: Option<String>,
    overrides: Vec<String>,
) -> PyResult<(f64, f64, f64, u64, u64)> {
    let src = source(&toml_text, &origin, &preset)?;
    guarded(py, || {
        let c = api::load(src, &overrides)?;
        let p = X25mParams::from_config(&c, write);
        Ok((p.ch_us, p.reg_us, p.cell_us, p.rho, p.page_bytes))
    })
}

/// Eq. 1-7 for explicit parameters and page counts: a dict of `page_us`, `t_wait_us`,
/// `t_cycle_us` and, per page count, `cycles`, `record_us`, `iops`, `bytes_per_s`.
#[pyfunction]
pub(crate) fn x25m_eval<'py>(
    py: Python<'py>,
    ch_us: f64,
    reg_us: f64,
    cell_us: f64,
    rho: u64,
    page_bytes: u64,
    n_pages: Vec<u64>,
) -> PyResult<Bound<'py, PyDict>> {
    for (name, v) in [("ch_us", ch_us), ("reg_us", reg_us), ("cell_us", cell_us)] {
        if !(v.is_finite() && v >= 0.0) {
            return Err(PyValueError::new_err(format!(
                "{name} must be a finite time of at least 0 us, got {v}"
            )));
        }
    }
    if rho == 0 || page_bytes == 0 || n_pages.contains(&0) {
        return Err(PyValueError::new_err(
            "rho, page_bytes and every page count must be at least 1",
        ));
    }
    let p = X25mParams {
        ch_us,
        reg_us,
        cell_us,
        rho,
        page_bytes,
    };
    let d = PyDict::new(py);
    d.set_item("page_us", p.page_us())?;
    d.set_item("t_wait_us", p.t_wait_us())?;
    d.set_item("t_cycle_us", p.t_cycle_us())?;
    let each = |f: &dyn Fn(u64) -> f64| n_pages.iter().map(|&n| f(n)).collect::<Vec<f64>>();
    d.set_item(
        "cycles",
        n_pages.iter().map(|&n| p.cycles(n)).collect::<Vec<u64>>(),
    )?;
    d.set_item("record_us", each(&|n| p.record_us(n)))?;
    d.set_item("iops", each(&|n| p.iops(n)))?;
    d.set_item("bytes_per_s", each(&|n| p.bytes_per_s(n)))?;
    Ok(d)
}

/// `ftl.gc_policy`'s names, as the configuration takes them.
fn policy(name: &str, d: u32) -> PyResult<GcPolicy> {
    match name {
        "greedy" => Ok(GcPolicy::Greedy {}),
        "cost_benefit" => Ok(GcPolicy::CostBenefit {}),
        "random" => Ok(GcPolicy::Random {}),
        "fifo" => Ok(GcPolicy::Fifo {}),
        "d_choices" if d >= 1 => Ok(GcPolicy::DChoices { d }),
        "d_choices" => Err(PyValueError::new_err("d_choices needs d of at least 1")),
        other => Err(PyValueError::new_err(format!(
            "unknown GC policy {other:?}; choose from greedy, d_choices, random, fifo, cost_benefit"
        ))),
    }
}

/// Steady-state write amplification for a GC policy, spare factor and pages per block, and
/// the model's name.
#[pyfunction]
#[pyo3(signature = (gc_policy, spare_factor, pages_per_block, d=10))]
pub(crate) fn wa_steady_state(
    gc_policy: &str,
    spare_factor: f64,
    pages_per_block: u32,
    d: u32,
) -> PyResult<(f64, String)> {
    let p = policy(gc_policy, d)?;
    if pages_per_block == 0 {
        return Err(PyValueError::new_err("pages_per_block must be at least 1"));
    }
    wa::of_policy(p, spare_factor, pages_per_block)
        .map(|(w, name)| (w, name.to_string()))
        .map_err(PyValueError::new_err)
}

/// The configured device's idealised steady-state write amplification and the model's name.
#[pyfunction]
#[pyo3(signature = (toml_text=None, origin="<string>".to_string(), preset=None, overrides=Vec::new()))]
pub(crate) fn wa_of_config(
    py: Python<'_>,
    toml_text: Option<String>,
    origin: String,
    preset: Option<String>,
    overrides: Vec<String>,
) -> PyResult<(f64, String, f64, u32)> {
    let src = source(&toml_text, &origin, &preset)?;
    let c = guarded(py, || api::load(src, &overrides))?;
    let (w, name) = wa::of_config(&c).map_err(PyValueError::new_err)?;
    Ok((
        w,
        name.to_string(),
        c.ftl.spare_factor,
        c.flash.pages_per_block,
    ))
}
