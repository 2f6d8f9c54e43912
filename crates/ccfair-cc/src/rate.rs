//! Delivery-rate sampling, as `net/ipv4/tcp_rate.c`: part of the TCP core around the algorithms, shared by
//! the simulator's sender and the scripted driver ([`crate::testing`]).
//!
//! Each transmission snapshots the connection's delivery counters in the segment; each ACK builds one sample
//! from the snapshot of the most recently sent segment it (S)ACKs: delivered = packets delivered since that
//! send, interval = max(send phase, ACK phase), invalid when shorter than min_rtt. App-limited samples are
//! flagged. The google/bbr branch's `tx_in_flight` and `lost` fields (for BBRv2/v3) are filled too. The walk
//! over (S)ACKed segments belongs to the stack, which calls [`RateState::skb_delivered`] for each.
//!
//! Deviation: times are ns internally; the sample's intervals are reported in µs like the kernel's.

use ccfair_core::Time;
use ccfair_core::seq::after;

use crate::{RateSample, TcpSock};

/// `tcp_skb_sent_after`: was (t1, seq1) sent after (t2, seq2)?
#[inline]
pub fn sent_after(t1: Time, t2: Time, seq1: u32, seq2: u32) -> bool {
    t1 > t2 || (t1 == t2 && seq1 > seq2)
}

/// Delivery-rate snapshot taken when a segment was last sent (`tcp_rate_skb_sent`, `tcp_skb_cb.tx`).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct TxSnapshot {
    pub delivered: u32,
    pub delivered_ce: u32,
    pub delivered_mstamp: Time,
    pub first_tx_mstamp: Time,
    /// Packets in flight once this segment was sent (google/bbr `tx.in_flight`).
    pub in_flight: u32,
    /// `tp->lost` when it was sent (google/bbr `tx.lost`).
    pub lost: u32,
    pub is_app_limited: bool,
    /// False once the snapshot has been used by a SACK (Linux zeroes `delivered_mstamp`).
    pub valid: bool,
}

#[derive(Clone, Debug, Default)]
pub struct RateState {
    /// Send time of the most recently (S)ACKed segment: start of the next send phase (`first_tx_mstamp`).
    pub first_tx_mstamp: Time,
    /// Last non-app-limited (or highest app-limited) sample, for `tcp_get_info`-style reporting.
    pub rate_delivered: u32,
    pub rate_interval_us: i64,
    pub rate_app_limited: bool,
}

/// Per-ACK scratch state: the chosen snapshot and the end sequence it came from.
#[derive(Clone, Debug, Default)]
pub struct RateScratch {
    pub rs: RateSample,
    /// `tp->lost` when the chosen segment was sent (google/bbr `rs->prior_lost`).
    pub prior_lost: u32,
    pub has_prior: bool,
    pub last_end_seq: u32,
    /// Send phase of the chosen snapshot, ns.
    pub snd_interval_ns: u64,
}

/// `tcp_rate_check_app_limited`: when the application has nothing left to send (less than one segment unsent;
/// nothing waits below TCP in the simulator), cwnd is not full and every lost packet was retransmitted, the
/// delivery process has a bubble: samples are app-limited until what is in flight now has been delivered.
/// Mainline calls it when the application writes; the google/bbr branch (BBRv2/v3) also calls it on every
/// ACK, which is where the simulator calls it, so a flow whose application stopped marks its samples.
#[inline]
pub fn check_app_limited(tp: &mut TcpSock, has_unsent: bool) {
    let in_flight = tp.in_flight();
    if !has_unsent && in_flight < tp.snd_cwnd && tp.lost_out <= tp.retrans_out {
        tp.app_limited = tp.delivered.wrapping_add(in_flight).max(1);
    }
}

impl RateState {
    /// `tcp_rate_skb_sent`: the snapshot for a segment sent now. `packets_out` is counted before this segment.
    #[inline]
    pub fn skb_sent(&mut self, tp: &mut TcpSock, xmit_time: Time, in_flight_after: u32) -> TxSnapshot {
        if tp.packets_out == 0 {
            // Nothing in flight: the ACK of this segment measures the network from now on.
            self.first_tx_mstamp = xmit_time;
            tp.delivered_mstamp = xmit_time;
        }
        TxSnapshot {
            delivered: tp.delivered,
            delivered_ce: tp.delivered_ce,
            delivered_mstamp: tp.delivered_mstamp,
            first_tx_mstamp: self.first_tx_mstamp,
            in_flight: in_flight_after,
            lost: tp.lost,
            is_app_limited: tp.app_limited != 0,
            valid: true,
        }
    }

    /// `tcp_rate_skb_delivered`: the segment ending at `end_seq`, last sent at `xmit_time` with snapshot `tx`,
    /// was (S)ACKed by the current ACK; `is_retrans`: it was ever retransmitted (`TCPCB_RETRANS`); `sacked`: its
    /// tags (already updated) say SACKed.
    #[inline]
    pub fn skb_delivered(
        &mut self,
        tx: &mut TxSnapshot,
        xmit_time: Time,
        end_seq: u32,
        is_retrans: bool,
        sacked: bool,
        scratch: &mut RateScratch,
    ) {
        if !tx.valid {
            return;
        }
        // Prefer the most recently sent segment (Linux tests `!rs->prior_delivered` for "nothing chosen yet").
        if scratch.rs.prior_delivered == 0
            || sent_after(xmit_time, self.first_tx_mstamp, end_seq, scratch.last_end_seq)
        {
            let rs = &mut scratch.rs;
            rs.prior_delivered_ce = tx.delivered_ce;
            rs.prior_delivered = tx.delivered;
            rs.prior_mstamp = tx.delivered_mstamp;
            rs.is_app_limited = tx.is_app_limited;
            rs.is_retrans = is_retrans;
            rs.tx_in_flight = tx.in_flight;
            scratch.prior_lost = tx.lost;
            scratch.has_prior = true;
            scratch.last_end_seq = end_seq;
            self.first_tx_mstamp = xmit_time;
            scratch.snd_interval_ns = xmit_time.saturating_since(tx.first_tx_mstamp).ns();
        }
        // A SACKed segment's snapshot must not be used again when it is cumulatively acknowledged.
        if sacked {
            tx.valid = false;
        }
    }

    /// `tcp_rate_gen`: completes the sample after the ACK's accounting. `min_rtt_us` is `tcp_min_rtt`.
    #[inline]
    pub fn generate(
        &mut self,
        tp: &mut TcpSock,
        now: Time,
        delivered: u32,
        lost: u32,
        min_rtt_us: u32,
        scratch: &mut RateScratch,
    ) {
        // The app-limited bubble is gone once everything sent during it has been delivered.
        if tp.app_limited != 0 && after(tp.delivered, tp.app_limited) {
            tp.app_limited = 0;
        }
        if delivered > 0 {
            tp.delivered_mstamp = now;
        }
        let rs = &mut scratch.rs;
        rs.acked_sacked = delivered;
        rs.losses = lost;
        if !scratch.has_prior {
            rs.delivered = -1;
            rs.interval_us = -1;
            return;
        }
        rs.delivered = tp.delivered.wrapping_sub(rs.prior_delivered) as i32;
        // Losses since the sampled segment was sent, counted after this ACK's own loss detection (the google/bbr
        // branch takes `tp->lost - rs->prior_lost` here, in tcp_rate_gen).
        rs.lost = tp.lost.wrapping_sub(scratch.prior_lost);
        rs.delivered_ce = tp.delivered_ce.wrapping_sub(rs.prior_delivered_ce) as i32;
        let snd_us = (scratch.snd_interval_ns / 1000) as i64;
        let ack_us = (now.saturating_since(rs.prior_mstamp).ns() / 1000) as i64;
        rs.interval_us = snd_us.max(ack_us);
        rs.snd_interval_us = snd_us;
        rs.rcv_interval_us = ack_us;
        if rs.interval_us < min_rtt_us as i64 {
            rs.interval_us = -1;
            return;
        }
        if !rs.is_app_limited
            || rs.delivered as i64 * self.rate_interval_us >= self.rate_delivered as i64 * rs.interval_us
        {
            self.rate_delivered = rs.delivered as u32;
            self.rate_interval_us = rs.interval_us;
            self.rate_app_limited = rs.is_app_limited;
        }
    }
}
