#![no_main]
//! The disksim and disksim_pages readers on arbitrary bytes, and the one-pass fast path
//! against the general parser line by line.

use libfuzzer_sys::fuzz_target;
use ssdkit_core::config::TraceFormat;

fuzz_target!(|data: &[u8]| {
    ssdkit_fuzz::drain(data, TraceFormat::Disksim, None);
    ssdkit_fuzz::drain(data, TraceFormat::DisksimPages, None);
    for line in data.split(|&b| b == b'\n') {
        ssdkit_core::internals::workload::trace::check_fast_paths(line);
    }
});
