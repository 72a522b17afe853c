//! How the host learns of completions, after the completion entry is in its queue (NVMeSim,
//! Choi et al., Figures 2b and 5b): an MSI-X message per interrupt (optionally coalesced, as
//! NVMe's Interrupt Coalescing feature), the interrupt service routine on the core of its
//! vector (a fixed time, a scan of every completion queue on the vector, and the work per
//! completion), or polling by the core that owns the queue. A core does one thing at a time,
//! so interrupts and polls of queues on one core queue behind each other. The sim turns the
//! actions returned here into link packets and events.

use crate::config::CompletionMode;
use crate::engine::Picoseconds;
use crate::ids::FlowId;
use crate::result::HostResult;
use crate::settings::CompletionSettings;
use crate::workload::Op;

/// A completion the host has not processed yet.
#[derive(Debug, Clone, Copy)]
pub struct Pending {
    pub flow: FlowId,
    pub op: Op,
    pub submit_ps: Picoseconds,
    /// When its completion entry reached the host's completion queue.
    pub cq_ps: Picoseconds,
    pub bytes: u64,
}

impl Pending {
    /// Request `r` (of `bytes`), its completion entry in the host's queue at `cq_ps`.
    #[inline]
    pub fn of(r: &super::Request, cq_ps: Picoseconds, bytes: u64) -> Self {
        Self {
            flow: r.flow,
            op: r.op,
            submit_ps: r.submit_ps,
            cq_ps,
            bytes,
        }
    }
}

/// What the simulator must do after a completion entry reached the host.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Nothing yet: the completion waits for more (coalescing) or for a timer already set.
    Wait,
    /// Send the vector's MSI now (`fire` gives the batch).
    Fire(u32),
    /// Set the vector's aggregation timer for this time.
    Timer(u32, Picoseconds),
    /// The batch is processed at this time (polling).
    DoneAt(u32, Picoseconds),
}

pub struct HostCpu {
    mode: CompletionMode,
    cores_free: Vec<Picoseconds>,
    busy_ps: Vec<Picoseconds>,
    vectors: usize,
    queues_per_vector: Vec<u64>,
    isr_ps: Picoseconds,
    scan_ps: Picoseconds,
    completion_ps: Picoseconds,
    poll_ps: Picoseconds,
    coalesce: usize,
    coalesce_ps: Picoseconds,
    /// Per vector: completions not yet signalled, and when its timer is due.
    pending: Vec<Vec<Pending>>,
    deadline: Vec<Picoseconds>,
    /// Signalled or polled batches not yet processed, by id, with their vector (or queue).
    batches: Vec<Option<(u32, Vec<Pending>)>>,
    free_batches: Vec<u32>,
    /// Completions between their completion entry and the end of their processing.
    in_host: usize,
    interrupts: u64,
    timer_interrupts: u64,
    polls: u64,
    completions: u64,
    max_batch: u64,
    cq_doorbells: u64,
}

impl HostCpu {
    pub fn new(h: &CompletionSettings) -> Self {
        let vectors = h.vectors;
        let mut queues_per_vector = vec![0u64; vectors];
        for q in 0..h.queues {
            queues_per_vector[q % vectors] += 1;
        }
        Self {
            mode: h.mode,
            cores_free: vec![0; h.cores],
            busy_ps: vec![0; h.cores],
            vectors,
            queues_per_vector,
            isr_ps: h.isr_ps,
            scan_ps: h.scan_ps,
            completion_ps: h.completion_ps,
            poll_ps: h.poll_ps,
            coalesce: h.coalesce,
            coalesce_ps: h.coalesce_ps,
            pending: vec![Vec::new(); vectors],
            deadline: vec![0; vectors],
            batches: Vec::new(),
            free_batches: Vec::new(),
            in_host: 0,
            interrupts: 0,
            timer_interrupts: 0,
            polls: 0,
            completions: 0,
            max_batch: 0,
            cq_doorbells: 0,
        }
    }

    /// Completions the host has not finished processing.
    #[inline]
    pub fn in_host(&self) -> usize {
        self.in_host
    }

    fn core_of(&self, queue_or_vector: usize) -> usize {
        queue_or_vector % self.cores_free.len()
    }

    fn new_batch(&mut self, tag: u32, items: Vec<Pending>) -> u32 {
        self.max_batch = self.max_batch.max(items.len() as u64);
        match self.free_batches.pop() {
            Some(b) => {
                self.batches[b as usize] = Some((tag, items));
                b
            }
            None => {
                self.batches.push(Some((tag, items)));
                (self.batches.len() - 1) as u32
            }
        }
    }

    /// Runs `dur` on `core` from no earlier than `now`; returns when it ends.
    fn occupy(&mut self, core: usize, now: Picoseconds, dur: Picoseconds) -> Picoseconds {
        let start = now.max(self.cores_free[core]);
        let end = start.saturating_add(dur);
        self.cores_free[core] = end;
        self.busy_ps[core] += dur;
        end
    }

    /// The completion entry of `p`, from queue `queue`, is in the host's completion queue.
    pub fn cq_inserted(&mut self, now: Picoseconds, queue: usize, p: Pending) -> Action {
        self.in_host += 1;
        self.completions += 1;
        match self.mode {
            CompletionMode::None => unreachable!("no host model with host.completion = none"),
            CompletionMode::Polled => {
                self.polls += 1;
                let core = self.core_of(queue);
                let end = self.occupy(core, now, self.poll_ps + self.completion_ps);
                let b = self.new_batch(queue as u32, vec![p]);
                Action::DoneAt(b, end)
            }
            CompletionMode::Interrupt => {
                let v = queue % self.vectors;
                self.pending[v].push(p);
                if self.pending[v].len() >= self.coalesce {
                    Action::Fire(v as u32)
                } else if self.pending[v].len() == 1 {
                    self.deadline[v] = now.saturating_add(self.coalesce_ps);
                    Action::Timer(v as u32, self.deadline[v])
                } else {
                    Action::Wait
                }
            }
        }
    }

    /// The vector's aggregation timer set for `due` went off: Some(batch) to signal, or None
    /// when its completions went with an interrupt already.
    pub fn timer(&mut self, v: u32, due: Picoseconds) -> Option<u32> {
        let vi = v as usize;
        if self.pending[vi].is_empty() || self.deadline[vi] != due {
            return None;
        }
        self.timer_interrupts += 1;
        Some(self.fire(v))
    }

    /// The vector's pending completions go with one MSI: their batch.
    pub fn fire(&mut self, v: u32) -> u32 {
        self.interrupts += 1;
        let items = std::mem::take(&mut self.pending[v as usize]);
        self.new_batch(v, items)
    }

    /// The MSI of batch `b` reached the host: the ISR runs on the vector's core, then the DPC
    /// processes each completion. Returns when that ends.
    pub fn msi_arrived(&mut self, now: Picoseconds, b: u32) -> Picoseconds {
        let (v, n) = {
            let (v, items) = self.batches[b as usize].as_ref().expect("live batch");
            (*v as usize, items.len() as u64)
        };
        let dur = self.isr_ps + self.scan_ps * self.queues_per_vector[v] + self.completion_ps * n;
        let core = self.core_of(v);
        self.occupy(core, now, dur)
    }

    /// The host has processed batch `b`: its completions, for the application.
    pub fn take(&mut self, b: u32) -> Vec<Pending> {
        let (_, items) = self.batches[b as usize].take().expect("live batch");
        self.free_batches.push(b);
        self.in_host -= items.len();
        items
    }

    pub fn count_doorbell(&mut self) {
        self.cq_doorbells += 1;
    }

    pub fn result(&self, host_memory_bytes: u64) -> HostResult {
        HostResult {
            completion: self.mode,
            cores: self.cores_free.len() as u32,
            vectors: if self.mode == CompletionMode::Interrupt {
                self.vectors as u32
            } else {
                0
            },
            completions: self.completions,
            interrupts: self.interrupts,
            timer_interrupts: self.timer_interrupts,
            completions_per_interrupt: if self.interrupts > 0 {
                (self.completions - self.pending.iter().map(|p| p.len() as u64).sum::<u64>()) as f64
                    / self.interrupts as f64
            } else {
                0.0
            },
            largest_batch: self.max_batch,
            polls: self.polls,
            cq_doorbells: self.cq_doorbells,
            core_busy_us: self.busy_ps.iter().map(|&p| p as f64 / 1e6).collect(),
            host_memory_bytes,
        }
    }
}
