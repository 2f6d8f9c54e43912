//! The TCP sender, modelled on Linux's ACK processing (`tcp_ack()` in `tcp_input.c`).
//!
//! Per ACK, in the kernel's order: SACK tagging of the retransmission queue (`tcp_sacktag_write_queue`, with
//! the previous ACK's blocks used to skip work as `recv_sack_cache` does), removal of cumulatively
//! acknowledged segments with RTT sampling (`tcp_clean_rtx_queue`: Karn's rule, SACK RTT, the timestamp
//! fallback) and the `pkts_acked` hook, the `in_ack_event` hook, TLP episode accounting, the loss-recovery state machine
//! (`tcp_fastretrans_alert`, in `recovery.rs`), TLP/RTO re-arming, the delivery-rate sample (`tcp_rate_gen`),
//! the congestion control (`tcp_cong_control`: `cong_control`, or PRR during CWR/Recovery, or `cong_avoid`,
//! then the pacing rate), and finally retransmissions and new data (`xmit.rs`).
//!
//! The algorithm lives in a `ccfair_cc::stack::TcpCore`, which also owns the code that acts on the socket
//! alone (state changes, reductions, undo, `tcp_cong_control`, cwnd validation); delivery-rate sampling is
//! `ccfair_cc::rate`. The scripted driver runs the same code, and `tests/crosscheck.rs` checks that its
//! `tcp_ack` sequence and this one give the same traces.
//!
//! Deviations from Linux, each because the simulated network or traffic cannot trigger the mechanism:
//! - No DSACK, no Eifel/timestamp-based undo: the network never duplicates or reorders, and the receiver sends
//!   no DSACK. F-RTO (RFC 5682, `tcp_frto` = 2) and its undo are modelled.
//! - The receive window (`tcp_ack_update_window`, `tcp_may_update_window`): the window each ACK offers
//!   becomes `snd_wnd` when the ACK advances snd_una, opens the window or closes it (the return path is
//!   FIFO and carries no data, so `snd_wl1` never decides); a changed window takes the slow path, as header
//!   prediction would fail, and an ACK that only updates the window is not a duplicate. New data stays
//!   within snd_una + snd_wnd (`xmit.rs`). A receiver without a window model offers an unlimited one. No
//!   zero-window probes (`tcp_probe_timer`): the receiving application reads at once, so the receiver only
//!   holds out-of-order data behind a hole inside the offered window, whose edge never moves back; the
//!   window therefore never closes on the sender (the receiver offers no zero window, see `rwnd.rs`), and a
//!   hole is always retransmittable. No SACK reneging, no MTU probing.
//! - TSO/GSO: a paced sender, and with the host's `tso` any sender, emits segments in bursts sized by
//!   `tcp_tso_autosize` (so pacing has Linux's granularity); without `tso` an unpaced sender sends segment by
//!   segment. The host's NIC (`crate::host::nic`) spaces a burst's segments at its line rate, or, infinitely
//!   fast, hands them to the bottleneck at once. TSO deferral (`tcp_tso_should_defer`) applies with the
//!   host's `tso`; TCP Small Queues (`tcp_small_queue_check`) whenever the host holds segments (see
//!   `xmit.rs`).
//! - The handshake: a connection opened at the flow's start (`connect = "at_start"`) sends its SYN through
//!   the network and completes on the SYN-ACK ([`Sender::open`], [`Sender::on_synack`], `tcp::handshake`,
//!   with its own deviations there). One established before the run (`"before_run"`) measured one RTT
//!   sample, the path's base RTT (the SYN and SYN-ACK cross an empty network), at time 0. Either way that
//!   sample seeds srtt, the RTO and the min-RTT filter as `tcp_ack` does for the SYN-ACK in
//!   `tcp_rcv_synsent_state_process`, then `tcp_finish_connect` → `tcp_init_transfer` initialises the
//!   algorithm: BBR takes its first min_rtt and its initial pacing rate from it, and its 10 s min-RTT window
//!   starts then. The SYN's own delivery (`tp->delivered` = 1 after the handshake) is not counted. A flow
//!   connected before the run writes from its start time ([`Sender::start`]); as on a new Linux socket the
//!   pipe counts as application-limited until the first ACK (`tcp_init_sock`), so that first write is an
//!   idle restart for BBR, which then does not begin with PROBE_RTT when it starts more than 10 s after the
//!   connection.
//! - The application is a bulk source that never idles until it stops, or writes a finite flow's bytes at
//!   once when it starts and closes, so idle restart (`tcp_cwnd_restart`) and application-limited cwnd decay
//!   (`tcp_cwnd_application_limited`) never apply.

use ccfair_cc::rate::{self, RateScratch, RateState};
use ccfair_cc::stack::TcpCore;
use ccfair_cc::{
    AckEventFlags, AckSample, CaState, CcVars, CongestionControl, RateSample, TcpSock,
    sock::TCP_INFINITE_SSTHRESH,
};
use ccfair_core::{Dur, Time};

use super::rack::Rack;
use super::rtt::RttEstimator;
use super::rtx_queue::{EVER_RETRANS, LOST, RETRANS, RtxQueue, SACKED_ACKED, SACKED_RETRANS};
use super::{Ack, EcnEcho, EcnProfile, HEADER_BYTES, NO_WINDOW, NUM_SACKS, REORDERING, SackBlock, Segment};

// The `FLAG_*` bits of tcp_input.c that the modelled paths use.
pub(super) const FLAG_WIN_UPDATE: u32 = 0x02;
pub(super) const FLAG_DATA_ACKED: u32 = 0x04;
pub(super) const FLAG_RETRANS_DATA_ACKED: u32 = 0x08;
pub(super) const FLAG_DATA_SACKED: u32 = 0x20;
pub(super) const FLAG_ECE: u32 = 0x40;
pub(super) const FLAG_LOST_RETRANS: u32 = 0x80;
pub(super) const FLAG_ORIG_SACK_ACKED: u32 = 0x200;
pub(super) const FLAG_SND_UNA_ADVANCED: u32 = 0x400;
pub(super) const FLAG_SET_XMIT_TIMER: u32 = 0x1000;
pub(super) const FLAG_ACK_MAYBE_DELAYED: u32 = 0x10000;
pub(super) const FLAG_ACKED: u32 = FLAG_DATA_ACKED;
pub(super) const FLAG_NOT_DUP: u32 = FLAG_WIN_UPDATE | FLAG_ACKED;
pub(super) const FLAG_CA_ALERT: u32 = FLAG_DATA_SACKED | FLAG_ECE;
pub(super) const FLAG_FORWARD_PROGRESS: u32 = FLAG_ACKED | FLAG_DATA_SACKED;

/// Which of the three uses of Linux's single retransmission timer is pending (`icsk_pending`).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum XmitTimer {
    Retrans,
    LossProbe,
    ReoTimeout,
    /// The SYN's retransmission timer, before the connection is established (`tcp::handshake`).
    Syn,
}

/// What `tcp_fastretrans_alert` asks to (re)transmit after the cwnd update.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(super) enum Rexmit {
    None,
    Lost,
    New,
}

/// Per-connection stack settings.
#[derive(Clone, Debug)]
pub struct SenderConfig {
    pub flow: u32,
    /// Payload bytes per segment.
    pub mss: u32,
    pub initial_cwnd: u32,
    /// Enforce the pacing rate (as with the fq qdisc); always on when the algorithm asks for pacing.
    pub pacing: bool,
    /// ECN codepoint and feedback (see [`EcnProfile::resolve`]).
    pub ecn: EcnProfile,
    /// Bytes the application writes at the start and then closes; 0: a bulk source writing until it stops.
    pub app_bytes: u64,
    /// Send TSO bursts without pacing too (the host's `tso`); a paced sender always does.
    pub tso: bool,
    /// Segments can wait in the host between TCP and the wire (a processing delay, a NIC of finite rate),
    /// so TCP Small Queues may throttle the sender; an ideal host holds nothing.
    pub host_queue: bool,
}

/// Counters for the recorder.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SenderStats {
    pub sent_segments: u64,
    pub retransmitted_segments: u64,
    pub rto_events: u64,
    pub tlp_probes: u64,
    pub recoveries: u64,
    pub spurious_rto_undos: u64,
    /// Window reductions for congestion: entries into Recovery, into CWR on ECN, and new Loss episodes on RTO
    /// (once per episode, as `tcp_enter_loss` starts one).
    pub cwnd_reductions: u64,
}

/// TCP Small Queues' state: whether the host can hold segments, the segments it holds, whether TSQ throttled
/// the sender, and while it does, the most segments its host may hold for the next wakeup to send (as long
/// as nothing but its host queue changes, see `on_tsq_wakeup`; `None` until worked out, and after every
/// other call into the sender). 16 bytes aligned to 16, so on one cache line: a segment leaving the host
/// touches only this of its sender.
#[derive(Clone, Copy, Debug, Default)]
#[repr(align(16))]
pub(super) struct Tsq {
    pub host_queue: bool,
    pub throttled: bool,
    pub host_queued: u32,
    pub hold_segments: Option<u32>,
}

/// Scratch state of one SACK-tagging pass (`struct tcp_sacktag_state`).
#[derive(Clone, Debug, Default)]
pub(super) struct SackState {
    pub first_sackt: Option<Time>,
    pub last_sackt: Option<Time>,
    pub reord: u32,
    pub sack_delivered: u32,
    pub flag: u32,
}

pub struct Sender {
    pub tp: TcpSock,
    /// The algorithm and the TCP core around it (PRR, undo, cwnd validation), shared with the scripted driver.
    pub(super) core: TcpCore,
    pub(super) flow: u32,
    /// Unpaced bursts are TSO-sized too (see `tso_segs`).
    pub(super) tso: bool,
    pub(super) tsq: Tsq,
    /// The receive window the last ACK offered, bytes from snd_una (`tp->snd_wnd`).
    pub(super) snd_wnd: u32,
    pub(super) wire_len: u32,
    /// A finite flow's last segment and its wire length (the remainder of its size plus the headers); for a
    /// bulk source `u32::MAX`, a sequence number it never sends.
    pub(super) last_seq: u32,
    pub(super) last_wire_len: u32,
    pub(super) q: RtxQueue,
    pub rtt: RttEstimator,
    pub(super) rack: Rack,
    pub(super) rate: RateState,
    pub(super) reordering: u32,
    // Loss recovery.
    pub(super) frto: bool,
    pub(super) tlp_high_seq: Option<u32>,
    pub(super) tlp_retrans: bool,
    /// Consecutive RTOs without progress (`icsk_retransmits`).
    pub(super) retransmits: u32,
    /// Lowest sequence that may be lost and not yet retransmitted (`retransmit_skb_hint`).
    pub(super) retransmit_hint: u32,
    /// End of the highest SACKed segment (`tcp_highest_sack_seq` while sacked_out > 0).
    pub(super) highest_sack_end: u32,
    sack_cache: [SackBlock; NUM_SACKS],
    sack_cache_len: usize,
    // Pacing (earliest departure time model).
    pub(super) wstamp: Time,
    pub(super) data_segs_out: u64,
    /// New data may be sent while `snd_nxt < app_end_seq` (the application's writes so far).
    pub(super) app_end_seq: u32,
    pub(super) started: bool,
    /// The handshake completed ([`Sender::connect`], or a SYN-ACK: [`Sender::on_synack`]).
    connected: bool,
    /// A connection opened at the flow's start waits for its SYN-ACK (`tcp::handshake`).
    pub(super) syn_sent: Option<super::handshake::SynSent>,
    /// Every SYN went unanswered.
    pub(super) connect_failed: bool,
    /// The route's initial window, which the handshake's end sets (`tcp_init_transfer`).
    pub(super) initial_cwnd: u32,
    // Timers.
    pub(super) xmit_timer: Option<(Time, XmitTimer)>,
    /// The ACK being processed owes `tcp_set_xmit_timer` (deferred by `on_ack` to its `write_xmit`, which arms
    /// the timer once: the loss probe after what it sent, or what `set_xmit_timer` arms if it sent nothing;
    /// meanwhile a new segment does not re-arm the RTO, which would be overwritten).
    pub(super) xmit_timer_owed: bool,
    pub(super) pacing_timer: Option<Time>,
    /// ECN: the CWR flag is due on the next data segment (`TCP_ECN_QUEUE_CWR`).
    pub(super) ecn_queue_cwr: bool,
    pub(super) ecn: EcnProfile,
    /// Accurate ECN: the receiver's CE count on the last ACK.
    ce_count_seen: u32,
    pub stats: SenderStats,
    /// RTT (µs) of the most recently sent segment the last ACK covered, -1 if none (for the recorder).
    pub last_rtt_us: i64,
}

impl Sender {
    pub fn new(cfg: &SenderConfig, cc: Box<dyn CongestionControl>) -> Sender {
        let core = TcpCore::new(cc);
        let mut tp = TcpSock::new(cfg.mss, cfg.initial_cwnd);
        tp.internal_pacing = cfg.pacing || core.flags().needs_pacing;
        tp.ecn_ok = cfg.ecn.enabled();
        let mss = cfg.mss as u64;
        let (app_end_seq, last_seq, last_wire_len) = match cfg.app_bytes {
            0 => (u32::MAX, u32::MAX, 0),
            bytes => {
                let segments =
                    u32::try_from(bytes.div_ceil(mss)).expect("flow sizes fit in 32-bit sequences");
                let remainder = bytes - (segments as u64 - 1) * mss;
                (segments, segments - 1, remainder as u32 + HEADER_BYTES)
            }
        };
        Sender {
            tp,
            core,
            flow: cfg.flow,
            tso: cfg.tso,
            tsq: Tsq {
                host_queue: cfg.host_queue,
                ..Tsq::default()
            },
            snd_wnd: NO_WINDOW,
            wire_len: cfg.mss + HEADER_BYTES,
            last_seq,
            last_wire_len,
            q: RtxQueue::with_capacity(cfg.initial_cwnd as usize),
            rtt: RttEstimator::new(),
            rack: Rack::default(),
            rate: RateState::default(),
            reordering: REORDERING,
            frto: false,
            tlp_high_seq: None,
            tlp_retrans: false,
            retransmits: 0,
            retransmit_hint: 0,
            highest_sack_end: 0,
            sack_cache: [SackBlock::default(); NUM_SACKS],
            sack_cache_len: 0,
            wstamp: Time::ZERO,
            data_segs_out: 0,
            app_end_seq,
            started: false,
            connected: false,
            syn_sent: None,
            connect_failed: false,
            initial_cwnd: cfg.initial_cwnd,
            xmit_timer: None,
            xmit_timer_owed: false,
            pacing_timer: None,
            ecn_queue_cwr: false,
            ecn: cfg.ecn,
            ce_count_seen: 0,
            stats: SenderStats::default(),
            last_rtt_us: -1,
        }
    }

    /// The host kernel's jiffies clock this sender's congestion control reads.
    pub fn set_jiffies(&mut self, jiffies: ccfair_core::Jiffies) {
        self.tp.jiffies = jiffies;
    }

    /// The connection was established before the run (`connect = "before_run"`), at `now`, after measuring
    /// `handshake_rtt` over the empty path: the SYN-ACK's RTT sample (`tcp_ack_update_rtt`: the min-RTT
    /// filter, srtt and the RTO), then `tcp_init_transfer` initialises the algorithm
    /// (`tcp_init_congestion_control`), which sees that sample in `srtt_us` and `min_rtt_us`.
    pub fn connect(&mut self, now: Time, handshake_rtt: Dur) {
        debug_assert!(!self.connected, "a connection is established once");
        self.tp.now = now;
        let rtt_us = u32::try_from(handshake_rtt.ns() / 1000)
            .unwrap_or(u32::MAX)
            .max(1);
        self.establish(now, rtt_us);
    }

    /// The handshake's RTT sample `rtt_us` taken at `now` (`tcp_ack_update_rtt`), then `tcp_init_transfer`'s
    /// initialisation of the algorithm.
    pub(super) fn establish(&mut self, now: Time, rtt_us: u32) {
        self.rtt.update_min(now, rtt_us, false);
        self.rtt.sample(rtt_us, self.tp.snd_una, self.tp.snd_nxt);
        self.rtt.clear_backoff();
        self.tp.srtt_us = self.rtt.srtt_us();
        self.tp.min_rtt_us = self.rtt.min_rtt_us();
        self.connected = true;
        self.core.init(&mut self.tp, self.rtt.srtt_us8 as u64);
    }

    /// The connection is established.
    pub fn is_connected(&self) -> bool {
        self.connected
    }

    /// The receive window of the handshake (the receiver's first window, bytes), before the start.
    pub fn set_snd_wnd(&mut self, bytes: u32) {
        self.snd_wnd = bytes;
    }

    /// The receive window the last ACK offered, bytes.
    pub fn snd_wnd(&self) -> u32 {
        self.snd_wnd
    }

    /// `tcp_wnd_end` in segments: the first segment the receive window does not allow (whole segments).
    #[inline]
    pub fn snd_wnd_end(&self) -> u32 {
        self.tp.snd_una.saturating_add(self.snd_wnd / self.tp.mss)
    }

    /// The application starts writing at `now` on the established connection: send the initial window.
    pub fn start(&mut self, now: Time, out: &mut Vec<Segment>) {
        assert!(self.connected, "a flow starts on an established connection");
        self.tsq.hold_segments = None;
        self.tp.now = now;
        self.wstamp = now;
        self.started = true;
        self.write_xmit(0, out);
    }

    /// The application stops writing: no new data after what has been sent.
    pub fn stop_app(&mut self, now: Time) {
        self.tsq.hold_segments = None;
        self.tp.now = now;
        self.app_end_seq = self.tp.snd_nxt;
        self.tp.unsent_segments = 0;
    }

    /// All data the application wrote has been acknowledged and no more will come.
    pub fn finished(&self) -> bool {
        self.app_end_seq != u32::MAX && self.tp.snd_una >= self.app_end_seq
    }

    pub fn started(&self) -> bool {
        self.started
    }

    /// When the retransmission timer (RTO, TLP or RACK reordering timer) fires next.
    pub fn xmit_deadline(&self) -> Option<Time> {
        self.xmit_timer.map(|(t, _)| t)
    }

    pub fn xmit_timer_kind(&self) -> Option<XmitTimer> {
        self.xmit_timer.map(|(_, k)| k)
    }

    /// When the pacing timer fires next.
    pub fn pacing_deadline(&self) -> Option<Time> {
        self.pacing_timer
    }

    /// The ECN codepoint of this connection's new data.
    /// Asks the caches for what an ACK will read through this sender's pointers: the retransmission queue's
    /// head (the entries it acknowledges), the slot new segments are written to, and the algorithm's state.
    /// Call it once the sender itself is in the caches, or the hints wait for it.
    #[inline]
    pub fn prefetch_ack_path(&self) {
        self.q.prefetch_ends();
        crate::prefetch::value(self.core.cc_ref());
    }

    pub fn ecn_codepoint(&self) -> ccfair_core::Ecn {
        self.ecn.codepoint
    }

    pub fn cc_name(&self) -> &'static str {
        self.core.cc_ref().name()
    }

    pub fn cc_vars(&self) -> CcVars {
        self.core.cc_ref().vars()
    }

    /// The algorithm.
    pub fn cc(&self) -> &dyn CongestionControl {
        self.core.cc_ref()
    }

    /// Segments sent and not yet cumulatively acknowledged.
    pub fn packets_out(&self) -> u32 {
        self.tp.packets_out
    }

    /// The retransmission queue (scoreboard tags, send times, rate snapshots), read-only, for tests.
    pub fn rtx_queue(&self) -> &RtxQueue {
        &self.q
    }

    #[inline]
    pub(super) fn min_rtt(&self) -> Dur {
        let us = self.rtt.min_rtt_us();
        if us == u32::MAX {
            Dur::MAX
        } else {
            Dur::from_us(us as u64)
        }
    }

    #[inline]
    pub(super) fn srtt(&self) -> Dur {
        Dur::from_us(self.rtt.srtt_us() as u64)
    }

    /// `tcp_highest_sack_seq`.
    #[inline]
    pub(super) fn highest_sack_seq(&self) -> u32 {
        if self.tp.sacked_out == 0 {
            self.tp.snd_una
        } else {
            self.highest_sack_end
        }
    }

    /// `tcp_set_ca_state`: the algorithm hears of the change first.
    pub(super) fn set_ca_state(&mut self, state: CaState) {
        self.core.set_ca_state(&mut self.tp, state);
    }

    fn count_delivered(&mut self, n: u32, ece: bool) {
        self.tp.delivered += n;
        if ece {
            self.tp.delivered_ce += n;
        }
    }

    /// Processes one ACK (`tcp_ack`), then sends what the new state allows. The ACK's delivery-rate sample is
    /// built in `rate` (Linux keeps it on `tcp_ack`'s stack): it lives for one ACK, so the caller keeps one
    /// for all its senders, in memory that stays in the caches, and finds this ACK's sample (what
    /// `cong_control` got) in `rate.rs` afterwards.
    pub fn on_ack(&mut self, now: Time, ack: &Ack, out: &mut Vec<Segment>, rate: &mut RateScratch) {
        self.tsq.hold_segments = None;
        self.tp.now = now;
        self.last_rtt_us = -1;
        let prior_snd_una = self.tp.snd_una;
        // The return path is FIFO, so an ACK below snd_una never carries news; one beyond snd_nxt is bogus.
        if ack.ack < prior_snd_una || ack.ack > self.tp.snd_nxt {
            return;
        }
        let mut flag = 0u32;
        if ack.ack > prior_snd_una {
            flag |= FLAG_SND_UNA_ADVANCED;
            self.retransmits = 0;
        }
        let prior_fack = self.highest_sack_seq();
        *rate = RateScratch::default();
        rate.rs.prior_in_flight = self.tp.in_flight();
        // google/bbr's `tcp_ack` marks an application-limited bubble here (see `rate::check_app_limited`).
        let has_unsent = self.has_unsent();
        rate::check_app_limited(&mut self.tp, has_unsent);
        let prior_packets = self.tp.packets_out;
        let prior_delivered = self.tp.delivered;
        let prior_lost = self.tp.lost;
        let mut sack = SackState {
            reord: self.tp.snd_nxt,
            ..SackState::default()
        };

        // Classic feedback flags ECE; Accurate ECN reports how many packets were CE-marked.
        let (ece, ce_delta) = match self.ecn.echo {
            EcnEcho::None => (false, 0),
            EcnEcho::Rfc3168 | EcnEcho::Dctcp => (ack.ece, 0),
            EcnEcho::AccEcn => {
                let delta = ack.ce_count.wrapping_sub(self.ce_count_seen);
                self.ce_count_seen = ack.ce_count;
                (delta > 0, delta)
            }
        };
        // With Accurate ECN, delivered_ce counts the reported marks instead of whole ECE-flagged ACKs.
        let classic_ece = ece && ce_delta == 0;
        // tcp_ack_update_window (tcp_may_update_window without snd_wl1: ACKs come in order, carry no data).
        let nwin = ack.wnd_bytes;
        let win_changed = nwin != self.snd_wnd;
        if flag & FLAG_SND_UNA_ADVANCED != 0 || nwin > self.snd_wnd || nwin == 0 {
            flag |= FLAG_WIN_UPDATE;
            self.snd_wnd = nwin;
        }
        // Header prediction includes the window field: a changed window takes the slow path.
        let slowpath = ack.num_sacks > 0 || ece || flag & FLAG_SND_UNA_ADVANCED == 0 || win_changed;
        if !slowpath {
            // Pure forward advance: the header-prediction fast path.
            self.tp.snd_una = ack.ack;
        } else {
            self.tp.snd_una = ack.ack;
            if ack.num_sacks > 0 {
                flag |= self.sacktag(ack, prior_snd_una, &mut sack, rate);
            }
            if ece {
                flag |= FLAG_ECE;
            }
            if sack.sack_delivered > 0 {
                self.count_delivered(sack.sack_delivered, classic_ece);
            }
        }
        // Current mainline calls in_ack_event after the queue is cleaned, so the algorithm sees this ACK's
        // deliveries (the AccECN preparation moved it; older kernels called it before).
        let mut ev = AckEventFlags::for_ack(flag & FLAG_SND_UNA_ADVANCED != 0, ack.num_sacks > 0, ece);
        // Without a receive window these are what `for_ack` derives; a window update adds to both.
        debug_assert!(!ev.slowpath || slowpath);
        ev.slowpath = slowpath;
        ev.win_update = flag & FLAG_WIN_UPDATE != 0;

        if prior_packets == 0 {
            self.core.cc().in_ack_event(&mut self.tp, ev);
            if let Some(high) = self.tlp_high_seq {
                self.process_tlp_ack(ack.ack, high, flag);
            }
            return;
        }

        flag |= self.clean_rtx_queue(ack, prior_fack, prior_snd_una, &mut sack, classic_ece, rate);
        // tcp_accecn_process: the marks this ACK reports.
        self.tp.delivered_ce = self.tp.delivered_ce.wrapping_add(ce_delta);
        rate.rs.ece_delta = ce_delta;
        self.core.cc().in_ack_event(&mut self.tp, ev);

        if let Some(high) = self.tlp_high_seq {
            self.process_tlp_ack(ack.ack, high, flag);
        }

        let mut rexmit = Rexmit::None;
        if self.ack_is_dubious(flag) {
            let num_dupack = u32::from(flag & (FLAG_SND_UNA_ADVANCED | FLAG_NOT_DUP) == 0);
            self.fastretrans_alert(num_dupack, &mut flag, &mut rexmit);
        }
        if flag & FLAG_SET_XMIT_TIMER != 0 {
            if rexmit == Rexmit::None
                && self.tp.packets_out > 0
                && matches!(self.tp.ca_state, CaState::Open | CaState::Cwr)
            {
                // `tcp_set_xmit_timer` would arm a loss probe, which the first new segment sent below would turn
                // into the RTO (`tcp_rearm_rto` while a probe is pending) and `tcp_write_xmit` then into a
                // new loss probe, from the same state but the packets out: nothing reads the timer in between
                // (no retransmission is due), so it is armed once, by `write_xmit` (see `xmit_timer_owed`).
                self.xmit_timer_owed = true;
            } else {
                self.set_xmit_timer();
            }
        }

        let delivered = self.tp.delivered - prior_delivered;
        let lost = self.tp.lost - prior_lost;
        rate.rs.is_ack_delayed = flag & FLAG_ACK_MAYBE_DELAYED != 0;
        rate.rs.ece = flag & FLAG_ECE != 0;
        let min_rtt_us = self.rtt.min_rtt_us();
        self.rate
            .generate(&mut self.tp, now, delivered, lost, min_rtt_us, rate);
        self.cong_control(delivered, flag, &rate.rs);
        self.xmit_recovery(rexmit, out);
        self.write_xmit(0, out);
        debug_assert!(!self.xmit_timer_owed);
    }

    /// `tcp_ack_is_dubious`.
    fn ack_is_dubious(&self, flag: u32) -> bool {
        flag & FLAG_NOT_DUP == 0 || flag & FLAG_CA_ALERT != 0 || self.tp.ca_state != CaState::Open
    }

    /// `tcp_may_raise_cwnd`.
    fn may_raise_cwnd(&self, flag: u32) -> bool {
        if self.reordering > REORDERING {
            return flag & FLAG_FORWARD_PROGRESS != 0;
        }
        flag & FLAG_DATA_ACKED != 0
    }

    /// `tcp_cong_control` (in the shared core).
    fn cong_control(&mut self, delivered: u32, flag: u32, rs: &RateSample) {
        let may_raise = self.may_raise_cwnd(flag);
        let una_advanced = flag & FLAG_SND_UNA_ADVANCED != 0;
        self.core.cong_control(
            &mut self.tp,
            rs,
            delivered,
            may_raise,
            una_advanced,
            self.rtt.srtt_us8 as u64,
        );
    }

    // ------------------------------------------------------------------------------------------------
    // SACK processing (tcp_sacktag_write_queue and friends)
    // ------------------------------------------------------------------------------------------------

    fn sacktag(&mut self, ack: &Ack, prior_snd_una: u32, st: &mut SackState, rate: &mut RateScratch) -> u32 {
        st.flag = 0;
        st.reord = self.tp.snd_nxt;
        if self.tp.sacked_out == 0 {
            // tcp_highest_sack_reset: the highest SACK starts from the head of the queue.
            self.highest_sack_end = self.q.head_seq();
        }
        if self.tp.packets_out == 0 {
            return 0;
        }
        let mut blocks = [SackBlock::default(); super::MAX_SACK_BLOCKS_SENT];
        let mut n = 0;
        for b in ack.sack_blocks() {
            // tcp_is_sackblock_valid for non-DSACK blocks: inside (snd_una, snd_nxt], not reversed.
            let valid = b.end <= self.tp.snd_nxt && b.start < b.end && b.start > self.tp.snd_una;
            if !valid || b.end <= prior_snd_una {
                continue;
            }
            blocks[n] = *b;
            n += 1;
        }
        blocks[..n].sort_unstable_by_key(|b| b.start);

        // Blocks already processed on the previous ACK need no second walk (recv_sack_cache).
        let use_cache = self.tp.sacked_out > 0;
        for b in &blocks[..n] {
            let mut seq = b.start.max(self.tp.snd_una);
            while seq < b.end {
                if use_cache
                    && let Some(c) = self.sack_cache[..self.sack_cache_len]
                        .iter()
                        .find(|c| c.start <= seq && seq < c.end)
                {
                    seq = c.end;
                    continue;
                }
                self.sacktag_one(seq, st, rate);
                seq += 1;
            }
        }
        self.sack_cache[..n].copy_from_slice(&blocks[..n]);
        self.sack_cache_len = n;

        if self.tp.ca_state != CaState::Loss || self.core.undo_marker {
            self.check_sack_reordering(st.reord);
        }
        st.flag
    }

    /// `tcp_sacktag_one` + the per-segment part of `tcp_sacktag_walk`.
    fn sacktag_one(&mut self, seq: u32, st: &mut SackState, rate: &mut RateScratch) {
        let now = self.tp.now;
        let min_rtt = self.min_rtt();
        let highest = self.highest_sack_seq();
        let seg = *self.q.get(seq);
        let sacked = seg.flags;
        let mut flags = sacked;
        if sacked & SACKED_ACKED == 0 {
            self.rack.advance(now, sacked, seq + 1, seg.xmit_time, min_rtt);
            if sacked & SACKED_RETRANS != 0 {
                // The retransmission arrived (if the original was lost); otherwise it is still in flight.
                if sacked & LOST != 0 {
                    flags &= !(LOST | SACKED_RETRANS);
                    self.tp.lost_out -= 1;
                    self.tp.retrans_out -= 1;
                }
            } else {
                if sacked & RETRANS == 0 {
                    // A never-retransmitted segment SACKed below the highest SACK: reordering.
                    if seq < highest && seq < st.reord {
                        st.reord = seq;
                    }
                    if seq < self.tp.high_seq {
                        st.flag |= FLAG_ORIG_SACK_ACKED;
                    }
                    st.first_sackt.get_or_insert(seg.xmit_time);
                    st.last_sackt = Some(seg.xmit_time);
                }
                if sacked & LOST != 0 {
                    flags &= !LOST;
                    self.tp.lost_out -= 1;
                }
            }
            flags |= SACKED_ACKED;
            st.flag |= FLAG_DATA_SACKED;
            self.tp.sacked_out += 1;
            st.sack_delivered += 1;
        }
        let segm = self.q.get_mut(seq);
        segm.flags = flags;
        self.rate.skb_delivered(
            &mut segm.tx,
            segm.xmit_time,
            seq + 1,
            flags & RETRANS != 0,
            flags & SACKED_ACKED != 0,
            rate,
        );
        if flags & SACKED_ACKED != 0 {
            self.q.unlink(seq);
        }
        if seq >= self.highest_sack_end {
            self.highest_sack_end = seq + 1;
        }
    }

    /// `tcp_check_sack_reordering`: a hole below the highest SACK was filled by an original transmission.
    pub(super) fn check_sack_reordering(&mut self, low_seq: u32) {
        let fack = self.highest_sack_seq();
        if low_seq >= fack {
            return;
        }
        let metric = fack - low_seq;
        if metric > self.reordering {
            self.reordering = metric.min(super::MAX_REORDERING);
        }
        self.rack.reord_seen += 1;
    }

    // ------------------------------------------------------------------------------------------------
    // Cumulative ACK (tcp_clean_rtx_queue) and RTT (tcp_ack_update_rtt)
    // ------------------------------------------------------------------------------------------------

    fn clean_rtx_queue(
        &mut self,
        ack: &Ack,
        prior_fack: u32,
        prior_snd_una: u32,
        st: &mut SackState,
        ece: bool,
        rate: &mut RateScratch,
    ) -> u32 {
        let now = self.tp.now;
        let min_rtt = self.min_rtt();
        let prior_sacked = self.tp.sacked_out;
        let mut reord = self.tp.snd_nxt;
        let mut first_ackt: Option<Time> = None;
        let mut last_ackt = Time::ZERO;
        let mut pkts_acked = 0u32;
        let mut flag = 0u32;

        while !self.q.is_empty() && self.q.head_seq() < self.tp.snd_una {
            let seq = self.q.head_seq();
            let plain = self.q.plain_prefix(self.tp.snd_una);
            if plain > 0 {
                // A run of segments sent once and neither SACKed nor lost, in send order: what the loop below does
                // for each, for all at once. Each is delivered now, counts for the RTT (the first and the last
                // send times) and in `reord`; RACK's reference and the rate sample both follow the most recently
                // sent segment, which is the run's last (see `Rack::advance`, `RateState::skb_delivered`: once one
                // segment of the run is taken, every later one is), so only it is offered to them.
                let last = seq + plain - 1;
                let first_xmit = self.q.get(seq).xmit_time;
                let (last_xmit, mut last_tx) = {
                    let s = self.q.get(last);
                    (s.xmit_time, s.tx)
                };
                last_ackt = last_xmit;
                first_ackt.get_or_insert(first_xmit);
                reord = reord.min(seq);
                if seq < self.tp.high_seq {
                    flag |= FLAG_ORIG_SACK_ACKED;
                }
                self.count_delivered(plain, ece);
                self.rack.advance(now, 0, last + 1, last_xmit, min_rtt);
                self.tp.packets_out -= plain;
                pkts_acked += plain;
                self.rate
                    .skb_delivered(&mut last_tx, last_xmit, last + 1, false, false, rate);
                flag |= FLAG_DATA_ACKED;
                self.q.drop_front(plain);
                continue;
            }
            // Taken out first: nothing below reads the queue, and its snapshot is used once more, here.
            let mut seg = self.q.pop_front();
            let sacked = seg.flags;
            if sacked & RETRANS != 0 {
                if sacked & SACKED_RETRANS != 0 {
                    self.tp.retrans_out -= 1;
                }
                flag |= FLAG_RETRANS_DATA_ACKED;
            } else if sacked & SACKED_ACKED == 0 {
                last_ackt = seg.xmit_time;
                first_ackt.get_or_insert(last_ackt);
                reord = reord.min(seq);
                if seq < self.tp.high_seq {
                    flag |= FLAG_ORIG_SACK_ACKED;
                }
            }
            if sacked & SACKED_ACKED != 0 {
                self.tp.sacked_out -= 1;
            } else {
                self.count_delivered(1, ece);
                self.rack.advance(now, sacked, seq + 1, seg.xmit_time, min_rtt);
            }
            if sacked & LOST != 0 {
                self.tp.lost_out -= 1;
            }
            self.tp.packets_out -= 1;
            pkts_acked += 1;
            self.rate.skb_delivered(
                &mut seg.tx,
                seg.xmit_time,
                seq + 1,
                sacked & RETRANS != 0,
                sacked & SACKED_ACKED != 0,
                rate,
            );
            flag |= FLAG_DATA_ACKED;
        }
        if self.q.is_empty() {
            self.q.reset_base(self.tp.snd_nxt);
        }
        self.retransmit_hint = self.retransmit_hint.max(self.tp.snd_una);

        let mut seq_rtt_us: i64 = -1;
        let mut ca_rtt_us: i64 = -1;
        let mut sack_rtt_us: i64 = -1;
        if let Some(first) = first_ackt
            && flag & FLAG_RETRANS_DATA_ACKED == 0
        {
            seq_rtt_us = (now.saturating_since(first).ns() / 1000) as i64;
            ca_rtt_us = (now.saturating_since(last_ackt).ns() / 1000) as i64;
            // FLAG_ACK_MAYBE_DELAYED needs a sub-MSS advance of snd_una: never for full-sized segments.
        }
        if let (Some(first), Some(last)) = (st.first_sackt, st.last_sackt) {
            sack_rtt_us = (now.saturating_since(first).ns() / 1000) as i64;
            ca_rtt_us = (now.saturating_since(last).ns() / 1000) as i64;
        }
        let rtt_update = self.ack_update_rtt(
            flag,
            seq_rtt_us,
            sack_rtt_us,
            ca_rtt_us,
            ack.tsecr_ms,
            &mut rate.rs,
        );

        if flag & FLAG_ACKED != 0 {
            flag |= FLAG_SET_XMIT_TIMER;
            if reord < prior_fack {
                self.check_sack_reordering(reord);
            }
        } else if !self.q.is_empty() && rtt_update && sack_rtt_us >= 0 {
            let head = self.q.get(self.q.head_seq()).xmit_time;
            if sack_rtt_us > (now.saturating_since(head).ns() / 1000) as i64 {
                // Do not re-arm from a SACK RTT measured on data sent after the head was last sent.
                flag |= FLAG_SET_XMIT_TIMER;
            }
        }

        let in_flight_bytes = self.tp.mss * self.tp.delivered.wrapping_sub(rate.rs.prior_delivered);
        let sample = AckSample {
            pkts_acked,
            rtt_us: rate.rs.rtt_us,
            in_flight: in_flight_bytes,
        };
        self.core.cc().pkts_acked(&mut self.tp, &sample);
        let _ = (prior_sacked, prior_snd_una);
        flag
    }

    /// `tcp_ack_update_rtt`. Returns whether the estimator took a sample.
    fn ack_update_rtt(
        &mut self,
        flag: u32,
        mut seq_rtt_us: i64,
        sack_rtt_us: i64,
        mut ca_rtt_us: i64,
        tsecr_ms: u32,
        rs: &mut RateSample,
    ) -> bool {
        if seq_rtt_us < 0 {
            seq_rtt_us = sack_rtt_us;
        }
        // RFC 7323 RTTM: with only retransmitted data acknowledged, time it with the timestamp echo.
        if seq_rtt_us < 0 && tsecr_ms != 0 && flag & FLAG_ACKED != 0 {
            let delta_ms = super::ts_clock_ms(self.tp.now).wrapping_sub(tsecr_ms).max(1);
            seq_rtt_us = delta_ms as i64 * 1000;
            ca_rtt_us = seq_rtt_us;
        }
        rs.rtt_us = ca_rtt_us;
        if seq_rtt_us < 0 {
            return false;
        }
        let maybe_delayed = flag & FLAG_ACK_MAYBE_DELAYED != 0;
        self.rtt.update_min(self.tp.now, ca_rtt_us as u32, maybe_delayed);
        self.rtt
            .sample(seq_rtt_us as u32, self.tp.snd_una, self.tp.snd_nxt);
        self.rtt.clear_backoff();
        self.tp.srtt_us = self.rtt.srtt_us();
        self.tp.min_rtt_us = self.rtt.min_rtt_us();
        self.last_rtt_us = ca_rtt_us;
        true
    }

    /// Current ssthresh for display: `None` while infinite.
    pub fn ssthresh(&self) -> Option<u32> {
        (self.tp.snd_ssthresh < TCP_INFINITE_SSTHRESH).then_some(self.tp.snd_ssthresh)
    }

    /// Checks the scoreboard counters against the queue (tests and debug builds).
    pub fn check_invariants(&self) -> Result<(), String> {
        let (mut sacked, mut lost, mut retrans) = (0u32, 0u32, 0u32);
        for seq in self.q.head_seq()..self.q.end_seq() {
            let f = self.q.get(seq).flags;
            sacked += (f & SACKED_ACKED != 0) as u32;
            lost += (f & LOST != 0) as u32;
            retrans += (f & SACKED_RETRANS != 0) as u32;
            let _ = EVER_RETRANS;
        }
        let tp = &self.tp;
        if tp.packets_out != self.q.len() {
            return Err(format!(
                "packets_out {} != queue {}",
                tp.packets_out,
                self.q.len()
            ));
        }
        if tp.packets_out != tp.snd_nxt - tp.snd_una {
            return Err(format!(
                "packets_out {} != snd_nxt - snd_una {}",
                tp.packets_out,
                tp.snd_nxt - tp.snd_una
            ));
        }
        if tp.snd_nxt > self.snd_wnd_end() {
            return Err(format!(
                "snd_nxt {} beyond the receive window's end {} (snd_una {}, snd_wnd {} bytes)",
                tp.snd_nxt,
                self.snd_wnd_end(),
                tp.snd_una,
                self.snd_wnd
            ));
        }
        if (sacked, lost, retrans) != (tp.sacked_out, tp.lost_out, tp.retrans_out) {
            return Err(format!(
                "scoreboard (S,L,R) counted {:?} vs kept {:?}",
                (sacked, lost, retrans),
                (tp.sacked_out, tp.lost_out, tp.retrans_out)
            ));
        }
        if tp.sacked_out + tp.lost_out > tp.packets_out {
            return Err("sacked_out + lost_out > packets_out".into());
        }
        Ok(())
    }
}
