//! The FTL as an interface, driven by hand the way the simulator drives it: the flash work a
//! call decides comes back as ops tagged with their class (reclaim reads, then the victim's
//! erase; mapping reads of the cached map), programs land on pages the FTL chooses on the
//! stream of their class, and every counter moves inside the FTL.

mod common;

use common::preset;
use ssdkit_core::config::{Config, UnmappedReads};
use ssdkit_core::internals::ftl::{precondition, BlockState, FlashOp, Ftl, OpClass, StreamId};
use ssdkit_core::internals::ids::{BlockId, FlowId, Lpn, PlaneId};

fn small(extra: &[&str]) -> Config {
    let mut o = vec![
        "cache.mode=off",
        "flash.channels=1",
        "flash.chips_per_channel=1",
        "flash.dies_per_chip=1",
        "flash.planes_per_die=1",
        "flash.blocks_per_plane=32",
        "flash.pages_per_block=16",
        "flash.page_size_bytes=4096",
        "ftl.spare_factor=0.25",
        "ftl.gc_policy=greedy",
    ];
    o.extend_from_slice(extra);
    preset("mqsim-paper", &o)
}

fn take(ftl: &mut Ftl) -> Vec<FlashOp> {
    let mut ops = Vec::new();
    ftl.take_ops(&mut ops);
    ops
}

#[test]
fn a_reclaim_job_is_reads_programs_on_the_reclaim_stream_and_an_erase() {
    let c = small(&["ftl.cmt.mode=ideal"]);
    let mut ftl = Ftl::from_config(&c);
    let n = ftl.logical_pages() as u32;
    // Fill, then overwrite every third page, untimed: closed blocks hold invalid pages.
    for l in (0..n).chain((0..n).step_by(3)) {
        assert!(ftl.write_untimed(Lpn(l)));
    }
    ftl.begin_run(1);
    assert!(!ftl.has_ops());
    let plane = PlaneId(0);
    let ppb = ftl.geometry().pages_per_block;
    // User writes until one starts a reclaim job.
    let mut user_block = None;
    let mut ops = Vec::new();
    for l in (1..n).step_by(3) {
        assert!(ftl.next_page_offset(plane, StreamId::USER).is_some());
        let ppn = ftl.program_page(Lpn(l), plane, OpClass::User);
        user_block = Some(ppn.0 / ppb);
        ops = take(&mut ftl);
        if !ops.is_empty() {
            break;
        }
    }
    assert!(!ops.is_empty(), "no reclaim job started");
    assert!(ftl.reclaiming(plane));
    let victim = match ops[0] {
        FlashOp::Read { ppn, .. } => ppn.0 / ppb,
        other => panic!("a reclaim job starts with reads, got {other:?}"),
    };
    assert_eq!(ftl.block_state(BlockId(victim)), BlockState::Victim);
    assert_eq!(ops.len() as u32, ftl.valid_pages(BlockId(victim)));
    let (runs, moves) = (ftl.stats().gc_runs, ftl.stats().gc_page_moves);
    for (k, op) in ops.iter().enumerate() {
        let FlashOp::Read {
            class,
            lpn,
            ppn,
            plane: p,
        } = *op
        else {
            panic!("{op:?}");
        };
        assert_eq!((class, p, ppn.0 / ppb), (OpClass::Reclaim, plane, victim));
        assert!(ftl.reclaim_read_begin(lpn, ppn, p));
        let to = ftl
            .reclaim_program(lpn, ppn, p, false)
            .expect("the page is live");
        // The reclaim stream has its own frontier: moved data never joins user data.
        assert_ne!(Some(to.0 / ppb), user_block);
        assert_ne!(to.0 / ppb, victim);
        assert_eq!(ftl.translate(lpn), Some(to));
        assert!(take(&mut ftl).is_empty());
        ftl.reclaim_program_done(p);
        let after = take(&mut ftl);
        if k + 1 < ops.len() {
            assert!(after.is_empty(), "{after:?}");
        } else {
            assert_eq!(
                after,
                vec![FlashOp::Erase {
                    plane,
                    block: BlockId(victim)
                }]
            );
        }
    }
    ftl.erase_done(plane);
    assert_eq!(ftl.block_state(BlockId(victim)), BlockState::Free);
    assert_eq!(ftl.stats().gc_runs, runs + 1);
    assert_eq!(ftl.stats().gc_page_moves, moves + ops.len() as u64);
    // Whatever the erase started next is a new job of the same shape.
    for op in take(&mut ftl) {
        assert!(matches!(
            op,
            FlashOp::Read {
                class: OpClass::Reclaim,
                ..
            } | FlashOp::Erase { .. }
        ));
    }
    ftl.check_invariants().unwrap();
}

#[test]
fn the_user_stream_waits_at_the_reserve_the_reclaim_stream_does_not() {
    let c = small(&["ftl.cmt.mode=ideal"]);
    let mut ftl = Ftl::from_config(&c);
    let plane = PlaneId(0);
    let n = ftl.logical_pages();
    let mut l = 0;
    // Overwrites: the reclaim jobs they start are never run, so free space only shrinks.
    while ftl.next_page_offset(plane, StreamId::USER).is_some() {
        ftl.program_page(Lpn((l % n) as u32), plane, OpClass::User);
        let _ = take(&mut ftl);
        l += 1;
    }
    assert!(ftl.at_reserve(plane));
    assert_eq!(ftl.next_page_offset(plane, StreamId::RECLAIM), Some(0));
    assert_eq!(ftl.stats().user_page_writes, l);
}

#[test]
fn a_cached_map_miss_asks_for_one_mapping_read_and_parks_its_waiters() {
    let c = small(&[
        "flash.planes_per_die=2",
        "flash.blocks_per_plane=256",
        "flash.pages_per_block=64",
        "ftl.cmt.mode=shared",
        "ftl.cmt.capacity_bytes=4096",
        "precondition.mode=fast",
    ]);
    let mut ftl = Ftl::from_config(&c);
    precondition::run(&mut ftl, &c).unwrap();
    ftl.begin_run(1);
    let f = FlowId(0);
    let per = ftl.cmt().expect("cached").entries_per_tpage();
    // Two lookups of one translation page not cached: one read, the second coalesced.
    let t = (0..ftl.translation_pages() as u32)
        .find(|&t| !ftl.cmt().unwrap().page_cached(t))
        .expect("a page not cached");
    assert!(ftl.translate(ftl.tpage_lpn(t)).is_some());
    let (a, b) = (Lpn(t * per), Lpn(t * per + 1));
    assert!(!ftl.map_lookup(a, f, false, 7));
    let ops = take(&mut ftl);
    assert_eq!(ops.len(), 1, "{ops:?}");
    let FlashOp::Read { class, lpn, .. } = ops[0] else {
        panic!("{ops:?}")
    };
    assert_eq!((class, lpn), (OpClass::Mapping, ftl.tpage_lpn(t)));
    assert!(!ftl.map_lookup(b, f, true, 9));
    assert!(take(&mut ftl).is_empty());
    let r = ftl.mapping_read_done(lpn).expect("two waiters");
    assert_eq!(
        r.waiters.iter().map(|w| w.0).collect::<Vec<_>>(),
        vec![7, 9]
    );
    // Now cached: a hit, counted inside the FTL.
    assert!(ftl.map_lookup(a, f, false, 11));
    let l = ftl.cmt_flow_result(0).unwrap();
    assert_eq!(
        (l.read_misses, l.write_misses, l.read_hits, l.mapping_reads),
        (1, 1, 1, 1)
    );
}

#[test]
fn the_ftl_decides_and_counts_unmapped_reads_rmw_reads_and_trims() {
    let c = small(&["ftl.cmt.mode=ideal"]);
    let mut ftl = Ftl::from_config(&c);
    assert!(ftl.write_untimed(Lpn(0)));
    ftl.begin_run(1);
    let full = (1u64 << ftl.geometry().sectors_per_page) - 1;
    // Answered without flash unless `ftl.unmapped_reads = "read_flash"`.
    assert_eq!(ftl.read_unmapped(Lpn(1), None), None);
    assert_eq!(ftl.translate(Lpn(1)), None);
    assert_eq!(ftl.stats().unmapped_page_reads, 1);
    ftl.set_unmapped_reads(UnmappedReads::ReadFlash);
    let ppn = ftl
        .read_unmapped(Lpn(2), None)
        .expect("given a page of its plane by its read");
    // The page is taken from the plane's user stream but holds no mapping: the next read of
    // the page takes the next one.
    assert_eq!(ftl.translate(Lpn(2)), None);
    let again = ftl.read_unmapped(Lpn(2), None).expect("another page");
    assert_eq!(
        again.0,
        ppn.0 + 1,
        "the next page of the same plane's stream"
    );
    assert_eq!(ftl.stats().pages_mapped_by_reads, 2);
    assert_eq!(ftl.stats().unmapped_page_reads, 1);
    // A partial write of a written page reads the sectors it keeps first; a whole-page write
    // and a write to a page never written read nothing.
    let old = ftl.translate(Lpn(0)).expect("written");
    assert_eq!(
        ftl.write_needs_read(Lpn(0), Some(old), 1, full),
        Some((old, full & !1))
    );
    assert_eq!(ftl.write_needs_read(Lpn(0), Some(old), full, full), None);
    assert_eq!(ftl.write_needs_read(Lpn(5), None, 1, full), None);
    assert_eq!(ftl.stats().rmw_reads, 1);
    ftl.trim_command();
    ftl.trim_command();
    assert_eq!(ftl.stats().trim_requests, 2);
}
