//! Queue disciplines behind one [`Qdisc`] trait, shared by the simulator and the emulator.
//!
//! A qdisc is generic over [`PacketMeta`], so it never knows whether it holds simulated segments or real
//! frames, and it never reads a clock: `now` is always an argument. Every packet it drops (the arriving one on
//! overflow, or one it picks itself) and every packet it CE-marks is reported to the caller's [`QdiscSink`],
//! which is how the simulator keeps its packet-conservation books and the emulator its statistics.

pub mod config;
pub mod fifo;

use ccfair_core::{DropReason, PacketMeta, Time};

pub use config::{AqmConfig, QdiscInfo, QueueLimit, qdiscs};
pub use fifo::Fifo;

/// Receives the packets a qdisc drops and learns of the ones it marks.
pub trait QdiscSink<P> {
    fn dropped(&mut self, now: Time, pkt: P, reason: DropReason);
    fn marked(&mut self, _now: Time, _pkt: &P) {}
}

/// Counters every qdisc keeps (`struct gnet_stats_queue` + `tc_*_xstats` essentials).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct QdiscStats {
    pub enqueued_packets: u64,
    pub dequeued_packets: u64,
    pub dequeued_bytes: u64,
    /// Drops because the queue was full.
    pub overlimit_drops: u64,
    /// Drops chosen by the AQM's control law.
    pub aqm_drops: u64,
    /// CE marks applied instead of drops.
    pub ce_marks: u64,
}

/// A queue discipline.
pub trait Qdisc<P: PacketMeta>: Send {
    /// Offers a packet whose `enqueue_ts` the caller has set to `now`. Returns whether it was queued; if not,
    /// it has been handed to `sink.dropped`. A qdisc may also drop other packets here (e.g. FQ-CoDel drops
    /// from its fattest queue on overflow), again through the sink.
    fn enqueue(&mut self, now: Time, pkt: P, sink: &mut dyn QdiscSink<P>) -> bool;

    /// The next packet to transmit, if any. AQMs may drop or mark packets here, reported through the sink.
    fn dequeue(&mut self, now: Time, sink: &mut dyn QdiscSink<P>) -> Option<P>;

    /// Bytes queued (wire length).
    fn backlog_bytes(&self) -> u64;

    /// Packets queued.
    fn backlog_packets(&self) -> u32;

    fn stats(&self) -> &QdiscStats;

    /// The kind, as the scenario names it.
    fn kind(&self) -> &'static str;
}

/// Drops `pkt` for `reason`, counting it.
pub(crate) fn drop_packet<P>(
    stats: &mut QdiscStats,
    sink: &mut dyn QdiscSink<P>,
    now: Time,
    pkt: P,
    reason: DropReason,
) {
    match reason {
        DropReason::Overlimit => stats.overlimit_drops += 1,
        DropReason::Aqm => stats.aqm_drops += 1,
        DropReason::PathLoss => {}
    }
    sink.dropped(now, pkt, reason);
}

#[cfg(test)]
pub(crate) mod test_packet {
    use ccfair_core::{Ecn, PacketMeta, Time};

    /// A minimal packet for qdisc unit tests.
    #[derive(Clone, Debug, PartialEq)]
    pub struct TestPacket {
        pub id: u64,
        pub len: u32,
        pub ts: Time,
        pub ecn: Ecn,
        pub hash: u32,
    }

    impl TestPacket {
        pub fn new(id: u64, len: u32) -> Self {
            TestPacket {
                id,
                len,
                ts: Time::ZERO,
                ecn: Ecn::NotEct,
                hash: 0,
            }
        }
    }

    impl PacketMeta for TestPacket {
        fn wire_len(&self) -> u32 {
            self.len
        }
        fn enqueue_ts(&self) -> Time {
            self.ts
        }
        fn set_enqueue_ts(&mut self, t: Time) {
            self.ts = t;
        }
        fn ecn(&self) -> Ecn {
            self.ecn
        }
        fn set_ecn(&mut self, ecn: Ecn) {
            self.ecn = ecn;
        }
        fn flow_hash(&self) -> u32 {
            self.hash
        }
        fn packet_value(&self) -> u32 {
            0
        }
    }

    /// Collects drops.
    #[derive(Default)]
    pub struct Drops(pub Vec<(TestPacket, ccfair_core::DropReason)>);

    impl super::QdiscSink<TestPacket> for Drops {
        fn dropped(&mut self, _now: Time, pkt: TestPacket, reason: ccfair_core::DropReason) {
            self.0.push((pkt, reason));
        }
    }
}
