//! RTT estimation and the retransmission timeout, as `tcp_rtt_estimator` / `tcp_set_rto` /
//! `tcp_update_rtt_min` in `tcp_input.c`.
//!
//! - srtt is kept ×8 and mdev ×4 in µs (Jacobson/Karels with Linux's twist: when a sample is below srtt the
//!   deviation only moves by 1/8 of the usual gain, so RTO does not grow when RTT falls).
//! - rttvar = max(largest mdev seen this round, RTO_MIN); it decays by a quarter of the gap once per RTT
//!   (when snd_una passes `rtt_seq`).
//! - RTO = srtt + rttvar, rounded up to whole jiffies (1 ms at HZ=1000), at most 120 s; so RTO ≥ srtt + 200 ms.
//! - min_rtt: a 300 s windowed minimum, clocked in jiffies.
//!
//! No deviation from Linux.

use ccfair_cc::stack::MinRttFilter;
use ccfair_core::Time;

use super::{RTO_MAX_MS, RTO_MIN_MS, TIMEOUT_INIT_MS};

#[derive(Clone, Debug)]
pub struct RttEstimator {
    /// Smoothed RTT in µs, ×8 (`tp->srtt_us`); 0 before the first sample.
    pub srtt_us8: u32,
    mdev_us: u32,
    mdev_max_us: u32,
    rttvar_us: u32,
    rtt_seq: u32,
    /// Current RTO in jiffies/ms, backoff included (`icsk_rto`).
    pub rto_ms: u32,
    /// Consecutive backoffs (`icsk_backoff`).
    pub backoff: u32,
    min_rtt: MinRttFilter,
}

impl Default for RttEstimator {
    fn default() -> Self {
        Self::new()
    }
}

impl RttEstimator {
    pub fn new() -> RttEstimator {
        RttEstimator {
            srtt_us8: 0,
            mdev_us: 0,
            mdev_max_us: 0,
            rttvar_us: 0,
            rtt_seq: 0,
            rto_ms: TIMEOUT_INIT_MS,
            backoff: 0,
            min_rtt: MinRttFilter::default(),
        }
    }

    /// Smoothed RTT in µs (0 before the first sample).
    #[inline]
    pub fn srtt_us(&self) -> u32 {
        self.srtt_us8 >> 3
    }

    /// `tcp_min_rtt`, µs (`u32::MAX` before the first sample).
    #[inline]
    pub fn min_rtt_us(&self) -> u32 {
        self.min_rtt.get_us()
    }

    /// `tcp_update_rtt_min`: `maybe_delayed` skips suspected delayed-ACK samples above the current minimum.
    pub fn update_min(&mut self, now: Time, rtt_us: u32, maybe_delayed: bool) {
        self.min_rtt.update(now, rtt_us, maybe_delayed);
    }

    /// `tcp_rtt_estimator` followed by `tcp_set_rto`; `snd_una`/`snd_nxt` pace the rttvar decay.
    pub fn sample(&mut self, m_us: u32, snd_una: u32, snd_nxt: u32) {
        let mut m = m_us as i64;
        let mut srtt = self.srtt_us8 as i64;
        if srtt != 0 {
            m -= srtt >> 3; // error in the estimate
            srtt += m; // srtt = 7/8 srtt + 1/8 sample
            if m < 0 {
                m = -m;
                m -= (self.mdev_us >> 2) as i64;
                // RTT falling: use a finer gain so RTO does not grow (and does not fall too fast).
                if m > 0 {
                    m >>= 3;
                }
            } else {
                m -= (self.mdev_us >> 2) as i64;
            }
            self.mdev_us = (self.mdev_us as i64 + m) as u32; // mdev = 3/4 mdev + 1/4 |err|
            if self.mdev_us > self.mdev_max_us {
                self.mdev_max_us = self.mdev_us;
                if self.mdev_max_us > self.rttvar_us {
                    self.rttvar_us = self.mdev_max_us;
                }
            }
            if snd_una > self.rtt_seq {
                if self.mdev_max_us < self.rttvar_us {
                    self.rttvar_us -= (self.rttvar_us - self.mdev_max_us) >> 2;
                }
                self.rtt_seq = snd_nxt;
                self.mdev_max_us = RTO_MIN_MS * 1000;
            }
        } else {
            srtt = m << 3;
            self.mdev_us = (m << 1) as u32; // so that RTO = 3 * RTT at first
            self.rttvar_us = self.mdev_us.max(RTO_MIN_MS * 1000);
            self.mdev_max_us = self.rttvar_us;
            self.rtt_seq = snd_nxt;
        }
        self.srtt_us8 = (srtt.max(1)) as u32;
        self.set_rto();
    }

    /// `tcp_set_rto` + `tcp_bound_rto`: srtt + rttvar in whole jiffies, capped at 120 s; clears the backoff.
    fn set_rto(&mut self) {
        let us = (self.srtt_us8 >> 3) as u64 + self.rttvar_us as u64;
        self.rto_ms = (us.div_ceil(1000) as u32).min(RTO_MAX_MS);
    }

    /// Doubles the RTO after a timeout (`icsk_rto << 1`, capped at 120 s).
    pub fn back_off(&mut self) {
        self.backoff += 1;
        self.rto_ms = (self.rto_ms.saturating_mul(2)).min(RTO_MAX_MS);
    }

    /// A valid RTT sample resets the backoff (RFC 6298).
    pub fn clear_backoff(&mut self) {
        self.backoff = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_sample_gives_three_rtt_or_min_rto() {
        let mut r = RttEstimator::new();
        r.sample(100_000, 1, 10); // 100 ms
        assert_eq!(r.srtt_us(), 100_000);
        // mdev = 2m = 200 ms ≥ RTO_MIN → rto = 100 + 200 ms.
        assert_eq!(r.rto_ms, 300);
        let mut r = RttEstimator::new();
        r.sample(10_000, 1, 10); // 10 ms: rttvar = max(20 ms, 200 ms)
        assert_eq!(r.rto_ms, 210);
    }

    #[test]
    fn constant_rtt_converges_to_srtt_plus_rto_min() {
        let mut r = RttEstimator::new();
        for i in 0..200u32 {
            r.sample(50_000, i * 10 + 1, i * 10 + 10);
        }
        assert_eq!(r.srtt_us(), 50_000);
        assert_eq!(r.rto_ms, 250);
        r.back_off();
        r.back_off();
        assert_eq!(r.rto_ms, 1000);
        assert_eq!(r.backoff, 2);
    }

    #[test]
    fn min_rtt_ignores_delayed_ack_samples_above_the_minimum() {
        let mut r = RttEstimator::new();
        r.update_min(Time::from_ns(0), 20_000, false);
        r.update_min(Time::from_ns(1_000_000), 30_000, true);
        assert_eq!(r.min_rtt_us(), 20_000);
        r.update_min(Time::from_ns(2_000_000), 15_000, true);
        assert_eq!(r.min_rtt_us(), 15_000);
    }
}
