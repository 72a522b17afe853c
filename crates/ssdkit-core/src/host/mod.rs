//! Host side and host interface logic: the requests the host has submitted, the link between
//! host memory and the device (`link`: PCIe packets, a SATA-class serial link, or an ideal
//! zero-time link) and the queues and command fetch of the device's host interface (`nvme`:
//! NVMe submission queues with QueueFetchSize and arbitration; SATA's one shared queue).
//! With a host model (`host.completion`), `interrupts` (MSI-X, coalescing, the ISR or a poll on
//! a host core) and `completion` (when the host has processed a completion, the application's
//! view, host buffer memory) decide what follows a completion entry.

pub mod completion;
pub mod interrupts;
pub mod link;
pub mod nvme;

use crate::engine::{Picoseconds, Slab};
use crate::ids::{FlowId, ReqId};
use crate::settings::Settings;
use crate::stats::breakdown::{CompleteSplit, Parts, SubmitSplit};
use crate::stats::run_hooks::CompletionRecord;
use crate::workload::synthetic::HostRequest;
use crate::workload::Op;
use link::Link;
use nvme::{DataPointerModel, FetchUnit};

/// One host request inside the simulator.
#[derive(Debug, Clone, Copy)]
pub struct Request {
    pub flow: FlowId,
    pub op: Op,
    pub start_sector: u64,
    pub sectors: u32,
    /// When the host queued it (its latency counts from here).
    pub submit_ps: Picoseconds,
    /// Submission order over the whole run: the request's id in logs.
    pub seq: u64,
}

impl Request {
    /// What the data cache is told of request `r` (this one).
    #[inline]
    pub fn io(&self, r: ReqId) -> crate::cache::Io {
        crate::cache::Io {
            req: r,
            flow: self.flow,
            start_sector: self.start_sector,
            sectors: self.sectors,
        }
    }

    /// Bytes of the request with sectors of `sector_bytes`.
    #[inline]
    pub fn bytes(&self, sector_bytes: u64) -> u64 {
        self.sectors as u64 * sector_bytes
    }
}

/// The host's queues and the device's host interface.
pub struct Host {
    link: Link,
    fetch: FetchUnit,
    sata: bool,
    /// `interface.sector_bytes`.
    sector_bytes: u64,
    /// `interface.pipelined_transfers`: data crosses the link a page at a time.
    pipelined: bool,
    /// `interface.data_pointers`: the PRP list or SGL segments read after a command.
    pointers: DataPointerModel,
    reqs: Slab<Request>,
    /// SATA: the HBA's processing time per submission and per completion, and when each of
    /// its two one-at-a-time stages is next free (MQSim's SATA_HBA).
    hba_ps: Picoseconds,
    hba_submit_free: Picoseconds,
    hba_complete_free: Picoseconds,
    /// The parts of the last `submit` and `complete`, for the latency breakdown.
    last_submit: SubmitSplit,
    last_complete: CompleteSplit,
    /// Record them (`run.latency_breakdown`).
    record: bool,
}

impl Host {
    pub fn new(s: &Settings) -> Self {
        let h = &s.host;
        Self {
            link: Link::new(&h.link),
            fetch: FetchUnit::new(h),
            sata: s.sata,
            pipelined: h.pipelined_transfers,
            pointers: DataPointerModel::new(h),
            sector_bytes: h.sector_bytes,
            reqs: Slab::new(),
            hba_ps: h.hba_ps,
            hba_submit_free: 0,
            hba_complete_free: 0,
            last_submit: SubmitSplit::default(),
            last_complete: CompleteSplit::default(),
            record: s.latency_breakdown,
        }
    }

    /// Through one of the HBA's stages: after what is ahead of it, `hba_ps` more.
    #[inline]
    fn hba(free: &mut Picoseconds, at: Picoseconds, ps: Picoseconds) -> Picoseconds {
        *free = at.max(*free) + ps;
        *free
    }

    /// The device-side queue of a flow: its own under NVMe, the shared one under SATA.
    #[inline]
    pub fn queue_of(&self, flow: FlowId) -> usize {
        if self.sata {
            0
        } else {
            flow.idx()
        }
    }

    /// The host queues a request now that arrived at `arrived` (earlier when an open-loop
    /// flow's queue was full), named `seq` in logs. Returns its id and when its doorbell
    /// reaches the device.
    pub fn submit(
        &mut self,
        now: Picoseconds,
        flow: FlowId,
        arrived: Picoseconds,
        r: HostRequest,
        seq: u64,
    ) -> (ReqId, Picoseconds) {
        let id = ReqId(self.reqs.insert(Request {
            flow,
            op: r.op,
            start_sector: r.start_sector,
            sectors: r.sectors,
            submit_ps: arrived,
            seq,
        }));
        let s0 = self.link.stall_ps;
        let rung = self.link.doorbell(now);
        let t = if self.hba_ps > 0 {
            Self::hba(&mut self.hba_submit_free, rung, self.hba_ps)
        } else {
            rung
        };
        if self.record {
            let stall = self.link.stall_ps - s0;
            self.last_submit = SubmitSplit {
                wire: rung - now - stall,
                stall,
                hba: t - rung,
            };
        }
        (id, t)
    }

    /// The doorbell of `r` reached the device: the request is visible to the fetch unit.
    pub fn announce(&mut self, r: ReqId) {
        let queue = self.queue_of(self.reqs.get(r.0).flow);
        self.fetch.announce(queue, r.0);
    }

    /// The next command the fetch unit takes, and when it is inside the device.
    /// Some submission queue holds a command the device knows of and has not fetched.
    #[inline]
    pub fn has_waiting(&self) -> bool {
        self.fetch.has_waiting()
    }

    /// The command is in when its SQE is and, with `interface.data_pointers`, its PRP list or
    /// SGL segments too (a controller that reads them before it starts the command).
    /// Returns the command, that time and how long its packets waited for the link.
    pub fn next_fetch(&mut self, now: Picoseconds) -> Option<(ReqId, Picoseconds, Picoseconds)> {
        let (_, r) = self.fetch.next_fetch()?;
        let s0 = self.link.stall_ps;
        let mut t = self.link.fetch_command(now);
        if !self.pointers.is_none() {
            let bytes = self.data_buffer_bytes(self.reqs.get(r));
            t = self.read_pointers(t, bytes);
        }
        Some((ReqId(r), t, self.link.stall_ps - s0))
    }

    // Out of line: without data pointers the fetch keeps only the test above.
    #[inline(never)]
    fn read_pointers(&mut self, t: Picoseconds, bytes: u64) -> Picoseconds {
        match self.pointers.list(bytes) {
            Some(list) => self.link.read_pointer_list(t, &list),
            None => t,
        }
    }

    /// Bytes of host memory a request's data buffer spans: its data, the 16-byte range of a
    /// TRIM (Dataset Management), nothing for a flush.
    #[inline]
    fn data_buffer_bytes(&self, r: &Request) -> u64 {
        match r.op {
            Op::Read | Op::Write => r.bytes(self.sector_bytes),
            Op::Trim => 16,
            Op::Flush => 0,
        }
    }

    /// Host memory held by the PRP list or SGL segments of a read or write of `bytes`
    /// (reported with the data buffers; a TRIM's 16-byte range needs no list).
    #[inline]
    pub fn pointer_list_memory(&self, op: Op, bytes: u64) -> u64 {
        match op {
            Op::Read | Op::Write => self.pointers.list_memory(bytes),
            _ => 0,
        }
    }

    /// Data crosses the link a page at a time (see `interface.pipelined_transfers`): reads
    /// send each page with `read_chunk`, writes fetch each page with `write_chunk`.
    #[inline]
    pub fn pipelined(&self) -> bool {
        self.pipelined
    }

    /// Whether the command of `r` fetches data (write data, a TRIM's ranges) before the
    /// firmware takes it (`command_arrived` returns a time).
    #[inline]
    pub fn data_before_firmware(&self, r: ReqId) -> bool {
        match self.reqs.get(r.0).op {
            Op::Read | Op::Flush => false,
            Op::Write => !self.pipelined,
            Op::Trim => true,
        }
    }

    /// The command of `r` is in the device. Reads go to the firmware at once (None), and so do
    /// writes whose data is fetched a page at a time after the firmware has split them; other
    /// writes and TRIMs first fetch their data (the 16-byte Dataset Management range for TRIM):
    /// Some(time it is in the device buffer, how long its packets waited for the link).
    pub fn command_arrived(
        &mut self,
        now: Picoseconds,
        r: ReqId,
    ) -> Option<(Picoseconds, Picoseconds)> {
        if !self.data_before_firmware(r) {
            return None;
        }
        let req = self.reqs.get(r.0);
        let bytes = match req.op {
            Op::Trim => 16,
            _ => req.bytes(self.sector_bytes),
        };
        let s0 = self.link.stall_ps;
        let t = self.link.fetch_write_data(now, bytes);
        Some((t, self.link.stall_ps - s0))
    }

    /// Pipelined writes: the device fetches `sectors` sectors of one page's write data, queued
    /// on the link behind everything asked for before. Returns when they are in the device
    /// buffer, and how long their packets waited for the link.
    #[inline]
    pub fn write_chunk(&mut self, now: Picoseconds, sectors: u32) -> (Picoseconds, Picoseconds) {
        let s0 = self.link.stall_ps;
        let t = self
            .link
            .fetch_write_data(now, sectors as u64 * self.sector_bytes);
        (t, self.link.stall_ps - s0)
    }

    /// Pipelined writes into the data cache: the device fetches the write data of `r` a page
    /// at a time (pages of `sectors_per_page`), each queued behind the one before. Returns
    /// when the last is in the device buffer.
    pub fn write_pages(
        &mut self,
        now: Picoseconds,
        r: ReqId,
        sectors_per_page: u32,
    ) -> Picoseconds {
        let req = *self.reqs.get(r.0);
        let mut data_in = now;
        for c in crate::frontend::split(req.start_sector, req.sectors, sectors_per_page) {
            (data_in, _) = self.write_chunk(now, c.sectors.count_ones());
        }
        data_in
    }

    /// Pipelined reads: `bytes` of one page, out of its die now, go to host memory. Returns
    /// when they are there.
    #[inline]
    pub fn read_chunk(&mut self, now: Picoseconds, bytes: u64) -> Picoseconds {
        self.link.read_data(now, bytes)
    }

    /// All flash work of `r` is done: the read data not sent yet and the completion entry go
    /// to the host. Pipelined, that is `last_page_bytes` (the page just out of its die, for a
    /// read; the others went with `read_chunk`); otherwise a read's whole data. Returns when
    /// the completion is in the host's completion queue.
    pub fn complete(&mut self, now: Picoseconds, r: ReqId, last_page_bytes: u64) -> Picoseconds {
        let bytes = if self.pipelined {
            last_page_bytes
        } else {
            let req = self.reqs.get(r.0);
            if req.op == Op::Read {
                req.bytes(self.sector_bytes)
            } else {
                0
            }
        };
        let s0 = self.link.stall_ps;
        let data_in = if bytes > 0 {
            self.link.read_data(now, bytes)
        } else {
            now
        };
        let s1 = self.link.stall_ps;
        let posted = self.link.post_completion(data_in);
        let s2 = self.link.stall_ps;
        let t = if self.hba_ps > 0 {
            Self::hba(&mut self.hba_complete_free, posted, self.hba_ps)
        } else {
            posted
        };
        if self.record {
            self.last_complete = CompleteSplit {
                data: data_in - now - (s1 - s0),
                completion: posted - data_in - (s2 - s1),
                stall: s2 - s0,
                hba: t - posted,
            };
        }
        t
    }

    /// Where the time of the last `submit` went (with `run.latency_breakdown`).
    #[inline]
    pub fn last_submit(&self) -> SubmitSplit {
        self.last_submit
    }

    /// Where the time of the last `complete` went (with `run.latency_breakdown`).
    #[inline]
    pub fn last_complete(&self) -> CompleteSplit {
        self.last_complete
    }

    /// An MSI-X message (a 4-byte posted write) goes to the host now; returns its arrival.
    pub fn msi(&mut self, now: Picoseconds) -> Picoseconds {
        self.link.msi(now)
    }

    /// The host writes a completion queue's head doorbell now.
    pub fn cq_doorbell(&mut self, now: Picoseconds) {
        self.link.doorbell(now);
    }

    /// The completion of `r` reached the host: the request leaves the device and its fetch
    /// slot is free.
    pub fn finish(&mut self, r: ReqId) -> Request {
        let req = *self.reqs.get(r.0);
        self.reqs.remove(r.0);
        self.fetch.release(self.queue_of(req.flow));
        req
    }

    /// The request log's record of `req`, completed at `now` (`steps`: its latency breakdown).
    pub fn record(
        &self,
        req: &Request,
        now: Picoseconds,
        steps: Option<Parts>,
    ) -> CompletionRecord {
        CompletionRecord {
            id: req.seq,
            flow: req.flow.0,
            op: req.op,
            offset_bytes: req.start_sector * self.sector_bytes,
            bytes: req.bytes(self.sector_bytes),
            submit_ps: req.submit_ps,
            complete_ps: now,
            steps: steps.map(Box::new),
        }
    }

    #[inline]
    pub fn request(&self, r: ReqId) -> &Request {
        self.reqs.get(r.0)
    }
    #[inline]
    pub fn request_mut(&mut self, r: ReqId) -> &mut Request {
        self.reqs.get_mut(r.0)
    }

    /// `interface.sector_bytes`.
    #[inline]
    pub fn sector_bytes(&self) -> u64 {
        self.sector_bytes
    }

    /// Requests submitted and not completed.
    pub fn outstanding(&self) -> usize {
        self.reqs.live()
    }

    /// Most requests of a flow's device queue inside the device at once.
    pub fn max_in_device(&self, flow: FlowId) -> u32 {
        self.fetch.max_in_device[self.queue_of(flow)]
    }
}
