//! Configuration of the congestion controls: one tagged enum, kernel defaults, unknown fields rejected,
//! built into a trait object once per flow. `algorithms()` describes every algorithm and parameter for
//! `ccfair list` and for the front end's validation, so the parameter set is defined in exactly one place (each
//! algorithm's params struct), and each algorithm's name in one row of the registry below.

use ccfair_core::{FieldError, ParamDoc, Rng, names};
use serde::{Deserialize, Serialize};

use crate::bbr::{self, Bbr1, Bbr1Params, Bbr2Params, Bbr3Params};
use crate::cubic::{Cubic, CubicParams};
use crate::dctcp::{Dctcp, DctcpParams};
use crate::prague::{Prague, PragueParams};
use crate::reno::{Reno, RenoParams};
use crate::{CcFlags, CongestionControl};

/// One algorithm, for listings.
#[derive(Clone, Debug)]
pub struct AlgorithmInfo {
    pub name: &'static str,
    pub aliases: &'static [&'static str],
    pub summary: &'static str,
    pub source: &'static str,
    pub params: &'static [ParamDoc],
    /// What the time series' algorithm columns (`cc_mode`, `cc_aux`, ...) hold for this algorithm, as its
    /// `vars` fills them.
    pub vars: &'static str,
    /// The defaults, as a JSON object.
    pub defaults: serde_json::Value,
}

/// The defaults of `c` as a JSON object, without the name.
fn defaults(c: CcConfig) -> serde_json::Value {
    let mut v = serde_json::to_value(c).expect("configs serialize");
    v.as_object_mut().map(|m| m.remove("name"));
    v
}

/// The registry: one row per algorithm gives its name once, and from it the serde tag of its [`CcConfig`]
/// variant, [`CcConfig::name`], the parameter type's `NAME` (which the built module reports as its name) and
/// its [`algorithms`] entry.
macro_rules! registry {
    ($(
        $variant:ident($params:ty) {
            name: $name:literal,
            aliases: $aliases:expr,
            summary: $summary:expr,
            source: $source:expr,
            params: $param_docs:expr,
            flags: |$fp:pat_param| $flags:expr,
            vars: $vars:expr,
            build: |$p:ident, $rng:ident| $build:expr $(,)?
        }
    ),* $(,)?) => {
        /// A congestion control and its parameters, as a scenario names them (`{"name": "cubic", "beta": 0.7}`).
        #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
        #[serde(tag = "name")]
        pub enum CcConfig {
            $( #[serde(rename = $name)] $variant($params), )*
        }

        $(
            impl $params {
                #[doc = concat!("The algorithm's name: `", $name, "`.")]
                pub const NAME: &'static str = $name;
            }
        )*

        impl CcConfig {
            pub fn name(&self) -> &'static str {
                match self {
                    $( CcConfig::$variant(_) => $name, )*
                }
            }

            pub fn validate(&self) -> Result<(), FieldError> {
                match self {
                    $( CcConfig::$variant(p) => p.validate(), )*
                }
            }

            /// What the algorithm asks of the stack, from its description alone (no instance is built); the
            /// contract tests check that a built instance reports the same.
            pub fn flags(&self) -> CcFlags {
                match self {
                    $( CcConfig::$variant($fp) => $flags, )*
                }
            }

            /// A fresh instance for one connection. `rng` is the flow's own stream, for algorithms that
            /// randomize.
            pub fn build(&self, rng: Rng) -> Box<dyn CongestionControl> {
                match self {
                    $( CcConfig::$variant($p) => {
                        let $rng = rng;
                        Box::new($build)
                    } )*
                }
            }
        }

        /// Every available algorithm with its parameters and defaults.
        pub fn algorithms() -> Vec<AlgorithmInfo> {
            vec![
                $( AlgorithmInfo {
                    name: $name,
                    aliases: $aliases,
                    summary: $summary,
                    source: $source,
                    params: $param_docs,
                    vars: $vars,
                    defaults: defaults(CcConfig::$variant(<$params>::default())),
                }, )*
            ]
        }
    };
}

registry! {
    Reno(RenoParams) {
        name: "reno",
        aliases: &["newreno"],
        summary: "NewReno: slow start, +1 packet per RTT, halve on loss",
        source: "Linux net/ipv4/tcp_cong.c",
        params: &[],
        flags: |_| CcFlags::default(),
        vars: "none: cc_mode is -1, the other cc_* columns NaN",
        build: |_p, _rng| Reno,
    },
    Cubic(CubicParams) {
        name: "cubic",
        aliases: &[],
        summary: "CUBIC v2.3: cubic window growth around W_max, beta 0.7, HyStart",
        source: "Linux net/ipv4/tcp_cubic.c (RFC 9438 differences in the file header)",
        params: crate::cubic::PARAMS,
        flags: |_| CcFlags::default(),
        vars: "cc_aux: W_max, the window before the last reduction (packets); cc_mode -1, the other cc_* NaN",
        build: |p, _rng| Cubic::new(p.clone()),
    },
    Dctcp(DctcpParams) {
        name: "dctcp",
        aliases: &[],
        summary: "DCTCP: Reno growth, cwnd x (1 - alpha/2) on CE marks, alpha an EWMA of the marked fraction",
        source: "Linux net/ipv4/tcp_dctcp.c (RFC 8257); needs ECN, ECT(0) or ECT(1) with ecn = \"l4s\"",
        params: crate::dctcp::PARAMS,
        flags: |_| CcFlags { needs_ecn: true, dctcp_echo: true, ..CcFlags::default() },
        vars: "cc_aux: alpha (0..1), the moving average of the marked fraction; cc_mode -1, the other cc_* NaN",
        build: |p, _rng| Dctcp::new(p.clone()),
    },
    Prague(PragueParams) {
        name: "prague",
        aliases: &[],
        summary: "TCP Prague v0.7: L4S scalable control, RTT independence below 25 ms, paced, ECT(1), AccECN",
        source: "L4STeam/linux net/ipv4/tcp_prague.c v0.7 (RFC 9331 Appendix A)",
        params: crate::prague::PARAMS,
        flags: |_| crate::prague::FLAGS,
        vars: "cc_mode: 0 fractional window, 1 rate mode; cc_aux: alpha (0..1); cc_bw_bps: the internal rate",
        build: |p, _rng| Prague::new(p.clone()),
    },
    Bbr(Bbr1Params) {
        name: "bbr",
        aliases: &["bbr1"],
        summary: "BBRv1: model-based (max bw x min RTT), STARTUP/DRAIN/PROBE_BW gain cycle/PROBE_RTT, paced",
        source: "Linux mainline net/ipv4/tcp_bbr.c",
        params: bbr::v1::PARAMS,
        flags: |_| CcFlags { cong_control: true, needs_pacing: true, ..CcFlags::default() },
        vars: "cc_mode: 0 STARTUP, 1 DRAIN, 2 PROBE_BW, 3 PROBE_RTT; cc_aux: index into the 8-phase PROBE_BW gain cycle (0 the 1.25 phase, 1 the 0.75 phase); cc_bw_bps: bbr_bw, the long-term (policer) estimate lt_bw while it is in use, when cc_pacing_gain stays 1 in PROBE_BW; cc_min_rtt_ns, cc_pacing_gain, cc_cwnd_gain: the model; cc_inflight_hi/lo NaN",
        build: |p, rng| Bbr1::new(p.clone(), rng),
    },
    Bbr2(Bbr2Params) {
        name: "bbr2",
        aliases: &[],
        summary: "BBRv2 alpha: BBR with loss/ECN bounds (inflight_hi/lo, bw_lo), PROBE_BW DOWN/CRUISE/REFILL/UP",
        source: "google/bbr v2alpha net/ipv4/tcp_bbr2.c",
        params: bbr::v2::PARAMS,
        // `TCP_CONG_WANTS_CE_EVENTS` with `bbr_precise_ece_ack`: with ECN allowed the receiver echoes each
        // packet's CE state (DCTCP's `dctcp_ece_ack_update`).
        flags: |p| CcFlags { cong_control: true, needs_pacing: true, dctcp_echo: p.ecn_enable, ..CcFlags::default() },
        vars: "cc_mode: as bbr; cc_aux: the PROBE_BW phase (0 UP, 1 DOWN, 2 CRUISE, 3 REFILL); cc_bw_bps, cc_min_rtt_ns, gains: the model; cc_inflight_hi/lo: the bounds, NaN while unset",
        build: |p, rng| bbr::v2::bbr2(p, rng),
    },
    Bbr3(Bbr3Params) {
        name: "bbr3",
        aliases: &[],
        summary: "BBRv3: v2's model with STARTUP 2.77/2.0, PROBE_DOWN 0.91, PROBE_UP cwnd gain 2.25",
        source: "google/bbr v3 branch net/ipv4/tcp_bbr.c (BBR_VERSION 3)",
        params: bbr::v3::PARAMS,
        flags: |p| CcFlags { cong_control: true, needs_pacing: true, dctcp_echo: p.ecn_low, ..CcFlags::default() },
        vars: "cc_mode: as bbr; cc_aux: the PROBE_BW phase (0 UP, 1 DOWN, 2 CRUISE, 3 REFILL); cc_bw_bps, cc_min_rtt_ns, gains: the model; cc_inflight_hi/lo: the bounds, NaN while unset",
        build: |p, rng| bbr::v3::bbr3(p, rng),
    },
}

impl CcConfig {
    /// The configuration named `name` (or an alias) with the given parameters (a JSON object; missing
    /// parameters take the kernel defaults, unknown ones are rejected), validated.
    pub fn from_name_and_params(name: &str, params: &serde_json::Value) -> Result<CcConfig, FieldError> {
        let registry = algorithms();
        let Some(info) = registry
            .iter()
            .find(|a| a.name == name || a.aliases.contains(&name))
        else {
            let names: Vec<&str> = registry.iter().map(|a| a.name).collect();
            let spellings: Vec<&str> = registry
                .iter()
                .flat_map(|a| std::iter::once(a.name).chain(a.aliases.iter().copied()))
                .collect();
            return FieldError::err(
                "cc",
                format!(
                    "unknown congestion control {name:?}; available: {}{}",
                    names.join(", "),
                    names::did_you_mean(name, &spellings)
                ),
            );
        };
        let canonical = info.name;
        let mut obj = match params {
            serde_json::Value::Null => serde_json::Map::new(),
            serde_json::Value::Object(m) => m.clone(),
            _ => return FieldError::err("cc_params", "must be a table"),
        };
        // Unknown parameters are named here, in the queue disciplines' wording, before serde's own.
        let allowed: Vec<&str> = info.params.iter().map(|p| p.name).collect();
        if let Some(key) = obj.keys().find(|k| !allowed.contains(&k.as_str())) {
            return FieldError::err(
                FieldError::path("cc_params", key),
                names::unknown_parameter(
                    key,
                    &allowed,
                    names::closest(key, &allowed),
                    &format!("{canonical} has no parameters"),
                ),
            );
        }
        obj.insert("name".into(), serde_json::Value::String(canonical.into()));
        let cfg: CcConfig = serde_json::from_value(serde_json::Value::Object(obj))
            .map_err(|e| FieldError::new("cc_params", e.to_string()))?;
        cfg.validate().map_err(|e| e.prefixed("cc_params"))?;
        Ok(cfg)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn defaults_and_unknown_fields() {
        let c = CcConfig::from_name_and_params("cubic", &json!({})).unwrap();
        assert_eq!(c, CcConfig::Cubic(CubicParams::default()));
        let c = CcConfig::from_name_and_params("cubic", &json!({"beta": 0.8})).unwrap();
        let CcConfig::Cubic(p) = c else { panic!() };
        assert_eq!(p.beta, 0.8);
        let e = CcConfig::from_name_and_params("cubic", &json!({"betta": 0.8})).unwrap_err();
        assert_eq!(e.field, "cc_params.betta");
        assert!(
            e.message
                .starts_with("unknown parameter \"betta\"; allowed: beta, c, ")
                && e.message.ends_with("; did you mean \"beta\"?"),
            "{e}"
        );
        let e = CcConfig::from_name_and_params("cubic", &json!({"beta": 1.5})).unwrap_err();
        assert_eq!(e.field, "cc_params.beta");
        let e = CcConfig::from_name_and_params("vegas", &json!({})).unwrap_err();
        assert!(e.message.contains("available: reno, cubic"), "{e}");
        assert!(!e.message.contains("did you mean"), "{e}");
        for (written, meant) in [
            ("Cubic", "cubic"),
            ("bbrv2", "bbr2"),
            ("BBR1", "bbr1"),
            ("new-reno", "newreno"),
        ] {
            let e = CcConfig::from_name_and_params(written, &json!({})).unwrap_err();
            assert_eq!(e.field, "cc");
            assert!(e.message.ends_with(&format!("; did you mean {meant:?}?")), "{e}");
        }
        assert_eq!(
            CcConfig::from_name_and_params("prague", &json!({}))
                .unwrap()
                .name(),
            "prague"
        );
        let e = CcConfig::from_name_and_params("reno", &json!({"x": 1})).unwrap_err();
        assert_eq!(
            (e.field.as_str(), e.message.as_str()),
            (
                "cc_params.x",
                "unknown parameter \"x\"; allowed: none (reno has no parameters)"
            )
        );
        assert_eq!(
            CcConfig::from_name_and_params("newreno", &json!(null))
                .unwrap()
                .name(),
            "reno"
        );
    }

    /// The parameters an algorithm lists are the ones its configuration reads: every serialized field of
    /// its defaults is listed (the listed names are what unknown parameters are checked against), and each
    /// listed one is accepted with its default value.
    #[test]
    fn the_listed_parameters_are_the_configuration_fields() {
        for a in algorithms() {
            let names: Vec<&str> = a.params.iter().map(|p| p.name).collect();
            let defaults = a.defaults.as_object().unwrap();
            for key in defaults.keys() {
                assert!(names.contains(&key.as_str()), "{}: {key} is not listed", a.name);
            }
            for (key, value) in defaults {
                let one = serde_json::json!({ key: value });
                CcConfig::from_name_and_params(a.name, &one).unwrap_or_else(|e| panic!("{}: {e}", a.name));
            }
        }
    }

    /// The registry gives each algorithm one name: its serde tag, `CcConfig::name`, its listing and the name
    /// the built module reports agree, and no two algorithms share a name or an alias.
    #[test]
    fn every_algorithm_has_one_name() {
        let infos = algorithms();
        let mut seen: Vec<&str> = Vec::new();
        for info in &infos {
            let cfg = CcConfig::from_name_and_params(info.name, &json!({})).unwrap();
            let tag = serde_json::to_value(&cfg).unwrap()["name"].clone();
            assert_eq!(tag, json!(info.name));
            assert_eq!(cfg.name(), info.name);
            let built = cfg.build(Rng::stream(1, ccfair_core::rng::StreamId::Cc(0)));
            assert_eq!(built.name(), info.name);
            for n in std::iter::once(&info.name).chain(info.aliases) {
                assert!(!seen.contains(n), "{n} is listed twice");
                seen.push(n);
            }
        }
        assert_eq!(infos.len(), 7);
    }

    #[test]
    fn bbr_family_names_aliases_and_params() {
        assert_eq!(
            CcConfig::from_name_and_params("bbr1", &json!({})).unwrap().name(),
            "bbr"
        );
        assert_eq!(
            CcConfig::from_name_and_params("bbr2", &json!({"ecn_enable": true})).unwrap(),
            CcConfig::Bbr2(Bbr2Params { ecn_enable: true })
        );
        assert_eq!(
            CcConfig::from_name_and_params("bbr3", &json!({})).unwrap(),
            CcConfig::Bbr3(Bbr3Params { ecn_low: false })
        );
        let e = CcConfig::from_name_and_params("bbr", &json!({"high_gain": 3})).unwrap_err();
        assert_eq!(e.field, "cc_params.high_gain");
        assert!(
            e.message.ends_with("allowed: none (bbr has no parameters)"),
            "{e}"
        );
        let e = CcConfig::from_name_and_params("bbr3", &json!({"ecn_low": 1})).unwrap_err();
        assert_eq!(e.field, "cc_params");
        // Each version builds the module it names.
        for (name, module) in [("bbr", "bbr"), ("bbr2", "bbr2"), ("bbr3", "bbr3")] {
            let cc = CcConfig::from_name_and_params(name, &json!({})).unwrap();
            let built = cc.build(Rng::stream(1, ccfair_core::rng::StreamId::Cc(0)));
            assert_eq!(built.name(), module);
            assert!(built.flags().cong_control && built.flags().needs_pacing);
        }
    }
}
