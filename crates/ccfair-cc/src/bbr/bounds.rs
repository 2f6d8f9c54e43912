//! BBRv2/v3's loss and ECN model: the congestion signals of each round, the short-term lower bounds
//! (`bw_lo`, `inflight_lo`), the long-term upper bound (`inflight_hi`, and v2's `bw_hi`), and their reaction
//! to each lost packet. Sources: `bbr_update_congestion_signals`, `bbr_update_latest_delivery_signals`,
//! `bbr_advance_latest_delivery_signals`, `bbr_adapt_lower_bounds`, `bbr_adapt_upper_bounds`,
//! `bbr_is_inflight_too_high`, `bbr_inflight_hi_from_lost_skb`, `bbr_handle_inflight_too_high`,
//! `bbr_probe_inflight_hi_upward`, `bbr_update_ecn_alpha`, `bbr_skb_marked_lost` (v3 `tcp_bbr.c`, and the
//! `bbr2_*` functions of v2alpha `tcp_bbr2.c`).
//!
//! **In a nutshell.**
//! - A "loss round" starts when a packet sent after the previous one's start is ACKed; per loss round BBR
//!   keeps the max delivery rate (`bw_latest`) and volume (`inflight_latest`) and whether it saw loss or ECN.
//! - Outside a bandwidth probe, a round with loss cuts `bw_lo` and `inflight_lo` to 0.7 of their value but
//!   not below what the round actually delivered; ECN cuts `inflight_lo` by α/3. A probe resets them.
//! - During a probe, a sample (or a single lost packet) whose loss since send exceeds 2 % of what was in flight
//!   when it was sent sets `inflight_hi` to that in-flight level (for a lost packet: solved for the exact point
//!   where the loss rate crossed 2 %), at least 0.7 × the target inflight, and ends the probe. A sample
//!   without excess loss that shows more was safely in flight raises `inflight_hi`; in PROBE_UP it also grows
//!   by an exponentially increasing slope while cwnd-limited at `inflight_hi`.
//! - ECN (only with ECN allowed, negotiated and min_rtt ≤ 5 ms): α is an EWMA (gain 1/16) of the per-round CE
//!   fraction; a CE fraction above 50 % of a probe's samples counts like excess loss.
//!
//! Constants (β, the 2 % loss threshold, the 15 % headroom, the ECN gains) are defined and explained in
//! [`super::family`]. Deviations: none beyond those listed there.

use super::Mode;
use super::family::{
    AckPhase, BETA, BbrFamily, ECN_ALPHA_GAIN, ECN_FACTOR, ECN_MAX_RTT_US, ECN_THRESH, FULL_ECN_CNT,
    INFLIGHT_HEADROOM, LOSS_THRESH, Phase, UNSET,
};
use ccfair_core::seq::before;

use super::shared::{BBR_SCALE, BBR_UNIT, CWND_MIN_TARGET};
use crate::{LostSkb, RateSample, TcpSock};

impl BbrFamily {
    /// `bbr_is_probing_bandwidth`: STARTUP, REFILL and UP push inflight up; the lower bounds do not apply.
    pub(super) fn is_probing_bandwidth(&self) -> bool {
        self.mode == Mode::Startup
            || (self.mode == Mode::ProbeBw && matches!(self.cycle_idx, Phase::Refill | Phase::Up))
    }

    /// `bbr_take_max_bw_sample`: into the current cycle's slot.
    fn take_max_bw_sample(&mut self, bw: u32) {
        self.max_bw[1] = self.max_bw[1].max(bw);
    }

    /// `bbr_advance_max_bw_filter`: once per PROBE_BW cycle the current slot becomes the previous one (unless
    /// it has no samples): the filter spans 1–2 cycles.
    pub(super) fn advance_max_bw_filter(&mut self) {
        if self.max_bw[1] == 0 {
            return;
        }
        self.max_bw[0] = self.max_bw[1];
        self.max_bw[1] = 0;
    }

    /// `bbr_reset_congestion_signals`.
    pub(super) fn reset_congestion_signals(&mut self) {
        self.loss_in_round = false;
        self.ecn_in_round = false;
        self.loss_in_cycle = false;
        self.ecn_in_cycle = false;
        self.bw_latest = 0;
        self.inflight_latest = 0;
    }

    /// `bbr_reset_lower_bounds`.
    pub(super) fn reset_lower_bounds(&mut self) {
        self.bw_lo = UNSET;
        self.inflight_lo = UNSET;
    }

    /// `bbr_ecn_cut`: 1 − α/3, in 1/256.
    fn ecn_cut(&self) -> u32 {
        BBR_UNIT - ((self.ecn_alpha * ECN_FACTOR) >> BBR_SCALE)
    }

    /// `bbr_inflight_with_headroom`: inflight_hi less 15 % (at least 1 packet), at least 4; unset stays unset.
    pub(super) fn inflight_with_headroom(&self) -> u32 {
        if self.inflight_hi == UNSET {
            return UNSET;
        }
        let headroom = (((self.inflight_hi as u64 * INFLIGHT_HEADROOM as u64) >> BBR_SCALE) as u32).max(1);
        (self.inflight_hi as i32)
            .wrapping_sub(headroom as i32)
            .max(CWND_MIN_TARGET as i32) as u32
    }

    /// `bbr_update_ecn_alpha`: at a round start, fold the round's CE fraction into α.
    pub(super) fn update_ecn_alpha(&mut self, tp: &TcpSock) {
        let can_use = self.can_use_ecn(tp);
        if self.v3() {
            if !self.ecn_eligible && can_use && ECN_FACTOR != 0 && self.min_rtt_us <= ECN_MAX_RTT_US {
                self.ecn_eligible = true;
            }
            // v3 also updates α for PLB, which is off by default.
            if !self.ecn_eligible {
                return;
            }
        }
        let delivered = tp.delivered.wrapping_sub(self.alpha_last_delivered) as i32;
        let delivered_ce = tp.delivered_ce.wrapping_sub(self.alpha_last_delivered_ce) as i32;
        if delivered <= 0 || delivered_ce < 0 {
            return;
        }
        if !self.v3() && !self.ecn_eligible && can_use && self.min_rtt_us <= ECN_MAX_RTT_US {
            self.ecn_eligible = true;
        }
        let ce_ratio = ((delivered_ce as u64) << BBR_SCALE) / delivered as u64;
        let gain = ECN_ALPHA_GAIN as u64;
        let mut alpha = ((BBR_UNIT as u64 - gain) * self.ecn_alpha as u64) >> BBR_SCALE;
        alpha += (gain * ce_ratio) >> BBR_SCALE;
        self.ecn_alpha = alpha.min(BBR_UNIT as u64) as u32;
        self.alpha_last_delivered = tp.delivered;
        self.alpha_last_delivered_ce = tp.delivered_ce;
        self.check_ecn_too_high_in_startup(tp, ce_ratio.min(u32::MAX as u64) as u32);
    }

    /// `bbr_check_ecn_too_high_in_startup`: two consecutive rounds with CE ≥ 50 % end STARTUP.
    fn check_ecn_too_high_in_startup(&mut self, tp: &TcpSock, ce_ratio: u32) {
        if self.full.reached || !self.ecn_eligible {
            return;
        }
        if ce_ratio >= ECN_THRESH {
            // A 2-bit counter in the kernel.
            self.startup_ecn_rounds = (self.startup_ecn_rounds + 1) & 0x3;
        } else {
            self.startup_ecn_rounds = 0;
        }
        if self.startup_ecn_rounds >= FULL_ECN_CNT {
            self.handle_queue_too_high_in_startup(tp);
        }
    }

    /// `bbr_update_latest_delivery_signals` (v3): track this loss round's delivery rate and volume, and
    /// detect the start of a new loss round.
    pub(super) fn update_latest_delivery_signals(&mut self, tp: &TcpSock, rs: &RateSample, sample_bw: u32) {
        self.loss_round_start = false;
        if rs.interval_us <= 0 || rs.acked_sacked == 0 {
            return;
        }
        self.bw_latest = self.bw_latest.max(sample_bw);
        self.inflight_latest = self.inflight_latest.max(rs.delivered.max(0) as u32);
        if !before(rs.prior_delivered, self.loss_round_delivered) {
            self.loss_round_delivered = tp.delivered;
            self.loss_round_start = true;
        }
    }

    /// `bbr_advance_latest_delivery_signals` (v3): at a loss-round start the filters restart from this sample.
    pub(super) fn advance_latest_delivery_signals(&mut self, rs: &RateSample, sample_bw: u32) {
        if self.loss_round_start {
            self.bw_latest = sample_bw;
            self.inflight_latest = rs.delivered.max(0) as u32;
        }
    }

    /// `bbr_update_congestion_signals` / `bbr2_update_congestion_signals`: the max-bandwidth filter, loss in
    /// the round, and once per loss round the lower-bound adaptation.
    pub(super) fn update_congestion_signals(&mut self, tp: &TcpSock, rs: &RateSample, sample_bw: u32) {
        if !self.v3() {
            self.loss_round_start = false;
        }
        if rs.interval_us <= 0 || rs.acked_sacked == 0 {
            return;
        }
        if !rs.is_app_limited || sample_bw >= self.max_bw() {
            self.take_max_bw_sample(sample_bw);
        }
        self.loss_in_round |= rs.losses > 0;
        if self.v3() {
            if !self.loss_round_start {
                return;
            }
            self.adapt_lower_bounds(tp);
            self.loss_in_round = false;
            self.ecn_in_round = false;
        } else {
            self.bw_latest = self.bw_latest.max(sample_bw);
            self.inflight_latest = self.inflight_latest.max(rs.delivered.max(0) as u32);
            if before(rs.prior_delivered, self.loss_round_delivered) {
                return;
            }
            self.loss_round_delivered = tp.delivered;
            self.loss_round_start = true;
            self.adapt_lower_bounds(tp);
            self.loss_in_round = false;
            self.ecn_in_round = false;
            self.bw_latest = sample_bw;
            self.inflight_latest = rs.delivered.max(0) as u32;
        }
    }

    /// `bbr_init_lower_bounds`: unset bounds start from the max filter and cwnd.
    fn init_lower_bounds(&mut self, tp: &TcpSock, init_bw: bool) {
        if init_bw && self.bw_lo == UNSET {
            self.bw_lo = self.max_bw();
        }
        if self.inflight_lo == UNSET {
            self.inflight_lo = tp.snd_cwnd;
        }
    }

    /// `bbr_adapt_lower_bounds`: once per loss round, outside probes: ECN cuts inflight_lo by α/3 (v2 also
    /// bw_lo), loss cuts both to 0.7 but not below the round's delivery.
    fn adapt_lower_bounds(&mut self, tp: &TcpSock) {
        if self.is_probing_bandwidth() {
            return;
        }
        let mut ecn_inflight_lo = UNSET;
        let mut ecn_bw_lo = UNSET;
        if self.ecn_in_round && ECN_FACTOR != 0 && (self.v3() || self.ecn_eligible) {
            let cut = self.ecn_cut() as u64;
            // v2 also cuts bw_lo on ECN (`bbr_ecn_bw_lo`, on by default).
            self.init_lower_bounds(tp, !self.v3());
            ecn_inflight_lo = ((self.inflight_lo as u64 * cut) >> BBR_SCALE) as u32;
            if !self.v3() {
                ecn_bw_lo = ((self.bw_lo as u64 * cut) >> BBR_SCALE) as u32;
            }
        }
        if self.loss_in_round {
            self.init_lower_bounds(tp, true);
            let loss_cut = (BBR_UNIT - BETA) as u64;
            self.bw_lo = self
                .bw_latest
                .max(((self.bw_lo as u64 * loss_cut) >> BBR_SCALE) as u32);
            self.inflight_lo = self
                .inflight_latest
                .max(((self.inflight_lo as u64 * loss_cut) >> BBR_SCALE) as u32);
        }
        self.inflight_lo = self.inflight_lo.min(ecn_inflight_lo);
        if self.v3() {
            self.bw_lo = self.bw_lo.max(1);
        } else {
            self.bw_lo = self.bw_lo.min(ecn_bw_lo);
        }
    }

    /// `bbr_is_inflight_too_high`: more than 2 % of what was in flight at send lost since, or (ECN-eligible)
    /// more than half the delivered packets CE-marked (v2: at least half).
    pub(super) fn is_inflight_too_high(
        &self,
        lost: u32,
        tx_in_flight: u32,
        delivered: i32,
        delivered_ce: i32,
    ) -> bool {
        if lost > 0 && tx_in_flight > 0 {
            let loss_thresh = ((tx_in_flight as u64 * LOSS_THRESH as u64) >> BBR_SCALE) as u32;
            if lost > loss_thresh {
                return true;
            }
        }
        if delivered_ce > 0 && delivered > 0 && self.ecn_eligible && ECN_THRESH != 0 {
            let ecn_thresh = ((delivered as u64 * ECN_THRESH as u64) >> BBR_SCALE) as i64;
            let too_high = if self.v3() {
                delivered_ce as i64 > ecn_thresh
            } else {
                delivered_ce as i64 >= ecn_thresh
            };
            if too_high {
                return true;
            }
        }
        false
    }

    /// `bbr_inflight_hi_from_lost_skb`: the in-flight level at which the loss rate crossed 2 %, solving
    /// (lost_prev + x) / (inflight_prev + x) = 2 % for the prefix x of the lost packet, rounded up.
    fn inflight_hi_from_lost_skb(&self, tx_in_flight: u32, lost: u32, pcount: u32) -> u32 {
        let inflight_prev = tx_in_flight as i64 - pcount as i64;
        let lost_prev = lost as i64 - pcount as i64;
        if inflight_prev < 0 || lost_prev < 0 {
            return UNSET;
        }
        let loss_budget = ((inflight_prev as u64 * LOSS_THRESH as u64) + BBR_UNIT as u64 - 1) >> BBR_SCALE;
        let lost_prefix = if lost_prev as u64 >= loss_budget {
            0
        } else {
            ((loss_budget - lost_prev as u64) << BBR_SCALE) / (BBR_UNIT - LOSS_THRESH) as u64
        };
        (inflight_prev as u64 + lost_prefix).min(u32::MAX as u64) as u32
    }

    /// `bbr_handle_inflight_too_high`: once per probe, set inflight_hi from where the loss/ECN rate went too
    /// high (at least 0.7 × target inflight), and leave PROBE_UP.
    pub(super) fn handle_inflight_too_high(&mut self, tp: &TcpSock, tx_in_flight: u32, is_app_limited: bool) {
        self.prev_probe_too_high = true;
        self.bw_probe_samples = false;
        // An app-limited flow did not robustly probe the volume it could have had in flight.
        if !is_app_limited {
            let floor = ((self.target_inflight(tp) as u64 * (BBR_UNIT - BETA) as u64) >> BBR_SCALE) as u32;
            self.inflight_hi = tx_in_flight.max(floor);
            if !self.v3() {
                self.handle_inflight_too_high_via_ecn();
            }
        }
        if self.mode == Mode::ProbeBw && self.cycle_idx == Phase::Up {
            self.start_bw_probe_down(tp);
        }
    }

    /// `bbr2_handle_inflight_too_high_via_ecn` (v2): with ECN and no good probe sample, cut bw_hi by α/3.
    fn handle_inflight_too_high_via_ecn(&mut self) {
        if self.ecn_eligible && !self.got_ok_bw_probe_sample {
            let cut = self.ecn_cut() as u64;
            if self.bw_hi == UNSET {
                self.bw_hi = self.max_bw();
            }
            self.bw_hi = ((self.bw_hi as u64 * cut) >> BBR_SCALE) as u32;
        }
    }

    /// `bbr_raise_inflight_hi_slope`: each PROBE_UP round doubles the growth of inflight_hi.
    pub(super) fn raise_inflight_hi_slope(&mut self, tp: &TcpSock) {
        let growth_this_round = 1u64 << self.bw_probe_up_rounds;
        self.bw_probe_up_rounds = (self.bw_probe_up_rounds + 1).min(30);
        let cnt = ((tp.snd_cwnd as u64 / growth_this_round) as u32).max(1);
        self.bw_probe_up_cnt = cnt;
    }

    /// `bbr_probe_inflight_hi_upward`: while cwnd-limited at inflight_hi, +1 per `bw_probe_up_cnt` ACKed.
    fn probe_inflight_hi_upward(&mut self, tp: &TcpSock, rs: &RateSample) {
        if !tp.is_cwnd_limited || tp.snd_cwnd < self.inflight_hi {
            if !self.v3() {
                // v2 does not accumulate unused credit.
                self.bw_probe_up_acks = 0;
            }
            return;
        }
        self.bw_probe_up_acks = self.bw_probe_up_acks.wrapping_add(rs.acked_sacked);
        if self.bw_probe_up_acks >= self.bw_probe_up_cnt {
            let delta = self.bw_probe_up_acks / self.bw_probe_up_cnt;
            self.bw_probe_up_acks -= delta * self.bw_probe_up_cnt;
            self.inflight_hi = self.inflight_hi.saturating_add(delta);
            if self.v3() {
                self.try_fast_path = false;
            }
        }
        if self.round_start {
            self.raise_inflight_hi_slope(tp);
        }
    }

    /// `bbr_adapt_upper_bounds`: follow the probe's feedback phases; lower inflight_hi on excess loss/ECN,
    /// raise it when more proved safe. Returns true when it decided a PROBE_BW transition.
    pub(super) fn adapt_upper_bounds(&mut self, tp: &TcpSock, rs: &RateSample, sample_bw: u32) -> bool {
        if self.ack_phase == AckPhase::ProbeStarting && self.round_start {
            self.ack_phase = AckPhase::ProbeFeedback;
        }
        if self.ack_phase == AckPhase::ProbeStopping && self.round_start {
            // The samples of the probe are over: a good moment to forget the previous cycle's bandwidth.
            self.bw_probe_samples = false;
            self.ack_phase = AckPhase::Init;
            if self.mode == Mode::ProbeBw && !rs.is_app_limited {
                self.advance_max_bw_filter();
            }
            // The probe was stopped at inflight_hi for safety and saw no excess loss: probe again.
            if self.mode == Mode::ProbeBw && self.stopped_risky_probe && !self.prev_probe_too_high {
                self.start_bw_probe_refill(tp, 0);
                return true;
            }
        }
        if self.is_inflight_too_high(rs.lost, rs.tx_in_flight, rs.delivered, rs.delivered_ce) {
            if self.bw_probe_samples {
                self.handle_inflight_too_high(tp, rs.tx_in_flight, rs.is_app_limited);
            }
        } else {
            if !self.v3() {
                self.got_ok_bw_probe_sample |= self.bw_probe_samples;
                if self.inflight_hi == UNSET && self.bw_hi == UNSET {
                    return false;
                }
            } else if self.inflight_hi == UNSET {
                return false;
            }
            // Random loss must not pin inflight_hi: raise it whenever a higher level proved safe.
            if rs.tx_in_flight > self.inflight_hi {
                self.inflight_hi = rs.tx_in_flight;
            }
            if !self.v3() && sample_bw > self.bw_hi {
                self.bw_hi = sample_bw;
            }
            if self.mode == Mode::ProbeBw && self.cycle_idx == Phase::Up {
                self.probe_inflight_hi_upward(tp, rs);
            }
        }
        false
    }

    /// `bbr_note_loss` (v3; inline in v2's `bbr2_skb_marked_lost`): the current round is a loss round.
    pub(super) fn note_loss(&mut self, tp: &TcpSock) {
        if !self.loss_in_round {
            // Capture the data delivered over the full round trip of loss.
            self.loss_round_delivered = tp.delivered;
        }
        self.loss_in_round = true;
        self.loss_in_cycle = true;
    }

    /// `bbr_skb_marked_lost`: while probing, a lost packet whose flight saw more than 2 % loss sets
    /// inflight_hi at the point where the loss rate crossed the threshold.
    pub(super) fn skb_marked_lost_impl(&mut self, tp: &mut TcpSock, skb: &LostSkb) {
        self.note_loss(tp);
        if !self.bw_probe_samples {
            return;
        }
        let lost = tp.lost.wrapping_sub(skb.tx_lost);
        // v2 also carries the CE count, but with delivered = 0 the ECN test cannot fire.
        if self.is_inflight_too_high(lost, skb.tx_in_flight, 0, 0) {
            let inflight_hi = self.inflight_hi_from_lost_skb(skb.tx_in_flight, lost, skb.pcount);
            self.handle_inflight_too_high(tp, inflight_hi, skb.is_app_limited);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::TcpSock;
    use crate::bbr::v3;
    use ccfair_core::Rng;
    use ccfair_core::rng::StreamId;

    fn bbr3() -> BbrFamily {
        BbrFamily::new(&v3::V3, false, Rng::stream(1, StreamId::Cc(0)))
    }

    #[test]
    fn inflight_hi_from_a_lost_packet_solves_for_the_two_percent_crossing() {
        let b = bbr3();
        // 100 in flight before the packet, 1 lost before it: budget ⌈100·5/256⌉ = 2, so 1 more packet's worth
        // of loss is allowed: prefix = (2 − 1)·256/251 = 1.
        assert_eq!(b.inflight_hi_from_lost_skb(101, 2, 1), 101);
        // Already over budget before this packet: inflight_hi is where it was sent.
        assert_eq!(b.inflight_hi_from_lost_skb(101, 10, 1), 100);
        // Inconsistent snapshots are ignored (the kernel warns and returns ~0U).
        assert_eq!(b.inflight_hi_from_lost_skb(0, 1, 1), UNSET);
    }

    #[test]
    fn headroom_is_fifteen_percent_and_at_least_one_packet() {
        let mut b = bbr3();
        b.inflight_hi = 100;
        // 100·38/256 = 14.
        assert_eq!(b.inflight_with_headroom(), 86);
        b.inflight_hi = 5;
        assert_eq!(b.inflight_with_headroom(), 4);
        b.inflight_hi = UNSET;
        assert_eq!(b.inflight_with_headroom(), UNSET);
    }

    #[test]
    fn too_high_means_more_than_two_percent_of_tx_in_flight() {
        let b = bbr3();
        // 2 % of 100 is 100·5/256 = 1 packet: 1 lost is fine, 2 is too many.
        assert!(!b.is_inflight_too_high(1, 100, 10, 0));
        assert!(b.is_inflight_too_high(2, 100, 10, 0));
        // ECN only counts when eligible.
        assert!(!b.is_inflight_too_high(0, 100, 10, 9));
    }

    #[test]
    fn ecn_alpha_is_an_ewma_of_the_ce_ratio_with_gain_one_sixteenth() {
        let mut b = BbrFamily::new(&v3::V3, true, Rng::stream(1, StreamId::Cc(0)));
        let mut tp = TcpSock::new(1448, 10);
        tp.ecn_ok = true;
        b.min_rtt_us = 1_000;
        assert_eq!(b.ecn_alpha, 256, "starts at 1.0");
        // Rounds without marks: α ← 15/16 α (in 1/256, truncated).
        let mut expect = 256u32;
        for _ in 0..5 {
            tp.delivered += 100;
            b.update_ecn_alpha(&tp);
            expect = expect * 240 / 256;
            assert_eq!(b.ecn_alpha, expect);
        }
        assert!(b.ecn_eligible, "ECN allowed, negotiated, min_rtt ≤ 5 ms");
        // A round with half the packets marked: α ← 15/16 α + 1/16 · 128/256.
        tp.delivered += 100;
        tp.delivered_ce += 50;
        b.update_ecn_alpha(&tp);
        assert_eq!(b.ecn_alpha, expect * 240 / 256 + 16 * 128 / 256);
        // Not eligible above 5 ms of min_rtt: α is not tracked.
        let mut far = BbrFamily::new(&v3::V3, true, Rng::stream(1, StreamId::Cc(0)));
        far.min_rtt_us = 20_000;
        tp.delivered += 100;
        far.update_ecn_alpha(&tp);
        assert!(!far.ecn_eligible);
        assert_eq!(far.ecn_alpha, 256);
    }

    #[test]
    fn ce_above_half_of_the_delivered_packets_is_too_high_for_an_eligible_flow() {
        let mut b = bbr3();
        b.ecn_eligible = true;
        // v3: strictly more than 50 %; v2 (below): at least 50 %.
        assert!(!b.is_inflight_too_high(0, 100, 10, 5));
        assert!(b.is_inflight_too_high(0, 100, 10, 6));
        let mut v2 = BbrFamily::new(&crate::bbr::v2::V2, true, Rng::stream(1, StreamId::Cc(0)));
        v2.ecn_eligible = true;
        assert!(v2.is_inflight_too_high(0, 100, 10, 5));
    }

    #[test]
    fn a_tail_loss_repaired_by_tlp_counts_while_probing_in_v3() {
        let mut b = bbr3();
        let mut tp = TcpSock::new(1448, 50);
        tp.app_limited = 0; // a connection in full flow, past the initial bubble
        b.mode = Mode::ProbeBw;
        b.cycle_idx = Phase::Up;
        b.bw_probe_samples = true;
        b.inflight_latest = 40;
        // One packet lost out of inflight_latest + 1 = 41: above 2 % (41·5/256 = 0), so the probe ends with
        // inflight_hi at least that flight.
        crate::CongestionControl::cwnd_event(&mut b, &mut tp, crate::CaEvent::TlpRecovery);
        // (Entering DOWN starts a new cycle, which clears the round's loss signals again.)
        assert!(b.prev_probe_too_high);
        assert_eq!(b.cycle_idx, Phase::Down);
        assert!(b.inflight_hi >= 41 && b.inflight_hi != UNSET);
        // v2alpha has no such event.
        let mut v2 = BbrFamily::new(&crate::bbr::v2::V2, false, Rng::stream(1, StreamId::Cc(0)));
        v2.bw_probe_samples = true;
        crate::CongestionControl::cwnd_event(&mut v2, &mut tp, crate::CaEvent::TlpRecovery);
        assert!(!v2.loss_in_round && v2.inflight_hi == UNSET);
    }
}
