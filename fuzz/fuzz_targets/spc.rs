#![no_main]
//! The spc reader on arbitrary bytes.

use libfuzzer_sys::fuzz_target;
use ssdkit_core::config::TraceFormat;

fuzz_target!(|data: &[u8]| {
    ssdkit_fuzz::drain(data, TraceFormat::Spc, None);
});
