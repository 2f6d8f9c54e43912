//! Congestion controls, each a port of a Linux `tcp_congestion_ops` module, hook by hook.
//!
//! The stack (the simulator's TCP sender, or the scripted [`testing::Driver`]) calls the hooks at the same
//! points of its ACK processing as `tcp_input.c` does: `pkts_acked` while cleaning the retransmit queue,
//! `set_state` on every change of the congestion-avoidance state, `ssthresh` when a reduction begins,
//! `in_ack_event` once per ACK, and then either `cong_control` (algorithms that own cwnd and pacing, e.g. BBR)
//! or, outside a reduction, `cong_avoid`. The part of the stack that calls them on the socket alone is
//! [`stack::TcpCore`], which both stacks share; [`rate`] is their delivery-rate sampling.

pub mod bbr;
pub mod config;
pub mod cubic;
pub mod dctcp;
pub mod minmax;
pub mod prague;
pub mod rate;
pub mod reno;
pub mod sock;
pub mod stack;
#[cfg(any(test, feature = "testing"))]
pub mod testing;

pub use config::{AlgorithmInfo, CcConfig, algorithms};
pub use sock::{AckEventFlags, AckSample, CaEvent, CaState, RateSample, TcpSock};

/// What an algorithm asks of the stack (`TCP_CONG_*` flags and `sk_pacing_status`). The stack reads these
/// instead of probing the implementation, so the contract tests check that `cong_control` and `needs_pacing`
/// match what the algorithm's `cong_control` hook does. The registry states them per algorithm too
/// (`CcConfig::flags`, read by the scenario's checks without building an instance); the contract tests check
/// that the two agree.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct CcFlags {
    /// The algorithm implements `cong_control` and sets cwnd and pacing rate itself (BBR, Prague).
    pub cong_control: bool,
    /// The algorithm requires ECN (`TCP_CONG_NEEDS_ECN`: DCTCP, Prague).
    pub needs_ecn: bool,
    /// The algorithm asks for internal pacing (`SK_PACING_NEEDED`: BBR, Prague).
    pub needs_pacing: bool,
    /// Data goes out as ECT(1), the L4S identifier (`TCP_CONG_WANTS_ECT_1`: Prague).
    pub wants_ect1: bool,
    /// The algorithm needs Accurate ECN feedback (`TCP_CONG_NEEDS_ACCECN`: Prague).
    pub needs_accecn: bool,
    /// The receiver runs the algorithm's CE state machine, echoing each packet's CE state with an immediate
    /// ACK on every change (DCTCP's `dctcp_ece_ack_update`) instead of RFC 3168's "ECE until CWR".
    pub dctcp_echo: bool,
}

/// The transmit-time snapshot of a packet the stack has just marked lost (`TCP_SKB_CB(skb)->tx` on the
/// google/bbr branch), handed to [`CongestionControl::skb_marked_lost`].
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct LostSkb {
    /// Packets in flight right after this packet was (last) sent, itself included (`tx.in_flight`).
    pub tx_in_flight: u32,
    /// `tp->lost` when it was sent (`tx.lost`); `tp.lost` already counts this packet.
    pub tx_lost: u32,
    /// `tp->delivered_ce` when it was sent (`tx.delivered_ce`).
    pub tx_delivered_ce: u32,
    /// It was sent while the connection was application-limited (`tx.is_app_limited`).
    pub is_app_limited: bool,
    /// Segments in the packet (`tcp_skb_pcount`); the simulator marks segments one by one, so 1.
    pub pcount: u32,
}

/// Algorithm state exported to the time series, so a user can plot a state machine. `f64::NAN` = not used.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct CcVars {
    /// Algorithm-specific mode number (e.g. BBR's STARTUP=0, DRAIN=1, ...); -1 when the algorithm has none.
    pub mode: i32,
    pub pacing_gain: f64,
    pub cwnd_gain: f64,
    /// The algorithm's bandwidth estimate, bits per second.
    pub bw_bps: f64,
    /// The algorithm's own minimum-RTT estimate, ns.
    pub min_rtt_ns: f64,
    pub inflight_hi: f64,
    pub inflight_lo: f64,
    /// Cubic's W_max or DCTCP's alpha, as the algorithm documents.
    pub aux: f64,
}

impl Default for CcVars {
    fn default() -> Self {
        CcVars {
            mode: -1,
            pacing_gain: f64::NAN,
            cwnd_gain: f64::NAN,
            bw_bps: f64::NAN,
            min_rtt_ns: f64::NAN,
            inflight_hi: f64::NAN,
            inflight_lo: f64::NAN,
            aux: f64::NAN,
        }
    }
}

/// A congestion control, shaped after Linux's `struct tcp_congestion_ops`.
///
/// Hooks without a default in the kernel (`ssthresh`, and either `cong_avoid` or `cong_control`) have none
/// here either; the rest default to doing nothing, or to Reno's behaviour where the kernel falls back to it.
pub trait CongestionControl: Send {
    /// The module name, as `tcp_congestion_control` lists it.
    fn name(&self) -> &'static str;

    fn flags(&self) -> CcFlags {
        CcFlags::default()
    }

    /// `init`: called once when the connection is established.
    fn init(&mut self, _tp: &mut TcpSock) {}

    /// `ssthresh`: the slow-start threshold to use after a loss or ECN signal.
    fn ssthresh(&mut self, tp: &mut TcpSock) -> u32;

    /// `cong_avoid`: grow cwnd on an ACK that acknowledged `acked` packets (not called in CWR/Recovery or when
    /// the algorithm implements `cong_control`).
    fn cong_avoid(&mut self, _tp: &mut TcpSock, _acked: u32) {}

    /// `cong_control`: set cwnd and pacing rate from the rate sample (only if `flags().cong_control`).
    fn cong_control(&mut self, _tp: &mut TcpSock, _rs: &RateSample) {}

    /// `set_state`: `tp.ca_state` is about to become `new_state`.
    fn set_state(&mut self, _tp: &mut TcpSock, _new_state: CaState) {}

    /// `cwnd_event`.
    fn cwnd_event(&mut self, _tp: &mut TcpSock, _ev: CaEvent) {}

    /// `in_ack_event`: once per ACK, before the cwnd update.
    fn in_ack_event(&mut self, _tp: &mut TcpSock, _flags: AckEventFlags) {}

    /// `pkts_acked`: packets were newly acknowledged; carries the RTT sample.
    fn pkts_acked(&mut self, _tp: &mut TcpSock, _sample: &AckSample) {}

    /// `skb_marked_lost` (google/bbr branch, BBRv2/v3): the stack just marked a packet lost (newly, or a
    /// retransmission lost again), after counting it in `tp.lost`.
    fn skb_marked_lost(&mut self, _tp: &mut TcpSock, _skb: &LostSkb) {}

    /// `tso_segs` (L4S kernels): the algorithm sets the TSO burst size itself; `None` = the stack's
    /// `tcp_tso_autosize` with `min_tso_segs`.
    fn tso_segs(&self, _tp: &TcpSock) -> Option<u32> {
        None
    }

    /// `min_tso_segs`: the smallest TSO burst the stack may build; `None` = `sysctl_tcp_min_tso_segs` (2).
    fn min_tso_segs(&self, _tp: &TcpSock) -> Option<u32> {
        None
    }

    /// `undo_cwnd`: the cwnd to restore when a reduction is undone. Kernel default: Reno's.
    fn undo_cwnd(&mut self, tp: &mut TcpSock) -> u32 {
        reno::undo_cwnd(tp)
    }

    /// State for the time series.
    fn vars(&self) -> CcVars {
        CcVars::default()
    }
}
