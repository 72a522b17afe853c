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

/// Queues of one die. User reads go first, then user writes, then GC, except when a plane of
/// the die is down to its GC reserve: then GC goes first so user writes can resume.
#[derive(Default)]
pub struct DieQueues {
    pub reads: VecDeque<u32>,
    pub writes: VecDeque<u32>,
    pub gc: VecDeque<u32>,
}

impl DieQueues {
    pub fn is_empty(&self) -> bool {
        self.reads.is_empty() && self.writes.is_empty() && self.gc.is_empty()
    }
    pub fn len(&self) -> usize {
        self.reads.len() + self.writes.len() + self.gc.len()
    }
}
