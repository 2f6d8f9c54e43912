//! A fixed pool of frame buffers, allocated once: frames are received into a free slot and stay there through
//! the queue and the delay lines until they are sent, so the per-packet path never allocates. When the pool
//! is empty the frame is dropped and counted (`exhausted`), which flags the run as emulator-limited.

pub struct Pool {
    bytes: Vec<u8>,
    slot_bytes: usize,
    free: Vec<u32>,
    /// Frames dropped because no slot was free.
    pub exhausted: u64,
}

impl Pool {
    /// `slots` buffers of `slot_bytes` each.
    pub fn new(slots: usize, slot_bytes: usize) -> Pool {
        Pool {
            bytes: vec![0; slots * slot_bytes],
            slot_bytes,
            free: (0..slots as u32).rev().collect(),
            exhausted: 0,
        }
    }

    pub fn slot_bytes(&self) -> usize {
        self.slot_bytes
    }

    pub fn capacity(&self) -> usize {
        self.bytes.len() / self.slot_bytes
    }

    pub fn in_use(&self) -> usize {
        self.capacity() - self.free.len()
    }

    #[inline]
    pub fn alloc(&mut self) -> Option<u32> {
        let s = self.free.pop();
        if s.is_none() {
            self.exhausted += 1;
        }
        s
    }

    #[inline]
    pub fn release(&mut self, slot: u32) {
        debug_assert!(!self.free.contains(&slot), "slot {slot} released twice");
        self.free.push(slot);
    }

    #[inline]
    pub fn buf(&self, slot: u32) -> &[u8] {
        let at = slot as usize * self.slot_bytes;
        &self.bytes[at..at + self.slot_bytes]
    }

    #[inline]
    pub fn buf_mut(&mut self, slot: u32) -> &mut [u8] {
        let at = slot as usize * self.slot_bytes;
        &mut self.bytes[at..at + self.slot_bytes]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_are_reused_and_exhaustion_is_counted() {
        let mut p = Pool::new(2, 64);
        let a = p.alloc().unwrap();
        let b = p.alloc().unwrap();
        assert_ne!(a, b);
        assert!(p.alloc().is_none());
        assert_eq!(p.exhausted, 1);
        p.buf_mut(a)[0] = 7;
        p.release(a);
        assert_eq!(p.alloc(), Some(a));
        assert_eq!(p.buf(a)[0], 7);
        assert_eq!(p.in_use(), 2);
    }
}
