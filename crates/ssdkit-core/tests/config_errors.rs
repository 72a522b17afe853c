//! Configuration messages and what validation accepts (issue 9):
//! - TOML syntax errors name the file, line and column; wrong table brackets and integers
//!   beyond 64 bits are named as such, with the key;
//! - keys of the interface, policy or feature not in use are refused when set (a default value
//!   never is), and their defaults are not validated as if they were used.

use ssdkit_core::api::{load, Source};
use ssdkit_core::config::{preset_names, preset_toml, Config};

fn err(text: &str, overrides: &[&str]) -> String {
    let o: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
    match Config::load(text, "my.toml", &o) {
        Ok(_) => panic!("{text:?} with {overrides:?} must be refused"),
        Err(e) => e.to_string(),
    }
}

fn preset_err(name: &str, overrides: &[&str]) -> String {
    let o: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
    match load(Source::Preset(name), &o) {
        Ok(_) => panic!("{name} with {overrides:?} must be refused"),
        Err(e) => e.to_string(),
    }
}

fn preset_ok(name: &str, overrides: &[&str]) -> Config {
    let o: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
    load(Source::Preset(name), &o).unwrap_or_else(|e| panic!("{name} {overrides:?}: {e}"))
}

#[test]
fn syntax_errors_name_origin_line_and_column() {
    let e = err(
        "[run]\nseed = 1\n\n[ftl]\nspare_factor = = 0.1\n[[flow]]\n",
        &[],
    );
    assert!(e.starts_with("my.toml:5:16: invalid TOML: "), "{e}");
    assert!(!e.contains('\n'), "one line: {e}");
    // Columns count characters, not bytes.
    let e = err("[[flow]]\nname = \"é\" x\n", &[]);
    assert!(e.starts_with("my.toml:2:12: "), "{e}");
}

#[test]
fn integers_beyond_64_bits_are_out_of_range_with_their_key() {
    let e = err(
        "[run]\nseed = 123456789012345678901234567890\n[[flow]]\n",
        &[],
    );
    assert!(e.starts_with("my.toml:2:8: "), "{e}");
    assert!(
        e.contains("key `run.seed`") && e.contains("out of range for a 64-bit integer"),
        "{e}"
    );
    let e = err(
        "[[flow]]\nrequests = 5\n[[flow]]\nrequests = 99999999999999999999\n",
        &[],
    );
    assert!(e.contains("key `flow.1.requests`"), "{e}");
    assert!(e.contains("out of range for a 64-bit integer"), "{e}");
    let e = err("[[flow]]\n", &["run.seed=123456789012345678901234567890"]);
    assert!(
        e.contains("key `run.seed`") && e.contains("out of range for a 64-bit integer"),
        "{e}"
    );
    assert!(!e.contains("invalid type"), "{e}");
}

#[test]
fn sections_with_the_wrong_brackets_are_named() {
    let e = err("[[flash]]\nchannels = 4\n[[flow]]\n", &[]);
    assert!(
        e.contains("key `flash` must be a table (`[flash]`), not an array of tables (`[[flash]]`)"),
        "{e}"
    );
    assert!(!e.contains("flash[0"), "{e}");
    let e = err("[[flash.bus]]\nwidth_bits = 8\n[[flow]]\n", &[]);
    assert!(e.contains("key `flash.bus` must be a table"), "{e}");
    let e = err("[flow]\nrequests = 4\n", &[]);
    assert!(
        e.contains("key `flow` must be an array of tables (`[[flow]]`"),
        "{e}"
    );
    let e = err("[[flow]]\ntrace = \"t\"\n[[flow.delimited]]\n", &[]);
    assert!(e.contains("key `flow.0.delimited` must be a table"), "{e}");
}

#[test]
fn keys_of_the_other_interface_are_refused_when_set() {
    // x25m is SATA: a PCIe setting would be ignored.
    let e = preset_err("x25m", &["pcie.lanes=8"]);
    assert!(
        e.contains("key `pcie.lanes` = 8") && e.contains("\"nvme\" only"),
        "{e}"
    );
    let e = preset_err("x25m", &["pcie.generation=4"]);
    assert!(e.contains("key `pcie.generation`"), "{e}");
    let e = preset_err("x25m", &["interface.queue_fetch_size=16"]);
    assert!(e.contains("key `interface.queue_fetch_size`"), "{e}");
    // mqsim-paper is NVMe: NCQ and SATA link settings would be ignored.
    let e = preset_err("mqsim-paper", &["interface.ncq_depth=16"]);
    assert!(
        e.contains("key `interface.ncq_depth` = 16") && e.contains("\"sata\" only"),
        "{e}"
    );
    for k in [
        "interface.sata_gbps=6",
        "interface.sata_frame_overhead_bytes=0",
        "interface.sata_max_data_fis_bytes=4096",
        "interface.sata_processing_delay_us=10",
    ] {
        let e = preset_err("mqsim-paper", &[k]);
        assert!(e.contains(k.split('=').next().unwrap()), "{e}");
    }
    let e = preset_err("x25m", &["interface.sata_gbps=4"]);
    assert!(
        e.contains("key `interface.sata_gbps` = 4") && e.contains("allowed 1.5, 3 or 6"),
        "{e}"
    );
    let e = preset_err("x25m", &["interface.sata_processing_delay_us=-1"]);
    assert!(
        e.contains("key `interface.sata_processing_delay_us`") && e.contains("1000000"),
        "{e}"
    );
    // Defaults written out are not settings of the other interface.
    preset_ok("x25m", &["pcie.lanes=4", "pcie.generation=3"]);
    preset_ok("mqsim-paper", &["interface.ncq_depth=32"]);
    // Switching the interface keeps the other one's keys usable.
    preset_ok("x25m", &["interface.type=nvme", "pcie.lanes=8"]);
    preset_ok(
        "mqsim-paper",
        &["interface.type=sata", "interface.ncq_depth=8"],
    );
    let e = preset_err("mqsim-paper", &["interface.wrr_high=8"]);
    assert!(
        e.contains("key `interface.wrr_high`") && e.contains("\"weighted\""),
        "{e}"
    );
}

#[test]
fn presets_load_with_their_keys_in_use() {
    for (name, _) in preset_names() {
        Config::load(preset_toml(name).unwrap(), name, &[]).unwrap();
    }
}

#[test]
fn defaults_of_unused_features_are_not_validated() {
    // A raised GC threshold is above the default background threshold (0.06); with background
    // GC off that default is not in use and must not refuse the device.
    let c = preset_ok(
        "mqsim-paper",
        &["ftl.spare_factor=0.2", "ftl.gc_threshold=0.1"],
    );
    assert!(!c.ftl.gc_background);
    // A plane of 12 blocks has fewer than the default d = 10 candidates, which only
    // d_choices uses.
    let small = [
        "flash.blocks_per_plane=12",
        "ftl.spare_factor=0.5",
        "flow.0.requests=10",
    ];
    preset_ok("mqsim-paper", &small);
    let mut dc = small.to_vec();
    dc.push("ftl.gc_policy=d_choices");
    let e = preset_err("mqsim-paper", &dc);
    assert!(e.contains("ftl.gc_policy.d"), "{e}");
    dc.push("ftl.gc_policy.d=4");
    preset_ok("mqsim-paper", &dc);
    // The background threshold is still checked when background GC is on: it must be above
    // the GC reserve (0.005 of the blocks).
    let e = preset_err(
        "mqsim-paper",
        &[
            "ftl.gc_background=true",
            "ftl.gc_background_threshold=0.004",
        ],
    );
    assert!(
        e.contains("ftl.gc_background_threshold") && e.contains("reserve"),
        "{e}"
    );
}

#[test]
fn set_keys_of_unused_features_are_refused() {
    // The victim policy's parameter is in its table: the old key names it, and another
    // policy has no such parameter.
    let e = preset_err("mqsim-paper", &["ftl.gc_d=5"]);
    assert!(
        e.contains("key `ftl.gc_d` moved") && e.contains("{ type = \"d_choices\", d = 10 }"),
        "{e}"
    );
    let e = preset_err(
        "mqsim-paper",
        &["ftl.gc_policy=greedy", "ftl.gc_policy.d=5"],
    );
    assert!(
        e.contains("key `ftl.gc_policy`") && e.contains("unknown field `d`"),
        "{e}"
    );
    let e = preset_err("mqsim-paper", &["ftl.gc_policy.d=5"]);
    assert!(
        e.contains("key `ftl.gc_policy`") && e.contains("missing field `type`"),
        "{e}"
    );
    let e = preset_err("mqsim-paper", &["ftl.gc_background_threshold=0.1"]);
    assert!(
        e.contains("key `ftl.gc_background_threshold` = 0.1")
            && e.contains("`ftl.gc_background` = false"),
        "{e}"
    );
    for k in ["ftl.wl_static_threshold=5", "ftl.wl_static_interval=4"] {
        let e = preset_err("mqsim-paper", &[k]);
        assert!(
            e.contains(k.split('=').next().unwrap()) && e.contains("`ftl.wl_static` = false"),
            "{e}"
        );
    }
    let e = preset_err(
        "mqsim-paper",
        &["ftl.gc_preemptible=false", "ftl.gc_starvation_limit=3"],
    );
    assert!(e.contains("key `ftl.gc_starvation_limit` = 3"), "{e}");
    // Defaults written out, and the keys with their features on, are fine.
    preset_ok(
        "mqsim-paper",
        &[
            "ftl.gc_background_threshold=0.06",
            "ftl.wl_static_threshold=100",
            "ftl.wl_static_interval=16",
        ],
    );
    preset_ok(
        "mqsim-paper",
        &[
            "ftl.gc_policy=d_choices",
            "ftl.gc_policy.d=5",
            "ftl.wl_static=true",
            "ftl.wl_static_threshold=5",
            "ftl.wl_static_interval=4",
            "ftl.spare_factor=0.2",
            "ftl.gc_background=true",
            "ftl.gc_background_threshold=0.1",
        ],
    );
}

#[test]
fn pipelined_transfers_takes_a_boolean() {
    for bad in ["1", "\"yes\"", "maybe"] {
        let e = preset_err("x25m", &[&format!("interface.pipelined_transfers={bad}")]);
        assert!(
            e.contains("interface.pipelined_transfers") && e.contains("boolean"),
            "{bad}: {e}"
        );
    }
    let e = err("[interface]\npipelined_transfers = 0\n", &[]);
    assert!(
        e.contains("pipelined_transfers") && e.contains("boolean"),
        "{e}"
    );
    for ok in ["true", "false"] {
        let c = preset_ok("x25m", &[&format!("interface.pipelined_transfers={ok}")]);
        assert_eq!(c.interface.pipelined_transfers, ok == "true");
    }
}

/// `[ftl.cmt]`: a capacity of 0 names the mode meaning "no cache", shares must be one per
/// flow and sum to 1, a partition must hold one translation page, and the keys of a cached
/// map are refused with the ideal one.
#[test]
fn mapping_cache_errors_name_the_key() {
    let e = preset_err(
        "mqsim-paper",
        &["ftl.cmt.mode=shared", "ftl.cmt.capacity_bytes=0"],
    );
    assert!(
        e.contains("`ftl.cmt.capacity_bytes` = 0") && e.contains("ftl.cmt.mode = \"ideal\""),
        "{e}"
    );
    // 910 entries of 9 bytes per translation page of mqsim-paper.
    let e = preset_err(
        "mqsim-paper",
        &["ftl.cmt.mode=shared", "ftl.cmt.capacity_bytes=8000"],
    );
    assert!(
        e.contains("`ftl.cmt.capacity_bytes` = 8000") && e.contains(">= 8190"),
        "{e}"
    );
    let e = preset_err(
        "mqsim-paper",
        &[
            "ftl.cmt.mode=per_flow",
            "ftl.cmt.shares=[0.5, 0.4]",
            "flow.1.queue_depth=1",
        ],
    );
    assert!(
        e.contains("`ftl.cmt.shares`") && e.contains("sum to 1"),
        "{e}"
    );
    let e = preset_err(
        "mqsim-paper",
        &["ftl.cmt.mode=per_flow", "ftl.cmt.shares=[0.5, 0.5]"],
    );
    assert!(e.contains("one per flow (1)"), "{e}");
    let e = preset_err(
        "mqsim-paper",
        &[
            "ftl.cmt.mode=per_flow",
            "ftl.cmt.shares=[1.0, 0.0]",
            "flow.1.queue_depth=1",
        ],
    );
    assert!(
        e.contains("`ftl.cmt.shares[1]` = 0") && e.contains("(0, 1]"),
        "{e}"
    );
    let e = preset_err("mqsim-paper", &["ftl.cmt.shares=[1.0]"]);
    assert!(e.contains("only with ftl.cmt.mode = \"per_flow\""), "{e}");
    let e = preset_err("mqsim-paper", &["ftl.cmt.entry_bytes=9000"]);
    assert!(
        e.contains("`ftl.cmt.entry_bytes` = 9000") && e.contains("0..=8192"),
        "{e}"
    );
    let e = preset_err(
        "mqsim-paper",
        &[
            "ftl.cmt.mode=per_flow",
            "ftl.cmt.capacity_bytes=16380",
            "ftl.cmt.shares=[0.9, 0.1]",
            "flow.1.queue_depth=1",
        ],
    );
    assert!(e.contains("flow 1's partition"), "{e}");
    // The mapping cache and the data cache share the controller's DRAM.
    let e = preset_err(
        "mqsim-paper",
        &[
            "ftl.cmt.mode=shared",
            "ftl.cmt.capacity_bytes=900000000",
            "cache.mode=write",
            "cache.capacity_bytes=268435456",
        ],
    );
    assert!(
        e.contains("`ftl.cmt.capacity_bytes` = 900000000")
            && e.contains("`cache.dram_bytes` = 1073741824"),
        "{e}"
    );
    preset_ok("mqsim-paper", &["ftl.cmt.mode=shared"]);
}

/// The data cache's bad input (issue 12 item 6): each message names the key and what is
/// allowed.
#[test]
fn data_cache_bad_input_names_the_key() {
    let e = preset_err(
        "mqsim-paper",
        &["cache.mode=write", "cache.capacity_bytes=0"],
    );
    assert!(
        e.contains("cache.capacity_bytes") && e.contains("0 means off: set cache.mode = \"off\""),
        "{e}"
    );
    let e = preset_err(
        "mqsim-paper",
        &[
            "ftl.cmt.mode=ideal",
            "cache.mode=write",
            "cache.dram_bytes=268435455",
        ],
    );
    assert!(
        e.contains("cache.capacity_bytes") && e.contains("cache.dram_bytes"),
        "{e}"
    );
    let e = preset_err(
        "mqsim-paper",
        &[
            "cache.mode=write",
            "cache.sharing=per_flow",
            "flow.1.requests=5",
            "cache.shares=[0.5, 0.4]",
        ],
    );
    assert!(e.contains("cache.shares") && e.contains("sum to 1"), "{e}");
    let e = preset_err(
        "mqsim-paper",
        &[
            "cache.mode=write",
            "cache.sharing=per_flow",
            "cache.shares=[0.5, 0.5]",
        ],
    );
    assert!(e.contains("cache.shares") && e.contains("1 flow"), "{e}");
    let e = preset_err("mqsim-paper", &["flow.0.flush_every=0"]);
    assert!(
        e.contains("flow.0.flush_every") && e.contains(">= 1"),
        "{e}"
    );
    // Keys of a cache that is off are refused, not ignored.
    let e = preset_err(
        "mqsim-paper",
        &["cache.mode=off", "cache.capacity_bytes=1048576"],
    );
    assert!(
        e.contains("cache.capacity_bytes") && e.contains("cache.mode"),
        "{e}"
    );
    let e = preset_err(
        "mqsim-paper",
        &["cache.mode=read", "cache.precondition=dirty"],
    );
    assert!(
        e.contains("cache.precondition") && e.contains("write cache"),
        "{e}"
    );
    // MQSim's write-back needs a write cache; an unknown value lists the allowed ones.
    let e = preset_err(
        "mqsim-paper",
        &["cache.mode=read", "cache.write_back=mqsim"],
    );
    assert!(
        e.contains("cache.write_back") && e.contains("write cache") && e.contains("on_eviction"),
        "{e}"
    );
    let e = preset_err("mqsim-paper", &["cache.mode=off", "cache.write_back=mqsim"]);
    assert!(
        e.contains("cache.write_back") && e.contains("cache.mode"),
        "{e}"
    );
    let e = preset_err(
        "mqsim-paper",
        &["cache.mode=write", "cache.write_back=lazy"],
    );
    assert!(e.contains("write_back") && e.contains("mqsim"), "{e}");
    // Shares within 1e-9 of 1 are accepted.
    preset_ok(
        "mqsim-paper",
        &[
            "cache.mode=write",
            "cache.sharing=per_flow",
            "flow.1.requests=5",
            "flow.2.requests=5",
            "cache.shares=[0.3333333333, 0.3333333333, 0.3333333334]",
        ],
    );
}

#[test]
fn pcie_packet_keys_name_the_key_and_the_allowed_values() {
    let e = preset_err("mqsim-paper", &["pcie.lanes=3"]);
    assert!(
        e.contains("key `pcie.lanes` = 3") && e.contains("1, 2, 4, 8, 12, 16 or 32"),
        "{e}"
    );
    let e = preset_err("mqsim-paper", &["pcie.generation=6"]);
    assert!(e.contains("pcie.generation") && e.contains("1..=5"), "{e}");
    let e = preset_err("mqsim-paper", &["pcie.max_payload_bytes=8192"]);
    assert!(e.contains("pcie.max_payload_bytes"), "{e}");
    let e = preset_err("mqsim-paper", &["pcie.max_payload_bytes=384"]);
    assert!(e.contains("pcie.max_payload_bytes"), "{e}");
    let e = preset_err("mqsim-paper", &["pcie.ack_every_tlps=5000"]);
    assert!(
        e.contains("pcie.ack_every_tlps") && e.contains("0..=4096"),
        "{e}"
    );
    // A DLLP size with no DLLPs would be ignored: refused.
    let e = preset_err("mqsim-paper", &["pcie.dllp_bytes=6"]);
    assert!(
        e.contains("pcie.dllp_bytes") && e.contains("pcie.ack_every_tlps"),
        "{e}"
    );
    let e = preset_err("x25m", &["pcie.update_fc_every_tlps=4"]);
    assert!(
        e.contains("pcie.update_fc_every_tlps") && e.contains("\"nvme\" only"),
        "{e}"
    );
    preset_ok(
        "mqsim-paper",
        &[
            "pcie.lanes=32",
            "pcie.generation=5",
            "pcie.ack_every_tlps=4",
            "pcie.dllp_bytes=6",
        ],
    );
}

#[test]
fn host_completion_keys_name_the_key_and_the_allowed_values() {
    let e = preset_err(
        "mqsim-paper",
        &["host.completion=interrupt", "host.coalesce_completions=0"],
    );
    assert!(
        e.contains("host.coalesce_completions") && e.contains("1..=256"),
        "{e}"
    );
    let e = preset_err(
        "mqsim-paper",
        &["host.completion=interrupt", "host.coalesce_completions=4"],
    );
    assert!(e.contains("host.coalesce_time_us"), "{e}");
    let e = preset_err(
        "mqsim-paper",
        &["host.completion=interrupt", "host.coalesce_time_us=30000"],
    );
    assert!(
        e.contains("host.coalesce_time_us") && e.contains("25500"),
        "{e}"
    );
    let e = preset_err("mqsim-paper", &["host.completion=bogus"]);
    assert!(
        e.contains("host.completion") && e.contains("interrupt") && e.contains("polled"),
        "{e}"
    );
    // Keys of another mode would be ignored: refused.
    let e = preset_err("mqsim-paper", &["host.isr_us=2"]);
    assert!(
        e.contains("host.isr_us") && e.contains("\"interrupt\""),
        "{e}"
    );
    let e = preset_err("mqsim-paper", &["host.completion=polled", "host.vectors=2"]);
    assert!(e.contains("host.vectors"), "{e}");
    let e = preset_err(
        "mqsim-paper",
        &["host.completion=interrupt", "host.poll_us=1"],
    );
    assert!(
        e.contains("host.poll_us") && e.contains("\"polled\""),
        "{e}"
    );
    let e = preset_err("mqsim-paper", &["host.cores=4"]);
    assert!(e.contains("host.cores"), "{e}");
    let e = preset_err(
        "mqsim-paper",
        &["host.completion=interrupt", "host.vectors=4096"],
    );
    assert!(e.contains("host.vectors") && e.contains("0..=2048"), "{e}");
    let e = preset_err("x25m", &["host.completion=interrupt"]);
    assert!(
        e.contains("host.completion") && e.contains("NVMe only"),
        "{e}"
    );
    preset_ok(
        "mqsim-paper",
        &[
            "host.completion=interrupt",
            "host.coalesce_completions=8",
            "host.coalesce_time_us=100",
            "host.vectors=2",
            "host.cores=2",
        ],
    );
}

/// A value of the wrong type says what the key expects and what it got (issue 31): a number
/// written as a string is not "out of range for a 64-bit integer", which stays the message of
/// a real 64-bit overflow (in a file or an override).
#[test]
fn wrong_types_say_what_the_key_expects_and_got() {
    let e = err("[flash]\nchannels = \"8\"\n[[flow]]\n", &[]);
    assert!(
        e.contains("key `flash.channels`")
            && e.contains("expects an integer")
            && e.contains("got a string (\"8\")")
            && e.contains("without quotes"),
        "{e}"
    );
    assert!(!e.contains("out of range"), "{e}");
    let e = err("[flash]\nread_us = \"75\"\n[[flow]]\n", &[]);
    assert!(
        e.contains("key `flash.read_us`") && e.contains("got a string (\"75\")"),
        "{e}"
    );
    assert!(!e.contains("out of range"), "{e}");
    let e = err("[ftl]\nspare_factor = \"lots\"\n[[flow]]\n", &[]);
    assert!(
        e.contains("key `ftl.spare_factor`")
            && e.contains("expects a number")
            && e.contains("got a string (\"lots\")"),
        "{e}"
    );
    assert!(!e.contains("without quotes"), "{e}");
    let e = err("[[flow]]\nread_fraction = true\n", &[]);
    assert!(
        e.contains("key `flow.0.read_fraction`")
            && e.contains("expects a number")
            && e.contains("got a boolean (true)"),
        "{e}"
    );
    let e = err("[interface]\ntype = 3\n[[flow]]\n", &[]);
    assert!(
        e.contains("key `interface.type`")
            && e.contains("expects a string")
            && e.contains("got an integer (3)"),
        "{e}"
    );
    // A value beyond the key's own range names that range.
    let e = err("[flash]\nchannels = 5000000000\n[[flow]]\n", &[]);
    assert!(
        e.contains("key `flash.channels`") && e.contains("(0..=4294967295), got 5000000000"),
        "{e}"
    );
    // A real overflow keeps its message, from a file and from an override.
    let e = err("[flash]\nchannels = 99999999999999999999\n[[flow]]\n", &[]);
    assert!(e.contains("out of range for a 64-bit integer"), "{e}");
    let e = err("[[flow]]\n", &["flash.channels=99999999999999999999"]);
    assert!(
        e.contains("key `flash.channels`") && e.contains("out of range for a 64-bit integer"),
        "{e}"
    );
    // An override of a string key to digits is a string, not an overflow.
    let e = err("[[flow]]\n", &["flash.channels=\"8\""]);
    assert!(e.contains("got a string (\"8\")"), "{e}");
}

/// A cached map's translation pages are stored in flash beside the logical data (issue 31):
/// an entry size that leaves no room is refused at load, naming `ftl.cmt.entry_bytes` and the
/// largest size that fits, instead of failing in preconditioning.
#[test]
fn translation_pages_must_fit_beside_the_logical_data() {
    let base = [
        "flash.blocks_per_plane=128",
        "ftl.cmt.mode=shared",
        "ftl.cmt.capacity_bytes=8192",
    ];
    let with = |e: &str| -> Vec<String> {
        base.iter()
            .map(|s| s.to_string())
            .chain([format!("ftl.cmt.entry_bytes={e}")])
            .collect()
    };
    let e = preset_err(
        "mqsim-paper",
        &with("512").iter().map(|s| s.as_str()).collect::<Vec<_>>(),
    );
    assert!(
        e.contains("key `ftl.cmt.entry_bytes` = 512")
            && e.contains("translation pages")
            && e.contains("allowed 1..=264"),
        "{e}"
    );
    // The largest size named fits, and one more byte does not.
    preset_ok(
        "mqsim-paper",
        &with("264").iter().map(|s| s.as_str()).collect::<Vec<_>>(),
    );
    let e = preset_err(
        "mqsim-paper",
        &with("265").iter().map(|s| s.as_str()).collect::<Vec<_>>(),
    );
    assert!(e.contains("allowed 1..=264"), "{e}");
    // With the entry on flash given apart, that key sizes the translation pages.
    let mut apart: Vec<&str> = base.to_vec();
    apart.push("ftl.cmt.translation_entry_bytes=512");
    let e = preset_err("mqsim-paper", &apart);
    assert!(
        e.contains("key `ftl.cmt.translation_entry_bytes` = 512") && e.contains("allowed 1..=264"),
        "{e}"
    );
}

#[test]
fn write_offsets_at_queue_needs_multi_plane_programs() {
    preset_ok("mqsim-paper", &["tsu.write_offsets=at_queue"]);
    for bad in [
        ["tsu.write_offsets=at_queue", "flash.planes_per_die=1"],
        ["tsu.write_offsets=at_queue", "flash.multiplane=false"],
    ] {
        let e = preset_err("mqsim-paper", &bad);
        assert!(
            e.contains("tsu.write_offsets")
                && e.contains("flash.multiplane")
                && e.contains("at_program"),
            "{e}"
        );
    }
    for (preset, bad) in [
        (
            "optane-p4800x",
            &[
                "tsu.write_offsets=at_queue",
                "flash.planes_per_die=2",
                "flash.multiplane=true",
            ][..],
        ),
        (
            "mqsim-paper",
            &[
                "tsu.write_offsets=at_queue",
                "ftl.mapping=block",
                "ftl.cmt.mode=ideal",
                "precondition.mode=empty",
            ],
        ),
    ] {
        let e = preset_err(preset, bad);
        assert!(
            e.contains("tsu.write_offsets") && e.contains("page-level mapping"),
            "{e}"
        );
    }
    let e = preset_err("mqsim-paper", &["tsu.write_offsets=later"]);
    assert!(e.contains("write_offsets") && e.contains("at_queue"), "{e}");
    let e = preset_err("mqsim-paper", &["flash.bus.program_data=half"]);
    assert!(
        e.contains("program_data") && e.contains("written_sectors"),
        "{e}"
    );
    let e = preset_err(
        "mqsim-paper",
        &["ftl.cmt.mode=shared", "ftl.cmt.writebacks=\"held\""],
    );
    assert!(
        e.contains("ftl.cmt.writebacks") && e.contains("granularity = \"entry\""),
        "{e}"
    );
    let e = preset_err(
        "mqsim-paper",
        &["ftl.cmt.mode=ideal", "ftl.cmt.writebacks=\"held\""],
    );
    assert!(
        e.contains("ftl.cmt.writebacks") && e.contains("only with a cached map"),
        "{e}"
    );
    let e = preset_err(
        "mqsim-paper",
        &["ftl.cmt.mode=shared", "ftl.cmt.writeback_lru=\"front\""],
    );
    assert!(
        e.contains("ftl.cmt.writeback_lru") && e.contains("granularity = \"entry\""),
        "{e}"
    );
    let e = preset_err("mqsim-paper", &["ftl.cmt.writebacks=\"never\""]);
    assert!(e.contains("writebacks") && e.contains("held"), "{e}");
    let e = preset_err("mqsim-paper", &["ftl.cmt.translation_entry_bytes=8193"]);
    assert!(
        e.contains("ftl.cmt.translation_entry_bytes") && e.contains("8192"),
        "{e}"
    );
    let e = preset_err(
        "mqsim-paper",
        &[
            "flash.bus.arbitration=\"data_first\"",
            "tsu.suspension=\"erase\"",
        ],
    );
    assert!(
        e.contains("tsu.suspension")
            && e.contains("data_first")
            && e.contains("first_come")
            && e.contains("\"none\""),
        "{e}"
    );
    let e = preset_err("mqsim-paper", &["flash.bus.arbitration=fifo"]);
    assert!(
        e.contains("arbitration") && e.contains("first_come") && e.contains("data_first"),
        "{e}"
    );
}
