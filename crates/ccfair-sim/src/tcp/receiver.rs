//! The TCP receiver, modelled on Linux (`tcp_data_queue`, `tcp_event_data_recv`, `__tcp_ack_snd_check`,
//! `tcp_send_delayed_ack`, `tcp_sack_new_ofo_skb`, SACK compression).
//!
//! - In-order data is delivered to the application at once (it always reads); out-of-order data waits in a
//!   range set and is announced in SACK blocks, most recent first (RFC 2018), at most 3 per ACK next to the
//!   timestamp option, 4 remembered (`TCP_NUM_SACKS`).
//! - ACK policy: immediately when more than one full segment arrived since the last ACK (i.e. every second
//!   segment), in quick-ACK mode (the first 16 ACKs of a connection, and after a receive gap longer than the
//!   RTO), or when a hole is filled; otherwise the delayed-ACK timer (ATO starting at 40 ms and adapting to
//!   the inter-arrival time, capped by srtt and 200 ms). With out-of-order data the first three duplicate ACKs
//!   go out at once, later ones are compressed for min(1 ms, RTT/20), at most 44 at a time; a compressed
//!   ACK is sent before a new block pushes the oldest remembered one out (`tcp_sack_compress_send_ack`), so
//!   under heavy loss no block is forgotten unreported (else the sender retransmits delivered segments).
//! - A duplicate segment re-enters quick-ACK mode (Linux would also send a DSACK; not modelled).
//! - The timestamp echo is the TSval of the first segment received after the previous ACK (RFC 7323).
//! - ECN, in the connection's feedback mode (`__tcp_ecn_check_ce`): RFC 3168 — a CE mark sets ECE on every
//!   ACK until a segment with CWR arrives, the first CE of an episode enters quick-ACK mode for 2 ACKs, and a
//!   not-ECT segment after ECT ones (a retransmission) too; DCTCP (`dctcp_ece_ack_update`) — ECE mirrors the
//!   CE state of the last packet, and on every change of that state a pending delayed ACK is first sent for
//!   the data before the packet with the old state, then an immediate ACK with the new one; Accurate ECN —
//!   ACKs carry the count of CE-marked packets received (the ACE field plus option, modelled as an exact
//!   count without the 3-bit field's wrap-around, which the ACK frequency here never reaches).
//!
//! - The receive window, when the host models one ([`RcvWindow`], `rwnd.rs`): every ACK offers it
//!   (`tcp_select_window`), in-order and out-of-order data grow it, the application's reads (at once, all
//!   in-order data) drive the buffer's autotuning, after which an ACK goes out if the window it would offer
//!   at least doubled (`tcp_cleanup_rbuf`); an out-of-order skb that does not fit the buffer is dropped.
//!   Without a model the ACKs offer an unlimited window.
//!
//! - With a window model, each skb that raises `rcv_ssthresh` (`tcp_grow_window`) sets the quick-ACK
//!   count's low bit (`icsk_ack.quick |= 1`), so it is ACKed at once. While autotuning keeps raising the
//!   window, as through a slow start, Linux therefore ACKs every segment, and at low rates its ACKs come one
//!   serialization apart where delayed ACKs come two apart: at 10 Mbps 1.2 against 2.4 ms, either side of
//!   Cubic's 2 ms HyStart ACK-train gap, so the kernel's first slow start ends on the ACK train (cwnd 63 at
//!   50 ms) where one without these ACKs runs on into losses. Hosts without a window model do not do this.
//! - With a window model, a full-sized segment with PSH (Linux sets it on the last segment of every
//!   multi-segment skb, `__tcp_transmit_skb`) sets `ICSK_ACK_PUSHED` (`tcp_measure_rcv_mss`, since Linux 6.6,
//!   "tcp: fix delayed ACKs for MSS boundary condition"), and the application's read that empties the
//!   receive queue then ACKs at once (`tcp_cleanup_rbuf`, a connection not in ping-pong mode). So the odd
//!   segment a sender's window increase adds after a two-segment burst is ACKed alone and at once, not
//!   with the first segment of the next burst: the kernel receiver's ACKs stay aligned with the sender's
//!   bursts. Measured on the kernel backend (`5reno-5cubic`, Linux 6.18, GRO off): every two-segment burst
//!   ends in PSH, 2 % of the single segments carry it (ends of application writes, see `tcp/xmit.rs`),
//!   11 % of the receiver's ACKs cover one segment, sent within
//!   200 µs, and 96 % of those follow a PSH segment; without this rule the simulated receiver sent under
//!   1 %.
//!
//! Deviations: the quick-ACK budget is the maximum of 16 (Linux computes rcv_wnd / 2 MSS, which is larger
//! than 16 once the window has grown). The delayed-ACK engine's RTT view is the path's base RTT (what its
//! handshake measured); the window model keeps its own estimate. The "more than one full frame" ACK does
//! not also wait for the window's right edge to advance (`__tcp_select_window(sk) >= tp->rcv_wnd`). A
//! segment shorter than the MSS sets `ICSK_ACK_PUSHED` in Linux with or without PSH; here only PSH does (the
//! simulated senders' only short segment is a finite flow's last, which carries PSH). Hosts without a
//! window model (`ideal`) have no application read path, so they neither send the PSH ACK nor the window
//! update: their receivers ACK by the segment-count and timer rules alone.

use ccfair_core::{Dur, Ecn, Time};

use super::rwnd::RcvWindow;
use super::{
    ATO_MIN_MS, Ack, COMP_SACK_DELAY_NS, COMP_SACK_NR, DELACK_MAX_MS, EcnEcho, MAX_QUICKACKS,
    MAX_SACK_BLOCKS_SENT, NO_WINDOW, NUM_SACKS, REORDERING, SackBlock, Segment,
};

pub struct Receiver {
    /// Next in-order segment expected.
    pub rcv_nxt: u32,
    /// rcv_nxt when the last ACK was sent (`rcv_wup`).
    rcv_wup: u32,
    /// Out-of-order ranges `[start, end)`, sorted and disjoint.
    ofo: Vec<SackBlock>,
    sacks: [SackBlock; NUM_SACKS],
    num_sacks: usize,
    // Delayed-ACK engine (`icsk_ack`).
    quick: u32,
    /// `ICSK_ACK_PUSHED`: a PSH segment arrived since the last ACK.
    pushed: bool,
    ato_ms: u32,
    lrcvtime_ms: u64,
    ack_scheduled: bool,
    ack_now: bool,
    delack_timer: Option<Time>,
    // SACK compression.
    compressed_ack: u32,
    dup_ack_counter: u32,
    compressed_ack_rcv_nxt: u32,
    comp_timer: Option<Time>,
    ts_recent: u32,
    /// The receiver's RTT and RTO as set by its handshake.
    srtt: Dur,
    rto_ms: u32,
    // ECN.
    echo: EcnEcho,
    /// ECE is due on outgoing ACKs (`TCP_ECN_DEMAND_CWR`).
    ecn_demand_cwr: bool,
    /// ECT or CE has been seen on this connection (`TCP_ECN_SEEN`).
    ecn_seen: bool,
    /// DCTCP's CE state (1 = the last packet was CE) and rcv_nxt before that packet.
    dctcp_ce_state: bool,
    dctcp_prior_rcv_nxt: u32,
    /// Accurate ECN: CE-marked packets received.
    ce_count: u32,
    /// The receive buffer and window (none: the window never limits the sender).
    win: Option<Box<RcvWindow>>,
    /// Segments handed to the application.
    pub delivered_segments: u64,
    /// ACKs sent.
    pub acks_sent: u64,
}

/// What one arrival produced for the application, for the recorder.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Delivery {
    /// First segment handed to the application, and how many (0 = none).
    pub first_seq: u32,
    pub segments: u32,
}

impl Receiver {
    /// A receiver whose handshake measured `base_rtt`, reporting CE marks as `echo` says.
    pub fn new(base_rtt: Dur, echo: EcnEcho) -> Receiver {
        // RTO after one handshake sample: srtt + max(2·srtt, RTO_MIN), in whole ms.
        let rtt_ms = base_rtt.ns().div_ceil(1_000_000) as u32;
        let rto_ms = rtt_ms + (2 * rtt_ms).max(super::RTO_MIN_MS);
        Receiver {
            rcv_nxt: 0,
            rcv_wup: 0,
            ofo: Vec::with_capacity(8),
            sacks: [SackBlock::default(); NUM_SACKS],
            num_sacks: 0,
            quick: 0,
            pushed: false,
            ato_ms: 0,
            lrcvtime_ms: 0,
            ack_scheduled: false,
            ack_now: false,
            delack_timer: None,
            compressed_ack: 0,
            dup_ack_counter: 0,
            compressed_ack_rcv_nxt: 0,
            comp_timer: None,
            ts_recent: 0,
            srtt: base_rtt,
            rto_ms,
            echo,
            ecn_demand_cwr: false,
            ecn_seen: false,
            dctcp_ce_state: false,
            dctcp_prior_rcv_nxt: 0,
            ce_count: 0,
            win: None,
            delivered_segments: 0,
            acks_sent: 0,
        }
    }

    /// Models the receive window with `win` (before the first segment arrives).
    pub fn set_window(&mut self, win: RcvWindow) {
        self.win = Some(Box::new(win));
    }

    /// The receive-window model, if the host has one.
    pub fn window(&self) -> Option<&RcvWindow> {
        self.win.as_deref()
    }

    /// Bytes from rcv_nxt to the end of the out-of-order queue, for a window model of MSS `mss` bytes.
    fn ooo_span(&self, mss: u64) -> u64 {
        self.ofo.last().map_or(0, |b| (b.end - self.rcv_nxt) as u64 * mss)
    }

    /// Delayed-ACK timer deadline.
    pub fn delack_deadline(&self) -> Option<Time> {
        self.delack_timer
    }

    /// SACK-compression timer deadline.
    pub fn comp_deadline(&self) -> Option<Time> {
        self.comp_timer
    }

    /// Out-of-order segments held.
    pub fn ofo_segments(&self) -> u32 {
        self.ofo.iter().map(|b| b.end - b.start).sum()
    }

    /// Whether segment `seq` has arrived: delivered in order, or held out of order.
    pub fn has(&self, seq: u32) -> bool {
        seq < self.rcv_nxt || self.ofo.iter().any(|b| b.start <= seq && seq < b.end)
    }

    /// Processes an arriving data segment; may produce an ACK. Returns what reached the application.
    /// Asks the caches for what an arriving segment reads through this receiver's pointers: the first
    /// out-of-order block (if any) and the receive window's state (if it models one). Call it once the
    /// receiver itself is in the caches.
    #[inline]
    pub fn prefetch_segment_path(&self) {
        if let Some(first) = self.ofo.first() {
            crate::prefetch::value(first);
        }
        if let Some(win) = self.win.as_deref() {
            crate::prefetch::value(win);
        }
    }

    pub fn on_segment(&mut self, now: Time, seg: &Segment, acks: &mut Vec<Ack>) -> Delivery {
        self.on_segments(now, seg, 1, acks)
    }

    /// Processes an arriving skb of `segments` consecutive segments from `seg.seq` (a GRO aggregate, whose
    /// header fields are `seg`'s): one pass of `tcp_rcv_established` for all of them, so at most one ACK
    /// decision. Returns what reached the application.
    pub fn on_segments(&mut self, now: Time, seg: &Segment, segments: u32, acks: &mut Vec<Ack>) -> Delivery {
        let mut delivery = Delivery::default();
        let end = seg.seq + segments;
        // RFC 7323: remember the TSval of the first segment after the last ACK.
        if seg.seq <= self.rcv_wup {
            self.ts_recent = seg.tsval_ms;
        }
        if seg.cwr && self.echo != EcnEcho::AccEcn {
            // tcp_ecn_accept_cwr: the sender reacted; stop echoing and ACK at once (its cwnd may be tiny).
            self.ecn_demand_cwr = false;
            self.ack_now = true;
        }
        if let Some(w) = self.win.as_deref_mut() {
            w.on_timestamp(now, seg.tsval_ms);
        }
        if seg.seq <= self.rcv_nxt && end > self.rcv_nxt {
            // New in-order data (an aggregate may start with data already received: it is trimmed).
            delivery.first_seq = self.rcv_nxt;
            self.rcv_nxt = end;
            if seg.psh {
                // tcp_measure_rcv_mss: a full-sized segment with PSH (Linux >= 6.6) sets ICSK_ACK_PUSHED.
                self.pushed = true;
            }
            self.event_data_recv(now, seg.ecn, segments, acks);
            if let Some(w) = self.win.as_deref_mut()
                && w.on_in_order(now, delivery.first_seq, segments)
            {
                self.quick |= 1; // tcp_grow_window: ACK the growth at once
            }
            if !self.ofo.is_empty() {
                // tcp_ofo_queue: pull now-contiguous data.
                let mut released = 0;
                while self.ofo.first().is_some_and(|b| b.start <= self.rcv_nxt) {
                    let b = self.ofo.remove(0);
                    released += b.end - b.start;
                    self.rcv_nxt = self.rcv_nxt.max(b.end);
                }
                if let Some(w) = self.win.as_deref_mut() {
                    w.on_ofo_released(released);
                }
                // RFC 5681 §4.2: ACK at once when a gap is filled.
                if self.ofo.is_empty() {
                    self.ack_now = true;
                }
            }
            delivery.segments = self.rcv_nxt - delivery.first_seq;
            if self.num_sacks > 0 {
                self.sack_remove();
            }
            self.delivered_segments += delivery.segments as u64;
        } else if end <= self.rcv_nxt {
            // A duplicate (spurious retransmission): ACK quickly.
            self.enter_quickack_mode(MAX_QUICKACKS);
            self.ack_scheduled = true;
        } else {
            self.data_queue_ofo(now, seg.seq, end, seg.ecn, segments, acks);
        }
        self.ack_snd_check(now, acks);
        if delivery.segments > 0 && self.win.is_some() {
            self.app_read(now, end.min(self.rcv_nxt), acks);
        }
        delivery
    }

    /// The application read everything in order (`tcp_recvmsg`), the skb that arrived (up to
    /// `arrived_end`) first and then what it released from the out-of-order queue: `tcp_rcv_space_adjust`
    /// runs after each skb copied, so a measurement due now ends after the first, with the released data
    /// still queued (`inq`); then `tcp_cleanup_rbuf`'s window update.
    fn app_read(&mut self, now: Time, arrived_end: u32, acks: &mut Vec<Ack>) {
        let Some(w) = self.win.as_deref() else { return };
        let mss = w.mss();
        let span = self.ooo_span(mss);
        let unacked = (self.rcv_nxt - self.rcv_wup) as u64 * mss;
        let w = self.win.as_deref_mut().expect("checked");
        // The later skbs of the read find the measurement not due (or just restarted) at the same `now`.
        w.rcv_space_adjust(now, arrived_end, self.rcv_nxt, span);
        // tcp_cleanup_rbuf: the read emptied the receive queue (nothing held out of order either) after a
        // PSH segment: ACK now rather than wait for a second segment or the delayed-ACK timer.
        let pushed_ack = self.ack_scheduled && self.pushed && self.ofo.is_empty();
        if pushed_ack || w.wants_window_update(unacked) {
            self.send_ack(acks);
        }
    }

    /// `tcp_event_data_recv`: schedule an ACK and adapt the ATO to the inter-arrival time.
    fn event_data_recv(&mut self, now: Time, ecn: Ecn, segments: u32, acks: &mut Vec<Ack>) {
        self.ack_scheduled = true;
        let now_ms = now.jiffies();
        if self.ato_ms == 0 {
            // First data: quick-ACK the start of slow start.
            self.incr_quickack(MAX_QUICKACKS);
            self.ato_ms = ATO_MIN_MS;
        } else {
            let m = now_ms.saturating_sub(self.lrcvtime_ms) as u32;
            if m <= ATO_MIN_MS / 2 {
                self.ato_ms = (self.ato_ms >> 1) + ATO_MIN_MS / 2;
            } else if m < self.ato_ms {
                self.ato_ms = ((self.ato_ms >> 1) + m).min(self.rto_ms);
            } else if m > self.rto_ms {
                // The sender must have gone idle; ACK quickly again.
                self.incr_quickack(MAX_QUICKACKS);
            }
        }
        self.lrcvtime_ms = now_ms;
        self.check_ce(ecn, segments, acks);
    }

    /// `__tcp_ecn_check_ce` (plus the DCTCP CA events and Accurate ECN's counters) for an arriving skb of
    /// `segments` segments, all with codepoint `ecn` (Accurate ECN counts each, as
    /// `tcp_ecn_received_counters` counts `gso_segs`).
    fn check_ce(&mut self, ecn: Ecn, segments: u32, acks: &mut Vec<Ack>) {
        match self.echo {
            EcnEcho::None => {}
            EcnEcho::Rfc3168 => match ecn {
                Ecn::NotEct => {
                    // Not-ECT after ECT: probably a retransmission; ACK quickly.
                    if self.ecn_seen {
                        self.enter_quickack_mode(2);
                    }
                }
                Ecn::Ce => {
                    if !self.ecn_demand_cwr {
                        // The sender may have a tiny window: do not delay ACKs.
                        self.enter_quickack_mode(2);
                        self.ecn_demand_cwr = true;
                    }
                    self.ecn_seen = true;
                }
                Ecn::Ect0 | Ecn::Ect1 => self.ecn_seen = true,
            },
            EcnEcho::Dctcp => {
                if ecn != Ecn::NotEct {
                    self.dctcp_ece_update(ecn == Ecn::Ce, acks);
                    self.ecn_seen = true;
                } else if self.ecn_seen {
                    self.enter_quickack_mode(2);
                }
            }
            EcnEcho::AccEcn => {
                if ecn == Ecn::Ce {
                    self.ce_count += segments;
                }
            }
        }
    }

    /// `dctcp_ece_ack_update`: ECE mirrors the CE state; a change of state is reported at once, after first
    /// ACKing the data before this packet with the old state if a delayed ACK was pending.
    fn dctcp_ece_update(&mut self, ce: bool, acks: &mut Vec<Ack>) {
        if self.dctcp_ce_state != ce {
            if self.delack_timer.is_some() {
                // __tcp_send_ack(sk, prior_rcv_nxt): a special ACK that leaves the delayed-ACK state alone.
                let mut ack = self.ack_template();
                ack.ack = self.dctcp_prior_rcv_nxt;
                ack.ece = self.dctcp_ce_state;
                acks.push(ack);
                self.acks_sent += 1;
            }
            self.ack_now = true;
        }
        self.dctcp_prior_rcv_nxt = self.rcv_nxt;
        self.dctcp_ce_state = ce;
        self.ecn_demand_cwr = ce;
    }

    fn incr_quickack(&mut self, max: u32) {
        self.quick = self.quick.max(max);
    }

    fn enter_quickack_mode(&mut self, max: u32) {
        self.incr_quickack(max);
        self.ato_ms = ATO_MIN_MS;
    }

    /// `tcp_data_queue_ofo` for one skb holding `[seq, end)` (`segments` segments).
    fn data_queue_ofo(
        &mut self,
        now: Time,
        seq: u32,
        end: u32,
        ecn: Ecn,
        segments: u32,
        acks: &mut Vec<Ack>,
    ) {
        self.check_ce(ecn, segments, acks);
        if let Some(w) = self.win.as_deref_mut() {
            if !w.ofo_admit(now, self.rcv_nxt, segments) {
                return; // tcp_try_rmem_schedule failed: dropped
            }
            let held = self.ofo_held_within(seq, end);
            self.queue_ofo(seq, end, acks);
            let w = self.win.as_deref_mut().expect("checked");
            let ooo_end = self.ofo.last().map_or(self.rcv_nxt, |b| b.end);
            if w.on_ofo_queued(self.rcv_nxt, segments, (end - seq) - held, ooo_end) {
                self.quick |= 1; // tcp_grow_window
            }
            return;
        }
        self.queue_ofo(seq, end, acks);
    }

    /// Segments of `[seq, end)` the out-of-order queue holds already.
    fn ofo_held_within(&self, seq: u32, end: u32) -> u32 {
        let i = self.ofo.partition_point(|b| b.end <= seq);
        self.ofo[i..]
            .iter()
            .take_while(|b| b.start < end)
            .map(|b| b.end.min(end) - b.start.max(seq))
            .sum()
    }

    /// Inserts `[seq, end)` into the out-of-order queue and the SACK blocks.
    fn queue_ofo(&mut self, seq: u32, end: u32, acks: &mut Vec<Ack>) {
        self.ack_scheduled = true;
        if self.ofo.is_empty() {
            self.ofo.push(SackBlock { start: seq, end });
            self.sacks[0] = SackBlock { start: seq, end };
            self.num_sacks = 1;
            return;
        }
        // Insert into the sorted range set, merging neighbours.
        let i = self.ofo.partition_point(|b| b.end < seq);
        if i < self.ofo.len() && self.ofo[i].start <= end {
            let b = &mut self.ofo[i];
            if seq >= b.start && end <= b.end {
                return; // already held
            }
            b.start = b.start.min(seq);
            b.end = b.end.max(end);
            // A segment bridges at most one gap; an aggregate may bridge several.
            while i + 1 < self.ofo.len() && self.ofo[i + 1].start <= self.ofo[i].end {
                let next = self.ofo.remove(i + 1);
                self.ofo[i].end = self.ofo[i].end.max(next.end);
            }
        } else {
            self.ofo.insert(i, SackBlock { start: seq, end });
        }
        self.sack_new_ofo(seq, end, acks);
    }

    /// `tcp_sack_new_ofo_skb`: the block holding the new data moves to the front.
    fn sack_new_ofo(&mut self, seq: u32, end: u32, acks: &mut Vec<Ack>) {
        for i in 0..self.num_sacks {
            let b = &mut self.sacks[i];
            if b.start <= end && seq <= b.end {
                b.start = b.start.min(seq);
                b.end = b.end.max(end);
                self.sacks[..=i].rotate_right(1);
                self.sack_maybe_coalesce();
                return;
            }
        }
        if self.num_sacks >= NUM_SACKS {
            // tcp_sack_compress_send_ack: before the oldest block is forgotten, a compressed (held back)
            // ACK goes out, so the blocks it would have reported reach the sender.
            if self.compressed_ack > 0 {
                self.send_ack(acks);
            }
            self.num_sacks -= 1; // forget the oldest block
        }
        self.sacks[..=self.num_sacks].rotate_right(1);
        self.sacks[0] = SackBlock { start: seq, end };
        self.num_sacks += 1;
    }

    /// `tcp_sack_maybe_coalesce`: merge blocks that now overlap the first.
    fn sack_maybe_coalesce(&mut self) {
        let mut i = 1;
        while i < self.num_sacks {
            let (first, other) = (self.sacks[0], self.sacks[i]);
            if first.start <= other.end && other.start <= first.end {
                self.sacks[0].start = first.start.min(other.start);
                self.sacks[0].end = first.end.max(other.end);
                self.sacks.copy_within(i + 1..self.num_sacks, i);
                self.num_sacks -= 1;
            } else {
                i += 1;
            }
        }
    }

    /// `tcp_sack_remove`: forget blocks now below rcv_nxt.
    fn sack_remove(&mut self) {
        if self.ofo.is_empty() {
            self.num_sacks = 0;
            return;
        }
        let mut i = 0;
        while i < self.num_sacks {
            if self.rcv_nxt >= self.sacks[i].start {
                self.sacks.copy_within(i + 1..self.num_sacks, i);
                self.num_sacks -= 1;
            } else {
                i += 1;
            }
        }
    }

    /// `__tcp_ack_snd_check`.
    fn ack_snd_check(&mut self, now: Time, acks: &mut Vec<Ack>) {
        if !self.ack_scheduled {
            return;
        }
        // "More than one full frame received": in segments, two or more since the last ACK.
        if self.rcv_nxt - self.rcv_wup >= 2 || self.quick > 0 || self.ack_now {
            self.send_ack(acks);
            return;
        }
        if self.ofo.is_empty() {
            self.send_delayed_ack(now, acks);
            return;
        }
        if self.compressed_ack >= COMP_SACK_NR {
            self.send_ack(acks);
            return;
        }
        if self.compressed_ack_rcv_nxt != self.rcv_nxt {
            self.compressed_ack_rcv_nxt = self.rcv_nxt;
            self.dup_ack_counter = 0;
        }
        if self.dup_ack_counter < REORDERING {
            self.dup_ack_counter += 1;
            self.send_ack(acks);
            return;
        }
        self.compressed_ack += 1;
        if self.comp_timer.is_some() {
            return;
        }
        // 5 % of the RTT, at most 1 ms.
        let delay = COMP_SACK_DELAY_NS.min(self.srtt.ns() / 20);
        self.comp_timer = Some(now + Dur::from_ns(delay));
    }

    /// `tcp_send_delayed_ack`.
    fn send_delayed_ack(&mut self, now: Time, acks: &mut Vec<Ack>) {
        let mut ato = self.ato_ms;
        if ato > ATO_MIN_MS {
            // Bulk data (not interactive, not pushed): cap at 500 ms and by the RTT.
            let mut max_ato = 500;
            let rtt_ms = (self.srtt.ns().div_ceil(1_000_000) as u32).max(ATO_MIN_MS);
            if rtt_ms < max_ato {
                max_ato = rtt_ms;
            }
            ato = ato.min(max_ato);
        }
        ato = ato.min(DELACK_MAX_MS);
        let mut timeout = now + Dur::from_ms(ato as u64);
        if let Some(pending) = self.delack_timer {
            // About to expire anyway: ACK now.
            if pending <= now + Dur::from_ms((ato >> 2) as u64) {
                self.send_ack(acks);
                return;
            }
            if timeout >= pending {
                timeout = pending;
            }
        }
        self.delack_timer = Some(timeout);
    }

    /// The delayed-ACK timer fired (`tcp_delack_timer_handler`): inflate ATO (the delay was missed) and ACK.
    pub fn on_delack_timer(&mut self, now: Time, acks: &mut Vec<Ack>) {
        match self.delack_timer {
            Some(t) if t <= now => self.delack_timer = None,
            _ => return,
        }
        if self.ack_scheduled {
            self.ato_ms = (self.ato_ms << 1).min(self.rto_ms);
            self.send_ack(acks);
        }
    }

    /// The SACK-compression timer fired.
    pub fn on_comp_timer(&mut self, now: Time, acks: &mut Vec<Ack>) {
        match self.comp_timer {
            Some(t) if t <= now => self.comp_timer = None,
            _ => return,
        }
        if self.compressed_ack > 0 {
            self.compressed_ack -= 1;
            self.send_ack(acks);
        }
    }

    /// The fields of an ACK sent now: cumulative ACK, SACK blocks, timestamp echo, ECN feedback, window.
    fn ack_template(&mut self) -> Ack {
        let wnd_bytes = match self.win.as_deref_mut() {
            Some(w) => {
                let unacked = (self.rcv_nxt - self.rcv_wup) as u64 * w.mss();
                w.select_window(unacked)
            }
            None => NO_WINDOW,
        };
        let mut ack = Ack {
            ack: self.rcv_nxt,
            tsecr_ms: self.ts_recent,
            ece: self.ecn_demand_cwr,
            ce_count: self.ce_count,
            wnd_bytes,
            ..Ack::default()
        };
        let n = self.num_sacks.min(MAX_SACK_BLOCKS_SENT);
        // Block by block over the fixed three: a copy of a variable length is a call to memcpy, per ACK.
        for (i, b) in ack.sacks.iter_mut().enumerate() {
            if i < n {
                *b = self.sacks[i];
            }
        }
        ack.num_sacks = n as u8;
        ack
    }

    /// `tcp_send_ack` + `tcp_event_ack_sent`.
    fn send_ack(&mut self, acks: &mut Vec<Ack>) {
        let ack = self.ack_template();
        acks.push(ack);
        self.acks_sent += 1;
        self.rcv_wup = self.rcv_nxt;
        if self.quick > 0 && self.ack_scheduled {
            self.quick -= 1;
            if self.quick == 0 {
                self.ato_ms = ATO_MIN_MS;
            }
        }
        self.compressed_ack = 0;
        self.comp_timer = None;
        self.delack_timer = None;
        self.ack_scheduled = false;
        self.ack_now = false;
        self.pushed = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seg(seq: u32) -> Segment {
        Segment {
            flow: 0,
            seq,
            wire_len: 1500,
            tsval_ms: 1,
            enqueue_ts: Time::ZERO,
            ecn: Ecn::NotEct,
            cwr: false,
            retransmit: false,
            packet_value: 0,
            psh: false,
            syn: false,
        }
    }

    fn t(ms: u64) -> Time {
        Time::from_ns(ms * 1_000_000)
    }

    #[test]
    fn quickacks_then_every_second_segment_then_delayed() {
        let mut r = Receiver::new(Dur::from_ms(50), EcnEcho::None);
        let mut acks = Vec::new();
        // The first 16 segments are each ACKed at once (quick-ACK mode).
        for s in 0..16 {
            r.on_segment(t(s as u64), &seg(s), &mut acks);
        }
        assert_eq!(acks.len(), 16);
        // Then one ACK per two segments.
        for s in 16..26 {
            r.on_segment(t(s as u64), &seg(s), &mut acks);
        }
        assert_eq!(acks.len(), 21);
        assert_eq!(acks.last().unwrap().ack, 26);
        // A lone segment waits for the delayed-ACK timer (40 ms).
        r.on_segment(t(26), &seg(26), &mut acks);
        assert_eq!(acks.len(), 21);
        assert_eq!(r.delack_deadline(), Some(t(26 + 40)));
        r.on_delack_timer(t(66), &mut acks);
        assert_eq!(acks.len(), 22);
        assert_eq!(acks[21].ack, 27);
    }

    #[test]
    fn sack_blocks_most_recent_first_and_hole_fill_acks_at_once() {
        let mut r = Receiver::new(Dur::from_ms(50), EcnEcho::None);
        let mut acks = Vec::new();
        for s in 0..20 {
            r.on_segment(t(0), &seg(s), &mut acks);
        }
        let base = acks.len();
        // Lose 20 and 23: receive 21, 22, 24.
        for s in [21, 22, 24] {
            r.on_segment(t(1), &seg(s), &mut acks);
        }
        assert_eq!(acks.len(), base + 3, "the first three dupacks are immediate");
        let last = acks.last().unwrap();
        assert_eq!(last.ack, 20);
        assert_eq!(
            last.sack_blocks(),
            &[SackBlock { start: 24, end: 25 }, SackBlock { start: 21, end: 23 }]
        );
        // Fourth out-of-order segment: compressed.
        r.on_segment(t(1), &seg(25), &mut acks);
        assert_eq!(acks.len(), base + 3);
        assert!(r.comp_deadline().is_some());
        // Retransmission of 20 fills the first hole: immediate ACK up to 23, blocks below rcv_nxt removed.
        r.on_segment(t(2), &seg(20), &mut acks);
        let last = acks.last().unwrap();
        assert_eq!(last.ack, 23);
        assert_eq!(last.sack_blocks(), &[SackBlock { start: 24, end: 26 }]);
        assert!(r.comp_deadline().is_none());
        // 23 completes everything.
        r.on_segment(t(3), &seg(23), &mut acks);
        assert_eq!(acks.last().unwrap().ack, 26);
        assert_eq!(acks.last().unwrap().num_sacks, 0);
        assert_eq!(r.delivered_segments, 26);
    }

    #[test]
    fn an_aggregate_of_two_or_more_segments_is_acked_at_once_and_as_one() {
        let mut r = Receiver::new(Dur::from_ms(50), EcnEcho::None);
        let mut acks = Vec::new();
        // Leave quick-ACK mode: 16 ACKs for 16 segments.
        for s in 0..16 {
            r.on_segment(t(s as u64), &seg(s), &mut acks);
        }
        assert_eq!(acks.len(), 16);
        // 10 aggregates of 4: one ACK each (more than one full segment unacknowledged), not one per two.
        for i in 0..10 {
            let d = r.on_segments(t(20 + i), &seg(16 + 4 * i as u32), 4, &mut acks);
            assert_eq!((d.first_seq, d.segments), (16 + 4 * i as u32, 4));
        }
        assert_eq!(acks.len(), 26);
        assert_eq!(acks.last().unwrap().ack, 56);
        assert_eq!(r.acks_sent, 26);
        // An aggregate beyond a hole is held out of order as one block, and filling the hole with an
        // aggregate that overlaps it delivers everything.
        r.on_segments(t(40), &seg(60), 5, &mut acks);
        assert_eq!(r.ofo_segments(), 5);
        assert_eq!(
            acks.last().unwrap().sack_blocks(),
            &[SackBlock { start: 60, end: 65 }]
        );
        let d = r.on_segments(t(41), &seg(56), 6, &mut acks);
        assert_eq!((d.first_seq, d.segments, r.rcv_nxt), (56, 9, 65));
        assert_eq!(r.ofo_segments(), 0);
    }

    #[test]
    fn a_held_back_ack_goes_out_before_a_sack_block_is_forgotten() {
        // Holes at 0, 2, 4, 6, 8, 10: received 1, 3, 5, ... each start a new block. The first three dupacks
        // go out at once, the next are compressed; the fifth block would push the oldest of the four
        // remembered blocks out, so the compressed ACK leaves first, reporting the three newest blocks.
        let mut r = Receiver::new(Dur::from_ms(100), EcnEcho::None);
        let mut acks = Vec::new();
        for s in [1, 3, 5] {
            r.on_segment(t(0), &seg(s), &mut acks);
        }
        assert_eq!(acks.len(), 3);
        r.on_segment(t(0), &seg(7), &mut acks);
        assert_eq!(acks.len(), 3, "the fourth dupack is compressed");
        r.on_segment(t(0), &seg(9), &mut acks);
        assert_eq!(
            acks.len(),
            4,
            "a compressed ACK is sent before block 1..2 is forgotten"
        );
        let sent = &acks[3];
        assert_eq!(
            sent.sack_blocks(),
            &[
                SackBlock { start: 7, end: 8 },
                SackBlock { start: 5, end: 6 },
                SackBlock { start: 3, end: 4 }
            ]
        );
        // Without a held-back ACK nothing extra is sent: the next block waits for the timer as before.
        r.on_segment(t(0), &seg(11), &mut acks);
        assert_eq!(acks.len(), 4);
    }

    /// A receiver with a window model: MSS 1448, ratio 160, `rmem` as given, ACK path 50 ms.
    fn windowed(rmem: [u32; 3]) -> Receiver {
        let mut r = Receiver::new(Dur::from_ms(100), EcnEcho::None);
        let cfg = crate::tcp::RwndConfig {
            rmem,
            autotune: true,
            scaling_ratio: 160,
            initial_window_segments: 0,
        };
        r.set_window(RcvWindow::new(cfg, 1448, Dur::from_ms(50)));
        r
    }

    #[test]
    fn out_of_order_data_is_charged_and_provisions_its_span() {
        let mut r = windowed([4096, 131_072, 32 << 20]);
        let mut acks = Vec::new();
        for s in 0..20 {
            r.on_segment(t(0), &seg(s), &mut acks);
        }
        // 20 is lost; 21.. arrive. Each provisions 2·space + the span from rcv_nxt to the queue's end.
        for s in 21..80 {
            r.on_segment(t(1), &seg(s), &mut acks);
            let w = r.window().unwrap();
            let span = (s + 1 - 20) as u64 * 1448;
            let want = ((2 * w.space() + span) << 8) / 160;
            assert!(w.rcvbuf() >= want, "seq {s}: rcvbuf {} < {want}", w.rcvbuf());
            assert_eq!(w.window_clamp(), (w.rcvbuf() * 160) >> 8);
        }
        // Each held segment takes its truesize, ⌈1448 · 256 / 160⌉ = 2317 bytes; a duplicate adds nothing.
        assert_eq!(r.window().unwrap().rmem_alloc(), 59 * 2317);
        r.on_segment(t(1), &seg(50), &mut acks);
        assert_eq!(r.window().unwrap().rmem_alloc(), 59 * 2317);
        // The retransmission fills the hole: all of it is read and the memory freed.
        r.on_segment(t(2), &seg(20), &mut acks);
        assert_eq!(r.rcv_nxt, 80);
        assert_eq!(r.window().unwrap().rmem_alloc(), 0);
    }

    /// Feeds a receiver of buffer `rmem` from a sender that respects the offered window, loses `loss` of
    /// its first transmissions and retransmits each 100 steps later (1 ms per step), until `n` segments
    /// are in order. Checks that the offered right edge never moves back; returns the ACKs' windows.
    fn feed_lossy(rmem: [u32; 3], loss_per_mille: u64, n: u32) -> (Receiver, Vec<u32>) {
        let mut r = windowed(rmem);
        let mut acks = Vec::new();
        let mut windows = Vec::new();
        // The handshake's window is the sender's first.
        let mut edge_bytes = r.window().unwrap().initial_window() as u64;
        let (mut next, mut edge_seg) = (0u32, (edge_bytes / 1448) as u32);
        let mut rtx: Vec<(u64, u32)> = Vec::new();
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut step = 0u64;
        while r.rcv_nxt < n {
            step += 1;
            assert!(step < 1_000_000, "stalled at rcv_nxt {}", r.rcv_nxt);
            let now = t(step);
            if let Some(i) = rtx.iter().position(|&(due, _)| due <= step) {
                let (_, s) = rtx.remove(i);
                r.on_segment(now, &seg(s), &mut acks);
            } else if next < edge_seg && next < n {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                if (x >> 33) % 1000 < loss_per_mille {
                    rtx.push((step + 100, next));
                } else {
                    r.on_segment(now, &seg(next), &mut acks);
                }
                next += 1;
            }
            if r.delack_deadline().is_some_and(|d| d <= now) {
                r.on_delack_timer(now, &mut acks);
            }
            if r.comp_deadline().is_some_and(|d| d <= now) {
                r.on_comp_timer(now, &mut acks);
            }
            for a in acks.drain(..) {
                let edge = a.ack as u64 * 1448 + a.wnd_bytes as u64;
                assert!(
                    edge >= edge_bytes,
                    "the right edge moved back: {edge} < {edge_bytes}: {a:?}"
                );
                edge_bytes = edge;
                edge_seg = (edge / 1448) as u32;
                windows.push(a.wnd_bytes);
            }
        }
        (r, windows)
    }

    #[test]
    fn the_offered_window_never_moves_its_right_edge_back() {
        let (r, windows) = feed_lossy([4096, 131_072, 32 << 20], 100, 20_000);
        assert!(r.window().unwrap().rcvbuf() > 131_072, "the buffer grew");
        assert!(windows.iter().all(|&w| w > 0));
        let (r, _) = feed_lossy([4096, 131_072, 131_072], 200, 5_000);
        assert_eq!(
            r.window().unwrap().ofo_drops,
            0,
            "a sender within the window never overruns the buffer"
        );
    }

    #[test]
    fn a_window_filled_behind_one_hole_would_close_but_keeps_its_edge_until_the_hole_fills() {
        // A buffer capped at its first size: 81920 bytes of window at ratio 160 (56 segments).
        let mut r = windowed([4096, 131_072, 131_072]);
        let mut acks = Vec::new();
        for s in 0..100 {
            r.on_segment(t(s as u64), &seg(s), &mut acks);
        }
        let last = *acks.last().unwrap();
        let edge = last.ack + last.wnd_bytes / 1448;
        // Segment 100 is lost; everything else up to the edge arrives and is held out of order. The free
        // space left, under 1/16 of the buffer, asks for a zero window, but the offered right edge stays
        // (`tcp_select_window` never shrinks it): the hole below it keeps the window above zero, so the
        // sender can always retransmit into it.
        for s in 101..edge {
            r.on_segment(t(200), &seg(s), &mut acks);
        }
        r.on_comp_timer(t(201), &mut acks);
        let closed = *acks.last().unwrap();
        assert_eq!(
            (closed.ack, closed.wnd_bytes),
            (100, last.wnd_bytes),
            "the offered edge is kept"
        );
        let w = r.window().unwrap();
        assert!(w.want_zero_windows > 0 && w.zero_windows == 0);
        // The retransmission fills the hole: everything is read, the window opens from the new rcv_nxt.
        r.on_segment(t(300), &seg(100), &mut acks);
        let open = *acks.last().unwrap();
        assert_eq!(open.ack, edge);
        assert!(open.wnd_bytes >= 40 * 1448, "window {}", open.wnd_bytes);
    }

    #[test]
    fn with_a_window_model_an_odd_psh_segment_is_acked_alone_and_at_once() {
        // Past quick-ACK mode, bursts of two segments ending in PSH, then an odd third one: the pair is
        // ACKed by the every-second-segment rule, the odd segment by the read that empties the queue when it
        // carries PSH, and otherwise waits for the next burst (or the delayed-ACK timer).
        let psh = |seq| Segment {
            psh: true,
            ..seg(seq)
        };
        for (with_psh, windowed_host, acked_alone) in
            [(true, true, true), (false, true, false), (true, false, false)]
        {
            // A buffer that cannot grow, so that its window has stopped growing (no quick ACKs for it).
            let mut r = if windowed_host {
                windowed([4096, 131_072, 131_072])
            } else {
                Receiver::new(Dur::from_ms(50), EcnEcho::None)
            };
            let mut acks = Vec::new();
            for s in 0..40 {
                r.on_segment(t(s as u64), &seg(s), &mut acks);
            }
            let before = acks.len();
            r.on_segment(t(50), &seg(40), &mut acks);
            r.on_segment(t(50), &psh(41), &mut acks);
            assert_eq!(
                (acks.len() - before, acks.last().unwrap().ack),
                (1, 42),
                "the pair is ACKed"
            );
            let odd = if with_psh { psh(42) } else { seg(42) };
            r.on_segment(t(51), &odd, &mut acks);
            let alone = acks.last().unwrap().ack == 43;
            assert_eq!(alone, acked_alone, "psh {with_psh}, window model {windowed_host}");
            if !acked_alone {
                assert!(
                    r.delack_deadline().is_some(),
                    "it waits for the delayed-ACK timer"
                );
            }
        }
    }

    fn ecn_seg(seq: u32, ecn: Ecn) -> Segment {
        Segment { ecn, ..seg(seq) }
    }

    /// Feeds in-order segments 0..n with the given codepoints at 1 ms spacing; returns the ACKs.
    fn feed(r: &mut Receiver, marks: &[Ecn]) -> Vec<Ack> {
        let mut acks = Vec::new();
        for (i, &e) in marks.iter().enumerate() {
            r.on_segment(t(i as u64), &ecn_seg(i as u32, e), &mut acks);
        }
        acks
    }

    #[test]
    fn rfc3168_echoes_ece_until_cwr() {
        let mut r = Receiver::new(Dur::from_ms(50), EcnEcho::Rfc3168);
        let mut marks = vec![Ecn::Ect0; 20];
        marks[18] = Ecn::Ce;
        let acks = feed(&mut r, &marks);
        // Past quick-ACK mode the CE re-enters it for two ACKs: 19 is ACKed at once with ECE.
        let last = acks.last().unwrap();
        assert!(last.ece && last.ack >= 19);
        // ECE stays on ACKs until a segment with CWR arrives.
        let mut acks = Vec::new();
        r.on_segment(t(30), &ecn_seg(20, Ecn::Ect0), &mut acks);
        r.on_segment(t(31), &ecn_seg(21, Ecn::Ect0), &mut acks);
        assert!(acks.iter().all(|a| a.ece));
        let mut cwr = ecn_seg(22, Ecn::Ect0);
        cwr.cwr = true;
        acks.clear();
        r.on_segment(t(32), &cwr, &mut acks);
        assert_eq!(acks.len(), 1, "CWR is ACKed at once");
        assert!(!acks[0].ece);
    }

    #[test]
    fn dctcp_receiver_reports_each_change_of_ce_state_exactly() {
        let mut r = Receiver::new(Dur::from_ms(50), EcnEcho::Dctcp);
        // Leave quick-ACK mode (16 ACKs), with an odd count so that one segment waits for a delayed ACK.
        let mut acks = feed(&mut r, &[Ecn::Ect0; 17]);
        assert_eq!(acks.len(), 16);
        assert!(r.delack_deadline().is_some());
        // A CE packet arrives while segment 16 is waiting: first an ACK for up to 16 with the old state
        // (no ECE), then an immediate ACK with ECE for the CE packet.
        acks.clear();
        r.on_segment(t(20), &ecn_seg(17, Ecn::Ce), &mut acks);
        assert_eq!(acks.len(), 2);
        assert_eq!((acks[0].ack, acks[0].ece), (17, false));
        assert_eq!((acks[1].ack, acks[1].ece), (18, true));
        // Further CE packets: ordinary ACK policy (every second segment), ECE set.
        acks.clear();
        r.on_segment(t(21), &ecn_seg(18, Ecn::Ce), &mut acks);
        r.on_segment(t(22), &ecn_seg(19, Ecn::Ce), &mut acks);
        assert_eq!(acks.len(), 1);
        assert!(acks[0].ece);
        // Back to not marked: the state change is reported at once, without ECE.
        acks.clear();
        r.on_segment(t(23), &ecn_seg(20, Ecn::Ect0), &mut acks);
        assert!(!acks.is_empty());
        let last = acks.last().unwrap();
        assert_eq!((last.ack, last.ece), (21, false));
    }

    #[test]
    fn accurate_ecn_counts_every_ce_packet() {
        let mut r = Receiver::new(Dur::from_ms(50), EcnEcho::AccEcn);
        let marks: Vec<Ecn> = (0..40)
            .map(|i| if i % 3 == 0 { Ecn::Ce } else { Ecn::Ect1 })
            .collect();
        let acks = feed(&mut r, &marks);
        let last = acks.last().unwrap();
        let expect = marks[..last.ack as usize]
            .iter()
            .filter(|&&e| e == Ecn::Ce)
            .count() as u32;
        assert_eq!(last.ce_count, expect);
        assert!(acks.iter().all(|a| !a.ece), "no ECE flag with Accurate ECN");
        // Counts never go backwards.
        assert!(acks.windows(2).all(|w| w[0].ce_count <= w[1].ce_count));
    }
}
