//! Queue disciplines behind one [`Qdisc`] trait, shared by the simulator and the emulator.
//!
//! A qdisc is generic over [`PacketMeta`], so it never knows whether it holds simulated segments or real
//! frames, and it never reads a clock: `now` is always an argument. Every packet it drops (the arriving one on
//! overflow, or one it picks itself) and every packet it CE-marks is reported to the caller's [`QdiscSink`],
//! which is how the simulator keeps its packet-conservation books and the emulator its statistics.
//!
//! Kernel timers (PIE's and DualPI2's probability updates, adaptive RED) are run lazily: at the start of every
//! `enqueue`/`dequeue` each qdisc first runs the timer ticks that fell due since its last call. Between two calls
//! the queue does not change, so a tick run late sees exactly the state the kernel's timer would have seen; and
//! a tick that leaves the controller's state as it found it (an idle queue whose probability has decayed) would
//! repeat itself until the next call, so the ticks still due are skipped, not run. Each tick run counts in
//! [`QdiscStats::timer_runs`]: a caller that bounds the work of a chunk (the simulator, between two checks for
//! Ctrl-C) counts them with its events. Every timer period has a floor taken from the kernel (a period no
//! kernel can run is refused with the parameter named), so their number over a run is bounded and estimable.
//!
//! Files: `fifo` (tail drop), `red`, `codel` (+ the control law `fq_codel` reuses), `fq_codel`, `pie`, `gsp`,
//! `ppv` (core-stateless bottleneck + edge marker), `dualpi2`, `step`, `vdq` (VDQ-CSAQM: PPV's marker with an
//! L4S and a classic queue); `queue` is the limit, backlog and
//! preallocation bookkeeping the single-FIFO disciplines share; `pool` and `heap` are the allocation-free packet
//! lists and indexed priority queue the multi-queue disciplines share.

pub mod codel;
pub mod config;
pub mod dualpi2;
pub mod fifo;
pub mod fq_codel;
pub mod gsp;
pub(crate) mod heap;
pub mod params;
pub mod pie;
pub(crate) mod pool;
pub mod ppv;
pub mod queue;
pub mod red;
pub mod step;
pub mod vdq;

use ccfair_core::{DropReason, Ecn, PacketMeta, Time};

pub use config::{AqmConfig, AqmKind, QdiscInfo, qdiscs};
pub use fifo::Fifo;
pub use params::{BuildContext, ParamUnit, unit_free_name};
pub use ppv::PpvMarker;
pub use queue::QueueLimit;

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
    /// CE marks applied instead of drops (packets whose codepoint changed from ECT to CE).
    pub ce_marks: u64,
    /// Runs of the discipline's periodic timer (PIE's and DualPI2's probability updates, adaptive RED's
    /// max_p steps): work besides the packets, which a caller that sizes its work in chunks counts.
    pub timer_runs: u64,
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

/// The four bookkeeping methods of a [`Qdisc`] impl whose backlog is the field `$backlog` (a
/// [`queue::PacketFifo`] or [`queue::Backlog`]), whose counters are the field `stats`, and whose name is the
/// parameter type's `NAME`.
macro_rules! qdisc_accessors {
    ($backlog:ident, $params:ty) => {
        fn backlog_bytes(&self) -> u64 {
            self.$backlog.bytes()
        }

        fn backlog_packets(&self) -> u32 {
            self.$backlog.packets()
        }

        fn stats(&self) -> &QdiscStats {
            &self.stats
        }

        fn kind(&self) -> &'static str {
            <$params>::NAME
        }
    };
}
pub(crate) use qdisc_accessors;

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

/// Linux `INET_ECN_set_ce`: an ECT packet becomes CE and counts as marked; a CE packet stays CE and also
/// counts as marked (the kernel returns success, so it is not dropped); a not-ECT packet cannot be marked and
/// the caller drops it. Only a codepoint change is reported to the sink and counted in `ce_marks`, so a
/// packet two AQM stages mark (DualPI2's coupled mark, then its step) is one marked packet in the books.
pub(crate) fn mark_ce<P: PacketMeta>(
    stats: &mut QdiscStats,
    sink: &mut dyn QdiscSink<P>,
    now: Time,
    pkt: &mut P,
) -> bool {
    match pkt.ecn() {
        Ecn::NotEct => false,
        Ecn::Ce => true,
        Ecn::Ect0 | Ecn::Ect1 => {
            pkt.set_ecn(Ecn::Ce);
            stats.ce_marks += 1;
            sink.marked(now, pkt);
            true
        }
    }
}

/// Books a packet leaving the qdisc for the link.
#[inline]
pub(crate) fn count_dequeue<P: PacketMeta>(stats: &mut QdiscStats, pkt: &P) {
    stats.dequeued_packets += 1;
    stats.dequeued_bytes += pkt.wire_len() as u64;
}

#[cfg(test)]
pub(crate) mod test_packet;
