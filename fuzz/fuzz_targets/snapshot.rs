#![no_main]
//! Snapshot loading: the input as a snapshot file, loaded against a fixed small device
//! (`snapshot_config.toml`) through `api::simulator_from_snapshot`.

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use ssdkit_core::config::Config;

static CONFIG: OnceLock<Config> = OnceLock::new();

fuzz_target!(|data: &[u8]| {
    ssdkit_fuzz::load_snapshot(CONFIG.get_or_init(ssdkit_fuzz::snapshot_config), data);
});
