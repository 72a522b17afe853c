//! `[host]`: completion mode, cores, vectors, costs and Interrupt Coalescing.

use super::unused;
use crate::config::{CompletionMode, Config, HostConfig, InterfaceType};

pub(super) fn validate_host(c: &Config) -> Result<(), String> {
    let h = &c.host;
    let d = HostConfig::default();
    let interrupt = h.completion == CompletionMode::Interrupt;
    let polled = h.completion == CompletionMode::Polled;
    let only = |mode: &str| {
        format!(
            "applies to `host.completion` = {mode} only (it is {:?})",
            mode_name(h.completion)
        )
    };
    let why_i = only("\"interrupt\"");
    unused(
        "host.vectors",
        !interrupt && h.vectors != d.vectors,
        h.vectors,
        &why_i,
    )?;
    unused(
        "host.isr_us",
        !interrupt && h.isr_us != d.isr_us,
        h.isr_us,
        &why_i,
    )?;
    unused(
        "host.queue_scan_us",
        !interrupt && h.queue_scan_us != d.queue_scan_us,
        h.queue_scan_us,
        &why_i,
    )?;
    unused(
        "host.coalesce_completions",
        !interrupt && h.coalesce_completions != d.coalesce_completions,
        h.coalesce_completions,
        &why_i,
    )?;
    unused(
        "host.coalesce_time_us",
        !interrupt && h.coalesce_time_us != d.coalesce_time_us,
        h.coalesce_time_us,
        &why_i,
    )?;
    unused(
        "host.poll_us",
        !polled && h.poll_us != d.poll_us,
        h.poll_us,
        &only("\"polled\""),
    )?;
    let either = only("\"interrupt\" or \"polled\"");
    let none = h.completion == CompletionMode::None;
    unused("host.cores", none && h.cores != d.cores, h.cores, &either)?;
    unused(
        "host.completion_us",
        none && h.completion_us != d.completion_us,
        h.completion_us,
        &either,
    )?;
    if interrupt && h.coalesce_completions > 1 && h.coalesce_time_us == 0.0 {
        return Err(format!(
            "key `host.coalesce_completions` = {} needs `host.coalesce_time_us` > 0: without the aggregation time, the last completions of a run (or of a queue at a low depth) would wait forever for an interrupt",
            h.coalesce_completions
        ));
    }
    if !none && c.interface.kind == InterfaceType::Sata {
        return Err(format!(
            "key `host.completion` = {:?} is modelled for NVMe only (the SATA link's completion is the Set Device Bits FIS); use \"none\" with `interface.type` = \"sata\"",
            mode_name(h.completion)
        ));
    }
    Ok(())
}

fn mode_name(m: CompletionMode) -> &'static str {
    match m {
        CompletionMode::None => "none",
        CompletionMode::Interrupt => "interrupt",
        CompletionMode::Polled => "polled",
    }
}
