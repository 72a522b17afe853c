use crate::error::Error;

/// Built-in presets: (name, one-line description, TOML text). The TOML files live beside this
/// module so they can be read, diffed and copied as starting points.
pub const PRESETS: &[(&str, &str, &str)] = &[
    (
        "mqsim-paper",
        "The MQSim paper (FAST'18) Table 3 / MQSim's default device: NVMe PCIe 3.0 x4, 8 ch x 4 chips x 2 dies x 2 planes, 8 KiB MLC pages, 4 KiB random-read QD32 demo flow",
        include_str!("presets/mqsim-paper.toml"),
    ),
    (
        "x25m",
        "Intel X25-M as in the X25-M latency model (multi-channel, multi-way SSDs) Tables 2-3: 10 ch x 2 ways, 4 KiB pages, channel switch 16/33 us, SATA-class link, 4 KiB random-read QD1 demo flow",
        include_str!("presets/x25m.toml"),
    ),
    (
        "nvmesim-block",
        "NVMeSim's Block NVM (Choi et al.): 4 KiB pages read in 30 us, written in 200 us, in place (no erase, no GC), PCIe 2.0 x16, Table II packets, MSI + ISR, 4 KiB random-read QD1 demo flow",
        include_str!("presets/nvmesim-block.toml"),
    ),
    (
        "nvmesim-dram",
        "NVMeSim's DRAM-like NVM (Choi et al.): 64 B pages and sectors, read 50 ns, write 1 us, in place, PCIe 2.0 x1, Table II packets, MSI + ISR, 64 B random-read QD1 demo flow",
        include_str!("presets/nvmesim-dram.toml"),
    ),
    (
        "optane-p4800x",
        "Optane-like 3D XPoint SSD after the Intel Optane SSD DC P4800X 375 GB: PCIe 3.0 x4, 7 ch x 4 dies, in place (no erase, no GC), MSI + ISR, 4 KiB random-read QD1 demo flow",
        include_str!("presets/optane-p4800x.toml"),
    ),
    (
        "largest-qlc",
        "A 61.44 TB class QLC drive after the Solidigm D5-P5336 61.44 TB: PCIe 4.0 x4, 16 ch x 8 chips x 4 dies x 4 planes, 16 KiB QLC pages (64 TiB raw), 4 KiB random-read QD32 demo flow",
        include_str!("presets/largest-qlc.toml"),
    ),
];

pub fn preset_names() -> Vec<(&'static str, &'static str)> {
    PRESETS.iter().map(|(n, d, _)| (*n, *d)).collect()
}

pub fn preset_toml(name: &str) -> Result<&'static str, Error> {
    PRESETS
        .iter()
        .find(|(n, _, _)| *n == name)
        .map(|(_, _, t)| *t)
        .ok_or_else(|| {
            let names: Vec<&str> = PRESETS.iter().map(|(n, _, _)| *n).collect();
            Error::Preset(format!(
                "unknown preset `{name}`; available: {}",
                names.join(", ")
            ))
        })
}
