//! Times snapshot save and load of a preset's preconditioned device.
//! Usage: cargo run --release --example snapshot_io [preset [path [key=value...]]]
//! The overrides change the device (`make test` runs it on a shrunken one).
use ssdkit_core::api::{load, precondition_to_snapshot, Source};
use std::time::Instant;

fn main() {
    let mut args = std::env::args().skip(1);
    let preset = args.next().unwrap_or_else(|| "mqsim-paper".into());
    let path = std::path::PathBuf::from(
        args.next()
            .unwrap_or_else(|| "/tmp/ssdkit-bench.snap".into()),
    );
    let mut o: Vec<String> = vec!["flow.0.read_fraction=0".into()];
    o.extend(args);
    let c = load(Source::Preset(&preset), &o).unwrap_or_else(|e| panic!("{e}"));
    let rec = precondition_to_snapshot(&c, &path).unwrap();
    println!(
        "precondition {:.2} s, save {:.2} s, {} bytes",
        rec.wall_time_s,
        rec.snapshot_save_s.unwrap(),
        rec.snapshot_bytes.unwrap()
    );
    let t = Instant::now();
    let (ftl, _) = ssdkit_core::internals::ftl::snapshot::load(&c, &path).unwrap();
    println!(
        "load {:.2} s ({} logical pages)",
        t.elapsed().as_secs_f64(),
        ftl.logical_pages()
    );
    std::fs::remove_file(&path).unwrap();
}
