#![no_main]
//! The wiscsee reader on arbitrary bytes.

use libfuzzer_sys::fuzz_target;
use ssdkit_core::config::TraceFormat;

fuzz_target!(|data: &[u8]| {
    ssdkit_fuzz::drain(data, TraceFormat::Wiscsee, None);
});
