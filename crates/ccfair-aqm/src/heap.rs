//! An indexed binary max-heap: items are small integer ids with a `u128` key that can be changed or removed in
//! O(log n). FQ-CoDel keeps its non-empty buckets in one (key = byte backlog) so finding the fattest flow on
//! overflow is O(1) instead of Linux's scan of every bucket; PPV keeps its queued packets in one (key = inverse
//! packet value) to find the lowest-valued packet. Callers fold their tie-break into the key, so the top is
//! always unique and the choice deterministic.

const ABSENT: u32 = u32::MAX;

pub(crate) struct IndexedHeap {
    /// Heap order: `heap[0]` has the largest key.
    heap: Vec<u32>,
    /// Position of each id in `heap`, or `ABSENT`.
    pos: Vec<u32>,
    key: Vec<u128>,
}

/// Bytes the heap takes per id (its heap slot, position and key).
pub(crate) const BYTES_PER_ID: usize = 2 * std::mem::size_of::<u32>() + std::mem::size_of::<u128>();

impl IndexedHeap {
    /// A heap for ids below `ids` (more are accepted, growing the tables).
    pub fn with_capacity(ids: usize) -> Self {
        IndexedHeap {
            heap: Vec::with_capacity(ids),
            pos: vec![ABSENT; ids],
            key: vec![0; ids],
        }
    }

    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.heap.len()
    }

    /// The id with the largest key, and the key.
    pub fn top(&self) -> Option<(u32, u128)> {
        self.heap.first().map(|&id| (id, self.key[id as usize]))
    }

    /// Inserts `id` or changes its key.
    pub fn set(&mut self, id: u32, key: u128) {
        let i = id as usize;
        if i >= self.pos.len() {
            self.pos.resize(i + 1, ABSENT);
            self.key.resize(i + 1, 0);
        }
        let old = self.key[i];
        self.key[i] = key;
        match self.pos[i] {
            ABSENT => {
                self.heap.push(id);
                self.pos[i] = (self.heap.len() - 1) as u32;
                self.sift_up(self.heap.len() - 1);
            }
            p if key > old => self.sift_up(p as usize),
            p => self.sift_down(p as usize),
        }
    }

    /// Removes `id` if present.
    pub fn remove(&mut self, id: u32) {
        let Some(&p) = self.pos.get(id as usize) else {
            return;
        };
        if p == ABSENT {
            return;
        }
        let p = p as usize;
        let last = self.heap.len() - 1;
        self.swap(p, last);
        self.heap.pop();
        self.pos[id as usize] = ABSENT;
        if p < self.heap.len() {
            self.sift_down(p);
            self.sift_up(p);
        }
    }

    fn swap(&mut self, a: usize, b: usize) {
        self.heap.swap(a, b);
        self.pos[self.heap[a] as usize] = a as u32;
        self.pos[self.heap[b] as usize] = b as u32;
    }

    fn k(&self, p: usize) -> u128 {
        self.key[self.heap[p] as usize]
    }

    fn sift_up(&mut self, mut p: usize) {
        while p > 0 {
            let parent = (p - 1) / 2;
            if self.k(p) <= self.k(parent) {
                break;
            }
            self.swap(p, parent);
            p = parent;
        }
    }

    fn sift_down(&mut self, mut p: usize) {
        let n = self.heap.len();
        loop {
            let (l, r) = (2 * p + 1, 2 * p + 2);
            let mut best = p;
            if l < n && self.k(l) > self.k(best) {
                best = l;
            }
            if r < n && self.k(r) > self.k(best) {
                best = r;
            }
            if best == p {
                break;
            }
            self.swap(p, best);
            p = best;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Against a brute-force model: after any sequence of sets and removes the top is the maximum.
        #[test]
        fn top_is_the_maximum(ops in proptest::collection::vec((0u32..40, 0u128..50, any::<bool>()), 1..300)) {
            let mut h = IndexedHeap::with_capacity(8);
            let mut model: Vec<Option<u128>> = vec![None; 40];
            for (id, key, remove) in ops {
                if remove {
                    h.remove(id);
                    model[id as usize] = None;
                } else {
                    h.set(id, key);
                    model[id as usize] = Some(key);
                }
                let best = model.iter().filter_map(|k| *k).max();
                prop_assert_eq!(h.top().map(|t| t.1), best);
                prop_assert_eq!(h.len(), model.iter().flatten().count());
            }
        }
    }
}
