//! Shared driver of the fuzz targets: feed bytes to a `TraceReader`, drain it, and check the
//! invariants that must hold for any input. A panic anywhere is a bug.

use std::io::Cursor;

use ssdkit_core::config::{DelimitedConfig, TimeUnit, TraceFormat};
use ssdkit_core::internals::workload::trace::{validate_delimited, TraceReader};
use ssdkit_core::Error;

/// True for gzip or zstd input. The per-format targets leave those to `detect`: a few bytes of
/// zstd can expand to megabytes of blank lines, which is valid (and streamed) but makes
/// executions slow enough to stall a parser-focused run.
pub fn is_compressed(data: &[u8]) -> bool {
    data.starts_with(&[0x1f, 0x8b]) || data.starts_with(&[0x28, 0xb5, 0x2f, 0xfd])
}

/// Reads `data` as `format`, with and without `skip_malformed`, to the end. Compressed input
/// is skipped unless `format` is `Auto` (the `detect` target).
pub fn drain(data: &[u8], format: TraceFormat, delimited: Option<&DelimitedConfig>) {
    if format != TraceFormat::Auto && is_compressed(data) {
        return;
    }
    for skip in [false, true] {
        let opened = TraceReader::from_reader(
            "fuzz",
            Box::new(Cursor::new(data.to_vec())),
            format,
            delimited,
            skip,
        );
        let mut r = match opened {
            Ok(r) => r,
            Err(Error::Trace(m)) | Err(Error::Config(m)) | Err(Error::Io(m)) => {
                assert!(!m.is_empty());
                continue;
            }
            Err(e) => panic!("unexpected error kind from from_reader: {e:?}"),
        };
        if format != TraceFormat::Auto {
            assert_eq!(r.format(), format);
        }
        let mut errors = 0u64;
        loop {
            match r.next_record() {
                Ok(Some(rec)) => {
                    assert!(rec.bytes > 0, "record with 0 bytes");
                    assert!(
                        rec.offset_bytes.checked_add(rec.bytes).is_some(),
                        "record end overflows"
                    );
                    assert!(r.line_number() >= 1);
                    assert!(r.line_number() == r.counters().lines);
                    assert!(r.line_text().chars().count() <= 203);
                }
                Ok(None) => break,
                Err(Error::Trace(m)) => {
                    assert!(m.starts_with("fuzz"), "message does not name the file: {m}");
                    errors += 1;
                }
                Err(e) => panic!("unexpected error kind from next_record: {e:?}"),
            }
        }
        assert_eq!(r.next_record(), Ok(None), "the end is final");
        let c = r.counters();
        let counted = c.records + c.skipped_malformed + c.no_data + c.not_requests;
        // Every line is counted once; malformed lines reported as errors are the difference
        // (plus at most one final error that belongs to no line).
        assert!(
            counted <= c.lines && c.lines <= counted + errors,
            "{c:?} errors {errors}"
        );
        if skip {
            assert!(
                errors <= 1,
                "with skip_malformed only a final error may come: {errors}"
            );
        }
    }
}

/// A `[flow.delimited]` description taken from the first bytes of the input, so one target
/// explores both descriptions and texts; returns it and the remaining text.
pub fn delimited_from(data: &[u8]) -> (DelimitedConfig, &[u8]) {
    let mut b = [0u8; 12];
    let n = data.len().min(b.len());
    b[..n].copy_from_slice(&data[..n]);
    let rest = &data[n..];
    let pick = |x: u8, opts: &[&str]| opts[x as usize % opts.len()].to_string();
    let col = |x: u8| (x % 9) as u32; // 0..8: 0 is "none" (or invalid where required)
    let words = |x: u8, opts: &[&str]| -> Vec<String> {
        opts.iter()
            .enumerate()
            .filter(|(i, _)| x >> i & 1 == 1)
            .map(|(_, s)| s.to_string())
            .collect()
    };
    let op_write_bit = if b[8] & 0x80 != 0 {
        (b[8] & 0x3f) as i32
    } else {
        -1
    };
    let d = DelimitedConfig {
        delimiter: pick(b[0], &["whitespace", ",", ";", "\t", "|", " ", "ab", ""]),
        header_lines: (b[1] % 4) as u64,
        comment: pick(b[1] >> 2, &["#", "", "//", "1"]),
        time_column: col(b[2]),
        time_unit: [
            TimeUnit::Ps,
            TimeUnit::Ns,
            TimeUnit::Us,
            TimeUnit::Ms,
            TimeUnit::S,
            TimeUnit::Ticks100ns,
        ][(b[2] >> 4) as usize % 6],
        offset_column: col(b[3]),
        offset_unit_bytes: [1, 512, 4096, 0, u64::MAX][(b[3] >> 4) as usize % 5],
        size_column: col(b[4]),
        size_unit_bytes: [1, 512, 4096, 0, u64::MAX][(b[4] >> 4) as usize % 5],
        op_column: col(b[5]),
        read_values: if op_write_bit >= 0 {
            vec![]
        } else {
            words(b[6], &["r", "R", "read", "28", "1", ""])
        },
        write_values: if op_write_bit >= 0 {
            vec![]
        } else {
            words(b[7], &["w", "W", "write", "2a", "0"])
        },
        trim_values: words(b[7] >> 5, &["t", "discard", "42"]),
        op_write_bit,
        device_column: col(b[9]),
        event_column: col(b[10]),
        event_values: if b[10] % 9 == 0 {
            vec![]
        } else {
            words(b[11], &["D", "C", "issue", ""])
        },
    };
    (d, rest)
}

/// Drives the generic reader with a description from the input.
pub fn drain_delimited(data: &[u8]) {
    let (d, rest) = delimited_from(data);
    let valid = validate_delimited(&d).is_ok();
    let r = TraceReader::from_reader(
        "fuzz",
        Box::new(Cursor::new(rest.to_vec())),
        TraceFormat::Delimited,
        Some(&d),
        false,
    );
    if let Err(Error::Config(m)) = &r {
        assert!(!valid, "valid description refused: {m}");
    }
    if valid {
        drain(rest, TraceFormat::Delimited, Some(&d));
    }
}

/// Splits a `config` target input: TOML text, then after a line `%%` up to 4 `key=value`
/// overrides, one per line. Invalid UTF-8 is read lossily (the loader takes `&str`).
pub fn config_input(data: &[u8]) -> (String, Vec<String>) {
    let text = String::from_utf8_lossy(data);
    match text.split_once("\n%%\n") {
        Some((toml, rest)) => (
            toml.to_string(),
            rest.lines().take(4).map(str::to_string).collect(),
        ),
        None => (text.into_owned(), Vec::new()),
    }
}

/// Loads a configuration as `ssdkit run` would; any input must give `Ok` or `Err`, never a
/// panic. A loaded configuration must write out as TOML that loads back to itself.
pub fn load_config(data: &[u8]) {
    let (text, overrides) = config_input(data);
    match ssdkit_core::config::Config::load(&text, "fuzz.toml", &overrides) {
        Ok(c) => {
            let again = ssdkit_core::config::Config::load(&c.to_toml(), "fuzz.toml", &[])
                .unwrap_or_else(|e| panic!("a loaded configuration does not reload: {e}"));
            assert!(again == c, "a configuration changed through its TOML form");
            let _ = c.hash_hex();
        }
        Err(e) => {
            let m = e.to_string();
            assert!(
                m.starts_with("fuzz.toml") || m.starts_with("override `"),
                "{m}"
            );
        }
    }
}

/// The fixed configuration the `snapshot` target loads snapshots against.
pub fn snapshot_config() -> ssdkit_core::config::Config {
    ssdkit_core::config::Config::load(
        include_str!("../snapshot_config.toml"),
        "snapshot_config.toml",
        &[],
    )
    .expect("the snapshot target's configuration is valid")
}

/// Writes `data` to a per-process file and loads it as a snapshot of [`snapshot_config`]
/// through the public API; any file must give `Ok` or `Err`, never a panic.
pub fn load_snapshot(c: &ssdkit_core::config::Config, data: &[u8]) {
    let path = std::env::temp_dir().join(format!("ssdkit-fuzz-{}.snap", std::process::id()));
    std::fs::write(&path, data).expect("temporary file");
    if let Err(e) = ssdkit_core::api::simulator_from_snapshot(c, &path) {
        assert!(!e.to_string().is_empty());
    }
}
