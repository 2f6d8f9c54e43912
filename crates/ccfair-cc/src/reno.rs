//! Reno (NewReno) as Linux's built-in `reno` module and the helpers every loss-based algorithm shares
//! (`net/ipv4/tcp_cong.c`).
//!
//! - Slow start while cwnd < ssthresh: cwnd grows by the packets each ACK acknowledges, with no ABC cap
//!   (a stretch ACK for N packets adds N), stopping at ssthresh; the rest of the ACK feeds additive increase.
//! - Additive increase: a credit counter gains the ACKed packets; every `w` credits add one packet (Reno uses
//!   w = cwnd, i.e. one packet per window per RTT).
//! - ssthresh = max(cwnd / 2, 2): Linux halves cwnd, not the flight size of RFC 5681 eq. (4).
//! - undo: max(cwnd, prior_cwnd).
//!
//! Growth happens only when the sender was cwnd-limited in the current window (`tcp_is_cwnd_limited`).
//! The reduction itself (PRR during recovery, cwnd = 1 after an RTO) is the stack's job, as in Linux.

use ccfair_core::FieldError;
use serde::{Deserialize, Serialize};

use crate::{CongestionControl, TcpSock};

/// Parameters of Reno: none.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RenoParams {}

impl RenoParams {
    pub fn validate(&self) -> Result<(), FieldError> {
        Ok(())
    }
}

/// `tcp_slow_start`: grow cwnd by `acked`, capped at ssthresh; returns the ACKed packets left over.
pub fn slow_start(tp: &mut TcpSock, acked: u32) -> u32 {
    let cwnd = tp.snd_cwnd.saturating_add(acked).min(tp.snd_ssthresh);
    let leftover = acked - (cwnd - tp.snd_cwnd).min(acked);
    tp.snd_cwnd = cwnd.min(tp.snd_cwnd_clamp);
    leftover
}

/// `tcp_cong_avoid_ai`: +1 packet per `w` packets ACKed, carrying the remainder.
pub fn cong_avoid_ai(tp: &mut TcpSock, w: u32, acked: u32) {
    let w = w.max(1);
    // If credits were accrued at a higher w, apply them gently: one increment, then start over.
    if tp.snd_cwnd_cnt >= w {
        tp.snd_cwnd_cnt = 0;
        tp.snd_cwnd = tp.snd_cwnd.saturating_add(1);
    }
    tp.snd_cwnd_cnt = tp.snd_cwnd_cnt.saturating_add(acked);
    if tp.snd_cwnd_cnt >= w {
        let delta = tp.snd_cwnd_cnt / w;
        tp.snd_cwnd_cnt -= delta * w;
        tp.snd_cwnd = tp.snd_cwnd.saturating_add(delta);
    }
    tp.snd_cwnd = tp.snd_cwnd.min(tp.snd_cwnd_clamp);
}

/// `tcp_reno_ssthresh`.
pub fn ssthresh(tp: &TcpSock) -> u32 {
    (tp.snd_cwnd >> 1).max(2)
}

/// `tcp_reno_undo_cwnd`.
pub fn undo_cwnd(tp: &TcpSock) -> u32 {
    tp.snd_cwnd.max(tp.prior_cwnd)
}

/// `tcp_reno_cong_avoid`.
pub fn cong_avoid(tp: &mut TcpSock, mut acked: u32) {
    if !tp.is_cwnd_limited {
        return;
    }
    if tp.in_slow_start() {
        acked = slow_start(tp, acked);
        if acked == 0 {
            return;
        }
    }
    let w = tp.snd_cwnd;
    cong_avoid_ai(tp, w, acked);
}

/// The `reno` module. It has no parameters and no per-connection state.
#[derive(Debug, Default, Clone)]
pub struct Reno;

impl CongestionControl for Reno {
    fn name(&self) -> &'static str {
        RenoParams::NAME
    }
    fn ssthresh(&mut self, tp: &mut TcpSock) -> u32 {
        ssthresh(tp)
    }
    fn cong_avoid(&mut self, tp: &mut TcpSock, acked: u32) {
        cong_avoid(tp, acked)
    }
}
