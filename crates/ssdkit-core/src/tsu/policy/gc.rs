//! Where garbage collection goes among user work at a free die (`ftl.gc_preemptible`,
//! `ftl.gc_starvation_limit`): the same under every `tsu.policy`.

use crate::tsu::DieQueues;

/// What a free die tries first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Choice {
    /// User reads, then user writes, then GC.
    UserFirst,
    /// GC, then user reads and writes.
    GcFirst,
}

/// The MQSim paper (FAST'18), section 2.3: user and GC traffic queue apart, and GC is either
/// preemptible or not.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SchedulingPolicy {
    /// User reads, then user writes, then GC; except GC first when a plane of the die is at
    /// its reserve, or after `starvation_limit` user operations in a row while GC waited.
    PreemptibleGc { starvation_limit: u32 },
    /// Queued GC goes first.
    GcFirst,
}

impl SchedulingPolicy {
    /// `ftl.gc_preemptible` and its starvation limit.
    pub fn for_ftl(f: &crate::config::FtlConfig) -> Self {
        if f.gc_preemptible {
            SchedulingPolicy::PreemptibleGc {
                starvation_limit: f.gc_starvation_limit,
            }
        } else {
            SchedulingPolicy::GcFirst
        }
    }

    /// The order for a free die with these queues; `urgent` when a plane of the die is down
    /// to its GC reserve.
    pub fn choose(&self, q: &DieQueues, urgent: bool) -> Choice {
        if q.gc_empty() {
            return Choice::UserFirst;
        }
        self.gc_first(q, || urgent)
    }

    /// `choose` for a die where GC waits; `urgent` is asked only when it matters.
    #[inline(always)]
    pub fn gc_first(&self, q: &DieQueues, urgent: impl FnOnce() -> bool) -> Choice {
        match *self {
            SchedulingPolicy::GcFirst => Choice::GcFirst,
            SchedulingPolicy::PreemptibleGc { starvation_limit } => {
                if q.user_streak >= starvation_limit || urgent() {
                    Choice::GcFirst
                } else {
                    Choice::UserFirst
                }
            }
        }
    }

    /// Books what the die started: GC resets the streak of user operations that ran while
    /// GC waited.
    pub fn started(&self, q: &mut DieQueues, by_gc: bool, gc_was_waiting: bool) {
        if by_gc {
            q.user_streak = 0;
        } else if gc_was_waiting {
            q.user_streak += 1;
        }
    }
}
