//! The X25-M latency model of multi-channel, multi-way SSDs, computed from a configuration, and
//! the SATA link's arithmetic: shared by the `x25m` checks.

use ssdkit_core::config::Config;
use ssdkit_core::internals::host::link::{SATA_DATA_FIS_HEADER, SATA_DMA_SETUP_FIS};
use ssdkit_core::models::x25m::X25mParams;

/// Eq. 1-7: latency of one request of `n_page` pages, microseconds (the model's one source,
/// `ssdkit_core::models::x25m`).
pub fn eq_6_7(c: &Config, n_page: u64, write: bool) -> f64 {
    X25mParams::from_config(c, write).record_us(n_page)
}

/// Microseconds the SATA link of `c` takes to carry one control FIS of `fis_bytes` (Register
/// H2D or D2H, Set Device Bits) with its framing.
pub fn fis_us(c: &Config, fis_bytes: u64) -> f64 {
    let wire = fis_bytes + c.interface.sata_frame_overhead_bytes as u64;
    wire as f64 / link_mb_per_s(c)
}

/// Microseconds of one NCQ data phase of `payload` bytes: the DMA Setup FIS, then Data FISes
/// of at most `interface.sata_max_data_fis_bytes` (at least one), each with its header dword
/// and framing.
pub fn sata_us(c: &Config, payload: u64) -> f64 {
    let i = &c.interface;
    let fises = payload.div_ceil(i.sata_max_data_fis_bytes as u64).max(1);
    let wire = SATA_DMA_SETUP_FIS
        + payload
        + fises * SATA_DATA_FIS_HEADER
        + (fises + 1) * i.sata_frame_overhead_bytes as u64;
    wire as f64 / link_mb_per_s(c)
}

/// Frame bytes per microsecond (MB/s): the line rate in Gb/s, 8b/10b coded.
pub fn link_mb_per_s(c: &Config) -> f64 {
    c.interface.sata_gbps * 1e3 * 0.8 / 8.0
}
