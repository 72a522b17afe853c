//! The simulator: one owner of every component. Events are plain data naming a request, a
//! die or a transaction by index; handlers are methods here, so no component holds a
//! reference to another and the whole state is flat.

mod run;

pub use run::{CompletionRecord, RunOutput};

use crate::config::{Config, InterfaceType};
use crate::engine::{us_to_ps, EventQueue, Picoseconds};
use crate::flash::{Backend, Geometry, Timing};
use crate::ftl::mapping::Stream;
use crate::ftl::scheduling::{DieQueues, Slab, Tx, TxKind};
use crate::ftl::{Ftl, NONE};
use crate::host::link::Link;
use crate::host::nvme::FetchUnit;
use crate::stats::RwStats;
use crate::workload::flow::{Flow, Next};
use crate::workload::synthetic::HostRequest;
use crate::workload::Op;

#[derive(Debug, Clone, Copy)]
pub(crate) enum Ev {
    /// The host's announcement of request `0` reached the device.
    Doorbell(u32),
    /// The command of request `0` is inside the device.
    CommandArrived(u32),
    /// The write data (or TRIM range list) of request `0` is in the device buffer.
    WriteDataArrived(u32),
    /// The firmware finished processing request `0`; its transactions go to the dies.
    FirmwareDone(u32),
    /// The array phase (sense, program or erase) of die `0`'s batch ended.
    DieArrayDone(u32),
    /// The data of die `0`'s read batch is out of the page registers.
    DieXferDone(u32),
    /// The completion of request `0` is in the host's completion queue.
    Completed(u32),
    /// Open-loop flow `0` has a request due (or closed-loop flow `0` reached its start time).
    Arrival(u32),
}

#[derive(Debug, Clone, Copy)]
pub(crate) struct Req {
    pub flow: u32,
    pub op: Op,
    pub start_sector: u64,
    pub sectors: u32,
    pub submit_ps: Picoseconds,
    pub pending_tx: u32,
}

const MAX_BATCH: usize = 16;

#[derive(Clone, Copy)]
struct DieState {
    busy: bool,
    n: u8,
    batch: [u32; MAX_BATCH],
}

pub struct Simulator {
    pub(crate) q: EventQueue<Ev>,
    pub(crate) geo: Geometry,
    pub(crate) backend: Backend,
    pub ftl: Ftl,
    txs: Slab<Tx>,
    reqs: Slab<Req>,
    dies: Vec<DieState>,
    die_q: Vec<DieQueues>,
    link: Link,
    fetch: FetchUnit,
    sata: bool,
    fw_free: Picoseconds,
    fw_request_ps: Picoseconds,
    fw_tx_ps: Picoseconds,
    multiplane: bool,
    gc_preemptible: bool,
    gc_starvation_limit: u32,
    gc_copyback: bool,
    gc_background: bool,
    gc_background_pages: u64,
    pub(crate) flows: Vec<Flow>,
    /// First error of a flow's request source (a bad trace line); stops the run.
    pub(crate) failure: Option<crate::Error>,
    pub(crate) flow_stats: Vec<RwStats>,
    pub(crate) completed: Vec<u64>,
    pub(crate) last_completion: Picoseconds,
    pub(crate) unmapped_reads: u64,
    pub(crate) trims: u64,
    pub(crate) rmw_reads: u64,
    pub(crate) log: Option<Vec<CompletionRecord>>,
    /// Reused buffer of a victim's move transactions.
    gc_scratch: Vec<u32>,
    /// What preconditioning did (or which snapshot the state came from), for the result.
    pub(crate) precondition: serde_json::Value,
}

impl Simulator {
    /// A simulator whose device is preconditioned as configured.
    pub fn new(c: &Config) -> Result<Self, crate::Error> {
        // Open the traces first: a missing file should not cost a preconditioning.
        let flows = Self::make_flows(c)?;
        let mut ftl = Ftl::new(c);
        let rec = crate::ftl::precondition::run(&mut ftl, c)?;
        Ok(Self::with_ftl_flows(c, ftl, rec, flows))
    }

    fn make_flows(c: &Config) -> Result<Vec<Flow>, crate::Error> {
        let geo = Geometry::from_config(&c.flash);
        let capacity = crate::ftl::logical_pages(c) * geo.page_size as u64;
        let striping = crate::ftl::allocation::Striping::new(&c.ftl.allocation_order, &geo);
        // An open-loop flow holds at most this many requests submitted and not completed: its
        // NVMe submission queue, or for SATA the host's queue in front of the NCQ.
        let sq_entries = c.interface.io_queue_depth;
        c.flows
            .iter()
            .enumerate()
            .map(|(i, f)| {
                let pinned = !(f.channels.is_empty()
                    && f.chips.is_empty()
                    && f.dies.is_empty()
                    && f.planes.is_empty());
                let planes = pinned.then(|| {
                    let ok = |l: &Vec<u32>, x: u32| l.is_empty() || l.contains(&x);
                    (0..geo.planes())
                        .map(|k| striping.plane_of_index(&geo, k))
                        .filter(|&p| {
                            let die = geo.die_of_plane(p);
                            let chip = geo.chip_of_die(die);
                            ok(&f.channels, geo.channel_of_die(die))
                                && ok(&f.chips, chip % geo.chips_per_channel)
                                && ok(&f.dies, die % geo.dies_per_chip)
                                && ok(&f.planes, p % geo.planes_per_die)
                        })
                        .collect::<Vec<u32>>()
                        .into_boxed_slice()
                });
                Flow::new(f, i, capacity, c.run.seed, sq_entries, planes)
            })
            .collect()
    }

    /// A simulator over a given device state (preconditioned or loaded from a snapshot).
    pub fn with_ftl(
        c: &Config,
        ftl: Ftl,
        precondition: serde_json::Value,
    ) -> Result<Self, crate::Error> {
        let flows = Self::make_flows(c)?;
        Ok(Self::with_ftl_flows(c, ftl, precondition, flows))
    }

    fn with_ftl_flows(
        c: &Config,
        ftl: Ftl,
        precondition: serde_json::Value,
        flows: Vec<Flow>,
    ) -> Self {
        let geo = Geometry::from_config(&c.flash);
        let sata = c.interface.kind == InterfaceType::Sata;
        let (queues, limit) = if sata {
            (1, c.interface.ncq_depth)
        } else {
            (flows.len(), c.interface.queue_fetch_size)
        };
        let n = flows.len();
        Self {
            q: EventQueue::new(),
            geo,
            backend: Backend::new(geo, Timing::from_config(&c.flash)),
            ftl,
            txs: Slab::new(),
            reqs: Slab::new(),
            dies: vec![
                DieState {
                    busy: false,
                    n: 0,
                    batch: [0; MAX_BATCH]
                };
                geo.dies() as usize
            ],
            die_q: (0..geo.dies()).map(|_| DieQueues::default()).collect(),
            link: Link::new(c),
            fetch: FetchUnit::new(queues, limit, &c.interface, &c.flows),
            sata,
            fw_free: 0,
            fw_request_ps: us_to_ps(c.ftl.firmware_request_us),
            fw_tx_ps: us_to_ps(c.ftl.firmware_transaction_us),
            multiplane: c.flash.multiplane && geo.planes_per_die > 1,
            gc_preemptible: c.ftl.gc_preemptible,
            gc_starvation_limit: c.ftl.gc_starvation_limit,
            gc_copyback: c.ftl.gc_copyback,
            gc_background: c.ftl.gc_background,
            gc_background_pages: (c.ftl.gc_background_threshold
                * geo.blocks_per_plane as f64
                * geo.pages_per_block as f64)
                .ceil() as u64,
            flows,
            failure: None,
            flow_stats: vec![RwStats::default(); n],
            completed: vec![0; n],
            last_completion: 0,
            unmapped_reads: 0,
            trims: 0,
            rmw_reads: 0,
            log: None,
            gc_scratch: Vec::new(),
            precondition,
        }
    }

    #[inline]
    fn queue_of(&self, flow: u32) -> usize {
        if self.sata {
            0
        } else {
            flow as usize
        }
    }

    /// Submits what flow `f` may submit now; if its next request lies in the future, makes
    /// sure an Arrival event will come back for it.
    pub(crate) fn pump(&mut self, f: u32) {
        let now = self.q.now();
        loop {
            let flow = &mut self.flows[f as usize];
            if flow.outstanding >= flow.cap {
                return;
            }
            match flow.next(now) {
                Ok(Next::Due(at, req)) => {
                    flow.outstanding += 1;
                    self.submit(f, at, req);
                }
                Ok(Next::Later(t)) => {
                    if !flow.arrival_scheduled {
                        flow.arrival_scheduled = true;
                        self.q.schedule(t, Ev::Arrival(f));
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
    /// `arrived` (earlier than now when an open-loop flow's queue was full).
    fn submit(&mut self, flow: u32, arrived: Picoseconds, r: HostRequest) {
        let now = self.q.now();
        let id = self.reqs.insert(Req {
            flow,
            op: r.op,
            start_sector: r.start_sector,
            sectors: r.sectors,
            submit_ps: arrived,
            pending_tx: 0,
        });
        let t = self.link.doorbell(now);
        self.q.schedule(t, Ev::Doorbell(id));
    }

    pub(crate) fn handle(&mut self, ev: Ev) {
        match ev {
            Ev::Doorbell(r) => {
                let queue = self.queue_of(self.reqs.get(r).flow);
                self.fetch.announce(queue, r);
                self.try_fetch();
            }
            Ev::CommandArrived(r) => {
                let req = *self.reqs.get(r);
                let bytes = match req.op {
                    Op::Read => {
                        self.firmware(r);
                        return;
                    }
                    Op::Write => req.sectors as u64 * 512,
                    // One 16-byte Dataset Management range.
                    Op::Trim => 16,
                };
                let t = self.link.fetch_write_data(self.q.now(), bytes);
                self.q.schedule(t, Ev::WriteDataArrived(r));
            }
            Ev::WriteDataArrived(r) => self.firmware(r),
            Ev::FirmwareDone(r) => self.dispatch_request(r),
            Ev::DieArrayDone(d) => self.die_array_done(d),
            Ev::DieXferDone(d) => self.die_finish(d),
            Ev::Completed(r) => self.complete_request(r),
            Ev::Arrival(f) => {
                self.flows[f as usize].arrival_scheduled = false;
                self.pump(f);
            }
        }
    }

    fn try_fetch(&mut self) {
        while let Some((_, r)) = self.fetch.next_fetch() {
            let t = self.link.fetch_command(self.q.now());
            self.q.schedule(t, Ev::CommandArrived(r));
        }
    }

    /// Page span of a request: (first logical page, number of pages).
    #[inline]
    fn span(&self, req: &Req) -> (u64, u64) {
        let spp = self.geo.sectors_per_page as u64;
        let first = req.start_sector / spp;
        let last = (req.start_sector + req.sectors as u64 - 1) / spp;
        (first, last - first + 1)
    }

    /// The controller CPU is one FIFO resource: a request costs a fixed time plus a time per
    /// page transaction.
    fn firmware(&mut self, r: u32) {
        let req = *self.reqs.get(r);
        let (_, pages) = self.span(&req);
        let start = self.q.now().max(self.fw_free);
        self.fw_free = start + self.fw_request_ps + pages * self.fw_tx_ps;
        self.q.schedule(self.fw_free, Ev::FirmwareDone(r));
    }

    /// Splits a request into page transactions with their sector counts and queues them.
    fn dispatch_request(&mut self, r: u32) {
        let req = *self.reqs.get(r);
        let spp = self.geo.sectors_per_page as u64;
        let (first, pages) = self.span(&req);
        let end = req.start_sector + req.sectors as u64;
        let mut pending = 0;
        if req.op == Op::Trim {
            for i in 0..pages {
                let lpa = first + i;
                if lpa * spp >= req.start_sector && (lpa + 1) * spp <= end {
                    self.ftl.trim(lpa as u32);
                }
            }
            self.trims += 1;
            self.flash_done(r);
            return;
        }
        let is_read = req.op == Op::Read;
        for i in 0..pages {
            let lpa = (first + i) as u32;
            let lo = req.start_sector.max((first + i) * spp);
            let hi = end.min((first + i + 1) * spp);
            let sectors = (hi - lo) as u32;
            let mapped = self.ftl.l2p[lpa as usize];
            if is_read {
                if mapped == NONE {
                    // Never written: real drives answer from the mapping table alone.
                    self.unmapped_reads += 1;
                    continue;
                }
                let plane = self.geo.plane_of_ppa(mapped);
                let t = self.txs.insert(Tx {
                    kind: TxKind::UserRead,
                    req: r,
                    lpa,
                    ppa: mapped,
                    plane,
                    sectors,
                    link: NONE,
                });
                self.enqueue(t);
            } else {
                let flow = &mut self.flows[req.flow as usize];
                let plane = match &flow.planes {
                    None => self.ftl.target_plane(lpa),
                    Some(set) => self.ftl.target_plane_in(lpa, set, &mut flow.plane_cursor),
                };
                let w = self.txs.insert(Tx {
                    kind: TxKind::UserWrite,
                    req: r,
                    lpa,
                    ppa: NONE,
                    plane,
                    sectors,
                    link: NONE,
                });
                if (sectors as u64) < spp && mapped != NONE {
                    // Partial page: read the unchanged sectors first, then program the page.
                    self.rmw_reads += 1;
                    let old_plane = self.geo.plane_of_ppa(mapped);
                    let rr = self.txs.insert(Tx {
                        kind: TxKind::RmwRead,
                        req: r,
                        lpa,
                        ppa: mapped,
                        plane: old_plane,
                        sectors: spp as u32 - sectors,
                        link: w,
                    });
                    self.enqueue(rr);
                } else {
                    self.enqueue(w);
                }
            }
            pending += 1;
        }
        self.reqs.get_mut(r).pending_tx = pending;
        if pending == 0 {
            self.flash_done(r);
        }
    }

    fn enqueue(&mut self, t: u32) {
        let tx = *self.txs.get(t);
        let die = self.geo.die_of_plane(tx.plane);
        let dq = &mut self.die_q[die as usize];
        match tx.kind {
            TxKind::UserRead | TxKind::RmwRead => dq.reads.push_back(t),
            TxKind::UserWrite => dq.writes.push_back(t),
            TxKind::GcRead => dq.gc_reads.push_back(t),
            TxKind::GcWrite => dq.gc_writes.push_back(t),
            TxKind::GcErase => dq.gc_erases.push_back(t),
        }
        self.schedule_die(die);
    }

    /// All flash work of request `r` is done: send data (reads) and the completion.
    fn flash_done(&mut self, r: u32) {
        let req = *self.reqs.get(r);
        let bytes = if req.op == Op::Read {
            req.sectors as u64 * 512
        } else {
            0
        };
        let t = self.link.complete(self.q.now(), bytes);
        self.q.schedule(t, Ev::Completed(r));
    }

    fn complete_request(&mut self, r: u32) {
        let now = self.q.now();
        let req = *self.reqs.get(r);
        let lat = now - req.submit_ps;
        let s = &mut self.flow_stats[req.flow as usize];
        let bytes = req.sectors as u64 * 512;
        match req.op {
            Op::Read => s.read.record(lat, bytes),
            Op::Write => s.write.record(lat, bytes),
            Op::Trim => s.trim.record(lat, bytes),
        }
        if let Some(log) = self.log.as_mut() {
            log.push(CompletionRecord {
                flow: req.flow,
                op: req.op,
                start_sector: req.start_sector,
                sectors: req.sectors,
                submit_ps: req.submit_ps,
                complete_ps: now,
            });
        }
        self.completed[req.flow as usize] += 1;
        self.last_completion = now;
        self.reqs.remove(r);
        self.fetch.release(self.queue_of(req.flow));
        self.try_fetch();
        self.flows[req.flow as usize].outstanding -= 1;
        self.pump(req.flow);
    }

    // ----- transaction scheduling and flash execution -----

    /// Whether a plane of `die` is down to its GC reserve, so GC must go first.
    fn die_urgent(&self, die: u32) -> bool {
        let ppd = self.geo.planes_per_die;
        (die * ppd..(die + 1) * ppd).any(|p| {
            self.ftl.planes[p as usize].free_blocks.len() <= self.ftl.reserve_blocks as usize
        })
    }

    fn schedule_die(&mut self, die: u32) {
        if self.dies[die as usize].busy {
            return;
        }
        if self.die_q[die as usize].is_empty() {
            if self.gc_background {
                self.background_gc(die);
            }
            return;
        }
        let dq = &self.die_q[die as usize];
        let gc_waiting = !dq.gc_empty();
        let gc_first = gc_waiting
            && (!self.gc_preemptible
                || dq.user_streak >= self.gc_starvation_limit
                || self.die_urgent(die));
        // Busy before choosing: allocating a page can start GC, whose enqueue must not
        // re-enter this die's scheduler.
        self.dies[die as usize].busy = true;
        let (started, by_gc) = if gc_first {
            if self.start_gc_op(die) {
                (true, true)
            } else {
                (self.start_reads(die) || self.start_writes(die), false)
            }
        } else if self.start_reads(die) || self.start_writes(die) {
            (true, false)
        } else {
            (self.start_gc_op(die), true)
        };
        let dq = &mut self.die_q[die as usize];
        if !started {
            self.dies[die as usize].busy = false;
        } else if by_gc {
            dq.user_streak = 0;
        } else if gc_waiting {
            dq.user_streak += 1;
        }
    }

    /// Idle-time GC: the die has nothing queued, so planes below the background threshold
    /// collect now rather than under load later.
    fn background_gc(&mut self, die: u32) {
        let ppd = self.geo.planes_per_die;
        for plane in die * ppd..(die + 1) * ppd {
            if self.ftl.planes[plane as usize].gc_victim == NONE
                && self.ftl.free_pages(plane) < self.gc_background_pages
                && self.start_gc(plane, true)
            {
                self.ftl.stats.gc_background_runs += 1;
            }
        }
    }

    fn start_reads(&mut self, die: u32) -> bool {
        let Some(t0) = self.die_q[die as usize].reads.pop_front() else {
            return false;
        };
        let page = self.geo.page_in_block(self.txs.get(t0).ppa);
        let mut batch = [0u32; MAX_BATCH];
        batch[0] = t0;
        let mut n = 1;
        if self.multiplane {
            let mut used: u32 = 1 << (self.txs.get(t0).plane % self.geo.planes_per_die);
            let mut i = 0;
            let dq = &mut self.die_q[die as usize].reads;
            while i < dq.len().min(4 * self.geo.planes_per_die as usize)
                && n < self.geo.planes_per_die as usize
            {
                let tx = self.txs.get(dq[i]);
                let bit = 1 << (tx.plane % self.geo.planes_per_die);
                if used & bit == 0 && self.geo.page_in_block(tx.ppa) == page {
                    used |= bit;
                    batch[n] = dq.remove(i).expect("index in range");
                    n += 1;
                } else {
                    i += 1;
                }
            }
        }
        let t = self.backend.start_read(self.q.now(), die, page, n as u32);
        self.begin(die, &batch[..n], t);
        true
    }

    /// Dynamic placement can queue more writes for a plane than it can take: if a queued
    /// write's plane is at its reserve with no GC under way (every closed block fully valid,
    /// so GC cannot help), the write moves to a plane that has room. Static placement never
    /// needs this: each plane's logical share fits by validation.
    fn retarget_stuck_writes(&mut self, die: u32) {
        let mut i = 0;
        while i < self.die_q[die as usize].writes.len() {
            let t = self.die_q[die as usize].writes[i];
            let tx = *self.txs.get(t);
            let stuck = self.ftl.next_page_offset(tx.plane, Stream::User).is_none()
                && self.ftl.planes[tx.plane as usize].gc_victim == NONE;
            if stuck {
                let p = self.ftl.target_plane(tx.lpa);
                if p != tx.plane && self.ftl.next_page_offset(p, Stream::User).is_some() {
                    self.die_q[die as usize].writes.remove(i);
                    self.txs.get_mut(t).plane = p;
                    self.enqueue(t);
                    continue;
                }
            }
            i += 1;
        }
    }

    fn start_writes(&mut self, die: u32) -> bool {
        if self.ftl.placement == crate::config::Placement::Dynamic {
            self.retarget_stuck_writes(die);
        }
        let ppd = self.geo.planes_per_die;
        let dq = &self.die_q[die as usize].writes;
        // First write whose plane can take a page now (planes at their GC reserve wait).
        let Some(i0) = (0..dq.len()).find(|&i| {
            self.ftl
                .next_page_offset(self.txs.get(dq[i]).plane, Stream::User)
                .is_some()
        }) else {
            return false;
        };
        let t0 = self.die_q[die as usize]
            .writes
            .remove(i0)
            .expect("index in range");
        let p0 = self.txs.get(t0).plane;
        let offset = self
            .ftl
            .next_page_offset(p0, Stream::User)
            .expect("checked above");
        let mut batch = [0u32; MAX_BATCH];
        batch[0] = t0;
        let mut n = 1;
        if self.multiplane {
            let mut used: u32 = 1 << (p0 % ppd);
            let mut i = 0;
            while i < self.die_q[die as usize].writes.len().min(4 * ppd as usize)
                && n < ppd as usize
            {
                let t = self.die_q[die as usize].writes[i];
                let p = self.txs.get(t).plane;
                let bit = 1 << (p % ppd);
                if used & bit == 0 && self.ftl.next_page_offset(p, Stream::User) == Some(offset) {
                    used |= bit;
                    batch[n] = self.die_q[die as usize]
                        .writes
                        .remove(i)
                        .expect("index in range");
                    n += 1;
                } else {
                    i += 1;
                }
            }
        }
        for &t in &batch[..n] {
            let tx = *self.txs.get(t);
            let ppa = self.ftl.allocate(tx.plane, Stream::User);
            self.ftl.map(tx.lpa, ppa);
            self.ftl.stats.user_page_writes += 1;
            self.txs.get_mut(t).ppa = ppa;
            self.after_allocation(tx.plane);
        }
        let t = self
            .backend
            .start_program(self.q.now(), die, offset, n as u32);
        self.begin(die, &batch[..n], t);
        true
    }

    /// Runs the first GC transaction of the die that still has work to do; stale ones (their
    /// page was overwritten meanwhile) are retired on the way.
    fn start_gc_op(&mut self, die: u32) -> bool {
        loop {
            // Writes first: they release the data their reads brought out; erases last,
            // they only queue once every move of the victim is done.
            let dq = &mut self.die_q[die as usize];
            let Some(t) = dq
                .gc_writes
                .pop_front()
                .or_else(|| dq.gc_reads.pop_front())
                .or_else(|| dq.gc_erases.pop_front())
            else {
                return false;
            };
            let tx = *self.txs.get(t);
            let now = self.q.now();
            match tx.kind {
                TxKind::GcRead => {
                    if self.ftl.p2l[tx.ppa as usize] != tx.lpa {
                        self.txs.remove(t);
                        self.gc_move_done(tx.plane);
                        continue;
                    }
                    let page = self.geo.page_in_block(tx.ppa);
                    let end = self.backend.start_read(now, die, page, 1);
                    self.begin(die, &[t], end);
                    return true;
                }
                TxKind::GcWrite => {
                    if self.ftl.l2p[tx.lpa as usize] != tx.ppa {
                        self.txs.remove(t);
                        self.gc_move_done(tx.plane);
                        continue;
                    }
                    let ppa = self.ftl.allocate(tx.plane, Stream::Gc);
                    self.ftl.map(tx.lpa, ppa);
                    let page = self.geo.page_in_block(ppa);
                    self.after_allocation(tx.plane);
                    let end = self.backend.start_program(now, die, page, 1);
                    self.begin(die, &[t], end);
                    return true;
                }
                TxKind::GcErase => {
                    let end = self.backend.start_erase(now, die, 1);
                    self.begin(die, &[t], end);
                    return true;
                }
                _ => unreachable!("user transaction in a GC queue"),
            }
        }
    }

    fn begin(&mut self, die: u32, batch: &[u32], array_end: Picoseconds) {
        let d = &mut self.dies[die as usize];
        d.busy = true;
        d.n = batch.len() as u8;
        d.batch[..batch.len()].copy_from_slice(batch);
        self.q.schedule(array_end, Ev::DieArrayDone(die));
    }

    fn die_array_done(&mut self, die: u32) {
        let d = self.dies[die as usize];
        let first = *self.txs.get(d.batch[0]);
        match first.kind {
            TxKind::GcRead if self.gc_copyback => self.copyback_program(die, d.batch[0]),
            TxKind::UserRead | TxKind::RmwRead | TxKind::GcRead => {
                let sectors: u32 = d.batch[..d.n as usize]
                    .iter()
                    .map(|&t| self.txs.get(t).sectors)
                    .sum();
                let end = self.backend.transfer_out(self.q.now(), die, sectors);
                self.q.schedule(end, Ev::DieXferDone(die));
            }
            _ => self.die_finish(die),
        }
    }

    /// Second half of a copyback move: the page sits in the die's register, so the program
    /// follows at once on the same die (nothing may run between, it would overwrite the
    /// register), into the GC frontier of the same plane.
    fn copyback_program(&mut self, die: u32, t: u32) {
        let tx = *self.txs.get(t);
        if self.ftl.p2l[tx.ppa as usize] != tx.lpa {
            // Overwritten or trimmed during the sense: nothing to move.
            self.txs.remove(t);
            self.dies[die as usize].busy = false;
            self.gc_move_done(tx.plane);
            self.schedule_die(die);
            return;
        }
        let ppa = self.ftl.allocate(tx.plane, Stream::Gc);
        self.ftl.map(tx.lpa, ppa);
        self.after_allocation(tx.plane);
        let w = self.txs.get_mut(t);
        w.kind = TxKind::GcWrite;
        w.ppa = ppa;
        self.ftl.stats.gc_copyback_moves += 1;
        let end =
            self.backend
                .start_copyback_program(self.q.now(), die, self.geo.page_in_block(ppa));
        self.begin(die, &[t], end);
    }

    fn die_finish(&mut self, die: u32) {
        let d = self.dies[die as usize];
        self.dies[die as usize].busy = false;
        for &t in &d.batch[..d.n as usize] {
            self.tx_done(t);
        }
        self.schedule_die(die);
    }

    fn tx_done(&mut self, t: u32) {
        let tx = *self.txs.get(t);
        self.txs.remove(t);
        match tx.kind {
            TxKind::UserRead | TxKind::UserWrite => {
                let req = self.reqs.get_mut(tx.req);
                req.pending_tx -= 1;
                if req.pending_tx == 0 {
                    self.flash_done(tx.req);
                }
            }
            TxKind::RmwRead => self.enqueue(tx.link),
            TxKind::GcRead => {
                let w = self.txs.insert(Tx {
                    kind: TxKind::GcWrite,
                    ..tx
                });
                self.enqueue(w);
            }
            TxKind::GcWrite => {
                self.ftl.stats.gc_page_moves += 1;
                self.gc_move_done(tx.plane);
            }
            TxKind::GcErase => {
                self.ftl.erase(tx.ppa);
                self.ftl.stats.gc_runs += 1;
                let ps = &mut self.ftl.planes[tx.plane as usize];
                ps.gc_victim = NONE;
                ps.runs_since_wl += 1;
                self.maybe_start_gc(tx.plane);
                // Writes that waited for space on other dies' planes never wait here: a
                // plane belongs to one die, whose scheduler runs right after this.
            }
        }
    }

    // ----- garbage collection -----

    fn after_allocation(&mut self, plane: u32) {
        if self.ftl.planes[plane as usize].gc_victim == NONE
            && self.ftl.free_pages(plane) < self.ftl.gc_start_free_pages
        {
            self.maybe_start_gc(plane);
        }
    }

    /// Starts collecting in `plane` if it is below its GC threshold or static wear
    /// levelling is due.
    fn maybe_start_gc(&mut self, plane: u32) {
        if self.ftl.planes[plane as usize].gc_victim != NONE {
            return;
        }
        let needed = self.ftl.free_pages(plane) < self.ftl.gc_start_free_pages;
        self.start_gc(plane, needed);
    }

    /// Picks a victim (a static wear-levelling one if due, else by the GC policy when
    /// `by_policy`) and queues its moves. Returns whether GC started.
    fn start_gc(&mut self, plane: u32, by_policy: bool) -> bool {
        let victim = match crate::ftl::gc::pick_wl_victim(&mut self.ftl, plane) {
            Some(v) => v,
            None if by_policy => match crate::ftl::gc::pick_victim(&mut self.ftl, plane) {
                Some(v) => v,
                None => return false,
            },
            None => return false,
        };
        self.ftl.block_state[victim as usize] = crate::ftl::mapping::BlockState::Victim;
        let ppb = self.geo.pages_per_block;
        // Record the victim and its move count before queueing any move: queueing can run
        // the die's scheduler, whose user writes allocate and would otherwise see no victim
        // in progress and start a second one over this one.
        let mut moves = std::mem::take(&mut self.gc_scratch);
        moves.clear();
        for ppa in victim * ppb..(victim + 1) * ppb {
            let lpa = self.ftl.p2l[ppa as usize];
            if lpa != NONE {
                moves.push(self.txs.insert(Tx {
                    kind: TxKind::GcRead,
                    req: NONE,
                    lpa,
                    ppa,
                    plane,
                    sectors: self.geo.sectors_per_page,
                    link: NONE,
                }));
            }
        }
        let ps = &mut self.ftl.planes[plane as usize];
        ps.gc_victim = victim;
        ps.gc_pending = moves.len() as u32;
        if moves.is_empty() {
            self.queue_erase(plane);
        }
        for &t in &moves {
            self.enqueue(t);
        }
        self.gc_scratch = moves;
        true
    }

    fn gc_move_done(&mut self, plane: u32) {
        let ps = &mut self.ftl.planes[plane as usize];
        ps.gc_pending -= 1;
        if ps.gc_pending == 0 {
            self.queue_erase(plane);
        }
    }

    fn queue_erase(&mut self, plane: u32) {
        let victim = self.ftl.planes[plane as usize].gc_victim;
        let t = self.txs.insert(Tx {
            kind: TxKind::GcErase,
            req: NONE,
            lpa: NONE,
            ppa: victim,
            plane,
            sectors: 0,
            link: NONE,
        });
        self.enqueue(t);
    }

    /// The state of the first dies with queued work, for a stall message (a model bug).
    pub(crate) fn stall_report(&self) -> String {
        let mut parts = Vec::new();
        for (d, dq) in self.die_q.iter().enumerate() {
            if dq.is_empty() {
                continue;
            }
            let ppd = self.geo.planes_per_die;
            let planes: Vec<String> = (d as u32 * ppd..(d as u32 + 1) * ppd)
                .map(|p| {
                    let ps = &self.ftl.planes[p as usize];
                    let bpp = self.geo.blocks_per_plane;
                    let collectable = (p * bpp..(p + 1) * bpp)
                        .filter(|&b| {
                            self.ftl.block_state[b as usize]
                                == crate::ftl::mapping::BlockState::Closed
                                && self.ftl.valid[b as usize] < self.geo.pages_per_block
                        })
                        .count();
                    let mut states = [0u32; 4];
                    let mut valid = 0u64;
                    for b in p * bpp..(p + 1) * bpp {
                        valid += self.ftl.valid[b as usize] as u64;
                        states[match self.ftl.block_state[b as usize] {
                            crate::ftl::mapping::BlockState::Free => 0,
                            crate::ftl::mapping::BlockState::Open => 1,
                            crate::ftl::mapping::BlockState::Closed => 2,
                            crate::ftl::mapping::BlockState::Victim => 3,
                        }] += 1;
                    }
                    let collectable = format!("{collectable} (states free/open/closed/victim {states:?}, {valid} valid pages)");
                    format!(
                        "plane {p}: {} free blocks, {} free pages, GC start below {}, victim {}, pending {}, {collectable} closed blocks with invalid pages",
                        ps.free_blocks.len(),
                        self.ftl.free_pages(p),
                        self.ftl.gc_start_free_pages,
                        ps.gc_victim as i64,
                        ps.gc_pending
                    )
                })
                .collect();
            parts.push(format!(
                "die {d} busy {}: reads {} writes {} gc reads {} gc writes {} gc erases {} [{}]",
                self.dies[d].busy,
                dq.reads.len(),
                dq.writes.len(),
                dq.gc_reads.len(),
                dq.gc_writes.len(),
                dq.gc_erases.len(),
                planes.join("; ")
            ));
            if parts.len() == 3 {
                break;
            }
        }
        parts.join(" | ")
    }

    /// Requests inside the simulator (submitted, not completed).
    pub fn outstanding(&self) -> usize {
        self.reqs.live()
    }
}
