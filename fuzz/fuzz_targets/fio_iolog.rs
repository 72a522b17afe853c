#![no_main]
//! The fio iolog readers (version 2 and 3) on arbitrary bytes.

use libfuzzer_sys::fuzz_target;
use ssdkit_core::config::TraceFormat;

fuzz_target!(|data: &[u8]| {
    ssdkit_fuzz::drain(data, TraceFormat::FioV2, None);
    ssdkit_fuzz::drain(data, TraceFormat::FioV3, None);
});
