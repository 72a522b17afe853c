//! Settings: the configuration resolved once, at load, into the values components read
//! (geometry, logical pages, GC reserve and start points in pages, times in picoseconds, the
//! stripe table, each flow's address range and pinned planes). Derived values are computed
//! here and nowhere else, so preconditioning, snapshots and the timed simulator all agree on
//! them; the sizes in pages and blocks come from `config::Sizes`, which validation checks.
//!
//! Above `config` and `flash` (docs/architecture.md): the flash geometry and timing are part
//! of what a configuration resolves to, and every other layer is built from these settings.

use crate::config::{
    Arbitration, CmtSettings, Config, DataPointers, FlowConfig, GcPolicy, InterfaceType, LinkModel,
    Medium, Placement, Priority, Sizes,
};
use crate::engine::{us_to_ps, Picoseconds, PS_PER_MS};
use crate::flash::{Geometry, Timing};

/// One flow's resolved address range and pinning.
#[derive(Debug, Clone, PartialEq)]
pub struct FlowSettings {
    /// First byte of the flow's range.
    pub start_bytes: u64,
    /// Length of the range in bytes (range_bytes, or to the end of the capacity).
    pub range_bytes: u64,
    /// Planes the flow's writes may use, in allocation order; None = all.
    pub planes: Option<Box<[u32]>>,
}

/// The resolved configuration. Built by `Settings::resolve` from a configuration that passed
/// the range checks of `validate`; never panics on one.
#[derive(Debug, Clone)]
pub struct Settings {
    pub geo: Geometry,
    /// Flash durations in picoseconds.
    pub timing: Timing,
    /// Logical pages exported to the host: floor(physical * (1 - spare factor)).
    pub logical_pages: u64,
    pub capacity_bytes: u64,
    /// Blocks of logical data per plane (the plane's share, rounded up).
    pub share_blocks: u64,
    /// Blocks per plane that user writes may not take (kept for GC).
    pub reserve_blocks: u32,
    /// GC starts in a plane when its free pages fall below this.
    pub gc_start_free_pages: u64,
    /// Idle-time GC runs in planes whose free pages are below this.
    pub gc_background_free_pages: u64,
    /// Plane of each stripe unit k (0..planes) in `ftl.allocation_order`.
    pub stripe: Box<[u32]>,
    pub firmware_request_ps: Picoseconds,
    pub firmware_transaction_ps: Picoseconds,
    /// Simulated-time cap (u64::MAX = none).
    pub max_simulated_ps: Picoseconds,
    /// `run.timeseries_window_ms`; 0 = no time series.
    pub timeseries_window_ps: Picoseconds,
    /// `steady_state.round_ms` when `steady_state.enabled`; 0 = no rounds, or (rounds on)
    /// a length picked at run time.
    pub steady_round_ps: Picoseconds,
    pub sata: bool,
    pub flows: Vec<FlowSettings>,
    /// The cached mapping table; None with `ftl.cmt.mode = "ideal"`.
    pub cmt: Option<CmtSettings>,
    /// The host interface: queues, fetch, data pointers, the link.
    pub host: HostSettings,
    /// The FTL's policies.
    pub ftl: FtlSettings,
    /// `run.latency_breakdown`: components record where each request's time went.
    pub latency_breakdown: bool,
}

/// The FTL's policies (`[ftl]`) and the seed of the device's random stream.
#[derive(Debug, Clone, PartialEq)]
pub struct FtlSettings {
    /// `ftl.mapping`: the mapping scheme and its parameters.
    pub mapping: crate::config::Mapping,
    pub gc_policy: GcPolicy,
    /// `ftl.gc_foreground`: GC starts only when user writes are blocked.
    pub gc_foreground: bool,
    /// `ftl.gc_refill`: GC refills the free pool to its start threshold.
    pub gc_refill: bool,
    pub wl_dynamic: bool,
    pub wl_static: bool,
    pub wl_static_threshold: u32,
    pub wl_static_interval: u32,
    pub placement: Placement,
    /// `flash.medium = "in_place"`: pages are overwritten where they are.
    pub in_place: bool,
    /// Seed of the device's streams (GC victims): `precondition.seed`, or `run.seed`.
    pub device_seed: u64,
    /// `ftl.gc_copyback`: GC moves pages inside their plane.
    pub gc_copyback: bool,
    /// `ftl.cmt.mode = "per_flow"`: one mapping-cache partition per flow.
    pub cmt_per_flow: bool,
    /// `ftl.cmt.gc_updates = "batch"`: GC's map updates are written back in batches.
    pub cmt_gc_batch: bool,
}

impl FtlSettings {
    pub fn resolve(c: &Config) -> Self {
        let f = &c.ftl;
        Self {
            mapping: f.mapping,
            gc_policy: f.gc_policy,
            gc_foreground: f.gc_foreground,
            gc_refill: f.gc_refill,
            wl_dynamic: f.wl_dynamic,
            wl_static: f.wl_static,
            wl_static_threshold: f.wl_static_threshold,
            wl_static_interval: f.wl_static_interval,
            placement: f.placement,
            in_place: c.flash.medium == Medium::InPlace,
            gc_copyback: f.gc_copyback,
            cmt_per_flow: f.cmt.mode == crate::config::CmtMode::PerFlow,
            cmt_gc_batch: f.cmt.gc_updates == crate::config::CmtGcUpdates::Batch,
            device_seed: c.precondition_seed(),
        }
    }
}

/// The host interface resolved (`[interface]`, `[pcie]`, the flows' priorities).
#[derive(Debug, Clone, PartialEq)]
pub struct HostSettings {
    /// Device-side queues: one per flow (NVMe), or the one shared NCQ (SATA).
    pub queues: usize,
    /// Requests of one queue inside the device at once: `interface.queue_fetch_size` (NVMe,
    /// MQSim's QueueFetchSize) or `interface.ncq_depth` (SATA).
    pub fetch_limit: u32,
    /// Commands inside the device over all queues (`interface.max_inflight_commands`);
    /// u32::MAX = no limit.
    pub max_inflight: u32,
    /// NVMe weighted round robin with urgent class; None = round robin.
    pub weighted: Option<WeightedArbitration>,
    /// `interface.pipelined_transfers`.
    pub pipelined_transfers: bool,
    /// `interface.data_pointers`, and the sizes its lists are counted in.
    pub data_pointers: DataPointers,
    pub memory_page_bytes: u64,
    pub buffer_extent_bytes: u64,
    /// Bytes per logical sector.
    pub sector_bytes: u64,
    /// Each stage of the SATA host bus adapter (`interface.sata_processing_delay_us`); 0 for
    /// NVMe.
    pub hba_ps: Picoseconds,
    pub link: LinkSettings,
}

/// `interface.arbitration = "weighted"`: each queue's class and the classes' turns.
#[derive(Debug, Clone, PartialEq)]
pub struct WeightedArbitration {
    /// Class of each queue: 0 urgent, 1 high, 2 medium, 3 low.
    pub classes: Vec<u8>,
    /// Commands per turn of the high, medium and low classes (`interface.wrr_*`).
    pub weights: [u32; 3],
}

/// Which wire a link models.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkKind {
    /// PCIe: full duplex, TLPs with header overhead.
    Pcie,
    /// SATA: half duplex, FISes with frame overhead.
    Sata,
    /// `interface.link_model = "ideal"`: transfers take no time.
    Ideal,
}

/// The host link resolved.
#[derive(Debug, Clone, PartialEq)]
pub struct LinkSettings {
    pub kind: LinkKind,
    /// Payload bytes per second (1 for the ideal link, which never uses it).
    pub bytes_per_s: f64,
    /// Bytes each packet adds to its payload (TLP header, SATA frame).
    pub overhead_bytes: u64,
    /// Largest payload of one packet (PCIe max payload size, SATA data FIS).
    pub max_payload_bytes: u64,
    /// Largest read request (PCIe max read request size; unbounded for SATA).
    pub max_read_request_bytes: u64,
    /// A DLLP (Ack, UpdateFC) per this many TLPs received; 0 = none (PCIe modelled only).
    pub ack_every_tlps: u64,
    pub update_fc_every_tlps: u64,
    pub dllp_bytes: u64,
}

/// Payload bytes per second of a SATA link of `gbps` line rate: 8b/10b coded, so 150, 300 and
/// 600 MB/s for SATA 1.5, 3 and 6 Gb/s.
pub fn sata_bytes_per_s(gbps: f64) -> f64 {
    gbps * 1e9 * (8.0 / 10.0) / 8.0
}

/// Payload bytes per second of a PCIe link: lanes x transfer rate x line-code efficiency.
pub fn pcie_bytes_per_s(generation: u32, lanes: u32) -> f64 {
    let (gts, eff) = match generation {
        1 => (2.5e9, 8.0 / 10.0),
        2 => (5.0e9, 8.0 / 10.0),
        3 => (8.0e9, 128.0 / 130.0),
        4 => (16.0e9, 128.0 / 130.0),
        _ => (32.0e9, 128.0 / 130.0),
    };
    lanes as f64 * gts * eff / 8.0
}

impl LinkSettings {
    pub fn resolve(c: &Config) -> Self {
        let i = &c.interface;
        let dllps = i.link_model != LinkModel::Ideal
            && i.kind == InterfaceType::Nvme
            && (c.pcie.ack_every_tlps > 0 || c.pcie.update_fc_every_tlps > 0);
        let (kind, bytes_per_s, overhead, mps, mrrs) = match (i.link_model, i.kind) {
            (LinkModel::Ideal, _) => (LinkKind::Ideal, 1.0, 0, 4096, 4096),
            (_, InterfaceType::Nvme) => (
                LinkKind::Pcie,
                pcie_bytes_per_s(c.pcie.generation, c.pcie.lanes),
                c.pcie.packet_overhead_bytes as u64,
                c.pcie.max_payload_bytes as u64,
                c.pcie.max_read_request_bytes as u64,
            ),
            (_, InterfaceType::Sata) => (
                LinkKind::Sata,
                sata_bytes_per_s(i.sata_gbps),
                i.sata_frame_overhead_bytes as u64,
                i.sata_max_data_fis_bytes as u64,
                u64::MAX,
            ),
        };
        Self {
            kind,
            bytes_per_s,
            overhead_bytes: overhead,
            max_payload_bytes: mps,
            max_read_request_bytes: mrrs,
            ack_every_tlps: if dllps {
                c.pcie.ack_every_tlps as u64
            } else {
                0
            },
            update_fc_every_tlps: if dllps {
                c.pcie.update_fc_every_tlps as u64
            } else {
                0
            },
            dllp_bytes: c.pcie.dllp_bytes as u64,
        }
    }
}

impl HostSettings {
    pub fn resolve(c: &Config) -> Self {
        let i = &c.interface;
        let sata = i.kind == InterfaceType::Sata;
        let (queues, fetch_limit) = if sata {
            (1, i.ncq_depth)
        } else {
            (c.flows.len(), i.queue_fetch_size)
        };
        let weighted =
            (i.arbitration == Arbitration::Weighted && queues == c.flows.len()).then(|| {
                WeightedArbitration {
                    classes: c
                        .flows
                        .iter()
                        .map(|f| match f.priority {
                            Priority::Urgent => 0,
                            Priority::High => 1,
                            Priority::Medium => 2,
                            Priority::Low => 3,
                        })
                        .collect(),
                    weights: [i.wrr_high, i.wrr_medium, i.wrr_low],
                }
            });
        Self {
            queues,
            fetch_limit,
            max_inflight: match i.max_inflight_commands {
                0 => u32::MAX,
                n => n,
            },
            weighted,
            pipelined_transfers: i.pipelined_transfers,
            data_pointers: i.data_pointers,
            memory_page_bytes: i.memory_page_bytes as u64,
            buffer_extent_bytes: i.buffer_extent_bytes as u64,
            sector_bytes: i.sector_bytes as u64,
            hba_ps: if sata {
                us_to_ps(i.sata_processing_delay_us)
            } else {
                0
            },
            link: LinkSettings::resolve(c),
        }
    }
}

impl Settings {
    pub fn resolve(c: &Config) -> Settings {
        let f = &c.flash;
        let sizes = Sizes::of(c);
        let geo = Geometry::from_config(c);
        let stripe = stripe_table(&c.ftl.allocation_order, &geo);
        let capacity_bytes = sizes.capacity_bytes;
        let flows = c
            .flows
            .iter()
            .map(|fl| FlowSettings {
                start_bytes: fl.start_bytes,
                range_bytes: if fl.range_bytes == 0 {
                    capacity_bytes.saturating_sub(fl.start_bytes)
                } else {
                    fl.range_bytes
                },
                planes: pinned_planes(fl, &geo, &stripe),
            })
            .collect();
        Settings {
            geo,
            timing: Timing::from_config(f, c.interface.sector_bytes),
            logical_pages: sizes.logical_pages,
            capacity_bytes,
            share_blocks: sizes.share_blocks,
            reserve_blocks: sizes.reserve_blocks,
            gc_start_free_pages: sizes.gc_start_free_pages,
            gc_background_free_pages: sizes.gc_background_free_pages,
            stripe,
            firmware_request_ps: us_to_ps(c.ftl.firmware_request_us),
            firmware_transaction_ps: us_to_ps(c.ftl.firmware_transaction_us),
            max_simulated_ps: if c.run.max_simulated_ms > 0.0 {
                (c.run.max_simulated_ms * PS_PER_MS as f64) as u64
            } else {
                u64::MAX
            },
            timeseries_window_ps: (c.run.timeseries_window_ms * PS_PER_MS as f64).round() as u64,
            steady_round_ps: if c.steady_state.enabled {
                c.steady_state
                    .round_ms
                    .map_or(0, |ms| (ms * PS_PER_MS as f64).round() as u64)
            } else {
                0
            },
            sata: c.interface.kind == InterfaceType::Sata,
            flows,
            cmt: sizes.cmt,
            host: HostSettings::resolve(c),
            ftl: FtlSettings::resolve(c),
            latency_breakdown: c.run.latency_breakdown,
        }
    }
}

/// Plane of stripe unit k: `order` (a permutation of "CWDP", fastest-varying first) says
/// which level the unit index walks first.
fn stripe_table(order: &str, g: &Geometry) -> Box<[u32]> {
    let mut levels = [0usize; 4];
    for (i, ch) in order.chars().take(4).enumerate() {
        levels[i] = match ch {
            'C' => 0,
            'W' => 1,
            'D' => 2,
            _ => 3,
        };
    }
    let sizes = [
        g.channels,
        g.chips_per_channel,
        g.dies_per_chip,
        g.planes_per_die,
    ];
    (0..g.planes())
        .map(|mut k| {
            let mut coord = [0u32; 4];
            for &level in &levels {
                coord[level] = k % sizes[level];
                k /= sizes[level];
            }
            g.plane_id(coord[0], coord[1], coord[2], coord[3])
        })
        .collect()
}

fn pinned_planes(f: &FlowConfig, geo: &Geometry, stripe: &[u32]) -> Option<Box<[u32]>> {
    if !f.is_pinned() {
        return None;
    }
    let ok = |l: &Vec<u32>, x: u32| l.is_empty() || l.contains(&x);
    Some(
        stripe
            .iter()
            .copied()
            .filter(|&p| {
                let die = geo.die_of_plane(p);
                let chip = geo.chip_of_die(die);
                ok(&f.channels, geo.channel_of_die(die))
                    && ok(&f.chips, chip % geo.chips_per_channel)
                    && ok(&f.dies, die % geo.dies_per_chip)
                    && ok(&f.planes, p % geo.planes_per_die)
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cwdp_varies_channel_fastest_and_covers_every_plane() {
        let c = Config::default();
        let g = Geometry::from_config(&c);
        let s = stripe_table("CWDP", &g);
        assert_eq!(s[0], g.plane_id(0, 0, 0, 0));
        assert_eq!(s[1], g.plane_id(1, 0, 0, 0));
        assert_eq!(s[8], g.plane_id(0, 1, 0, 0));
        assert_eq!(s[32], g.plane_id(0, 0, 1, 0));
        let p = stripe_table("PDWC", &g);
        assert_eq!(p[1], g.plane_id(0, 0, 0, 1));
        let mut seen = s.to_vec();
        seen.sort_unstable();
        assert_eq!(seen, (0..g.planes()).collect::<Vec<_>>());
    }

    #[test]
    fn derived_values_of_the_default_device() {
        let c = Config::default();
        let s = Settings::resolve(&c);
        // 8 x 4 x 2 x 2 planes x 2048 blocks x 256 pages, 7 % spare.
        let physical = 128u64 * 2048 * 256;
        assert_eq!(s.logical_pages, (physical as f64 * 0.93).floor() as u64);
        assert_eq!(s.capacity_bytes, s.logical_pages * 8192);
        // ceil(0.005 * 2048) = 11 blocks kept for GC.
        assert_eq!(s.reserve_blocks, 11);
        // ceil(0.05 * 2048 * 256) = 26215 pages, above (11 + 1) * 256 + 1.
        assert_eq!(s.gc_start_free_pages, 26215);
        assert_eq!(s.firmware_request_ps, 1_000_000);
        assert_eq!(s.firmware_transaction_ps, 250_000);
    }
}
