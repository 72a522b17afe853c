//! A device a host program drives one request at a time: the integrated (execution-driven)
//! mode of the MQSim paper (FAST'18, section 6.2), which full-system simulators such as gem5
//! need. The same simulator as a batch run, with the configured flows' workloads replaced by
//! the program's submissions: each configured flow is one NVMe queue pair (its priority,
//! arbitration weight and plane pinning still apply) and the program picks the queue.
//!
//! Time only moves forward. `submit(t, ..)` first processes every event before `t`, then
//! queues the request at `t`; `run_until(t)` processes every event up to and including `t`.
//! So a request stream submitted here and the same stream replayed as a trace through the
//! batch run complete at the same picoseconds (checked by `tests/device.rs`); the one
//! difference possible is the order of a submission and another event at the very same
//! picosecond.
//!
//! A queue holds at most `interface.io_queue_depth` outstanding requests, as an NVMe
//! submission queue does; later submissions wait in the host, their latency counting from
//! the time they were submitted here, exactly as an open-loop trace flow's do.

use crate::config::Config;
use crate::engine::Picoseconds;
use crate::error::Error;
use crate::ids::FlowId;
use crate::settings::Settings;
use crate::sim::{CompletionRecord, Simulator};
use crate::workload::flow::Flow;
use crate::workload::synthetic::HostRequest;
use crate::workload::Op;
use std::path::Path;
use std::time::Instant;

/// One finished request, as `Device::drain` returns it.
pub type Completion = CompletionRecord;

impl CompletionRecord {
    pub fn latency_ps(&self) -> Picoseconds {
        self.complete_ps - self.submit_ps
    }
}

/// Steady-state rounds stop a batch run's workload; a host program's queues have no workload to
/// stop, and the program decides when it has seen enough.
fn refuse_rounds(c: &Config) -> Result<(), Error> {
    if c.steady_state.enabled {
        return Err(Error::Config(
            "key `steady_state.enabled` = true applies to batch runs (`ssdkit run`, `ssdkit.run`), not to a step-by-step Device; remove it".into(),
        ));
    }
    Ok(())
}

pub struct Device {
    sim: Simulator,
    config: Config,
    capacity_bytes: u64,
    next_id: u64,
    last_submit: Picoseconds,
    created: Instant,
}

impl Device {
    /// A device preconditioned as `c` says.
    pub fn new(c: &Config) -> Result<Self, Error> {
        refuse_rounds(c)?;
        let s = Settings::resolve(c);
        let mut ftl = crate::ftl::Ftl::new(&s);
        let rec = crate::ftl::precondition::run(&mut ftl, c)?;
        Ok(Self::assemble(c, s, ftl, rec))
    }

    /// A device whose state is loaded from a snapshot (`c`'s `[precondition]` is not used).
    pub fn from_snapshot(c: &Config, snapshot: &Path) -> Result<Self, Error> {
        refuse_rounds(c)?;
        let (ftl, rec) = crate::api::load_snapshot(c, snapshot)?;
        Ok(Self::assemble(c, Settings::resolve(c), ftl, rec))
    }

    /// `c` with `n` queue pairs: the last `[[flow]]` repeated (named `queue<i>`) until there
    /// are `n`, for a host that opens queues as it goes (an NBD server gives each connection
    /// one). Queues cannot be added to a built device: host arbitration, per-flow statistics
    /// and per-flow cache and mapping-table partitions are sized when it is built. The copies
    /// cover the same addresses as the last flow, so preconditioning a single-flow
    /// configuration is unchanged; per-flow `shares` must then name all `n` queues.
    pub fn widened(c: &Config, n: u32) -> Result<Config, Error> {
        let have = c.flows.len();
        if n == 0 || (n as usize) < have || n > 65535 {
            return Err(Error::Config(format!(
                "{n} queue pairs asked for: give {}..=65535 (at least one per configured [[flow]], of which there are {have})",
                have.max(1)
            )));
        }
        let mut w = c.clone();
        let Some(last) = w.flows.last().cloned() else {
            return Err(Error::Config(
                "the configuration has no [[flow]] to repeat as queue pairs; add one".into(),
            ));
        };
        for i in have..n as usize {
            let mut f = last.clone();
            f.name = format!("queue{i}");
            w.flows.push(f);
        }
        crate::config::validate::validate(&w).map_err(|m| {
            Error::Config(format!(
                "with {n} queue pairs (each a copy of the last [[flow]]): {m}"
            ))
        })?;
        Ok(w)
    }

    fn assemble(
        c: &Config,
        s: Settings,
        ftl: crate::ftl::Ftl,
        precondition: crate::result::PreconditionRecord,
    ) -> Self {
        let flows = s
            .flows
            .iter()
            .map(|f| {
                Flow::external(
                    c.interface.io_queue_depth,
                    c.interface.sector_bytes,
                    f.planes.clone(),
                )
            })
            .collect();
        let capacity_bytes = s.sizes.capacity_bytes;
        let mut sim = Simulator::assemble_with(c, s, ftl, precondition, flows);
        // Every completion is kept for `drain`.
        sim.done.keep_log();
        Self {
            sim,
            config: c.clone(),
            capacity_bytes,
            next_id: 0,
            last_submit: 0,
            created: Instant::now(),
        }
    }

    /// Logical capacity: offsets and sizes must stay inside it.
    pub fn capacity_bytes(&self) -> u64 {
        self.capacity_bytes
    }

    /// Bytes per logical sector (`interface.sector_bytes`): offsets and sizes are multiples
    /// of it.
    pub fn sector_bytes(&self) -> u64 {
        self.config.interface.sector_bytes as u64
    }

    /// Queue pairs (the configured flows).
    pub fn queues(&self) -> u32 {
        self.sim.flows.len() as u32
    }

    /// Current simulated time.
    pub fn now_ps(&self) -> Picoseconds {
        self.sim.now()
    }

    /// Time of the earliest pending event (a completion, a flash operation's end, a
    /// controller timer), or None when nothing is scheduled: a driver that follows the wall
    /// clock sleeps until then, or until its next submission if that comes first.
    /// `run_until(next)` processes it.
    pub fn next_event_ps(&self) -> Option<Picoseconds> {
        self.sim.q.peek_time()
    }

    /// Requests submitted and not yet completed (including those waiting in the host for
    /// room in their submission queue).
    pub fn outstanding(&self) -> u64 {
        self.next_id - self.sim.done.total()
    }

    /// Queues a request at `at_ps` (not before the last submission or the current time) on
    /// queue pair `queue`; returns its id (0, 1, ... in submission order). A flush takes no
    /// range (`offset_bytes` and `bytes` 0).
    pub fn submit(
        &mut self,
        at_ps: Picoseconds,
        op: Op,
        offset_bytes: u64,
        bytes: u64,
        queue: u32,
    ) -> Result<u64, Error> {
        self.check(at_ps, op, offset_bytes, bytes, queue)?;
        // Everything strictly before the submission happens first.
        self.advance_before(at_ps)?;
        let id = self.next_id;
        self.next_id += 1;
        self.last_submit = at_ps;
        let sector = self.sector_bytes();
        let req = HostRequest {
            op,
            start_sector: offset_bytes / sector,
            sectors: (bytes / sector) as u32,
        };
        self.submit_now(id, req, FlowId(queue))?;
        Ok(id)
    }

    /// Processes every event strictly before `t`, then moves the clock to `t`.
    fn advance_before(&mut self, t: Picoseconds) -> Result<(), Error> {
        if t > 0 {
            self.sim.run_through(t - 1, |_| Ok(()))?;
        }
        self.sim.q.advance_to(t);
        Ok(())
    }

    /// Request `id` on queue pair `queue` now: submitted at once when the queue has room,
    /// otherwise held in the host until it has.
    fn submit_now(&mut self, id: u64, req: HostRequest, queue: FlowId) -> Result<(), Error> {
        let now = self.sim.now();
        self.sim.flows[queue.idx()].push_external(now, id, req);
        self.sim.pump(queue);
        match self.sim.failure.take() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    fn check(
        &self,
        at_ps: Picoseconds,
        op: Op,
        offset_bytes: u64,
        bytes: u64,
        queue: u32,
    ) -> Result<(), Error> {
        let bad = |m: String| Err(Error::Request(m));
        let now = self.sim.now().max(self.last_submit);
        if at_ps < now {
            return bad(format!(
                "submit at {at_ps} ps is before the device's current time {now} ps: requests are accepted in non-decreasing time"
            ));
        }
        if queue >= self.queues() {
            return bad(format!(
                "queue {queue} does not exist: the configuration has {} queue pair(s), 0..={} (one per [[flow]])",
                self.queues(),
                self.queues() - 1
            ));
        }
        if op == Op::Flush {
            if offset_bytes != 0 || bytes != 0 {
                return bad(format!(
                    "a flush takes no range: offset {offset_bytes} and bytes {bytes} must be 0"
                ));
            }
            return Ok(());
        }
        let sector = self.sector_bytes();
        if !offset_bytes.is_multiple_of(sector) || !bytes.is_multiple_of(sector) {
            return bad(format!(
                "offset {offset_bytes} and size {bytes} bytes must be multiples of the {sector}-byte sector (`interface.sector_bytes`)"
            ));
        }
        // Sizes are counted in sectors in a u32, as NVMe's 16-bit block count per command
        // would be far smaller; this only guards the arithmetic.
        let max_bytes = u32::MAX as u64 * sector;
        if bytes == 0 || bytes > max_bytes {
            return bad(format!(
                "size {bytes} bytes is outside {sector}..={max_bytes} (whole sectors)"
            ));
        }
        if offset_bytes
            .checked_add(bytes)
            .is_none_or(|end| end > self.capacity_bytes)
        {
            return bad(format!(
                "range {offset_bytes}+{bytes} bytes goes past the device's logical capacity of {} bytes",
                self.capacity_bytes
            ));
        }
        Ok(())
    }

    /// Processes every event up to and including `t_ps`; the clock is then `t_ps`.
    pub fn run_until(&mut self, t_ps: Picoseconds) -> Result<(), Error> {
        self.sim.run_until(t_ps)
    }

    /// Runs until every submitted request has completed (and GC queued meanwhile is done).
    /// A device that cannot finish is an error naming its state.
    pub fn run_to_idle(&mut self) -> Result<(), Error> {
        self.sim.run_through(Picoseconds::MAX, |_| Ok(()))?;
        if self.outstanding() > 0 {
            return Err(Error::Simulation(format!(
                "device stalled at {} ps with {} requests outstanding and no event pending; {}",
                self.sim.now(),
                self.outstanding(),
                self.sim.stall_report()
            )));
        }
        Ok(())
    }

    /// The requests completed since the last drain, in completion order.
    pub fn drain(&mut self) -> Vec<Completion> {
        let mut out = Vec::new();
        self.sim.done.drain_log(&mut out);
        out
    }

    /// Like `drain`, appending to `out` (no allocation once `out` has grown).
    pub fn drain_into(&mut self, out: &mut Vec<Completion>) {
        self.sim.done.drain_log(out);
    }

    /// The result document of everything so far (per queue: the flows of the result).
    pub fn result(&self) -> serde_json::Value {
        self.sim
            .result_document(&self.config, self.created.elapsed().as_secs_f64())
    }

    /// `result` as its type, for a driver that adds its own record (`ssdkit serve`).
    pub fn result_record(&self) -> crate::result::RunResult {
        self.sim
            .result(&self.config, self.created.elapsed().as_secs_f64(), false)
    }
}
