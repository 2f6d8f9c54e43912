//! Typed events a simulation reports. The default recorder (in `ccfair-sim`) turns them into columnar
//! time series; tests inject their own observers to check invariants. Every method has an empty default so an
//! observer implements only what it needs, and the compiler removes the calls it ignores.

use crate::time::{Dur, Time};

/// Why a packet was dropped.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum DropReason {
    /// The queue was at its packet or byte limit (tail drop, or an AQM's hard limit).
    Overlimit,
    /// The AQM's control law chose to drop it (RED early drop, CoDel, PIE, ...).
    Aqm,
    /// Bernoulli loss on the flow's own path, not at the bottleneck.
    PathLoss,
}

pub trait Observer {
    /// A data segment left the sender (first transmission or retransmission).
    fn segment_sent(&mut self, _now: Time, _flow: u32, _seq: u32, _retransmit: bool) {}
    /// A data segment was dropped.
    fn segment_dropped(&mut self, _now: Time, _flow: u32, _seq: u32, _reason: DropReason) {}
    /// A data segment was CE-marked by the bottleneck.
    fn segment_marked(&mut self, _now: Time, _flow: u32) {}
    /// A segment left the bottleneck queue after `sojourn` in it; `wire_bytes` went onto the link.
    fn queue_departure(&mut self, _now: Time, _flow: u32, _sojourn: Dur, _wire_bytes: u32) {}
    /// A data segment reached its receiver (in order or not, possibly a duplicate).
    fn segment_arrived(&mut self, _now: Time, _flow: u32, _seq: u32) {}
    /// The receiver handed segments `[first_seq, first_seq + segments)` to the application, in order.
    fn delivered_to_app(&mut self, _now: Time, _flow: u32, _first_seq: u32, _segments: u32, _bytes: u64) {}
    /// The sender took an RTT sample.
    fn rtt_sample(&mut self, _now: Time, _flow: u32, _rtt: Dur) {}
}

/// Observes nothing.
#[derive(Default, Debug, Clone, Copy)]
pub struct NullObserver;

impl Observer for NullObserver {}

/// Two observers as one: every event goes to the first, then to the second. The simulator reports through
/// one `Tee` of its recorder and the caller's observer, so each event is reported in one place.
#[derive(Default, Debug, Clone)]
pub struct Tee<A, B>(pub A, pub B);

impl<A: Observer, B: Observer> Observer for Tee<A, B> {
    #[inline]
    fn segment_sent(&mut self, now: Time, flow: u32, seq: u32, retransmit: bool) {
        self.0.segment_sent(now, flow, seq, retransmit);
        self.1.segment_sent(now, flow, seq, retransmit);
    }
    #[inline]
    fn segment_dropped(&mut self, now: Time, flow: u32, seq: u32, reason: DropReason) {
        self.0.segment_dropped(now, flow, seq, reason);
        self.1.segment_dropped(now, flow, seq, reason);
    }
    #[inline]
    fn segment_marked(&mut self, now: Time, flow: u32) {
        self.0.segment_marked(now, flow);
        self.1.segment_marked(now, flow);
    }
    #[inline]
    fn queue_departure(&mut self, now: Time, flow: u32, sojourn: Dur, wire_bytes: u32) {
        self.0.queue_departure(now, flow, sojourn, wire_bytes);
        self.1.queue_departure(now, flow, sojourn, wire_bytes);
    }
    #[inline]
    fn segment_arrived(&mut self, now: Time, flow: u32, seq: u32) {
        self.0.segment_arrived(now, flow, seq);
        self.1.segment_arrived(now, flow, seq);
    }
    #[inline]
    fn delivered_to_app(&mut self, now: Time, flow: u32, first_seq: u32, segments: u32, bytes: u64) {
        self.0.delivered_to_app(now, flow, first_seq, segments, bytes);
        self.1.delivered_to_app(now, flow, first_seq, segments, bytes);
    }
    #[inline]
    fn rtt_sample(&mut self, now: Time, flow: u32, rtt: Dur) {
        self.0.rtt_sample(now, flow, rtt);
        self.1.rtt_sample(now, flow, rtt);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Default)]
    struct Log(Vec<(&'static str, u32)>);

    impl Observer for Log {
        fn segment_sent(&mut self, _now: Time, flow: u32, _seq: u32, _retransmit: bool) {
            self.0.push(("sent", flow));
        }
        fn rtt_sample(&mut self, _now: Time, flow: u32, _rtt: Dur) {
            self.0.push(("rtt", flow));
        }
    }

    #[test]
    fn a_tee_reports_every_event_to_both() {
        let mut t = Tee(Log::default(), Log::default());
        t.segment_sent(Time::ZERO, 3, 0, false);
        t.segment_marked(Time::ZERO, 4);
        t.rtt_sample(Time::ZERO, 5, Dur::from_ns(1));
        assert_eq!(t.0.0, vec![("sent", 3), ("rtt", 5)]);
        assert_eq!(t.0.0, t.1.0);
    }
}
