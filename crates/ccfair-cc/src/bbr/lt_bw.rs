//! BBRv1's long-term ("LT") bandwidth estimator, which detects token-bucket policers: `bbr_lt_bw_sampling`,
//! `bbr_lt_bw_interval_done`, `bbr_reset_lt_bw_sampling(_interval)` in mainline `tcp_bbr.c`.
//!
//! **In a nutshell.** After the first loss, delivery is sampled over intervals of 4–16 packet-timed rounds that
//! end on a loss. An interval whose loss ratio is at least 50/256 (≈ 20 %) yields an average delivery rate. Two
//! consecutive such intervals with consistent rates (within 1/8, or within 4 kbit/s) mean a policer: BBR then
//! uses their mean as its bandwidth, paces at gain 1.0 for 48 rounds, and starts over with gain cycling.
//! App-limited samples reset the sampling (they underestimate the rate). An RTO counts as the end of a round
//! with a loss.
//!
//! **Constants**: `bbr_lt_intvl_min_rtts` = 4, `bbr_lt_loss_thresh` = 50 (/256), `bbr_lt_bw_ratio` = 256/8,
//! `bbr_lt_bw_diff` = 4000/8 bytes/s, `bbr_lt_bw_max_rtts` = 48. Interval timestamps are in ms
//! (`delivered_mstamp` / 1000), as in the kernel.

use super::Mode;
use super::shared::{self, BBR_SCALE, BBR_UNIT, BW_UNIT};
use super::v1::Bbr1;
use crate::{RateSample, TcpSock};

/// Minimum rounds in a sampling interval.
pub const LT_INTVL_MIN_RTTS: u32 = 4;
/// Loss ratio (lost/delivered, 1/256) that makes an interval "lossy".
pub const LT_LOSS_THRESH: u32 = 50;
/// Two intervals are consistent if their rates differ by at most 1/8...
pub const LT_BW_RATIO: u32 = BBR_UNIT / 8;
/// ...or by at most 4 kbit/s (in bytes/s).
pub const LT_BW_DIFF: u64 = 4000 / 8;
/// Rounds the policer estimate is used before sampling again.
pub const LT_BW_MAX_RTTS: u32 = 48;

/// The estimator's state (the `lt_*` fields of `struct bbr`).
#[derive(Clone, Debug, Default)]
pub struct LtBw {
    pub is_sampling: bool,
    /// Rounds in the current interval (or, while in use, rounds of use).
    pub rtt_cnt: u32,
    pub use_bw: bool,
    /// Estimated policed rate, BW units.
    pub bw: u32,
    /// Interval start: `tp.delivered`, `delivered_mstamp` in ms, `tp.lost`.
    pub last_delivered: u32,
    pub last_stamp_ms: u32,
    pub last_lost: u32,
}

impl Bbr1 {
    /// `bbr_reset_lt_bw_sampling_interval`.
    fn reset_lt_bw_sampling_interval(&mut self, tp: &TcpSock) {
        self.lt.last_stamp_ms = (tp.delivered_mstamp.us() / 1000) as u32;
        self.lt.last_delivered = tp.delivered;
        self.lt.last_lost = tp.lost;
        self.lt.rtt_cnt = 0;
    }

    /// `bbr_reset_lt_bw_sampling`.
    pub(super) fn reset_lt_bw_sampling(&mut self, tp: &TcpSock) {
        self.lt.bw = 0;
        self.lt.use_bw = false;
        self.lt.is_sampling = false;
        self.reset_lt_bw_sampling_interval(tp);
    }

    /// `bbr_lt_bw_interval_done`: a lossy interval measured `bw`; a second consistent one confirms a policer.
    fn lt_bw_interval_done(&mut self, tp: &TcpSock, bw: u32) {
        if self.lt.bw != 0 {
            let diff = (bw as i64 - self.lt.bw as i64).unsigned_abs();
            let ratio_ok = diff * BBR_UNIT as u64 <= LT_BW_RATIO as u64 * self.lt.bw as u64;
            let abs_ok =
                shared::rate_bytes_per_sec(tp.mss, diff, BBR_UNIT, shared::PACING_MARGIN_PERCENT, false)
                    <= LT_BW_DIFF;
            if ratio_ok || abs_ok {
                self.lt.bw = ((bw as u64 + self.lt.bw as u64) >> 1) as u32;
                self.lt.use_bw = true;
                self.pacing_gain = BBR_UNIT;
                self.lt.rtt_cnt = 0;
                return;
            }
        }
        self.lt.bw = bw;
        self.reset_lt_bw_sampling_interval(tp);
    }

    /// `bbr_lt_bw_sampling`.
    pub(super) fn lt_bw_sampling(&mut self, tp: &TcpSock, rs: &RateSample) {
        if self.lt.use_bw {
            if self.mode == Mode::ProbeBw && self.round_start {
                self.lt.rtt_cnt += 1;
                if self.lt.rtt_cnt >= LT_BW_MAX_RTTS {
                    self.reset_lt_bw_sampling(tp);
                    self.reset_probe_bw_mode(tp);
                }
            }
            return;
        }
        // Start at the first loss, when a policer would have exhausted its tokens.
        if !self.lt.is_sampling {
            if rs.losses == 0 {
                return;
            }
            self.reset_lt_bw_sampling_interval(tp);
            self.lt.is_sampling = true;
        }
        if rs.is_app_limited {
            self.reset_lt_bw_sampling(tp);
            return;
        }
        if self.round_start {
            self.lt.rtt_cnt += 1;
        }
        if self.lt.rtt_cnt < LT_INTVL_MIN_RTTS {
            return;
        }
        if self.lt.rtt_cnt > 4 * LT_INTVL_MIN_RTTS {
            self.reset_lt_bw_sampling(tp);
            return;
        }
        // End the interval at a loss: the tokens are exhausted, so the rate is the policed one.
        if rs.losses == 0 {
            return;
        }
        let lost = tp.lost.wrapping_sub(self.lt.last_lost);
        let delivered = tp.delivered.wrapping_sub(self.lt.last_delivered);
        if delivered == 0 || ((lost as u64) << BBR_SCALE) < LT_LOSS_THRESH as u64 * delivered as u64 {
            return;
        }
        let t = ((tp.delivered_mstamp.us() / 1000) as u32).wrapping_sub(self.lt.last_stamp_ms);
        if (t as i32) < 1 {
            return;
        }
        if t >= u32::MAX / 1000 {
            self.reset_lt_bw_sampling(tp);
            return;
        }
        let t_us = t as u64 * 1000;
        let bw = delivered as u64 * BW_UNIT / t_us;
        self.lt_bw_interval_done(tp, bw.min(u32::MAX as u64) as u32);
    }
}
