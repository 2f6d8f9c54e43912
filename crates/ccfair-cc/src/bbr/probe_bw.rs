//! BBRv2/v3's PROBE_BW cycle: DOWN → CRUISE → REFILL → UP → DOWN … Sources: `bbr_update_cycle_phase`,
//! `bbr_check_time_to_probe_bw`, `bbr_is_reno_coexistence_probe_time`, `bbr_pick_probe_wait`,
//! `bbr_check_time_to_cruise`, `bbr_start_bw_probe_{down,cruise,refill,up}` (v3 `tcp_bbr.c`, v2alpha
//! `tcp_bbr2.c`).
//!
//! **In a nutshell.**
//! - DOWN (v2 pacing 0.75, v3 ≈ 0.91) starts each cycle: congestion signals are reset, a random wall-clock
//!   wait (2 s + U[0, 1 s)) and a random round offset (0 or 1) are drawn. It leaves for CRUISE once the data
//!   in the network is at most the BDP and below inflight_hi less 15 % headroom.
//! - CRUISE (1.0) holds until it is time to probe: the wall-clock wait passed, or as many rounds passed as a
//!   Reno flow at the target inflight would wait between losses (at most 63).
//! - REFILL (1.0, lower bounds reset) for one round fills the pipe at the estimate, so a probe's loss is not
//!   mistaken for a lower capacity; its ACKs then count as probe samples.
//! - UP (1.25; v3 cwnd gain 2.25) raises inflight until: inflight reaches an inflight_hi that the previous
//!   probe found too high (a "risky" probe stops right there), or the bandwidth plateaus (v3: 3 rounds
//!   without 25 % growth while inflight_hi is not the limit; v2: after one min_rtt with inflight ≥ 1.25 BDP),
//!   or loss/ECN were too high ([`super::bounds`]). Then DOWN again.
//! - With ECN but no loss in a cycle (v3, `ecn_reprobe_gain` 0.5), REFILL starts as soon as the marks stop,
//!   with inflight_hi growth starting at half of inflight_hi.
//!
//! Constants: the probe-wait bounds (2 s + U[0, 1 s), 63 rounds, a random start of 0 or 1 round) are defined
//! and explained in [`super::family`]; v2's `bbr_bw_probe_pif_gain` here. Deviations: none beyond
//! [`super::family`]'s.

use super::Mode;
use super::family::{
    AckPhase, BW_PROBE_BASE_US, BW_PROBE_MAX_ROUNDS, BW_PROBE_RAND_ROUNDS, BW_PROBE_RAND_US, BbrFamily,
    Phase, UNSET,
};
use super::shared::{BBR_SCALE, BBR_UNIT, now_us};
use crate::sock::CaState;
use crate::{RateSample, TcpSock};

/// v2's `bbr_bw_probe_pif_gain`: PROBE_UP ends once inflight reaches 1.25 BDP (after one min_rtt).
pub const BW_PROBE_PIF_GAIN: u32 = BBR_UNIT * 5 / 4;

impl BbrFamily {
    /// `bbr_pick_probe_wait`: randomized, for mixing and fairness convergence.
    fn pick_probe_wait(&mut self) {
        self.rounds_since_probe = self.rng.below(BW_PROBE_RAND_ROUNDS);
        self.probe_wait_us = BW_PROBE_BASE_US + self.rng.below(BW_PROBE_RAND_US);
    }

    /// `bbr_set_cycle_idx`: a new phase needs new cwnd and pacing, so no fast path.
    fn set_cycle_idx(&mut self, phase: Phase) {
        self.cycle_idx = phase;
        self.try_fast_path = false;
    }

    /// `bbr_has_elapsed_in_phase`.
    fn has_elapsed_in_phase(&self, tp: &TcpSock, interval_us: u32) -> bool {
        now_us(tp) as i64 - (self.cycle_mstamp + interval_us as u64) as i64 > 0
    }

    /// `bbr_start_bw_probe_refill`.
    pub(super) fn start_bw_probe_refill(&mut self, tp: &TcpSock, bw_probe_up_rounds: u32) {
        self.reset_lower_bounds();
        // v2's `bbr_refill_add_inc` is 0: inflight_hi unchanged.
        self.bw_probe_up_rounds = bw_probe_up_rounds & 0x1F;
        self.bw_probe_up_acks = 0;
        self.stopped_risky_probe = false;
        self.got_ok_bw_probe_sample = false;
        self.ack_phase = AckPhase::Refilling;
        self.next_rtt_delivered = tp.delivered;
        self.set_cycle_idx(Phase::Refill);
    }

    /// `bbr_start_bw_probe_up`.
    fn start_bw_probe_up(&mut self, tp: &TcpSock, sample_bw: u32) {
        self.ack_phase = AckPhase::ProbeStarting;
        self.next_rtt_delivered = tp.delivered;
        self.cycle_mstamp = now_us(tp);
        if self.v3() {
            self.reset_full_bw();
            self.full.bw = sample_bw;
        }
        self.set_cycle_idx(Phase::Up);
        self.raise_inflight_hi_slope(tp);
    }

    /// `bbr_start_bw_probe_down`: a new cycle.
    pub(super) fn start_bw_probe_down(&mut self, tp: &TcpSock) {
        self.reset_congestion_signals();
        self.bw_probe_up_cnt = UNSET;
        self.pick_probe_wait();
        self.cycle_mstamp = now_us(tp);
        self.ack_phase = AckPhase::ProbeStopping;
        self.next_rtt_delivered = tp.delivered;
        self.set_cycle_idx(Phase::Down);
    }

    /// `bbr_start_bw_probe_cruise`.
    pub(super) fn start_bw_probe_cruise(&mut self) {
        if self.inflight_lo != UNSET {
            self.inflight_lo = self.inflight_lo.min(self.inflight_hi);
        }
        self.set_cycle_idx(Phase::Cruise);
    }

    /// `bbr_is_reno_coexistence_probe_time`: a Reno flow at our BDP would probe (lose) every ~BDP rounds.
    fn is_reno_coexistence_probe_time(&self, tp: &TcpSock) -> bool {
        // v2 scales the target inflight by `bbr_bw_probe_reno_gain` = 1.0: the same number.
        let rounds = BW_PROBE_MAX_ROUNDS.min(self.target_inflight(tp));
        self.rounds_since_probe >= rounds
    }

    /// `bbr_check_time_to_probe_bw`.
    fn check_time_to_probe_bw(&mut self, tp: &TcpSock) -> bool {
        if self.v.ecn_reprobe_gain != 0
            && self.ecn_eligible
            && self.ecn_in_cycle
            && !self.loss_in_cycle
            && tp.ca_state == CaState::Open
        {
            // Start the inflight_hi growth at 2^n ≈ inflight_hi × ecn_reprobe_gain.
            let x = (self.inflight_hi as u64 * self.v.ecn_reprobe_gain as u64) >> BBR_SCALE;
            // ilog2(0) is −1 in the kernel; stored in a 5-bit field that is 31.
            let n = if x == 0 { 31 } else { 63 - x.leading_zeros() };
            self.start_bw_probe_refill(tp, n);
            return true;
        }
        if self.has_elapsed_in_phase(tp, self.probe_wait_us) || self.is_reno_coexistence_probe_time(tp) {
            self.start_bw_probe_refill(tp, 0);
            return true;
        }
        false
    }

    /// `bbr_check_time_to_cruise`: the queue is drained (inflight ≤ BDP) and there is headroom below
    /// inflight_hi (v2's `drain_to_target` is on, so no time limit).
    fn check_time_to_cruise(&self, tp: &TcpSock, inflight: u32, bw: u32) -> bool {
        if inflight > self.inflight_with_headroom() {
            return false;
        }
        inflight <= self.inflight(tp, bw, BBR_UNIT)
    }

    /// `bbr_update_cycle_phase`.
    pub(super) fn update_cycle_phase(&mut self, tp: &TcpSock, rs: &RateSample, sample_bw: u32) {
        if !self.full.reached {
            return;
        }
        // In DRAIN, PROBE_BW or PROBE_RTT the upper bounds adapt.
        if self.adapt_upper_bounds(tp, rs, sample_bw) {
            return;
        }
        if self.mode != Mode::ProbeBw {
            return;
        }
        let inflight = self.packets_in_net_at_edt(tp, rs.prior_in_flight);
        let bw = self.max_bw();
        match self.cycle_idx {
            Phase::Cruise => {
                self.check_time_to_probe_bw(tp);
            }
            Phase::Refill => {
                // After a full round of refilling, the samples reflect the probe.
                if self.round_start {
                    self.bw_probe_samples = true;
                    self.start_bw_probe_up(tp, sample_bw);
                }
            }
            Phase::Up => {
                let mut done = false;
                if self.prev_probe_too_high && inflight >= self.inflight_hi {
                    self.stopped_risky_probe = true;
                    done = true;
                } else if self.v3() {
                    if tp.is_cwnd_limited && tp.snd_cwnd >= self.inflight_hi {
                        // inflight_hi limits the growth: restart the plateau detector.
                        self.reset_full_bw();
                        self.full.bw = sample_bw;
                    } else if self.full_bw_now {
                        done = true;
                    }
                } else if self.has_elapsed_in_phase(tp, self.min_rtt_us)
                    && inflight >= self.inflight(tp, bw, BW_PROBE_PIF_GAIN)
                {
                    done = true;
                }
                if done {
                    self.prev_probe_too_high = false;
                    self.start_bw_probe_down(tp);
                }
            }
            Phase::Down => {
                if self.check_time_to_probe_bw(tp) {
                    return;
                }
                if self.check_time_to_cruise(tp, inflight, bw) {
                    self.start_bw_probe_cruise();
                }
            }
        }
    }
}
