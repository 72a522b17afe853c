//! Program/erase suspension (`tsu.suspension`; the MQSim paper, FAST'18, section 4.2.3, after
//! Wu and He, FAST'12): a read that reaches a die in the array phase of a long program or erase
//! stops it, the die runs the read, and the operation resumes with the time it had left.
//!
//! The rules are MQSim's as its code means them (its own switch statement never lets them
//! fire): an operation is suspended only if at least the threshold of its array time is left,
//! one operation per die is suspended at a time, and the suspension cost delays the read. The
//! die resumes as soon as the operation that suspended it has ended. Unlike MQSim, the number of
//! suspensions of one operation is capped (`tsu.max_suspensions`) and resuming may cost time.

use crate::engine::Picoseconds;
use crate::flash::MAX_BATCH;
use crate::ids::{DieId, TxId};
use crate::settings::SuspensionSettings;
use serde::{Deserialize, Serialize};

/// What a die is running, when it could be suspended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Suspendable {
    Program,
    Erase,
}

impl crate::tsu::Tsu {
    /// The die began a program or erase, or resumed one: whether what is queued there may
    /// suspend it as a read (true: reads and translation-page reads go first) or a write.
    pub fn queued_suspender(&self, die: DieId) -> Option<bool> {
        let q = self.queues(die);
        if q.reads_len() > 0 || !q.mapping_reads.is_empty() {
            Some(true)
        } else if q.writes_len() > 0 {
            Some(false)
        } else {
            None
        }
    }
}

impl Suspendable {
    /// What a die operation led by a transaction of `kind` is, if a read may suspend it.
    #[inline]
    pub fn of(kind: crate::tsu::TxKind) -> Option<Self> {
        use crate::tsu::TxKind::*;
        match kind {
            UserWrite | MappingWrite | CacheWrite | GcWrite => Some(Suspendable::Program),
            GcErase => Some(Suspendable::Erase),
            _ => None,
        }
    }

    /// Whether a transaction of `kind` reaching a busy die may suspend its operation as a
    /// read (true) or a write (false); None: it never suspends (reclaim work).
    #[inline]
    pub fn suspends_as_read(kind: crate::tsu::TxKind) -> Option<bool> {
        use crate::tsu::TxKind::*;
        match kind {
            UserRead | RmwRead | CacheRead | MappingRead => Some(true),
            UserWrite | CacheWrite | MappingWrite => Some(false),
            _ => None,
        }
    }
}

/// The operation a die runs now: when its array phase started and ends, and how often it
/// was suspended already.
#[derive(Debug, Clone, Copy)]
struct Running {
    kind: Suspendable,
    array_start: Picoseconds,
    end: Picoseconds,
    count: u32,
}

/// A suspended operation: its transactions, the array time it has left, and the end its
/// pending DieArrayDone event still carries (that event is ignored).
#[derive(Debug, Clone, Copy)]
struct Suspended {
    kind: Suspendable,
    batch: [TxId; MAX_BATCH],
    n: usize,
    remaining: Picoseconds,
    count: u32,
    old_end: Picoseconds,
    /// The operation that suspended it has started (the die resumes when it has ended).
    served: bool,
}

/// What a free die with a suspended operation does (`SuspensionUnit::while_suspended`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WhileSuspended {
    /// Start a read (or with `writes`, a write) if one waits; if none starts, resume.
    Meanwhile { writes: bool },
    /// Resume the operation.
    Resume,
}

/// A resumed operation: its transactions, its array phase's new end and how much later
/// that is than its end before the suspension.
#[derive(Debug, Clone, Copy)]
pub struct Resumed {
    pub batch: [TxId; MAX_BATCH],
    pub n: usize,
    pub end: Picoseconds,
    pub delay: Picoseconds,
}

#[derive(Debug, Clone, Default)]
struct DieSuspension {
    running: Option<Running>,
    suspended: Option<Suspended>,
    /// Ends of suspended operations whose DieArrayDone events are still queued.
    stale: Vec<Picoseconds>,
}

/// Counts for the result (`device.suspension`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SuspensionStats {
    pub program_suspensions: u64,
    pub erase_suspensions: u64,
    /// What the suspended operations were delayed by (suspension to resumption, plus the
    /// resume cost), summed, microseconds.
    pub suspended_us: f64,
    /// The same in picoseconds, exact.
    #[serde(skip)]
    pub suspended_ps: u64,
}

/// The suspension rules and every die's state.
pub struct SuspensionUnit {
    program: bool,
    erase: bool,
    writes_suspend_erase: bool,
    program_above: Picoseconds,
    erase_above: Picoseconds,
    pub suspend_program: Picoseconds,
    pub suspend_erase: Picoseconds,
    resume_program: Picoseconds,
    resume_erase: Picoseconds,
    max: u32,
    dies: Vec<DieSuspension>,
    pub stats: SuspensionStats,
}

impl SuspensionUnit {
    /// The rules `t` for `dies` dies.
    pub fn new(t: &SuspensionSettings, dies: u32) -> Self {
        Self {
            program: t.program,
            erase: t.erase,
            writes_suspend_erase: t.writes_suspend_erase,
            program_above: t.program_above_ps,
            erase_above: t.erase_above_ps,
            suspend_program: t.suspend_program_ps,
            suspend_erase: t.suspend_erase_ps,
            resume_program: t.resume_program_ps,
            resume_erase: t.resume_erase_ps,
            max: t.max,
            dies: vec![DieSuspension::default(); dies as usize],
            stats: SuspensionStats::default(),
        }
    }

    /// Whether this configuration suspends operations of `kind`.
    #[inline]
    fn allows(&self, kind: Suspendable) -> bool {
        match kind {
            Suspendable::Program => self.program,
            Suspendable::Erase => self.erase,
        }
    }

    /// The die started an operation led by a transaction of `first`, whose array phase runs
    /// from `array_start` to `end`. True if it is a program or an erase this configuration
    /// suspends: what is queued at the die may suspend it now (`suspend_if`). An operation
    /// started while another is suspended on the die cannot be suspended itself. Only such
    /// operations are kept as running: under MQSim's `CMD_Suspension_Support = ERASE` a
    /// program is not, so it begins quietly (`begins_quietly`), where each program used to
    /// ask the unit, and be refused, whether what was queued suspended it.
    #[inline]
    pub fn began(
        &mut self,
        die: DieId,
        first: crate::tsu::TxKind,
        array_start: Picoseconds,
        end: Picoseconds,
    ) -> bool {
        let kind = Suspendable::of(first).filter(|&k| self.allows(k));
        let d = &mut self.dies[die.idx()];
        d.running = match kind {
            Some(kind) if d.suspended.is_none() => Some(Running {
                kind,
                array_start,
                end,
                count: 0,
            }),
            _ => None,
        };
        if let Some(s) = d.suspended.as_mut() {
            s.served = true;
        }
        d.running.is_some()
    }

    /// Whether `began(die, first, ..)` would change nothing and answer false: an operation
    /// this configuration does not suspend beginning on a die with nothing running to
    /// suspend and nothing suspended. Inline, so reads (and, where only erases are
    /// suspended, programs) on a device that suspends pay one test.
    #[inline]
    pub fn begins_quietly(&self, die: DieId, first: crate::tsu::TxKind) -> bool {
        let d = &self.dies[die.idx()];
        d.running.is_none()
            && d.suspended.is_none()
            && !Suspendable::of(first).is_some_and(|k| self.allows(k))
    }

    /// Whether an operation of `die` is suspended (`while_suspended` has an answer).
    #[inline]
    pub fn suspended(&self, die: DieId) -> bool {
        self.dies[die.idx()].suspended.is_some()
    }

    /// Whether `die` runs an operation this configuration may suspend (a program with
    /// program suspension, an erase with erase suspension) not suspended already: the cheap
    /// part of `suspend_if`, tested first on every transaction queued at a busy die.
    #[inline]
    pub fn may_suspend(&self, die: DieId) -> bool {
        let d = &self.dies[die.idx()];
        // Only operations this configuration suspends are kept as running (`began`).
        d.suspended.is_none() && d.running.is_some()
    }

    /// A transaction that may suspend as a read (`read`: true) or a write (false; None: it
    /// never suspends) reached the busy `die`, or waits there, at `now`; the die runs
    /// `batch`. If the rules suspend the die's operation, it is suspended and the answer is
    /// when the die is free (the suspension's time is over).
    pub fn suspend_if(
        &mut self,
        die: DieId,
        now: Picoseconds,
        read: Option<bool>,
        (batch, n): ([TxId; MAX_BATCH], usize),
    ) -> Option<Picoseconds> {
        let (at, cost) = self.should_suspend(die, now, read?)?;
        self.suspend(die, at, batch, n);
        Some(at + cost)
    }

    /// A transaction (a read, or with `writes_suspend_erase` a write) reached the busy
    /// `die` at `now`: whether the die's operation is to be suspended, when (now, or when its
    /// array phase begins if its command and data are still on the bus) and the time that
    /// costs.
    fn should_suspend(
        &self,
        die: DieId,
        now: Picoseconds,
        read: bool,
    ) -> Option<(Picoseconds, Picoseconds)> {
        let d = &self.dies[die.idx()];
        let r = d.running?;
        if d.suspended.is_some() || r.count >= self.max {
            return None;
        }
        let at = now.max(r.array_start);
        let left = r.end.saturating_sub(at);
        match r.kind {
            Suspendable::Program if self.program && read && left >= self.program_above => {
                Some((at, self.suspend_program))
            }
            Suspendable::Erase
                if self.erase
                    && (read || self.writes_suspend_erase)
                    && left >= self.erase_above =>
            {
                Some((at, self.suspend_erase))
            }
            _ => None,
        }
    }

    /// Suspends the die's running operation (`should_suspend` said so) at `now` (its `at`).
    fn suspend(&mut self, die: DieId, now: Picoseconds, batch: [TxId; MAX_BATCH], n: usize) {
        let d = &mut self.dies[die.idx()];
        let r = d.running.take().expect("a running operation");
        match r.kind {
            Suspendable::Program => self.stats.program_suspensions += 1,
            Suspendable::Erase => self.stats.erase_suspensions += 1,
        }
        d.stale.push(r.end);
        d.suspended = Some(Suspended {
            kind: r.kind,
            batch,
            n,
            remaining: r.end - now,
            count: r.count + 1,
            old_end: r.end,
            served: false,
        });
    }

    /// What the free `die` does about its suspended operation: None if it has none; else it
    /// starts what may run meanwhile, once (`Meanwhile`: programs yield to reads only,
    /// erases to reads, and to writes with `writes_suspend_erase`), or, once that has
    /// started, or if nothing could, resumes the operation (`resume`).
    #[inline]
    pub fn while_suspended(&self, die: DieId) -> Option<WhileSuspended> {
        let s = self.dies[die.idx()].suspended.as_ref()?;
        Some(if s.served {
            WhileSuspended::Resume
        } else {
            WhileSuspended::Meanwhile {
                writes: s.kind == Suspendable::Erase && self.writes_suspend_erase,
            }
        })
    }

    /// Resumes the die's suspended operation at `now`: what the die runs again, and when.
    pub fn resume(&mut self, die: DieId, now: Picoseconds) -> Resumed {
        let d = &mut self.dies[die.idx()];
        let s = d.suspended.take().expect("a suspended operation");
        let cost = match s.kind {
            Suspendable::Program => self.resume_program,
            Suspendable::Erase => self.resume_erase,
        };
        let end = now + cost + s.remaining;
        d.running = Some(Running {
            kind: s.kind,
            array_start: now + cost,
            end,
            count: s.count,
        });
        self.stats.suspended_ps += end - s.old_end;
        Resumed {
            batch: s.batch,
            n: s.n,
            end,
            delay: end - s.old_end,
        }
    }

    /// A DieArrayDone event of `die` fired at `now`: true if it is the stale end of an
    /// operation that was suspended (ignore it). Two identical events at one time stand for
    /// the same thing, so dropping either is right. Inline, the search out of line: most dies
    /// have no stale end.
    #[inline]
    pub fn is_stale(&mut self, die: DieId, now: Picoseconds) -> bool {
        let stale = &mut self.dies[die.idx()].stale;
        !stale.is_empty() && Self::drop_stale(stale, now)
    }

    #[inline(never)]
    fn drop_stale(stale: &mut Vec<Picoseconds>, now: Picoseconds) -> bool {
        if let Some(i) = stale.iter().position(|&t| t == now) {
            stale.swap_remove(i);
            return true;
        }
        false
    }

    pub fn result(&self) -> SuspensionStats {
        SuspensionStats {
            suspended_us: self.stats.suspended_ps as f64 / 1e6,
            ..self.stats.clone()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tsu::TxKind;

    fn unit() -> SuspensionUnit {
        unit_of(true, true)
    }

    fn unit_of(program: bool, erase: bool) -> SuspensionUnit {
        SuspensionUnit::new(
            &SuspensionSettings {
                program,
                erase,
                writes_suspend_erase: false,
                program_above_ps: 100,
                erase_above_ps: 100,
                suspend_program_ps: 10,
                suspend_erase_ps: 20,
                resume_program_ps: 5,
                resume_erase_ps: 7,
                max: 1,
            },
            1,
        )
    }

    /// A read suspends a program with enough time left, once; the die runs the read, then
    /// resumes the program with the time it had left plus the resume cost.
    #[test]
    fn suspend_run_meanwhile_resume() {
        let mut su = unit();
        let d = DieId(0);
        let batch = ([TxId(4); MAX_BATCH], 1);
        assert!(
            !su.began(d, TxKind::UserRead, 0, 50),
            "a read is not suspended"
        );
        assert_eq!(su.suspend_if(d, 10, Some(true), batch), None);
        assert!(su.began(d, TxKind::UserWrite, 100, 1000));
        assert_eq!(su.suspend_if(d, 50, None, batch), None, "GC never suspends");
        assert_eq!(
            su.suspend_if(d, 50, Some(false), batch),
            None,
            "writes do not"
        );
        assert_eq!(
            su.suspend_if(d, 950, Some(true), batch),
            None,
            "too little left"
        );
        // Still on the bus at 50: suspended when its array phase begins.
        assert_eq!(su.suspend_if(d, 50, Some(true), batch), Some(110));
        let meanwhile = WhileSuspended::Meanwhile { writes: false };
        assert_eq!(su.while_suspended(d), Some(meanwhile));
        assert!(!su.began(d, TxKind::UserRead, 120, 150));
        assert_eq!(su.while_suspended(d), Some(WhileSuspended::Resume));
        let r = su.resume(d, 200);
        assert_eq!((r.batch[0], r.n, r.end, r.delay), (TxId(4), 1, 1105, 105));
        assert_eq!(su.while_suspended(d), None);
        assert_eq!(
            su.suspend_if(d, 300, Some(true), batch),
            None,
            "at most once"
        );
        assert!(su.is_stale(d, 1000) && !su.is_stale(d, 1000));
    }

    /// `began` says whether the operation may be suspended under this configuration: a
    /// program where only erases are (MQSim's `CMD_Suspension_Support = ERASE`) may not, and
    /// begins quietly; an erase may, and nothing begun beside a suspended operation may;
    /// each answer agrees with what `suspend_if` then does.
    #[test]
    fn began_tells_what_this_configuration_may_suspend() {
        let batch = ([TxId(4); MAX_BATCH], 1);
        let d = DieId(0);
        let mut su = unit_of(false, true);
        assert!(su.begins_quietly(d, TxKind::UserWrite));
        assert!(!su.begins_quietly(d, TxKind::GcErase));
        assert!(!su.began(d, TxKind::UserWrite, 0, 1000));
        assert_eq!(su.suspend_if(d, 10, Some(true), batch), None);
        assert!(su.began(d, TxKind::GcErase, 2000, 9000));
        assert!(!su.begins_quietly(d, TxKind::UserWrite), "an erase runs");
        assert_eq!(su.suspend_if(d, 2010, Some(true), batch), Some(2030));
        assert!(!su.began(d, TxKind::UserRead, 2030, 2100));
        assert!(
            !su.began(d, TxKind::GcErase, 3000, 9000),
            "one is suspended"
        );
        let mut su = unit_of(true, false);
        assert!(su.begins_quietly(d, TxKind::GcErase));
        assert!(!su.began(d, TxKind::GcErase, 0, 9000));
        assert_eq!(su.suspend_if(d, 10, Some(true), batch), None);
        assert!(su.began(d, TxKind::MappingWrite, 10_000, 11_000));
        assert_eq!(su.suspend_if(d, 10_000, Some(true), batch), Some(10_010));
    }
}
