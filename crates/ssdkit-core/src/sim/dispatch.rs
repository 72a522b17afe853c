//! Event handlers along the request path: host submission and fetch, firmware, the split into
//! transactions, die scheduling and execution, completion. Each asks the owning component what
//! happens and when; the choices themselves live in the components.

use super::mapping::Parked;
use super::{Ev, Simulator};
use crate::flash::MAX_BATCH;
use crate::frontend::split;
use crate::ftl::{OpClass, StreamId};
use crate::host::completion::Wake;
use crate::host::interrupts::Pending;
use crate::ids::{DieId, FlowId, Lpn, Ppn, ReqId, TxId};
use crate::stats::breakdown::{Hooks, Step};
use crate::tsu::suspension::{Suspendable, WhileSuspended};
use crate::tsu::{Attempt, Attempts, Tx, TxKind};
use crate::workload::flow::Next;
use crate::workload::synthetic::HostRequest;
use crate::workload::Op;

impl Simulator {
    pub(crate) fn handle(&mut self, ev: Ev) {
        match ev {
            Ev::Doorbell(r) => {
                self.host.announce(r);
                self.try_fetch();
            }
            Ev::CommandArrived(r) => match self.host.command_arrived(self.q.now(), r) {
                None => self.firmware_from(r, self.q.now(), true),
                Some((t, stall)) => {
                    self.bd.phase(r, Step::DataDma, t, stall);
                    self.at(t, Ev::WriteDataArrived(r));
                }
            },
            Ev::WriteDataArrived(r) => self.firmware_from(r, self.q.now(), true),
            Ev::WriteChunkArrived(t) => self.release_write(t),
            Ev::FirmwareDone(r) => self.dispatch_request(r),
            Ev::DieArrayDone(d) => {
                let now = self.q.now();
                // The end of an operation a suspension moved is ignored.
                if self.susp.as_mut().is_some_and(|su| su.is_stale(d, now)) {
                    return;
                }
                self.die_array_done(d)
            }
            Ev::DieSuspended(d) => {
                self.dies.set_busy(d, false);
                self.schedule_die(d);
            }
            Ev::DieXferDone(d) => {
                self.die_finish(d);
                if self.backend.queues.is_some() {
                    self.transfer_ended(d);
                }
            }
            Ev::ChannelIdle(ch) => self.channel_idle(ch),
            Ev::Completed(r) => self.complete_request(r),
            Ev::CacheWriteIn(r) => self.cache_write_in(r),
            Ev::CacheReadOut(r) => self.cache_read_out(r),
            Ev::Arrival(f) => {
                self.flows[f.idx()].woken();
                self.pump(f);
            }
            Ev::MsiArrived(b) => self.host_woken(Wake::Msi(b)),
            Ev::CoalesceTimer(v) => self.host_woken(Wake::Timer(v)),
            Ev::HostDone(b) => self.host_done(b),
        }
        // A plane stuck below its GC start with nothing to collect can become collectable
        // through an overwrite or TRIM handled anywhere above; its own die may be idle.
        while self.ftl.wake_one() {
            self.queue_ftl_ops();
        }
    }

    // ----- host -----

    /// Submits what flow `f` may submit now; if its next request lies in the future, makes
    /// sure an Arrival event will come back for it.
    pub(crate) fn pump(&mut self, f: FlowId) {
        let now = self.q.now();
        loop {
            let flow = &mut self.flows[f.idx()];
            if flow.is_full() {
                return;
            }
            match flow.next(now) {
                Ok(Next::Due(at, req)) => {
                    // A host program's request keeps the id it was given.
                    let (tag, soon) = (flow.submitting(), flow.soon);
                    self.ftl
                        .prefetch_mapping(soon, self.settings.geo.sectors_per_page);
                    self.submit(f, at, req, tag);
                }
                Ok(Next::Later(t)) => {
                    if flow.wants_arrival() {
                        self.at(t, Ev::Arrival(f));
                    }
                    return;
                }
                Ok(Next::Done) => return,
                Err(e) => {
                    self.failure.get_or_insert(e);
                    return;
                }
            }
        }
    }

    /// The host puts a request of `flow` in its submission queue now; its latency counts from
    /// `arrived` (earlier than now when an open-loop flow's queue was full). `tag`: its id in
    /// logs, else the next in submission order.
    fn submit(&mut self, flow: FlowId, arrived: u64, r: HostRequest, tag: Option<u64>) {
        let seq = self.done.next_id();
        let (id, t) = self
            .host
            .submit(self.q.now(), flow, arrived, r, tag.unwrap_or(seq));
        let split = self.host.last_submit();
        self.bd.submitted(id, self.q.now(), arrived, split);
        if let Some(h) = self.host_side.as_mut() {
            h.request_submitted(&self.host, id);
        }
        self.marks.submitted(flow.idx(), self.q.now());
        self.at(t, Ev::Doorbell(id));
    }

    /// The fetch unit takes what it may; most calls find nothing waiting, so that test is
    /// inlined at the call and the loop is not.
    #[inline]
    fn try_fetch(&mut self) {
        if self.host.has_waiting() {
            self.fetch_waiting();
        }
    }

    fn fetch_waiting(&mut self) {
        loop {
            let Some((r, t, stall)) = self.host.next_fetch(self.q.now()) else {
                return;
            };
            self.bd.fetched(r, self.q.now(), t, stall);
            if self
                .firmware
                .books_at_fetch(self.host.data_before_firmware(r))
            {
                self.firmware_from(r, t, false);
            } else {
                self.at(t, Ev::CommandArrived(r));
            }
        }
    }

    fn complete_request(&mut self, r: ReqId) {
        let now = self.q.now();
        let req = self.host.finish(r);
        let (flow, lat) = (req.flow, now - req.submit_ps);
        let bytes = req.bytes(self.host.sector_bytes());
        let steps = self
            .bd
            .request_done(r, flow.idx(), req.op, lat, &mut self.failure);
        let host = &self.host;
        let entry = || host.record(&req, now, steps);
        self.done
            .complete((flow.idx(), req.op), lat, bytes, now, entry);
        let ftl = &self.ftl;
        self.marks
            .completed(flow.idx(), now, lat, bytes, || ftl.stats().user_page_writes);
        self.progress_at = self.q.processed();
        self.try_fetch();
        if self.host_side.is_some() {
            return self.host_completion(Pending::of(&req, now, bytes));
        }
        self.app_sees(flow);
        if self.host.outstanding() == 0 {
            self.maybe_last_completion(now);
        }
    }

    // ----- front end -----

    /// The firmware takes request `r`, in at `at`. `in_event`: the event handled now
    /// brought it in (at now), where firmware that takes no time (MQSim's) hands it on at
    /// once, as MQSim splits a request in its arrival's event; booked at its fetch, it waits
    /// for an event at its arrival, as the arrival's own event would have.
    fn firmware_from(&mut self, r: ReqId, at: u64, in_event: bool) {
        let req = self.host.request(r);
        let t = self
            .firmware
            .process_request(at, req.start_sector, req.sectors);
        self.bd.phase(r, Step::Firmware, t, 0);
        match in_event && t == at {
            true => self.dispatch_request(r),
            false => self.at(t, Ev::FirmwareDone(r)),
        }
    }

    /// Splits a request into page transactions with their sector bitmaps and queues them.
    fn dispatch_request(&mut self, r: ReqId) {
        let req = *self.host.request(r);
        let spp = self.settings.geo.sectors_per_page;
        // The data cache takes what it serves; the rest goes the uncached way below.
        if self.cache.is_some() && self.cache_dispatch(r, &req) {
            return;
        }
        if req.op == Op::Trim {
            // Whole pages only: partial pages at the edges keep their data.
            for c in split(req.start_sector, req.sectors, spp).filter(|c| c.full) {
                self.ftl.trim_page(req.flow, c.lpn);
                self.queue_ftl_ops();
            }
            self.ftl.trim_command();
        }
        // A flush without a write cache (`cache.mode` without writes) has nothing to wait for
        // beyond its command path: every write is durable when it completes.
        if matches!(req.op, Op::Trim | Op::Flush) {
            return self.flash_done(r, 0);
        }
        let mut pending = 0;
        let write = req.op == Op::Write;
        for c in split(req.start_sector, req.sectors, spp) {
            if self.cmt_on && !self.cmt_lookup(Parked::page(write, r, req.flow, c.lpn, c.sectors)) {
                // Issued when its translation page is in (mapping_read_done).
                pending += 1;
                continue;
            }
            if self.issue_page(r, req.flow, !write, c.lpn, c.sectors) {
                pending += 1;
            }
        }
        self.expect_parts(r, pending);
    }

    /// Request `r` ends when its `parts` (page transactions, DRAM reads) are done; with none,
    /// its flash work is done now.
    pub(super) fn expect_parts(&mut self, r: ReqId, parts: u32) {
        self.firmware.expect_parts(r, parts);
        if parts == 0 {
            self.flash_done(r, 0);
        }
    }

    /// Issues the transaction of one page of request `r`, its mapping entry at hand. False
    /// for a read of a page never written, which needs no flash. Out of line, as `channel_idle`.
    #[inline(never)]
    pub(super) fn issue_page(
        &mut self,
        r: ReqId,
        flow: FlowId,
        read: bool,
        lpn: Lpn,
        sectors: u64,
    ) -> bool {
        if !read {
            self.queue_write_page(r, flow, lpn, sectors);
            return true;
        }
        self.issue_read(TxKind::UserRead, r, flow, lpn, sectors, u32::MAX)
    }

    /// Issues a read (a user read, or a data-cache read filling entry `slot`) of `sectors`
    /// of `lpn` for request `r`; false if the page was never written and needs no flash.
    #[inline(always)]
    pub(super) fn issue_read(
        &mut self,
        kind: TxKind,
        r: ReqId,
        flow: FlowId,
        lpn: Lpn,
        sectors: u64,
        slot: u32,
    ) -> bool {
        let mapped = match self.ftl.translate(lpn) {
            None => self.read_unmapped(flow, lpn, sectors),
            m => m,
        };
        let Some(ppn) = mapped else {
            return false;
        };
        let t = self.tsu.insert_read(kind, r, lpn, ppn, sectors, slot);
        self.bd.tx_issued(t, r, true, self.q.now(), 0);
        if kind == TxKind::UserRead {
            self.enqueue_read(t, ppn);
        } else {
            self.enqueue(t);
        }
        true
    }

    /// Queues user read `t` of `ppn`; to an idle die with nothing queued it goes at once, as
    /// the scheduler would take it (alone, no GC or channel waiting), without the queue.
    #[inline]
    fn enqueue_read(&mut self, t: TxId, ppn: Ppn) {
        let plane = self.settings.geo.plane_of(ppn);
        let die = self.tsu.die_of(plane);
        if !self.tsu.starts_alone(die, self.dies.busy(die))
            || self
                .susp
                .as_ref()
                .is_some_and(|su| su.while_suspended(die).is_some())
            || self.backend.command_waits(die.0, self.q.now())
        {
            return self.enqueue(t);
        }
        self.bd.tx_ready(t, self.q.now());
        self.dies.set_busy(die, true);
        let page = self.settings.geo.page_in_block(ppn.0);
        let end = self.backend.start_read(self.q.now(), die.0, page, 1);
        self.begin(die, &[t], end);
    }

    /// A read of a page `translate` found unmapped: the FTL maps it and it is read from flash
    /// (`ftl.unmapped_reads = "read_flash"`), or None: real drives answer from the mapping
    /// table alone, so with pipelined transfers its data leaves for the host at once. Out of
    /// line: on a filled drive it never runs, and the read loop stays as tight as before.
    #[cold]
    pub(super) fn read_unmapped(&mut self, flow: FlowId, lpn: Lpn, sectors: u64) -> Option<Ppn> {
        let ppn = self.ftl.read_unmapped(lpn, self.flows[flow.idx()].pinned());
        self.queue_ftl_ops();
        if ppn.is_none() && self.host.pipelined() {
            let bytes = self.host.sector_bytes() * sectors.count_ones() as u64;
            self.host.read_chunk(self.q.now(), bytes);
        }
        ppn
    }

    /// Queues the write of one page of request `r`: once its data is in (at once unless it
    /// crosses the link now, page by page) and, for a partial page, once the unchanged sectors
    /// have been read. Out of the split loop so that reads keep their tight loop.
    fn queue_write_page(&mut self, r: ReqId, flow: FlowId, lpn: Lpn, sectors: u64) {
        let now = self.q.now();
        let full = self.settings.geo.full_page_mask();
        let pinned = self.flows[flow.idx()].pinned();
        let (plane, rmw) = self.ftl.place_write(lpn, sectors, full, pinned);
        let w = Tx {
            req: r,
            lpn,
            sectors,
            ..Tx::new(TxKind::UserWrite, plane)
        };
        let (w, rr) = self.tsu.insert_write(w, rmw);
        let mut stall = 0;
        if self.host.pipelined() {
            // This page's data queues on the link behind the request's earlier pages.
            let t;
            (t, stall) = self.host.write_chunk(now, sectors.count_ones());
            if t > now {
                self.at(t, Ev::WriteChunkArrived(w));
                self.tsu.get_mut(w).waits += 1;
            }
        }
        self.bd.tx_issued(w, r, false, now, stall);
        self.enqueue_write(w, rr);
    }

    /// Queues write `w`, or first the read `rr` of the sectors it keeps.
    pub(super) fn enqueue_write(&mut self, w: TxId, rr: Option<TxId>) {
        // The read needs no host data, so it overlaps the data's transfer.
        if let Some(rr) = rr {
            self.enqueue(rr);
        } else if self.tsu.get(w).waits == 0 {
            self.enqueue(w);
        }
    }

    /// A write transaction got one of the things it waits for (its host data, the read of
    /// its unchanged sectors); with nothing left, it joins its die's queue.
    pub(super) fn release_write(&mut self, w: TxId) {
        if self.tsu.released(w) {
            self.enqueue(w);
        }
    }

    /// One part of request `r` is done (a page from flash, or a cache read's sectors from
    /// DRAM, `bytes` of read data): with pipelined transfers its data leaves for the host now,
    /// behind what is on the link; the request's last part goes with the completion.
    pub(super) fn part_done(&mut self, r: ReqId, bytes: u64) {
        let bytes = if self.host.pipelined() { bytes } else { 0 };
        if self.firmware.part_done(r) {
            self.flash_done(r, bytes);
        } else if bytes > 0 {
            self.host.read_chunk(self.q.now(), bytes);
        }
    }

    /// All flash work of request `r` is done: send the read data not sent yet (with pipelined
    /// transfers, the `last_page_bytes` of the page just out of its die) and the completion.
    pub(super) fn flash_done(&mut self, r: ReqId, last_page_bytes: u64) {
        self.bd.flash_done(r, self.q.now());
        let t = self.host.complete(self.q.now(), r, last_page_bytes);
        let split = self.host.last_complete();
        self.bd.completing(r, t, split);
        self.at(t, Ev::Completed(r));
    }

    // ----- transaction scheduling and flash execution -----

    pub(super) fn enqueue(&mut self, t: TxId) {
        self.bd.tx_ready(t, self.q.now());
        self.tsu
            .tag_write(t, |p| self.ftl.next_page_offset(p, StreamId::USER));
        let die = if self.tsu.classes() {
            self.enqueue_classed(t)
        } else {
            self.tsu.enqueue(t, 0)
        };
        if self.susp.as_ref().is_some_and(|su| su.may_suspend(die)) && self.dies.busy(die) {
            self.suspend_die(die, Suspendable::suspends_as_read(self.tsu.get(t).kind));
        }
        self.schedule_die(die);
    }

    /// The flow a transaction works for: its request's, or for a data-cache write-back the
    /// flow whose data it writes; None for GC and translation pages.
    #[inline]
    fn tx_flow(&self, tx: &Tx) -> Option<FlowId> {
        match (&self.cache, tx.kind) {
            (Some(c), TxKind::CacheWrite) => Some(c.write_back_flow(tx.slot)),
            _ if tx.req == ReqId::NONE => None,
            _ => Some(self.host.request(tx.req).flow),
        }
    }

    // Out of line: without priority classes `enqueue` keeps only the test.
    #[inline(never)]
    fn enqueue_classed(&mut self, t: TxId) -> DieId {
        let flow = self.tx_flow(self.tsu.get(t));
        self.tsu.enqueue_user(t, flow, self.q.now())
    }

    /// A user or cache write-back is about to program its page: its flow now owns the data
    /// (for per-flow GC accounting).
    #[inline(never)]
    fn note_owner(&mut self, tx: &Tx) {
        if let Some(flow) = self.tx_flow(tx) {
            self.owners.as_mut().expect("checked").wrote(tx.lpn, flow.0);
        }
    }

    /// With `tsu.suspension`, a transaction that may suspend the busy die's program or erase
    /// as a read (or a write; `read`) reached it, or waits there as the operation begins or
    /// resumes: the suspension unit decides; a suspended die stays busy for the suspension's
    /// time, then starts what suspended it (`Ev::DieSuspended`).
    #[inline(never)]
    fn suspend_die(&mut self, die: DieId, read: Option<bool>) {
        let (now, batch) = (self.q.now(), self.dies.batch(die));
        let su = self.susp.as_mut().expect("checked");
        let Some(free) = su.suspend_if(die, now, read, batch) else {
            return;
        };
        self.bd.save_die(die);
        self.at(free, Ev::DieSuspended(die));
    }

    /// A free die with a suspended operation: it starts what may run meanwhile, or resumes
    /// the operation, as the suspension unit says (false: no operation is suspended).
    #[inline(never)]
    fn schedule_suspended(&mut self, die: DieId) -> bool {
        let Some(next) = self.susp.as_ref().expect("checked").while_suspended(die) else {
            return false;
        };
        if let WhileSuspended::Meanwhile { writes } = next {
            self.dies.set_busy(die, true);
            let steps = self.tsu.steps_while_suspended(die, writes);
            if self.run_steps(die, steps) {
                return true;
            }
            self.dies.set_busy(die, false);
        }
        let now = self.q.now();
        let r = self.susp.as_mut().expect("checked").resume(die, now);
        self.dies.begin(die, &r.batch[..r.n]);
        self.bd.restore_die(die, r.delay);
        self.at(r.end, Ev::DieArrayDone(die));
        self.suspend_die(die, self.tsu.queued_suspender(die));
        true
    }

    pub(super) fn schedule_die(&mut self, die: DieId) {
        let suspended = self.susp.as_ref().is_some_and(|su| su.suspended(die));
        if self.dies.busy(die) || (suspended && self.schedule_suspended(die)) {
            return;
        }
        let (ftl, planes) = (&self.ftl, self.settings.geo.planes_of_die(die));
        let Some(plan) = self.tsu.die_steps(die, || ftl.any_at_reserve(planes)) else {
            if self.gc_background {
                self.background_gc(die);
            }
            return;
        };
        if self.backend.queues.is_some() && self.channel_taken(die) {
            return;
        }
        // Busy before running: allocating a page can start GC, whose enqueue must not
        // re-enter this die's scheduler.
        self.dies.set_busy(die, true);
        let by_gc = if plan.gc_first {
            if self.start_gc_op(die) {
                Some(true)
            } else {
                self.start_user(die).then_some(false)
            }
        } else if self.start_user(die) {
            Some(false)
        } else {
            (plan.gc_waiting && self.start_gc_op(die)).then_some(true)
        };
        match by_gc {
            Some(by_gc) => self.tsu.started(die, &plan, by_gc),
            None => self.dies.set_busy(die, false),
        }
    }

    /// Starts the user work `tsu.policy` chooses (`tsu/policy/`).
    #[inline]
    fn start_user(&mut self, die: DieId) -> bool {
        let steps = self.tsu.user_steps(die, self.q.now());
        self.run_steps(die, steps)
    }

    /// Runs the TSU's steps in order until one starts.
    #[inline(always)]
    fn run_steps(&mut self, die: DieId, steps: Attempts) -> bool {
        for step in steps {
            let started = match step {
                Attempt::Reads(class) => self.start_reads(die, class as usize),
                Attempt::Writes { class, turn } => {
                    let ok = self.start_writes(die, class as usize);
                    if ok && turn {
                        self.tsu.wrote(die, class as usize);
                    }
                    ok
                }
                Attempt::Gc => self.start_gc_op(die),
            };
            if started {
                return true;
            }
        }
        false
    }

    fn start_reads(&mut self, die: DieId, class: usize) -> bool {
        let mut batch = [TxId::NONE; MAX_BATCH];
        let Some((page, n)) = self.tsu.take_reads(die, class, &mut batch) else {
            return false;
        };
        let t = self.backend.start_read(self.q.now(), die.0, page, n as u32);
        self.begin(die, &batch[..n], t);
        true
    }

    /// The writes queued at `die` for planes the FTL says are stuck (`Ftl::stuck_user_planes`)
    /// move to the plane the FTL gives them (inside their flow's pinned planes), or stay.
    #[cold]
    #[inline(never)]
    fn retarget_stuck_writes(&mut self, die: DieId, stuck: [bool; MAX_BATCH]) {
        let mut kept = self.tsu.take_writes_of_planes(die, |l| stuck[l]);
        kept.retain(|&(_, _, t)| {
            let tx = *self.tsu.get(t);
            let pinned = self.tx_flow(&tx).and_then(|f| self.flows[f.idx()].pinned());
            match self.ftl.plane_with_room(tx.lpn, pinned) {
                Some(p) if p != tx.plane => {
                    self.tsu.get_mut(t).plane = p;
                    self.enqueue(t);
                    false
                }
                _ => true,
            }
        });
        self.tsu.keep_writes(die, &kept);
    }

    fn start_writes(&mut self, die: DieId, class: usize) -> bool {
        // Most calls find no write queued (reads and GC share the scheduler): answer those
        // before looking at any plane.
        if !self.tsu.writes_waiting(die, class) {
            return false;
        }
        let ppd = self.settings.geo.planes_per_die;
        let first = die.0 * ppd;
        if let Some(stuck) = self.ftl.stuck_user_planes(first, ppd) {
            self.retarget_stuck_writes(die, stuck);
        }
        let offsets = self.ftl.user_page_offsets(first, ppd);
        let mut batch = [TxId::NONE; MAX_BATCH];
        let Some((page, n)) = self.tsu.take_writes(die, class, &offsets, &mut batch) else {
            return false;
        };
        let batch = &batch[..n];
        for &t in batch {
            let tx = *self.tsu.get(t);
            if self.owners.is_some() && tx.kind != TxKind::MappingWrite {
                self.note_owner(&tx);
            }
            let ppn = self
                .ftl
                .program_page(tx.lpn, tx.plane, OpClass::of(tx.kind));
            self.tsu.get_mut(t).ppn = ppn;
            self.queue_ftl_ops();
        }
        let (now, n, sectors) = (self.q.now(), n as u32, || self.tsu.sectors_of(batch));
        let t = self.backend.start_program(now, die.0, page, n, sectors);
        self.begin(die, batch, t);
        true
    }

    pub(super) fn begin(&mut self, die: DieId, batch: &[TxId], array_end: u64) {
        self.bd.die_began(die, self.q.now(), &self.backend);
        self.dies.begin(die, batch);
        self.at(array_end, Ev::DieArrayDone(die));
        let (su, tsu) = (self.susp.as_ref(), &self.tsu);
        if su.is_some_and(|su| !su.begins_quietly(die, tsu.get(batch[0]).kind)) {
            self.began_for_suspension(die, self.tsu.get(batch[0]).kind, array_end);
        }
        self.tsu.began(die, batch, self.q.now());
    }

    /// With suspension: what the die began (a program or an erase may be suspended), and
    /// whether what is queued there suspends it now. Out of line: the plain path keeps only
    /// the test in `begin`.
    #[inline(never)]
    fn began_for_suspension(&mut self, die: DieId, kind: TxKind, array_end: u64) {
        let start = array_end - self.backend.last_array.min(array_end);
        let su = self.susp.as_mut().expect("checked");
        if su.began(die, kind, start, array_end) {
            self.suspend_die(die, self.tsu.queued_suspender(die));
        }
    }

    fn die_array_done(&mut self, die: DieId) {
        let (batch, n) = self.dies.batch(die);
        let kind = self.tsu.get(batch[0]).kind;
        if kind == TxKind::GcRead && self.ftl.reclaim_by_copyback() {
            return self.copyback_program(die, batch[0]);
        }
        if !kind.is_read() {
            return self.die_finish(die);
        }
        if self.backend.queues.is_some() && self.data_waits(die, kind) {
            return;
        }
        self.transfer_out(die, &batch[..n], self.q.now());
    }

    /// Always inline: out of line, the read path pays a call for what it did in place.
    #[inline(always)]
    pub(super) fn transfer_out(&mut self, die: DieId, batch: &[TxId], ready: u64) {
        let sectors = self.tsu.sectors_of(batch);
        let end = self
            .backend
            .transfer_out(self.q.now(), ready, die.0, sectors);
        self.bd.die_xfer(die, &self.backend);
        self.at(end, Ev::DieXferDone(die));
    }

    fn die_finish(&mut self, die: DieId) {
        let (batch, n) = self.dies.batch(die);
        self.dies.set_busy(die, false);
        if self.bd.is_some() {
            self.txs_done_recorded(die, &batch[..n]);
        } else {
            for &t in &batch[..n] {
                self.tx_done(t);
            }
        }
        self.die_freed(die);
    }

    /// `tx_done` of a die's batch with the latency breakdown: each user transaction is
    /// handled with its die operation's parts at hand (copied first: ending one transaction
    /// can start the die's next operation), since its request may end with it. Out of line,
    /// so that the plain path stays as it was.
    #[inline(never)]
    fn txs_done_recorded(&mut self, die: DieId, batch: &[TxId]) {
        let split = self.bd.as_ref().expect("recording").die_split(die);
        for &t in batch {
            let current = self.tsu.get(t).kind.is_user().then_some((t, split));
            self.bd.as_mut().expect("recording").handling(current);
            self.tx_done(t);
        }
        self.bd.as_mut().expect("recording").handling(None);
    }

    /// A die ended its operation: it chooses its next one; when a chip runs one die
    /// operation at a time, the chip goes to its dies in MQSim's order (`Tsu::chip_order`).
    #[inline]
    pub(super) fn die_freed(&mut self, die: DieId) {
        if !self.serial_chips {
            return self.schedule_die(die);
        }
        if let Some(pair) = self.tsu.pair_order(die, self.dies.dies_per_chip()) {
            return pair.into_iter().for_each(|d| self.offer_die(d));
        }
        for i in 0..self.tsu.chip_order(self.dies.chip_mates(die), die) {
            self.offer_die(self.tsu.chip_die(i));
        }
    }

    /// `schedule_die` for a die offered its chip or its channel: one with nothing queued
    /// starts nothing (where no suspension or background GC could), so it is passed over.
    pub(super) fn offer_die(&mut self, d: DieId) {
        if self.susp.is_some() || self.gc_background || !self.tsu.queues(d).is_empty() {
            self.schedule_die(d);
        }
    }

    fn tx_done(&mut self, t: TxId) {
        let tx = self.tsu.remove(t);
        match tx.kind {
            TxKind::UserRead | TxKind::UserWrite => {
                self.progress_at = self.q.processed();
                // Pipelined reads: this page's data leaves for the host now, behind what is
                // on the link; the request's last page goes with the completion. (`part_done`
                // written out: the test of pipelined transfers is made once here.)
                let page_bytes = if tx.kind == TxKind::UserRead && self.host.pipelined() {
                    self.settings.geo.sector_bytes_of(tx.sector_count() as u64)
                } else {
                    0
                };
                if self.firmware.part_done(tx.req) {
                    self.flash_done(tx.req, page_bytes);
                } else if page_bytes > 0 {
                    self.host.read_chunk(self.q.now(), page_bytes);
                }
            }
            TxKind::RmwRead => self.release_write(tx.link),
            TxKind::GcRead => {
                let w = self.tsu.gc_write_after(&tx);
                self.enqueue(w);
            }
            TxKind::GcWrite => {
                if let Some(o) = self.owners.as_mut() {
                    o.moved(tx.lpn);
                }
                self.ftl.reclaim_program_done(tx.plane);
                self.queue_ftl_ops();
            }
            TxKind::GcErase => {
                self.ftl.erase_done(tx.plane);
                self.queue_ftl_ops();
            }
            // Mapping traffic is not user progress: the watchdog must see work that only
            // feeds itself.
            TxKind::MappingRead => {
                // The transactions its waiters issue now waited for this translation page.
                self.bd.after_mapping(true);
                self.mapping_read_done(tx);
                self.bd.after_mapping(false);
            }
            TxKind::MappingWrite => self.ftl.mapping_write_done(tx.lpn),
            TxKind::CacheRead => self.cache_read_done(&tx),
            TxKind::CacheWrite => self.cache_write_done(&tx),
        }
    }
}
