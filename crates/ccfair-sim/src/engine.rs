//! The event queue: a binary min-heap ordered by (time, insertion sequence), so events at the same instant
//! run in the order they were scheduled and every run is reproducible. Entries are three words; the payload
//! is a packed event code, never a packet (packets wait in pipes and queues).
//!
//! Timers are cancelled lazily: a [`TimerSlot`] remembers the earliest event it has in the heap, and the owner
//! keeps the real deadline. Re-arming a timer later than the pending event pushes nothing (the pending event
//! notices the new deadline when it pops); re-arming it earlier pushes one event. Linux re-arms its RTO on
//! almost every ACK, so this keeps the heap small and the event count honest.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use ccfair_core::Time;

#[derive(Debug, Default)]
pub struct EventQueue {
    heap: BinaryHeap<Reverse<(u64, u64, u64)>>,
    seq: u64,
}

impl EventQueue {
    pub fn new() -> EventQueue {
        EventQueue {
            heap: BinaryHeap::with_capacity(1024),
            seq: 0,
        }
    }

    #[inline]
    pub fn push(&mut self, at: Time, code: u64) {
        self.heap.push(Reverse((at.ns(), self.seq, code)));
        self.seq += 1;
    }

    /// The next event if it is due at or before `limit`.
    #[inline]
    pub fn pop_until(&mut self, limit: Time) -> Option<(Time, u64)> {
        match self.heap.peek() {
            Some(Reverse((t, _, _))) if *t <= limit.ns() => {
                let Reverse((t, _, code)) = self.heap.pop()?;
                Some((Time::from_ns(t), code))
            }
            _ => None,
        }
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
