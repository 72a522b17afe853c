use crate::config::DataPointers;
use crate::settings::HostSettings;
use std::collections::VecDeque;

/// Host submission queues as the device sees them, and the request fetch unit.
///
/// NVMe: one queue per flow; at most `fetch_limit` requests of a queue are inside the device
/// (MQSim's QueueFetchSize). Round robin serves queues one command per turn; weighted
/// arbitration (NVMe WRR with urgent class) serves urgent queues first, then gives the high,
/// medium and low classes turns of `wrr_*` commands, round robin inside a class.
/// With `interface.max_inflight_commands` the controller holds at most that many commands
/// over all queues (fetched, completion not yet posted); without it nothing makes queues
/// wait for each other at fetch, so the arbitration only orders doorbells that arrive at the
/// same moment.
/// SATA: all flows share queue 0 and the limit is the NCQ depth.
pub struct FetchUnit {
    /// Requests whose doorbell reached the device, not yet fetched.
    visible: Vec<VecDeque<u32>>,
    pub in_device: Vec<u32>,
    pub max_in_device: Vec<u32>,
    fetch_limit: u32,
    /// Commands inside the device over all queues, and the most it may hold (u32::MAX
    /// without a limit: the count never gets there, so the default path pays one compare).
    inflight: u32,
    max_inflight: u32,
    rr: usize,
    waiting: usize,
    /// Weighted arbitration: queue indices per class (urgent, high, medium, low), the
    /// round-robin cursor of each class, the class whose turn it is and its remaining credit.
    classes: Option<Box<WeightedState>>,
}

struct WeightedState {
    members: [Vec<usize>; 4],
    cursor: [usize; 4],
    weight: [u32; 4],
    turn: usize,
    credit: u32,
}

impl FetchUnit {
    pub fn new(h: &HostSettings) -> Self {
        let queues = h.queues;
        let classes = h.weighted.as_ref().map(|w| {
            let mut members: [Vec<usize>; 4] = Default::default();
            for (q, &c) in w.classes.iter().enumerate() {
                members[c as usize].push(q);
            }
            let [high, medium, low] = w.weights;
            Box::new(WeightedState {
                members,
                cursor: [0; 4],
                weight: [0, high, medium, low],
                turn: 1,
                credit: high,
            })
        });
        Self {
            visible: vec![VecDeque::new(); queues],
            in_device: vec![0; queues],
            max_in_device: vec![0; queues],
            fetch_limit: h.fetch_limit,
            inflight: 0,
            max_inflight: h.max_inflight,
            rr: 0,
            waiting: 0,
            classes,
        }
    }

    pub fn announce(&mut self, queue: usize, req: u32) {
        self.visible[queue].push_back(req);
        self.waiting += 1;
    }

    #[inline]
    fn take(&mut self, q: usize) -> Option<(usize, u32)> {
        if self.in_device[q] < self.fetch_limit {
            if let Some(r) = self.visible[q].pop_front() {
                self.waiting -= 1;
                self.inflight += 1;
                self.in_device[q] += 1;
                self.max_in_device[q] = self.max_in_device[q].max(self.in_device[q]);
                return Some((q, r));
            }
        }
        None
    }

    /// Some queue has a visible request (with or without room to fetch it).
    #[inline]
    pub fn has_waiting(&self) -> bool {
        self.waiting > 0
    }

    /// Next (queue, request) to fetch; None when the controller is full or no queue has both
    /// a visible request and room.
    #[inline]
    pub fn next_fetch(&mut self) -> Option<(usize, u32)> {
        if self.waiting == 0 || self.inflight >= self.max_inflight {
            return None;
        }
        if self.classes.is_some() {
            return self.next_weighted();
        }
        // Round robin from `rr` (< n), wrapping by a compare: two divisions per command
        // cost more than the rest of the fetch.
        let n = self.visible.len();
        let mut q = self.rr;
        for _ in 0..n {
            if let Some(x) = self.take(q) {
                self.rr = if q + 1 == n { 0 } else { q + 1 };
                return Some(x);
            }
            q = if q + 1 == n { 0 } else { q + 1 };
        }
        None
    }

    fn pick_in_class(&mut self, c: usize) -> Option<(usize, u32)> {
        let st = self.classes.as_ref().expect("weighted");
        let n = st.members[c].len();
        let start = st.cursor[c];
        for i in 0..n {
            let k = (start + i) % n;
            let q = self.classes.as_ref().expect("weighted").members[c][k];
            if let Some(x) = self.take(q) {
                self.classes.as_mut().expect("weighted").cursor[c] = (k + 1) % n;
                return Some(x);
            }
        }
        None
    }

    fn next_weighted(&mut self) -> Option<(usize, u32)> {
        if let Some(x) = self.pick_in_class(0) {
            return Some(x);
        }
        // Four steps visit every weighted class with fresh credit at least once.
        for _ in 0..4 {
            let (turn, credit) = {
                let st = self.classes.as_ref().expect("weighted");
                (st.turn, st.credit)
            };
            if credit > 0 {
                if let Some(x) = self.pick_in_class(turn) {
                    self.classes.as_mut().expect("weighted").credit -= 1;
                    return Some(x);
                }
            }
            let st = self.classes.as_mut().expect("weighted");
            st.turn = if st.turn == 3 { 1 } else { st.turn + 1 };
            st.credit = st.weight[st.turn];
        }
        None
    }

    pub fn release(&mut self, queue: usize) {
        self.in_device[queue] -= 1;
        self.inflight -= 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{Arbitration, Config, FlowConfig, InterfaceConfig, Priority};

    /// A fetch unit of `queues` queues and `limit` per queue for these keys.
    fn unit(queues: usize, limit: u32, i: &InterfaceConfig, flows: &[FlowConfig]) -> FetchUnit {
        let c = Config {
            interface: i.clone(),
            flows: flows.to_vec(),
            ..Config::default()
        };
        FetchUnit::new(&HostSettings {
            queues,
            fetch_limit: limit,
            ..HostSettings::resolve(&c)
        })
    }

    #[test]
    fn round_robin_and_limit() {
        let flows = vec![FlowConfig::default(); 2];
        let mut f = unit(2, 2, &InterfaceConfig::default(), &flows);
        for r in 0..4 {
            f.announce(0, r);
        }
        f.announce(1, 10);
        let got: Vec<u32> = std::iter::from_fn(|| f.next_fetch().map(|(_, r)| r)).collect();
        assert_eq!(got, vec![0, 10, 1]);
        assert_eq!(f.in_device, vec![2, 1]);
        f.release(0);
        assert_eq!(f.next_fetch(), Some((0, 2)));
        assert_eq!(f.max_in_device, vec![2, 1]);
    }

    #[test]
    fn weighted_serves_urgent_first_then_classes_by_weight() {
        let mut flows = vec![FlowConfig::default(); 4];
        flows[0].priority = Priority::Low;
        flows[1].priority = Priority::High;
        flows[2].priority = Priority::Urgent;
        flows[3].priority = Priority::Medium;
        let i = InterfaceConfig {
            arbitration: Arbitration::Weighted,
            ..InterfaceConfig::default()
        };
        let mut f = unit(4, 1000, &i, &flows);
        for q in 0..4 {
            for r in 0..20 {
                f.announce(q, (q * 100 + r) as u32);
            }
        }
        let order: Vec<usize> = (0..34).map(|_| f.next_fetch().unwrap().0).collect();
        // Urgent drains first, then turns of 4 high, 2 medium, 1 low.
        assert!(order[..20].iter().all(|&q| q == 2), "{order:?}");
        assert_eq!(&order[20..34], &[1, 1, 1, 1, 3, 3, 0, 1, 1, 1, 1, 3, 3, 0]);
    }

    #[test]
    fn inflight_limit_holds_fetch_until_a_completion() {
        let flows = vec![FlowConfig::default(); 2];
        let i = InterfaceConfig {
            max_inflight_commands: 3,
            ..InterfaceConfig::default()
        };
        let mut f = unit(2, 512, &i, &flows);
        for r in 0..4 {
            f.announce(0, r);
            f.announce(1, 10 + r);
        }
        let got: Vec<u32> = std::iter::from_fn(|| f.next_fetch().map(|(_, r)| r)).collect();
        assert_eq!(got, vec![0, 10, 1]);
        assert!(f.has_waiting());
        f.release(1);
        assert_eq!(f.next_fetch(), Some((1, 11)));
        assert_eq!(f.next_fetch(), None);
    }

    /// A closed loop of backlogged queues, one per class, behind a limit of 8: each
    /// completion (the oldest command) frees the slot the arbitration hands on. Urgent holds
    /// its 2 commands; high, medium and low get 4 : 2 : 1 of the other fetches.
    #[test]
    fn weighted_under_a_limit_shares_slots_by_weight() {
        let mut flows = vec![FlowConfig::default(); 4];
        flows[0].priority = Priority::Urgent;
        flows[1].priority = Priority::High;
        flows[2].priority = Priority::Medium;
        flows[3].priority = Priority::Low;
        let i = InterfaceConfig {
            arbitration: Arbitration::Weighted,
            max_inflight_commands: 8,
            ..InterfaceConfig::default()
        };
        let mut f = unit(4, 512, &i, &flows);
        let depth = [2usize, 100, 100, 100];
        let mut next = 0u32;
        for (q, &d) in depth.iter().enumerate() {
            for _ in 0..d {
                f.announce(q, next);
                next += 1;
            }
        }
        let mut inside = std::collections::VecDeque::new();
        let mut fetched = [0u32; 4];
        for _ in 0..7000 {
            while let Some((q, _)) = f.next_fetch() {
                fetched[q] += 1;
                inside.push_back(q);
            }
            assert_eq!(inside.len(), 8);
            let q = inside.pop_front().unwrap();
            f.release(q);
            // The host resubmits at once: every queue stays backlogged.
            f.announce(q, next);
            next += 1;
        }
        assert_eq!(f.max_in_device[0], 2);
        let (h, m, l) = (fetched[1] as f64, fetched[2] as f64, fetched[3] as f64);
        assert!(
            (h / l - 4.0).abs() < 0.01 && (m / l - 2.0).abs() < 0.01,
            "{fetched:?}"
        );
    }
}

/// What the device reads from host memory to locate a command's data buffer
/// (`interface.data_pointers`): nothing, a PRP list, or SGL segments.
#[derive(Debug, Clone, Copy)]
pub struct DataPointerModel {
    mode: DataPointers,
    page: u64,
    extent: u64,
}

/// The entries of one command's PRP list or SGL segments: `entries` of `entry_bytes`, in
/// list pages of `per_page` entries chained by their last entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PointerList {
    pub entries: u64,
    pub entry_bytes: u64,
    pub per_page: u64,
}

impl PointerList {
    /// List pages: a page that is not the last gives its last slot to the chain pointer, so
    /// k pages hold k (per_page - 1) + 1 entries.
    #[inline]
    pub fn pages(&self) -> u64 {
        if self.entries <= self.per_page {
            1
        } else {
            (self.entries - 1).div_ceil(self.per_page - 1)
        }
    }

    /// Bytes the device reads from list page `k` (0-based): a whole page but for the last.
    #[inline]
    pub fn page_read_bytes(&self, k: u64) -> u64 {
        let pages = self.pages();
        if k + 1 < pages {
            self.per_page * self.entry_bytes
        } else {
            (self.entries - (pages - 1) * (self.per_page - 1)) * self.entry_bytes
        }
    }
}

impl DataPointerModel {
    pub fn new(h: &HostSettings) -> Self {
        Self {
            mode: h.data_pointers,
            page: h.memory_page_bytes,
            extent: h.buffer_extent_bytes,
        }
    }

    #[inline]
    pub fn is_none(&self) -> bool {
        self.mode == DataPointers::None
    }

    /// The list a command whose page-aligned data buffer holds `bytes` needs, if any. PRP1
    /// and PRP2 cover two memory pages, and one SGL descriptor in the command covers one
    /// extent; beyond that PRP lists one 8-byte entry per page after the first, SGL one
    /// 16-byte data block descriptor per extent.
    #[inline]
    pub fn list(&self, bytes: u64) -> Option<PointerList> {
        let (entries, entry_bytes) = match self.mode {
            DataPointers::None => return None,
            DataPointers::Prp => {
                let pages = bytes.div_ceil(self.page);
                if pages <= 2 {
                    return None;
                }
                (pages - 1, 8)
            }
            DataPointers::Sgl => {
                let extents = bytes.div_ceil(self.extent);
                if extents <= 1 {
                    return None;
                }
                (extents, 16)
            }
        };
        Some(PointerList {
            entries,
            entry_bytes,
            per_page: self.page / entry_bytes,
        })
    }

    /// Host memory the list of a `bytes` buffer occupies: whole memory pages.
    #[inline]
    pub fn list_memory(&self, bytes: u64) -> u64 {
        self.list(bytes).map_or(0, |l| l.pages() * self.page)
    }
}

#[cfg(test)]
mod pointer_tests {
    use super::*;
    use crate::config::{Config, InterfaceConfig};

    fn model(mode: DataPointers, extent: u32) -> DataPointerModel {
        let c = Config {
            interface: InterfaceConfig {
                data_pointers: mode,
                buffer_extent_bytes: extent,
                ..Default::default()
            },
            ..Config::default()
        };
        DataPointerModel::new(&HostSettings::resolve(&c))
    }

    #[test]
    fn prp_list_needs_three_pages() {
        let m = model(DataPointers::Prp, 4096);
        assert_eq!(m.list(4096), None);
        assert_eq!(m.list(8192), None);
        let l = m.list(12288).unwrap();
        assert_eq!((l.entries, l.pages(), l.page_read_bytes(0)), (2, 1, 16));
        // 2 MiB: 512 pages, 511 entries: one list page of 512 slots.
        let l = m.list(2 << 20).unwrap();
        assert_eq!((l.entries, l.pages(), l.page_read_bytes(0)), (511, 1, 4088));
        // 2 MiB + 8 KiB: 513 entries, one more than a page holds: 511 + chain, then 2.
        let l = m.list((2 << 20) + 8192).unwrap();
        assert_eq!(l.pages(), 2);
        assert_eq!((l.page_read_bytes(0), l.page_read_bytes(1)), (4096, 16));
    }

    #[test]
    fn sgl_segment_per_extent() {
        let m = model(DataPointers::Sgl, 4096);
        assert_eq!(m.list(4096), None);
        let l = m.list(8192).unwrap();
        assert_eq!(
            (l.entries, l.entry_bytes, l.page_read_bytes(0)),
            (2, 16, 32)
        );
        // 256 descriptors fill a 4 KiB segment; 257 chain to a second.
        assert_eq!(m.list(256 * 4096).unwrap().pages(), 1);
        let l = m.list(257 * 4096).unwrap();
        assert_eq!((l.pages(), l.page_read_bytes(1)), (2, 32));
        // A contiguous buffer needs no segment.
        assert_eq!(model(DataPointers::Sgl, 1 << 20).list(1 << 20), None);
        assert_eq!(m.list_memory(257 * 4096), 8192);
    }
}
