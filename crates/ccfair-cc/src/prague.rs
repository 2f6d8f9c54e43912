//! TCP Prague v0.7, the L4S scalable congestion control (L4STeam/linux `net/ipv4/tcp_prague.c`, MODULE_VERSION
//! "0.7", commit 893e1479).
//!
//! DCTCP's idea made safe for the Internet (RFC 9331 Appendix A): ECT(1) on every packet, Accurate ECN
//! feedback, and per ACK (`cong_control`):
//! - a fractional window `frac_cwnd` (20 fractional bits) grows by one MTU-equivalent per RTT for the ACKed
//!   packets that were *not* CE-marked (so the increase over a round is ∝ (1 − p)/p) — scaled down to one per
//!   25 ms (`prague_rtt_target`) once the flow is RTT-independent (4 rounds after slow start) and its RTT is
//!   below 25 ms; below 4 MTUs of window (after CE was seen) it switches to *rate mode*, where the pacing rate
//!   grows by one MTU per virtual RTT max(25 ms, srtt) and the window follows the rate;
//! - α, the EWMA of the CE fraction (gain 1/16, 24 bits, stored ×16 to keep the remainder), updated once per
//!   round (and, when RTT-independent, at most every 25 ms), starting at 0 and halving `frac_cwnd` at the
//!   first CE mark ever (`prague_alpha_mode` 0);
//! - on entering CWR (the stack does, on the marks an ACK reports): frac_cwnd × (1 − α/2) (or the rate, in rate
//!   mode), at most once per 25 ms when RTT-independent; on loss (Recovery or RTO): halve, and no increase
//!   until the connection is Open again;
//! - the socket cwnd steps ±1 per ACK toward ⌈frac_cwnd⌉ (at least 2), a decrease also setting ssthresh;
//! - pacing at 100 % of the window rate (200 % while cwnd < ssthresh/2), ±3 % around the rate in rate mode
//!   (+ in the first half of each virtual RTT after an α update, − in the second), floor 100 kbit/s; TSO bursts
//!   of at most 2^-12 s (~244 µs) at that rate (`prague_burst_shift`).
//!
//! The module falls back to plain Reno ("prague-reno") when ECN cannot be negotiated; the simulator always
//! negotiates ECN for algorithms that need it, so that fallback never arises and is not modelled.
//!
//! Constants are the module's: `CWND_UNIT` 20, `PRAGUE_ALPHA_BITS` 24, `PRAGUE_SHIFT_G` 4, `RTT_TARGET` 25 ms,
//! `DEFAULT_RTT_TRANSITION` 4, `MAX_SCALED_RTT` 100 ms, `MINIMUM_RATE` 12 500 B/s, `RATE_OFFSET` 4/128,
//! `MTU_SYS` 1500, `HSRTT_SHIFT` 7, `RTT2SEC_SHIFT` 23 (the module's 2^20 ≈ 10^6 approximation kept), and RTTs
//! in the kernel's ×8 µs unit internally.
//!
//! Deviations: the MSS reduction below ~1 Mbit/s (`prague_pacing_rate_to_max_mtu`/`tcp_sync_mss`, down to a
//! 150-byte MSS) is not modelled — the simulator's segments are fixed-size — so Prague's window floor of 2
//! segments is reached with full-size packets; srtt comes from the stack in whole µs, so the ×8 value has its
//! lowest three bits zero.

use ccfair_core::{FieldError, ParamDoc};
use serde::{Deserialize, Serialize};

use crate::{CaEvent, CaState, CcFlags, CcVars, CongestionControl, RateSample, TcpSock, reno};

const MIN_CWND_RTT: u32 = 2;
const MINIMUM_RATE: u64 = 12_500;
const PRAGUE_ALPHA_BITS: u32 = 24;
const PRAGUE_MAX_ALPHA: u64 = 1 << PRAGUE_ALPHA_BITS;
const CWND_UNIT: u32 = 20;
const ONE_CWND: u64 = 1 << CWND_UNIT;
const PRAGUE_SHIFT_G: u32 = 4;
const MAX_SCALED_RTT_US: u64 = 100_000;
const MTU_SYS: u64 = 1500;
const RATE_OFFSET: u64 = 4;
const OFFSET_UNIT: u32 = 7;
const HSRTT_SHIFT: u32 = 7;
const RTT2SEC_SHIFT: u32 = 23;
/// IPv4 + TCP + timestamp option bytes: `tcp_mss_to_mtu` adds them to the MSS.
const HEADER_BYTES: u64 = 52;

/// Module parameters of `tcp_prague.c` v0.7.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PragueParams {
    /// `prague_rtt_target`: below this RTT the flow behaves as if it had it (µs).
    pub rtt_target_us: u64,
    /// `prague_rtt_transition`: rounds after slow start before the flow becomes RTT-independent.
    pub rtt_transition: u32,
    /// `prague_alpha_mode`: 0 = α starts at 0 and the window halves at the first CE; 1 = α starts at 1.
    pub alpha_mode: u8,
    /// `prague_cwnd_mode`: 0 = fractional window only, 1 = rate-based only, 2 = switch at `cwnd_transit`.
    pub cwnd_mode: u8,
    /// `prague_cwnd_transit`: the switch point, in 1500-byte MTUs.
    pub cwnd_transit: u32,
    /// `prague_burst_shift`: TSO bursts last at most 2^-burst_shift s at the pacing rate.
    pub burst_shift: u32,
    /// `prague_max_tso_segs`: cap on the TSO burst (0 = none).
    pub max_tso_segs: u32,
}

impl Default for PragueParams {
    fn default() -> Self {
        PragueParams {
            rtt_target_us: 25_000,
            rtt_transition: 4,
            alpha_mode: 0,
            cwnd_mode: 2,
            cwnd_transit: 4,
            burst_shift: 12,
            max_tso_segs: 0,
        }
    }
}

pub const PARAMS: &[ParamDoc] = &[
    ParamDoc {
        name: "rtt_target_us",
        allowed: "1..=1000000",
        doc: "RTT-independence target, us (module 25 ms)",
    },
    ParamDoc {
        name: "rtt_transition",
        allowed: ">= 0",
        doc: "rounds after slow start before RTT independence (4)",
    },
    ParamDoc {
        name: "alpha_mode",
        allowed: "0 | 1",
        doc: "0: alpha starts at 0, halve at the first mark; 1: alpha starts at 1",
    },
    ParamDoc {
        name: "cwnd_mode",
        allowed: "0 | 1 | 2",
        doc: "0 fractional window, 1 rate based, 2 switch at cwnd_transit",
    },
    ParamDoc {
        name: "cwnd_transit",
        allowed: ">= 1",
        doc: "window/rate mode switch point, in 1500-byte MTUs (4)",
    },
    ParamDoc {
        name: "burst_shift",
        allowed: "0..=20",
        doc: "TSO bursts of at most 2^-burst_shift s at the pacing rate (12)",
    },
    ParamDoc {
        name: "max_tso_segs",
        allowed: ">= 0",
        doc: "cap on TSO segments per burst, 0 = none",
    },
];

impl PragueParams {
    pub fn validate(&self) -> Result<(), FieldError> {
        let err = FieldError::err;
        if !(1..=1_000_000).contains(&self.rtt_target_us) {
            return err("rtt_target_us", "must be in 1..=1000000");
        }
        if self.alpha_mode > 1 {
            return err("alpha_mode", "must be 0 or 1");
        }
        if self.cwnd_mode > 2 {
            return err("cwnd_mode", "must be 0, 1 or 2");
        }
        if self.cwnd_transit == 0 {
            return err("cwnd_transit", "must be at least 1");
        }
        if self.burst_shift > 20 {
            return err("burst_shift", "must be in 0..=20");
        }
        Ok(())
    }
}

/// (a · b) >> shift with a 128-bit product (`mul_u64_u64_shr`).
#[inline]
fn mul_shr(a: u64, b: u64, shift: u32) -> u64 {
    ((a as u128 * b as u128) >> shift) as u64
}

#[inline]
fn div_round_closest(a: u64, b: u64) -> u64 {
    (a + b / 2) / b
}

pub struct Prague {
    p: PragueParams,
    cwr_stamp_us: u64,
    alpha_stamp_us: u64,
    upscaled_alpha: u64,
    ai_ack_increase: u64,
    hsrtt_us: u64,
    frac_cwnd: u64,
    rate_bytes: u64,
    loss_rate_bytes: u64,
    loss_cwnd: u32,
    max_tso_burst: u32,
    old_delivered: u32,
    old_delivered_ce: u32,
    next_seq: u32,
    round: u32,
    saw_ce: bool,
    cwnd_mode_transit: bool,
    /// false = fractional-window mode, true = rate mode.
    rate_mode: bool,
    in_loss: bool,
}

impl Prague {
    pub fn new(p: PragueParams) -> Prague {
        Prague {
            p,
            cwr_stamp_us: 0,
            alpha_stamp_us: 0,
            upscaled_alpha: 0,
            ai_ack_increase: ONE_CWND,
            hsrtt_us: 0,
            frac_cwnd: 0,
            rate_bytes: MINIMUM_RATE,
            loss_rate_bytes: 0,
            loss_cwnd: 0,
            max_tso_burst: 1,
            old_delivered: 0,
            old_delivered_ce: 0,
            next_seq: 0,
            round: 0,
            saw_ce: false,
            cwnd_mode_transit: false,
            rate_mode: false,
            in_loss: false,
        }
    }

    /// α in [0, 1].
    pub fn alpha(&self) -> f64 {
        (self.upscaled_alpha >> PRAGUE_SHIFT_G) as f64 / PRAGUE_MAX_ALPHA as f64
    }

    /// The fractional window in packets.
    pub fn frac_cwnd(&self) -> f64 {
        self.frac_cwnd as f64 / ONE_CWND as f64
    }

    /// srtt in the kernel's ×8 µs unit.
    fn srtt8(tp: &TcpSock) -> u64 {
        (tp.srtt_us as u64) << 3
    }

    fn mtu(tp: &TcpSock) -> u64 {
        tp.mss as u64 + HEADER_BYTES
    }

    fn target_rtt8(&self) -> u64 {
        self.p.rtt_target_us << 3
    }

    fn is_rtt_indep(&self, tp: &TcpSock) -> bool {
        !tp.in_slow_start() && self.round >= self.p.rtt_transition
    }

    fn in_rate_mode(&self, tp: &TcpSock) -> bool {
        self.is_rtt_indep(tp) && self.rate_mode
    }

    fn elapsed_since_alpha_update_us(&self, tp: &TcpSock) -> u64 {
        tp.now.us().saturating_sub(self.alpha_stamp_us)
    }

    fn should_update_ewma(&self, tp: &TcpSock) -> bool {
        tp.snd_una >= self.next_seq
            && (!self.is_rtt_indep(tp) || self.p.rtt_target_us <= self.elapsed_since_alpha_update_us(tp))
    }

    /// `prague_virtual_rtt`: max(target, srtt), ×8 µs.
    fn virtual_rtt8(&self, tp: &TcpSock) -> u64 {
        self.target_rtt8().max(Self::srtt8(tp))
    }

    fn frac_cwnd_to_snd_cwnd(&self, tp: &TcpSock) -> u32 {
        let c = ((self.frac_cwnd + (ONE_CWND - 1)) >> CWND_UNIT).min(u32::MAX as u64) as u32;
        c.max(MIN_CWND_RTT).min(tp.snd_cwnd_clamp)
    }

    fn pacing_rate_to_frac_cwnd(&self, tp: &TcpSock) -> u64 {
        let rtt = match self.hsrtt_us >> HSRTT_SHIFT {
            0 => Self::srtt8(tp),
            r => r,
        };
        mul_shr(self.rate_bytes, rtt, RTT2SEC_SHIFT - CWND_UNIT).div_ceil(Self::mtu(tp))
    }

    fn frac_cwnd_to_pacing_rate(&self, tp: &TcpSock) -> u64 {
        let per_window = (1_000_000u64 << 3) * Self::mtu(tp);
        // Without an RTT sample the kernel leaves the product undivided.
        let rate = per_window.checked_div(Self::srtt8(tp)).unwrap_or(per_window);
        mul_shr(rate, self.frac_cwnd, CWND_UNIT).max(MINIMUM_RATE)
    }

    /// `prague_ai_ack_increase`: ×(srtt/target)² below the target once RTT-independent.
    fn update_ai_ack_increase(&mut self, tp: &TcpSock) {
        let rtt = Self::srtt8(tp);
        let target = self.target_rtt8();
        self.ai_ack_increase = if self.round < self.p.rtt_transition
            || rtt == 0
            || rtt > (MAX_SCALED_RTT_US << 3)
            || rtt >= target
        {
            ONE_CWND
        } else {
            div_round_closest((rtt << CWND_UNIT) * rtt, target * target)
        };
    }

    fn update_pacing_rate(&mut self, tp: &mut TcpSock) {
        let mut rate = if self.in_rate_mode(tp) {
            let offset = mul_shr(RATE_OFFSET, self.rate_bytes, OFFSET_UNIT);
            let half_virtual_rtt_elapsed =
                (self.virtual_rtt8(tp) >> 4) <= self.elapsed_since_alpha_update_us(tp);
            if half_virtual_rtt_elapsed {
                self.rate_bytes - offset
            } else {
                self.rate_bytes + offset
            }
        } else {
            let max_inflight = ((self.frac_cwnd >> CWND_UNIT) as u32).max(tp.in_flight()) as u64;
            let per_packet = (1_000_000u64 << 3) * Self::mtu(tp);
            let r = per_packet.checked_div(Self::srtt8(tp)).unwrap_or(per_packet);
            let r = (r * max_inflight).max(MINIMUM_RATE);
            self.rate_bytes = r;
            r
        };
        if tp.snd_cwnd < tp.snd_ssthresh / 2 {
            rate <<= 1;
        }
        rate = rate.min(tp.max_pacing_rate);
        let burst = rate / Self::mtu(tp);
        self.max_tso_burst = ((burst >> self.p.burst_shift) as u32).max(1);
        tp.pacing_rate = rate;
    }

    fn new_round(&mut self, tp: &TcpSock) {
        self.next_seq = tp.snd_nxt;
        self.old_delivered_ce = tp.delivered_ce;
        self.old_delivered = tp.delivered;
        if !tp.in_slow_start() {
            self.round = self.round.wrapping_add(1);
            if self.round == 0 {
                self.round = self.p.rtt_transition;
            }
        }
        self.update_ai_ack_increase(tp);
    }

    /// `prague_update_alpha` (without the MSS reduction, see the header).
    fn update_alpha(&mut self, tp: &TcpSock) {
        if self.saw_ce {
            let mut ecn_segs = tp.delivered_ce.wrapping_sub(self.old_delivered_ce) as u64;
            if ecn_segs > 0 {
                let acked = tp.delivered.wrapping_sub(self.old_delivered).max(1) as u64;
                ecn_segs = (ecn_segs << PRAGUE_ALPHA_BITS) / acked;
            }
            let alpha = self.upscaled_alpha - (self.upscaled_alpha >> PRAGUE_SHIFT_G) + ecn_segs;
            self.alpha_stamp_us = tp.now.us();
            self.upscaled_alpha = alpha.min(PRAGUE_MAX_ALPHA << PRAGUE_SHIFT_G);
        }
        self.hsrtt_us = self.hsrtt_us + Self::srtt8(tp) - (self.hsrtt_us >> HSRTT_SHIFT);
        self.new_round(tp);
    }

    fn update_cwnd(&mut self, tp: &mut TcpSock, rs: &RateSample) {
        let mut acked = rs.acked_sacked as i64;
        if rs.ece_delta > 0 {
            if !self.saw_ce && self.p.alpha_mode == 0 {
                self.frac_cwnd = (self.frac_cwnd + 1) >> 1;
            }
            self.saw_ce = true;
            acked -= rs.ece_delta as i64;
        }
        if acked > 0 && !self.in_loss && tp.is_cwnd_limited && !self.increase(tp, acked as u32) {
            return;
        }
        // Step the socket's cwnd by one toward ⌈frac_cwnd⌉.
        let new_cwnd = self.frac_cwnd_to_snd_cwnd(tp);
        if tp.snd_cwnd > new_cwnd {
            tp.snd_cwnd -= 1;
            tp.snd_ssthresh = tp.snd_cwnd;
            self.update_ai_ack_increase(tp);
        } else if tp.snd_cwnd < new_cwnd {
            tp.snd_cwnd += 1;
            self.update_ai_ack_increase(tp);
        }
    }

    /// The increase part of `prague_update_cwnd`; false when slow start consumed every ACKed packet (the
    /// kernel returns early then, without the ±1 step).
    fn increase(&mut self, tp: &mut TcpSock, mut acked: u32) -> bool {
        if tp.in_slow_start() {
            acked = reno::slow_start(tp, acked);
            self.frac_cwnd = (tp.snd_cwnd as u64) << CWND_UNIT;
            if acked == 0 {
                self.update_ai_ack_increase(tp);
                return false;
            }
        }
        let acked = acked as u64;
        if self.in_rate_mode(tp) {
            let mtu_used = Self::mtu(tp);
            let vrtt = self.virtual_rtt8(tp);
            let increase = ((acked * MTU_SYS) << RTT2SEC_SHIFT) / vrtt;
            let divisor = mtu_used << RTT2SEC_SHIFT;
            let new_cwnd = ((self.rate_bytes as u128 * vrtt as u128).div_ceil(divisor as u128)) as u64;
            if new_cwnd > 0 {
                self.rate_bytes += div_round_closest(increase, new_cwnd);
            }
            self.frac_cwnd = (self.frac_cwnd + acked).max(self.pacing_rate_to_frac_cwnd(tp));
        } else {
            let mut increase = acked * self.ai_ack_increase;
            if self.frac_cwnd > 0 {
                increase <<= CWND_UNIT;
                increase = div_round_closest(increase, self.frac_cwnd);
            }
            increase = increase * MTU_SYS / Self::mtu(tp);
            self.frac_cwnd += acked.max(increase);
            let rate = self.frac_cwnd_to_pacing_rate(tp);
            self.rate_bytes = (self.rate_bytes + acked).max(rate);
        }
        true
    }

    fn enter_loss(&mut self, tp: &TcpSock) {
        self.loss_cwnd = tp.snd_cwnd;
        self.loss_rate_bytes = self.rate_bytes;
        if self.in_rate_mode(tp) {
            self.rate_bytes -= self.rate_bytes >> 1;
            self.frac_cwnd = self.pacing_rate_to_frac_cwnd(tp);
        } else {
            self.frac_cwnd -= self.frac_cwnd >> 1;
            self.rate_bytes = self.frac_cwnd_to_pacing_rate(tp);
        }
        self.in_loss = true;
    }

    fn enter_cwr(&mut self, tp: &TcpSock) {
        let now_us = tp.now.us();
        if self.is_rtt_indep(tp) && self.p.rtt_target_us > now_us.saturating_sub(self.cwr_stamp_us) {
            return;
        }
        self.cwr_stamp_us = now_us;
        let alpha = self.upscaled_alpha >> PRAGUE_SHIFT_G;
        if self.in_rate_mode(tp) {
            let reduction = mul_shr(self.rate_bytes, alpha, PRAGUE_ALPHA_BITS + 1);
            self.rate_bytes = self.rate_bytes.saturating_sub(reduction).max(MINIMUM_RATE);
            self.frac_cwnd = self.pacing_rate_to_frac_cwnd(tp);
        } else {
            // Unbiased rounding: add one half before the shift.
            let reduction = ((alpha as u128 * self.frac_cwnd as u128 + PRAGUE_MAX_ALPHA as u128)
                >> (PRAGUE_ALPHA_BITS + 1)) as u64;
            self.frac_cwnd -= reduction;
            self.rate_bytes = self.frac_cwnd_to_pacing_rate(tp);
        }
    }
}

impl CongestionControl for Prague {
    fn name(&self) -> &'static str {
        PragueParams::NAME
    }

    fn flags(&self) -> CcFlags {
        CcFlags {
            cong_control: true,
            needs_ecn: true,
            needs_pacing: true,
            wants_ect1: true,
            needs_accecn: true,
            dctcp_echo: false,
        }
    }

    fn init(&mut self, tp: &mut TcpSock) {
        let now_us = tp.now.us();
        self.alpha_stamp_us = now_us;
        self.upscaled_alpha = if self.p.alpha_mode == 0 {
            0
        } else {
            PRAGUE_MAX_ALPHA << PRAGUE_SHIFT_G
        };
        self.frac_cwnd = (tp.snd_cwnd as u64) << CWND_UNIT;
        self.max_tso_burst = 1;
        let srtt8 = Self::srtt8(tp);
        let per_packet = (1_000_000u64 << 3) * Self::mtu(tp);
        self.rate_bytes = match per_packet.checked_div(srtt8) {
            Some(r) => (r * tp.snd_cwnd.max(tp.in_flight()) as u64).max(MINIMUM_RATE),
            None => MINIMUM_RATE,
        };
        self.update_pacing_rate(tp);
        self.loss_rate_bytes = 0;
        self.round = 0;
        self.saw_ce = tp.delivered_ce != 0;
        self.hsrtt_us = if srtt8 != 0 {
            srtt8 << HSRTT_SHIFT
        } else {
            1 << (HSRTT_SHIFT + 3)
        };
        self.cwnd_mode_transit = self.p.cwnd_mode & 0x02 != 0;
        self.rate_mode = self.p.cwnd_mode & 0x01 != 0;
        self.new_round(tp);
    }

    /// `prague_ssthresh`: leaves ssthresh alone (the reductions happen in `set_state`).
    fn ssthresh(&mut self, tp: &mut TcpSock) -> u32 {
        tp.snd_ssthresh
    }

    fn cong_control(&mut self, tp: &mut TcpSock, rs: &RateSample) {
        self.update_cwnd(tp, rs);
        if self.should_update_ewma(tp) {
            self.update_alpha(tp);
        }
        self.update_pacing_rate(tp);
        if self.cwnd_mode_transit {
            let cwnd_bytes = tp.snd_cwnd as u64 * Self::mtu(tp);
            let transit_bytes = self.p.cwnd_transit as u64 * MTU_SYS;
            if self.saw_ce && cwnd_bytes <= transit_bytes {
                self.rate_mode = true;
                self.frac_cwnd = self.pacing_rate_to_frac_cwnd(tp);
            } else {
                self.rate_mode = false;
                self.rate_bytes = self.frac_cwnd_to_pacing_rate(tp);
            }
        }
    }

    fn set_state(&mut self, tp: &mut TcpSock, new_state: CaState) {
        if new_state == tp.ca_state {
            return;
        }
        match new_state {
            CaState::Recovery => self.enter_loss(tp),
            CaState::Cwr => self.enter_cwr(tp),
            CaState::Open => self.in_loss = false,
            _ => {}
        }
    }

    fn cwnd_event(&mut self, tp: &mut TcpSock, ev: CaEvent) {
        if ev == CaEvent::Loss {
            self.enter_loss(tp);
        }
    }

    fn undo_cwnd(&mut self, tp: &mut TcpSock) -> u32 {
        self.in_loss = false;
        self.rate_bytes = self.rate_bytes.max(self.loss_rate_bytes);
        self.frac_cwnd = self.pacing_rate_to_frac_cwnd(tp);
        self.loss_cwnd.max(tp.snd_cwnd)
    }

    fn tso_segs(&self, _tp: &TcpSock) -> Option<u32> {
        let segs = self.max_tso_burst;
        Some(if self.p.max_tso_segs > 0 {
            segs.min(self.p.max_tso_segs)
        } else {
            segs
        })
    }

    /// `mode`: 0 fractional window, 1 rate mode; `aux` = α (0..1); `bw_bps` = the internal rate.
    fn vars(&self) -> CcVars {
        CcVars {
            mode: self.rate_mode as i32,
            aux: self.alpha(),
            bw_bps: self.rate_bytes as f64 * 8.0,
            ..CcVars::default()
        }
    }
}
