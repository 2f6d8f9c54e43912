//! The scenario, from what the user wrote (in base units) to the spec the simulator runs: the one place that
//! decides what a scenario means.
//!
//! The front end owns syntax and units: it reads TOML, turns `"50ms"` into `50_000_000` and a `"1bdp"` buffer
//! into a packet limit, and hands over a [`ScenarioInput`]. [`ScenarioInput::resolve`] checks ranges, fills
//! defaults (the measurement window), resolves algorithm and queue-discipline names and parameters, and
//! builds the [`ScenarioSpec`]: every quantity an integer in base units (ns, bit/s, bytes), every algorithm a
//! validated configuration. [`ScenarioSpec::validate`] holds the rules between fields (a flow starts before
//! the end, its first window fits Linux's largest window, its ECN setting suits its algorithm, ...); the
//! simulator runs it again on any spec it is given. Every error names the field as the user wrote it
//! (`flows[1].cc_params.beta`, `link.aqm.target_ns`). Integers arrive as written (wider than the spec's
//! types), so a negative count or a window beyond 32 bits is reported with the field and its range, not as a
//! decoding error.
//!
//! A new per-flow setting is a field of [`FlowInput`] and of [`GroupSpec`], its conversion in
//! [`FlowInput::resolve`] and, if it relates to other fields, its rule in [`ScenarioSpec::validate`].

use ccfair_aqm::{AqmConfig, QueueLimit};
use ccfair_cc::CcConfig;
use ccfair_core::FieldError;
use serde::{Deserialize, Serialize};

use crate::host::{HostInput, HostSpec};
use crate::tcp::{EcnMode, EcnProfile};
use crate::traffic::{self, ArrivalSpec, ArrivalsInput, SizeInput, SizeSpec};

use FieldError as E;

// ------------------------------------------------------------------------------------------------ the input

/// A congestion control written `kernel:NAME` is the running kernel's module NAME, one the simulator does not
/// model: the kernel backend runs it (and checks that this kernel offers it), the simulator refuses it here.
pub const KERNEL_CC_PREFIX: &str = "kernel:";

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
    /// The scenario's `[host]` table, if it has one (see [`crate::host`]).
    #[serde(default)]
    pub host: Option<HostInput>,
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

/// One `[[flows]]` group, as written.
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
    /// The group's `[flows.host]` table, laid over the scenario's.
    #[serde(default)]
    pub host: Option<HostInput>,
    /// Bytes each flow writes before it closes (see [`crate::traffic`]); `None`: it writes until `stop`.
    #[serde(default)]
    pub size: Option<SizeInput>,
    /// When the group's flows start after `start`; `None`: all at `start`.
    #[serde(default)]
    pub arrivals: Option<ArrivalsInput>,
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
            .map(|(i, f)| f.resolve(&format!("flows[{i}]"), self.host.as_ref()))
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
            // A start the user did not write is named as the default it is.
            "measure.start" if self.measure_start_ns.is_none() => E::new(
                e.field,
                format!(
                    "{} (default: 20 % of the duration) must be before measure.end ({})",
                    format_duration_ns(measure_start_ns),
                    format_duration_ns(measure_end_ns)
                ),
            ),
            _ => e,
        })?;
        spec.link.aqm = AqmConfig::from_name_and_params(&link.aqm, &link.aqm_params, limit, mtu_bytes)
            .and_then(|cfg| cfg.validate_groups(spec.groups.len()).map(|_| cfg))
            .map_err(|e| e.prefixed("link"))?;
        Ok(spec)
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
        let rtt_ns = positive(&f("rtt"), self.rtt_ns)?;
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
            host: HostSpec::resolve(host, self.host.as_ref(), &f("host"), rtt_ns)?,
            size: self.size.as_ref().map(|s| s.resolve(group)).transpose()?,
            arrivals: self.arrivals.as_ref().map(|a| a.resolve(group)).transpose()?,
        })
    }
}

// ------------------------------------------------------------------------------------------------- the spec

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioSpec {
    pub duration_ns: u64,
    pub interval_ns: u64,
    pub measure_start_ns: u64,
    pub measure_end_ns: u64,
    pub link: LinkSpec,
    pub groups: Vec<GroupSpec>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkSpec {
    pub rate_bps: u64,
    pub mtu_bytes: u32,
    pub aqm: AqmConfig,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GroupSpec {
    pub cc: CcConfig,
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

impl ScenarioSpec {
    pub fn validate(&self) -> Result<(), FieldError> {
        let duration = format_duration_ns(self.duration_ns);
        if self.duration_ns == 0 {
            return E::err("duration", "must be positive");
        }
        if self.interval_ns == 0 || self.interval_ns > self.duration_ns {
            return E::err(
                "interval",
                format!("must be positive and at most the duration ({duration})"),
            );
        }
        if self.measure_end_ns > self.duration_ns {
            return E::err(
                "measure.end",
                format!("must be at most the duration ({duration})"),
            );
        }
        if self.measure_start_ns >= self.measure_end_ns {
            return E::err(
                "measure.start",
                format!(
                    "{} must be before measure.end ({})",
                    format_duration_ns(self.measure_start_ns),
                    format_duration_ns(self.measure_end_ns)
                ),
            );
        }
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
            if total > crate::sim::MAX_FLOWS as u64 {
                return E::err(
                    format!("flows[{i}].count"),
                    format!(
                        "at most {} flows in one run (the simulator's event codes hold a 20-bit flow \
                         index), got {total} up to this group",
                        crate::sim::MAX_FLOWS
                    ),
                );
            }
        }
        let max_initial_window = MAX_WINDOW_BYTES / self.mss() as u64;
        for (i, g) in self.groups.iter().enumerate() {
            let group = format!("flows[{i}]");
            let f = |name: &str| format!("{group}.{name}");
            g.cc.validate()
                .map_err(|e| e.prefixed("cc_params").prefixed(&group))?;
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
            if let Some(rwnd) = g.host.rwnd() {
                // The first buffer must back a window of a few segments, or the receiver could offer a
                // window below one segment with nothing in flight to reopen it (there are no window probes).
                let least = (4 * self.mss() as u64 * 256).div_ceil(rwnd.scaling_ratio as u64);
                if (rwnd.rmem[1] as u64) < least {
                    return E::err(
                        f("host.rmem"),
                        format!(
                            "the default (second) value must back a window of at least 4 segments of {} \
                             bytes at the scaling ratio {}/256: at least {least} bytes, got {}",
                            self.mss(),
                            rwnd.scaling_ratio,
                            rwnd.rmem[1]
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
        self.link.mtu_bytes - crate::tcp::HEADER_BYTES
    }
}

/// `value` in the largest of `units` (largest first) not above it, as an exact decimal: the scenario's own
/// notation, so an error message quotes a value as the user would write it.
fn format_scaled(value: u64, units: &[(&str, u64)], zero: &str) -> String {
    if value == 0 {
        return format!("0{zero}");
    }
    let last = units[units.len() - 1];
    let (name, size) = units
        .iter()
        .copied()
        .find(|&(_, size)| value >= size)
        .unwrap_or(last);
    let (whole, rest) = (value / size, value % size);
    if rest == 0 {
        return format!("{whole}{name}");
    }
    let digits = size.ilog10() as usize;
    let fraction = format!("{rest:0digits$}");
    format!("{whole}.{}{name}", fraction.trim_end_matches('0'))
}

/// `ns` as the scenario writes durations: `50ms`, `12.5ms`, `0s`.
pub fn format_duration_ns(ns: u64) -> String {
    let units = [("s", 1_000_000_000), ("ms", 1_000_000), ("us", 1_000), ("ns", 1)];
    format_scaled(ns, &units, "s")
}

/// `bytes` as the scenario writes sizes: `150KB`, and `64KiB` for a multiple of 1024 that is not one of 1000.
pub fn format_size_bytes(bytes: u64) -> String {
    if bytes >= 1024 && bytes.is_multiple_of(1024) && !bytes.is_multiple_of(1000) {
        let units = [
            ("TiB", 1 << 40),
            ("GiB", 1 << 30),
            ("MiB", 1 << 20),
            ("KiB", 1 << 10),
        ];
        return format_scaled(bytes, &units, "B");
    }
    let units = [
        ("TB", 1_000_000_000_000),
        ("GB", 1_000_000_000),
        ("MB", 1_000_000),
        ("KB", 1_000),
        ("B", 1),
    ];
    format_scaled(bytes, &units, "B")
}

#[cfg(test)]
mod tests {
    use super::{FlowInput, format_duration_ns, format_size_bytes};

    fn group(cc: &str) -> FlowInput {
        FlowInput {
            cc: cc.into(),
            cc_params: serde_json::Value::Null,
            count: 1,
            rtt_ns: 20_000_000,
            start_ns: 0,
            stop_ns: None,
            initial_window: 10,
            pacing: false,
            loss: 0.0,
            ecn: "off".into(),
            host: None,
            size: None,
            arrivals: None,
        }
    }

    #[test]
    fn a_kernel_module_is_refused_by_the_simulator_naming_the_field_and_the_backend() {
        let e = group("kernel:vegas").resolve("flows[1]", None).unwrap_err();
        assert_eq!(e.field, "flows[1].cc");
        assert!(
            e.message
                .contains("'kernel:vegas' names the kernel's module 'vegas'"),
            "{}",
            e.message
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
