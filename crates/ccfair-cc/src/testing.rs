//! A scripted, network-free driver for congestion controls.
//!
//! [`Driver`] owns a [`TcpSock`] and one algorithm and plays the TCP stack's part around it: a script says
//! "send", "ACK n packets (and SACK these) after this long with this RTT", "these losses were detected", "the
//! RTO fired", and the driver updates the socket and calls the hooks at the points and in the order Linux does
//! (tcp_input.c, tcp_output.c, tcp_rate.c). Tests of every algorithm use it to observe cwnd, ssthresh and the
//! algorithm's state without a simulated network. Everything is deterministic: the same script gives the same
//! trace.
//!
//! The parts of the TCP core that act on the socket alone are not re-implemented here: the state machine's
//! transitions, PRR, the start of an RTO episode, undo and `tcp_cong_control` are [`TcpCore`]'s, delivery-rate
//! sampling is [`crate::rate`]'s and the min-RTT filter is the stack's, exactly as the simulator's sender uses
//! them; `ccfair-sim`'s `crosscheck` test drives both with the same ACKs and compares the traces. What the
//! driver does itself is the simulator's `tcp_ack` without the network: per ACK ([`Driver::ack_with`]),
//! 1. the bubble check of google/bbr's `tcp_ack` (`tcp_rate_check_app_limited` while the application is
//!    limited);
//! 2. the SACK block marks packets SACKed (`tcp_sacktag_one`), then the cumulative ACK removes the oldest
//!    packets (`tcp_clean_rtx_queue`): `snd_una`, `packets_out`, `delivered` (and `delivered_ce` for ECE
//!    with classic feedback), each delivered packet offered to the rate sample; the RTT sample updates srtt
//!    (the kernel's 1/8 EWMA, ×8 in µs) and the min-RTT filter; then `pkts_acked`;
//! 3. Accurate ECN's CE count (`delivered_ce`), then `in_ack_event` (`tcp_ack`'s `CA_ACK_*` flags);
//! 4. on a dubious ACK (no progress, SACK, ECE, a loss, or not Open), `tcp_fastretrans_alert`: ECE forbids
//!    undo; CWR/Recovery end once `high_seq` is ACKed; Loss ends once `high_seq` is ACKed; the script's
//!    losses are marked (`tcp_mark_skb_lost` + `skb_marked_lost`); then, outside Recovery and Loss, a marked
//!    loss enters Recovery and otherwise `tcp_try_to_open` (ECE enters CWR; the state follows the scoreboard);
//! 5. the rate sample (`tcp_rate_gen`), then `tcp_cong_control` (PRR in CWR/Recovery) and the pacing rate.
//!
//! Sending: [`Driver::retransmit`] resends lost packets (`tcp_xmit_retransmit_queue`), [`Driver::write`]
//! sends new data in bursts, each burst one transmission with one rate snapshot (a TSO skb), followed by
//! `tcp_cwnd_validate` as in `tcp_write_xmit`; [`Driver::send`] and [`Driver::fill`] combine the two. Every
//! transmission raises `TxStart` when nothing was in flight and counts in `prr_out` during a reduction.
//!
//! Not modelled: loss *detection* (RACK, the dupthresh rule, reordering; the script says what was lost), SACK
//! beyond one block per ACK, F-RTO after an RTO and undo detection (DSACK, timestamps; [`Driver::undo`] is
//! explicit), timers (an RTO happens when the script calls [`Driver::rto`], which marks every packet not
//! SACKed lost, where the kernel spares those sent less than RACK's RTT ago), the restart after idle
//! (`tcp_cwnd_restart`) and the application-limited cwnd decay, delayed ACKs (the script chooses how many
//! packets each ACK covers), pacing (a script that paces sets `tp.wstamp`), and RTT measurement (the script
//! gives the sample).

use std::collections::VecDeque;

use ccfair_core::seq::before;
use ccfair_core::{Dur, Time};

use crate::rate::{self, RateScratch, RateState, TxSnapshot};
use crate::sock::TCP_INIT_CWND;
use crate::stack::{MinRttFilter, TcpCore};
use crate::{AckEventFlags, AckSample, CaState, CcVars, CongestionControl, RateSample, TcpSock};

/// One outstanding packet: its last transmission and scoreboard tags.
#[derive(Copy, Clone, Debug)]
struct Sent {
    seq: u32,
    /// When it was last (re)transmitted.
    sent: Time,
    tx: TxSnapshot,
    /// Marked lost (`TCPCB_LOST`).
    lost: bool,
    /// A retransmission of it is in flight (`TCPCB_SACKED_RETRANS`).
    retrans: bool,
    /// It was retransmitted at some point (`TCPCB_EVER_RETRANS`).
    ever_retrans: bool,
    /// SACKed (`TCPCB_SACKED_ACKED`).
    sacked: bool,
}

/// One ACK as the script describes it, for [`Driver::ack_with`].
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Ack {
    /// Time since the previous event, ns.
    pub advance_ns: u64,
    /// Packets newly (cumulatively) ACKed: the oldest outstanding ones, SACKed or not; more than are
    /// outstanding is clamped.
    pub acked: u32,
    /// A SACK block `[start, end)` of sequence numbers: the packets in it not SACKed before are delivered.
    pub sack: Option<(u32, u32)>,
    /// The RTT sample, µs; negative for none. Ignored when nothing is newly (S)ACKed.
    pub rtt_us: i64,
    /// The ACK carries ECE (classic feedback). Ignored without ECN (`tp.ecn_ok`) or with Accurate ECN.
    pub ece: bool,
    /// Accurate ECN: packets this ACK newly reports CE-marked (used when [`Driver::accecn`] is on).
    pub ce: u32,
    /// Packets loss detection marks lost while processing this ACK (as RACK would, in
    /// `tcp_fastretrans_alert`): see [`Driver::mark_lost`] for which ones.
    pub lost: u32,
}

/// What one [`Driver::run_round`] did.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Round {
    /// When the round began.
    pub start: Time,
    pub cwnd_start: u32,
    pub cwnd_end: u32,
    pub ssthresh_end: u32,
    /// Packets transmitted during the round (including the burst at its start).
    pub sent: u32,
    /// Packets ACKed during the round.
    pub acked: u32,
    /// ACKs received during the round.
    pub acks: u32,
}

/// The scripted stack around one congestion control. See the module documentation.
pub struct Driver {
    /// The socket. Scripts may set fields directly (e.g. `snd_cwnd`, `snd_ssthresh`, `pacing_rate`,
    /// `internal_pacing`, `ecn_ok`, `wstamp`) between operations; the driver maintains the rest.
    pub tp: TcpSock,
    /// ECN feedback is Accurate ECN (the ACK counts CE marks, [`Ack::ce`]) rather than the ECE flag. On for
    /// algorithms that need it (`needs_accecn`).
    pub accecn: bool,
    core: TcpCore,
    /// Outstanding packets in sequence order.
    out: VecDeque<Sent>,
    rate: RateState,
    /// Kernel-precision smoothed RTT (µs × 8).
    srtt8: u64,
    min_rtt: MinRttFilter,
    /// Consecutive RTOs without an ACK that advanced `snd_una` (`icsk_retransmits`).
    retransmits: u32,
    /// The application has nothing more to send (set by [`Driver::app_limited`]).
    app_limited: bool,
}

impl Driver {
    /// A fresh connection (IW 10, infinite ssthresh) with `cc`, whose `init` hook is called.
    pub fn new(cc: Box<dyn CongestionControl>, mss: u32) -> Driver {
        Driver::with_sock(cc, TcpSock::new(mss, TCP_INIT_CWND))
    }

    /// A connection on a socket prepared by the caller; `cc.init` is called on it, and the stack sets the
    /// initial pacing rate as the simulator's sender does. The stack's part of the algorithm's flags is
    /// applied first (internal pacing for `needs_pacing`, ECN for `needs_ecn`).
    pub fn with_sock(cc: Box<dyn CongestionControl>, tp: TcpSock) -> Driver {
        Driver::build(cc, tp, None)
    }

    /// A connection whose handshake measured `rtt_us` (one RTT sample before `cc.init`, as the simulator's
    /// sender is connected).
    pub fn with_handshake(cc: Box<dyn CongestionControl>, tp: TcpSock, rtt_us: u64) -> Driver {
        Driver::build(cc, tp, Some(rtt_us))
    }

    fn build(cc: Box<dyn CongestionControl>, mut tp: TcpSock, handshake_rtt_us: Option<u64>) -> Driver {
        let core = TcpCore::new(cc);
        let flags = core.flags();
        if flags.needs_pacing {
            tp.internal_pacing = true;
        }
        if flags.needs_ecn {
            tp.ecn_ok = true;
        }
        let rate = RateState {
            first_tx_mstamp: tp.now,
            ..RateState::default()
        };
        let mut d = Driver {
            tp,
            accecn: flags.needs_accecn,
            core,
            out: VecDeque::new(),
            rate,
            srtt8: 0,
            min_rtt: MinRttFilter::default(),
            retransmits: 0,
            app_limited: false,
        };
        if let Some(rtt_us) = handshake_rtt_us {
            d.rtt_sample(rtt_us);
        }
        d.core.init(&mut d.tp, d.srtt8);
        d
    }

    /// The algorithm.
    pub fn cc(&self) -> &dyn CongestionControl {
        self.core.cc_ref()
    }

    /// The algorithm, mutably (to call a hook directly).
    pub fn cc_mut(&mut self) -> &mut dyn CongestionControl {
        self.core.cc()
    }

    /// The algorithm's exported state.
    pub fn vars(&self) -> CcVars {
        self.core.cc_ref().vars()
    }

    pub fn cwnd(&self) -> u32 {
        self.tp.snd_cwnd
    }

    pub fn ssthresh(&self) -> u32 {
        self.tp.snd_ssthresh
    }

    pub fn state(&self) -> CaState {
        self.tp.ca_state
    }

    pub fn now(&self) -> Time {
        self.tp.now
    }

    /// Packets in flight (`tcp_packets_in_flight`).
    pub fn in_flight(&self) -> u32 {
        self.tp.in_flight()
    }

    /// Smoothed RTT in µs × 8, as the kernel keeps it (0 before the first sample).
    pub fn srtt_us8(&self) -> u64 {
        self.srtt8
    }

    /// Let time pass without any event (e.g. application idle time).
    pub fn advance(&mut self, ns: u64) {
        self.tp.now += Dur::from_ns(ns);
    }

    /// The application has no more data (`on`) or is a bulk source again (`!on`). While it is
    /// application-limited, [`Driver::fill`] and [`Driver::run_round`] send nothing new; explicit sends still
    /// transmit. Turning it on checks for a delivery bubble as `tcp_rate_check_app_limited` does when the
    /// application writes (so do the ACKs that follow, as google/bbr's `tcp_ack`).
    pub fn app_limited(&mut self, on: bool) {
        self.app_limited = on;
        if on {
            self.tp.unsent_segments = 0;
            rate::check_app_limited(&mut self.tp, false);
        } else {
            self.tp.unsent_segments = u32::MAX;
        }
    }

    /// Transmit `n` packets now, regardless of cwnd: lost ones first (retransmissions), then new data, one
    /// packet per transmission. Returns `n`.
    pub fn send(&mut self, n: u32) -> u32 {
        let resent = self.retransmit(n);
        let singles = vec![1; (n - resent) as usize];
        self.write(&singles);
        n
    }

    /// `tcp_xmit_retransmit_queue` without its cwnd test: retransmits up to `n` packets that are marked lost,
    /// not SACKed and not already retransmitted, oldest first. Returns how many.
    pub fn retransmit(&mut self, n: u32) -> u32 {
        let mut resent = 0;
        while resent < n && self.tp.lost_out > self.tp.retrans_out {
            let Some(i) = self.out.iter().position(|p| p.lost && !p.retrans && !p.sacked) else {
                break;
            };
            let tx = self.transmission(1);
            let p = &mut self.out[i];
            p.sent = self.tp.now;
            p.tx = tx;
            p.retrans = true;
            p.ever_retrans = true;
            self.tp.retrans_out += 1;
            resent += 1;
        }
        if self.tp.in_cwnd_reduction() {
            self.core.prr.prr_out = self.core.prr.prr_out.wrapping_add(resent);
        }
        resent
    }

    /// `tcp_write_xmit` without its cwnd and pacing tests: sends new data in `bursts`, each burst one
    /// transmission sharing one rate snapshot (a TSO skb of that many segments), then does the
    /// `tcp_cwnd_validate` bookkeeping (cwnd-limited if cwnd is now full). Returns the packets sent.
    pub fn write(&mut self, bursts: &[u32]) -> u32 {
        let mut sent = 0;
        for &segs in bursts.iter().filter(|&&s| s > 0) {
            let tx = self.transmission(segs);
            for _ in 0..segs {
                self.out.push_back(Sent {
                    seq: self.tp.snd_nxt,
                    sent: self.tp.now,
                    tx,
                    lost: false,
                    retrans: false,
                    ever_retrans: false,
                    sacked: false,
                });
                self.tp.snd_nxt = self.tp.snd_nxt.wrapping_add(1);
                self.tp.packets_out += 1;
            }
            sent += segs;
        }
        if sent > 0 && self.tp.in_cwnd_reduction() {
            self.core.prr.prr_out = self.core.prr.prr_out.wrapping_add(sent);
        }
        let cwnd_full = self.tp.in_flight() >= self.tp.snd_cwnd;
        if sent > 0 || cwnd_full {
            self.core.cwnd_validate(&self.tp, cwnd_full);
        }
        sent
    }

    /// What a bulk sender does after each ACK: send as much as cwnd allows (nothing while
    /// application-limited). Returns the packets sent.
    pub fn fill(&mut self) -> u32 {
        if self.app_limited {
            return 0;
        }
        let room = self.tp.snd_cwnd.saturating_sub(self.tp.in_flight());
        self.send(room)
    }

    /// An ACK `advance_ns` after the previous event, cumulatively acknowledging `acked` packets, with an RTT
    /// sample of `rtt_us` (negative: none). Returns the rate sample the stack built for it.
    pub fn ack(&mut self, advance_ns: u64, acked: u32, rtt_us: i64) -> RateSample {
        self.ack_with(Ack {
            advance_ns,
            acked,
            rtt_us,
            ..Ack::default()
        })
    }

    /// An ACK with every option (SACK, ECN, losses detected on it). See [`Ack`] and the module documentation
    /// for the order of events.
    pub fn ack_with(&mut self, a: Ack) -> RateSample {
        self.advance(a.advance_ns);
        let now = self.tp.now;
        let n = a.acked.min(self.tp.packets_out);
        let una_advanced = n > 0;
        if una_advanced {
            self.retransmits = 0;
        }
        let mut scratch = RateScratch::default();
        scratch.rs.prior_in_flight = self.tp.in_flight();
        rate::check_app_limited(&mut self.tp, !self.app_limited);
        let prior_packets = self.tp.packets_out;
        let prior_delivered = self.tp.delivered;
        let prior_lost = self.tp.lost;
        let (ece, ce_delta) = match (self.tp.ecn_ok, self.accecn) {
            (false, _) => (false, 0),
            (true, true) => (a.ce > 0, a.ce),
            (true, false) => (a.ece, 0),
        };
        let classic_ece = ece && ce_delta == 0;
        let ev = AckEventFlags::for_ack(una_advanced, a.sack.is_some(), ece);
        if prior_packets == 0 {
            // Nothing outstanding (`no_queue` in tcp_ack): only the ACK event.
            self.core.cc().in_ack_event(&mut self.tp, ev);
            return RateSample::default();
        }

        // tcp_sacktag_write_queue for one block, then tcp_clean_rtx_queue.
        let newly_sacked = a.sack.map_or(0, |b| self.sacktag(b, classic_ece, &mut scratch));
        for _ in 0..n {
            let mut p = self.out.pop_front().expect("packets_out matches the queue");
            self.tp.snd_una = self.tp.snd_una.wrapping_add(1);
            self.tp.packets_out -= 1;
            if p.retrans {
                self.tp.retrans_out -= 1;
            }
            if p.sacked {
                self.tp.sacked_out -= 1;
            } else {
                self.count_delivered(1, classic_ece);
            }
            if p.lost {
                self.tp.lost_out -= 1;
            }
            let end_seq = p.seq.wrapping_add(1);
            self.rate
                .skb_delivered(&mut p.tx, p.sent, end_seq, p.ever_retrans, p.sacked, &mut scratch);
        }
        let rtt_us = if n + newly_sacked > 0 { a.rtt_us } else { -1 };
        scratch.rs.rtt_us = rtt_us;
        if rtt_us >= 0 {
            self.rtt_sample(rtt_us as u64);
        }
        let in_flight_bytes = self
            .tp
            .mss
            .wrapping_mul(self.tp.delivered.wrapping_sub(scratch.rs.prior_delivered));
        self.core.cc().pkts_acked(
            &mut self.tp,
            &AckSample {
                pkts_acked: n,
                rtt_us,
                in_flight: in_flight_bytes,
            },
        );
        self.tp.delivered_ce = self.tp.delivered_ce.wrapping_add(ce_delta);
        scratch.rs.ece_delta = ce_delta;
        self.core.cc().in_ack_event(&mut self.tp, ev);

        // tcp_ack_is_dubious, then tcp_fastretrans_alert.
        let dubious =
            !una_advanced || newly_sacked > 0 || ece || a.lost > 0 || self.tp.ca_state != CaState::Open;
        if dubious {
            self.fastretrans_alert(ece, a.lost);
        }

        // tcp_rate_gen, then tcp_cong_control.
        let delivered = self.tp.delivered.wrapping_sub(prior_delivered);
        let lost = self.tp.lost.wrapping_sub(prior_lost);
        scratch.rs.ece = ece;
        let min_rtt_us = self.min_rtt.get_us();
        self.rate
            .generate(&mut self.tp, now, delivered, lost, min_rtt_us, &mut scratch);
        let rs = scratch.rs;
        self.core
            .cong_control(&mut self.tp, &rs, delivered, n > 0, una_advanced, self.srtt8);
        rs
    }

    /// The packets the network holds (counted in flight: not SACKed, and not lost unless retransmitted), in
    /// the order they were last sent, as sequence numbers.
    pub fn in_flight_seqs(&self) -> Vec<u32> {
        let mut v: Vec<(Time, u32)> = self
            .out
            .iter()
            .filter(|p| !p.sacked && (!p.lost || p.retrans))
            .map(|p| (p.sent, p.seq))
            .collect();
        v.sort_unstable();
        v.into_iter().map(|(_, seq)| seq).collect()
    }

    /// Mark lost the `n` packets counted in flight that were sent longest ago (RACK's order: an original not
    /// SACKed, or a retransmission, lost again). Each is counted in `tp.lost` and reported to
    /// `skb_marked_lost` with its send-time snapshot, as the google/bbr branch's `tcp_mark_skb_lost` does.
    /// Returns how many were marked. Outside an ACK this is loss detection without a state change (as RACK's
    /// reordering timer before it enters Recovery).
    pub fn mark_lost(&mut self, n: u32) -> u32 {
        let candidates = self.in_flight_seqs();
        for &seq in candidates.iter().take(n as usize) {
            self.mark_skb_lost(seq.wrapping_sub(self.tp.snd_una) as usize);
        }
        candidates.len().min(n as usize) as u32
    }

    /// `tcp_mark_skb_lost` on the `i`-th outstanding packet, which is counted in flight.
    fn mark_skb_lost(&mut self, i: usize) {
        let p = &mut self.out[i];
        if p.lost {
            p.retrans = false;
            self.tp.retrans_out -= 1;
        } else {
            p.lost = true;
            self.tp.lost_out += 1;
        }
        let tx = p.tx;
        self.tp.lost = self.tp.lost.wrapping_add(1);
        self.core.skb_marked_lost(&mut self.tp, &tx);
    }

    /// RACK's reordering timer fired and found the `lost` packets sent longest ago lost
    /// (`tcp_rack_reo_timeout`): they are marked; if that changed what is in flight and the connection is
    /// not in Recovery, it enters Recovery and, unless the algorithm owns cwnd, takes one PRR step (one packet
    /// delivered, as the kernel passes). The script sends the retransmissions.
    pub fn rack_timeout(&mut self, lost: u32) {
        let prior_in_flight = self.tp.in_flight();
        let lost_before = self.tp.lost;
        self.mark_lost(lost);
        if prior_in_flight == self.tp.in_flight() || self.tp.ca_state == CaState::Recovery {
            return;
        }
        self.core.enter_recovery(&mut self.tp, false);
        if !self.core.flags().cong_control {
            let newly_lost = self.tp.lost.wrapping_sub(lost_before);
            self.core.cwnd_reduction(&mut self.tp, 1, newly_lost, false);
        }
    }

    /// Loss detected: `tcp_enter_recovery`. From Open/Disorder this starts a reduction (`prior_cwnd`,
    /// `high_seq`, the `ssthresh` hook), from CWR it only changes the state; in Recovery or Loss, or with
    /// nothing outstanding, it does nothing. It does not mark packets lost (see [`Driver::mark_lost`]; an
    /// ACK that reports losses enters Recovery by itself).
    pub fn enter_recovery(&mut self) {
        if self.tp.packets_out == 0 || self.tp.ca_state >= CaState::Recovery {
            return;
        }
        self.core.enter_recovery(&mut self.tp, false);
    }

    /// ECN congestion signal: `tcp_enter_cwr` (only from Open/Disorder; the reduction cannot be undone). An
    /// ACK with ECE does this by itself.
    pub fn enter_cwr(&mut self) {
        self.core.enter_cwr(&mut self.tp);
    }

    /// End the current CWR / Recovery / Loss episode now, as the stack does when `high_seq` is ACKed (which
    /// [`Driver::ack`] also does by itself).
    pub fn exit_recovery(&mut self) {
        match self.tp.ca_state {
            CaState::Recovery => {
                self.core.set_ca_state(&mut self.tp, CaState::Open);
                self.core.end_cwnd_reduction(&mut self.tp);
            }
            CaState::Cwr => {
                self.core.end_cwnd_reduction(&mut self.tp);
                self.core.set_ca_state(&mut self.tp, CaState::Open);
            }
            CaState::Loss => self.core.set_ca_state(&mut self.tp, CaState::Open),
            CaState::Open | CaState::Disorder => {}
        }
    }

    /// The reduction turned out spurious: undo it, as Linux does when DSACKs or timestamps prove the
    /// retransmissions unnecessary (`tcp_try_undo_recovery`, `tcp_try_undo_loss`): `undo_cwnd` and the saved
    /// ssthresh, then Open (and, from Recovery, the end of the reduction). Only in Recovery or Loss, and not
    /// after an ECN-triggered reduction.
    pub fn undo(&mut self) {
        let state = self.tp.ca_state;
        if !matches!(state, CaState::Recovery | CaState::Loss) || !self.core.undo_marker {
            return;
        }
        if state == CaState::Loss {
            // The "lost" packets were not lost after all.
            for p in self.out.iter_mut() {
                p.lost = false;
            }
            self.tp.lost_out = 0;
        }
        self.core.undo_cwnd_reduction(&mut self.tp);
        if state == CaState::Loss {
            self.retransmits = 0;
        }
        self.core.set_ca_state(&mut self.tp, CaState::Open);
        if state == CaState::Recovery {
            self.core.end_cwnd_reduction(&mut self.tp);
        }
    }

    /// The retransmission timer fired: `tcp_enter_loss` (every packet in flight is marked lost,
    /// then the shared episode start, cwnd = in flight + 1, state Loss), counted as `tcp_retransmit_timer`
    /// counts consecutive timeouts. The script sends the retransmission. Does nothing when nothing is
    /// outstanding (no timer would be running).
    pub fn rto(&mut self) {
        if self.tp.packets_out == 0 {
            return;
        }
        // tcp_timeout_mark_lost walks the queue in sequence order.
        for i in 0..self.out.len() {
            let p = &self.out[i];
            if !p.sacked && (!p.lost || p.retrans) {
                self.mark_skb_lost(i);
            }
        }
        self.core.enter_loss(&mut self.tp, self.retransmits);
        self.retransmits += 1;
    }

    /// One round trip of an ideal pipe. First the window is filled (unless application-limited); then every
    /// packet that can be ACKed in order (not lost, or retransmitted) is ACKed, one ACK per 2 packets, the
    /// ACKs spread evenly over `rtt_us` (the last one exactly `rtt_us` after the round began), each carrying
    /// an RTT sample of `rtt_us`. After each ACK the window is filled again (ACK clocking), so what is sent
    /// during a round is ACKed in the next one, and cwnd growth per round is growth per RTT. With nothing to
    /// ACK, time still advances by `rtt_us`.
    pub fn run_round(&mut self, rtt_us: u64) -> Round {
        let start = self.tp.now;
        let cwnd_start = self.tp.snd_cwnd;
        let mut sent = self.fill();
        let to_ack = self.ackable();
        let acks = to_ack.div_ceil(2);
        let rtt_ns = rtt_us * 1_000;
        let mut remaining = to_ack;
        let mut elapsed = 0u64;
        for i in 1..=acks as u64 {
            let at = rtt_ns * i / acks as u64;
            let k = remaining.min(2);
            self.ack(at - elapsed, k, rtt_us as i64);
            elapsed = at;
            remaining -= k;
            sent += self.fill();
        }
        if acks == 0 {
            self.advance(rtt_ns);
        }
        Round {
            start,
            cwnd_start,
            cwnd_end: self.tp.snd_cwnd,
            ssthresh_end: self.tp.snd_ssthresh,
            sent,
            acked: to_ack,
            acks,
        }
    }

    /// `n` rounds of [`Driver::run_round`].
    pub fn run_rounds(&mut self, n: usize, rtt_us: u64) -> Vec<Round> {
        (0..n).map(|_| self.run_round(rtt_us)).collect()
    }

    /// Outstanding packets at the head of the queue that an in-order ACK can cover: everything up to the
    /// first packet that is lost and not retransmitted.
    pub fn ackable(&self) -> u32 {
        if self.tp.lost_out == 0 {
            return self.tp.packets_out;
        }
        self.out.iter().take_while(|p| !p.lost || p.retrans).count() as u32
    }

    /// A transmission of `segs` segments leaving now (`tcp_event_data_sent` + `tcp_rate_skb_sent`): its rate
    /// snapshot, with the burst counted in flight.
    fn transmission(&mut self, segs: u32) -> TxSnapshot {
        self.core.data_sent(&mut self.tp);
        let in_flight_after = self.tp.in_flight() + segs;
        let now = self.tp.now;
        self.rate.skb_sent(&mut self.tp, now, in_flight_after)
    }

    fn count_delivered(&mut self, n: u32, ece: bool) {
        self.tp.delivered = self.tp.delivered.wrapping_add(n);
        if ece {
            self.tp.delivered_ce = self.tp.delivered_ce.wrapping_add(n);
        }
    }

    /// `tcp_sacktag_one` over the packets of `[start, end)`: newly SACKed ones are delivered (a lost original
    /// or a lost packet's retransmission arrived). Returns how many.
    fn sacktag(&mut self, (start, end): (u32, u32), ece: bool, scratch: &mut RateScratch) -> u32 {
        let mut newly = 0;
        for p in self.out.iter_mut() {
            if before(p.seq, start) || !before(p.seq, end) {
                continue;
            }
            if !p.sacked {
                if p.retrans {
                    if p.lost {
                        p.lost = false;
                        p.retrans = false;
                        self.tp.lost_out -= 1;
                        self.tp.retrans_out -= 1;
                    }
                } else if p.lost {
                    p.lost = false;
                    self.tp.lost_out -= 1;
                }
                p.sacked = true;
                self.tp.sacked_out += 1;
                newly += 1;
            }
            let end_seq = p.seq.wrapping_add(1);
            self.rate
                .skb_delivered(&mut p.tx, p.sent, end_seq, p.ever_retrans, true, scratch);
        }
        self.count_delivered(newly, ece);
        newly
    }

    /// The loss-recovery state machine of `tcp_fastretrans_alert` for a dubious ACK on which the script's
    /// loss detection found `lost` packets.
    fn fastretrans_alert(&mut self, ece: bool, lost: u32) {
        if ece {
            // ECE proves congestion: the reduction must not be undone.
            self.core.prior_ssthresh = 0;
        }
        self.core.end_reduction_if_acked(&mut self.tp);
        let prior_retrans = self.tp.retrans_out;
        match self.tp.ca_state {
            CaState::Recovery => {
                self.mark_lost(lost);
                return;
            }
            CaState::Loss => {
                // tcp_process_loss without F-RTO: the episode ends once high_seq is acknowledged.
                if !before(self.tp.snd_una, self.tp.high_seq) {
                    self.core.set_ca_state(&mut self.tp, CaState::Open);
                }
                self.mark_lost(lost);
                // Go on only if the episode ended or a retransmission was lost again.
                let lost_retrans = self.tp.retrans_out < prior_retrans;
                if !(self.tp.ca_state == CaState::Open || lost_retrans) {
                    return;
                }
            }
            _ => {
                self.mark_lost(lost);
            }
        }
        // tcp_time_to_recover (RACK): a marked loss proves it; otherwise try to reopen.
        if self.tp.lost_out > 0 {
            self.core.enter_recovery(&mut self.tp, ece);
        } else {
            let any_retrans_done = self.any_retrans_done();
            self.core.try_to_open(&mut self.tp, ece, any_retrans_done);
        }
    }

    /// `tcp_any_retrans_done`.
    fn any_retrans_done(&self) -> bool {
        self.tp.retrans_out > 0 || self.out.front().is_some_and(|p| p.ever_retrans)
    }

    /// `tcp_rtt_estimator` (srtt part) and `tcp_update_rtt_min`.
    fn rtt_sample(&mut self, m: u64) {
        let srtt8 = if self.srtt8 == 0 {
            m << 3
        } else {
            self.srtt8 - (self.srtt8 >> 3) + m
        };
        self.srtt8 = srtt8.max(1);
        self.tp.srtt_us = (self.srtt8 >> 3).min(u32::MAX as u64) as u32;
        self.min_rtt
            .update(self.tp.now, m.min(u32::MAX as u64) as u32, false);
        self.tp.min_rtt_us = self.min_rtt.get_us();
    }
}
