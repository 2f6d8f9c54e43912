//! Receive coalescing (GRO) at a flow's receiving host: consecutive segments that arrive close together
//! reach TCP as one aggregate, which TCP acknowledges as one segment of many MSS (stretch ACKs).
//!
//! In a nutshell: a NIC that moderates its interrupts raises one interrupt for the packets of a short span;
//! the NAPI poll that follows hands them to GRO, which merges each packet into the held packet of its flow if
//! it continues it, and at the end of the poll passes every held aggregate up the stack. Here a segment
//! that arrives while no aggregate is held starts one; the aggregate is handed to TCP `gro_flush` after its
//! first segment arrived (the poll's end), or earlier when a segment arrives that cannot join it. Source:
//! `tcp_gro_receive` (net/ipv4/tcp_offload.c), `inet_gro_receive` (net/ipv4/af_inet.c), `skb_gro_receive`
//! (net/core/gro.c), Linux 6.x. A segment joins the held aggregate only if
//! - its sequence continues it (`th2->seq + len == th->seq`; anything else flushes the held aggregate, so an
//!   out-of-order segment or a retransmission that does not continue it starts a new one);
//! - its IP TOS byte is the same (`iph->tos ^ iph2->tos` sets the held packet's flush): a different ECN
//!   codepoint, CE included, flushes, so an aggregate is either all CE or not CE at all;
//! - its TCP options are identical (the timestamp: only segments sent in the same millisecond of the
//!   sender's TSval clock merge) and its flags are (a segment with CWR flushes the held aggregate and is
//!   held alone, as the next segment's flags differ from it);
//! - the aggregate stays under 64 KB (`p->len + len >= gro_max_size` fails the merge; `gro_max_size` =
//!   `GRO_LEGACY_MAX_SIZE` = 65536 by default): 45 segments of 1448 B;
//! - it is not longer than the aggregate's first segment (the MSS, `gso_size`). A shorter segment (a flow's
//!   last) joins and ends the aggregate (`flush = len < mss`); one that arrives with nothing held is held
//!   like any other (with no held packet, `mss` is 1 there).
//!
//! - a segment with PSH (Linux sets it on the last segment of every multi-segment skb the sender transmits,
//!   `__tcp_transmit_skb`) joins and ends the aggregate, which goes up at once with PSH set; one that cannot
//!   join goes up alone at once (`flush |= flags & TCP_FLAG_PSH`): an aggregate never spans two of the
//!   sender's skbs.
//!
//! Deviations: the table of held flows'
//! size (8 flows per bucket, `MAX_GRO_SKBS`, over 8 buckets): with many flows interleaved on one receiver,
//! Linux flushes the oldest flow's aggregate early, here each flow holds its own. LRO (coalescing in the
//! NIC) merges by the same rules with the NIC's own timeout and is not modelled apart. Nothing here
//! allocates.

use ccfair_core::{Dur, Time};

use crate::tcp::{HEADER_BYTES, Segment};

/// The largest aggregate, in bytes of its IP packet (`GRO_LEGACY_MAX_SIZE`).
pub const GRO_MAX_BYTES: u32 = 65_536;

/// An aggregate handed to TCP: `segments` consecutive segments, the first of them `head` (whose header
/// fields, ECN codepoint and timestamp included, all of them share).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Aggregate {
    pub head: Segment,
    pub segments: u32,
}

#[derive(Copy, Clone, Debug)]
struct Held {
    agg: Aggregate,
    /// The aggregate's IP length: the first segment whole, then each further one's payload.
    bytes: u32,
    flush_at: Time,
}

/// One flow's GRO state at its receiving host.
#[derive(Clone, Debug)]
pub struct Gro {
    window: Dur,
    held: Option<Held>,
}

impl Gro {
    /// GRO with a flush window of `window` (zero: off, every segment goes up alone at once).
    pub fn new(window: Dur) -> Gro {
        Gro { window, held: None }
    }

    #[inline]
    pub fn is_on(&self) -> bool {
        self.window > Dur::ZERO
    }

    /// When the held aggregate goes up (the poll's end), if one is held.
    #[inline]
    pub fn deadline(&self) -> Option<Time> {
        self.held.map(|h| h.flush_at)
    }

    /// The held aggregate's first sequence number and segments, if one is held.
    #[inline]
    pub fn held(&self) -> Option<(u32, u32)> {
        self.held.map(|h| (h.agg.head.seq, h.agg.segments))
    }

    /// The held aggregate, if its poll has ended by `now`.
    #[inline]
    pub fn flush_due(&mut self, now: Time) -> Option<Aggregate> {
        match self.held {
            Some(h) if h.flush_at <= now => self.held.take().map(|h| h.agg),
            _ => None,
        }
    }

    /// Segment `seg` arrives at `now`. Returns the aggregate that goes up to TCP now, if any: the held one
    /// whose poll had ended, or that the segment flushes, or that the segment completes (a short last
    /// segment, or one with PSH). A PSH segment that cannot join goes up alone at once: it is then held
    /// with its poll already ended, for the caller's next [`Gro::flush_due`] (two aggregates go up).
    #[inline]
    pub fn receive(&mut self, now: Time, seg: Segment) -> Option<Aggregate> {
        let mut up = self.flush_due(now);
        if let Some(h) = &mut self.held {
            if joins(h, &seg) {
                h.agg.segments += 1;
                h.bytes += u32::from(seg.wire_len) - HEADER_BYTES;
                // The aggregate's header takes the PSH of a segment merged into it.
                h.agg.head.psh |= seg.psh;
                if seg.wire_len < h.agg.head.wire_len || seg.psh {
                    return self.held.take().map(|h| h.agg);
                }
                return None;
            }
            up = self.held.take().map(|h| h.agg);
        }
        let lone = Aggregate {
            head: seg,
            segments: 1,
        };
        if seg.psh && up.is_none() {
            return Some(lone);
        }
        self.held = Some(Held {
            agg: lone,
            bytes: u32::from(seg.wire_len),
            flush_at: if seg.psh { now } else { now + self.window },
        });
        up
    }
}

/// Whether `seg` may join the held aggregate `h` (see the module docs).
#[inline]
fn joins(h: &Held, seg: &Segment) -> bool {
    let head = &h.agg.head;
    seg.seq == head.seq + h.agg.segments
        && seg.ecn == head.ecn
        && seg.tsval_ms == head.tsval_ms
        && !seg.cwr
        && !head.cwr
        && seg.wire_len <= head.wire_len
        && h.bytes + (u32::from(seg.wire_len) - HEADER_BYTES) < GRO_MAX_BYTES
}

#[cfg(test)]
mod tests {
    use super::*;
    use ccfair_core::Ecn;

    const US: u64 = 1_000;

    fn seg(seq: u32) -> Segment {
        Segment {
            flow: 0,
            seq,
            wire_len: 1500,
            tsval_ms: 7,
            enqueue_ts: Time::ZERO,
            ecn: Ecn::Ect0,
            cwr: false,
            retransmit: false,
            packet_value: 0,
            psh: false,
            syn: false,
        }
    }

    fn at(us: u64) -> Time {
        Time::from_ns(us * US)
    }

    /// Feeds `(arrival µs, segment)` pairs, then flushes at the end; returns the aggregates as
    /// (first seq, segments), in the order they went up.
    fn run(window_us: u64, arrivals: &[(u64, Segment)]) -> Vec<(u32, u32)> {
        let mut gro = Gro::new(Dur::from_ns(window_us * US));
        let mut up = Vec::new();
        for &(t, s) in arrivals {
            if let Some(a) = gro.receive(at(t), s) {
                up.push((a.head.seq, a.segments));
            }
            // A PSH segment that could not join is due at once, after the aggregate it flushed.
            if let Some(a) = gro.flush_due(at(t)) {
                up.push((a.head.seq, a.segments));
            }
        }
        if let Some(a) = gro.flush_due(Time::MAX) {
            up.push((a.head.seq, a.segments));
        }
        up
    }

    #[test]
    fn consecutive_segments_within_the_window_merge() {
        // 1 µs apart, a 10 µs window: 0..=9 arrive within it, 10 starts the next aggregate.
        let arrivals: Vec<(u64, Segment)> = (0..15).map(|i| (i as u64, seg(i))).collect();
        assert_eq!(run(10, &arrivals), vec![(0, 10), (10, 5)]);
        let mut gro = Gro::new(Dur::from_ns(10 * US));
        assert_eq!(gro.receive(at(3), seg(0)), None);
        assert_eq!(
            gro.deadline(),
            Some(at(13)),
            "the aggregate goes up a window after its first segment"
        );
    }

    #[test]
    fn only_in_order_same_codepoint_same_timestamp_segments_merge() {
        let ce = Segment {
            ecn: Ecn::Ce,
            ..seg(3)
        };
        let later_ts = Segment {
            tsval_ms: 8,
            ..seg(5)
        };
        let cwr = Segment { cwr: true, ..seg(7) };
        let arrivals = [
            (0, seg(0)),
            (1, seg(1)),
            (2, seg(4)), // a hole: flushes 0..2, starts its own
            (3, seg(5)),
            (4, ce),     // out of order and CE
            (5, seg(4)), // does not continue 3
            (6, later_ts),
            (7, seg(6)), // TSval differs from 5's
            (8, cwr),    // flushes 6, and is held alone
            (9, seg(8)),
            (10, seg(9)),
        ];
        assert_eq!(
            run(100, &arrivals),
            vec![(0, 2), (4, 2), (3, 1), (4, 1), (5, 1), (6, 1), (7, 1), (8, 2)]
        );
        // A change of codepoint alone (in sequence) flushes too.
        let ce1 = Segment {
            ecn: Ecn::Ce,
            ..seg(1)
        };
        assert_eq!(
            run(100, &[(0, seg(0)), (1, ce1), (2, seg(2))]),
            vec![(0, 1), (1, 1), (2, 1)]
        );
    }

    #[test]
    fn an_aggregate_holds_at_most_45_full_segments() {
        let arrivals: Vec<(u64, Segment)> = (0..100).map(|i| (0, seg(i))).collect();
        // 45 × 1448 B of payload + 52 B of headers = 65,212 B < 64 KiB; a 46th would pass it.
        assert_eq!(run(10, &arrivals), vec![(0, 45), (45, 45), (90, 10)]);
    }

    #[test]
    fn a_psh_segment_ends_its_aggregate_and_never_waits() {
        let psh = |seq| Segment {
            psh: true,
            ..seg(seq)
        };
        // Two-segment bursts ending in PSH, all within one poll: one aggregate per burst, each up at once
        // with PSH in its header.
        let mut gro = Gro::new(Dur::from_ns(50 * US));
        assert_eq!(gro.receive(at(0), seg(0)), None);
        let up = gro.receive(at(1), psh(1)).expect("PSH ends the aggregate");
        assert_eq!((up.head.seq, up.segments, up.head.psh), (0, 2, true));
        assert_eq!(gro.deadline(), None);
        // A PSH segment with nothing held goes up alone; one that cannot join (out of sequence) goes up
        // right after the aggregate it flushes.
        assert_eq!(
            run(50, &[(0, psh(0)), (1, seg(1)), (2, psh(3)), (3, seg(4))]),
            vec![(0, 1), (1, 1), (3, 1), (4, 1)]
        );
        // Without PSH the same arrivals merge where they continue each other.
        assert_eq!(run(50, &[(0, seg(0)), (1, seg(1)), (2, seg(2))]), vec![(0, 3)]);
    }

    #[test]
    fn a_short_segment_ends_its_aggregate_at_once() {
        let last = Segment {
            wire_len: 600,
            ..seg(2)
        };
        let mut gro = Gro::new(Dur::from_ns(50 * US));
        assert_eq!(gro.receive(at(0), seg(0)), None);
        assert_eq!(gro.receive(at(1), seg(1)), None);
        let up = gro
            .receive(at(2), last)
            .expect("the short segment completes the aggregate");
        assert_eq!((up.head.seq, up.segments), (0, 3));
        assert_eq!(gro.deadline(), None);
    }
}
