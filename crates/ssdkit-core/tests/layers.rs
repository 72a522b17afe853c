//! The crate's top-level modules form layers (docs/architecture.md): a module may name only
//! modules below it in `ORDER`, so no import goes upward and no two modules import each other.
//! Every `crate::` path in src/ counts, in `use` lines and inline, unit tests included (a test
//! that needs the layers above belongs in tests/). Only comments are skipped.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

/// Lowest first. Keep in step with the table in docs/architecture.md (checked below).
const ORDER: &[&str] = &[
    "engine", "ids", "error", "config", "flash", "settings", "workload", "frontend", "cache",
    "tsu", "result", "stats", "ftl", "host", "sim", "api", "device", "models",
];

/// Names the crate root re-exports, and the module they come from.
const ROOT_ALIASES: &[(&str, &str)] = &[("Error", "error")];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in fs::read_dir(dir).expect("read src") {
        let p = e.expect("entry").path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The text without `//` comments and `/* */` blocks (doc comments name paths freely).
fn code_only(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut in_block = 0usize;
    for line in text.lines() {
        let mut rest = line;
        loop {
            if in_block > 0 {
                match rest.find("*/") {
                    Some(i) => {
                        in_block -= 1;
                        rest = &rest[i + 2..];
                    }
                    None => break,
                }
            } else {
                let slash = rest.find("//");
                let block = rest.find("/*");
                match (slash, block) {
                    (Some(s), b) if b.is_none_or(|b| s < b) => {
                        out.push_str(&rest[..s]);
                        break;
                    }
                    (_, Some(b)) => {
                        out.push_str(&rest[..b]);
                        in_block += 1;
                        rest = &rest[b + 2..];
                    }
                    _ => {
                        out.push_str(rest);
                        break;
                    }
                }
            }
        }
        out.push('\n');
    }
    out
}

fn ident_at(s: &str) -> &str {
    let end = s
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(s.len());
    &s[..end]
}

/// The top-level names a file's code reaches through `crate::`, with the line of each.
fn crate_names(code: &str) -> Vec<(String, usize)> {
    let line_of = |at: usize| code[..at].matches('\n').count() + 1;
    let mut names = Vec::new();
    for (i, _) in code.match_indices("crate::") {
        let before = code[..i].chars().next_back();
        if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$') {
            continue; // `$crate::` or an identifier ending in "crate"
        }
        let after = i + "crate::".len();
        let rest = code[after..].trim_start();
        let Some(group) = rest.strip_prefix('{') else {
            let id = ident_at(rest);
            if !id.is_empty() {
                names.push((id.to_string(), line_of(i)));
            }
            continue;
        };
        // `crate::{a::X, b}`: the first name of each item at the group's top level.
        let base = code.len() - group.len();
        let (mut depth, mut item_start) = (1, true);
        for (off, c) in group.char_indices() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                }
                ',' if depth == 1 => item_start = true,
                c if item_start && depth == 1 && !c.is_whitespace() => {
                    item_start = false;
                    let id = ident_at(&group[off..]);
                    if !id.is_empty() {
                        names.push((id.to_string(), line_of(base + off)));
                    }
                }
                _ => {}
            }
        }
    }
    names
}

/// For each file under src/, its top-level module and the modules its code names.
fn imports(src: &Path) -> Vec<(String, String, String, usize)> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    files.sort();
    let mut edges = Vec::new();
    for f in files {
        let rel = f.strip_prefix(src).unwrap();
        if rel == Path::new("lib.rs") {
            continue; // the root declares and re-exports every module
        }
        let first = rel
            .components()
            .next()
            .unwrap()
            .as_os_str()
            .to_string_lossy();
        let module = first.trim_end_matches(".rs").to_string();
        let code = code_only(&fs::read_to_string(&f).unwrap());
        for (name, line) in crate_names(&code) {
            let to = ROOT_ALIASES
                .iter()
                .find(|(a, _)| *a == name)
                .map_or(name.clone(), |(_, m)| m.to_string());
            if to != module {
                edges.push((rel.display().to_string(), module.clone(), to, line));
            }
        }
    }
    edges
}

#[test]
fn top_level_modules_import_only_layers_below() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let rank: BTreeMap<&str, usize> = ORDER.iter().enumerate().map(|(i, m)| (*m, i)).collect();
    let mut modules: Vec<String> = fs::read_dir(&src)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir() || p.extension().is_some_and(|x| x == "rs"))
        .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
        .filter(|m| m != "lib")
        .collect();
    modules.sort();
    let mut listed: Vec<String> = ORDER.iter().map(|m| m.to_string()).collect();
    listed.sort();
    assert_eq!(
        modules, listed,
        "every top-level module of src/ has its place in ORDER (tests/layers.rs) and in docs/architecture.md"
    );
    let mut wrong = Vec::new();
    for (file, from, to, line) in imports(&src) {
        match rank.get(to.as_str()) {
            None => wrong.push(format!(
                "src/{file}:{line}: crate::{to} is not a top-level module (add it to ROOT_ALIASES if the root re-exports it)"
            )),
            Some(&r) if r > rank[from.as_str()] => {
                wrong.push(format!("src/{file}:{line}: {from} imports {to}, a layer above it"))
            }
            _ => {}
        }
    }
    assert!(
        wrong.is_empty(),
        "imports against the layer order {ORDER:?} (docs/architecture.md):\n{}",
        wrong.join("\n")
    );
}

/// The order the docs state is the order this test checks.
#[test]
fn the_documented_order_is_the_checked_one() {
    let doc = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/architecture.md");
    let text = fs::read_to_string(&doc).expect("docs/architecture.md");
    // The table's rows name one module each, in backticks, first column, top layer first.
    let mut documented: Vec<&str> = text
        .lines()
        .filter_map(|l| l.strip_prefix("| `"))
        .filter_map(|l| l.split('`').next())
        .map(|m| m.trim_end_matches('/'))
        .collect();
    documented.reverse();
    assert_eq!(documented, ORDER, "the layer table of docs/architecture.md");
}

#[test]
fn the_scanner_sees_grouped_and_inline_paths() {
    let code = code_only(
        "use crate::{\n    config::X,\n    flash::{Y, Z},\n};\n// crate::sim in a comment\nlet a = crate::Error::Io; /* crate::api */ crate::tsu::f();\n",
    );
    let names: Vec<String> = crate_names(&code).into_iter().map(|(n, _)| n).collect();
    assert_eq!(names, ["config", "flash", "Error", "tsu"]);
}

/// Layers whose components are built from `settings::Settings` (the configuration resolved
/// once), never from the raw configuration.
const BUILT_FROM_SETTINGS: &[&str] = &[
    "cache", "flash", "frontend", "ftl", "host", "stats", "tsu", "workload",
];

/// Constructors that still read a configuration section. TODO(issue 32): resolve each into
/// `Settings` and remove it here; the list may only shrink.
const NOT_YET: &[&str] = &["workload/flow.rs", "workload/trace/delimited.rs"];

/// The parameter list of each `fn new` in `code`.
fn constructor_params(code: &str) -> Vec<&str> {
    let mut out = Vec::new();
    for (i, _) in code.match_indices("fn new") {
        let rest = &code[i + "fn new".len()..];
        let Some(open) = rest.find('(') else { continue };
        if !rest[..open].trim().is_empty() && !rest[..open].trim().starts_with('<') {
            continue; // `fn new_x(`
        }
        let mut depth = 0;
        for (j, c) in rest[open..].char_indices() {
            match c {
                '(' => depth += 1,
                ')' => {
                    depth -= 1;
                    if depth == 0 {
                        out.push(&rest[open + 1..open + j]);
                        break;
                    }
                }
                _ => {}
            }
        }
    }
    out
}

#[test]
fn components_are_built_from_settings_not_the_configuration() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut wrong = Vec::new();
    for layer in BUILT_FROM_SETTINGS {
        let mut files = Vec::new();
        let dir = src.join(layer);
        if dir.is_dir() {
            rust_files(&dir, &mut files);
        } else {
            files.push(src.join(format!("{layer}.rs")));
        }
        files.sort();
        for f in files {
            let rel = f.strip_prefix(&src).unwrap().display().to_string();
            if NOT_YET.contains(&rel.as_str()) {
                continue;
            }
            let code = code_only(&fs::read_to_string(&f).unwrap());
            for params in constructor_params(&code) {
                let reads_config = params
                    .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                    .any(|w| w.ends_with("Config"));
                if reads_config {
                    wrong.push(format!("src/{rel}: fn new({})", params.trim()));
                }
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "constructors that read the raw configuration; build them from settings::Settings \
         (resolved once, docs/architecture.md):\n{}",
        wrong.join("\n")
    );
}

/// The public API is configuration, runs, the device, the analytical models, the result and
/// errors; the layers are
/// `pub(crate)`, reached from tests only through the hidden `internals` module.
#[test]
fn only_the_public_api_is_public() {
    let lib = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/lib.rs");
    let code = code_only(&fs::read_to_string(lib).unwrap());
    // Declarations at the root only (the modules inside `internals` are indented).
    let mut public: Vec<&str> = code
        .lines()
        .filter_map(|l| l.strip_prefix("pub mod "))
        .map(|m| m.trim_end_matches([';', '{', ' ']))
        .collect();
    public.sort_unstable();
    assert_eq!(
        public,
        [
            "api",
            "config",
            "device",
            "error",
            "internals",
            "models",
            "result"
        ]
    );
}

/// The functions of the drivers above `sim` (building a simulator, the batch run, the result
/// document, the step-by-step device's queues), by name.
const DRIVER_FNS: &[&str] = &[
    "new",
    "new_checked",
    "with_ftl",
    "assemble_with",
    "run",
    "run_with",
    "run_to_end",
    "flow_mean_latency_us",
    "result",
    "result_json",
    "result_document",
    "keep_completions",
    "queues",
    "completed_total",
    "advance_before",
    "submit_external",
    "drain_completions",
    "take_completions",
];

/// `sim/` holds the event enum, its handler, the wiring between layers and the run loop; the
/// three drivers of one simulator (the batch run, `Device`, and the NBD emulator on `Device`)
/// and the construction that chooses the device state and the request source live above it,
/// in `api` and `device` (docs/architecture.md).
#[test]
fn drivers_and_construction_live_above_sim() {
    let sim = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/sim");
    let mut files = Vec::new();
    rust_files(&sim, &mut files);
    files.sort();
    let mut wrong = Vec::new();
    for f in files {
        let code = code_only(&fs::read_to_string(&f).unwrap());
        for (i, _) in code.match_indices("fn ") {
            if code[..i]
                .chars()
                .next_back()
                .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
            {
                continue;
            }
            let name = ident_at(&code[i + 3..]);
            if DRIVER_FNS.contains(&name) {
                let line = code[..i].matches('\n').count() + 1;
                wrong.push(format!(
                    "src/sim/{}:{line}: fn {name}",
                    f.file_name().unwrap().to_string_lossy()
                ));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "driver or construction code in sim/; it belongs in api/ (build, batch, report) or device.rs:\n{}",
        wrong.join("\n")
    );
}

/// `sim/` only wires the layers (docs/architecture.md): what grows there is a decision or a
/// driver that belongs in a layer or above. The budget counts every line, comments included.
/// 1,500 until `flash.bus.arbitration = "data_first"` added a sixteenth event, the channel
/// going idle, and its wiring (`sim/channel.rs`; its decisions are `flash::ChannelQueues`');
/// 1,610 until MQSim's chip and channel offers passed over dies with nothing queued
/// (`offer_die`: the test of the sim's own state, suspension and background GC, is wiring);
/// 1,620 until an arbitration due at a transfer's end ran in that transfer's `DieXferDone`
/// (`transfer_ended`; whether it is due there is `flash::ChannelQueues`'); 1,632 until
/// firmware that takes no time handed a request on in the event that brought it in.
const SIM_LINE_BUDGET: usize = 1_638;

#[test]
fn sim_stays_within_its_line_budget() {
    let sim = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/sim");
    let mut files = Vec::new();
    rust_files(&sim, &mut files);
    let per_file: Vec<(String, usize)> = files
        .iter()
        .map(|f| {
            let n = fs::read_to_string(f).unwrap().lines().count();
            (f.file_name().unwrap().to_string_lossy().into_owned(), n)
        })
        .collect();
    let total: usize = per_file.iter().map(|(_, n)| n).sum();
    assert!(
        total <= SIM_LINE_BUDGET,
        "src/sim/ has {total} lines, over its budget of {SIM_LINE_BUDGET}: {per_file:?}; move the decision or driver that grew into its layer"
    );
}
