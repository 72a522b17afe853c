#![no_main]
//! The generic delimited reader: the first 12 bytes choose a `[flow.delimited]` description
//! (valid or not), the rest is the text.

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    ssdkit_fuzz::drain_delimited(data);
});
