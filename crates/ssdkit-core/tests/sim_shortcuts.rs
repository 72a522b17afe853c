//! The simulator's shortcuts give what the plain path gives: booking the firmware when a
//! command's fetch is booked (not when it arrives), starting a read on an idle die without
//! the die queue, and priority classes of one class on one queue. Each is switched off
//! through the simulator's hidden switches and the results compared. And the event enum
//! packs into the queue's keys and back.

use ssdkit_core::config::Config;
use ssdkit_core::internals::engine::Packed;
use ssdkit_core::internals::ids::{DieId, FlowId, ReqId, TxId};
use ssdkit_core::internals::sim::{Ev, Simulator};

/// The result without the fields that measure the machine or count events.
fn results_only(v: &serde_json::Value) -> serde_json::Value {
    match v {
        serde_json::Value::Object(m) => m
            .iter()
            .filter(|(k, _)| {
                !matches!(
                    k.as_str(),
                    "events" | "wall_time_s" | "events_per_wall_s" | "requests_per_wall_s"
                )
            })
            .map(|(k, v)| (k.clone(), results_only(v)))
            .collect(),
        serde_json::Value::Array(a) => a.iter().map(results_only).collect(),
        x => x.clone(),
    }
}

/// Booking the firmware when a command's fetch is booked gives what booking it when the
/// command arrives gives, with one event fewer per command: two flows of reads and writes
/// on the Table 3 controller, over the modelled PCIe link, an ideal link (fetch and
/// arrival at one instant: ties), with PRP lists read after the command, with the
/// latency breakdown, with a limit on commands in flight, over SATA (the X25-M's firmware
/// takes no time: no event fewer there), and a flow with TRIMs (whose range crosses the link
/// before the firmware: the booking at fetch stops at the first).
#[test]
fn firmware_booked_at_fetch_as_at_arrival() {
    let two_flows = [
        "flash.blocks_per_plane=128",
        "flow.0.queue_depth=16",
        "flow.0.read_fraction=0.7",
        "flow.0.requests=6000",
        "flow.1.queue_depth=16",
        "flow.1.read_fraction=0.3",
        "flow.1.requests=6000",
        "flow.1.request_bytes=16384",
    ];
    let with = |extra: &[&'static str]| keys_with(&two_flows, extra);
    let cases: [(&str, Vec<&str>, bool); 7] = [
        ("mqsim-paper", with(&[]), true),
        // Fetches wait for completions: commands arrive when slots free, not at doorbells.
        (
            "mqsim-paper",
            with(&["interface.max_inflight_commands=8"]),
            true,
        ),
        (
            "mqsim-paper",
            with(&["interface.link_model=\"ideal\""]),
            true,
        ),
        (
            "mqsim-paper",
            with(&["interface.data_pointers=\"prp\""]),
            true,
        ),
        ("mqsim-paper", with(&["run.latency_breakdown=true"]), true),
        // Its firmware takes no time: a command's arrival event hands it on at once, so
        // booking at fetch saves no event (SATA writes' data crosses first: booking at fetch
        // stops at the first write).
        (
            "x25m",
            vec![
                "flow.0.queue_depth=32",
                "flow.0.read_fraction=0.6",
                "flow.0.requests=5000",
            ],
            false,
        ),
        (
            "mqsim-paper",
            vec![
                "flash.blocks_per_plane=128",
                "flow.0.queue_depth=16",
                "flow.0.read_fraction=0.5",
                "flow.0.trim_fraction=0.2",
                "flow.0.requests=6000",
            ],
            // Stops at the first TRIM, which may be the first command.
            false,
        ),
    ];
    for (preset, keys, fewer) in cases {
        let o: Vec<String> = keys.iter().map(|s| s.to_string()).collect();
        let c = Config::load_preset(preset, &o).unwrap();
        let run = |at_fetch: bool| {
            let mut sim = Simulator::new(&c).unwrap();
            sim.set_firmware_at_fetch(at_fetch);
            let (out, _) = sim.run(&c, false, false).unwrap();
            (results_only(&out.result), out.events)
        };
        let (fetch, fetch_events) = run(true);
        let (arrival, arrival_events) = run(false);
        assert_eq!(fetch, arrival, "{preset} {keys:?}");
        assert!(fetch_events <= arrival_events, "{preset} {keys:?}");
        if fewer {
            assert!(fetch_events < arrival_events, "{preset} {keys:?}");
        }
    }
}

/// Two flows of 4 KiB requests on a small device, 70 % and 90 % reads: GC under way.
const MIXED_FLOWS: [&str; 7] = [
    "flash.blocks_per_plane=128",
    "flow.0.queue_depth=16",
    "flow.0.read_fraction=0.7",
    "flow.0.requests=6000",
    "flow.1.queue_depth=4",
    "flow.1.read_fraction=0.9",
    "flow.1.requests=3000",
];
const IDEAL: [&str; 2] = ["ftl.cmt.mode=\"ideal\"", "cache.mode=\"off\""];

/// The `mqsim-paper` preset with `keys`, run on a simulator `switch` set first: its result
/// without the fields that measure the machine, and its events.
/// The keys of `base`, then `extra`'s.
fn keys_with(base: &[&'static str], extra: &[&'static str]) -> Vec<&'static str> {
    base.iter().chain(extra).copied().collect()
}

fn run_switched(keys: &[&str], switch: impl FnOnce(&mut Simulator)) -> (serde_json::Value, u64) {
    let o: Vec<String> = keys.iter().map(|s| s.to_string()).collect();
    let c = Config::load_preset("mqsim-paper", &o).unwrap();
    let mut sim = Simulator::new(&c).unwrap();
    switch(&mut sim);
    let (out, _) = sim.run(&c, false, false).unwrap();
    (results_only(&out.result), out.events)
}

/// A read to an idle die with nothing queued, started without the die queue, runs as the
/// scheduler would run it: the same results and the same events, over random reads and
/// a 70/30 mix on two flows (GC under way), with multi-plane reads, and under MQSim's rules
/// (a chip's dies one at a time, data first on the channel: a read starts at once only on
/// an idle channel). The map in DRAM and no data cache: the cached paths queue their reads
/// through `enqueue`.
#[test]
fn direct_reads_as_through_the_queue() {
    let cases: [Vec<&str>; 4] = [
        vec![
            "ftl.cmt.mode=\"ideal\"",
            "cache.mode=\"off\"",
            "flash.blocks_per_plane=128",
            "flow.0.queue_depth=8",
            "flow.0.requests=8000",
        ],
        [
            &IDEAL[..],
            &MIXED_FLOWS[..],
            &["flow.1.request_bytes=32768"][..],
        ]
        .concat(),
        // MQSim's import: priority classes (every flow of one class) and suspension of
        // programs and erases, which GC's erases and the writes give reads to suspend.
        [
            &IDEAL[..],
            &MIXED_FLOWS[..],
            &[
                "tsu.policy=\"priority_out_of_order\"",
                "tsu.suspension=\"program_erase\"",
            ][..],
        ]
        .concat(),
        [
            &IDEAL[..],
            &MIXED_FLOWS[..],
            &[
                "flash.die_interleaving=false",
                "flash.bus.arbitration=\"data_first\"",
                "tsu.suspension=\"none\"",
            ][..],
        ]
        .concat(),
    ];
    for keys in &cases {
        let run = |direct: bool| {
            run_switched(keys, |sim| {
                assert!(sim.direct_reads(), "one class of flows: {keys:?}");
                sim.set_direct_reads(direct);
            })
        };
        let (a, b) = (run(true), run(false));
        assert_eq!(a, b, "{keys:?}");
        if keys.iter().any(|k| k.contains("program_erase")) {
            let s = &a.0["device"]["suspension"];
            assert!(
                s["program_suspensions"].as_u64().unwrap()
                    + s["erase_suspensions"].as_u64().unwrap()
                    > 0,
                "reads suspended operations: {s}"
            );
        }
    }
    // Flows of two classes: reads take turns between classes, through the queue.
    let o: Vec<String> = [
        "tsu.policy=\"priority_out_of_order\"",
        "flow.1.priority=\"low\"",
        "flow.1.requests=100",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let c = Config::load_preset("mqsim-paper", &o).unwrap();
    assert!(!Simulator::new(&c).unwrap().direct_reads());
}

/// Priority classes (MQSim's PRIORITY_OUT_OF_ORDER) with one class in the user queues run as
/// out of order on one queue, as on the classes' own queues: every flow medium with the map
/// in DRAM (GC, suspension, a die of a chip at a time as `--mqsim-compat` runs), and every
/// flow high with MQSim's cached map, whose translation-page write-backs are high too. Flows
/// of medium with write-backs (two classes) keep the classes.
#[test]
fn one_class_on_one_queue_as_on_its_own() {
    let flows = [
        &MIXED_FLOWS[..],
        &["tsu.policy=\"priority_out_of_order\""][..],
    ]
    .concat();
    let high = [
        "flow.0.priority=\"high\"",
        "flow.1.priority=\"high\"",
        "cache.mode=\"off\"",
    ];
    let cases: [Vec<&str>; 5] = [
        [&flows[..], &IDEAL[..]].concat(),
        [
            &flows[..],
            &IDEAL[..],
            &["tsu.suspension=\"program_erase\""][..],
        ]
        .concat(),
        [
            &flows[..],
            &IDEAL[..],
            &["flash.die_interleaving=false"][..],
        ]
        .concat(),
        [&flows[..], &high[..]].concat(),
        [
            &flows[..],
            &high[..],
            &[
                "ftl.cmt.granularity=\"entry\"",
                "flash.die_interleaving=false",
            ][..],
        ]
        .concat(),
    ];
    for keys in &cases {
        let run = |one: bool| {
            run_switched(keys, |sim| {
                assert!(sim.one_queue(), "one class: {keys:?}");
                sim.set_one_queue(one);
            })
        };
        let (a, b) = (run(true), run(false));
        assert_eq!(a, b, "{keys:?}");
        assert!(
            a.0["device"]["ftl"]["gc_runs"].as_u64().unwrap() > 0,
            "GC ran: {keys:?}"
        );
        if !keys.contains(&"ftl.cmt.mode=\"ideal\"") {
            let wb = a.0["flows"][0]["cmt"]["eviction_writebacks"]
                .as_u64()
                .unwrap();
            assert!(wb > 0, "write-backs were queued: {keys:?}");
        }
    }
    // Write-backs (high) beside flows of medium: two classes, their own queues.
    let o: Vec<String> = flows.iter().map(|s| s.to_string()).collect();
    let c = Config::load_preset("mqsim-paper", &o).unwrap();
    assert!(!Simulator::new(&c).unwrap().one_queue());
}

/// Flows that only read, on a device that holds no data, change no entry of a cached map, so
/// no translation-page write-back (class high) joins their queues: flows of medium run on one
/// queue, as on the classes' own. MQSim's first reads of never-written pages take pages of
/// the user frontiers (`ftl.unmapped_reads = "read_flash"`) until GC erases blocks, on a map
/// cache of a few translation pages, with the data cache's writes and reads; and reads of
/// never-written pages answered without flash. Anything that could change an entry keeps the
/// classes: writes, TRIMs, flushes, data on the device, a dirty data cache, or MQSim's cache
/// of single entries, which maps a page on its first read.
#[test]
fn reads_keeping_the_map_run_one_queue() {
    let small = [
        "tsu.policy=\"priority_out_of_order\"",
        "precondition.mode=\"empty\"",
        "flash.channels=2",
        "flash.chips_per_channel=1",
        "flash.dies_per_chip=1",
        "flash.blocks_per_plane=128",
        "flash.pages_per_block=32",
        "ftl.cmt.capacity_bytes=16384",
        "flow.0.queue_depth=8",
        "flow.0.requests=20000",
        "flow.1.name=\"seq\"",
        "flow.1.pattern=\"sequential\"",
        "flow.1.request_bytes=16384",
        "flow.1.queue_depth=4",
        "flow.1.requests=3000",
    ];
    let with = |extra: &[&'static str]| keys_with(&small, extra);
    for (keys, gc) in [
        (with(&["ftl.unmapped_reads=\"read_flash\""]), true),
        (
            with(&[
                "ftl.unmapped_reads=\"read_flash\"",
                "cache.mode=\"read_write\"",
            ]),
            true,
        ),
        (with(&["ftl.unmapped_reads=\"complete\""]), false),
    ] {
        let run = |one: bool| {
            run_switched(&keys, |sim| {
                assert!(sim.one_queue(), "reads keep the map: {keys:?}");
                sim.set_one_queue(one);
            })
        };
        let (a, b) = (run(true), run(false));
        assert_eq!(a, b, "{keys:?}");
        let gc_runs = a.0["device"]["ftl"]["gc_runs"].as_u64().unwrap();
        assert_eq!(gc_runs > 0, gc, "GC erased read pages: {keys:?}");
        let flash_reads = a.0["device"]["flash"]["page_reads"].as_u64().unwrap();
        assert_eq!(flash_reads > 0, gc, "reads from flash: {keys:?}");
    }
    for extra in [
        &["flow.0.read_fraction=0.9"][..],
        &["flow.1.read_fraction=0.0", "flow.1.trim_fraction=1.0"],
        &["flow.0.flush_every=100"],
        &["precondition.mode=\"fast\""],
        &["cache.precondition=\"dirty\"", "flow.1.read_fraction=0.5"],
        &[
            "ftl.unmapped_reads=\"read_flash\"",
            "ftl.cmt.granularity=\"entry\"",
        ],
    ] {
        let o: Vec<String> = keys_with(&small, extra)
            .iter()
            .map(|s| s.to_string())
            .collect();
        let c = Config::load_preset("mqsim-paper", &o).unwrap();
        assert!(!Simulator::new(&c).unwrap().one_queue(), "{extra:?}");
    }
}

/// Every event survives the queue's packing, with the largest and smallest indices.
#[test]
fn events_pack_within_their_bits_and_unpack_to_themselves() {
    for x in [0, 1, 0x1234_5678, u32::MAX] {
        let all = [
            Ev::Doorbell(ReqId(x)),
            Ev::CommandArrived(ReqId(x)),
            Ev::WriteDataArrived(ReqId(x)),
            Ev::WriteChunkArrived(TxId(x)),
            Ev::FirmwareDone(ReqId(x)),
            Ev::DieArrayDone(DieId(x)),
            Ev::DieSuspended(DieId(x)),
            Ev::DieXferDone(DieId(x)),
            Ev::Completed(ReqId(x)),
            Ev::CacheWriteIn(ReqId(x)),
            Ev::CacheReadOut(ReqId(x)),
            Ev::Arrival(FlowId(x)),
            Ev::MsiArrived(x),
            Ev::CoalesceTimer(x),
            Ev::HostDone(x),
        ];
        let mut seen = std::collections::HashSet::new();
        for e in all {
            let bits = e.pack();
            assert!(
                bits < 1 << ssdkit_core::internals::engine::EVENT_BITS,
                "{e:?}"
            );
            assert!(seen.insert(bits), "{e:?} packs like another event");
            assert_eq!(format!("{:?}", Ev::unpack(bits)), format!("{e:?}"));
        }
    }
}

/// Random writes on an empty device: built from flows that bound their writes, the page map
/// takes room for them at once (`Flow::expected_pages_written`), and as the preset's 4 KiB
/// writes on 8 KiB pages leave each page they write partly written, its slots hold the pages'
/// masks beside their entries (the same slots as for whole-page writes, 12 bytes each instead
/// of 8; no table of masks of their own); the results are those of the same run whose tables
/// grew as pages came, masks apart (the flow given a time limit it never reaches, which the
/// estimate does not take). Behind a write cache that keeps them all, it takes none;
/// whole-page writes take no room for partly written pages.
#[test]
fn a_page_map_sized_for_the_flows_writes_gives_what_growing_gives() {
    let run = |extra: &[&'static str]| {
        let keys = [
            "precondition.mode=\"empty\"",
            "flow.0.read_fraction=0.2",
            "flow.0.requests=30000",
        ];
        let o: Vec<String> = keys_with(&keys, extra)
            .iter()
            .map(|s| s.to_string())
            .collect();
        let c = Config::load_preset("mqsim-paper", &o).unwrap();
        let sim = Simulator::new(&c).unwrap();
        let before = (sim.ftl.map_change_bytes(), sim.ftl.partial_bytes());
        let (out, sim) = sim.run(&c, false, false).unwrap();
        let mut r = results_only(&out.result);
        // The configurations (echoed, and hashed) differ by the time limit.
        r["config"] = serde_json::Value::Null;
        r["config_hash"] = serde_json::Value::Null;
        let after = (sim.ftl.map_change_bytes(), sim.ftl.partial_bytes());
        (r, before, after)
    };
    let (sized, sized_before, sized_after) = run(&["cache.mode=\"off\""]);
    let (grown, grown_before, grown_after) = run(&["cache.mode=\"off\"", "flow.0.duration_ms=1e6"]);
    // 8 KiB writes at 8 KiB boundaries cover whole pages: no page is left partly written.
    let whole = ["cache.mode=\"off\"", "flow.0.request_bytes=8192"];
    let (_, whole_before, whole_after) = run(&whole);
    assert_eq!(sized, grown);
    let writes = sized["device"]["ftl"]["user_page_writes"].as_u64().unwrap();
    assert!(writes > 20_000, "{writes} pages written");
    assert!(
        sized_before.0 > grown_before.0,
        "map room taken at build: {sized_before:?} against {grown_before:?} bytes"
    );
    // A slot of key, entry and mask is 12 bytes, one of key and entry 8.
    assert_eq!(
        2 * (sized_before.0 - grown_before.0),
        3 * (whole_before.0 - grown_before.0),
        "the slots whole-page writes take, half as wide again: {sized_before:?} {whole_before:?} {grown_before:?}"
    );
    assert_eq!(
        (sized_before.1, sized_after.1),
        (0, 0),
        "masks beside the entries"
    );
    assert!(
        grown_after.1 > 0,
        "masks in a table of their own: {grown_after:?}"
    );
    assert!(
        sized_after.0 > grown_after.0,
        "{sized_after:?} {grown_after:?}"
    );
    assert_eq!(
        (whole_before.1, whole_after.1),
        (0, 0),
        "no partial-page room"
    );
    // The preset's write cache keeps every write of the run.
    let (cached, cached_before, _) = run(&[]);
    assert_eq!(cached["device"]["ftl"]["user_page_writes"], 0);
    assert_eq!(
        cached_before, grown_before,
        "no room taken behind the cache"
    );
}
