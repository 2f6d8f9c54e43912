//! Congestion controls, each a port of a Linux `tcp_congestion_ops` module, hook by hook.
//!
//! The stack (the simulator's TCP sender) calls the hooks at the same points of its ACK processing as
//! `tcp_input.c` does: `pkts_acked` while cleaning the retransmit queue, `set_state` on every change of the
//! congestion-avoidance state, `ssthresh` when a reduction begins, `in_ack_event` once per ACK, and then either
//! `cong_control` (algorithms that own cwnd and pacing, e.g. BBR) or, outside a reduction, `cong_avoid`.

pub mod config;
pub mod cubic;
pub mod minmax;
pub mod reno;
pub mod sock;
pub mod stack;
pub mod testing;

pub use config::{AlgorithmInfo, CcConfig, ConfigError, algorithms};
pub use sock::{AckEventFlags, AckSample, CaEvent, CaState, RateSample, TcpSock};

/// What an algorithm asks of the stack (`TCP_CONG_*` flags and `sk_pacing_status`).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct CcFlags {
    /// The algorithm implements `cong_control` and sets cwnd and pacing rate itself (BBR, Prague).
    pub cong_control: bool,
    /// The algorithm requires ECN (`TCP_CONG_NEEDS_ECN`: DCTCP, Prague).
    pub needs_ecn: bool,
    /// The algorithm asks for internal pacing (`SK_PACING_NEEDED`: BBR, Prague).
    pub needs_pacing: bool,
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
