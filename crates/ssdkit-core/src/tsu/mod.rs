//! Transaction scheduling unit (the MQSim paper, FAST'18, section 2.3): page transactions,
//! the per-die queues they wait in (user reads, user writes, GC reads, GC writes, GC erases),
//! and the scheduling policy that picks what a free die does next, including multi-plane
//! batches; mapping reads of the cached mapping table have their own queue and go before
//! user reads (a user transaction waits for each), mapping writes queue with user writes.
//! Program/erase suspension is in `suspension`; the policies, one file each, in `policy`.

pub mod plan;
pub mod policy;
pub mod queues;
mod stall;
pub mod suspension;

pub use plan::{Attempt, Attempts, Batch, DieSteps};
pub use policy::ClassTurns;
pub use policy::{Choice, SchedulingPolicy};
pub use queues::DieQueues;

use crate::config::TsuPolicy;
use crate::engine::Slab;
use crate::flash::Geometry;
use crate::ids::{BlockId, DieId, FlowId, Lpn, PlaneId, Ppn, ReqId, TxId};
use crate::settings::Settings;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TxKind {
    UserRead,
    UserWrite,
    /// Reads the unchanged sectors of a page before a partial-page write.
    RmwRead,
    GcRead,
    GcWrite,
    GcErase,
    /// Reads a translation page of the cached mapping table: a lookup that missed (the user
    /// transactions waiting for it are issued when it completes), or the unchanged entries
    /// before a write-back (`link`: the write to release).
    MappingRead,
    /// Writes a translation page back, out of place (dirty entries left the cache, or GC
    /// moved pages whose entries were not cached).
    MappingWrite,
    /// A read from flash for the data cache's path (a read miss, or the missing sectors of a
    /// partial hit); queued and scheduled as a user read.
    CacheRead,
    /// A write-back of a cached page (eviction, flush or FUA) through the FTL; queued and
    /// scheduled as a user write.
    CacheWrite,
}

impl TxKind {
    /// A request's page: a write or a read.
    #[inline]
    pub fn user(write: bool) -> Self {
        if write {
            TxKind::UserWrite
        } else {
            TxKind::UserRead
        }
    }
    pub fn is_gc(self) -> bool {
        matches!(self, TxKind::GcRead | TxKind::GcWrite | TxKind::GcErase)
    }

    /// The class in which a read's data waits for its channel under data-first arbitration
    /// (`flash::ChannelQueues`, translation pages' first, as MQSim's).
    #[inline]
    pub fn data_class(self) -> crate::flash::DataClass {
        match self {
            TxKind::MappingRead => crate::flash::DataClass::Mapping,
            TxKind::GcRead => crate::flash::DataClass::Gc,
            _ => crate::flash::DataClass::User,
        }
    }

    /// A read: its data leaves the die's registers after the sense.
    #[inline]
    pub fn is_read(self) -> bool {
        matches!(
            self,
            TxKind::UserRead
                | TxKind::RmwRead
                | TxKind::GcRead
                | TxKind::MappingRead
                | TxKind::CacheRead
        )
    }

    /// Works for a host request (the latency breakdown follows it through its die).
    #[inline]
    pub fn is_user(self) -> bool {
        matches!(
            self,
            TxKind::UserRead | TxKind::UserWrite | TxKind::CacheRead
        )
    }
}

/// One flash transaction. Plain data in a slab; queues hold ids.
#[derive(Debug, Clone, Copy)]
pub struct Tx {
    pub kind: TxKind,
    /// Owning request (user transactions) or NONE.
    pub req: ReqId,
    pub lpn: Lpn,
    /// Source page for reads and GC writes; the page written, once allocated, for writes.
    pub ppn: Ppn,
    /// The block of an erase.
    pub block: BlockId,
    pub plane: PlaneId,
    /// Sectors of the page the transaction moves over the channel, one bit each (a page has
    /// at most 64 sectors of 512 bytes).
    pub sectors: u64,
    /// RmwRead, MappingRead before a write-back: the write transaction to release when it
    /// completes.
    pub link: TxId,
    /// UserWrite: what it still waits for before it may join its die's queue: its page of
    /// host data (pipelined transfers) and the read of its unchanged sectors (partial page).
    pub waits: u8,
    /// CacheRead: the cache entry to fill (u32::MAX: none); CacheWrite: its write-back record.
    pub slot: u32,
}

impl Tx {
    /// A transaction with no request, page or block yet.
    pub fn new(kind: TxKind, plane: PlaneId) -> Self {
        Tx {
            kind,
            req: ReqId::NONE,
            lpn: Lpn::NONE,
            ppn: Ppn::NONE,
            block: BlockId::NONE,
            plane,
            sectors: 0,
            link: TxId::NONE,
            waits: 0,
            slot: u32::MAX,
        }
    }
    #[inline]
    pub fn sector_count(&self) -> u32 {
        self.sectors.count_ones()
    }
}

/// The transactions in flight and the queues of every die.
pub struct Tsu {
    txs: Slab<Tx>,
    queues: Vec<DieQueues>,
    /// Where GC goes among user work (`ftl.gc_preemptible`).
    policy: SchedulingPolicy,
    /// The policy the scheduler runs: `tsu.policy`, or out of order for priority classes of
    /// one class (`set_one_queue`).
    user: TsuPolicy,
    /// `tsu.policy`, with its parameters.
    configured: TsuPolicy,
    /// The policy queues user transactions per NVMe priority class.
    classes: bool,
    geo: Geometry,
    /// `planes_per_die` as a divisor.
    ppd: crate::engine::Div,
    /// Multi-plane reads, programs and erases (`flash.multiplane` with several planes).
    multiplane: bool,
    /// With classes: operations per turn for high, medium, low (the policy's weights).
    weights: [u32; 3],
    /// With classes: each die's weighted round robin over them, for reads and for writes
    /// (kept apart from the queues, which the common case reads on every dispatch).
    turns: Vec<[ClassTurns; 2]>,
    /// `tsu.policy = { type = "flin" }`: FLIN's state.
    flin: Option<Box<policy::flin::Flin>>,
    /// Each flow's NVMe priority class (0 urgent .. 3 low), for a policy with classes.
    flow_class: Vec<u8>,
    /// User reads may start without the queue (`starts_alone`).
    direct_reads: bool,
    /// The next arrival sequence number, one order for every die (`DieQueues::push`).
    seq: u64,
    /// `tsu.write_offsets = "at_queue"`: the page offset each queued user write was given
    /// when it joined its die's queue, by transaction id (`take_writes` pairs equal ones).
    write_tags: Option<Vec<u32>>,
    /// `flash.die_interleaving = false`: the order `chip_order` last gave, kept between calls.
    chip_buf: Vec<((u8, u64), u32, DieId)>,
}

impl Tsu {
    /// The scheduling unit of device `s` running `user` for flows of priority classes
    /// `flow_class` (one per flow), GC placed by `policy`; `mapping_writes`: translation-page
    /// write-backs, which belong to no flow, may be queued with user work (a cached map).
    pub fn new(
        s: &Settings,
        multiplane: bool,
        policy: SchedulingPolicy,
        user: TsuPolicy,
        flow_class: Vec<u8>,
        mapping_writes: bool,
    ) -> Self {
        // Priority classes with one class in the user queues (every flow's, and high for
        // write-backs if there are any) schedule as out of order on one queue: `pick` only
        // ever finds that class waiting, and its turns decide nothing.
        let one_class = matches!(user, TsuPolicy::PriorityOutOfOrder(_))
            && flow_class.windows(2).all(|w| w[0] == w[1])
            && (!mapping_writes || flow_class.first().is_none_or(|&c| c == 1));
        let mut tsu = Self::with_policy(s, multiplane, policy, user, flow_class);
        if one_class {
            tsu.set_one_queue(true);
        }
        tsu
    }

    /// Priority classes of one class (see `new`) run on one queue without turns (`on`), as
    /// out of order, or on the classes' own queues: the same results (a test runs both),
    /// but the queues and turns per class cost 5 % of the loop of MQSim's files, whose flows
    /// are all of one class (docs/performance.md). Only before the run, with nothing queued.
    pub fn set_one_queue(&mut self, on: bool) {
        debug_assert_eq!(self.txs.live(), 0, "switched with transactions queued");
        let (user, classes) = match on {
            true => (TsuPolicy::OutOfOrder {}, false),
            false => (self.configured, self.configured.class_weights().is_some()),
        };
        let n = if classes { 4 } else { 1 };
        self.user = user;
        self.classes = classes;
        self.queues = (0..self.geo.dies())
            .map(|_| DieQueues::new(self.geo.planes_per_die, n))
            .collect();
        self.turns = match classes {
            true => vec![Default::default(); self.geo.dies() as usize],
            false => Vec::new(),
        };
    }

    /// Whether the user queues are one queue (`set_one_queue`).
    pub fn one_queue(&self) -> bool {
        !self.classes && self.configured.class_weights().is_some()
    }

    fn with_policy(
        s: &Settings,
        multiplane: bool,
        policy: SchedulingPolicy,
        user: TsuPolicy,
        flow_class: Vec<u8>,
    ) -> Self {
        let flows = flow_class.len();
        // Reads may start without the queue (`starts_alone`). Priority classes change nothing
        // when every flow is of one class: no turn between classes is ever taken. A suspended
        // operation is checked per read (the simulator's `enqueue_read`).
        let direct_reads = match &user {
            TsuPolicy::OutOfOrder {} => true,
            TsuPolicy::PriorityOutOfOrder(_) => flow_class.windows(2).all(|w| w[0] == w[1]),
            _ => false,
        };
        let geo = s.geo;
        let dies = geo.dies();
        let weights = user.class_weights();
        let classes = weights.is_some();
        let n = if classes { 4 } else { 1 };
        Self {
            txs: Slab::new(),
            queues: (0..dies)
                .map(|_| DieQueues::new(geo.planes_per_die, n))
                .collect(),
            policy,
            user,
            configured: user,
            classes,
            geo,
            ppd: crate::engine::Div::new(geo.planes_per_die),
            multiplane,
            weights: weights.unwrap_or_default(),
            turns: if classes {
                vec![Default::default(); dies as usize]
            } else {
                Vec::new()
            },
            flin: match &user {
                TsuPolicy::Flin(f) => Some(Box::new(policy::flin::Flin::from_config(f, s, flows))),
                _ => None,
            },
            flow_class,
            // Priority classes change nothing when every flow is of one class: no turn
            // between classes is ever taken. A suspended operation is checked per read
            // (the simulator's `enqueue_read`).
            direct_reads,
            seq: 0,
            write_tags: None,
            chip_buf: Vec::new(),
        }
    }

    /// Whether a user read to `die` (busy or not) starts at once, without the queue: the
    /// scheduler could choose nothing else (`out_of_order`, or `priority_out_of_order` with
    /// every flow of one class), and the die is free with nothing queued, so it would take the
    /// read first, alone, with no GC waiting (with suspension, the simulator also checks that
    /// no operation is suspended there).
    #[inline]
    pub fn starts_alone(&self, die: DieId, busy: bool) -> bool {
        self.direct_reads && !busy && self.queues(die).is_empty()
    }

    /// Whether user reads may start without the queue (see `starts_alone`).
    pub fn direct_reads(&self) -> bool {
        self.direct_reads
    }

    /// Switches the direct start of reads (tests compare it with the queued path).
    pub fn set_direct_reads(&mut self, on: bool) {
        self.direct_reads = on;
    }

    #[inline]
    pub fn insert(&mut self, tx: Tx) -> TxId {
        TxId(self.txs.insert(tx))
    }
    #[inline]
    pub fn get(&self, t: TxId) -> &Tx {
        self.txs.get(t.0)
    }
    #[inline]
    pub fn get_mut(&mut self, t: TxId) -> &mut Tx {
        self.txs.get_mut(t.0)
    }
    /// Inserts a read of `sectors` of `lpn` at `ppn` for request `req` (`slot`: a cache read's
    /// entry to fill, else u32::MAX).
    #[inline(always)]
    pub fn insert_read(
        &mut self,
        kind: TxKind,
        req: ReqId,
        lpn: Lpn,
        ppn: Ppn,
        sectors: u64,
        slot: u32,
    ) -> TxId {
        self.insert(Tx {
            req,
            lpn,
            ppn,
            sectors,
            slot,
            ..Tx::new(kind, self.geo.plane_of(ppn))
        })
    }

    /// Inserts write `w` and, with `rmw` (the page's old location and the sectors it keeps,
    /// as the FTL answers a partial-page write), the read of those sectors first, linked to
    /// the write, which waits for it. Returns the write's id and the read's.
    #[inline(always)]
    pub fn insert_write(&mut self, w: Tx, rmw: Option<(Ppn, u64)>) -> (TxId, Option<TxId>) {
        let (req, lpn) = (w.req, w.lpn);
        let w = self.insert(w);
        let Some((old, keep)) = rmw else {
            return (w, None);
        };
        self.get_mut(w).waits = 1;
        let r = self.insert(Tx {
            req,
            lpn,
            ppn: old,
            sectors: keep,
            link: w,
            ..Tx::new(TxKind::RmwRead, self.geo.plane_of(old))
        });
        (w, Some(r))
    }

    /// Write `w` got one of the things it waits for (its host data, the read of its kept
    /// sectors): true when it waits for nothing more and may join its die's queue.
    #[inline]
    pub fn released(&mut self, w: TxId) -> bool {
        let tx = self.get_mut(w);
        tx.waits -= 1;
        tx.waits == 0
    }

    /// The sectors the transactions of a read batch move out of the die.
    #[inline]
    pub fn sectors_of(&self, batch: &[TxId]) -> u32 {
        batch.iter().map(|&t| self.get(t).sector_count()).sum()
    }

    /// A GC read ended: the write that moves its page, queued next.
    #[inline]
    pub fn gc_write_after(&mut self, read: &Tx) -> TxId {
        self.insert(Tx {
            kind: TxKind::GcWrite,
            ..*read
        })
    }

    /// Frees a finished transaction; returns its record.
    #[inline]
    pub fn remove(&mut self, t: TxId) -> Tx {
        let tx = *self.txs.get(t.0);
        self.txs.remove(t.0);
        tx
    }

    #[inline]
    pub fn die_of(&self, plane: PlaneId) -> DieId {
        DieId(self.ppd.quot(plane.0))
    }

    /// Queues `t` at its die in priority class `class` (0 without classes); returns the die.
    // Inlined: every flash transaction passes here, and out of line it costs a call and the
    // transaction's copy (about 30 instructions a read).
    #[inline]
    pub fn enqueue(&mut self, t: TxId, class: usize) -> DieId {
        let tx = *self.txs.get(t.0);
        let die = self.die_of(tx.plane);
        let seq = self.next_seq();
        self.queues[die.idx()].push(t, &tx, self.ppd, class, seq);
        die
    }

    #[inline(always)]
    fn next_seq(&mut self) -> u64 {
        self.seq += 1;
        self.seq
    }

    /// `tsu.write_offsets = "at_queue"`: user writes are given their page offset when they
    /// are queued (`tag_write`), and multi-plane programs join writes of equal offsets.
    pub fn offsets_at_queue(&mut self) {
        self.write_tags = Some(Vec::new());
    }

    /// Gives transaction `t`, about to be queued, the page offset MQSim would give it: for a
    /// user write, its plane's next free user page (`next_free`) counted on past the writes
    /// queued there before it (`pages_per_block` pages a block), as MQSim allocates the page
    /// when it translates the address (only with `offsets_at_queue`). None (`u32::MAX`: it
    /// joins no program by offset) for
    /// other transactions (a translation-page write has its own frontier in MQSim, and an id
    /// reused from a user write must not keep its tag), or when the plane has no free page.
    /// Reads are not tagged: only queued writes are taken by their tag (`take_writes`), and
    /// each is tagged when queued.
    #[inline(always)]
    pub fn tag_write(&mut self, t: TxId, next_free: impl FnOnce(PlaneId) -> Option<u32>) {
        if self.write_tags.is_some() && !self.txs.get(t.0).kind.is_read() {
            self.tag_write_now(t, next_free);
        }
    }

    #[cold]
    #[inline(never)]
    fn tag_write_now(&mut self, t: TxId, next_free: impl FnOnce(PlaneId) -> Option<u32>) {
        let tx = *self.txs.get(t.0);
        let user = matches!(tx.kind, TxKind::UserWrite | TxKind::CacheWrite);
        let next = if user { next_free(tx.plane) } else { None };
        let tag = next.map_or(u32::MAX, |next| {
            let local = self.ppd.modulo(tx.plane.0) as usize;
            let queued = self.queues[self.die_of(tx.plane).idx()].plane_writes(local);
            let n = next as u64 + queued as u64;
            match u32::try_from(n) {
                Ok(n) => self.geo.page_in_block(n),
                Err(_) => (n % self.geo.pages_per_block as u64) as u32,
            }
        });
        let tags = self.write_tags.as_mut().expect("offsets at queue");
        let i = t.0 as usize;
        if tags.len() <= i {
            tags.resize(i + 1, u32::MAX);
        }
        tags[i] = tag;
    }

    /// `flash.die_interleaving = false`: orders a free chip's dies, `mates` (round-robin
    /// order from the die after `freed`) and `freed`, as MQSim serves a chip
    /// (`DieQueues::chip_rank`: the chip's oldest translation-page read, else user read,
    /// else write), ties in round-robin order, so that a read waiting on one die goes before
    /// a program on another. Returns how many; `chip_die(i)` gives the i-th.
    #[cold]
    pub fn chip_order(
        &mut self,
        mates: impl Iterator<Item = DieId> + Clone,
        freed: DieId,
    ) -> usize {
        let mut buf = std::mem::take(&mut self.chip_buf);
        buf.clear();
        let idle = |d: DieId| !self.queues[d.idx()].has_user_work();
        if mates.clone().all(idle) {
            // Every mate ranks last, (3, 0), in its own order: only the freed die's rank
            // places it, first with user work, else last. (The usual case: a chip's mates
            // hold nothing.)
            // Only the dies are read back (`chip_die`): the ranks here are placeholders.
            let freed_entry = ((3, 0), 0, freed);
            let first = !idle(freed);
            buf.extend(first.then_some(freed_entry));
            buf.extend(mates.map(|d| ((3, 0), 0, d)));
            buf.extend((!first).then_some(freed_entry));
        } else {
            let dies = mates.chain(std::iter::once(freed)).enumerate();
            let rank = |(k, d): (usize, DieId)| (self.queues[d.idx()].chip_rank(), k as u32, d);
            buf.extend(dies.map(rank));
            buf.sort_unstable();
        }
        self.chip_buf = buf;
        self.chip_buf.len()
    }

    /// `chip_order` for a chip of two dies (`dies_per_chip`), without its buffer: MQSim's
    /// device has two, and under its rules every die operation's end and every idle channel
    /// asks. The freed die goes first if its rank is lower (a tie goes to its mate, first in
    /// round-robin order); a mate with no user work ranks last, so only the freed die's work
    /// matters then. None for other chips.
    #[inline]
    pub fn pair_order(&self, freed: DieId, dies_per_chip: u32) -> Option<[DieId; 2]> {
        if dies_per_chip != 2 {
            return None;
        }
        let mate = DieId(freed.0 ^ 1);
        let (f, m) = (&self.queues[freed.idx()], &self.queues[mate.idx()]);
        let first = match m.has_user_work() {
            false => f.has_user_work(),
            true => f.chip_rank() < m.chip_rank(),
        };
        Some(if first { [freed, mate] } else { [mate, freed] })
    }

    /// Whether the `dies` dies from `first` (a chip) have nothing queued.
    #[inline]
    pub fn chip_empty(&self, first: u32, dies: u32) -> bool {
        (first..first + dies).all(|d| self.queues[d as usize].is_empty())
    }

    /// The `i`-th die of the order `chip_order` made.
    #[inline]
    pub fn chip_die(&self, i: usize) -> DieId {
        self.chip_buf[i].2
    }

    /// The policy queues user transactions per NVMe priority class (urgent, high, medium,
    /// low), served by its weights after urgent: `enqueue_user` then wants each one's class.
    #[inline]
    pub fn classes(&self) -> bool {
        self.classes
    }

    /// With classes: queues transaction `t` of `flow` in the flow's priority class where the
    /// policy places it; a transaction of no flow (a translation-page write-back) goes as high
    /// (MQSim's UNDEFINED). Returns the die.
    pub fn enqueue_user(&mut self, t: TxId, flow: Option<FlowId>, now: u64) -> DieId {
        let class = flow.map_or(1, |f| self.flow_class[f.idx()] as usize);
        if self.flin.is_some() {
            return self.enqueue_flin(t, class, flow, now);
        }
        self.enqueue(t, class)
    }

    pub fn queues(&self, die: DieId) -> &DieQueues {
        &self.queues[die.idx()]
    }

    /// Transactions in flight (queued or on a die).
    pub fn live(&self) -> usize {
        self.txs.live()
    }
}

#[cfg(test)]
mod chip_order_tests {
    use super::{SchedulingPolicy, Tsu, Tx, TxKind};
    use crate::config::{Config, TsuPolicy};
    use crate::ids::{DieId, PlaneId};
    use crate::settings::Settings;

    /// A chip's dies in MQSim's order, as the plain sort gives it, for every queue state of
    /// a four-die chip (each die holds nothing, a user read, a write, a translation-page read
    /// or GC work alone) and each die freed: the shortcut for chips whose other dies hold no
    /// user work must place the freed die as the sort does.
    #[test]
    fn shortcut_orders_as_the_sort() {
        let c = Config::load("[flash]\ndies_per_chip = 4\n[[flow]]\n", "t.toml", &[]).unwrap();
        let s = Settings::resolve(&c);
        let (dpc, ppd) = (s.geo.dies_per_chip, s.geo.planes_per_die);
        let kinds = [
            None,
            Some(TxKind::UserRead),
            Some(TxKind::UserWrite),
            Some(TxKind::MappingRead),
            Some(TxKind::GcErase),
        ];
        let mut shortcuts = 0;
        for state in 0..kinds.len().pow(dpc) {
            let policy = SchedulingPolicy::PreemptibleGc {
                starvation_limit: 8,
            };
            let mut t = Tsu::new(&s, false, policy, TsuPolicy::OutOfOrder {}, vec![0], false);
            let mut code = state;
            for d in 0..dpc {
                if let Some(kind) = kinds[code % kinds.len()] {
                    let id = t.insert(Tx::new(kind, PlaneId(d * ppd)));
                    t.enqueue(id, 0);
                }
                code /= kinds.len();
            }
            for freed in 0..dpc {
                let mates = (1..dpc).map(move |k| DieId((freed + k) % dpc));
                let mut want: Vec<_> = mates
                    .clone()
                    .chain([DieId(freed)])
                    .enumerate()
                    .map(|(k, d)| (t.queues(d).chip_rank(), k, d))
                    .collect();
                want.sort_unstable();
                shortcuts += mates.clone().all(|d| !t.queues(d).has_user_work()) as u32;
                let n = t.chip_order(mates, DieId(freed));
                let got: Vec<DieId> = (0..n).map(|i| t.chip_die(i)).collect();
                let want: Vec<DieId> = want.into_iter().map(|x| x.2).collect();
                assert_eq!(got, want, "state {state}, die {freed} freed");
            }
        }
        assert!(shortcuts > 100, "the shortcut ran: {shortcuts}");
    }

    /// `pair_order` gives a two-die chip's order as `chip_order` does, for every queue state
    /// of up to two transactions per die (nothing, user reads, writes, translation-page reads,
    /// GC work), queued in either die's turn first (the older read or write ranks first), and
    /// each die freed; other chips get None.
    #[test]
    fn pair_order_is_chip_order_for_two_dies() {
        let c = Config::load("[flash]\ndies_per_chip = 2\n[[flow]]\n", "t.toml", &[]).unwrap();
        let s = Settings::resolve(&c);
        let ppd = s.geo.planes_per_die;
        let kinds = [
            TxKind::UserRead,
            TxKind::UserWrite,
            TxKind::MappingRead,
            TxKind::GcErase,
        ];
        // Per die, a list of up to two kinds: 1 + 4 + 16 lists.
        let lists: Vec<Vec<TxKind>> = std::iter::once(vec![])
            .chain(kinds.iter().map(|&k| vec![k]))
            .chain(
                kinds
                    .iter()
                    .flat_map(|&a| kinds.iter().map(move |&b| vec![a, b])),
            )
            .collect();
        let policy = SchedulingPolicy::PreemptibleGc {
            starvation_limit: 8,
        };
        let mut seen = std::collections::HashSet::new();
        for (a, b) in lists.iter().flat_map(|a| lists.iter().map(move |b| (a, b))) {
            for die_one_first in [false, true] {
                let mut t = Tsu::new(&s, false, policy, TsuPolicy::OutOfOrder {}, vec![0], false);
                let mut queue = |die: u32, list: &Vec<TxKind>| {
                    for &kind in list {
                        let id = t.insert(Tx::new(kind, PlaneId(die * ppd)));
                        t.enqueue(id, 0);
                    }
                };
                let (first, second) = if die_one_first {
                    ((1, b), (0, a))
                } else {
                    ((0, a), (1, b))
                };
                queue(first.0, first.1);
                queue(second.0, second.1);
                for freed in [DieId(0), DieId(1)] {
                    let mate = DieId(freed.0 ^ 1);
                    let n = t.chip_order([mate].into_iter(), freed);
                    let want: Vec<DieId> = (0..n).map(|i| t.chip_die(i)).collect();
                    let got = t.pair_order(freed, 2).expect("two dies");
                    assert_eq!(
                        got.to_vec(),
                        want,
                        "dies {a:?} / {b:?}, die 1 first {die_one_first}, {freed:?} freed"
                    );
                    seen.insert(got[0] == freed);
                }
            }
        }
        assert_eq!(seen.len(), 2, "both orders occur");
        let t = Tsu::new(&s, false, policy, TsuPolicy::OutOfOrder {}, vec![0], false);
        assert!(t.pair_order(DieId(0), 4).is_none() && t.pair_order(DieId(0), 1).is_none());
    }
}
