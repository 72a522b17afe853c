use crate::engine::{Picoseconds, PS_PER_S};
use crate::host::nvme::PointerList;
pub use crate::settings::{pcie_bytes_per_s, sata_bytes_per_s, LinkSettings};

/// Bytes of an NVMe submission queue entry and completion queue entry.
pub const SQE_BYTES: u64 = 64;
pub const CQE_BYTES: u64 = 16;
/// Payload of a doorbell register write.
pub const DOORBELL_BYTES: u64 = 4;
/// Payload of an MSI-X message (a memory write of its 32-bit data).
pub const MSI_BYTES: u64 = 4;
/// SATA FIS sizes in bytes, FIS type dword included (Serial ATA 2.6, section 10.3): Register
/// Host to Device (the queued command), Register Device to Host (the device accepts it and
/// clears BSY), DMA Setup (starts a first-party DMA data phase for one tag), the Data FIS
/// header (one dword before each data FIS's payload) and Set Device Bits (NCQ completion).
pub const SATA_COMMAND_FIS: u64 = 20;
pub const SATA_REG_D2H_FIS: u64 = 20;
pub const SATA_DMA_SETUP_FIS: u64 = 28;
pub const SATA_DATA_FIS_HEADER: u64 = 4;
pub const SATA_SDB_FIS: u64 = 8;

const FP_SHIFT: u32 = 16;

use crate::settings::LinkKind as Kind;

/// A host link as FIFO resources, one per direction for PCIe (full duplex) and one shared for
/// SATA (half duplex). A message of several packets occupies its direction back to back;
/// a message that answers another (a read completion after a read request) reserves its
/// direction when the request is sent, so it queues behind what was reserved before then.
pub struct Link {
    kind: Kind,
    /// Picoseconds per byte on the wire, fixed point with FP_SHIFT fraction bits.
    ps_per_byte_fp: u64,
    overhead: u64,
    max_payload: u64,
    max_read_request: u64,
    down_free: Picoseconds,
    up_free: Picoseconds,
    pub bytes_down: u64,
    pub bytes_up: u64,
    /// DLLPs per TLPs received (0: none) and the wire time of one; PCIe only.
    ack_every: u64,
    fc_every: u64,
    dllp_ps: Picoseconds,
    dllp_bytes: u64,
    /// TLPs that have crossed each direction, for the DLLPs they are due.
    tlps_down: u64,
    tlps_up: u64,
    pub dllps: u64,
    /// Time packets waited for their direction (NVMeSim's T_stall), summed over every send:
    /// a caller that reads it before and after a call has that call's stall.
    pub stall_ps: Picoseconds,
}

#[derive(Clone, Copy)]
enum Dir {
    Down,
    Up,
}

impl Link {
    pub fn new(l: &LinkSettings) -> Self {
        let kind = l.kind;
        Self {
            kind,
            ps_per_byte_fp: (PS_PER_S as f64 / l.bytes_per_s * (1u64 << FP_SHIFT) as f64).round()
                as u64,
            overhead: l.overhead_bytes,
            max_payload: l.max_payload_bytes,
            max_read_request: l.max_read_request_bytes,
            down_free: 0,
            up_free: 0,
            bytes_down: 0,
            bytes_up: 0,
            ack_every: l.ack_every_tlps,
            fc_every: l.update_fc_every_tlps,
            dllp_ps: 0,
            dllp_bytes: l.dllp_bytes,
            tlps_down: 0,
            tlps_up: 0,
            dllps: 0,
            stall_ps: 0,
        }
        .with_dllp_time()
    }

    fn with_dllp_time(mut self) -> Self {
        self.dllp_ps = self.wire_ps(self.dllp_bytes);
        self
    }

    /// `packets` TLPs crossed `dir`, the last arriving at `end`: the receiver owes the DLLPs
    /// they complete (one ACK per `ack_every`, one UpdateFC per `fc_every` TLPs received) and
    /// sends them on the other direction when the message is in, where they occupy the wire
    /// like any packet (NVMeSim: one packet at a time per direction, so later packets stall
    /// behind them).
    #[inline]
    fn owe_dllps(&mut self, dir: Dir, packets: u64, end: Picoseconds) {
        if self.ack_every == 0 && self.fc_every == 0 {
            return;
        }
        let (count, back_free, back_bytes) = match dir {
            Dir::Down => (&mut self.tlps_down, &mut self.up_free, &mut self.bytes_up),
            Dir::Up => (&mut self.tlps_up, &mut self.down_free, &mut self.bytes_down),
        };
        let before = *count;
        *count += packets;
        let after = *count;
        let due = |every: u64| after.checked_div(every).map_or(0, |a| a - before / every);
        let n = due(self.ack_every) + due(self.fc_every);
        if n == 0 {
            return;
        }
        let start = end.max(*back_free);
        *back_free = start.saturating_add(self.dllp_ps.saturating_mul(n));
        *back_bytes += n * self.dllp_bytes;
        self.dllps += n;
    }

    /// Wire time of `wire_bytes`. The product is taken in 128 bits: a request of the largest
    /// size validation allows (2 TiB) at SATA rates exceeds 2^64 before the shift.
    #[inline]
    fn wire_ps(&self, wire_bytes: u64) -> Picoseconds {
        let ps = (wire_bytes as u128 * self.ps_per_byte_fp as u128) >> FP_SHIFT;
        Picoseconds::try_from(ps).unwrap_or(Picoseconds::MAX)
    }

    /// Sends `payload` bytes split into packets of at most `max_packet` (at least one packet
    /// even for no payload), from no earlier than `at`. Returns the arrival of the last byte.
    fn send(&mut self, dir: Dir, at: Picoseconds, payload: u64, max_packet: u64) -> Picoseconds {
        self.send_owing(dir, at, payload, max_packet, true)
    }

    /// `send`; with `owe`, the DLLPs the message's packets are due go back when it is in.
    fn send_owing(
        &mut self,
        dir: Dir,
        at: Picoseconds,
        payload: u64,
        max_packet: u64,
        owe: bool,
    ) -> Picoseconds {
        if self.kind == Kind::Ideal {
            return at;
        }
        // Most messages fit one packet (commands, completions, a page in a SATA FIS): no
        // division for them. At least one packet even for no payload.
        let packets = if payload <= max_packet {
            1
        } else if max_packet.is_power_of_two() {
            // PCIe's payload sizes: a shift instead of a division (a page's data is dozens
            // of packets, sent once per page).
            (payload + max_packet - 1) >> max_packet.trailing_zeros()
        } else {
            payload.div_ceil(max_packet)
        };
        let wire = payload + packets * self.overhead;
        let dur = self.wire_ps(wire);
        let free = match (self.kind, dir) {
            (Kind::Pcie, Dir::Up) => &mut self.up_free,
            _ => &mut self.down_free,
        };
        let start = at.max(*free);
        *free = start.saturating_add(dur);
        let end = *free;
        self.stall_ps += start - at;
        match dir {
            Dir::Down => self.bytes_down += wire,
            Dir::Up => self.bytes_up += wire,
        }
        if owe && self.kind == Kind::Pcie {
            self.owe_dllps(dir, packets, end);
        }
        end
    }

    /// The host announces a new submission: an NVMe doorbell write; for SATA, nothing yet
    /// (the command FIS goes when the device has a free NCQ slot).
    pub fn doorbell(&mut self, now: Picoseconds) -> Picoseconds {
        match self.kind {
            Kind::Pcie => self.send(Dir::Down, now, DOORBELL_BYTES, DOORBELL_BYTES),
            _ => now,
        }
    }

    /// The command reaches the device: NVMe memory read of the SQE (request up, completion
    /// down), or the SATA Register H2D FIS carrying the queued command. Under SATA the device
    /// answers with a Register D2H FIS (BSY cleared) that holds the half-duplex link before
    /// anything else may cross; the device has the command when the H2D FIS is in.
    pub fn fetch_command(&mut self, now: Picoseconds) -> Picoseconds {
        match self.kind {
            Kind::Pcie => {
                let req_sent = self.send(Dir::Up, now, 0, 1);
                self.send(Dir::Down, req_sent, SQE_BYTES, self.max_payload)
            }
            Kind::Sata => {
                let t = self.send(Dir::Down, now, SATA_COMMAND_FIS, SATA_COMMAND_FIS);
                self.send(Dir::Up, t, SATA_REG_D2H_FIS, SATA_REG_D2H_FIS);
                t
            }
            Kind::Ideal => now,
        }
    }

    /// The device reads a command's PRP list or SGL segments from host memory, from `now`:
    /// for each list page in turn (each names the next), memory read requests up and the
    /// completions with its entries down. Returns when the last entry is in.
    pub fn read_pointer_list(&mut self, now: Picoseconds, list: &PointerList) -> Picoseconds {
        if self.kind != Kind::Pcie {
            return now;
        }
        let mut t = now;
        for k in 0..list.pages() {
            let bytes = list.page_read_bytes(k);
            let req_sent = self.send_packets(Dir::Up, t, bytes.div_ceil(self.max_read_request));
            t = self.send(Dir::Down, req_sent, bytes, self.max_payload);
        }
        t
    }

    /// Write data moves from host memory into the device.
    pub fn fetch_write_data(&mut self, now: Picoseconds, bytes: u64) -> Picoseconds {
        match self.kind {
            Kind::Pcie => {
                let requests = bytes.div_ceil(self.max_read_request);
                let req_sent = self.send_packets(Dir::Up, now, requests);
                self.send(Dir::Down, req_sent, bytes, self.max_payload)
            }
            Kind::Sata => self.sata_data_phase(Dir::Down, now, bytes),
            Kind::Ideal => now,
        }
    }

    /// One chunk of read data moves to host memory (posted writes or a data FIS): the data of
    /// one page, sent when it is out of its die. Returns when it is in host memory.
    pub fn read_data(&mut self, now: Picoseconds, bytes: u64) -> Picoseconds {
        match self.kind {
            Kind::Sata => self.sata_data_phase(Dir::Up, now, bytes),
            _ => self.send(Dir::Up, now, bytes, self.max_payload),
        }
    }

    /// A first-party DMA data phase of NCQ: the device's DMA Setup FIS names the tag and
    /// buffer offset, then the data crosses as Data FISes of at most the data FIS size, each
    /// with its header dword (the DMA Setup FIS is assumed to auto-activate a write, so no
    /// DMA Activate FIS). Every data phase, a chunk of a pipelined request included, has its
    /// own DMA Setup, since phases of different tags may interleave. Half duplex: all of it
    /// holds the one link, so it is sent as one message of that many frames.
    fn sata_data_phase(&mut self, dir: Dir, at: Picoseconds, bytes: u64) -> Picoseconds {
        let fises = bytes.div_ceil(self.max_payload).max(1);
        let payload = SATA_DMA_SETUP_FIS + bytes + fises * SATA_DATA_FIS_HEADER;
        let wire = payload + (fises + 1) * self.overhead;
        let start = at.max(self.down_free);
        self.down_free = start.saturating_add(self.wire_ps(wire));
        self.stall_ps += start - at;
        match dir {
            Dir::Down => self.bytes_down += wire,
            Dir::Up => self.bytes_up += wire,
        }
        self.down_free
    }

    /// The completion entry (CQE, or the Set Device Bits FIS) goes to the host from `now`.
    pub fn post_completion(&mut self, now: Picoseconds) -> Picoseconds {
        match self.kind {
            Kind::Pcie => self.send(Dir::Up, now, CQE_BYTES, CQE_BYTES),
            Kind::Sata => self.send(Dir::Up, now, SATA_SDB_FIS, SATA_SDB_FIS),
            Kind::Ideal => now,
        }
    }

    /// An MSI-X message to the host: a posted write, queued behind the data and completions
    /// already on the way up.
    pub fn msi(&mut self, now: Picoseconds) -> Picoseconds {
        self.send(Dir::Up, now, MSI_BYTES, MSI_BYTES)
    }

    /// `n` header-only packets (memory read requests), back to back: the same as `n` calls
    /// of `send` without payload, in O(1) (a 2 TiB write asks for 2^32 of them).
    fn send_packets(&mut self, dir: Dir, at: Picoseconds, n: u64) -> Picoseconds {
        if n == 0 {
            return at;
        }
        // The DLLPs of all n go back when the last is in, as for one message of n packets.
        let first = self.send_owing(dir, at, 0, 1, false);
        let rest = n - 1;
        if self.kind == Kind::Ideal {
            return first;
        }
        if rest == 0 {
            if self.kind == Kind::Pcie {
                self.owe_dllps(dir, 1, first);
            }
            return first;
        }
        let dur = self.wire_ps(self.overhead).saturating_mul(rest);
        let free = match (self.kind, dir) {
            (Kind::Pcie, Dir::Up) => &mut self.up_free,
            _ => &mut self.down_free,
        };
        *free = free.saturating_add(dur);
        let end = *free;
        match dir {
            Dir::Down => self.bytes_down += rest * self.overhead,
            Dir::Up => self.bytes_up += rest * self.overhead,
        }
        if self.kind == Kind::Pcie {
            self.owe_dllps(dir, n, end);
        }
        end
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{Config, InterfaceType};

    #[test]
    fn gen3_x4_rate() {
        let r = pcie_bytes_per_s(3, 4);
        assert!((r - 3.938_461_5e9).abs() < 1e3);
    }

    #[test]
    fn packets_queue_fifo_per_direction() {
        let c = Config {
            flows: vec![Default::default()],
            ..Default::default()
        };
        let mut l = Link::new(&LinkSettings::resolve(&c));
        let a = l.doorbell(0);
        let b = l.doorbell(0);
        assert!(
            a > 0 && b == 2 * a,
            "second packet waits for the first: {a} {b}"
        );
        // The other direction is independent.
        let up = l.post_completion(0);
        assert!(up < b + a);
    }

    /// The largest request validation allows (2^32 - 1 sectors, just under 2 TiB) at SATA
    /// rates: the wire time is exact (a u64 product would overflow) and the data arrives.
    #[test]
    fn largest_request_at_sata_rate_does_not_overflow() {
        let mut c = Config {
            flows: vec![Default::default()],
            ..Default::default()
        };
        c.interface.kind = InterfaceType::Sata;
        let bytes = u32::MAX as u64 * 512;
        let mut l = Link::new(&LinkSettings::resolve(&c));
        let t = l.fetch_write_data(0, bytes);
        let fis = c.interface.sata_max_data_fis_bytes as u64;
        let fises = bytes.div_ceil(fis);
        let wire = SATA_DMA_SETUP_FIS
            + bytes
            + fises * SATA_DATA_FIS_HEADER
            + (fises + 1) * c.interface.sata_frame_overhead_bytes as u64;
        let expect = (wire as u128 * l.ps_per_byte_fp as u128) >> FP_SHIFT;
        assert_eq!(t as u128, expect);
        // About 2.2e12 bytes at 300 MB/s: about 7,300 s.
        assert!((7.0e15..8.0e15).contains(&(t as f64)), "{t}");
        // The same over PCIe, where the reads of write data are 2^32 request packets.
        c.interface.kind = InterfaceType::Nvme;
        let mut p = Link::new(&LinkSettings::resolve(&c));
        let t2 = p.fetch_write_data(0, bytes);
        let mrrs = c.pcie.max_read_request_bytes as u64;
        let up = p.wire_ps(p.overhead) * bytes.div_ceil(mrrs);
        assert!(t2 > up, "data follows the last read request");
    }
}
