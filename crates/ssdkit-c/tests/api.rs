//! The C ABI called from Rust as a C program would: requests complete at the same picoseconds
//! as through the Rust `Device`; every bad argument is a status code with a message from
//! `ssdkit_last_error`, and leaves the device as it was; a drain with a small buffer keeps the
//! rest for the next call.

use ssdkit::*;
use ssdkit_core::api::{load, precondition_to_snapshot, Source};
use ssdkit_core::device::{Completion, Device};
use ssdkit_core::internals::workload::Op;
use std::ffi::{CStr, CString};
use std::os::raw::{c_char, c_int};
use std::ptr;

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

fn last_error() -> String {
    // SAFETY: never NULL, valid until the next call on this thread; copied at once.
    unsafe { CStr::from_ptr(ssdkit_last_error()) }
        .to_str()
        .unwrap()
        .to_owned()
}

/// `code` is the status wanted and the thread's last error names `func` and contains `want`.
#[track_caller]
fn assert_fails(got: c_int, code: c_int, func: &str, want: &str) {
    let msg = last_error();
    assert_eq!(got, code, "status {got}, wanted {code}; last error {msg:?}");
    assert!(
        msg.starts_with(&format!("{func}: ")) && msg.contains(want),
        "{msg:?} should start with {func:?} and contain {want:?}"
    );
}

/// A device made through the C API, freed on drop.
struct CDev(*mut SsdkitDevice);

impl Drop for CDev {
    fn drop(&mut self) {
        // SAFETY: made by ssdkit_device_new, freed once.
        unsafe { ssdkit_device_free(self.0) };
    }
}

fn cstrings(v: &[&str]) -> Vec<CString> {
    v.iter().map(|s| CString::new(*s).unwrap()).collect()
}

/// `ssdkit_device_new` with the given strings (None: NULL); the status and the device.
fn new_device(
    preset: Option<&CStr>,
    toml: Option<&CStr>,
    overrides: &[CString],
    snapshot: Option<&CStr>,
) -> (c_int, *mut SsdkitDevice) {
    let ptrs: Vec<*const c_char> = overrides.iter().map(|s| s.as_ptr()).collect();
    let mut out = ptr::dangling_mut::<SsdkitDevice>(); // not NULL: the call must set it
    let p = |s: Option<&CStr>| s.map_or(ptr::null(), CStr::as_ptr);
    // SAFETY: valid strings, array and output.
    let code = unsafe {
        ssdkit_device_new(
            p(preset),
            p(toml),
            ptrs.as_ptr(),
            ptrs.len(),
            p(snapshot),
            &mut out,
        )
    };
    (code, out)
}

fn toml_device(overrides: &[&str]) -> CDev {
    let toml = CString::new(DEVICE).unwrap();
    let (code, dev) = new_device(None, Some(&toml), &cstrings(overrides), None);
    assert_eq!(code, SSDKIT_OK, "{}", last_error());
    assert!(!dev.is_null());
    CDev(dev)
}

fn rust_device(overrides: &[&str]) -> Device {
    let o: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
    let c = load(
        Source::Toml {
            text: DEVICE,
            origin: "test",
        },
        &o,
    )
    .unwrap();
    Device::new(&c).unwrap()
}

fn drain_all(dev: &CDev, cap: usize) -> Vec<SsdkitCompletion> {
    let mut all = Vec::new();
    let mut buf = vec![SsdkitCompletion::default_for_test(); cap];
    loop {
        let mut n = usize::MAX;
        // SAFETY: `buf` holds `cap` completions.
        let code = unsafe { ssdkit_drain(dev.0, buf.as_mut_ptr(), cap, &mut n) };
        assert_eq!(code, SSDKIT_OK, "{}", last_error());
        assert!(n <= cap);
        all.extend_from_slice(&buf[..n]);
        if n < cap {
            return all;
        }
    }
}

trait TestDefault {
    fn default_for_test() -> Self;
}

impl TestDefault for SsdkitCompletion {
    fn default_for_test() -> Self {
        SsdkitCompletion {
            id: u64::MAX,
            queue: u32::MAX,
            op: -1,
            offset_bytes: 0,
            bytes: 0,
            submit_ns: 0,
            complete_ns: 0,
            submit_ps: 0,
            complete_ps: 0,
        }
    }
}

/// What the C API must copy out for a completion of the Rust device.
fn expected(c: &Completion) -> SsdkitCompletion {
    let op = match c.op {
        Op::Read => SSDKIT_OP_READ,
        Op::Write => SSDKIT_OP_WRITE,
        Op::Trim => SSDKIT_OP_TRIM,
        Op::Flush => SSDKIT_OP_FLUSH,
    };
    SsdkitCompletion {
        id: c.id,
        queue: c.flow,
        op,
        offset_bytes: c.offset_bytes,
        bytes: c.bytes,
        submit_ns: c.submit_ps / 1000,
        complete_ns: c.complete_ps / 1000,
        submit_ps: c.submit_ps,
        complete_ps: c.complete_ps,
    }
}

fn u64_out(f: unsafe extern "C" fn(*const SsdkitDevice, *mut u64) -> c_int, dev: &CDev) -> u64 {
    let mut v = u64::MAX;
    // SAFETY: a live device and a writable output.
    assert_eq!(unsafe { f(dev.0, &mut v) }, SSDKIT_OK, "{}", last_error());
    v
}

/// (ns, op, offset, bytes): every op, times that are and are not whole microseconds.
const STREAM: &[(u64, c_int, u64, u64)] = &[
    (1_000, SSDKIT_OP_READ, 8192, 4096),
    (1_000, SSDKIT_OP_WRITE, 1 << 20, 16384),
    (1_333, SSDKIT_OP_READ, 512, 1024),
    (2_001, SSDKIT_OP_TRIM, 0, 65536),
    (2_001, SSDKIT_OP_FLUSH, 0, 0),
    (90_007, SSDKIT_OP_READ, 1 << 20, 4096),
];

#[test]
fn requests_complete_at_the_rust_devices_times() {
    let mut rust = rust_device(&[]);
    let c = toml_device(&[]);
    for (i, &(ns, op, off, bytes)) in STREAM.iter().enumerate() {
        let rop = [Op::Read, Op::Write, Op::Trim, Op::Flush][op as usize];
        let want = rust.submit(ns * 1000, rop, off, bytes, 0).unwrap();
        let mut id = u64::MAX;
        // SAFETY: a live device and a writable output.
        let code = unsafe { ssdkit_submit(c.0, ns, op, off, bytes, 0, &mut id) };
        assert_eq!(code, SSDKIT_OK, "{}", last_error());
        assert_eq!((id, want), (i as u64, i as u64));
    }
    assert_eq!(u64_out(ssdkit_outstanding, &c), rust.outstanding());
    // The next event, rounded up to a whole ns, is where run_until processes it.
    let next = rust.next_event_ps().expect("requests are in flight");
    assert_eq!(u64_out(ssdkit_next_event_ns, &c), next.div_ceil(1000));
    rust.run_to_idle().unwrap();
    // SAFETY: a live device.
    assert_eq!(unsafe { ssdkit_run_to_idle(c.0) }, SSDKIT_OK);
    let want: Vec<SsdkitCompletion> = rust.drain().iter().map(expected).collect();
    assert_eq!(want.len(), STREAM.len());
    assert_eq!(drain_all(&c, 64), want);
    assert!(
        want.iter().any(|w| !w.complete_ps.is_multiple_of(1000)),
        "some completion time is not a whole ns, so the rounding is checked"
    );
    // Idle: nothing scheduled.
    assert_eq!(rust.next_event_ps(), None);
    assert_eq!(u64_out(ssdkit_next_event_ns, &c), u64::MAX);
    // The clock stops on the next whole ns after the last event, where a submission is taken.
    let now = u64_out(ssdkit_now_ns, &c);
    assert_eq!(now, rust.now_ps().div_ceil(1000));
    assert!(
        !rust.now_ps().is_multiple_of(1000),
        "the last event is inside a ns, so the rounding up is checked"
    );
    // SAFETY: a live device.
    unsafe {
        let code = ssdkit_submit(c.0, now, SSDKIT_OP_FLUSH, 0, 0, 0, ptr::null_mut());
        assert_eq!(code, SSDKIT_OK, "{}", last_error());
        assert_eq!(ssdkit_run_to_idle(c.0), SSDKIT_OK);
    }
    assert_eq!(drain_all(&c, 4).len(), 1);
    assert_eq!(u64_out(ssdkit_outstanding, &c), 0);
    assert_eq!(u64_out(ssdkit_capacity_bytes, &c), rust.capacity_bytes());
    let mut q = 0;
    // SAFETY: a live device and a writable output.
    assert_eq!(unsafe { ssdkit_queues(c.0, &mut q) }, SSDKIT_OK);
    assert_eq!(q, 1);

    // run_until moves the clock to the time asked, as the Rust device's does.
    rust.run_until(5_000_000_123_000).unwrap();
    // SAFETY: a live device.
    assert_eq!(unsafe { ssdkit_run_until(c.0, 5_000_000_123) }, SSDKIT_OK);
    assert_eq!(u64_out(ssdkit_now_ns, &c), 5_000_000_123);

    let mut json: *mut c_char = ptr::null_mut();
    // SAFETY: a live device and a writable output; the string is freed once.
    let doc: serde_json::Value = unsafe {
        assert_eq!(ssdkit_result_json(c.0, &mut json), SSDKIT_OK);
        let v = serde_json::from_str(CStr::from_ptr(json).to_str().unwrap()).unwrap();
        ssdkit_string_free(json);
        v
    };
    let stats = &doc["device"]["stats"];
    assert_eq!(
        (&stats["read"]["count"], &stats["flush"]["count"]),
        (&3.into(), &2.into()),
        "{stats}"
    );
}

#[test]
fn a_device_loads_from_a_snapshot() {
    let dir = std::env::temp_dir().join(format!("ssdkit-c-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let snap = dir.join("dev.snap");
    let over = ["precondition.mode=sequential"];
    let config = load(
        Source::Toml {
            text: DEVICE,
            origin: "test",
        },
        &over.map(String::from),
    )
    .unwrap();
    precondition_to_snapshot(&config, &snap).unwrap();
    let mut rust = Device::from_snapshot(&config, &snap).unwrap();

    let toml = CString::new(DEVICE).unwrap();
    let path = CString::new(snap.to_str().unwrap()).unwrap();
    let (code, dev) = new_device(None, Some(&toml), &cstrings(&over), Some(&path));
    assert_eq!(code, SSDKIT_OK, "{}", last_error());
    let c = CDev(dev);
    rust.submit(0, Op::Read, 4096, 8192, 0).unwrap();
    rust.run_to_idle().unwrap();
    // SAFETY: a live device.
    unsafe {
        assert_eq!(
            ssdkit_submit(c.0, 0, SSDKIT_OP_READ, 4096, 8192, 0, ptr::null_mut()),
            SSDKIT_OK
        );
        assert_eq!(ssdkit_run_to_idle(c.0), SSDKIT_OK);
    }
    let want: Vec<_> = rust.drain().iter().map(expected).collect();
    assert_eq!(drain_all(&c, 4), want);
    std::fs::remove_dir_all(dir).ok();
}

#[test]
fn a_drain_with_a_small_buffer_keeps_the_rest() {
    let mut rust = rust_device(&[]);
    let c = toml_device(&[]);
    for i in 0..10u64 {
        rust.submit(0, Op::Read, i * 40960, 4096, 0).unwrap();
        // SAFETY: a live device; id_out may be NULL.
        let code =
            unsafe { ssdkit_submit(c.0, 0, SSDKIT_OP_READ, i * 40960, 4096, 0, ptr::null_mut()) };
        assert_eq!(code, SSDKIT_OK, "{}", last_error());
    }
    rust.run_to_idle().unwrap();
    // SAFETY: a live device.
    assert_eq!(unsafe { ssdkit_run_to_idle(c.0) }, SSDKIT_OK);
    let want: Vec<_> = rust.drain().iter().map(expected).collect();
    assert_eq!(want.len(), 10);

    // cap 0 (buf may be NULL) takes nothing.
    let mut n = usize::MAX;
    // SAFETY: cap 0 with a NULL buffer; a writable output.
    assert_eq!(
        unsafe { ssdkit_drain(c.0, ptr::null_mut(), 0, &mut n) },
        SSDKIT_OK
    );
    assert_eq!(n, 0);
    let mut got = Vec::new();
    let mut sizes = Vec::new();
    let mut buf = [SsdkitCompletion::default_for_test(); 4];
    for _ in 0..5 {
        // SAFETY: `buf` holds 3 (of 4) completions; the fourth must stay untouched.
        assert_eq!(
            unsafe { ssdkit_drain(c.0, buf.as_mut_ptr(), 3, &mut n) },
            SSDKIT_OK
        );
        got.extend_from_slice(&buf[..n]);
        sizes.push(n);
        assert_eq!(buf[3], SsdkitCompletion::default_for_test());
    }
    assert_eq!(sizes, [3, 3, 3, 1, 0]);
    assert_eq!(
        got, want,
        "the same completions, in completion order, once each"
    );

    // Kept completions and newer ones come out in completion order.
    // SAFETY: a live device and outputs.
    unsafe {
        assert_eq!(
            ssdkit_submit(c.0, 10_000_000, SSDKIT_OP_READ, 0, 512, 0, ptr::null_mut()),
            SSDKIT_OK
        );
        assert_eq!(ssdkit_run_to_idle(c.0), SSDKIT_OK);
        assert_eq!(
            ssdkit_submit(c.0, 20_000_000, SSDKIT_OP_READ, 0, 512, 0, ptr::null_mut()),
            SSDKIT_OK
        );
        assert_eq!(ssdkit_run_to_idle(c.0), SSDKIT_OK);
    }
    let mut one = [SsdkitCompletion::default_for_test(); 1];
    // SAFETY: one completion's room.
    assert_eq!(
        unsafe { ssdkit_drain(c.0, one.as_mut_ptr(), 1, &mut n) },
        SSDKIT_OK
    );
    assert_eq!((n, one[0].id), (1, 10));
    assert_eq!(
        drain_all(&c, 8).iter().map(|r| r.id).collect::<Vec<_>>(),
        [11]
    );
}

#[test]
fn bad_device_arguments_are_named() {
    let toml = CString::new(DEVICE).unwrap();
    let mqsim = CString::new("mqsim-paper").unwrap();
    let f = "ssdkit_device_new";
    let invalid = SSDKIT_ERR_INVALID_ARGUMENT;
    // Each call is checked at once: the last error is the last call's.
    let (code, dev) = new_device(None, None, &[], None);
    assert!(dev.is_null());
    assert_fails(code, invalid, f, "preset and toml_text are both NULL");
    let (code, dev) = new_device(Some(&mqsim), Some(&toml), &[], None);
    assert!(dev.is_null());
    assert_fails(code, invalid, f, "are both given");
    let bad = c"mqsim\xff";
    let (code, _) = new_device(Some(bad), None, &[], None);
    assert_fails(code, invalid, f, "preset is not valid UTF-8");
    let o = [
        CString::new("ftl.spare_factor=0.2").unwrap(),
        CString::new(b"flash.channels=\xfe".to_vec()).unwrap(),
    ];
    let (code, _) = new_device(None, Some(&toml), &o, None);
    assert_fails(code, invalid, f, "overrides[1] is not valid UTF-8");
    let bad = CString::new(b"a\xc3(".to_vec()).unwrap();
    let (code, _) = new_device(None, Some(&toml), &[], Some(&bad));
    assert_fails(code, invalid, f, "snapshot_path is not valid UTF-8");
    let (code, _) = new_device(Some(c"no-such-preset"), None, &[], None);
    assert_fails(code, SSDKIT_ERR_PRESET, f, "mqsim-paper");
    let (code, _) = new_device(None, Some(&toml), &cstrings(&["ftl.no_such_key=1"]), None);
    assert_fails(code, SSDKIT_ERR_CONFIG, f, "no_such_key");
    let (code, _) = new_device(None, Some(c"[flash]\nchannels = \"two\"\n"), &[], None);
    assert_fails(code, SSDKIT_ERR_CONFIG, f, "channels");
    let (code, _) = new_device(None, Some(&toml), &[], Some(c"/nonexistent/dev.snap"));
    assert_fails(code, SSDKIT_ERR_IO, f, "/nonexistent/dev.snap");

    // NULL pointers in the arrays and outputs.
    let one: [*const c_char; 1] = [ptr::null()];
    let mut out = ptr::null_mut();
    // SAFETY: NULL where NULL is refused; otherwise valid.
    unsafe {
        let code = ssdkit_device_new(
            ptr::null(),
            toml.as_ptr(),
            one.as_ptr(),
            1,
            ptr::null(),
            &mut out,
        );
        assert_fails(code, invalid, f, "overrides[0] is NULL");
        let code = ssdkit_device_new(
            ptr::null(),
            toml.as_ptr(),
            ptr::null(),
            2,
            ptr::null(),
            &mut out,
        );
        assert_fails(code, invalid, f, "overrides is NULL but n_overrides is 2");
        let code = ssdkit_device_new(
            ptr::null(),
            toml.as_ptr(),
            ptr::null(),
            0,
            ptr::null(),
            ptr::null_mut(),
        );
        assert_fails(code, invalid, f, "out is NULL");
        // NULL overrides with a count of 0 are fine.
        let code = ssdkit_device_new(
            ptr::null(),
            toml.as_ptr(),
            ptr::null(),
            0,
            ptr::null(),
            &mut out,
        );
        assert_eq!(code, SSDKIT_OK, "{}", last_error());
        ssdkit_device_free(out);
    }
}

#[test]
fn null_pointers_are_refused_by_every_call() {
    let null = ptr::null_mut::<SsdkitDevice>();
    let invalid = SSDKIT_ERR_INVALID_ARGUMENT;
    let mut v = 7u64;
    let mut q = 7u32;
    let mut n = 7usize;
    let mut s: *mut c_char = ptr::null_mut();
    let mut buf = [SsdkitCompletion::default_for_test(); 2];
    // SAFETY: NULL devices are refused before any use; the outputs are valid.
    unsafe {
        let (pv, pq, pn, ps) = (
            &mut v as *mut u64,
            &mut q as *mut u32,
            &mut n as *mut usize,
            &mut s as *mut *mut c_char,
        );
        let pb = buf.as_mut_ptr();
        let cases: [(&str, &dyn Fn() -> c_int); 10] = [
            ("ssdkit_submit", &|| {
                ssdkit_submit(null, 0, SSDKIT_OP_READ, 0, 512, 0, pv)
            }),
            ("ssdkit_run_until", &|| ssdkit_run_until(null, 1)),
            ("ssdkit_run_to_idle", &|| ssdkit_run_to_idle(null)),
            ("ssdkit_drain", &|| ssdkit_drain(null, pb, 2, pn)),
            ("ssdkit_now_ns", &|| ssdkit_now_ns(null, pv)),
            ("ssdkit_next_event_ns", &|| ssdkit_next_event_ns(null, pv)),
            ("ssdkit_outstanding", &|| ssdkit_outstanding(null, pv)),
            ("ssdkit_capacity_bytes", &|| ssdkit_capacity_bytes(null, pv)),
            ("ssdkit_queues", &|| ssdkit_queues(null, pq)),
            ("ssdkit_result_json", &|| ssdkit_result_json(null, ps)),
        ];
        for (f, call) in cases {
            assert_eq!(call(), invalid, "{f}");
            assert_eq!(last_error(), format!("{f}: dev is NULL"));
        }
        // Outputs set to their empty value on failure.
        assert_eq!((v, q, n, s), (0, 0, 0, ptr::null_mut()));
        // Freeing NULL is nothing.
        ssdkit_device_free(null);
        ssdkit_string_free(ptr::null_mut());
    }

    let c = toml_device(&[]);
    // SAFETY: a live device; NULL where NULL is refused.
    unsafe {
        assert_fails(
            ssdkit_now_ns(c.0, ptr::null_mut()),
            invalid,
            "ssdkit_now_ns",
            "ns_out is NULL",
        );
        assert_fails(
            ssdkit_outstanding(c.0, ptr::null_mut()),
            invalid,
            "ssdkit_outstanding",
            "n_out is NULL",
        );
        assert_fails(
            ssdkit_capacity_bytes(c.0, ptr::null_mut()),
            invalid,
            "ssdkit_capacity_bytes",
            "bytes_out is NULL",
        );
        assert_fails(
            ssdkit_queues(c.0, ptr::null_mut()),
            invalid,
            "ssdkit_queues",
            "n_out is NULL",
        );
        assert_fails(
            ssdkit_result_json(c.0, ptr::null_mut()),
            invalid,
            "ssdkit_result_json",
            "out is NULL",
        );
        assert_fails(
            ssdkit_drain(c.0, buf.as_mut_ptr(), 2, ptr::null_mut()),
            invalid,
            "ssdkit_drain",
            "n_out is NULL",
        );
        assert_fails(
            ssdkit_drain(c.0, ptr::null_mut(), 2, &mut n),
            invalid,
            "ssdkit_drain",
            "buf is NULL but cap is 2",
        );
    }
}

#[test]
fn bad_requests_are_refused_and_change_nothing() {
    let c = toml_device(&["flow.1.queue_depth=1"]);
    let cap = u64_out(ssdkit_capacity_bytes, &c);
    let f = "ssdkit_submit";
    let mut id = 0;
    // SAFETY: a live device and outputs.
    unsafe {
        assert_eq!(
            ssdkit_submit(c.0, 2_000, SSDKIT_OP_WRITE, 0, 4096, 1, &mut id),
            SSDKIT_OK
        );
        let cases: [(u64, c_int, u64, u64, u32, c_int, &str); 10] = [
            (
                1_999,
                SSDKIT_OP_READ,
                0,
                4096,
                0,
                SSDKIT_ERR_REQUEST,
                "before the device's current time",
            ),
            (
                3_000,
                4,
                0,
                4096,
                0,
                SSDKIT_ERR_INVALID_ARGUMENT,
                "unknown op 4: SSDKIT_OP_READ (0)",
            ),
            (
                3_000,
                -1,
                0,
                4096,
                0,
                SSDKIT_ERR_INVALID_ARGUMENT,
                "unknown op -1",
            ),
            (
                3_000,
                SSDKIT_OP_READ,
                100,
                4096,
                0,
                SSDKIT_ERR_REQUEST,
                "multiples of the 512-byte sector",
            ),
            (
                3_000,
                SSDKIT_OP_WRITE,
                0,
                1000,
                0,
                SSDKIT_ERR_REQUEST,
                "multiples of the 512-byte sector",
            ),
            (
                3_000,
                SSDKIT_OP_READ,
                cap - 512,
                4096,
                0,
                SSDKIT_ERR_REQUEST,
                "past the device's logical capacity",
            ),
            (
                3_000,
                SSDKIT_OP_READ,
                cap,
                512,
                0,
                SSDKIT_ERR_REQUEST,
                "past the device's logical capacity",
            ),
            (
                3_000,
                SSDKIT_OP_READ,
                0,
                4096,
                2,
                SSDKIT_ERR_REQUEST,
                "queue 2 does not exist",
            ),
            (
                3_000,
                SSDKIT_OP_FLUSH,
                0,
                4096,
                0,
                SSDKIT_ERR_REQUEST,
                "a flush takes no range",
            ),
            (
                u64::MAX / 1000 + 1,
                SSDKIT_OP_READ,
                0,
                4096,
                0,
                SSDKIT_ERR_REQUEST,
                "beyond the simulator's range",
            ),
        ];
        for (ns, op, off, bytes, q, code, want) in cases {
            id = 99;
            let got = ssdkit_submit(c.0, ns, op, off, bytes, q, &mut id);
            assert_fails(got, code, f, want);
            assert_eq!(id, 0, "the id output is cleared on failure");
        }
        assert_fails(
            ssdkit_run_until(c.0, u64::MAX),
            SSDKIT_ERR_REQUEST,
            "ssdkit_run_until",
            &format!("time_ns {} ns is beyond", u64::MAX),
        );
        assert_eq!(ssdkit_run_until(c.0, 5_000), SSDKIT_OK, "{}", last_error());
        assert_fails(
            ssdkit_run_until(c.0, 4_999),
            SSDKIT_ERR_REQUEST,
            "ssdkit_run_until",
            "time_ns 4999 ns is before the device's current time 5000 ns",
        );
        // The largest time that fits is taken.
        let last = u64::MAX / 1000;
        assert_eq!(ssdkit_run_until(c.0, last), SSDKIT_OK, "{}", last_error());
        assert_eq!(u64_out(ssdkit_now_ns, &c), last);
    }
    // Refused submissions changed nothing: the one accepted request completes alone.
    assert_eq!(u64_out(ssdkit_outstanding, &c), 0);
    let done = drain_all(&c, 4);
    assert_eq!(done.len(), 1);
    assert_eq!(
        (done[0].id, done[0].queue, done[0].op, done[0].submit_ns),
        (0, 1, SSDKIT_OP_WRITE, 2_000)
    );
}

#[test]
fn the_last_error_is_per_thread_and_empty_at_first() {
    let e = std::thread::spawn(last_error).join().unwrap();
    assert_eq!(e, "");
    // SAFETY: a NULL device is refused.
    unsafe { ssdkit_run_to_idle(ptr::null_mut()) };
    let other = std::thread::spawn(last_error).join().unwrap();
    assert_eq!(other, "", "another thread's failure is not this thread's");
    assert_eq!(last_error(), "ssdkit_run_to_idle: dev is NULL");
    // A later success keeps the message of the last failure.
    let c = toml_device(&[]);
    assert_eq!(u64_out(ssdkit_outstanding, &c), 0);
    assert_eq!(last_error(), "ssdkit_run_to_idle: dev is NULL");
}
