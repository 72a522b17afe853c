//! Entry points used by the Python bindings and the tests, and the drivers of a batch run:
//! `build` makes a simulator (preconditioned, or over a snapshot's state), `batch` runs it to
//! the end of its workload, `report` gathers the result document.

mod batch;
mod build;
pub mod json_text;
mod report;

use crate::config::{describes_no_device, Config, FLOWS_ONLY_PRESET};
use crate::error::Error;
use crate::result::PreconditionRecord;
use crate::sim::{RunHooks, RunOutput, Simulator};
use std::path::Path;
use std::time::Instant;

/// Where a configuration comes from.
pub enum Source<'a> {
    Preset(&'a str),
    /// TOML text and the name of its origin (a file path) for error messages. Text that
    /// describes no device (flows alone) runs on the `mqsim-paper` preset
    /// ([`crate::config::FLOWS_ONLY_PRESET`]).
    Toml {
        text: &'a str,
        origin: &'a str,
    },
    /// TOML text laid over a preset: its tables merge into the preset's key by key, its flows
    /// replace the preset's.
    TomlOnPreset {
        text: &'a str,
        origin: &'a str,
        preset: &'a str,
    },
}

pub fn load(source: Source<'_>, overrides: &[String]) -> Result<Config, Error> {
    match source {
        Source::Preset(name) => Config::load_preset(name, overrides),
        Source::Toml { text, origin } => {
            let base = describes_no_device(text).then_some(FLOWS_ONLY_PRESET);
            Config::load_on(base, text, origin, overrides)
        }
        Source::TomlOnPreset {
            text,
            origin,
            preset,
        } => Config::load_on(Some(preset), text, origin, overrides),
    }
}

/// Runs a validated configuration.
pub fn run(c: &Config, progress: bool, keep_log: bool) -> Result<RunOutput, Error> {
    let sim = Simulator::new(c)?;
    Ok(sim.run(c, progress, keep_log)?.0)
}

/// Runs a validated configuration, from the device state of `snapshot` if given, with every
/// option of a batch run (progress hook, streamed request log).
pub fn run_with(
    c: &Config,
    snapshot: Option<&Path>,
    mut hooks: RunHooks<'_>,
) -> Result<RunOutput, Error> {
    let sim = simulator_for_run(c, snapshot, &mut hooks)?;
    let (out, sim) = sim.run_with(c, hooks)?;
    drop_aside(sim);
    Ok(out)
}

/// Drops `x` (a spent simulator, a result document) on a thread of its own, so that the
/// caller goes on (writes the result, exits) while its memory returns to the system: tens of
/// megabytes take milliseconds to unmap (measured: 1.5-2 ms after 1 M requests on MQSim's
/// device). Inline if no thread can be started.
pub fn drop_aside<T: Send + 'static>(x: T) {
    // On failure the closure, and `x` with it, is dropped here.
    let _ = std::thread::Builder::new()
        .name("ssdkit-drop".into())
        .spawn(move || drop(x));
}

fn simulator_for_run(
    c: &Config,
    snapshot: Option<&Path>,
    hooks: &mut RunHooks<'_>,
) -> Result<Simulator, Error> {
    match snapshot {
        Some(path) => simulator_from_snapshot(c, path),
        None => match hooks.while_building.take() {
            Some(check) => Simulator::new_checked(c, check),
            None => Simulator::new(c),
        },
    }
}

/// What an alone run gives a fairness measurement: flow `index`'s reads and writes.
#[derive(Debug, Clone, PartialEq)]
pub struct AloneRun {
    pub index: usize,
    pub name: String,
    /// Reads and writes completed.
    pub count: u64,
    /// Their mean latency (response time), microseconds; 0 without any.
    pub mean_latency_us: f64,
}

/// Switches flow `k` on and every other flow off in `c` (`enabled`: flow k keeps its index,
/// random streams, queue pair and share of per-flow partitions, and `c` stays so), runs it
/// from `snapshot` as [`run_with`] does, and returns flow k's figures: the alone run of the
/// MQSim paper's fairness (FAST'18, section 3.1). Builds no result document, which with many
/// flows costs far more than a short flow's run (every switched-off flow has its entry and
/// its configuration in it). One configuration serves every alone run, without a copy each.
pub fn run_alone(
    c: &mut Config,
    k: usize,
    snapshot: Option<&Path>,
    mut hooks: RunHooks<'_>,
) -> Result<AloneRun, Error> {
    if k >= c.flows.len() {
        return Err(Error::Config(format!(
            "alone run of flow {k}: the configuration has {} flows",
            c.flows.len()
        )));
    }
    for (j, f) in c.flows.iter_mut().enumerate() {
        f.enabled = j == k;
    }
    let sim = simulator_for_run(c, snapshot, &mut hooks)?;
    let (sim, _capped) = sim.run_to_end(hooks)?;
    let (count, mean_latency_us) = sim.flow_mean_latency_us(k);
    Ok(AloneRun {
        index: k,
        name: c.flows[k].name.clone(),
        count,
        mean_latency_us,
    })
}

/// Runs a validated configuration on the device state saved in `snapshot` (the
/// configuration's `[precondition]` section is not used).
pub fn run_from_snapshot(
    c: &Config,
    snapshot: &Path,
    progress: bool,
    keep_log: bool,
) -> Result<RunOutput, Error> {
    let sim = simulator_from_snapshot(c, snapshot)?;
    Ok(sim.run(c, progress, keep_log)?.0)
}

/// A simulator over the device state of a snapshot; the result records the file and how
/// long loading took, next to the preconditioning record saved in it. For tests and fuzz
/// targets: the simulator is not public API.
#[doc(hidden)]
pub fn simulator_from_snapshot(c: &Config, snapshot: &Path) -> Result<Simulator, Error> {
    let (ftl, rec) = load_snapshot(c, snapshot)?;
    Simulator::with_ftl(c, ftl, rec)
}

/// The device state of a snapshot and its record for the result (the file, the load time,
/// and the preconditioning record saved in it).
pub(crate) fn load_snapshot(
    c: &Config,
    snapshot: &Path,
) -> Result<(crate::ftl::Ftl, PreconditionRecord), Error> {
    let t = Instant::now();
    let (ftl, mut rec) = crate::ftl::snapshot::load(c, snapshot)?;
    rec.snapshot = Some(snapshot.display().to_string());
    rec.snapshot_load_s = Some(t.elapsed().as_secs_f64());
    Ok((ftl, rec))
}

/// Preconditions the device of `c` and saves it to `output`. Returns the preconditioning
/// record with the file size and the time taken to save.
pub fn precondition_to_snapshot(c: &Config, output: &Path) -> Result<PreconditionRecord, Error> {
    precondition_to_snapshot_checked(c, output, &mut || Ok(()))
}

/// [`precondition_to_snapshot`], calling `check` while preconditioning (an error from it
/// stops before anything is written).
pub fn precondition_to_snapshot_checked(
    c: &Config,
    output: &Path,
    check: &mut dyn FnMut() -> Result<(), Error>,
) -> Result<PreconditionRecord, Error> {
    let mut ftl = crate::ftl::Ftl::new(&crate::settings::Settings::resolve(c));
    let mut rec = crate::ftl::precondition::run_checked(&mut ftl, c, check)?;
    let t = Instant::now();
    let bytes = crate::ftl::snapshot::save(&ftl, c, &rec, output)?;
    rec.snapshot_bytes = Some(bytes);
    rec.snapshot_save_s = Some(t.elapsed().as_secs_f64());
    rec.snapshot = Some(output.display().to_string());
    Ok(rec)
}

/// Runs and returns the simulator too, so tests can inspect the final FTL state (the
/// simulator is not public API).
#[doc(hidden)]
pub fn run_keep_state(c: &Config, keep_log: bool) -> Result<(RunOutput, Simulator), Error> {
    Simulator::new(c)?.run(c, false, keep_log)
}

/// What the preconditioned state of the configured device depends on: configurations with
/// equal keys precondition to the same device ([`crate::ftl::precondition::state_key`]).
pub fn precondition_key(c: &Config) -> serde_json::Value {
    crate::ftl::precondition::state_key(c)
}

/// Geometry and logical capacity of the configured device (for converters such as the fio and
/// MQSim importers, which turn percentages of the device into byte ranges).
pub fn device_info(c: &Config) -> serde_json::Value {
    let f = &c.flash;
    let logical_pages = crate::settings::Settings::resolve(c).sizes.logical_pages;
    serde_json::json!({
        "capacity_bytes": logical_pages * f.page_size_bytes as u64,
        "logical_pages": logical_pages,
        "page_size_bytes": f.page_size_bytes,
        "channels": f.channels,
        "chips_per_channel": f.chips_per_channel,
        "dies_per_chip": f.dies_per_chip,
        "planes_per_die": f.planes_per_die,
    })
}
