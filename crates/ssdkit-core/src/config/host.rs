//! `[host]`: how the host learns of completions (NVMeSim, Choi et al.: MSI, the interrupt
//! service routine and its deferred procedure call, or polling) and what that costs on the
//! host's CPU cores. Response time stays the MQSim paper's (submission-queue insertion to
//! completion-queue insertion); these costs give the latency an application sees.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use ssdkit_macros::ranges;

/// `host.completion`.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum CompletionMode {
    /// The host sees a completion when its entry is in the completion queue: no interrupt,
    /// no host CPU time, no completion-queue doorbell (MQSim's host).
    #[default]
    None,
    /// MSI-X: the device posts an interrupt message after the completion entry (or after
    /// `coalesce_completions` of them, or `coalesce_time_us`, as NVMe's Interrupt Coalescing
    /// feature); a host core runs the ISR (`isr_us`, `queue_scan_us` per queue on the vector)
    /// and processes each completion (`completion_us`), then writes the completion-queue
    /// head doorbell.
    Interrupt,
    /// The host polls: the core that owns the queue finds each completion (`poll_us`),
    /// processes it (`completion_us`) and writes the head doorbell; no interrupt.
    Polled,
}

/// `[host]`.
#[ranges]
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct HostConfig {
    /// "none" (default), "interrupt" or "polled". The other keys apply to "interrupt" and
    /// "polled" only (each names which) and must stay at their defaults otherwise.
    pub completion: CompletionMode,
    /// Host CPU cores that service completions; queue (flow) q belongs to core q mod cores.
    /// Default 0: one core per queue. 0..=65535.
    #[range(min = 0, max = 65535)]
    pub cores: u32,
    /// Interrupt vectors ("interrupt"): queue q signals vector q mod vectors, and vector v
    /// runs on core v mod cores; an ISR scans every queue of its vector. Default 0: one
    /// vector per queue. 0..=2048 (MSI-X).
    #[range(min = 0, max = 2048)]
    pub vectors: u32,
    /// ISR time per interrupt, microseconds ("interrupt"). Default 1.0 (an assumption:
    /// NVMeSim gives no figure); 0..=1e6.
    #[range(min = 0.0, max = 1e6)]
    pub isr_us: f64,
    /// ISR time per queue the vector serves (the scan of its completion queue), microseconds
    /// ("interrupt"). Default 0.1 (assumption); 0..=1e6.
    #[range(min = 0.0, max = 1e6)]
    pub queue_scan_us: f64,
    /// Host time per completion entry (the DPC's work: the entry, its submission entry and
    /// buffers), microseconds ("interrupt" and "polled"). Default 0.5 (assumption); 0..=1e6.
    #[range(min = 0.0, max = 1e6)]
    pub completion_us: f64,
    /// Time of the poll that finds a completion, microseconds ("polled"). Default 0.2
    /// (assumption); 0..=1e6.
    #[range(min = 0.0, max = 1e6)]
    pub poll_us: f64,
    /// Interrupt Coalescing aggregation threshold ("interrupt"): completions per interrupt.
    /// Default 1 (an interrupt per completion); 1..=256 (NVMe's 8-bit, 0's based field).
    #[range(min = 1, max = 256, note = "1: an interrupt per completion")]
    pub coalesce_completions: u32,
    /// Interrupt Coalescing aggregation time ("interrupt"), microseconds: an interrupt goes
    /// this long after the first completion it would carry even when fewer than
    /// `coalesce_completions` are pending. Default 0 (no timer: with a threshold above 1
    /// that is refused, as completions could wait forever); 0..=25500 (NVMe: 100 us units).
    #[range(min = 0.0, max = 25500.0)]
    pub coalesce_time_us: f64,
}

impl Default for HostConfig {
    fn default() -> Self {
        Self {
            completion: CompletionMode::None,
            cores: 0,
            vectors: 0,
            isr_us: 1.0,
            queue_scan_us: 0.1,
            completion_us: 0.5,
            poll_us: 0.2,
            coalesce_completions: 1,
            coalesce_time_us: 0.0,
        }
    }
}
