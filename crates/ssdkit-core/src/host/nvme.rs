use crate::config::{Arbitration, FlowConfig, InterfaceConfig, Priority};
use std::collections::VecDeque;

/// Host submission queues as the device sees them, and the request fetch unit.
///
/// NVMe: one queue per flow; at most `fetch_limit` requests of a queue are inside the device
/// (MQSim's QueueFetchSize). Round robin serves queues one command per turn; weighted
/// arbitration (NVMe WRR with urgent class) serves urgent queues first, then gives the high,
/// medium and low classes turns of `wrr_*` commands, round robin inside a class.
/// SATA: all flows share queue 0 and the limit is the NCQ depth.
pub struct FetchUnit {
    /// Requests whose doorbell reached the device, not yet fetched.
    visible: Vec<VecDeque<u32>>,
    pub in_device: Vec<u32>,
    pub max_in_device: Vec<u32>,
    fetch_limit: u32,
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
    pub fn new(queues: usize, fetch_limit: u32, i: &InterfaceConfig, flows: &[FlowConfig]) -> Self {
        let classes =
            (i.arbitration == Arbitration::Weighted && queues == flows.len()).then(|| {
                let mut members: [Vec<usize>; 4] = Default::default();
                for (q, f) in flows.iter().enumerate() {
                    let c = match f.priority {
                        Priority::Urgent => 0,
                        Priority::High => 1,
                        Priority::Medium => 2,
                        Priority::Low => 3,
                    };
                    members[c].push(q);
                }
                Box::new(WeightedState {
                    members,
                    cursor: [0; 4],
                    weight: [0, i.wrr_high, i.wrr_medium, i.wrr_low],
                    turn: 1,
                    credit: i.wrr_high,
                })
            });
        Self {
            visible: vec![VecDeque::new(); queues],
            in_device: vec![0; queues],
            max_in_device: vec![0; queues],
            fetch_limit,
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

    /// Next (queue, request) to fetch; None when no queue has both a visible request and room.
    #[inline]
    pub fn next_fetch(&mut self) -> Option<(usize, u32)> {
        if self.waiting == 0 {
            return None;
        }
        if self.classes.is_some() {
            return self.next_weighted();
        }
        let n = self.visible.len();
        for i in 0..n {
            let q = (self.rr + i) % n;
            if let Some(x) = self.take(q) {
                self.rr = (q + 1) % n;
                return Some(x);
            }
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
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_robin_and_limit() {
        let flows = vec![FlowConfig::default(); 2];
        let mut f = FetchUnit::new(2, 2, &InterfaceConfig::default(), &flows);
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
        let mut f = FetchUnit::new(4, 1000, &i, &flows);
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
}
