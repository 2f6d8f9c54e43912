//! A description of every key of the scenario document (its path, the type and unit of its value, its
//! default, the rule it keeps, which backends read it), for the reference documentation and `ccfair list`.
//! A test holds it to the document's own tables: every table's keys here are the keys its serde struct
//! accepts, in the same order.

use serde::Serialize;

use crate::document::defaults;
use crate::host::{HostPreset, HostSpec, PRESETS};
use crate::kernel::{DELAY_PLACEMENTS, HONOURED_HOST_KEYS, MAX_KERNEL_FLOWS, MAX_KERNEL_GROUPS};
use crate::profile::PROFILES;
use crate::spec::{MAX_MTU, MIN_MTU};
use crate::traffic::{DISTRIBUTIONS, MAX_LOGNORMAL_SIGMA, MAX_SIZE_BYTES, PROCESSES};
use crate::units::{self, format_duration_ns};

/// One key of the document.
#[derive(Clone, Debug, Serialize)]
pub struct KeyDoc {
    /// Dotted, `[]` for each element of an array of tables: `flows[].host.hz`.
    pub path: String,
    /// The value's type: `duration`, `rate`, `size`, `buffer`, `integer`, `boolean`, `string`, `number`,
    /// `table`, `array of tables`, `array of sizes`, `name or table`, `size or table`.
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// The base unit a quantity is held in (`ns`, `bit/s`, `bytes`, `packets`), if it has one.
    pub unit: Option<&'static str>,
    /// What leaving the key out means, as the document would write it; None: the key is required.
    pub default: Option<String>,
    /// What values are allowed.
    pub rule: String,
    pub doc: &'static str,
    /// Which backends read it: `sim`, `kernel`.
    pub backends: Vec<&'static str>,
}

const BOTH: &[&str] = &["sim", "kernel"];
const SIM: &[&str] = &["sim"];
const KERNEL: &[&str] = &["kernel"];

#[allow(clippy::too_many_arguments)]
fn key(
    path: &str,
    kind: &'static str,
    unit: Option<&'static str>,
    default: Option<String>,
    rule: impl Into<String>,
    doc: &'static str,
    backends: &[&'static str],
) -> KeyDoc {
    KeyDoc {
        path: path.into(),
        kind,
        unit,
        default,
        rule: rule.into(),
        doc,
        backends: backends.to_vec(),
    }
}

fn host_keys(prefix: &str, table_doc: &'static str) -> Vec<KeyDoc> {
    let p = |k: &str| format!("{prefix}.{k}");
    let kernel_too = |k: &str| {
        if HONOURED_HOST_KEYS.contains(&k) {
            BOTH
        } else {
            SIM
        }
    };
    let from_preset = || Some("the preset's".to_string());
    let mut v = vec![key(
        prefix,
        "table",
        None,
        Some("no table (the default preset, kernel-lab)".into()),
        "",
        table_doc,
        BOTH,
    )];
    let rows: [(&str, &'static str, Option<&'static str>, String, &'static str); 19] = [
        (
            "preset",
            "string",
            None,
            format!("one of {}", PRESETS.join(", ")),
            "the host model the other keys override",
        ),
        (
            "start_jitter",
            "duration",
            Some("ns"),
            "0 or more".into(),
            "flows of a group start within [start, start + start_jitter)",
        ),
        (
            "start_spacing",
            "duration",
            Some("ns"),
            "0 or more".into(),
            "the k-th flow due at one instant starts k x start_spacing later (one thread starting them in turn)",
        ),
        (
            "noise",
            "string",
            None,
            "none, exponential or uniform".into(),
            "the per-packet processing delay at both ends",
        ),
        (
            "noise_scale",
            "duration",
            Some("ns"),
            "0 or more".into(),
            "its mean",
        ),
        (
            "turnaround",
            "duration",
            Some("ns"),
            "0 or more".into(),
            "the fixed part of each end's turnaround: every flow's loop is twice this longer than its base RTT",
        ),
        (
            "pacing_slack",
            "duration",
            Some("ns"),
            "0 or more".into(),
            "the pacing timer fires within [deadline, deadline + pacing_slack)",
        ),
        (
            "delack_granularity",
            "duration",
            Some("ns"),
            "0 or more".into(),
            "the delayed-ACK timer fires on the next tick of this",
        ),
        (
            "hz",
            "integer",
            None,
            "100, 250, 300 or 1000".into(),
            "the host kernel's CONFIG_HZ: Cubic's and BBR's clock",
        ),
        (
            "tick_phase",
            "string",
            None,
            "zero or random".into(),
            "where its ticks fall: at the run's start, or drawn per seed",
        ),
        (
            "tso",
            "boolean",
            None,
            String::new(),
            "unpaced flows send TSO bursts too (paced flows always do)",
        ),
        (
            "nic_rate",
            "rate",
            Some("bit/s"),
            "0 (infinitely fast) or a rate".into(),
            "the sending host's NIC serializes a burst at this rate",
        ),
        (
            "gro",
            "boolean",
            None,
            String::new(),
            "the receiving host coalesces segments into aggregates",
        ),
        (
            "gro_flush",
            "duration",
            Some("ns"),
            "0 or more".into(),
            "... arriving within this of an aggregate's first segment",
        ),
        (
            "rcv_window",
            "boolean",
            None,
            String::new(),
            "the receiver offers a receive window from its buffer (false: unlimited)",
        ),
        (
            "rcv_autotune",
            "boolean",
            None,
            String::new(),
            "the receive buffer grows (Linux's tcp_moderate_rcvbuf)",
        ),
        (
            "rmem",
            "array of sizes",
            Some("bytes"),
            "[min, default, max], min <= default <= max, each 1 to 2147483647".into(),
            "Linux's tcp_rmem",
        ),
        (
            "rcv_scaling_ratio",
            "integer",
            None,
            "1 to 255 (1/256 units)".into(),
            "the payload's share of the receive buffer",
        ),
        (
            "rcv_initial_window",
            "integer",
            None,
            "0 (Linux's) to 65535 segments".into(),
            "the route's initrwnd",
        ),
    ];
    for (k, kind, unit, rule, doc) in rows {
        let default = if k == "preset" {
            Some(crate::host::DEFAULT_PRESET.name().to_string())
        } else {
            from_preset()
        };
        v.push(key(&p(k), kind, unit, default, rule, doc, kernel_too(k)));
    }
    v
}

/// Every key of the document, tables before their keys, in the order the document's tables declare them.
pub fn keys() -> Vec<KeyDoc> {
    let d = |ns: u64| Some(format_duration_ns(ns));
    let mut v = vec![
        key(
            "duration",
            "duration",
            Some("ns"),
            None,
            "positive",
            "simulated (or run) time",
            BOTH,
        ),
        key(
            "interval",
            "duration",
            Some("ns"),
            d(defaults::INTERVAL_NS),
            "positive, at most the duration",
            "the time series' interval",
            BOTH,
        ),
        key(
            "seed",
            "integer",
            None,
            Some(format!("{} (or the caller's)", defaults::SEED)),
            "0 to 2^64 - 1",
            "the run's master seed",
            BOTH,
        ),
        key(
            "measure",
            "table",
            None,
            Some("the default window".into()),
            "",
            "the measurement window",
            BOTH,
        ),
        key(
            "measure.start",
            "duration",
            Some("ns"),
            Some("20 % of the duration".into()),
            "0 or more, before measure.end",
            "where the window starts",
            BOTH,
        ),
        key(
            "measure.end",
            "duration",
            Some("ns"),
            Some("the duration".into()),
            "positive, at most the duration",
            "where it ends",
            BOTH,
        ),
        key("link", "table", None, None, "", "the bottleneck link", BOTH),
        key(
            "link.rate",
            "rate",
            Some("bit/s"),
            None,
            "positive",
            "its rate",
            BOTH,
        ),
        key(
            "link.buffer",
            "buffer",
            Some("packets or bytes"),
            None,
            units::BUFFER_FORMS.to_string() + "; at least one packet",
            "its queue limit",
            BOTH,
        ),
        key(
            "link.base_rtt",
            "duration",
            Some("ns"),
            Some("the smallest flow group's rtt".into()),
            "positive",
            "the RTT a bdp buffer refers to",
            BOTH,
        ),
        key(
            "link.aqm",
            "name or table",
            None,
            Some(defaults::AQM.into()),
            "a queue discipline's name, or a table of name and its parameters (see ccfair list)",
            "the queue discipline",
            BOTH,
        ),
        key(
            "link.mtu",
            "integer",
            Some("bytes"),
            Some(defaults::MTU_BYTES.to_string()),
            format!("{MIN_MTU} to {MAX_MTU}"),
            "the link's MTU",
            BOTH,
        ),
        key(
            "flows",
            "array of tables",
            None,
            None,
            format!(
                "at least one group; at most 2^20 flows (kernel backend: {MAX_KERNEL_FLOWS} flows, {MAX_KERNEL_GROUPS} groups)"
            ),
            "groups of identical flows",
            BOTH,
        ),
        key(
            "flows[].cc",
            "string",
            None,
            Some("the profile's (required without a profile)".into()),
            "a congestion control or alias (see ccfair list); kernel backend: a module of this kernel, kernel:NAME for one the simulator does not model",
            "the group's algorithm",
            BOTH,
        ),
        key(
            "flows[].profile",
            "string",
            None,
            Some("none".into()),
            format!("one of {}", PROFILES.map(|p| p.name).join(", ")),
            "a named stack (cc, initial_window, pacing; see ccfair list) laid under the group's own keys",
            BOTH,
        ),
        key(
            "flows[].count",
            "integer",
            None,
            Some(defaults::COUNT.to_string()),
            "1 or more",
            "flows in the group",
            BOTH,
        ),
        key(
            "flows[].rtt",
            "duration",
            Some("ns"),
            None,
            "positive",
            "the base (propagation) RTT",
            BOTH,
        ),
        key(
            "flows[].start",
            "duration",
            Some("ns"),
            d(defaults::START_NS),
            "0 or more, before the end of the run",
            "when the group's flows start",
            BOTH,
        ),
        key(
            "flows[].stop",
            "duration",
            Some("ns"),
            Some("the end of the run".into()),
            "after start",
            "when their application stops writing",
            BOTH,
        ),
        key(
            "flows[].initial_window",
            "integer",
            Some("packets"),
            Some(format!("the profile's, else {}", defaults::INITIAL_WINDOW)),
            "1 to Linux's largest window (65535 x 2^14 bytes) in segments",
            "the first congestion window",
            BOTH,
        ),
        key(
            "flows[].pacing",
            "boolean",
            None,
            Some(format!("the profile's, else {}", defaults::PACING)),
            "",
            "TCP's internal pacing (BBR always paces)",
            BOTH,
        ),
        key(
            "flows[].loss",
            "number",
            None,
            Some(format!("{:?}", defaults::LOSS)),
            "a probability in [0, 1)",
            "Bernoulli loss on the group's own path",
            BOTH,
        ),
        key(
            "flows[].ecn",
            "string",
            None,
            Some(defaults::ECN.into()),
            "off, classic (RFC 3168) or l4s (ECT(1), Accurate ECN; simulator only)",
            "the group's ECN",
            BOTH,
        ),
        key(
            "flows[].connect",
            "string",
            None,
            Some(defaults::CONNECT.into()),
            "at_start or before_run",
            "when each flow's connection opens: at its start, its SYN through the queue as it stands then \
             (a lost SYN sent again after 1 s), or before the run over the empty path",
            BOTH,
        ),
        key(
            "flows[].cc_params",
            "table",
            None,
            Some("the algorithm's defaults".into()),
            "the algorithm's parameters (see ccfair list); none on the kernel backend",
            "its parameters",
            SIM,
        ),
        key(
            "flows[].label",
            "string",
            None,
            Some("none".into()),
            "",
            "free text for tables",
            BOTH,
        ),
    ];
    v.extend(host_keys(
        "flows[].host",
        "the group's hosts, laid over [host] key by key",
    ));
    v.extend([
        key(
            "flows[].size",
            "size or table",
            Some("bytes"),
            Some("none (bulk: until stop)".into()),
            format!("a size, or a table {{ distribution, mean, shape }}; at most {MAX_SIZE_BYTES} bytes"),
            "bytes each flow writes, then closes",
            BOTH,
        ),
        key(
            "flows[].size.distribution",
            "string",
            None,
            None,
            format!("one of {}", DISTRIBUTIONS.join(", ")),
            "drawn per flow",
            BOTH,
        ),
        key(
            "flows[].size.mean",
            "size",
            Some("bytes"),
            None,
            "positive",
            "the distribution's mean",
            BOTH,
        ),
        key(
            "flows[].size.shape",
            "number",
            None,
            Some("none".into()),
            format!("pareto: the tail index, above 1; lognormal: sigma in (0, {MAX_LOGNORMAL_SIGMA}]"),
            "the distribution's shape",
            BOTH,
        ),
        key(
            "flows[].arrivals",
            "table",
            None,
            Some("none (all at start)".into()),
            "",
            "the group's flows start at start + the arrival times of a process",
            BOTH,
        ),
        key(
            "flows[].arrivals.process",
            "string",
            None,
            None,
            format!("one of {}", PROCESSES.join(", ")),
            "the process",
            BOTH,
        ),
        key(
            "flows[].arrivals.mean_interval",
            "duration",
            Some("ns"),
            None,
            "positive; poisson only",
            "the mean gap",
            BOTH,
        ),
        key(
            "flows[].arrivals.window",
            "duration",
            Some("ns"),
            None,
            "positive; uniform only",
            "the window the starts are drawn over",
            BOTH,
        ),
        key(
            "flows[].delay",
            "string",
            None,
            Some("split".into()),
            format!(
                "one of {}; the simulator runs split only",
                DELAY_PLACEMENTS.join(", ")
            ),
            "where the base RTT sits: half on each direction, all on data, or all on ACKs",
            KERNEL,
        ),
    ]);
    v.extend(host_keys("host", "the end hosts of every group"));
    v
}

/// Each host preset's values (its `start_jitter` is one group RTT except for `ideal`), as a spec holds them.
pub fn presets() -> Vec<(&'static str, HostSpec)> {
    PRESETS
        .iter()
        .map(|&name| {
            let preset: HostPreset =
                serde_json::from_value(serde_json::Value::String(name.into())).expect("a preset");
            let input = crate::host::HostInput {
                preset: Some(name.into()),
                ..Default::default()
            };
            let spec = HostSpec::resolve(Some(&input), None, "host", 1).expect("a preset resolves");
            debug_assert_eq!(spec.preset, preset);
            (name, spec)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::Value;

    fn small() -> Value {
        Value::from_json(&serde_json::json!({
            "duration": "10s",
            "link": {"rate": "10Mbps", "buffer": "1bdp", "aqm": {"name": "fifo"}},
            "flows": [{"cc": "reno", "rtt": "50ms",
                       "size": {"distribution": "fixed", "mean": "1MB"},
                       "arrivals": {"process": "poisson", "mean_interval": "1s"},
                       "host": {}}],
            "measure": {},
            "host": {},
        }))
    }

    /// Adds `key` to the table at `path` and returns the allowed keys the reader lists for it.
    fn allowed_keys(path: &[&str]) -> Vec<String> {
        let mut doc = small();
        let mut node = &mut doc;
        for part in path {
            node = match node {
                Value::Table(entries) => &mut entries.iter_mut().find(|(k, _)| k == part).unwrap().1,
                Value::Array(items) => &mut items[0],
                _ => unreachable!(),
            };
            if let Value::Array(items) = node {
                node = &mut items[0];
            }
        }
        let Value::Table(entries) = node else {
            panic!("{path:?}")
        };
        entries.push(("not_a_key".into(), Value::Int(1)));
        let e = crate::document::Document::read(&doc)
            .err()
            .expect("an unknown key is refused");
        let list = e.message.split("allowed keys: ").nth(1).expect(&e.message);
        list.split(", ").map(String::from).collect()
    }

    #[test]
    fn every_table_lists_the_keys_its_reader_accepts() {
        let keys = keys();
        let children = |prefix: &str| -> Vec<String> {
            keys.iter()
                .filter_map(|k| {
                    let rest = if prefix.is_empty() {
                        Some(k.path.as_str())
                    } else {
                        k.path.strip_prefix(prefix)?.strip_prefix('.')
                    };
                    rest.filter(|r| !r.contains('.')).map(String::from)
                })
                .collect()
        };
        for (path, prefix) in [
            (&[][..], ""),
            (&["measure"][..], "measure"),
            (&["link"][..], "link"),
            (&["flows"][..], "flows[]"),
            (&["flows", "host"][..], "flows[].host"),
            (&["flows", "size"][..], "flows[].size"),
            (&["flows", "arrivals"][..], "flows[].arrivals"),
            (&["host"][..], "host"),
        ] {
            let mut listed = children(prefix);
            if prefix.is_empty() {
                listed = listed
                    .into_iter()
                    .map(|k| k.trim_end_matches("[]").to_string())
                    .collect();
            }
            let listed: Vec<String> = listed
                .into_iter()
                .map(|k| k.trim_end_matches("[]").to_string())
                .collect();
            assert_eq!(allowed_keys(path), listed, "{prefix}");
        }
    }

    #[test]
    fn presets_resolve_the_default_first() {
        let p = presets();
        assert_eq!(p.len(), 4);
        assert_eq!(p[0].0, "kernel-lab");
        assert_eq!(p[0].1.preset, crate::host::DEFAULT_PRESET);
        for (name, host) in &p {
            assert_eq!(
                host.preset.name(),
                *name,
                "the name a preset writes is the one it is read by"
            );
        }
        // A fixed jitter, not one group RTT (the catalog resolves for an RTT of 1 ns).
        assert_eq!(p[0].1.start_jitter_ns, crate::host::KERNEL_LAB_START_JITTER_NS);
        assert!(p[1].1.is_ideal());
        assert_eq!(p[2].1.start_jitter_ns, 1);
    }
}
