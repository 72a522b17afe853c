//! `[tsu]`: the scheduling policy and program/erase suspension.

use super::unused;
use crate::config::{
    BusArbitration, Config, Mapping, Medium, SuspensionMode, TsuConfig, WriteOffsets,
};

pub(super) fn validate_tsu(c: &Config) -> Result<(), String> {
    let t = &c.tsu;
    let d = TsuConfig::default();
    if t.write_offsets == WriteOffsets::AtQueue
        && !(c.flash.multiplane && c.flash.planes_per_die > 1)
    {
        return Err(format!(
            "key `tsu.write_offsets` = \"at_queue\" needs multi-plane programs (`flash.multiplane` = true and `flash.planes_per_die` > 1; they are {} and {}): it only decides which writes a multi-plane program joins; allowed here: \"at_program\"",
            c.flash.multiplane, c.flash.planes_per_die
        ));
    }
    if t.write_offsets == WriteOffsets::AtQueue
        && (c.flash.medium != Medium::Nand || !matches!(c.ftl.mapping, Mapping::Page {}))
    {
        return Err(
            "key `tsu.write_offsets` = \"at_queue\" needs NAND flash with page-level mapping (`flash.medium` = \"nand\", `ftl.mapping` = \"page\"): it gives writes the page their plane's write frontier would give them; allowed here: \"at_program\"".to_string(),
        );
    }
    // Every key's own range is declared on its field (config/tsu.rs) and checked before
    // this; what is left relates keys to each other.
    let mode = serde_json::to_string(&t.suspension).unwrap_or_default();
    if c.flash.bus.arbitration == BusArbitration::DataFirst && t.suspension != SuspensionMode::None
    {
        return Err(format!(
            "key `tsu.suspension` = {mode} does not go with `flash.bus.arbitration` = \"data_first\": a suspended program or erase lets reads start on a busy channel, which that order does not model (MQSim, whose order it is, never suspends); allowed: tsu.suspension = \"none\", or flash.bus.arbitration = \"first_come\""
        ));
    }
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
