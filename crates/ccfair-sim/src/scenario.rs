//! The resolved scenario the simulator runs: every quantity an integer in base units (ns, bit/s, bytes), every
//! algorithm a validated configuration. The front end parses units and user-facing names into this; the
//! simulator checks it again so that a bad value is always reported with the field that holds it.

use ccfair_aqm::{AqmConfig, QueueLimit};
use ccfair_cc::CcConfig;
use ccfair_core::rng::StreamId;
use ccfair_core::{FieldError, Rng};

use crate::tcp::{EcnMode, EcnProfile};
use serde::{Deserialize, Serialize};

use FieldError as E;

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
        if self.duration_ns == 0 {
            return E::err("duration", "must be positive");
        }
        if self.interval_ns == 0 || self.interval_ns > self.duration_ns {
            return E::err("interval", "must be positive and at most the duration");
        }
        if self.measure_start_ns >= self.measure_end_ns || self.measure_end_ns > self.duration_ns {
            return E::err("measure", "needs start < end <= duration");
        }
        if self.link.rate_bps == 0 {
            return E::err("link.rate", "must be positive");
        }
        if !(MIN_MTU..=MAX_MTU).contains(&self.link.mtu_bytes) {
            return E::err(
                "link.mtu",
                format!("must be between {MIN_MTU} and {MAX_MTU} bytes"),
            );
        }
        match self.link.aqm.limit {
            QueueLimit::Packets(0) => return E::err("link.buffer", "must hold at least one packet"),
            QueueLimit::Bytes(b) if b < self.link.mtu_bytes as u64 => {
                return E::err(
                    "link.buffer",
                    format!("must hold at least one packet ({} bytes)", self.link.mtu_bytes),
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
                return E::err(f("start"), "must be before the end of the run");
            }
            if let Some(stop) = g.stop_ns
                && stop <= g.start_ns
            {
                return E::err(f("stop"), "must be after start");
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
            if !(0.0..1.0).contains(&g.loss) {
                return E::err(f("loss"), "must be a probability in [0, 1)");
            }
            let flags = g.cc.build(Rng::stream(0, StreamId::Other(0))).flags();
            EcnProfile::resolve(g.ecn, &flags).map_err(|m| E::new(f("ecn"), m))?;
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
