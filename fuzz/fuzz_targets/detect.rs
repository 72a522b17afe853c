#![no_main]
//! Compression sniffing (gzip, zstd, plain) and format detection, then the detected reader.

use libfuzzer_sys::fuzz_target;
use ssdkit_core::config::TraceFormat;

fuzz_target!(|data: &[u8]| {
    ssdkit_fuzz::drain(data, TraceFormat::Auto, None);
});
