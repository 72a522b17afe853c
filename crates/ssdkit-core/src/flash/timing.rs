use crate::config::{FlashConfig, PageTypeMapping};
use crate::engine::{us_to_ps, Picoseconds, PS_PER_US};

/// Every flash duration in picoseconds, computed once from the configuration.
#[derive(Debug, Clone)]
pub struct Timing {
    /// Page type (0 = LSB ... bits-1 = MSB) of each page index within a block.
    pub page_type: Vec<u8>,
    pub read_ps: Vec<Picoseconds>,
    pub program_ps: Vec<Picoseconds>,
    pub erase_ps: Picoseconds,
    /// Bus time to move k sectors (index k = 0..=sectors per page).
    pub xfer_ps: Vec<Picoseconds>,
    pub read_cmd_ps: Picoseconds,
    pub program_cmd_ps: Picoseconds,
    pub erase_cmd_ps: Picoseconds,
    pub switch_read_ps: Picoseconds,
    pub switch_write_ps: Picoseconds,
    pub way_switch_ps: Picoseconds,
    /// `flash.bus.program_data = "written_sectors"`: a program moves only its writes' sectors.
    pub program_written_sectors: bool,
    /// `flash.bus.arbitration = "data_first"`: the channel serves waiting data first.
    pub data_first: bool,
}

/// Bus time to move `bytes` on a bus of `width_bits` at `rate_mts` mega-transfers per second.
pub fn bus_transfer_ps(bytes: u64, width_bits: u32, rate_mts: f64) -> Picoseconds {
    let transfers = bytes as f64 / (width_bits as f64 / 8.0);
    (transfers * PS_PER_US as f64 / rate_mts).round() as Picoseconds
}

/// Page type of page `i` of a block.
pub fn page_type(mapping: PageTypeMapping, i: u32, bits: u32, planes_per_die: u32) -> u8 {
    if bits == 1 {
        return 0;
    }
    match mapping {
        PageTypeMapping::Cyclic => (i % bits) as u8,
        PageTypeMapping::Simplessd => {
            // SimpleSSD (IEEE CAL 2018): the first five pages behave as LSB, the next three as CSB ("meta"
            // pages); the rest follow f = ((i - n_meta) / n_plane) mod n_state. The paper
            // prints `addr & nmeta`, which would only ever be 0 or 8; the subtraction is the
            // reading that gives the described rotation. On MLC there is no CSB, so the meta
            // CSB pages take type 1 (MSB).
            const N_META: u32 = 8;
            if i < 5 {
                0
            } else if i < N_META {
                1
            } else {
                (((i - N_META) / planes_per_die) % bits) as u8
            }
        }
    }
}

impl Timing {
    pub fn from_config(f: &FlashConfig, sector_bytes: u32) -> Self {
        let bits = f.cell_type.bits() as u32;
        let sector = sector_bytes as u64;
        let spp = f.page_size_bytes as u64 / sector;
        let b = &f.bus;
        let cyc = (b.cmd_addr_cycle_ns * 1000.0).round() as Picoseconds;
        Self {
            page_type: (0..f.pages_per_block)
                .map(|i| page_type(f.page_type_mapping, i, bits, f.planes_per_die))
                .collect(),
            read_ps: f.read_us.iter().map(|&u| us_to_ps(u)).collect(),
            program_ps: f.program_us.iter().map(|&u| us_to_ps(u)).collect(),
            erase_ps: us_to_ps(f.erase_us),
            xfer_ps: (0..=spp)
                .map(|k| bus_transfer_ps(k * sector, b.width_bits, b.rate_mts))
                .collect(),
            read_cmd_ps: cyc * b.read_cmd_cycles as u64,
            program_cmd_ps: cyc * b.program_cmd_cycles as u64,
            erase_cmd_ps: cyc * b.erase_cmd_cycles as u64,
            switch_read_ps: us_to_ps(b.channel_switch_read_us),
            switch_write_ps: us_to_ps(b.channel_switch_write_us),
            way_switch_ps: us_to_ps(b.way_switch_us),
            program_written_sectors: b.program_data == crate::config::ProgramData::WrittenSectors,
            data_first: b.arbitration == crate::config::BusArbitration::DataFirst,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn onfi_transfer_time() {
        // 8 KiB over an 8-bit bus at 333 MT/s: 8192 / 333e6 s = 24.6006 us.
        let t = bus_transfer_ps(8192, 8, 333.0);
        assert!((t as f64 - 24.600_600_6e6).abs() < 1.0);
        assert_eq!(
            bus_transfer_ps(8192, 16, 333.0),
            bus_transfer_ps(4096, 8, 333.0)
        );
    }

    #[test]
    fn simplessd_page_types() {
        let m = PageTypeMapping::Simplessd;
        let types: Vec<u8> = (0..14).map(|i| page_type(m, i, 3, 2)).collect();
        assert_eq!(types, vec![0, 0, 0, 0, 0, 1, 1, 1, 0, 0, 1, 1, 2, 2]);
        let cyc: Vec<u8> = (0..6)
            .map(|i| page_type(PageTypeMapping::Cyclic, i, 3, 2))
            .collect();
        assert_eq!(cyc, vec![0, 1, 2, 0, 1, 2]);
    }
}
