//! BBRv1: a port of Linux mainline `net/ipv4/tcp_bbr.c` (logic unchanged since v5.x; read at Kingxukai/linux
//! @0291023e, identical to torvalds/linux), with the kernel's state machine, units and integer arithmetic.
//!
//! **In a nutshell.** Per ACK (`bbr_main`): update the model (round counting, the windowed-max bandwidth
//! filter over 10 packet-timed rounds, the long-term policer estimate, ACK aggregation, the PROBE_BW gain
//! cycle, the STARTUP full-pipe test, the DRAIN exit, the 10 s min-RTT filter and PROBE_RTT), then pace at
//! 99 % of bw × pacing_gain and set cwnd toward bw × min_rtt × cwnd_gain plus quantization and aggregation
//! allowances. Loss only matters through packet conservation in the first round of recovery, the restore of
//! the pre-loss cwnd afterwards, and the policer detector ([`super::lt_bw`]).
//!
//! **Constants** (kernel values, 1/256 units):
//! - high_gain = 256·2885/1000 + 1 = 739 (≈ 2.89 = 2/ln 2): the smallest gain whose paced rate doubles every
//!   round, like slow start; used for pacing and cwnd in STARTUP and for cwnd in DRAIN.
//! - drain_gain = 256·1000/2885 = 88 (≈ 0.344 = 1/2.885): drains STARTUP's queue in about one round.
//! - cwnd_gain = 512 (2.0): tolerates delayed and stretched ACKs in PROBE_BW.
//! - gain cycle [1.25, 0.75, 1, 1, 1, 1, 1, 1]: probe, drain what the probe queued, cruise six rounds. The
//!   start is drawn from the flow's own random stream so that it is never the 0.75 phase
//!   (`bbr_cycle_rand` = 7: index 7 − U{0..6}, then advanced once).
//! - bandwidth window `CYCLE_LEN + 2` = 10 rounds: covers a full gain cycle with margin.
//! - min-RTT window 10 s; PROBE_RTT holds cwnd at 4 for max(200 ms, one round): ≈ 2 % of the time.
//! - full-pipe test: 3 rounds without 25 % growth of the max-filtered bandwidth.
//! - `bbr_min_tso_rate` 1.2 Mbit/s: below it, bursts of single segments.
//! - quantization budget: + 3 TSO bursts (one in the qdisc, one in TSO, one at the receiver's GRO), rounded up
//!   to even (delayed ACKs), + 2 in the 1.25 phase so gain cycling exceeds the BDP even for tiny BDPs.
//! - cwnd ≥ 4 (`bbr_cwnd_min_target`), which is also PROBE_RTT's window.
//!
//! **Deviations** (nothing else differs):
//! - The windowed-max filter stores u64 samples; the kernel truncates a (u64) sample to u32, which only
//!   matters above 256 M packets/s.
//! - `bbr_tso_segs_goal` uses `MAX_TCP_HEADER` = 320 (its x86-64 value).
//!
//! **At `init`** the simulator's connection has its handshake's RTT sample (the path's base RTT, taken when
//! every connection is made before the run): `min_rtt_us` and the initial pacing rate come from it and the
//! 10 s min-RTT window starts at the connection, as in the kernel, so a flow that starts later over a standing
//! queue keeps the base RTT until that window expires. Without a sample (the scripted driver's default) the
//! pacing rate uses the kernel's 1 ms default until the first ACK re-initializes it from srtt.

use serde::{Deserialize, Serialize};

use ccfair_core::seq::{after, before};
use ccfair_core::{FieldError, ParamDoc, Rng};

use super::Mode;
use super::lt_bw::LtBw;
use super::shared::{
    self, AckAggregation, BBR_UNIT, CWND_MIN_TARGET, GSO_LEGACY_MAX_SIZE, MAX_TCP_HEADER, MIN_RTT_WIN_SEC,
    ProbeRttDwell, now_us, us_delta,
};
use crate::minmax::MinMax;
use crate::sock::{CaEvent, CaState, TCP_INFINITE_SSTHRESH, TCP_INIT_CWND};
use crate::stack::PACING_SHIFT;
use crate::{CcFlags, CcVars, CongestionControl, RateSample, TcpSock};

/// Phases of the PROBE_BW gain cycle.
pub const CYCLE_LEN: u32 = 8;
/// `bbr_bw_rtts`: window of the max-bandwidth filter, rounds.
pub const BW_RTTS: u32 = CYCLE_LEN + 2;
/// `bbr_high_gain`.
pub const HIGH_GAIN: u32 = BBR_UNIT * 2885 / 1000 + 1;
/// `bbr_drain_gain`.
pub const DRAIN_GAIN: u32 = BBR_UNIT * 1000 / 2885;
/// `bbr_cwnd_gain`.
pub const CWND_GAIN: u32 = BBR_UNIT * 2;
/// `bbr_pacing_gain[]`.
pub const PACING_GAIN: [u32; CYCLE_LEN as usize] = [
    BBR_UNIT * 5 / 4,
    BBR_UNIT * 3 / 4,
    BBR_UNIT,
    BBR_UNIT,
    BBR_UNIT,
    BBR_UNIT,
    BBR_UNIT,
    BBR_UNIT,
];
/// `bbr_cycle_rand`: the start phase is drawn among this many (all but the 0.75 phase).
pub const CYCLE_RAND: u32 = 7;

/// Parameters of BBRv1: none (the mainline module has no tunables).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Bbr1Params {}

pub const PARAMS: &[ParamDoc] = &[];

impl Bbr1Params {
    pub fn validate(&self) -> Result<(), FieldError> {
        Ok(())
    }
}

/// One BBRv1 connection (`struct bbr`).
#[derive(Clone, Debug)]
pub struct Bbr1 {
    /// The flow's own random stream (`get_random_u32_below`).
    rng: Rng,
    pub(super) mode: Mode,
    /// Min RTT in the 10 s window, µs (`u32::MAX` before a sample).
    min_rtt_us: u32,
    /// Jiffies when `min_rtt_us` was taken.
    min_rtt_stamp: u32,
    /// End of PROBE_RTT (`probe_rtt_done_stamp`, `probe_rtt_round_done`).
    probe_rtt: ProbeRttDwell,
    /// Max recent delivery rate, BW units, windowed over `BW_RTTS` rounds.
    bw: MinMax,
    /// Packet-timed rounds elapsed.
    pub(super) rtt_cnt: u32,
    /// `tp.delivered` at which the current round ends.
    next_rtt_delivered: u32,
    /// Start of the current gain-cycle phase, µs.
    cycle_mstamp: u64,
    cycle_idx: u32,
    prev_ca_state: CaState,
    packet_conservation: bool,
    pub(super) round_start: bool,
    idle_restart: bool,
    pub(super) pacing_gain: u32,
    cwnd_gain: u32,
    full: shared::FullBw,
    has_seen_rtt: bool,
    /// cwnd before loss recovery or PROBE_RTT cut it.
    prior_cwnd: u32,
    pub(super) lt: LtBw,
    agg: AckAggregation,
    /// `mss_cache` at init, to export the bandwidth in bit/s.
    mss: u32,
}

impl Bbr1 {
    pub fn new(_params: Bbr1Params, rng: Rng) -> Bbr1 {
        Bbr1 {
            rng,
            mode: Mode::Startup,
            min_rtt_us: u32::MAX,
            min_rtt_stamp: 0,
            probe_rtt: ProbeRttDwell::default(),
            bw: MinMax::new(0, 0),
            rtt_cnt: 0,
            next_rtt_delivered: 0,
            cycle_mstamp: 0,
            cycle_idx: 0,
            prev_ca_state: CaState::Open,
            packet_conservation: false,
            round_start: false,
            idle_restart: false,
            pacing_gain: 0,
            cwnd_gain: 0,
            full: shared::FullBw::default(),
            has_seen_rtt: false,
            prior_cwnd: 0,
            lt: LtBw::default(),
            agg: AckAggregation::default(),
            mss: 0,
        }
    }

    /// The mode of the state machine.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// Index into the PROBE_BW gain cycle.
    pub fn cycle_idx(&self) -> u32 {
        self.cycle_idx
    }

    /// STARTUP has filled the pipe (`full_bw_reached`).
    pub fn full_bw_reached(&self) -> bool {
        self.full.reached
    }

    /// The policer estimate is in use (`lt_use_bw`).
    pub fn lt_use_bw(&self) -> bool {
        self.lt.use_bw
    }

    /// The policer estimate, BW units.
    pub fn lt_bw(&self) -> u32 {
        self.lt.bw
    }

    /// `bbr_max_bw`, BW units.
    pub fn max_bw(&self) -> u32 {
        self.bw.get() as u32
    }

    /// `bbr_bw`: the policer estimate while in use, else the max filter.
    pub fn bw(&self) -> u32 {
        if self.lt.use_bw { self.lt.bw } else { self.max_bw() }
    }

    /// The min-RTT estimate, µs.
    pub fn min_rtt_us(&self) -> u32 {
        self.min_rtt_us
    }

    /// `bbr_extra_acked`, packets.
    pub fn extra_acked(&self) -> u32 {
        self.agg.extra_acked()
    }

    /// `bbr_bdp` with the initial window as the no-RTT fallback.
    fn bdp(&self, bw: u32, gain: u32) -> u32 {
        shared::bdp(bw, self.min_rtt_us, gain, TCP_INIT_CWND)
    }

    /// `bbr_tso_segs_goal`: about 1 ms of data at the pacing rate, at most 64 KB, at most 127 segments.
    fn tso_segs_goal(&self, tp: &TcpSock) -> u32 {
        let bytes = (tp.pacing_rate >> PACING_SHIFT).min(GSO_LEGACY_MAX_SIZE - 1 - MAX_TCP_HEADER);
        let segs = ((bytes / tp.mss as u64) as u32).max(shared::min_tso_segs(tp));
        segs.min(0x7F)
    }

    /// `bbr_quantization_budget`.
    fn quantization_budget(&self, tp: &TcpSock, cwnd: u32) -> u32 {
        let mut cwnd = cwnd + 3 * self.tso_segs_goal(tp);
        cwnd = (cwnd + 1) & !1;
        if self.mode == Mode::ProbeBw && self.cycle_idx == 0 {
            cwnd += 2;
        }
        cwnd
    }

    /// `bbr_inflight`: quantized BDP.
    fn inflight(&self, tp: &TcpSock, bw: u32, gain: u32) -> u32 {
        let bdp = self.bdp(bw, gain);
        self.quantization_budget(tp, bdp)
    }

    /// `bbr_packets_in_net_at_edt`.
    fn packets_in_net_at_edt(&self, tp: &TcpSock, inflight_now: u32) -> u32 {
        let goal = self.tso_segs_goal(tp);
        shared::packets_in_net_at_edt(tp, inflight_now, self.bw(), self.pacing_gain, goal)
    }

    /// `bbr_init_pacing_rate_from_rtt`: high_gain × cwnd / srtt.
    fn init_pacing_rate_from_rtt(&mut self, tp: &mut TcpSock) {
        shared::init_pacing_rate_from_rtt(tp, &mut self.has_seen_rtt, HIGH_GAIN, false);
    }

    /// `bbr_set_pacing_rate`: until the pipe is full the rate may only grow.
    fn set_pacing_rate(&mut self, tp: &mut TcpSock, bw: u32, gain: u32) {
        let full = self.full.reached;
        shared::set_pacing_rate(tp, &mut self.has_seen_rtt, full, (bw, gain), HIGH_GAIN, false);
    }

    /// `bbr_save_cwnd`: remember the last good cwnd (not one cut by recovery or PROBE_RTT).
    fn save_cwnd(&mut self, tp: &TcpSock) {
        let in_probe_rtt = self.mode == Mode::ProbeRtt;
        self.prior_cwnd = shared::saved_cwnd(self.prior_cwnd, tp.snd_cwnd, self.prev_ca_state, in_probe_rtt);
    }

    /// `bbr_ack_aggregation_cwnd`: only once the pipe was found full.
    fn ack_aggregation_cwnd(&self) -> u32 {
        if self.full.reached {
            self.agg.cwnd(self.bw())
        } else {
            0
        }
    }

    /// `bbr_set_cwnd_to_recover_or_restore`: returns the cwnd to use and whether packet conservation decides.
    fn set_cwnd_to_recover_or_restore(&mut self, tp: &TcpSock, rs: &RateSample, acked: u32) -> (u32, bool) {
        let prev_state = self.prev_ca_state;
        let state = tp.ca_state;
        let mut cwnd = tp.snd_cwnd;
        // An ACK for P packets releases at most 2P: first deduct what was lost, then slow-start below.
        if rs.losses > 0 {
            cwnd = (cwnd as i32).wrapping_sub(rs.losses as i32).max(1) as u32;
        }
        if state == CaState::Recovery && prev_state != CaState::Recovery {
            // First round of recovery: packet conservation, starting a round now.
            self.packet_conservation = true;
            self.next_rtt_delivered = tp.delivered;
            cwnd = tp.in_flight() + acked;
        } else if prev_state >= CaState::Recovery && state < CaState::Recovery {
            // Recovery is over: back to the cwnd from before it.
            cwnd = cwnd.max(self.prior_cwnd);
            self.packet_conservation = false;
        }
        self.prev_ca_state = state;
        if self.packet_conservation {
            return (cwnd.max(tp.in_flight() + acked), true);
        }
        (cwnd, false)
    }

    /// `bbr_set_cwnd`: slow-start toward the target, or snap down to it once the pipe was full.
    fn set_cwnd(&mut self, tp: &mut TcpSock, rs: &RateSample, acked: u32, bw: u32, gain: u32) {
        let mut cwnd = tp.snd_cwnd;
        if acked > 0 {
            let (c, conserving) = self.set_cwnd_to_recover_or_restore(tp, rs, acked);
            cwnd = c;
            if !conserving {
                let mut target = self.bdp(bw, gain);
                target += self.ack_aggregation_cwnd();
                target = self.quantization_budget(tp, target);
                if self.full.reached {
                    cwnd = (cwnd + acked).min(target);
                } else if cwnd < target || tp.delivered < TCP_INIT_CWND {
                    cwnd += acked;
                }
                cwnd = cwnd.max(CWND_MIN_TARGET);
            }
        }
        tp.snd_cwnd = cwnd.min(tp.snd_cwnd_clamp);
        if self.mode == Mode::ProbeRtt {
            tp.snd_cwnd = tp.snd_cwnd.min(CWND_MIN_TARGET);
        }
    }

    /// `bbr_is_next_cycle_phase`.
    fn is_next_cycle_phase(&self, tp: &TcpSock, rs: &RateSample) -> bool {
        let is_full_length = us_delta(tp.delivered_mstamp.us(), self.cycle_mstamp) > self.min_rtt_us as u64;
        // Gain 1.0 phases last one min_rtt of wall time.
        if self.pacing_gain == BBR_UNIT {
            return is_full_length;
        }
        let inflight = self.packets_in_net_at_edt(tp, rs.prior_in_flight);
        let bw = self.max_bw();
        // Probing (1.25): until inflight reaches 1.25 BDP, but not on through losses (shallow buffers).
        if self.pacing_gain > BBR_UNIT {
            return is_full_length && (rs.losses > 0 || inflight >= self.inflight(tp, bw, self.pacing_gain));
        }
        // Draining (0.75): until one min_rtt passed or inflight fell to the BDP.
        is_full_length || inflight <= self.inflight(tp, bw, BBR_UNIT)
    }

    /// `bbr_advance_cycle_phase`.
    fn advance_cycle_phase(&mut self, tp: &TcpSock) {
        self.cycle_idx = (self.cycle_idx + 1) & (CYCLE_LEN - 1);
        self.cycle_mstamp = tp.delivered_mstamp.us();
    }

    /// `bbr_update_cycle_phase`.
    fn update_cycle_phase(&mut self, tp: &TcpSock, rs: &RateSample) {
        if self.mode == Mode::ProbeBw && self.is_next_cycle_phase(tp, rs) {
            self.advance_cycle_phase(tp);
        }
    }

    /// `bbr_reset_probe_bw_mode`: enter PROBE_BW at a random phase other than the 0.75 one.
    pub(super) fn reset_probe_bw_mode(&mut self, tp: &TcpSock) {
        self.mode = Mode::ProbeBw;
        self.cycle_idx = CYCLE_LEN - 1 - self.rng.below(CYCLE_RAND);
        self.advance_cycle_phase(tp);
    }

    /// `bbr_reset_mode`.
    fn reset_mode(&mut self, tp: &TcpSock) {
        if self.full.reached {
            self.reset_probe_bw_mode(tp);
        } else {
            self.mode = Mode::Startup;
        }
    }

    /// `bbr_update_bw`: round counting and the max-bandwidth filter.
    fn update_bw(&mut self, tp: &mut TcpSock, rs: &RateSample) {
        self.round_start = false;
        if rs.delivered < 0 || rs.interval_us <= 0 {
            return;
        }
        if !before(rs.prior_delivered, self.next_rtt_delivered) {
            self.next_rtt_delivered = tp.delivered;
            self.rtt_cnt = self.rtt_cnt.wrapping_add(1);
            self.round_start = true;
            self.packet_conservation = false;
        }
        self.lt_bw_sampling(tp, rs);
        let bw = (rs.delivered as u64 * shared::BW_UNIT / rs.interval_us as u64).min(u32::MAX as u64);
        // App-limited samples only count when they show at least the current estimate.
        if !rs.is_app_limited || bw >= self.max_bw() as u64 {
            self.bw.running_max(BW_RTTS, self.rtt_cnt, bw);
        }
    }

    /// `bbr_update_ack_aggregation`.
    fn update_ack_aggregation(&mut self, tp: &TcpSock, rs: &RateSample) {
        let bw = self.bw();
        self.agg
            .on_ack(tp, rs, self.round_start, shared::EXTRA_ACKED_WIN_RTTS, bw);
    }

    /// `bbr_check_full_bw_reached`: 3 non-app-limited rounds without 25 % growth of the max filter.
    fn check_full_bw_reached(&mut self, rs: &RateSample) {
        let max_bw = self.max_bw();
        self.full.check(self.round_start, rs, max_bw);
    }

    /// `bbr_check_drain`.
    fn check_drain(&mut self, tp: &mut TcpSock) {
        if self.mode == Mode::Startup && self.full.reached {
            self.mode = Mode::Drain;
            // ssthresh is only exported for monitoring: STARTUP is over.
            tp.snd_ssthresh = self.inflight(tp, self.max_bw(), BBR_UNIT);
        }
        if self.mode == Mode::Drain
            && self.packets_in_net_at_edt(tp, tp.in_flight()) <= self.inflight(tp, self.max_bw(), BBR_UNIT)
        {
            self.reset_probe_bw_mode(tp);
        }
    }

    /// `bbr_check_probe_rtt_done`.
    fn check_probe_rtt_done(&mut self, tp: &mut TcpSock) {
        if self
            .probe_rtt
            .finish(tp, &mut self.min_rtt_stamp, self.prior_cwnd)
        {
            self.reset_mode(tp);
        }
    }

    /// `bbr_update_min_rtt`: the 10 s min filter and PROBE_RTT.
    fn update_min_rtt(&mut self, tp: &mut TcpSock, rs: &RateSample) {
        let now = tp.jiffies32();
        let filter_expired = after(
            now,
            self.min_rtt_stamp.wrapping_add(MIN_RTT_WIN_SEC * tp.jiffies.hz()),
        );
        if rs.rtt_us >= 0 && (rs.rtt_us < self.min_rtt_us as i64 || (filter_expired && !rs.is_ack_delayed)) {
            self.min_rtt_us = rs.rtt_us.min(u32::MAX as i64) as u32;
            self.min_rtt_stamp = now;
        }
        if filter_expired && !self.idle_restart && self.mode != Mode::ProbeRtt {
            self.mode = Mode::ProbeRtt;
            self.save_cwnd(tp);
            self.probe_rtt.done_stamp = 0;
        }
        // Samples taken while the window is cut say nothing about the bottleneck: they are app-limited.
        if self.mode == Mode::ProbeRtt
            && self.probe_rtt.on_ack(
                tp,
                now,
                CWND_MIN_TARGET,
                self.round_start,
                &mut self.next_rtt_delivered,
            )
        {
            self.check_probe_rtt_done(tp);
        }
        if rs.delivered > 0 {
            self.idle_restart = false;
        }
    }

    /// `bbr_update_gains`.
    fn update_gains(&mut self) {
        let (pacing, cwnd) = match self.mode {
            Mode::Startup => (HIGH_GAIN, HIGH_GAIN),
            Mode::Drain => (DRAIN_GAIN, HIGH_GAIN),
            Mode::ProbeBw => {
                let p = if self.lt.use_bw {
                    BBR_UNIT
                } else {
                    PACING_GAIN[self.cycle_idx as usize]
                };
                (p, CWND_GAIN)
            }
            Mode::ProbeRtt => (BBR_UNIT, BBR_UNIT),
        };
        self.pacing_gain = pacing;
        self.cwnd_gain = cwnd;
    }

    /// `bbr_update_model`.
    fn update_model(&mut self, tp: &mut TcpSock, rs: &RateSample) {
        self.update_bw(tp, rs);
        self.update_ack_aggregation(tp, rs);
        self.update_cycle_phase(tp, rs);
        self.check_full_bw_reached(rs);
        self.check_drain(tp);
        self.update_min_rtt(tp, rs);
        self.update_gains();
    }
}

impl CongestionControl for Bbr1 {
    fn name(&self) -> &'static str {
        Bbr1Params::NAME
    }

    fn flags(&self) -> CcFlags {
        CcFlags {
            cong_control: true,
            needs_pacing: true,
            ..CcFlags::default()
        }
    }

    /// `bbr_init`.
    fn init(&mut self, tp: &mut TcpSock) {
        self.mss = tp.mss;
        self.prior_cwnd = 0;
        tp.snd_ssthresh = TCP_INFINITE_SSTHRESH;
        self.rtt_cnt = 0;
        self.next_rtt_delivered = tp.delivered;
        self.prev_ca_state = CaState::Open;
        self.packet_conservation = false;
        self.probe_rtt = ProbeRttDwell::default();
        self.min_rtt_us = tp.min_rtt_us;
        self.min_rtt_stamp = tp.jiffies32();
        self.bw.reset(self.rtt_cnt, 0);
        self.has_seen_rtt = false;
        self.init_pacing_rate_from_rtt(tp);
        self.round_start = false;
        self.idle_restart = false;
        self.full = shared::FullBw::default();
        self.cycle_mstamp = 0;
        self.cycle_idx = 0;
        self.reset_lt_bw_sampling(tp);
        self.mode = Mode::Startup;
        self.agg = AckAggregation::new(now_us(tp));
    }

    /// `bbr_ssthresh`: entering recovery; only remembers cwnd (BBR does not use ssthresh).
    fn ssthresh(&mut self, tp: &mut TcpSock) -> u32 {
        self.save_cwnd(tp);
        tp.snd_ssthresh
    }

    /// `bbr_main`.
    fn cong_control(&mut self, tp: &mut TcpSock, rs: &RateSample) {
        self.update_model(tp, rs);
        let bw = self.bw();
        self.set_pacing_rate(tp, bw, self.pacing_gain);
        self.set_cwnd(tp, rs, rs.acked_sacked, bw, self.cwnd_gain);
    }

    /// `bbr_set_state`: an RTO counts as the end of a round with a loss (for the policer detector) and
    /// restarts the full-pipe estimate.
    fn set_state(&mut self, tp: &mut TcpSock, new_state: CaState) {
        if new_state == CaState::Loss {
            let rs = RateSample {
                losses: 1,
                ..RateSample::default()
            };
            self.prev_ca_state = CaState::Loss;
            self.full.bw = 0;
            self.round_start = true;
            self.lt_bw_sampling(tp, &rs);
        }
    }

    /// `bbr_cwnd_event`: restarting from idle while app-limited, pace at the estimate (no need to probe).
    fn cwnd_event(&mut self, tp: &mut TcpSock, ev: CaEvent) {
        if ev == CaEvent::TxStart && tp.app_limited != 0 {
            self.idle_restart = true;
            self.agg.restart_epoch(now_us(tp));
            if self.mode == Mode::ProbeBw {
                let bw = self.bw();
                self.set_pacing_rate(tp, bw, BBR_UNIT);
            } else if self.mode == Mode::ProbeRtt {
                self.check_probe_rtt_done(tp);
            }
        }
    }

    /// `bbr_min_tso_segs`.
    fn min_tso_segs(&self, tp: &TcpSock) -> Option<u32> {
        Some(shared::min_tso_segs(tp))
    }

    /// `bbr_undo_cwnd`: a spurious loss; restart the full-pipe and policer estimates, keep cwnd.
    fn undo_cwnd(&mut self, tp: &mut TcpSock) -> u32 {
        self.full.restart();
        self.reset_lt_bw_sampling(tp);
        tp.snd_cwnd
    }

    fn vars(&self) -> CcVars {
        CcVars {
            aux: self.cycle_idx as f64,
            ..shared::vars(
                self.mode as i32,
                self.pacing_gain,
                self.cwnd_gain,
                self.mss,
                self.bw(),
                self.min_rtt_us,
            )
        }
    }
}
