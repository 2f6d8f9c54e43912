//! BBRv2 as Google's "v2alpha" release ships it (google/bbr `net/ipv4/tcp_bbr2.c`, module "bbr2", read
//! @0487ade5): the constants and parameters of [`super::family::BbrFamily`] for version 2.
//!
//! **How v2alpha differs from v3** (each from the two source files; everything else is shared):
//! - STARTUP pacing and cwnd gain both 739/256 ≈ 2.885 (`bbr_high_gain`, `bbr_startup_cwnd_gain`), as v1; DRAIN
//!   keeps that cwnd gain. (v3: 2.77 pacing, 2.0 cwnd.)
//! - PROBE_DOWN paces at 0.75 (the v1 array `bbr_pacing_gain[1]`), v3 at 0.91. PROBE_UP keeps cwnd gain 2.0.
//! - STARTUP's loss exit needs 8 loss events in a recovery round (`bbr_full_loss_cnt`), v3 6; inflight_hi is
//!   then the quantized BDP (v3: or the last round's delivered volume, if larger).
//! - The full-pipe test is v1's (max filter, once per round); PROBE_UP ends after one min_rtt once inflight
//!   reaches 1.25 × BDP (`bbr_bw_probe_pif_gain`) instead of on v3's bandwidth plateau.
//! - bw = min(max_bw, bw_lo, bw_hi): ECN while probing also cuts bw_hi, and ECN outside probes cuts bw_lo
//!   (`bbr_ecn_bw_lo`, `bbr_ecn_bw_hi`); CE counts as "too high" at ≥ 50 % (v3 > 50 %).
//! - ECN is off unless `ecn_enable` (`bbr_ecn_enable`, false: the alpha release assumed DCTCP-style marks only
//!   in labs); no ECN reprobe (`bbr_ecn_reprobe_gain` = 0); α is updated every round even when not eligible.
//! - The PROBE_RTT timer takes RTT samples equal to its minimum too (≤, v3 <); an RTO only clears full_bw and
//!   seeds inflight_lo with prior_cwnd (v3: max(cwnd, prior_cwnd), full reset of the plateau detector).
//! - PROBE_UP does not keep unused inflight_hi credit while not cwnd-limited; no TLP-recovery signal.
//! - TSO bursts use v1's minimum (1 segment below 1.2 Mbit/s).
//!
//! **Parameters**: `ecn_enable` (module parameter `ecn_enable`, default false). All other module parameters
//! keep their defaults (the module exposes them for experiments; the default is what "bbr2" means).
//!
//! **Deviations**: those of [`super::family`]; v2alpha's debug output (`bbr_debug`) is left out. The stack's
//! `tp->is_cwnd_limited` (read only by `bbr2_probe_inflight_hi_upward`) follows Linux 6.1's
//! `tcp_cwnd_validate`, which keeps the flag set for the rest of a window once cwnd limited a send; v2alpha's
//! 5.x kernel set it at each new peak of the flight, so a later, larger flight that cwnd did not limit
//! cleared it. Measured against Cubic (1 Gbps, 10 ms, 1 BDP): BBRv2's share 0.311 with 6.1's rule, 0.305
//! with 5.x's for one flow each, unchanged (0.312) for five each.

use serde::{Deserialize, Serialize};

use ccfair_core::{FieldError, ParamDoc, Rng};

use super::family::{BbrFamily, Version};
use super::shared::BBR_UNIT;

/// The v2alpha constants.
pub static V2: Version = Version {
    name: Bbr2Params::NAME,
    number: 2,
    startup_pacing_gain: BBR_UNIT * 2885 / 1000 + 1,
    startup_cwnd_gain: BBR_UNIT * 2885 / 1000 + 1,
    drain_gain: BBR_UNIT * 1000 / 2885,
    cwnd_gain: BBR_UNIT * 2,
    pacing_gain: [BBR_UNIT * 5 / 4, BBR_UNIT * 3 / 4, BBR_UNIT, BBR_UNIT],
    bw_probe_cwnd_gain: 0,
    full_loss_cnt: 8,
    ecn_reprobe_gain: 0,
};

/// Parameters of BBRv2.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Bbr2Params {
    /// Use the ECN logic (`bbr_ecn_enable`): only meaningful on ECN-negotiated flows with DCTCP-style marking.
    pub ecn_enable: bool,
}

pub const PARAMS: &[ParamDoc] = &[ParamDoc {
    name: "ecn_enable",
    allowed: "true | false",
    doc: "use ECN marks (alpha, inflight_lo cut, STARTUP exit) when min_rtt <= 5 ms (kernel default false)",
}];

impl Bbr2Params {
    pub fn validate(&self) -> Result<(), FieldError> {
        Ok(())
    }
}

/// A BBRv2 connection.
pub fn bbr2(params: &Bbr2Params, rng: Rng) -> BbrFamily {
    BbrFamily::new(&V2, params.ecn_enable, rng)
}
