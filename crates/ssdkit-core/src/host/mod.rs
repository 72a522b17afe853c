//! Host side and host interface: the link between host memory and the device (PCIe packets,
//! a SATA-class serial link, or an ideal zero-time link) and the NVMe/SATA command steps
//! expressed as link messages. Queue state and fetch arbitration live in `nvme`.

pub mod link;
pub mod nvme;
