//! DCTCP (RFC 8257) as Linux's `tcp_dctcp.c`.
//!
//! Reno growth; an EWMA α of the fraction of CE-marked packets, updated once per window (when snd_una passes
//! the snd_nxt of the previous update) with gain g = 1/2^`shift_g`; on ECE the stack enters CWR and DCTCP's
//! ssthresh is cwnd·(1 − α/2), reached over one RTT by PRR; on loss (Recovery or RTO) it halves like Reno.
//! The receiver of a DCTCP connection also runs DCTCP and echoes each packet's CE state
//! (`dctcp_ece_ack_update`, in the simulator's receiver, selected by `CcFlags::dctcp_echo`).
//!
//! Constants (kernel units): α in [0, 1024] (`DCTCP_MAX_ALPHA`), initialised to `dctcp_alpha_on_init` = 1024
//! (α = 1, the conservative start of RFC 8257 §4.3); `dctcp_shift_g` = 4 (g = 1/16, RFC 8257 §4.2's
//! recommendation); counts in packets (`tp->delivered`, `tp->delivered_ce`), not bytes.
//! Deviations: PLB (protective load balancing, a multi-path feature) is not modelled: one path only. Linux
//! swaps in plain Reno ("dctcp-reno") when ECN cannot be negotiated; the simulator always negotiates ECN for
//! algorithms that need it, so that fallback never arises and is not modelled.

use ccfair_core::{FieldError, ParamDoc};
use serde::{Deserialize, Serialize};

use crate::{AckEventFlags, CaEvent, CaState, CcFlags, CcVars, CongestionControl, TcpSock, reno};

/// `DCTCP_MAX_ALPHA`: α = 1.
const MAX_ALPHA: u32 = 1024;

/// Module parameters of `tcp_dctcp.c`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DctcpParams {
    /// `dctcp_shift_g`: g = 1/2^shift_g.
    pub shift_g: u32,
    /// `dctcp_alpha_on_init`, in 1/1024.
    pub alpha_on_init: u32,
}

impl Default for DctcpParams {
    fn default() -> Self {
        DctcpParams {
            shift_g: 4,
            alpha_on_init: MAX_ALPHA,
        }
    }
}

pub const PARAMS: &[ParamDoc] = &[
    ParamDoc {
        name: "shift_g",
        allowed: "0..=10",
        doc: "EWMA gain g = 1/2^shift_g (kernel 4: g = 1/16)",
    },
    ParamDoc {
        name: "alpha_on_init",
        allowed: "0..=1024",
        doc: "initial alpha in 1/1024 (kernel 1024: alpha = 1)",
    },
];

impl DctcpParams {
    pub fn validate(&self) -> Result<(), FieldError> {
        if self.shift_g > 10 {
            return FieldError::err("shift_g", "must be in 0..=10");
        }
        if self.alpha_on_init > MAX_ALPHA {
            return FieldError::err("alpha_on_init", "must be in 0..=1024");
        }
        Ok(())
    }
}

pub struct Dctcp {
    params: DctcpParams,
    alpha: u32,
    next_seq: u32,
    old_delivered: u32,
    old_delivered_ce: u32,
    loss_cwnd: u32,
}

impl Dctcp {
    pub fn new(params: DctcpParams) -> Dctcp {
        Dctcp {
            alpha: params.alpha_on_init.min(MAX_ALPHA),
            params,
            next_seq: 0,
            old_delivered: 0,
            old_delivered_ce: 0,
            loss_cwnd: 0,
        }
    }

    /// α in [0, 1].
    pub fn alpha(&self) -> f64 {
        self.alpha as f64 / MAX_ALPHA as f64
    }

    /// `dctcp_reset`: start a new observation window.
    fn reset(&mut self, tp: &TcpSock) {
        self.next_seq = tp.snd_nxt;
        self.old_delivered = tp.delivered;
        self.old_delivered_ce = tp.delivered_ce;
    }

    /// `dctcp_react_to_loss`: halve, like Reno.
    fn react_to_loss(&mut self, tp: &mut TcpSock) {
        self.loss_cwnd = tp.snd_cwnd;
        tp.snd_ssthresh = (tp.snd_cwnd >> 1).max(2);
    }
}

impl CongestionControl for Dctcp {
    fn name(&self) -> &'static str {
        DctcpParams::NAME
    }

    fn flags(&self) -> CcFlags {
        CcFlags {
            needs_ecn: true,
            dctcp_echo: true,
            ..CcFlags::default()
        }
    }

    fn init(&mut self, tp: &mut TcpSock) {
        self.alpha = self.params.alpha_on_init.min(MAX_ALPHA);
        self.loss_cwnd = 0;
        self.reset(tp);
    }

    /// `dctcp_ssthresh`: cwnd × (1 − α/2), at least 2.
    fn ssthresh(&mut self, tp: &mut TcpSock) -> u32 {
        self.loss_cwnd = tp.snd_cwnd;
        let cut = ((tp.snd_cwnd as u64 * self.alpha as u64) >> 11) as u32;
        (tp.snd_cwnd - cut).max(2)
    }

    fn cong_avoid(&mut self, tp: &mut TcpSock, acked: u32) {
        reno::cong_avoid(tp, acked);
    }

    /// `dctcp_update_alpha`: once per window, α ← α − α·g + g·(marked/delivered).
    fn in_ack_event(&mut self, tp: &mut TcpSock, _flags: AckEventFlags) {
        if tp.snd_una < self.next_seq {
            return;
        }
        let delivered = tp.delivered.wrapping_sub(self.old_delivered);
        let mut delivered_ce = tp.delivered_ce.wrapping_sub(self.old_delivered_ce);
        let mut alpha = self.alpha;
        // min_not_zero(alpha, alpha >> g): once the decrement rounds to 0, alpha falls straight to 0.
        let dec = alpha >> self.params.shift_g;
        alpha -= if dec == 0 { alpha } else { dec };
        if delivered_ce > 0 {
            delivered_ce <<= 10 - self.params.shift_g;
            delivered_ce /= delivered.max(1);
            alpha = (alpha + delivered_ce).min(MAX_ALPHA);
        }
        self.alpha = alpha;
        self.reset(tp);
    }

    fn set_state(&mut self, tp: &mut TcpSock, new_state: CaState) {
        if new_state == CaState::Recovery && new_state != tp.ca_state {
            self.react_to_loss(tp);
        }
    }

    fn cwnd_event(&mut self, tp: &mut TcpSock, ev: CaEvent) {
        // The receiver-side CE events are handled by the simulator's receiver; only the RTO matters here.
        if ev == CaEvent::Loss {
            self.react_to_loss(tp);
        }
    }

    fn undo_cwnd(&mut self, tp: &mut TcpSock) -> u32 {
        tp.snd_cwnd.max(self.loss_cwnd)
    }

    /// `aux` = α (0..1).
    fn vars(&self) -> CcVars {
        CcVars {
            aux: self.alpha(),
            ..CcVars::default()
        }
    }
}
