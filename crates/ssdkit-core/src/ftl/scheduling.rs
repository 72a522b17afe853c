//! Transaction scheduling unit: page transactions and the per-die queues they wait in.

use std::collections::VecDeque;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TxKind {
    UserRead,
    UserWrite,
    /// Reads the unchanged sectors of a page before a partial-page write.
    RmwRead,
    GcRead,
    GcWrite,
    GcErase,
}

/// One flash transaction. Plain data in a slab; queues hold indices.
#[derive(Debug, Clone, Copy)]
pub struct Tx {
    pub kind: TxKind,
    /// Owning request (user transactions) or NONE.
    pub req: u32,
    pub lpa: u32,
    /// Source page for reads and GC writes; the page written, once allocated, for writes;
    /// the block for erases.
    pub ppa: u32,
    pub plane: u32,
    /// Sectors moved over the channel (reads).
    pub sectors: u32,
    /// RmwRead: the write transaction to release when it completes.
    pub link: u32,
}

/// A free-list slab: indices stay valid until freed, storage is reused.
pub struct Slab<T> {
    items: Vec<T>,
    free: Vec<u32>,
}

impl<T: Copy> Slab<T> {
    pub fn new() -> Self {
        Self {
            items: Vec::new(),
            free: Vec::new(),
        }
    }
    #[inline]
    pub fn insert(&mut self, t: T) -> u32 {
        if let Some(i) = self.free.pop() {
            self.items[i as usize] = t;
            i
        } else {
            self.items.push(t);
            (self.items.len() - 1) as u32
        }
    }
    #[inline]
    pub fn remove(&mut self, i: u32) {
        self.free.push(i);
    }
    #[inline]
    pub fn get(&self, i: u32) -> &T {
        &self.items[i as usize]
    }
    #[inline]
    pub fn get_mut(&mut self, i: u32) -> &mut T {
        &mut self.items[i as usize]
    }
    pub fn live(&self) -> usize {
        self.items.len() - self.free.len()
    }
}

impl<T: Copy> Default for Slab<T> {
    fn default() -> Self {
        Self::new()
    }
}

/// Queues of one die (seed 000 section 2.3: user and GC traffic queue apart). With
/// preemptible GC, user reads go first, then user writes, then GC; GC goes first when a
/// plane of the die is down to its reserve, or after `gc_starvation_limit` user operations
/// in a row while GC waited. Without preemption, queued GC goes first.
#[derive(Default)]
pub struct DieQueues {
    pub reads: VecDeque<u32>,
    pub writes: VecDeque<u32>,
    pub gc_reads: VecDeque<u32>,
    pub gc_writes: VecDeque<u32>,
    pub gc_erases: VecDeque<u32>,
    /// User operations started in a row while GC transactions waited.
    pub user_streak: u32,
}

impl DieQueues {
    #[inline]
    pub fn gc_empty(&self) -> bool {
        self.gc_reads.is_empty() && self.gc_writes.is_empty() && self.gc_erases.is_empty()
    }
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.reads.is_empty() && self.writes.is_empty() && self.gc_empty()
    }
    pub fn len(&self) -> usize {
        self.reads.len()
            + self.writes.len()
            + self.gc_reads.len()
            + self.gc_writes.len()
            + self.gc_erases.len()
    }
}
