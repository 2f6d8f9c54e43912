//! The pieces of Linux's TCP core that surround a congestion control and act only on `tcp_sock` fields, so
//! that the simulator's TCP sender and the scripted test driver ([`crate::testing`]) run the same code.
//!
//! [`TcpCore`] owns the algorithm and the state the kernel keeps around it, and calls its hooks: the state
//! changes (`tcp_set_ca_state`), the ECN and loss reductions (`tcp_enter_cwr`, `tcp_enter_recovery`), the
//! start of an RTO episode (`tcp_enter_loss`), the end of a reduction (part D of `tcp_fastretrans_alert`,
//! `tcp_end_cwnd_reduction`), `tcp_try_to_open`, undo (`tcp_undo_cwnd_reduction`), the per-ACK window update
//! (`tcp_cong_control`: `cong_control`, or PRR in CWR/Recovery, or `cong_avoid`, then the pacing rate), the
//! `TxStart` event of `tcp_event_data_sent`, and `tcp_cwnd_validate`. Loss *detection* (SACK, RACK, timers)
//! is the stack's own: each caller marks packets and then asks the core to act.
//!
//! Around it: PRR ([`CwndReduction`]), the default pacing rate, TSO autosizing, the cwnd-limited bookkeeping
//! ([`CwndUsage`]) and the min-RTT filter ([`MinRttFilter`]); delivery-rate sampling is [`crate::rate`].
//!
//! Sources: `tcp_set_ca_state`, `tcp_enter_cwr`, `tcp_enter_recovery`, `tcp_enter_loss`,
//! `tcp_fastretrans_alert`, `tcp_try_to_open`, `tcp_try_keep_open`, `tcp_undo_cwnd_reduction`,
//! `tcp_init_cwnd_reduction`, `tcp_cwnd_reduction`, `tcp_end_cwnd_reduction`, `tcp_cong_control`,
//! `tcp_may_raise_cwnd`, `tcp_update_pacing_rate`, `tcp_update_rtt_min` (tcp_input.c), `tcp_event_data_sent`,
//! `tcp_cwnd_validate`, `tcp_tso_autosize` (tcp_output.c), `tcp_is_cwnd_limited` (tcp.h).
//!
//! PRR is Linux's variant of RFC 6937: the proportional part divides by `prior_cwnd` (the RFC uses RecoverFS,
//! the flight size at the start), and the slow-start bound adds one segment only when snd_una advanced and
//! no new loss was detected on this ACK (the RFC's SSRB always adds one).

use ccfair_core::Time;
use ccfair_core::seq::{after, before};

use crate::minmax::MinMax;
use crate::rate::TxSnapshot;
use crate::sock::{CaEvent, CaState, TCP_INFINITE_SSTHRESH, TcpSock};
use crate::{AckEventFlags, CcFlags, CongestionControl, LostSkb, RateSample};

/// `sk_gso_max_size` default (`GSO_LEGACY_MAX_SIZE`), bytes.
pub const GSO_MAX_SIZE: u64 = 65_536;
/// `sysctl_tcp_min_tso_segs`.
pub const MIN_TSO_SEGS: u32 = 2;
/// `sysctl_tcp_tso_rtt_log`: 2^9 µs = 512 µs.
pub const TSO_RTT_LOG: u32 = 9;
/// `sk_pacing_shift` default: bursts of about 2^-10 s at the pacing rate.
pub const PACING_SHIFT: u32 = 10;

/// `sysctl_tcp_pacing_ss_ratio` / `_ca_ratio`, percent.
pub const PACING_SS_RATIO: u64 = 200;
pub const PACING_CA_RATIO: u64 = 120;
/// `sysctl_tcp_min_rtt_wlen`: the min-RTT filter's window, seconds.
pub const MIN_RTT_WLEN_S: u32 = 300;

/// One connection's congestion control and the state the stack keeps around it (`icsk_ca_ops`, `prr_*`,
/// `prior_ssthresh`, `undo_marker`, the `tcp_cwnd_validate` fields). See the module documentation.
pub struct TcpCore {
    cc: Box<dyn CongestionControl>,
    flags: CcFlags,
    /// PRR state of the current CWR/Recovery episode.
    pub prr: CwndReduction,
    /// How fully the current window used cwnd.
    pub cwnd_usage: CwndUsage,
    /// `tp->prior_ssthresh`: the ssthresh an undo restores; 0 once ECN has proven the congestion.
    pub prior_ssthresh: u32,
    /// `tp->undo_marker != 0`: a reduction is in progress that may still be undone.
    pub undo_marker: bool,
}

impl TcpCore {
    /// The core around `cc`; its flags are read once, as the kernel reads `tcp_congestion_ops.flags`.
    pub fn new(cc: Box<dyn CongestionControl>) -> TcpCore {
        TcpCore {
            flags: cc.flags(),
            cc,
            prr: CwndReduction::default(),
            cwnd_usage: CwndUsage::default(),
            prior_ssthresh: 0,
            undo_marker: false,
        }
    }

    /// The algorithm, for the hooks the stack calls at its own points (`init`, `pkts_acked`, `in_ack_event`,
    /// `skb_marked_lost`, `tso_segs`, ...).
    #[inline]
    pub fn cc(&mut self) -> &mut dyn CongestionControl {
        self.cc.as_mut()
    }

    /// The algorithm, read-only.
    #[inline]
    pub fn cc_ref(&self) -> &dyn CongestionControl {
        self.cc.as_ref()
    }

    #[inline]
    pub fn flags(&self) -> CcFlags {
        self.flags
    }

    /// The connection is established: the algorithm's `init` hook (`tcp_init_congestion_control`), then, for
    /// algorithms that leave pacing to the stack, the rate `tcp_update_pacing_rate` set on the SYN-ACK from the
    /// handshake's smoothed RTT `srtt_us8` (µs × 8; 0 without a sample: no limit until the first ACK).
    pub fn init(&mut self, tp: &mut TcpSock, srtt_us8: u64) {
        self.cc.init(tp);
        if !self.flags.cong_control {
            tp.pacing_rate = pacing_rate(tp, srtt_us8);
        }
    }

    /// `tcp_set_ca_state`: the algorithm hears of the change first.
    pub fn set_ca_state(&mut self, tp: &mut TcpSock, state: CaState) {
        self.cc.set_state(tp, state);
        tp.ca_state = state;
    }

    /// `tcp_event_data_sent`: a (re)transmission is leaving now; the first one with nothing in flight raises
    /// `TxStart` before `lsndtime` moves (Cubic measures the idle time from it).
    #[inline]
    pub fn data_sent(&mut self, tp: &mut TcpSock) {
        if tp.in_flight() == 0 {
            self.cc.cwnd_event(tp, CaEvent::TxStart);
        }
        tp.lsndtime = tp.now;
    }

    /// `tcp_notify_skb_loss_event` (google/bbr branch): after the caller counted a packet in `tp.lost`, the
    /// algorithm hears of it with its send-time snapshot (BBRv2/v3 bound inflight_hi with it), unless a SACK
    /// used the snapshot up (`!scb->tx.delivered_mstamp`). Mainline only counts; every algorithm but the BBR
    /// family ignores the hook.
    pub fn skb_marked_lost(&mut self, tp: &mut TcpSock, tx: &TxSnapshot) {
        if !tx.valid {
            return;
        }
        let skb = LostSkb {
            tx_in_flight: tx.in_flight,
            tx_lost: tx.lost,
            tx_delivered_ce: tx.delivered_ce,
            is_app_limited: tx.is_app_limited,
            pcount: 1,
        };
        self.cc.skb_marked_lost(tp, &skb);
    }

    /// `tcp_init_cwnd_reduction` without its TLP and ECN-CWR parts, which the caller adds.
    pub fn init_cwnd_reduction(&mut self, tp: &mut TcpSock) {
        self.prr.init(self.cc.as_mut(), tp);
    }

    /// `tcp_cwnd_reduction` (PRR) for an ACK that delivered `newly_acked_sacked` packets and marked
    /// `newly_lost` lost.
    #[inline]
    pub fn cwnd_reduction(
        &mut self,
        tp: &mut TcpSock,
        newly_acked_sacked: u32,
        newly_lost: u32,
        snd_una_advanced: bool,
    ) {
        self.prr
            .reduce(tp, newly_acked_sacked, newly_lost, snd_una_advanced);
    }

    /// `tcp_end_cwnd_reduction`: back to ssthresh at the end of CWR, or of a Recovery that was not undone. Not
    /// for algorithms that own cwnd (`cong_control`), which get no `CompleteCwr` event either.
    pub fn end_cwnd_reduction(&mut self, tp: &mut TcpSock) {
        if self.flags.cong_control {
            return;
        }
        if tp.snd_ssthresh < TCP_INFINITE_SSTHRESH && (tp.ca_state == CaState::Cwr || self.undo_marker) {
            tp.snd_cwnd = tp.snd_ssthresh;
        }
        self.cc.cwnd_event(tp, CaEvent::CompleteCwr);
    }

    /// `tcp_enter_cwr`: an ECN-signalled reduction, never undone. Returns whether a reduction began (the
    /// caller then clears its TLP episode and queues CWR, the rest of `tcp_init_cwnd_reduction`).
    pub fn enter_cwr(&mut self, tp: &mut TcpSock) -> bool {
        self.prior_ssthresh = 0;
        if tp.ca_state >= CaState::Cwr {
            return false;
        }
        self.undo_marker = false;
        self.init_cwnd_reduction(tp);
        self.set_ca_state(tp, CaState::Cwr);
        true
    }

    /// `tcp_enter_recovery` (the caller counts it). Returns whether a reduction began (not when CWR is
    /// already reducing); the caller then does the rest of `tcp_init_cwnd_reduction` as for CWR.
    pub fn enter_recovery(&mut self, tp: &mut TcpSock, ece_ack: bool) -> bool {
        self.prior_ssthresh = 0;
        self.undo_marker = true;
        let begins = !tp.in_cwnd_reduction();
        if begins {
            if !ece_ack {
                self.prior_ssthresh = tp.current_ssthresh();
            }
            self.init_cwnd_reduction(tp);
        }
        self.set_ca_state(tp, CaState::Recovery);
        begins
    }

    /// Part D of `tcp_fastretrans_alert`: CWR or Recovery ends once `high_seq` is acknowledged (CWR only once
    /// something above it is, so that CWR reached the peer). Recovery is not undone (`tcp_try_undo_recovery`
    /// needs DSACKs or timestamps proving the retransmissions needless; neither stack models them).
    pub fn end_reduction_if_acked(&mut self, tp: &mut TcpSock) {
        if tp.ca_state == CaState::Open || before(tp.snd_una, tp.high_seq) {
            return;
        }
        match tp.ca_state {
            CaState::Cwr if tp.snd_una != tp.high_seq => {
                self.end_cwnd_reduction(tp);
                self.set_ca_state(tp, CaState::Open);
            }
            CaState::Recovery => {
                self.set_ca_state(tp, CaState::Open);
                self.end_cwnd_reduction(tp);
            }
            _ => {}
        }
    }

    /// `tcp_try_keep_open`: Disorder while anything is SACKed, lost or retransmitted (`any_retrans_done`:
    /// `tcp_any_retrans_done`), else Open; a change restarts the episode at `snd_nxt`.
    pub fn try_keep_open(&mut self, tp: &mut TcpSock, any_retrans_done: bool) {
        let state = if tp.sacked_out + tp.lost_out > 0 || any_retrans_done {
            CaState::Disorder
        } else {
            CaState::Open
        };
        if tp.ca_state != state {
            self.set_ca_state(tp, state);
            tp.high_seq = tp.snd_nxt;
        }
    }

    /// `tcp_try_to_open`: an ECE enters CWR (returns whether a reduction began, as [`TcpCore::enter_cwr`]);
    /// outside CWR the state follows the scoreboard.
    pub fn try_to_open(&mut self, tp: &mut TcpSock, ece: bool, any_retrans_done: bool) -> bool {
        let began = ece && self.enter_cwr(tp);
        if tp.ca_state != CaState::Cwr {
            self.try_keep_open(tp, any_retrans_done);
        }
        began
    }

    /// The start of `tcp_enter_loss`, after the caller marked the lost packets (`tcp_timeout_mark_lost`): a new
    /// loss episode (from Open/Disorder, once `high_seq` was acknowledged, or on the first RTO after an ACK made
    /// progress in Loss, `retransmits` = `icsk_retransmits` = 0) takes the `ssthresh` hook, raises
    /// `CaEvent::Loss` and may be undone; cwnd becomes in-flight + 1 and the state Loss until `snd_nxt`.
    /// Returns whether a new episode began.
    pub fn enter_loss(&mut self, tp: &mut TcpSock, retransmits: u32) -> bool {
        let state = tp.ca_state;
        let new_episode = state <= CaState::Disorder
            || !after(tp.high_seq, tp.snd_una)
            || (state == CaState::Loss && retransmits == 0);
        if new_episode {
            self.prior_ssthresh = tp.current_ssthresh();
            tp.prior_cwnd = tp.snd_cwnd;
            tp.snd_ssthresh = self.cc.ssthresh(tp);
            self.cc.cwnd_event(tp, CaEvent::Loss);
            self.undo_marker = true;
        }
        tp.snd_cwnd = tp.in_flight() + 1;
        tp.snd_cwnd_cnt = 0;
        self.set_ca_state(tp, CaState::Loss);
        tp.high_seq = tp.snd_nxt;
        new_episode
    }

    /// `tcp_undo_cwnd_reduction` without unmarking losses (the caller's, on its queue): the algorithm's
    /// `undo_cwnd` and the saved ssthresh come back unless ECN proved the congestion. Returns whether
    /// ssthresh was restored (the caller then withdraws a queued CWR).
    pub fn undo_cwnd_reduction(&mut self, tp: &mut TcpSock) -> bool {
        let mut restored = false;
        if self.prior_ssthresh != 0 {
            tp.snd_cwnd = self.cc.undo_cwnd(tp);
            if self.prior_ssthresh > tp.snd_ssthresh {
                tp.snd_ssthresh = self.prior_ssthresh;
                restored = true;
            }
        }
        self.undo_marker = false;
        restored
    }

    /// `tcp_cong_control`: an algorithm that owns cwnd gets the rate sample (`cong_control`); otherwise cwnd
    /// follows PRR in CWR/Recovery, or `cong_avoid` for `acked_sacked` packets when `may_raise_cwnd`
    /// (`tcp_may_raise_cwnd`), and then the default pacing rate (`srtt_us8`: srtt in µs × 8).
    #[inline]
    pub fn cong_control(
        &mut self,
        tp: &mut TcpSock,
        rs: &RateSample,
        acked_sacked: u32,
        may_raise_cwnd: bool,
        snd_una_advanced: bool,
        srtt_us8: u64,
    ) {
        if self.flags.cong_control {
            tp.is_cwnd_limited = self.cwnd_usage.is_cwnd_limited(tp);
            self.cc.cong_control(tp, rs);
            return;
        }
        if tp.in_cwnd_reduction() {
            self.cwnd_reduction(tp, acked_sacked, rs.losses, snd_una_advanced);
        } else if may_raise_cwnd {
            tp.is_cwnd_limited = self.cwnd_usage.is_cwnd_limited(tp);
            self.cc.cong_avoid(tp, acked_sacked);
        }
        tp.pacing_rate = pacing_rate(tp, srtt_us8);
    }

    /// `tcp_cwnd_validate` after a transmission attempt that left cwnd full (`is_cwnd_limited`) or sent data.
    #[inline]
    pub fn cwnd_validate(&mut self, tp: &TcpSock, is_cwnd_limited: bool) {
        self.cwnd_usage.validate(tp, is_cwnd_limited);
    }
}

impl AckEventFlags {
    /// The `CA_ACK_*` flags of `tcp_ack` for an ACK that advanced `snd_una` or not, carried SACK blocks or
    /// not, and carried ECE (classic or Accurate ECN feedback): the fast path is a pure advance of `snd_una`;
    /// a window update is any advance.
    #[inline]
    pub fn for_ack(snd_una_advanced: bool, has_sacks: bool, ece: bool) -> AckEventFlags {
        let slowpath = has_sacks || ece || !snd_una_advanced;
        AckEventFlags {
            slowpath,
            win_update: snd_una_advanced,
            ece: slowpath && ece,
        }
    }
}

/// `tcp_min_rtt`: the minimum RTT over the last [`MIN_RTT_WLEN_S`] seconds, clocked in jiffies
/// (`tcp_update_rtt_min`).
#[derive(Copy, Clone, Debug)]
pub struct MinRttFilter {
    filter: MinMax,
}

impl Default for MinRttFilter {
    fn default() -> Self {
        MinRttFilter {
            filter: MinMax::new(0, u32::MAX as u64),
        }
    }
}

impl MinRttFilter {
    /// The minimum in µs, `u32::MAX` before the first sample.
    #[inline]
    pub fn get_us(&self) -> u32 {
        self.filter.get() as u32
    }

    /// Takes a sample of `rtt_us` at `now`; `maybe_delayed` skips suspected delayed-ACK samples above the
    /// current minimum. A zero sample counts as one jiffy, as the kernel's `rtt_us ? : jiffies_to_usecs(1)`.
    #[inline]
    pub fn update(&mut self, now: Time, rtt_us: u32, maybe_delayed: bool) {
        if maybe_delayed && rtt_us > self.get_us() {
            return;
        }
        let v = if rtt_us == 0 { 1000 } else { rtt_us };
        self.filter
            .running_min(MIN_RTT_WLEN_S * 1000, now.jiffies() as u32, v as u64);
    }
}

/// PRR state of one CWR/Recovery episode (`prr_delivered`, `prr_out`).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct CwndReduction {
    /// Packets delivered since the reduction began.
    pub prr_delivered: u32,
    /// Packets (re)transmitted since the reduction began; the stack adds to it for every transmission.
    pub prr_out: u32,
}

impl CwndReduction {
    /// `tcp_init_cwnd_reduction` (its ECN-CWR and TLP parts are left to the caller): remember where the episode
    /// ends and the window before it, and take the new ssthresh from the algorithm.
    pub fn init(&mut self, cc: &mut dyn CongestionControl, tp: &mut TcpSock) {
        tp.high_seq = tp.snd_nxt;
        tp.snd_cwnd_cnt = 0;
        tp.prior_cwnd = tp.snd_cwnd;
        *self = CwndReduction::default();
        tp.snd_ssthresh = cc.ssthresh(tp);
    }

    /// `tcp_cwnd_reduction`: sets cwnd for this ACK so that transmissions follow PRR.
    #[inline]
    pub fn reduce(
        &mut self,
        tp: &mut TcpSock,
        newly_acked_sacked: u32,
        newly_lost: u32,
        snd_una_advanced: bool,
    ) {
        if newly_acked_sacked == 0 || tp.prior_cwnd == 0 {
            return;
        }
        let in_flight = tp.in_flight() as i64;
        let ssthresh = tp.snd_ssthresh as i64;
        let delta = ssthresh - in_flight;
        self.prr_delivered = self.prr_delivered.wrapping_add(newly_acked_sacked);
        let delivered = self.prr_delivered as i64;
        let out = self.prr_out as i64;
        let mut sndcnt = if delta < 0 {
            // Proportional part: spread the reduction over one round.
            let prior = tp.prior_cwnd as i64;
            (ssthresh * delivered + prior - 1) / prior - out
        } else {
            // At or below ssthresh: send what was delivered, plus one if snd_una advanced without new losses.
            let mut s = (delivered - out).max(newly_acked_sacked as i64);
            if snd_una_advanced && newly_lost == 0 {
                s += 1;
            }
            s.min(delta)
        };
        // Force the fast retransmit when nothing has been sent in this episode yet.
        sndcnt = sndcnt.max(if self.prr_out > 0 { 0 } else { 1 });
        tp.snd_cwnd = (in_flight + sndcnt).clamp(1, u32::MAX as i64) as u32;
    }
}

/// `tcp_update_pacing_rate`: mss·max(cwnd, packets_out)/srtt at 200 % while cwnd < ssthresh/2, else 120 %,
/// in bytes per second, capped by `max_pacing_rate`. `srtt_us8` is srtt in µs ×8 as the kernel keeps it;
/// without a sample (0) the kernel leaves the product undivided.
#[inline]
pub fn pacing_rate(tp: &TcpSock, srtt_us8: u64) -> u64 {
    let ratio = if tp.snd_cwnd < tp.snd_ssthresh / 2 {
        PACING_SS_RATIO
    } else {
        PACING_CA_RATIO
    };
    // (USEC_PER_SEC / 100) << 3 cancels the ×8 of srtt_us8 and the percent of the ratio.
    let mut rate = (tp.mss as u64)
        .saturating_mul((1_000_000 / 100) << 3)
        .saturating_mul(ratio)
        .saturating_mul(tp.snd_cwnd.max(tp.packets_out) as u64);
    if let Some(r) = rate.checked_div(srtt_us8) {
        rate = r;
    }
    rate.min(tp.max_pacing_rate)
}

/// `tcp_tso_autosize`: segments per TSO burst: about 1 ms (2^-10 s) at the pacing rate, plus a bonus that
/// halves for every 512 µs of min RTT (tiny RTTs get bigger bursts), at most 64 KB, at least `min_tso_segs`.
#[inline]
pub fn tso_autosize(tp: &TcpSock, min_tso_segs: u32) -> u32 {
    let mut bytes = tp.pacing_rate >> PACING_SHIFT;
    let r = tp.min_rtt_us >> TSO_RTT_LOG;
    if r < 32 {
        bytes += GSO_MAX_SIZE >> r;
    }
    bytes = bytes.min(GSO_MAX_SIZE);
    ((bytes / tp.mss as u64) as u32).max(min_tso_segs)
}

/// How fully the current window used cwnd (`tcp_cwnd_validate` bookkeeping, Linux ≥ 6.1).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct CwndUsage {
    is_cwnd_limited: bool,
    max_packets_out: u32,
    cwnd_usage_seq: u32,
}

impl CwndUsage {
    /// After a transmission attempt: remember whether cwnd limited it, or else the peak flight, per window.
    #[inline]
    pub fn validate(&mut self, tp: &TcpSock, is_cwnd_limited: bool) {
        if tp.snd_una >= self.cwnd_usage_seq
            || is_cwnd_limited
            || (!self.is_cwnd_limited && tp.packets_out > self.max_packets_out)
        {
            self.is_cwnd_limited = is_cwnd_limited;
            self.max_packets_out = tp.packets_out;
            self.cwnd_usage_seq = tp.snd_nxt;
        }
    }

    /// `tcp_is_cwnd_limited`: limited in this window, or in slow start below twice the window's peak flight
    /// (so an application using half the window still doubles it).
    #[inline]
    pub fn is_cwnd_limited(&self, tp: &TcpSock) -> bool {
        if self.is_cwnd_limited {
            return true;
        }
        tp.in_slow_start() && tp.snd_cwnd < self.max_packets_out.saturating_mul(2)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reno::Reno;

    #[test]
    fn prr_sends_half_of_deliveries_then_converges_to_ssthresh() {
        let mut tp = TcpSock::new(1448, 20);
        tp.snd_nxt = 20;
        tp.packets_out = 20;
        let mut prr = CwndReduction::default();
        let mut cc = Reno;
        prr.init(&mut cc, &mut tp);
        assert_eq!(tp.snd_ssthresh, 10);
        // One lost, three SACKed: in flight 16. The first ACK forces the fast retransmit.
        tp.lost_out = 1;
        tp.sacked_out = 3;
        prr.reduce(&mut tp, 1, 1, false);
        assert_eq!(tp.snd_cwnd, 17);
        prr.prr_out += 1;
        tp.retrans_out = 1;
        // Next SACK: ⌈10·2/20⌉ − 1 = 0 to send.
        tp.sacked_out += 1;
        prr.reduce(&mut tp, 1, 0, false);
        assert_eq!(tp.snd_cwnd, tp.in_flight());
        // Below ssthresh (in flight 8) with snd_una advancing: max(4 − 1, 2) + 1 = 4, bounded by 10 − 8 = 2.
        tp.sacked_out = 12;
        prr.reduce(&mut tp, 2, 0, true);
        assert_eq!(tp.in_flight(), 8);
        assert_eq!(tp.snd_cwnd, 10);
    }

    /// `tcp_enter_loss` reduces ssthresh once per loss episode: from Open/Disorder, once `high_seq` was
    /// acknowledged, or on an RTO in Loss after an ACK made progress (`icsk_retransmits` back to 0); not on a
    /// repeated RTO of the same episode.
    #[test]
    fn an_rto_starts_a_loss_episode_only_when_the_kernel_does() {
        let rto = |state: CaState, high_seq: u32, retransmits: u32| {
            let mut tp = TcpSock::new(1448, 40);
            tp.snd_una = 100;
            tp.snd_nxt = 140;
            tp.packets_out = 40;
            tp.lost_out = 40;
            tp.snd_ssthresh = 30;
            tp.ca_state = state;
            tp.high_seq = high_seq;
            let mut core = TcpCore::new(Box::new(Reno));
            core.enter_loss(&mut tp, retransmits);
            assert_eq!((tp.ca_state, tp.snd_cwnd, tp.high_seq), (CaState::Loss, 1, 140));
            (tp.snd_ssthresh, core.undo_marker)
        };
        assert_eq!(rto(CaState::Open, 0, 0), (20, true));
        assert_eq!(rto(CaState::Disorder, 120, 3), (20, true));
        assert_eq!(rto(CaState::Loss, 120, 1), (30, false));
        assert_eq!(rto(CaState::Loss, 120, 0), (20, true));
        assert_eq!(rto(CaState::Loss, 100, 2), (20, true));
        assert_eq!(rto(CaState::Recovery, 120, 0), (30, false));
    }

    /// `tcp_ack`'s `CA_ACK_*` flags: only a pure advance of `snd_una` takes the fast path; any advance is a
    /// window update; ECE is reported on the slow path.
    #[test]
    fn ack_event_flags_follow_tcp_ack() {
        let f = AckEventFlags::for_ack;
        let plain = f(true, false, false);
        assert!(!plain.slowpath && plain.win_update && !plain.ece);
        let ece = f(true, false, true);
        assert!(ece.slowpath && ece.win_update && ece.ece);
        let dup = f(false, false, false);
        assert!(dup.slowpath && !dup.win_update && !dup.ece);
        let sack = f(true, true, false);
        assert!(sack.slowpath && sack.win_update);
    }

    /// Undo restores the algorithm's window and the saved ssthresh, unless ECN proved the congestion.
    #[test]
    fn undo_restores_unless_ecn_proved_congestion() {
        let mut tp = TcpSock::new(1448, 40);
        tp.snd_nxt = 40;
        tp.packets_out = 40;
        let mut core = TcpCore::new(Box::new(Reno));
        assert!(core.enter_recovery(&mut tp, false));
        assert_eq!((tp.snd_ssthresh, tp.prior_cwnd), (20, 40));
        tp.snd_cwnd = 20;
        assert!(core.undo_cwnd_reduction(&mut tp));
        assert_eq!(
            (tp.snd_cwnd, tp.snd_ssthresh, core.undo_marker),
            (40, TCP_INFINITE_SSTHRESH, false)
        );
        // With ECE on the ACK that entered Recovery nothing is saved to restore.
        let mut tp = TcpSock::new(1448, 40);
        tp.snd_nxt = 40;
        tp.packets_out = 40;
        let mut core = TcpCore::new(Box::new(Reno));
        core.enter_recovery(&mut tp, true);
        tp.snd_cwnd = 20;
        assert!(!core.undo_cwnd_reduction(&mut tp));
        assert_eq!((tp.snd_cwnd, tp.snd_ssthresh), (20, 20));
    }

    #[test]
    fn pacing_ratio_switches_at_half_ssthresh() {
        let mut tp = TcpSock::new(1000, 10);
        tp.snd_ssthresh = 100;
        // 10 packets of 1000 B per 100 ms = 100 kB/s; 200 % in early slow start.
        assert_eq!(pacing_rate(&tp, 100_000 * 8), 200_000);
        tp.snd_cwnd = 50;
        assert_eq!(pacing_rate(&tp, 100_000 * 8), 600_000);
        tp.max_pacing_rate = 1000;
        assert_eq!(pacing_rate(&tp, 100_000 * 8), 1000);
    }

    #[test]
    fn cwnd_usage_tracks_the_window() {
        let mut tp = TcpSock::new(1448, 10);
        let mut u = CwndUsage::default();
        tp.snd_nxt = 4;
        tp.packets_out = 4;
        u.validate(&tp, false);
        // Slow start: limited while cwnd < 2 × peak flight.
        assert!(!u.is_cwnd_limited(&tp));
        tp.snd_nxt = 6;
        tp.packets_out = 6;
        u.validate(&tp, false);
        assert!(u.is_cwnd_limited(&tp));
        tp.snd_ssthresh = 5;
        assert!(!u.is_cwnd_limited(&tp));
        u.validate(&tp, true);
        assert!(u.is_cwnd_limited(&tp));
    }
}
