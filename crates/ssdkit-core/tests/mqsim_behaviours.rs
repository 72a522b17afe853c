//! The behaviours MQSim has and real drives may not (`--mqsim-compat` turns them on), each
//! against a count or time computed from the configuration:
//! - `flash.die_interleaving = false`: a chip runs one die operation at a time;
//! - `ftl.unmapped_reads = "read_flash"`: the first read of a never-written page maps it and
//!   reads flash;
//! - sector validity (always on, as in MQSim): a sub-page write needs a read-modify-write only
//!   when the page holds data in sectors it does not replace;
//! - `cache.write_back = "mqsim"`: a page not written in the last second is programmed at
//!   once, and writes wait while one page per plane is in flight.

mod common;
use common::{count, preset, run_cfg};
use ssdkit_core::api::run;
use ssdkit_core::config::Config;

/// One chip of two single-plane dies with a deep queue of 4 KiB reads: the chip is the
/// bottleneck, so with one die operation at a time consecutive completions are exactly one
/// die operation apart (read command cycles + tR + the transfer of 8 sectors); with
/// interleaving the two dies' array reads overlap.
fn one_chip(interleave: bool) -> Config {
    let il = format!("flash.die_interleaving={interleave}");
    preset(
        "mqsim-paper",
        &[
            "flash.channels=1",
            "flash.chips_per_channel=1",
            "flash.dies_per_chip=2",
            "flash.planes_per_die=1",
            "flash.blocks_per_plane=256",
            "flash.pages_per_block=64",
            "precondition.mode=sequential",
            "flow.0.queue_depth=16",
            "flow.0.requests=3000",
            &il,
        ],
    )
}

/// Completion times, in order.
fn completions(c: &Config) -> Vec<u64> {
    let out = run(c, false, true).unwrap_or_else(|e| panic!("{e}"));
    let mut t: Vec<u64> = out.log.unwrap().iter().map(|r| r.complete_ps).collect();
    t.sort_unstable();
    t
}

#[test]
fn a_serial_chip_runs_one_die_operation_at_a_time() {
    let c = one_chip(false);
    let f = &c.flash;
    let cmd_ps = (f.bus.cmd_addr_cycle_ns * 1000.0).round() as u64 * f.bus.read_cmd_cycles as u64;
    let tr_ps = (f.read_us[0] * 1e6).round() as u64;
    assert_eq!(
        f.read_us[0], f.read_us[1],
        "one read time for every page type"
    );
    // 4096 bytes on an 8-bit bus at 333 MT/s: 4096 transfers x 1e6 / 333 ps, rounded to
    // whole picoseconds.
    let transfers = 4096.0 / (f.bus.width_bits as f64 / 8.0);
    let xfer_ps = (transfers * 1e6 / f.bus.rate_mts).round() as u64;
    let period = cmd_ps + tr_ps + xfer_ps;
    let serial = completions(&c);
    let (a, b) = (500, 2500);
    assert_eq!(
        serial[b] - serial[a],
        (b - a) as u64 * period,
        "completions {a}..{b} are one die operation ({period} ps) apart"
    );
    let inter = completions(&one_chip(true));
    let (ts, ti) = (serial[b] - serial[a], inter[b] - inter[a]);
    println!(
        "2,000 reads: serial chip {:.3} ms, interleaved dies {:.3} ms",
        ts as f64 / 1e9,
        ti as f64 / 1e9
    );
    // Interleaved, each die's tR overlaps the other's and the channel carries both dies'
    // commands and data: at best 2 reads per max(cmd + tR + xfer, 2 (cmd + xfer)). Random
    // reads do not alternate dies perfectly and transfers collide on the channel, so it is
    // a bound, and the overlap must show: well under the serial time.
    let pair = (tr_ps + cmd_ps + xfer_ps).max(2 * (cmd_ps + xfer_ps));
    assert!(
        ti >= (b - a) as u64 / 2 * pair,
        "interleaved beats two dies: {ti} ps"
    );
    assert!(ti < ts * 2 / 3, "interleaved {ti} ps vs serial {ts} ps");
}

/// mqsim-paper pages are 8 KiB (16 sectors); writes here are 4 KiB halves, at queue depth 1
/// so each write is programmed before the next is split. No write cache (it would merge the
/// halves in DRAM) and the whole map in DRAM.
fn halves(stride: u64, requests: u64) -> serde_json::Value {
    let s = format!("flow.0.stride_bytes={stride}");
    let n = format!("flow.0.requests={requests}");
    run_cfg(&preset(
        "mqsim-paper",
        &[
            "ftl.cmt.mode=ideal",
            "cache.mode=off",
            "precondition.mode=empty",
            "flow.0.queue_depth=1",
            "flow.0.read_fraction=0",
            "flow.0.request_bytes=4096",
            "flow.0.pattern=sequential",
            // 64 pages of 8 KiB.
            "flow.0.range_bytes=524288",
            &s,
            &n,
        ],
    ))
}

#[test]
fn rewriting_the_same_sectors_needs_no_read_modify_write() {
    // The first half of each of 64 pages, twice: the second pass finds each page holding
    // only the sectors it rewrites.
    let r = halves(8192, 128);
    assert_eq!(count(&r, "write"), 128);
    assert_eq!(r["device"]["ftl"]["rmw_reads"], 0);
    assert_eq!(r["device"]["flash"]["page_reads"], 0);
}

#[test]
fn sectors_held_elsewhere_in_the_page_are_read_first() {
    // Both halves of 64 pages, twice. Pass 1: a first half lands on an unmapped page (no
    // read), its second half finds the first half's data (64 reads). Pass 2: every page is
    // full, every half keeps the other half (128 reads).
    let r = halves(4096, 256);
    assert_eq!(r["device"]["ftl"]["rmw_reads"], 64 + 128);
    // Each read-modify-write reads only the 8 sectors kept: 192 x 4 KiB over the channel
    // beside the 256 x 8 KiB programs.
    assert_eq!(r["device"]["flash"]["page_reads"], 192);
    assert_eq!(
        r["device"]["flash"]["bus_bytes"].as_u64().unwrap(),
        192 * 4096 + 256 * 8192
    );
}

fn sequential_reads(mode: &str) -> serde_json::Value {
    let m = format!("ftl.unmapped_reads={mode}");
    run_cfg(&preset(
        "mqsim-paper",
        &[
            "precondition.mode=empty",
            "flow.0.queue_depth=1",
            "flow.0.request_bytes=8192",
            "flow.0.pattern=sequential",
            "flow.0.requests=500",
            &m,
        ],
    ))
}

#[test]
fn unmapped_reads_complete_without_flash_or_map_and_read_it() {
    // 500 whole-page reads of distinct never-written pages.
    let r = sequential_reads("complete");
    let ftl = &r["device"]["ftl"];
    assert_eq!(ftl["unmapped_page_reads"], 500);
    assert_eq!(ftl["pages_mapped_by_reads"], 0);
    assert_eq!(r["device"]["flash"]["page_reads"], 0);
    let m = sequential_reads("read_flash");
    let ftl = &m["device"]["ftl"];
    assert_eq!(ftl["unmapped_page_reads"], 0);
    assert_eq!(ftl["pages_mapped_by_reads"], 500);
    assert_eq!(m["device"]["flash"]["page_reads"], 500);
    // Mapped, not programmed.
    assert_eq!(m["device"]["flash"]["page_programs"], 0);
    // Each read now pays the array read: at least tR more than the answer from the table.
    let tr_us = preset("mqsim-paper", &[]).flash.read_us[0];
    let (fast, slow) = (
        r["device"]["stats"]["read"]["latency_us"]["mean"]
            .as_f64()
            .unwrap(),
        m["device"]["stats"]["read"]["latency_us"]["mean"]
            .as_f64()
            .unwrap(),
    );
    assert!(slow - fast >= tr_us, "{fast} -> {slow} us");
}

/// One single-plane die behind a write cache with MQSim's write-back: 8 KiB writes of
/// distinct pages, many more than the queue holds.
fn destage(write_back: &str, requests: u64) -> Config {
    let wb = format!("cache.write_back={write_back}");
    let n = format!("flow.0.requests={requests}");
    preset(
        "mqsim-paper",
        &[
            "flash.channels=1",
            "flash.chips_per_channel=1",
            "flash.dies_per_chip=1",
            "flash.planes_per_die=1",
            "flash.blocks_per_plane=256",
            "flash.pages_per_block=64",
            "ftl.cmt.mode=ideal",
            "precondition.mode=empty",
            "cache.mode=write",
            &wb,
            "flow.0.queue_depth=16",
            "flow.0.read_fraction=0",
            "flow.0.request_bytes=8192",
            "flow.0.pattern=sequential",
            &n,
        ],
    )
}

#[test]
fn mqsim_write_back_programs_each_cold_page_at_once_one_page_per_plane_in_flight() {
    // Every page is written once: each is cold, so each write is programmed at once and its
    // slot freed; the 256 MiB cache ends empty. A write-back cache keeps all of them.
    let c = destage("mqsim", 2000);
    let r = run_cfg(&c);
    let k = &r["device"]["cache"]["totals"];
    assert_eq!(r["device"]["flash"]["page_programs"], 2000);
    assert_eq!(
        (
            k["cold_write_backs"].as_u64(),
            k["dirty_pages_at_end"].as_u64()
        ),
        (Some(2000), Some(0))
    );
    assert_eq!(r["device"]["cache"]["pages_at_end"], 0);
    let lazy = run_cfg(&destage("on_eviction", 2000));
    assert_eq!(lazy["device"]["flash"]["page_programs"], 0);
    assert_eq!(
        lazy["device"]["cache"]["totals"]["dirty_pages_at_end"],
        2000
    );
    assert!(lazy["device"]["cache"]["totals"]
        .get("cold_write_backs")
        .is_none());
    // One plane: one page in flight, so writes are let in one program apart. Each program
    // is the command, the page over the bus and tPROG; completions follow at that period.
    let out = run(&c, false, true).unwrap_or_else(|e| panic!("{e}"));
    let mut t: Vec<u64> = out.log.unwrap().iter().map(|r| r.complete_ps).collect();
    t.sort_unstable();
    let f = &c.flash;
    let tprog = (f.program_us[0] * 1e6).round() as u64;
    let xfer = ((8192.0 / (f.bus.width_bits as f64 / 8.0)) * 1e6 / f.bus.rate_mts).round() as u64;
    let cmd = (f.bus.cmd_addr_cycle_ns * 1000.0).round() as u64 * f.bus.program_cmd_cycles as u64;
    let period = cmd + xfer + tprog;
    let (a, b) = (500, 1500);
    assert_eq!(
        t[b] - t[a],
        (b - a) as u64 * period,
        "completions {a}..{b} are one program ({period} ps) apart"
    );
}

/// Runs `submits` (start us, write?, logical page, bytes) through the Device API on
/// `common::ONE_DIE`'s one-die device with `extra` settings over it. Returns the
/// configuration, the completion times (ps) in submission order and the result.
fn on_one_chip(
    extra: &[&str],
    submits: &[(u64, bool, u64, u64)],
) -> (Config, Vec<u64>, serde_json::Value) {
    use ssdkit_core::api::{load, Source};
    use ssdkit_core::device::Device;
    use ssdkit_core::internals::workload::Op;
    let o = common::bare(&[&common::ONE_DIE[..], extra].concat());
    let c = load(Source::Preset("mqsim-paper"), &o).unwrap_or_else(|e| panic!("{e}"));
    let page = c.flash.page_size_bytes as u64;
    let mut dev = Device::new(&c).unwrap();
    let ids: Vec<u64> = submits
        .iter()
        .map(|&(us, write, lpn, bytes)| {
            let op = if write { Op::Write } else { Op::Read };
            dev.submit(us * 1_000_000, op, lpn * page, bytes, 0)
                .unwrap()
        })
        .collect();
    dev.run_to_idle().unwrap();
    let done = dev.drain();
    let t = ids
        .iter()
        .map(|&id| done.iter().find(|c| c.id == id).unwrap().complete_ps)
        .collect();
    let r = dev.result();
    (c, t, r)
}

/// 8 KiB pages of the mqsim-paper device.
const PAGE: u64 = 8192;

/// Completion times (ps) of `submits` (start us, write?, logical page) on one chip of two
/// single-plane dies that take turns (`flash.die_interleaving = false`); logical pages are
/// striped over the dies, so even pages are on die 0 and odd pages on die 1.
fn on_serial_chip(submits: &[(u64, bool, u64)]) -> Vec<u64> {
    let whole: Vec<_> = submits
        .iter()
        .map(|&(us, w, lpn)| (us, w, lpn, PAGE))
        .collect();
    let extra = [
        "flash.dies_per_chip=2",
        "flash.die_interleaving=false",
        "interface.pipelined_transfers=false",
    ];
    let (c, t, _) = on_one_chip(&extra, &whole);
    let f = &c.flash;
    assert_eq!(
        (
            f.page_size_bytes as u64,
            f.dies_per_chip,
            f.die_interleaving
        ),
        (PAGE, 2, false)
    );
    t
}

/// MQSim queues transactions per chip and, when the chip is free, serves the chip's oldest
/// read before any write, and among writes the oldest, whatever its die
/// (`TSU_OutofOrder.cpp:225-288`, `TSU_Base.cpp:79-84`). Each case queues work on both dies
/// while a first program holds the chip (mqsim-paper's tPROG is hundreds of us); in each,
/// what must go first waits on the die that frees the chip, which the round-robin turn
/// (the order before MQSim's) offers the chip last.
#[test]
fn a_free_serial_chip_serves_its_oldest_read_then_its_oldest_write() {
    // Page 1 (die 1) waits to be written, then page 0 (die 0, the die that frees the chip)
    // is read: the read goes first, though die 1 is offered the chip first in turn.
    let t = on_serial_chip(&[(0, true, 0), (100, true, 1), (200, false, 0)]);
    assert!(t[0] > 200_000_000, "the first program still runs at 200 us");
    assert!(
        t[2] < t[1],
        "read on die 0 {} ps before the write on die 1 {} ps",
        t[2],
        t[1]
    );
    // The same with the dies swapped: die 1 frees the chip, offered to die 0 first in turn.
    let t = on_serial_chip(&[(0, true, 1), (100, true, 2), (200, false, 1)]);
    assert!(t[2] < t[1], "read on die 1 before the write on die 0");
    // Two writes: page 2 (die 0) arrives before page 1 (die 1): the older goes first, though
    // die 1 is offered the chip first in turn.
    let t = on_serial_chip(&[(0, true, 0), (100, true, 2), (150, true, 1)]);
    assert!(
        t[1] < t[2],
        "older write on die 0 {} ps first, then die 1 {} ps",
        t[1],
        t[2]
    );
    let t = on_serial_chip(&[(0, true, 1), (100, true, 3), (150, true, 2)]);
    assert!(t[1] < t[2], "older write on die 1 first");
}

/// `submits` (start us, logical page) as whole-page reads or writes for `on_one_chip`.
fn whole_pages(write: bool, submits: &[(u64, u64)]) -> Vec<(u64, bool, u64, u64)> {
    submits
        .iter()
        .map(|&(us, lpn)| (us, write, lpn, PAGE))
        .collect()
}

/// One die of two planes; `submits` (start us, logical page) are 8 KiB writes. Returns the
/// completion times (ps) and the count of multi-plane programs.
fn writes_on_two_planes(offsets: &str, submits: &[(u64, u64)]) -> (Vec<u64>, u64) {
    let whole = whole_pages(true, submits);
    let w = format!("tsu.write_offsets=\"{offsets}\"");
    let extra = [
        "flash.planes_per_die=2",
        "interface.pipelined_transfers=false",
        &w,
    ];
    let (c, t, r) = on_one_chip(&extra, &whole);
    assert_eq!(c.flash.page_size_bytes as u64, PAGE);
    let multi = &r["device"]["flash"]["multiplane_programs"];
    (t, multi.as_u64().unwrap())
}

/// MQSim fixes a write's page when it translates the address, so while a program of page 0
/// on plane 0 runs, a second write of plane 0 is given offset 1 and two writes of plane 1
/// offsets 0 and 1; the die then programs plane 0's offset-1 write with plane 1's second
/// write (offset 1, behind the first in its queue) in one two-plane program, and plane 1's
/// first write alone: 3 program operations. Offsets fixed at program time pair writes only
/// when the planes' next free pages have the same offset, which never happens here (plane 0
/// is always one page ahead): 4 operations, none two-plane.
#[test]
fn offsets_fixed_at_queue_pair_writes_anywhere_in_the_queue() {
    // Logical pages are striped over the planes: even on plane 0, odd on plane 1.
    let submits = [(0, 0), (100, 2), (110, 1), (120, 3)];
    let (q, q_multi) = writes_on_two_planes("at_queue", &submits);
    let (p, p_multi) = writes_on_two_planes("at_program", &submits);
    assert_eq!((q_multi, p_multi), (1, 0), "two-plane programs");
    assert!(q[0] > 120_000_000, "the first program still runs at 120 us");
    // At queue: pages 2 and 3 end together, page 1 one program later; at program: one
    // program after another, so the last ends one program later than at queue.
    // Their completions then leave one after the other over the host link (nanoseconds).
    assert!(
        q[1].abs_diff(q[3]) < 1_000_000,
        "pages 2 and 3 in one two-plane program: {} and {} ps",
        q[1],
        q[3]
    );
    assert!(q[2] > q[1]);
    let prog = q[2] - q[1];
    assert!(
        prog > 500_000_000,
        "a program takes hundreds of us: {prog} ps"
    );
    let last_q = *q.iter().max().unwrap();
    let last_p = *p.iter().max().unwrap();
    assert!(
        last_p > last_q + prog / 2,
        "four programs end later ({last_p} ps) than three ({last_q} ps)"
    );
}

/// Completion times (ps), in order, of `n` half-page writes to distinct pages, all submitted
/// at time 0, on one plane (no cache, the map in DRAM), with `flash.bus.program_data`.
fn half_page_writes(program_data: &str, n: u64) -> (Config, Vec<u64>) {
    let writes: Vec<_> = (0..n).map(|lpn| (0, true, lpn, PAGE / 2)).collect();
    let d = format!("flash.bus.program_data=\"{program_data}\"");
    let (c, mut t, _) = on_one_chip(&[&d], &writes);
    assert_eq!(c.flash.page_size_bytes as u64, PAGE);
    t.sort_unstable();
    (c, t)
}

/// MQSim moves only a write's sectors over the channel to program it
/// (`NVM_PHY_ONFI_NVDDR2.cpp:230-231`): on one plane, programs of half pages follow one
/// another at the command cycles + half a page over the bus + tPROG, exactly; with whole
/// pages on the bus (the default), + a whole page.
#[test]
fn written_sectors_programs_move_only_the_written_half_page() {
    for (data, share) in [("written_sectors", 2), ("page", 1)] {
        let (c, t) = half_page_writes(data, 300);
        let f = &c.flash;
        let bytes = f.page_size_bytes as f64 / share as f64;
        let tprog = (f.program_us[0] * 1e6).round() as u64;
        let xfer =
            ((bytes / (f.bus.width_bits as f64 / 8.0)) * 1e6 / f.bus.rate_mts).round() as u64;
        let cmd =
            (f.bus.cmd_addr_cycle_ns * 1000.0).round() as u64 * f.bus.program_cmd_cycles as u64;
        let period = cmd + xfer + tprog;
        let (a, b) = (50, 250);
        assert_eq!(
            t[b] - t[a],
            (b - a) as u64 * period,
            "{data}: completions {a}..{b} are one program ({period} ps) apart"
        );
    }
}

/// Completion times (ps) of whole-page reads `submits` (start us, logical page) on one
/// channel of three single-die chips, never-written pages read from flash (logical pages
/// are striped over the chips: page k on chip k), with `flash.bus.arbitration`.
fn reads_on_one_channel(arbitration: &str, submits: &[(u64, u64)]) -> (Config, Vec<u64>) {
    let whole = whole_pages(false, submits);
    let a = format!("flash.bus.arbitration=\"{arbitration}\"");
    let extra = [
        "flash.chips_per_channel=3",
        "ftl.unmapped_reads=\"read_flash\"",
        "interface.pipelined_transfers=false",
        &a,
    ];
    let (c, t, r) = on_one_chip(&extra, &whole);
    assert_eq!(r["device"]["flash"]["page_reads"], 3, "{r}");
    (c, t)
}

/// MQSim's channel moves data waiting in a die's registers before any new command
/// (`NVM_PHY_ONFI_NVDDR2.cpp:463-487`, `TSU_Base.cpp:47-58`). Chip A's data is on the
/// channel when a read arrives for chip C, and chip B's data becomes ready after C's
/// command asked for the channel: first come, C's command goes first and B's data waits
/// for it; data first, B's data goes first and C's command waits for it. So B's read ends
/// exactly one command earlier and C's exactly one page transfer later.
#[test]
fn a_channel_moves_waiting_data_before_new_commands() {
    let submits = [(0, 0), (10, 1), (78, 2)];
    let (c, fc) = reads_on_one_channel("first_come", &submits);
    let (_, df) = reads_on_one_channel("data_first", &submits);
    let f = &c.flash;
    let cmd = (f.bus.cmd_addr_cycle_ns * 1000.0).round() as u64 * f.bus.read_cmd_cycles as u64;
    let xfer =
        ((PAGE as f64 / (f.bus.width_bits as f64 / 8.0)) * 1e6 / f.bus.rate_mts).round() as u64;
    println!("first come {fc:?}, data first {df:?}; cmd {cmd} ps, page transfer {xfer} ps");
    assert_eq!(fc[0], df[0], "A's read is alone on the channel");
    assert_eq!(fc[1] - df[1], cmd, "B's data goes before C's command");
    assert_eq!(df[2] - fc[2], xfer, "C's command waits for B's data");
}

/// MQSim's firmware takes no time and splits a request in the event that brings it in
/// (`ftl.firmware_request_us = 0`, `ftl.firmware_transaction_us = 0` under `--mqsim-compat`);
/// ssdkit then hands the request on in that event. QD1 4 KiB writes on an empty device whose
/// data crosses the link whole before the firmware (`interface.pipelined_transfers = false`):
/// five events a write (doorbell, command in, data in, program done, completion), where a
/// firmware step that takes time adds its own event, six. The same latencies either way but
/// for that step's time.
#[test]
fn firmware_that_takes_no_time_splits_a_request_in_its_arrivals_event() {
    let n = 500u64;
    let run_with = |firmware_us: &str| -> serde_json::Value {
        let fw = format!("ftl.firmware_request_us={firmware_us}");
        run_cfg(&preset(
            "mqsim-paper",
            &[
                "precondition.mode=\"empty\"",
                "ftl.cmt.mode=\"ideal\"",
                "cache.mode=\"off\"",
                "interface.pipelined_transfers=false",
                "ftl.firmware_transaction_us=0",
                &fw,
                "flow.0.queue_depth=1",
                "flow.0.read_fraction=0.0",
                &format!("flow.0.requests={n}"),
            ],
        ))
    };
    let (none, some) = (run_with("0"), run_with("1"));
    assert_eq!(count(&none, "write"), n);
    assert_eq!(
        none["events"],
        5 * n,
        "no firmware time: no event of its own"
    );
    assert_eq!(
        some["events"],
        6 * n,
        "1 us of firmware: an event at its end"
    );
    let mean = |r: &serde_json::Value| {
        r["device"]["stats"]["write"]["latency_us"]["mean"]
            .as_f64()
            .unwrap()
    };
    assert!(
        (mean(&some) - mean(&none) - 1.0).abs() < 1e-6,
        "{} {}",
        mean(&some),
        mean(&none)
    );
}

/// `"data_first"` on a full device with a cached map, open-loop mixed traffic, idle-time GC and
/// the latency breakdown: data waits for the channel behind commands and other data, and the
/// run checks that each request's parts sum to its latency (the wait in the registers counts
/// as the transfer's wait); foreground and idle-time GC both run, as under first come.
#[test]
fn data_first_keeps_the_breakdown_whole_and_gc_running() {
    let run_with = |arb: &str| -> serde_json::Value {
        let a = format!("flash.bus.arbitration=\"{arb}\"");
        let c = preset(
            "mqsim-paper",
            &[
                "flash.channels=2",
                "flash.chips_per_channel=2",
                "flash.blocks_per_plane=128",
                "flash.pages_per_block=64",
                "cache.mode=off",
                "ftl.cmt.mode=shared",
                "ftl.cmt.capacity_bytes=65536",
                "ftl.gc_background=true",
                "ftl.gc_background_threshold=0.03",
                "precondition.mode=sequential",
                "run.latency_breakdown=true",
                "flow.0.read_fraction=0.7",
                "flow.0.arrival=\"exponential\"",
                "flow.0.rate_iops=4000",
                "flow.0.requests=20000",
                &a,
            ],
        );
        run_cfg(&c)
    };
    let fc = run_with("first_come");
    let df = run_with("data_first");
    let ftl = |r: &serde_json::Value, k: &str| r["device"]["ftl"][k].as_u64().unwrap();
    println!(
        "GC runs / background runs: first come {} / {}, data first {} / {}",
        ftl(&fc, "gc_runs"),
        ftl(&fc, "gc_background_runs"),
        ftl(&df, "gc_runs"),
        ftl(&df, "gc_background_runs")
    );
    assert!(
        df["device"]["latency_breakdown"].is_object(),
        "breakdown reported"
    );
    assert!(ftl(&df, "gc_runs") > 0 && ftl(&df, "gc_background_runs") > 0);
    assert!(ftl(&fc, "gc_background_runs") > 0);
}
