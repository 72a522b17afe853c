//! Configuration of the device's host side and flash back end: `[interface]`, `[pcie]`,
//! `[flash]` and `[flash.bus]`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use ssdkit_macros::ranges;

#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum InterfaceType {
    /// NVMe: one SQ/CQ pair per flow over PCIe, fetch bounded by `queue_fetch_size`.
    Nvme,
    /// SATA-class: one shared command queue of `ncq_depth` over a half-duplex serial link.
    Sata,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum LinkModel {
    /// Command, data and completion transfers take time on the configured link.
    Modeled,
    /// Host link transfers take zero time (to compare with models that fold them elsewhere).
    Ideal,
}

/// `interface.data_pointers`: how an NVMe command describes its host data buffer, and so
/// what the device reads from host memory, after the command, before it can move the data.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum DataPointers {
    /// Not modelled: the command alone locates the data (MQSim's host; results as before).
    #[default]
    None,
    /// Physical Region Page entries: PRP1 and PRP2 in the command cover a buffer of up to two
    /// memory pages; a larger one has PRP2 point to a list of 8-byte entries, one per page
    /// after the first, in list pages of `memory_page_bytes` chained by their last entry.
    Prp,
    /// Scatter-gather list: one 16-byte descriptor in the command covers a buffer that is one
    /// extent of `buffer_extent_bytes`; a larger buffer has it point to a segment of 16-byte
    /// data block descriptors, one per extent, in segments of `memory_page_bytes` chained by
    /// their last descriptor.
    Sgl,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Arbitration {
    /// One command per non-empty queue in turn.
    RoundRobin,
    /// Urgent first, then weighted round robin over high, medium and low.
    Weighted,
}

/// Unset (no limit) keys stay out of a result's configuration, so that its document, hash
/// and digest are those of a run from before the key existed.
fn is_zero(v: &u32) -> bool {
    *v == 0
}

/// `[interface]`
#[ranges]
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct InterfaceConfig {
    /// Host interface protocol: "nvme" or "sata". Default "nvme".
    #[serde(rename = "type")]
    pub kind: InterfaceType,
    /// Whether host-link transfers cost time: "modeled" or "ideal". Default "modeled".
    pub link_model: LinkModel,
    /// Bytes per logical sector (the namespace's LBA size): offsets and sizes of requests are
    /// whole sectors, and a page is `flash.page_size_bytes / sector_bytes` sectors (at most
    /// 64). Default 512; a power of two in 8..=4096, at most the page size. Small sectors
    /// model byte-addressable memories, as NVMeSim's DRAM-like NVM with 64-byte requests.
    #[range(pow2, min = 8, max = 4096)]
    pub sector_bytes: u32,
    /// Whether data crosses the host link a page at a time, overlapping flash work. Default
    /// true. The chunk is the part of a request inside one flash page (its page transaction),
    /// sent as packets of at most `pcie.max_payload_bytes` / `interface.sata_max_data_fis_bytes`:
    /// a read's chunk leaves for the host when that page is out of its die, and the request
    /// completes when its last chunk has crossed; a write fetches its chunks back to back and
    /// each page may be programmed as soon as its own chunk is in. false: the whole request's
    /// data moves at once (reads after their last page is out of the dies, writes before any
    /// page is programmed). No effect with `link_model = "ideal"`.
    pub pipelined_transfers: bool,
    /// NVMe: most requests of one submission queue held inside the device at once
    /// (MQSim's QueueFetchSize). Default 512; 1..=65535.
    #[range(min = 1, max = 65535)]
    pub queue_fetch_size: u32,
    /// NVMe: most commands the controller holds at once over all submission queues, from
    /// the fetch of a command to the posting of its completion entry. At the limit the
    /// controller fetches nothing until a completion frees a slot, and then `arbitration`
    /// picks the queue served next: without a limit every command is fetched as soon as its
    /// doorbell arrives and arbitration never has to choose. Default 0: no limit (MQSim's
    /// NVMe host interface; results as before the key existed); 1..=16777216.
    #[serde(skip_serializing_if = "is_zero")]
    #[range(min = 0, max = super::ranges::MAX_IN_FLIGHT, note = "0: no limit")]
    pub max_inflight_commands: u32,
    /// NVMe: entries per submission queue; a flow's queue depth may not exceed it. Open-loop
    /// flows (NVMe and SATA) hold at most this many requests submitted and not completed.
    /// Default 1024; 2..=65536.
    #[range(min = 2, max = 65536)]
    pub io_queue_depth: u32,
    /// SATA: native command queue depth shared by all flows. Default 32; 1..=32.
    #[range(min = 1, max = 32)]
    pub ncq_depth: u32,
    /// SATA: line rate in Gb/s, 1.5, 3 or 6 (SATA revisions 1-3), 8b/10b coded: 150, 300 or
    /// 600 MB/s of frames. Default 3. Half duplex: one frame crosses at a time, either way.
    #[range(one_of = [1.5, 3.0, 6.0], what = "a SATA line rate", note = "Gb/s, SATA revisions 1-3")]
    pub sata_gbps: f64,
    /// SATA: bytes of framing per FIS on the wire besides its own dwords (SOF, CRC, EOF and
    /// the X_RDY/R_RDY/WTRM/R_OK handshake primitives, a dword each). Default 24; 0..=1024.
    #[range(min = 0, max = 1024)]
    pub sata_frame_overhead_bytes: u32,
    /// SATA: largest data FIS payload in bytes. Default 8192; 512..=65536.
    #[range(min = 512, max = 65536)]
    pub sata_max_data_fis_bytes: u32,
    /// SATA: the host bus adapter's time to process each submission and each completion, in
    /// microseconds (MQSim's SATA_Processing_Delay, there in ns). The HBA handles
    /// submissions one at a time, and completions one at a time, so a request waits for those
    /// ahead of it; both delays are inside the response time, as in MQSim. Default 0;
    /// 0..=1e6.
    #[range(min = 0.0, max = 1e6)]
    pub sata_processing_delay_us: f64,
    /// NVMe command fetch arbitration between submission queues: "round_robin" (priorities
    /// must all be the default) or "weighted" (urgent queues first, then high/medium/low in
    /// turns of wrr_high/wrr_medium/wrr_low commands, as NVMe weighted round robin with urgent
    /// class). Default "round_robin".
    pub arbitration: Arbitration,
    /// Weighted arbitration: commands fetched from high-priority queues per turn. Default 4;
    /// 1..=256.
    #[range(min = 1, max = 256)]
    pub wrr_high: u32,
    /// Weighted arbitration: commands per turn for medium. Default 2; 1..=256.
    #[range(min = 1, max = 256)]
    pub wrr_medium: u32,
    /// Weighted arbitration: commands per turn for low. Default 1; 1..=256.
    #[range(min = 1, max = 256)]
    pub wrr_low: u32,
    /// NVMe: "none" (default), "prp" or "sgl". With "prp" or "sgl" the device reads the
    /// command's PRP list or SGL segments from host memory (a memory read request up, the
    /// completion with the entries down, one list page after the other since each names the
    /// next) when the command is in, before the command starts; the time is part of the
    /// command fetch. Data buffers and lists are assumed to start on a memory page.
    pub data_pointers: DataPointers,
    /// NVMe "prp"/"sgl": the host memory page size (NVMe CC.MPS), which is also the size of a
    /// PRP list page or SGL segment. Default 4096; a power of two in 4096..=134217728.
    #[range(pow2, min = 4096, max = 1u64 << 27)]
    pub memory_page_bytes: u32,
    /// NVMe "sgl": bytes of physically contiguous host memory per extent of a data buffer, one
    /// SGL data block descriptor each. Default 4096 (a buffer of scattered 4 KiB pages); a
    /// power of two in 512..=1073741824.
    #[range(pow2, min = 512, max = 1u64 << 30)]
    pub buffer_extent_bytes: u32,
}
impl Default for InterfaceConfig {
    fn default() -> Self {
        Self {
            kind: InterfaceType::Nvme,
            link_model: LinkModel::Modeled,
            sector_bytes: 512,
            pipelined_transfers: true,
            queue_fetch_size: 512,
            max_inflight_commands: 0,
            io_queue_depth: 1024,
            ncq_depth: 32,
            sata_gbps: 3.0,
            sata_frame_overhead_bytes: 24,
            sata_max_data_fis_bytes: 8192,
            sata_processing_delay_us: 0.0,
            arbitration: Arbitration::RoundRobin,
            wrr_high: 4,
            wrr_medium: 2,
            wrr_low: 1,
            data_pointers: DataPointers::None,
            memory_page_bytes: 4096,
            buffer_extent_bytes: 4096,
        }
    }
}

/// `[pcie]`
#[ranges]
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct PcieConfig {
    /// PCIe generation: 1 and 2 use 8b/10b at 2.5/5 GT/s, 3/4/5 use 128b/130b at 8/16/32 GT/s.
    /// Default 3; 1..=5.
    #[range(min = 1, max = 5)]
    pub generation: u32,
    /// Lane count. Default 4; one of 1, 2, 4, 8, 12, 16, 32 (the PCIe link widths). A packet
    /// uses every lane: one packet at a time per direction.
    #[range(one_of = [1, 2, 4, 8, 12, 16, 32], what = "a PCIe link width")]
    pub lanes: u32,
    /// Max payload size of one TLP in bytes. Default 128; power of two in 128..=4096.
    #[range(pow2, min = 128, max = 4096)]
    pub max_payload_bytes: u32,
    /// Max read request size in bytes (the device's reads of write data). Default 512;
    /// power of two in 128..=4096.
    #[range(pow2, min = 128, max = 4096)]
    pub max_read_request_bytes: u32,
    /// Bytes of overhead per TLP on the wire: header, sequence, LCRC, framing, and the share
    /// of DLLPs. Default 28 (MQSim: 20 B header + 6 B DLLP + 2 B PHY); 0..=256. With explicit
    /// DLLPs (`ack_every_tlps`, `update_fc_every_tlps`) leave their share out (22).
    #[range(min = 0, max = 256)]
    pub packet_overhead_bytes: u32,
    /// Data link layer ACKs as packets of their own: the receiver of every N TLPs sends one
    /// ACK DLLP back, on the other direction of the link, where it queues like any packet.
    /// Default 0 (none: their cost is folded into `packet_overhead_bytes`); 0..=4096.
    #[range(min = 0, max = 4096)]
    pub ack_every_tlps: u32,
    /// Flow-control credit updates (UpdateFC DLLPs) the same way: one per N TLPs received.
    /// Default 0 (none); 0..=4096.
    #[range(min = 0, max = 4096)]
    pub update_fc_every_tlps: u32,
    /// Bytes of one DLLP on the wire, framing included. Default 8 (NVMeSim's Table II: ACK,
    /// 8 B); 1..=64.
    #[range(min = 1, max = 64)]
    pub dllp_bytes: u32,
}
impl Default for PcieConfig {
    fn default() -> Self {
        Self {
            generation: 3,
            lanes: 4,
            max_payload_bytes: 128,
            max_read_request_bytes: 512,
            packet_overhead_bytes: 28,
            ack_every_tlps: 0,
            update_fc_every_tlps: 0,
            dllp_bytes: 8,
        }
    }
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
pub enum CellType {
    SLC,
    MLC,
    TLC,
    QLC,
}
impl CellType {
    pub fn bits(self) -> usize {
        match self {
            CellType::SLC => 1,
            CellType::MLC => 2,
            CellType::TLC => 3,
            CellType::QLC => 4,
        }
    }
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum PageTypeMapping {
    /// Page i of a block has type i mod bits-per-cell (LSB, CSB, ..., MSB).
    Cyclic,
    /// SimpleSSD (Jung et al., IEEE CAL 2018): the first 5 pages LSB, the next 3 CSB (the 8 "meta" pages),
    /// then type = ((i - 8) / planes_per_die) mod bits-per-cell.
    Simplessd,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Medium {
    /// NAND flash: a page is written once after its block is erased; writes go out of place
    /// and garbage collection reclaims blocks.
    Nand,
    /// An emerging memory written in place (phase-change memory, 3D XPoint, STT-MRAM, the
    /// DRAM-like and block NVMs of NVMeSim): no erase, no garbage collection; logical page i
    /// lives at one fixed physical page (the static stripe of `ftl.allocation_order`) and a
    /// write overwrites it.
    InPlace,
}

/// `[flash]`
#[ranges]
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct FlashConfig {
    /// The storage medium: "nand" (erase before write, out-of-place writes, GC) or
    /// "in_place" (no erase: writes overwrite their page in place, no GC, write
    /// amplification 1). "in_place" needs one page type (`cell_type` "SLC": one read and one
    /// write time), the whole mapping in DRAM (`ftl.cmt.mode` "ideal"), static placement and
    /// flows that are not pinned. Default "nand".
    pub medium: Medium,
    /// Channels (independent buses). Default 8; 1..=256.
    #[range(min = 1, max = 256)]
    pub channels: u32,
    /// Chips (ways) sharing each channel. Default 4; 1..=64.
    #[range(min = 1, max = 64)]
    pub chips_per_channel: u32,
    /// Dies per chip; dies execute array operations independently (interleaving).
    /// Default 2; 1..=16.
    #[range(min = 1, max = 16)]
    pub dies_per_chip: u32,
    /// Planes per die; planes of a die can work together in multi-plane operations.
    /// Default 2; 1..=16.
    #[range(min = 1, max = 16)]
    pub planes_per_die: u32,
    /// Blocks per plane. Default 2048; 8..=1048576.
    #[range(min = 8, max = 1u64 << 20)]
    pub blocks_per_plane: u32,
    /// Pages per block. Default 256; 4..=65536.
    #[range(min = 4, max = 65536)]
    pub pages_per_block: u32,
    /// Page size in bytes. Default 8192; a power of two in 8..=32768, at least
    /// `interface.sector_bytes` and at most 64 sectors.
    #[range(pow2, min = 8, max = 32768)]
    pub page_size_bytes: u32,
    /// Cell type: "SLC", "MLC", "TLC" or "QLC". Default "MLC".
    pub cell_type: CellType,
    /// Page type of each page in a block: "cyclic" or "simplessd". Default "cyclic".
    pub page_type_mapping: PageTypeMapping,
    /// Array read time tR per page type (LSB first), microseconds; one value per bit of the
    /// cell type. Default [75, 75]; each in (0, 100000].
    #[range(gt = 0.0, max = 100_000.0)]
    pub read_us: Vec<f64>,
    /// Array program time tPROG per page type (LSB first), microseconds; one per bit.
    /// Default [750, 750]; each in (0, 100000].
    #[range(gt = 0.0, max = 100_000.0)]
    pub program_us: Vec<f64>,
    /// Block erase time tBERS, microseconds. Default 3800; (0, 1000000].
    #[range(gt = 0.0, max = 1_000_000.0)]
    pub erase_us: f64,
    /// Whether reads, programs and erases may run on several planes of a die at once (same
    /// page offset for reads/programs, same block offset for erases). Default true.
    pub multiplane: bool,
    /// Whether the dies of a chip run operations at the same time (die interleaving, as real
    /// chips do). False: a chip runs one die operation at a time, command to data transfer,
    /// as MQSim's scheduler issues them (`--mqsim-compat`); a free chip serves, on whichever
    /// die, its oldest translation-page read, else its oldest read, else its oldest write
    /// (MQSim's queues per chip; dies with only GC work come last, and the die chosen then
    /// applies `tsu.policy`). Default true.
    pub die_interleaving: bool,
    /// Channel bus and controller timing.
    #[range(nested)]
    pub bus: BusConfig,
}
impl Default for FlashConfig {
    fn default() -> Self {
        Self {
            medium: Medium::Nand,
            channels: 8,
            chips_per_channel: 4,
            dies_per_chip: 2,
            planes_per_die: 2,
            blocks_per_plane: 2048,
            pages_per_block: 256,
            page_size_bytes: 8192,
            cell_type: CellType::MLC,
            page_type_mapping: PageTypeMapping::Cyclic,
            read_us: vec![75.0, 75.0],
            program_us: vec![750.0, 750.0],
            erase_us: 3800.0,
            multiplane: true,
            die_interleaving: true,
            bus: BusConfig::default(),
        }
    }
}

/// `[flash.bus]`
#[ranges]
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct BusConfig {
    /// Data bus width in bits. Default 8; 8 or 16.
    #[range(one_of = [8, 16])]
    pub width_bits: u32,
    /// Data transfer rate in MT/s (ONFI NV-DDR2 at 333 MT/s moves 333 MB/s on 8 bits).
    /// Default 333; (0, 10000].
    #[range(gt = 0.0, max = 10000.0)]
    pub rate_mts: f64,
    /// Duration of one command or address cycle, nanoseconds. Default 5; [0, 1000].
    #[range(min = 0.0, max = 1000.0)]
    pub cmd_addr_cycle_ns: f64,
    /// Command + address cycles of a read (00h, 5 address, 30h). Default 7; 0..=64.
    #[range(min = 0, max = 64)]
    pub read_cmd_cycles: u32,
    /// Command + address cycles of a program (80h, 5 address, 10h). Default 7; 0..=64.
    #[range(min = 0, max = 64)]
    pub program_cmd_cycles: u32,
    /// Command + address cycles of an erase (60h, 3 address, D0h). Default 5; 0..=64.
    #[range(min = 0, max = 64)]
    pub erase_cmd_cycles: u32,
    /// The X25-M latency model's channel switch delay for reads: the controller issues one page operation
    /// per this delay, and the die is busy for it, microseconds. Default 0; [0, 10000].
    #[range(min = 0.0, max = 10000.0)]
    pub channel_switch_read_us: f64,
    /// The X25-M latency model's channel switch delay for programs and erases, microseconds. Default 0;
    /// [0, 10000].
    #[range(min = 0.0, max = 10000.0)]
    pub channel_switch_write_us: f64,
    /// The X25-M latency model's way switch delay: added to a bus transfer when the channel passes from one
    /// chip to another, microseconds. Default 0; [0, 10000].
    #[range(min = 0.0, max = 10000.0)]
    pub way_switch_us: f64,
    /// The data a program moves over the bus: "page" (default: the whole page, as the die
    /// programs the whole page) or "written_sectors" (MQSim: only the sectors the write
    /// carries, `NVM_PHY_ONFI_NVDDR2.cpp:230-231`, even when the rest of the page was read
    /// back for a read-modify-write).
    // At its default the key is left out of results, which stay as before it existed.
    #[serde(skip_serializing_if = "is_page")]
    pub program_data: ProgramData,
    /// Who gets a busy channel next: "first_come" (default: a command or a transfer out
    /// takes the channel from the time it asks, behind everything that asked before it) or
    /// "data_first" (MQSim, `NVM_PHY_ONFI_NVDDR2.cpp:463-487`, `TSU_Base.cpp:47-58`: data
    /// waiting in page registers leaves first, a translation page's before user data,
    /// GC's last; a command starts only on an idle channel with no data waiting, the chips
    /// of the channel offered it in turn). Simplified: a multi-plane read's pages leave
    /// together (MQSim queues each page), the die a transfer frees asks for the channel
    /// before the others are offered it in turn, and the turn moves only when the channel
    /// goes idle with dies waiting. Refused with `tsu.suspension` (MQSim never suspends).
    // At its default the key is left out of results, which stay as before it existed.
    #[serde(skip_serializing_if = "is_first_come")]
    pub arbitration: BusArbitration,
}

/// `flash.bus.arbitration`.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum BusArbitration {
    /// In the order asked.
    #[default]
    FirstCome,
    /// Waiting data out first, commands on an idle channel (MQSim).
    DataFirst,
}

fn is_first_come(a: &BusArbitration) -> bool {
    *a == BusArbitration::FirstCome
}

/// `flash.bus.program_data`.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum ProgramData {
    /// A whole page per plane.
    #[default]
    Page,
    /// The sectors the program's writes carry (MQSim).
    WrittenSectors,
}

fn is_page(p: &ProgramData) -> bool {
    *p == ProgramData::Page
}
impl Default for BusConfig {
    fn default() -> Self {
        Self {
            width_bits: 8,
            rate_mts: 333.0,
            cmd_addr_cycle_ns: 5.0,
            read_cmd_cycles: 7,
            program_cmd_cycles: 7,
            erase_cmd_cycles: 5,
            channel_switch_read_us: 0.0,
            channel_switch_write_us: 0.0,
            way_switch_us: 0.0,
            program_data: ProgramData::Page,
            arbitration: BusArbitration::FirstCome,
        }
    }
}
