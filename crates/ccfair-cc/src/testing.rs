//! A scripted, network-free driver for congestion controls.
//!
//! [`Driver`] owns a [`TcpSock`] and one algorithm and plays the TCP stack's part around it: a script says
//! "send", "ACK n packets after this long with this RTT", "a loss was detected", "the RTO fired", and the
//! driver updates the socket and calls the hooks at the points and in the order Linux does (tcp_input.c,
//! tcp_output.c, tcp_rate.c). Tests of every algorithm use it to observe cwnd, ssthresh and the algorithm's
//! state without a simulated network. Everything is deterministic: the same script gives the same trace.
//!
//! Per ACK ([`Driver::ack`], following `tcp_ack()`):
//! 1. the oldest `n` outstanding packets are cumulatively ACKed (`snd_una`, `packets_out`, `delivered`), the
//!    RTT sample updates `srtt_us` (the kernel's 1/8 EWMA) and `min_rtt_us`;
//! 2. `pkts_acked` (only when data was outstanding, as `tcp_clean_rtx_queue`);
//! 3. `in_ack_event` (`win_update` for a plain ACK, `slowpath` + `ece` for an ECE ACK);
//! 4. the exit from CWR / Recovery / Loss once `high_seq` is ACKed (`tcp_fastretrans_alert`): Recovery goes
//!    to Open and then ends the reduction (cwnd = ssthresh, `CompleteCwr`); CWR ends the reduction, then goes
//!    to Open; Loss just goes to Open;
//! 5. the rate sample (`tcp_rate_gen`, from per-packet send snapshots as `tcp_rate_skb_sent` takes them);
//! 6. `tcp_cong_control`: `cong_control` if the algorithm has it; otherwise PRR (`tcp_cwnd_reduction`) in
//!    CWR/Recovery, else `cong_avoid` when data was ACKed; then the pacing rate (`tcp_update_pacing_rate`:
//!    mss·max(cwnd, packets_out)/srtt × 2 below ssthresh/2, × 1.2 above).
//!
//! Sending ([`Driver::send`], [`Driver::fill`]): lost packets are retransmitted before new data; the first
//! transmission with nothing in flight raises `TxStart` before `lsndtime` is updated (`tcp_event_data_sent`);
//! `prr_out` counts transmissions during a reduction; cwnd-limitation is tracked per window as
//! `tcp_cwnd_validate` does and `tp.is_cwnd_limited` is set to `tcp_is_cwnd_limited()` before the hooks run.
//!
//! Marking a packet lost ([`Driver::mark_lost`], also from [`Driver::rto`]) counts it in `tp.lost` and then calls
//! `skb_marked_lost` with its send-time snapshot, as the google/bbr branch's `tcp_mark_skb_lost` does.
//!
//! Not modelled: SACK, reordering and loss *detection* (the script marks losses and declares recovery), timers
//! (an RTO happens when the script calls [`Driver::rto`]), undo detection ([`Driver::undo`] is explicit), the
//! restart after idle (`tcp_cwnd_restart`) and the application-limited cwnd decay, delayed ACKs (the script
//! chooses how many packets each ACK covers), and the 300 s window of the min-RTT filter (it is a plain min).

use std::collections::VecDeque;

use ccfair_core::seq::{after, before};
use ccfair_core::{Dur, Time};

use crate::sock::TCP_INIT_CWND;
use crate::stack::{self, CwndReduction, CwndUsage};
use crate::{
    AckEventFlags, AckSample, CaEvent, CaState, CcFlags, CcVars, CongestionControl, LostSkb, RateSample,
    TcpSock,
};

/// One outstanding packet and the snapshot taken when it was (last) transmitted.
#[derive(Copy, Clone, Debug)]
struct Sent {
    seq: u32,
    sent: Time,
    delivered: u32,
    delivered_ce: u32,
    delivered_mstamp: Time,
    first_tx_mstamp: Time,
    lost_total: u32,
    in_flight: u32,
    app_limited: bool,
    /// Marked lost (`TCPCB_LOST`).
    lost: bool,
    /// A retransmission of it is in flight (`TCPCB_SACKED_RETRANS`).
    retrans: bool,
    /// It was retransmitted at some point (`TCPCB_EVER_RETRANS`).
    ever_retrans: bool,
}

/// One ACK as the script describes it, for [`Driver::ack_with`].
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Ack {
    /// Time since the previous event, ns.
    pub advance_ns: u64,
    /// Packets newly (cumulatively) ACKed; more than are outstanding is clamped.
    pub acked: u32,
    /// The RTT sample, µs; negative for none. Ignored when nothing is ACKed.
    pub rtt_us: i64,
    /// The ACK carries ECE.
    pub ece: bool,
    /// Packets the stack marks lost while processing this ACK (as RACK would); they show up in
    /// `RateSample::losses` and in PRR's `newly_lost`.
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
    /// `internal_pacing`) between operations; the driver maintains the rest.
    pub tp: TcpSock,
    cc: Box<dyn CongestionControl>,
    flags: CcFlags,
    /// Outstanding packets in sequence order.
    out: VecDeque<Sent>,
    /// Kernel-precision smoothed RTT (µs × 8).
    srtt8: u64,
    /// `tp->first_tx_mstamp`.
    first_tx_mstamp: Time,
    /// `tcp_cwnd_validate` state: cwnd-limited in the current window, max packets out, window end.
    cwnd_usage: CwndUsage,
    /// PRR state.
    prr: CwndReduction,
    /// Undo state (`prior_ssthresh`, `undo_marker`).
    prior_ssthresh: u32,
    undo_marker: bool,
    /// The application has nothing more to send (set by [`Driver::app_limited`]).
    app_limited: bool,
}

impl Driver {
    /// A fresh connection (IW 10, infinite ssthresh) with `cc`, whose `init` hook is called.
    pub fn new(cc: Box<dyn CongestionControl>, mss: u32) -> Driver {
        Driver::with_sock(cc, TcpSock::new(mss, TCP_INIT_CWND))
    }

    /// A connection on a socket prepared by the caller; `cc.init` is called on it. The stack's part of the
    /// algorithm's flags is applied first (internal pacing for `needs_pacing`, ECN for `needs_ecn`).
    pub fn with_sock(mut cc: Box<dyn CongestionControl>, mut tp: TcpSock) -> Driver {
        let flags = cc.flags();
        if flags.needs_pacing {
            tp.internal_pacing = true;
        }
        if flags.needs_ecn {
            tp.ecn_ok = true;
        }
        cc.init(&mut tp);
        Driver {
            first_tx_mstamp: tp.now,
            tp,
            cc,
            flags,
            out: VecDeque::new(),
            srtt8: 0,
            cwnd_usage: CwndUsage::default(),
            prr: CwndReduction::default(),
            prior_ssthresh: 0,
            undo_marker: false,
            app_limited: false,
        }
    }

    /// The algorithm.
    pub fn cc(&self) -> &dyn CongestionControl {
        self.cc.as_ref()
    }

    /// The algorithm, mutably (to call a hook directly).
    pub fn cc_mut(&mut self) -> &mut dyn CongestionControl {
        self.cc.as_mut()
    }

    /// The algorithm's exported state.
    pub fn vars(&self) -> CcVars {
        self.cc.vars()
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

    /// Let time pass without any event (e.g. application idle time).
    pub fn advance(&mut self, ns: u64) {
        self.tp.now += Dur::from_ns(ns);
    }

    /// The application has no more data (`on`) or is a bulk source again (`!on`). While it is
    /// application-limited, [`Driver::fill`] and [`Driver::run_round`] send nothing new; explicit
    /// [`Driver::send`] calls still transmit. Turning it on marks the bubble for rate sampling as
    /// `tcp_rate_check_app_limited` does.
    pub fn app_limited(&mut self, on: bool) {
        self.app_limited = on;
        if on {
            self.tp.app_limited = self.tp.delivered.wrapping_add(self.tp.in_flight()).max(1);
            self.tp.unsent_segments = 0;
        } else {
            self.tp.unsent_segments = u32::MAX;
        }
    }

    /// Transmit `n` packets now, lost ones (retransmissions) first, regardless of cwnd. Returns `n`.
    pub fn send(&mut self, n: u32) -> u32 {
        for _ in 0..n {
            self.transmit_one();
        }
        if self.tp.in_cwnd_reduction() {
            self.prr.prr_out = self.prr.prr_out.wrapping_add(n);
        }
        let cwnd_full = self.tp.in_flight() >= self.tp.snd_cwnd;
        if n > 0 || cwnd_full {
            self.cwnd_validate(cwnd_full);
        }
        n
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

    /// An ACK with every option (ECE, losses detected on it). See [`Ack`].
    pub fn ack_with(&mut self, a: Ack) -> RateSample {
        self.advance(a.advance_ns);
        let now = self.tp.now;
        let prior_packets = self.tp.packets_out;
        let prior_in_flight = self.tp.in_flight();
        let prior_snd_una = self.tp.snd_una;
        let lost_before = self.tp.lost;
        let flags = AckEventFlags {
            slowpath: a.ece,
            win_update: !a.ece,
            ece: a.ece,
        };

        if prior_packets == 0 {
            // Nothing outstanding (`no_queue` in tcp_ack): only the ACK event.
            self.cc.in_ack_event(&mut self.tp, flags);
            return RateSample::default();
        }

        // tcp_clean_rtx_queue: remove the ACKed packets, keeping the snapshot of the most recently sent one.
        let n = a.acked.min(prior_packets);
        let mut sample: Option<Sent> = None;
        for _ in 0..n {
            let p = self.out.pop_front().expect("packets_out matches the queue");
            self.tp.snd_una = self.tp.snd_una.wrapping_add(1);
            self.tp.packets_out -= 1;
            if p.lost {
                self.tp.lost_out -= 1;
            }
            if p.retrans {
                self.tp.retrans_out -= 1;
            }
            let newer = match sample {
                None => true,
                Some(s) => {
                    p.sent > self.first_tx_mstamp || (p.sent == self.first_tx_mstamp && after(p.seq, s.seq))
                }
            };
            if newer {
                self.first_tx_mstamp = p.sent;
                sample = Some(p);
            }
        }
        self.tp.delivered = self.tp.delivered.wrapping_add(n);
        if a.ece {
            self.tp.delivered_ce = self.tp.delivered_ce.wrapping_add(n);
        }
        let rtt_us = if n > 0 { a.rtt_us } else { -1 };
        if rtt_us >= 0 {
            self.rtt_estimator(rtt_us as u64);
        }
        self.refresh_cwnd_limited();
        self.cc.pkts_acked(
            &mut self.tp,
            &AckSample {
                pkts_acked: n,
                rtt_us,
                in_flight: prior_in_flight,
            },
        );

        if a.lost > 0 {
            self.mark_lost(a.lost);
        }
        self.cc.in_ack_event(&mut self.tp, flags);
        self.check_state_exit();

        // tcp_rate_gen.
        if self.tp.app_limited != 0 && after(self.tp.delivered, self.tp.app_limited) {
            self.tp.app_limited = 0;
        }
        if n > 0 {
            self.tp.delivered_mstamp = now;
        }
        let newly_lost = self.tp.lost.wrapping_sub(lost_before);
        let mut rs = RateSample {
            rtt_us,
            losses: newly_lost,
            acked_sacked: n,
            prior_in_flight,
            ece: a.ece,
            ..RateSample::default()
        };
        if let Some(p) = sample {
            rs.prior_mstamp = p.delivered_mstamp;
            rs.prior_delivered = p.delivered;
            rs.prior_delivered_ce = p.delivered_ce;
            rs.is_app_limited = p.app_limited;
            rs.is_retrans = p.ever_retrans;
            rs.tx_in_flight = p.in_flight;
            rs.lost = self.tp.lost.wrapping_sub(p.lost_total);
            rs.delivered = self.tp.delivered.wrapping_sub(p.delivered) as i32;
            rs.delivered_ce = self.tp.delivered_ce.wrapping_sub(p.delivered_ce) as i32;
            let snd_us = p.sent.saturating_since(p.first_tx_mstamp).us() as i64;
            let ack_us = now.saturating_since(p.delivered_mstamp).us() as i64;
            rs.snd_interval_us = snd_us;
            rs.rcv_interval_us = ack_us;
            rs.interval_us = snd_us.max(ack_us);
            if rs.interval_us < self.tp.min_rtt_us as i64 {
                rs.interval_us = -1;
            }
        }

        // tcp_cong_control.
        if self.flags.cong_control {
            self.refresh_cwnd_limited();
            self.cc.cong_control(&mut self.tp, &rs);
        } else {
            if self.tp.in_cwnd_reduction() {
                let una_advanced = after(self.tp.snd_una, prior_snd_una);
                self.cwnd_reduction(n, newly_lost, una_advanced);
            } else if n > 0 {
                self.refresh_cwnd_limited();
                self.cc.cong_avoid(&mut self.tp, n);
            }
            self.update_pacing_rate();
        }
        rs
    }

    /// Mark the `n` oldest packets still counted in flight as lost (a retransmission lost again counts too),
    /// as loss detection outside an ACK would (e.g. a RACK timer). Returns how many were marked.
    pub fn mark_lost(&mut self, n: u32) -> u32 {
        let mut marked = 0;
        for i in 0..self.out.len() {
            if marked == n {
                break;
            }
            let p = &mut self.out[i];
            if !p.lost {
                p.lost = true;
                self.tp.lost_out += 1;
            } else if p.retrans {
                p.retrans = false;
                self.tp.retrans_out -= 1;
            } else {
                continue;
            }
            let skb = LostSkb {
                tx_in_flight: p.in_flight,
                tx_lost: p.lost_total,
                tx_delivered_ce: p.delivered_ce,
                is_app_limited: p.app_limited,
                pcount: 1,
            };
            self.tp.lost = self.tp.lost.wrapping_add(1);
            // `tcp_notify_skb_loss_event` (google/bbr): the algorithm hears of each packet marked lost.
            self.cc.skb_marked_lost(&mut self.tp, &skb);
            marked += 1;
        }
        marked
    }

    /// Loss detected: `tcp_enter_recovery`. From Open/Disorder this starts a reduction (`prior_cwnd`,
    /// `high_seq`, the `ssthresh` hook), from CWR it only changes the state; in Recovery or Loss, or with
    /// nothing outstanding, it does nothing. It does not mark packets lost (see [`Driver::mark_lost`]).
    pub fn enter_recovery(&mut self) {
        if self.tp.packets_out == 0 || self.tp.ca_state >= CaState::Recovery {
            return;
        }
        self.prior_ssthresh = 0;
        self.undo_marker = true;
        if !self.tp.in_cwnd_reduction() {
            self.prior_ssthresh = self.tp.current_ssthresh();
            self.init_cwnd_reduction();
        }
        self.set_ca_state(CaState::Recovery);
    }

    /// ECN congestion signal: `tcp_enter_cwr` (only from Open/Disorder; the reduction cannot be undone).
    pub fn enter_cwr(&mut self) {
        self.prior_ssthresh = 0;
        if self.tp.ca_state < CaState::Cwr {
            self.undo_marker = false;
            self.init_cwnd_reduction();
            self.set_ca_state(CaState::Cwr);
        }
    }

    /// End the current CWR / Recovery / Loss episode now, as the stack does when `high_seq` is ACKed (which
    /// [`Driver::ack`] also does by itself).
    pub fn exit_recovery(&mut self) {
        match self.tp.ca_state {
            CaState::Recovery => {
                self.set_ca_state(CaState::Open);
                self.end_cwnd_reduction();
            }
            CaState::Cwr => {
                self.end_cwnd_reduction();
                self.set_ca_state(CaState::Open);
            }
            CaState::Loss => self.set_ca_state(CaState::Open),
            CaState::Open | CaState::Disorder => {}
        }
    }

    /// The reduction turned out spurious: undo it (`tcp_undo_cwnd_reduction` via `undo_cwnd`, then Open), as
    /// Linux does when DSACKs or timestamps prove the retransmissions unnecessary. Only in Recovery or Loss,
    /// and not after an ECN-triggered reduction.
    pub fn undo(&mut self) {
        let state = self.tp.ca_state;
        if !matches!(state, CaState::Recovery | CaState::Loss) || !self.undo_marker {
            return;
        }
        if state == CaState::Loss {
            // The "lost" packets were not lost after all.
            for p in self.out.iter_mut() {
                p.lost = false;
            }
            self.tp.lost_out = 0;
        }
        if self.prior_ssthresh != 0 {
            self.tp.snd_cwnd = self.cc.undo_cwnd(&mut self.tp);
            if self.prior_ssthresh > self.tp.snd_ssthresh {
                self.tp.snd_ssthresh = self.prior_ssthresh;
            }
        }
        self.undo_marker = false;
        self.set_ca_state(CaState::Open);
        if state == CaState::Recovery {
            self.end_cwnd_reduction();
        }
    }

    /// The retransmission timer fired: `tcp_enter_loss`. Every outstanding packet is marked lost; a new loss
    /// episode calls the `ssthresh` hook and raises `CaEvent::Loss`; cwnd becomes in-flight + 1 (= 1); the
    /// state becomes Loss. Does nothing when nothing is outstanding (no timer would be running).
    pub fn rto(&mut self) {
        if self.tp.packets_out == 0 {
            return;
        }
        let new_episode = self.tp.ca_state <= CaState::Disorder || !after(self.tp.high_seq, self.tp.snd_una);
        let everything = self.tp.packets_out;
        self.mark_lost(everything);
        if new_episode {
            self.prior_ssthresh = self.tp.current_ssthresh();
            self.tp.prior_cwnd = self.tp.snd_cwnd;
            self.tp.snd_ssthresh = self.cc.ssthresh(&mut self.tp);
            self.cc.cwnd_event(&mut self.tp, CaEvent::Loss);
            self.undo_marker = true;
        }
        self.tp.snd_cwnd = self.tp.in_flight() + 1;
        self.tp.snd_cwnd_cnt = 0;
        self.set_ca_state(CaState::Loss);
        self.tp.high_seq = self.tp.snd_nxt;
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

    fn transmit_one(&mut self) {
        if self.tp.in_flight() == 0 {
            self.cc.cwnd_event(&mut self.tp, CaEvent::TxStart);
        }
        self.tp.lsndtime = self.tp.now;
        let now = self.tp.now;

        let retransmit = if self.tp.lost_out > self.tp.retrans_out {
            self.out.iter().position(|p| p.lost && !p.retrans)
        } else {
            None
        };
        if self.tp.packets_out == 0 {
            self.first_tx_mstamp = now;
            self.tp.delivered_mstamp = now;
        }
        let snapshot = Sent {
            seq: self.tp.snd_nxt,
            sent: now,
            delivered: self.tp.delivered,
            delivered_ce: self.tp.delivered_ce,
            delivered_mstamp: self.tp.delivered_mstamp,
            first_tx_mstamp: self.first_tx_mstamp,
            lost_total: self.tp.lost,
            in_flight: self.tp.in_flight() + 1,
            app_limited: self.tp.app_limited != 0,
            lost: false,
            retrans: false,
            ever_retrans: false,
        };
        match retransmit {
            Some(i) => {
                let p = &mut self.out[i];
                *p = Sent {
                    seq: p.seq,
                    lost: true,
                    retrans: true,
                    ever_retrans: true,
                    ..snapshot
                };
                self.tp.retrans_out += 1;
            }
            None => {
                self.out.push_back(snapshot);
                self.tp.snd_nxt = self.tp.snd_nxt.wrapping_add(1);
                self.tp.packets_out += 1;
            }
        }
    }

    /// `tcp_rtt_estimator` (srtt part) and the min-RTT filter (without its time window).
    fn rtt_estimator(&mut self, m: u64) {
        if self.srtt8 == 0 {
            self.srtt8 = m.max(1) << 3;
        } else {
            self.srtt8 = self.srtt8 - (self.srtt8 >> 3) + m;
        }
        self.tp.srtt_us = (self.srtt8 >> 3).min(u32::MAX as u64) as u32;
        self.tp.min_rtt_us = self.tp.min_rtt_us.min(m.min(u32::MAX as u64) as u32);
    }

    /// `tcp_cwnd_validate`'s bookkeeping of how fully the current window used cwnd.
    fn cwnd_validate(&mut self, cwnd_full: bool) {
        self.cwnd_usage.validate(&self.tp, cwnd_full);
    }

    /// `tcp_is_cwnd_limited`.
    fn refresh_cwnd_limited(&mut self) {
        self.tp.is_cwnd_limited = self.cwnd_usage.is_cwnd_limited(&self.tp);
    }

    fn set_ca_state(&mut self, state: CaState) {
        self.cc.set_state(&mut self.tp, state);
        self.tp.ca_state = state;
    }

    /// `tcp_init_cwnd_reduction`.
    fn init_cwnd_reduction(&mut self) {
        self.prr.init(self.cc.as_mut(), &mut self.tp);
    }

    /// `tcp_end_cwnd_reduction`.
    fn end_cwnd_reduction(&mut self) {
        if self.flags.cong_control {
            return;
        }
        if self.tp.snd_ssthresh < crate::sock::TCP_INFINITE_SSTHRESH
            && (self.tp.ca_state == CaState::Cwr || self.undo_marker)
        {
            self.tp.snd_cwnd = self.tp.snd_ssthresh;
        }
        self.cc.cwnd_event(&mut self.tp, CaEvent::CompleteCwr);
    }

    /// The state-exit part of `tcp_fastretrans_alert` (no undo is detected).
    fn check_state_exit(&mut self) {
        let una = self.tp.snd_una;
        let high = self.tp.high_seq;
        match self.tp.ca_state {
            CaState::Cwr if after(una, high) => self.exit_recovery(),
            CaState::Recovery | CaState::Loss if !before(una, high) => self.exit_recovery(),
            _ => {}
        }
    }

    /// `tcp_cwnd_reduction`: proportional rate reduction.
    fn cwnd_reduction(&mut self, newly_acked: u32, newly_lost: u32, una_advanced: bool) {
        self.prr
            .reduce(&mut self.tp, newly_acked, newly_lost, una_advanced);
    }

    /// `tcp_update_pacing_rate`.
    fn update_pacing_rate(&mut self) {
        self.tp.pacing_rate = stack::pacing_rate(&self.tp, self.srtt8);
    }
}
