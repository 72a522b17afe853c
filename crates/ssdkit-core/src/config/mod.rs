//! Typed configuration, one section per layer. The structs are the single source of truth:
//! every field carries its unit and default in its doc comment (exported to the JSON Schema)
//! and its allowed range in `#[range(...)]` (`ranges`: the check, its message and the schema's
//! bounds), unknown keys are refused, and `validate` runs once at load with messages that
//! name the key path and the allowed values. This file holds the root `Config`, `[run]` and
//! loading; the sections live in `device` (host side, flash), `ftl` (FTL, preconditioning) and
//! `workload` (flows), all re-exported here.

mod cache;
mod cmt;
mod device;
mod errors;
mod ftl;
mod host;
mod names;
mod overrides;
mod presets;
pub(crate) mod ranges;
mod sizes;
mod tagged;
mod tsu;
pub(crate) mod validate;
mod workload;

pub use cache::*;
pub use cmt::*;
pub use device::*;
pub use ftl::*;
pub use host::*;
pub use tsu::*;
pub use workload::*;

pub use overrides::apply_override;
pub use presets::{preset_names, preset_toml, PRESETS};
pub use sizes::{CmtSettings, Sizes};
pub use validate::{validate_delimited, validate_picked_rounds, MAX_COLUMN};

use crate::error::Error;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use ssdkit_macros::ranges;

/// The whole configuration of one run.
#[ranges]
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// Run control: seed and limits.
    #[serde(default)]
    #[range(nested)]
    pub run: RunConfig,
    /// Rounds of the workload judged by the steady-state criteria of the SNIA Solid State
    /// Storage Performance Test Specification (off unless `enabled`).
    #[serde(default)]
    #[range(nested)]
    pub steady_state: SteadyStateConfig,
    /// How the host learns of completions (interrupts, polling, or at the completion entry)
    /// and what that costs on its cores.
    #[serde(default)]
    #[range(nested)]
    pub host: HostConfig,
    /// Host interface logic: NVMe queues and fetch, or a SATA-class link.
    #[serde(default)]
    #[range(nested)]
    pub interface: InterfaceConfig,
    /// PCIe link between host and device (NVMe only).
    #[serde(default)]
    #[range(nested)]
    pub pcie: PcieConfig,
    /// DRAM data cache (off unless `mode` is set) and the DRAM it lives in.
    #[serde(default)]
    #[range(nested)]
    pub cache: CacheConfig,
    /// Flash translation layer: mapping, allocation, garbage collection, wear levelling,
    /// firmware time.
    #[serde(default)]
    #[range(nested)]
    pub ftl: FtlConfig,
    /// Transaction scheduling unit: the policy at each die and program/erase suspension.
    #[serde(default)]
    #[range(nested)]
    pub tsu: TsuConfig,
    /// Device state at time zero: steady state (fast or by writing), filled, or empty.
    #[serde(default)]
    #[range(nested)]
    pub precondition: PreconditionConfig,
    /// Flash back end: geometry, cell type, array timings and the channel bus.
    #[serde(default)]
    #[range(nested)]
    pub flash: FlashConfig,
    /// Workload flows; each gets its own submission/completion queue pair. At least one.
    #[serde(default, rename = "flow")]
    #[range(nested)]
    pub flows: Vec<FlowConfig>,
}

/// `[run]`
#[ranges]
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct RunConfig {
    /// Seed from which every random stream of the run derives. Default 1; 0..=2^63-1 (TOML
    /// integers are signed 64-bit).
    #[range(min = 0, max = u64::MAX, note = "any 64-bit seed")]
    pub seed: u64,
    /// Hard cap on simulated time in milliseconds; 0 means no cap. Default 0; >= 0.
    #[range(min = 0.0, max = 1e12)]
    pub max_simulated_ms: f64,
    /// Length in milliseconds of the windows of the result's time series (per-flow IOPS,
    /// bandwidth, latency and queue depth; the device's free blocks, GC and write
    /// amplification); 0 records none. Default 0; 0 or [0.000001, 1e12] (1 ns to ~31
    /// years); a run may record at most 10,000,000 windows.
    #[range(or_zero, min = 1e-6, max = 1e12, note = "or 0 for no time series")]
    pub timeseries_window_ms: f64,
    /// When the run ends: `idle` (default) once every request has completed and the device
    /// has finished the GC and erase work it owes, so that work counts in simulated time,
    /// rates and write amplification; `last_completion` at the last request's completion,
    /// reporting the work left (`backlog` in the result).
    pub end: RunEnd,
    /// Report where each request's response time went, step by step along its path (host
    /// queue, doorbell, submission-queue wait, command fetch, firmware, mapping, cache, die
    /// queue, channel wait, command/address, array, ONFI transfer, data DMA, completion,
    /// T_stall; and the host's completion processing after it): per flow and op as means and
    /// percentiles (`latency_breakdown` in the result), as columns of the request log, and
    /// one summary line per step. The steps of every request sum to its latency exactly
    /// (docs/breakdown.md). Off by default: it costs time per request. Default false.
    pub latency_breakdown: bool,
}

/// `run.end`.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum RunEnd {
    /// Every request completed and the device idle: no event left.
    #[default]
    Idle,
    /// The last request's completion; GC work still owed is reported, not done.
    LastCompletion,
}
impl Default for RunConfig {
    fn default() -> Self {
        Self {
            seed: 1,
            max_simulated_ms: 0.0,
            timeseries_window_ms: 0.0,
            end: RunEnd::Idle,
            latency_breakdown: false,
        }
    }
}

/// Rounds in the steady-state measurement window (the PTS's five).
pub const WINDOW_ROUNDS: usize = 5;
/// Requests a picked round length holds at the rate it was picked at: the IOPS of a round of
/// 1,000 requests varies by a few per cent from chance alone, far inside the 20 % allowed.
pub const PICK_REQUESTS: u64 = 1_000;

/// `[steady_state]`: the run is cut into rounds of simulated time and judged by the
/// steady-state criteria of the SNIA Solid State Storage Performance Test Specification (PTS,
/// Enterprise v1.1 / Client v2.0): over a measurement window of the last five rounds, the
/// tracking variable's range (max - min) is at most 20 % of its average and the change of its
/// least-squares line across the window at most 10 % of the average.
#[ranges]
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct SteadyStateConfig {
    /// Run in rounds and report the verdict (CLI: `--steady-state`). Default false. With it,
    /// a synthetic flow may have no request, byte or time limit: the rounds end the run, and a
    /// synthetic flow that sets none of `requests`, `io_bytes` and `duration_ms` has none (not
    /// the default 10,000 requests).
    pub enabled: bool,
    /// Length of a round in simulated milliseconds. Unset (default): picked from the run
    /// itself, the simulated time the device takes for its first 1,000 completed requests
    /// (counted from the first write-back when writes go to a write cache, so the time the
    /// empty cache absorbs writes is not taken for the device's rate), rounded up to 1, 2 or 5
    /// times a power of ten; a round shorter than the device's later rate needs is lengthened.
    /// Set: [0.001, 1e9], and `round_ms * max_rounds` within simulated time (about 213 days).
    /// The PTS's rounds are one minute of a real drive; a simulator pays wall time per
    /// request. Five rounds must span the device's slow changes: from an empty device, longer
    /// than filling it, or the fresh-out-of-box plateau passes the criteria.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[range(min = 1e-3, max = 1e9, note = "or unset: picked from the run")]
    pub round_ms: Option<f64>,
    /// Most rounds (the PTS: 25); the workload stops after the last. Default 25; 5..=1000000.
    #[range(min = 5, max = 1_000_000, note = "the measurement window is 5 rounds")]
    pub max_rounds: u32,
    /// Stop the workload at the end of the first round whose window meets both criteria (the
    /// PTS does). Default true; false runs on to `max_rounds` or the workload's own end.
    pub stop_when_steady: bool,
    /// The tracking variable the criteria judge, over all flows together: "iops" (default,
    /// the PTS's IOPS test) or "mean_latency" (its latency test's average latency).
    pub track: SteadyTrack,
}

impl Default for SteadyStateConfig {
    fn default() -> Self {
        Self {
            enabled: false,
            round_ms: None,
            max_rounds: 25,
            stop_when_steady: true,
            track: SteadyTrack::Iops,
        }
    }
}

/// `steady_state.track`.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum SteadyTrack {
    /// Requests completed per simulated second.
    #[default]
    Iops,
    /// Mean latency of the requests completed in the round.
    MeanLatency,
}

impl Config {
    /// The seed of the preconditioned device: `precondition.seed`, else `run.seed`.
    pub fn precondition_seed(&self) -> u64 {
        self.precondition.seed.unwrap_or(self.run.seed)
    }

    /// Parses TOML text (after applying `key.path=value` overrides), fills in defaults and
    /// validates. `origin` names the source in error messages.
    pub fn load(text: &str, origin: &str, overrides: &[String]) -> Result<Config, Error> {
        Self::load_on(None, text, origin, overrides)
    }

    /// [`Config::load`] with the text laid over the preset `base`: its tables merge into the
    /// preset's key by key, and its `[[flow]]` tables, if any, replace the preset's.
    pub fn load_on(
        base: Option<&str>,
        text: &str,
        origin: &str,
        overrides: &[String],
    ) -> Result<Config, Error> {
        let mut value: toml::Value =
            toml::from_str(text).map_err(|e| Error::Config(errors::syntax(text, origin, &e)))?;
        if let Some(name) = base {
            let mut under: toml::Value = toml::from_str(preset_toml(name)?)
                .map_err(|e| Error::Config(format!("preset {name}: {e}")))?;
            merge(&mut under, value);
            value = under;
        }
        for o in overrides {
            apply_override(&mut value, o)?;
        }
        errors::check_shapes(&value).map_err(|m| Error::Config(format!("{origin}: {m}")))?;
        // In steady-state rounds a synthetic flow with no limit of its own runs until the
        // rounds end: its default 10,000 requests would end them long before a verdict.
        let rounds = value
            .get("steady_state")
            .and_then(|s| s.get("enabled"))
            .and_then(|e| e.as_bool())
            == Some(true);
        if let Some(flows) = value.get_mut("flow").and_then(|f| f.as_array_mut()) {
            for f in flows.iter_mut().filter_map(|f| f.as_table_mut()) {
                let unlimited = rounds
                    && !["io_bytes", "duration_ms"]
                        .iter()
                        .any(|k| f.contains_key(*k));
                if (f.contains_key("trace") || unlimited) && !f.contains_key("requests") {
                    f.insert("requests".into(), toml::Value::Integer(0));
                }
            }
        }
        // Kept to name what a key of the wrong type holds (serde names only Rust types).
        let tree = value.clone();
        let de = toml::Value::try_into::<toml::Value>(value)
            .map_err(|e| Error::Config(format!("{origin}: {e}")))?;
        let mut cfg: Config = serde_path_to_error::deserialize(de).map_err(|e| {
            let path = e.path().to_string();
            let inner = e.into_inner().to_string();
            // toml appends "\nin `a.b`"; the key path already leads the message.
            let inner = inner
                .split("\nin `")
                .next()
                .unwrap_or("")
                .trim_end()
                .replace('\n', " ");
            let key = path.replace("flow[", "flow.").replace(']', "");
            // An override's integer beyond 64 bits is read as a string (it is no TOML
            // integer); the same string in a file is a string.
            let held = errors::value_at(&tree, &path);
            let overflow = overrides
                .iter()
                .filter_map(|o| o.split_once('='))
                .rfind(|(k, _)| k.trim() == key)
                .map(|(_, raw)| raw.trim())
                .filter(|raw| held.and_then(|v| v.as_str()) == Some(*raw))
                .and_then(errors::overflowing_override);
            let inner = overflow
                .or_else(|| errors::type_mismatch(&inner, held))
                .unwrap_or(inner);
            if path == "." || path.is_empty() {
                Error::Config(format!("{origin}: {inner}"))
            } else {
                Error::Config(format!("{origin}: key `{key}`: {inner}"))
            }
        })?;
        let base = std::path::Path::new(origin)
            .parent()
            .filter(|_| std::path::Path::new(origin).is_file());
        for (i, f) in cfg.flows.iter_mut().enumerate() {
            if f.name.is_empty() {
                f.name = format!("flow{i}");
            }
            if let Some(dir) = base {
                if f.is_trace() && std::path::Path::new(&f.trace).is_relative() {
                    f.trace = dir.join(&f.trace).to_string_lossy().into_owned();
                }
            }
        }
        validate::validate(&cfg).map_err(|m| Error::Config(format!("{origin}: {m}")))?;
        Ok(cfg)
    }

    /// Loads built-in preset `name` with `overrides`. A preset flow whose name the overrides
    /// made wrong (they changed what it describes: pattern, mix, size, load) is named anew
    /// from the flow as resolved, unless the overrides name it (docs/workloads.md).
    pub fn load_preset(name: &str, overrides: &[String]) -> Result<Config, Error> {
        let text = preset_toml(name)?;
        let origin = format!("preset {name}");
        let mut cfg = Config::load(text, &origin, overrides)?;
        if !overrides.is_empty() {
            let preset = Config::load(text, &origin, &[])?;
            names::rename_preset_flows(&preset, &mut cfg, overrides);
        }
        Ok(cfg)
    }

    /// The configuration as TOML, every default written out.
    pub fn to_toml(&self) -> String {
        toml::to_string(self).expect("configuration always serialises")
    }

    /// FNV-1a hash of the canonical JSON form: identifies the configuration in results.
    pub fn hash_hex(&self) -> String {
        let s = serde_json::to_string(self).expect("configuration always serialises");
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in s.bytes() {
            h ^= b as u64;
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
        format!("{h:016x}")
    }
}

/// Top-level tables that describe the device. A TOML file with none of them (only flows, and
/// perhaps `[run]`, `[steady_state]` or `[precondition]`) runs on [`FLOWS_ONLY_PRESET`].
pub const DEVICE_SECTIONS: [&str; 7] =
    ["host", "interface", "pcie", "cache", "ftl", "tsu", "flash"];

/// The device a file of flows alone runs on: the preset the README names.
pub const FLOWS_ONLY_PRESET: &str = "mqsim-paper";

/// Whether TOML `text` describes no device (see [`DEVICE_SECTIONS`]). Text that does not
/// parse is not flows-only: loading it reports the syntax error.
pub fn describes_no_device(text: &str) -> bool {
    match toml::from_str::<toml::Table>(text) {
        Ok(t) => !DEVICE_SECTIONS.iter().any(|k| t.contains_key(*k)),
        Err(_) => false,
    }
}

/// `top` over `under`: tables merge key by key, anything else (arrays of tables such as
/// `flow` included) replaces.
fn merge(under: &mut toml::Value, top: toml::Value) {
    merge_at(under, top, "")
}

fn merge_at(under: &mut toml::Value, top: toml::Value, path: &str) {
    match (under, top) {
        (toml::Value::Table(u), toml::Value::Table(t)) => {
            for (k, v) in t {
                let here = if path.is_empty() {
                    k.clone()
                } else {
                    format!("{path}.{k}")
                };
                // A policy's parameters over the same policy given by name keep its type.
                if let Some(slot) = u.get_mut(&k) {
                    if v.as_table().is_some_and(|t| !t.contains_key("type")) {
                        overrides::expand_policy_name(slot, &here);
                    }
                }
                match u.get_mut(&k) {
                    Some(slot) if slot.is_table() && v.is_table() => merge_at(slot, v, &here),
                    _ => {
                        u.insert(k, v);
                    }
                }
            }
        }
        (u, t) => *u = t,
    }
}

/// JSON Schema of the configuration, for editors and for `docs/config.schema.json`.
pub fn schema_json() -> String {
    let schema = schemars::schema_for!(Config);
    serde_json::to_string_pretty(&schema).expect("schema serialises")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// docs/config.schema.json is generated from these structs; keep it current
    /// (`make schema` rewrites it).
    #[test]
    fn schema_file_is_current() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/config.schema.json");
        let now = schema_json() + "\n";
        if std::env::var_os("UPDATE_SCHEMA").is_some() {
            std::fs::write(path, &now).unwrap();
        }
        let on_disk = std::fs::read_to_string(path).unwrap_or_default();
        assert!(
            on_disk == now,
            "docs/config.schema.json is stale: run `make schema`"
        );
    }

    #[test]
    fn presets_load_and_unknown_keys_are_refused() {
        for (name, _) in preset_names() {
            Config::load(preset_toml(name).unwrap(), name, &[]).unwrap();
        }
        let e = Config::load(
            preset_toml("x25m").unwrap(),
            "x25m",
            &["flash.chanels=3".into()],
        )
        .unwrap_err();
        let m = e.to_string();
        assert!(m.contains("chanels") && m.contains("channels"), "{m}");
        let e = Config::load(
            "",
            "t",
            &[
                "flash.page_size_bytes=3000".into(),
                "flow.0.requests=1".into(),
            ],
        )
        .unwrap_err();
        assert!(e.to_string().contains("flash.page_size_bytes"), "{e}");
        let e = preset_toml("nope").unwrap_err();
        assert!(e.to_string().contains("mqsim-paper"), "{e}");
    }
}
