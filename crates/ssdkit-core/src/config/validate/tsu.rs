//! `[tsu]`: the scheduling policy and program/erase suspension.

use super::{float_range, int_range, unused};
use crate::config::{Config, SuspensionMode, TsuConfig, TsuPolicy};

pub(super) fn validate_tsu(c: &Config) -> Result<(), String> {
    let t = &c.tsu;
    let d = TsuConfig::default();
    let classes = matches!(t.policy, TsuPolicy::PriorityOutOfOrder | TsuPolicy::Flin);
    for (key, v) in [
        ("tsu.suspend_program_us", t.suspend_program_us),
        ("tsu.suspend_erase_us", t.suspend_erase_us),
        ("tsu.resume_program_us", t.resume_program_us),
        ("tsu.resume_erase_us", t.resume_erase_us),
        ("tsu.program_suspend_above_us", t.program_suspend_above_us),
        ("tsu.erase_suspend_above_us", t.erase_suspend_above_us),
    ] {
        float_range(key, v, 0.0, 1e6, false)?;
    }
    int_range("tsu.max_suspensions", t.max_suspensions as u64, 1, 255)?;
    for (key, v, dv) in [
        ("tsu.weight_high", t.weight_high, d.weight_high),
        ("tsu.weight_medium", t.weight_medium, d.weight_medium),
        ("tsu.weight_low", t.weight_low, d.weight_low),
    ] {
        int_range(key, v as u64, 1, 256)?;
        unused(
            key,
            !classes && v != dv,
            v,
            "applies to `tsu.policy` = \"priority_out_of_order\" or \"flin\" only",
        )?;
    }
    float_range("tsu.flin_epoch_us", t.flin_epoch_us, 1.0, 1e7, false)?;
    float_range(
        "tsu.flin_fairness_threshold",
        t.flin_fairness_threshold,
        0.0,
        1.0,
        false,
    )?;
    int_range(
        "tsu.flin_alpha_read_bytes",
        t.flin_alpha_read_bytes,
        1,
        u64::MAX,
    )?;
    int_range(
        "tsu.flin_alpha_write_bytes",
        t.flin_alpha_write_bytes,
        1,
        u64::MAX,
    )?;
    if t.policy != TsuPolicy::Flin {
        for (key, set, shown) in [
            (
                "tsu.flin_epoch_us",
                t.flin_epoch_us != d.flin_epoch_us,
                t.flin_epoch_us.to_string(),
            ),
            (
                "tsu.flin_fairness_threshold",
                t.flin_fairness_threshold != d.flin_fairness_threshold,
                t.flin_fairness_threshold.to_string(),
            ),
            (
                "tsu.flin_alpha_read_bytes",
                t.flin_alpha_read_bytes != d.flin_alpha_read_bytes,
                t.flin_alpha_read_bytes.to_string(),
            ),
            (
                "tsu.flin_alpha_write_bytes",
                t.flin_alpha_write_bytes != d.flin_alpha_write_bytes,
                t.flin_alpha_write_bytes.to_string(),
            ),
        ] {
            unused(key, set, shown, "applies to `tsu.policy` = \"flin\" only")?;
        }
    }
    let mode = serde_json::to_string(&t.suspension).unwrap_or_default();
    let program_keys: [(&str, bool, f64); 3] = [
        (
            "tsu.suspend_program_us",
            t.suspend_program_us != d.suspend_program_us,
            t.suspend_program_us,
        ),
        (
            "tsu.resume_program_us",
            t.resume_program_us != d.resume_program_us,
            t.resume_program_us,
        ),
        (
            "tsu.program_suspend_above_us",
            t.program_suspend_above_us != d.program_suspend_above_us,
            t.program_suspend_above_us,
        ),
    ];
    let erase_keys: [(&str, bool, f64); 3] = [
        (
            "tsu.suspend_erase_us",
            t.suspend_erase_us != d.suspend_erase_us,
            t.suspend_erase_us,
        ),
        (
            "tsu.resume_erase_us",
            t.resume_erase_us != d.resume_erase_us,
            t.resume_erase_us,
        ),
        (
            "tsu.erase_suspend_above_us",
            t.erase_suspend_above_us != d.erase_suspend_above_us,
            t.erase_suspend_above_us,
        ),
    ];
    if !t.suspension.program() {
        let why = format!(
            "applies to `tsu.suspension` = \"program\" or \"program_erase\" only (it is {mode})"
        );
        for (key, set, v) in program_keys {
            unused(key, set, v, &why)?;
        }
    }
    if !t.suspension.erase() {
        let why = format!(
            "applies to `tsu.suspension` = \"erase\" or \"program_erase\" only (it is {mode})"
        );
        for (key, set, v) in erase_keys {
            unused(key, set, v, &why)?;
        }
        unused(
            "tsu.writes_suspend_erase",
            t.writes_suspend_erase != d.writes_suspend_erase,
            t.writes_suspend_erase,
            &why,
        )?;
    }
    if t.suspension == SuspensionMode::None {
        unused(
            "tsu.max_suspensions",
            t.max_suspensions != d.max_suspensions,
            t.max_suspensions,
            "applies only with `tsu.suspension` set (it is \"none\")",
        )?;
        return Ok(());
    }
    // A suspension whose threshold is below its cost could make the operation finish later
    // than it would have without the read: refused, as MQSim's thresholds are meant.
    if t.suspension.program() && t.program_suspend_above_us < t.suspend_program_us {
        return Err(format!(
            "key `tsu.program_suspend_above_us` = {} is below `tsu.suspend_program_us` = {}: a read would suspend a program with less time left than the suspension costs; allowed {}..=1000000",
            t.program_suspend_above_us, t.suspend_program_us, t.suspend_program_us
        ));
    }
    if t.suspension.erase() && t.erase_suspend_above_us < t.suspend_erase_us {
        return Err(format!(
            "key `tsu.erase_suspend_above_us` = {} is below `tsu.suspend_erase_us` = {}: a read would suspend an erase with less time left than the suspension costs; allowed {}..=1000000",
            t.erase_suspend_above_us, t.suspend_erase_us, t.suspend_erase_us
        ));
    }
    if !c.flash.die_interleaving && c.flash.dies_per_chip > 1 {
        return Err(format!(
            "key `tsu.suspension` = {mode} needs `flash.die_interleaving` = true with several dies per chip (suspension is per die; a chip that runs one die operation at a time is not modelled with it)"
        ));
    }
    Ok(())
}
