//! VDQ-CSAQM, the Virtual Dual Queue Core-Stateless AQM (Nádas, Gombos, Fejes, Laki, "A Congestion Control
//! Independent L4S Scheduler", ANRW 2020): the Per-Packet Value framework of [`crate::ppv`] applied to an L4S
//! queue and a classic queue coupled like a dual queue.
//!
//! In a nutshell: the edge marks every packet with a packet value (PV) from its flow's throughput-value function,
//! with the same marker as `ppv` ([`crate::ppv::PpvMarker`]), so the sharing policy lives at the edge and the
//! bottleneck keeps no per-flow state. Packets are classified by ECN as in a DualQ (RFC 9332 §2.3): ECT(1) and
//! CE to the L queue, Not-ECT and ECT(0) to the C queue. Each queue has a delay target, and a congestion
//! threshold value (CTV) is derived for it from the PVs it holds: `ctv(S, B)` is the smallest value v such that
//! the bytes of S with PV ≥ v fit in B bytes, i.e. the CTV a PPV buffer of B bytes would reach holding S (the
//! lowest-valued bytes beyond B are the ones it would drop). Two virtual queues are evaluated:
//!
//! - the classic virtual queue holds **every** queued packet (both physical queues) against the classic budget
//!   B_C = classic target × link rate: CTV_C = ctv(L ∪ C, B_C). It sees all traffic, so it is one PPV resource
//!   shared by both classes: every flow keeps the rate r with V(r) = CTV_C whichever queue it uses;
//! - the L4S virtual queue holds the L queue against B_L = L4S target × link rate, and is coupled to the
//!   classic one: CTV_L = max(ctv(L, B_L), CTV_C). The first term keeps the L queue near its 1 ms; the second
//!   is the coupling: an L4S flow never sees less congestion than a classic flow, so it cannot take more than
//!   the share the TVFs give it, whatever its congestion control.
//!
//! A packet whose PV is below its queue's CTV is CE-marked if ECN-capable, dropped otherwise. The test is made
//! on arrival (CSAQM's rule: an arrival below the CTV is not admitted; the arrival counts in the queue it is
//! judged against) and again at dequeue (with the packet still counted), which clears low-valued packets that
//! were admitted before the CTV rose; a packet marked on arrival stays CE and counts as one mark. The scheduler is a time-shifted FIFO (RFC 9332 §4.2.2 / its Appendix A
//! names it as an option): the L head is served unless the C head has waited more than (classic target − L4S
//! target) longer, so each class sees its own delay and neither can starve the other.
//!
//! Constants: L4S target 1 ms (RFC 9332's L4S marking threshold, the 1 ms step DualPI2 uses); classic target
//! 20 ms (the delay target of the CSAQM evaluations this scheduler extends; PIE's is 15 ms); no budget below
//! 2 MTU (DualPI2's "no AQM below 2 packets" rule: at 10 Mbit/s 1 ms is less than one full packet). The marker's
//! parameters and defaults are PPV's (4 regions per octave over 12 octaves, 100 ms buckets, optional weights).
//!
//! Deviations, named: the paper's text was not available to us; the design above is reconstructed from its
//! abstract (VDQ-CSAQM extends the CSAQM concept to L4S while keeping its in-network control of resource
//! sharing), the PPV/CSAQM definitions and RFC 9332's coupling structure. In particular, the CTVs here come from
//! the PVs currently queued (the PPV buffer's CTV) rather than from a PIE-like controller over the recent PV
//! distribution (CSAQM's ECDF), and they are recomputed per packet instead of per update interval. When the
//! shared buffer limit is reached the arriving packet is dropped (no lowest-value eviction as in `ppv`: the CTVs
//! keep both queues far below any sensible limit).

use std::collections::VecDeque;

use ccfair_core::{DropReason, Ecn, FieldError, PacketMeta, ParamDoc, Time};
use serde::{Deserialize, Serialize};

use crate::config::check_positive_ns;
use crate::ppv::PpvParams;
use crate::queue::{Backlog, QueueLimit, preallocated_packets};
use crate::{Qdisc, QdiscSink, QdiscStats, count_dequeue, drop_packet, mark_ce, qdisc_accessors};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct VdqCsaqmParams {
    /// The edge marker's TVF resolution, as `ppv`.
    pub regions_per_octave: u32,
    /// The edge marker's TVF range, as `ppv`.
    pub octaves: u32,
    /// The edge marker's bucket depth, as `ppv`.
    pub bucket_ns: u64,
    /// TVF weight per flow group, as `ppv`.
    pub weights: Vec<f64>,
    /// Delay target of the L4S queue.
    pub l4s_target_ns: u64,
    /// Delay target of the classic virtual queue (all queued packets).
    pub classic_target_ns: u64,
}

impl Default for VdqCsaqmParams {
    fn default() -> Self {
        let m = PpvParams::default();
        VdqCsaqmParams {
            regions_per_octave: m.regions_per_octave,
            octaves: m.octaves,
            bucket_ns: m.bucket_ns,
            weights: m.weights,
            l4s_target_ns: 1_000_000,
            classic_target_ns: 20_000_000,
        }
    }
}

const OWN_PARAMS: &[ParamDoc] = &[
    ParamDoc {
        name: "l4s_target_ns",
        allowed: "> 0 ns, at most classic_target_ns (e.g. \"1ms\")",
        doc: "delay target of the L4S queue: its CTV keeps this much of its highest values (1 ms)",
    },
    ParamDoc {
        name: "classic_target_ns",
        allowed: "> 0 ns (e.g. \"20ms\")",
        doc: "delay target of the classic virtual queue of every queued packet (20 ms)",
    },
];

/// The parameters: the edge marker's (PPV's) and the two delay targets.
pub fn param_docs() -> Vec<ParamDoc> {
    [crate::ppv::PARAMS, OWN_PARAMS].concat()
}

impl VdqCsaqmParams {
    /// The edge marker's parameters.
    pub fn marker(&self) -> PpvParams {
        PpvParams {
            regions_per_octave: self.regions_per_octave,
            octaves: self.octaves,
            bucket_ns: self.bucket_ns,
            weights: self.weights.clone(),
        }
    }

    pub fn validate(&self) -> Result<(), FieldError> {
        self.marker().validate()?;
        check_positive_ns("l4s_target_ns", self.l4s_target_ns)?;
        check_positive_ns("classic_target_ns", self.classic_target_ns)?;
        if self.l4s_target_ns > self.classic_target_ns {
            return FieldError::err(
                "l4s_target_ns",
                format!(
                    "must be at most classic_target_ns ({} ns), got {} ns",
                    self.classic_target_ns, self.l4s_target_ns
                ),
            );
        }
        Ok(())
    }
}

/// Bytes queued per packet value (index = PV; values above the marker's highest share its slot).
struct ValueHistogram(Vec<u64>);

impl ValueHistogram {
    fn new(max_value: u32) -> Self {
        ValueHistogram(vec![0; max_value as usize + 1])
    }

    fn slot(&self, value: u32) -> usize {
        (value as usize).min(self.0.len() - 1)
    }

    fn add(&mut self, value: u32, bytes: u32) {
        let s = self.slot(value);
        self.0[s] += bytes as u64;
    }

    fn remove(&mut self, value: u32, bytes: u32) {
        let s = self.slot(value);
        self.0[s] -= bytes as u64;
    }
}

/// `ctv(S, B)`: the smallest value v such that the bytes of the histograms' packets with PV ≥ v fit in
/// `budget_bytes`; 0 when everything fits. Packets below it are the lowest-valued bytes beyond the budget.
fn ctv(hists: &[&ValueHistogram], budget_bytes: u64) -> u32 {
    let mut above = 0u64;
    for v in (0..hists[0].0.len()).rev() {
        above += hists.iter().map(|h| h.0[v]).sum::<u64>();
        if above > budget_bytes {
            return v as u32 + 1;
        }
    }
    0
}

/// ECT(1) and CE select the L queue (RFC 9332 §2.3; DualPI2's default mask).
fn is_l4s(ecn: Ecn) -> bool {
    matches!(ecn, Ecn::Ect1 | Ecn::Ce)
}

/// Counters of the two queues.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct VdqStats {
    pub packets_in_l: u64,
    pub packets_in_c: u64,
    /// Packets whose PV was below their queue's CTV (marked or dropped), per queue.
    pub l_below_ctv: u64,
    pub c_below_ctv: u64,
}

pub struct VdqCsaqm<P> {
    l_queue: VecDeque<P>,
    c_queue: VecDeque<P>,
    l_values: ValueHistogram,
    c_values: ValueHistogram,
    backlog: Backlog,
    l_budget_bytes: u64,
    c_budget_bytes: u64,
    /// The time shift of the scheduler: classic target − L4S target.
    shift_ns: u64,
    pub vdq_stats: VdqStats,
    stats: QdiscStats,
}

impl<P> VdqCsaqm<P> {
    pub fn new(params: &VdqCsaqmParams, limit: QueueLimit, mtu_bytes: u32, rate_bps: u64) -> Self {
        let cap = preallocated_packets(limit, mtu_bytes);
        let budget = |ns: u64| ((rate_bps as u128 * ns as u128 / 8_000_000_000) as u64).max(2 * mtu_bytes as u64);
        let max_value = params.marker().max_value();
        VdqCsaqm {
            l_queue: VecDeque::with_capacity(cap),
            c_queue: VecDeque::with_capacity(cap),
            l_values: ValueHistogram::new(max_value),
            c_values: ValueHistogram::new(max_value),
            backlog: Backlog::new(limit),
            l_budget_bytes: budget(params.l4s_target_ns),
            c_budget_bytes: budget(params.classic_target_ns),
            shift_ns: params.classic_target_ns - params.l4s_target_ns,
            vdq_stats: VdqStats::default(),
            stats: QdiscStats::default(),
        }
    }

    /// CTV_C: the classic virtual queue, every queued packet against the classic budget.
    pub fn classic_ctv(&self) -> u32 {
        ctv(&[&self.l_values, &self.c_values], self.c_budget_bytes)
    }

    /// CTV_L: the L queue against its own budget, coupled to at least CTV_C.
    pub fn l4s_ctv(&self) -> u32 {
        ctv(&[&self.l_values], self.l_budget_bytes).max(self.classic_ctv())
    }

    /// Packets queued in the L and C queues.
    pub fn queue_lens(&self) -> (usize, usize) {
        (self.l_queue.len(), self.c_queue.len())
    }
}

impl<P: PacketMeta> VdqCsaqm<P> {
    fn values(&mut self, in_l: bool) -> &mut ValueHistogram {
        if in_l { &mut self.l_values } else { &mut self.c_values }
    }

    /// A packet (counted in its queue's histogram) whose PV is below its queue's CTV is CE-marked if it is
    /// ECN-capable; returns true if it must be dropped instead.
    fn below_ctv(&mut self, now: Time, in_l: bool, pkt: &mut P, sink: &mut dyn QdiscSink<P>) -> bool {
        let threshold = if in_l { self.l4s_ctv() } else { self.classic_ctv() };
        if pkt.packet_value() >= threshold {
            return false;
        }
        if in_l {
            self.vdq_stats.l_below_ctv += 1;
        } else {
            self.vdq_stats.c_below_ctv += 1;
        }
        !mark_ce(&mut self.stats, sink, now, pkt)
    }

    /// Time-shifted FIFO: the L head unless the C head arrived more than the shift before it.
    fn serve_l(&self) -> Option<bool> {
        match (self.l_queue.front(), self.c_queue.front()) {
            (None, None) => None,
            (Some(_), None) => Some(true),
            (None, Some(_)) => Some(false),
            (Some(l), Some(c)) => Some(l.enqueue_ts().ns() <= c.enqueue_ts().ns() + self.shift_ns),
        }
    }
}

impl<P: PacketMeta + Send> Qdisc<P> for VdqCsaqm<P> {
    fn enqueue(&mut self, now: Time, mut pkt: P, sink: &mut dyn QdiscSink<P>) -> bool {
        if !self.backlog.admits(pkt.wire_len()) {
            drop_packet(&mut self.stats, sink, now, pkt, DropReason::Overlimit);
            return false;
        }
        let in_l = is_l4s(pkt.ecn());
        // The arrival counts in the queue it is judged against.
        self.values(in_l).add(pkt.packet_value(), pkt.wire_len());
        if self.below_ctv(now, in_l, &mut pkt, sink) {
            self.values(in_l).remove(pkt.packet_value(), pkt.wire_len());
            drop_packet(&mut self.stats, sink, now, pkt, DropReason::Aqm);
            return false;
        }
        self.backlog.add(pkt.wire_len(), &mut self.stats);
        if in_l {
            self.vdq_stats.packets_in_l += 1;
            self.l_queue.push_back(pkt);
        } else {
            self.vdq_stats.packets_in_c += 1;
            self.c_queue.push_back(pkt);
        }
        true
    }

    fn dequeue(&mut self, now: Time, sink: &mut dyn QdiscSink<P>) -> Option<P> {
        while let Some(in_l) = self.serve_l() {
            let queue = if in_l { &mut self.l_queue } else { &mut self.c_queue };
            let mut pkt = queue.pop_front().expect("the picked queue is not empty");
            // Judged with the packet still counted: it is part of the queue the decision is about.
            let below = self.below_ctv(now, in_l, &mut pkt, sink);
            self.values(in_l).remove(pkt.packet_value(), pkt.wire_len());
            self.backlog.remove(pkt.wire_len());
            if below {
                drop_packet(&mut self.stats, sink, now, pkt, DropReason::Aqm);
                continue;
            }
            count_dequeue(&mut self.stats, &pkt);
            return Some(pkt);
        }
        None
    }

    qdisc_accessors!(backlog, VdqCsaqmParams);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_packet::{Drops, TestPacket, ms};

    const RATE_BPS: u64 = 12_000_000; // 1500 bytes per ms: budgets in whole packets

    fn vdq() -> VdqCsaqm<TestPacket> {
        VdqCsaqm::new(&VdqCsaqmParams::default(), QueueLimit::Packets(1000), 1500, RATE_BPS)
    }

    fn pkt(id: u64, ecn: Ecn, value: u32) -> TestPacket {
        TestPacket::new(id, 1500).ecn(ecn).value(value)
    }

    #[test]
    fn ecn_classifies_as_a_dual_queue() {
        let mut q = vdq();
        let mut d = Drops::default();
        for (id, ecn) in [(1, Ecn::NotEct), (2, Ecn::Ect0), (3, Ecn::Ect1), (4, Ecn::Ce)] {
            assert!(q.enqueue(Time::ZERO, pkt(id, ecn, 10), &mut d));
        }
        assert_eq!(q.queue_lens(), (2, 2));
        assert_eq!((q.vdq_stats.packets_in_l, q.vdq_stats.packets_in_c), (2, 2));
    }

    #[test]
    fn the_ctv_is_the_value_the_budget_cuts_at() {
        // Values 9, 7, 7, 5, 1500 bytes each. With 3000 bytes, 9 fits but not all of 7: CTV 8. With 4500, 9 and
        // both 7s fit but not 5: CTV 6. With 6000 everything fits: CTV 0 (nothing is below it).
        let mut h = ValueHistogram::new(50);
        for v in [9, 7, 7, 5] {
            h.add(v, 1500);
        }
        assert_eq!(ctv(&[&h], 3000), 8);
        assert_eq!(ctv(&[&h], 4500), 6);
        assert_eq!(ctv(&[&h], 5999), 6);
        assert_eq!(ctv(&[&h], 6000), 0);
        // Values above the marker's highest count in its top slot: still above everything else.
        h.add(200, 1500);
        assert_eq!(ctv(&[&h], 1500), 10);
        // Two histograms are one virtual queue.
        let mut other = ValueHistogram::new(50);
        other.add(8, 1500);
        assert_eq!(ctv(&[&h, &other], 4500), 8);
    }

    #[test]
    fn l4s_ctv_is_coupled_to_at_least_the_classic_ctv() {
        let mut q = vdq();
        let mut d = Drops::default();
        // Classic budget: 20 ms = 20 packets. 30 classic packets, values 30 down to 1.
        for i in 0..30u32 {
            q.enqueue(Time::ZERO, pkt(i as u64, Ecn::NotEct, 30 - i), &mut d);
        }
        // One L4S packet of a middle value: its own queue (1 packet) is within the 2-MTU floor.
        q.enqueue(Time::ZERO, pkt(100, Ecn::Ect1, 12), &mut d);
        assert_eq!(ctv(&[&q.l_values], q.l_budget_bytes), 0);
        // 31 packets against 20: values 30..12 are 20 packets (the L packet among them), value 11 is the 21st.
        let c = q.classic_ctv();
        assert_eq!(c, 12);
        assert_eq!(q.l4s_ctv(), c);
        // Without the classic load the L packet is under no CTV at all.
        let mut alone = vdq();
        alone.enqueue(Time::ZERO, pkt(1, Ecn::Ect1, 12), &mut d);
        assert_eq!(alone.l4s_ctv(), 0);
    }

    #[test]
    fn an_l_queue_over_its_target_marks_its_lowest_values_and_leaves_classic_alone() {
        let mut q = vdq();
        let mut d = Drops::default();
        // The L budget is 2 packets (1 ms is one packet at this rate, floored to 2 MTU). Arrivals of values
        // 6, 5, 4, 3, 2, 1: from the third on, each arrival is the lowest of a queue over budget whose two
        // highest (6 and 5) fit, so CTV_L = 5 and it is marked on arrival.
        for v in (1..=6u32).rev() {
            assert!(q.enqueue(Time::ZERO, pkt(v as u64, Ecn::Ect1, v), &mut d));
        }
        q.enqueue(Time::ZERO, pkt(10, Ecn::NotEct, 1), &mut d);
        assert_eq!(q.classic_ctv(), 0);
        assert_eq!(q.l4s_ctv(), 5);
        assert_eq!(d.1, vec![4, 3, 2, 1]);
        let mut out = vec![];
        while let Some(p) = q.dequeue(Time::ZERO, &mut d) {
            out.push((p.id, p.ecn));
        }
        // Dequeued in order; no further mark (what is left behind fits as the queue drains), nothing dropped.
        assert_eq!(out.len(), 7);
        assert_eq!(q.stats().ce_marks, 4);
        assert!(d.0.is_empty(), "the classic packet is not dropped");
    }

    #[test]
    fn classic_excess_is_dropped_lowest_values_first_down_to_the_target() {
        let mut q = vdq();
        let mut d = Drops::default();
        // Values 1..=30 in arrival order against a 20-packet budget: each arrival is the highest so far, so
        // none is below the CTV on arrival; at dequeue the queued excess is: with 30 − k packets left, values
        // 11..=30 fit and the head k + 1 ≤ 10 is below CTV 11.
        for v in 1..=30u32 {
            assert!(q.enqueue(Time::ZERO, pkt(v as u64, Ecn::NotEct, v), &mut d));
        }
        assert_eq!(q.classic_ctv(), 11);
        let mut delivered = vec![];
        while let Some(p) = q.dequeue(Time::ZERO, &mut d) {
            delivered.push(p.value);
        }
        assert_eq!(delivered, (11..=30).collect::<Vec<_>>());
        let dropped: Vec<u32> = d.0.iter().map(|(p, _)| p.value).collect();
        assert_eq!(dropped, (1..=10).collect::<Vec<_>>());
        assert!(d.0.iter().all(|(_, r)| *r == DropReason::Aqm));
        assert_eq!(q.vdq_stats.c_below_ctv, 10);
    }

    #[test]
    fn arrivals_below_the_ctv_are_dropped_on_arrival() {
        let mut q = vdq();
        let mut d = Drops::default();
        // 20 packets of value 30 fill the classic budget; arrivals of lower value are over it and dropped, a
        // higher one is admitted (the queued excess it creates is the dequeue's to clear).
        for i in 0..20 {
            assert!(q.enqueue(Time::ZERO, pkt(i, Ecn::NotEct, 30), &mut d));
        }
        assert!(!q.enqueue(Time::ZERO, pkt(100, Ecn::NotEct, 29), &mut d));
        assert!(q.enqueue(Time::ZERO, pkt(101, Ecn::NotEct, 31), &mut d));
        assert_eq!(d.0.len(), 1);
        assert_eq!(d.0[0].0.id, 100);
        assert_eq!(q.backlog_packets(), 21);
    }

    #[test]
    fn ecn_capable_packets_below_the_ctv_are_marked_not_dropped() {
        let mut q = vdq();
        let mut d = Drops::default();
        for v in 1..=30u32 {
            q.enqueue(Time::ZERO, pkt(v as u64, Ecn::Ect0, v), &mut d);
        }
        let mut n = 0;
        while q.dequeue(Time::ZERO, &mut d).is_some() {
            n += 1;
        }
        // Values 11..=30 fit the 20-packet budget; 1..=10 are over it and marked as they leave.
        assert_eq!(n, 30);
        assert!(d.0.is_empty());
        assert_eq!(d.1, (1..=10).collect::<Vec<u64>>());
        assert_eq!(q.stats().ce_marks, 10);
    }

    #[test]
    fn time_shifted_fifo_serves_l_unless_classic_waited_the_shift_longer() {
        let mut q = vdq();
        let mut d = Drops::default();
        q.enqueue(ms(0), pkt(1, Ecn::NotEct, 50).at(ms(0)), &mut d);
        q.enqueue(ms(5), pkt(2, Ecn::Ect1, 50).at(ms(5)), &mut d);
        // The classic head is 5 ms older, less than the 19 ms shift: L first.
        assert_eq!(q.dequeue(ms(6), &mut d).unwrap().id, 2);
        q.enqueue(ms(25), pkt(3, Ecn::Ect1, 50).at(ms(25)), &mut d);
        // Now the classic head is 25 ms older than the L head: classic first.
        assert_eq!(q.dequeue(ms(25), &mut d).unwrap().id, 1);
        assert_eq!(q.dequeue(ms(25), &mut d).unwrap().id, 3);
        assert!(q.dequeue(ms(25), &mut d).is_none());
    }

    #[test]
    fn budgets_follow_the_targets_and_the_rate_with_a_two_packet_floor() {
        let q: VdqCsaqm<TestPacket> =
            VdqCsaqm::new(&VdqCsaqmParams::default(), QueueLimit::Packets(100), 1500, 100_000_000);
        assert_eq!(q.l_budget_bytes, 12_500);
        assert_eq!(q.c_budget_bytes, 250_000);
        assert_eq!(vdq().l_budget_bytes, 3000); // 1 ms at 12 Mbit/s is one packet: the floor is two
        let bad = VdqCsaqmParams {
            l4s_target_ns: 30_000_000,
            ..VdqCsaqmParams::default()
        };
        assert_eq!(bad.validate().unwrap_err().field, "l4s_target_ns");
        let bad = VdqCsaqmParams {
            octaves: 0,
            ..VdqCsaqmParams::default()
        };
        assert_eq!(bad.validate().unwrap_err().field, "octaves");
    }
}
