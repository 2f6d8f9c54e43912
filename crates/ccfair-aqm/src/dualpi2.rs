//! DualPI2, the DualQ Coupled AQM (RFC 9332; Linux `net/sched/sch_dualpi2.c`, same lineage as L4STeam's).
//!
//! In a nutshell: packets whose ECN field matches the mask (ECT(1) and CE: L4S, RFC 9331) go to the L queue,
//! all others to the C (classic) queue. One PI controller updates a base probability p′ every `tupdate` from the
//! larger of the two head-of-queue sojourn times: p′ += α·(qdelay − target) + β·(qdelay − qdelay_prev). Classic
//! packets are dropped (ECT: marked) with p_C = p′² (two independent draws below p′), L packets marked with the
//! coupled p_CL = k·p′ (k = 2), and on top the L queue has its own native shallow AQM, a step: every L packet
//! whose sojourn exceeds 1 ms is marked. Because Reno/Cubic's rate goes as 1/√p and a scalable control's as 1/p,
//! p_C = (p_CL/k)² makes them share the link. The scheduler serves L first unless the C queue's WRR credit says
//! otherwise: C is guaranteed `c_protection` (10 %) of the service while both are backlogged (a credit of
//! MTU·(wc − wl) reset whenever both queues are empty, +wc·len per L packet served while C waits, −wl·len per
//! C packet served while L waits; L is served while the credit is ≤ 0). On overload (k·p′ > 1) L packets are
//! dropped with p′² like classic ones (`drop_overload`), else marked. No AQM action while less than 2 MTU are
//! queued. Decisions are taken at dequeue (`drop_early` off).
//!
//! Constants, as in `dualpi2_reset_default`: limit 10 000 packets, target 15 ms, tupdate 16 ms, α = 41/256 Hz and
//! β = 819/256 Hz (≈ 0.16 and 3.2: a 10 dB stability margin for 100 ms RTTs; given in Hz here and truncated to
//! 1/256 Hz as `tc` does), step 1 ms (time mode; a packet-count mode exists), min_qlen_step 0, k = 2, WRR
//! wc = 10 %, ECN mask ECT(1), drop on overload, drop at dequeue; probabilities in Q0.32 (u32), rolls
//! `random_u32 ≤ p`, the PI arithmetic in ns with α, β in 64 ns units exactly as the kernel.
//!
//! RFC 9332 vs Linux (Linux followed): the RFC's example L AQM is a ramp from 800 µs over 400 µs, Linux a 1 ms
//! step; the RFC's Appendix A PI input is the classic queue's delay, Linux uses max(L, C) head delays; the RFC
//! suggests a ~1/16 WRR weight for C, Linux 10 %; RFC example gains from Tupdate = min(target, RTT_max/3) = 15 ms
//! give α 0.15, β 3.0, Linux uses 16 ms, 0.16, 3.2.
//!
//! `tupdate` is at least 1 µs ([`MIN_TUPDATE_NS`]), the kernel's own floor (`TCA_DUALPI2_TUPDATE` is in µs,
//! with a netlink minimum of 1): a run costs one PI update per period while a queue is backlogged (an idle
//! queue's updates are skipped once p′ has settled), which the estimate of a run's events counts.
//!
//! Deviations from Linux: no memory limit (`memory_limit` = limit × 2 MTU in the kernel, counted in truesize,
//! which never binds before the packet limit here); no GSO splitting (packets are single segments); no tc
//! filters or skb priority (so no "LLLL" class); the timer is exact; the MTU in the WRR credit and the 2-MTU
//! test is the link MTU (Linux: `psched_mtu`, MTU + Ethernet header).

use std::collections::VecDeque;

use ccfair_core::{DropReason, Dur, Ecn, FieldError, PacketMeta, ParamDoc, Rng, Time};
use serde::{Deserialize, Serialize};

use crate::params::check_positive_ns;
use crate::queue::{Backlog, QueueLimit, preallocated_packets};
use crate::{Qdisc, QdiscSink, QdiscStats, count_dequeue, drop_packet, mark_ce, qdisc_accessors};

/// Probability 1.0 (`MAX_PROB`).
const MAX_PROB: u32 = u32::MAX;
/// α and β cross netlink in 1/256 Hz and are kept in units of 64 ns internally.
const ALPHA_BETA_SHIFT: u32 = 8;
const ALPHA_BETA_GRANULARITY: u32 = 6;
const ALPHA_BETA_MAX: u64 = (1 << 31) - 1;
/// WRR weights are percentages.
const MAX_WC: u8 = 100;
/// The shortest PI update period: 1 µs, the kernel's netlink minimum (see the module docs).
pub const MIN_TUPDATE_NS: u64 = 1_000;

/// Which ECN codepoints select the L queue (`TCA_DUALPI2_ECN_MASK`).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EcnMask {
    /// ECT(1) and CE (mask 0b01).
    #[default]
    L4sEct,
    /// Any ECT codepoint and CE (mask 0b11).
    AnyEct,
}

impl EcnMask {
    fn bits(self) -> u8 {
        match self {
            EcnMask::L4sEct => 0b01,
            EcnMask::AnyEct => 0b11,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DualPi2Params {
    pub target_ns: u64,
    pub tupdate_ns: u64,
    /// Integral gain, Hz (kept in 1/256 Hz).
    pub alpha: f64,
    /// Proportional gain, Hz (kept in 1/256 Hz).
    pub beta: f64,
    /// L-queue step threshold as sojourn time (used when `step_threshold_packets` is 0).
    pub step_threshold_ns: u64,
    /// L-queue step threshold as L-queue length in packets; 0 selects the time threshold.
    pub step_threshold_packets: u32,
    /// The step applies only to packets arriving when the L queue holds at least this many packets.
    pub min_qlen_step: u32,
    /// k: p_CL = k·p′.
    pub coupling_factor: u8,
    /// On overload (k·p′ > 1) drop L packets with p′² instead of only marking.
    pub drop_overload: bool,
    /// Take AQM decisions at enqueue instead of dequeue.
    pub drop_early: bool,
    /// C queue's WRR weight, percent.
    pub c_protection_percent: u8,
    pub ecn_mask: EcnMask,
}

impl Default for DualPi2Params {
    fn default() -> Self {
        DualPi2Params {
            target_ns: 15_000_000,
            tupdate_ns: 16_000_000,
            alpha: 41.0 / 256.0,
            beta: 819.0 / 256.0,
            step_threshold_ns: 1_000_000,
            step_threshold_packets: 0,
            min_qlen_step: 0,
            coupling_factor: 2,
            drop_overload: true,
            drop_early: false,
            c_protection_percent: 10,
            ecn_mask: EcnMask::L4sEct,
        }
    }
}

pub const PARAMS: &[ParamDoc] = &[
    ParamDoc {
        name: "target_ns",
        allowed: ">= 0 ns (e.g. \"15ms\")",
        doc: "PI target queue delay (15 ms)",
    },
    ParamDoc {
        name: "tupdate_ns",
        allowed: ">= 1 us, the kernel's minimum (e.g. \"16ms\")",
        doc: "PI update period (16 ms)",
    },
    ParamDoc {
        name: "alpha",
        allowed: "1/256..=8388607 Hz",
        doc: "integral gain, truncated to 1/256 Hz as tc does (41/256 = 0.16)",
    },
    ParamDoc {
        name: "beta",
        allowed: "1/256..=8388607 Hz",
        doc: "proportional gain, truncated to 1/256 Hz (819/256 = 3.2)",
    },
    ParamDoc {
        name: "step_threshold_ns",
        allowed: "> 0 ns",
        doc: "L-queue step: mark L packets whose sojourn exceeds this (1 ms)",
    },
    ParamDoc {
        name: "step_threshold_packets",
        allowed: ">= 0 packets",
        doc: "if > 0: step on L-queue length in packets instead of sojourn",
    },
    ParamDoc {
        name: "min_qlen_step",
        allowed: ">= 0 packets",
        doc: "step only packets that arrive to at least this many L packets (0)",
    },
    ParamDoc {
        name: "coupling_factor",
        allowed: "1..=255",
        doc: "k in p_CL = k p' (2: window fairness at equal RTTs)",
    },
    ParamDoc {
        name: "drop_overload",
        allowed: "true | false",
        doc: "on overload drop L packets with p'^2 instead of marking them all (true)",
    },
    ParamDoc {
        name: "drop_early",
        allowed: "true | false",
        doc: "decide at enqueue instead of dequeue (false)",
    },
    ParamDoc {
        name: "c_protection_percent",
        allowed: "0..=100",
        doc: "C queue's WRR weight while both queues are backlogged (10)",
    },
    ParamDoc {
        name: "ecn_mask",
        allowed: "\"l4s_ect\" | \"any_ect\"",
        doc: "which codepoints go to the L queue: ECT(1)/CE, or any ECT/CE (l4s_ect)",
    },
];

/// A gain in Hz in the kernel's netlink units (1/256 Hz), truncated as tc's `parse_alpha_beta`.
fn gain_units(hz: f64) -> Option<u32> {
    let v = (hz * (1u32 << ALPHA_BETA_SHIFT) as f64).trunc();
    (v.is_finite() && v >= 1.0 && v <= ALPHA_BETA_MAX as f64).then_some(v as u32)
}

/// `dualpi2_scale_alpha_beta`: netlink units to probability per ns of delay error, in 64 ns units.
fn scale_alpha_beta(units: u32) -> u32 {
    (((units as u64 * MAX_PROB as u64) >> (ALPHA_BETA_SHIFT - ALPHA_BETA_GRANULARITY)) / 1_000_000_000) as u32
}

impl DualPi2Params {
    pub fn validate(&self) -> Result<(), FieldError> {
        if self.tupdate_ns < MIN_TUPDATE_NS {
            return FieldError::err(
                "tupdate_ns",
                format!(
                    "must be at least 1 us (the kernel's minimum: TCA_DUALPI2_TUPDATE is in microseconds, at \
                     least 1), got {} ns",
                    self.tupdate_ns
                ),
            );
        }
        check_positive_ns("step_threshold_ns", self.step_threshold_ns)?;
        for (name, v) in [("alpha", self.alpha), ("beta", self.beta)] {
            if gain_units(v).is_none() {
                return FieldError::err(
                    name,
                    format!("must be between 1/256 and {ALPHA_BETA_MAX}/256 Hz, got {v}"),
                );
            }
        }
        if self.coupling_factor == 0 {
            return FieldError::err("coupling_factor", "must be at least 1");
        }
        if self.c_protection_percent > MAX_WC {
            return FieldError::err("c_protection_percent", "must be between 0 and 100");
        }
        Ok(())
    }
}

/// A queued packet with what the kernel keeps in its `dualpi2_skb_cb`.
struct Entry<P> {
    pkt: P,
    /// ECN codepoint at classification (before any mark here).
    ect: Ecn,
    /// Whether the step threshold applies (an L4S packet arriving to at least `min_qlen_step`).
    apply_step: bool,
}

/// Bytes one queued packet of type `P` takes (for the estimate of a run's memory).
pub(crate) fn entry_bytes<P>() -> usize {
    std::mem::size_of::<Entry<P>>()
}

/// Linux `tc_dualpi2_xstats` essentials.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DualPi2Stats {
    pub packets_in_c: u64,
    pub packets_in_l: u64,
    /// Mark calls that succeeded (coupled and step), as the kernel's `ecn_mark`.
    pub ecn_mark: u64,
    /// Step marks.
    pub step_marks: u64,
    /// Classic packets selected by p′² (dropped or marked) and L packets selected by k·p′, with the numbers of
    /// packets each test was applied to: the empirical p_C and p_CL.
    pub c_selected: u64,
    pub c_tested: u64,
    pub l_selected: u64,
    pub l_tested: u64,
}

pub struct DualPi2<P> {
    c_queue: VecDeque<Entry<P>>,
    l_queue: VecDeque<Entry<P>>,
    backlog: Backlog,
    mtu_bytes: u64,
    // PI2
    target_ns: u64,
    tupdate: Dur,
    alpha: u32,
    beta: u32,
    prob: u32,
    last_qdelay_ns: u64,
    next_update: Time,
    c_head_ts: Option<Time>,
    l_head_ts: Option<Time>,
    // step
    step_threshold_ns: u64,
    step_threshold_packets: u32,
    min_qlen_step: u32,
    // scheduler
    credit: i64,
    credit_init: i64,
    wc: i64,
    wl: i64,
    coupling: u8,
    drop_overload: bool,
    drop_early: bool,
    ecn_mask: u8,
    rng: Rng,
    pub dualpi2_stats: DualPi2Stats,
    stats: QdiscStats,
}

impl<P> DualPi2<P> {
    pub fn new(params: &DualPi2Params, limit: QueueLimit, mtu_bytes: u32, rng: Rng) -> Self {
        let wc = params.c_protection_percent as i64;
        let wl = (MAX_WC - params.c_protection_percent) as i64;
        let credit_init = mtu_bytes as i64 * (wc - wl);
        let cap = preallocated_packets(limit, mtu_bytes);
        DualPi2 {
            c_queue: VecDeque::with_capacity(cap),
            l_queue: VecDeque::with_capacity(cap),
            backlog: Backlog::new(limit),
            mtu_bytes: mtu_bytes as u64,
            target_ns: params.target_ns,
            tupdate: Dur::from_ns(params.tupdate_ns),
            alpha: scale_alpha_beta(gain_units(params.alpha).unwrap_or(41)),
            beta: scale_alpha_beta(gain_units(params.beta).unwrap_or(819)),
            prob: 0,
            last_qdelay_ns: 0,
            next_update: Time::ZERO + Dur::from_ns(params.tupdate_ns),
            c_head_ts: None,
            l_head_ts: None,
            step_threshold_ns: params.step_threshold_ns,
            step_threshold_packets: params.step_threshold_packets,
            min_qlen_step: params.min_qlen_step,
            credit: credit_init,
            credit_init,
            wc,
            wl,
            coupling: params.coupling_factor,
            drop_overload: params.drop_overload,
            drop_early: params.drop_early,
            ecn_mask: params.ecn_mask.bits(),
            rng,
            dualpi2_stats: DualPi2Stats::default(),
            stats: QdiscStats::default(),
        }
    }

    /// The base probability p′.
    pub fn base_prob(&self) -> f64 {
        self.prob as f64 / MAX_PROB as f64
    }

    /// Packets queued in the L and C queues.
    pub fn queue_lens(&self) -> (usize, usize) {
        (self.l_queue.len(), self.c_queue.len())
    }

    /// Head-of-queue sojourn times of the L and C queues at `now` (0 when empty).
    pub fn queue_delays(&self, now: Time) -> (Dur, Dur) {
        let d = |ts: Option<Time>| ts.map_or(Dur::ZERO, |t| now.saturating_since(t));
        (d(self.l_head_ts), d(self.c_head_ts))
    }

    /// `dualpi2_roll`: true with probability (p + 1)/2³².
    fn roll(&mut self, prob: u32) -> bool {
        ((self.rng.next_u64() >> 32) as u32) <= prob
    }

    /// Runs the PI updates that fell due up to `now` (`dualpi2_timer`). With both queues empty an update reads
    /// no time (both head delays are 0), only p′ and the last delay: one that leaves both unchanged would
    /// repeat itself until `now`, so the updates still due after it are skipped.
    fn run_timer(&mut self, now: Time) {
        while self.next_update <= now {
            let t = self.next_update;
            let before = (self.prob, self.last_qdelay_ns);
            self.prob = self.calculate_probability(t);
            self.stats.timer_runs += 1;
            self.next_update = t + self.tupdate;
            let idle = self.c_head_ts.is_none() && self.l_head_ts.is_none();
            if idle && (self.prob, self.last_qdelay_ns) == before && self.next_update <= now {
                let period = self.tupdate.ns();
                let due = (now.ns() - self.next_update.ns()) / period + 1;
                self.next_update += Dur::from_ns(due * period);
            }
        }
    }

    /// `calculate_probability`: p′ from the larger head delay at time `t`.
    fn calculate_probability(&mut self, t: Time) -> u32 {
        let (ql, qc) = self.queue_delays(t);
        let qdelay = ql.ns().max(qc.ns()) as i64;
        let mut delta = (qdelay - self.target_ns as i64).wrapping_mul(self.alpha as i64);
        delta = delta.wrapping_add((qdelay - self.last_qdelay_ns as i64).wrapping_mul(self.beta as i64));
        self.last_qdelay_ns = qdelay as u64;
        // Bound to [0, MAX_PROB] with the kernel's wrap-around checks (u32 truncation included).
        let new_prob = if delta > 0 {
            let step = ((delta as u64) >> ALPHA_BETA_GRANULARITY) as u32;
            let p = step.wrapping_add(self.prob);
            if p < self.prob { MAX_PROB } else { p }
        } else {
            let step = ((delta.wrapping_neg() as u64) >> ALPHA_BETA_GRANULARITY) as u32;
            let p = self.prob.wrapping_sub(step);
            if p > self.prob { 0 } else { p }
        };
        // Without drops on overload, keep k·p′ ≤ 1 so that L marking stays window-fair when saturated.
        if !self.drop_overload {
            new_prob.min(MAX_PROB / self.coupling as u32)
        } else {
            new_prob
        }
    }

    fn is_l4s(&self, ecn: Ecn) -> bool {
        (ecn as u8) & self.ecn_mask != 0
    }
}

impl<P: PacketMeta> DualPi2<P> {
    /// `must_drop`: the coupled AQM on a packet of the L (`in_l`) or C queue. Marks in place; true = drop.
    fn must_drop(&mut self, now: Time, e: &mut Entry<P>, in_l: bool, sink: &mut dyn QdiscSink<P>) -> bool {
        if self.backlog.bytes() < 2 * self.mtu_bytes {
            return false;
        }
        let prob = self.prob;
        let local_l_prob = prob as u64 * self.coupling as u64;
        let overload = local_l_prob > MAX_PROB as u64;
        if !in_l {
            // p_C = p′²: two independent rolls.
            self.dualpi2_stats.c_tested += 1;
            if self.roll(prob) && self.roll(prob) {
                self.dualpi2_stats.c_selected += 1;
                if overload || e.ect == Ecn::NotEct {
                    return true;
                }
                self.mark(now, e, sink);
            }
            return false;
        }
        self.dualpi2_stats.l_tested += 1;
        if overload {
            // Apply classic drops first if configured to trade loss for latency, then mark the rest.
            if self.drop_overload && self.roll(prob) && self.roll(prob) {
                self.dualpi2_stats.l_selected += 1;
                return true;
            }
            self.dualpi2_stats.l_selected += 1;
            self.mark(now, e, sink);
            return false;
        }
        if self.roll(local_l_prob as u32) {
            self.dualpi2_stats.l_selected += 1;
            if e.ect == Ecn::NotEct {
                return true;
            }
            self.mark(now, e, sink);
        }
        false
    }

    /// `dualpi2_mark`.
    fn mark(&mut self, now: Time, e: &mut Entry<P>, sink: &mut dyn QdiscSink<P>) -> bool {
        let ok = mark_ce(&mut self.stats, sink, now, &mut e.pkt);
        if ok {
            self.dualpi2_stats.ecn_mark += 1;
        }
        ok
    }

    /// `do_step_aqm`: true = drop (a not-ECT packet above the step).
    fn step(&mut self, now: Time, e: &mut Entry<P>, sink: &mut dyn QdiscSink<P>) -> bool {
        let above = if self.step_threshold_packets > 0 {
            self.l_queue.len() as u64 > self.step_threshold_packets as u64
        } else {
            now.saturating_since(e.pkt.enqueue_ts()).ns() > self.step_threshold_ns
        };
        if e.apply_step && above {
            if e.ect == Ecn::NotEct {
                return true;
            }
            if self.mark(now, e, sink) {
                self.dualpi2_stats.step_marks += 1;
            }
        }
        false
    }

    /// `dequeue_packet`: the WRR pick between the queues; returns the entry, whether it is from L, and the credit
    /// change to apply if it is delivered.
    fn pick(&mut self) -> Option<(Entry<P>, bool, i64)> {
        let (l_len, c_len) = (self.l_queue.len(), self.c_queue.len());
        let (e, in_l, weight) = if l_len > 0 && (c_len == 0 || self.credit <= 0) {
            let e = self.l_queue.pop_front().expect("L queue not empty");
            self.l_head_ts = self.l_queue.front().map(|h| h.pkt.enqueue_ts());
            (e, true, if c_len > 0 { self.wc } else { 0 })
        } else if c_len > 0 {
            let e = self.c_queue.pop_front().expect("C queue not empty");
            self.c_head_ts = self.c_queue.front().map(|h| h.pkt.enqueue_ts());
            (e, false, if l_len > 0 { -self.wl } else { 0 })
        } else {
            self.credit = self.credit_init;
            return None;
        };
        self.backlog.remove(e.pkt.wire_len());
        let change = weight * e.pkt.wire_len() as i64;
        Some((e, in_l, change))
    }
}

impl<P: PacketMeta + Send> Qdisc<P> for DualPi2<P> {
    fn enqueue(&mut self, now: Time, pkt: P, sink: &mut dyn QdiscSink<P>) -> bool {
        self.run_timer(now);
        if !self.backlog.admits(pkt.wire_len()) {
            drop_packet(&mut self.stats, sink, now, pkt, DropReason::Overlimit);
            return false;
        }
        let ect = pkt.ecn();
        let in_l = self.is_l4s(ect);
        let mut e = Entry {
            pkt,
            ect,
            apply_step: in_l && self.l_queue.len() as u32 >= self.min_qlen_step,
        };
        if self.drop_early && self.must_drop(now, &mut e, in_l, sink) {
            drop_packet(&mut self.stats, sink, now, e.pkt, DropReason::Aqm);
            return false;
        }
        let ts = e.pkt.enqueue_ts();
        self.backlog.add(e.pkt.wire_len(), &mut self.stats);
        if in_l {
            self.dualpi2_stats.packets_in_l += 1;
            self.l_head_ts.get_or_insert(ts);
            self.l_queue.push_back(e);
        } else {
            self.dualpi2_stats.packets_in_c += 1;
            self.c_head_ts.get_or_insert(ts);
            self.c_queue.push_back(e);
        }
        true
    }

    fn dequeue(&mut self, now: Time, sink: &mut dyn QdiscSink<P>) -> Option<P> {
        self.run_timer(now);
        while let Some((mut e, in_l, credit_change)) = self.pick() {
            if !self.drop_early && self.must_drop(now, &mut e, in_l, sink) {
                drop_packet(&mut self.stats, sink, now, e.pkt, DropReason::Aqm);
                continue;
            }
            if in_l && self.step(now, &mut e, sink) {
                drop_packet(&mut self.stats, sink, now, e.pkt, DropReason::Aqm);
                continue;
            }
            self.credit += credit_change;
            count_dequeue(&mut self.stats, &e.pkt);
            return Some(e.pkt);
        }
        None
    }

    qdisc_accessors!(backlog, DualPi2Params);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_packet::{Drops, TestPacket, ms, us};
    use ccfair_core::rng::StreamId;

    fn dq(params: DualPi2Params) -> DualPi2<TestPacket> {
        dq_limited(params, QueueLimit::Packets(10_000))
    }

    fn dq_limited(params: DualPi2Params, limit: QueueLimit) -> DualPi2<TestPacket> {
        DualPi2::new(&params, limit, 1500, Rng::stream(9, StreamId::Qdisc(0)))
    }

    #[test]
    fn tupdate_is_at_least_the_kernels_microsecond() {
        for (ns, ok) in [(1, false), (999, false), (MIN_TUPDATE_NS, true)] {
            let p = DualPi2Params {
                tupdate_ns: ns,
                ..DualPi2Params::default()
            };
            assert_eq!(p.validate().is_ok(), ok, "{ns}");
            if !ok {
                assert_eq!(p.validate().unwrap_err().field, "tupdate_ns");
            }
        }
    }

    #[test]
    fn an_idle_queue_skips_the_updates_that_would_repeat_and_ends_where_running_them_ends() {
        // As PIE's test: the same traffic, then 1 s idle at a 10 µs period, called at every update time or
        // once; the same state after, and the same decisions on the traffic that follows.
        let params = DualPi2Params {
            tupdate_ns: 10_000,
            ..DualPi2Params::default()
        };
        let (mut every, mut once) = (dq(params.clone()), dq(params));
        let (mut d1, mut d2) = (Drops::default(), Drops::default());
        let traffic = |q: &mut DualPi2<TestPacket>, d: &mut Drops, from: u64, to: u64| {
            for t in from..to {
                for k in 0..3 {
                    let ecn = if k == 0 { Ecn::Ect1 } else { Ecn::NotEct };
                    q.enqueue(
                        us(t * 100),
                        TestPacket::new(t * 4 + k, 1500).ecn(ecn).at(us(t * 100)),
                        d,
                    );
                }
                q.dequeue(us(t * 100), d);
            }
        };
        traffic(&mut every, &mut d1, 0, 5000);
        traffic(&mut once, &mut d2, 0, 5000);
        assert!(every.base_prob() > 0.0, "the busy period raised p'");
        while every.dequeue(us(500_000), &mut d1).is_some() {}
        while once.dequeue(us(500_000), &mut d2).is_some() {}
        let busy_runs = once.stats.timer_runs;
        for t in (500_010..1_500_000).step_by(10) {
            every.dequeue(us(t), &mut d1);
        }
        once.dequeue(us(1_500_000 - 10), &mut d2);
        assert_eq!(
            (every.prob, every.last_qdelay_ns),
            (once.prob, once.last_qdelay_ns)
        );
        assert_eq!(every.next_update, once.next_update);
        let idle_runs = |q: &DualPi2<TestPacket>| q.stats.timer_runs - busy_runs;
        assert!(idle_runs(&once) < idle_runs(&every) / 10, "{:?}", once.stats);
        traffic(&mut every, &mut d1, 15_000, 20_000);
        traffic(&mut once, &mut d2, 15_000, 20_000);
        assert_eq!(every.prob, once.prob);
        assert_eq!(d1.0, d2.0);
    }

    #[test]
    fn kernel_gain_scaling() {
        // 41/256 Hz → 41·(2³²−1)/4/10⁹ = 44 (probability units per ns of delay, ×64).
        assert_eq!(gain_units(41.0 / 256.0), Some(41));
        assert_eq!(gain_units(0.16), Some(40)); // tc truncates 0.16·256 = 40.96
        assert_eq!(scale_alpha_beta(41), 44);
        assert_eq!(scale_alpha_beta(819), 879);
    }

    #[test]
    fn pi_update_uses_the_larger_head_delay() {
        let mut q = dq(DualPi2Params::default());
        let mut d = Drops::default();
        // C head waits from 0, L head from 10 ms; at the first update (16 ms) qdelay = max(6, 16) = 16 ms.
        q.enqueue(Time::ZERO, TestPacket::new(1, 1500).ecn(Ecn::NotEct), &mut d);
        q.enqueue(ms(10), TestPacket::new(2, 1500).ecn(Ecn::Ect1).at(ms(10)), &mut d);
        q.run_timer(ms(16));
        // Δp = α·(16 − 15) ms + β·(16 − 0) ms = 0.16·0.001 + 3.2·0.016 (in units of probability).
        let want = (41.0 * 0.001 + 819.0 * 0.016) / 256.0;
        assert!(
            (q.base_prob() - want).abs() / want < 0.01,
            "{} vs {want}",
            q.base_prob()
        );
    }

    #[test]
    fn coupling_classic_p_squared_and_l4s_k_p() {
        // With p′ held at 0.1: classic packets are selected with p′² = 1 %, L4S packets with 2p′ = 20 %, so the
        // L4S marking probability is 2·√(classic probability), RFC 9332's coupling.
        let mut q = dq_limited(
            DualPi2Params {
                tupdate_ns: 1_000_000_000_000, // no PI updates during the test
                step_threshold_ns: 1_000_000_000,
                ..DualPi2Params::default()
            },
            QueueLimit::Packets(1_000_000),
        );
        let mut d = Drops::default();
        q.prob = (0.1 * MAX_PROB as f64) as u32;
        for i in 0..200_000u64 {
            let ecn = if i % 2 == 0 { Ecn::Ect0 } else { Ecn::Ect1 };
            q.enqueue(Time::ZERO, TestPacket::new(i, 1500).ecn(ecn), &mut d);
        }
        while q.backlog_packets() > 4 {
            q.dequeue(Time::ZERO, &mut d);
        }
        let s = &q.dualpi2_stats;
        let p_c = s.c_selected as f64 / s.c_tested as f64;
        let p_l = s.l_selected as f64 / s.l_tested as f64;
        assert!((p_c - 0.01).abs() < 0.0015, "p_C {p_c}");
        assert!((p_l - 0.2).abs() < 0.006, "p_L {p_l}");
        assert!((p_l / p_c.sqrt() - 2.0).abs() < 0.15, "{}", p_l / p_c.sqrt());
        // ECT packets are marked, not dropped (below overload).
        assert_eq!(d.aqm_drops(), 0);
    }

    #[test]
    fn overload_drops_l4s_packets_with_p_squared() {
        let mut q = dq_limited(
            DualPi2Params {
                tupdate_ns: 1_000_000_000_000,
                step_threshold_ns: 1_000_000_000,
                ..DualPi2Params::default()
            },
            QueueLimit::Packets(1_000_000),
        );
        let mut d = Drops::default();
        q.prob = (0.7 * MAX_PROB as f64) as u32; // k·p′ = 1.4 > 1
        for i in 0..20_000u64 {
            q.enqueue(Time::ZERO, TestPacket::new(i, 1500).ecn(Ecn::Ect1), &mut d);
        }
        while q.backlog_packets() > 4 {
            q.dequeue(Time::ZERO, &mut d);
        }
        let dropped = d.aqm_drops() as f64 / 20_000.0;
        assert!((dropped - 0.49).abs() < 0.02, "{dropped}");
        // Every L packet not dropped is marked (all but the few left queued went through the AQM).
        assert_eq!(d.aqm_drops() + d.marks() + q.backlog_packets() as usize, 20_000);
    }

    #[test]
    fn l_step_marks_above_one_millisecond() {
        let mut q = dq(DualPi2Params::default());
        let mut d = Drops::default();
        for i in 0..3 {
            q.enqueue(Time::ZERO, TestPacket::new(i, 1500).ecn(Ecn::Ect1), &mut d);
        }
        assert_eq!(q.dequeue(us(1000), &mut d).unwrap().ecn, Ecn::Ect1);
        assert_eq!(q.dequeue(us(1001), &mut d).unwrap().ecn, Ecn::Ce);
        assert_eq!(q.dualpi2_stats.step_marks, 1);
        // Classic packets never see the step.
        q.enqueue(Time::ZERO, TestPacket::new(9, 1500).ecn(Ecn::Ect0), &mut d);
        q.dequeue(ms(5), &mut d);
        assert_eq!(q.dequeue(ms(5), &mut d).unwrap().ecn, Ecn::Ect0);
    }

    #[test]
    fn wrr_gives_the_classic_queue_ten_percent() {
        let mut q = dq_limited(
            DualPi2Params {
                step_threshold_ns: 1_000_000_000,
                ..DualPi2Params::default()
            },
            QueueLimit::Packets(100_000),
        );
        let mut d = Drops::default();
        for i in 0..5000u64 {
            q.enqueue(Time::ZERO, TestPacket::new(i, 1500).ecn(Ecn::Ect1), &mut d);
            q.enqueue(Time::ZERO, TestPacket::new(100_000 + i, 1500), &mut d);
        }
        // The credit starts at MTU·(10 − 90): L goes first.
        assert_eq!(q.dequeue(Time::ZERO, &mut d).unwrap().ecn, Ecn::Ect1);
        let classic = (0..2000)
            .filter(|_| q.dequeue(Time::ZERO, &mut d).unwrap().ecn == Ecn::NotEct)
            .count();
        assert!((190..=210).contains(&classic), "{classic}");
    }

    #[test]
    fn no_aqm_below_two_mtu() {
        let mut q = dq(DualPi2Params {
            tupdate_ns: 1_000_000_000_000,
            ..DualPi2Params::default()
        });
        let mut d = Drops::default();
        q.prob = MAX_PROB;
        for i in 0..2 {
            q.enqueue(Time::ZERO, TestPacket::new(i, 1500), &mut d);
        }
        // After removing the head 1500 bytes remain < 2 MTU: delivered untouched despite p′ = 1.
        assert!(q.dequeue(Time::ZERO, &mut d).is_some());
        assert!(q.dequeue(Time::ZERO, &mut d).is_some());
        assert_eq!(d.aqm_drops(), 0);
    }
}
