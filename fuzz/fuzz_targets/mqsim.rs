#![no_main]
//! The mqsim reader on arbitrary bytes, and its one-pass fast path against the general parser
//! line by line.

use libfuzzer_sys::fuzz_target;
use ssdkit_core::config::TraceFormat;

fuzz_target!(|data: &[u8]| {
    ssdkit_fuzz::drain(data, TraceFormat::Mqsim, None);
    for line in data.split(|&b| b == b'\n') {
        ssdkit_core::internals::workload::trace::check_fast_paths(line);
    }
});
