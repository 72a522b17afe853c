//! Workloads (docs/workloads.md): synthetic streams (`synthetic`), trace readers (`trace`) and
//! their replay policy (`replay`), and the flow that drives either into the host (`flow`);
//! `mqsim_random`: where MQSim's generator starts a seed's stream, for the import of its flows.

pub mod flow;
pub mod mqsim_random;
pub mod replay;
pub mod synthetic;
pub mod trace;

/// What a host request asks the device to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Op {
    Read,
    Write,
    /// NVMe Dataset Management deallocate (TRIM): whole logical pages in the range are
    /// unmapped; partial pages at the edges are left alone, as drives trim whole mapping units.
    Trim,
    /// NVMe Flush: makes completed writes durable. With no volatile write cache modelled it
    /// costs its command's host-interface path and firmware time only.
    Flush,
}
