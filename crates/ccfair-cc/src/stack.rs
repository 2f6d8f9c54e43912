//! The pieces of Linux's TCP core that surround a congestion control and act only on `tcp_sock` fields:
//! the cwnd reduction of CWR/Recovery (PRR), the end of a reduction, the default pacing rate, and the
//! bookkeeping behind `tcp_is_cwnd_limited`. They belong to the stack, not to the algorithms, and live here so
//! that the simulator's TCP sender and the scripted test driver ([`crate::testing`]) run the same code.
//!
//! Sources: `tcp_init_cwnd_reduction`, `tcp_cwnd_reduction`, `tcp_end_cwnd_reduction`,
//! `tcp_update_pacing_rate` (tcp_input.c), `tcp_cwnd_validate` (tcp_output.c), `tcp_is_cwnd_limited` (tcp.h).
//!
//! PRR is Linux's variant of RFC 6937: the proportional part divides by `prior_cwnd` (the RFC uses RecoverFS,
//! the flight size at the start), and the slow-start bound adds one segment only when snd_una advanced and
//! no new loss was detected on this ACK (the RFC's SSRB always adds one).

use crate::CongestionControl;
use crate::sock::{CaEvent, CaState, TCP_INFINITE_SSTHRESH, TcpSock};

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

/// `tcp_end_cwnd_reduction`: back to ssthresh at the end of CWR, or of a Recovery that was not undone. Not
/// for algorithms that own cwnd (`cong_control`), which get no `CompleteCwr` event either.
pub fn end_cwnd_reduction(
    cc: &mut dyn CongestionControl,
    tp: &mut TcpSock,
    cong_control: bool,
    undo_marker: bool,
) {
    if cong_control {
        return;
    }
    if tp.snd_ssthresh < TCP_INFINITE_SSTHRESH && (tp.ca_state == CaState::Cwr || undo_marker) {
        tp.snd_cwnd = tp.snd_ssthresh;
    }
    cc.cwnd_event(tp, CaEvent::CompleteCwr);
}

/// `tcp_update_pacing_rate`: mss·max(cwnd, packets_out)/srtt at 200 % while cwnd < ssthresh/2, else 120 %,
/// in bytes per second, capped by `max_pacing_rate`. `srtt_us8` is srtt in µs ×8 as the kernel keeps it;
/// without a sample (0) the kernel leaves the product undivided.
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
