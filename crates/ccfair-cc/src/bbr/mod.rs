//! The BBR family: BBRv1 as Linux mainline ships it (`net/ipv4/tcp_bbr.c`), BBRv2 as Google's "v2alpha"
//! release (`net/ipv4/tcp_bbr2.c` on google/bbr) and BBRv3 as the google/bbr v3 branch (`net/ipv4/tcp_bbr.c`,
//! `BBR_VERSION` 3), each ported hook by hook with the kernel's fixed-point arithmetic.
//!
//! **In a nutshell.** BBR models the path by two numbers measured from ACKs: the bottleneck bandwidth (a
//! windowed maximum of delivery-rate samples from `tcp_rate.c`) and the round-trip propagation time (a
//! windowed minimum of RTT samples). It paces at gain × bandwidth and caps the data in flight at
//! gain × bandwidth × min RTT (the BDP). A state machine chooses the gains: STARTUP (≈ 2/ln 2, doubling the
//! rate each round until the bandwidth stops growing), DRAIN (the inverse, to empty the queue STARTUP built),
//! PROBE_BW (steady state, periodically pacing above and below the estimate) and PROBE_RTT (a brief cut of
//! the window so the queue drains and the minimum RTT can be re-measured). v1 ignores loss except in two
//! places (packet conservation in recovery, a long-term "policer" estimate). v2 and v3 bound the model with
//! loss and ECN: `inflight_hi` (a long-term ceiling set when a bandwidth probe saw more than 2 % loss) and
//! `bw_lo`/`inflight_lo` (short-term floors cut by 30 % per round with loss outside a probe), and they probe
//! for bandwidth on a randomized wall-clock schedule (2–3 s) or after as many rounds as a Reno flow of the
//! same BDP would wait between losses.
//!
//! **Units** (as the kernel): bandwidth in packets per µs scaled by 2^24 (`BW_UNIT`, ≈ 715 bit/s per unit
//! at 1500 B), gains scaled by 256 (`BBR_UNIT`), cwnd in packets, `min_rtt` in µs, the minimum-RTT and
//! PROBE_RTT clocks in jiffies (HZ = 1000, so ms), the gain-cycle clock in µs (`tcp_mstamp`).
//!
//! **Files**: [`shared`] (units, BDP and quantization, pacing-rate conversion, the in-network estimate at
//! the earliest departure time, the ACK-aggregation estimator: the code the three versions have in common),
//! [`v1`] and [`lt_bw`] (BBRv1 and its policer detector), [`family`] (the BBRv2/v3 state and per-ACK
//! order, the STARTUP/DRAIN/PROBE_RTT logic), [`bounds`] (their loss/ECN signals and `inflight_hi`, `bw_lo`,
//! `inflight_lo`), [`probe_bw`] (their PROBE_BW DOWN/CRUISE/REFILL/UP cycle), [`v2`] and [`v3`] (the
//! constants and parameters that tell the two versions apart).
//!
//! **Time series.** `CcVars.mode` is the kernel's `bbr_mode` (0 STARTUP, 1 DRAIN, 2 PROBE_BW, 3 PROBE_RTT)
//! for every version; `aux` is the PROBE_BW phase: for v1 the index into the 8-phase gain cycle (0 is the
//! 1.25 phase, 1 the 0.75 phase), for v2/v3 the kernel's `bbr_pacing_gain_phase` (0 UP, 1 DOWN, 2 CRUISE,
//! 3 REFILL). `bw_bps` is the estimate BBR paces from (`bbr_bw`), `inflight_hi`/`inflight_lo` are NaN while
//! unset (the kernel's `~0U`).
//!
//! **What the stack gives BBR** (the simulator's sender, and [`crate::testing::Driver`]): `cong_control`
//! with the `tcp_rate.c` rate sample, internal pacing with the earliest-departure-time model (`tp.wstamp`),
//! BBR's own TSO burst size (`min_tso_segs` for v1, `tso_segs` for v2/v3), `cwnd_event(TxStart)` when nothing
//! is in flight, `set_state` before every state change. From the google/bbr branch, which v2 and v3 were
//! written against: the send-time `tx_in_flight` and `lost` snapshots with `rs.lost` counted after the ACK's
//! own loss detection (`tcp_rate_gen`), application-limited marking on every ACK
//! (`tcp_rate_check_app_limited` in `tcp_ack`), `skb_marked_lost` for each packet marked lost, and
//! `cwnd_event(TlpRecovery)` when a tail-loss-probe retransmission repaired a loss. Of these v1 only reads the
//! app-limited bit (which mainline sets when the application writes; the simulator's bulk sources write all the
//! time until they stop, so the per-ACK marking only differs after a flow's application stopped).
//!
//! **Module names**: the kernel calls both mainline BBRv1 and google's BBRv3 "bbr"; here they are `bbr` (alias
//! `bbr1`) and `bbr3`, next to v2alpha's own `bbr2`.

pub mod bounds;
pub mod family;
pub mod lt_bw;
pub mod probe_bw;
pub mod shared;
pub mod v1;
pub mod v2;
pub mod v3;

pub use family::BbrFamily;
pub use v1::{Bbr1, Bbr1Params};
pub use v2::Bbr2Params;
pub use v3::Bbr3Params;

/// `enum bbr_mode`.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Mode {
    /// Ramp up the sending rate rapidly to fill the pipe.
    #[default]
    Startup = 0,
    /// Drain the queue STARTUP created.
    Drain = 1,
    /// Steady state: pace around the estimated bandwidth, probing it now and then.
    ProbeBw = 2,
    /// Cut the window to re-measure the minimum RTT.
    ProbeRtt = 3,
}

impl Mode {
    pub fn name(self) -> &'static str {
        match self {
            Mode::Startup => "STARTUP",
            Mode::Drain => "DRAIN",
            Mode::ProbeBw => "PROBE_BW",
            Mode::ProbeRtt => "PROBE_RTT",
        }
    }
}
