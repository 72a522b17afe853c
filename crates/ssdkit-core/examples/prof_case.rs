//! Runs one configuration of the mqsim-paper preset in Rust alone, for profiling a single
//! workload (`perf record ./target/release/examples/prof_case key=value...`): the overrides
//! are configuration keys, as `--set` takes them; prints the simulation's wall time and events.
//! Usage: cargo run --release --example prof_case [key=value...]
use ssdkit_core::api::{load, run, Source};
fn main() {
    let o: Vec<String> = std::env::args().skip(1).collect();
    let c = load(Source::Preset("mqsim-paper"), &o).unwrap_or_else(|e| panic!("{e}"));
    let out = run(&c, false, false).unwrap_or_else(|e| panic!("{e}"));
    eprintln!(
        "run {:.3} s, {} events",
        out.result["wall_time_s"], out.events
    );
}
