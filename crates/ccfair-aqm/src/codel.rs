//! CoDel, the Controlled-Delay AQM (RFC 8289; Linux `include/net/codel.h`, `codel_impl.h`, `net/sched/sch_codel.c`).
//!
//! In a nutshell: every dequeued packet's sojourn time is compared with `target`. Once the sojourn has stayed at
//! or above target for a whole `interval` (and more than one MTU is queued), CoDel enters the dropping state and
//! drops (or CE-marks) the head packet; it then drops again at `drop_next = t + interval/√count`, the control
//! law, with `count` growing by one per drop, until a packet's sojourn falls below target. On re-entry soon
//! after leaving (`now − drop_next < 16·interval`) the count resumes from the previous cycle's drops
//! (`count − lastcount`) instead of 1, so the drop rate picks up where it left off.
//!
//! The pieces (`CodelControl` parameters, `CodelVars` state, `CodelStats`, `codel_dequeue` over any
//! [`CodelQueue`]) are shared with `fq_codel`, which runs one CoDel instance per flow queue.
//!
//! Constants, as in the kernel: target 5 ms and interval 100 ms (RFC 8289 §4.2/4.3: 5 ms is 5–10 % of a typical
//! 100 ms RTT, interval a worst-case RTT); limit 1000 packets (`DEFAULT_CODEL_LIMIT`); ECN off (`codel_params_init`);
//! the 16·interval re-entry window (`codel_dequeue`); 1/√count kept as a Q0.16 reciprocal updated by one
//! Newton–Raphson step per count change (`codel_Newton_step`), exactly Linux's fixed-point arithmetic, including
//! its wrap-around when the count jumps (fq_codel's batch drop adds up to 64 without a Newton step).
//!
//! Deviations: time in ns (u64) instead of Linux's 1024 ns `codel_time_t` (u32, wraps after 2199 s), so
//! interval 100 ms is exact rather than 97 656 × 1024 ns; `mtu` (the "backlog ≤ one packet" test) is the
//! link's MTU, the size of a full packet here, where Linux uses `psched_mtu` (MTU + Ethernet header); the
//! `ce_threshold` selector/mask (mark only some DSCP/ECN values) is not modelled: with `ce_threshold_ns` set,
//! every ECT packet above it is marked.

use ccfair_core::{DropReason, Dur, FieldError, PacketMeta, ParamDoc, Time};
use serde::{Deserialize, Serialize};

use crate::params::check_positive_ns;
use crate::queue::{PacketFifo, QueueLimit};
use crate::{Qdisc, QdiscSink, QdiscStats, count_dequeue, drop_packet, mark_ce, qdisc_accessors};

/// Linux `DEFAULT_CODEL_LIMIT`.
pub const DEFAULT_LIMIT_PACKETS: u32 = 1000;
/// RFC 8289 §4.2 / `codel_params_init`.
pub const TARGET_NS: u64 = 5_000_000;
/// RFC 8289 §4.3 / `codel_params_init`.
pub const INTERVAL_NS: u64 = 100_000_000;
/// Re-entering the dropping state within this many intervals of the last scheduled drop resumes the count.
const REENTRY_INTERVALS: u64 = 16;
/// Bits of the Q0.16 reciprocal square root (`REC_INV_SQRT_BITS`) and the shift to Q0.32.
const REC_INV_SQRT_SHIFT: u32 = 16;

/// `sch_codel` parameters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CodelParams {
    pub target_ns: u64,
    pub interval_ns: u64,
    pub ecn: bool,
    /// CE-mark every ECT packet whose sojourn exceeds this, independently of the control law (off when null).
    pub ce_threshold_ns: Option<u64>,
}

impl Default for CodelParams {
    fn default() -> Self {
        CodelParams {
            target_ns: TARGET_NS,
            interval_ns: INTERVAL_NS,
            ecn: false,
            ce_threshold_ns: None,
        }
    }
}

pub const PARAMS: &[ParamDoc] = &[
    ParamDoc {
        name: "target_ns",
        allowed: "> 0 ns (e.g. \"5ms\")",
        doc: "acceptable standing sojourn time (RFC 8289: 5 ms)",
    },
    ParamDoc {
        name: "interval_ns",
        allowed: "> 0 ns (e.g. \"100ms\")",
        doc: "window the sojourn must stay above target before dropping; control law interval/sqrt(count) (100 ms)",
    },
    ParamDoc {
        name: "ecn",
        allowed: "true | false",
        doc: "CE-mark ECT packets instead of dropping them (sch_codel default: false)",
    },
    ParamDoc {
        name: "ce_threshold_ns",
        allowed: "> 0 ns, or absent for off",
        doc: "CE-mark any ECT packet whose sojourn exceeds this (DCTCP/L4S-style step; default off)",
    },
];

impl CodelParams {
    pub fn validate(&self) -> Result<(), FieldError> {
        check_positive_ns("target_ns", self.target_ns)?;
        check_positive_ns("interval_ns", self.interval_ns)?;
        if let Some(t) = self.ce_threshold_ns {
            check_positive_ns("ce_threshold_ns", t)?;
        }
        Ok(())
    }

    pub fn control(&self, mtu_bytes: u32) -> CodelControl {
        CodelControl {
            target: Dur::from_ns(self.target_ns),
            interval: Dur::from_ns(self.interval_ns),
            mtu_bytes: mtu_bytes as u64,
            ecn: self.ecn,
            ce_threshold: self.ce_threshold_ns.map(Dur::from_ns),
        }
    }
}

/// `struct codel_params`: what one CoDel instance needs at run time.
#[derive(Clone, Copy, Debug)]
pub struct CodelControl {
    pub target: Dur,
    pub interval: Dur,
    /// A backlog of at most this many bytes is never dropped from (one full packet).
    pub mtu_bytes: u64,
    pub ecn: bool,
    pub ce_threshold: Option<Dur>,
}

/// `struct codel_vars`: the state of one CoDel instance.
#[derive(Clone, Copy, Debug)]
pub struct CodelVars {
    /// Drops (and marks) since entering the dropping state, plus carry-over.
    pub count: u32,
    /// `count` when the dropping state was last entered.
    pub lastcount: u32,
    pub dropping: bool,
    /// 1/√count in Q0.16.
    pub rec_inv_sqrt: u16,
    /// When the sojourn will have been above target for a whole interval (None: currently below).
    pub first_above_time: Option<Time>,
    /// When the next drop is due (or when the last one was).
    pub drop_next: Time,
    /// Sojourn time of the last dequeued packet.
    pub ldelay: Dur,
}

impl Default for CodelVars {
    /// `codel_vars_init`: all zero.
    fn default() -> Self {
        CodelVars {
            count: 0,
            lastcount: 0,
            dropping: false,
            rec_inv_sqrt: 0,
            first_above_time: None,
            drop_next: Time::ZERO,
            ldelay: Dur::ZERO,
        }
    }
}

/// `struct codel_stats`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CodelStats {
    /// Largest packet seen.
    pub maxpacket: u32,
    /// Packets dropped by the control law.
    pub drop_count: u64,
    /// Packets CE-marked by the control law instead of dropped.
    pub ecn_mark: u64,
    /// Packets CE-marked because their sojourn exceeded `ce_threshold`.
    pub ce_mark: u64,
}

impl CodelVars {
    /// `codel_Newton_step`: one Newton–Raphson iteration of 1/√count, new = (x/2)·(3 − count·x²), in Linux's
    /// fixed point (x in Q0.32, stored back as Q0.16). The arithmetic wraps where the kernel's u64 does.
    pub fn newton_step(&mut self) {
        let invsqrt = (self.rec_inv_sqrt as u32) << REC_INV_SQRT_SHIFT;
        let invsqrt2 = ((invsqrt as u64 * invsqrt as u64) >> 32) as u32;
        let mut val = (3u64 << 32).wrapping_sub((self.count as u64).wrapping_mul(invsqrt2 as u64));
        val >>= 2; // keeps the next multiply in range
        val = val.wrapping_mul(invsqrt as u64) >> (32 - 2 + 1);
        self.rec_inv_sqrt = (val >> REC_INV_SQRT_SHIFT) as u16;
    }

    /// `codel_control_law`: t + interval/√count, with 1/√count from `rec_inv_sqrt` (`reciprocal_scale`).
    pub fn control_law(&self, t: Time, interval: Dur) -> Time {
        let scale = ((self.rec_inv_sqrt as u32) << REC_INV_SQRT_SHIFT) as u128;
        t + Dur::from_ns(((interval.ns() as u128 * scale) >> 32) as u64)
    }

    /// `codel_should_drop`: whether the sojourn of `pkt` has been at or above target for an interval.
    /// `backlog_bytes` is the qdisc's backlog after `pkt` was removed.
    fn should_drop<P: PacketMeta>(
        &mut self,
        pkt: Option<&P>,
        ctl: &CodelControl,
        stats: &mut CodelStats,
        backlog_bytes: u64,
        now: Time,
    ) -> bool {
        let Some(pkt) = pkt else {
            self.first_above_time = None;
            return false;
        };
        self.ldelay = now.saturating_since(pkt.enqueue_ts());
        stats.maxpacket = stats.maxpacket.max(pkt.wire_len());
        if self.ldelay < ctl.target || backlog_bytes <= ctl.mtu_bytes {
            // Went below: stay below for at least an interval before dropping again.
            self.first_above_time = None;
            return false;
        }
        match self.first_above_time {
            None => {
                // Just went above; if it stays above for an interval, dropping is allowed.
                self.first_above_time = Some(now + ctl.interval);
                false
            }
            Some(t) => now > t,
        }
    }
}

/// A FIFO that CoDel dequeues from (Linux's `dequeue_func` plus the backlog pointer).
pub trait CodelQueue<P> {
    /// Removes the head packet, updating every backlog counter.
    fn dequeue_head(&mut self) -> Option<P>;
    /// The qdisc's whole backlog in bytes (`sch->qstats.backlog`).
    fn backlog_bytes(&self) -> u64;
}

/// `codel_dequeue`: the next packet of `queue` after CoDel has dropped or marked what its control law asks.
#[allow(clippy::too_many_arguments)] // the kernel function's own shape: params, vars, stats, queue, callbacks
pub fn codel_dequeue<P: PacketMeta, Q: CodelQueue<P>>(
    now: Time,
    ctl: &CodelControl,
    vars: &mut CodelVars,
    cstats: &mut CodelStats,
    queue: &mut Q,
    qstats: &mut QdiscStats,
    sink: &mut dyn QdiscSink<P>,
) -> Option<P> {
    let Some(first) = queue.dequeue_head() else {
        vars.dropping = false;
        return None;
    };
    let drop = vars.should_drop(Some(&first), ctl, cstats, queue.backlog_bytes(), now);
    // The packet about to be delivered; None once the queue ran dry while dropping.
    let mut pkt = Some(first);
    if vars.dropping {
        if !drop {
            // Sojourn below target: leave the dropping state.
            vars.dropping = false;
        } else if now >= vars.drop_next {
            // Time for the next drop(s). A large backlog can make several due at once, hence the loop.
            while vars.dropping && now >= vars.drop_next {
                let Some(mut p) = pkt.take() else { break };
                vars.count = vars.count.wrapping_add(1);
                vars.newton_step();
                if ctl.ecn && mark_ce(qstats, sink, now, &mut p) {
                    cstats.ecn_mark += 1;
                    vars.drop_next = vars.control_law(vars.drop_next, ctl.interval);
                    return finish(now, ctl, vars, cstats, qstats, sink, p);
                }
                cstats.drop_count += 1;
                drop_packet(qstats, sink, now, p, DropReason::Aqm);
                pkt = queue.dequeue_head();
                if !vars.should_drop(pkt.as_ref(), ctl, cstats, queue.backlog_bytes(), now) {
                    vars.dropping = false;
                } else {
                    vars.drop_next = vars.control_law(vars.drop_next, ctl.interval);
                }
            }
        }
    } else if drop {
        let mut p = pkt.take().expect("the first packet is still here");
        if ctl.ecn && mark_ce(qstats, sink, now, &mut p) {
            cstats.ecn_mark += 1;
            pkt = Some(p);
        } else {
            cstats.drop_count += 1;
            drop_packet(qstats, sink, now, p, DropReason::Aqm);
            pkt = queue.dequeue_head();
            // The kernel re-evaluates for the side effects on first_above_time and ldelay only.
            vars.should_drop(pkt.as_ref(), ctl, cstats, queue.backlog_bytes(), now);
        }
        vars.dropping = true;
        // If we went above target soon after last leaving the dropping state, the previous drop rate is a good
        // starting point: resume from the drops of the last cycle.
        let delta = vars.count.wrapping_sub(vars.lastcount);
        let window = ctl.interval.mul(REENTRY_INTERVALS);
        if delta > 1 && now < vars.drop_next + window {
            vars.count = delta;
            // Imprecise for a moment; the next Newton steps converge quadratically.
            vars.newton_step();
        } else {
            vars.count = 1;
            vars.rec_inv_sqrt = u16::MAX;
        }
        vars.lastcount = vars.count;
        vars.drop_next = vars.control_law(now, ctl.interval);
    }
    finish(now, ctl, vars, cstats, qstats, sink, pkt?)
}

/// The `end:` label of `codel_dequeue`: the ce_threshold step mark on the packet about to leave.
fn finish<P: PacketMeta>(
    now: Time,
    ctl: &CodelControl,
    vars: &CodelVars,
    cstats: &mut CodelStats,
    qstats: &mut QdiscStats,
    sink: &mut dyn QdiscSink<P>,
    mut pkt: P,
) -> Option<P> {
    if let Some(th) = ctl.ce_threshold
        && vars.ldelay > th
        && mark_ce(qstats, sink, now, &mut pkt)
    {
        cstats.ce_mark += 1;
    }
    Some(pkt)
}

/// The single FIFO of `sch_codel`, as CoDel sees it.
impl<P: PacketMeta> CodelQueue<P> for PacketFifo<P> {
    fn dequeue_head(&mut self) -> Option<P> {
        self.pop_front()
    }
    fn backlog_bytes(&self) -> u64 {
        self.bytes()
    }
}

/// The `codel` qdisc: one FIFO under one CoDel instance, tail drop at the limit.
pub struct Codel<P> {
    queue: PacketFifo<P>,
    ctl: CodelControl,
    vars: CodelVars,
    cstats: CodelStats,
    stats: QdiscStats,
}

impl<P: PacketMeta> Codel<P> {
    pub fn new(params: &CodelParams, limit: QueueLimit, mtu_bytes: u32) -> Self {
        Codel {
            queue: PacketFifo::new(limit, mtu_bytes),
            ctl: params.control(mtu_bytes),
            vars: CodelVars::default(),
            cstats: CodelStats::default(),
            stats: QdiscStats::default(),
        }
    }

    pub fn vars(&self) -> &CodelVars {
        &self.vars
    }

    pub fn codel_stats(&self) -> &CodelStats {
        &self.cstats
    }
}

impl<P: PacketMeta + Send> Qdisc<P> for Codel<P> {
    fn enqueue(&mut self, now: Time, pkt: P, sink: &mut dyn QdiscSink<P>) -> bool {
        self.queue.enqueue(now, pkt, &mut self.stats, sink)
    }

    fn dequeue(&mut self, now: Time, sink: &mut dyn QdiscSink<P>) -> Option<P> {
        let pkt = codel_dequeue(
            now,
            &self.ctl,
            &mut self.vars,
            &mut self.cstats,
            &mut self.queue,
            &mut self.stats,
            sink,
        )?;
        count_dequeue(&mut self.stats, &pkt);
        Some(pkt)
    }

    qdisc_accessors!(queue, CodelParams);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_packet::{Drops, TestPacket, ms};
    use ccfair_core::Ecn;

    fn codel(ecn: bool) -> Codel<TestPacket> {
        Codel::new(
            &CodelParams {
                ecn,
                ..CodelParams::default()
            },
            QueueLimit::Packets(10_000),
            1500,
        )
    }

    /// Fills the queue with `n` packets stamped at time 0 (a standing queue whose sojourn grows with now).
    fn fill(q: &mut Codel<TestPacket>, n: u64, ecn: Ecn, d: &mut Drops) {
        for i in 0..n {
            q.enqueue(Time::ZERO, TestPacket::new(i, 1500).ecn(ecn), d);
        }
    }

    /// A standing queue (sojourn above target from 10 ms on) dequeued every 100 µs from 110 ms until CoDel
    /// has dropped `count` times in a row; returns the qdisc, its drops and the time of the last dequeue.
    fn dropping_until_count(count: u32) -> (Codel<TestPacket>, Drops, u64) {
        let mut q = codel(false);
        let mut d = Drops::default();
        fill(&mut q, 5000, Ecn::NotEct, &mut d);
        q.dequeue(ms(10), &mut d);
        let mut t = 110_000_000u64;
        while q.vars().count < count {
            t += 100_000;
            q.dequeue(Time::from_ns(t), &mut d);
        }
        (q, d, t)
    }

    #[test]
    fn newton_steps_converge_to_the_reciprocal_square_root() {
        let mut v = CodelVars {
            count: 1,
            rec_inv_sqrt: u16::MAX,
            ..CodelVars::default()
        };
        for count in 2..=1000u32 {
            v.count = count;
            v.newton_step();
            let exact = 1.0 / (count as f64).sqrt();
            let got = v.rec_inv_sqrt as f64 / 65536.0;
            // One step per increment starts rough (count 2 gives 0.5, not 0.707) and then tracks
            // 1/sqrt(count) ever closer.
            let tolerance = if count >= 20 { 0.005 } else { 0.03 };
            if count >= 4 {
                assert!(
                    (got - exact).abs() / exact < tolerance,
                    "count {count}: {got} vs {exact}"
                );
            }
        }
    }

    #[test]
    fn control_law_is_interval_over_sqrt_count() {
        let mut v = CodelVars {
            count: 1,
            rec_inv_sqrt: u16::MAX,
            ..CodelVars::default()
        };
        let iv = Dur::from_ms(100);
        // count 1: the next drop is (almost exactly) one interval later.
        let t1 = v.control_law(Time::ZERO, iv).ns();
        assert!((99_990_000..=100_000_000).contains(&t1), "{t1}");
        for _ in 0..3 {
            v.count += 1;
            v.newton_step();
        }
        // count 4: interval / 2.
        // count 4: interval / 2, within the 3 % the Newton iteration is still off after three steps from 1.
        let t4 = v.control_law(Time::ZERO, iv).ns() as f64;
        assert!((t4 - 50e6).abs() / 50e6 < 0.03, "{t4}");
    }

    #[test]
    fn no_drop_until_sojourn_stays_above_target_for_an_interval() {
        let mut q = codel(false);
        let mut d = Drops::default();
        fill(&mut q, 2000, Ecn::NotEct, &mut d);
        // At 10 ms the head has waited 10 ms > 5 ms: the clock starts (first_above_time = 110 ms).
        assert_eq!(q.dequeue(ms(10), &mut d).unwrap().id, 0);
        assert_eq!(q.vars().first_above_time, Some(ms(110)));
        // Still inside the interval: nothing dropped.
        q.dequeue(ms(110), &mut d);
        assert_eq!(d.aqm_drops(), 0);
        assert!(!q.vars().dropping);
        // Just past it: the head is dropped, the next one delivered, dropping state entered with count 1.
        let next = q.dequeue(Time::from_ns(110_000_001), &mut d).unwrap();
        assert_eq!(d.aqm_drops(), 1);
        assert_eq!(next.id, 3);
        assert!(q.vars().dropping);
        assert_eq!(q.vars().count, 1);
        assert_eq!(
            q.vars().drop_next,
            Time::from_ns(110_000_001) + Dur::from_ns(99_998_474)
        );
    }

    #[test]
    fn drop_schedule_follows_interval_over_sqrt_count() {
        let mut q = codel(false);
        let mut d = Drops::default();
        fill(&mut q, 8000, Ecn::NotEct, &mut d);
        q.dequeue(ms(10), &mut d);
        // Poll every 0.1 ms (a slow link); record when each drop happens.
        let mut drop_times = vec![];
        let mut t = 110_000_000u64;
        while drop_times.len() < 12 && t < 2_000_000_000 {
            t += 100_000;
            let before = d.aqm_drops();
            q.dequeue(Time::from_ns(t), &mut d);
            if d.aqm_drops() > before {
                drop_times.push(t);
            }
        }
        // The gap after drop n is interval/sqrt(n), ± the 0.1 ms polling and the Newton iteration's error
        // (exact at n = 1, rough at n = 2 and 3, within 3 % from n = 4 on).
        for n in (1..drop_times.len()).filter(|&n| n == 1 || n >= 4) {
            let gap = (drop_times[n] - drop_times[n - 1]) as f64;
            let want = 100e6 / (n as f64).sqrt();
            assert!(
                (gap - want).abs() < 0.03 * want + 100_000.0,
                "gap {n}: {gap} vs {want}"
            );
        }
        assert_eq!(q.vars().count as usize, drop_times.len());
    }

    #[test]
    fn count_carries_over_when_reentering_soon() {
        let (mut q, mut d, t) = dropping_until_count(6);
        assert_eq!(q.vars().lastcount, 1);
        // A fresh packet (sojourn 0) ends the dropping state.
        while q.queue.pop_front().is_some() {}
        // The queue drains; fresh traffic arrives 300 ms later.
        let now = Time::from_ns(t + 300_000_000);
        for i in 0..100 {
            q.enqueue(now, TestPacket::new(10_000 + i, 1500).at(now), &mut d);
        }
        q.dequeue(now, &mut d);
        assert!(!q.vars().dropping);
        let drop_next = q.vars().drop_next;
        // The queue stands again: above target from now + 6 ms, dropping allowed an interval later. That is
        // several intervals but fewer than 16 after drop_next, so count resumes at count - lastcount = 6 - 1.
        let again = now + Dur::from_ms(6);
        q.dequeue(again, &mut d);
        let reenter = again + Dur::from_ms(101);
        assert!(reenter > drop_next + Dur::from_ms(300) && reenter < drop_next + Dur::from_ms(1600));
        q.dequeue(reenter, &mut d);
        assert!(q.vars().dropping);
        assert_eq!(q.vars().count, 5);
        assert_eq!(q.vars().lastcount, 5);
    }

    #[test]
    fn count_restarts_at_one_after_a_long_pause() {
        let (mut q, mut d, t) = dropping_until_count(6);
        while q.queue.pop_front().is_some() {}
        // A fresh packet ends the dropping state; then the queue stays away for more than 16 intervals.
        let now = Time::from_ns(t);
        q.enqueue(now, TestPacket::new(9_999, 1500).at(now), &mut d);
        q.dequeue(now, &mut d);
        assert!(!q.vars().dropping);
        let later = Time::from_ns(t) + Dur::from_secs(3);
        for i in 0..100 {
            q.enqueue(later, TestPacket::new(20_000 + i, 1500).at(later), &mut d);
        }
        q.dequeue(later + Dur::from_ms(6), &mut d);
        q.dequeue(later + Dur::from_ms(107), &mut d);
        assert!(q.vars().dropping);
        assert_eq!(q.vars().count, 1);
    }

    #[test]
    fn ecn_marks_instead_of_dropping_and_counts_like_a_drop() {
        let mut q = codel(true);
        let mut d = Drops::default();
        fill(&mut q, 3000, Ecn::Ect0, &mut d);
        q.dequeue(ms(10), &mut d);
        let p = q.dequeue(Time::from_ns(110_000_001), &mut d).unwrap();
        assert_eq!(p.ecn, Ecn::Ce);
        assert_eq!((d.aqm_drops(), d.marks()), (0, 1));
        assert!(q.vars().dropping);
        assert_eq!(q.stats().ce_marks, 1);
        // Not-ECT packets are dropped even with ECN on.
        let mut q = codel(true);
        let mut d = Drops::default();
        fill(&mut q, 3000, Ecn::NotEct, &mut d);
        q.dequeue(ms(10), &mut d);
        q.dequeue(Time::from_ns(110_000_001), &mut d);
        assert_eq!((d.aqm_drops(), d.marks()), (1, 0));
    }

    #[test]
    fn one_packet_backlog_is_never_dropped() {
        let mut q = codel(false);
        let mut d = Drops::default();
        for i in 0..2 {
            q.enqueue(Time::ZERO, TestPacket::new(i, 1500), &mut d);
        }
        // After removing the head, 1500 bytes remain = one MTU: never "above target".
        q.dequeue(ms(200), &mut d);
        assert_eq!(q.vars().first_above_time, None);
        q.dequeue(ms(400), &mut d);
        assert_eq!(d.aqm_drops(), 0);
    }

    #[test]
    fn ce_threshold_marks_ect_packets_above_it() {
        let mut q = Codel::new(
            &CodelParams {
                ce_threshold_ns: Some(1_000_000),
                ..CodelParams::default()
            },
            QueueLimit::Packets(DEFAULT_LIMIT_PACKETS),
            1500,
        );
        let mut d = Drops::default();
        for i in 0..4 {
            q.enqueue(Time::ZERO, TestPacket::new(i, 1500).ecn(Ecn::Ect1), &mut d);
        }
        assert_eq!(q.dequeue(us_t(900), &mut d).unwrap().ecn, Ecn::Ect1);
        assert_eq!(q.dequeue(us_t(1100), &mut d).unwrap().ecn, Ecn::Ce);
        assert_eq!(q.codel_stats().ce_mark, 1);
    }

    fn us_t(us: u64) -> Time {
        Time::from_ns(us * 1000)
    }
}
