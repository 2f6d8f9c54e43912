//! The part of Linux's `struct tcp_sock` (and `inet_connection_sock`) that a congestion control reads and
//! writes, plus the per-ACK samples the stack hands it.
//!
//! Units follow the kernel: windows in packets (full-sized segments), sequence numbers in segments (the
//! simulator sends only full-sized segments, so segment numbers and byte sequence numbers map one to one), RTTs
//! in microseconds where the kernel uses microseconds, and `pacing_rate` in bytes per second as
//! `sk_pacing_rate`. The stack owns the loss detection, the RTT estimator and the pacer; a congestion control
//! only sees their results here.

use ccfair_core::{Jiffies, Time};

/// Linux `TCP_INFINITE_SSTHRESH`.
pub const TCP_INFINITE_SSTHRESH: u32 = 0x7fff_ffff;
/// Linux `TCP_INIT_CWND` (RFC 6928).
pub const TCP_INIT_CWND: u32 = 10;

/// `icsk_ca_state`: the congestion-avoidance state machine of `tcp_input.c`.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u8)]
pub enum CaState {
    #[default]
    Open = 0,
    Disorder = 1,
    Cwr = 2,
    Recovery = 3,
    Loss = 4,
}

impl CaState {
    pub fn name(self) -> &'static str {
        match self {
            CaState::Open => "open",
            CaState::Disorder => "disorder",
            CaState::Cwr => "cwr",
            CaState::Recovery => "recovery",
            CaState::Loss => "loss",
        }
    }
}

/// `enum tcp_ca_event`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum CaEvent {
    /// First transmission when nothing was in flight (after idle).
    TxStart,
    /// The congestion window was restarted after idle (`tcp_cwnd_restart`).
    CwndRestart,
    /// The end of a CWR or Recovery episode (`tcp_end_cwnd_reduction`).
    CompleteCwr,
    /// An RTO fired (`tcp_enter_loss`).
    Loss,
    /// An ECT packet without CE arrived (receiver side, DCTCP's CE state machine).
    EcnNoCe,
    /// A CE-marked packet arrived (receiver side).
    EcnIsCe,
    /// A TLP retransmission repaired a loss (google/bbr v3's `CA_EVENT_TLP_RECOVERY`).
    TlpRecovery,
}

/// Flags for the `in_ack_event` hook (`CA_ACK_*`).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct AckEventFlags {
    /// The ACK was processed in the slow path (Linux: not a pure in-order ACK).
    pub slowpath: bool,
    /// The ACK updated the receive window.
    pub win_update: bool,
    /// The ACK carried ECE.
    pub ece: bool,
}

/// `struct ack_sample`, given to `pkts_acked`.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct AckSample {
    /// Packets newly acknowledged (cumulatively or by SACK) by this ACK.
    pub pkts_acked: u32,
    /// RTT of the most recently sent packet this ACK covers (Karn-valid), µs; -1 when none.
    pub rtt_us: i64,
    /// Bytes in flight when the most recently sent packet this ACK covers was sent, as the kernel estimates
    /// it: MSS × packets delivered since (`tp->delivered − rs->prior_delivered`; with no sample, since the
    /// start).
    pub in_flight: u32,
}

/// `struct rate_sample` from `tcp_rate.c` (plus the google/bbr fields `tx_in_flight` and `lost`).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct RateSample {
    /// `tp->delivered_mstamp` snapshot of the packet the sample is based on.
    pub prior_mstamp: Time,
    /// `tp->delivered` when that packet was sent.
    pub prior_delivered: u32,
    /// `tp->delivered_ce` when that packet was sent.
    pub prior_delivered_ce: u32,
    /// Packets delivered over the sample's interval; -1 when there is no sample.
    pub delivered: i32,
    /// CE-marked packets delivered over the interval.
    pub delivered_ce: i32,
    /// The sample's interval in µs: max(send interval, ACK interval); -1 when the sample is invalid.
    pub interval_us: i64,
    pub snd_interval_us: i64,
    pub rcv_interval_us: i64,
    /// RTT of the most recently sent packet (S)ACKed, µs; -1 when none.
    pub rtt_us: i64,
    /// Packets newly marked lost on this ACK.
    pub losses: u32,
    /// Packets newly (S)ACKed on this ACK.
    pub acked_sacked: u32,
    /// In flight before this ACK.
    pub prior_in_flight: u32,
    /// In flight when the sampled packet was sent (google/bbr `tx_in_flight`).
    pub tx_in_flight: u32,
    /// `tp->lost` minus its snapshot at the sampled packet's send (google/bbr).
    pub lost: u32,
    /// The sample was taken while the connection was application-limited.
    pub is_app_limited: bool,
    /// The sampled packet was a retransmission.
    pub is_retrans: bool,
    /// The ACK may have been delayed by the receiver (it covered fewer than two new segments' worth...).
    pub is_ack_delayed: bool,
    /// The ACK carried ECE (google/bbr `rs->ece`).
    pub ece: bool,
    /// Packets newly reported CE-marked by this ACK (Accurate ECN `ece_delta`; 0 with classic feedback).
    pub ece_delta: u32,
}

impl Default for RateSample {
    fn default() -> Self {
        RateSample {
            prior_mstamp: Time::ZERO,
            prior_delivered: 0,
            prior_delivered_ce: 0,
            delivered: -1,
            delivered_ce: 0,
            interval_us: -1,
            snd_interval_us: -1,
            rcv_interval_us: -1,
            rtt_us: -1,
            losses: 0,
            acked_sacked: 0,
            prior_in_flight: 0,
            tx_in_flight: 0,
            lost: 0,
            is_app_limited: false,
            is_retrans: false,
            is_ack_delayed: false,
            ece: false,
            ece_delta: 0,
        }
    }
}

/// The socket state visible to a congestion control (`struct tcp_sock` subset).
///
/// Fields a congestion control writes: `snd_cwnd`, `snd_ssthresh`, `snd_cwnd_cnt`, `pacing_rate`,
/// `prior_cwnd` (BBR saves it), `app_limited`/`rate_app_limited` are set by the stack. Everything else is
/// maintained by the stack and is read-only by convention.
#[derive(Clone, Debug)]
pub struct TcpSock {
    /// Now (`tcp_clock_ns`); `now.us()` is `tcp_mstamp`; [`TcpSock::jiffies32`] reads the host's tick.
    pub now: Time,
    /// The host kernel's jiffies clock (its `HZ` and where its ticks fall).
    pub jiffies: Jiffies,
    /// Payload bytes per segment (`mss_cache`).
    pub mss: u32,
    pub snd_cwnd: u32,
    pub snd_ssthresh: u32,
    /// Additive-increase credit (`snd_cwnd_cnt`).
    pub snd_cwnd_cnt: u32,
    pub snd_cwnd_clamp: u32,
    /// cwnd before the current reduction (`prior_cwnd`).
    pub prior_cwnd: u32,
    /// First unacknowledged segment (`snd_una`).
    pub snd_una: u32,
    /// Next new segment to send (`snd_nxt`).
    pub snd_nxt: u32,
    /// `high_seq`: snd_nxt when the current CWR/Recovery/Loss episode began.
    pub high_seq: u32,
    pub packets_out: u32,
    pub sacked_out: u32,
    pub lost_out: u32,
    pub retrans_out: u32,
    /// Packets delivered (cumulatively ACKed or SACKed) since the connection began (`tp->delivered`).
    pub delivered: u32,
    /// Of those, delivered with ECE / CE (`tp->delivered_ce`).
    pub delivered_ce: u32,
    /// Packets marked lost since the connection began (`tp->lost`).
    pub lost: u32,
    /// Time of the last delivery (`delivered_mstamp`).
    pub delivered_mstamp: Time,
    /// Nonzero while application-limited: the `delivered` count at which that ends (`tp->app_limited`).
    pub app_limited: u32,
    /// Smoothed RTT in µs (the kernel stores it ×8; here it is plain µs). 0 before the first sample.
    pub srtt_us: u32,
    /// Windowed minimum RTT in µs (`tcp_min_rtt`), `u32::MAX` before the first sample.
    pub min_rtt_us: u32,
    /// `tcp_is_cwnd_limited()`, evaluated by the stack for the current window.
    pub is_cwnd_limited: bool,
    pub ca_state: CaState,
    /// `sk_pacing_rate` in bytes per second. A `cong_control` algorithm sets it; otherwise the stack does.
    pub pacing_rate: u64,
    /// `sk_max_pacing_rate`, bytes per second (`u64::MAX` = unlimited).
    pub max_pacing_rate: u64,
    /// The stack enforces `pacing_rate` itself (Linux `sk_pacing_status == SK_PACING_NEEDED`); when false the
    /// rate is computed but not enforced (`SK_PACING_NONE`, the default without the fq qdisc).
    pub internal_pacing: bool,
    /// ECN was negotiated on this connection.
    pub ecn_ok: bool,
    /// Segments of payload the application still has to send (`u32::MAX` for a bulk source).
    pub unsent_segments: u32,
    /// When data was last transmitted (`tp->lsndtime`). The stack updates it after each data transmission, so
    /// during `cwnd_event(TxStart)` it still holds the previous one (Cubic measures the idle time from it).
    pub lsndtime: Time,
    /// Earliest departure time of the next paced transmission (`tp->tcp_wstamp_ns`).
    pub wstamp: Time,
}

impl TcpSock {
    /// A fresh connection as Linux sets it up: IW 10, infinite ssthresh.
    pub fn new(mss: u32, initial_cwnd: u32) -> TcpSock {
        TcpSock {
            now: Time::ZERO,
            jiffies: Jiffies::HZ1000,
            mss,
            snd_cwnd: initial_cwnd,
            snd_ssthresh: TCP_INFINITE_SSTHRESH,
            snd_cwnd_cnt: 0,
            snd_cwnd_clamp: u32::MAX >> 1,
            prior_cwnd: 0,
            snd_una: 0,
            snd_nxt: 0,
            high_seq: 0,
            packets_out: 0,
            sacked_out: 0,
            lost_out: 0,
            retrans_out: 0,
            delivered: 0,
            delivered_ce: 0,
            lost: 0,
            delivered_mstamp: Time::ZERO,
            // tcp_init_sock: "There's a bubble in the pipe until at least the first ACK."
            app_limited: u32::MAX,
            srtt_us: 0,
            min_rtt_us: u32::MAX,
            is_cwnd_limited: true,
            ca_state: CaState::Open,
            pacing_rate: 0,
            max_pacing_rate: u64::MAX,
            internal_pacing: false,
            ecn_ok: false,
            unsent_segments: u32::MAX,
            lsndtime: Time::ZERO,
            wstamp: Time::ZERO,
        }
    }

    /// `tcp_jiffies32`: now on the host's jiffies clock.
    #[inline]
    pub fn jiffies32(&self) -> u32 {
        self.jiffies.at(self.now)
    }

    /// `tcp_packets_in_flight`: packets_out − (sacked_out + lost_out) + retrans_out.
    #[inline]
    pub fn in_flight(&self) -> u32 {
        (self.packets_out + self.retrans_out).saturating_sub(self.sacked_out + self.lost_out)
    }

    /// `tcp_in_slow_start`: cwnd < ssthresh (strict, as Linux).
    #[inline]
    pub fn in_slow_start(&self) -> bool {
        self.snd_cwnd < self.snd_ssthresh
    }

    /// `tcp_in_cwnd_reduction`: in CWR or Recovery.
    #[inline]
    pub fn in_cwnd_reduction(&self) -> bool {
        matches!(self.ca_state, CaState::Cwr | CaState::Recovery)
    }

    /// `tcp_current_ssthresh`: outside a reduction, max(ssthresh, ¾·cwnd).
    pub fn current_ssthresh(&self) -> u32 {
        if self.in_cwnd_reduction() {
            self.snd_ssthresh
        } else {
            self.snd_ssthresh.max((self.snd_cwnd >> 1) + (self.snd_cwnd >> 2))
        }
    }
}
