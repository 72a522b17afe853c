//! Workloads. Synthetic closed-loop flows for now; trace replay and open-loop arrivals plug in
//! beside `synthetic`.

pub mod synthetic;
