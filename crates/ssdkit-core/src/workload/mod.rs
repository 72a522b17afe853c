//! Workloads. Synthetic closed-loop flows for now; trace replay and open-loop arrivals plug in
//! beside `synthetic`.

pub mod synthetic;

/// What a host request asks the device to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Op {
    Read,
    Write,
    /// NVMe Dataset Management deallocate (TRIM): whole logical pages in the range are
    /// unmapped; partial pages at the edges are left alone, as drives trim whole mapping units.
    Trim,
}
