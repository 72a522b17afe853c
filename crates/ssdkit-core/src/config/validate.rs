//! Load-time validation. Every message names the key path, the value and what is allowed.

use super::*;

fn int_range(key: &str, v: u64, lo: u64, hi: u64) -> Result<(), String> {
    if v < lo || v > hi {
        return Err(format!(
            "key `{key}` = {v} is out of range; allowed {lo}..={hi}"
        ));
    }
    Ok(())
}

fn float_range(key: &str, v: f64, lo: f64, hi: f64, lo_open: bool) -> Result<(), String> {
    let ok = v.is_finite() && (if lo_open { v > lo } else { v >= lo }) && v <= hi;
    if !ok {
        let l = if lo_open { "(" } else { "[" };
        return Err(format!(
            "key `{key}` = {v} is out of range; allowed {l}{lo}, {hi}]"
        ));
    }
    Ok(())
}

fn pow2(key: &str, v: u64, lo: u64, hi: u64) -> Result<(), String> {
    if !v.is_power_of_two() || v < lo || v > hi {
        return Err(format!(
            "key `{key}` = {v} must be a power of two in {lo}..={hi}"
        ));
    }
    Ok(())
}

pub fn validate(c: &Config) -> Result<(), String> {
    float_range(
        "run.max_simulated_ms",
        c.run.max_simulated_ms,
        0.0,
        1e12,
        false,
    )?;

    let i = &c.interface;
    int_range(
        "interface.queue_fetch_size",
        i.queue_fetch_size as u64,
        1,
        65535,
    )?;
    int_range(
        "interface.io_queue_depth",
        i.io_queue_depth as u64,
        2,
        65536,
    )?;
    int_range("interface.ncq_depth", i.ncq_depth as u64, 1, 32)?;
    float_range(
        "interface.sata_rate_mbps",
        i.sata_rate_mbps,
        0.0,
        10000.0,
        true,
    )?;
    int_range(
        "interface.sata_frame_overhead_bytes",
        i.sata_frame_overhead_bytes as u64,
        0,
        1024,
    )?;
    int_range(
        "interface.sata_max_data_fis_bytes",
        i.sata_max_data_fis_bytes as u64,
        512,
        65536,
    )?;

    let p = &c.pcie;
    int_range("pcie.generation", p.generation as u64, 1, 5)?;
    if ![1, 2, 4, 8, 16].contains(&p.lanes) {
        return Err(format!(
            "key `pcie.lanes` = {} is not allowed; allowed 1, 2, 4, 8, 16",
            p.lanes
        ));
    }
    pow2(
        "pcie.max_payload_bytes",
        p.max_payload_bytes as u64,
        128,
        4096,
    )?;
    pow2(
        "pcie.max_read_request_bytes",
        p.max_read_request_bytes as u64,
        128,
        4096,
    )?;
    int_range(
        "pcie.packet_overhead_bytes",
        p.packet_overhead_bytes as u64,
        0,
        256,
    )?;

    let f = &c.flash;
    int_range("flash.channels", f.channels as u64, 1, 256)?;
    int_range("flash.chips_per_channel", f.chips_per_channel as u64, 1, 64)?;
    int_range("flash.dies_per_chip", f.dies_per_chip as u64, 1, 16)?;
    int_range("flash.planes_per_die", f.planes_per_die as u64, 1, 16)?;
    int_range(
        "flash.blocks_per_plane",
        f.blocks_per_plane as u64,
        8,
        1 << 20,
    )?;
    int_range("flash.pages_per_block", f.pages_per_block as u64, 4, 65536)?;
    pow2(
        "flash.page_size_bytes",
        f.page_size_bytes as u64,
        512,
        32768,
    )?;
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
        for (k, x) in v.iter().enumerate() {
            float_range(&format!("{key}[{k}]"), *x, 0.0, 100_000.0, true)?;
        }
    }
    float_range("flash.erase_us", f.erase_us, 0.0, 1_000_000.0, true)?;
    let b = &f.bus;
    if b.width_bits != 8 && b.width_bits != 16 {
        return Err(format!(
            "key `flash.bus.width_bits` = {} is not allowed; allowed 8, 16",
            b.width_bits
        ));
    }
    float_range("flash.bus.rate_mts", b.rate_mts, 0.0, 10000.0, true)?;
    float_range(
        "flash.bus.cmd_addr_cycle_ns",
        b.cmd_addr_cycle_ns,
        0.0,
        1000.0,
        false,
    )?;
    int_range("flash.bus.read_cmd_cycles", b.read_cmd_cycles as u64, 0, 64)?;
    int_range(
        "flash.bus.program_cmd_cycles",
        b.program_cmd_cycles as u64,
        0,
        64,
    )?;
    int_range(
        "flash.bus.erase_cmd_cycles",
        b.erase_cmd_cycles as u64,
        0,
        64,
    )?;
    float_range(
        "flash.bus.channel_switch_read_us",
        b.channel_switch_read_us,
        0.0,
        10000.0,
        false,
    )?;
    float_range(
        "flash.bus.channel_switch_write_us",
        b.channel_switch_write_us,
        0.0,
        10000.0,
        false,
    )?;
    float_range(
        "flash.bus.way_switch_us",
        b.way_switch_us,
        0.0,
        10000.0,
        false,
    )?;

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

    let t = &c.ftl;
    let mut letters: Vec<char> = t.allocation_order.chars().collect();
    letters.sort_unstable();
    if letters != ['C', 'D', 'P', 'W'] {
        return Err(format!(
            "key `ftl.allocation_order` = \"{}\" must be a permutation of the letters C, W, D, P (e.g. \"CWDP\")",
            t.allocation_order
        ));
    }
    float_range("ftl.spare_factor", t.spare_factor, 0.01, 0.9, false)?;
    float_range("ftl.gc_threshold", t.gc_threshold, 0.0, 0.5, true)?;
    float_range(
        "ftl.gc_hard_threshold",
        t.gc_hard_threshold,
        0.0,
        0.5,
        false,
    )?;
    if t.gc_hard_threshold >= t.gc_threshold {
        return Err(format!(
            "key `ftl.gc_hard_threshold` = {} must be below `ftl.gc_threshold` = {}",
            t.gc_hard_threshold, t.gc_threshold
        ));
    }
    float_range(
        "ftl.firmware_request_us",
        t.firmware_request_us,
        0.0,
        10000.0,
        false,
    )?;
    float_range(
        "ftl.firmware_transaction_us",
        t.firmware_transaction_us,
        0.0,
        10000.0,
        false,
    )?;
    // Each plane must keep, beside its logical share, the GC reserve plus one open block for
    // user and one for GC writes; otherwise GC could find no block with an invalid page.
    let planes = total_pages / (f.blocks_per_plane as u64 * f.pages_per_block as u64);
    let logical_pages = crate::ftl::logical_pages(c);
    let share_blocks = logical_pages
        .div_ceil(planes)
        .div_ceil(f.pages_per_block as u64);
    let reserve = crate::ftl::reserve_blocks(c) as u64;
    if share_blocks + reserve + 2 >= f.blocks_per_plane as u64 {
        return Err(format!(
            "key `ftl.spare_factor` = {} leaves too few spare blocks: each plane holds {share_blocks} blocks of logical data and needs {} more (GC reserve from `ftl.gc_hard_threshold` + 2 open blocks) out of {}; raise the spare factor or lower the thresholds",
            t.spare_factor,
            reserve + 2,
            f.blocks_per_plane
        ));
    }
    let candidates = f.blocks_per_plane as u64 - reserve - 2;
    int_range("ftl.gc_d", t.gc_d as u64, 1, candidates).map_err(|m| {
        format!("{m} (d-choices draws among the closed blocks of a plane: blocks_per_plane minus the GC reserve and 2 open blocks)")
    })?;
    int_range(
        "ftl.gc_starvation_limit",
        t.gc_starvation_limit as u64,
        1,
        u32::MAX as u64,
    )?;
    int_range(
        "ftl.wl_static_threshold",
        t.wl_static_threshold as u64,
        1,
        u32::MAX as u64,
    )?;
    int_range(
        "ftl.wl_static_interval",
        t.wl_static_interval as u64,
        1,
        u32::MAX as u64,
    )?;
    float_range(
        "ftl.gc_background_threshold",
        t.gc_background_threshold,
        t.gc_threshold,
        0.5,
        false,
    )
    .map_err(|m| format!("{m} (it must not be below `ftl.gc_threshold`)"))?;
    if t.gc_background {
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
    let p = &c.precondition;
    float_range(
        "precondition.history_drive_writes",
        p.history_drive_writes,
        0.0,
        1e6,
        false,
    )?;
    float_range(
        "precondition.write_window_drive_writes",
        p.write_window_drive_writes,
        0.0,
        100.0,
        true,
    )?;
    float_range(
        "precondition.write_tolerance",
        p.write_tolerance,
        0.0,
        1.0,
        true,
    )?;
    if p.write_tolerance >= 1.0 {
        return Err(format!(
            "key `precondition.write_tolerance` = {} must be below 1",
            p.write_tolerance
        ));
    }
    float_range(
        "precondition.write_min_drive_writes",
        p.write_min_drive_writes,
        0.0,
        1000.0,
        false,
    )?;
    float_range(
        "precondition.write_max_drive_writes",
        p.write_max_drive_writes,
        p.write_min_drive_writes,
        1e4,
        false,
    )
    .map_err(|m| format!("{m} (it must not be below `precondition.write_min_drive_writes`)"))?;
    let start_blocks = crate::ftl::gc_start_free_pages(c).div_ceil(f.pages_per_block as u64);
    if start_blocks + share_blocks >= f.blocks_per_plane as u64 {
        return Err(format!(
            "key `ftl.gc_threshold` = {} asks GC to keep {} free blocks per plane, but only {} are spare at `ftl.spare_factor` = {}",
            t.gc_threshold,
            start_blocks,
            f.blocks_per_plane as u64 - share_blocks,
            t.spare_factor
        ));
    }

    if c.flows.is_empty() {
        return Err("no `[[flow]]` given; at least one workload flow is required".into());
    }
    if c.flows.len() > 65535 {
        return Err("at most 65535 flows are supported".into());
    }
    let capacity = logical_pages * f.page_size_bytes as u64;
    let qmax = match i.kind {
        InterfaceType::Nvme => i.io_queue_depth as u64,
        InterfaceType::Sata => 65535,
    };
    for (k, fl) in c.flows.iter().enumerate() {
        let key = |s: &str| format!("flow.{k}.{s}");
        int_range(
            &key("queue_depth"),
            fl.queue_depth as u64,
            1,
            qmax.min(65535),
        )?;
        float_range(&key("read_fraction"), fl.read_fraction, 0.0, 1.0, false)?;
        float_range(
            &key("trim_fraction"),
            fl.trim_fraction,
            0.0,
            1.0 - fl.read_fraction,
            false,
        )?;
        if fl.request_bytes == 0 || fl.request_bytes % 512 != 0 {
            return Err(format!(
                "key `{}` = {} must be a positive multiple of 512 bytes",
                key("request_bytes"),
                fl.request_bytes
            ));
        }
        if fl.start_bytes % 512 != 0 || fl.range_bytes % 512 != 0 {
            return Err(format!(
                "keys `{}` and `{}` must be multiples of 512 bytes",
                key("start_bytes"),
                key("range_bytes")
            ));
        }
        if fl.start_bytes >= capacity {
            return Err(format!(
                "key `{}` = {} is beyond the logical capacity of {capacity} bytes",
                key("start_bytes"),
                fl.start_bytes
            ));
        }
        let range = if fl.range_bytes == 0 {
            capacity - fl.start_bytes
        } else {
            fl.range_bytes
        };
        if fl.start_bytes + range > capacity {
            return Err(format!(
                "key `{}`: range {}..{} exceeds the logical capacity of {capacity} bytes",
                key("range_bytes"),
                fl.start_bytes,
                fl.start_bytes + range
            ));
        }
        if range < fl.request_bytes {
            return Err(format!(
                "key `{}` = {range} is smaller than one request of {} bytes",
                key("range_bytes"),
                fl.request_bytes
            ));
        }
        float_range(&key("duration_ms"), fl.duration_ms, 0.0, 1e12, false)?;
        if fl.requests == 0 && fl.duration_ms == 0.0 {
            return Err(format!(
                "flow {k}: `{}` and `{}` are both 0; set a request count or a duration",
                key("requests"),
                key("duration_ms")
            ));
        }
    }
    Ok(())
}
