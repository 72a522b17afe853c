#![no_main]
//! Configuration loading: TOML text, then after a line `%%` up to 4 `key=value` overrides;
//! parsing, overrides, defaults and validation through `Config::load`.

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    ssdkit_fuzz::load_config(data);
});
