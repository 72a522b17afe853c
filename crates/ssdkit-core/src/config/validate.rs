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

/// Whole milliseconds in u64 picoseconds (18446744073 ms, about 213 days): bounds every time
/// setting so that it converts to picoseconds without overflow.
const END_OF_TIME_MS: u64 = u64::MAX / crate::engine::PS_PER_MS;

/// A key that takes effect only under another setting: its default is accepted (it is what an
/// unset key holds), any other value would be silently ignored, so it is refused with `why`.
fn unused(key: &str, set: bool, shown: impl std::fmt::Display, why: &str) -> Result<(), String> {
    if set {
        return Err(format!("key `{key}` = {shown} {why}; remove it"));
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
    let p = &c.pcie;
    interface_keys_in_use(i, p)?;
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
    let s = Settings::resolve(c);
    let logical_pages = s.logical_pages;
    let share_blocks = s.share_blocks;
    let reserve = s.reserve_blocks as u64;
    if share_blocks + reserve + 2 >= f.blocks_per_plane as u64 {
        return Err(format!(
            "key `ftl.spare_factor` = {} leaves too few spare blocks: each plane holds {share_blocks} blocks of logical data and needs {} more (GC reserve from `ftl.gc_hard_threshold` + 2 open blocks) out of {}; raise the spare factor or lower the thresholds",
            t.spare_factor,
            reserve + 2,
            f.blocks_per_plane
        ));
    }
    // Keys of a policy or feature that is off are checked only for being left at their
    // defaults: a default that does not suit this geometry (gc_d = 10 with few blocks, the
    // background threshold below a raised gc_threshold) must not refuse a valid device.
    let dt = FtlConfig::default();
    if t.gc_policy == GcPolicy::DChoices {
        let candidates = f.blocks_per_plane as u64 - reserve - 2;
        int_range("ftl.gc_d", t.gc_d as u64, 1, candidates).map_err(|m| {
            format!("{m} (d-choices draws among the closed blocks of a plane: blocks_per_plane minus the GC reserve and 2 open blocks)")
        })?;
    } else {
        unused(
            "ftl.gc_d",
            t.gc_d != dt.gc_d,
            t.gc_d,
            &format!(
                "applies to `ftl.gc_policy` = \"d_choices\" only (the policy is {})",
                serde_json::to_string(&t.gc_policy).unwrap_or_default()
            ),
        )?;
    }
    if t.gc_preemptible {
        int_range(
            "ftl.gc_starvation_limit",
            t.gc_starvation_limit as u64,
            1,
            u32::MAX as u64,
        )?;
    } else {
        unused(
            "ftl.gc_starvation_limit",
            t.gc_starvation_limit != dt.gc_starvation_limit,
            t.gc_starvation_limit,
            "applies to preemptible GC only (`ftl.gc_preemptible` = false: GC transactions always go first)",
        )?;
    }
    if t.wl_static {
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
    } else {
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
            t.gc_threshold,
            0.5,
            false,
        )
        .map_err(|m| format!("{m} (it must not be below `ftl.gc_threshold`)"))?;
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
    let weighted = i.arbitration == Arbitration::Weighted;
    if weighted {
        if i.kind == InterfaceType::Sata {
            return Err("key `interface.arbitration` = \"weighted\" needs `interface.type` = \"nvme\" (SATA has one shared queue)".into());
        }
        int_range("interface.wrr_high", i.wrr_high as u64, 1, 256)?;
        int_range("interface.wrr_medium", i.wrr_medium as u64, 1, 256)?;
        int_range("interface.wrr_low", i.wrr_low as u64, 1, 256)?;
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
    for (k, fl) in c.flows.iter().enumerate() {
        validate_flow(c, k, fl, capacity, qmax.min(65535), weighted)?;
    }
    validate_pinning(c, capacity)?;
    Ok(())
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
            ] {
                unused(key, v != d, v, why)?;
            }
            unused(
                "interface.queue_fetch_size",
                i.queue_fetch_size != di.queue_fetch_size,
                i.queue_fetch_size,
                "applies to `interface.type` = \"nvme\" only (SATA fetches from one shared queue of `interface.ncq_depth`)",
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
                "interface.sata_rate_mbps",
                i.sata_rate_mbps != di.sata_rate_mbps,
                i.sata_rate_mbps,
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
        }
    }
    Ok(())
}

fn validate_flow(
    c: &Config,
    k: usize,
    fl: &FlowConfig,
    capacity: u64,
    qmax: u64,
    weighted: bool,
) -> Result<(), String> {
    let key = |s: &str| format!("flow.{k}.{s}");
    let d = FlowConfig::default();
    int_range(&key("queue_depth"), fl.queue_depth as u64, 1, qmax)?;
    if !fl.start_bytes.is_multiple_of(512) || !fl.range_bytes.is_multiple_of(512) {
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
    // Simulated time is u64 picoseconds: a flow must start and stop inside it, or its
    // requests would be scheduled past the end of the clock.
    let max_ms = END_OF_TIME_MS as f64;
    float_range(&key("start_ms"), fl.start_ms, 0.0, max_ms, false)
        .map_err(|m| format!("{m} (simulated time ends at 2^64 ps, about 213 days)"))?;
    float_range(&key("duration_ms"), fl.duration_ms, 0.0, max_ms, false)
        .map_err(|m| format!("{m} (simulated time ends at 2^64 ps, about 213 days)"))?;
    if fl.start_ms + fl.duration_ms > max_ms {
        return Err(format!(
            "keys `{}` = {} and `{}` = {} end the flow at {} ms, beyond the end of simulated time ({END_OF_TIME_MS} ms: 2^64 ps, about 213 days); allowed start_ms + duration_ms <= {END_OF_TIME_MS}",
            key("start_ms"),
            fl.start_ms,
            key("duration_ms"),
            fl.duration_ms,
            fl.start_ms + fl.duration_ms
        ));
    }
    if fl.priority != Priority::Medium && !weighted {
        return Err(format!(
            "key `{}` = {} needs `interface.arbitration` = \"weighted\" (under round robin every queue is served alike)",
            key("priority"),
            serde_json::to_string(&fl.priority).unwrap_or_default()
        ));
    }
    let g = &c.flash;
    for (name, list, n) in [
        ("channels", &fl.channels, g.channels),
        ("chips", &fl.chips, g.chips_per_channel),
        ("dies", &fl.dies, g.dies_per_chip),
        ("planes", &fl.planes, g.planes_per_die),
    ] {
        if let Some(&bad) = list.iter().find(|&&x| x >= n) {
            return Err(format!(
                "key `{}` lists {bad}; allowed indices 0..={}",
                key(name),
                n - 1
            ));
        }
    }
    // A key of the other flow kind, or of another pattern/distribution, left at a non-default
    // value would be silently ignored: refuse it instead.
    let stray = |name: &str, set: bool, why: &str| -> Result<(), String> {
        if set {
            Err(format!("key `{}` {why}", key(name)))
        } else {
            Ok(())
        }
    };
    if fl.is_trace() {
        let why = "applies to synthetic flows only (this flow replays a trace)";
        stray("arrival", fl.arrival != d.arrival, why)?;
        stray("rate_iops", fl.rate_iops != d.rate_iops, why)?;
        stray("on_ms", fl.on_ms != d.on_ms, why)?;
        stray("off_ms", fl.off_ms != d.off_ms, why)?;
        stray("read_fraction", fl.read_fraction != d.read_fraction, why)?;
        stray("trim_fraction", fl.trim_fraction != d.trim_fraction, why)?;
        stray("size", fl.size != d.size, why)?;
        stray("request_bytes", fl.request_bytes != d.request_bytes, why)?;
        stray("size_min_bytes", fl.size_min_bytes != 0, why)?;
        stray("size_max_bytes", fl.size_max_bytes != 0, why)?;
        stray("size_stdev_bytes", fl.size_stdev_bytes != 0, why)?;
        stray("size_list", !fl.size_list.is_empty(), why)?;
        stray("pattern", fl.pattern != d.pattern, why)?;
        stray("stride_bytes", fl.stride_bytes != 0, why)?;
        stray("hot_space_fraction", fl.hot_space_fraction != 0.0, why)?;
        stray("hot_access_fraction", fl.hot_access_fraction != 0.0, why)?;
        stray("zipf_theta", fl.zipf_theta != 0.0, why)?;
        stray("pareto_h", fl.pareto_h != 0.0, why)?;
        stray(
            "normal_stdev_fraction",
            fl.normal_stdev_fraction != 0.0,
            why,
        )?;
        stray("scramble", fl.scramble, why)?;
        float_range(&key("time_scale"), fl.time_scale, 0.0, 1e6, true)?;
        if !fl.align_bytes.is_multiple_of(512) {
            return Err(format!(
                "key `{}` = {} must be a multiple of 512 (0 = no alignment)",
                key("align_bytes"),
                fl.align_bytes
            ));
        }
        match (&fl.delimited, fl.trace_format) {
            (None, TraceFormat::Delimited) => {
                return Err(format!(
                    "key `{}` = \"delimited\" needs a `[flow.delimited]` table (`{}`) naming the columns",
                    key("trace_format"),
                    key("delimited")
                ))
            }
            (Some(_), f) if f != TraceFormat::Delimited => {
                return Err(format!(
                    "key `{}` is only used with `{}` = \"delimited\"",
                    key("delimited"),
                    key("trace_format")
                ))
            }
            (Some(dl), _) => crate::workload::trace::validate_delimited(dl)
                .map_err(|m| format!("key `{}.{m}", key("delimited")).replacen(": ", "`: ", 1))?,
            _ => {}
        }
        return Ok(());
    }
    let why = "applies to trace flows only (set `trace` to replay one)";
    stray("trace_format", fl.trace_format != d.trace_format, why)?;
    stray("delimited", fl.delimited.is_some(), why)?;
    stray("replay", fl.replay != d.replay, why)?;
    stray("time_scale", fl.time_scale != d.time_scale, why)?;
    stray("devices", !fl.devices.is_empty(), why)?;
    stray("fold", fl.fold != d.fold, why)?;
    stray("skip_malformed", fl.skip_malformed, why)?;
    stray("backwards", fl.backwards != d.backwards, why)?;

    float_range(&key("read_fraction"), fl.read_fraction, 0.0, 1.0, false)?;
    float_range(
        &key("trim_fraction"),
        fl.trim_fraction,
        0.0,
        1.0 - fl.read_fraction,
        false,
    )?;
    let mult512 = |name: &str, v: u64, positive: bool| -> Result<(), String> {
        if !v.is_multiple_of(512) || (positive && v == 0) {
            Err(format!(
                "key `{}` = {v} must be a {}multiple of 512 bytes",
                key(name),
                if positive { "positive " } else { "" }
            ))
        } else {
            Ok(())
        }
    };
    mult512("request_bytes", fl.request_bytes, true)?;
    mult512("align_bytes", fl.align_bytes, false)?;
    mult512("stride_bytes", fl.stride_bytes, false)?;
    // Arrivals.
    let open = fl.arrival != Arrival::Closed;
    if open {
        float_range(&key("rate_iops"), fl.rate_iops, 0.0, 1e10, true)?;
    } else {
        stray(
            "rate_iops",
            fl.rate_iops != 0.0,
            "applies to open-loop arrivals only (`arrival` is \"closed\")",
        )?;
    }
    if fl.arrival == Arrival::Onoff {
        float_range(&key("on_ms"), fl.on_ms, 0.0, 1e9, true)?;
        float_range(&key("off_ms"), fl.off_ms, 0.0, 1e9, true)?;
    } else {
        let why = "applies to `arrival` = \"onoff\" only";
        stray("on_ms", fl.on_ms != 0.0, why)?;
        stray("off_ms", fl.off_ms != 0.0, why)?;
    }
    // Sizes: the largest request must fit in the range.
    let largest = match fl.size {
        SizeDist::Fixed | SizeDist::Normal => fl.request_bytes,
        SizeDist::Uniform => {
            mult512("size_min_bytes", fl.size_min_bytes, true)?;
            mult512("size_max_bytes", fl.size_max_bytes, true)?;
            if fl.size_min_bytes > fl.size_max_bytes {
                return Err(format!(
                    "key `{}` = {} is below `{}` = {}",
                    key("size_max_bytes"),
                    fl.size_max_bytes,
                    key("size_min_bytes"),
                    fl.size_min_bytes
                ));
            }
            fl.size_max_bytes
        }
        SizeDist::List => {
            if fl.size_list.is_empty() {
                return Err(format!(
                    "key `{}` = \"list\" needs `{}` = [{{ bytes = 4096, weight = 1 }}, ...]",
                    key("size"),
                    key("size_list")
                ));
            }
            for (j, e) in fl.size_list.iter().enumerate() {
                mult512(&format!("size_list.{j}.bytes"), e.bytes, true)?;
                float_range(
                    &key(&format!("size_list.{j}.weight")),
                    e.weight,
                    0.0,
                    1e12,
                    true,
                )?;
            }
            fl.size_list.iter().map(|e| e.bytes).max().unwrap_or(0)
        }
    };
    let why = "does not apply to this `size` distribution";
    stray(
        "size_min_bytes",
        fl.size != SizeDist::Uniform && fl.size_min_bytes != 0,
        why,
    )?;
    stray(
        "size_max_bytes",
        fl.size != SizeDist::Uniform && fl.size_max_bytes != 0,
        why,
    )?;
    stray(
        "size_stdev_bytes",
        fl.size != SizeDist::Normal && fl.size_stdev_bytes != 0,
        why,
    )?;
    stray(
        "size_list",
        fl.size != SizeDist::List && !fl.size_list.is_empty(),
        why,
    )?;
    if fl.size == SizeDist::Normal && fl.size_stdev_bytes > 1 << 40 {
        return Err(format!(
            "key `{}` is out of range; allowed 0..=2^40",
            key("size_stdev_bytes")
        ));
    }
    if range < largest {
        return Err(format!(
            "key `{}` = {range} is smaller than the largest request of {largest} bytes",
            key("range_bytes")
        ));
    }
    if largest > u32::MAX as u64 * 512 {
        return Err(format!("flow {k}: requests above 2 TiB are not supported"));
    }
    // Addresses.
    let why = "does not apply to this `pattern`";
    let p = fl.pattern;
    stray(
        "stride_bytes",
        p != AddressPattern::Sequential && fl.stride_bytes != 0,
        why,
    )?;
    stray(
        "hot_space_fraction",
        p != AddressPattern::Hotcold && fl.hot_space_fraction != 0.0,
        why,
    )?;
    stray(
        "hot_access_fraction",
        p != AddressPattern::Hotcold && fl.hot_access_fraction != 0.0,
        why,
    )?;
    stray(
        "zipf_theta",
        p != AddressPattern::Zipf && fl.zipf_theta != 0.0,
        why,
    )?;
    stray(
        "pareto_h",
        p != AddressPattern::Pareto && fl.pareto_h != 0.0,
        why,
    )?;
    stray(
        "normal_stdev_fraction",
        p != AddressPattern::Normal && fl.normal_stdev_fraction != 0.0,
        why,
    )?;
    stray(
        "scramble",
        fl.scramble
            && !matches!(
                p,
                AddressPattern::Zipf | AddressPattern::Pareto | AddressPattern::Normal
            ),
        "applies to the zipf, pareto and normal patterns only",
    )?;
    match p {
        AddressPattern::Hotcold => {
            float_range(
                &key("hot_space_fraction"),
                fl.hot_space_fraction,
                0.0,
                1.0,
                true,
            )?;
            float_range(
                &key("hot_access_fraction"),
                fl.hot_access_fraction,
                0.0,
                1.0,
                true,
            )?;
            if fl.hot_space_fraction >= 1.0 || fl.hot_access_fraction >= 1.0 {
                return Err(format!(
                    "keys `{}` and `{}` must be below 1 (a cold part must remain)",
                    key("hot_space_fraction"),
                    key("hot_access_fraction")
                ));
            }
        }
        AddressPattern::Zipf => float_range(&key("zipf_theta"), fl.zipf_theta, 0.0, 100.0, true)?,
        AddressPattern::Pareto => {
            float_range(&key("pareto_h"), fl.pareto_h, 0.0, 1.0, true)?;
            if fl.pareto_h >= 1.0 {
                return Err(format!(
                    "key `{}` = {} must be below 1",
                    key("pareto_h"),
                    fl.pareto_h
                ));
            }
        }
        AddressPattern::Normal => float_range(
            &key("normal_stdev_fraction"),
            fl.normal_stdev_fraction,
            0.0,
            10.0,
            true,
        )?,
        _ => {}
    }
    let align = fl.effective_align();
    if align > range {
        return Err(format!(
            "key `{}`: alignment {align} is larger than the range of {range} bytes",
            key("align_bytes")
        ));
    }
    if fl.requests == 0 && fl.duration_ms == 0.0 && fl.io_bytes == 0 {
        return Err(format!(
            "flow {k}: `{}`, `{}` and `{}` are all 0; set a request count, a byte count or a duration",
            key("requests"),
            key("io_bytes"),
            key("duration_ms")
        ));
    }
    Ok(())
}

/// Pinned flows place their writes on a subset of planes. Preconditioning places data by
/// striping over every plane, and a plane's valid data cannot leave it (GC moves stay in the
/// plane), so pinning needs an empty device and planes that can hold what is written to them.
fn validate_pinning(c: &Config, capacity: u64) -> Result<(), String> {
    let pinned = |f: &FlowConfig| {
        !(f.channels.is_empty() && f.chips.is_empty() && f.dies.is_empty() && f.planes.is_empty())
    };
    let Some(first) = c.flows.iter().position(pinned) else {
        return Ok(());
    };
    if c.precondition.mode != PreconditionMode::Empty {
        return Err(format!(
            "keys `flow.{first}.channels`/`chips`/`dies`/`planes` pin the flow, which needs `precondition.mode` = \"empty\": preconditioning stripes data over every plane and GC keeps data in its plane, so pinned planes would fill up"
        ));
    }
    let g = &c.flash;
    let planes = g.channels * g.chips_per_channel * g.dies_per_chip * g.planes_per_die;
    let share = capacity / planes as u64;
    let in_set = |f: &FlowConfig, p: u32| {
        let pl = p % g.planes_per_die;
        let die = p / g.planes_per_die;
        let d = die % g.dies_per_chip;
        let chip = die / g.dies_per_chip;
        let ch = chip / g.chips_per_channel;
        let chp = chip % g.chips_per_channel;
        let ok = |l: &Vec<u32>, x: u32| l.is_empty() || l.contains(&x);
        ok(&f.channels, ch) && ok(&f.chips, chp) && ok(&f.dies, d) && ok(&f.planes, pl)
    };
    let writes = |f: &FlowConfig| f.is_trace() || f.read_fraction < 1.0;
    for p in 0..planes {
        let mut demand = 0.0;
        for f in c.flows.iter().filter(|f| writes(f)) {
            let range = if f.range_bytes == 0 {
                capacity - f.start_bytes
            } else {
                f.range_bytes
            } as f64;
            let n = (0..planes).filter(|&q| in_set(f, q)).count() as f64;
            if n == 0.0 {
                return Err(format!(
                    "flow `{}`: its `channels`/`chips`/`dies`/`planes` lists select no plane",
                    f.name
                ));
            }
            if in_set(f, p) {
                demand += range / n;
            }
        }
        if demand > share as f64 * 1.0001 {
            return Err(format!(
                "plane {p} would receive {:.0} bytes of logical data from the flows that write to it (range_bytes spread over each flow's pinned planes) but holds {share}; shrink the pinned flows' `range_bytes` or pin the other flows elsewhere",
                demand
            ));
        }
    }
    Ok(())
}
