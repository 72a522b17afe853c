//! PCIe link arithmetic for the sum-of-parts checks: the NVMeSim model's link
//! (`ssdkit_core::models::nvme::PcieLink`: Table I's rates and line codes, a fixed overhead
//! per TLP), the one source for it.

// Each test binary compiles `common` whole; not every one uses the link.
#[allow(unused_imports)]
pub use ssdkit_core::models::nvme::PcieLink as Parts;
