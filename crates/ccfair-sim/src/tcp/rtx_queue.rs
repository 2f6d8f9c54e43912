//! The retransmission queue: one entry per segment in `[snd_una, snd_nxt)` with Linux's scoreboard tags
//! (`TCPCB_SACKED_ACKED`, `TCPCB_LOST`, `TCPCB_SACKED_RETRANS`, `TCPCB_EVER_RETRANS`), the delivery-rate
//! snapshot taken at (re)transmission (`tcp_skb_cb.tx`), and Linux's time-sorted list (`tsorted_sent_queue`):
//! a doubly linked list, in send order, of the segments that are neither SACKed nor marked lost by RACK. RACK
//! walks that list from its oldest entry and stops at the first segment sent after its reference, so loss
//! detection costs what it finds, not the window size.
//!
//! Entries live in a ring indexed by `seq - snd_una`; list links are sequence numbers (`NIL` = none). Nothing
//! here allocates once the ring has grown to the largest window.

use std::collections::VecDeque;

use ccfair_cc::rate::TxSnapshot;
use ccfair_core::Time;

pub const SACKED_ACKED: u8 = 1 << 0;
pub const LOST: u8 = 1 << 1;
pub const SACKED_RETRANS: u8 = 1 << 2;
pub const EVER_RETRANS: u8 = 1 << 3;
/// `TCPCB_RETRANS`: retransmitted now or ever.
pub const RETRANS: u8 = SACKED_RETRANS | EVER_RETRANS;

pub const NIL: u32 = u32::MAX;

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct SegState {
    /// Time of the last (re)transmission (`skb_mstamp_ns`).
    pub xmit_time: Time,
    pub flags: u8,
    pub tx: TxSnapshot,
    prev: u32,
    next: u32,
    in_tsorted: bool,
}

impl SegState {
    #[inline]
    pub fn has(&self, flag: u8) -> bool {
        self.flags & flag != 0
    }
}

#[derive(Debug, Default)]
pub struct RtxQueue {
    /// Sequence number of the front entry (== snd_una).
    base: u32,
    segs: VecDeque<SegState>,
    ts_head: u32,
    ts_tail: u32,
}

impl RtxQueue {
    /// A queue with room for `segments` entries before it grows (a sender's first flight: its initial window).
    pub fn with_capacity(segments: usize) -> RtxQueue {
        RtxQueue {
            base: 0,
            segs: VecDeque::with_capacity(segments),
            ts_head: NIL,
            ts_tail: NIL,
        }
    }

    #[inline]
    pub fn len(&self) -> u32 {
        self.segs.len() as u32
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.segs.is_empty()
    }

    /// Sequence number of the first entry.
    #[inline]
    pub fn head_seq(&self) -> u32 {
        self.base
    }

    /// One past the last entry.
    #[inline]
    pub fn end_seq(&self) -> u32 {
        self.base + self.segs.len() as u32
    }

    #[inline]
    pub fn contains(&self, seq: u32) -> bool {
        seq >= self.base && seq < self.end_seq()
    }

    #[inline]
    pub fn get(&self, seq: u32) -> &SegState {
        &self.segs[(seq - self.base) as usize]
    }

    #[inline]
    pub fn get_mut(&mut self, seq: u32) -> &mut SegState {
        &mut self.segs[(seq - self.base) as usize]
    }

    /// Asks the caches for the head entry (the next to be acknowledged) and the slot past the tail (the next
    /// written; if the ring wraps there, that hint is wasted, never wrong).
    #[inline]
    pub fn prefetch_ends(&self) {
        if let Some(head) = self.segs.front() {
            crate::prefetch::value(head);
        }
        if let Some(tail) = self.segs.back() {
            crate::prefetch::line((tail as *const SegState).wrapping_add(1).cast());
        }
        // RACK's walk starts at the oldest segment neither SACKed nor lost, often past the head in recovery.
        if self.contains(self.ts_head) {
            crate::prefetch::value(self.get(self.ts_head));
        }
    }

    pub fn front(&self) -> Option<&SegState> {
        self.segs.front()
    }

    /// Appends segment `seq` (must be `end_seq()`), sent at `xmit_time`, at the tail of the time-sorted list.
    /// The entry is written once, already linked (every segment sent goes through here).
    #[inline]
    pub fn push_back(&mut self, seq: u32, xmit_time: Time, tx: TxSnapshot) {
        debug_assert_eq!(seq, self.end_seq());
        if self.segs.is_empty() {
            self.base = seq;
        }
        let tail = self.ts_tail;
        if tail == NIL {
            self.ts_head = seq;
        } else {
            self.get_mut(tail).next = seq;
        }
        self.ts_tail = seq;
        self.segs.push_back(SegState {
            xmit_time,
            flags: 0,
            tx,
            prev: tail,
            next: NIL,
            in_tsorted: true,
        });
    }

    /// Removes the front entry (cumulatively acknowledged) and returns it, out of the time-sorted list.
    #[inline]
    pub fn pop_front(&mut self) -> SegState {
        let mut s = self.segs.pop_front().expect("pop_front on an empty queue");
        self.base += 1;
        if s.in_tsorted {
            s.in_tsorted = false;
            self.unlink_links(s.prev, s.next);
        }
        s
    }

    /// How many entries from the head, below `end`, are plain: sent once, neither SACKed nor marked lost (no
    /// tag at all). Such entries were sent in sequence order, so their send times never decrease.
    #[inline]
    pub fn plain_prefix(&self, end: u32) -> u32 {
        let below = end.saturating_sub(self.base).min(self.len()) as usize;
        self.segs.iter().take(below).take_while(|s| s.flags == 0).count() as u32
    }

    /// Removes the `m` front entries (cumulatively acknowledged) out of the time-sorted list. A stretch of them
    /// that follow each other in the list as in the queue (each linked to the next: segments sent in order) is
    /// cut out with one join of its outer neighbours instead of one per entry.
    #[inline]
    pub fn drop_front(&mut self, m: u32) {
        debug_assert!(m <= self.len());
        // The list neighbour before the stretch being cut out, once its first entry was passed over.
        let mut stretch_prev: Option<u32> = None;
        for i in 0..m {
            let seq = self.base + i;
            let s = &self.segs[i as usize];
            if !s.in_tsorted {
                continue;
            }
            let prev = stretch_prev.take().unwrap_or(s.prev);
            if s.next == seq + 1 && i + 1 < m {
                // The next entry goes too and is this one's list successor: join around both later.
                stretch_prev = Some(prev);
                continue;
            }
            self.unlink_links(prev, s.next);
        }
        self.segs.drain(..m as usize);
        self.base += m;
    }

    /// Sets the base of an empty queue (the next segment to be sent).
    pub fn reset_base(&mut self, seq: u32) {
        debug_assert!(self.segs.is_empty());
        self.base = seq;
    }

    // ----- time-sorted list -----

    pub fn tsorted_head(&self) -> u32 {
        self.ts_head
    }

    pub fn tsorted_next(&self, seq: u32) -> u32 {
        self.get(seq).next
    }

    pub fn in_tsorted(&self, seq: u32) -> bool {
        self.get(seq).in_tsorted
    }

    fn link_tail(&mut self, seq: u32) {
        let tail = self.ts_tail;
        {
            let s = self.get_mut(seq);
            debug_assert!(!s.in_tsorted);
            s.prev = tail;
            s.next = NIL;
            s.in_tsorted = true;
        }
        if tail == NIL {
            self.ts_head = seq;
        } else {
            self.get_mut(tail).next = seq;
        }
        self.ts_tail = seq;
    }

    /// Removes `seq` from the time-sorted list (no-op if it is not on it).
    pub fn unlink(&mut self, seq: u32) {
        let (prev, next) = {
            let s = self.get_mut(seq);
            if !s.in_tsorted {
                return;
            }
            s.in_tsorted = false;
            (s.prev, s.next)
        };
        self.unlink_links(prev, next);
    }

    /// Joins an entry's neighbours `prev` and `next` in the time-sorted list (the entry leaves it).
    #[inline]
    fn unlink_links(&mut self, prev: u32, next: u32) {
        if prev == NIL {
            self.ts_head = next;
        } else {
            self.get_mut(prev).next = next;
        }
        if next == NIL {
            self.ts_tail = prev;
        } else {
            self.get_mut(next).prev = prev;
        }
    }

    /// Moves `seq` to the tail of the time-sorted list: it was just (re)transmitted.
    pub fn move_to_tail(&mut self, seq: u32) {
        self.unlink(seq);
        self.link_tail(seq);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn order(q: &RtxQueue) -> Vec<u32> {
        let mut v = Vec::new();
        let mut s = q.tsorted_head();
        while s != NIL {
            v.push(s);
            s = q.tsorted_next(s);
        }
        v
    }

    #[test]
    fn tsorted_list_follows_send_order() {
        let mut q = RtxQueue::with_capacity(4);
        q.reset_base(5);
        for seq in 5..10 {
            q.push_back(seq, Time::from_ns(seq as u64), TxSnapshot::default());
        }
        assert_eq!(order(&q), vec![5, 6, 7, 8, 9]);
        q.unlink(7);
        q.move_to_tail(5);
        assert_eq!(order(&q), vec![6, 8, 9, 5]);
        q.pop_front(); // 5
        assert_eq!(order(&q), vec![6, 8, 9]);
        q.pop_front(); // 6
        q.pop_front(); // 7 (not linked)
        assert_eq!(order(&q), vec![8, 9]);
        assert_eq!(q.head_seq(), 8);
        assert_eq!(q.len(), 2);
    }

    /// `drop_front` leaves the same list as popping the entries one by one, whatever of them the list holds
    /// and in whatever order.
    #[test]
    fn drop_front_matches_popping_one_by_one() {
        let build = || {
            let mut q = RtxQueue::with_capacity(4);
            q.reset_base(1);
            for seq in 1..12 {
                q.push_back(seq, Time::from_ns(seq as u64), TxSnapshot::default());
            }
            q.unlink(3); // SACKed
            q.move_to_tail(2); // retransmitted
            q.move_to_tail(6);
            q.unlink(9);
            q
        };
        for m in 0..=11 {
            let mut popped = build();
            for _ in 0..m {
                popped.pop_front();
            }
            let mut dropped = build();
            dropped.drop_front(m);
            assert_eq!(order(&dropped), order(&popped), "m = {m}");
            assert_eq!(
                (dropped.head_seq(), dropped.len()),
                (popped.head_seq(), popped.len())
            );
            assert_eq!(dropped.plain_prefix(12), popped.plain_prefix(12));
        }
        let q = build();
        assert_eq!(q.plain_prefix(12), 11); // no tags were set: every entry counts
        assert_eq!(q.plain_prefix(4), 3);
    }
}
