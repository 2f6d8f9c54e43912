//! The event queue: events ordered by (time, insertion sequence), so events at the same instant run in the
//! order they were scheduled and every run is reproducible. The payload is a packed event code (24 bits),
//! never a packet (packets wait in pipes and queues).
//!
//! Each event is one 128-bit key, `time << 64 | sequence << 24 | code`: ordering by (time, sequence) is a
//! single unsigned comparison, and as sequences are unique no two keys are equal, so any structure that
//! hands out the smallest key first gives exactly the same order.
//!
//! Layout: a timing wheel and a coarser level in front of two heaps. Time is cut into buckets of
//! [`BUCKET_NS`]; the wheel has [`WHEEL_BUCKETS`] of them, about 67 ms, and takes the events due before the
//! start of the block two after the current bucket's (blocks of half the wheel, 34 ms; so 34 to 67 ms
//! ahead). An event due within the wheel's span is appended, unsorted, to its bucket; one beyond it is
//! appended, unsorted, to its block on the coarse level (256 blocks, 8.6 s: a retransmission timer with a
//! timer per flow), and one beyond that goes into the `far` heap. When the current bucket is used up, the next
//! non-empty bucket (found through a bitmap) becomes current: the coarse level's blocks now within the
//! wheel's span move onto it whole, `far` gives up what now falls within the coarse level's, and the
//! bucket's events are sorted once into `run`, which hands them out from its end. (With 100,000 flows a far
//! heap of their timers was several cache misses per pop below its first levels; a block is appended to and
//! read in order.)
//! An event scheduled into the current bucket (or earlier) after that is inserted into `run` in order, or,
//! while `run` is long, goes into the `near` heap; a pop takes the smaller of `run`'s and `near`'s next. Most
//! events are a pipe's head (due a one-way delay ahead, or, for a pipe's next head, often within the current
//! bucket) or the link's next departure (due a serialization time ahead, see below), so they take the
//! wheel's constant-time path or a few moves in `run`, where a single heap of all pending events would be
//! several levels deep and, with thousands of flows, larger than the first-level cache. Appends land in the few buckets at the
//! wheel's leading edge and a bucket is read back in order, so both are cache-friendly. Bucket storage is
//! reused (`run` and the bucket swap buffers): once the buckets have held their largest loads, nothing
//! allocates.
//!
//! The heaps are 4-ary, their entries stored in 64-byte groups of four such that the four children of a node
//! always fill exactly one group (one cache line): the root sits in the last slot of group 0, and node `i`'s
//! children are group `i + 1`. Slots past the end hold the largest key, so choosing the smallest child needs
//! no bounds checks.
//!
//! One kind of event never has more than one pending: the link's next departure (one per bottleneck, due a
//! serialization time ahead, so mostly within the current bucket, where it would take a heap push and pop).
//! It waits in a slot of its own ([`EventQueue::push_single`]), and a pop takes the smallest of three keys
//! (`run`'s, `near`'s and the slot's).
//! It is 40 % of the events at 10 Gb/s; its key is made like every other (with its sequence), so the order
//! is the same.
//!
//! A bucket that becomes current asks the caches for the next bucket's storage (`crate::prefetch`): it was
//! written about a one-way delay ago and, with thousands of flows, has left the caches since. For the
//! simulation's own prefetching, [`EventQueue::upcoming`] tells the codes of the next events as far as `run`
//! (then the next bucket, unsorted) knows them.
//!
//! Timers are cancelled lazily: a [`TimerSlot`] remembers the earliest event it has in the queue, and the
//! owner keeps the real deadline. Re-arming a timer later than the pending event pushes nothing (the pending
//! event notices the new deadline when it pops); re-arming it earlier pushes one event. Linux re-arms its RTO
//! on almost every ACK, so this keeps the queue small and the event count honest.

use ccfair_core::Time;

/// Bits of an event's tie-breaking word that hold its code; the rest hold the insertion sequence.
const CODE_BITS: u32 = 24;
const CODE_MASK: u64 = (1 << CODE_BITS) - 1;

/// The longest `run` that a key of the current bucket is inserted into (see [`EventQueue::place_current`]).
const RUN_INSERT_MAX: usize = 32;

/// The key of an empty slot: larger than any event's (whose sequence never reaches 2^40).
const EMPTY: u128 = u128::MAX;

/// log2 of a bucket's width: 4096 ns, a few packet times at 10 Gb/s, so a bucket holds a handful of events
/// on a busy link.
const BUCKET_SHIFT: u32 = 12;
pub const BUCKET_NS: u64 = 1 << BUCKET_SHIFT;
/// Buckets on the wheel: 2^14 buckets of 4096 ns span 67 ms, more than the one-way delay of most paths
/// and the delayed-ACK timer, so their events never wait in the far heap.
pub const WHEEL_BUCKETS: usize = 1 << 14;
const WHEEL_MASK: u64 = WHEEL_BUCKETS as u64 - 1;

/// log2 of the buckets in one block of the coarse level: half the wheel, 2^13 buckets (34 ms).
const BLOCK_SHIFT: u32 = 13;
/// Blocks on the coarse level: 256 blocks of 34 ms span 8.6 s, more than a retransmission timeout usually
/// waits, so timers rarely reach the far heap.
const COARSE_BLOCKS: usize = 256;

#[inline]
fn block_of(bucket: u64) -> u64 {
    bucket >> BLOCK_SHIFT
}

#[inline]
fn bucket_of(key: u128) -> u64 {
    ((key >> 64) as u64) >> BUCKET_SHIFT
}

/// Four heap slots, aligned to a cache line: the children of one node.
#[derive(Copy, Clone, Debug)]
#[repr(align(64))]
struct Group([u128; 4]);

const EMPTY_GROUP: Group = Group([EMPTY; 4]);

/// Heap node `i` lives at slot `i + 3` (group, slot within it): the root is the last slot of group 0.
#[inline]
fn place(i: usize) -> (usize, usize) {
    let p = i + 3;
    (p / 4, p % 4)
}

/// A cache-aligned 4-ary min-heap of 128-bit keys (see the module docs).
#[derive(Debug)]
struct KeyHeap {
    groups: Vec<Group>,
    len: usize,
}

impl KeyHeap {
    fn new() -> KeyHeap {
        KeyHeap {
            groups: vec![EMPTY_GROUP],
            len: 0,
        }
    }

    #[inline]
    fn get(&self, i: usize) -> u128 {
        let (g, s) = place(i);
        self.groups[g].0[s]
    }

    #[inline]
    fn set(&mut self, i: usize, key: u128) {
        let (g, s) = place(i);
        self.groups[g].0[s] = key;
    }

    /// The smallest key, or [`EMPTY`].
    #[inline]
    fn peek(&self) -> u128 {
        self.groups[0].0[3]
    }

    #[inline]
    fn push(&mut self, key: u128) {
        let mut i = self.len;
        self.len += 1;
        if place(i).0 == self.groups.len() {
            self.groups.push(EMPTY_GROUP);
        }
        while i > 0 {
            let parent = (i - 1) / 4;
            let above = self.get(parent);
            if above <= key {
                break;
            }
            self.set(i, above);
            i = parent;
        }
        self.set(i, key);
    }

    /// Removes the smallest key (the heap must not be empty).
    #[inline]
    fn pop(&mut self) -> u128 {
        let top = self.peek();
        self.len -= 1;
        let last = self.get(self.len);
        self.set(self.len, EMPTY);
        if self.len > 0 {
            // Sift the former last entry down from the root; empty slots never win.
            let mut i = 0;
            while let Some(children) = self.groups.get(i + 1) {
                let c = &children.0;
                let (k01, v01) = if c[1] < c[0] { (1, c[1]) } else { (0, c[0]) };
                let (k23, v23) = if c[3] < c[2] { (3, c[3]) } else { (2, c[2]) };
                let (k, v) = if v23 < v01 { (k23, v23) } else { (k01, v01) };
                if last <= v {
                    break;
                }
                self.set(i, v);
                i = 4 * i + 1 + k;
            }
            self.set(i, last);
        }
        top
    }
}

/// The event queue (see the module docs).
#[derive(Debug)]
pub struct EventQueue {
    /// The current bucket's events as it became current, sorted from the largest key to the smallest.
    run: Vec<u128>,
    /// Events scheduled into the current bucket (or earlier) after it became current.
    near: KeyHeap,
    /// Per bucket of the wheel's span, its events in insertion order.
    wheel: Vec<Vec<u128>>,
    /// One bit per wheel slot: the bucket holds events.
    occupied: Vec<u64>,
    /// Events in the wheel.
    wheel_len: usize,
    /// Per block of the coarse level's span, its events in insertion order (slot: block mod
    /// [`COARSE_BLOCKS`]).
    coarse: Vec<Vec<u128>>,
    /// Events on the coarse level.
    coarse_len: usize,
    /// The first block of the coarse level: the block two after the current bucket's (see
    /// [`EventQueue::wheel_end`]).
    coarse_first: u64,
    /// Events due after the coarse level's span.
    far: KeyHeap,
    /// The one pending event of [`EventQueue::push_single`], or [`EMPTY`].
    single: u128,
    /// The current bucket (absolute index: time >> BUCKET_SHIFT).
    current: u64,
    seq: u64,
}

impl Default for EventQueue {
    fn default() -> Self {
        EventQueue::new()
    }
}

impl EventQueue {
    pub fn new() -> EventQueue {
        EventQueue {
            run: Vec::new(),
            near: KeyHeap::new(),
            wheel: vec![Vec::new(); WHEEL_BUCKETS],
            occupied: vec![0; WHEEL_BUCKETS / 64],
            wheel_len: 0,
            coarse: vec![Vec::new(); COARSE_BLOCKS],
            coarse_len: 0,
            coarse_first: 2,
            far: KeyHeap::new(),
            single: EMPTY,
            current: 0,
            seq: 0,
        }
    }

    /// Schedules event `code` (at most 24 bits) at `at`.
    #[inline]
    pub fn push(&mut self, at: Time, code: u64) {
        let key = self.key(at, code);
        self.place_key(key);
    }

    /// Schedules event `code` at `at` in the slot for the one event that is never pending more than once
    /// (see the module docs): none may be pending there.
    #[inline]
    pub fn push_single(&mut self, at: Time, code: u64) {
        debug_assert_eq!(self.single, EMPTY, "a single event is already pending");
        self.single = self.key(at, code);
    }

    #[inline]
    fn key(&mut self, at: Time, code: u64) -> u128 {
        debug_assert!(code <= CODE_MASK, "event code {code:#x} too wide");
        let key = ((at.ns() as u128) << 64) | ((self.seq << CODE_BITS) | code) as u128;
        self.seq += 1;
        key
    }

    /// Puts `key` where its bucket says: into `run` (or `near`), on the wheel or far.
    #[inline]
    fn place_key(&mut self, key: u128) {
        if bucket_of(key) <= self.current {
            self.place_current(key);
        } else {
            self.place_ahead(key);
        }
    }

    /// A key of the current bucket (or earlier) joins `run` in order while `run` is short: it is usually due
    /// before only a few of the bucket's remaining events, which sit at the end, so it takes a few moves
    /// where a push into `near` and the pop out of it would take two walks of the heap. A long `run` (a
    /// crowded instant) sends it to `near`, which bounds the moves.
    #[inline]
    fn place_current(&mut self, key: u128) {
        if self.run.len() >= RUN_INSERT_MAX {
            self.near.push(key);
            return;
        }
        // `run` runs from the largest key to the smallest: move the smaller ones at its end up by one.
        let mut i = self.run.len();
        self.run.push(key);
        while i > 0 && self.run[i - 1] < key {
            self.run[i] = self.run[i - 1];
            i -= 1;
        }
        self.run[i] = key;
    }

    /// The first bucket the wheel does not take: the first of the block two after the current bucket's, so
    /// at most [`WHEEL_BUCKETS`] ahead, and whole blocks of the coarse level join the wheel as it moves.
    #[inline]
    fn wheel_end(&self) -> u64 {
        (block_of(self.current) + 2) << BLOCK_SHIFT
    }

    /// The first block the coarse level does not take.
    #[inline]
    fn coarse_end(&self) -> u64 {
        self.coarse_first + COARSE_BLOCKS as u64
    }

    /// A key of a bucket after the current one: on the wheel, on the coarse level, or far beyond both.
    #[inline]
    fn place_ahead(&mut self, key: u128) {
        let b = bucket_of(key);
        if b < self.wheel_end() {
            let slot = (b & WHEEL_MASK) as usize;
            self.wheel[slot].push(key);
            self.occupied[slot / 64] |= 1 << (slot % 64);
            self.wheel_len += 1;
        } else if block_of(b) < self.coarse_end() {
            self.coarse[block_of(b) as usize % COARSE_BLOCKS].push(key);
            self.coarse_len += 1;
        } else {
            self.far.push(key);
        }
    }

    /// The next event if it is due at or before `limit`.
    #[inline]
    pub fn pop_until(&mut self, limit: Time) -> Option<(Time, u64)> {
        if self.run.is_empty() && self.near.len == 0 {
            self.advance();
        }
        // An empty place's key is EMPTY, larger than any event's; keys are unique, so equality names the place.
        let run_top = self.run.last().copied().unwrap_or(EMPTY);
        let near_top = self.near.peek();
        let top = run_top.min(near_top).min(self.single);
        if top == EMPTY || (top >> 64) as u64 > limit.ns() {
            return None;
        }
        if top == run_top {
            self.run.pop();
        } else if top == near_top {
            self.near.pop();
        } else {
            self.single = EMPTY;
        }
        Some((Time::from_ns((top >> 64) as u64), top as u64 & CODE_MASK))
    }

    /// The code of the event `k` places after the next one (0: the next), as far as the current bucket's
    /// sorted run and then the next bucket (in insertion order, unsorted) tell. A hint for prefetching: an
    /// event scheduled later may still come before it, and the link's departure and the `near` heap are not
    /// looked at.
    #[inline]
    pub fn upcoming(&self, k: usize) -> Option<u64> {
        let key = match self.run.len().checked_sub(k + 1) {
            Some(i) => self.run[i],
            None => *self.next_bucket().get(k - self.run.len())?,
        };
        Some(key as u64 & CODE_MASK)
    }

    /// The events of the bucket after the current one.
    #[inline]
    fn next_bucket(&self) -> &[u128] {
        &self.wheel[((self.current + 1) & WHEEL_MASK) as usize]
    }

    /// Makes the next bucket with events current and sorts its events into `run` (which must be empty);
    /// false if the queue holds none beyond the current bucket.
    #[cold]
    fn advance(&mut self) -> bool {
        // Every event on the wheel is due before any on the coarse level, and those before any far one.
        let next = match self.next_occupied() {
            Some(b) => b,
            None => match self.first_beyond_wheel() {
                Some(b) => b,
                None => return false,
            },
        };
        self.current = next;
        // The spans moved: whole blocks of the coarse level, then far events, join the level below (those of
        // the new bucket its slot, which becomes `run` next: none is earlier).
        self.lower_coarse();
        while self.far.len > 0 && block_of(bucket_of(self.far.peek())) < self.coarse_end() {
            let key = self.far.pop();
            self.place_ahead(key);
        }
        let slot = (self.current & WHEEL_MASK) as usize;
        // The bucket's storage becomes `run`, and `run`'s (empty) storage the bucket's.
        std::mem::swap(&mut self.run, &mut self.wheel[slot]);
        self.wheel_len -= self.run.len();
        self.run.sort_unstable_by(|a, b| b.cmp(a));
        self.occupied[slot / 64] &= !(1 << (slot % 64));
        // The next bucket's storage was written about a one-way delay ago and is cold: it becomes the run after
        // this one, a few events from now.
        crate::prefetch::value(self.next_bucket());
        true
    }

    /// The coarse level's blocks now before [`EventQueue::wheel_end`] move onto the wheel, in full (each
    /// block's storage stays, empty, for later use).
    fn lower_coarse(&mut self) {
        let first = block_of(self.wheel_end());
        if self.coarse_len == 0 {
            self.coarse_first = first;
            return;
        }
        while self.coarse_first < first && self.coarse_len > 0 {
            let slot = self.coarse_first as usize % COARSE_BLOCKS;
            let mut keys = std::mem::take(&mut self.coarse[slot]);
            self.coarse_len -= keys.len();
            self.coarse_first += 1;
            for key in keys.drain(..) {
                self.place_ahead(key);
            }
            self.coarse[slot] = keys;
        }
        self.coarse_first = first;
    }

    /// With the wheel empty: the bucket of the earliest event on the coarse level, else in the far heap.
    fn first_beyond_wheel(&self) -> Option<u64> {
        if self.coarse_len > 0 {
            let keys = (0..COARSE_BLOCKS as u64)
                .map(|k| &self.coarse[(self.coarse_first + k) as usize % COARSE_BLOCKS])
                .find(|keys| !keys.is_empty())?;
            return keys.iter().min().map(|&key| bucket_of(key));
        }
        (self.far.len > 0).then(|| bucket_of(self.far.peek()))
    }

    /// The first bucket after the current one that holds events, if the wheel holds any.
    fn next_occupied(&self) -> Option<u64> {
        if self.wheel_len == 0 {
            return None;
        }
        // Scan the slots from the one after the current bucket's, wrapping around once.
        let start = ((self.current + 1) & WHEEL_MASK) as usize;
        let words = self.occupied.len();
        let (w0, bit0) = (start / 64, start % 64);
        let first = self.occupied[w0] & (u64::MAX << bit0);
        let found = if first != 0 {
            Some(w0 * 64 + first.trailing_zeros() as usize)
        } else {
            (1..=words).find_map(|k| {
                let w = (w0 + k) % words;
                let bits = if w == w0 {
                    self.occupied[w] & !(u64::MAX << bit0)
                } else {
                    self.occupied[w]
                };
                (bits != 0).then(|| w * 64 + bits.trailing_zeros() as usize)
            })
        }?;
        let ahead = (found as u64).wrapping_sub(start as u64) & WHEEL_MASK;
        Some(self.current + 1 + ahead)
    }

    pub fn len(&self) -> usize {
        self.run.len()
            + self.near.len
            + self.wheel_len
            + self.coarse_len
            + self.far.len
            + usize::from(self.single != EMPTY)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Lazy-cancellation bookkeeping for one timer (see the module docs).
#[derive(Copy, Clone, Debug, Default)]
pub struct TimerSlot {
    armed_at: Option<Time>,
}

impl TimerSlot {
    /// Makes sure an event exists at or before `deadline`; returns the time to push an event at, if needed.
    #[inline]
    pub fn want(&mut self, deadline: Option<Time>) -> Option<Time> {
        let d = deadline?;
        if self.armed_at.is_none_or(|a| d < a) {
            self.armed_at = Some(d);
            return Some(d);
        }
        None
    }

    /// An event of this slot popped at `now`.
    #[inline]
    pub fn popped(&mut self, now: Time) {
        if self.armed_at == Some(now) {
            self.armed_at = None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ties_run_in_insertion_order() {
        let mut q = EventQueue::new();
        let t = Time::from_ns(10);
        q.push(Time::from_ns(20), 9);
        for code in 0..5 {
            q.push(t, code);
        }
        let order: Vec<u64> = std::iter::from_fn(|| q.pop_until(Time::MAX).map(|(_, c)| c)).collect();
        assert_eq!(order, vec![0, 1, 2, 3, 4, 9]);
    }

    #[test]
    fn pops_in_time_order_like_a_sorted_list() {
        let mut q = EventQueue::new();
        let mut x: u64 = 99;
        let mut expected = Vec::new();
        for i in 0..5000u64 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let t = (x >> 33) % 1000;
            q.push(Time::from_ns(t), i % 1000);
            expected.push((t, i));
        }
        expected.sort();
        let got: Vec<u64> = std::iter::from_fn(|| q.pop_until(Time::MAX).map(|(t, _)| t.ns())).collect();
        assert_eq!(got, expected.iter().map(|&(t, _)| t).collect::<Vec<_>>());
        q.push(Time::from_ns(10), 1);
        assert_eq!(q.pop_until(Time::from_ns(9)), None);
        assert_eq!(q.pop_until(Time::from_ns(10)), Some((Time::from_ns(10), 1)));
    }

    /// An event queue checked against a reference heap of (time, push order, code), driven by a seeded
    /// linear congruential generator: every pop must return what the reference pops.
    struct Checked {
        q: EventQueue,
        reference: std::collections::BinaryHeap<std::cmp::Reverse<(u64, u64, u64)>>,
        x: u64,
        pushes: u64,
        now: u64,
    }

    impl Checked {
        fn new(seed: u64) -> Self {
            Checked {
                q: EventQueue::new(),
                reference: std::collections::BinaryHeap::new(),
                x: seed,
                pushes: 0,
                now: 0,
            }
        }

        /// Draws the next number; its top 4 bits choose between a push and a pop.
        fn draw(&mut self) -> u64 {
            self.x = self
                .x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            self.x
        }

        /// A time ahead of now by a draw below one of `scales` (picked by the draw too).
        fn ahead(&self, scales: &[u64]) -> u64 {
            self.now + (self.x >> 20) % scales[((self.x >> 16) % scales.len() as u64) as usize]
        }

        fn push(&mut self, at: u64, code: u64, single: bool) {
            if single {
                self.q.push_single(Time::from_ns(at), code);
            } else {
                self.q.push(Time::from_ns(at), code);
            }
            self.reference.push(std::cmp::Reverse((at, self.pushes, code)));
            self.pushes += 1;
        }

        /// Pops the next event due by `limit` from both, asserts they agree, moves now to it and returns it.
        fn pop(&mut self, limit: u64, step: u64) -> Option<(u64, u64)> {
            use std::cmp::Reverse;
            let want = match self.reference.peek() {
                Some(Reverse((t, _, _))) if *t <= limit => {
                    self.reference.pop().map(|Reverse((t, _, c))| (t, c))
                }
                _ => None,
            };
            let got = self.q.pop_until(Time::from_ns(limit)).map(|(t, c)| (t.ns(), c));
            assert_eq!(got, want, "step {step}");
            assert_eq!(self.q.len(), self.reference.len());
            if let Some((t, _)) = got {
                self.now = t;
            }
            got
        }
    }

    #[test]
    fn interleaved_pushes_and_pops_match_a_reference_heap() {
        let mut c = Checked::new(7);
        for step in 0..200_000u64 {
            let x = c.draw();
            // Phases of growth and of draining, so the heap crosses many group boundaries both ways.
            let grow = (step / 5000) % 2 == 0;
            if (x >> 60) < if grow { 11 } else { 5 } {
                // Delays at every scale: within the current bucket, on the wheel, and beyond its span.
                let at = c.ahead(&[3_000, 100_000, 70_000_000, 300_000_000, 20_000_000_000]);
                c.push(at, (x >> 8) & CODE_MASK, false);
            } else {
                c.pop(c.now + (x >> 40) % 50_000, step);
            }
        }
    }

    #[test]
    fn events_crossing_the_coarse_level_and_the_far_heap_match_a_reference_heap() {
        let mut c = Checked::new(3);
        for step in 0..100_000u64 {
            let x = c.draw();
            if (x >> 60) < 8 {
                // Timers a wheel, a coarse block, the coarse span (8.6 s) and beyond it ahead.
                let at = c.ahead(&[50_000_000, 40_000_000, 9_000_000_000, 30_000_000_000]);
                c.push(at, (x >> 8) & CODE_MASK, false);
            } else {
                // Pops reach far ahead, so the wheel empties and later levels come down to it.
                c.pop(c.now + (x >> 30) % 2_000_000_000, step);
            }
        }
        while c.pop(u64::MAX, 0).is_some() {}
        assert!(c.q.is_empty());
    }

    #[test]
    fn single_events_keep_the_order_of_their_keys() {
        let mut c = Checked::new(11);
        let mut single_pending = false;
        for step in 0..100_000u64 {
            let x = c.draw();
            if (x >> 60) < 9 {
                // Ties at the same instant are frequent: the slot's event must still run in push order.
                let at = c.ahead(&[4, 1_500, 9_000, 80_000_000]);
                let single = !single_pending && (x >> 10).is_multiple_of(3);
                let code = if single { 0 } else { 1 + (x >> 8) % 1000 };
                c.push(at, code, single);
                single_pending |= single;
            } else if let Some((_, code)) = c.pop(c.now + (x >> 40) % 20_000, step) {
                single_pending &= code != 0;
            }
        }
    }

    #[test]
    fn lazy_timer_pushes_only_when_earlier() {
        let mut s = TimerSlot::default();
        assert_eq!(s.want(Some(Time::from_ns(50))), Some(Time::from_ns(50)));
        assert_eq!(s.want(Some(Time::from_ns(100))), None);
        assert_eq!(s.want(Some(Time::from_ns(30))), Some(Time::from_ns(30)));
        s.popped(Time::from_ns(30));
        assert_eq!(s.want(Some(Time::from_ns(80))), Some(Time::from_ns(80)));
        s.popped(Time::from_ns(50)); // the stale event
        assert_eq!(s.want(Some(Time::from_ns(80))), None);
    }
}
