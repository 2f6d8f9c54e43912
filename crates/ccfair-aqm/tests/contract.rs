//! Contract tests across every queue discipline (and the interesting non-default settings of each): over random
//! sequences of arrivals, departures and elapsed time,
//! - the backlog never exceeds the limit, and equals what was accepted minus what left or was dropped;
//! - every packet leaves exactly once (delivered or dropped), and `enqueued = dequeued + dropped + queued` in the
//!   qdisc's own counters;
//! - packets of one flow leave in the order they arrived (no qdisc reorders within a flow);
//! - only ECN-capable packets are marked, and a not-ECT packet is never delivered with CE;
//! - the same sequence and seed give the same result (determinism).

use std::collections::{BTreeMap, HashSet};

use ccfair_aqm::{AqmConfig, BuildContext, Qdisc, QdiscSink, QueueLimit, qdiscs};
use ccfair_core::{DropReason, Ecn, Time};
use proptest::prelude::*;
use serde_json::json;

// The packet of the qdiscs' unit tests (its drop sink and time helpers go unused here).
#[allow(dead_code)]
#[path = "../src/test_packet.rs"]
mod test_packet;
use test_packet::TestPacket;

#[derive(Default)]
struct Sink {
    dropped: Vec<(u64, DropReason)>,
    marked: Vec<u64>,
}

impl QdiscSink<TestPacket> for Sink {
    fn dropped(&mut self, _now: Time, pkt: TestPacket, reason: DropReason) {
        self.dropped.push((pkt.id, reason));
    }
    fn marked(&mut self, _now: Time, pkt: &TestPacket) {
        assert_eq!(pkt.ecn, Ecn::Ce, "a marked packet carries CE");
        self.marked.push(pkt.id);
    }
}

#[derive(Clone, Debug)]
enum Op {
    /// A packet of `flow` (its ECN codepoint is the flow's), `len` bytes, packet value `value`.
    Arrive {
        flow: u32,
        len: u32,
        value: u32,
    },
    Depart,
    /// Time passes (µs).
    Wait(u64),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (0u32..6, prop_oneof![Just(1500u32), 64u32..1500], 0u32..40)
            .prop_map(|(flow, len, value)| Op::Arrive { flow, len, value }),
        4 => Just(Op::Depart),
        3 => (0u64..4000).prop_map(Op::Wait),
    ]
}

/// Flow f's codepoint: a mix of not-ECT, classic and L4S flows.
fn flow_ecn(flow: u32) -> Ecn {
    [Ecn::NotEct, Ecn::Ect0, Ecn::Ect1][(flow % 3) as usize]
}

/// Every discipline with its defaults, plus the settings that take other code paths.
fn variants() -> Vec<(&'static str, serde_json::Value)> {
    let mut v: Vec<(&'static str, serde_json::Value)> =
        qdiscs().iter().map(|q| (q.name, json!({}))).collect();
    v.extend([
        ("red", json!({"ecn": true, "adaptive": true, "probability": 0.5})),
        ("red", json!({"ecn": true, "nodrop": true})),
        ("codel", json!({"ecn": true, "ce_threshold_ns": 1_000_000, "target_ns": 1_000_000, "interval_ns": 10_000_000})),
        ("fq_codel", json!({"flows": 4, "quantum_bytes": 300, "drop_batch_size": 2, "memory_limit_bytes": 20_000})),
        ("fq_codel", json!({"ecn": false, "target_ns": 1_000_000, "interval_ns": 10_000_000})),
        ("pie", json!({"ecn": true, "dq_rate_estimator": true, "bytemode": true, "tupdate_ns": 1_000_000, "max_burst_ns": 0})),
        ("pie", json!({"tupdate_ns": 2_000_000, "max_burst_ns": 0, "target_ns": 1_000_000})),
        ("gsp", json!({"adaptive": false, "threshold_ns": 100_000, "interval_ns": 5_000_000})),
        ("gsp", json!({"threshold_ns": 100_000, "interval_ns": 5_000_000})),
        ("dualpi2", json!({"drop_early": true, "drop_overload": false, "ecn_mask": "any_ect", "tupdate_ns": 1_000_000})),
        ("dualpi2", json!({"step_threshold_packets": 3, "min_qlen_step": 2, "target_ns": 1_000_000, "tupdate_ns": 1_000_000})),
        ("step", json!({"threshold_packets": 3})),
        ("step", json!({"threshold_ns": 100_000})),
        ("vdq_csaqm", json!({"l4s_target_ns": 100_000, "classic_target_ns": 100_000, "regions_per_octave": 1, "octaves": 2})),
    ]);
    v
}

/// What a run of `ops` produced: delivered ids in order, drops, marks.
#[derive(Debug, PartialEq)]
struct Outcome {
    delivered: Vec<(u64, Ecn)>,
    dropped: Vec<(u64, DropReason)>,
    marked: Vec<u64>,
}

fn run(name: &str, params: &serde_json::Value, limit: QueueLimit, seed: u64, ops: &[Op]) -> Option<Outcome> {
    let cfg = AqmConfig::from_name_and_params(name, params, limit, 1500).ok()?;
    let ctx = BuildContext {
        rate_bps: 12_000_000,
        mtu_bytes: 1500,
        seed,
    };
    let mut q: Box<dyn Qdisc<TestPacket>> = cfg.build(&ctx).expect("validated");
    assert_eq!(q.kind(), name);
    let mut sink = Sink::default();
    let mut now = Time::ZERO;
    // Every packet offered, by id, with its flow, as it was sent.
    let mut offered: BTreeMap<u64, (u32, TestPacket)> = BTreeMap::new();
    // What is still in the qdisc, by our books: id → bytes.
    let mut queued: BTreeMap<u64, u32> = BTreeMap::new();
    let mut queued_bytes = 0u64;
    let mut gone: HashSet<u64> = HashSet::new();
    let mut drops_seen = 0;
    let mut accepted = 0u64;
    let mut delivered = vec![];
    let mut last_of_flow: BTreeMap<u32, u64> = BTreeMap::new();
    for (i, op) in ops.iter().enumerate() {
        match *op {
            Op::Arrive { flow, len, value } => {
                let pkt = TestPacket::new(i as u64, len)
                    .at(now)
                    .ecn(flow_ecn(flow))
                    .hash(flow.wrapping_mul(0x9E37_79B1))
                    .value(value);
                offered.insert(pkt.id, (flow, pkt.clone()));
                queued.insert(pkt.id, len);
                queued_bytes += len as u64;
                if q.enqueue(now, pkt, &mut sink) {
                    accepted += 1;
                }
            }
            Op::Depart => {
                if let Some(p) = q.dequeue(now, &mut sink) {
                    let Some((flow, sent)) = offered.get(&p.id) else {
                        panic!("{name}: delivered a packet never offered");
                    };
                    if let Some(prev) = last_of_flow.insert(*flow, p.id) {
                        assert!(
                            p.id > prev,
                            "{name}: flow {flow} reordered ({} after {prev})",
                            p.id
                        );
                    }
                    match sent.ecn {
                        Ecn::NotEct => assert_eq!(p.ecn, Ecn::NotEct, "{name}: not-ECT packet altered"),
                        _ => assert!(p.ecn == sent.ecn || p.ecn == Ecn::Ce, "{name}: ECT rewritten"),
                    }
                    assert!(gone.insert(p.id), "{name}: a packet left twice");
                    queued_bytes -= queued.remove(&p.id).expect("was queued") as u64;
                    delivered.push((p.id, p.ecn));
                }
            }
            Op::Wait(us) => now += ccfair_core::Dur::from_us(us),
        }
        // Books: every drop reported since the last step left the queue (or was the refused arrival).
        for &(id, _) in &sink.dropped[drops_seen..] {
            assert!(gone.insert(id), "{name}: a packet left twice");
            queued_bytes -= queued
                .remove(&id)
                .expect("a dropped packet was offered and not gone") as u64;
        }
        drops_seen = sink.dropped.len();
        assert_eq!(
            q.backlog_packets() as usize,
            queued.len(),
            "{name}: backlog packets"
        );
        assert_eq!(q.backlog_bytes(), queued_bytes, "{name}: backlog bytes");
        match limit {
            QueueLimit::Packets(n) => assert!(q.backlog_packets() <= n, "{name}: above the packet limit"),
            QueueLimit::Bytes(b) => assert!(q.backlog_bytes() <= b, "{name}: above the byte limit"),
        }
        let s = q.stats();
        assert_eq!(s.enqueued_packets, accepted, "{name}: enqueued counter");
        assert_eq!(
            s.dequeued_packets,
            delivered.len() as u64,
            "{name}: dequeued counter"
        );
        assert_eq!(
            s.overlimit_drops + s.aqm_drops,
            sink.dropped.len() as u64,
            "{name}: drop counters"
        );
        assert_eq!(s.ce_marks, sink.marked.len() as u64, "{name}: mark counter");
        // enqueued = dequeued + dropped-after-acceptance + queued.
        let refused = offered.len() as u64 - accepted;
        assert_eq!(
            s.enqueued_packets,
            s.dequeued_packets + (s.overlimit_drops + s.aqm_drops - refused) + queued.len() as u64,
            "{name}: enqueued = dequeued + dropped + queued"
        );
    }
    for id in &sink.marked {
        assert_ne!(offered[id].1.ecn, Ecn::NotEct, "{name}: marked a not-ECT packet");
    }
    Some(Outcome {
        delivered,
        dropped: sink.dropped,
        marked: sink.marked,
    })
}

fn limit() -> impl Strategy<Value = QueueLimit> {
    prop_oneof![
        (8u32..120).prop_map(QueueLimit::Packets),
        (12_000u64..180_000).prop_map(QueueLimit::Bytes),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn every_qdisc_keeps_its_contract(ops in proptest::collection::vec(op(), 1..400), limit in limit(), seed in any::<u64>()) {
        let mut ran = 0;
        for (name, params) in variants() {
            let first = run(name, &params, limit, seed, &ops);
            if first.is_some() {
                ran += 1;
                prop_assert_eq!(first, run(name, &params, limit, seed, &ops), "{} is not deterministic", name);
            }
        }
        // Only RED may reject a small buffer (its thresholds come from it).
        prop_assert!(ran >= variants().len() - 3);
    }
}

#[test]
fn aqms_act_in_a_congested_run() {
    // A contract test that never drops or marks would prove little: check that each AQM does act when a queue
    // stands (packets arrive twice as fast as they leave for two seconds).
    let mut ops = vec![];
    for k in 0..4000u32 {
        ops.push(Op::Arrive {
            flow: k % 6,
            len: 1500,
            value: k % 37,
        });
        if k % 2 == 0 {
            ops.push(Op::Depart);
        }
        ops.push(Op::Wait(500));
    }
    for (name, params) in variants() {
        let out = run(name, &params, QueueLimit::Packets(1000), 1, &ops).expect("valid");
        let acted = out.dropped.iter().filter(|d| d.1 == DropReason::Aqm).count() + out.marked.len();
        if name == "fifo" || name == "ppv" {
            assert!(out.dropped.iter().all(|d| d.1 == DropReason::Overlimit));
        } else {
            assert!(acted > 0, "{name} {params}: no AQM action on a standing queue");
        }
    }
}
