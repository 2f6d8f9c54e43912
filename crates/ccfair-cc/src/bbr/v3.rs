//! BBRv3 as the google/bbr v3 branch ships it (`net/ipv4/tcp_bbr.c`, `BBR_VERSION` 3, module "bbr", read
//! @001a430b): the constants and parameters of [`super::family::BbrFamily`] for version 3.
//!
//! **Constants that differ from v2alpha** (1/256 units; see [`super::v2`] for the behavioural differences):
//! - STARTUP pacing gain 256·277/100 + 1 = 710 (≈ 2.77 = 4 ln 2: the smallest gain that doubles the delivery
//!   rate each round once cwnd, not pacing, is the limit), STARTUP/DRAIN cwnd gain 512 (2.0).
//! - PROBE_DOWN pacing 256·91/100 = 232 (≈ 0.91): drains the probe's queue more gently than 0.75.
//! - PROBE_UP cwnd gain 2.0 + `bbr_bw_probe_cwnd_gain`·0.25 = 2.25, so cwnd does not cap the 1.25 probe.
//! - STARTUP exits on loss after 6 loss events in a recovery round (`bbr_full_loss_cnt`) with > 2 % loss.
//! - ECN reprobe gain 0.5 (`bbr_ecn_reprobe_gain`); TLP-repaired losses count (`bbr_loss_probe_recovery`).
//!
//! **v3 and the IETF draft** (draft-ietf-ccwg-bbr-06 §2, where they differ; this port follows v3): DRAIN
//! pacing gain 0.344 here vs 0.5 in the draft (draft-04 had 0.35); PROBE_DOWN 0.91 vs 0.90; the
//! ACK-aggregation window 5 rounds (two slots: 5–10 rounds) vs 10 rounds; STARTUP's loss exit 6 events (the
//! draft's StartupFullLossCnt, also 6; draft-cardwell-iccrg-02 had 3). Names: the draft's bw_shortterm,
//! inflight_shortterm and inflight_longterm are bw_lo, inflight_lo and inflight_hi.
//!
//! **Parameters**: `ecn_low` stands for the route attribute `TCP_ECN_LOW` (`RTAX_FEATURE_ECN_LOW`) that tells
//! v3 the path marks ECN at a shallow threshold; together with ECN negotiated on the flow (`ecn = true`) it
//! enables the ECN logic (default false: v3 then ignores ECN).
//!
//! **Deviations**: those of [`super::family`] (PLB, receiver-side ECN hooks, TLP ACK tagging).

use serde::{Deserialize, Serialize};

use ccfair_core::{FieldError, ParamDoc, Rng};

use super::family::{BbrFamily, Version};
use super::shared::BBR_UNIT;

/// The v3 constants.
pub static V3: Version = Version {
    name: Bbr3Params::NAME,
    number: 3,
    startup_pacing_gain: BBR_UNIT * 277 / 100 + 1,
    startup_cwnd_gain: BBR_UNIT * 2,
    drain_gain: BBR_UNIT * 1000 / 2885,
    cwnd_gain: BBR_UNIT * 2,
    pacing_gain: [BBR_UNIT * 5 / 4, BBR_UNIT * 91 / 100, BBR_UNIT, BBR_UNIT],
    bw_probe_cwnd_gain: 1,
    full_loss_cnt: 6,
    ecn_reprobe_gain: BBR_UNIT / 2,
};

/// Parameters of BBRv3.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Bbr3Params {
    /// The route is marked as low-threshold ECN (`TCP_ECN_LOW`); needs ECN negotiated (`ecn = true`).
    pub ecn_low: bool,
}

pub const PARAMS: &[ParamDoc] = &[ParamDoc {
    name: "ecn_low",
    allowed: "true | false",
    doc: "path marks ECN at a shallow threshold (route TCP_ECN_LOW); with ecn = true enables the ECN logic",
}];

impl Bbr3Params {
    pub fn validate(&self) -> Result<(), FieldError> {
        Ok(())
    }
}

/// A BBRv3 connection.
pub fn bbr3(params: &Bbr3Params, rng: Rng) -> BbrFamily {
    BbrFamily::new(&V3, params.ecn_low, rng)
}
