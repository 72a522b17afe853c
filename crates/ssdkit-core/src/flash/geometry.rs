use crate::config::Config;
use crate::engine::Div;

/// Sizes of each level and the flat numbering of planes, dies and pages.
///
/// Global plane id = ((channel * chips + chip) * dies + die) * planes + plane; a die's planes
/// are consecutive, so die id = plane id / planes_per_die. A physical page address (PPA) is
/// plane id * pages_per_plane + block * pages_per_block + page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Geometry {
    pub channels: u32,
    pub chips_per_channel: u32,
    pub dies_per_chip: u32,
    pub planes_per_die: u32,
    pub blocks_per_plane: u32,
    pub pages_per_block: u32,
    pub page_size: u32,
    /// Bytes per logical sector (`interface.sector_bytes`).
    pub sector_bytes: u32,
    pub sectors_per_page: u32,
    /// The divisors of the numbering, set from the sizes above.
    div: Divisors,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Divisors {
    pages_per_plane: Div,
    pages_per_block: Div,
    planes_per_die: Div,
    dies_per_chip: Div,
    dies_per_channel: Div,
    sectors_per_page: Div,
    planes: Div,
}

impl Geometry {
    pub fn from_config(c: &Config) -> Self {
        let f = &c.flash;
        Self {
            channels: f.channels,
            chips_per_channel: f.chips_per_channel,
            dies_per_chip: f.dies_per_chip,
            planes_per_die: f.planes_per_die,
            blocks_per_plane: f.blocks_per_plane,
            pages_per_block: f.pages_per_block,
            page_size: f.page_size_bytes,
            sector_bytes: c.interface.sector_bytes,
            sectors_per_page: f.page_size_bytes / c.interface.sector_bytes,
            div: Divisors {
                pages_per_plane: Div::new(f.blocks_per_plane * f.pages_per_block),
                pages_per_block: Div::new(f.pages_per_block),
                planes_per_die: Div::new(f.planes_per_die),
                dies_per_chip: Div::new(f.dies_per_chip),
                dies_per_channel: Div::new(f.dies_per_chip * f.chips_per_channel),
                sectors_per_page: Div::new(f.page_size_bytes / c.interface.sector_bytes),
                planes: Div::new(
                    f.channels * f.chips_per_channel * f.dies_per_chip * f.planes_per_die,
                ),
            },
        }
    }
    pub fn chips(&self) -> u32 {
        self.channels * self.chips_per_channel
    }
    pub fn dies(&self) -> u32 {
        self.chips() * self.dies_per_chip
    }
    pub fn planes(&self) -> u32 {
        self.dies() * self.planes_per_die
    }
    pub fn pages_per_plane(&self) -> u32 {
        self.blocks_per_plane * self.pages_per_block
    }
    pub fn total_blocks(&self) -> u32 {
        self.planes() * self.blocks_per_plane
    }
    /// The sector bitmap of a whole page.
    #[inline]
    pub fn full_page_mask(&self) -> u64 {
        match self.sectors_per_page {
            64.. => u64::MAX,
            spp => (1u64 << spp) - 1,
        }
    }
    /// Bytes of `sectors` sectors.
    #[inline]
    pub fn sector_bytes_of(&self, sectors: u64) -> u64 {
        sectors * self.sector_bytes as u64
    }
    pub fn total_pages(&self) -> u64 {
        self.planes() as u64 * self.pages_per_plane() as u64
    }
    #[inline]
    pub fn plane_of(&self, ppn: crate::ids::Ppn) -> crate::ids::PlaneId {
        crate::ids::PlaneId(self.div.pages_per_plane.quot(ppn.0))
    }
    /// The planes of a die.
    #[inline]
    pub fn planes_of_die(
        &self,
        die: crate::ids::DieId,
    ) -> impl Iterator<Item = crate::ids::PlaneId> {
        let ppd = self.planes_per_die;
        (die.0 * ppd..(die.0 + 1) * ppd).map(crate::ids::PlaneId)
    }
    #[inline]
    pub fn plane_of_ppa(&self, ppa: u32) -> u32 {
        self.div.pages_per_plane.quot(ppa)
    }
    /// Global block index (plane id * blocks_per_plane + block).
    #[inline]
    pub fn block_of_ppa(&self, ppa: u32) -> u32 {
        self.div.pages_per_block.quot(ppa)
    }
    #[inline]
    pub fn page_in_block(&self, ppa: u32) -> u32 {
        self.div.pages_per_block.modulo(ppa)
    }
    /// `n` modulo the number of planes: a logical page's place in the static stripe.
    #[inline]
    pub fn modulo_planes(&self, n: u32) -> u32 {
        self.div.planes.modulo(n)
    }
    #[inline]
    pub fn die_of_plane(&self, plane: u32) -> u32 {
        self.div.planes_per_die.quot(plane)
    }
    /// `sectors` as whole pages and the sectors left over.
    #[inline]
    pub fn pages_and_sectors(&self, sectors: u32) -> (u32, u32) {
        let d = self.div.sectors_per_page;
        (d.quot(sectors), d.modulo(sectors))
    }
    /// A plane's index inside its die.
    #[inline]
    pub fn plane_in_die(&self, plane: u32) -> u32 {
        self.div.planes_per_die.modulo(plane)
    }
    #[inline]
    pub fn chip_of_die(&self, die: u32) -> u32 {
        self.div.dies_per_chip.quot(die)
    }
    #[inline]
    pub fn channel_of_die(&self, die: u32) -> u32 {
        self.div.dies_per_channel.quot(die)
    }
    pub fn plane_id(&self, ch: u32, chip: u32, die: u32, plane: u32) -> u32 {
        ((ch * self.chips_per_channel + chip) * self.dies_per_chip + die) * self.planes_per_die
            + plane
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbering_is_consistent() {
        let g = Geometry::from_config(&Config::default());
        assert_eq!(g.planes(), 128);
        assert_eq!(g.total_pages(), 67_108_864);
        let p = g.plane_id(3, 2, 1, 1);
        let d = g.die_of_plane(p);
        assert_eq!(g.channel_of_die(d), 3);
        assert_eq!(g.chip_of_die(d), 3 * 4 + 2);
        let ppa = p * g.pages_per_plane() + 5 * g.pages_per_block + 7;
        assert_eq!(g.plane_of_ppa(ppa), p);
        assert_eq!(g.page_in_block(ppa), 7);
        assert_eq!(g.block_of_ppa(ppa) % g.blocks_per_plane, 5);
    }

    /// Sizes that are not powers of two (divided) and that are (shifted) number alike.
    #[test]
    fn numbering_inverts_for_any_sizes() {
        for (chips, dies, planes, blocks, pages) in [(3, 3, 3, 1365, 1536), (4, 2, 2, 2048, 256)] {
            let mut c = Config::default();
            c.flash.channels = 5;
            c.flash.chips_per_channel = chips;
            c.flash.dies_per_chip = dies;
            c.flash.planes_per_die = planes;
            c.flash.blocks_per_plane = blocks;
            c.flash.pages_per_block = pages;
            let g = Geometry::from_config(&c);
            for (ch, chip, die, plane, block, page) in [
                (0, 0, 0, 0, 0, 0),
                (4, chips - 1, dies - 1, planes - 1, blocks - 1, pages - 1),
                (2, 1, 1, 1, 77, 101),
            ] {
                let p = g.plane_id(ch, chip, die, plane);
                let d = g.die_of_plane(p);
                assert_eq!(d, (ch * chips + chip) * dies + die);
                assert_eq!(g.plane_in_die(p), plane);
                assert_eq!(g.channel_of_die(d), ch);
                assert_eq!(g.chip_of_die(d), ch * chips + chip);
                let ppa = p * g.pages_per_plane() + block * pages + page;
                assert_eq!(g.plane_of_ppa(ppa), p);
                assert_eq!(g.plane_of(crate::ids::Ppn(ppa)).0, p);
                assert_eq!(g.block_of_ppa(ppa), p * blocks + block);
                assert_eq!(g.page_in_block(ppa), page);
            }
        }
    }
}
