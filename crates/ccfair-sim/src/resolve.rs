//! The user's scenario in base units, and its resolution into the [`ScenarioSpec`] the simulator runs.
//!
//! The front end owns syntax and units: it reads TOML, turns `"50ms"` into `50_000_000` and a `"1bdp"` buffer
//! into a packet limit, and hands over a [`ScenarioInput`]. Everything the values mean is decided here and in
//! [`ScenarioSpec::validate`]: ranges, defaults (the measurement window), algorithm and queue-discipline names
//! and parameters, and the rules between fields. Integers arrive as written (wider than the spec's types), so
//! a negative count or a window beyond 32 bits is reported with the field and the range, not as a decoding
//! error.

use ccfair_aqm::{AqmConfig, QueueLimit};
use ccfair_cc::CcConfig;
use ccfair_core::FieldError;
use serde::Deserialize;

use crate::scenario::{GroupSpec, LinkSpec, ScenarioSpec};
use crate::tcp::EcnMode;

use FieldError as E;

/// The measurement window starts at this fraction of the duration unless the scenario says otherwise (the
/// first fifth is the flows' start-up).
pub const DEFAULT_MEASURE_START_DIVISOR: u64 = 5;

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioInput {
    pub duration_ns: i128,
    pub interval_ns: i128,
    /// `None`: a fifth of the duration.
    pub measure_start_ns: Option<i128>,
    /// `None`: the duration.
    pub measure_end_ns: Option<i128>,
    pub link: LinkInput,
    pub flows: Vec<FlowInput>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkInput {
    pub rate_bps: i128,
    pub mtu_bytes: i128,
    /// The queue limit the front end computed from `link.buffer`.
    pub buffer: BufferInput,
    pub aqm: String,
    /// The discipline's parameters, a table (quantities already in the unit their name carries).
    pub aqm_params: serde_json::Value,
}

#[derive(Clone, Copy, Debug, Deserialize)]
#[serde(rename_all = "lowercase", deny_unknown_fields)]
pub enum BufferInput {
    Packets(i128),
    Bytes(i128),
}

/// One `[[flows]]` group. A new per-flow setting is a field here, its field in [`GroupSpec`], and its rule.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FlowInput {
    pub cc: String,
    pub cc_params: serde_json::Value,
    pub count: i128,
    pub rtt_ns: i128,
    pub start_ns: i128,
    pub stop_ns: Option<i128>,
    pub initial_window: i128,
    pub pacing: bool,
    pub loss: f64,
    pub ecn: String,
}

/// `value` in `[low, high]`, as the integer type the spec holds.
fn in_range<T: TryFrom<i128>>(field: &str, value: i128, low: i128, high: i128) -> Result<T, FieldError> {
    if value < low {
        return E::err(field, format!("must be at least {low}, got {}", shown(value)));
    }
    if value > high {
        return E::err(field, format!("must be at most {high}, got {}", shown(value)));
    }
    T::try_from(value).map_err(|_| E::new(field, "is out of range"))
}

/// A positive quantity in base units (ns, bit/s) that fits in 64 bits.
fn positive(field: &str, value: i128) -> Result<u64, FieldError> {
    if value <= 0 {
        return E::err(field, "must be positive");
    }
    u64::try_from(value).map_err(|_| E::new(field, "is too large"))
}

/// An integer for a message; one too long to read is described by its length.
fn shown(value: i128) -> String {
    let text = value.to_string();
    if text.len() <= 24 {
        text
    } else {
        format!("a {}-digit number", text.trim_start_matches('-').len())
    }
}

const U32: i128 = u32::MAX as i128;
const U64: i128 = u64::MAX as i128;

impl ScenarioInput {
    /// The spec, with every default filled and every rule checked; the error names the field as the user
    /// wrote it (`flows[1].cc_params.beta`, `link.aqm.target_ns`).
    pub fn resolve(&self) -> Result<ScenarioSpec, FieldError> {
        let duration_ns = positive("duration", self.duration_ns)?;
        let interval_ns = positive("interval", self.interval_ns)?;
        let measure_start_ns = match self.measure_start_ns {
            Some(v) => in_range("measure.start", v, 0, U64)?,
            None => duration_ns / DEFAULT_MEASURE_START_DIVISOR,
        };
        let measure_end_ns = match self.measure_end_ns {
            Some(v) => positive("measure.end", v)?,
            None => duration_ns,
        };
        let link = &self.link;
        let rate_bps = positive("link.rate", link.rate_bps)?;
        let mtu_bytes: u32 = in_range("link.mtu", link.mtu_bytes, 1, U32)?;
        let limit = match link.buffer {
            BufferInput::Packets(n) => QueueLimit::Packets(in_range("link.buffer", n, 0, U32)?),
            BufferInput::Bytes(n) => QueueLimit::Bytes(in_range("link.buffer", n, 0, U64)?),
        };
        let groups = self
            .flows
            .iter()
            .enumerate()
            .map(|(i, f)| f.resolve(&format!("flows[{i}]")))
            .collect::<Result<Vec<_>, _>>()?;
        // The rules between fields are checked on the spec with the buffer alone (the discipline's own checks
        // assume a valid MTU), then the discipline is built from its name and parameters.
        let mut spec = ScenarioSpec {
            duration_ns,
            interval_ns,
            measure_start_ns,
            measure_end_ns,
            link: LinkSpec {
                rate_bps,
                mtu_bytes,
                aqm: AqmConfig::fifo(limit),
            },
            groups,
        };
        spec.validate().map_err(|e| match e.field.as_str() {
            "measure.start" if self.measure_start_ns.is_none() => {
                E::new(e.field, format!("{} (default: 20 % of the duration)", e.message))
            }
            _ => e,
        })?;
        spec.link.aqm = AqmConfig::from_name_and_params(&link.aqm, &link.aqm_params, limit, mtu_bytes)
            .and_then(|cfg| cfg.validate_groups(spec.groups.len()).map(|_| cfg))
            .map_err(|e| e.prefixed("link"))?;
        Ok(spec)
    }
}

impl FlowInput {
    fn resolve(&self, group: &str) -> Result<GroupSpec, FieldError> {
        let f = |name: &str| format!("{group}.{name}");
        let cc = CcConfig::from_name_and_params(&self.cc, &self.cc_params).map_err(|e| e.prefixed(group))?;
        let ecn = match self.ecn.as_str() {
            "off" => EcnMode::Off,
            "classic" => EcnMode::Classic,
            "l4s" => EcnMode::L4s,
            other => {
                return E::err(
                    f("ecn"),
                    format!("expected one of 'off', 'classic', 'l4s', got '{other}'"),
                );
            }
        };
        Ok(GroupSpec {
            cc,
            count: in_range(&f("count"), self.count, 1, U32)?,
            rtt_ns: positive(&f("rtt"), self.rtt_ns)?,
            start_ns: in_range(&f("start"), self.start_ns, 0, U64)?,
            stop_ns: self
                .stop_ns
                .map(|v| in_range(&f("stop"), v, 0, U64))
                .transpose()?,
            initial_window: in_range(&f("initial_window"), self.initial_window, 1, U32)?,
            pacing: self.pacing,
            loss: self.loss,
            ecn,
        })
    }
}
