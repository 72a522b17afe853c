//! `flash.bus.arbitration = "data_first"`: MQSim's channel arbitration. Under "first_come"
//! (`Backend::bus`) a command or a transfer reserves the channel when it asks, so a command
//! asked for while the channel moves data can go ahead of data that becomes ready later.
//! MQSim instead holds a page's data in its die's registers while the channel is busy and,
//! each time the channel frees, moves the oldest waiting data of a translation-page read,
//! else of a user read, else of a GC read (`NVM_PHY_ONFI_NVDDR2.cpp:463-487`, queued at
//! `:505-521`); only a channel with no data waiting takes a command, offered to the chips of
//! the channel in turn (`TSU_Base.cpp:47-58`, `TSU_OutofOrder.cpp:208-224`). Measured on
//! MQSim's 128 KiB sequential reads: translation pages come back sooner, so more lookups find
//! no read of their page in flight and issue one.
//!
//! MQSim arbitrates inside the event that frees the channel: the end of a data transfer
//! (`NVM_PHY_ONFI_NVDDR2.cpp:463-487`, after the transaction is delivered) or of a command.
//! A transfer's end is the simulator's `DieXferDone` of its die, so an arbitration due then
//! runs there; a command's end has no event of its own, so a channel-idle event marks it.
//! Measured on MQSim's 128 KiB sequential reads under `--mqsim-compat`: 23 % fewer events.
//!
//! This type holds the decisions: what waits, what goes next, which chip is offered the
//! channel first, and whether an arbitration waits for a transfer's end or for an event.
//! The simulator holds the events.

use std::collections::VecDeque;

/// Whose data waits, in the order the channel serves it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DataClass {
    Mapping = 0,
    User = 1,
    Gc = 2,
}

#[derive(Debug, Clone, Default)]
struct Channel {
    /// Dies whose read data waits in their registers, by class, oldest first, with when it
    /// became ready (the wait shows in the latency breakdown).
    waiting: [VecDeque<(u32, u64)>; 3],
    /// A die found the channel busy with work to start.
    wanted: bool,
    /// A channel-idle event is pending.
    armed: bool,
    /// The chip offered the channel first when it next goes idle (MQSim's
    /// `Round_robin_turn_of_channel`).
    turn: u32,
    /// When the channel's last transfer out of a die's registers ends.
    xfer_end: u64,
    /// The armed arbitration runs at that transfer's end, in its `DieXferDone`.
    at_xfer: bool,
}

/// Per channel: data waiting to move, and dies waiting to start a command.
#[derive(Debug, Clone)]
pub struct ChannelQueues {
    ch: Vec<Channel>,
}

impl ChannelQueues {
    pub fn new(channels: u32) -> Self {
        Self {
            ch: vec![Channel::default(); channels as usize],
        }
    }

    pub fn has_waiting(&self, ch: u32) -> bool {
        self.ch[ch as usize].waiting.iter().any(|q| !q.is_empty())
    }

    /// The die's read data, ready since `since`, waits for the channel.
    pub fn wait(&mut self, ch: u32, die: u32, class: DataClass, since: u64) {
        self.ch[ch as usize].waiting[class as usize].push_back((die, since));
    }

    /// The die whose data moves next, and since when it waited: the oldest of the first
    /// class with any waiting.
    pub fn next_waiting(&mut self, ch: u32) -> Option<(u32, u64)> {
        self.ch[ch as usize]
            .waiting
            .iter_mut()
            .find_map(|q| q.pop_front())
    }

    /// A die has work to start once the channel is idle.
    pub fn want(&mut self, ch: u32) {
        self.ch[ch as usize].wanted = true;
    }

    pub fn wanted(&self, ch: u32) -> bool {
        self.ch[ch as usize].wanted
    }

    /// Whether any die wanted the channel; clears the flag (the dies are offered it now).
    pub fn take_wanted(&mut self, ch: u32) -> bool {
        std::mem::take(&mut self.ch[ch as usize].wanted)
    }

    /// An arbitration is due when the channel frees at `t` (> `now` while it is busy): true
    /// if the simulator must schedule a channel-idle event at `t`; false if one is pending,
    /// or if `t` ends a transfer out, whose `DieXferDone` runs it (`transfer_ended`).
    pub fn arm(&mut self, ch: u32, t: u64, now: u64) -> bool {
        let c = &mut self.ch[ch as usize];
        if std::mem::replace(&mut c.armed, true) {
            return false;
        }
        c.at_xfer = t > now && t == c.xfer_end;
        !c.at_xfer
    }

    /// A transfer out of a die's registers holds the channel until `end`.
    pub fn transfer(&mut self, ch: u32, end: u64) {
        self.ch[ch as usize].xfer_end = end;
    }

    /// A transfer out ended: whether the arbitration armed for its end runs now.
    pub fn transfer_ended(&mut self, ch: u32) -> bool {
        std::mem::take(&mut self.ch[ch as usize].at_xfer)
    }

    /// The arbitration armed runs now.
    pub fn disarm(&mut self, ch: u32) {
        self.ch[ch as usize].armed = false;
    }

    /// The chip (0..chips) offered the channel next; the turn moves on.
    pub fn next_turn(&mut self, ch: u32, chips: u32) -> u32 {
        let c = &mut self.ch[ch as usize];
        let chip = c.turn;
        c.turn = if chip + 1 >= chips { 0 } else { chip + 1 };
        chip
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mapping_data_goes_first_then_user_then_gc_each_oldest_first() {
        let mut q = ChannelQueues::new(2);
        q.wait(1, 7, DataClass::Gc, 10);
        q.wait(1, 3, DataClass::User, 11);
        q.wait(1, 5, DataClass::User, 12);
        q.wait(1, 6, DataClass::Mapping, 13);
        assert!(q.has_waiting(1) && !q.has_waiting(0));
        let order: Vec<(u32, u64)> = std::iter::from_fn(|| q.next_waiting(1)).collect();
        assert_eq!(order, [(6, 13), (3, 11), (5, 12), (7, 10)]);
        assert!(!q.has_waiting(1));
    }

    #[test]
    fn events_are_armed_once_and_chips_take_turns() {
        let mut q = ChannelQueues::new(1);
        assert!(q.arm(0, 5, 0));
        assert!(!q.arm(0, 5, 0));
        q.disarm(0);
        assert!(q.arm(0, 5, 0));
        assert_eq!(
            (0..5).map(|_| q.next_turn(0, 3)).collect::<Vec<_>>(),
            [0, 1, 2, 0, 1]
        );
        assert!(!q.take_wanted(0));
        q.want(0);
        assert!(q.wanted(0) && q.take_wanted(0) && !q.wanted(0));
    }

    /// An arbitration due when a transfer out ends waits for that transfer's end, once; one
    /// due at another time (a command's end), or now, is an event.
    #[test]
    fn an_arbitration_at_a_transfers_end_runs_there() {
        let mut q = ChannelQueues::new(2);
        q.transfer(1, 40);
        assert!(!q.arm(1, 40, 10), "runs at the transfer's end");
        assert!(!q.arm(1, 40, 20), "armed already");
        assert!(!q.transfer_ended(0), "another channel's");
        assert!(q.transfer_ended(1) && !q.transfer_ended(1));
        q.disarm(1);
        assert!(q.arm(1, 55, 40), "a command's end: an event");
        q.disarm(1);
        assert!(q.arm(1, 40, 40), "now: an event");
        assert!(!q.transfer_ended(1));
    }
}
