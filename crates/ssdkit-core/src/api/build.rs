//! Building a simulator: resolving the settings, opening the flows' request sources, giving
//! the device its state (preconditioned, or loaded from a snapshot) and making one of each
//! component. This lives with the drivers rather than in `sim`, because where the device
//! state and the requests come from is the driver's choice (a batch run preconditions or
//! loads a snapshot and replays the configured flows; a `Device` takes a host program's
//! submissions), while `sim` only wires the components it is handed.

use crate::config::{CachePrecondition, CompletionMode, Config};
use crate::engine::EventQueue;
use crate::error::Error;
use crate::flash::{Backend, Dies};
use crate::frontend::Firmware;
use crate::ftl::Ftl;
use crate::host::completion::HostSide;
use crate::host::Host;
use crate::result::{PreconditionRecord, RandomStreams};
use crate::settings::Settings;
use crate::sim::Simulator;
use crate::stats::completions::{Completions, GcOwners};
use crate::stats::run_marks::RunMarks;
use crate::tsu::suspension::SuspensionUnit;
use crate::tsu::{SchedulingPolicy, Tsu};
use crate::workload::flow::Flow;

impl Simulator {
    /// A simulator whose device is preconditioned as configured.
    pub fn new(c: &Config) -> Result<Self, Error> {
        Self::new_checked(c, &mut || Ok(()))
    }

    /// [`Simulator::new`], calling `check` while preconditioning (see
    /// `ftl::precondition::run_checked`).
    pub fn new_checked(
        c: &Config,
        check: &mut dyn FnMut() -> Result<(), Error>,
    ) -> Result<Self, Error> {
        let s = Settings::resolve(c);
        // Open the traces first: a missing file should not cost a preconditioning.
        let flows = Flow::all(c, &s)?;
        let mut ftl = Ftl::new(&s);
        let rec = crate::ftl::precondition::run_checked(&mut ftl, c, check)?;
        Ok(Self::assemble_configured(c, s, ftl, rec, flows))
    }

    /// A simulator over a given device state (preconditioned or loaded from a snapshot).
    pub fn with_ftl(c: &Config, ftl: Ftl, precondition: PreconditionRecord) -> Result<Self, Error> {
        let s = Settings::resolve(c);
        let flows = Flow::all(c, &s)?;
        Ok(Self::assemble_configured(c, s, ftl, precondition, flows))
    }

    /// `assemble_with` for the configured flows, whose writes the page map can expect.
    fn assemble_configured(
        c: &Config,
        s: Settings,
        mut ftl: Ftl,
        precondition: PreconditionRecord,
        flows: Vec<Flow>,
    ) -> Self {
        if let Some(w) = Flow::expected_pages_written(&s) {
            ftl.expect_user_writes(w.pages, w.partial_pages);
        }
        Self::assemble_with(c, s, ftl, precondition, flows)
    }

    /// A simulator over the device state `ftl` whose requests come from `flows` (the
    /// configured ones, or a `Device`'s queue pairs).
    pub(crate) fn assemble_with(
        c: &Config,
        s: Settings,
        mut ftl: Ftl,
        precondition: PreconditionRecord,
        flows: Vec<Flow>,
    ) -> Self {
        let geo = s.geo;
        let n = flows.len();
        ftl.begin_run(n);
        ftl.set_unmapped_reads(s.ftl.unmapped_reads);
        let start = ftl.sample(0);
        let cmt_on = ftl.map_cached();
        // A cached map writes a translation page back only after an entry changed. Where
        // the flows only read and reads change no entry (on an empty device, as MQSim's
        // files start), no write-back joins the flows' queues, and flows of one priority
        // class run on one queue (`Tsu::new`: 13 % of the loop of MQSim's 128 KiB
        // sequential reads).
        let map_kept = cmt_on
            && flows.iter().all(Flow::reads_only)
            && c.cache.precondition != CachePrecondition::Dirty
            && ftl.reads_keep_map();
        if map_kept {
            ftl.keep_map();
        }
        let mut sim = Self {
            marks: RunMarks::new(&s, c.run.end, n, start),
            q: EventQueue::new(),
            host: Host::new(&s),
            firmware: Firmware::new(&s),
            backend: Backend::new(geo, s.timing.clone()),
            ftl,
            tsu: Tsu::new(
                &s,
                c.flash.multiplane && geo.planes_per_die > 1,
                SchedulingPolicy::for_ftl(&c.ftl),
                c.tsu.policy,
                c.flows.iter().map(|f| f.priority.class()).collect(),
                cmt_on && !map_kept,
            ),
            owners: GcOwners::for_flows(n, s.sizes.logical_pages),
            cache: s.cache.as_ref().map(crate::cache::DataCache::new),
            dies: Dies::new(
                geo.dies(),
                (!c.flash.die_interleaving && geo.dies_per_chip > 1).then_some(geo.dies_per_chip),
            ),
            serial_chips: !c.flash.die_interleaving && geo.dies_per_chip > 1,
            susp: s
                .suspension
                .as_ref()
                .map(|t| Box::new(SuspensionUnit::new(t, geo.dies()))),
            gc_background: c.ftl.gc_background,
            cmt_on,
            parked: Default::default(),
            ftl_ops: Vec::new(),
            ftl_reads: Vec::new(),
            host_side: (s.host.completion.mode != CompletionMode::None)
                .then(|| Box::new(HostSide::new(&s.host.completion))),
            bd: c.run.latency_breakdown.then(|| {
                Box::new(crate::stats::breakdown::Tracker::new(
                    n,
                    geo.dies() as usize,
                ))
            }),
            flows,
            failure: None,
            done: Completions::new(n),
            progress_at: 0,
            precondition,
            random_streams: RandomStreams::for_config(c),
            settings: s,
        };
        sim.backend.record = c.run.latency_breakdown;
        if c.tsu.write_offsets == crate::config::WriteOffsets::AtQueue {
            sim.tsu.offsets_at_queue();
        }
        if c.cache.precondition == CachePrecondition::Dirty {
            let k = sim.cache.as_mut().expect("a dirty cache is on");
            k.precondition_for(c, &sim.settings);
        }
        // A state whose user writes are blocked at a reserve with GC idle (a snapshot, or untimed
        // writes that stopped there) would wait for a trigger that never comes: collect there
        // from the start, as the timed run would have.
        for p in 0..sim.settings.geo.planes() {
            sim.ftl.reclaim_if_wanted(crate::ids::PlaneId(p));
            sim.queue_ftl_ops();
        }
        sim
    }

    // Two shortcuts of the event path, switchable so that tests compare each with the long way.

    /// Whether a read to an idle die with nothing queued starts without the queue.
    #[doc(hidden)]
    pub fn direct_reads(&self) -> bool {
        self.tsu.direct_reads()
    }

    /// Switches the direct start of reads (tests compare it with the queued path).
    #[doc(hidden)]
    pub fn set_direct_reads(&mut self, on: bool) {
        self.tsu.set_direct_reads(on);
    }

    /// Whether priority classes of one class run on one queue (`Tsu::set_one_queue`).
    #[doc(hidden)]
    pub fn one_queue(&self) -> bool {
        self.tsu.one_queue()
    }

    /// Runs priority classes on one queue or on their own (tests compare the two).
    #[doc(hidden)]
    pub fn set_one_queue(&mut self, on: bool) {
        self.tsu.set_one_queue(on);
    }

    /// Switches the firmware's booking at fetch (tests compare it with booking at arrival).
    #[doc(hidden)]
    pub fn set_firmware_at_fetch(&mut self, on: bool) {
        self.firmware.set_books_at_fetch(on);
    }
}
