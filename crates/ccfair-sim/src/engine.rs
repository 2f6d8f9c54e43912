//! The event queue: a min-heap ordered by (time, insertion sequence), so events at the same instant
//! run in the order they were scheduled and every run is reproducible. The payload is a packed event code
//! (24 bits), never a packet (packets wait in pipes and queues).
//!
//! Layout: each entry is one 128-bit key, `time << 64 | sequence << 24 | code`, so ordering by (time,
//! sequence) is a single unsigned comparison without branches. The heap is 4-ary, and its entries are
//! stored in 64-byte groups of four such that the four children of a node always fill exactly one group
//! (one cache line): the root sits in the last slot of group 0, and node `i`'s children are group `i + 1`.
//! A sift-down then reads one cache line per level instead of up to two, and slots past the end hold the
//! largest key, so choosing the smallest child needs no bounds checks. With thousands of flows the heap
//! holds several entries per flow and does not fit in the first-level cache, which makes the line count
//! per level what a pop costs.
//!
//! Timers are cancelled lazily: a [`TimerSlot`] remembers the earliest event it has in the heap, and the owner
//! keeps the real deadline. Re-arming a timer later than the pending event pushes nothing (the pending event
//! notices the new deadline when it pops); re-arming it earlier pushes one event. Linux re-arms its RTO on
//! almost every ACK, so this keeps the heap small and the event count honest.

use ccfair_core::Time;

/// Bits of an event's tie-breaking word that hold its code; the rest hold the insertion sequence.
const CODE_BITS: u32 = 24;
const CODE_MASK: u64 = (1 << CODE_BITS) - 1;

/// The key of an empty slot: larger than any event's (whose sequence never reaches 2^40).
const EMPTY: u128 = u128::MAX;

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
pub struct EventQueue {
    groups: Vec<Group>,
    len: usize,
    seq: u64,
}

impl Default for EventQueue {
    fn default() -> Self {
        EventQueue::new()
    }
}

impl EventQueue {
    pub fn new() -> EventQueue {
        let mut groups = Vec::with_capacity(256);
        groups.push(EMPTY_GROUP);
        EventQueue {
            groups,
            len: 0,
            seq: 0,
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

    /// Schedules event `code` (at most 24 bits) at `at`.
    #[inline]
    pub fn push(&mut self, at: Time, code: u64) {
        debug_assert!(code <= CODE_MASK, "event code {code:#x} too wide");
        let key = ((at.ns() as u128) << 64) | ((self.seq << CODE_BITS) | code) as u128;
        self.seq += 1;
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

    /// The next event if it is due at or before `limit`.
    #[inline]
    pub fn pop_until(&mut self, limit: Time) -> Option<(Time, u64)> {
        if self.len == 0 {
            return None;
        }
        let top = self.get(0);
        if (top >> 64) as u64 > limit.ns() {
            return None;
        }
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
        Some((Time::from_ns((top >> 64) as u64), top as u64 & CODE_MASK))
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
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

    #[test]
    fn interleaved_pushes_and_pops_match_a_reference_heap() {
        use std::cmp::Reverse;
        use std::collections::BinaryHeap;
        let mut q = EventQueue::new();
        let mut reference = BinaryHeap::new();
        let mut x: u64 = 7;
        let mut seq = 0u64;
        let mut now = 0u64;
        for step in 0..200_000u64 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            // Phases of growth and of draining, so the heap crosses many group boundaries both ways.
            let grow = (step / 5000) % 2 == 0;
            if (x >> 60) < if grow { 11 } else { 5 } {
                let at = now + (x >> 20) % 3000;
                let code = (x >> 8) & CODE_MASK;
                q.push(Time::from_ns(at), code);
                reference.push(Reverse((at, seq, code)));
                seq += 1;
            } else {
                let limit = now + (x >> 40) % 50;
                let want = match reference.peek() {
                    Some(Reverse((t, _, _))) if *t <= limit => {
                        reference.pop().map(|Reverse((t, _, c))| (t, c))
                    }
                    _ => None,
                };
                let got = q.pop_until(Time::from_ns(limit)).map(|(t, c)| (t.ns(), c));
                assert_eq!(got, want, "step {step}");
                if let Some((t, _)) = got {
                    now = t;
                }
            }
            assert_eq!(q.len(), reference.len());
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
