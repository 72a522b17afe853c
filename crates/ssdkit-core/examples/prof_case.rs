//! Runs one configuration in Rust alone, for profiling a single workload (`perf record
//! ./target/release/examples/prof_case [CONFIG.toml] key=value...`): the configuration is the
//! mqsim-paper preset, or a TOML file given first (e.g. from `ssdkit import mqsim`); the
//! overrides are configuration keys, as `--set` takes them; prints the simulation's wall time
//! and events (and with PROF_OUT=FILE writes the result document there).
//! Usage: cargo run --release --example prof_case [CONFIG.toml] [key=value...]
use ssdkit_core::api::{load, run, Source};
fn main() {
    let mut o: Vec<String> = std::env::args().skip(1).collect();
    let file = match o.first() {
        Some(f) if f.ends_with(".toml") => Some(o.remove(0)),
        _ => None,
    };
    let text = file
        .as_ref()
        .map(|f| std::fs::read_to_string(f).unwrap_or_else(|e| panic!("{f}: {e}")));
    let source = match (&file, &text) {
        (Some(f), Some(t)) => Source::Toml { text: t, origin: f },
        _ => Source::Preset("mqsim-paper"),
    };
    let c = load(source, &o).unwrap_or_else(|e| panic!("{e}"));
    let out = run(&c, false, false).unwrap_or_else(|e| panic!("{e}"));
    // PROF_OUT=file.json: the result document, to compare figures between builds.
    if let Some(p) = std::env::var_os("PROF_OUT") {
        std::fs::write(p, out.result.to_string()).unwrap();
    }
    eprintln!(
        "run {:.3} s, {} events",
        out.result["wall_time_s"], out.events
    );
}
