//! A flow group's ECN setting and what it makes of a connection: the codepoint its data carries and how the
//! receiver reports CE marks (RFC 3168, DCTCP's echo, Accurate ECN), from the setting and the algorithm's
//! flags alone, so that the resolver checks it and the simulator's sender and receiver use it.

use ccfair_core::Ecn;

/// A flow group's ECN setting, as the scenario names it.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EcnMode {
    /// Not ECN-capable (unless the algorithm requires ECN: DCTCP uses classic, Prague L4S).
    #[default]
    Off,
    /// RFC 3168: ECT(0), and the receiver echoes ECE until it sees CWR.
    Classic,
    /// RFC 9331: ECT(1), with per-packet feedback (Accurate ECN; DCTCP's own receiver echo for DCTCP).
    L4s,
}

/// How the receiver reports CE marks.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub enum EcnEcho {
    /// No ECN on this connection.
    #[default]
    None,
    /// RFC 3168: ECE on every ACK from the first CE until a segment with CWR arrives.
    Rfc3168,
    /// DCTCP's receiver: ECE mirrors the CE state of the packets an ACK covers, with an immediate ACK on every
    /// change of that state (`dctcp_ece_ack_update`).
    Dctcp,
    /// Accurate ECN (RFC 9768): the ACK carries the count of CE-marked packets received.
    AccEcn,
}

/// The ECN behaviour of one connection: the codepoint of its data and the receiver's feedback.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct EcnProfile {
    pub codepoint: Ecn,
    pub echo: EcnEcho,
    /// Retransmissions stay ECN-capable (Linux clears ECT on retransmissions unless the algorithm needs ECN).
    pub ect_on_retransmit: bool,
}

impl EcnProfile {
    /// The profile of a flow with ECN setting `mode` running an algorithm with `flags`.
    pub fn resolve(mode: EcnMode, flags: &ccfair_cc::CcFlags) -> Result<EcnProfile, &'static str> {
        if flags.wants_ect1 && mode == EcnMode::Classic {
            return Err(
                "this congestion control sends L4S traffic (ECT(1)): use ecn = \"l4s\" or leave ecn off",
            );
        }
        let on = mode != EcnMode::Off || flags.needs_ecn;
        if !on {
            return Ok(EcnProfile::default());
        }
        let l4s = mode == EcnMode::L4s || flags.wants_ect1;
        let echo = if flags.needs_accecn || (l4s && !flags.dctcp_echo) {
            EcnEcho::AccEcn
        } else if flags.dctcp_echo {
            EcnEcho::Dctcp
        } else {
            EcnEcho::Rfc3168
        };
        Ok(EcnProfile {
            codepoint: if l4s { Ecn::Ect1 } else { Ecn::Ect0 },
            echo,
            ect_on_retransmit: flags.needs_ecn,
        })
    }

    pub fn enabled(&self) -> bool {
        self.echo != EcnEcho::None
    }

    /// The sender sets CWR after a reduction (RFC 3168 and DCTCP feedback; Accurate ECN has no CWR).
    pub fn uses_cwr(&self) -> bool {
        matches!(self.echo, EcnEcho::Rfc3168 | EcnEcho::Dctcp)
    }
}
