use ssdkit_core::api::{load, run, Source};
fn main() {
    let o: Vec<String> = std::env::args().skip(1).collect();
    let c = load(Source::Preset("mqsim-paper"), &o).unwrap();
    let out = run(&c, false, false).unwrap();
    eprintln!(
        "run {:.3} s, {} events",
        out.result["wall_time_s"], out.events
    );
}
