//! GSP, Global Synchronization Protection (Lautenschlaeger & Francini, "Global Synchronization Protection for
//! Bandwidth Sharing TCP Flows in High-Speed Links", HPSR 2015 / arXiv 1602.05333; draft-lauten-aqm-gsp-03).
//!
//! In a nutshell: a tail-drop queue plus a threshold θ well below the buffer. When an arrival finds the queue
//! above θ and no protection interval is running, it is dropped and an interval I starts; threshold violations
//! during I are ignored (only a full buffer drops then). The reason: after a drop every flow keeps sending at
//! the same pace for about an RTT before any window reduction shows, so a plain tail drop hits about half of N
//! synchronized flows at once; one drop per interval de-synchronizes them.
//!
//! Adaptive GSP (the default here, the paper's answer to "one configuration for all scenarios"): on every
//! arrival cumulTime += α·(time above θ) − (time below θ) since the last arrival, clamped to [0, maxTime], and
//! I = presetInt/(1 + cumulTime/τ); so the interval shrinks when the queue spends more time above θ than below.
//! Accumulating time below θ is suspended after a buffer overflow until the queue has gone from overflow to empty
//! to above θ again (the control loop is open while the buffer overflows).
//!
//! Constants: presetInt = 200 ms ("twice the RTT of the traffic that dominates the queue", for 100 ms RTTs),
//! τ = 5·presetInt ("comfortably larger than presetInt, we set the ratio at 5"), α = 2 ("not much larger than
//! 1"), maxTime = 60 s (as the ns-3 model; not stated in the sources read). The threshold is given as a queue
//! delay and converted to bytes with the link capacity, θ = C·`threshold_ns`/8: default 5 ms, our choice (the
//! same as CoDel's target, so that the AQMs are compared at one delay); the paper's own value was not available.
//!
//! Deviations: the time above/below θ is integrated exactly between events (the queue is constant between them),
//! where the P4 reference integrates per clock cycle; the delay-based variant (θ on sojourn time) is not modelled.

use ccfair_core::{DropReason, Dur, FieldError, PacketMeta, ParamDoc, Time};
use serde::{Deserialize, Serialize};

use crate::params::check_positive_ns;
use crate::queue::{PacketFifo, QueueLimit};
use crate::{Qdisc, QdiscSink, QdiscStats, count_dequeue, drop_packet, qdisc_accessors};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct GspParams {
    /// θ as a queueing delay at the link rate.
    pub threshold_ns: u64,
    /// The (maximum) protection interval, presetInt.
    pub interval_ns: u64,
    pub adaptive: bool,
    /// Weight of time above θ against time below (α).
    pub alpha: f64,
    /// Adaptation time constant τ (default 5 × interval).
    pub tau_ns: Option<u64>,
    /// Cap on cumulTime.
    pub max_time_ns: u64,
}

impl Default for GspParams {
    fn default() -> Self {
        GspParams {
            threshold_ns: 5_000_000,
            interval_ns: 200_000_000,
            adaptive: true,
            alpha: 2.0,
            tau_ns: None,
            max_time_ns: 60_000_000_000,
        }
    }
}

pub const PARAMS: &[ParamDoc] = &[
    ParamDoc {
        name: "threshold_ns",
        allowed: "> 0 ns (e.g. \"5ms\")",
        doc: "threshold as queueing delay at the link rate; bytes = rate x delay / 8 (5 ms)",
    },
    ParamDoc {
        name: "interval_ns",
        allowed: "> 0 ns (e.g. \"200ms\")",
        doc: "protection interval after a threshold drop; the maximum (presetInt) if adaptive (200 ms, ~2 RTT)",
    },
    ParamDoc {
        name: "adaptive",
        allowed: "true | false",
        doc: "adapt the interval to the time spent above/below the threshold (default true)",
    },
    ParamDoc {
        name: "alpha",
        allowed: "> 0",
        doc: "weight of time above the threshold (2)",
    },
    ParamDoc {
        name: "tau_ns",
        allowed: "> 0 ns",
        doc: "adaptation time constant (default 5 x interval)",
    },
    ParamDoc {
        name: "max_time_ns",
        allowed: "> 0 ns",
        doc: "cap on the accumulated time (60 s)",
    },
];

impl GspParams {
    pub fn validate(&self) -> Result<(), FieldError> {
        check_positive_ns("threshold_ns", self.threshold_ns)?;
        check_positive_ns("interval_ns", self.interval_ns)?;
        if !(self.alpha.is_finite() && self.alpha > 0.0) {
            return FieldError::err("alpha", "must be a positive number");
        }
        if let Some(t) = self.tau_ns {
            check_positive_ns("tau_ns", t)?;
        }
        check_positive_ns("max_time_ns", self.max_time_ns)
    }
}

/// Whether time below θ counts (the overflow → empty → above-θ cycle of adaptive GSP).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum GspState {
    Stable,
    /// A buffer overflow happened; waiting for the queue to empty.
    WaitEmpty,
    /// Emptied; waiting for the queue to rise above θ.
    WaitThreshold,
}

pub struct Gsp<P> {
    queue: PacketFifo<P>,
    threshold_bytes: u64,
    preset_interval_ns: f64,
    adaptive: bool,
    alpha: f64,
    tau_ns: f64,
    max_time_ns: f64,
    /// When the running protection interval ends.
    expiry: Option<Time>,
    interval_ns: u64,
    cumul_time_ns: f64,
    above_ns: u64,
    below_ns: u64,
    state: GspState,
    last_event: Time,
    stats: QdiscStats,
}

impl<P: PacketMeta> Gsp<P> {
    pub fn new(params: &GspParams, limit: QueueLimit, mtu_bytes: u32, link_rate_bps: u64) -> Self {
        let threshold_bytes =
            (link_rate_bps as u128 * params.threshold_ns as u128 / 8 / 1_000_000_000) as u64;
        Gsp {
            queue: PacketFifo::new(limit, mtu_bytes),
            threshold_bytes,
            preset_interval_ns: params.interval_ns as f64,
            adaptive: params.adaptive,
            alpha: params.alpha,
            tau_ns: params.tau_ns.unwrap_or(5 * params.interval_ns) as f64,
            max_time_ns: params.max_time_ns as f64,
            expiry: None,
            interval_ns: params.interval_ns,
            cumul_time_ns: 0.0,
            above_ns: 0,
            below_ns: 0,
            state: GspState::Stable,
            last_event: Time::ZERO,
            stats: QdiscStats::default(),
        }
    }

    pub fn threshold_bytes(&self) -> u64 {
        self.threshold_bytes
    }

    /// The current protection interval.
    pub fn interval(&self) -> Dur {
        Dur::from_ns(self.interval_ns)
    }

    pub fn state(&self) -> GspState {
        self.state
    }

    /// Books the time since the last event as above or below θ (the queue was constant meanwhile).
    fn advance(&mut self, now: Time) {
        let dt = now.saturating_since(self.last_event).ns();
        self.last_event = now;
        if self.queue.bytes() > self.threshold_bytes {
            self.above_ns += dt;
        } else if self.queue.bytes() < self.threshold_bytes && self.state == GspState::Stable {
            self.below_ns += dt;
        }
    }

    /// Adaptive GSP's per-arrival update of cumulTime and the interval.
    fn adapt(&mut self) {
        let cumul = self.cumul_time_ns + self.alpha * self.above_ns as f64 - self.below_ns as f64;
        self.cumul_time_ns = cumul.clamp(0.0, self.max_time_ns);
        self.above_ns = 0;
        self.below_ns = 0;
        self.interval_ns = (self.preset_interval_ns / (1.0 + self.cumul_time_ns / self.tau_ns)) as u64;
    }
}

impl<P: PacketMeta + Send> Qdisc<P> for Gsp<P> {
    fn enqueue(&mut self, now: Time, pkt: P, sink: &mut dyn QdiscSink<P>) -> bool {
        self.advance(now);
        if self.adaptive {
            self.adapt();
        }
        // Basic GSP: above θ with no interval running → drop this one and start the interval.
        if self.queue.bytes() > self.threshold_bytes && self.expiry.is_none_or(|e| now > e) {
            self.expiry = Some(now + Dur::from_ns(self.interval_ns));
            drop_packet(&mut self.stats, sink, now, pkt, DropReason::Aqm);
            return false;
        }
        if !self.queue.admits(&pkt) {
            self.state = GspState::WaitEmpty;
            drop_packet(&mut self.stats, sink, now, pkt, DropReason::Overlimit);
            return false;
        }
        self.queue.push_back(pkt, &mut self.stats);
        if self.state == GspState::WaitThreshold && self.queue.bytes() > self.threshold_bytes {
            self.state = GspState::Stable;
        }
        true
    }

    fn dequeue(&mut self, now: Time, _sink: &mut dyn QdiscSink<P>) -> Option<P> {
        self.advance(now);
        let pkt = self.queue.pop_front()?;
        if self.state == GspState::WaitEmpty && self.queue.is_empty() {
            self.state = GspState::WaitThreshold;
        }
        count_dequeue(&mut self.stats, &pkt);
        Some(pkt)
    }

    qdisc_accessors!(queue, GspParams);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_packet::{Drops, TestPacket, ms};

    /// 12 Mbit/s: 5 ms is 7500 bytes = 5 packets of 1500.
    fn gsp(adaptive: bool) -> Gsp<TestPacket> {
        Gsp::new(
            &GspParams {
                adaptive,
                ..GspParams::default()
            },
            QueueLimit::Packets(100),
            1500,
            12_000_000,
        )
    }

    #[test]
    fn threshold_is_the_delay_at_link_rate() {
        assert_eq!(gsp(false).threshold_bytes(), 7500);
    }

    #[test]
    fn one_drop_per_interval_above_the_threshold() {
        let mut q = gsp(false);
        let mut d = Drops::default();
        // Fill to 5 packets = θ: not above yet, nothing dropped.
        for i in 0..5 {
            assert!(q.enqueue(ms(0), TestPacket::new(i, 1500), &mut d));
        }
        // The sixth arrival finds 7500 bytes, not > θ: queued. The seventh finds 9000 > θ: dropped, interval on.
        assert!(q.enqueue(ms(1), TestPacket::new(5, 1500), &mut d));
        assert!(!q.enqueue(ms(1), TestPacket::new(6, 1500), &mut d));
        // During the 200 ms interval every arrival is queued, however far above θ.
        for i in 7..50 {
            assert!(q.enqueue(ms(100), TestPacket::new(i, 1500), &mut d));
        }
        assert!(q.enqueue(ms(201), TestPacket::new(50, 1500), &mut d));
        // After it: the next arrival above θ is dropped and a new interval starts.
        assert!(!q.enqueue(Time::from_ns(201_000_001), TestPacket::new(51, 1500), &mut d));
        assert!(q.enqueue(ms(300), TestPacket::new(52, 1500), &mut d));
        assert_eq!(d.aqm_drops(), 2);
        // A full buffer still drops (tail drop), interval or not.
        for i in 53..200 {
            q.enqueue(ms(350), TestPacket::new(i, 1500), &mut d);
        }
        assert_eq!(q.backlog_packets(), 100);
        assert!(d.0.iter().any(|(_, r)| *r == DropReason::Overlimit));
    }

    #[test]
    fn adaptive_interval_shrinks_with_time_above_threshold() {
        let mut q = gsp(true);
        let mut d = Drops::default();
        for i in 0..20 {
            q.enqueue(ms(0), TestPacket::new(i, 1500), &mut d);
        }
        // 1 s above θ: cumulTime = α·1 s = 2 s; I = 200 ms / (1 + 2 s / 1 s) = 66.7 ms.
        q.enqueue(ms(1000), TestPacket::new(100, 1500), &mut d);
        assert_eq!(q.interval().ns(), 66_666_666);
        // Draining below θ for 1.5 s brings cumulTime back to 0.5 s: I = 200/(1 + 0.5) = 133 ms.
        while q.backlog_bytes() > 0 {
            q.dequeue(ms(1000), &mut d);
        }
        q.enqueue(ms(2500), TestPacket::new(101, 1500), &mut d);
        assert_eq!(q.interval().ns(), 133_333_333);
    }

    #[test]
    fn time_below_threshold_is_ignored_after_overflow_until_the_cycle_completes() {
        let mut q = gsp(true);
        let mut d = Drops::default();
        // A second above θ: cumulTime 2 s, I = 66.7 ms.
        for i in 0..20 {
            q.enqueue(ms(0), TestPacket::new(i, 1500), &mut d);
        }
        q.enqueue(ms(1000), TestPacket::new(20, 1500), &mut d);
        let fast = q.interval();
        assert_eq!(fast.ns(), 66_666_666);
        // Overflow the buffer, then drain it.
        for i in 0..120 {
            q.enqueue(ms(1000), TestPacket::new(100 + i, 1500), &mut d);
        }
        assert_eq!(q.state(), GspState::WaitEmpty);
        while q.backlog_bytes() > 0 {
            q.dequeue(ms(1000), &mut d);
        }
        assert_eq!(q.state(), GspState::WaitThreshold);
        // Five seconds empty while waiting for θ: not counted as time below, so the interval stays short
        // (counted, cumulTime would fall to 0 and the interval return to 200 ms).
        q.enqueue(ms(6000), TestPacket::new(500, 1500), &mut d);
        assert_eq!(q.interval(), fast);
        for i in 0..6 {
            q.enqueue(ms(6000), TestPacket::new(600 + i, 1500), &mut d);
        }
        assert_eq!(q.state(), GspState::Stable);
    }
}
