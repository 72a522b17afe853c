use std::collections::VecDeque;

/// Host submission queues as the device sees them, and the request fetch unit.
///
/// NVMe: one queue per flow; at most `fetch_limit` requests of a queue are inside the device
/// (MQSim's QueueFetchSize); the fetch unit serves queues round-robin, one command per turn.
/// SATA: all flows share queue 0 and the limit is the NCQ depth.
pub struct FetchUnit {
    /// Requests whose doorbell reached the device, not yet fetched.
    visible: Vec<VecDeque<u32>>,
    pub in_device: Vec<u32>,
    pub max_in_device: Vec<u32>,
    fetch_limit: u32,
    rr: usize,
    waiting: usize,
}

impl FetchUnit {
    pub fn new(queues: usize, fetch_limit: u32) -> Self {
        Self {
            visible: vec![VecDeque::new(); queues],
            in_device: vec![0; queues],
            max_in_device: vec![0; queues],
            fetch_limit,
            rr: 0,
            waiting: 0,
        }
    }

    pub fn announce(&mut self, queue: usize, req: u32) {
        self.visible[queue].push_back(req);
        self.waiting += 1;
    }

    /// Next (queue, request) to fetch, round-robin over queues with room; None when no queue
    /// has both a visible request and room.
    #[inline]
    pub fn next_fetch(&mut self) -> Option<(usize, u32)> {
        if self.waiting == 0 {
            return None;
        }
        let n = self.visible.len();
        for i in 0..n {
            let q = (self.rr + i) % n;
            if self.in_device[q] < self.fetch_limit {
                if let Some(r) = self.visible[q].pop_front() {
                    self.rr = (q + 1) % n;
                    self.waiting -= 1;
                    self.in_device[q] += 1;
                    self.max_in_device[q] = self.max_in_device[q].max(self.in_device[q]);
                    return Some((q, r));
                }
            }
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
        let mut f = FetchUnit::new(2, 2);
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
}
