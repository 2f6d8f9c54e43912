//! Configuration of the congestion controls: one tagged enum, kernel defaults, unknown fields rejected,
//! built into a trait object once per flow. `algorithms()` describes every algorithm and parameter for
//! `ccfair list` and for the front end's validation, so the parameter set is defined in exactly one place.

use ccfair_core::{ParamDoc, Rng};
use serde::{Deserialize, Serialize};

use crate::CongestionControl;
use crate::cubic::{Cubic, CubicParams};
use crate::dctcp::{Dctcp, DctcpParams};
use crate::prague::{Prague, PragueParams};
use crate::reno::Reno;

/// Parameters of Reno: none.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RenoParams {}

/// A congestion control and its parameters, as a scenario names them (`{"name": "cubic", "beta": 0.7}`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "name", rename_all = "lowercase")]
pub enum CcConfig {
    Reno(RenoParams),
    Cubic(CubicParams),
    Dctcp(DctcpParams),
    Prague(PragueParams),
}

/// A parameter value out of range or otherwise unusable.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigError {
    /// The parameter's name.
    pub field: String,
    /// What is allowed.
    pub message: String,
}

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.field, self.message)
    }
}

impl std::error::Error for ConfigError {}

/// One algorithm, for listings.
#[derive(Clone, Debug)]
pub struct AlgorithmInfo {
    pub name: &'static str,
    pub aliases: &'static [&'static str],
    pub summary: &'static str,
    pub source: &'static str,
    pub params: &'static [ParamDoc],
    /// The defaults, as a JSON object.
    pub defaults: serde_json::Value,
}

impl CcConfig {
    /// The configuration named `name` (or an alias) with the given parameters (a JSON object; missing
    /// parameters take the kernel defaults, unknown ones are rejected), validated.
    pub fn from_name_and_params(name: &str, params: &serde_json::Value) -> Result<CcConfig, ConfigError> {
        let canonical = algorithms()
            .into_iter()
            .find(|a| a.name == name || a.aliases.contains(&name))
            .map(|a| a.name)
            .ok_or_else(|| ConfigError {
                field: "cc".into(),
                message: format!(
                    "unknown congestion control {name:?}; available: {}",
                    algorithms().iter().map(|a| a.name).collect::<Vec<_>>().join(", ")
                ),
            })?;
        let mut obj = match params {
            serde_json::Value::Null => serde_json::Map::new(),
            serde_json::Value::Object(m) => m.clone(),
            _ => {
                return Err(ConfigError {
                    field: "cc_params".into(),
                    message: "must be a table".into(),
                });
            }
        };
        obj.insert("name".into(), serde_json::Value::String(canonical.into()));
        let cfg: CcConfig =
            serde_json::from_value(serde_json::Value::Object(obj)).map_err(|e| ConfigError {
                field: "cc_params".into(),
                message: e.to_string(),
            })?;
        cfg.validate().map_err(|e| ConfigError {
            field: format!("cc_params.{}", e.field),
            message: e.message,
        })?;
        Ok(cfg)
    }

    pub fn name(&self) -> &'static str {
        match self {
            CcConfig::Reno(_) => "reno",
            CcConfig::Cubic(_) => "cubic",
            CcConfig::Dctcp(_) => "dctcp",
            CcConfig::Prague(_) => "prague",
        }
    }

    pub fn validate(&self) -> Result<(), ConfigError> {
        match self {
            CcConfig::Reno(_) => Ok(()),
            CcConfig::Cubic(p) => p.validate(),
            CcConfig::Dctcp(p) => p.validate(),
            CcConfig::Prague(p) => p.validate(),
        }
    }

    /// A fresh instance for one connection. `rng` is the flow's own stream, for algorithms that randomize.
    pub fn build(&self, _rng: Rng) -> Box<dyn CongestionControl> {
        match self {
            CcConfig::Reno(_) => Box::new(Reno),
            CcConfig::Cubic(p) => Box::new(Cubic::new(p.clone())),
            CcConfig::Dctcp(p) => Box::new(Dctcp::new(p.clone())),
            CcConfig::Prague(p) => Box::new(Prague::new(p.clone())),
        }
    }
}

/// Every available algorithm with its parameters and defaults.
pub fn algorithms() -> Vec<AlgorithmInfo> {
    let defaults = |c: CcConfig| {
        let mut v = serde_json::to_value(c).expect("configs serialize");
        v.as_object_mut().map(|m| m.remove("name"));
        v
    };
    vec![
        AlgorithmInfo {
            name: "reno",
            aliases: &["newreno"],
            summary: "NewReno: slow start, +1 packet per RTT, halve on loss",
            source: "Linux net/ipv4/tcp_cong.c",
            params: &[],
            defaults: defaults(CcConfig::Reno(RenoParams {})),
        },
        AlgorithmInfo {
            name: "cubic",
            aliases: &[],
            summary: "CUBIC v2.3: cubic window growth around W_max, beta 0.7, HyStart",
            source: "Linux net/ipv4/tcp_cubic.c (RFC 9438 differences in the file header)",
            params: crate::cubic::PARAMS,
            defaults: defaults(CcConfig::Cubic(CubicParams::default())),
        },
        AlgorithmInfo {
            name: "dctcp",
            aliases: &[],
            summary: "DCTCP: Reno growth, cwnd x (1 - alpha/2) on CE marks, alpha an EWMA of the marked fraction",
            source: "Linux net/ipv4/tcp_dctcp.c (RFC 8257); needs ECN, ECT(0) or ECT(1) with ecn = \"l4s\"",
            params: crate::dctcp::PARAMS,
            defaults: defaults(CcConfig::Dctcp(DctcpParams::default())),
        },
        AlgorithmInfo {
            name: "prague",
            aliases: &[],
            summary: "TCP Prague v0.7: L4S scalable control, RTT independence below 25 ms, paced, ECT(1), AccECN",
            source: "L4STeam/linux net/ipv4/tcp_prague.c v0.7 (RFC 9331 Appendix A)",
            params: crate::prague::PARAMS,
            defaults: defaults(CcConfig::Prague(PragueParams::default())),
        },
    ]
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
        assert!(e.message.contains("unknown field `betta`"), "{e}");
        let e = CcConfig::from_name_and_params("cubic", &json!({"beta": 1.5})).unwrap_err();
        assert_eq!(e.field, "cc_params.beta");
        let e = CcConfig::from_name_and_params("vegas", &json!({})).unwrap_err();
        assert!(e.message.contains("available: reno, cubic"), "{e}");
        assert_eq!(
            CcConfig::from_name_and_params("prague", &json!({}))
                .unwrap()
                .name(),
            "prague"
        );
        let e = CcConfig::from_name_and_params("reno", &json!({"x": 1})).unwrap_err();
        assert!(e.message.contains("unknown field"), "{e}");
        assert_eq!(
            CcConfig::from_name_and_params("newreno", &json!(null))
                .unwrap()
                .name(),
            "reno"
        );
    }
}
