//! The scenario document as a user writes it (a TOML file, or the same structure as a dict): its keys, the
//! type and unit of each value, and every default, in one place.
//!
//! Each table is a serde struct with `deny_unknown_fields`; the [`crate::reader`] walks the document and
//! names the field of any error. A value with a unit is read by [`crate::units`] (`"50ms"`, `"10Mbps"`,
//! `"1bdp"`); a table of algorithm or queue-discipline parameters is kept as written, for the registries of
//! `ccfair-cc` and `ccfair-aqm` to read. The document becomes the [`ScenarioInput`] (base units, nothing
//! decided that the resolver decides), which [`write`] turns back into a document: `read(write(x)) == x`.
//!
//! A new key is a field of its table here (with its default, if it has one), its base-unit field in
//! [`crate::spec`], its rule in the resolver, and its line in [`write`].

use ccfair_core::FieldError;
use serde::de::{self, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer};

use crate::host::HostInput;
use crate::read_leaf;
use crate::reader::{Raw, read};
use crate::spec::{AqmInput, FlowInput, LinkInput, MeasureInput, ScenarioInput};
use crate::traffic::{ArrivalsInput, SizeInput};
use crate::units::{self, Buffer};
use crate::value::{Value, shown_int};

/// Every default of the document (what a key left out means).
pub mod defaults {
    /// `interval`: the time series' interval.
    pub const INTERVAL_NS: u64 = 100_000_000;
    /// `link.mtu`, bytes.
    pub const MTU_BYTES: u32 = 1500;
    /// `link.aqm`.
    pub const AQM: &str = "fifo";
    /// `flows[].count`.
    pub const COUNT: u32 = 1;
    /// `flows[].start`.
    pub const START_NS: u64 = 0;
    /// `flows[].initial_window`, segments (Linux's `TCP_INIT_CWND`).
    pub const INITIAL_WINDOW: u32 = 10;
    /// `flows[].pacing`.
    pub const PACING: bool = false;
    /// `flows[].loss`.
    pub const LOSS: f64 = 0.0;
    /// `flows[].ecn`.
    pub const ECN: &str = "off";
    /// `flows[].connect`: a connection opens at its flow's start, as a testbed's client started then does.
    pub const CONNECT: &str = "at_start";
    /// A run's seed when neither the scenario nor the caller gives one.
    pub const SEED: u64 = 1;
}

// ------------------------------------------------------------------------------------------------- leaves

/// An integer as written (its range is the resolver's); beyond 128 bits it is too large here.
#[derive(Clone, Copy, Debug)]
pub struct Int(pub i128);
read_leaf!(Int, |v| match v {
    Value::Int(i) => Ok(Int(i)),
    Value::BigInt(t) => Err(format!("is too large ({})", shown_int(&t))),
    other => Err(format!(
        "expected an integer, got {} {}",
        other.kind(),
        other.repr()
    )),
});

#[derive(Clone, Copy, Debug)]
pub struct Flag(pub bool);
read_leaf!(Flag, |v| match v {
    Value::Bool(b) => Ok(Flag(b)),
    other => Err(format!(
        "expected true or false, got {} {}",
        other.kind(),
        other.repr()
    )),
});

#[derive(Clone, Debug)]
pub struct Text(pub String);
read_leaf!(Text, |v| match v {
    Value::Str(s) => Ok(Text(s)),
    other => Err(format!(
        "expected a string, got {} {}",
        other.kind(),
        other.repr()
    )),
});

/// A probability, as a float.
#[derive(Clone, Copy, Debug)]
pub struct Probability(pub f64);
read_leaf!(Probability, |v| match v {
    Value::Int(i) => Ok(Probability(i as f64)),
    Value::Float(x) => Ok(Probability(x)),
    other => Err(format!(
        "expected a number in [0, 1), got {} {}",
        other.kind(),
        other.repr()
    )),
});

/// A float (a distribution's shape).
#[derive(Clone, Copy, Debug)]
pub struct Number(pub f64);
read_leaf!(Number, |v| match v {
    Value::Int(i) => Ok(Number(i as f64)),
    Value::Float(x) => Ok(Number(x)),
    other => Err(format!(
        "expected a number, got {} {}",
        other.kind(),
        other.repr()
    )),
});

/// A duration that must be positive, in ns.
#[derive(Clone, Copy, Debug)]
pub struct Positive(pub u64);
read_leaf!(Positive, |v| units::parse_duration_ns(&v, false).map(Positive));

/// A duration that may be zero, in ns.
#[derive(Clone, Copy, Debug)]
pub struct Duration(pub u64);
read_leaf!(Duration, |v| units::parse_duration_ns(&v, true).map(Duration));

/// A positive rate, in bit/s.
#[derive(Clone, Copy, Debug)]
pub struct Rate(pub u64);
read_leaf!(Rate, |v| units::parse_rate_bps(&v, false).map(Rate));

/// A NIC's rate in bit/s: 0, bare or `"0bps"`, is the infinitely fast NIC.
#[derive(Clone, Copy, Debug)]
pub struct NicRate(pub u64);
read_leaf!(NicRate, |v| match v {
    Value::Int(0) => Ok(NicRate(0)),
    other => units::parse_rate_bps(&other, true).map(NicRate),
});

/// A size in bytes: an integer as written (`131072`, as a sysctl writes it) or a size (`"32MiB"`).
#[derive(Clone, Copy, Debug)]
pub struct Bytes(pub i128);
read_leaf!(Bytes, |v| match v {
    Value::Int(i) => Ok(Bytes(i)),
    Value::BigInt(t) => Err(format!("is too large ({})", shown_int(&t))),
    other => units::parse_size_bytes(&other).map(|b| Bytes(b as i128)),
});

#[derive(Clone, Copy, Debug)]
pub struct BufferValue(pub Buffer);
read_leaf!(BufferValue, |v| units::parse_buffer(&v).map(BufferValue));

/// A seed: an integer in [0, 2^64) (it goes to the run as it is).
#[derive(Clone, Copy, Debug)]
pub struct Seed(pub u64);
read_leaf!(Seed, |v| match v {
    Value::Int(i) if i < 0 => Err(format!("must be at least 0, got {i}")),
    Value::Int(i) if i > u64::MAX as i128 => Err(format!("must be at most {}, got {i}", u64::MAX)),
    Value::Int(i) => Ok(Seed(i as u64)),
    Value::BigInt(t) if t.starts_with('-') => Err(format!("must be at least 0, got {}", shown_int(&t))),
    Value::BigInt(t) => Err(format!("must be at most {}, got {}", u64::MAX, shown_int(&t))),
    other => Err(format!(
        "expected an integer, got {} {}",
        other.kind(),
        other.repr()
    )),
});

/// A table of parameters, kept as written for a registry to read.
#[derive(Clone, Debug, Default)]
pub struct Params(pub Vec<(String, Value)>);
read_leaf!(Params, |v| match v {
    Value::Table(entries) => Ok(Params(entries)),
    other => Err(format!("expected a table, got {} {}", other.kind(), other.repr())),
});

impl Params {
    /// The parameters as JSON, at `field`; values JSON cannot carry are named (`allowed` says what can).
    pub fn to_json(
        &self,
        field: &str,
        allowed: &str,
    ) -> Result<serde_json::Map<String, serde_json::Value>, FieldError> {
        let mut m = serde_json::Map::new();
        for (k, v) in &self.0 {
            let value = v.to_json(&FieldError::path(field, k), allowed).map_err(|e| {
                // A value JSON has no form for is the table's error, as a whole.
                if e.message.starts_with("values must be") {
                    FieldError::new(field, e.message)
                } else {
                    e
                }
            })?;
            m.insert(k.clone(), value);
        }
        Ok(m)
    }
}

/// The kind of a value a visitor was handed, for "expected X, got Y".
fn got<E: de::Error>(what: &str, kind: &str, shown: impl std::fmt::Display) -> E {
    E::custom(format!("expected {what}, got {kind} {shown}"))
}

/// Visitor messages for a value that is not what `what` expects.
macro_rules! refuse_others {
    ($what:expr) => {
        refuse_others!($what, no_str);
        fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
            Err(got($what, "string", crate::value::py_str_repr(v)))
        }
    };
    ($what:expr, no_str) => {
        fn visit_bool<E: de::Error>(self, v: bool) -> Result<Self::Value, E> {
            Err(got($what, "boolean", if v { "True" } else { "False" }))
        }
        fn visit_i128<E: de::Error>(self, v: i128) -> Result<Self::Value, E> {
            Err(got($what, "integer", v))
        }
        fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
            Err(got($what, "float", units::py_float_repr(v)))
        }
    };
}

// ------------------------------------------------------------------------------------------------- tables

fn default_interval() -> Positive {
    Positive(defaults::INTERVAL_NS)
}

/// The whole document.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Document {
    duration: Positive,
    #[serde(default = "default_interval")]
    interval: Positive,
    seed: Option<Seed>,
    measure: Option<MeasureTable>,
    link: LinkTable,
    flows: Flows,
    host: Option<HostTable>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct MeasureTable {
    start: Option<Duration>,
    end: Option<Positive>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct LinkTable {
    rate: Rate,
    buffer: BufferValue,
    base_rtt: Option<Positive>,
    aqm: Option<Aqm>,
    mtu: Option<Int>,
}

/// `link.aqm`: a name, or a table of `name` and the discipline's parameters.
struct Aqm {
    name: String,
    params: Params,
}

impl<'de> Deserialize<'de> for Aqm {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Aqm, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Aqm;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a name or a table")
            }
            refuse_others!("a name or a table", no_str);
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Aqm, E> {
                Ok(Aqm {
                    name: v.into(),
                    params: Params::default(),
                })
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Aqm, A::Error> {
                let mut name = None;
                let mut params = Vec::new();
                while let Some(key) = map.next_key::<String>()? {
                    if key == "name" {
                        name = Some(map.next_value::<Text>()?.0);
                    } else {
                        params.push((key, map.next_value::<Raw>()?.0));
                    }
                }
                let name = name.ok_or_else(|| de::Error::missing_field("name"))?;
                Ok(Aqm {
                    name,
                    params: Params(params),
                })
            }
        }
        d.deserialize_any(V)
    }
}

/// `[[flows]]`: one table per group, at least one.
struct Flows(Vec<FlowTable>);

impl<'de> Deserialize<'de> for Flows {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Flows, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Flows;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an array of tables")
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<Flows, E> {
                Err(E::custom("expected an array of tables ([[flows]]), got boolean"))
            }
            fn visit_i128<E: de::Error>(self, _: i128) -> Result<Flows, E> {
                Err(E::custom("expected an array of tables ([[flows]]), got integer"))
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<Flows, E> {
                Err(E::custom("expected an array of tables ([[flows]]), got float"))
            }
            fn visit_str<E: de::Error>(self, _: &str) -> Result<Flows, E> {
                Err(E::custom("expected an array of tables ([[flows]]), got string"))
            }
            fn visit_map<A: MapAccess<'de>>(self, _: A) -> Result<Flows, A::Error> {
                Err(de::Error::custom(
                    "expected an array of tables ([[flows]]), got table",
                ))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Flows, A::Error> {
                let mut groups = Vec::new();
                while let Some(g) = seq.next_element::<FlowTable>()? {
                    groups.push(g);
                }
                if groups.is_empty() {
                    return Err(de::Error::custom("at least one flow group is needed"));
                }
                Ok(Flows(groups))
            }
        }
        d.deserialize_any(V)
    }
}

fn default_count() -> Int {
    Int(defaults::COUNT as i128)
}
fn default_start() -> Duration {
    Duration(defaults::START_NS)
}
fn default_loss() -> Probability {
    Probability(defaults::LOSS)
}
fn default_ecn() -> Text {
    Text(defaults::ECN.into())
}
fn default_connect() -> Text {
    Text(defaults::CONNECT.into())
}

/// One `[[flows]]` group. `cc`, `initial_window` and `pacing` left out come from the group's `profile`
/// (see [`crate::profile`]), else from [`defaults`]; without a profile `cc` is required.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FlowTable {
    cc: Option<Text>,
    profile: Option<Text>,
    #[serde(default = "default_count")]
    count: Int,
    rtt: Positive,
    #[serde(default = "default_start")]
    start: Duration,
    stop: Option<Positive>,
    initial_window: Option<Int>,
    pacing: Option<Flag>,
    #[serde(default = "default_loss")]
    loss: Probability,
    #[serde(default = "default_ecn")]
    ecn: Text,
    #[serde(default = "default_connect")]
    connect: Text,
    #[serde(default)]
    cc_params: Params,
    label: Option<Text>,
    host: Option<HostTable>,
    size: Option<Size>,
    arrivals: Option<ArrivalsTable>,
    /// Where the kernel backend places the base RTT (`split`, `data`, `ack`); the simulator splits it.
    delay: Option<Text>,
}

/// `flows[].size`: bytes (a size, or an integer), or a table naming a distribution.
struct Size(SizeInput);

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SizeTable {
    distribution: Text,
    mean: Bytes,
    shape: Option<Number>,
}

impl<'de> Deserialize<'de> for Size {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Size, D::Error> {
        let Raw(v) = Raw::deserialize(d)?;
        let table: Result<SizeInput, FieldError> = match &v {
            Value::Table(_) => read::<SizeTable>(&v).map(|t| SizeInput {
                distribution: Some(t.distribution.0),
                mean_bytes: t.mean.0,
                shape: t.shape.map(|s| s.0),
            }),
            other => read::<Bytes>(other).map(|b| SizeInput {
                distribution: None,
                mean_bytes: b.0,
                shape: None,
            }),
        };
        // The table's own fields are named under `size` (the reader adds the path).
        table.map(Size).map_err(|e| de::Error::custom(SubField(e)))
    }
}

/// An error of a part read on its own, whose field is relative to where the part sits.
struct SubField(FieldError);

impl std::fmt::Display for SubField {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.0.field == "scenario" {
            f.write_str(&self.0.message)
        } else {
            write!(f, "{}{}{}{}", SUB, self.0.field, SUB, self.0.message)
        }
    }
}

/// Marks a message that carries a sub-field (see [`SubField`]); the resolver's reader splits it off.
pub(crate) const SUB: char = '\u{1f}';

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ArrivalsTable {
    process: Text,
    mean_interval: Option<Duration>,
    window: Option<Duration>,
}

/// A `[host]` or `[flows.host]` table: every key optional, laid over the preset.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct HostTable {
    preset: Option<Text>,
    start_jitter: Option<Duration>,
    start_spacing: Option<Duration>,
    noise: Option<Text>,
    noise_scale: Option<Duration>,
    turnaround: Option<Duration>,
    pacing_slack: Option<Duration>,
    delack_granularity: Option<Duration>,
    hz: Option<Int>,
    tick_phase: Option<Text>,
    tso: Option<Flag>,
    nic_rate: Option<NicRate>,
    gro: Option<Flag>,
    gro_flush: Option<Duration>,
    rcv_window: Option<Flag>,
    rcv_autotune: Option<Flag>,
    rmem: Option<Rmem>,
    rcv_scaling_ratio: Option<Int>,
    rcv_initial_window: Option<Int>,
}

/// `host.rmem`: Linux's `tcp_rmem`, three sizes (their count, range and order are the resolver's rules).
struct Rmem(Vec<i128>);

impl<'de> Deserialize<'de> for Rmem {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Rmem, D::Error> {
        struct V;
        const WHAT: &str = "an array [min, default, max] of sizes";
        impl<'de> Visitor<'de> for V {
            type Value = Rmem;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(WHAT)
            }
            refuse_others!(WHAT);
            fn visit_map<A: MapAccess<'de>>(self, _: A) -> Result<Rmem, A::Error> {
                Err(de::Error::custom(format!("expected {WHAT}, got table")))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Rmem, A::Error> {
                let mut values = Vec::new();
                while let Some(b) = seq.next_element::<Bytes>()? {
                    values.push(b.0);
                }
                Ok(Rmem(values))
            }
        }
        d.deserialize_any(V)
    }
}

// --------------------------------------------------------------------------------------- to the input

impl HostTable {
    fn into_input(self) -> HostInput {
        let ns = |d: Option<Duration>| d.map(|d| d.0 as i128);
        HostInput {
            preset: self.preset.map(|t| t.0),
            start_jitter_ns: ns(self.start_jitter),
            start_spacing_ns: ns(self.start_spacing),
            noise: self.noise.map(|t| t.0),
            noise_scale_ns: ns(self.noise_scale),
            turnaround_ns: ns(self.turnaround),
            pacing_slack_ns: ns(self.pacing_slack),
            delack_granularity_ns: ns(self.delack_granularity),
            hz: self.hz.map(|i| i.0),
            tick_phase: self.tick_phase.map(|t| t.0),
            tso: self.tso.map(|f| f.0),
            nic_rate_bps: self.nic_rate.map(|r| r.0 as i128),
            gro: self.gro.map(|f| f.0),
            gro_flush_ns: ns(self.gro_flush),
            rcv_window: self.rcv_window.map(|f| f.0),
            rcv_autotune: self.rcv_autotune.map(|f| f.0),
            rmem_bytes: self.rmem.map(|r| r.0),
            rcv_scaling_ratio: self.rcv_scaling_ratio.map(|i| i.0),
            rcv_initial_window: self.rcv_initial_window.map(|i| i.0),
        }
    }
}

impl Document {
    /// The document read from `value`; errors name the field.
    pub fn read(value: &Value) -> Result<Document, FieldError> {
        value.check_depth("scenario")?;
        read::<Document>(value).map_err(split_sub_field)
    }

    /// The seed the document gives its runs, if it does.
    pub fn seed(&self) -> Option<u64> {
        self.seed.map(|s| s.0)
    }

    /// The scenario in base units; parameter tables must be what JSON carries.
    pub fn into_input(self) -> Result<ScenarioInput, FieldError> {
        let measure = self.measure.map_or(MeasureInput::default(), |m| MeasureInput {
            start_ns: m.start.map(|d| d.0 as i128),
            end_ns: m.end.map(|d| d.0 as i128),
        });
        let link = self.link;
        let aqm = match link.aqm {
            None => AqmInput {
                name: defaults::AQM.into(),
                params: Default::default(),
            },
            Some(a) => AqmInput {
                name: a.name,
                params: a
                    .params
                    .to_json("link.aqm", "finite numbers, booleans, strings or arrays")?,
            },
        };
        let flows = self
            .flows
            .0
            .into_iter()
            .enumerate()
            .map(|(i, g)| g.into_input(i))
            .collect::<Result<_, _>>()?;
        Ok(ScenarioInput {
            duration_ns: self.duration.0 as i128,
            link: LinkInput {
                rate_bps: link.rate.0 as i128,
                buffer: link.buffer.0,
                base_rtt_ns: link.base_rtt.map(|d| d.0 as i128),
                aqm,
                mtu_bytes: link.mtu.map_or(defaults::MTU_BYTES as i128, |i| i.0),
            },
            flows,
            interval_ns: self.interval.0 as i128,
            measure,
            host: self.host.map(HostTable::into_input),
        })
    }
}

impl FlowTable {
    fn into_input(self, i: usize) -> Result<FlowInput, FieldError> {
        let cc_params = self
            .cc_params
            .to_json(&format!("flows[{i}].cc_params"), "numbers, booleans or strings")?;
        // The profile lies under the group's own keys: a key the group writes wins.
        let profile = match &self.profile {
            Some(name) => Some(crate::profile::profile(&name.0, &format!("flows[{i}].profile"))?),
            None => None,
        };
        let cc = match (self.cc, profile) {
            (Some(cc), _) => cc.0,
            (None, Some(p)) => p.cc.value.into(),
            (None, None) => {
                return Err(FieldError::new(
                    format!("flows[{i}].cc"),
                    "is required (or a profile that sets it, see ccfair list)",
                ));
            }
        };
        let initial_window = match (self.initial_window, profile) {
            (Some(iw), _) => iw.0,
            (None, Some(p)) => p.initial_window.value as i128,
            (None, None) => defaults::INITIAL_WINDOW as i128,
        };
        let pacing = match (self.pacing, profile) {
            (Some(on), _) => on.0,
            (None, Some(p)) => p.pacing.value,
            (None, None) => defaults::PACING,
        };
        Ok(FlowInput {
            cc,
            profile: self.profile.map(|t| t.0),
            rtt_ns: self.rtt.0 as i128,
            count: self.count.0,
            start_ns: self.start.0 as i128,
            stop_ns: self.stop.map(|d| d.0 as i128),
            initial_window,
            pacing,
            loss: self.loss.0,
            ecn: self.ecn.0,
            connect: self.connect.0,
            cc_params,
            label: self.label.map(|t| t.0),
            host: self.host.map(HostTable::into_input),
            size: self.size.map(|s| s.0),
            arrivals: self.arrivals.map(|a| ArrivalsInput {
                process: a.process.0,
                mean_interval_ns: a.mean_interval.map(|d| d.0 as i128),
                window_ns: a.window.map(|d| d.0 as i128),
            }),
            delay: self.delay.map(|t| t.0),
        })
    }
}

/// An error whose message carries a sub-field (a part read on its own, see [`SubField`]) named in full.
fn split_sub_field(e: FieldError) -> FieldError {
    match e.message.strip_prefix(SUB).and_then(|rest| rest.split_once(SUB)) {
        Some((sub, message)) => FieldError::new(crate::reader::join(&e.field, sub), message),
        None => e,
    }
}
