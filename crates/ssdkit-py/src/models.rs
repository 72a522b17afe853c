//! The core's analytical models (`ssdkit_core::models`) for `ssdkit.models`: the formulas stay
//! in Rust, where the simulator's tests call them, and Python only arranges their answers.

use crate::{guarded, source};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use ssdkit_core::api;
use ssdkit_core::config::GcPolicy;
use ssdkit_core::models::nvme::Nvme;
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

/// NVMeSim's Eq. 1-3 for a configuration, one dict per request size: the terms (DB-Write,
/// I/O-Req, I/O-Fetch, DMA, NVM, CPL-Submit, MSI, T_stall at QD1), `latency_us` (Eq. 1-2),
/// `overhead_us` (Eq. 3) and `overhead_share`.
#[pyfunction]
#[pyo3(signature = (write, request_bytes, queue_depth=1, toml_text=None, origin="<string>".to_string(), preset=None, overrides=Vec::new()))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn nvme_eval<'py>(
    py: Python<'py>,
    write: bool,
    request_bytes: Vec<u64>,
    queue_depth: u32,
    toml_text: Option<String>,
    origin: String,
    preset: Option<String>,
    overrides: Vec<String>,
) -> PyResult<Vec<Bound<'py, PyDict>>> {
    if request_bytes.contains(&0) {
        return Err(PyValueError::new_err(
            "request sizes must be at least 1 byte",
        ));
    }
    if queue_depth == 0 {
        return Err(PyValueError::new_err("the queue depth must be at least 1"));
    }
    let src = source(&toml_text, &origin, &preset)?;
    let c = guarded(py, || api::load(src, &overrides))?;
    request_bytes
        .iter()
        .map(|&b| {
            let t = Nvme::of_config(&c, write, b as f64);
            let d = PyDict::new(py);
            d.set_item("request_bytes", b)?;
            d.set_item("db_write_us", t.db_write_us)?;
            d.set_item("io_req_us", t.io_req_us)?;
            d.set_item("io_fetch_us", t.io_fetch_us)?;
            d.set_item("dma_us", t.dma_us)?;
            d.set_item("nvm_us", t.nvm_us)?;
            d.set_item("cpl_submit_us", t.cpl_submit_us)?;
            d.set_item("msi_us", t.msi_us)?;
            d.set_item("stall_us", t.stall_us)?;
            d.set_item("latency_us", t.latency_us())?;
            d.set_item("overhead_us", t.overhead_us())?;
            d.set_item("overhead_share", t.overhead_share())?;
            d.set_item("up_us", t.up_us(write))?;
            d.set_item("down_us", t.down_us(write))?;
            d.set_item("queue_depth", queue_depth)?;
            d.set_item("stall_bound_us", t.stall_bound_us(write, queue_depth))?;
            Ok(d)
        })
        .collect()
}
