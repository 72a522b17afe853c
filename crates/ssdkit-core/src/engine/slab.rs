/// A free-list slab: indices stay valid until freed, storage is reused, so the steady state
/// allocates nothing. Indices are raw `u32`s; owners wrap them in their own index type.
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
    /// Slots in use.
    pub fn live(&self) -> usize {
        self.items.len() - self.free.len()
    }
}

impl<T: Copy> Default for Slab<T> {
    fn default() -> Self {
        Self::new()
    }
}

/// Values waiting under a handle given before they are parked (the owner hands the handle
/// out first, then parks the value if it must wait); handles of taken values are reused.
#[derive(Debug)]
pub struct Parking<T> {
    slots: Vec<Option<T>>,
    free: Vec<u32>,
}

impl<T> Default for Parking<T> {
    fn default() -> Self {
        Self {
            slots: Vec::new(),
            free: Vec::new(),
        }
    }
}

impl<T> Parking<T> {
    /// The handle the next parked value gets.
    #[inline]
    pub fn next(&self) -> u32 {
        self.free.last().copied().unwrap_or(self.slots.len() as u32)
    }
    pub fn park(&mut self, h: u32, p: T) {
        if self.free.last() == Some(&h) {
            self.free.pop();
            self.slots[h as usize] = Some(p);
        } else {
            debug_assert_eq!(h as usize, self.slots.len());
            self.slots.push(Some(p));
        }
    }
    pub fn take(&mut self, h: u32) -> T {
        self.free.push(h);
        self.slots[h as usize].take().expect("a parked value")
    }
}
