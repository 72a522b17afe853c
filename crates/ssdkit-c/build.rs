//! Generates the C header with cbindgen (as a library: CI has no cbindgen binary) on every
//! build whose inputs changed: `cargo build -p ssdkit-c` writes it to `$OUT_DIR/ssdkit.h`.
//!
//! The copy C programs include, `include/ssdkit.h`, is committed, so that using the library
//! needs no Rust tooling. It is kept equal to the generated one by a test, not by this script:
//! `tests/header.rs` fails while they differ, and `make header` (the same test with
//! `UPDATE_HEADER=1`) copies the generated header over it, as `make schema` does for the
//! configuration schema. Writing `include/ssdkit.h` from here would hide a stale committed
//! copy (every build, CI's included, would first fix the file the test then compares), and
//! build scripts should write nothing outside `OUT_DIR`. A build with a stale committed header
//! warns.

use std::path::PathBuf;

fn main() {
    let dir = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("run by cargo"));
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("run by cargo")).join("ssdkit.h");
    for input in ["src", "cbindgen.toml", "build.rs", "include/ssdkit.h"] {
        println!("cargo:rerun-if-changed={input}");
    }
    let config = cbindgen::Config::from_file(dir.join("cbindgen.toml"))
        .unwrap_or_else(|e| panic!("cbindgen.toml: {e}"));
    let bindings = cbindgen::Builder::new()
        .with_config(config)
        .with_src(dir.join("src/lib.rs"))
        .generate()
        .unwrap_or_else(|e| panic!("cbindgen cannot generate the header: {e}"));
    let mut text = Vec::new();
    bindings.write(&mut text);
    std::fs::write(&out, &text).unwrap_or_else(|e| panic!("{}: {e}", out.display()));
    let committed = std::fs::read(dir.join("include/ssdkit.h")).unwrap_or_default();
    if committed != text {
        println!(
            "cargo:warning=crates/ssdkit-c/include/ssdkit.h differs from the header the sources \
             give: run `make header`"
        );
    }
}
