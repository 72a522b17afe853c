//! What the FTL asks of the flash, and the state of a reclaim job: the vocabulary every
//! mapping scheme speaks to the rest of the crate (a leaf: it imports nothing of the FTL).
//!
//! The FTL decides; the simulator turns each [`FlashOp`] into a transaction, queues it by its
//! [`OpClass`], and reports back when it ends (`Ftl::reclaim_program_done`, `Ftl::erase_done`,
//! `Ftl::mapping_read_done`). Programs name no page: the FTL allocates it when the die is
//! scheduled (`Ftl::program_page`, `Ftl::reclaim_program`), on the stream of the op's class.

use crate::ids::{BlockId, Lpn, PlaneId, Ppn};
use crate::tsu::{Tx, TxKind};

/// A write stream: the frontier a page is programmed into, in each plane. Streams are indices
/// so that a scheme can open more of them (placement handles, an SLC region) without changing
/// the interface; every plane keeps one open block per stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct StreamId(pub u8);

impl StreamId {
    /// Host data (and translation pages of the cached map).
    pub const USER: StreamId = StreamId(0);
    /// Pages moved by reclaim (GC, wear levelling): kept apart from user data so that hot and
    /// cold data do not share blocks, and so that reclaim can always proceed.
    pub const RECLAIM: StreamId = StreamId(1);
    /// Streams the page scheme opens.
    pub const COUNT: usize = 2;

    #[inline]
    pub fn idx(self) -> usize {
        self.0 as usize
    }
}

/// Who a flash operation works for: the TSU queues it by class and statistics count it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpClass {
    /// Host data (a request's page, a data-cache fill or write-back).
    User,
    /// The mapping table's own pages (translation pages of the cached map).
    Mapping,
    /// A read of some sectors of a translation page (the mask): a cache of single entries
    /// (`ftl.cmt.granularity = "entry"`) moves only those off the die. A lookup reads the
    /// sector holding its entry (MQSim reads one sector, Address_Mapping_Unit_Page_Level.cpp:
    /// 1651-1652); a write-back reads the sectors holding the page's clean cached entries,
    /// none if it has none (`1586-1612`).
    MappingSectors(u64),
    /// Reclaim: GC victims, wear-levelling migrations (and, for block schemes, merges).
    Reclaim,
}

impl OpClass {
    /// The class of a user-path transaction's program: a translation page's write-back is
    /// the mapping table's, the rest host data.
    #[inline]
    pub fn of(kind: TxKind) -> Self {
        if kind == TxKind::MappingWrite {
            Self::Mapping
        } else {
            Self::User
        }
    }
}

/// One flash operation the FTL asks for, in the order it must be queued.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FlashOp {
    /// Read the page `ppn` holding `lpn` in `plane`. A reclaim read is followed by a program
    /// of the same page on the reclaim stream (`Ftl::reclaim_program`) once it ends; the reads
    /// of one reclaim job come together and are queued together.
    Read {
        class: OpClass,
        lpn: Lpn,
        ppn: Ppn,
        plane: PlaneId,
    },
    /// Program `lpn` in `plane`, at a page the FTL allocates when the die takes it. With
    /// `after_read`, it waits for the read of that page (a mapping write-back merging entries
    /// the cache does not hold): the simulator registers it with `Ftl::park_write`.
    Program {
        class: OpClass,
        lpn: Lpn,
        plane: PlaneId,
        after_read: bool,
    },
    /// Erase `block` of `plane` (the end of a reclaim job).
    Erase { plane: PlaneId, block: BlockId },
}

impl FlashOp {
    /// The transaction that carries the op to the TSU, `sectors` the page's whole bitmap: a
    /// reclaim read or an erase is GC work, any other read or program translation-page
    /// traffic (user pages come from requests, not from here).
    #[inline]
    pub fn tx(self, sectors: u64) -> Tx {
        match self {
            FlashOp::Read {
                class,
                lpn,
                ppn,
                plane,
            } => {
                let kind = match class {
                    OpClass::Reclaim => TxKind::GcRead,
                    _ => TxKind::MappingRead,
                };
                Tx {
                    lpn,
                    ppn,
                    sectors: match class {
                        OpClass::MappingSectors(mask) => mask,
                        _ => sectors,
                    },
                    ..Tx::new(kind, plane)
                }
            }
            FlashOp::Program {
                class, lpn, plane, ..
            } => {
                debug_assert_eq!(class, OpClass::Mapping, "user writes come from requests");
                Tx {
                    lpn,
                    sectors,
                    ..Tx::new(TxKind::MappingWrite, plane)
                }
            }
            FlashOp::Erase { plane, block } => Tx {
                block,
                ..Tx::new(TxKind::GcErase, plane)
            },
        }
    }

    /// A reclaim job's read: queued together with the job's other reads.
    #[inline]
    pub fn is_reclaim_read(self) -> bool {
        matches!(
            self,
            FlashOp::Read {
                class: OpClass::Reclaim,
                ..
            }
        )
    }
}

/// Where a plane is in its reclaim job.
///
/// ```text
///  Idle --begin (victim chosen, its valid pages listed)--> Moving { victim, pending }
///  Moving --move done x pending--> Erasing { victim } --erased--> Idle
/// ```
/// A victim with no valid page goes straight to Erasing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GcPhase {
    Idle,
    /// The victim's valid pages are being moved; `pending` moves are not finished.
    Moving {
        victim: BlockId,
        pending: u32,
    },
    /// Every move is done; the victim's erase is queued or running.
    Erasing {
        victim: BlockId,
    },
}

impl GcPhase {
    pub fn victim(self) -> Option<BlockId> {
        match self {
            GcPhase::Idle => None,
            GcPhase::Moving { victim, .. } | GcPhase::Erasing { victim } => Some(victim),
        }
    }
}
