//! The event queue: a min-heap ordered by (time, insertion sequence), so events at the same instant
//! run in the order they were scheduled and every run is reproducible. Entries are two words; the payload
//! is a packed event code (24 bits), never a packet (packets wait in pipes and queues).
//!
//! Timers are cancelled lazily: a [`TimerSlot`] remembers the earliest event it has in the heap, and the owner
//! keeps the real deadline. Re-arming a timer later than the pending event pushes nothing (the pending event
//! notices the new deadline when it pops); re-arming it earlier pushes one event. Linux re-arms its RTO on
//! almost every ACK, so this keeps the heap small and the event count honest.

use ccfair_core::Time;

/// Bits of an event's tie-breaking word that hold its code; the rest hold the insertion sequence.
const CODE_BITS: u32 = 24;
const CODE_MASK: u64 = (1 << CODE_BITS) - 1;

/// One heap entry: ordered by time, then by insertion sequence (the high bits of `tie`).
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Entry {
    time: u64,
    tie: u64,
}

/// A 4-ary min-heap of [`Entry`]. Four children per node halve the depth of a binary heap, and sifting moves a
/// hole instead of swapping, so each level costs one 16-byte copy.
#[derive(Debug, Default)]
pub struct EventQueue {
    heap: Vec<Entry>,
    seq: u64,
}

impl EventQueue {
    pub fn new() -> EventQueue {
        EventQueue {
            heap: Vec::with_capacity(1024),
            seq: 0,
        }
    }

    /// Schedules event `code` (at most 24 bits) at `at`.
    #[inline]
    pub fn push(&mut self, at: Time, code: u64) {
        debug_assert!(code <= CODE_MASK, "event code {code:#x} too wide");
        let e = Entry {
            time: at.ns(),
            tie: (self.seq << CODE_BITS) | code,
        };
        self.seq += 1;
        let mut i = self.heap.len();
        self.heap.push(e);
        while i > 0 {
            let parent = (i - 1) / 4;
            if self.heap[parent] <= e {
                break;
            }
            self.heap[i] = self.heap[parent];
            i = parent;
        }
        self.heap[i] = e;
    }

    /// The next event if it is due at or before `limit`.
    #[inline]
    pub fn pop_until(&mut self, limit: Time) -> Option<(Time, u64)> {
        let top = *self.heap.first()?;
        if top.time > limit.ns() {
            return None;
        }
        let last = self.heap.pop().expect("non-empty");
        let n = self.heap.len();
        if n > 0 {
            // Sift the former last entry down from the root.
            let mut i = 0;
            loop {
                let first = 4 * i + 1;
                if first >= n {
                    break;
                }
                let end = (first + 4).min(n);
                let mut best = first;
                for c in first + 1..end {
                    if self.heap[c] < self.heap[best] {
                        best = c;
                    }
                }
                if last <= self.heap[best] {
                    break;
                }
                self.heap[i] = self.heap[best];
                i = best;
            }
            self.heap[i] = last;
        }
        Some((Time::from_ns(top.time), top.tie & CODE_MASK))
    }

    pub fn len(&self) -> usize {
        self.heap.len()
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
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
