//! C ABI of the step-by-step [`ssdkit_core::device::Device`]: `libssdkit.so` and the header
//! `include/ssdkit.h`, which cbindgen generates from this file (see `build.rs`). The doc
//! comments below are copied into the header: they are written for C programmers.
//!
//! The rules every function keeps:
//! - It returns a status, `SSDKIT_OK` (0) or an `SSDKIT_ERR_*` code, except the few that cannot
//!   fail (`ssdkit_device_free`, `ssdkit_string_free`, `ssdkit_last_error`).
//! - On failure, `ssdkit_last_error()` gives a message saying what went wrong and outputs are
//!   set to their empty value (NULL, 0). A refused argument or request changes nothing; only
//!   `SSDKIT_ERR_SIMULATION` (a model failure while events were processed) and
//!   `SSDKIT_ERR_PANIC` happen part-way.
//! - No Rust panic crosses the boundary: one is caught and reported as `SSDKIT_ERR_PANIC`, and
//!   the device it happened in refuses every later call except `ssdkit_device_free`.
//! - NULL pointers, strings that are not UTF-8 and unknown ops are `SSDKIT_ERR_INVALID_ARGUMENT`.
//! - Times cross the boundary in nanoseconds (the simulator counts picoseconds: a time in ns
//!   must be below 2^64 / 1000, or the call fails with `SSDKIT_ERR_REQUEST`). Completion times
//!   are also given in exact picoseconds; the clock is on a whole nanosecond between calls.
//!
//! Not thread-safe: one device must not be used by two threads at the same time (different
//! devices may be used in parallel).

use ssdkit_core::api::{load, Source};
use ssdkit_core::device::{Completion, Device};
use ssdkit_core::Error;
use ssdkit_core::Op;
use std::cell::RefCell;
use std::collections::VecDeque;
use std::ffi::{CStr, CString};
use std::os::raw::{c_char, c_int};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;

/// Success.
pub const SSDKIT_OK: c_int = 0;
/// A bad configuration or override: the message names the key and the allowed values.
pub const SSDKIT_ERR_CONFIG: c_int = 1;
/// An unknown preset name: the message lists the available ones.
pub const SSDKIT_ERR_PRESET: c_int = 2;
/// A file (the snapshot) that cannot be read or is not a valid snapshot for this device.
pub const SSDKIT_ERR_IO: c_int = 3;
/// A trace file that cannot be read or has a bad line.
pub const SSDKIT_ERR_TRACE: c_int = 4;
/// The model reached a state it cannot leave (reported instead of hanging).
pub const SSDKIT_ERR_SIMULATION: c_int = 5;
/// A request or time the device cannot take: a time in the past or beyond the simulator's
/// range, a misaligned offset or size, a range outside the device, an unknown queue.
pub const SSDKIT_ERR_REQUEST: c_int = 6;
/// A NULL pointer, a string that is not UTF-8, an unknown op or a bad combination of arguments.
pub const SSDKIT_ERR_INVALID_ARGUMENT: c_int = 7;
/// A bug in ssdkit (a Rust panic, caught): the device is unusable, free it.
pub const SSDKIT_ERR_PANIC: c_int = 8;

/// Read `bytes` at `offset_bytes`.
pub const SSDKIT_OP_READ: c_int = 0;
/// Write `bytes` at `offset_bytes`.
pub const SSDKIT_OP_WRITE: c_int = 1;
/// Deallocate (NVMe Dataset Management, TRIM) the whole logical pages of the range.
pub const SSDKIT_OP_TRIM: c_int = 2;
/// NVMe Flush: takes no range (`offset_bytes` and `bytes` 0).
pub const SSDKIT_OP_FLUSH: c_int = 3;

/// The default logical sector in bytes (`interface.sector_bytes`); a device configured with
/// another reports its own with `ssdkit_sector_bytes`. Offsets and sizes are multiples of it.
pub const SSDKIT_SECTOR_BYTES: u64 = 512;

/// A simulated SSD (opaque): create it with `ssdkit_device_new`, free it with
/// `ssdkit_device_free`.
pub struct SsdkitDevice {
    dev: Device,
    /// Completions taken from the device and not yet handed out (a drain with a small buffer
    /// leaves the rest here, in completion order).
    pending: VecDeque<Completion>,
    scratch: Vec<Completion>,
    /// Set while a call runs; left set by a panic, after which the device refuses calls.
    busy: bool,
}

/// One finished request, as `ssdkit_drain` copies it out.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SsdkitCompletion {
    /// The id `ssdkit_submit` returned (0, 1, ... in submission order).
    pub id: u64,
    /// The queue pair it was submitted on.
    pub queue: u32,
    /// `SSDKIT_OP_READ`, `_WRITE`, `_TRIM` or `_FLUSH`.
    pub op: i32,
    pub offset_bytes: u64,
    pub bytes: u64,
    /// Submission time in ns (the picoseconds below divided by 1000, rounded down).
    pub submit_ns: u64,
    /// Completion time in ns (rounded down).
    pub complete_ns: u64,
    /// Submission time in picoseconds, exact.
    pub submit_ps: u64,
    /// Completion time in picoseconds, exact: the latency is `complete_ps - submit_ps`.
    pub complete_ps: u64,
}

impl From<&Completion> for SsdkitCompletion {
    fn from(c: &Completion) -> Self {
        SsdkitCompletion {
            id: c.id,
            queue: c.flow,
            op: op_code(c.op),
            offset_bytes: c.offset_bytes,
            bytes: c.bytes,
            submit_ns: c.submit_ps / 1000,
            complete_ns: c.complete_ps / 1000,
            submit_ps: c.submit_ps,
            complete_ps: c.complete_ps,
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Errors, panics and arguments.

thread_local! {
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::default());
}

/// Why a call failed: its status code and message.
struct Failure {
    code: c_int,
    message: String,
}

fn invalid(message: impl Into<String>) -> Failure {
    Failure {
        code: SSDKIT_ERR_INVALID_ARGUMENT,
        message: message.into(),
    }
}

impl From<Error> for Failure {
    fn from(e: Error) -> Self {
        let code = match e {
            Error::Config(_) => SSDKIT_ERR_CONFIG,
            Error::Preset(_) => SSDKIT_ERR_PRESET,
            Error::Io(_) => SSDKIT_ERR_IO,
            Error::Trace(_) => SSDKIT_ERR_TRACE,
            Error::Simulation(_) => SSDKIT_ERR_SIMULATION,
            Error::Request(_) => SSDKIT_ERR_REQUEST,
            // Only a batch run's progress hook or log sink raises it; the C API drives a
            // device step by step and has neither.
            Error::Interrupted(_) => SSDKIT_ERR_SIMULATION,
        };
        Failure {
            code,
            message: e.to_string(),
        }
    }
}

fn set_last_error(message: String) {
    // A C string cannot hold NUL: drop any (messages quote user input).
    let c = CString::new(message.replace('\0', "")).unwrap_or_default();
    // `try_with`/`try_borrow_mut`: never panic, not even while the thread is exiting.
    let _ = LAST_ERROR.try_with(|e| {
        if let Ok(mut e) = e.try_borrow_mut() {
            *e = c;
        }
    });
}

fn panic_message(payload: &(dyn std::any::Any + Send)) -> &str {
    if let Some(s) = payload.downcast_ref::<&str>() {
        s
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s
    } else {
        "(no message)"
    }
}

/// Runs the body of the C function `name`: its failure or panic becomes a status code and the
/// thread's last error message.
fn guard(name: &str, body: impl FnOnce() -> Result<(), Failure>) -> c_int {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(())) => SSDKIT_OK,
        Ok(Err(f)) => {
            set_last_error(format!("{name}: {}", f.message));
            f.code
        }
        Err(payload) => {
            set_last_error(format!(
                "{name}: internal error (a bug in ssdkit, please report it): {}",
                panic_message(payload.as_ref())
            ));
            SSDKIT_ERR_PANIC
        }
    }
}

/// The device behind `dev` for one call; a device a panic left half-updated is refused.
///
/// # Safety
/// `dev` is NULL or a pointer `ssdkit_device_new` returned and not yet freed, used by no other
/// thread meanwhile.
unsafe fn with_device<T>(
    dev: *mut SsdkitDevice,
    f: impl FnOnce(&mut SsdkitDevice) -> Result<T, Failure>,
) -> Result<T, Failure> {
    // SAFETY: the caller's promise.
    let d = unsafe { dev.as_mut() }.ok_or_else(|| invalid("dev is NULL"))?;
    if d.busy {
        return Err(Failure {
            code: SSDKIT_ERR_PANIC,
            message: "the device is unusable after an internal error in an earlier call; free it"
                .into(),
        });
    }
    d.busy = true;
    let r = f(d);
    d.busy = false;
    r
}

/// Writes `value` to the output `out`, which must not be NULL.
///
/// # Safety
/// `out` is NULL or valid for a write of a `T`.
unsafe fn put<T>(out: *mut T, name: &str, value: T) -> Result<(), Failure> {
    if out.is_null() {
        return Err(invalid(format!("{name} is NULL")));
    }
    // SAFETY: not NULL, and valid by the caller's promise; `write` drops no old value.
    unsafe { out.write(value) };
    Ok(())
}

/// The UTF-8 string at `p`, or None for NULL.
///
/// # Safety
/// `p` is NULL or points to a NUL-terminated string.
unsafe fn opt_str<'a>(p: *const c_char, name: &str) -> Result<Option<&'a str>, Failure> {
    if p.is_null() {
        return Ok(None);
    }
    // SAFETY: the caller's promise.
    let s = unsafe { CStr::from_ptr(p) };
    s.to_str()
        .map(Some)
        .map_err(|e| invalid(format!("{name} is not valid UTF-8 ({e})")))
}

fn op_from_code(op: c_int) -> Result<Op, Failure> {
    match op {
        SSDKIT_OP_READ => Ok(Op::Read),
        SSDKIT_OP_WRITE => Ok(Op::Write),
        SSDKIT_OP_TRIM => Ok(Op::Trim),
        SSDKIT_OP_FLUSH => Ok(Op::Flush),
        _ => Err(invalid(format!(
            "unknown op {op}: SSDKIT_OP_READ (0), SSDKIT_OP_WRITE (1), SSDKIT_OP_TRIM (2) or SSDKIT_OP_FLUSH (3)"
        ))),
    }
}

fn op_code(op: Op) -> c_int {
    match op {
        Op::Read => SSDKIT_OP_READ,
        Op::Write => SSDKIT_OP_WRITE,
        Op::Trim => SSDKIT_OP_TRIM,
        Op::Flush => SSDKIT_OP_FLUSH,
    }
}

/// Nanoseconds to the simulator's picoseconds; a time beyond its range is a request error.
fn ns_to_ps(ns: u64, name: &str) -> Result<u64, Failure> {
    ns.checked_mul(1000).ok_or_else(|| Failure {
        code: SSDKIT_ERR_REQUEST,
        message: format!(
            "{name} {ns} ns is beyond the simulator's range: it counts picoseconds in 64 bits, so times are at most {} ns",
            u64::MAX / 1000
        ),
    })
}

// ---------------------------------------------------------------------------------------------
// The API.

/// Creates a device, preconditioned as its configuration says (or loaded from a snapshot),
/// and stores it in `*out` (NULL on failure).
///
/// The configuration is a built-in preset (`preset`, e.g. "mqsim-paper") or TOML text
/// (`toml_text`, the format of `ssdkit presets show mqsim-paper`): exactly one of the two is
/// not NULL. `overrides` is an array of `n_overrides` strings "key=value" applied on top (as
/// `ssdkit run --set key=value`, e.g. "flash.blocks_per_plane=128"); it may be NULL when
/// `n_overrides` is 0. Each configured `[[flow]]` is one queue pair (queues 0 .. n-1); its
/// workload keys are not used. `snapshot_path`, if not NULL, is a file written by `ssdkit
/// precondition` to load the device's state from instead of preconditioning.
///
/// Errors: `SSDKIT_ERR_CONFIG` (a bad key or value), `SSDKIT_ERR_PRESET` (an unknown preset),
/// `SSDKIT_ERR_IO` (a snapshot that cannot be read or does not match the configuration),
/// `SSDKIT_ERR_INVALID_ARGUMENT` (NULL `out`, both or neither of `preset` and `toml_text`, a
/// NULL override, a string that is not UTF-8).
///
/// # Safety
/// Each string is NULL or NUL-terminated; `overrides` points to `n_overrides` string pointers
/// (or is NULL); `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ssdkit_device_new(
    preset: *const c_char,
    toml_text: *const c_char,
    overrides: *const *const c_char,
    n_overrides: usize,
    snapshot_path: *const c_char,
    out: *mut *mut SsdkitDevice,
) -> c_int {
    guard("ssdkit_device_new", || {
        // SAFETY (all blocks below): the caller's promises above.
        unsafe { put(out, "out", std::ptr::null_mut())? };
        let preset = unsafe { opt_str(preset, "preset")? };
        let toml_text = unsafe { opt_str(toml_text, "toml_text")? };
        let snapshot = unsafe { opt_str(snapshot_path, "snapshot_path")? };
        if overrides.is_null() && n_overrides > 0 {
            return Err(invalid(format!(
                "overrides is NULL but n_overrides is {n_overrides}"
            )));
        }
        let mut list = Vec::with_capacity(n_overrides);
        for i in 0..n_overrides {
            let p = unsafe { *overrides.add(i) };
            let name = format!("overrides[{i}]");
            match unsafe { opt_str(p, &name)? } {
                Some(s) => list.push(s.to_owned()),
                None => return Err(invalid(format!("{name} is NULL"))),
            }
        }
        let source = match (preset, toml_text) {
            (Some(name), None) => Source::Preset(name),
            (None, Some(text)) => Source::Toml {
                text,
                origin: "toml_text",
            },
            (None, None) => {
                return Err(invalid(
                    "preset and toml_text are both NULL: give one (a preset name, e.g. \"mqsim-paper\", or TOML text)",
                ))
            }
            (Some(_), Some(_)) => {
                return Err(invalid(
                    "preset and toml_text are both given: give one of them, the other NULL",
                ))
            }
        };
        let config = load(source, &list)?;
        let dev = match snapshot {
            Some(path) => Device::from_snapshot(&config, Path::new(path))?,
            None => Device::new(&config)?,
        };
        let boxed = Box::new(SsdkitDevice {
            dev,
            pending: VecDeque::new(),
            scratch: Vec::new(),
            busy: false,
        });
        unsafe { put(out, "out", Box::into_raw(boxed)) }
    })
}

/// Frees a device (NULL is ignored). The pointer must not be used afterwards.
///
/// # Safety
/// `dev` is NULL or a pointer `ssdkit_device_new` returned and not yet freed.
#[no_mangle]
pub unsafe extern "C" fn ssdkit_device_free(dev: *mut SsdkitDevice) {
    if dev.is_null() {
        return;
    }
    guard("ssdkit_device_free", || {
        // SAFETY: the caller's promise: the box `ssdkit_device_new` made, freed once.
        drop(unsafe { Box::from_raw(dev) });
        Ok(())
    });
}

/// Queues a request at `time_ns` on queue pair `queue` and stores its id (0, 1, ... in
/// submission order) in `*id_out` (which may be NULL). Every event before `time_ns` is
/// processed first; times never go backwards: `time_ns` must not be before the last
/// submission nor the device's current time (`ssdkit_now_ns`).
///
/// `op` is one of `SSDKIT_OP_*`; `offset_bytes` and `bytes` are multiples of the device's
/// sector (`ssdkit_sector_bytes`, `SSDKIT_SECTOR_BYTES` unless configured) inside the device's capacity (`ssdkit_capacity_bytes`); a flush takes
/// 0 and 0. A queue holds at most `interface.io_queue_depth` requests: later ones wait in the
/// host, their latency counting from `time_ns`.
///
/// Errors: `SSDKIT_ERR_REQUEST` (the time, range or queue), `SSDKIT_ERR_INVALID_ARGUMENT`
/// (NULL `dev`, unknown `op`), `SSDKIT_ERR_SIMULATION`; a refused request changes nothing.
///
/// # Safety
/// `dev` is a live device (or NULL); `id_out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ssdkit_submit(
    dev: *mut SsdkitDevice,
    time_ns: u64,
    op: c_int,
    offset_bytes: u64,
    bytes: u64,
    queue: u32,
    id_out: *mut u64,
) -> c_int {
    guard("ssdkit_submit", || {
        if !id_out.is_null() {
            // SAFETY: writable by the caller's promise.
            unsafe { id_out.write(0) };
        }
        // SAFETY: the caller's promise.
        let id = unsafe {
            with_device(dev, |d| {
                let op = op_from_code(op)?;
                let at = ns_to_ps(time_ns, "time_ns")?;
                Ok(d.dev.submit(at, op, offset_bytes, bytes, queue)?)
            })?
        };
        if !id_out.is_null() {
            // SAFETY: as above.
            unsafe { id_out.write(id) };
        }
        Ok(())
    })
}

/// Processes every event up to and including `time_ns`; the device's clock is then `time_ns`.
///
/// Errors: `SSDKIT_ERR_REQUEST` (`time_ns` before the current time or beyond the simulator's
/// range),
/// `SSDKIT_ERR_SIMULATION`, `SSDKIT_ERR_INVALID_ARGUMENT` (NULL `dev`).
///
/// # Safety
/// `dev` is a live device (or NULL).
#[no_mangle]
pub unsafe extern "C" fn ssdkit_run_until(dev: *mut SsdkitDevice, time_ns: u64) -> c_int {
    guard("ssdkit_run_until", || {
        // SAFETY: the caller's promise.
        unsafe {
            with_device(dev, |d| {
                let t = ns_to_ps(time_ns, "time_ns")?;
                let now = d.dev.now_ps();
                if t < now {
                    return Err(Failure {
                        code: SSDKIT_ERR_REQUEST,
                        message: format!(
                            "time_ns {time_ns} ns is before the device's current time {} ns: time only moves forward",
                            now / 1000
                        ),
                    });
                }
                Ok(d.dev.run_until(t)?)
            })
        }
    })
}

/// Runs until every submitted request has completed (and garbage collection queued meanwhile
/// is done); the clock then moves up to the next whole nanosecond (nothing is left to happen),
/// so a submission at `ssdkit_now_ns` is accepted. A device that cannot finish is
/// `SSDKIT_ERR_SIMULATION`, naming its state.
///
/// # Safety
/// `dev` is a live device (or NULL).
#[no_mangle]
pub unsafe extern "C" fn ssdkit_run_to_idle(dev: *mut SsdkitDevice) -> c_int {
    guard("ssdkit_run_to_idle", || {
        // SAFETY: the caller's promise.
        unsafe {
            with_device(dev, |d| {
                d.dev.run_to_idle()?;
                // The last event may fall inside a nanosecond; every other call leaves the
                // clock on a whole one (times cross the boundary in ns).
                let now = d.dev.now_ps();
                if let Some(up) = now.div_ceil(1000).checked_mul(1000) {
                    d.dev.run_until(up)?;
                }
                Ok(())
            })
        }
    })
}

/// Copies up to `cap` of the requests completed and not yet drained into `buf`, in completion
/// order, and stores their number in `*n_out`. The rest stay for the next call: call again
/// until `*n_out < cap` to take them all. `buf` may be NULL when `cap` is 0.
///
/// # Safety
/// `dev` is a live device (or NULL); `buf` is writable for `cap` completions; `n_out` is NULL
/// or writable.
#[no_mangle]
pub unsafe extern "C" fn ssdkit_drain(
    dev: *mut SsdkitDevice,
    buf: *mut SsdkitCompletion,
    cap: usize,
    n_out: *mut usize,
) -> c_int {
    guard("ssdkit_drain", || {
        // SAFETY (all blocks here): the caller's promises.
        unsafe { put(n_out, "n_out", 0)? };
        if buf.is_null() && cap > 0 {
            return Err(invalid(format!("buf is NULL but cap is {cap}")));
        }
        let n = unsafe {
            with_device(dev, |d| {
                d.dev.drain_into(&mut d.scratch);
                d.pending.extend(d.scratch.drain(..));
                let n = cap.min(d.pending.len());
                for (i, c) in d.pending.drain(..n).enumerate() {
                    buf.add(i).write(SsdkitCompletion::from(&c));
                }
                Ok(n)
            })?
        };
        unsafe { put(n_out, "n_out", n) }
    })
}

/// Stores the device's current time in ns in `*ns_out`: the earliest time `ssdkit_submit` and
/// `ssdkit_run_until` accept. (Between calls the clock is always on a whole nanosecond.)
///
/// # Safety
/// `dev` is a live device (or NULL); `ns_out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ssdkit_now_ns(dev: *const SsdkitDevice, ns_out: *mut u64) -> c_int {
    guard("ssdkit_now_ns", || {
        // SAFETY: the caller's promises (the device is not changed, except its busy flag).
        unsafe {
            put(ns_out, "ns_out", 0)?;
            let v = with_device(dev.cast_mut(), |d| Ok(d.dev.now_ps() / 1000))?;
            put(ns_out, "ns_out", v)
        }
    })
}

/// Stores in `*ns_out` the time in ns of the earliest pending event (a completion, the end of
/// a flash operation, a controller timer), rounded up so that `ssdkit_run_until` of it
/// processes the event; `UINT64_MAX` when nothing is scheduled. A driver that follows the wall
/// clock sleeps until then, or until its next submission if that comes first.
///
/// # Safety
/// `dev` is a live device (or NULL); `ns_out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ssdkit_next_event_ns(dev: *const SsdkitDevice, ns_out: *mut u64) -> c_int {
    guard("ssdkit_next_event_ns", || {
        // SAFETY: the caller's promises (the device is not changed, except its busy flag).
        unsafe {
            put(ns_out, "ns_out", 0)?;
            let v = with_device(dev.cast_mut(), |d| {
                Ok(d.dev.next_event_ps().map_or(u64::MAX, |t| t.div_ceil(1000)))
            })?;
            put(ns_out, "ns_out", v)
        }
    })
}

/// Stores the number of requests submitted and not yet completed in `*n_out` (those waiting in
/// the host for room in their submission queue included).
///
/// # Safety
/// `dev` is a live device (or NULL); `n_out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ssdkit_outstanding(dev: *const SsdkitDevice, n_out: *mut u64) -> c_int {
    guard("ssdkit_outstanding", || {
        // SAFETY: the caller's promises (the device is not changed, except its busy flag).
        unsafe {
            put(n_out, "n_out", 0)?;
            let v = with_device(dev.cast_mut(), |d| Ok(d.dev.outstanding()))?;
            put(n_out, "n_out", v)
        }
    })
}

/// Stores the device's logical capacity in bytes in `*bytes_out`: requests stay inside it.
///
/// # Safety
/// `dev` is a live device (or NULL); `bytes_out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ssdkit_capacity_bytes(
    dev: *const SsdkitDevice,
    bytes_out: *mut u64,
) -> c_int {
    guard("ssdkit_capacity_bytes", || {
        // SAFETY: the caller's promises (the device is not changed, except its busy flag).
        unsafe {
            put(bytes_out, "bytes_out", 0)?;
            let v = with_device(dev.cast_mut(), |d| Ok(d.dev.capacity_bytes()))?;
            put(bytes_out, "bytes_out", v)
        }
    })
}

/// Stores the device's logical sector size in bytes (`interface.sector_bytes`) in
/// `*bytes_out`: offsets and sizes are multiples of it.
///
/// # Safety
/// `dev` is a live device (or NULL); `bytes_out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ssdkit_sector_bytes(
    dev: *const SsdkitDevice,
    bytes_out: *mut u64,
) -> c_int {
    guard("ssdkit_sector_bytes", || {
        // SAFETY: the caller's promises (the device is not changed, except its busy flag).
        unsafe {
            put(bytes_out, "bytes_out", 0)?;
            let v = with_device(dev.cast_mut(), |d| Ok(d.dev.sector_bytes()))?;
            put(bytes_out, "bytes_out", v)
        }
    })
}

/// Stores the number of queue pairs (the configuration's flows) in `*n_out`: queues are
/// 0 .. n-1.
///
/// # Safety
/// `dev` is a live device (or NULL); `n_out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ssdkit_queues(dev: *const SsdkitDevice, n_out: *mut u32) -> c_int {
    guard("ssdkit_queues", || {
        // SAFETY: the caller's promises (the device is not changed, except its busy flag).
        unsafe {
            put(n_out, "n_out", 0)?;
            let v = with_device(dev.cast_mut(), |d| Ok(d.dev.queues()))?;
            put(n_out, "n_out", v)
        }
    })
}

/// Stores the result document of everything so far (JSON, the format of `ssdkit run --json`,
/// per queue: the flows of the result) as a new NUL-terminated string in `*out` (NULL on
/// failure). Free it with `ssdkit_string_free`.
///
/// # Safety
/// `dev` is a live device (or NULL); `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn ssdkit_result_json(
    dev: *const SsdkitDevice,
    out: *mut *mut c_char,
) -> c_int {
    guard("ssdkit_result_json", || {
        // SAFETY: the caller's promises (the device is not changed, except its busy flag).
        unsafe {
            put(out, "out", std::ptr::null_mut())?;
            let text = with_device(dev.cast_mut(), |d| {
                serde_json::to_string(&d.dev.result()).map_err(|e| Failure {
                    code: SSDKIT_ERR_SIMULATION,
                    message: format!("cannot serialise the result: {e}"),
                })
            })?;
            // JSON escapes control characters, so the text holds no NUL.
            let c = CString::new(text).map_err(|e| Failure {
                code: SSDKIT_ERR_SIMULATION,
                message: format!("the result holds a NUL byte: {e}"),
            })?;
            put(out, "out", c.into_raw())
        }
    })
}

/// Frees a string ssdkit returned (NULL is ignored).
///
/// # Safety
/// `s` is NULL or a string from `ssdkit_result_json`, not yet freed.
#[no_mangle]
pub unsafe extern "C" fn ssdkit_string_free(s: *mut c_char) {
    if s.is_null() {
        return;
    }
    guard("ssdkit_string_free", || {
        // SAFETY: the caller's promise: a `CString::into_raw` of ours, freed once.
        drop(unsafe { CString::from_raw(s) });
        Ok(())
    });
}

/// The message of the last failed call on this thread ("" if none has failed). Never NULL;
/// valid until the next ssdkit call on this thread: copy it to keep it.
#[no_mangle]
pub extern "C" fn ssdkit_last_error() -> *const c_char {
    static EMPTY: &CStr = c"";
    catch_unwind(|| {
        LAST_ERROR
            .try_with(|e| e.try_borrow().map(|s| s.as_ptr()).ok())
            .ok()
            .flatten()
    })
    .ok()
    .flatten()
    .unwrap_or(EMPTY.as_ptr())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_becomes_a_status_and_a_message() {
        let code = guard("f", || panic!("boom {}", 7));
        assert_eq!(code, SSDKIT_ERR_PANIC);
        let msg = unsafe { CStr::from_ptr(ssdkit_last_error()) };
        let msg = msg.to_str().unwrap();
        assert!(
            msg.starts_with("f: internal error") && msg.ends_with("boom 7"),
            "{msg}"
        );
    }

    #[test]
    fn a_device_a_panic_interrupted_refuses_later_calls() {
        let toml = c"[ftl]\nspare_factor = 0.2\n[flash]\nblocks_per_plane = 64\npages_per_block = 32\n[[flow]]\n";
        let mut dev = std::ptr::null_mut();
        // SAFETY: valid strings and output; the device is freed once.
        unsafe {
            let code = ssdkit_device_new(
                std::ptr::null(),
                toml.as_ptr(),
                std::ptr::null(),
                0,
                std::ptr::null(),
                &mut dev,
            );
            let msg = CStr::from_ptr(ssdkit_last_error());
            assert_eq!(code, SSDKIT_OK, "{msg:?}");
            let code = guard("h", || {
                with_device(dev, |_| -> Result<(), _> { panic!("mid-call") })
            });
            assert_eq!(code, SSDKIT_ERR_PANIC);
            assert_eq!(ssdkit_run_to_idle(dev), SSDKIT_ERR_PANIC);
            let msg = CStr::from_ptr(ssdkit_last_error()).to_str().unwrap();
            assert!(msg.contains("unusable after an internal error"), "{msg}");
            ssdkit_device_free(dev);
        }
    }

    #[test]
    fn a_message_with_nul_is_kept_without_it() {
        assert_eq!(
            guard("g", || Err(invalid("a\0b"))),
            SSDKIT_ERR_INVALID_ARGUMENT
        );
        let msg = unsafe { CStr::from_ptr(ssdkit_last_error()) };
        assert_eq!(msg.to_str().unwrap(), "g: ab");
    }
}
