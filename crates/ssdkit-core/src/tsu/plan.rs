//! What a free die starts next, as the TSU answers it: the order in which the die tries GC,
//! reads and writes of each priority class (the policy's choice, `policy/`), and the batch of
//! transactions each try takes (multi-plane reads, programs and erases). The simulator runs
//! the steps in order until one starts: it allocates the pages of a program (the FTL), drives
//! the flash and books the events; a step can fail only where another layer decides (a
//! write's planes wait at their GC reserve, a GC operation turns out stale).

use super::{Choice, Tsu, TxKind};
use crate::flash::MAX_BATCH;
use crate::ids::{DieId, TxId};

/// One try of a free die.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Attempt {
    /// A translation-page read if one waits, else user reads of this priority class
    /// (`take_reads`).
    Reads(u8),
    /// User writes of this class on planes that can take a page now (`take_writes`); `turn`:
    /// a start uses the class's turn (`wrote`).
    Writes { class: u8, turn: bool },
    /// The die's next GC operation.
    Gc,
}

/// The steps of one choice, in order; at most one reads try ends them (it always starts).
/// Packed one byte per step into an integer (0 ends the list): a free die builds one at
/// every start, and an array of steps cost measurably more to fill and copy.
#[derive(Debug, Clone, Copy)]
pub struct Attempts {
    packed: u64,
    shift: u8,
}

impl Attempts {
    #[inline(always)]
    pub(super) fn new() -> Self {
        Self {
            packed: 0,
            shift: 0,
        }
    }
    #[inline(always)]
    pub(super) fn push(&mut self, s: Attempt) {
        debug_assert!(self.shift < 64, "at most 8 steps");
        let code = match s {
            Attempt::Reads(c) => 1 + c,
            Attempt::Writes { class, turn } => 0x10 | class | (turn as u8) << 3,
            Attempt::Gc => 0x20,
        };
        self.packed |= (code as u64) << self.shift;
        self.shift += 8;
    }
    /// The next step, removed from the list.
    #[inline(always)]
    pub fn pop(&mut self) -> Option<Attempt> {
        let code = self.packed as u8;
        if code == 0 {
            return None;
        }
        self.packed >>= 8;
        Some(match code {
            0x20 => Attempt::Gc,
            c if c & 0x10 != 0 => Attempt::Writes {
                class: c & 0x07,
                turn: c & 0x08 != 0,
            },
            c => Attempt::Reads(c - 1),
        })
    }
}

/// What a free die tries (`Tsu::die_steps`): its GC operation first, then the policy's user
/// steps (`user_steps`, chosen only then: choosing uses a class's turn); or the user steps,
/// then GC if it waits. With whether GC waited when the choice was made (GC's starvation
/// count, booked by `Tsu::started`). Two fixed orders rather than one list of steps: the
/// user steps stay a short list the compiler folds, on every free die.
#[derive(Debug, Clone, Copy)]
pub struct DieSteps {
    pub gc_first: bool,
    pub gc_waiting: bool,
}

impl Iterator for Attempts {
    type Item = Attempt;
    #[inline(always)]
    fn next(&mut self) -> Option<Attempt> {
        self.pop()
    }
}

/// A batch of transactions a die starts: the page offset in the block (reads: of the pages
/// read; programs: of the pages to be allocated, one per plane) and how many of the
/// caller's `[TxId; MAX_BATCH]` it filled.
pub type Batch = (u32, usize);

impl Tsu {
    /// Whether GC transactions wait at `die`.
    #[inline]
    pub fn gc_waiting(&self, die: DieId) -> bool {
        !self.queues[die.idx()].gc_empty()
    }

    /// What a free `die` tries: GC first or user work first (`ftl.gc_preemptible`; `urgent`:
    /// a plane of the die is down to its GC reserve, asked only while GC waits under a
    /// preemptible policy), then the other. None with nothing queued.
    #[inline]
    pub fn die_steps(&self, die: DieId, urgent: impl FnOnce() -> bool) -> Option<DieSteps> {
        let q = &self.queues[die.idx()];
        if q.is_empty() {
            return None;
        }
        let gc_waiting = !q.gc_empty();
        Some(DieSteps {
            gc_first: gc_waiting && self.policy.gc_first(q, urgent) == Choice::GcFirst,
            gc_waiting,
        })
    }

    /// The die started an operation of `plan` (`by_gc`: its GC step): GC's starvation count.
    #[inline]
    pub fn started(&mut self, die: DieId, plan: &DieSteps, by_gc: bool) {
        let policy = self.policy;
        policy.started(&mut self.queues[die.idx()], by_gc, plan.gc_waiting);
    }

    /// The user work a free die tries, in order, as `tsu.policy` says (`policy/`).
    #[inline(always)]
    pub fn user_steps(&mut self, die: DieId, now: u64) -> Attempts {
        let mut s = Attempts::new();
        super::policy::steps(self, die, now, &mut s);
        s
    }

    /// What a die whose program or erase is suspended may run meanwhile: reads, and writes
    /// if `writes` (by the classes' turns with classes).
    pub fn steps_while_suspended(&mut self, die: DieId, writes: bool) -> Attempts {
        let mut s = Attempts::new();
        if !self.classes {
            if self.reads_waiting(die) {
                s.push(Attempt::Reads(0));
            } else if writes {
                s.push(Attempt::Writes {
                    class: 0,
                    turn: false,
                });
            }
        } else if !self.class_reads(die, &mut s) && writes {
            self.class_writes(die, &mut s);
        }
        s
    }

    /// A translation-page read or a user read of class 0 waits.
    #[inline(always)]
    pub(super) fn reads_waiting(&self, die: DieId) -> bool {
        let q = &self.queues[die.idx()];
        !q.mapping_reads.is_empty() || q.class_reads(0) > 0
    }

    /// Reads with classes: a translation-page read, else the class whose turn it is (its
    /// turn used now: a reads try always starts). False if no read waits.
    pub(super) fn class_reads(&mut self, die: DieId, s: &mut Attempts) -> bool {
        let q = &self.queues[die.idx()];
        if !q.mapping_reads.is_empty() {
            s.push(Attempt::Reads(0));
            return true;
        }
        let waiting = q.classes_waiting(false);
        let turns = &mut self.turns[die.idx()][0];
        let Some(c) = turns.pick(waiting, self.weights) else {
            return false;
        };
        turns.served(c);
        s.push(Attempt::Reads(c as u8));
        true
    }

    /// Writes with classes: the class whose turn it is; if none of its writes can go (their
    /// planes wait at the GC reserve), the other waiting classes in priority order.
    pub(super) fn class_writes(&mut self, die: DieId, s: &mut Attempts) {
        let waiting = self.queues[die.idx()].classes_waiting(true);
        let Some(c) = self.turns[die.idx()][1].pick(waiting, self.weights) else {
            return;
        };
        s.push(Attempt::Writes {
            class: c as u8,
            turn: true,
        });
        for k in (0..4).filter(|&k| k != c && waiting[k]) {
            s.push(Attempt::Writes {
                class: k as u8,
                turn: false,
            });
        }
    }

    /// A `Attempt::Writes` with `turn` started: the class used one operation of its turn.
    #[inline]
    pub fn wrote(&mut self, die: DieId, class: usize) {
        self.turns[die.idx()][1].served(class);
    }

    /// User writes of `class` wait at `die` (most write tries find none: answered before
    /// the simulator reads any plane).
    #[inline]
    pub fn writes_waiting(&self, die: DieId, class: usize) -> bool {
        self.queues[die.idx()].class_writes(class) > 0
    }

    /// Takes the reads a die starts now: a translation-page read alone if one waits (user
    /// transactions wait for it), else the oldest (FLIN: first in its order) user read of
    /// `class` with, multi-plane, reads of the same page offset on other planes among the
    /// first 4 x planes queued.
    #[inline]
    pub fn take_reads(
        &mut self,
        die: DieId,
        class: usize,
        out: &mut [TxId; MAX_BATCH],
    ) -> Option<Batch> {
        let geo = &self.geo;
        let q = &mut self.queues[die.idx()];
        if let Some((_, t)) = q.mapping_reads.pop_front() {
            out[0] = t;
            return Some((geo.page_in_block(self.txs.get(t.0).ppn.0), 1));
        }
        let t0 = q.pop_read(class)?;
        let tx0 = *self.txs.get(t0.0);
        let page = geo.page_in_block(tx0.ppn.0);
        out[0] = t0;
        let mut n = 1;
        if self.multiplane {
            let ppd = geo.planes_per_die as usize;
            let mut used: u32 = 1 << geo.plane_in_die(tx0.plane.0);
            let mut i = 0;
            while i < q.class_reads(class).min(4 * ppd) && n < ppd {
                let tx = *self.txs.get(q.read_at(class, i).0);
                let bit = 1 << geo.plane_in_die(tx.plane.0);
                if used & bit == 0 && geo.page_in_block(tx.ppn.0) == page {
                    used |= bit;
                    out[n] = q.remove_read(class, i);
                    n += 1;
                } else {
                    i += 1;
                }
            }
        }
        Some((page, n))
    }

    /// Takes the writes a die programs now: the earliest queued write of `class` whose plane
    /// can take a page (`offsets`: each plane of the die's next user page offset, None at its
    /// GC reserve) and, multi-plane, writes of other planes at the same offset among the
    /// first 4 x planes queued (with `tsu.write_offsets = "at_queue"`: writes given the same
    /// offset when queued, anywhere in the queue, the program timed at that offset). None if
    /// no write of the class can go.
    pub fn take_writes(
        &mut self,
        die: DieId,
        class: usize,
        offsets: &[Option<u32>; MAX_BATCH],
        out: &mut [TxId; MAX_BATCH],
    ) -> Option<Batch> {
        let ppd = self.geo.planes_per_die;
        let q = &mut self.queues[die.idx()];
        let t0 = q.pop_first_write(class, |l| offsets[l].is_some())?;
        let local = self.ppd.modulo(self.txs.get(t0.0).plane.0);
        let page = offsets[local as usize].expect("checked above");
        out[0] = t0;
        let mut n = 1;
        if let Some(tags) = &self.write_tags {
            let tag = |t: TxId| tags.get(t.0 as usize).copied().unwrap_or(u32::MAX);
            let want = tag(t0);
            if want != u32::MAX {
                n += q.take_tagged_partners(
                    class,
                    1 << local,
                    ppd as usize,
                    |l| offsets[l].is_some(),
                    |t| tag(t) == want,
                    &mut out[1..],
                );
                // Timed at that offset's page type, as MQSim times the page it allocated.
                return Some((want, n));
            }
        } else if self.multiplane {
            n += q.take_write_partners(
                class,
                1 << local,
                4 * ppd as usize,
                ppd as usize,
                |l| offsets[l] == Some(page),
                &mut out[1..],
            );
        }
        Some((page, n))
    }

    /// Takes every user write queued at `die` for the planes (local indices) that `stuck`
    /// selects, every class, in arrival order, for dynamic placement to move elsewhere;
    /// `keep_writes` puts back those that stay.
    pub fn take_writes_of_planes(
        &mut self,
        die: DieId,
        stuck: impl Fn(usize) -> bool,
    ) -> Vec<super::queues::TakenWrite> {
        self.queues[die.idx()].drain_writes(stuck)
    }

    /// Puts back, in place, the writes of `die` that `take_writes_of_planes` took and that
    /// stay (in their arrival order).
    pub fn keep_writes(&mut self, die: DieId, kept: &[super::queues::TakenWrite]) {
        let ppd = self.geo.planes_per_die as usize;
        let mut per_plane: Vec<Vec<super::queues::TakenWrite>> = vec![Vec::new(); ppd];
        for &w in kept {
            per_plane[self.txs.get(w.2 .0).plane.0 as usize % ppd].push(w);
        }
        for (l, k) in per_plane.iter().enumerate() {
            if !k.is_empty() {
                self.queues[die.idx()].keep_writes(l, k);
            }
        }
    }

    /// The die's next GC transaction: writes first (they release the data their reads
    /// brought out), erases last (they queue only once every move of the victim is done).
    #[inline]
    pub fn pop_gc(&mut self, die: DieId) -> Option<TxId> {
        let q = &mut self.queues[die.idx()];
        q.gc_writes
            .pop_front()
            .or_else(|| q.gc_reads.pop_front())
            .or_else(|| q.gc_erases.pop_front())
    }

    /// A multi-plane erase: queued erases of the die's other planes at the same block offset
    /// join erase `t0`.
    pub fn erase_batch(&mut self, die: DieId, t0: TxId) -> Vec<TxId> {
        let mut batch = vec![t0];
        if !self.multiplane {
            return batch;
        }
        let geo = self.geo;
        let ppd = geo.planes_per_die;
        let tx0 = *self.txs.get(t0.0);
        let offset = tx0.block.0 % geo.blocks_per_plane;
        let mut used: u32 = 1 << (tx0.plane.0 % ppd);
        let q = &mut self.queues[die.idx()].gc_erases;
        let mut i = 0;
        while i < q.len() && batch.len() < ppd as usize {
            let t = q[i];
            let tx = self.txs.get(t.0);
            let bit = 1 << (tx.plane.0 % ppd);
            if used & bit == 0 && tx.block.0 % geo.blocks_per_plane == offset {
                used |= bit;
                q.remove(i);
                batch.push(t);
            } else {
                i += 1;
            }
        }
        batch
    }

    /// The die began the operation of `batch`: the policy's bookkeeping (FLIN's estimates).
    #[inline]
    pub fn began(&mut self, die: DieId, batch: &[TxId], now: u64) {
        if self.flin.is_some() {
            self.flin_began(die, batch, now);
        }
    }
}

/// Whether a transaction kind queues as a user read at the die.
#[inline]
pub(super) fn user_read(k: TxKind) -> bool {
    matches!(k, TxKind::UserRead | TxKind::RmwRead | TxKind::CacheRead)
}

/// Whether a transaction kind queues as a user write at the die.
#[inline]
pub(super) fn user_write(k: TxKind) -> bool {
    matches!(
        k,
        TxKind::UserWrite | TxKind::MappingWrite | TxKind::CacheWrite
    )
}

#[cfg(test)]
mod attempts_tests {
    use super::{Attempt, Attempts};

    /// Every step a policy can push comes back, in order, as pushed: eight of them (the most a
    /// choice holds), every class and both turns.
    #[test]
    fn steps_round_trip_in_order() {
        let steps = [
            Attempt::Reads(0),
            Attempt::Reads(3),
            Attempt::Writes {
                class: 0,
                turn: true,
            },
            Attempt::Writes {
                class: 3,
                turn: false,
            },
            Attempt::Gc,
            Attempt::Writes {
                class: 1,
                turn: false,
            },
            Attempt::Reads(2),
            Attempt::Writes {
                class: 2,
                turn: true,
            },
        ];
        let mut a = Attempts::new();
        for s in steps {
            a.push(s);
        }
        assert_eq!(a.collect::<Vec<_>>(), steps);
        assert_eq!(Attempts::new().next(), None);
    }
}

#[cfg(test)]
mod die_steps_tests {
    use super::Tsu;
    use crate::config::{Config, TsuPolicy};
    use crate::ids::{DieId, Lpn, PlaneId, Ppn, ReqId, TxId};
    use crate::settings::Settings;
    use crate::tsu::{SchedulingPolicy, Tx, TxKind};

    fn tsu(starvation_limit: u32) -> Tsu {
        let s = Settings::resolve(&Config::default());
        let policy = SchedulingPolicy::PreemptibleGc { starvation_limit };
        Tsu::new(&s, false, policy, TsuPolicy::OutOfOrder {}, vec![0], false)
    }

    fn queue(t: &mut Tsu, kind: TxKind) -> TxId {
        let id = t.insert(Tx::new(kind, PlaneId(0)));
        t.enqueue(id, 0);
        id
    }

    /// GC goes after user work unless a plane is at its reserve (`urgent`) or GC waited
    /// behind `starvation_limit` user starts. The reserve is asked only while GC waits, and
    /// an empty die has no steps.
    #[test]
    fn gc_goes_where_the_choice_puts_it() {
        let mut t = tsu(2);
        let d = DieId(0);
        assert!(t.die_steps(d, || unreachable!()).is_none());
        queue(&mut t, TxKind::UserRead);
        let only_user = t.die_steps(d, || panic!("GC does not wait")).unwrap();
        assert!(!only_user.gc_first && !only_user.gc_waiting);
        queue(&mut t, TxKind::GcErase);
        let gc_first = |t: &Tsu, urgent| t.die_steps(d, || urgent).expect("work").gc_first;
        let plan = t.die_steps(d, || false).unwrap();
        assert!(!plan.gc_first && plan.gc_waiting);
        assert!(gc_first(&t, true));
        // Two user starts while GC waited: GC goes first without urgency.
        t.started(d, &plan, false);
        assert!(!gc_first(&t, false));
        t.started(d, &plan, false);
        assert!(gc_first(&t, false));
        // A GC start ends the streak.
        t.started(d, &plan, true);
        assert!(!gc_first(&t, false));
    }

    /// A partial-page write's read of the kept sectors is linked to the write, which waits
    /// for it; a whole-page write waits for nothing.
    #[test]
    fn write_with_its_read_modify_write_read() {
        let mut t = tsu(8);
        let w = Tx {
            req: ReqId(3),
            lpn: Lpn(7),
            sectors: 0b0011,
            ..Tx::new(TxKind::UserWrite, PlaneId(1))
        };
        let (id, rr) = t.insert_write(w, None);
        assert!(rr.is_none());
        assert_eq!(t.get(id).waits, 0);
        let (id, rr) = t.insert_write(w, Some((Ppn(5), 0b1100)));
        let r = *t.get(rr.expect("a read first"));
        assert_eq!(
            (r.kind, r.link, r.req, r.lpn),
            (TxKind::RmwRead, id, ReqId(3), Lpn(7))
        );
        assert_eq!((r.ppn, r.sectors), (Ppn(5), 0b1100));
        assert_eq!(t.get(id).waits, 1);
        assert!(t.released(id), "the read was all it waited for");
    }
}
