//! `ssdkit._native.Device`: the step-by-step device (`ssdkit_core::device::Device`) for a host
//! program written in Python. `ssdkit.Device` (python/ssdkit/device.py) wraps it with typed
//! results; this layer owns the unit conversion and the checks.
//!
//! Times cross the boundary in integer nanoseconds: a submission or `run_until` time `t` is
//! `t * 1000` picoseconds exactly; a completion time in picoseconds becomes nanoseconds by
//! floor division (the exact picoseconds are available in the batch form). Between calls the
//! clock is always on a whole nanosecond: `run_to_idle` moves it up to the next one after the
//! last event, so `now_ns()` is exact and a submission at `now_ns()` is always accepted.
//!
//! Every request is checked here before it reaches the core (non-negative integers that fit,
//! op, queue, alignment, range, time order), for one request and for a batch alike, so a batch
//! with a bad request is refused whole, with its index, before any of it is submitted. The core
//! checks again. Calls release the GIL and run under `catch_unwind`: a panic of the model
//! becomes `SimulationError` and leaves the device unusable (every later call says so) rather
//! than taking the interpreter down. The device sits behind a mutex, so calls from several
//! threads are serialised instead of failing.

use crate::{source, to_py, RequestError, SimulationError, SsdkitError};
use pyo3::exceptions::{PyOverflowError, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyByteArray, PyDict, PyList, PyString, PyTuple};
use ssdkit_core::api;
use ssdkit_core::device::Device;
use ssdkit_core::CompletionRecord;
use ssdkit_core::Error;
use ssdkit_core::Op;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Mutex;

const PS_PER_NS: u64 = 1000;
/// The latest time a submission or `run_until` can name: the clock counts u64 picoseconds.
const MAX_NS: u64 = u64::MAX / PS_PER_NS;

/// Op codes of the batch form, in this order; also the names `drain` returns.
const OPS: [(&str, Op); 4] = [
    ("read", Op::Read),
    ("write", Op::Write),
    ("trim", Op::Trim),
    ("flush", Op::Flush),
];
const ALLOWED_OPS: &str = "'read', 'write', 'trim', 'flush'";

fn op_name(op: Op) -> &'static str {
    OPS[op_code(op) as usize].0
}

fn op_code(op: Op) -> u8 {
    match op {
        Op::Read => 0,
        Op::Write => 1,
        Op::Trim => 2,
        Op::Flush => 3,
    }
}

enum Slot {
    Open(Box<Device>),
    Closed,
    /// A panic inside the model: the state can no longer be trusted.
    Broken(String),
}

/// What went wrong in a call, turned into a Python exception once the GIL is held again.
enum Failure {
    Core(Error),
    Closed,
    Broken(String),
    Panic(String),
}

impl From<Error> for Failure {
    fn from(e: Error) -> Self {
        Failure::Core(e)
    }
}

impl Failure {
    fn into_py(self) -> PyErr {
        match self {
            Failure::Core(e) => to_py(e),
            Failure::Closed => SsdkitError::new_err(
                "this Device is closed (close() or the end of its `with` block); create a new one",
            ),
            Failure::Broken(m) => SimulationError::new_err(format!(
                "this Device is unusable after an internal error: {m}"
            )),
            Failure::Panic(m) => SimulationError::new_err(format!(
                "internal error: {m}; this Device is now unusable"
            )),
        }
    }
}

fn panic_message(payload: Box<dyn std::any::Any + Send>) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into())
}

/// One request as the host gave it, after the integer conversions.
#[derive(Clone, Copy)]
struct Req {
    at_ps: u64,
    op: Op,
    offset: u64,
    bytes: u64,
    queue: u64,
}

/// The checks of `Device::submit`, with times in nanoseconds in the messages: the request must
/// not be before `earliest`: the clock, or the previous request of a batch (time, description).
/// The address space requests must fit: logical capacity and sector size, in bytes.
#[derive(Clone, Copy)]
struct Space {
    capacity: u64,
    sector: u64,
}

fn check(
    r: &Req,
    earliest: (u64, &dyn Fn() -> String),
    space: Space,
    queues: u32,
) -> Result<(), String> {
    let Space { capacity, sector } = space;
    let (earliest_ps, what) = earliest;
    let queues_n = u64::from(queues);
    if r.at_ps < earliest_ps {
        return Err(format!(
            "time {} ns is before {} {} ns: requests are accepted in non-decreasing time",
            r.at_ps / PS_PER_NS,
            what(),
            fmt_ns(earliest_ps)
        ));
    }
    if r.queue >= queues_n {
        if queues == 0 {
            return Err(format!(
                "queue {} does not exist: the configuration has no queue pair (one per [[flow]])",
                r.queue
            ));
        }
        return Err(format!(
            "queue {} does not exist: the configuration has {queues} queue pair(s), 0..={} (one per [[flow]])",
            r.queue,
            queues - 1
        ));
    }
    if r.op == Op::Flush {
        if r.offset != 0 || r.bytes != 0 {
            return Err(format!(
                "a flush takes no range: offset {} and bytes {} must be 0",
                r.offset, r.bytes
            ));
        }
        return Ok(());
    }
    if !r.offset.is_multiple_of(sector) || !r.bytes.is_multiple_of(sector) {
        return Err(format!(
            "offset {} and size {} bytes must be multiples of the {sector}-byte sector (`interface.sector_bytes`)",
            r.offset, r.bytes
        ));
    }
    let max_bytes = u32::MAX as u64 * sector;
    if r.bytes == 0 || r.bytes > max_bytes {
        return Err(format!(
            "size {} bytes is outside {sector}..={max_bytes} (whole sectors)",
            r.bytes
        ));
    }
    if r.offset
        .checked_add(r.bytes)
        .is_none_or(|end| end > capacity)
    {
        return Err(format!(
            "range {}+{} bytes goes past the device's logical capacity of {capacity} bytes",
            r.offset, r.bytes
        ));
    }
    Ok(())
}

fn fmt_ns(ps: u64) -> String {
    if ps.is_multiple_of(PS_PER_NS) {
        (ps / PS_PER_NS).to_string()
    } else {
        format!("{}.{:03}", ps / PS_PER_NS, ps % PS_PER_NS)
    }
}

/// A time argument in nanoseconds, as picoseconds. One beyond 64 bits is beyond the clock
/// too: its message names the clock's limit (`MAX_NS`), not u64's.
fn time_arg(v: &Bound<'_, PyAny>, what: &str) -> PyResult<u64> {
    let ns = uint_arg_or(v, what, |w, shown| {
        RequestError::new_err(time_too_large(w, shown))
    })?;
    ns_to_ps(ns, what).map_err(RequestError::new_err)
}

fn time_too_large(what: &str, shown: &str) -> String {
    format!(
        "`{what}` is {shown} ns: too large (at most {MAX_NS} ns: the clock counts u64 picoseconds, about 213 days)"
    )
}

/// A non-negative integer argument (an int or anything with `__index__`, not a bool).
fn uint_arg(v: &Bound<'_, PyAny>, what: &str) -> PyResult<u64> {
    uint_arg_or(v, what, too_large)
}

/// `uint_arg` with the error for a value beyond u64 made by `too_large(what, shown)`.
fn uint_arg_or(
    v: &Bound<'_, PyAny>,
    what: &str,
    too_large: impl Fn(&str, &str) -> PyErr,
) -> PyResult<u64> {
    if v.is_instance_of::<PyBool>() {
        return Err(PyTypeError::new_err(format!(
            "`{what}` must be an int, not bool"
        )));
    }
    match v.extract::<i128>() {
        Ok(i) if i < 0 => Err(RequestError::new_err(format!(
            "`{what}` is {i}: must be >= 0"
        ))),
        Ok(i) => u64::try_from(i).map_err(|_| too_large(what, &i.to_string())),
        Err(e) if e.is_instance_of::<PyOverflowError>(v.py()) => {
            let shown = v.str().map(|s| s.to_string()).unwrap_or_default();
            if v.lt(0)? {
                Err(RequestError::new_err(format!(
                    "`{what}` is {shown}: must be >= 0"
                )))
            } else {
                Err(too_large(what, &shown))
            }
        }
        Err(_) => Err(PyTypeError::new_err(format!(
            "`{what}` must be an int, not {}",
            v.get_type()
                .name()
                .map(|n| n.to_string())
                .unwrap_or_else(|_| "?".into())
        ))),
    }
}

fn too_large(what: &str, shown: &str) -> PyErr {
    RequestError::new_err(format!(
        "`{what}` is {shown}: too large (at most {})",
        u64::MAX
    ))
}

fn ns_to_ps(ns: u64, what: &str) -> Result<u64, String> {
    if ns > MAX_NS {
        return Err(time_too_large(what, &ns.to_string()));
    }
    Ok(ns * PS_PER_NS)
}

fn op_arg(v: &Bound<'_, PyAny>) -> PyResult<Op> {
    let Ok(s) = v.downcast::<PyString>() else {
        return Err(PyTypeError::new_err(format!(
            "`op` must be a str ({ALLOWED_OPS}), not {}",
            v.get_type()
                .name()
                .map(|n| n.to_string())
                .unwrap_or_else(|_| "?".into())
        )));
    };
    let s = s.to_cow()?;
    OPS.iter()
        .find(|(name, _)| *name == s)
        .map(|&(_, op)| op)
        .ok_or_else(|| {
            let head: String = s.chars().take(40).collect();
            let more = if head.len() < s.len() { "..." } else { "" };
            RequestError::new_err(format!(
                "unknown op '{}{more}': allowed values are {ALLOWED_OPS}",
                head.escape_debug()
            ))
        })
}

/// A column of native-endian 8-byte integers from `submit_many`.
fn column(b: &[u8], n: usize, what: &str) -> PyResult<Vec<i64>> {
    if b.len() != n * 8 {
        return Err(PyTypeError::new_err(format!(
            "`{what}`: expected {n} int64 values ({} bytes), got {} bytes",
            n * 8,
            b.len()
        )));
    }
    Ok(b.chunks_exact(8)
        .map(|c| i64::from_ne_bytes(c.try_into().expect("8-byte chunk")))
        .collect())
}

/// The columns of completion records as native-endian buffers (numpy reads them with
/// `frombuffer`, without a Python loop): `id`, `queue`, `submit_ns`, `complete_ns`,
/// `latency_ns`, `offset_bytes`, `bytes` as int64, `submit_ps`, `complete_ps` as uint64, `op`
/// as uint8 codes (0 read, 1 write, 2 trim, 3 flush).
/// One native-endian 64-bit column of `rows`, as the log columns hand them to Python.
pub(crate) fn u64_column<'py, T>(
    py: Python<'py>,
    rows: &[T],
    get: impl Fn(&T) -> u64,
) -> PyResult<Bound<'py, PyByteArray>> {
    PyByteArray::new_with(py, rows.len() * 8, |out| {
        for (chunk, r) in out.chunks_exact_mut(8).zip(rows) {
            chunk.copy_from_slice(&get(r).to_ne_bytes());
        }
        Ok(())
    })
}

pub(crate) fn columns<'py>(
    py: Python<'py>,
    recs: &[CompletionRecord],
) -> PyResult<Bound<'py, PyDict>> {
    type Get = fn(&CompletionRecord) -> u64;
    let wide: [(&str, Get); 9] = [
        ("id", |r| r.id),
        ("queue", |r| r.flow as u64),
        ("offset_bytes", |r| r.offset_bytes),
        ("bytes", |r| r.bytes),
        ("submit_ns", |r| r.submit_ps / PS_PER_NS),
        ("complete_ns", |r| r.complete_ps / PS_PER_NS),
        ("latency_ns", |r| r.latency_ps() / PS_PER_NS),
        ("submit_ps", |r| r.submit_ps),
        ("complete_ps", |r| r.complete_ps),
    ];
    let d = PyDict::new(py);
    for (name, get) in wide {
        d.set_item(name, u64_column(py, recs, get)?)?;
    }
    let ops = PyByteArray::new_with(py, recs.len(), |out| {
        for (b, r) in out.iter_mut().zip(recs) {
            *b = op_code(r.op);
        }
        Ok(())
    })?;
    d.set_item("op", ops)?;
    // With `run.latency_breakdown`: each response-time step as `<step>_ps` (uint64).
    if recs.first().is_some_and(|r| r.steps.is_some()) {
        use ssdkit_core::{RESPONSE_STEPS, STEP_NAMES};
        for (k, name) in STEP_NAMES.iter().enumerate().take(RESPONSE_STEPS) {
            let buf = PyByteArray::new_with(py, recs.len() * 8, |out| {
                for (chunk, r) in out.chunks_exact_mut(8).zip(recs) {
                    let v = r.steps.as_ref().map_or(0, |s| s[k]);
                    chunk.copy_from_slice(&v.to_ne_bytes());
                }
                Ok(())
            })?;
            d.set_item(format!("{name}_ps"), buf)?;
        }
    }
    Ok(d)
}

/// A device a Python program drives one request at a time. Use `ssdkit.Device`, which wraps
/// this class.
#[pyclass(frozen, module = "ssdkit._native", name = "Device")]
pub struct PyDevice {
    slot: Mutex<Slot>,
    capacity_bytes: u64,
    sector_bytes: u64,
    queues: u32,
}

impl PyDevice {
    fn space(&self) -> Space {
        Space {
            capacity: self.capacity_bytes,
            sector: self.sector_bytes,
        }
    }
    /// Runs `f` on the open device without the GIL, a panic caught.
    fn with<T: Send>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&mut Device) -> Result<T, Failure> + Send,
    ) -> PyResult<T> {
        py.allow_threads(|| {
            let mut slot = self.slot.lock().unwrap_or_else(|p| p.into_inner());
            let dev = match &mut *slot {
                Slot::Open(d) => d,
                Slot::Closed => return Err(Failure::Closed),
                Slot::Broken(m) => return Err(Failure::Broken(m.clone())),
            };
            match catch_unwind(AssertUnwindSafe(|| f(dev))) {
                Ok(r) => r,
                Err(payload) => {
                    let m = panic_message(payload);
                    *slot = Slot::Broken(m.clone());
                    Err(Failure::Panic(m))
                }
            }
        })
        .map_err(Failure::into_py)
    }
}

#[pymethods]
impl PyDevice {
    /// Builds (preconditions, or loads from `snapshot`) the configured device. Exactly one of
    /// `toml_text` and `preset` must be given.
    #[new]
    #[pyo3(signature = (toml_text=None, origin="<string>".to_string(), preset=None, overrides=Vec::new(), snapshot=None, queues=None))]
    fn new(
        py: Python<'_>,
        toml_text: Option<String>,
        origin: String,
        preset: Option<String>,
        overrides: Vec<String>,
        snapshot: Option<std::path::PathBuf>,
        queues: Option<u32>,
    ) -> PyResult<Self> {
        let src = source(&toml_text, &origin, &preset)?;
        let dev = crate::guarded(py, || {
            let mut cfg = api::load(src, &overrides)?;
            if let Some(n) = queues {
                cfg = Device::widened(&cfg, n)?;
            }
            match &snapshot {
                Some(path) => Device::from_snapshot(&cfg, path),
                None => Device::new(&cfg),
            }
        })?;
        Ok(Self {
            capacity_bytes: dev.capacity_bytes(),
            sector_bytes: dev.sector_bytes(),
            queues: dev.queues(),
            slot: Mutex::new(Slot::Open(Box::new(dev))),
        })
    }

    /// Logical capacity in bytes (also after `close`).
    #[getter]
    fn capacity_bytes(&self) -> u64 {
        self.capacity_bytes
    }

    /// Bytes per logical sector: offsets and sizes are multiples of it (also after `close`).
    #[getter]
    fn sector_bytes(&self) -> u64 {
        self.sector_bytes
    }

    /// Queue pairs: one per configured flow (also after `close`).
    #[getter]
    fn queues(&self) -> u32 {
        self.queues
    }

    /// True once `close` was called.
    #[getter]
    fn closed(&self) -> bool {
        // A call running in another thread holds the lock: the device is open then.
        match self.slot.try_lock() {
            Ok(slot) => matches!(*slot, Slot::Closed),
            Err(std::sync::TryLockError::Poisoned(p)) => matches!(*p.into_inner(), Slot::Closed),
            Err(std::sync::TryLockError::WouldBlock) => false,
        }
    }

    /// Queues a request at `time_ns` on queue pair `queue`; returns its id.
    #[pyo3(signature = (time_ns, op, offset_bytes, nbytes, queue=None))]
    fn submit(
        &self,
        py: Python<'_>,
        time_ns: &Bound<'_, PyAny>,
        op: &Bound<'_, PyAny>,
        offset_bytes: &Bound<'_, PyAny>,
        nbytes: &Bound<'_, PyAny>,
        queue: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<u64> {
        let at_ps = time_arg(time_ns, "time_ns")?;
        let op = op_arg(op)?;
        let offset = uint_arg(offset_bytes, "offset_bytes")?;
        let bytes = uint_arg(nbytes, "nbytes")?;
        let queue = match queue {
            None => 0,
            Some(q) => uint_arg(q, "queue")?,
        };
        let r = Req {
            at_ps,
            op,
            offset,
            bytes,
            queue,
        };
        let (cap, queues) = (self.space(), self.queues);
        self.with(py, move |dev| {
            let now = || "the device's current time".to_string();
            check(&r, (dev.now_ps(), &now), cap, queues).map_err(Error::Request)?;
            Ok(dev.submit(r.at_ps, r.op, r.offset, r.bytes, r.queue as u32)?)
        })
    }

    /// Submits requests given as equally long columns of native-endian int64 values (op codes
    /// 0 read, 1 write, 2 trim, 3 flush), in order; returns the first id (the ids are
    /// consecutive; None for an empty batch). Every request is checked first: a bad one
    /// refuses the whole batch, naming its index.
    fn submit_many(
        &self,
        py: Python<'_>,
        time_ns: &[u8],
        ops: &[u8],
        offset_bytes: &[u8],
        nbytes: &[u8],
        queues: &[u8],
    ) -> PyResult<Option<u64>> {
        let n = time_ns.len() / 8;
        let cols = [
            column(time_ns, n, "time_ns")?,
            column(ops, n, "ops")?,
            column(offset_bytes, n, "offset_bytes")?,
            column(nbytes, n, "nbytes")?,
            column(queues, n, "queues")?,
        ];
        let (cap, nq) = (self.space(), self.queues);
        self.with(py, move |dev| {
            // The first bad request, in order, refuses the batch before anything is submitted.
            let mut reqs = Vec::with_capacity(n);
            let now = dev.now_ps();
            for i in 0..n {
                let earliest = reqs.last().map_or(now, |r: &Req| r.at_ps);
                let r = batch_request(&cols, i, earliest, cap, nq).map_err(|m| {
                    Error::Request(format!(
                        "request {i} of the batch: {m}; nothing was submitted"
                    ))
                })?;
                reqs.push(r);
            }
            let mut first = None;
            for (i, r) in reqs.iter().enumerate() {
                let id = dev
                    .submit(r.at_ps, r.op, r.offset, r.bytes, r.queue as u32)
                    .map_err(|e| {
                        let done = match first {
                            Some(f) => format!("requests 0..{i} were submitted (ids {f}..)"),
                            None => "nothing was submitted".into(),
                        };
                        prefixed(e, &format!("request {i} of the batch: "), &done)
                    })?;
                first.get_or_insert(id);
            }
            Ok(first)
        })
    }

    /// Processes every event up to and including `time_ns`; the clock is then `time_ns`.
    fn run_until(&self, py: Python<'_>, time_ns: &Bound<'_, PyAny>) -> PyResult<()> {
        let t_ps = time_arg(time_ns, "time_ns")?;
        let t = t_ps / PS_PER_NS;
        self.with(py, move |dev| {
            if t_ps < dev.now_ps() {
                return Err(Error::Request(format!(
                    "run_until({t} ns) is before the device's current time {} ns: time only moves forward",
                    fmt_ns(dev.now_ps())
                ))
                .into());
            }
            Ok(dev.run_until(t_ps)?)
        })
    }

    /// Runs until every submitted request has completed; the clock then moves up to the next
    /// whole nanosecond (nothing happens meanwhile: no event is left).
    fn run_to_idle(&self, py: Python<'_>) -> PyResult<()> {
        self.with(py, |dev| {
            dev.run_to_idle()?;
            let now = dev.now_ps();
            if let Some(up) = now.div_ceil(PS_PER_NS).checked_mul(PS_PER_NS) {
                if up > now {
                    dev.run_until(up)?;
                }
            }
            Ok(())
        })
    }

    /// Current simulated time in picoseconds.
    fn now_ps(&self, py: Python<'_>) -> PyResult<u64> {
        self.with(py, |dev| Ok(dev.now_ps()))
    }

    /// Current simulated time in nanoseconds (floor; whole between calls, see the module doc).
    fn now_ns(&self, py: Python<'_>) -> PyResult<u64> {
        self.with(py, |dev| Ok(dev.now_ps() / PS_PER_NS))
    }

    /// Time of the earliest pending event in picoseconds, None when nothing is scheduled.
    fn next_event_ps(&self, py: Python<'_>) -> PyResult<Option<u64>> {
        self.with(py, |dev| Ok(dev.next_event_ps()))
    }

    /// Time of the earliest pending event in nanoseconds, rounded up so that `run_until` of it
    /// processes the event; None when nothing is scheduled.
    fn next_event_ns(&self, py: Python<'_>) -> PyResult<Option<u64>> {
        self.with(py, |dev| {
            Ok(dev.next_event_ps().map(|t| t.div_ceil(PS_PER_NS)))
        })
    }

    /// Requests submitted and not yet completed.
    fn outstanding(&self, py: Python<'_>) -> PyResult<u64> {
        self.with(py, |dev| Ok(dev.outstanding()))
    }

    /// The requests completed since the last drain, in completion order, as tuples
    /// `(id, queue, op, offset_bytes, bytes, submit_ns, complete_ns, latency_ns)`.
    fn drain<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let recs = self.with(py, |dev| Ok(dev.drain()))?;
        let items = recs
            .iter()
            .map(|r| {
                PyTuple::new(
                    py,
                    [
                        r.id.into_pyobject(py)?.into_any(),
                        r.flow.into_pyobject(py)?.into_any(),
                        PyString::intern(py, op_name(r.op)).into_any(),
                        r.offset_bytes.into_pyobject(py)?.into_any(),
                        r.bytes.into_pyobject(py)?.into_any(),
                        (r.submit_ps / PS_PER_NS).into_pyobject(py)?.into_any(),
                        (r.complete_ps / PS_PER_NS).into_pyobject(py)?.into_any(),
                        (r.latency_ps() / PS_PER_NS).into_pyobject(py)?.into_any(),
                    ],
                )
            })
            .collect::<PyResult<Vec<_>>>()?;
        PyList::new(py, items)
    }

    /// Like `drain`, as columns of native-endian buffers (see `columns`).
    fn drain_columns<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let recs = self.with(py, |dev| Ok(dev.drain()))?;
        columns(py, &recs)
    }

    /// The result document of everything so far, as JSON text.
    fn result_json(&self, py: Python<'_>) -> PyResult<String> {
        self.with(py, |dev| {
            serde_json::to_string(&dev.result())
                .map_err(|e| Error::Simulation(format!("result serialisation: {e}")).into())
        })
    }

    /// Frees the device; later calls raise `SsdkitError`. Closing twice is allowed.
    fn close(&self, py: Python<'_>) {
        py.allow_threads(|| {
            let mut slot = self.slot.lock().unwrap_or_else(|p| p.into_inner());
            let old = std::mem::replace(&mut *slot, Slot::Closed);
            drop(slot);
            drop(old);
        });
    }
}

/// Request `i` of the columns of `submit_many`, checked; `earliest` is the previous request's
/// time (the clock for the first).
fn batch_request(
    cols: &[Vec<i64>; 5],
    i: usize,
    earliest: u64,
    space: Space,
    queues: u32,
) -> Result<Req, String> {
    const NAMES: [&str; 5] = ["time_ns", "ops", "offset_bytes", "nbytes", "queues"];
    let code = cols[1][i];
    let op = usize::try_from(code)
        .ok()
        .and_then(|c| OPS.get(c))
        .map(|&(_, op)| op)
        .ok_or_else(|| {
            format!("op code {code} is not one of 0 (read), 1 (write), 2 (trim), 3 (flush)")
        })?;
    let mut v = [0u64; 5];
    for (k, col) in cols.iter().enumerate() {
        v[k] = u64::try_from(col[i])
            .map_err(|_| format!("`{}` is {}: must be >= 0", NAMES[k], col[i]))?;
    }
    let r = Req {
        at_ps: ns_to_ps(v[0], "time_ns")?,
        op,
        offset: v[2],
        bytes: v[3],
        queue: v[4],
    };
    let clock = || "the device's current time".to_string();
    let previous = || format!("request {}'s time", i - 1);
    let what: &dyn Fn() -> String = if i == 0 { &clock } else { &previous };
    check(&r, (earliest, what), space, queues)?;
    Ok(r)
}

/// `e` with its message prefixed and suffixed, its kind kept.
fn prefixed(e: Error, pre: &str, post: &str) -> Error {
    let wrap = |m: String| format!("{pre}{m}; {post}");
    match e {
        Error::Config(m) => Error::Config(wrap(m)),
        Error::Preset(m) => Error::Preset(wrap(m)),
        Error::Io(m) => Error::Io(wrap(m)),
        Error::Simulation(m) => Error::Simulation(wrap(m)),
        Error::Trace(m) => Error::Trace(wrap(m)),
        Error::Request(m) => Error::Request(wrap(m)),
        Error::Interrupted(m) => Error::Interrupted(wrap(m)),
    }
}
