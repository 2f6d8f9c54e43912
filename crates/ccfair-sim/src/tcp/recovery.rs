//! Loss recovery: Linux's congestion-avoidance state machine (`tcp_fastretrans_alert`), RACK loss detection
//! (`tcp_rack_mark_lost`, `tcp_rack_detect_loss`, `tcp_rack_reo_timeout`), the RTO's Loss state with F-RTO
//! (RFC 5682) and its undo, and TLP episode accounting (`tcp_process_tlp_ack`).
//!
//! What acts on the socket alone is `ccfair_cc::stack::TcpCore`, shared with the scripted driver: entering
//! and leaving CWR/Recovery, the start of an RTO episode (`tcp_enter_loss`), undo, and Proportional Rate
//! Reduction as Linux implements it (`tcp_cwnd_reduction`: prior_cwnd instead of RFC 6937's RecoverFS, +1
//! only when snd_una advanced without new losses). This file marks packets and decides when to call it.
//!
//! With RACK on (Linux default `tcp_recovery` = 1) recovery starts only once a segment is marked lost; RACK's
//! reordering window is zero after three SACKed segments, which reproduces the dupthresh rule.

use ccfair_cc::rate::sent_after;
use ccfair_cc::{CaEvent, CaState};
use ccfair_core::Dur;

use super::rtx_queue::{LOST, NIL, SACKED_ACKED, SACKED_RETRANS};
use super::sender::{
    FLAG_DATA_SACKED, FLAG_ECE, FLAG_LOST_RETRANS, FLAG_NOT_DUP, FLAG_ORIG_SACK_ACKED, FLAG_SET_XMIT_TIMER,
    FLAG_SND_UNA_ADVANCED, Rexmit, Sender, XmitTimer,
};

impl Sender {
    /// `tcp_fastretrans_alert` for a SACK connection with RACK (no DSACK-based undo).
    pub(super) fn fastretrans_alert(&mut self, num_dupack: u32, flag: &mut u32, rexmit: &mut Rexmit) {
        let ece_ack = *flag & FLAG_ECE != 0;
        if self.tp.packets_out == 0 && self.tp.sacked_out > 0 {
            self.tp.sacked_out = 0;
        }
        if ece_ack {
            // ECE proves congestion: the reduction must not be undone.
            self.core.prior_ssthresh = 0;
        }

        // D. Leave CWR or Recovery once high_seq is acknowledged.
        self.core.end_reduction_if_acked(&mut self.tp);

        // E. Process the state.
        match self.tp.ca_state {
            CaState::Recovery => {
                // No partial or DSACK undo is possible here; detect further losses.
                self.identify_packet_loss(flag);
            }
            CaState::Loss => {
                self.process_loss(*flag, num_dupack, rexmit);
                self.identify_packet_loss(flag);
                // Continue below only if the cwnd was undone (Open) or a retransmission was lost again.
                if !(self.tp.ca_state == CaState::Open || *flag & FLAG_LOST_RETRANS != 0) {
                    return;
                }
                if !self.detect_and_maybe_recover(flag, ece_ack) {
                    return;
                }
            }
            _ => {
                if !self.detect_and_maybe_recover(flag, ece_ack) {
                    return;
                }
            }
        }
        *rexmit = Rexmit::Lost;
    }

    /// The `default:` branch of `tcp_fastretrans_alert`: detect loss, then either reopen (returns false) or
    /// enter Recovery (returns true).
    fn detect_and_maybe_recover(&mut self, flag: &mut u32, ece_ack: bool) -> bool {
        self.identify_packet_loss(flag);
        if !self.time_to_recover() {
            self.try_to_open(*flag);
            return false;
        }
        self.enter_recovery(ece_ack);
        true
    }

    /// `tcp_time_to_recover` with RACK: the loss is proven once something is marked lost.
    fn time_to_recover(&self) -> bool {
        self.tp.lost_out > 0
    }

    /// `tcp_identify_packet_loss` (RACK).
    fn identify_packet_loss(&mut self, flag: &mut u32) {
        if self.q.is_empty() {
            return;
        }
        let prior_retrans = self.tp.retrans_out;
        if self.rack_mark_lost() {
            *flag &= !FLAG_SET_XMIT_TIMER;
        }
        if prior_retrans > self.tp.retrans_out {
            *flag |= FLAG_LOST_RETRANS;
        }
    }

    /// `tcp_rack_mark_lost`: scans for losses if RACK's reference advanced; arms the reordering timer for
    /// candidates not yet overdue. Returns whether that timer was armed.
    fn rack_mark_lost(&mut self) -> bool {
        if !self.rack.advanced {
            return false;
        }
        self.rack.advanced = false;
        let timeout_ns = self.rack_detect_loss();
        if timeout_ns > 0 {
            // usecs_to_jiffies(timeout + TCP_TIMEOUT_MIN_US): whole jiffies, rounded up.
            let us = (timeout_ns as u64).div_ceil(1000) + super::TIMEOUT_MIN_US;
            let when = self.tp.now + Dur::from_ms(us.div_ceil(1000));
            self.reset_xmit_timer(XmitTimer::ReoTimeout, when);
        }
        timeout_ns > 0
    }

    /// `tcp_rack_detect_loss`: walks the time-sorted list; returns the longest remaining wait (ns), 0 if none.
    pub(super) fn rack_detect_loss(&mut self) -> i64 {
        let now = self.tp.now;
        let in_recovery = self.tp.ca_state >= CaState::Recovery;
        let reo_wnd = self.rack.reo_wnd(
            in_recovery,
            self.tp.sacked_out,
            self.reordering,
            self.min_rtt(),
            self.srtt(),
        );
        let mut reo_timeout: i64 = 0;
        let mut seq = self.q.tsorted_head();
        while seq != NIL {
            let next = self.q.tsorted_next(seq);
            let seg = *self.q.get(seq);
            // Marked lost by an RTO but not yet retransmitted: skip.
            if seg.flags & LOST != 0 && seg.flags & SACKED_RETRANS == 0 {
                seq = next;
                continue;
            }
            if !sent_after(self.rack.mstamp, seg.xmit_time, self.rack.end_seq, seq + 1) {
                break;
            }
            let remaining = self.rack.skb_timeout_ns(now, seg.xmit_time, reo_wnd);
            if remaining <= 0 {
                self.mark_skb_lost(seq);
                self.q.unlink(seq);
            } else {
                reo_timeout = reo_timeout.max(remaining);
            }
            seq = next;
        }
        reo_timeout
    }

    /// `tcp_mark_skb_lost`.
    pub(super) fn mark_skb_lost(&mut self, seq: u32) {
        let flags = self.q.get(seq).flags;
        if flags & SACKED_ACKED != 0 {
            return;
        }
        if seq < self.retransmit_hint || self.tp.retrans_out >= self.tp.lost_out {
            self.retransmit_hint = self.retransmit_hint.min(seq);
        }
        let seg = self.q.get_mut(seq);
        if flags & LOST != 0 {
            if flags & SACKED_RETRANS != 0 {
                // The retransmission was lost too.
                seg.flags &= !SACKED_RETRANS;
                self.tp.retrans_out -= 1;
                self.tp.lost += 1;
                self.notify_skb_loss_event(seq);
            }
        } else {
            seg.flags |= LOST;
            self.tp.lost_out += 1;
            self.tp.lost += 1;
            self.notify_skb_loss_event(seq);
        }
    }

    /// `tcp_notify_skb_loss_event` of the google/bbr branch (in the shared core).
    fn notify_skb_loss_event(&mut self, seq: u32) {
        let tx = self.q.get(seq).tx;
        self.core.skb_marked_lost(&mut self.tp, &tx);
    }

    /// `tcp_rack_reo_timeout`: the reordering timer fired.
    pub(super) fn rack_reo_timeout(&mut self, out: &mut Vec<super::Segment>) {
        let lost_before = self.tp.lost;
        let prior_inflight = self.tp.in_flight();
        self.rack_detect_loss();
        if prior_inflight != self.tp.in_flight() {
            if self.tp.ca_state != CaState::Recovery {
                self.enter_recovery(false);
                if !self.core.flags().cong_control {
                    let newly_lost = self.tp.lost - lost_before;
                    self.core.cwnd_reduction(&mut self.tp, 1, newly_lost, false);
                }
            }
            self.xmit_retransmit_queue(out);
        }
        if self.xmit_timer_kind() != Some(XmitTimer::Retrans) {
            self.rearm_rto();
        }
    }

    /// The sender's part of `tcp_init_cwnd_reduction`: a new reduction ends the TLP episode and queues CWR.
    fn reduction_began(&mut self) {
        self.tlp_high_seq = None;
        if self.ecn.uses_cwr() {
            self.ecn_queue_cwr = true;
        }
    }

    /// `tcp_enter_recovery`.
    fn enter_recovery(&mut self, ece_ack: bool) {
        self.stats.recoveries += 1;
        self.stats.cwnd_reductions += 1;
        if self.core.enter_recovery(&mut self.tp, ece_ack) {
            self.reduction_began();
        }
    }

    /// `tcp_any_retrans_done`.
    fn any_retrans_done(&self) -> bool {
        if self.tp.retrans_out > 0 {
            return true;
        }
        self.q
            .front()
            .is_some_and(|s| s.flags & super::rtx_queue::EVER_RETRANS != 0)
    }

    /// `tcp_try_keep_open`.
    fn try_keep_open(&mut self) {
        let any_retrans_done = self.any_retrans_done();
        self.core.try_keep_open(&mut self.tp, any_retrans_done);
    }

    /// `tcp_try_to_open`.
    fn try_to_open(&mut self, flag: u32) {
        let any_retrans_done = self.any_retrans_done();
        if self
            .core
            .try_to_open(&mut self.tp, flag & FLAG_ECE != 0, any_retrans_done)
        {
            self.stats.cwnd_reductions += 1; // CWR entered on ECE
            self.reduction_began();
        }
    }

    /// `tcp_process_loss` with F-RTO (`tcp_frto` = 2), without DSACK/timestamp undo.
    fn process_loss(&mut self, flag: u32, num_dupack: u32, rexmit: &mut Rexmit) {
        let recovered = self.tp.snd_una >= self.tp.high_seq;
        if self.frto {
            // Step 3.b: never-retransmitted data below high_seq was (S)ACKed: the timeout was spurious.
            if flag & FLAG_ORIG_SACK_ACKED != 0 && self.try_undo_loss_frto() {
                return;
            }
            if self.tp.snd_nxt > self.tp.high_seq {
                if flag & FLAG_DATA_SACKED != 0 || num_dupack > 0 {
                    self.frto = false; // Step 3.a: the loss was real.
                }
            } else if flag & FLAG_SND_UNA_ADVANCED != 0 && !recovered {
                self.tp.high_seq = self.tp.snd_nxt;
                // Step 2.b: send new data before retransmitting more.
                if self.has_unsent() {
                    *rexmit = Rexmit::New;
                    return;
                }
                self.frto = false;
            }
        }
        if recovered {
            // Step 2.a and the first part of 3.a: all lost data repaired.
            self.set_ca_state(CaState::Open);
            return;
        }
        *rexmit = Rexmit::Lost;
    }

    /// `tcp_try_undo_loss(sk, true)`: F-RTO proved the RTO spurious.
    fn try_undo_loss_frto(&mut self) -> bool {
        // tcp_undo_cwnd_reduction(sk, unmark_loss = true)
        for seq in self.q.head_seq()..self.q.end_seq() {
            self.q.get_mut(seq).flags &= !LOST;
        }
        self.tp.lost_out = 0;
        self.retransmit_hint = self.tp.snd_una;
        if self.core.undo_cwnd_reduction(&mut self.tp) {
            self.ecn_queue_cwr = false;
        }
        self.rack.advanced = true;
        self.stats.spurious_rto_undos += 1;
        self.retransmits = 0;
        self.set_ca_state(CaState::Open);
        true
    }

    /// `tcp_enter_loss`: the RTO fired. The episode start, cwnd and state are the shared core's.
    pub(super) fn enter_loss(&mut self) {
        let new_recovery = self.tp.ca_state < CaState::Recovery;
        self.timeout_mark_lost();
        // A timeout in Disorder after substantial SACKs: the reordering degree was over-estimated.
        if self.tp.ca_state <= CaState::Disorder && self.tp.sacked_out >= super::REORDERING {
            self.reordering = self.reordering.min(super::REORDERING);
        }
        if self.core.enter_loss(&mut self.tp, self.retransmits) {
            self.stats.cwnd_reductions += 1;
        }
        if self.ecn.uses_cwr() {
            self.ecn_queue_cwr = true;
        }
        self.frto = new_recovery || self.retransmits > 0;
    }

    /// `tcp_timeout_mark_lost`: everything outstanding is lost, except segments sent less than RACK's RTT ago.
    fn timeout_mark_lost(&mut self) {
        let now = self.tp.now;
        let head = self.q.head_seq();
        for seq in head..self.q.end_seq() {
            let xmit = self.q.get(seq).xmit_time;
            if seq != head && self.rack.skb_timeout_ns(now, xmit, Dur::ZERO) > 0 {
                continue;
            }
            self.mark_skb_lost(seq);
        }
        self.retransmit_hint = head;
    }

    /// `tcp_process_tlp_ack`: did the tail loss probe repair a loss?
    pub(super) fn process_tlp_ack(&mut self, ack: u32, tlp_high_seq: u32, flag: u32) {
        if ack < tlp_high_seq {
            return;
        }
        if !self.tlp_retrans {
            // A probe of new data was acknowledged.
            self.tlp_high_seq = None;
        } else if ack > tlp_high_seq {
            // The ACK went beyond the probe: a loss was repaired, so reduce as for ECN. The google/bbr branch
            // first tells the algorithm (`CA_EVENT_TLP_RECOVERY`: BBRv3 counts the repaired loss); mainline
            // does not raise the event, and algorithms other than BBRv3 ignore it.
            self.core.cc().cwnd_event(&mut self.tp, CaEvent::TlpRecovery);
            self.core.init_cwnd_reduction(&mut self.tp);
            self.reduction_began();
            self.set_ca_state(CaState::Cwr);
            self.core.end_cwnd_reduction(&mut self.tp);
            self.try_keep_open();
        } else if flag & (FLAG_SND_UNA_ADVANCED | FLAG_NOT_DUP | FLAG_DATA_SACKED) == 0 {
            // A pure duplicate: both the original and the probe arrived.
            self.tlp_high_seq = None;
        }
    }

    /// `tcp_xmit_recovery`: after the cwnd update, send what loss recovery asked for.
    pub(super) fn xmit_recovery(&mut self, rexmit: Rexmit, out: &mut Vec<super::Segment>) {
        match rexmit {
            Rexmit::None => {}
            Rexmit::New => {
                self.write_xmit(0, out);
                if self.tp.snd_nxt > self.tp.high_seq {
                    return;
                }
                self.frto = false;
                self.xmit_retransmit_queue(out);
            }
            Rexmit::Lost => self.xmit_retransmit_queue(out),
        }
    }
}
