//! RACK (RFC 8985) state as Linux keeps it (`tcp_recovery.c`, `struct tcp_rack`).
//!
//! RACK remembers the send time and end sequence of the most recently *sent* segment that has been delivered,
//! and the RTT of that delivery. A segment sent before it and still unacknowledged is lost once
//! `now - its send time ≥ rack.rtt + reo_wnd`. reo_wnd is 0 while no reordering has been seen and either the
//! connection is already in Recovery or at least `reordering` (3) segments are SACKed (the dupthresh rule);
//! otherwise min_rtt/4 × steps, at most srtt. The walk over candidates lives in the sender
//! (`detect_loss`), which owns the retransmission queue.
//!
//! Deviation: timestamps are kept in ns where Linux keeps µs (finer, never coarser). The DSACK-driven growth
//! of `reo_wnd_steps` is not modelled because the simulated receiver sends no DSACKs and the network never
//! reorders, so `steps` stays 1 as in Linux without DSACKs.

use ccfair_cc::rate::sent_after;
use ccfair_core::{Dur, Time};

use super::rtx_queue::RETRANS;

#[derive(Clone, Debug)]
pub struct Rack {
    /// Send time of the most recently sent delivered segment (`rack.mstamp`).
    pub mstamp: Time,
    /// Its end sequence (`rack.end_seq`), for ties.
    pub end_seq: u32,
    /// RTT of that delivery (`rack.rtt_us`).
    pub rtt: Dur,
    /// Set when the reference moved; a loss scan is due (`rack.advanced`).
    pub advanced: bool,
    pub reo_wnd_steps: u32,
    /// Reordering events seen (`tp->reord_seen`).
    pub reord_seen: u32,
}

impl Default for Rack {
    fn default() -> Self {
        Rack {
            mstamp: Time::ZERO,
            end_seq: 0,
            rtt: Dur::ZERO,
            advanced: false,
            reo_wnd_steps: 1,
            reord_seen: 0,
        }
    }
}

impl Rack {
    /// `tcp_rack_advance`: a segment `[.., end_seq)` with tags `flags`, sent at `xmit_time`, was delivered.
    pub fn advance(&mut self, now: Time, flags: u8, end_seq: u32, xmit_time: Time, min_rtt: Dur) {
        let rtt = now.saturating_since(xmit_time);
        if rtt < min_rtt && flags & RETRANS != 0 {
            // Ambiguous: the original, not the retransmission, may have been delivered.
            return;
        }
        self.advanced = true;
        self.rtt = rtt;
        if sent_after(xmit_time, self.mstamp, end_seq, self.end_seq) {
            self.mstamp = xmit_time;
            self.end_seq = end_seq;
        }
    }

    /// `tcp_rack_reo_wnd`.
    pub fn reo_wnd(
        &self,
        in_recovery_or_loss: bool,
        sacked_out: u32,
        reordering: u32,
        min_rtt: Dur,
        srtt: Dur,
    ) -> Dur {
        if self.reord_seen == 0 && (in_recovery_or_loss || sacked_out >= reordering) {
            return Dur::ZERO;
        }
        min_rtt.div(4).mul(self.reo_wnd_steps as u64).min(srtt)
    }

    /// `tcp_rack_skb_timeout`: time left before a segment sent at `xmit_time` counts as lost (≤ 0: lost now).
    #[inline]
    pub fn skb_timeout_ns(&self, now: Time, xmit_time: Time, reo_wnd: Dur) -> i64 {
        (self.rtt.ns() + reo_wnd.ns()) as i64 - now.saturating_since(xmit_time).ns() as i64
    }
}
