//! `[tsu]`: the transaction scheduling unit: which queued transaction a free die starts next
//! (the policy), and program/erase suspension (the MQSim paper, FAST'18, section 4.2.3, after
//! Wu and He, "Reducing SSD Read Latency via NAND Flash Program and Erase Suspension",
//! FAST'12).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use ssdkit_macros::ranges;

/// `tsu.policy`: the scheduling policy at each die, one variant per policy carrying its own
/// parameters. Written as a table tagged by `type`
/// (`tsu.policy = { type = "flin", epoch_us = 5000 }`) or as the bare name for the policy
/// with its default parameters (`tsu.policy = "flin"`).
#[ranges]
#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum TsuPolicy {
    /// User reads and writes in the order they reached the die (a write whose plane is at
    /// its GC reserve does not hold back later operations), as classic simulators and simple
    /// firmware do.
    Fifo {},
    /// A queued read goes before any queued write (MQSim's OUT_OF_ORDER): reads are short and
    /// a host waits on them.
    OutOfOrder {},
    /// Out of order, with the NVMe priority class of each flow carried to the die queues
    /// (MQSim's PRIORITY_OUT_OF_ORDER): reads before writes; among reads (and among writes),
    /// urgent first, then high, medium and low in turns of `weight_high`, `weight_medium`,
    /// `weight_low` operations.
    PriorityOutOfOrder(ClassWeights),
    /// Fairness-aware scheduling in the manner of FLIN (Tavakkol et al., ISCA 2018; MQSim
    /// names it but cannot run it): per-flow intensity per epoch, queues reordered so that
    /// low-intensity flows go first and slowdowns stay even, priority classes served in
    /// turns as "priority_out_of_order", and the read or the write whose wait is longer for
    /// its service time served first, with GC charged to the flows that write.
    Flin(FlinConfig),
}

impl Default for TsuPolicy {
    fn default() -> Self {
        TsuPolicy::OutOfOrder {}
    }
}

impl TsuPolicy {
    /// Operations per turn for the high, medium and low priority classes, for a policy that
    /// queues user transactions per NVMe priority class; None for one that does not.
    pub fn class_weights(&self) -> Option<[u32; 3]> {
        match self {
            TsuPolicy::PriorityOutOfOrder(w) => Some(w.class_weights()),
            TsuPolicy::Flin(f) => Some(f.class_weights()),
            TsuPolicy::Fifo {} | TsuPolicy::OutOfOrder {} => None,
        }
    }

    /// The policy's name, its `type`.
    pub fn name(&self) -> String {
        super::tagged::type_name(self)
    }
}

/// Declares a policy's parameter table with the priority classes' weights as its last keys,
/// so that every policy with classes declares them once (name, range, docs). The keys sit in
/// the policy's own table: `#[serde(flatten)]` of a `ClassWeights` field would do the same,
/// but serde cannot flatten into a struct that denies unknown keys, and a mistyped key must
/// stay an error.
macro_rules! with_class_weights {
    ($(#[$($meta:tt)*])* $vis:vis struct $name:ident { $($body:tt)* }) => {
        $(#[$($meta)*])*
        $vis struct $name {
            $($body)*
            /// Operations a die gives the high class per turn. Default 4 (MQSim's weight for
            /// HIGH); 1..=256.
            #[range(min = 1, max = 256)]
            pub weight_high: u32,
            /// Operations per turn for medium. Default 2; 1..=256.
            #[range(min = 1, max = 256)]
            pub weight_medium: u32,
            /// Operations per turn for low. Default 1; 1..=256.
            #[range(min = 1, max = 256)]
            pub weight_low: u32,
        }

        impl $name {
            /// Operations per turn of the high, medium and low classes.
            pub fn class_weights(&self) -> [u32; 3] {
                [self.weight_high, self.weight_medium, self.weight_low]
            }
        }
    };
}

with_class_weights! {
/// `tsu.policy = { type = "priority_out_of_order", ... }`: operations a die gives each
/// priority class per turn (urgent always goes first).
#[ranges]
#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(deny_unknown_fields, default)]
pub struct ClassWeights {}
}

impl Default for ClassWeights {
    fn default() -> Self {
        Self {
            weight_high: 4,
            weight_medium: 2,
            weight_low: 1,
        }
    }
}

with_class_weights! {
/// `tsu.policy = { type = "flin", ... }`: FLIN's constants (MQSim's TSU_FLIN by default) and
/// the turns of its priority classes.
#[ranges]
#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct FlinConfig {
    /// Length of an epoch of intensity counting, microseconds. Default 10000 (10 ms, as the
    /// FLIN paper and MQSim's TSU_FLIN); 1..=1e7.
    #[range(min = 1.0, max = 1e7)]
    pub epoch_us: f64,
    /// Bytes of reads per epoch, over the whole device, from which a flow is high-intensity
    /// (each die's share: divided by the dies and the page size, at least one page). Default
    /// 33554432 (32 MiB, MQSim's TSU_FLIN); >= 1.
    #[range(min = 1, max = u64::MAX)]
    pub alpha_read_bytes: u64,
    /// Bytes of writes per epoch from which a flow is high-intensity. Default 262144
    /// (256 KiB, MQSim's TSU_FLIN); >= 1.
    #[range(min = 1, max = u64::MAX)]
    pub alpha_write_bytes: u64,
    /// Fairness (min / max of the flows' mean estimated slowdowns in a queue) below which
    /// the most slowed high-intensity flow's new transaction moves forward. Default 0.6
    /// (MQSim's TSU_FLIN); 0..=1.
    #[range(min = 0.0, max = 1.0)]
    pub fairness_threshold: f64,
}
}

impl Default for FlinConfig {
    fn default() -> Self {
        let w = ClassWeights::default();
        Self {
            epoch_us: 10_000.0,
            alpha_read_bytes: 32 << 20,
            alpha_write_bytes: 256 << 10,
            fairness_threshold: 0.6,
            weight_high: w.weight_high,
            weight_medium: w.weight_medium,
            weight_low: w.weight_low,
        }
    }
}

/// `tsu.suspension`.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum SuspensionMode {
    /// No suspension (what stock MQSim does in effect: its suspension never triggers).
    #[default]
    None,
    /// A read may suspend a program.
    Program,
    /// A read (or a write) may suspend an erase.
    Erase,
    /// Both.
    ProgramErase,
}

impl SuspensionMode {
    pub fn program(self) -> bool {
        matches!(self, SuspensionMode::Program | SuspensionMode::ProgramErase)
    }
    pub fn erase(self) -> bool {
        matches!(self, SuspensionMode::Erase | SuspensionMode::ProgramErase)
    }
}

/// `tsu.write_offsets`.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum WriteOffsets {
    /// A write's page is the plane's next free page when the die programs it; a multi-plane
    /// program joins writes of planes whose next free pages have the same offset, among the
    /// first 4 x planes queued (a controller choosing its page when it programs).
    #[default]
    AtProgram,
    /// MQSim's pairing: MQSim fixes a write's page when it translates the address
    /// (Address_Mapping_Unit_Page_Level.cpp:604, Flash_Block_Manager.cpp:26). Here a write
    /// is given that page's offset when it joins its die's queue (the plane's next free page
    /// counting the writes queued before it), a multi-plane program joins queued writes of
    /// the die's other planes given the same offset, anywhere in the queue
    /// (TSU_Base.cpp:84-95), and is timed at that offset; each write still lands on its
    /// plane's next free page when programmed.
    AtQueue,
}

/// `[tsu]`.
#[ranges]
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct TsuConfig {
    /// Scheduling policy at each die, a table tagged by `type` with the policy's parameters,
    /// or its name alone for its defaults: "out_of_order" (default: reads before writes),
    /// "fifo" (reads and writes in arrival order), "priority_out_of_order" (reads before
    /// writes, each by the flows' NVMe priority classes; `weight_high`, `weight_medium`,
    /// `weight_low`) or "flin" (fairness-aware, FLIN, ISCA 2018; `epoch_us`,
    /// `alpha_read_bytes`, `alpha_write_bytes`, `fairness_threshold` and the weights).
    /// Translation-page reads of the cached mapping table go first under every policy; GC's
    /// place is set by `ftl.gc_preemptible`.
    #[serde(deserialize_with = "super::tagged::name_or_table")]
    #[schemars(schema_with = "super::tagged::schema::<TsuPolicy>")]
    #[range(nested)]
    pub policy: TsuPolicy,
    /// Program/erase suspension: "none" (default), "program", "erase" or "program_erase".
    /// A read that reaches a die in the array phase of a program (erase) whose remaining time
    /// is at least `program_suspend_above_us` (`erase_suspend_above_us`) suspends it: the
    /// die pays `suspend_program_us` (`suspend_erase_us`), runs the read, pays the resume
    /// cost and finishes the operation's remaining time. One suspended operation per die at
    /// a time; at most `max_suspensions` per operation.
    pub suspension: SuspensionMode,
    /// Time to suspend a program, microseconds: the die does nothing else meanwhile. Default
    /// 100 (MQSim's Suspend_Program_Time); 0..=1e6.
    #[range(min = 0.0, max = 1e6)]
    pub suspend_program_us: f64,
    /// Time to suspend an erase, microseconds. Default 700 (MQSim's Suspend_Erase_Time);
    /// 0..=1e6.
    #[range(min = 0.0, max = 1e6)]
    pub suspend_erase_us: f64,
    /// Time to resume a suspended program, microseconds. Default 0 (MQSim charges none);
    /// 0..=1e6.
    #[range(min = 0.0, max = 1e6)]
    pub resume_program_us: f64,
    /// Time to resume a suspended erase, microseconds. Default 0 (MQSim); 0..=1e6.
    #[range(min = 0.0, max = 1e6)]
    pub resume_erase_us: f64,
    /// A read suspends a program only if at least this much of its array time is left,
    /// microseconds. Default 100 (MQSim's Preferred_suspend_write_time_for_read); at least
    /// `suspend_program_us` (a suspension must be able to save time); <= 1e6.
    #[range(min = 0.0, max = 1e6)]
    pub program_suspend_above_us: f64,
    /// A read suspends an erase only if at least this much of it is left, microseconds.
    /// Default 700 (MQSim's Preferred_suspend_erase_time_for_read); at least
    /// `suspend_erase_us`; <= 1e6.
    #[range(min = 0.0, max = 1e6)]
    pub erase_suspend_above_us: f64,
    /// Whether a user write may suspend an erase too (a program to another block while the
    /// erase waits), with the same threshold. Default false (MQSim allows it with
    /// Preferred_suspend_erase_time_for_write; most NAND parts do not).
    pub writes_suspend_erase: bool,
    /// Most suspensions of one operation. Default 1; 1..=255.
    #[range(min = 1, max = 255)]
    pub max_suspensions: u32,
    /// When a write's page offset is fixed, which decides the writes a multi-plane program
    /// joins: "at_program" (default: the plane's next free page when the die programs it) or
    /// "at_queue" (MQSim: when the write joins its die's queue; a program joins queued
    /// writes of other planes given the same offset, anywhere in the queue). "at_queue"
    /// needs `flash.multiplane` with several planes per die, NAND and page-level mapping.
    // At its default the key is left out of results, which stay as before it existed.
    #[serde(skip_serializing_if = "is_at_program")]
    pub write_offsets: WriteOffsets,
}

fn is_at_program(w: &WriteOffsets) -> bool {
    *w == WriteOffsets::AtProgram
}

impl Default for TsuConfig {
    fn default() -> Self {
        Self {
            policy: TsuPolicy::default(),
            suspension: SuspensionMode::None,
            suspend_program_us: 100.0,
            suspend_erase_us: 700.0,
            resume_program_us: 0.0,
            resume_erase_us: 0.0,
            program_suspend_above_us: 100.0,
            erase_suspend_above_us: 700.0,
            writes_suspend_erase: false,
            max_suspensions: 1,
            write_offsets: WriteOffsets::AtProgram,
        }
    }
}
