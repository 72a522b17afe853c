//! Plane allocation: which parallel unit a logical page lives on.

use crate::flash::Geometry;

/// Striping order, fastest-varying first, as indices: 0 = channel, 1 = way, 2 = die, 3 = plane.
#[derive(Debug, Clone, Copy)]
pub struct Striping {
    order: [u8; 4],
    sizes: [u32; 4],
}

impl Striping {
    /// `order` is a validated permutation of "CWDP".
    pub fn new(order: &str, g: &Geometry) -> Self {
        let mut o = [0u8; 4];
        for (i, c) in order.chars().enumerate() {
            o[i] = match c {
                'C' => 0,
                'W' => 1,
                'D' => 2,
                _ => 3,
            };
        }
        Self {
            order: o,
            sizes: [
                g.channels,
                g.chips_per_channel,
                g.dies_per_chip,
                g.planes_per_die,
            ],
        }
    }

    /// The plane that the `k`-th unit of the stripe maps to, k in 0..planes.
    #[inline]
    pub fn plane_of_index(&self, g: &Geometry, mut k: u32) -> u32 {
        let mut coord = [0u32; 4];
        for &level in &self.order {
            let n = self.sizes[level as usize];
            coord[level as usize] = k % n;
            k /= n;
        }
        g.plane_id(coord[0], coord[1], coord[2], coord[3])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::FlashConfig;

    #[test]
    fn cwdp_varies_channel_fastest_and_covers_every_plane() {
        let g = Geometry::from_config(&FlashConfig::default());
        let s = Striping::new("CWDP", &g);
        assert_eq!(s.plane_of_index(&g, 0), g.plane_id(0, 0, 0, 0));
        assert_eq!(s.plane_of_index(&g, 1), g.plane_id(1, 0, 0, 0));
        assert_eq!(s.plane_of_index(&g, 8), g.plane_id(0, 1, 0, 0));
        assert_eq!(s.plane_of_index(&g, 32), g.plane_id(0, 0, 1, 0));
        let p = Striping::new("PDWC", &g);
        assert_eq!(p.plane_of_index(&g, 1), g.plane_id(0, 0, 0, 1));
        let mut seen: Vec<u32> = (0..g.planes()).map(|k| s.plane_of_index(&g, k)).collect();
        seen.sort_unstable();
        assert_eq!(seen, (0..g.planes()).collect::<Vec<_>>());
    }
}
