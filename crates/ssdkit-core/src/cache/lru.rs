//! An intrusive doubly linked LRU list over entry indices: the links live in a flat array
//! beside the entries, so moving an entry to the front, unlinking it and finding the least
//! recently used one allocate nothing.

pub const NIL: u32 = u32::MAX;

#[derive(Debug, Clone, Copy)]
struct Links {
    prev: u32,
    next: u32,
    linked: bool,
}

/// Several lists (one per partition) sharing one link array.
#[derive(Debug, Clone, Default)]
pub struct Lru {
    links: Vec<Links>,
    /// Per list: (most recent, least recent).
    ends: Vec<(u32, u32)>,
}

impl Lru {
    pub fn new(lists: usize) -> Self {
        Self {
            links: Vec::new(),
            ends: vec![(NIL, NIL); lists],
        }
    }

    fn grow(&mut self, i: u32) {
        if self.links.len() <= i as usize {
            self.links.resize(
                i as usize + 1,
                Links {
                    prev: NIL,
                    next: NIL,
                    linked: false,
                },
            );
        }
    }

    pub fn contains(&self, i: u32) -> bool {
        self.links.get(i as usize).is_some_and(|l| l.linked)
    }

    /// Puts `i` at the most recent end of `list`.
    pub fn push_front(&mut self, list: usize, i: u32) {
        self.grow(i);
        let (head, tail) = self.ends[list];
        self.links[i as usize] = Links {
            prev: NIL,
            next: head,
            linked: true,
        };
        if head != NIL {
            self.links[head as usize].prev = i;
        }
        self.ends[list] = (i, if tail == NIL { i } else { tail });
    }

    pub fn unlink(&mut self, list: usize, i: u32) {
        let l = self.links[i as usize];
        debug_assert!(l.linked);
        if l.prev != NIL {
            self.links[l.prev as usize].next = l.next;
        } else {
            self.ends[list].0 = l.next;
        }
        if l.next != NIL {
            self.links[l.next as usize].prev = l.prev;
        } else {
            self.ends[list].1 = l.prev;
        }
        self.links[i as usize].linked = false;
    }

    /// Marks `i` most recently used.
    pub fn touch(&mut self, list: usize, i: u32) {
        if self.contains(i) && self.ends[list].0 != i {
            self.unlink(list, i);
            self.push_front(list, i);
        }
    }

    /// From least to most recently used.
    pub fn iter_from_tail(&self, list: usize) -> impl Iterator<Item = u32> + '_ {
        let mut at = self.ends[list].1;
        std::iter::from_fn(move || {
            if at == NIL {
                return None;
            }
            let i = at;
            at = self.links[i as usize].prev;
            Some(i)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn order_touch_unlink() {
        let mut l = Lru::new(1);
        for i in 0..4 {
            l.push_front(0, i);
        }
        assert_eq!(l.iter_from_tail(0).collect::<Vec<_>>(), vec![0, 1, 2, 3]);
        l.touch(0, 0);
        assert_eq!(l.iter_from_tail(0).collect::<Vec<_>>(), vec![1, 2, 3, 0]);
        l.unlink(0, 2);
        l.unlink(0, 1);
        assert_eq!(l.iter_from_tail(0).collect::<Vec<_>>(), vec![3, 0]);
        assert!(!l.contains(1));
    }
}
