//! Checks of the device sections: host interface and PCIe link, flash geometry and timing,
//! FTL and preconditioning.

use super::{float_range, int_range, unused};
use crate::config::{
    Arbitration, Config, DataPointers, FlashConfig, FtlConfig, GcPolicy, InterfaceConfig,
    InterfaceType, PcieConfig, PreconditionConfig, Sizes,
};

/// `[interface]`, after refusing the keys of the interface type not selected.
pub(super) fn validate_interface(i: &InterfaceConfig, p: &PcieConfig) -> Result<(), String> {
    interface_keys_in_use(i, p)?;
    validate_data_pointers(i)
}

/// `interface.data_pointers` and the sizes that only it uses.
fn validate_data_pointers(i: &InterfaceConfig) -> Result<(), String> {
    let di = InterfaceConfig::default();
    if i.data_pointers == DataPointers::None {
        unused(
            "interface.memory_page_bytes",
            i.memory_page_bytes != di.memory_page_bytes,
            i.memory_page_bytes,
            "applies to `interface.data_pointers` = \"prp\" or \"sgl\" only (without them no list is read)",
        )?;
    }
    if i.data_pointers != DataPointers::Sgl {
        unused(
            "interface.buffer_extent_bytes",
            i.buffer_extent_bytes != di.buffer_extent_bytes,
            i.buffer_extent_bytes,
            "applies to `interface.data_pointers` = \"sgl\" only (PRP entries describe memory pages, whatever is contiguous)",
        )?;
    }
    Ok(())
}

/// `[pcie]`.
pub(super) fn validate_pcie(p: &PcieConfig) -> Result<(), String> {
    if p.ack_every_tlps == 0
        && p.update_fc_every_tlps == 0
        && p.dllp_bytes != PcieConfig::default().dllp_bytes
    {
        return Err(format!(
            "key `pcie.dllp_bytes` = {} is used only with DLLPs as packets: set `pcie.ack_every_tlps` or `pcie.update_fc_every_tlps` (both are 0), or remove it",
            p.dllp_bytes
        ));
    }
    Ok(())
}

/// `interface.sector_bytes` against the page: a page holds 1..=64 sectors (the sector bitmaps
/// of pages and cache slots are 64-bit words).
pub(super) fn validate_sectors(c: &crate::config::Config) -> Result<(), String> {
    let sector = c.interface.sector_bytes as u64;
    let page = c.flash.page_size_bytes as u64;
    if sector > page || page / sector > 64 {
        return Err(format!(
            "key `interface.sector_bytes` = {sector} does not fit `flash.page_size_bytes` = {page}: a page holds 1 to 64 sectors, so the sector size must be in {}..={page}",
            page.div_ceil(64).max(8)
        ));
    }
    Ok(())
}

/// `flash.medium = "in_place"`: what a memory without erase cannot do.
pub(super) fn validate_medium(c: &crate::config::Config) -> Result<(), String> {
    use crate::config::{CellType, CmtMode, Medium, Placement};
    if c.flash.medium != Medium::InPlace {
        return Ok(());
    }
    let why = "`flash.medium` = \"in_place\" keeps every logical page at one physical page";
    if c.flash.cell_type != CellType::SLC {
        return Err(format!(
            "key `flash.cell_type` = {:?} is not allowed with {why}: an in-place page has one read and one write time; allowed \"SLC\"",
            c.flash.cell_type
        ));
    }
    if c.ftl.cmt.mode != CmtMode::Ideal {
        return Err(format!(
            "key `ftl.cmt.mode` is not allowed with {why} (no mapping table to cache); allowed \"ideal\""
        ));
    }
    if c.ftl.placement != Placement::Static {
        return Err(format!(
            "key `ftl.placement` = \"dynamic\" is not allowed with {why}; allowed \"static\""
        ));
    }
    if let Some(k) = c.flows.iter().position(|f| f.is_pinned()) {
        return Err(format!(
            "flow {k} is pinned (`channels`, `chips`, `dies` or `planes`), which {why} cannot honour: a page's plane is fixed by its address; remove the pinning"
        ));
    }
    Ok(())
}

/// `[flash]` and `[flash.bus]`, then the total page count.
pub(super) fn validate_flash(f: &FlashConfig) -> Result<(), String> {
    let bits = f.cell_type.bits();
    for (key, v) in [
        ("flash.read_us", &f.read_us),
        ("flash.program_us", &f.program_us),
    ] {
        if v.len() != bits {
            return Err(format!(
                "key `{key}` has {} values; cell type {:?} needs exactly {bits} (one per page type, LSB first)",
                v.len(),
                f.cell_type
            ));
        }
    }
    let total_pages = f.channels as u64
        * f.chips_per_channel as u64
        * f.dies_per_chip as u64
        * f.planes_per_die as u64
        * f.blocks_per_plane as u64
        * f.pages_per_block as u64;
    if total_pages >= u32::MAX as u64 {
        return Err(format!(
            "geometry `flash` has {total_pages} physical pages; at most {} are supported (use larger pages or fewer blocks)",
            u32::MAX - 1
        ));
    }
    Ok(())
}

/// `[ftl]` keys that are checked without the resolved settings.
pub(super) fn validate_ftl(t: &FtlConfig) -> Result<(), String> {
    let mut letters: Vec<char> = t.allocation_order.chars().collect();
    letters.sort_unstable();
    if letters != ['C', 'D', 'P', 'W'] {
        return Err(format!(
            "key `ftl.allocation_order` = \"{}\" must be a permutation of the letters C, W, D, P (e.g. \"CWDP\")",
            t.allocation_order
        ));
    }
    if !t.gc_foreground && t.gc_hard_threshold >= t.gc_threshold {
        return Err(format!(
            "key `ftl.gc_hard_threshold` = {} must be below `ftl.gc_threshold` = {}",
            t.gc_hard_threshold, t.gc_threshold
        ));
    }
    Ok(())
}

/// `[ftl]` keys checked against the blocks per plane: the spare factor, then the keys of
/// each GC and wear-levelling policy.
pub(super) fn validate_ftl_blocks(c: &Config, s: &Sizes) -> Result<(), String> {
    let f = &c.flash;
    let t = &c.ftl;
    // Each plane must keep, beside its logical share, the GC reserve plus one open block for
    // user and one for GC writes; otherwise GC could find no block with an invalid page.
    let share_blocks = s.share_blocks;
    let reserve = s.reserve_blocks as u64;
    // An in-place medium has no GC, so no reserve and no open blocks to keep.
    let erases = f.medium == crate::config::Medium::Nand;
    if erases && share_blocks + reserve + 2 >= f.blocks_per_plane as u64 {
        return Err(format!(
            "key `ftl.spare_factor` = {} leaves too few spare blocks: each plane holds {share_blocks} blocks of logical data and needs {} more (GC reserve from `ftl.gc_hard_threshold` + 2 open blocks) out of {}; raise the spare factor or lower the thresholds",
            t.spare_factor,
            reserve + 2,
            f.blocks_per_plane
        ));
    }
    // Keys of a policy or feature that is off are checked only for being left at their
    // defaults: a default that does not suit this geometry (a raised threshold, the
    // background threshold below a raised gc_threshold) must not refuse a valid device.
    let dt = FtlConfig::default();
    if let GcPolicy::DChoices { d } = t.gc_policy {
        let candidates = f.blocks_per_plane as u64 - reserve - 2;
        int_range("ftl.gc_policy.d", d as u64, 1, candidates).map_err(|m| {
            format!("{m} (d-choices draws among the closed blocks of a plane: blocks_per_plane minus the GC reserve and 2 open blocks)")
        })?;
    }
    if !t.gc_preemptible {
        unused(
            "ftl.gc_starvation_limit",
            t.gc_starvation_limit != dt.gc_starvation_limit,
            t.gc_starvation_limit,
            "applies to preemptible GC only (`ftl.gc_preemptible` = false: GC transactions always go first)",
        )?;
    }
    if !t.wl_static {
        let why = "applies to static wear levelling only (`ftl.wl_static` = false)";
        unused(
            "ftl.wl_static_threshold",
            t.wl_static_threshold != dt.wl_static_threshold,
            t.wl_static_threshold,
            why,
        )?;
        unused(
            "ftl.wl_static_interval",
            t.wl_static_interval != dt.wl_static_interval,
            t.wl_static_interval,
            why,
        )?;
    }
    if t.gc_foreground {
        unused(
            "ftl.gc_threshold",
            t.gc_threshold != dt.gc_threshold,
            t.gc_threshold,
            "does not apply with `ftl.gc_foreground` = true: GC starts only when user writes reach the reserve (`ftl.gc_hard_threshold`)",
        )?;
    }
    if !t.gc_background {
        unused(
            "ftl.gc_background_threshold",
            t.gc_background_threshold != dt.gc_background_threshold,
            t.gc_background_threshold,
            "applies to background GC only (`ftl.gc_background` = false)",
        )?;
    } else {
        float_range(
            "ftl.gc_background_threshold",
            t.gc_background_threshold,
            t.gc_hard_threshold,
            0.5,
            true,
        )
        .map_err(|m| format!("{m} (it must be above `ftl.gc_hard_threshold`, the GC reserve)"))?;
        let bg_blocks = (t.gc_background_threshold * f.blocks_per_plane as f64).ceil() as u64;
        if bg_blocks + share_blocks + 2 >= f.blocks_per_plane as u64 {
            return Err(format!(
                "key `ftl.gc_background_threshold` = {} asks background GC to keep {bg_blocks} free blocks per plane, but at spare factor {} only {} can be (spare blocks minus 2 open blocks, and one block must be left to collect)",
                t.gc_background_threshold,
                t.spare_factor,
                (f.blocks_per_plane as u64).saturating_sub(share_blocks + 3)
            ));
        }
    }
    Ok(())
}

/// `[precondition]`.
pub(super) fn validate_precondition(p: &PreconditionConfig) -> Result<(), String> {
    if p.occupancy < 1.0
        && !matches!(
            p.mode,
            crate::config::PreconditionMode::Fast | crate::config::PreconditionMode::Sequential
        )
    {
        unused(
            "precondition.occupancy",
            true,
            p.occupancy,
            "applies to `precondition.mode` = \"fast\" or \"sequential\" only (`write` fills the whole space, `empty` none of it)",
        )?;
    }
    float_range(
        "precondition.write_max_drive_writes",
        p.write_max_drive_writes,
        p.write_min_drive_writes,
        1e4,
        false,
    )
    .map_err(|m| format!("{m} (it must not be below `precondition.write_min_drive_writes`)"))?;
    Ok(())
}

/// Whether `ftl.gc_threshold` leaves room for the logical data. It is checked after
/// `[precondition]` to keep the order in which errors are reported.
pub(super) fn validate_gc_start(c: &Config, s: &Sizes) -> Result<(), String> {
    let f = &c.flash;
    let t = &c.ftl;
    if f.medium == crate::config::Medium::InPlace {
        return Ok(());
    }
    let share_blocks = s.share_blocks;
    let start_blocks = s.gc_start_free_pages.div_ceil(f.pages_per_block as u64);
    if start_blocks + share_blocks >= f.blocks_per_plane as u64 {
        return Err(format!(
            "key `ftl.gc_threshold` = {} asks GC to keep {} free blocks per plane, but only {} are spare at `ftl.spare_factor` = {}",
            t.gc_threshold,
            start_blocks,
            f.blocks_per_plane as u64 - share_blocks,
            t.spare_factor
        ));
    }
    Ok(())
}

/// `interface.arbitration` and the weights of weighted round robin; returns whether
/// arbitration is weighted, which the flows' priorities need. It is checked after the flow
/// count to keep the order in which errors are reported.
pub(super) fn validate_arbitration(i: &InterfaceConfig) -> Result<bool, String> {
    let weighted = i.arbitration == Arbitration::Weighted;
    if weighted {
        if i.kind == InterfaceType::Sata {
            return Err("key `interface.arbitration` = \"weighted\" needs `interface.type` = \"nvme\" (SATA has one shared queue)".into());
        }
    } else {
        let di = InterfaceConfig::default();
        let why =
            "applies to `interface.arbitration` = \"weighted\" only (round robin has no weights)";
        unused(
            "interface.wrr_high",
            i.wrr_high != di.wrr_high,
            i.wrr_high,
            why,
        )?;
        unused(
            "interface.wrr_medium",
            i.wrr_medium != di.wrr_medium,
            i.wrr_medium,
            why,
        )?;
        unused("interface.wrr_low", i.wrr_low != di.wrr_low, i.wrr_low, why)?;
    }
    Ok(weighted)
}

/// Keys of the interface that is not selected would be silently ignored: NVMe runs over PCIe
/// and has no NCQ or SATA link, SATA has no PCIe link and no per-queue fetch limit.
fn interface_keys_in_use(i: &InterfaceConfig, p: &PcieConfig) -> Result<(), String> {
    let di = InterfaceConfig::default();
    let dp = PcieConfig::default();
    match i.kind {
        InterfaceType::Sata => {
            let why = "applies to `interface.type` = \"nvme\" only (a SATA device has no PCIe link; its link is set by `interface.sata_*`)";
            for (key, v, d) in [
                ("pcie.generation", p.generation, dp.generation),
                ("pcie.lanes", p.lanes, dp.lanes),
                (
                    "pcie.max_payload_bytes",
                    p.max_payload_bytes,
                    dp.max_payload_bytes,
                ),
                (
                    "pcie.max_read_request_bytes",
                    p.max_read_request_bytes,
                    dp.max_read_request_bytes,
                ),
                (
                    "pcie.packet_overhead_bytes",
                    p.packet_overhead_bytes,
                    dp.packet_overhead_bytes,
                ),
                ("pcie.ack_every_tlps", p.ack_every_tlps, dp.ack_every_tlps),
                (
                    "pcie.update_fc_every_tlps",
                    p.update_fc_every_tlps,
                    dp.update_fc_every_tlps,
                ),
                ("pcie.dllp_bytes", p.dllp_bytes, dp.dllp_bytes),
            ] {
                unused(key, v != d, v, why)?;
            }
            unused(
                "interface.queue_fetch_size",
                i.queue_fetch_size != di.queue_fetch_size,
                i.queue_fetch_size,
                "applies to `interface.type` = \"nvme\" only (SATA fetches from one shared queue of `interface.ncq_depth`)",
            )?;
            unused(
                "interface.max_inflight_commands",
                i.max_inflight_commands != di.max_inflight_commands,
                i.max_inflight_commands,
                "applies to `interface.type` = \"nvme\" only (a SATA device holds at most `interface.ncq_depth` commands: its NCQ is the device-wide limit)",
            )?;
            unused(
                "interface.data_pointers",
                i.data_pointers != di.data_pointers,
                format!("{:?}", i.data_pointers).to_lowercase(),
                "applies to `interface.type` = \"nvme\" only (PRP lists and SGL segments are NVMe's; an NCQ command's DMA needs no host-memory read)",
            )?;
        }
        InterfaceType::Nvme => {
            let why = "applies to `interface.type` = \"sata\" only (this device is NVMe over PCIe, set by `pcie.*`)";
            unused(
                "interface.ncq_depth",
                i.ncq_depth != di.ncq_depth,
                i.ncq_depth,
                why,
            )?;
            unused(
                "interface.sata_gbps",
                i.sata_gbps != di.sata_gbps,
                i.sata_gbps,
                why,
            )?;
            unused(
                "interface.sata_frame_overhead_bytes",
                i.sata_frame_overhead_bytes != di.sata_frame_overhead_bytes,
                i.sata_frame_overhead_bytes,
                why,
            )?;
            unused(
                "interface.sata_max_data_fis_bytes",
                i.sata_max_data_fis_bytes != di.sata_max_data_fis_bytes,
                i.sata_max_data_fis_bytes,
                why,
            )?;
            unused(
                "interface.sata_processing_delay_us",
                i.sata_processing_delay_us != di.sata_processing_delay_us,
                i.sata_processing_delay_us,
                why,
            )?;
        }
    }
    Ok(())
}
