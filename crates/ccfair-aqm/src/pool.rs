//! A packet pool with intrusive doubly linked FIFO lists: the `skb->next` chains of Linux's multi-queue
//! disciplines without an allocation per packet.
//!
//! Packets live in one slab of slots; a [`List`] is a head/tail pair of slot indices. Freed slots are reused
//! (free list), so once the slab has grown to the largest backlog seen, enqueue and dequeue allocate nothing.
//! Removal from the middle of a list is O(1), which PPV needs to drop its lowest-valued packet wherever it is.

const NIL: u32 = u32::MAX;

struct Slot<P> {
    pkt: Option<P>,
    prev: u32,
    next: u32,
}

/// A FIFO of slots in a [`Pool`].
#[derive(Clone, Copy, Debug)]
pub(crate) struct List {
    head: u32,
    tail: u32,
    len: u32,
}

impl Default for List {
    fn default() -> Self {
        List {
            head: NIL,
            tail: NIL,
            len: 0,
        }
    }
}

impl List {
    pub fn len(&self) -> u32 {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The slot at the head, if any.
    pub fn front(&self) -> Option<u32> {
        (self.head != NIL).then_some(self.head)
    }
}

/// Bytes one packet of type `P` takes in a pool (for the estimate of a run's memory).
pub(crate) fn slot_bytes<P>() -> usize {
    std::mem::size_of::<Slot<P>>()
}

pub(crate) struct Pool<P> {
    slots: Vec<Slot<P>>,
    free: u32,
}

impl<P> Pool<P> {
    /// A pool with room for `capacity` packets before it has to grow.
    pub fn with_capacity(capacity: usize) -> Self {
        Pool {
            slots: Vec::with_capacity(capacity),
            free: NIL,
        }
    }

    /// Appends `pkt` to `list`; returns its slot.
    pub fn push_back(&mut self, list: &mut List, pkt: P) -> u32 {
        let slot = if self.free != NIL {
            let s = self.free;
            self.free = self.slots[s as usize].next;
            self.slots[s as usize] = Slot {
                pkt: Some(pkt),
                prev: list.tail,
                next: NIL,
            };
            s
        } else {
            self.slots.push(Slot {
                pkt: Some(pkt),
                prev: list.tail,
                next: NIL,
            });
            (self.slots.len() - 1) as u32
        };
        if list.tail != NIL {
            self.slots[list.tail as usize].next = slot;
        } else {
            list.head = slot;
        }
        list.tail = slot;
        list.len += 1;
        slot
    }

    /// Removes and returns the head of `list`.
    pub fn pop_front(&mut self, list: &mut List) -> Option<P> {
        let head = list.front()?;
        Some(self.remove(list, head))
    }

    /// Removes slot `slot`, which must belong to `list`.
    pub fn remove(&mut self, list: &mut List, slot: u32) -> P {
        let (prev, next) = {
            let s = &self.slots[slot as usize];
            (s.prev, s.next)
        };
        if prev != NIL {
            self.slots[prev as usize].next = next;
        } else {
            list.head = next;
        }
        if next != NIL {
            self.slots[next as usize].prev = prev;
        } else {
            list.tail = prev;
        }
        list.len -= 1;
        let s = &mut self.slots[slot as usize];
        let pkt = s.pkt.take().expect("removing an empty slot");
        s.next = self.free;
        s.prev = NIL;
        self.free = slot;
        pkt
    }

    /// The packet in `slot`.
    pub fn get(&self, slot: u32) -> &P {
        self.slots[slot as usize]
            .pkt
            .as_ref()
            .expect("reading an empty slot")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_share_one_pool_and_reuse_slots() {
        let mut pool = Pool::with_capacity(4);
        let (mut a, mut b) = (List::default(), List::default());
        let s1 = pool.push_back(&mut a, 1);
        pool.push_back(&mut b, 10);
        let s3 = pool.push_back(&mut a, 2);
        pool.push_back(&mut a, 3);
        assert_eq!(pool.remove(&mut a, s3), 2);
        assert_eq!(a.len(), 2);
        assert_eq!(pool.pop_front(&mut a), Some(1));
        // Freed slots are reused before the slab grows.
        let reused = pool.push_back(&mut b, 11);
        assert!(reused == s1 || reused == s3);
        assert_eq!(pool.slots.len(), 4);
        assert_eq!(pool.pop_front(&mut a), Some(3));
        assert_eq!(pool.pop_front(&mut a), None);
        assert_eq!(pool.pop_front(&mut b), Some(10));
        assert_eq!(pool.pop_front(&mut b), Some(11));
        assert!(a.is_empty() && b.is_empty());
    }
}
