//! What every queue discipline's parameters and constructor share, below the registry (`config.rs`) and the
//! disciplines alike, so that neither imports the other: the build context, the check of a duration
//! parameter, and how a parameter's name carries its unit (`target_ns` is written `target = "5ms"`, as tc
//! writes it; the name with its unit stays accepted).

use ccfair_core::rng::StreamId;
use ccfair_core::{FieldError, Rng};

/// The field an error about the queue's limit names: `buffer`, beside the discipline, which a caller nesting
/// the configuration prefixes as it does the discipline (the scenario's `link.buffer`, which sets the limit).
pub const BUFFER_FIELD: &str = "buffer";

pub(crate) fn check_positive_ns(field: &str, ns: u64) -> Result<(), FieldError> {
    if ns == 0 {
        return FieldError::err(field, "must be a positive duration");
    }
    Ok(())
}

/// What a qdisc learns of the link and the run when it is built.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct BuildContext {
    /// The link rate the qdisc feeds.
    pub rate_bps: u64,
    /// Bytes of a full packet on this link.
    pub mtu_bytes: u32,
    /// The run's master seed; each qdisc draws from `Rng::stream(seed, StreamId::Qdisc(0))`.
    pub seed: u64,
}

impl BuildContext {
    pub(crate) fn rng(&self) -> Rng {
        Rng::stream(self.seed, StreamId::Qdisc(0))
    }
}

/// The unit a parameter's name ends with.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum ParamUnit {
    /// `_ns`: a duration (`"5ms"`).
    Ns,
    /// `_bps`: a rate (`"10Mbps"`).
    Bps,
    /// `_bytes`: a size (`"30KB"`).
    Bytes,
}

impl ParamUnit {
    pub fn name(self) -> &'static str {
        match self {
            ParamUnit::Ns => "ns",
            ParamUnit::Bps => "bit/s",
            ParamUnit::Bytes => "bytes",
        }
    }
}

/// The name a scenario writes for parameter `name` when the name carries its unit (`target_ns` ->
/// (`target`, ns)), and the unit; None for a name without one (`ecn`, `flows`, `threshold_packets`).
pub fn unit_free_name(name: &str) -> Option<(&str, ParamUnit)> {
    [
        ("_ns", ParamUnit::Ns),
        ("_bps", ParamUnit::Bps),
        ("_bytes", ParamUnit::Bytes),
    ]
    .into_iter()
    .find_map(|(suffix, unit)| name.strip_suffix(suffix).map(|free| (free, unit)))
    .filter(|(free, _)| !free.is_empty())
}
