//! What BBRv1, v2 and v3 compute the same way: fixed-point units, BDP, the pacing rate and its start-up
//! rule, the in-network estimate at the earliest departure time, the saved cwnd, PROBE_RTT's dwell, and the
//! ACK-aggregation (`extra_acked`) estimator.
//!
//! Sources: `bbr_rate_bytes_per_sec`, `bbr_bw_to_pacing_rate`, `bbr_init_pacing_rate_from_rtt`,
//! `bbr_set_pacing_rate`, `bbr_bdp`, `bbr_packets_in_net_at_edt`, `bbr_save_cwnd`, the PROBE_RTT part of
//! `bbr_update_min_rtt`, `bbr_update_ack_aggregation`, `bbr_ack_aggregation_cwnd` in mainline `tcp_bbr.c`
//! and both google/bbr files (identical there except where a caller passes a version's constant).
//!
//! Constants:
//! - `BW_SCALE` = 24: bandwidth in packets/µs × 2^24, so a u32 spans 715 bit/s .. 3 Tbit/s at 1500 B.
//! - `BBR_SCALE` = 8: gains and fractions in 1/256.
//! - pacing margin 1 %: pace slightly below the estimate so the bottleneck queue tends to drain.
//! - `extra_acked` cap 100 ms × bw: the aggregation allowance never exceeds 100 ms of data; the epoch restarts
//!   after 2^20 packets so an old epoch cannot dominate; the two-slot window gives a max over 5–10 rounds
//!   (1–2 rounds in v2/v3's STARTUP).
//! - `GSO_LEGACY_MAX_SIZE` 65536 and `MAX_TCP_HEADER` 320 (the x86-64 value of L1_CACHE_ALIGN(128 + MAX_HEADER)):
//!   BBR's own TSO goal budgets at most 64 KB − 1 − header per burst.
//!
//! Deviation: intermediate products are computed in 128 bits; the kernel's u64 arithmetic would only
//! overflow above ≈ 2.9 Tbit/s, so results are identical below that.

use ccfair_core::seq::after;

use crate::sock::CaState;
use crate::{CcVars, RateSample, TcpSock};

/// Bandwidth unit: packets per µs × 2^24.
pub const BW_SCALE: u32 = 24;
pub const BW_UNIT: u64 = 1 << BW_SCALE;
/// Gain unit: 1.0 = 256.
pub const BBR_SCALE: u32 = 8;
pub const BBR_UNIT: u32 = 1 << BBR_SCALE;

/// `bbr_pacing_margin_percent`.
pub const PACING_MARGIN_PERCENT: u64 = 1;
/// `bbr_cwnd_min_target`: two outstanding 2-packet sequences keep an ACK-every-other-packet pipe busy.
pub const CWND_MIN_TARGET: u32 = 4;
/// `bbr_full_bw_thresh` (1.25) and `bbr_full_bw_cnt`: STARTUP ends after 3 rounds without 25 % growth.
pub const FULL_BW_THRESH: u32 = BBR_UNIT * 5 / 4;
pub const FULL_BW_CNT: u32 = 3;
/// `bbr_min_rtt_win_sec`: window of the min-RTT filter.
pub const MIN_RTT_WIN_SEC: u32 = 10;
/// `bbr_probe_rtt_mode_ms`: time held at the PROBE_RTT window (bounds its cost to ~2 % of 10 s).
pub const PROBE_RTT_MODE_MS: u32 = 200;
/// `bbr_extra_acked_gain`, `bbr_extra_acked_win_rtts`, `bbr_ack_epoch_acked_reset_thresh`,
/// `bbr_extra_acked_max_us`.
pub const EXTRA_ACKED_GAIN: u32 = BBR_UNIT;
pub const EXTRA_ACKED_WIN_RTTS: u32 = 5;
pub const ACK_EPOCH_ACKED_RESET_THRESH: u32 = 1 << 20;
pub const EXTRA_ACKED_MAX_US: u64 = 100 * 1000;
/// `GSO_LEGACY_MAX_SIZE` and `MAX_TCP_HEADER`, bytes.
pub const GSO_LEGACY_MAX_SIZE: u64 = 65_536;
pub const MAX_TCP_HEADER: u64 = 320;
/// `tcp_mstamp` / `tcp_clock_us()`, µs.
#[inline]
pub fn now_us(tp: &TcpSock) -> u64 {
    tp.now.us()
}

/// `tcp_stamp_us_delta(t1, t0)`: µs from t0 to t1, 0 if t1 is earlier.
#[inline]
pub fn us_delta(t1: u64, t0: u64) -> u64 {
    t1.saturating_sub(t0)
}

/// `bbr_rate_bytes_per_sec`: `rate` (BW units) × `gain` (1/256) in bytes per second, `margin_percent` below.
/// With `at_least_one` (v2/v3) the result is never 0.
pub fn rate_bytes_per_sec(mss: u32, rate: u64, gain: u32, margin_percent: u64, at_least_one: bool) -> u64 {
    let mut r = rate as u128 * mss as u128;
    r *= gain as u128;
    r >>= BBR_SCALE;
    r *= (1_000_000 / 100 * (100 - margin_percent)) as u128;
    r >>= BW_SCALE;
    let r = r.min(u64::MAX as u128) as u64;
    if at_least_one { r.max(1) } else { r }
}

/// `bbr_bw_to_pacing_rate`: the pacing rate for `bw` at `gain`, 1 % below, capped by `sk_max_pacing_rate`.
pub fn bw_to_pacing_rate(tp: &TcpSock, bw: u32, gain: u32, at_least_one: bool) -> u64 {
    rate_bytes_per_sec(tp.mss, bw as u64, gain, PACING_MARGIN_PERCENT, at_least_one).min(tp.max_pacing_rate)
}

/// `bbr_init_pacing_rate_from_rtt`'s bandwidth: cwnd per srtt (1 ms before any RTT sample), in BW units.
/// Returns it with whether an RTT sample existed (`has_seen_rtt`).
pub fn initial_bw(tp: &TcpSock) -> (u32, bool) {
    let (rtt_us, seen) = if tp.srtt_us != 0 {
        (tp.srtt_us.max(1) as u64, true)
    } else {
        (1_000, false)
    };
    let bw = tp.snd_cwnd as u64 * BW_UNIT / rtt_us;
    (bw.min(u32::MAX as u64) as u32, seen)
}

/// `bbr_init_pacing_rate_from_rtt`: the first pacing rate, the initial window per srtt (1 ms without an RTT
/// sample yet) at the version's STARTUP gain; notes whether an RTT sample was seen.
pub fn init_pacing_rate_from_rtt(
    tp: &mut TcpSock,
    has_seen_rtt: &mut bool,
    startup_gain: u32,
    at_least_one: bool,
) {
    let (bw, seen) = initial_bw(tp);
    *has_seen_rtt |= seen;
    tp.pacing_rate = bw_to_pacing_rate(tp, bw, startup_gain, at_least_one);
}

/// `bbr_set_pacing_rate`: pace at `bw` × `gain`; the first RTT sample restarts the rate from the initial
/// window, and until the pipe is found full (`full_bw_reached`) the rate may only grow.
pub fn set_pacing_rate(
    tp: &mut TcpSock,
    has_seen_rtt: &mut bool,
    full_bw_reached: bool,
    (bw, gain): (u32, u32),
    startup_gain: u32,
    at_least_one: bool,
) {
    let rate = bw_to_pacing_rate(tp, bw, gain, at_least_one);
    if !*has_seen_rtt && tp.srtt_us != 0 {
        init_pacing_rate_from_rtt(tp, has_seen_rtt, startup_gain, at_least_one);
    }
    if full_bw_reached || rate > tp.pacing_rate {
        tp.pacing_rate = rate;
    }
}

/// `bbr_save_cwnd`: the cwnd to restore after loss recovery or PROBE_RTT, the last one neither had cut.
pub fn saved_cwnd(prior_cwnd: u32, snd_cwnd: u32, prev_ca_state: CaState, in_probe_rtt: bool) -> u32 {
    if prev_ca_state < CaState::Recovery && !in_probe_rtt {
        snd_cwnd
    } else {
        prior_cwnd.max(snd_cwnd)
    }
}

/// STARTUP's full-pipe estimator (`bbr_check_full_bw_reached`): `bw` is the bandwidth the last 25 % growth
/// reached, `cnt` the rounds since then without such growth, `reached` whether the pipe was found full.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct FullBw {
    pub reached: bool,
    pub bw: u32,
    pub cnt: u32,
}

impl FullBw {
    /// One round as v1 and v2 run it (v3 tests each sample): whether the max-filtered bandwidth grew by
    /// `FULL_BW_THRESH` since `bw`; if it did, it becomes the new reference, else one more round without
    /// growth counts. Returns whether the pipe is full (`FULL_BW_CNT` such rounds).
    pub fn round(&mut self, max_bw: u32) -> bool {
        let bw_thresh = (self.bw as u64 * FULL_BW_THRESH as u64) >> BBR_SCALE;
        if max_bw as u64 >= bw_thresh {
            self.bw = max_bw;
            self.cnt = 0;
            return false;
        }
        self.cnt += 1;
        self.cnt >= FULL_BW_CNT
    }

    /// `bbr_check_full_bw_reached` as v1 and v2 run it: one [`FullBw::round`] at the start of each round
    /// whose sample is not app-limited, until the pipe is full.
    pub fn check(&mut self, round_start: bool, rs: &RateSample, max_bw: u32) {
        if self.reached || !round_start || rs.is_app_limited {
            return;
        }
        self.reached = self.round(max_bw);
    }

    /// Forget the plateau (a loss state, an undo): the next rounds measure growth from zero.
    pub fn restart(&mut self) {
        self.bw = 0;
        self.cnt = 0;
    }
}

/// PROBE_RTT's end: `probe_rtt_done_stamp` (jiffies, 0 while not scheduled) and whether a round trip has
/// passed since in flight came down to the mode's level (`probe_rtt_round_done`).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct ProbeRttDwell {
    pub done_stamp: u32,
    pub round_done: bool,
}

impl ProbeRttDwell {
    /// Per ACK in PROBE_RTT, as `bbr_update_min_rtt` does in every version (only `target`, the in-flight
    /// level waited for, differs: `bbr_cwnd_min_target` in v1, `bbr_probe_rtt_cwnd` in v2/v3): the mode's
    /// delivery-rate samples are app-limited; once in flight is down to `target` the end is scheduled
    /// `PROBE_RTT_MODE_MS` on and a round starts (`next_rtt_delivered`). Returns whether a round has passed
    /// since, when the caller's `bbr_check_probe_rtt_done` looks at the time.
    pub fn on_ack(
        &mut self,
        tp: &mut TcpSock,
        now: u32,
        target: u32,
        round_start: bool,
        next_rtt_delivered: &mut u32,
    ) -> bool {
        tp.app_limited = tp.delivered.wrapping_add(tp.in_flight()).max(1);
        if self.done_stamp == 0 && tp.in_flight() <= target {
            self.done_stamp = now.wrapping_add(tp.jiffies.from_ms(PROBE_RTT_MODE_MS as u64) as u32);
            self.round_done = false;
            *next_rtt_delivered = tp.delivered;
            return false;
        }
        if self.done_stamp != 0 && round_start {
            self.round_done = true;
        }
        self.done_stamp != 0 && self.round_done
    }

    /// `bbr_check_probe_rtt_done` up to the mode change, in every version: once PROBE_RTT is scheduled and
    /// its time has passed, the min-RTT filter's stamp (`stamp`: v1's `min_rtt_stamp`, v2/v3's
    /// `probe_rtt_min_stamp`) restarts now and cwnd gets back at least `prior_cwnd`. Returns whether it
    /// ended, for the caller to leave the mode its version's way.
    pub fn finish(&self, tp: &mut TcpSock, stamp: &mut u32, prior_cwnd: u32) -> bool {
        if self.done_stamp == 0 || !after(tp.jiffies32(), self.done_stamp) {
            return false;
        }
        *stamp = tp.jiffies32();
        tp.snd_cwnd = tp.snd_cwnd.max(prior_cwnd);
        true
    }
}

/// `bbr_bdp`: ⌈bw × min_rtt × gain⌉ packets (rounded up so the estimate cannot ratchet down); `no_rtt_cwnd`
/// (the initial window) while there is no RTT sample yet.
pub fn bdp(bw: u32, min_rtt_us: u32, gain: u32, no_rtt_cwnd: u32) -> u32 {
    if min_rtt_us == u32::MAX {
        return no_rtt_cwnd;
    }
    let w = bw as u128 * min_rtt_us as u128;
    let scaled = (w * gain as u128) >> BBR_SCALE;
    let bdp = scaled.div_ceil(BW_UNIT as u128);
    bdp.min(u32::MAX as u128) as u32
}

/// `bbr_packets_in_net_at_edt`: of `inflight_now`, what will still be in the network when the next paced
/// burst departs (the bandwidth drains some until then); when raising inflight (`pacing_gain` > 1) that
/// burst (`tso_segs_goal` packets) counts too.
pub fn packets_in_net_at_edt(
    tp: &TcpSock,
    inflight_now: u32,
    bw: u32,
    pacing_gain: u32,
    tso_segs_goal: u32,
) -> u32 {
    let now_ns = tp.now.ns();
    let edt_ns = tp.wstamp.ns().max(now_ns);
    let interval_us = (edt_ns - now_ns) / 1_000;
    let interval_delivered = ((bw as u128 * interval_us as u128) >> BW_SCALE).min(u32::MAX as u128) as u32;
    let mut inflight_at_edt = inflight_now;
    if pacing_gain > BBR_UNIT {
        inflight_at_edt = inflight_at_edt.wrapping_add(tso_segs_goal);
    }
    inflight_at_edt.saturating_sub(interval_delivered)
}

/// `bbr_min_tso_segs` (v1 and v2): a single segment per burst below 1.2 Mbit/s, else two.
pub fn min_tso_segs(tp: &TcpSock) -> u32 {
    /// `bbr_min_tso_rate`, bit/s.
    const MIN_TSO_RATE_BPS: u64 = 1_200_000;
    if tp.pacing_rate < MIN_TSO_RATE_BPS >> 3 {
        1
    } else {
        2
    }
}

/// The ACK-aggregation estimator (`ack_epoch_*`, `extra_acked[2]`): how much more than bw × elapsed the ACKs
/// of an epoch delivered, max-filtered over two windows of rounds. It lets cwnd cover the silences between
/// aggregated ACKs.
#[derive(Clone, Debug, Default)]
pub struct AckAggregation {
    /// Start of the sampling epoch, µs.
    epoch_mstamp_us: u64,
    /// Packets (S)ACKed in the epoch (a 20-bit field in the kernel).
    epoch_acked: u32,
    /// Max excess per window (u16 in the kernel).
    extra_acked: [u16; 2],
    /// Rounds since the current window slot started (5 bits).
    win_rtts: u32,
    win_idx: usize,
}

impl AckAggregation {
    /// A fresh estimator whose epoch starts at `now_us` (`bbr_init`).
    pub fn new(now_us: u64) -> AckAggregation {
        AckAggregation {
            epoch_mstamp_us: now_us,
            ..AckAggregation::default()
        }
    }

    /// Restart the epoch (after idle, `bbr_cwnd_event(CA_EVENT_TX_START)`).
    pub fn restart_epoch(&mut self, now_us: u64) {
        self.epoch_mstamp_us = now_us;
        self.epoch_acked = 0;
    }

    /// `bbr_extra_acked`: the max over the two window slots.
    pub fn extra_acked(&self) -> u32 {
        self.extra_acked[0].max(self.extra_acked[1]) as u32
    }

    /// `bbr_update_ack_aggregation` on an ACK: nothing for a sample that is invalid or ACKed no data, else
    /// [`Self::update`] with the ACK's delivery time and the cwnd, at the bandwidth estimate `bw`.
    pub fn on_ack(
        &mut self,
        tp: &TcpSock,
        rs: &RateSample,
        round_start: bool,
        win_rtts_thresh: u32,
        bw: u32,
    ) {
        if rs.acked_sacked == 0 || rs.delivered < 0 || rs.interval_us <= 0 {
            return;
        }
        self.update(
            round_start,
            win_rtts_thresh,
            rs.acked_sacked,
            tp.delivered_mstamp.us(),
            bw,
            tp.snd_cwnd,
        );
    }

    /// `bbr_update_ack_aggregation` for a valid sample that ACKed data. `win_rtts_thresh` is the window
    /// length in rounds (5, or 1 in v2/v3's STARTUP).
    pub fn update(
        &mut self,
        round_start: bool,
        win_rtts_thresh: u32,
        acked_sacked: u32,
        delivered_mstamp_us: u64,
        bw: u32,
        cwnd: u32,
    ) {
        if round_start {
            self.win_rtts = (self.win_rtts + 1).min(0x1F);
            if self.win_rtts >= win_rtts_thresh {
                self.win_rtts = 0;
                self.win_idx ^= 1;
                self.extra_acked[self.win_idx] = 0;
            }
        }
        let epoch_us = us_delta(delivered_mstamp_us, self.epoch_mstamp_us);
        let mut expected_acked =
            ((bw as u128 * epoch_us as u128) / BW_UNIT as u128).min(u32::MAX as u128) as u32;
        // ACKs arriving slower than expected (or a huge, old epoch): start a new epoch here.
        if self.epoch_acked <= expected_acked
            || self.epoch_acked.saturating_add(acked_sacked) >= ACK_EPOCH_ACKED_RESET_THRESH
        {
            self.epoch_acked = 0;
            self.epoch_mstamp_us = delivered_mstamp_us;
            expected_acked = 0;
        }
        self.epoch_acked = self.epoch_acked.saturating_add(acked_sacked).min(0xF_FFFF);
        let extra = (self.epoch_acked - expected_acked).min(cwnd);
        // The kernel stores the excess in a u16 slot; cwnd never approaches 65536 packets here.
        let extra = extra.min(u16::MAX as u32) as u16;
        if extra > self.extra_acked[self.win_idx] {
            self.extra_acked[self.win_idx] = extra;
        }
    }

    /// `bbr_ack_aggregation_cwnd`: the allowance, at most 100 ms at `bw`.
    pub fn cwnd(&self, bw: u32) -> u32 {
        let max_aggr_cwnd =
            ((bw as u128 * EXTRA_ACKED_MAX_US as u128) / BW_UNIT as u128).min(u32::MAX as u128) as u32;
        let aggr_cwnd = (EXTRA_ACKED_GAIN * self.extra_acked()) >> BBR_SCALE;
        aggr_cwnd.min(max_aggr_cwnd)
    }
}

/// Bandwidth in BW units as bits per second, for the time series (`bbr_get_info` without the margin).
pub fn bw_bps(mss: u32, bw: u32) -> f64 {
    bw as f64 * mss as f64 * 8.0 * 1e6 / BW_UNIT as f64
}

/// The time-series variables every version exports alike (gains as ratios, the estimates in bit/s and ns,
/// NaN before the first RTT sample); `inflight_hi`, `inflight_lo` and `aux` NaN for the version to set.
pub fn vars(mode: i32, pacing_gain: u32, cwnd_gain: u32, mss: u32, bw: u32, min_rtt_us: u32) -> CcVars {
    CcVars {
        mode,
        pacing_gain: pacing_gain as f64 / BBR_UNIT as f64,
        cwnd_gain: cwnd_gain as f64 / BBR_UNIT as f64,
        bw_bps: bw_bps(mss, bw),
        min_rtt_ns: if min_rtt_us == u32::MAX {
            f64::NAN
        } else {
            min_rtt_us as f64 * 1e3
        },
        inflight_hi: f64::NAN,
        inflight_lo: f64::NAN,
        aux: f64::NAN,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bdp_rounds_up_and_uses_the_initial_window_without_rtt() {
        // 1 packet per ms = 2^24/1000 units; 10 ms min RTT → 10 packets; gain 2 → 20.
        let bw = (BW_UNIT / 1000) as u32;
        assert_eq!(bdp(bw, 10_000, BBR_UNIT, 10), 10);
        assert_eq!(bdp(bw, 10_000, 2 * BBR_UNIT, 10), 20);
        // Any fraction of a packet rounds up.
        assert_eq!(bdp(bw, 10_001, BBR_UNIT, 10), 11);
        assert_eq!(bdp(bw, u32::MAX, BBR_UNIT, 7), 7);
    }

    #[test]
    fn pacing_rate_is_one_percent_below_bw_times_gain() {
        // 1 packet/µs of 1000 B = 1e9 B/s; ×1.25 ×0.99.
        let r = rate_bytes_per_sec(1000, BW_UNIT, BBR_UNIT * 5 / 4, 1, false);
        assert_eq!(r, 1_237_500_000);
        assert_eq!(rate_bytes_per_sec(1000, 0, BBR_UNIT, 1, true), 1);
    }

    #[test]
    fn aggregation_measures_excess_over_expected_delivery() {
        let mut a = AckAggregation::new(0);
        // One packet per 1024 µs, exactly representable in BW units.
        let bw = 1u32 << 14;
        // The epoch starts with the first ACK at t = 0.
        a.update(false, 5, 2, 0, bw, 100);
        // 1024 µs later 20 packets arrive at once: 1 expected, so 21 extra (2 + 20 − 1).
        a.update(false, 5, 20, 1_024, bw, 100);
        assert_eq!(a.extra_acked(), 21);
        // ACKs slower than the bandwidth restart the epoch: by t = 31·1024 µs only 22 + 8 < 31 arrived.
        let mut b = a.clone();
        b.update(false, 5, 8, 31 * 1_024, bw, 100);
        assert_eq!(b.extra_acked(), 21, "the max is kept");
        assert_eq!(b.epoch_acked, 8);
        // Capped by cwnd.
        a.update(false, 5, 100, 1_024, bw, 40);
        assert_eq!(a.extra_acked(), 40);
        // The allowance is at most 100 ms of data (97 packets here) and otherwise the excess.
        assert_eq!(a.cwnd(bw), 40);
        assert_eq!(a.cwnd(bw / 10), 9);
        // A new window slot after 5 rounds forgets the old maximum only when both slots have rotated.
        for _ in 0..5 {
            a.update(true, 5, 1, 200_000, bw, 100);
        }
        assert_eq!(a.extra_acked(), 40, "the previous slot still holds it");
        for _ in 0..5 {
            a.update(true, 5, 1, 400_000, bw, 100);
        }
        assert!(a.extra_acked() < 40, "5–10 rounds later it is gone");
    }
}
