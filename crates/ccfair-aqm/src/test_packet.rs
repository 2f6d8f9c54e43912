//! A minimal packet and drop sink for queue-discipline tests: the qdiscs' unit tests (`crate::test_packet`)
//! and the contract tests across every qdisc (`tests/contract.rs`, which includes this file) share them.

use ccfair_core::{DropReason, Ecn, Time};

/// A minimal packet for qdisc unit tests.
#[derive(Clone, Debug, PartialEq)]
pub struct TestPacket {
    pub id: u64,
    pub len: u32,
    pub ts: Time,
    pub ecn: Ecn,
    pub hash: u32,
    pub value: u32,
}

impl TestPacket {
    pub fn new(id: u64, len: u32) -> Self {
        TestPacket {
            id,
            len,
            ts: Time::ZERO,
            ecn: Ecn::NotEct,
            hash: 0,
            value: 0,
        }
    }

    pub fn ecn(mut self, ecn: Ecn) -> Self {
        self.ecn = ecn;
        self
    }

    pub fn hash(mut self, hash: u32) -> Self {
        self.hash = hash;
        self
    }

    pub fn value(mut self, value: u32) -> Self {
        self.value = value;
        self
    }

    /// Stamped with its enqueue time, as the caller of `enqueue` does.
    pub fn at(mut self, t: Time) -> Self {
        self.ts = t;
        self
    }
}

ccfair_core::impl_packet_meta!(TestPacket {
    wire_len: |p| p.len,
    enqueue_ts: ts,
    ecn: ecn,
    flow_hash: |p| p.hash,
    packet_value: |p| p.value,
});

/// Collects drops and marks.
#[derive(Default)]
pub struct Drops(pub Vec<(TestPacket, DropReason)>, pub Vec<u64>);

impl Drops {
    pub fn aqm_drops(&self) -> usize {
        self.0.iter().filter(|(_, r)| *r == DropReason::Aqm).count()
    }
    pub fn marks(&self) -> usize {
        self.1.len()
    }
}

impl super::QdiscSink<TestPacket> for Drops {
    fn dropped(&mut self, _now: Time, pkt: TestPacket, reason: DropReason) {
        self.0.push((pkt, reason));
    }
    fn marked(&mut self, _now: Time, pkt: &TestPacket) {
        self.1.push(pkt.id);
    }
}

pub fn ms(v: u64) -> Time {
    Time::from_ns(v * 1_000_000)
}

pub fn us(v: u64) -> Time {
    Time::from_ns(v * 1_000)
}
