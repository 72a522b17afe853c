//! Entry points used by the Python bindings and the tests.

use crate::config::{preset_toml, Config};
use crate::error::Error;
use crate::sim::{RunOutput, Simulator};

/// Where a configuration comes from.
pub enum Source<'a> {
    Preset(&'a str),
    /// TOML text and the name of its origin (a file path) for error messages.
    Toml {
        text: &'a str,
        origin: &'a str,
    },
}

pub fn load(source: Source<'_>, overrides: &[String]) -> Result<Config, Error> {
    match source {
        Source::Preset(name) => {
            Config::load(preset_toml(name)?, &format!("preset {name}"), overrides)
        }
        Source::Toml { text, origin } => Config::load(text, origin, overrides),
    }
}

/// Runs a validated configuration.
pub fn run(c: &Config, progress: bool, keep_log: bool) -> Result<RunOutput, Error> {
    let sim = Simulator::new(c);
    Ok(sim.run(c, progress, keep_log)?.0)
}

/// Runs and returns the simulator too, so tests can inspect the final FTL state.
pub fn run_keep_state(c: &Config, keep_log: bool) -> Result<(RunOutput, Simulator), Error> {
    Simulator::new(c).run(c, false, keep_log)
}
