//! Configuration of the queue disciplines: one tagged enum with the kernel/RFC defaults, unknown fields
//! rejected, built into a trait object once per run. `qdiscs()` describes every discipline and parameter for
//! `ccfair list` and for the front end's validation, so the parameter set is defined in exactly one place
//! (the params structs in each qdisc's file).

use ccfair_core::rng::StreamId;
use ccfair_core::{PacketMeta, ParamDoc, Rng};
use serde::{Deserialize, Serialize};

use crate::codel::{Codel, CodelParams};
use crate::dualpi2::{DualPi2, DualPi2Params};
use crate::fq_codel::{FqCodel, FqCodelParams};
use crate::gsp::{Gsp, GspParams};
use crate::pie::{Pie, PieParams};
use crate::ppv::{Ppv, PpvMarker, PpvParams};
use crate::red::{Red, RedParams};
use crate::step::{Step, StepParams};
use crate::{Fifo, Qdisc};

/// A queue's hard limit, in packets or in bytes (`pfifo` / `bfifo`).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum QueueLimit {
    Packets(u32),
    Bytes(u64),
}

impl QueueLimit {
    /// Whether a packet of `len` bytes fits on top of the current backlog.
    #[inline]
    pub fn admits(self, backlog_packets: u32, backlog_bytes: u64, len: u32) -> bool {
        match self {
            QueueLimit::Packets(n) => backlog_packets < n,
            QueueLimit::Bytes(b) => backlog_bytes + len as u64 <= b,
        }
    }

    /// The limit in bytes, counting full `mtu_bytes` packets for a packet limit.
    pub fn bytes(self, mtu_bytes: u32) -> u64 {
        match self {
            QueueLimit::Packets(n) => n as u64 * mtu_bytes as u64,
            QueueLimit::Bytes(b) => b,
        }
    }

    /// Packets to preallocate room for (bounded, so a huge limit does not reserve memory it may never use).
    pub fn preallocation(self, mtu_bytes: u32) -> usize {
        let n = match self {
            QueueLimit::Packets(n) => n as u64,
            QueueLimit::Bytes(b) => b / (mtu_bytes.max(64) as u64 / 4).max(1),
        };
        n.min(1 << 16) as usize
    }
}

/// A parameter value out of range or otherwise unusable: the parameter's name and what is allowed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigError {
    pub field: String,
    pub message: String,
}

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.field, self.message)
    }
}

impl std::error::Error for ConfigError {}

pub(crate) fn err<T>(field: &str, message: impl Into<String>) -> Result<T, ConfigError> {
    Err(ConfigError {
        field: field.into(),
        message: message.into(),
    })
}

pub(crate) fn check_positive_ns(field: &str, ns: u64) -> Result<(), ConfigError> {
    if ns == 0 {
        return err(field, "must be a positive duration");
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
    fn rng(&self) -> Rng {
        Rng::stream(self.seed, StreamId::Qdisc(0))
    }
}

/// A queue discipline and its parameters (`{"name": "codel", "limit": {"packets": 100}, "target_ns": ...}`).
/// The buffer limit is part of every variant.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "name", rename_all = "snake_case", deny_unknown_fields)]
pub enum AqmConfig {
    /// Tail drop.
    Fifo {
        limit: QueueLimit,
    },
    Red(RedParams),
    Codel(CodelParams),
    FqCodel(FqCodelParams),
    Pie(PieParams),
    Gsp(GspParams),
    Ppv(PpvParams),
    #[serde(rename = "dualpi2")]
    DualPi2(DualPi2Params),
    Step(StepParams),
}

/// One queue discipline, for listings.
#[derive(Clone, Debug)]
pub struct QdiscInfo {
    pub name: &'static str,
    pub summary: &'static str,
    pub source: &'static str,
    /// Parameters: `limit` (which the scenario's buffer sets) first, then the discipline's own.
    pub params: Vec<ParamDoc>,
    /// The defaults of those parameters, as a JSON object.
    pub defaults: serde_json::Value,
}

const LIMIT_DOC: ParamDoc = ParamDoc {
    name: "limit",
    allowed: "packets or bytes",
    doc: "set by link.buffer",
};

/// Every available queue discipline.
pub fn qdiscs() -> Vec<QdiscInfo> {
    let defaults = |c: AqmConfig| {
        let mut v = serde_json::to_value(c).expect("configs serialize");
        if let Some(m) = v.as_object_mut() {
            m.remove("name");
            m.remove("limit");
        }
        v
    };
    let params = |own: &[ParamDoc]| [&[LIMIT_DOC], own].concat();
    vec![
        QdiscInfo {
            name: "fifo",
            summary: "tail drop at a packet or byte limit",
            source: "Linux net/sched/sch_fifo.c (pfifo / bfifo)",
            params: params(&[]),
            defaults: serde_json::json!({}),
        },
        QdiscInfo {
            name: "red",
            summary: "Random Early Detection: EWMA of the backlog, marking ramp between min and max",
            source: "Linux include/net/red.h, net/sched/sch_red.c; iproute2 tc/q_red.c (Floyd & Jacobson 1993)",
            params: params(crate::red::PARAMS),
            defaults: defaults(AqmConfig::Red(RedParams::default())),
        },
        QdiscInfo {
            name: "codel",
            summary: "CoDel: drop when sojourn stays above 5 ms for 100 ms, then at interval/sqrt(count)",
            source: "RFC 8289; Linux include/net/codel_impl.h, net/sched/sch_codel.c",
            params: params(crate::codel::PARAMS),
            defaults: defaults(AqmConfig::Codel(CodelParams::default())),
        },
        QdiscInfo {
            name: "fq_codel",
            summary: "FQ-CoDel: 1024 hashed queues, DRR with new/old lists, CoDel per queue, ECN on",
            source: "RFC 8290; Linux net/sched/sch_fq_codel.c",
            params: params(crate::fq_codel::PARAMS),
            defaults: defaults(AqmConfig::FqCodel(FqCodelParams::default())),
        },
        QdiscInfo {
            name: "pie",
            summary: "PIE: PI control of a drop probability on queue delay, target 15 ms",
            source: "RFC 8033; Linux include/net/pie.h, net/sched/sch_pie.c",
            params: params(crate::pie::PARAMS),
            defaults: defaults(AqmConfig::Pie(PieParams::default())),
        },
        QdiscInfo {
            name: "gsp",
            summary: "Global Synchronization Protection: one drop per (adaptive) interval above a threshold",
            source: "Lautenschlaeger & Francini, HPSR 2015 / arXiv 1602.05333; draft-lauten-aqm-gsp-03",
            params: params(crate::gsp::PARAMS),
            defaults: defaults(AqmConfig::Gsp(GspParams::default())),
        },
        QdiscInfo {
            name: "ppv",
            summary: "Per-Packet Value: edge marker with a TVF per flow, bottleneck drops the lowest values",
            source: "Nadas et al., GLOBECOM 2016; Gombos et al., ANRW 2018",
            params: params(crate::ppv::PARAMS),
            defaults: defaults(AqmConfig::Ppv(PpvParams::default())),
        },
        QdiscInfo {
            name: "dualpi2",
            summary: "DualQ Coupled AQM: L4S queue with a 1 ms step, classic PI2 with p_C = p'^2, p_L = 2p'",
            source: "RFC 9332; Linux net/sched/sch_dualpi2.c",
            params: params(crate::dualpi2::PARAMS),
            defaults: defaults(AqmConfig::DualPi2(DualPi2Params::default())),
        },
        QdiscInfo {
            name: "step",
            summary: "step marking: CE above a sojourn (or queue-length) threshold K, DCTCP/L4S style",
            source: "RFC 8257 section 3.1; RFC 9332 (L queue step)",
            params: params(crate::step::PARAMS),
            defaults: defaults(AqmConfig::Step(StepParams::default())),
        },
    ]
}

impl AqmConfig {
    /// The configuration named `name` with `params` (a JSON object; missing parameters take the kernel/RFC
    /// defaults, unknown ones are rejected) and the buffer `limit`, validated for a link of `mtu_bytes`.
    /// Errors name the parameter (`field` = the parameter's name, or `aqm` for the discipline itself).
    pub fn from_name_and_params(
        name: &str,
        params: &serde_json::Value,
        limit: QueueLimit,
        mtu_bytes: u32,
    ) -> Result<AqmConfig, ConfigError> {
        let infos = qdiscs();
        let Some(info) = infos.iter().find(|q| q.name == name) else {
            let names: Vec<&str> = infos.iter().map(|q| q.name).collect();
            return err(
                "aqm",
                format!(
                    "unknown queue discipline {name:?}; available: {}",
                    names.join(", ")
                ),
            );
        };
        let obj = match params {
            serde_json::Value::Null => serde_json::Map::new(),
            serde_json::Value::Object(m) => m.clone(),
            _ => return err("aqm", "parameters must be a table"),
        };
        for key in obj.keys() {
            if key == "limit" {
                return err(key, "the queue limit is set by link.buffer");
            }
            if key == "name" {
                return err(key, "is the discipline's name, not a parameter");
            }
            if !info.params.iter().any(|p| p.name == key) {
                let allowed: Vec<&str> = info
                    .params
                    .iter()
                    .map(|p| p.name)
                    .filter(|n| *n != "limit")
                    .collect();
                let allowed = if allowed.is_empty() {
                    format!("none ({name} has no parameters besides the buffer)")
                } else {
                    allowed.join(", ")
                };
                return err(key, format!("unknown parameter {key:?}; allowed: {allowed}"));
            }
        }
        let with = |extra: &serde_json::Map<String, serde_json::Value>| {
            let mut m = extra.clone();
            m.insert("name".into(), serde_json::Value::String(name.into()));
            m.insert(
                "limit".into(),
                serde_json::to_value(limit).expect("limits serialize"),
            );
            serde_json::from_value::<AqmConfig>(serde_json::Value::Object(m))
        };
        let cfg = match with(&obj) {
            Ok(c) => c,
            Err(e) => {
                // Name the culprit: the first parameter that fails on its own.
                for (key, value) in &obj {
                    let mut one = serde_json::Map::new();
                    one.insert(key.clone(), value.clone());
                    if let Err(e1) = with(&one) {
                        return err(key, format!("{e1}"));
                    }
                }
                return err("aqm", e.to_string());
            }
        };
        cfg.validate(mtu_bytes)?;
        Ok(cfg)
    }

    pub fn name(&self) -> &'static str {
        match self {
            AqmConfig::Fifo { .. } => "fifo",
            AqmConfig::Red(_) => "red",
            AqmConfig::Codel(_) => "codel",
            AqmConfig::FqCodel(_) => "fq_codel",
            AqmConfig::Pie(_) => "pie",
            AqmConfig::Gsp(_) => "gsp",
            AqmConfig::Ppv(_) => "ppv",
            AqmConfig::DualPi2(_) => "dualpi2",
            AqmConfig::Step(_) => "step",
        }
    }

    pub fn limit(&self) -> QueueLimit {
        match self {
            AqmConfig::Fifo { limit } => *limit,
            AqmConfig::Red(p) => p.limit,
            AqmConfig::Codel(p) => p.limit,
            AqmConfig::FqCodel(p) => p.limit,
            AqmConfig::Pie(p) => p.limit,
            AqmConfig::Gsp(p) => p.limit,
            AqmConfig::Ppv(p) => p.limit,
            AqmConfig::DualPi2(p) => p.limit,
            AqmConfig::Step(p) => p.limit,
        }
    }

    /// Checks the parameters for a link of `mtu_bytes` (RED derives its thresholds from the limit in bytes).
    pub fn validate(&self, mtu_bytes: u32) -> Result<(), ConfigError> {
        match self {
            AqmConfig::Fifo { .. } => Ok(()),
            AqmConfig::Red(p) => p.validate(mtu_bytes),
            AqmConfig::Codel(p) => p.validate(),
            AqmConfig::FqCodel(p) => p.validate(),
            AqmConfig::Pie(p) => p.validate(),
            AqmConfig::Gsp(p) => p.validate(),
            AqmConfig::Ppv(p) => p.validate(),
            AqmConfig::DualPi2(p) => p.validate(),
            AqmConfig::Step(p) => p.validate(),
        }
    }

    /// Checks what depends on the scenario's flows: PPV's weights, one per flow group.
    pub fn validate_groups(&self, groups: usize) -> Result<(), ConfigError> {
        match self {
            AqmConfig::Ppv(p) => p.validate_groups(groups),
            _ => Ok(()),
        }
    }

    /// The qdisc, ready for a run. Validates first, so a bad configuration is an error, never a panic.
    pub fn build<P: PacketMeta + Send + 'static>(
        &self,
        ctx: &BuildContext,
    ) -> Result<Box<dyn Qdisc<P>>, ConfigError> {
        self.validate(ctx.mtu_bytes)?;
        let mtu = ctx.mtu_bytes;
        Ok(match self {
            AqmConfig::Fifo { limit } => Box::new(Fifo::new(*limit)),
            AqmConfig::Red(p) => Box::new(Red::new(p, mtu, ctx.rate_bps, ctx.rng())),
            AqmConfig::Codel(p) => Box::new(Codel::new(p, mtu)),
            AqmConfig::FqCodel(p) => Box::new(FqCodel::new(p, mtu, ctx.rng())),
            AqmConfig::Pie(p) => Box::new(Pie::new(p, mtu, ctx.rng())),
            AqmConfig::Gsp(p) => Box::new(Gsp::new(p, mtu, ctx.rate_bps)),
            AqmConfig::Ppv(p) => Box::new(Ppv::new(p, mtu)),
            AqmConfig::DualPi2(p) => Box::new(DualPi2::new(p, mtu, ctx.rng())),
            AqmConfig::Step(p) => Box::new(Step::new(p, mtu)),
        })
    }

    /// Bytes one queued packet of type `P` takes in this discipline's storage (for the estimate of a run's
    /// memory).
    pub fn packet_slot_bytes<P>(&self) -> u64 {
        (match self {
            AqmConfig::FqCodel(_) => crate::pool::slot_bytes::<P>(),
            AqmConfig::Ppv(_) => crate::pool::slot_bytes::<P>() + crate::heap::BYTES_PER_ID,
            AqmConfig::DualPi2(_) => crate::dualpi2::entry_bytes::<P>(),
            _ => std::mem::size_of::<P>(),
        }) as u64
    }

    /// Packets' worth of storage the discipline reserves when it is built (DualPI2 reserves it for each of
    /// its two queues).
    pub fn preallocated_packets(&self, mtu_bytes: u32) -> u64 {
        let n = self.limit().preallocation(mtu_bytes) as u64;
        match self {
            AqmConfig::DualPi2(_) => 2 * n,
            _ => n,
        }
    }

    /// Bytes of state besides the queued packets for a run of `flows` flows: FQ-CoDel's buckets, PPV's
    /// per-flow marker (for the estimate of a run's memory).
    pub fn state_bytes(&self, flows: u64) -> u64 {
        match self {
            AqmConfig::FqCodel(p) => p.flows as u64 * crate::fq_codel::BUCKET_BYTES as u64,
            AqmConfig::Ppv(p) => {
                let regions = (p.octaves * p.regions_per_octave + 1) as u64;
                // Tokens per region, last refill time and weight per flow.
                flows * (regions * 8 + 16)
            }
            _ => 0,
        }
    }

    /// The edge marker this discipline needs at the senders (PPV only), for flows of groups `flow_groups`.
    pub fn edge_marker(
        &self,
        ctx: &BuildContext,
        flow_groups: &[u32],
    ) -> Result<Option<PpvMarker>, ConfigError> {
        match self {
            AqmConfig::Ppv(p) => PpvMarker::new(p, ctx, flow_groups).map(Some),
            _ => Ok(None),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const PKTS: QueueLimit = QueueLimit::Packets(100);

    #[test]
    fn every_documented_parameter_is_a_field_and_every_field_is_documented() {
        for q in qdiscs() {
            let mut documented: Vec<&str> = q
                .params
                .iter()
                .map(|p| p.name)
                .filter(|n| *n != "limit")
                .collect();
            let mut fields: Vec<&str> = q
                .defaults
                .as_object()
                .unwrap()
                .keys()
                .map(|k| k.as_str())
                .collect();
            documented.sort();
            fields.sort();
            assert_eq!(documented, fields, "{}", q.name);
            // The defaults themselves are valid.
            let cfg = AqmConfig::from_name_and_params(q.name, &json!({}), PKTS, 1500).unwrap();
            assert_eq!(cfg.name(), q.name);
            assert_eq!(cfg.limit(), PKTS);
        }
    }

    #[test]
    fn defaults_are_the_kernel_values() {
        let d = |name: &str| qdiscs().into_iter().find(|q| q.name == name).unwrap().defaults;
        assert_eq!(d("codel")["target_ns"], 5_000_000);
        assert_eq!(d("codel")["interval_ns"], 100_000_000);
        assert_eq!(d("codel")["ecn"], false);
        assert_eq!(d("fq_codel")["flows"], 1024);
        assert_eq!(d("fq_codel")["quantum_bytes"], 1514);
        assert_eq!(d("fq_codel")["ecn"], true);
        assert_eq!(d("fq_codel")["drop_batch_size"], 64);
        assert_eq!(d("fq_codel")["memory_limit_bytes"], 32 << 20);
        assert_eq!(d("pie")["target_ns"], 15_000_000);
        assert_eq!(d("pie")["alpha"], 0.125);
        assert_eq!(d("pie")["beta"], 1.25);
        assert_eq!(d("pie")["max_burst_ns"], 150_000_000);
        assert_eq!(d("dualpi2")["tupdate_ns"], 16_000_000);
        assert_eq!(d("dualpi2")["coupling_factor"], 2);
        assert_eq!(d("dualpi2")["step_threshold_ns"], 1_000_000);
        assert_eq!(d("dualpi2")["c_protection_percent"], 10);
        assert_eq!(d("red")["probability"], 0.02);
        assert_eq!(d("red")["adaptive"], false);
    }

    #[test]
    fn errors_name_the_parameter() {
        let e = AqmConfig::from_name_and_params("codel", &json!({"target": 5}), PKTS, 1500).unwrap_err();
        assert_eq!(e.field, "target");
        assert!(e.message.contains("allowed: target_ns"), "{e}");
        let e =
            AqmConfig::from_name_and_params("codel", &json!({"target_ns": "5ms"}), PKTS, 1500).unwrap_err();
        assert_eq!(e.field, "target_ns");
        assert!(e.message.contains("invalid type"), "{e}");
        let e = AqmConfig::from_name_and_params("codel", &json!({"ecn": true, "interval_ns": 0}), PKTS, 1500)
            .unwrap_err();
        assert_eq!(e.field, "interval_ns");
        let e = AqmConfig::from_name_and_params("fifo", &json!({"x": 1}), PKTS, 1500).unwrap_err();
        assert!(e.message.contains("no parameters besides the buffer"), "{e}");
        let e = AqmConfig::from_name_and_params("blue", &json!({}), PKTS, 1500).unwrap_err();
        assert_eq!(e.field, "aqm");
        assert!(e.message.contains("available: fifo, red, codel"), "{e}");
        let e = AqmConfig::from_name_and_params("fq_codel", &json!({"limit": 3}), PKTS, 1500).unwrap_err();
        assert_eq!(e.field, "limit");
        let e =
            AqmConfig::from_name_and_params("dualpi2", &json!({"ecn_mask": "ect0"}), PKTS, 1500).unwrap_err();
        assert_eq!(e.field, "ecn_mask");
    }

    #[test]
    fn serialized_configs_round_trip() {
        for q in qdiscs() {
            let cfg =
                AqmConfig::from_name_and_params(q.name, &json!({}), QueueLimit::Bytes(90_000), 1500).unwrap();
            let text = serde_json::to_string(&cfg).unwrap();
            assert_eq!(serde_json::from_str::<AqmConfig>(&text).unwrap(), cfg);
        }
        // The simulator's wire format for FIFO is unchanged.
        let f: AqmConfig = serde_json::from_value(json!({"name": "fifo", "limit": {"packets": 5}})).unwrap();
        assert_eq!(
            f,
            AqmConfig::Fifo {
                limit: QueueLimit::Packets(5)
            }
        );
    }
}
