//! The end hosts: how far a flow's sender and receiver depart from an ideal host, by preset and parameters.
//!
//! In a nutshell: the simulator's ideal host starts every flow exactly at its start time, sends each segment
//! the instant TCP allows and ACKs by the receiver's rules alone, so repetitions of a drop-tail run are
//! bit-identical and flows lock into phase (Floyd & Jacobson, "On traffic phase effects in packet-switched
//! gateways", 1992). Real hosts do not start their flows together: an application (or a test harness
//! starting `iperf3` clients over ssh) opens connections milliseconds apart. A `[host]` table names a preset
//! and may override any of its parameters; a `[flows.host]` table is laid over the scenario's key by key
//! (a key the group writes wins, a key it leaves out comes from the scenario's table), then the preset is
//! expanded and the written parameters replace the preset's values.
//!
//! Parameters:
//! - `start_jitter`: each flow of a group starts at `start + U[0, start_jitter)`, drawn once per flow from
//!   its own stream of the run's seed (`StreamId::HostStart`), so a flow's start does not depend on other
//!   components' draws. Default: 0 for `ideal`; one base RTT of the group for the other presets, the spread
//!   of connection set-up that a harness starting clients over a network sees (a handshake is one RTT, and
//!   clients started one after the other are at least that far apart).
//!
//! Presets: `ideal` (today's simulator, no draw and no event added), `testbed` (a server in a lab, the
//! traffic generator of a kernel comparison) and `home` (a user's access host). They differ only in the
//! parameters listed above so far; more host behaviour joins them as it is modelled.
//!
//! Deviations: connection set-up is not simulated; the jitter only moves the first segment.

use ccfair_core::FieldError;
use serde::{Deserialize, Serialize};

use FieldError as E;

/// The presets, in the order error messages list them.
pub const PRESETS: [&str; 3] = ["ideal", "testbed", "home"];
/// The preset of a scenario without a `[host]` table (and of a table without `preset`).
pub const DEFAULT_PRESET: HostPreset = HostPreset::Ideal;

#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum HostPreset {
    Ideal,
    Testbed,
    Home,
}

impl HostPreset {
    fn from_name(field: &str, name: &str) -> Result<HostPreset, FieldError> {
        match name {
            "ideal" => Ok(HostPreset::Ideal),
            "testbed" => Ok(HostPreset::Testbed),
            "home" => Ok(HostPreset::Home),
            other => E::err(
                field,
                format!("expected one of {}, got '{other}'", quoted(&PRESETS)),
            ),
        }
    }

    /// The preset's start jitter for a group of base RTT `rtt_ns`.
    fn start_jitter_ns(self, rtt_ns: u64) -> u64 {
        match self {
            HostPreset::Ideal => 0,
            HostPreset::Testbed | HostPreset::Home => rtt_ns,
        }
    }
}

fn quoted(names: &[&str]) -> String {
    names
        .iter()
        .map(|n| format!("'{n}'"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A `[host]` table as written, quantities in base units (`start_jitter` in ns).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HostInput {
    #[serde(default)]
    pub preset: Option<String>,
    #[serde(default)]
    pub start_jitter_ns: Option<i128>,
}

/// A group's host, resolved: every parameter in base units.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HostSpec {
    pub preset: HostPreset,
    /// Each flow starts within `[start, start + start_jitter_ns)`.
    pub start_jitter_ns: u64,
}

impl Default for HostSpec {
    fn default() -> Self {
        HostSpec {
            preset: DEFAULT_PRESET,
            start_jitter_ns: 0,
        }
    }
}

impl HostSpec {
    /// True for the ideal host, which the spec leaves out (so that a scenario without `[host]` keeps its
    /// spec, and with it its run ids).
    pub fn is_ideal(&self) -> bool {
        *self == HostSpec::default()
    }

    /// The host of a group of base RTT `rtt_ns`: the group's table (`group`, at field `group_field`) laid
    /// over the scenario's (`scenario`, at field `host`), the preset expanded, written parameters applied.
    pub fn resolve(
        scenario: Option<&HostInput>,
        group: Option<&HostInput>,
        group_field: &str,
        rtt_ns: u64,
    ) -> Result<HostSpec, FieldError> {
        // Each key from the group's table if it writes it, else from the scenario's; with the field it
        // came from, for errors.
        fn pick<'a, T>(
            scenario: Option<&'a HostInput>,
            group: Option<&'a HostInput>,
            group_field: &str,
            key: &str,
            get: impl Fn(&'a HostInput) -> Option<&'a T>,
        ) -> Option<(String, &'a T)> {
            if let Some(v) = group.and_then(&get) {
                return Some((format!("{group_field}.{key}"), v));
            }
            scenario.and_then(get).map(|v| (format!("host.{key}"), v))
        }
        let preset = match pick(scenario, group, group_field, "preset", |h| h.preset.as_ref()) {
            Some((field, name)) => HostPreset::from_name(&field, name)?,
            None => DEFAULT_PRESET,
        };
        let start_jitter_ns = match pick(scenario, group, group_field, "start_jitter", |h| {
            h.start_jitter_ns.as_ref()
        }) {
            Some((field, &v)) => {
                if v < 0 {
                    return E::err(field, "must not be negative");
                }
                u64::try_from(v).map_err(|_| E::new(field, "is too large"))?
            }
            None => preset.start_jitter_ns(rtt_ns),
        };
        Ok(HostSpec {
            preset,
            start_jitter_ns,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    fn input(preset: Option<&str>, jitter_ns: Option<i128>) -> HostInput {
        HostInput {
            preset: preset.map(str::to_owned),
            start_jitter_ns: jitter_ns,
        }
    }

    #[test]
    fn no_table_is_the_ideal_host() {
        let h = HostSpec::resolve(None, None, "flows[0].host", 50 * MS).unwrap();
        assert!(h.is_ideal());
        assert_eq!(h.start_jitter_ns, 0);
    }

    #[test]
    fn non_ideal_presets_jitter_starts_by_one_rtt() {
        for name in ["testbed", "home"] {
            let h =
                HostSpec::resolve(Some(&input(Some(name), None)), None, "flows[0].host", 30 * MS).unwrap();
            assert_eq!(h.start_jitter_ns, 30 * MS, "{name}");
            assert!(!h.is_ideal());
        }
    }

    #[test]
    fn the_group_table_overrides_the_scenario_table_key_by_key() {
        let scenario = input(Some("testbed"), Some(7 * MS as i128));
        // The group changes the preset only: the scenario's jitter still applies.
        let h = HostSpec::resolve(Some(&scenario), Some(&input(Some("home"), None)), "g", 30 * MS).unwrap();
        assert_eq!((h.preset, h.start_jitter_ns), (HostPreset::Home, 7 * MS));
        // The group's own jitter wins.
        let h = HostSpec::resolve(Some(&scenario), Some(&input(None, Some(0))), "g", 30 * MS).unwrap();
        assert_eq!((h.preset, h.start_jitter_ns), (HostPreset::Testbed, 0));
        // An explicit ideal group under a testbed scenario without a written jitter is ideal.
        let h = HostSpec::resolve(
            Some(&input(Some("testbed"), None)),
            Some(&input(Some("ideal"), None)),
            "g",
            1,
        )
        .unwrap();
        assert!(h.is_ideal());
    }

    #[test]
    fn errors_name_the_table_the_value_came_from() {
        let e = HostSpec::resolve(Some(&input(Some("lab"), None)), None, "flows[2].host", MS).unwrap_err();
        assert_eq!(e.field, "host.preset");
        assert!(e.message.contains("'ideal', 'testbed', 'home'"), "{}", e.message);
        let e = HostSpec::resolve(None, Some(&input(None, Some(-1))), "flows[2].host", MS).unwrap_err();
        assert_eq!(e.field, "flows[2].host.start_jitter");
    }
}
