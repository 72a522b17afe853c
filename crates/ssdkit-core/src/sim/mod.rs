//! The simulator: the owner of every component, the event enum, and dispatch. Events are
//! plain data naming a request, a die or a flow by index; each handler asks the components
//! of the layers involved what happens and when, and schedules what follows, so no component
//! holds a reference to another and the whole state is flat.
//!
//! - `dispatch`: the handler of each event, along the request path;
//! - `cache`: the data cache's wiring (its plans into transactions and events);
//! - `gc`: turning the FTL's GC steps into transactions;
//! - `mapping`: the cached mapping table's lookups, translation-page reads and write-backs;
//! - `run`: the run loop (`start`, `run_until`, `run_through`) and the watchdog;
//! - `completion`: the host model's wiring.
//!
//! The drivers live above: `api` builds a simulator (`api::build`), runs it to the end of its
//! workload (`api::batch`) and gathers the result document (`api::report`); `device` drives it
//! a request at a time.

mod cache;
mod channel;
mod completion;
mod dispatch;
mod gc;
mod mapping;
mod run;

pub use crate::result::SCHEMA_VERSION;
pub use crate::stats::run_hooks::{
    BuildCheck, CompletionRecord, LogMode, LogSink, Progress, ProgressHook, RunHooks, RunOutput,
};
pub use run::WATCHDOG_EVENTS;

use crate::engine::{EventQueue, Picoseconds};
use crate::flash::{Backend, Dies};
use crate::frontend::Firmware;
use crate::ftl::Ftl;
use crate::host::Host;
use crate::ids::{DieId, FlowId, ReqId, TxId};
use crate::settings::Settings;
use crate::stats::completions::{Completions, GcOwners};
use crate::stats::run_marks::RunMarks;
use crate::tsu::Tsu;
use crate::workload::flow::Flow;

// The event enum and its packing into a queue key (`engine::packed_events!`).
crate::engine::packed_events! {
    /// The host's announcement of the request reached the device.
    0 => Doorbell(ReqId),
    /// The command of the request is inside the device.
    1 => CommandArrived(ReqId),
    /// The write data (or TRIM range list) of the request is in the device buffer: TRIMs,
    /// and writes when `interface.pipelined_transfers` is off.
    2 => WriteDataArrived(ReqId),
    /// Pipelined writes: the host data of the write transaction's page is in the device
    /// buffer.
    3 => WriteChunkArrived(TxId),
    /// The firmware finished processing the request; its transactions go to the dies.
    4 => FirmwareDone(ReqId),
    /// The array phase (sense, program or erase) of the die's operation ended.
    5 => DieArrayDone(DieId),
    /// The die's program or erase is suspended (the suspension's time is over): the die may
    /// start the read that suspended it.
    6 => DieSuspended(DieId),
    /// The data of the die's read operation is out of the page registers.
    7 => DieXferDone(DieId),
    /// The completion of the request is in the host's completion queue.
    8 => Completed(ReqId),
    /// Data cache: the write data of the request is in DRAM.
    9 => CacheWriteIn(ReqId),
    /// Data cache: the read sectors the cache held are out of DRAM.
    10 => CacheReadOut(ReqId),
    /// An open-loop flow has a request due (or a closed-loop flow reached its start time).
    11 => Arrival(FlowId),
    /// Host model: the MSI of a batch of completions reached the host.
    12 => MsiArrived(u32),
    /// Host model: a vector's Interrupt Coalescing aggregation time is up.
    13 => CoalesceTimer(u32),
    /// Host model: the host has processed a batch of completions (ISR and DPC, or a poll).
    14 => HostDone(u32),
    /// `flash.bus.arbitration = "data_first"`: the channel's reservations ended; waiting
    /// data or a command takes it (`sim::channel`).
    15 => ChannelIdle(u32),
}

/// One of each component and the state of the run. The fields are `pub(crate)` because the
/// drivers (`api`, `device`) build the simulator, hand it requests and read what a run
/// leaves.
pub struct Simulator {
    pub(crate) q: EventQueue<Ev>,
    pub(crate) settings: Settings,
    pub(crate) host: Host,
    pub(crate) firmware: Firmware,
    pub ftl: Ftl,
    pub(crate) tsu: Tsu,
    /// The DRAM data cache; None with `cache.mode = "off"`.
    pub(crate) cache: Option<Box<crate::cache::DataCache>>,
    pub(crate) backend: Backend,
    pub(crate) dies: Dies,
    /// Per-flow GC accounting (runs of 2 to 255 flows): which flow last wrote each logical
    /// page, and the GC page moves of each flow's data.
    pub(crate) owners: Option<Box<GcOwners>>,
    /// Program/erase suspension; None with `tsu.suspension = "none"`.
    pub(crate) susp: Option<Box<crate::tsu::suspension::SuspensionUnit>>,
    /// `flash.die_interleaving = false`: a chip runs one die operation at a time.
    pub(crate) serial_chips: bool,
    pub(crate) gc_background: bool,
    /// The map is cached (`ftl.cmt.mode` other than "ideal").
    pub(crate) cmt_on: bool,
    /// Page transactions waiting for their translation page.
    pub(crate) parked: crate::engine::Parking<mapping::Parked>,
    /// Reused buffer of the flash work the FTL decided (`gc::queue_ftl_ops`).
    pub(crate) ftl_ops: Vec<crate::ftl::FlashOp>,
    /// Reused buffer of a reclaim job's reads, queued together (`gc::queue_ftl_ops`).
    pub(crate) ftl_reads: Vec<TxId>,
    /// The host's processing of completions; None with `host.completion = "none"`.
    pub(crate) host_side: Option<Box<crate::host::completion::HostSide>>,
    /// The latency breakdown's stamps and statistics; None unless `run.latency_breakdown`.
    pub(crate) bd: Option<Box<crate::stats::breakdown::Tracker>>,
    pub(crate) flows: Vec<Flow>,
    /// First error of a flow's request source (a bad trace line) or of the model; stops the
    /// run.
    pub(crate) failure: Option<crate::Error>,
    /// Per-flow completion counters and the request log.
    pub(crate) done: Completions,
    /// Events processed when a user transaction or a request last finished (the watchdog
    /// counts from there).
    pub(crate) progress_at: u64,
    /// What preconditioning did (or which snapshot the state came from), for the result.
    pub(crate) precondition: crate::result::PreconditionRecord,
    /// Where each random stream came from, for the result.
    pub(crate) random_streams: crate::result::RandomStreams,
    /// The time-series windows, steady-state rounds and the run's end.
    pub(crate) marks: RunMarks,
}

impl Simulator {
    /// Schedules an event; a time before the clock is a model error that stops the run.
    #[inline]
    fn at(&mut self, t: Picoseconds, ev: Ev) {
        if let Err(e) = self.q.schedule(t, ev) {
            self.past_event(e, ev);
        }
    }

    // Out of line so that `at`, called several times per event, stays a push and a compare.
    #[cold]
    #[inline(never)]
    fn past_event(&mut self, e: crate::engine::PastEvent, ev: Ev) {
        self.failure.get_or_insert(crate::Error::Simulation(format!(
            "{e} while handling {ev:?}"
        )));
    }

    /// Crosses the run's marks at `t`, the time of the event about to be handled
    /// (`stats::run_marks`).
    #[cold]
    #[inline(never)]
    pub(crate) fn cross_marks(&mut self, t: Picoseconds) {
        let crossed = self
            .marks
            .cross(t, self.ftl.sample(self.backend.stats.page_programs));
        if let Some(e) = crossed.error {
            self.failure.get_or_insert(e);
        }
        if crossed.stop_workload {
            // What is in flight completes, and the run ends as its workload would have.
            for f in &mut self.flows {
                f.stop();
            }
            if self.host.outstanding() == 0 {
                self.maybe_last_completion(self.q.now());
            }
        }
    }

    /// Called when a completion leaves nothing outstanding: if no flow will submit again, this
    /// was the run's last completion.
    #[cold]
    #[inline(never)]
    pub(crate) fn maybe_last_completion(&mut self, now: Picoseconds) {
        if self.marks.workload_done() || !self.flows.iter().all(|f| f.ended(now)) {
            return;
        }
        let sample = self.ftl.sample(self.backend.stats.page_programs);
        let events = self.q.processed();
        self.marks
            .last_completion(now, events, &self.backend.stats, sample);
    }

    /// Requests inside the simulator (submitted, not completed).
    pub fn outstanding(&self) -> usize {
        self.host.outstanding() + self.host_side.as_ref().map_or(0, |h| h.in_host())
    }

    /// The state of the first dies with queued work, for a stall message.
    pub(crate) fn stall_report(&self) -> String {
        let ftl = &self.ftl;
        self.tsu.stall_report(&self.dies, |p| ftl.describe_plane(p))
    }
}
