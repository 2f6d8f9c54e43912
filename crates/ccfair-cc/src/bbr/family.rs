//! BBRv2 and BBRv3, which share one state machine: a port of google/bbr `net/ipv4/tcp_bbr2.c` (v2alpha,
//! read @0487ade5) and of the google/bbr v3 branch's `net/ipv4/tcp_bbr.c` (`BBR_VERSION` 3, read @001a430b).
//! This file holds the state, the per-ACK order (`bbr2_main` / `bbr_main`), STARTUP and its exits, DRAIN,
//! the min-RTT filters and PROBE_RTT, the gains, pacing and cwnd, and the hooks. The loss/ECN model is in
//! [`super::bounds`], the PROBE_BW cycle in [`super::probe_bw`], the per-version constants in [`super::v2`]
//! and [`super::v3`].
//!
//! **In a nutshell.** Per ACK: count packet-timed rounds (and, at a round start, the rounds since the last
//! bandwidth probe and the ECN EWMA), take a bandwidth sample (delivered/interval, rounded up), track the
//! latest round's delivery rate and volume, then (unless the app-limited fast path applies) update the model:
//! max-bandwidth filter and congestion signals, ACK aggregation, STARTUP's loss/ECN exits, the full-pipe
//! test, the DRAIN exit, the PROBE_BW cycle with its `inflight_hi` adaptation, the min-RTT filters and
//! PROBE_RTT. Then pace at 99 % of bw × gain (bw = min(max_bw, bw_lo), v2 also bw_hi), set cwnd toward
//! bw × min_rtt × cwnd_gain plus allowances, and bound cwnd by `inflight_hi`/`inflight_lo` per phase.
//!
//! **Constants shared by v2 and v3** (1/256 units): drain gain 88 (1/2.885), PROBE_BW cwnd gain 512 (2.0),
//! full pipe after 3 rounds without 25 % growth, min-RTT window 10 s, PROBE_RTT every 5 s (`probe_rtt_win_ms`:
//! a shorter interval than v1's 10 s, with a milder cut) at cwnd max(4, 0.5 × BDP) for max(200 ms, one round),
//! loss threshold 5/256 ≈ 2 % of the data in flight at send time, β = 76/256 (cut to 180/256 ≈ 0.7),
//! headroom 38/256 ≈ 15 % of `inflight_hi`, ECN: α gain 1/16, α initially 1, cut factor 85/256 ≈ 1/3,
//! threshold 50 %, only for min_rtt ≤ 5 ms, 2 rounds above the threshold end STARTUP; Reno-coexistence
//! probing after min(63, target inflight) rounds (a Reno flow at that BDP waits about BDP rounds between
//! losses; 63 rounds keeps 1 % random loss survivable), else after 2 s + U[0, 1 s) of wall time; extra_acked
//! window 5 rounds (1 in STARTUP); TSO allowance halving per 512 µs of min_rtt.
//!
//! **Differences between the versions** (from the two sources; `v3()` selects): see [`super::v2`] for the
//! list. The structure, names and order here follow v3; v2's variants are inline where they differ.
//!
//! **Deviations** (nothing else differs):
//! - PLB (protective load balancing, `bbr_plb`) is left out: it only rehashes the flow label, and is off by
//!   default (`tcp_plb_enabled` = 0).
//! - The receiver-side ECN hooks (`CA_EVENT_ECN_IS_CE/NO_CE`, `dctcp_ece_ack_update`, `fast_ack_mode`) belong
//!   to the receiving host; the simulator's receiver decides how CE is echoed.
//! - v3's `rs->is_acking_tlp_retrans_seq` is not in the rate sample, taken as false: the per-round "latest"
//!   delivery filters always advance. `tp->tlp_orig_data_app_limited` (TLP recovery) is approximated by the
//!   connection's app-limited state when the recovery is detected. Bulk flows always have new data for a
//!   probe, so TLP retransmissions (and both fields) occur only at the very end of a transfer.
//! - `bbr_tso_segs` (the stack's burst size) and `bbr_tso_segs_goal` coincide: `sk_gso_max_size` is the legacy
//!   64 KB default, and `MAX_TCP_HEADER` is its x86-64 value, 320.

use ccfair_core::Rng;
use ccfair_core::seq::{after, before};

use super::Mode;
use super::shared::{
    self, AckAggregation, BBR_SCALE, BBR_UNIT, BW_UNIT, CWND_MIN_TARGET, FULL_BW_CNT, FULL_BW_THRESH,
    GSO_LEGACY_MAX_SIZE, MAX_TCP_HEADER, MIN_RTT_WIN_SEC, ProbeRttDwell, now_us,
};
use crate::sock::{CaEvent, CaState, TCP_INFINITE_SSTHRESH};
use crate::stack::{MIN_TSO_SEGS, PACING_SHIFT};
use crate::{CcFlags, CcVars, CongestionControl, LostSkb, RateSample, TcpSock};

/// "Unset" for the bounds (`~0U`).
pub const UNSET: u32 = u32::MAX;

/// `bbr_probe_rtt_win_ms`: PROBE_RTT when no lower RTT was seen for this long.
pub const PROBE_RTT_WIN_MS: u32 = 5000;
/// `bbr_probe_rtt_cwnd_gain`: PROBE_RTT's cwnd is this fraction of the BDP.
pub const PROBE_RTT_CWND_GAIN: u32 = BBR_UNIT / 2;
/// `bbr_tso_rtt_shift`: the min_rtt-based TSO allowance halves per 2^9 µs.
pub const TSO_RTT_SHIFT: u32 = 9;
/// `bbr_beta`: fraction cut from bw_lo/inflight_lo per lossy round (the kept 180/256 is ≈ 0.7).
pub const BETA: u32 = BBR_UNIT * 30 / 100;
/// `bbr_loss_thresh`: a probe is "too high" above this loss rate.
pub const LOSS_THRESH: u32 = BBR_UNIT * 2 / 100;
/// `bbr_inflight_headroom`.
pub const INFLIGHT_HEADROOM: u32 = BBR_UNIT * 15 / 100;
/// `bbr_ecn_alpha_gain`, `bbr_ecn_alpha_init`, `bbr_ecn_factor`, `bbr_ecn_thresh`, `bbr_ecn_max_rtt_us`,
/// `bbr_full_ecn_cnt`.
pub const ECN_ALPHA_GAIN: u32 = BBR_UNIT / 16;
pub const ECN_ALPHA_INIT: u32 = BBR_UNIT;
pub const ECN_FACTOR: u32 = BBR_UNIT / 3;
pub const ECN_THRESH: u32 = BBR_UNIT / 2;
pub const ECN_MAX_RTT_US: u32 = 5000;
pub const FULL_ECN_CNT: u32 = 2;
/// `bbr_bw_probe_max_rounds`, `bbr_bw_probe_rand_rounds`, `bbr_bw_probe_base_us`, `bbr_bw_probe_rand_us`.
pub const BW_PROBE_MAX_ROUNDS: u32 = 63;
pub const BW_PROBE_RAND_ROUNDS: u32 = 2;
pub const BW_PROBE_BASE_US: u32 = 2_000_000;
pub const BW_PROBE_RAND_US: u32 = 1_000_000;

/// What tells v2alpha and v3 apart: their constants and a version number for the behavioural differences.
#[derive(Debug)]
pub struct Version {
    pub name: &'static str,
    /// 2 (v2alpha) or 3.
    pub number: u8,
    /// STARTUP pacing gain (v2 `bbr_high_gain`, v3 `bbr_startup_pacing_gain`).
    pub startup_pacing_gain: u32,
    /// STARTUP (and DRAIN) cwnd gain.
    pub startup_cwnd_gain: u32,
    pub drain_gain: u32,
    pub cwnd_gain: u32,
    /// PROBE_BW pacing gain per [`Phase`] (UP, DOWN, CRUISE, REFILL).
    pub pacing_gain: [u32; 4],
    /// Extra cwnd gain in PROBE_UP, in BBR_UNIT/4 (`bbr_bw_probe_cwnd_gain`; v2 has none).
    pub bw_probe_cwnd_gain: u32,
    /// STARTUP exits after this many loss events in a recovery round with > 2 % loss.
    pub full_loss_cnt: u32,
    /// After a cycle with ECN but no loss, reprobe starting at this fraction of inflight_hi (0 = off).
    pub ecn_reprobe_gain: u32,
}

/// `enum bbr_pacing_gain_phase`: the PROBE_BW sub-states.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Phase {
    /// Push inflight up to probe for bandwidth.
    Up = 0,
    /// Drain the queue the probe built.
    #[default]
    Down = 1,
    /// Use the pipe, leaving headroom.
    Cruise = 2,
    /// Refill the pipe to the estimate before probing.
    Refill = 3,
}

/// `enum bbr_ack_phase`: how the ACK stream relates to bandwidth probing.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub enum AckPhase {
    #[default]
    Init,
    Refilling,
    ProbeStarting,
    ProbeFeedback,
    ProbeStopping,
}

/// One BBRv2 or BBRv3 connection (`struct bbr` of either file).
#[derive(Clone, Debug)]
pub struct BbrFamily {
    pub(super) v: &'static Version,
    /// ECN logic allowed: v2's `bbr_ecn_enable`, v3's route flag `TCP_ECN_LOW` (with ECN negotiated).
    pub(super) ecn_allowed: bool,
    pub(super) rng: Rng,
    pub(super) mss: u32,

    pub(super) mode: Mode,
    pub(super) min_rtt_us: u32,
    pub(super) min_rtt_stamp: u32,
    /// End of PROBE_RTT (`probe_rtt_done_stamp`, `probe_rtt_round_done`).
    pub(super) probe_rtt: ProbeRttDwell,
    pub(super) probe_rtt_min_us: u32,
    pub(super) probe_rtt_min_stamp: u32,
    pub(super) next_rtt_delivered: u32,
    /// Start of the current PROBE_BW phase (wall clock), µs.
    pub(super) cycle_mstamp: u64,
    pub(super) prev_ca_state: CaState,
    pub(super) round_start: bool,
    /// cwnd-limited rounds in PROBE_UP (5 bits).
    pub(super) bw_probe_up_rounds: u32,
    pub(super) try_fast_path: bool,
    pub(super) idle_restart: bool,
    pub(super) init_cwnd: u32,
    pub(super) pacing_gain: u32,
    pub(super) cwnd_gain: u32,
    pub(super) full: shared::FullBw,
    pub(super) cycle_idx: Phase,
    pub(super) has_seen_rtt: bool,
    pub(super) prior_cwnd: u32,
    pub(super) agg: AckAggregation,

    /// v3: a bandwidth plateau was reached recently (STARTUP or PROBE_UP).
    pub(super) full_bw_now: bool,
    pub(super) startup_ecn_rounds: u32,
    pub(super) loss_in_cycle: bool,
    pub(super) ecn_in_cycle: bool,
    pub(super) loss_round_delivered: u32,
    pub(super) undo_bw_lo: u32,
    pub(super) undo_inflight_lo: u32,
    pub(super) undo_inflight_hi: u32,
    /// Max delivery rate / volume in the last loss round.
    pub(super) bw_latest: u32,
    pub(super) inflight_latest: u32,
    pub(super) bw_lo: u32,
    /// v2 only: upper bound on bandwidth (cut by ECN while probing); always unset in v3.
    pub(super) bw_hi: u32,
    /// Max bandwidth sample of the previous and the current PROBE_BW cycle (v3 `bw_hi[2]`, v2 `max_bw[2]`).
    pub(super) max_bw: [u32; 2],
    pub(super) inflight_lo: u32,
    pub(super) inflight_hi: u32,
    /// Packets to ACK per +1 of inflight_hi in PROBE_UP, and the credit so far.
    pub(super) bw_probe_up_cnt: u32,
    pub(super) bw_probe_up_acks: u32,
    /// Wall-clock wait in PROBE_DOWN/CRUISE before the next probe, µs.
    pub(super) probe_wait_us: u32,
    pub(super) ecn_eligible: bool,
    /// EWMA of the CE fraction, 1/256.
    pub(super) ecn_alpha: u32,
    /// The ACKs now reflect a bandwidth probe.
    pub(super) bw_probe_samples: bool,
    pub(super) prev_probe_too_high: bool,
    pub(super) stopped_risky_probe: bool,
    pub(super) rounds_since_probe: u32,
    pub(super) loss_round_start: bool,
    pub(super) loss_in_round: bool,
    pub(super) ecn_in_round: bool,
    pub(super) ack_phase: AckPhase,
    pub(super) loss_events_in_round: u32,
    /// v2 only: a bandwidth-probe sample without excessive loss/ECN was seen.
    pub(super) got_ok_bw_probe_sample: bool,
    pub(super) alpha_last_delivered: u32,
    pub(super) alpha_last_delivered_ce: u32,
}

impl BbrFamily {
    /// A connection of version `v`; `ecn_allowed` as the version's parameters say.
    pub fn new(v: &'static Version, ecn_allowed: bool, rng: Rng) -> BbrFamily {
        BbrFamily {
            v,
            ecn_allowed,
            rng,
            mss: 0,
            mode: Mode::Startup,
            min_rtt_us: u32::MAX,
            min_rtt_stamp: 0,
            probe_rtt: ProbeRttDwell::default(),
            probe_rtt_min_us: u32::MAX,
            probe_rtt_min_stamp: 0,
            next_rtt_delivered: 0,
            cycle_mstamp: 0,
            prev_ca_state: CaState::Open,
            round_start: false,
            bw_probe_up_rounds: 0,
            try_fast_path: false,
            idle_restart: false,
            init_cwnd: 0,
            pacing_gain: 0,
            cwnd_gain: 0,
            full: shared::FullBw::default(),
            cycle_idx: Phase::Up,
            has_seen_rtt: false,
            prior_cwnd: 0,
            agg: AckAggregation::default(),
            full_bw_now: false,
            startup_ecn_rounds: 0,
            loss_in_cycle: false,
            ecn_in_cycle: false,
            loss_round_delivered: 0,
            undo_bw_lo: 0,
            undo_inflight_lo: 0,
            undo_inflight_hi: 0,
            bw_latest: 0,
            inflight_latest: 0,
            bw_lo: UNSET,
            bw_hi: UNSET,
            max_bw: [0, 0],
            inflight_lo: UNSET,
            inflight_hi: UNSET,
            bw_probe_up_cnt: UNSET,
            bw_probe_up_acks: 0,
            probe_wait_us: 0,
            ecn_eligible: false,
            ecn_alpha: ECN_ALPHA_INIT,
            bw_probe_samples: false,
            prev_probe_too_high: false,
            stopped_risky_probe: false,
            rounds_since_probe: 0,
            loss_round_start: false,
            loss_in_round: false,
            ecn_in_round: false,
            ack_phase: AckPhase::Init,
            loss_events_in_round: 0,
            got_ok_bw_probe_sample: false,
            alpha_last_delivered: 0,
            alpha_last_delivered_ce: 0,
        }
    }

    #[inline]
    pub(super) fn v3(&self) -> bool {
        self.v.number == 3
    }

    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// The PROBE_BW phase (meaningful in PROBE_BW).
    pub fn phase(&self) -> Phase {
        self.cycle_idx
    }

    pub fn full_bw_reached(&self) -> bool {
        self.full.reached
    }

    pub fn min_rtt_us(&self) -> u32 {
        self.min_rtt_us
    }

    /// `inflight_hi`, packets (`u32::MAX` = unset).
    pub fn inflight_hi(&self) -> u32 {
        self.inflight_hi
    }

    /// `inflight_lo`, packets (`u32::MAX` = unset).
    pub fn inflight_lo(&self) -> u32 {
        self.inflight_lo
    }

    /// `bw_lo`, BW units (`u32::MAX` = unset).
    pub fn bw_lo(&self) -> u32 {
        self.bw_lo
    }

    /// `ecn_alpha`, 1/256.
    pub fn ecn_alpha(&self) -> u32 {
        self.ecn_alpha
    }

    /// The wall-clock wait before the next probe, µs, and the rounds counted since the last one.
    pub fn probe_wait(&self) -> (u32, u32) {
        (self.probe_wait_us, self.rounds_since_probe)
    }

    /// `bbr_max_bw`.
    pub fn max_bw(&self) -> u32 {
        self.max_bw[0].max(self.max_bw[1])
    }

    /// `bbr_bw`: the max filter bounded by the short-term bw_lo (and v2's bw_hi).
    pub fn bw(&self) -> u32 {
        let bw = self.max_bw().min(self.bw_lo);
        if self.v3() { bw } else { bw.min(self.bw_hi) }
    }

    /// `bbr_can_use_ecn` (v3) / `bbr_ecn_enable` (v2).
    pub(super) fn can_use_ecn(&self, tp: &TcpSock) -> bool {
        if self.v3() {
            self.ecn_allowed && tp.ecn_ok
        } else {
            self.ecn_allowed
        }
    }

    pub(super) fn bdp(&self, bw: u32, gain: u32) -> u32 {
        shared::bdp(bw, self.min_rtt_us, gain, self.init_cwnd)
    }

    /// `bbr_min_tso_segs` for v2; the sysctl default for v3.
    fn min_tso_segs(&self, tp: &TcpSock) -> u32 {
        if self.v3() {
            MIN_TSO_SEGS
        } else {
            shared::min_tso_segs(tp)
        }
    }

    /// `bbr_tso_segs_goal`: ~1 ms at the pacing rate plus 64 KB halved per 512 µs of min_rtt, at most 64 KB.
    pub(super) fn tso_segs_goal(&self, tp: &TcpSock) -> u32 {
        let mut bytes = tp.pacing_rate >> PACING_SHIFT;
        let r = self.min_rtt_us >> TSO_RTT_SHIFT;
        if r < 32 {
            bytes += GSO_LEGACY_MAX_SIZE >> r;
        }
        bytes = bytes.min(GSO_LEGACY_MAX_SIZE - 1 - MAX_TCP_HEADER);
        ((bytes / tp.mss as u64) as u32).max(self.min_tso_segs(tp))
    }

    /// `bbr_quantization_budget` (v2 with `cwnd_tso_budget` = 1): at least 3 bursts and 4 packets, + 2 in UP.
    pub(super) fn quantization_budget(&self, tp: &TcpSock, cwnd: u32) -> u32 {
        let mut cwnd = cwnd.max(3 * self.tso_segs_goal(tp)).max(CWND_MIN_TARGET);
        if self.mode == Mode::ProbeBw && self.cycle_idx == Phase::Up {
            cwnd += 2;
        }
        cwnd
    }

    /// `bbr_inflight`.
    pub(super) fn inflight(&self, tp: &TcpSock, bw: u32, gain: u32) -> u32 {
        let bdp = self.bdp(bw, gain);
        self.quantization_budget(tp, bdp)
    }

    /// `bbr_target_inflight`: the BDP, unless congestion cut cwnd below it.
    pub(super) fn target_inflight(&self, tp: &TcpSock) -> u32 {
        self.inflight(tp, self.bw(), BBR_UNIT).min(tp.snd_cwnd)
    }

    pub(super) fn packets_in_net_at_edt(&self, tp: &TcpSock, inflight_now: u32) -> u32 {
        let goal = self.tso_segs_goal(tp);
        shared::packets_in_net_at_edt(tp, inflight_now, self.bw(), self.pacing_gain, goal)
    }

    /// `bbr_probe_rtt_cwnd`.
    pub(super) fn probe_rtt_cwnd(&self) -> u32 {
        CWND_MIN_TARGET.max(self.bdp(self.bw(), PROBE_RTT_CWND_GAIN))
    }

    /// `bbr_init_pacing_rate_from_rtt`.
    fn init_pacing_rate_from_rtt(&mut self, tp: &mut TcpSock) {
        shared::init_pacing_rate_from_rtt(tp, &mut self.has_seen_rtt, self.v.startup_pacing_gain, true);
    }

    /// `bbr_set_pacing_rate`.
    pub(super) fn set_pacing_rate(&mut self, tp: &mut TcpSock, bw: u32, gain: u32) {
        let (full, startup) = (self.full.reached, self.v.startup_pacing_gain);
        shared::set_pacing_rate(tp, &mut self.has_seen_rtt, full, (bw, gain), startup, true);
    }

    /// `bbr_save_cwnd`.
    fn save_cwnd(&mut self, tp: &TcpSock) {
        let in_probe_rtt = self.mode == Mode::ProbeRtt;
        self.prior_cwnd = shared::saved_cwnd(self.prior_cwnd, tp.snd_cwnd, self.prev_ca_state, in_probe_rtt);
    }

    /// `bbr_set_cwnd` (v2/v3: no packet conservation; the loss response is in the bounds).
    fn set_cwnd(&mut self, tp: &mut TcpSock, acked: u32, bw: u32, gain: u32) {
        let mut cwnd = tp.snd_cwnd;
        if acked > 0 {
            let mut target = self.bdp(bw, gain);
            target += self.agg.cwnd(self.bw());
            target = self.quantization_budget(tp, target);
            self.try_fast_path = false;
            if self.full.reached {
                cwnd += acked;
                if cwnd >= target {
                    cwnd = target;
                    self.try_fast_path = true;
                }
            } else if cwnd < target || cwnd < 2 * self.init_cwnd {
                cwnd += acked;
            } else {
                self.try_fast_path = true;
            }
            cwnd = cwnd.max(CWND_MIN_TARGET);
        }
        tp.snd_cwnd = cwnd.min(tp.snd_cwnd_clamp);
        if self.mode == Mode::ProbeRtt {
            tp.snd_cwnd = tp.snd_cwnd.min(self.probe_rtt_cwnd());
        }
    }

    /// `bbr_update_round_start`.
    fn update_round_start(&mut self, tp: &TcpSock, rs: &RateSample) {
        self.round_start = false;
        if rs.interval_us > 0 && !before(rs.prior_delivered, self.next_rtt_delivered) {
            self.next_rtt_delivered = tp.delivered;
            self.round_start = true;
        }
    }

    /// `bbr_calculate_bw_sample`: delivered / interval, rounded up (so low rates can still grow).
    fn calculate_bw_sample(rs: &RateSample) -> u32 {
        if rs.interval_us > 0 && rs.delivered >= 0 {
            let bw = (rs.delivered as u64 * BW_UNIT).div_ceil(rs.interval_us as u64);
            bw.min(u32::MAX as u64) as u32
        } else {
            0
        }
    }

    /// `bbr_update_ack_aggregation` (the window is one round until the pipe is full).
    fn update_ack_aggregation(&mut self, tp: &TcpSock, rs: &RateSample) {
        let thresh = if self.full.reached {
            shared::EXTRA_ACKED_WIN_RTTS
        } else {
            1
        };
        let bw = self.bw();
        self.agg.on_ack(tp, rs, self.round_start, thresh, bw);
    }

    /// `bbr_reset_full_bw`.
    pub(super) fn reset_full_bw(&mut self) {
        self.full.restart();
        self.full_bw_now = false;
    }

    /// `bbr_handle_queue_too_high_in_startup`: loss or ECN ends STARTUP; inflight_hi from the BDP (v3: or
    /// what the last round delivered, if more).
    pub(super) fn handle_queue_too_high_in_startup(&mut self, tp: &TcpSock) {
        self.full.reached = true;
        let bdp = self.inflight(tp, self.max_bw(), BBR_UNIT);
        self.inflight_hi = if self.v3() {
            bdp.max(self.inflight_latest)
        } else {
            bdp
        };
    }

    /// `bbr_check_loss_too_high_in_startup`: at the end of a recovery round in STARTUP with at least
    /// `full_loss_cnt` loss events and a loss rate above 2 %.
    fn check_loss_too_high_in_startup(&mut self, tp: &TcpSock, rs: &RateSample) {
        if self.full.reached {
            return;
        }
        if rs.losses > 0 && self.loss_events_in_round < 0xF {
            self.loss_events_in_round += 1;
        }
        if self.v.full_loss_cnt > 0
            && self.loss_round_start
            && tp.ca_state == CaState::Recovery
            && self.loss_events_in_round >= self.v.full_loss_cnt
            && self.is_inflight_too_high(rs.lost, rs.tx_in_flight, rs.delivered, rs.delivered_ce)
        {
            self.handle_queue_too_high_in_startup(tp);
            return;
        }
        if self.loss_round_start {
            self.loss_events_in_round = 0;
        }
    }

    /// `bbr_check_full_bw_reached`. v3 tests each bandwidth sample against the plateau (and reuses the test
    /// in PROBE_UP, `full_bw_now`); v2, as v1, tests the max filter once per round.
    fn check_full_bw_reached(&mut self, rs: &RateSample, sample_bw: u32) {
        if self.v3() {
            if self.full_bw_now || rs.is_app_limited {
                return;
            }
            let bw_thresh = (self.full.bw as u64 * FULL_BW_THRESH as u64) >> BBR_SCALE;
            if sample_bw as u64 >= bw_thresh {
                self.reset_full_bw();
                self.full.bw = sample_bw;
                return;
            }
            if !self.round_start {
                return;
            }
            self.full.cnt += 1;
            self.full_bw_now = self.full.cnt >= FULL_BW_CNT;
            self.full.reached |= self.full_bw_now;
        } else {
            let max_bw = self.max_bw();
            self.full.check(self.round_start, rs, max_bw);
        }
    }

    /// `bbr_check_drain`: STARTUP → DRAIN once the pipe is full; DRAIN → PROBE_BW (DOWN) once the queue is
    /// estimated drained.
    fn check_drain(&mut self, tp: &mut TcpSock) {
        if self.mode == Mode::Startup && self.full.reached {
            self.mode = Mode::Drain;
            tp.snd_ssthresh = self.inflight(tp, self.max_bw(), BBR_UNIT);
            self.reset_congestion_signals();
        }
        if self.mode == Mode::Drain
            && self.packets_in_net_at_edt(tp, tp.in_flight()) <= self.inflight(tp, self.max_bw(), BBR_UNIT)
        {
            self.mode = Mode::ProbeBw;
            self.start_bw_probe_down(tp);
        }
    }

    /// `bbr_check_probe_rtt_done`.
    fn check_probe_rtt_done(&mut self, tp: &mut TcpSock) {
        if self
            .probe_rtt
            .finish(tp, &mut self.probe_rtt_min_stamp, self.prior_cwnd)
        {
            self.exit_probe_rtt(tp);
        }
    }

    /// `bbr_exit_probe_rtt`: to PROBE_BW (DOWN, then straight to CRUISE: inflight is below the BDP) or back
    /// to STARTUP.
    fn exit_probe_rtt(&mut self, tp: &TcpSock) {
        self.reset_lower_bounds();
        if self.full.reached {
            self.mode = Mode::ProbeBw;
            self.start_bw_probe_down(tp);
            self.start_bw_probe_cruise();
        } else {
            self.mode = Mode::Startup;
        }
    }

    /// `bbr_update_min_rtt`: a 5 s filter times PROBE_RTT, the 10 s filter is the model's min_rtt.
    fn update_min_rtt(&mut self, tp: &mut TcpSock, rs: &RateSample) {
        let now = tp.jiffies32();
        let probe_rtt_expired = after(
            now,
            self.probe_rtt_min_stamp
                .wrapping_add(tp.jiffies.from_ms(PROBE_RTT_WIN_MS as u64) as u32),
        );
        let lower = if self.v3() {
            rs.rtt_us < self.probe_rtt_min_us as i64
        } else {
            rs.rtt_us <= self.probe_rtt_min_us as i64
        };
        if rs.rtt_us >= 0 && (lower || (probe_rtt_expired && !rs.is_ack_delayed)) {
            self.probe_rtt_min_us = rs.rtt_us.min(u32::MAX as i64) as u32;
            self.probe_rtt_min_stamp = now;
        }
        let min_rtt_expired = after(
            now,
            self.min_rtt_stamp.wrapping_add(MIN_RTT_WIN_SEC * tp.jiffies.hz()),
        );
        if self.probe_rtt_min_us <= self.min_rtt_us || min_rtt_expired {
            self.min_rtt_us = self.probe_rtt_min_us;
            self.min_rtt_stamp = self.probe_rtt_min_stamp;
        }
        if probe_rtt_expired && !self.idle_restart && self.mode != Mode::ProbeRtt {
            self.mode = Mode::ProbeRtt;
            self.save_cwnd(tp);
            self.probe_rtt.done_stamp = 0;
            self.ack_phase = AckPhase::ProbeStopping;
            self.next_rtt_delivered = tp.delivered;
        }
        // The low-rate samples of this mode are app-limited.
        if self.mode == Mode::ProbeRtt {
            let target = self.probe_rtt_cwnd();
            if self
                .probe_rtt
                .on_ack(tp, now, target, self.round_start, &mut self.next_rtt_delivered)
            {
                self.check_probe_rtt_done(tp);
            }
        }
        if rs.delivered > 0 {
            self.idle_restart = false;
        }
    }

    /// `bbr_update_gains`.
    fn update_gains(&mut self) {
        let (pacing, cwnd) = match self.mode {
            Mode::Startup => (self.v.startup_pacing_gain, self.v.startup_cwnd_gain),
            Mode::Drain => (self.v.drain_gain, self.v.startup_cwnd_gain),
            Mode::ProbeBw => {
                let mut cwnd = self.v.cwnd_gain;
                if self.cycle_idx == Phase::Up {
                    cwnd += BBR_UNIT * self.v.bw_probe_cwnd_gain / 4;
                }
                (self.v.pacing_gain[self.cycle_idx as usize], cwnd)
            }
            Mode::ProbeRtt => (BBR_UNIT, BBR_UNIT),
        };
        self.pacing_gain = pacing;
        self.cwnd_gain = cwnd;
    }

    /// `bbr_update_model`.
    fn update_model(&mut self, tp: &mut TcpSock, rs: &RateSample, sample_bw: u32) {
        self.update_congestion_signals(tp, rs, sample_bw);
        self.update_ack_aggregation(tp, rs);
        self.check_loss_too_high_in_startup(tp, rs);
        self.check_full_bw_reached(rs, sample_bw);
        self.check_drain(tp);
        self.update_cycle_phase(tp, rs, sample_bw);
        self.update_min_rtt(tp, rs);
    }

    /// `bbr_run_fast_path`: an app-limited sample below the estimate, without loss or ECN, and cwnd already at
    /// its target: only the state machine runs; if nothing changed, the control is not recomputed either.
    fn run_fast_path(
        &mut self,
        tp: &mut TcpSock,
        rs: &RateSample,
        sample_bw: u32,
        update_model: &mut bool,
    ) -> bool {
        if self.try_fast_path
            && rs.is_app_limited
            && sample_bw < self.max_bw()
            && !self.loss_in_round
            && !self.ecn_in_round
        {
            let prev_mode = self.mode;
            let prev_min_rtt_us = self.min_rtt_us;
            self.check_drain(tp);
            self.update_cycle_phase(tp, rs, sample_bw);
            self.update_min_rtt(tp, rs);
            if self.mode == prev_mode && self.min_rtt_us == prev_min_rtt_us && self.try_fast_path {
                return true;
            }
            *update_model = false;
        }
        false
    }

    /// `bbr_bound_cwnd_for_inflight_model`: cap cwnd at inflight_hi while probing, at inflight_hi less the
    /// headroom in CRUISE and PROBE_RTT, always at inflight_lo; never below 4.
    fn bound_cwnd_for_inflight_model(&mut self, tp: &mut TcpSock) {
        let mut cap = u32::MAX;
        if self.mode == Mode::ProbeBw && self.cycle_idx != Phase::Cruise {
            cap = self.inflight_hi;
        } else if self.mode == Mode::ProbeRtt
            || (self.mode == Mode::ProbeBw && self.cycle_idx == Phase::Cruise)
        {
            cap = self.inflight_with_headroom();
        }
        cap = cap.min(self.inflight_lo).max(CWND_MIN_TARGET);
        tp.snd_cwnd = cap.min(tp.snd_cwnd);
    }

    /// `bbr_run_loss_probe_recovery` (v3): a TLP retransmission repaired one lost packet.
    fn run_loss_probe_recovery(&mut self, tp: &mut TcpSock) {
        self.note_loss(tp);
        if !self.bw_probe_samples {
            return;
        }
        let lost = 1;
        let tx_in_flight = self.inflight_latest.wrapping_add(lost);
        if self.is_inflight_too_high(lost, tx_in_flight, 0, 0) {
            self.handle_inflight_too_high(tp, tx_in_flight, tp.app_limited != 0);
        }
    }
}

impl CongestionControl for BbrFamily {
    fn name(&self) -> &'static str {
        self.v.name
    }

    fn flags(&self) -> CcFlags {
        CcFlags {
            cong_control: true,
            needs_pacing: true,
            // `TCP_CONG_WANTS_CE_EVENTS` with `bbr_precise_ece_ack`: when BBR may use ECN, the receiver echoes
            // each packet's CE state (DCTCP's `dctcp_ece_ack_update`).
            dctcp_echo: self.ecn_allowed,
            ..CcFlags::default()
        }
    }

    /// `bbr_init` (v3) / `bbr2_init` + `bbr_init` (v2).
    fn init(&mut self, tp: &mut TcpSock) {
        self.mss = tp.mss;
        self.init_cwnd = tp.snd_cwnd.min(0x7F);
        self.prior_cwnd = tp.prior_cwnd;
        tp.snd_ssthresh = TCP_INFINITE_SSTHRESH;
        self.next_rtt_delivered = if self.v3() { tp.delivered } else { 0 };
        self.prev_ca_state = CaState::Open;
        self.probe_rtt = ProbeRttDwell::default();
        self.probe_rtt_min_us = tp.min_rtt_us;
        self.probe_rtt_min_stamp = tp.jiffies32();
        self.min_rtt_us = tp.min_rtt_us;
        self.min_rtt_stamp = tp.jiffies32();
        self.has_seen_rtt = false;
        self.init_pacing_rate_from_rtt(tp);
        self.round_start = false;
        self.idle_restart = false;
        self.full = shared::FullBw::default();
        self.cycle_mstamp = 0;
        self.cycle_idx = Phase::Up;
        self.mode = Mode::Startup;
        self.agg = AckAggregation::new(now_us(tp));
        self.try_fast_path = false;
        // Start sampling loss/ECN rounds after the first full flight is ACKed.
        self.loss_round_delivered = tp.delivered.wrapping_add(1);
        self.loss_round_start = false;
        self.undo_bw_lo = 0;
        self.undo_inflight_lo = 0;
        self.undo_inflight_hi = 0;
        self.loss_events_in_round = 0;
        self.startup_ecn_rounds = 0;
        self.reset_congestion_signals();
        self.bw_lo = UNSET;
        self.bw_hi = UNSET;
        self.max_bw = [0, 0];
        self.inflight_lo = UNSET;
        self.inflight_hi = UNSET;
        self.reset_full_bw();
        self.bw_probe_up_cnt = UNSET;
        self.bw_probe_up_acks = 0;
        self.bw_probe_up_rounds = 0;
        self.probe_wait_us = 0;
        self.stopped_risky_probe = false;
        self.got_ok_bw_probe_sample = false;
        self.ack_phase = AckPhase::Init;
        self.rounds_since_probe = 0;
        self.bw_probe_samples = false;
        self.prev_probe_too_high = false;
        self.ecn_eligible = false;
        self.ecn_alpha = ECN_ALPHA_INIT;
        self.alpha_last_delivered = 0;
        self.alpha_last_delivered_ce = 0;
    }

    /// `bbr_ssthresh`: entering loss recovery; remember cwnd and the bounds for an undo.
    fn ssthresh(&mut self, tp: &mut TcpSock) -> u32 {
        self.save_cwnd(tp);
        self.undo_bw_lo = self.bw_lo;
        self.undo_inflight_lo = self.inflight_lo;
        self.undo_inflight_hi = self.inflight_hi;
        tp.snd_ssthresh
    }

    /// `bbr_main` / `bbr2_main`.
    fn cong_control(&mut self, tp: &mut TcpSock, rs: &RateSample) {
        self.update_round_start(tp, rs);
        if self.round_start {
            self.rounds_since_probe = (self.rounds_since_probe + 1).min(0xFF);
            self.update_ecn_alpha(tp);
        }
        let is_ece = if self.v3() {
            self.ecn_eligible && rs.ece
        } else {
            rs.ece
        };
        self.ecn_in_round |= is_ece;
        let sample_bw = Self::calculate_bw_sample(rs);
        if self.v3() {
            self.update_latest_delivery_signals(tp, rs, sample_bw);
        }
        let mut update_model = true;
        if !self.run_fast_path(tp, rs, sample_bw, &mut update_model) {
            if update_model {
                self.update_model(tp, rs, sample_bw);
            }
            self.update_gains();
            let bw = self.bw();
            self.set_pacing_rate(tp, bw, self.pacing_gain);
            self.set_cwnd(tp, rs.acked_sacked, bw, self.cwnd_gain);
            self.bound_cwnd_for_inflight_model(tp);
        }
        if self.v3() {
            self.advance_latest_delivery_signals(rs, sample_bw);
        }
        self.prev_ca_state = tp.ca_state;
        self.loss_in_cycle |= rs.lost > 0;
        self.ecn_in_cycle |= rs.delivered_ce > 0;
    }

    /// `bbr_set_state`: an RTO restarts the full-pipe estimate and, when not probing, seeds inflight_lo with
    /// the pre-RTO cwnd; leaving Loss restores that cwnd.
    fn set_state(&mut self, tp: &mut TcpSock, new_state: CaState) {
        if new_state == CaState::Loss {
            self.prev_ca_state = CaState::Loss;
            if self.v3() {
                self.reset_full_bw();
            } else {
                self.full.bw = 0;
            }
            if !self.is_probing_bandwidth() && self.inflight_lo == UNSET {
                self.inflight_lo = if self.v3() {
                    tp.snd_cwnd.max(self.prior_cwnd)
                } else {
                    self.prior_cwnd
                };
            }
        } else if self.prev_ca_state == CaState::Loss {
            tp.snd_cwnd = tp.snd_cwnd.max(self.prior_cwnd);
            self.try_fast_path = false;
        }
    }

    /// `bbr_cwnd_event`.
    fn cwnd_event(&mut self, tp: &mut TcpSock, ev: CaEvent) {
        match ev {
            CaEvent::TxStart if tp.app_limited != 0 => {
                self.idle_restart = true;
                self.agg.restart_epoch(now_us(tp));
                if self.mode == Mode::ProbeBw {
                    let bw = self.bw();
                    self.set_pacing_rate(tp, bw, BBR_UNIT);
                } else if self.mode == Mode::ProbeRtt {
                    self.check_probe_rtt_done(tp);
                }
            }
            // `bbr_loss_probe_recovery` (v3 only).
            CaEvent::TlpRecovery if self.v3() => self.run_loss_probe_recovery(tp),
            _ => {}
        }
    }

    /// `bbr_skb_marked_lost`.
    fn skb_marked_lost(&mut self, tp: &mut TcpSock, skb: &LostSkb) {
        self.skb_marked_lost_impl(tp, skb);
    }

    /// `bbr_tso_segs`: BBR sizes the stack's TSO bursts itself.
    fn tso_segs(&self, tp: &TcpSock) -> Option<u32> {
        Some(self.tso_segs_goal(tp))
    }

    /// `bbr_undo_cwnd`: the loss episode was spurious; restore the bounds saved at its start.
    fn undo_cwnd(&mut self, _tp: &mut TcpSock) -> u32 {
        if self.v3() {
            self.reset_full_bw();
        } else {
            self.full.restart();
        }
        self.loss_in_round = false;
        self.bw_lo = self.bw_lo.max(self.undo_bw_lo);
        self.inflight_lo = self.inflight_lo.max(self.undo_inflight_lo);
        self.inflight_hi = self.inflight_hi.max(self.undo_inflight_hi);
        self.try_fast_path = false;
        self.prior_cwnd
    }

    fn vars(&self) -> CcVars {
        let opt = |x: u32| if x == UNSET { f64::NAN } else { x as f64 };
        CcVars {
            inflight_hi: opt(self.inflight_hi),
            inflight_lo: opt(self.inflight_lo),
            aux: self.cycle_idx as u8 as f64,
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
