//! STEP marking: the shallow threshold AQM of DCTCP (RFC 8257 §3.1) and of L4S queues (RFC 9331/9332; the
//! DualPI2 L queue's step, fq_codel's and CoDel's `ce_threshold`).
//!
//! In a nutshell: a FIFO that CE-marks every ECT packet while the queue is above a threshold K, and drops a
//! not-ECT packet instead (it cannot carry the mark). No randomness, no memory: 100 % marking above K, none
//! below. K is a sojourn time checked at dequeue (the L4S form, default 1 ms as DualPI2's step), or, with
//! `threshold_packets` > 0, the instantaneous queue length an arrival finds, checked at enqueue (DCTCP's switch
//! marking; RFC 8257 suggests K ≈ C·RTT/7).
//!
//! Deviations: none beyond the choice of the two forms; in packet mode the arrival is compared with the queue it
//! finds (strictly greater than K marks).

use ccfair_core::{DropReason, Dur, FieldError, PacketMeta, ParamDoc, Time};
use serde::{Deserialize, Serialize};

use crate::params::check_positive_ns;
use crate::queue::{PacketFifo, QueueLimit};
use crate::{Qdisc, QdiscSink, QdiscStats, count_dequeue, drop_packet, mark_ce, qdisc_accessors};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct StepParams {
    /// K as a sojourn time (used when `threshold_packets` is 0).
    pub threshold_ns: u64,
    /// K as a queue length in packets, checked on arrival; 0 selects the sojourn threshold.
    pub threshold_packets: u32,
}

impl Default for StepParams {
    fn default() -> Self {
        StepParams {
            threshold_ns: 1_000_000,
            threshold_packets: 0,
        }
    }
}

pub const PARAMS: &[ParamDoc] = &[
    ParamDoc {
        name: "threshold_ns",
        allowed: "> 0 ns (e.g. \"1ms\")",
        doc: "mark packets whose sojourn exceeds this, at dequeue (1 ms, as the DualPI2 L-queue step)",
    },
    ParamDoc {
        name: "threshold_packets",
        allowed: ">= 0 packets",
        doc: "if > 0: mark arrivals that find more than this many packets queued (DCTCP K) instead",
    },
];

impl StepParams {
    pub fn validate(&self) -> Result<(), FieldError> {
        check_positive_ns("threshold_ns", self.threshold_ns)
    }
}

pub struct Step<P> {
    queue: PacketFifo<P>,
    threshold: Dur,
    threshold_packets: u32,
    stats: QdiscStats,
}

impl<P: PacketMeta> Step<P> {
    pub fn new(params: &StepParams, limit: QueueLimit, mtu_bytes: u32) -> Self {
        Step {
            queue: PacketFifo::new(limit, mtu_bytes),
            threshold: Dur::from_ns(params.threshold_ns),
            threshold_packets: params.threshold_packets,
            stats: QdiscStats::default(),
        }
    }
}

impl<P: PacketMeta + Send> Qdisc<P> for Step<P> {
    fn enqueue(&mut self, now: Time, mut pkt: P, sink: &mut dyn QdiscSink<P>) -> bool {
        let qlen = self.queue.packets();
        if !self.queue.admits(&pkt) {
            drop_packet(&mut self.stats, sink, now, pkt, DropReason::Overlimit);
            return false;
        }
        if self.threshold_packets > 0
            && qlen > self.threshold_packets
            && !mark_ce(&mut self.stats, sink, now, &mut pkt)
        {
            drop_packet(&mut self.stats, sink, now, pkt, DropReason::Aqm);
            return false;
        }
        self.queue.push_back(pkt, &mut self.stats);
        true
    }

    fn dequeue(&mut self, now: Time, sink: &mut dyn QdiscSink<P>) -> Option<P> {
        while let Some(mut pkt) = self.queue.pop_front() {
            if self.threshold_packets == 0
                && now.saturating_since(pkt.enqueue_ts()) > self.threshold
                && !mark_ce(&mut self.stats, sink, now, &mut pkt)
            {
                drop_packet(&mut self.stats, sink, now, pkt, DropReason::Aqm);
                continue;
            }
            count_dequeue(&mut self.stats, &pkt);
            return Some(pkt);
        }
        None
    }

    qdisc_accessors!(queue, StepParams);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_packet::{Drops, TestPacket, us};
    use ccfair_core::Ecn;

    const LIMIT: QueueLimit = QueueLimit::Packets(1000);

    #[test]
    fn marks_everything_above_the_sojourn_threshold_and_nothing_below() {
        let mut q = Step::new(&StepParams::default(), LIMIT, 1500);
        let mut d = Drops::default();
        for i in 0..10 {
            q.enqueue(Time::ZERO, TestPacket::new(i, 1500).ecn(Ecn::Ect1), &mut d);
        }
        assert_eq!(q.dequeue(us(1000), &mut d).unwrap().ecn, Ecn::Ect1); // exactly K: not above
        for k in 1..5 {
            assert_eq!(q.dequeue(us(1000 + k), &mut d).unwrap().ecn, Ecn::Ce);
        }
        assert_eq!(d.marks(), 4);
        // A not-ECT packet above K is dropped and the next one delivered.
        q.enqueue(Time::ZERO, TestPacket::new(99, 1500), &mut d);
        let mut seen = vec![];
        while let Some(p) = q.dequeue(us(3000), &mut d) {
            seen.push(p.id);
        }
        assert!(!seen.contains(&99));
        assert_eq!(d.aqm_drops(), 1);
    }

    #[test]
    fn packet_threshold_marks_arrivals_finding_more_than_k() {
        let mut q = Step::new(
            &StepParams {
                threshold_packets: 3,
                ..StepParams::default()
            },
            LIMIT,
            1500,
        );
        let mut d = Drops::default();
        for i in 0..6 {
            q.enqueue(Time::ZERO, TestPacket::new(i, 1500).ecn(Ecn::Ect0), &mut d);
        }
        // Arrivals 0..=3 found 0..=3 queued; 4 and 5 found 4 and 5 > 3.
        let ecn: Vec<Ecn> = (0..6).map(|_| q.dequeue(us(5000), &mut d).unwrap().ecn).collect();
        assert_eq!(ecn.iter().filter(|e| **e == Ecn::Ce).count(), 2);
        assert_eq!(ecn[4], Ecn::Ce);
    }
}
