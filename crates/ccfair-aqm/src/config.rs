//! Configuration of the queue disciplines: the buffer limit and one tagged enum of disciplines with the
//! kernel/RFC defaults, unknown fields rejected, built into a trait object once per run. `qdiscs()` describes
//! every discipline and parameter for `ccfair list` and for the front end's validation, so the parameter set is
//! defined in exactly one place (the params structs in each qdisc's file), and each discipline's name in one
//! row of the registry below.

use ccfair_core::{FieldError, PacketMeta, ParamDoc};
use serde::{Deserialize, Serialize};

use crate::Qdisc;
use crate::codel::{Codel, CodelParams};
use crate::dualpi2::{DualPi2, DualPi2Params};
use crate::fifo::{Fifo, FifoParams};
use crate::fq_codel::{FqCodel, FqCodelParams};
use crate::gsp::{Gsp, GspParams};
use crate::params::{BUFFER_FIELD, BuildContext, unit_free_name};
use crate::pie::{Pie, PieParams};
use crate::ppv::{Ppv, PpvMarker, PpvParams};
use crate::queue::QueueLimit;
use crate::red::{Red, RedParams};
use crate::step::{Step, StepParams};
use crate::vdq::{VdqCsaqm, VdqCsaqmParams};

/// A queue discipline with its buffer limit (`{"name": "codel", "limit": {"packets": 100}, "target_ns": ...}`):
/// the limit, which the scenario's buffer sets, sits beside the discipline's own parameters.
#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct AqmConfig {
    #[serde(flatten)]
    pub kind: AqmKind,
    pub limit: QueueLimit,
}

/// One queue discipline, for listings.
#[derive(Clone, Debug)]
pub struct QdiscInfo {
    pub name: &'static str,
    pub summary: &'static str,
    pub source: &'static str,
    /// Parameters: `limit` (which the scenario's buffer sets) first, then the discipline's own.
    pub params: Vec<ParamDoc>,
    /// The defaults of the discipline's own parameters, as a JSON object.
    pub defaults: serde_json::Value,
}

const LIMIT_DOC: ParamDoc = ParamDoc {
    name: "limit",
    allowed: "packets or bytes",
    doc: "set by link.buffer",
};

/// The defaults of `kind` as a JSON object, without the name.
fn defaults(kind: AqmKind) -> serde_json::Value {
    let mut v = serde_json::to_value(kind).expect("configs serialize");
    v.as_object_mut().map(|m| m.remove("name"));
    v
}

/// The registry: one row per discipline gives its name once, and from it the serde tag of its [`AqmKind`]
/// variant, [`AqmKind::name`], the parameter type's `NAME` (which the built qdisc reports as its kind) and its
/// [`qdiscs`] entry.
macro_rules! registry {
    ($(
        $variant:ident($params:ty) {
            name: $name:literal,
            summary: $summary:expr,
            source: $source:expr,
            params: $param_docs:expr,
            validate: |$vp:ident, $vlimit:ident, $vmtu:ident| $validate:expr,
            build: |$bp:ident, $blimit:ident, $ctx:ident| $build:expr $(,)?
        }
    ),* $(,)?) => {
        /// A queue discipline and its own parameters.
        #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
        #[serde(tag = "name")]
        pub enum AqmKind {
            $( #[serde(rename = $name)] $variant($params), )*
        }

        $(
            impl $params {
                #[doc = concat!("The discipline's name: `", $name, "`.")]
                pub const NAME: &'static str = $name;
            }
        )*

        impl AqmKind {
            pub fn name(&self) -> &'static str {
                match self {
                    $( AqmKind::$variant(_) => $name, )*
                }
            }
        }

        /// The wire form: the name, the limit, then the discipline's parameters.
        impl Serialize for AqmConfig {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                #[derive(Serialize)]
                #[serde(untagged)]
                enum Params<'a> {
                    $( $variant(&'a $params), )*
                }
                #[derive(Serialize)]
                struct Wire<'a> {
                    name: &'static str,
                    limit: QueueLimit,
                    #[serde(flatten)]
                    params: Params<'a>,
                }
                let params = match &self.kind {
                    $( AqmKind::$variant(p) => Params::$variant(p), )*
                };
                Wire {
                    name: self.kind.name(),
                    limit: self.limit,
                    params,
                }
                .serialize(serializer)
            }
        }

        impl AqmConfig {
            /// Checks the parameters for a link of `mtu_bytes` (RED derives its thresholds from the limit in
            /// bytes). Errors name the parameter as `aqm.<parameter>`, or the limit as [`BUFFER_FIELD`].
            pub fn validate(&self, mtu_bytes: u32) -> Result<(), FieldError> {
                let checked: Result<(), FieldError> = match &self.kind {
                    $( AqmKind::$variant($vp) => {
                        let $vlimit = self.limit;
                        let $vmtu = mtu_bytes;
                        $validate
                    } )*
                };
                checked.map_err(|e| if e.field == BUFFER_FIELD { e } else { e.prefixed("aqm") })
            }

            /// The qdisc, ready for a run. Validates first, so a bad configuration is an error, never a panic.
            pub fn build<P: PacketMeta + Send + 'static>(
                &self,
                ctx: &BuildContext,
            ) -> Result<Box<dyn Qdisc<P>>, FieldError> {
                self.validate(ctx.mtu_bytes)?;
                Ok(match &self.kind {
                    $( AqmKind::$variant($bp) => {
                        let $blimit = self.limit;
                        let $ctx = ctx;
                        Box::new($build)
                    } )*
                })
            }
        }

        /// Every available queue discipline.
        pub fn qdiscs() -> Vec<QdiscInfo> {
            vec![
                $( QdiscInfo {
                    name: $name,
                    summary: $summary,
                    source: $source,
                    params: [&[LIMIT_DOC][..], $param_docs].concat(),
                    defaults: defaults(AqmKind::$variant(<$params>::default())),
                }, )*
            ]
        }
    };
}

registry! {
    Fifo(FifoParams) {
        name: "fifo",
        summary: "tail drop at a packet or byte limit",
        source: "Linux net/sched/sch_fifo.c (pfifo / bfifo)",
        params: &[],
        validate: |_p, _limit, _mtu| Ok(()),
        build: |_p, limit, ctx| Fifo::new(limit, ctx.mtu_bytes),
    },
    Red(RedParams) {
        name: "red",
        summary: "Random Early Detection: EWMA of the backlog, marking ramp between min and max",
        source: "Linux include/net/red.h, net/sched/sch_red.c; iproute2 tc/q_red.c (Floyd & Jacobson 1993)",
        params: crate::red::PARAMS,
        validate: |p, limit, mtu| p.validate(limit, mtu),
        build: |p, limit, ctx| Red::new(p, limit, ctx.mtu_bytes, ctx.rate_bps, ctx.rng()),
    },
    Codel(CodelParams) {
        name: "codel",
        summary: "CoDel: drop when sojourn stays above 5 ms for 100 ms, then at interval/sqrt(count)",
        source: "RFC 8289; Linux include/net/codel_impl.h, net/sched/sch_codel.c",
        params: crate::codel::PARAMS,
        validate: |p, _limit, _mtu| p.validate(),
        build: |p, limit, ctx| Codel::new(p, limit, ctx.mtu_bytes),
    },
    FqCodel(FqCodelParams) {
        name: "fq_codel",
        summary: "FQ-CoDel: 1024 hashed queues, DRR with new/old lists, CoDel per queue, ECN on",
        source: "RFC 8290; Linux net/sched/sch_fq_codel.c",
        params: crate::fq_codel::PARAMS,
        validate: |p, _limit, _mtu| p.validate(),
        build: |p, limit, ctx| FqCodel::new(p, limit, ctx.mtu_bytes, ctx.rng()),
    },
    Pie(PieParams) {
        name: "pie",
        summary: "PIE: PI control of a drop probability on queue delay, target 15 ms",
        source: "RFC 8033; Linux include/net/pie.h, net/sched/sch_pie.c",
        params: crate::pie::PARAMS,
        validate: |p, _limit, _mtu| p.validate(),
        build: |p, limit, ctx| Pie::new(p, limit, ctx.mtu_bytes, ctx.rng()),
    },
    Gsp(GspParams) {
        name: "gsp",
        summary: "Global Synchronization Protection: one drop per (adaptive) interval above a threshold",
        source: "Lautenschlaeger & Francini, HPSR 2015 / arXiv 1602.05333; draft-lauten-aqm-gsp-03",
        params: crate::gsp::PARAMS,
        validate: |p, _limit, _mtu| p.validate(),
        build: |p, limit, ctx| Gsp::new(p, limit, ctx.mtu_bytes, ctx.rate_bps),
    },
    Ppv(PpvParams) {
        name: "ppv",
        summary: "Per-Packet Value: edge marker with a TVF per flow, bottleneck drops the lowest values",
        source: "Nadas et al., GLOBECOM 2016; Gombos et al., ANRW 2018",
        params: crate::ppv::PARAMS,
        validate: |p, _limit, _mtu| p.validate(),
        build: |_p, limit, ctx| Ppv::new(limit, ctx.mtu_bytes),
    },
    DualPi2(DualPi2Params) {
        name: "dualpi2",
        summary: "DualQ Coupled AQM: L4S queue with a 1 ms step, classic PI2 with p_C = p'^2, p_L = 2p'",
        source: "RFC 9332; Linux net/sched/sch_dualpi2.c",
        params: crate::dualpi2::PARAMS,
        validate: |p, _limit, _mtu| p.validate(),
        build: |p, limit, ctx| DualPi2::new(p, limit, ctx.mtu_bytes, ctx.rng()),
    },
    Step(StepParams) {
        name: "step",
        summary: "step marking: CE above a sojourn (or queue-length) threshold K, DCTCP/L4S style",
        source: "RFC 8257 section 3.1; RFC 9332 (L queue step)",
        params: crate::step::PARAMS,
        validate: |p, _limit, _mtu| p.validate(),
        build: |p, limit, ctx| Step::new(p, limit, ctx.mtu_bytes),
    },
    VdqCsaqm(VdqCsaqmParams) {
        name: "vdq_csaqm",
        summary: "Virtual Dual Queue core-stateless AQM (a reconstruction: its paper was not available): PPV edge marker, L4S and classic queues, coupled CTVs",
        source: "Nadas, Gombos, Fejes, Laki, ANRW 2020 (reconstructed: see the model's header); RFC 9332",
        params: &crate::vdq::param_docs()[..],
        validate: |p, _limit, _mtu| p.validate(),
        build: |p, limit, ctx| VdqCsaqm::new(p, limit, ctx.mtu_bytes, ctx.rate_bps),
    },
}

impl AqmConfig {
    pub fn new(limit: QueueLimit, kind: AqmKind) -> AqmConfig {
        AqmConfig { kind, limit }
    }

    /// Tail drop at `limit`.
    pub fn fifo(limit: QueueLimit) -> AqmConfig {
        AqmConfig::new(limit, AqmKind::Fifo(FifoParams {}))
    }

    /// The configuration named `name` with `params` (a JSON object; missing parameters take the kernel/RFC
    /// defaults, unknown ones are rejected) and the buffer `limit`, validated for a link of `mtu_bytes`.
    /// Errors name the parameter (`aqm.<parameter>`, or `aqm` for the discipline itself), so a caller that
    /// nests the configuration prefixes where it sits (`link`).
    pub fn from_name_and_params(
        name: &str,
        params: &serde_json::Value,
        limit: QueueLimit,
        mtu_bytes: u32,
    ) -> Result<AqmConfig, FieldError> {
        let infos = qdiscs();
        let Some(info) = infos.iter().find(|q| q.name == name) else {
            let names: Vec<&str> = infos.iter().map(|q| q.name).collect();
            return FieldError::err(
                "aqm",
                format!(
                    "unknown queue discipline {name:?}; available: {}{}",
                    names.join(", "),
                    ccfair_core::names::did_you_mean(name, &names)
                ),
            );
        };
        let obj = match params {
            serde_json::Value::Null => serde_json::Map::new(),
            serde_json::Value::Object(m) => m.clone(),
            _ => return FieldError::err("aqm", "parameters must be a table"),
        };
        for key in obj.keys() {
            let field = FieldError::path("aqm", key);
            if key == "limit" {
                return FieldError::err(field, "the queue limit is set by link.buffer");
            }
            if key == "name" {
                return FieldError::err(field, "is the discipline's name, not a parameter");
            }
            if !info.params.iter().any(|p| p.name == key) {
                // Listed as a scenario writes them (`target`, which takes a unit); a suggestion may also
                // be the name with its unit (`target_ns`), which is accepted too.
                let registry: Vec<&str> = info
                    .params
                    .iter()
                    .map(|p| p.name)
                    .filter(|n| *n != "limit")
                    .collect();
                let written: Vec<&str> = registry
                    .iter()
                    .map(|n| unit_free_name(n).map_or(*n, |(free, _)| free))
                    .collect();
                // `target` itself reaches here only from a caller that does not translate it (the scenario
                // does): it meant `target_ns`.
                let with_unit = registry
                    .iter()
                    .find(|n| unit_free_name(n).is_some_and(|(free, _)| free == key));
                let meant = with_unit
                    .copied()
                    .or_else(|| ccfair_core::names::closest(key, &[&written[..], &registry[..]].concat()));
                let none = format!("{name} has no parameters besides the buffer");
                return FieldError::err(
                    field,
                    ccfair_core::names::unknown_parameter(key, &written, meant, &none),
                );
            }
        }
        let kind_of = |extra: &serde_json::Map<String, serde_json::Value>| {
            let mut m = extra.clone();
            m.insert("name".into(), serde_json::Value::String(name.into()));
            serde_json::from_value::<AqmKind>(serde_json::Value::Object(m))
        };
        let kind = match kind_of(&obj) {
            Ok(k) => k,
            Err(e) => {
                // Name the culprit: the first parameter that fails on its own.
                for (key, value) in &obj {
                    let mut one = serde_json::Map::new();
                    one.insert(key.clone(), value.clone());
                    if let Err(e1) = kind_of(&one) {
                        return FieldError::err(FieldError::path("aqm", key), format!("{e1}"));
                    }
                }
                return FieldError::err("aqm", e.to_string());
            }
        };
        let cfg = AqmConfig { kind, limit };
        cfg.validate(mtu_bytes)?;
        Ok(cfg)
    }

    pub fn name(&self) -> &'static str {
        self.kind.name()
    }

    /// The edge marker's parameters of a discipline that needs one (PPV, VDQ-CSAQM).
    fn marker_params(&self) -> Option<PpvParams> {
        match &self.kind {
            AqmKind::Ppv(p) => Some(p.clone()),
            AqmKind::VdqCsaqm(p) => Some(p.marker()),
            _ => None,
        }
    }

    /// Checks what depends on the scenario's flows: the edge marker's weights, one per flow group.
    pub fn validate_groups(&self, groups: usize) -> Result<(), FieldError> {
        match self.marker_params() {
            Some(p) => p.validate_groups(groups).map_err(|e| e.prefixed("aqm")),
            None => Ok(()),
        }
    }

    /// Bytes one queued packet of type `P` takes in this discipline's storage (for the estimate of a run's
    /// memory).
    pub fn packet_slot_bytes<P>(&self) -> u64 {
        (match &self.kind {
            AqmKind::FqCodel(_) => crate::pool::slot_bytes::<P>(),
            AqmKind::Ppv(_) => crate::pool::slot_bytes::<P>() + crate::heap::BYTES_PER_ID,
            AqmKind::DualPi2(_) => crate::dualpi2::entry_bytes::<P>(),
            _ => std::mem::size_of::<P>(),
        }) as u64
    }

    /// Packets' worth of storage the discipline reserves when it is built (DualPI2 reserves it for each of
    /// its two queues).
    pub fn preallocated_packets(&self, mtu_bytes: u32) -> u64 {
        let n = crate::queue::preallocated_packets(self.limit, mtu_bytes) as u64;
        match &self.kind {
            AqmKind::DualPi2(_) | AqmKind::VdqCsaqm(_) => 2 * n,
            _ => n,
        }
    }

    /// The most runs of the discipline's periodic timer in a run of `duration_ns` (each runs while the queue
    /// is backlogged; an idle queue's are skipped once they stop changing anything), with the parameter
    /// that sets its period (for the estimate of a run's work): PIE's update from 500 ms on and DualPI2's
    /// from the start, every `tupdate_ns`; adaptive RED's step every 500 ms. None for a discipline without
    /// a timer.
    pub fn timer_runs(&self, duration_ns: u64) -> Option<(u64, &'static str)> {
        let every = |first_ns: u64, period_ns: u64| match duration_ns.checked_sub(first_ns) {
            Some(after) => after / period_ns.max(1) + 1,
            None => 0,
        };
        match &self.kind {
            AqmKind::Pie(p) => Some((every(crate::pie::FIRST_UPDATE_NS, p.tupdate_ns), "tupdate_ns")),
            AqmKind::DualPi2(p) => Some((every(p.tupdate_ns, p.tupdate_ns), "tupdate_ns")),
            AqmKind::Red(p) if p.adaptive => {
                let period = crate::red::ADAPT_PERIOD_NS;
                Some((every(period, period), "adaptive"))
            }
            _ => None,
        }
    }

    /// Bytes of state besides the queued packets for a run of `flows` flows: FQ-CoDel's buckets, the edge
    /// marker's per-flow buckets (PPV, VDQ-CSAQM) and VDQ-CSAQM's two value histograms (for the estimate of a
    /// run's memory).
    pub fn state_bytes(&self, flows: u64) -> u64 {
        let marker = self.marker_params().map_or(0, |p| {
            let regions = (p.max_value() - 1) as u64;
            // Tokens per region, last refill time and weight per flow.
            flows * (regions * 8 + 16)
        });
        marker
            + match &self.kind {
                AqmKind::FqCodel(p) => p.flows as u64 * crate::fq_codel::BUCKET_BYTES as u64,
                AqmKind::VdqCsaqm(p) => 2 * (p.marker().max_value() as u64 + 1) * 8,
                _ => 0,
            }
    }

    /// The edge marker this discipline needs at the senders (PPV, VDQ-CSAQM), for flows of groups
    /// `flow_groups`.
    pub fn edge_marker(
        &self,
        ctx: &BuildContext,
        flow_groups: &[u32],
    ) -> Result<Option<PpvMarker>, FieldError> {
        match self.marker_params() {
            Some(p) => PpvMarker::new(&p, ctx, flow_groups)
                .map(Some)
                .map_err(|e| e.prefixed("aqm")),
            None => Ok(None),
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
            assert_eq!(cfg.limit, PKTS);
        }
    }

    /// The registry gives each discipline one name: its serde tag, `AqmKind::name`, its listing and the kind
    /// the built qdisc reports agree, and no two disciplines share one.
    #[test]
    fn every_discipline_has_one_name() {
        let infos = qdiscs();
        let ctx = BuildContext {
            rate_bps: 10_000_000,
            mtu_bytes: 1500,
            seed: 1,
        };
        for (i, q) in infos.iter().enumerate() {
            let cfg = AqmConfig::from_name_and_params(q.name, &json!({}), PKTS, 1500).unwrap();
            let wire = serde_json::to_value(&cfg).unwrap();
            assert_eq!(wire["name"], json!(q.name));
            assert_eq!(wire["limit"], json!({"packets": 100}));
            assert_eq!(cfg.kind.name(), q.name);
            let built = cfg.build::<crate::test_packet::TestPacket>(&ctx).unwrap();
            assert_eq!(built.kind(), q.name);
            assert!(
                infos[..i].iter().all(|o| o.name != q.name),
                "{} is listed twice",
                q.name
            );
        }
        assert_eq!(infos.len(), 10);
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
        assert_eq!(d("vdq_csaqm")["l4s_target_ns"], 1_000_000);
        assert_eq!(d("vdq_csaqm")["classic_target_ns"], 20_000_000);
        assert_eq!(d("vdq_csaqm")["bucket_ns"], d("ppv")["bucket_ns"]);
    }

    #[test]
    fn errors_name_the_parameter() {
        let e = AqmConfig::from_name_and_params("codel", &json!({"target": 5}), PKTS, 1500).unwrap_err();
        assert!(e.says("aqm.target", "allowed: target, interval, ecn"), "{e}");
        assert!(e.message.ends_with("; did you mean \"target_ns\"?"), "{e}");
        let e = AqmConfig::from_name_and_params("pie", &json!({"targt": 5}), PKTS, 1500).unwrap_err();
        assert_eq!(e.field, "aqm.targt");
        assert!(
            e.message
                .starts_with("unknown parameter \"targt\"; allowed: target, tupdate, "),
            "{e}"
        );
        assert!(e.message.ends_with("; did you mean \"target\"?"), "{e}");
        let e =
            AqmConfig::from_name_and_params("codel", &json!({"target_ns": "5ms"}), PKTS, 1500).unwrap_err();
        assert!(e.says("aqm.target_ns", "invalid type"), "{e}");
        let e = AqmConfig::from_name_and_params("codel", &json!({"ecn": true, "interval_ns": 0}), PKTS, 1500)
            .unwrap_err();
        assert_eq!(e.field, "aqm.interval_ns");
        let e = AqmConfig::from_name_and_params("fifo", &json!({"x": 1}), PKTS, 1500).unwrap_err();
        assert!(e.message.contains("no parameters besides the buffer"), "{e}");
        let e = AqmConfig::from_name_and_params("blue", &json!({}), PKTS, 1500).unwrap_err();
        assert!(e.says("aqm", "available: fifo, red, codel"), "{e}");
        assert!(!e.message.contains("did you mean"), "{e}");
        for (written, meant) in [("fq-codel", "fq_codel"), ("FIFO", "fifo"), ("dualpi", "dualpi2")] {
            let e = AqmConfig::from_name_and_params(written, &json!({}), PKTS, 1500).unwrap_err();
            assert_eq!(e.field, "aqm");
            assert!(e.message.ends_with(&format!("; did you mean {meant:?}?")), "{e}");
        }
        let e = AqmConfig::from_name_and_params("fq_codel", &json!({"limit": 3}), PKTS, 1500).unwrap_err();
        assert_eq!(e.field, "aqm.limit");
        let e =
            AqmConfig::from_name_and_params("dualpi2", &json!({"ecn_mask": "ect0"}), PKTS, 1500).unwrap_err();
        assert_eq!(e.field, "aqm.ecn_mask");
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
        assert_eq!(f, AqmConfig::fifo(QueueLimit::Packets(5)));
    }
}
