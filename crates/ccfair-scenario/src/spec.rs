//! The scenario in base units (the document read, see [`crate::document`]) and its resolution into the spec
//! a backend runs: the one place that decides what a scenario means.
//!
//! [`ScenarioInput::resolve`] checks ranges, fills the defaults that depend on other values (the
//! measurement window, the base RTT of a `bdp` buffer), works out the buffer's queue limit, reads queue-
//! discipline parameters written with units (`target = "5ms"`, or `target_ns`), resolves algorithm and
//! queue-discipline names and parameters, and builds the [`ScenarioSpec`]: every quantity an integer in base
//! units (ns, bit/s, bytes), every algorithm a validated configuration. [`UncheckedSpec::check_rules`] holds
//! the rules between fields (a flow starts before the end, its first window fits Linux's largest window,
//! its ECN setting suits its algorithm, ...). Every error names the field as the user wrote it
//! (`flows[1].cc_params.beta`, `link.aqm.target`). Integers arrive as written (wider than the spec's types),
//! so a negative count or a window beyond 32 bits is reported with the field and its range.
//!
//! A new per-flow setting is a field of the document's flow table ([`crate::document`]), of [`FlowInput`]
//! and of [`GroupSpec`], its conversion in [`FlowInput::resolve`] and, if it relates to other fields, its
//! rule in [`UncheckedSpec::check_rules`].

use ccfair_aqm::{AqmConfig, QueueLimit};
use ccfair_cc::CcConfig;
use ccfair_core::FieldError;
use serde::{Deserialize, Serialize};

use crate::ecn::{EcnMode, EcnProfile};
use crate::host::{HostInput, HostSpec};
use crate::traffic::{self, ArrivalSpec, ArrivalsInput, SizeInput, SizeSpec};
use crate::units::{self, Buffer};
use crate::value::Value;

use FieldError as E;

pub use crate::units::{format_duration_ns, format_size_bytes};

// ------------------------------------------------------------------------------------------------ the input

/// A congestion control written `kernel:NAME` is the running kernel's module NAME, one the simulator does not
/// model: the kernel backend runs it (and checks that this kernel offers it), the simulator refuses it here.
pub const KERNEL_CC_PREFIX: &str = "kernel:";

/// The measurement window starts at this fraction of the duration unless the scenario says otherwise (the
/// first fifth is the flows' start-up).
pub const DEFAULT_MEASURE_START_DIVISOR: u64 = 5;

/// A scenario in base units, values as written (the front end's typed `Scenario` holds the same fields).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioInput {
    pub duration_ns: i128,
    pub link: LinkInput,
    pub flows: Vec<FlowInput>,
    pub interval_ns: i128,
    #[serde(default)]
    pub measure: MeasureInput,
    /// The scenario's `[host]` table, if it has one (see [`crate::host`]).
    #[serde(default)]
    pub host: Option<HostInput>,
}

/// The measurement window as written; `None`: the default (a fifth of the duration, the duration).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MeasureInput {
    pub start_ns: Option<i128>,
    pub end_ns: Option<i128>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkInput {
    pub rate_bps: i128,
    /// `link.buffer` as written; the resolver works out its queue limit.
    pub buffer: Buffer,
    /// The RTT of a `bdp` buffer; `None`: the smallest group RTT.
    #[serde(default)]
    pub base_rtt_ns: Option<i128>,
    pub aqm: AqmInput,
    pub mtu_bytes: i128,
}

/// A queue discipline by name, with its parameters as written (quantities as strings with units, or as
/// integers in the unit their name carries).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AqmInput {
    pub name: String,
    #[serde(default)]
    pub params: serde_json::Map<String, serde_json::Value>,
}

/// One `[[flows]]` group, as written.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FlowInput {
    pub cc: String,
    /// The profile the group named ([`crate::profile`]): its values are laid under the group's own keys when
    /// the document is read, so `cc`, `initial_window` and `pacing` here are the group's as resolved; the
    /// name stays for the written document, listings and the kernel backend's messages.
    #[serde(default)]
    pub profile: Option<String>,
    pub rtt_ns: i128,
    pub count: i128,
    pub start_ns: i128,
    pub stop_ns: Option<i128>,
    pub initial_window: i128,
    pub pacing: bool,
    pub loss: f64,
    pub ecn: String,
    /// When each flow opens its connection: `"at_start"` or `"before_run"` (see [`ConnectMode`]).
    pub connect: String,
    #[serde(default)]
    pub cc_params: serde_json::Map<String, serde_json::Value>,
    /// Free text for tables.
    #[serde(default)]
    pub label: Option<String>,
    /// The group's `[flows.host]` table, laid over the scenario's.
    #[serde(default)]
    pub host: Option<HostInput>,
    /// Bytes each flow writes before it closes (see [`crate::traffic`]); `None`: it writes until `stop`.
    #[serde(default)]
    pub size: Option<SizeInput>,
    /// When the group's flows start after `start`; `None`: all at `start`.
    #[serde(default)]
    pub arrivals: Option<ArrivalsInput>,
    /// Where the base RTT sits (kernel backend only, see [`crate::kernel`]); `None`: split, as the simulator.
    #[serde(default)]
    pub delay: Option<String>,
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
    crate::value::shown_int(&value.to_string())
}

const U32: i128 = u32::MAX as i128;
const U64: i128 = u64::MAX as i128;

impl LinkInput {
    /// The RTT a `bdp` buffer refers to: `base_rtt`, else the smallest group RTT (whose range the groups'
    /// resolution checks); None where there is no such positive RTT.
    pub fn base_rtt_ns(&self, flows: &[FlowInput]) -> Result<Option<u64>, FieldError> {
        if let Some(rtt) = self.base_rtt_ns {
            return positive("link.base_rtt", rtt).map(Some);
        }
        let least = flows.iter().map(|g| g.rtt_ns).min();
        Ok(least.and_then(|r| u64::try_from(r).ok()).filter(|&r| r > 0))
    }

    /// The queue limit of `buffer`: a packet or byte limit as written; a `bdp` or time buffer as the packets
    /// of rate × time (× the multiple) / 8 bytes, round(bytes / mtu) with halves up, refused below one
    /// packet. Ranges of the limits themselves are checked by the rules.
    fn limit(&self, flows: &[FlowInput]) -> Result<QueueLimit, FieldError> {
        let (bits_ns, how, rtt) = match self.buffer {
            Buffer::Packets(n) => {
                return in_range("link.buffer", n as i128, 0, U32).map(QueueLimit::Packets);
            }
            Buffer::Bytes(n) => return Ok(QueueLimit::Bytes(n)),
            Buffer::Bdp(multiple) => {
                let rtt = self.base_rtt_ns(flows)?;
                (multiple, format!(" x {}", units::py_format_g(multiple)), rtt)
            }
            Buffer::Time(ns) => (0.0, String::new(), Some(ns)),
        };
        let (Some(rtt), Ok(rate), Ok(mtu)) =
            (rtt, u64::try_from(self.rate_bps), u64::try_from(self.mtu_bytes))
        else {
            return Ok(QueueLimit::Packets(0)); // no arithmetic on a bad input: its own rule names it
        };
        if rate == 0 || mtu == 0 {
            return Ok(QueueLimit::Packets(0));
        }
        let multiple = matches!(self.buffer, Buffer::Bdp(_)).then_some(bits_ns);
        let exact = units::buffer_bits_ns(rate, rtt, multiple);
        let (packets, bytes) = units::packets_of(&exact, mtu);
        let Some(packets) = packets else {
            return E::err(
                "link.buffer",
                format!(
                    "{} is {bytes:.0} bytes ({} x {}{how} / 8), less than one {mtu}-byte packet",
                    units::format_buffer(self.buffer),
                    units::format_rate_bps(rate),
                    units::format_duration_ns(rtt),
                ),
            );
        };
        match packets.integer_text() {
            Ok(n) if n <= U32 as u128 => Ok(QueueLimit::Packets(n as u32)),
            Ok(n) => E::err(
                "link.buffer",
                format!(
                    "must be at most {U32}, got {}",
                    crate::value::shown_int(&n.to_string())
                ),
            ),
            Err(text) => E::err(
                "link.buffer",
                format!("must be at most {U32}, got {}", crate::value::shown_int(&text)),
            ),
        }
    }
}

/// `link.aqm`'s parameters as the registry reads them: a parameter written by its unit-free name
/// (`target = "5ms"`, as tc writes it) becomes the registry's name with its unit (`target_ns`); a quantity
/// string under the name with its unit (`target_ns = "5ms"`) becomes the integer in that unit.
fn aqm_params(
    name: &str,
    written: &serde_json::Map<String, serde_json::Value>,
) -> Result<serde_json::Value, FieldError> {
    let registry = ccfair_aqm::qdiscs();
    let params: Vec<&str> = registry
        .iter()
        .find(|q| q.name == name)
        .map(|q| q.params.iter().map(|p| p.name).collect())
        .unwrap_or_default();
    let mut out = serde_json::Map::new();
    for (key, value) in written {
        let field = FieldError::path("link.aqm", key);
        let unit_name = params
            .iter()
            .find(|p| ccfair_aqm::unit_free_name(p).is_some_and(|(free, _)| free == key));
        let (target, unit, must_have_unit) = match unit_name {
            Some(p) => (p.to_string(), ccfair_aqm::unit_free_name(p).map(|(_, u)| u), true),
            None => (
                key.clone(),
                ccfair_aqm::unit_free_name(key).map(|(_, u)| u),
                false,
            ),
        };
        if out.contains_key(&target) || (must_have_unit && written.contains_key(&target)) {
            return E::err(field, format!("is written twice, as {key} and as {target}"));
        }
        let v = if let Some(unit) = unit
            && (must_have_unit || value.is_string())
        {
            let v = Value::from_json(value);
            let n = match unit {
                ccfair_aqm::ParamUnit::Ns => units::parse_duration_ns(&v, true),
                ccfair_aqm::ParamUnit::Bps => units::parse_rate_bps(&v, false),
                ccfair_aqm::ParamUnit::Bytes => units::parse_size_bytes(&v),
            }
            .map_err(|m| E::new(&field, m))?;
            serde_json::Value::from(n)
        } else {
            value.clone()
        };
        out.insert(target, v);
    }
    Ok(serde_json::Value::Object(out))
}

impl ScenarioInput {
    /// The spec, with every default filled and every rule checked; the error names the field as the user
    /// wrote it (`flows[1].cc_params.beta`, `link.aqm.target`).
    pub fn resolve(&self) -> Result<ScenarioSpec, FieldError> {
        let duration_ns = positive("duration", self.duration_ns)?;
        let interval_ns = positive("interval", self.interval_ns)?;
        let measure_start_ns = match self.measure.start_ns {
            Some(v) => in_range("measure.start", v, 0, U64)?,
            None => duration_ns / DEFAULT_MEASURE_START_DIVISOR,
        };
        let measure_end_ns = match self.measure.end_ns {
            Some(v) => positive("measure.end", v)?,
            None => duration_ns,
        };
        if self.flows.is_empty() {
            return E::err("flows", "at least one flow group is needed");
        }
        let link = &self.link;
        let limit = link.limit(&self.flows)?;
        let rate_bps = positive("link.rate", link.rate_bps)?;
        let mtu_bytes: u32 = in_range("link.mtu", link.mtu_bytes, 1, U32)?;
        let groups = self
            .flows
            .iter()
            .enumerate()
            .map(|(i, f)| f.resolve(&format!("flows[{i}]"), self.host.as_ref()))
            .collect::<Result<Vec<_>, _>>()?;
        // The rules between fields are checked on the spec with the buffer alone (the discipline's own checks
        // assume a valid MTU), then the discipline is built from its name and parameters.
        let mut spec = UncheckedSpec {
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
            offloads: None,
            receive_buffer: None,
        };
        spec.check_rules().map_err(|e| match e.field.as_str() {
            // A start the user did not write is named as the default it is.
            "measure.start" if self.measure.start_ns.is_none() => E::new(
                e.field,
                format!(
                    "{} (default: 20 % of the duration) must be before measure.end ({})",
                    format_duration_ns(measure_start_ns),
                    format_duration_ns(measure_end_ns)
                ),
            ),
            _ => e,
        })?;
        let params = aqm_params(&link.aqm.name, &link.aqm.params)?;
        spec.link.aqm = AqmConfig::from_name_and_params(&link.aqm.name, &params, limit, mtu_bytes)
            .and_then(|cfg| cfg.validate_groups(spec.groups.len()).map(|_| cfg))
            .map_err(|e| e.prefixed("link"))?;
        Ok(ScenarioSpec(spec))
    }
}

impl FlowInput {
    /// The group's spec, its host laid over the scenario's `host`; errors are prefixed with `group`
    /// (`flows[1]`).
    pub fn resolve(&self, group: &str, host: Option<&HostInput>) -> Result<GroupSpec, FieldError> {
        let f = |name: &str| format!("{group}.{name}");
        if let Some(module) = self.cc.strip_prefix(KERNEL_CC_PREFIX) {
            return E::err(
                f("cc"),
                format!(
                    "'{}' names the kernel's module '{module}', which only the kernel backend runs \
                     (ccfair run --backend kernel); the simulator's algorithms: {}",
                    self.cc,
                    ccfair_cc::algorithms()
                        .iter()
                        .map(|a| a.name)
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            );
        }
        if let Some(delay) = &self.delay
            && delay != crate::kernel::SPLIT
        {
            return E::err(
                f("delay"),
                format!(
                    "'{delay}' runs on the kernel backend only (the simulator splits the RTT half and half)"
                ),
            );
        }
        if let Some(name) = &self.profile {
            crate::profile::profile(name, &f("profile"))?;
        }
        let cc = CcConfig::from_name_and_params(&self.cc, &serde_json::Value::Object(self.cc_params.clone()))
            .map_err(|e| e.prefixed(group))?;
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
        let connect = match self.connect.as_str() {
            "at_start" => ConnectMode::AtStart,
            "before_run" => ConnectMode::BeforeRun,
            other => {
                return E::err(
                    f("connect"),
                    format!("expected one of 'at_start', 'before_run', got '{other}'"),
                );
            }
        };
        let rtt_ns = positive(&f("rtt"), self.rtt_ns)?;
        if !self.loss.is_finite() {
            return E::err(
                f("loss"),
                format!(
                    "must be a probability in [0, 1), got {}",
                    units::py_float_repr(self.loss)
                ),
            );
        }
        Ok(GroupSpec {
            cc,
            count: in_range(&f("count"), self.count, 1, U32)?,
            rtt_ns,
            start_ns: in_range(&f("start"), self.start_ns, 0, U64)?,
            stop_ns: self
                .stop_ns
                .map(|v| in_range(&f("stop"), v, 0, U64))
                .transpose()?,
            initial_window: in_range(&f("initial_window"), self.initial_window, 1, U32)?,
            pacing: self.pacing,
            loss: self.loss,
            ecn,
            connect,
            host: HostSpec::resolve(host, self.host.as_ref(), &f("host"), rtt_ns)?,
            size: self.size.as_ref().map(|s| s.resolve(group)).transpose()?,
            arrivals: self.arrivals.as_ref().map(|a| a.resolve(group)).transpose()?,
            delay: None,
        })
    }
}

// ------------------------------------------------------------------------------------------------- the spec

/// A group's congestion control as a spec holds it: a configuration of the simulator's
/// ([`CcConfig`]), or a module of the kernel backend's ([`crate::kernel::KernelModule`]).
pub trait Algorithm: Clone + std::fmt::Debug + PartialEq + Serialize + serde::de::DeserializeOwned {
    /// Its own parameters' rules; errors name the parameter (`cc_params.beta`).
    fn check(&self) -> Result<(), FieldError>;
    /// What it asks of the stack (ECN, pacing), from its description alone.
    fn flags(&self) -> ccfair_cc::CcFlags;
}

impl Algorithm for CcConfig {
    fn check(&self) -> Result<(), FieldError> {
        self.validate().map_err(|e| e.prefixed("cc_params"))
    }
    fn flags(&self) -> ccfair_cc::CcFlags {
        CcConfig::flags(self)
    }
}

/// A spec as a backend runs it: every rule checked. It is built only by the resolver
/// ([`ScenarioInput::resolve`], [`crate::kernel::resolve`]) or by [`UncheckedSpec::check`], so whoever holds
/// one need not check it again; its fields are read through [`UncheckedSpec`]. The simulator's algorithms
/// are [`CcConfig`]s; the kernel backend's spec is a `ScenarioSpec<KernelModule>`.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(transparent)]
pub struct ScenarioSpec<C: Algorithm = CcConfig>(UncheckedSpec<C>);

impl<C: Algorithm> std::ops::Deref for ScenarioSpec<C> {
    type Target = UncheckedSpec<C>;
    fn deref(&self) -> &UncheckedSpec<C> {
        &self.0
    }
}

impl<C: Algorithm> ScenarioSpec<C> {
    /// The fields, to change them (the result must be checked again to run).
    pub fn into_unchecked(self) -> UncheckedSpec<C> {
        self.0
    }
}

/// The fields of a spec, as a spec's JSON holds them, not yet checked: [`UncheckedSpec::check`] makes the
/// [`ScenarioSpec`] a backend runs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, bound = "C: Algorithm")]
pub struct UncheckedSpec<C: Algorithm = CcConfig> {
    pub duration_ns: u64,
    pub interval_ns: u64,
    pub measure_start_ns: u64,
    pub measure_end_ns: u64,
    pub link: LinkSpec,
    pub groups: Vec<GroupSpec<C>>,
    /// The kernel backend's veth offloads (one for every group); absent from the simulator's spec.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offloads: Option<crate::kernel::Offloads>,
    /// The kernel backend's receive buffer (null: the hosts model no receive window); absent from the
    /// simulator's spec.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "present"
    )]
    pub receive_buffer: Option<Option<crate::kernel::ReceiveBuffer>>,
}

/// A key that is present, even as null.
fn present<'de, D: serde::Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Option<T>, D::Error> {
    T::deserialize(d).map(Some)
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkSpec {
    pub rate_bps: u64,
    pub mtu_bytes: u32,
    pub aqm: AqmConfig,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, bound = "C: Algorithm")]
pub struct GroupSpec<C: Algorithm = CcConfig> {
    pub cc: C,
    pub count: u32,
    /// Base (propagation) round-trip time.
    pub rtt_ns: u64,
    pub start_ns: u64,
    /// When the application stops writing; `None` = at the end of the run.
    pub stop_ns: Option<u64>,
    pub initial_window: u32,
    pub pacing: bool,
    /// Bernoulli loss probability for this group's data segments on their own path.
    pub loss: f64,
    pub ecn: EcnMode,
    /// When each flow's connection opens: at its start, its handshake crossing the network as it stands
    /// then, or before the run over the empty path.
    pub connect: ConnectMode,
    /// The group's end hosts; the ideal host is left out of the serialized spec.
    #[serde(default, skip_serializing_if = "HostSpec::is_ideal")]
    pub host: HostSpec,
    /// Bytes each flow writes, fixed or drawn per flow; `None` (left out of the serialized spec, so that a
    /// scenario without it keeps its run ids): a bulk flow writing until `stop`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<SizeSpec>,
    /// The flows' arrival process; `None` (left out likewise): every flow starts at `start`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arrivals: Option<ArrivalSpec>,
    /// Where the kernel backend places the base RTT ([`crate::kernel::DELAY_PLACEMENTS`]); absent from the
    /// simulator's spec, which splits it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delay: Option<String>,
}

/// When a flow's TCP connection opens.
///
/// A testbed opens a connection when its flow starts (`iperf3 -c` or `wget` run at +5 s): the SYN meets the
/// bottleneck queue the earlier flows keep standing, so the handshake's RTT sample, the first srtt, RTO and
/// min-RTT of the connection, includes that queue, and a SYN the queue drops is sent again after the initial
/// RTO of 1 s (see `tcp::sender`). `BeforeRun` establishes every connection before the run over the empty
/// path (its sample is the base RTT) and the flow writes from its start: the other, named mode.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ConnectMode {
    #[default]
    AtStart,
    BeforeRun,
}

/// The largest MTU accepted (jumbo frames).
pub const MAX_MTU: u32 = 9000;
/// The smallest MTU that leaves room for the 52 header bytes and a useful payload (IPv4's minimum).
pub const MIN_MTU: u32 = 576;
/// The largest window Linux advertises: `U16_MAX << TCP_MAX_WSCALE` bytes (65535 × 2^14, RFC 7323's largest
/// window scale), the clamp of `tcp_select_initial_window()` in `net/ipv4/tcp_output.c`. A Linux sender never
/// has more than its peer's window in flight, so no first flight is larger, whatever the route's `initcwnd`
/// (a u32) says: `tcp_init_cwnd()` only clamps it to `snd_cwnd_clamp`, which is `~0` unless the route locks a
/// `cwnd`. The simulator has no receive window, so `initial_window` × MSS is bounded by this directly.
pub const MAX_WINDOW_BYTES: u64 = 65_535 << 14;

/// The rules of a run's schedule: a positive duration, an interval within it, a measurement window that
/// starts before it ends, no later than the duration (a probe of the kernel backend's, which has no
/// scenario, keeps them too).
pub fn check_window(
    duration_ns: u64,
    interval_ns: u64,
    start_ns: u64,
    end_ns: u64,
) -> Result<(), FieldError> {
    let duration = format_duration_ns(duration_ns);
    if duration_ns == 0 {
        return E::err("duration", "must be positive");
    }
    if interval_ns == 0 || interval_ns > duration_ns {
        return E::err(
            "interval",
            format!("must be positive and at most the duration ({duration})"),
        );
    }
    if end_ns > duration_ns {
        return E::err(
            "measure.end",
            format!("must be at most the duration ({duration})"),
        );
    }
    if start_ns >= end_ns {
        return E::err(
            "measure.start",
            format!(
                "{} must be before measure.end ({})",
                format_duration_ns(start_ns),
                format_duration_ns(end_ns)
            ),
        );
    }
    Ok(())
}

impl<C: Algorithm> GroupSpec<C> {
    /// The same group with another algorithm.
    pub fn with_cc<D: Algorithm>(self, cc: D) -> GroupSpec<D> {
        GroupSpec {
            cc,
            count: self.count,
            rtt_ns: self.rtt_ns,
            start_ns: self.start_ns,
            stop_ns: self.stop_ns,
            initial_window: self.initial_window,
            pacing: self.pacing,
            loss: self.loss,
            ecn: self.ecn,
            connect: self.connect,
            host: self.host,
            size: self.size,
            arrivals: self.arrivals,
            delay: self.delay,
        }
    }
}

impl<C: Algorithm> UncheckedSpec<C> {
    /// The spec, if it keeps every rule (those of [`UncheckedSpec::check_rules`] and the queue discipline's
    /// own); the error names the field as a scenario writes it.
    pub fn check(self) -> Result<ScenarioSpec<C>, FieldError> {
        self.check_rules()?;
        self.link
            .aqm
            .validate(self.link.mtu_bytes)
            .and_then(|_| self.link.aqm.validate_groups(self.groups.len()))
            .map_err(|e| e.prefixed("link"))?;
        Ok(ScenarioSpec(self))
    }

    /// The rules between fields (the queue discipline's own parameters aside).
    pub fn check_rules(&self) -> Result<(), FieldError> {
        let duration = format_duration_ns(self.duration_ns);
        check_window(
            self.duration_ns,
            self.interval_ns,
            self.measure_start_ns,
            self.measure_end_ns,
        )?;
        if self.link.rate_bps == 0 {
            return E::err("link.rate", "must be positive");
        }
        if !(MIN_MTU..=MAX_MTU).contains(&self.link.mtu_bytes) {
            return E::err(
                "link.mtu",
                format!(
                    "must be between {MIN_MTU} and {MAX_MTU} bytes, got {}",
                    self.link.mtu_bytes
                ),
            );
        }
        match self.link.aqm.limit {
            QueueLimit::Packets(0) => {
                return E::err("link.buffer", "must hold at least one packet, got 0pkt");
            }
            QueueLimit::Bytes(b) if b < self.link.mtu_bytes as u64 => {
                return E::err(
                    "link.buffer",
                    format!(
                        "{} ({b} bytes) is less than one {}-byte packet",
                        format_size_bytes(b),
                        self.link.mtu_bytes
                    ),
                );
            }
            _ => {}
        }
        if self.groups.is_empty() {
            return E::err("flows", "at least one flow group is needed");
        }
        let mut total: u64 = 0;
        for (i, g) in self.groups.iter().enumerate() {
            total += g.count as u64;
            if total > crate::MAX_FLOWS as u64 {
                return E::err(
                    format!("flows[{i}].count"),
                    format!(
                        "at most {} flows in one run (the simulator's event codes hold a 20-bit flow \
                         index), got {total} up to this group",
                        crate::MAX_FLOWS
                    ),
                );
            }
        }
        let max_initial_window = MAX_WINDOW_BYTES / self.mss() as u64;
        for (i, g) in self.groups.iter().enumerate() {
            let group = format!("flows[{i}]");
            let f = |name: &str| format!("{group}.{name}");
            g.cc.check().map_err(|e| e.prefixed(&group))?;
            if let Some(delay) = &g.delay
                && !crate::kernel::DELAY_PLACEMENTS.contains(&delay.as_str())
            {
                return E::err(
                    f("delay"),
                    format!(
                        "must be one of {}, got '{delay}'",
                        crate::kernel::DELAY_PLACEMENTS.join(", ")
                    ),
                );
            }
            if g.count == 0 {
                return E::err(f("count"), "must be at least 1");
            }
            if g.rtt_ns == 0 {
                return E::err(f("rtt"), "must be positive");
            }
            if g.start_ns >= self.duration_ns {
                return E::err(
                    f("start"),
                    format!("must be before the end of the run ({duration})"),
                );
            }
            let latest_start = g.start_ns.saturating_add(g.host.start_jitter_ns);
            if latest_start > g.start_ns && latest_start > self.duration_ns {
                return E::err(
                    f("host.start_jitter"),
                    format!(
                        "start ({}) + start_jitter ({}) must be at most the end of the run ({duration})",
                        format_duration_ns(g.start_ns),
                        format_duration_ns(g.host.start_jitter_ns)
                    ),
                );
            }
            if let Some(stop) = g.stop_ns
                && stop <= g.start_ns
            {
                return E::err(
                    f("stop"),
                    format!("must be after start ({})", format_duration_ns(g.start_ns)),
                );
            }
            if let Some(stop) = g.stop_ns
                && stop < latest_start
            {
                return E::err(
                    f("stop"),
                    format!(
                        "must be at least start + host.start_jitter ({}), the latest start",
                        format_duration_ns(latest_start)
                    ),
                );
            }
            if g.initial_window == 0 {
                return E::err(f("initial_window"), "must be at least 1");
            }
            if g.initial_window as u64 > max_initial_window {
                return E::err(
                    f("initial_window"),
                    format!(
                        "must be at most {max_initial_window} segments of {} bytes, Linux's largest \
                         window (65535 × 2^14 bytes), got {}",
                        self.mss(),
                        g.initial_window
                    ),
                );
            }
            if g.host.rcv_window {
                // The first buffer must back a window of a few segments, or the receiver could offer a
                // window below one segment with nothing in flight to reopen it (there are no window probes).
                let (scaling_ratio, rmem) = (g.host.rcv_scaling_ratio, g.host.rmem_bytes);
                let least = (4 * self.mss() as u64 * 256).div_ceil(scaling_ratio as u64);
                if (rmem[1] as u64) < least {
                    return E::err(
                        f("host.rmem"),
                        format!(
                            "the default (second) value must back a window of at least 4 segments of {} \
                             bytes at the scaling ratio {}/256: at least {least} bytes, got {}",
                            self.mss(),
                            scaling_ratio,
                            rmem[1]
                        ),
                    );
                }
            }
            if !(0.0..1.0).contains(&g.loss) {
                return E::err(
                    f("loss"),
                    format!("must be a probability in [0, 1), got {:?}", g.loss),
                );
            }
            EcnProfile::resolve(g.ecn, &g.cc.flags()).map_err(|m| E::new(f("ecn"), m))?;
            traffic::validate_group(g, self.duration_ns, f)?;
        }
        Ok(())
    }

    /// Total number of flows.
    pub fn flow_count(&self) -> u32 {
        self.groups.iter().map(|g| g.count).sum()
    }

    /// Payload bytes per segment: MTU minus the 52 header bytes.
    pub fn mss(&self) -> u32 {
        self.link.mtu_bytes - crate::HEADER_BYTES
    }
}

#[cfg(test)]
mod tests {
    use super::{FlowInput, format_duration_ns, format_size_bytes};

    fn group(cc: &str) -> FlowInput {
        FlowInput {
            cc: cc.into(),
            profile: None,
            cc_params: Default::default(),
            count: 1,
            rtt_ns: 20_000_000,
            start_ns: 0,
            stop_ns: None,
            initial_window: 10,
            pacing: false,
            loss: 0.0,
            ecn: "off".into(),
            connect: "at_start".into(),
            host: None,
            size: None,
            arrivals: None,
            label: None,
            delay: None,
        }
    }

    #[test]
    fn a_kernel_module_is_refused_by_the_simulator_naming_the_field_and_the_backend() {
        let e = group("kernel:vegas").resolve("flows[1]", None).unwrap_err();
        assert!(
            e.says("flows[1].cc", "'kernel:vegas' names the kernel's module 'vegas'"),
            "{e}"
        );
        assert!(e.message.contains("--backend kernel"), "{}", e.message);
        // Every kernel: name is the kernel's, even one the simulator models under its plain name.
        assert_eq!(
            group("kernel:cubic").resolve("flows[0]", None).unwrap_err().field,
            "flows[0].cc"
        );
        // Not a prefix match on the name alone: a plain unknown name keeps the registry's message.
        let unknown = group("vegas").resolve("flows[0]", None).unwrap_err();
        assert!(
            unknown.message.starts_with("unknown congestion control"),
            "{}",
            unknown.message
        );
        assert!(group("cubic").resolve("flows[0]", None).is_ok());
    }

    #[test]
    fn durations_read_as_the_scenario_writes_them() {
        assert_eq!(format_duration_ns(0), "0s");
        assert_eq!(format_duration_ns(50_000_000), "50ms");
        assert_eq!(format_duration_ns(12_500_000), "12.5ms");
        assert_eq!(format_duration_ns(60_000_000_000), "60s");
        assert_eq!(format_duration_ns(1_000_000_001), "1.000000001s");
        assert_eq!(format_duration_ns(999), "999ns");
        assert_eq!(format_size_bytes(1000), "1KB");
        assert_eq!(format_size_bytes(150_500), "150.5KB");
        assert_eq!(format_size_bytes(65_536), "64KiB");
        assert_eq!(format_size_bytes(1), "1B");
    }
}
