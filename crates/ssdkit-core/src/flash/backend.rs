use super::{ChannelQueues, Geometry, Timing};
use crate::engine::Picoseconds;

/// Operation counts of the back end, by kind: the result document's `device.flash`.
#[derive(
    Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
pub struct BackendStats {
    /// Page reads executed on the array (a multi-plane read counts one per plane).
    pub page_reads: u64,
    pub page_programs: u64,
    pub block_erases: u64,
    /// Commands that used more than one plane.
    pub multiplane_reads: u64,
    pub multiplane_programs: u64,
    pub multiplane_erases: u64,
    /// Bytes moved on channel buses (commands excluded).
    pub bus_bytes: u64,
    /// Programs from the page register (copyback), included in `page_programs`.
    pub copyback_programs: u64,
}

/// Channel buses and the controller's issue slot. Both are FIFO resources reserved when an
/// operation asks for them: a request made now for a slot later queues behind everything
/// reserved before it (no back-filling of gaps). Dies are tracked by the scheduler that owns
/// their queues; this type computes when each phase of an operation ends.
pub struct Backend {
    pub geo: Geometry,
    pub timing: Timing,
    bus_free: Vec<Picoseconds>,
    bus_last_chip: Vec<u32>,
    /// The latency model of multi-channel, multi-way SSDs (Intel X25-M): the controller issues
    /// one page operation per channel-switch delay.
    issue_free: Picoseconds,
    pub stats: BackendStats,
    /// The parts of the last operation started and of the last transfer out, for the
    /// latency breakdown.
    pub last_op: OpSplit,
    /// Array time of the last program or erase started (its array phase ends at the time
    /// returned), for program/erase suspension.
    pub last_array: Picoseconds,
    pub last_xfer: XferSplit,
    /// Record `last_op` and `last_xfer` (`run.latency_breakdown`): off, the hot path skips
    /// the stores.
    pub record: bool,
    /// `flash.bus.arbitration = "data_first"` (None: "first_come").
    pub queues: Option<ChannelQueues>,
}

/// Where the time from starting a die operation to the end of its array phase went: waits
/// for the controller's issue slot and the channel bus; command/address cycles with the
/// channel- and way-switch delays; data moved into the die (programs); the array phase.
/// The four sum to the array end minus the start.
#[derive(Debug, Clone, Copy, Default)]
pub struct OpSplit {
    pub wait: Picoseconds,
    pub cmd: Picoseconds,
    pub data: Picoseconds,
    pub array: Picoseconds,
}

/// A transfer out of the page registers: its wait for the channel (and a way switch), and
/// the data's time on the bus.
#[derive(Debug, Clone, Copy, Default)]
pub struct XferSplit {
    pub wait: Picoseconds,
    pub data: Picoseconds,
}

impl Backend {
    pub fn new(geo: Geometry, timing: Timing) -> Self {
        Self {
            bus_free: vec![0; geo.channels as usize],
            bus_last_chip: vec![u32::MAX; geo.channels as usize],
            issue_free: 0,
            stats: BackendStats::default(),
            last_op: OpSplit::default(),
            last_array: 0,
            last_xfer: XferSplit::default(),
            record: false,
            queues: timing.data_first.then(|| ChannelQueues::new(geo.channels)),
            geo,
            timing,
        }
    }

    /// When the channel's last reservation ends.
    #[inline]
    pub fn bus_free(&self, ch: u32) -> Picoseconds {
        self.bus_free[ch as usize]
    }

    /// Whether a command for `die` waits for its channel now: under `"data_first"`, while the
    /// channel moves data or has data waiting (a command asked for under `"first_come"`
    /// reserves the channel at once).
    #[inline]
    pub fn command_waits(&self, die: u32, now: Picoseconds) -> bool {
        self.queues.is_some() && self.channel_busy(self.geo.channel_of_die(die), now)
    }

    /// `"data_first"`: the channel moves data now or has data waiting.
    pub fn channel_busy(&self, ch: u32, now: Picoseconds) -> bool {
        self.bus_free[ch as usize] > now || self.queues.as_ref().is_some_and(|q| q.has_waiting(ch))
    }

    #[inline]
    fn issue(&mut self, now: Picoseconds, switch_ps: Picoseconds) -> Picoseconds {
        if switch_ps == 0 {
            return now;
        }
        let start = now.max(self.issue_free);
        self.issue_free = start + switch_ps;
        start + switch_ps
    }

    /// Reserves the die's channel for `dur` from no earlier than `at`; returns the end time
    /// and the wait for the bus (the way switch excluded).
    #[inline]
    fn bus(&mut self, die: u32, at: Picoseconds, dur: Picoseconds) -> (Picoseconds, Picoseconds) {
        let ch = self.geo.channel_of_die(die) as usize;
        let chip = self.geo.chip_of_die(die);
        let mut start = at.max(self.bus_free[ch]);
        let wait = start - at;
        if self.bus_last_chip[ch] != chip {
            if self.bus_last_chip[ch] != u32::MAX {
                start += self.timing.way_switch_ps;
            }
            self.bus_last_chip[ch] = chip;
        }
        self.bus_free[ch] = start + dur;
        (start + dur, wait)
    }

    /// Records the parts of an operation started at `now`: `issued` is when the controller's
    /// issue slot let it go (after the channel switch), `bus_end`/`bus_wait` from `bus`,
    /// `data` the part of the bus time that moved page data, `array` the array phase.
    #[inline]
    fn split(
        &mut self,
        now: Picoseconds,
        issued: Picoseconds,
        switch_ps: Picoseconds,
        (bus_end, bus_wait): (Picoseconds, Picoseconds),
        data: Picoseconds,
        array: Picoseconds,
    ) -> Picoseconds {
        if !self.record {
            return bus_end + array;
        }
        let issue_wait = issued - switch_ps - now;
        let wait = issue_wait + bus_wait;
        self.last_op = OpSplit {
            wait,
            cmd: bus_end - now - wait - data,
            data,
            array,
        };
        bus_end + array
    }

    /// Starts a (multi-plane) read of `planes` pages at page offset `page`: command/address
    /// cycles for each plane, then the array sense. Returns when the data sits in the page
    /// registers.
    pub fn start_read(
        &mut self,
        now: Picoseconds,
        die: u32,
        page: u32,
        planes: u32,
    ) -> Picoseconds {
        let sw = self.timing.switch_read_ps;
        let t = self.issue(now, sw);
        let bus = self.bus(die, t, self.timing.read_cmd_ps * planes as u64);
        self.stats.page_reads += planes as u64;
        if planes > 1 {
            self.stats.multiplane_reads += 1;
        }
        let array = self.timing.read_ps[self.timing.page_type[page as usize] as usize];
        self.split(now, t, sw, bus, 0, array)
    }

    /// Moves `sectors` sectors out of the die's registers to the controller. `ready`: when
    /// the data reached the registers (`now`, unless it waited for the channel under
    /// `flash.bus.arbitration = "data_first"`): the wait counts from then. (Always inline:
    /// one caller, on every read's path.)
    #[inline(always)]
    pub fn transfer_out(
        &mut self,
        now: Picoseconds,
        ready: Picoseconds,
        die: u32,
        sectors: u32,
    ) -> Picoseconds {
        self.stats.bus_bytes += self.geo.sector_bytes_of(sectors as u64);
        let dur = self.xfer_ps(sectors);
        let (end, _) = self.bus(die, now, dur);
        if let Some(q) = self.queues.as_mut() {
            q.transfer(self.geo.channel_of_die(die), end);
        }
        if self.record {
            // The wait includes a way switch: nothing but the data moves.
            self.last_xfer = XferSplit {
                wait: end - dur - ready,
                data: dur,
            };
        }
        end
    }

    #[inline]
    fn xfer_ps(&self, sectors: u32) -> Picoseconds {
        let spp = self.geo.sectors_per_page;
        let (pages, rest) = self.geo.pages_and_sectors(sectors);
        pages as u64 * self.timing.xfer_ps[spp as usize] + self.timing.xfer_ps[rest as usize]
    }

    /// Starts a (multi-plane) program: for each plane command/address cycles and a full page
    /// of data on the bus (with `flash.bus.program_data = "written_sectors"`, the `sectors()`
    /// its writes carry, when known: not 0), then the array program. Returns when the
    /// program ends.
    pub fn start_program(
        &mut self,
        now: Picoseconds,
        die: u32,
        page: u32,
        planes: u32,
        sectors: impl FnOnce() -> u32,
    ) -> Picoseconds {
        let sw = self.timing.switch_write_ps;
        let t = self.issue(now, sw);
        let spp = self.geo.sectors_per_page;
        let written = if self.timing.program_written_sectors {
            sectors()
        } else {
            0
        };
        let (data, bytes) = if written > 0 {
            (
                self.xfer_ps(written),
                self.geo.sector_bytes_of(written as u64),
            )
        } else {
            (
                self.timing.xfer_ps[spp as usize] * planes as u64,
                planes as u64 * self.geo.page_size as u64,
            )
        };
        let bus = self.bus(die, t, self.timing.program_cmd_ps * planes as u64 + data);
        self.stats.page_programs += planes as u64;
        self.stats.bus_bytes += bytes;
        if planes > 1 {
            self.stats.multiplane_programs += 1;
        }
        let array = self.timing.program_ps[self.timing.page_type[page as usize] as usize];
        self.last_array = array;
        self.split(now, t, sw, bus, data, array)
    }

    /// Starts the program half of a copyback: command/address cycles only, the data is
    /// already in the die's page register. Returns when the program ends.
    pub fn start_copyback_program(&mut self, now: Picoseconds, die: u32, page: u32) -> Picoseconds {
        let t = self.issue(now, self.timing.switch_write_ps);
        let (end, _) = self.bus(die, t, self.timing.program_cmd_ps);
        self.stats.page_programs += 1;
        self.stats.copyback_programs += 1;
        self.last_array = self.timing.program_ps[self.timing.page_type[page as usize] as usize];
        end + self.last_array
    }

    /// Starts a (multi-plane) erase. Returns when it ends.
    pub fn start_erase(&mut self, now: Picoseconds, die: u32, planes: u32) -> Picoseconds {
        let t = self.issue(now, self.timing.switch_write_ps);
        let (end, _) = self.bus(die, t, self.timing.erase_cmd_ps * planes as u64);
        self.stats.block_erases += planes as u64;
        if planes > 1 {
            self.stats.multiplane_erases += 1;
        }
        self.last_array = self.timing.erase_ps;
        end + self.timing.erase_ps
    }
}
