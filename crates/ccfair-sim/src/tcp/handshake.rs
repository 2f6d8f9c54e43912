//! The active open: a connection made at the flow's start, its SYN crossing the network as it stands then
//! (`tcp_v4_connect` → `tcp_connect`, the SYN-SENT half of `tcp_rcv_state_process`:
//! `tcp_rcv_synsent_state_process`, `tcp_finish_connect`, `tcp_init_transfer`; the SYN's retransmission in
//! `tcp_retransmit_timer` / `tcp_write_timeout`, Linux 6.18).
//!
//! In a nutshell: the sender sends a SYN (a 60-byte IPv4 packet: 20 bytes of IP, 20 of TCP and 20 of options,
//! MSS, SACK-permitted, timestamps and window scale, as a Linux SYN carries them), not ECN-capable. It waits
//! in the bottleneck queue like any packet, and may be dropped there or on the path. The receiving host
//! answers every SYN that reaches it with a SYN-ACK, which crosses the uncongested return path and echoes the
//! SYN's timestamp. The first SYN-ACK completes the handshake:
//! - RTT sample (`tcp_clean_rtx_queue` → `tcp_ack_update_rtt`): from the SYN's send time when it was never
//!   retransmitted (Karn); after a retransmission, from the timestamp echo (`TCP_TS_HZ` = 1000: whole
//!   milliseconds, at least one). It seeds the min-RTT filter, srtt and the RTO (backoff cleared) exactly as
//!   the sample of an ACK does; BBR takes its first min_rtt and its 10 s min-RTT window's stamp from it at
//!   `tcp_init_transfer`, and the algorithm's pacing rate its first srtt.
//! - A lost SYN is sent again when the initial RTO expires (`TCP_TIMEOUT_INIT`, 1 s), backed off by doubling,
//!   up to `tcp_syn_retries` = 6 retransmissions; the timer that would send a seventh gives up
//!   (`tcp_write_timeout`): the flow never connects. The first SYN timeout is an RTO like any other:
//!   `tcp_enter_loss` asks the algorithm for ssthresh with Linux's pre-connection cwnd (`TCP_INIT_CWND` = 10,
//!   from `tcp_init_sock`), so a Cubic flow whose SYN was lost starts with ssthresh 7 and Reno with 5, and
//!   nothing restores it (`tcp_init_congestion_control` leaves ssthresh alone). Each SYN retransmission counts
//!   in `total_retrans` and each timeout in `total_rto`, as on the kernel.
//! - `tcp_init_transfer`: cwnd is the route's initial window, or 1 segment when more than one SYN was
//!   retransmitted and the SYN-ACK did not answer the first SYN (`tcp_try_undo_spurious_syn`: a SYN-ACK
//!   echoing the first SYN's timestamp shows the retransmissions were spurious and clears the undo marker).
//!   Then the algorithm is initialised, and data goes out at once, as an application blocked in `connect()`
//!   writes when it returns.
//!
//! Deviations: the client's pure ACK of the SYN-ACK is not sent; the first data segment, which also carries
//! that acknowledgment, completes the receiver's handshake (a 52-byte packet fewer ahead of the first flight
//! in the queue). The SYN's own delivery (`tp->delivered` = 1) and the algorithm's `pkts_acked` and
//! `cong_avoid` calls for the SYN-ACK, which Linux makes before `tcp_init_transfer` re-initialises the
//! algorithm and resets cwnd, are not made. A SYN-ACK after the connection is established is ignored (Linux
//! answers it with a challenge ACK, which changes nothing at the sender).

use ccfair_cc::CaState;
use ccfair_cc::sock::TCP_INIT_CWND;
use ccfair_core::{Dur, Ecn, Time};

use super::sender::{Sender, XmitTimer};
use super::{RTO_MAX_MS, Segment, TIMEOUT_INIT_MS, ts_clock_ms};

/// Bytes of a Linux SYN on the wire, as the bottleneck counts packets (the IPv4 packet): IP 20, TCP 20 and
/// 20 of options (MSS 4, SACK-permitted 2, timestamps 10, NOP 1, window scale 3).
pub const SYN_WIRE_BYTES: u16 = 60;
/// Linux `sysctl_tcp_syn_retries` (`TCP_SYN_RETRIES`): SYN retransmissions before the connect fails.
pub const SYN_RETRIES: u32 = 6;

/// The SYN-SENT state of a connection opened at the flow's start.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct SynSent {
    /// When the first SYN left (`retrans_stamp`), and its timestamp value.
    first_sent_at: Time,
    first_tsval_ms: u32,
    /// SYN retransmissions so far (`icsk_retransmits` before the handshake).
    retransmits: u32,
    /// The first SYN timeout set the undo marker (`tcp_enter_loss` → `tcp_init_undo`).
    undo_marker: bool,
}

impl Sender {
    /// The application calls `connect()` at `now`: the SYN goes out and the initial RTO is armed. The
    /// application starts writing once the connection is established ([`Sender::on_synack`]).
    pub fn open(&mut self, now: Time, out: &mut Vec<Segment>) {
        debug_assert!(
            !self.is_connected() && self.syn_sent.is_none(),
            "a connection opens once"
        );
        self.tp.now = now;
        // `tcp_init_sock`: the congestion window before the route's initial window applies.
        self.tp.snd_cwnd = TCP_INIT_CWND;
        let tsval_ms = ts_clock_ms(now);
        self.syn_sent = Some(SynSent {
            first_sent_at: now,
            first_tsval_ms: tsval_ms,
            ..SynSent::default()
        });
        out.push(self.syn_segment(false));
        self.arm_syn_timer(0);
    }

    /// A SYN of this connection (`tcp_connect` / its retransmission): not ECN-capable, no payload.
    fn syn_segment(&mut self, retransmit: bool) -> Segment {
        self.stats.sent_segments += 1;
        if retransmit {
            self.stats.retransmitted_segments += 1;
        }
        Segment {
            flow: self.flow,
            seq: 0,
            wire_len: SYN_WIRE_BYTES,
            tsval_ms: ts_clock_ms(self.tp.now),
            enqueue_ts: Time::ZERO,
            ecn: Ecn::NotEct,
            cwr: false,
            retransmit,
            packet_value: 0,
            psh: false,
            syn: true,
        }
    }

    /// `inet_csk_reset_xmit_timer` for the SYN: the initial RTO doubled per retransmission, at most 120 s.
    fn arm_syn_timer(&mut self, retransmits: u32) {
        let rto_ms = (TIMEOUT_INIT_MS as u64)
            .checked_shl(retransmits)
            .unwrap_or(u64::MAX)
            .min(RTO_MAX_MS as u64);
        self.xmit_timer = Some((self.tp.now + Dur::from_ms(rto_ms), XmitTimer::Syn));
    }

    /// The SYN's retransmission timer fired (`tcp_retransmit_timer` in SYN-SENT): give up after
    /// `SYN_RETRIES` retransmissions, else enter Loss on the first timeout and send the SYN again.
    pub(super) fn syn_timer(&mut self, out: &mut Vec<Segment>) {
        self.xmit_timer = None;
        let Some(mut syn) = self.syn_sent else {
            return;
        };
        if syn.retransmits >= SYN_RETRIES {
            // `tcp_write_err`: the connect fails with ETIMEDOUT; the flow never sends.
            self.syn_sent = None;
            self.connect_failed = true;
            return;
        }
        self.stats.rto_events += 1;
        if syn.retransmits == 0 {
            // `tcp_enter_loss`, with the one SYN lost: the algorithm's ssthresh from the pre-connection cwnd.
            let tp = &mut self.tp;
            tp.packets_out = 1;
            tp.lost_out = 1;
            if self.core.enter_loss(tp, 0) {
                self.stats.cwnd_reductions += 1;
            }
            tp.packets_out = 0;
            tp.lost_out = 0;
            syn.undo_marker = true;
        }
        syn.retransmits += 1;
        self.syn_sent = Some(syn);
        out.push(self.syn_segment(true));
        self.arm_syn_timer(syn.retransmits);
    }

    /// A SYN-ACK arrived at `now`, echoing timestamp `tsecr_ms`: the handshake completes
    /// (`tcp_rcv_synsent_state_process`), and the application's data goes out. Returns the handshake's RTT
    /// sample in µs, or `None` if the connection was already established (or had failed).
    pub fn on_synack(&mut self, now: Time, tsecr_ms: u32, out: &mut Vec<Segment>) -> Option<u32> {
        let syn = self.syn_sent.take()?;
        self.tp.now = now;
        self.xmit_timer = None;
        let rtt_us = if syn.retransmits == 0 {
            u32::try_from(now.saturating_since(syn.first_sent_at).ns() / 1000)
                .unwrap_or(u32::MAX)
                .max(1)
        } else {
            ts_clock_ms(now)
                .wrapping_sub(tsecr_ms)
                .max(1)
                .saturating_mul(1000)
        };
        // `tcp_try_undo_spurious_syn`: the SYN-ACK answers the first SYN, so its retransmissions were spurious.
        let undo_marker = syn.undo_marker && tsecr_ms != syn.first_tsval_ms;
        // `tcp_process_loss` → `tcp_try_undo_recovery`: snd_una reached high_seq, nothing to undo; Open.
        if self.tp.ca_state == CaState::Loss {
            self.set_ca_state(CaState::Open);
        }
        // `tcp_init_transfer`'s window: cut to 1 after more than one SYN retransmission (RFC 5681, RFC 6298).
        self.tp.snd_cwnd = if syn.retransmits > 1 && undo_marker {
            1
        } else {
            self.initial_cwnd
        };
        self.establish(now, rtt_us);
        self.start(now, out);
        Some(rtt_us)
    }

    /// The connection is being opened (a SYN is out and no SYN-ACK has come).
    pub fn is_connecting(&self) -> bool {
        self.syn_sent.is_some()
    }

    /// Every SYN went unanswered: the connect failed (`tcp_write_err`).
    pub fn connect_failed(&self) -> bool {
        self.connect_failed
    }
}
