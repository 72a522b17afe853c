//! Checks of the `[[flow]]` sections: their count, then each flow's range, timing, queue,
//! pinning indices and the keys of its kind, arrival, size and address pattern.

use super::{float_range, int_range, END_OF_TIME_MS};
use crate::config::{
    AddressPattern, Arrival, Config, FlowConfig, InterfaceType, Priority, SizeDist, TraceFormat,
};

pub(super) fn validate_flow_count(c: &Config) -> Result<(), String> {
    if c.flows.is_empty() {
        return Err("no `[[flow]]` given; at least one workload flow is required".into());
    }
    if c.flows.len() > 65535 {
        return Err("at most 65535 flows are supported".into());
    }
    Ok(())
}

/// Each flow in turn; `capacity` is the logical capacity in bytes.
pub(super) fn validate_flows(c: &Config, capacity: u64, weighted: bool) -> Result<(), String> {
    let i = &c.interface;
    let qmax = match i.kind {
        InterfaceType::Nvme => i.io_queue_depth as u64,
        InterfaceType::Sata => 65535,
    };
    for (k, fl) in c.flows.iter().enumerate() {
        validate_flow(c, k, fl, capacity, qmax.min(65535), weighted)?;
    }
    // Each request in flight keeps about one event pending, and the event queue numbers at
    // most 2^28 pending events (engine/queue.rs).
    let in_flight: u64 = c
        .flows
        .iter()
        .map(|f| {
            if f.is_open_loop() {
                i.io_queue_depth as u64
            } else {
                f.queue_depth as u64
            }
        })
        .sum();
    if in_flight > MAX_IN_FLIGHT {
        return Err(format!(
            "the flows keep up to {in_flight} requests in flight (each closed-loop flow its \
             `queue_depth`, each open-loop flow `interface.io_queue_depth`); at most \
             {MAX_IN_FLIGHT} are supported: fewer flows or shallower queues"
        ));
    }
    Ok(())
}

use crate::config::ranges::MAX_IN_FLIGHT;

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
    let sector = c.interface.sector_bytes as u64;
    if !fl.start_bytes.is_multiple_of(sector) || !fl.range_bytes.is_multiple_of(sector) {
        return Err(format!(
            "keys `{}` and `{}` must be multiples of the {sector}-byte sector (`interface.sector_bytes`)",
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
    let classes = c.tsu.policy.class_weights().is_some();
    if fl.priority != Priority::Medium && !weighted && !classes {
        return Err(format!(
            "key `{}` = {} needs `interface.arbitration` = \"weighted\" or `tsu.policy` = \"priority_out_of_order\" or \"flin\" (otherwise every queue is served alike)",
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
        stray("random_fraction", fl.random_fraction != 0.0, why)?;
        stray("first_offset_bytes", fl.first_offset_bytes != 0, why)?;
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
        if !fl.align_bytes.is_multiple_of(sector) {
            return Err(format!(
                "key `{}` = {} must be a multiple of the {sector}-byte sector (0 = no alignment)",
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
            (Some(dl), _) => super::validate_delimited(dl)
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

    float_range(
        &key("trim_fraction"),
        fl.trim_fraction,
        0.0,
        1.0 - fl.read_fraction,
        false,
    )?;
    let mult_sector = |name: &str, v: u64, positive: bool| -> Result<(), String> {
        if !v.is_multiple_of(sector) || (positive && v == 0) {
            Err(format!(
                "key `{}` = {v} must be a {}multiple of the {sector}-byte sector (`interface.sector_bytes`)",
                key(name),
                if positive { "positive " } else { "" }
            ))
        } else {
            Ok(())
        }
    };
    mult_sector("request_bytes", fl.request_bytes, true)?;
    mult_sector("align_bytes", fl.align_bytes, false)?;
    mult_sector("stride_bytes", fl.stride_bytes, false)?;
    mult_sector("first_offset_bytes", fl.first_offset_bytes, false)?;
    // Keys whose 0 means unset (their declared range allows it), needed by this flow's
    // arrival or pattern.
    let needed = |name: &str, v: f64, by: &str| -> Result<(), String> {
        if v == 0.0 {
            Err(format!(
                "key `{}` = 0 leaves it unset, but {by} needs it; set it above 0",
                key(name)
            ))
        } else {
            Ok(())
        }
    };
    // Arrivals.
    let open = fl.arrival != Arrival::Closed;
    let arrival = format!(
        "`{}` = {}",
        key("arrival"),
        serde_json::to_string(&fl.arrival).unwrap_or_default()
    );
    if open {
        needed("rate_iops", fl.rate_iops, &arrival)?;
    } else {
        stray(
            "rate_iops",
            fl.rate_iops != 0.0,
            "applies to open-loop arrivals only (`arrival` is \"closed\")",
        )?;
    }
    if fl.arrival == Arrival::Onoff {
        needed("on_ms", fl.on_ms, &arrival)?;
        needed("off_ms", fl.off_ms, &arrival)?;
    } else {
        let why = "applies to `arrival` = \"onoff\" only";
        stray("on_ms", fl.on_ms != 0.0, why)?;
        stray("off_ms", fl.off_ms != 0.0, why)?;
    }
    // Sizes: the largest request must fit in the range.
    let largest = match fl.size {
        SizeDist::Fixed | SizeDist::Normal => fl.request_bytes,
        SizeDist::Uniform => {
            mult_sector("size_min_bytes", fl.size_min_bytes, true)?;
            mult_sector("size_max_bytes", fl.size_max_bytes, true)?;
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
                mult_sector(&format!("size_list.{j}.bytes"), e.bytes, true)?;
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
    if range < largest {
        return Err(format!(
            "key `{}` = {range} is smaller than the largest request of {largest} bytes",
            key("range_bytes")
        ));
    }
    if largest > u32::MAX as u64 * sector {
        return Err(format!(
            "flow {k}: requests above {} bytes (2^32 - 1 sectors) are not supported",
            u32::MAX as u64 * sector
        ));
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
        "random_fraction",
        p != AddressPattern::Sequential && fl.random_fraction != 0.0,
        why,
    )?;
    stray(
        "first_offset_bytes",
        p != AddressPattern::Sequential && fl.first_offset_bytes != 0,
        why,
    )?;
    if fl.first_offset_bytes >= range {
        return Err(format!(
            "key `{}` = {} is not inside the flow's range of {range} bytes (`{}`); allowed 0..{range}",
            key("first_offset_bytes"),
            fl.first_offset_bytes,
            key("range_bytes")
        ));
    }
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
    let pattern = format!(
        "`{}` = {}",
        key("pattern"),
        serde_json::to_string(&p).unwrap_or_default()
    );
    match p {
        AddressPattern::Hotcold => {
            needed("hot_space_fraction", fl.hot_space_fraction, &pattern)?;
            needed("hot_access_fraction", fl.hot_access_fraction, &pattern)?;
        }
        AddressPattern::Zipf => needed("zipf_theta", fl.zipf_theta, &pattern)?,
        AddressPattern::Pareto => needed("pareto_h", fl.pareto_h, &pattern)?,
        AddressPattern::Normal => {
            needed("normal_stdev_fraction", fl.normal_stdev_fraction, &pattern)?
        }
        _ => {}
    }
    let align = fl.effective_align();
    if align > range {
        return Err(format!(
            "key `{}`: alignment {align} is larger than the range of {range} bytes",
            key("align_bytes")
        ));
    }
    // Steady-state rounds end the run themselves (`steady_state.max_rounds` at the latest).
    if fl.requests == 0 && fl.duration_ms == 0.0 && fl.io_bytes == 0 && !c.steady_state.enabled {
        return Err(format!(
            "flow {k}: `{}`, `{}` and `{}` are all 0; set a request count, a byte count or a duration (or run in steady-state rounds: `steady_state.enabled = true`)",
            key("requests"),
            key("io_bytes"),
            key("duration_ms")
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::config::Config;

    /// 257 flows of 65535 requests each exceed the requests a run may keep in flight; 256 fit.
    #[test]
    fn requests_in_flight_are_bounded() {
        let o = [
            "interface.io_queue_depth=65536".to_string(),
            "flow.0.queue_depth=65535".to_string(),
        ];
        let mut c = Config::load_preset("mqsim-paper", &o).expect("preset");
        c.interface.io_queue_depth = 65536;
        let one = c.flows[0].clone();
        c.flows = vec![one; 256];
        assert_eq!(super::super::validate(&c), Ok(()));
        c.flows.push(c.flows[0].clone());
        let e = super::super::validate(&c).unwrap_err();
        assert!(e.contains("up to 16842495 requests in flight"), "{e}");
        assert!(e.contains("at most 16777216"), "{e}");
    }
}
