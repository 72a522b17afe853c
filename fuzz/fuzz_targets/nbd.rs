#![no_main]
//! `ssdkit serve`'s NBD protocol parser on arbitrary bytes: the fixed-newstyle handshake, then
//! transmission requests and their checks (`ssdkit_serve::fuzzing::exercise`).

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    ssdkit_serve::fuzzing::exercise(data);
});
