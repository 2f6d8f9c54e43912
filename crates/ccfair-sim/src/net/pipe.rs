//! A constant-delay FIFO: what enters at `t` leaves at `t + delay`, in order (or later, by `push_delayed`, and
//! still in order).
//!
//! Because the delay is constant and entries arrive in time order, only the head needs an event in the
//! simulator's queue, so the event queue holds one entry per non-empty pipe instead of one per packet in
//! flight. It can ask the caches for its head entry or its next slot ahead of use (prefetch hints).

use std::collections::VecDeque;

use ccfair_core::{Dur, Time};

#[derive(Debug)]
pub struct Pipe<T> {
    delay: Dur,
    items: VecDeque<(Time, T)>,
}

impl<T> Pipe<T> {
    pub fn new(delay: Dur) -> Pipe<T> {
        Pipe {
            delay,
            // Grows to the flow's largest flight in its first round trips; nothing up front, as a run may
            // have a million flows.
            items: VecDeque::new(),
        }
    }

    pub fn delay(&self) -> Dur {
        self.delay
    }

    /// Adds an item at `now`; returns its exit time and whether it is the new head (then the caller must
    /// schedule the pipe's event).
    #[inline]
    pub fn push(&mut self, now: Time, item: T) -> (Time, bool) {
        let exit = now + self.delay;
        let was_empty = self.items.is_empty();
        debug_assert!(self.items.back().is_none_or(|(t, _)| *t <= exit));
        self.items.push_back((exit, item));
        (exit, was_empty)
    }

    /// When an item added at `now` with `extra` delay would leave: `extra` after the pipe's delay, but not
    /// before the item ahead of it.
    #[inline]
    pub fn exit_after(&self, now: Time, extra: Dur) -> Time {
        let exit = now + self.delay + extra;
        self.items.back().map_or(exit, |(t, _)| (*t).max(exit))
    }

    /// Adds an item at `now` that leaves `extra` later than the pipe's delay, but not before the item ahead of
    /// it (the pipe stays in order); returns its exit time and whether it is the new head.
    #[inline]
    pub fn push_delayed(&mut self, now: Time, extra: Dur, item: T) -> (Time, bool) {
        let exit = self.exit_after(now, extra);
        let was_empty = self.items.is_empty();
        self.items.push_back((exit, item));
        (exit, was_empty)
    }

    /// Removes the head if it is due at `now`; also returns the next head's exit time, if any.
    #[inline]
    pub fn pop_due(&mut self, now: Time) -> Option<(T, Option<Time>)> {
        match self.items.front() {
            Some((t, _)) if *t <= now => {
                let (_, item) = self.items.pop_front()?;
                Some((item, self.items.front().map(|(t, _)| *t)))
            }
            _ => None,
        }
    }

    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// Asks the caches for the head's entry (the next to leave), which has been cold since it entered.
    #[inline]
    pub fn prefetch_head(&self) {
        if let Some(head) = self.items.front() {
            crate::prefetch::value(head);
        }
    }

    /// Asks the caches for the slot the next entry goes into (just past the tail; if the ring wraps there,
    /// the hint is wasted, never wrong).
    #[inline]
    pub fn prefetch_next_slot(&self) {
        if let Some(tail) = self.items.back() {
            let next = (tail as *const (Time, T)).wrapping_add(1);
            crate::prefetch::line(next.cast());
        }
    }

    /// The items in the pipe, oldest first.
    pub fn iter(&self) -> impl Iterator<Item = &T> {
        self.items.iter().map(|(_, item)| item)
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }
}
