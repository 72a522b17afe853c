//! The committed header `include/ssdkit.h` (what C programs include) is the one cbindgen
//! generates from the sources now (`build.rs` writes it to `$OUT_DIR` on every build), so it
//! cannot drift from the library. `UPDATE_HEADER=1` (`make header`) rewrites the committed copy.

#[test]
fn committed_header_is_current() {
    let generated = include_str!(concat!(env!("OUT_DIR"), "/ssdkit.h"));
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/include/ssdkit.h");
    if std::env::var_os("UPDATE_HEADER").is_some_and(|v| v == "1") {
        std::fs::write(path, generated).unwrap_or_else(|e| panic!("{path}: {e}"));
        return;
    }
    let committed = std::fs::read_to_string(path).unwrap_or_default();
    assert!(
        committed == generated,
        "{path} is out of date: the sources give a different header (see the difference with \
         `diff {path} {}/ssdkit.h`); run `make header` and commit the result",
        env!("OUT_DIR")
    );
}
