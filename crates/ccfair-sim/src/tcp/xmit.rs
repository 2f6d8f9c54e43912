//! Transmission and timers: `tcp_write_xmit` (cwnd test, receive-window test `tcp_snd_wnd_test` with bursts cut
//! at the window's edge as `tcp_mss_split_point` does, pacing check, TSO-sized bursts for paced flows, and with
//! the host's `tso` for every flow, with TSO deferral, `tcp_tso_should_defer`), TCP Small Queues
//! (`tcp_small_queue_check`: a flow keeps at most about 1 ms of its pacing rate in its host's queues),
//! `tcp_xmit_retransmit_queue`, the earliest-departure-time pacing model (`tcp_update_skb_after_send`: the
//! first 10 segments are not paced, half of any lateness is credited), congestion-window validation
//! (`tcp_cwnd_validate`), the tail loss probe (`tcp_schedule_loss_probe`, `tcp_send_loss_probe`), and the
//! retransmission timer (`tcp_rearm_rto`, `tcp_retransmit_timer` with exponential backoff).
//! Every burst of more than one segment ends in PSH, as `__tcp_transmit_skb` forces PSH on any skb of more
//! than one segment (the receiver's GRO flushes on it, and since Linux 6.6 its delayed-ACK logic reads it,
//! see `tcp/receiver.rs`). Deviation: a bulk application's writes also end in PSH where each write ends
//! (`tcp_push`); the kernel backend's sender, writing 256 KB at a time, puts PSH on 2 % of its single
//! segments (`5reno-5cubic`); here only a finite flow's last segment carries it.
//!
//! Linux multiplexes RTO, TLP and RACK's reordering timer on one timer; so does this sender (`xmit_timer`).
//! Timer values are whole jiffies (1 ms, HZ=1000) as in the kernel.
//!
//! Speed: a throttled sender is woken each time one of its segments leaves the host, and most wakeups find
//! the host still over the limit. The limit that holds it is worked out once per state of the sender and
//! kept with TSQ's other fields on one cache line (`Tsq`), so such a wakeup reads nothing else of the sender
//! and changes nothing; it gives the same result as running `tcp_write_xmit` (see `on_tsq_wakeup`). An
//! unpaced sender whose skbs are single segments (no TSO) sends what its windows allow as one run, worked out
//! once rather than pass by pass (`write_singles`); and the timer an ACK re-arms is armed once, by the
//! `write_xmit` that follows it (see `Sender::xmit_timer_owed`).

use ccfair_cc::CaState;
use ccfair_cc::stack;
use ccfair_core::{Dur, Ecn, Time};

use super::rtx_queue::{EVER_RETRANS, LOST, RETRANS, SACKED_ACKED, SACKED_RETRANS};
use super::sender::{Sender, XmitTimer};
use super::{Segment, ts_clock_ms};

/// What `tcp_tso_should_defer` decides for the next burst.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum TsoDefer {
    Send,
    /// Send, because the next ACK is not due soon: a later clock may defer.
    SendForNow,
    /// Hold the burst back; `by_cwnd` if the window is what limits it.
    Defer {
        by_cwnd: bool,
    },
}

impl Sender {
    /// The application writes a finite number of bytes (else it is a bulk source).
    #[inline]
    fn size_is_finite(&self) -> bool {
        self.app_end_seq != u32::MAX
    }

    /// The application has data the sender has not sent yet.
    #[inline]
    pub(super) fn has_unsent(&self) -> bool {
        self.tp.snd_nxt < self.app_end_seq
    }

    /// `tcp_cwnd_test`: how many segments the window allows now (at most half the window per burst).
    #[inline]
    fn cwnd_test(&self) -> u32 {
        let in_flight = self.tp.in_flight();
        let cwnd = self.tp.snd_cwnd;
        if in_flight >= cwnd {
            return 0;
        }
        (cwnd >> 1).max(1).min(cwnd - in_flight)
    }

    /// `tcp_tso_segs`: segments per burst (`tcp_tso_autosize`, with the algorithm's `min_tso_segs`), from
    /// the pacing rate, which `tcp_update_pacing_rate` keeps for every flow, paced or not. Without the host's
    /// `tso` an unpaced sender sends segment by segment: with an infinitely fast NIC that is the same as
    /// Linux's back-to-back bursts.
    fn tso_segs(&self) -> u32 {
        if !self.tp.internal_pacing && !self.tso {
            return 1;
        }
        let cc = self.core.cc_ref();
        if let Some(segs) = cc.tso_segs(&self.tp) {
            return segs.max(1);
        }
        let min = cc.min_tso_segs(&self.tp).unwrap_or(stack::MIN_TSO_SEGS);
        stack::tso_autosize(&self.tp, min)
    }

    /// `tcp_tso_should_defer` (`tcp_tso_win_divisor` = 3): whether to hold back a burst the windows (the
    /// congestion and the receive window) only partly allow, waiting for the ACKs due soon to allow more. The
    /// next skb of the write queue holds `skb_segs` segments (the application writes in skbs of `max_segs`, the
    /// size goal `tcp_tso_autosize` sets).
    fn tso_should_defer(&self, skb_segs: u32, max_segs: u32) -> TsoDefer {
        if self.tp.ca_state >= CaState::Recovery {
            return TsoDefer::Send;
        }
        // Defer only if the last transmission was recent (within 1 ms), to avoid bursts after idle.
        if self.tp.now.saturating_since(self.wstamp) > Dur::from_ms(1) {
            return TsoDefer::Send;
        }
        let cwnd = self.tp.snd_cwnd;
        let cwnd_room = cwnd.saturating_sub(self.tp.in_flight());
        let wnd_room = self.snd_wnd_end().saturating_sub(self.tp.snd_nxt);
        let room = cwnd_room.min(wnd_room);
        // A full-sized burst fits.
        if room >= max_segs {
            return TsoDefer::Send;
        }
        // A finite flow's last skb carries its FIN: it gets no more data, so there is nothing to wait for.
        if self.size_is_finite() && skb_segs == self.app_end_seq - self.tp.snd_nxt {
            return TsoDefer::Send;
        }
        // At least a third of the window is free.
        let mss = self.tp.mss as u64;
        let chunk = (self.snd_wnd as u64).min(cwnd as u64 * mss) / 3;
        if room as u64 * mss >= chunk {
            return TsoDefer::Send;
        }
        // The next ACK is expected (the head's send time plus srtt) more than min(1 ms, srtt/2) from now: do
        // not wait for it, a smooth ACK clock is worth more ("tcp: fix tcp_tso_should_defer() vs large RTT",
        // Linux 6.18; before it, the test was whether the head left less than srtt/2 ago, which at RTTs of
        // tens of ms deferred an odd segment on almost every ACK of a window-limited flow).
        let Some(head) = self.q.front() else {
            return TsoDefer::Send;
        };
        let srtt_ns = (self.rtt.srtt_us8 as u64) * 1000 / 8;
        let expected_ack_ns = head.xmit_time.ns() + srtt_ns;
        let threshold_ns = (srtt_ns / 2).min(1_000_000);
        if expected_ack_ns.saturating_sub(self.tp.now.ns()) > threshold_ns {
            return TsoDefer::SendForNow;
        }
        TsoDefer::Defer {
            by_cwnd: cwnd_room < wnd_room && cwnd_room <= skb_segs,
        }
    }

    /// `tcp_small_queue_check` (factor 0, `tcp_limit_output_bytes` = 4 MB, Linux ≥ 6.7): true (and the
    /// sender throttled until segments leave its host) if the host already holds more than about 1 ms of the
    /// flow's pacing rate, or two of its skbs of `skb_segs`, with `sent` segments of this call added. Linux
    /// counts the true size of the skbs until the NIC completes them; here the wire bytes of the segments not
    /// yet on the wire. Never on a host that holds nothing.
    fn small_queue_check(&mut self, skb_segs: u32, sent: u32) -> bool {
        if !self.tsq.host_queue {
            return false;
        }
        let limit = self.tsq_limit_bytes(skb_segs);
        if (self.tsq.host_queued + sent) as u64 * self.wire_len as u64 <= limit {
            return false;
        }
        // Always send if the retransmission queue is empty or holds one skb.
        if self.tp.packets_out <= skb_segs {
            return false;
        }
        self.tsq.throttled = true;
        true
    }

    /// The bytes TCP Small Queues lets the host hold for skbs of `skb_segs` segments.
    fn tsq_limit_bytes(&self, skb_segs: u32) -> u64 {
        const LIMIT_OUTPUT_BYTES: u64 = 4 << 20;
        let limit =
            (2 * skb_segs as u64 * self.wire_len as u64).max(self.tp.pacing_rate >> stack::PACING_SHIFT);
        if self.tp.internal_pacing {
            limit
        } else {
            limit.min(LIMIT_OUTPUT_BYTES)
        }
    }

    /// For a throttled sender: the TSQ limit (bytes) that stops [`Self::write_xmit`] at its first burst, before
    /// anything else stops it or changes state, for as long as nothing but the host's queue and the clock
    /// changes; `None` if its path depends on more (a retransmission due, pacing or TSO deferral that a later
    /// clock may decide differently, no TSQ check reached). Each check of the first burst is a function of the
    /// sender's state, or of the clock in a direction that only the present outcome can follow (a pacing
    /// deadline passed stays passed; a last transmission more than 1 ms ago stays so).
    fn tsq_hold_limit(&self) -> Option<u64> {
        if self.tp.lost_out > self.tp.retrans_out && self.tp.snd_cwnd > self.tp.in_flight() {
            return None;
        }
        if !self.has_unsent() || (self.tp.internal_pacing && self.wstamp > self.tp.now) {
            return None;
        }
        if self.cwnd_test() == 0 {
            return None;
        }
        let max_segs = self.tso_segs();
        let skb_segs = max_segs.min(self.app_end_seq - self.tp.snd_nxt);
        if self.tso && skb_segs > 1 && self.tso_should_defer(skb_segs, max_segs) != TsoDefer::Send {
            return None;
        }
        if !self.tsq.host_queue || self.tp.packets_out <= skb_segs {
            return None;
        }
        Some(self.tsq_limit_bytes(skb_segs))
    }

    /// Segments of this sender held in its host (set by the simulator as they enter and leave it).
    pub fn set_host_queued(&mut self, segments: u32) {
        self.tsq.host_queued = segments;
    }

    /// TSQ throttled the sender: it waits for segments to leave its host.
    pub fn tsq_throttled(&self) -> bool {
        self.tsq.throttled
    }

    /// Segments left the host of a throttled sender (`tcp_wfree` → `tcp_tsq_handler` → `tcp_tsq_write`).
    /// Returns false if nothing changed: the host still holds more than TSQ allows and nothing else about the
    /// sender changed since its limit was worked out, so `tcp_write_xmit` would stop at the same check again
    /// (a flow's segments leave one by one, and most wakeups find it so). The limit is worked out once per
    /// state of the sender and forgotten at every other call into it. Such a wakeup reads and writes only
    /// [`Tsq`]: it leaves `tp.now` and `last_rtt_us` as they were, which is the same, as every call into the
    /// sender sets both before it reads them (and the simulator reads `last_rtt_us` only after an ACK).
    pub fn on_tsq_wakeup(&mut self, now: Time, out: &mut Vec<Segment>) -> bool {
        if !self.tsq.throttled {
            return false;
        }
        if self.tsq.hold_segments.is_none() {
            self.tp.now = now;
            // Over the limit in bytes is over its whole number of segments.
            let wire = self.wire_len as u64;
            self.tsq.hold_segments = self
                .tsq_hold_limit()
                .map(|limit| (limit / wire).min(u32::MAX as u64) as u32);
        }
        if self
            .tsq
            .hold_segments
            .is_some_and(|hold| self.tsq.host_queued > hold)
        {
            return false;
        }
        self.tsq.hold_segments = None;
        self.tsq.throttled = false;
        self.tp.now = now;
        self.last_rtt_us = -1;
        if self.tp.lost_out > self.tp.retrans_out && self.tp.snd_cwnd > self.tp.in_flight() {
            self.xmit_retransmit_queue(out);
        }
        self.write_xmit(0, out);
        true
    }

    /// `tcp_pacing_check`: true (and the pacing timer armed) if the next departure time is in the future.
    #[inline]
    fn pacing_check(&mut self) -> bool {
        if !self.tp.internal_pacing || self.wstamp <= self.tp.now {
            return false;
        }
        self.pacing_timer = Some(self.wstamp);
        true
    }

    /// `tcp_write_xmit`: sends new data as the window and pacing allow. `push_one` = 2 forces one segment
    /// out regardless of cwnd (a loss probe). Returns the number of segments sent.
    pub(super) fn write_xmit(&mut self, push_one: u8, out: &mut Vec<Segment>) -> u32 {
        let mut sent = 0;
        let mut deferred_by_cwnd = false;
        let max_segs = self.tso_segs();
        // Neither snd_una nor the receive window moves while sending.
        let wnd_end = self.snd_wnd_end();
        let singles = push_one == 0 && max_segs == 1 && !self.tp.internal_pacing;
        if singles {
            sent = self.write_singles(wnd_end, out);
        }
        while !singles && self.has_unsent() {
            if self.pacing_check() {
                break;
            }
            let mut quota = self.cwnd_test();
            if quota == 0 {
                if push_one == 2 {
                    quota = 1;
                } else {
                    break;
                }
            }
            // tcp_snd_wnd_test: the receive window must allow the burst's first segment.
            let wnd_room = wnd_end.saturating_sub(self.tp.snd_nxt);
            if wnd_room == 0 {
                break;
            }
            let skb_segs = max_segs.min(self.app_end_seq - self.tp.snd_nxt);
            if self.tso
                && push_one == 0
                && skb_segs > 1
                && let TsoDefer::Defer { by_cwnd } = self.tso_should_defer(skb_segs, max_segs)
            {
                deferred_by_cwnd = by_cwnd;
                break;
            }
            // tcp_mss_split_point: whole segments up to the receive window's edge.
            let segs = quota.min(skb_segs).min(wnd_room);
            if self.small_queue_check(skb_segs, sent) {
                break;
            }
            self.transmit_new(segs, out);
            sent += segs;
            if push_one != 0 {
                break;
            }
        }
        let is_cwnd_limited = deferred_by_cwnd || self.tp.in_flight() >= self.tp.snd_cwnd;
        if sent > 0 || is_cwnd_limited {
            self.core.cwnd_validate(&self.tp, is_cwnd_limited);
        }
        if sent > 0 {
            if self.tp.in_cwnd_reduction() {
                self.core.prr.prr_out += sent;
            }
            if push_one != 2 {
                let probe = self.schedule_loss_probe(false);
                debug_assert!(probe || !self.xmit_timer_owed);
            }
        }
        if self.xmit_timer_owed {
            // The ACK's `tcp_set_xmit_timer` (see `Sender::on_ack`): what it would have armed is overwritten by
            // the loss probe just scheduled if anything was sent; if not, nothing it depends on has changed.
            self.xmit_timer_owed = false;
            if sent == 0 {
                self.set_xmit_timer();
            }
        }
        sent
    }

    /// The loop of [`Self::write_xmit`] for an unpaced sender whose skbs are single segments (no TSO, and no
    /// pacing: neither deferral nor the pacing check can stop it), run in one go: each pass sends one segment
    /// while the application has data, cwnd has room (one segment more in flight per pass) and the receive
    /// window allows it, until TCP Small Queues stops it; so the passes are the smallest of those rooms, and
    /// the run's segments share what each pass would work out again (departure time, the rate snapshot but
    /// for its in-flight count, the timestamp). The same segments, state and order as the loop, in fewer
    /// instructions: this is the path of every unpaced flow without TSO, one or two segments per ACK.
    /// Returns the segments sent.
    fn write_singles(&mut self, wnd_end: u32, out: &mut Vec<Segment>) -> u32 {
        if !self.has_unsent() {
            return 0;
        }
        let in_flight = self.tp.in_flight();
        let cwnd = self.tp.snd_cwnd;
        let mut n = (self.app_end_seq - self.tp.snd_nxt)
            .min(cwnd.saturating_sub(in_flight))
            .min(wnd_end.saturating_sub(self.tp.snd_nxt));
        if self.tsq.host_queue {
            // The check runs before each pass that the windows allow, with the passes so far counted.
            let mut k = 0;
            while k < n && !self.small_queue_check(1, k) {
                k += 1;
            }
            n = k;
        }
        if n > 0 {
            self.transmit_singles(n, in_flight, out);
        }
        n
    }

    /// `n` new segments, each its own skb, sent now one after the other (`transmit_new` of one segment, `n`
    /// times): only the first can start from an empty pipe (the `TxStart` event, the rate sample's new send
    /// phase) or carry a queued CWR, and only it can re-arm the RTO (after it the timer is the RTO), which is
    /// done after the run with the same result (it reads the queue's head, which the run does not change
    /// unless the queue was empty, and then its first segment is the head either way). Unpaced, so the
    /// departure time does not advance between them. `in_flight` is the packets in flight before.
    fn transmit_singles(&mut self, n: u32, in_flight: u32, out: &mut Vec<Segment>) {
        debug_assert!(!self.tp.internal_pacing && n > 0);
        let (xmit_time, _) = self.departure(n);
        let prior_packets = self.tp.packets_out;
        let mut snapshot = self.rate.skb_sent(&mut self.tp, xmit_time, in_flight + 1);
        let first = self.make_segment(self.tp.snd_nxt, false);
        self.stats.sent_segments += n as u64 - 1;
        let finite = self.size_is_finite();
        let start = self.tp.snd_nxt;
        for k in 0..n {
            let seq = start + k;
            snapshot.in_flight = in_flight + k + 1;
            self.q.push_back(seq, xmit_time, snapshot);
            out.push(Segment {
                seq,
                wire_len: self.wire_len_of(seq) as u16,
                cwr: first.cwr && k == 0,
                psh: seq == self.last_seq && finite,
                ..first
            });
        }
        self.tp.snd_nxt += n;
        self.tp.packets_out += n;
        self.rearm_rto_after_new_data(prior_packets);
    }

    /// `tcp_event_new_data_sent`'s timer: new data re-arms the RTO when it is the only data out, or when a
    /// loss probe was pending (`tcp_rearm_rto`); not while an ACK still owes `tcp_set_xmit_timer`, which
    /// `write_xmit` then arms once (see `Sender::xmit_timer_owed`).
    #[inline]
    fn rearm_rto_after_new_data(&mut self, prior_packets: u32) {
        if prior_packets == 0
            || (!self.xmit_timer_owed && self.xmit_timer_kind() == Some(XmitTimer::LossProbe))
        {
            self.rearm_rto();
        }
    }

    /// A segment's length on the wire: every segment is full-sized but a finite flow's last.
    #[inline]
    fn wire_len_of(&self, seq: u32) -> u32 {
        if seq == self.last_seq {
            self.last_wire_len
        } else {
            self.wire_len
        }
    }

    /// Common part of every transmission (`__tcp_transmit_skb` + `tcp_update_skb_after_send`): returns the
    /// departure time. `segs` segments of one burst share it; pacing advances by their payload.
    fn departure(&mut self, segs: u32) -> (Time, Time) {
        self.core.data_sent(&mut self.tp);
        let prior_wstamp = self.wstamp;
        self.wstamp = self.wstamp.max(self.tp.now);
        self.tp.wstamp = self.wstamp;
        self.data_segs_out += segs as u64;
        (self.wstamp, prior_wstamp)
    }

    /// Advances the earliest departure time after a burst of `segs` segments (`tcp_update_skb_after_send`).
    fn advance_pacing(&mut self, segs: u32, prior_wstamp: Time) {
        let rate = self.tp.pacing_rate;
        // sch_fq historically does not pace the first 10 segments of a flow.
        if !self.tp.internal_pacing || rate == 0 || rate == u64::MAX || self.data_segs_out < 10 {
            return;
        }
        let len = segs as u64 * self.tp.mss as u64;
        let mut len_ns = (len as u128 * 1_000_000_000 / rate as u128) as u64;
        // Credit OS lateness, at most half of this burst's time.
        let credit = self.wstamp.saturating_since(prior_wstamp).ns();
        len_ns -= (len_ns / 2).min(credit);
        self.wstamp += Dur::from_ns(len_ns);
        self.tp.wstamp = self.wstamp;
    }

    /// `tcp_ecn_send` + header fields: new data carries the connection's ECT codepoint and a pending CWR;
    /// retransmissions are not ECN-capable unless the algorithm needs ECN.
    fn make_segment(&mut self, seq: u32, retransmit: bool) -> Segment {
        let ecn = if !retransmit || self.ecn.ect_on_retransmit {
            self.ecn.codepoint
        } else {
            Ecn::NotEct
        };
        let cwr = !retransmit && std::mem::take(&mut self.ecn_queue_cwr);
        self.stats.sent_segments += 1;
        Segment {
            flow: self.flow,
            seq,
            wire_len: self.wire_len_of(seq) as u16,
            tsval_ms: ts_clock_ms(self.tp.now),
            enqueue_ts: Time::ZERO,
            ecn,
            cwr,
            retransmit,
            packet_value: 0,
            psh: false,
            syn: false,
        }
    }

    /// Sends `segs` new segments as one burst (`tcp_transmit_skb` + `tcp_event_new_data_sent`).
    fn transmit_new(&mut self, segs: u32, out: &mut Vec<Segment>) {
        let (xmit_time, prior_wstamp) = self.departure(segs);
        let prior_packets = self.tp.packets_out;
        let in_flight_after = self.tp.in_flight() + segs;
        let snapshot = self.rate.skb_sent(&mut self.tp, xmit_time, in_flight_after);
        for k in 0..segs {
            let seq = self.tp.snd_nxt;
            self.tp.snd_nxt += 1;
            self.tp.packets_out += 1;
            self.q.push_back(seq, xmit_time, snapshot);
            let mut seg = self.make_segment(seq, false);
            // `__tcp_transmit_skb` forces PSH on every skb of more than one segment (to end the receiver's
            // GRO aggregate); segmentation leaves it on the last. A finite flow's last segment ends the
            // application's write (`tcp_push`).
            seg.psh = (segs > 1 && k + 1 == segs) || (seq == self.last_seq && self.size_is_finite());
            out.push(seg);
        }
        self.advance_pacing(segs, prior_wstamp);
        self.rearm_rto_after_new_data(prior_packets);
    }

    /// `__tcp_retransmit_skb`: sends segment `seq` again (tags it EVER_RETRANS).
    fn retransmit_raw(&mut self, seq: u32, out: &mut Vec<Segment>) {
        let (xmit_time, prior_wstamp) = self.departure(1);
        let in_flight_after = self.tp.in_flight() + 1;
        let snapshot = self.rate.skb_sent(&mut self.tp, xmit_time, in_flight_after);
        let s = self.q.get_mut(seq);
        s.xmit_time = xmit_time;
        s.tx = snapshot;
        s.flags |= EVER_RETRANS;
        self.q.move_to_tail(seq);
        self.stats.retransmitted_segments += 1;
        let seg = self.make_segment(seq, true);
        out.push(seg);
        self.advance_pacing(1, prior_wstamp);
    }

    /// `tcp_retransmit_skb`: a retransmission counted in `retrans_out`.
    fn retransmit(&mut self, seq: u32, out: &mut Vec<Segment>) {
        self.retransmit_raw(seq, out);
        self.q.get_mut(seq).flags |= RETRANS;
        self.tp.retrans_out += 1;
    }

    /// `tcp_xmit_retransmit_queue`: retransmits segments marked lost, in sequence order, as cwnd allows.
    pub(super) fn xmit_retransmit_queue(&mut self, out: &mut Vec<Segment>) {
        if self.tp.packets_out == 0 {
            return;
        }
        let head = self.q.head_seq();
        let mut rearm = false;
        let mut seq = self.retransmit_hint.max(head);
        while seq < self.q.end_seq() {
            if self.pacing_check() {
                break;
            }
            if self.tp.snd_cwnd <= self.tp.in_flight() {
                break;
            }
            if self.tp.retrans_out >= self.tp.lost_out {
                break;
            }
            let f = self.q.get(seq).flags;
            if f & LOST == 0 || f & (SACKED_ACKED | SACKED_RETRANS) != 0 {
                seq += 1;
                continue;
            }
            self.retransmit(seq, out);
            if self.tp.in_cwnd_reduction() {
                self.core.prr.prr_out += 1;
            }
            if seq == head && self.xmit_timer_kind() != Some(XmitTimer::ReoTimeout) {
                rearm = true;
            }
            seq += 1;
        }
        self.retransmit_hint = seq;
        if rearm {
            let when = self.tp.now + Dur::from_ms(self.rtt.rto_ms as u64);
            self.reset_xmit_timer(XmitTimer::Retrans, when);
        }
    }

    pub(super) fn reset_xmit_timer(&mut self, kind: XmitTimer, when: Time) {
        self.xmit_timer = Some((when, kind));
    }

    /// `tcp_rto_delta_us`: time left until the head segment's RTO (negative if overdue), µs.
    fn rto_delta_us(&self) -> i64 {
        let Some(head) = self.q.front() else { return 0 };
        let rto_at = head.xmit_time + Dur::from_ms(self.rtt.rto_ms as u64);
        (rto_at.ns() as i64 - self.tp.now.ns() as i64) / 1000
    }

    /// `tcp_rearm_rto`.
    pub(super) fn rearm_rto(&mut self) {
        if self.tp.packets_out == 0 {
            self.xmit_timer = None;
            return;
        }
        let mut rto_ms = self.rtt.rto_ms as u64;
        if matches!(
            self.xmit_timer_kind(),
            Some(XmitTimer::ReoTimeout | XmitTimer::LossProbe)
        ) {
            // Keep the RTO relative to the head's transmission rather than restarting it.
            rto_ms = (self.rto_delta_us().max(1) as u64).div_ceil(1000);
        }
        let when = self.tp.now + Dur::from_ms(rto_ms);
        self.reset_xmit_timer(XmitTimer::Retrans, when);
    }

    /// `tcp_set_xmit_timer`: a loss probe if allowed, else the RTO.
    pub(super) fn set_xmit_timer(&mut self) {
        if !self.schedule_loss_probe(true) {
            self.rearm_rto();
        }
    }

    /// `tcp_schedule_loss_probe` (`tcp_early_retrans` = 3): arm a probe 2·srtt ahead (+2 ms, or +RTO_MIN with a
    /// single segment out, to cover a delayed ACK), never after the RTO would fire.
    pub(super) fn schedule_loss_probe(&mut self, advancing_rto: bool) -> bool {
        if self.tp.packets_out == 0 || !matches!(self.tp.ca_state, CaState::Open | CaState::Cwr) {
            return false;
        }
        let mut timeout_ms: u64 = if self.rtt.srtt_us8 != 0 {
            let mut us = (self.rtt.srtt_us8 >> 2) as u64;
            us += if self.tp.packets_out == 1 {
                super::RTO_MIN_MS as u64 * 1000
            } else {
                super::TIMEOUT_MIN_US
            };
            us.div_ceil(1000)
        } else {
            super::TIMEOUT_INIT_MS as u64
        };
        let rto_delta_us = if advancing_rto {
            self.rtt.rto_ms as i64 * 1000
        } else {
            self.rto_delta_us()
        };
        if rto_delta_us > 0 {
            timeout_ms = timeout_ms.min((rto_delta_us as u64).div_ceil(1000));
        }
        let when = self.tp.now + Dur::from_ms(timeout_ms);
        self.reset_xmit_timer(XmitTimer::LossProbe, when);
        true
    }

    /// `tcp_send_loss_probe`: new data if there is any, else the last segment again.
    fn send_loss_probe(&mut self, out: &mut Vec<Segment>) {
        if self.tlp_high_seq.is_none() {
            self.tlp_retrans = false;
            let mut probe_sent = false;
            if self.has_unsent() && self.snd_wnd_end() > self.tp.snd_nxt {
                let before = self.tp.packets_out;
                self.write_xmit(2, out);
                probe_sent = self.tp.packets_out > before;
            } else if !self.q.is_empty() {
                let last = self.q.end_seq() - 1;
                self.retransmit_raw(last, out);
                self.tlp_retrans = true;
                probe_sent = true;
            }
            if probe_sent {
                self.stats.tlp_probes += 1;
                self.tlp_high_seq = Some(self.tp.snd_nxt);
                // Restart the RTO from now.
                self.xmit_timer = None;
            }
        }
        self.rearm_rto();
    }

    /// `tcp_retransmit_timer`: the RTO fired.
    fn retransmit_timer(&mut self, out: &mut Vec<Segment>) {
        if self.tp.packets_out == 0 {
            return;
        }
        self.stats.rto_events += 1;
        self.enter_loss();
        self.retransmits += 1;
        let head = self.q.head_seq();
        self.retransmit(head, out);
        self.rtt.back_off();
        let when = self.tp.now + Dur::from_ms(self.rtt.rto_ms as u64);
        self.reset_xmit_timer(XmitTimer::Retrans, when);
    }

    /// The retransmission timer fired at `now` (`tcp_write_timer_handler`), then new data may go out.
    pub fn on_xmit_timer(&mut self, now: Time, out: &mut Vec<Segment>) {
        self.tsq.hold_segments = None;
        let Some((when, kind)) = self.xmit_timer else {
            return;
        };
        if when > now {
            return;
        }
        self.tp.now = now;
        self.last_rtt_us = -1;
        match kind {
            XmitTimer::ReoTimeout => self.rack_reo_timeout(out),
            XmitTimer::LossProbe => self.send_loss_probe(out),
            XmitTimer::Retrans => {
                self.xmit_timer = None;
                self.retransmit_timer(out);
            }
            XmitTimer::Syn => self.syn_timer(out),
        }
    }

    /// The pacing timer fired (`tcp_pace_kick` → `tcp_tsq_write`).
    pub fn on_pacing_timer(&mut self, now: Time, out: &mut Vec<Segment>) {
        self.tsq.hold_segments = None;
        match self.pacing_timer {
            Some(t) if t <= now => self.pacing_timer = None,
            _ => return,
        }
        self.tp.now = now;
        self.last_rtt_us = -1;
        if self.tp.lost_out > self.tp.retrans_out && self.tp.snd_cwnd > self.tp.in_flight() {
            self.xmit_retransmit_queue(out);
        }
        self.write_xmit(0, out);
    }
}
