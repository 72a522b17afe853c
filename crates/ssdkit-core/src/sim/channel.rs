//! `flash.bus.arbitration = "data_first"`: the events of MQSim's channel arbitration; what
//! waits and what goes next is `flash::ChannelQueues`'.
use super::{Ev, Simulator};
use crate::ids::DieId;
use crate::tsu::TxKind;

impl Simulator {
    /// A die with work found its channel busy: it waits for the channel to go idle.
    #[inline]
    pub(super) fn channel_taken(&mut self, die: DieId) -> bool {
        let ch = self.settings.geo.channel_of_die(die.0);
        if !self.backend.channel_busy(ch, self.q.now()) {
            return false;
        }
        self.channel_queues().want(ch);
        self.arm_channel(ch);
        true
    }

    /// A read's data is in the die's registers: it waits if the channel is busy.
    #[cold]
    pub(super) fn data_waits(&mut self, die: DieId, kind: TxKind) -> bool {
        let (ch, now) = (self.settings.geo.channel_of_die(die.0), self.q.now());
        if !self.backend.channel_busy(ch, now) {
            return false;
        }
        self.channel_queues()
            .wait(ch, die.0, kind.data_class(), now);
        self.arm_channel(ch);
        true
    }

    /// The channel's reservations ended: waiting data moves, else its chips are offered it
    /// in turn until one starts a command; the die just freed by a transfer asks first
    /// (`die_freed`; MQSim offers it in turn to all). Out of line: docs/performance.md.
    #[cold]
    #[inline(never)]
    pub(super) fn channel_idle(&mut self, ch: u32) {
        let now = self.q.now();
        self.channel_queues().disarm(ch);
        if self.backend.bus_free(ch) > now {
            return self.arm_channel(ch);
        }
        if let Some((d, ready)) = self.channel_queues().next_waiting(ch) {
            let (batch, n) = self.dies.batch(DieId(d));
            self.transfer_out(DieId(d), &batch[..n], ready);
            return self.arm_channel(ch);
        }
        if !self.channel_queues().take_wanted(ch) {
            return;
        }
        let g = &self.settings.geo;
        let (chips, dpc) = (g.chips_per_channel, g.dies_per_chip);
        // Where no suspension or background GC could start anything, a chip with nothing
        // queued, or busy with its dies run one at a time, is passed over.
        let pass = self.susp.is_none() && !self.gc_background;
        for _ in 0..chips {
            let first = (ch * chips + self.channel_queues().next_turn(ch, chips)) * dpc;
            let busy = self.serial_chips && self.dies.busy(DieId(first));
            if pass && (busy || self.tsu.chip_empty(first, dpc)) {
                continue;
            }
            if self.serial_chips {
                self.die_freed(DieId(first));
            } else {
                (first..first + dpc).for_each(|d| self.offer_die(DieId(d)));
            }
            if self.backend.bus_free(ch) > now {
                // The chips not offered it yet may have work.
                self.channel_queues().want(ch);
                break;
            }
        }
        if self.channel_queues().wanted(ch) {
            self.arm_channel(ch);
        }
    }

    #[inline]
    fn arm_channel(&mut self, ch: u32) {
        let (now, t) = (self.q.now(), self.backend.bus_free(ch).max(self.q.now()));
        if self.channel_queues().arm(ch, t, now) {
            self.at(t, Ev::ChannelIdle(ch));
        }
    }

    /// A transfer out ended and its die was freed: an arbitration due now runs here.
    pub(super) fn transfer_ended(&mut self, die: DieId) {
        let ch = self.settings.geo.channel_of_die(die.0);
        if self.channel_queues().transfer_ended(ch) {
            self.channel_idle(ch);
        }
    }

    fn channel_queues(&mut self) -> &mut crate::flash::ChannelQueues {
        self.backend.queues.as_mut().expect("data_first")
    }
}
