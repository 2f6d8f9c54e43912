//! The bottleneck: a queue discipline feeding a link of fixed rate.
//!
//! A packet leaves the qdisc when the link starts to serialize it (so sojourn time is queueing delay only) and
//! reaches the far end when serialization ends. Departure times are computed from the bytes sent since the
//! link last went busy, with 128-bit intermediates and rounding up: `end = busy_start + ⌈8·bytes·10⁹/rate⌉`,
//! so serialization never drifts however long the busy period.

use ccfair_aqm::{Qdisc, QdiscSink};
use ccfair_core::{PacketMeta, Rate, Time};

use crate::tcp::Segment;

pub struct Bottleneck {
    pub qdisc: Box<dyn Qdisc<Segment>>,
    rate: Rate,
    busy_start: Time,
    busy_bytes: u128,
    /// The packet being serialized and when it finishes.
    in_tx: Option<(Segment, Time)>,
    /// Wire bytes that finished serialization.
    pub tx_bytes: u64,
    pub tx_packets: u64,
}

impl Bottleneck {
    pub fn new(qdisc: Box<dyn Qdisc<Segment>>, rate: Rate) -> Bottleneck {
        Bottleneck {
            qdisc,
            rate,
            busy_start: Time::ZERO,
            busy_bytes: 0,
            in_tx: None,
            tx_bytes: 0,
            tx_packets: 0,
        }
    }

    pub fn rate(&self) -> Rate {
        self.rate
    }

    pub fn busy(&self) -> bool {
        self.in_tx.is_some()
    }

    /// Offers a packet to the qdisc. If the link was idle, transmission starts at once and the returned time
    /// is when it ends (the caller schedules that event).
    #[inline]
    pub fn enqueue(
        &mut self,
        now: Time,
        mut pkt: Segment,
        sink: &mut dyn QdiscSink<Segment>,
    ) -> Option<Time> {
        pkt.set_enqueue_ts(now);
        self.qdisc.enqueue(now, pkt, sink);
        if self.in_tx.is_none() {
            self.busy_start = now;
            self.busy_bytes = 0;
            return self.start_next(now, sink);
        }
        None
    }

    /// Dequeues the next packet and starts serializing it; returns its end time.
    #[inline]
    fn start_next(&mut self, now: Time, sink: &mut dyn QdiscSink<Segment>) -> Option<Time> {
        let pkt = self.qdisc.dequeue(now, sink)?;
        self.busy_bytes += pkt.wire_len() as u128;
        let ns = (self.busy_bytes * 8 * 1_000_000_000).div_ceil(self.rate.bps() as u128);
        let end = Time::from_ns(self.busy_start.ns() + ns as u64);
        self.in_tx = Some((pkt, end));
        Some(end)
    }

    /// The packet in transmission finished at `now` (its scheduled end). Returns it, with the end time of the
    /// next transmission if the queue was not empty.
    #[inline]
    pub fn tx_done(&mut self, now: Time, sink: &mut dyn QdiscSink<Segment>) -> (Segment, Option<Time>) {
        let (pkt, end) = self
            .in_tx
            .take()
            .expect("tx_done without a packet in transmission");
        debug_assert_eq!(end, now);
        self.tx_bytes += pkt.wire_len() as u64;
        self.tx_packets += 1;
        let next = self.start_next(now, sink);
        if next.is_none() {
            // The link goes idle; the next arrival opens a new busy period.
            self.busy_bytes = 0;
        }
        (pkt, next)
    }

    /// The packet being serialized, if any.
    pub fn in_transmission(&self) -> Option<&Segment> {
        self.in_tx.as_ref().map(|(p, _)| p)
    }
}
