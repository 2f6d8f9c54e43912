//! FQ-CoDel, fair queuing with CoDel per queue (RFC 8290; Linux `net/sched/sch_fq_codel.c`).
//!
//! In a nutshell: packets are hashed into `flows` buckets, each a FIFO with its own CoDel state and a DRR
//! deficit. A bucket that becomes active joins the *new* list with a deficit of one quantum; dequeue serves the
//! first bucket of the new list (else of the old list): with its deficit used up it gets another quantum and
//! moves to the tail of the old list; otherwise CoDel dequeues from it and the deficit shrinks by the packet's
//! length. A bucket that runs empty while on the new list goes to the old list once (so a flow cannot stay
//! "new" by emptying its queue every round), else it leaves the lists. Sparse flows (less than a quantum per
//! round) are thus served first. On overflow (packet or memory limit) Linux drops from the *fattest* bucket
//! (largest byte backlog), from its head, up to `drop_batch_size` packets or until half its backlog is gone,
//! and raises that bucket's CoDel count by the number dropped.
//!
//! Cost: as in Linux, the per-packet work does not depend on the number of buckets or flows. The fattest bucket
//! is found by a scan of the dense per-bucket backlog array (8 KiB for 1024 buckets) only when the queue
//! overflows, and each scan is amortised over a batch of up to 64 drops; the per-bucket state (FIFO, deficit,
//! CoDel variables) sits in one struct per bucket, so serving a bucket touches one place.
//!
//! Constants, as in `fq_codel_init`: 1024 flows, limit 10240 packets, memory limit 32 MiB, drop batch 64,
//! ECN on, CoDel target 5 ms / interval 100 ms (RFC 8290 §5.1–5.2 gives the same); quantum 1514 bytes (the
//! kernel's `psched_mtu`, an Ethernet MTU plus header; RFC 8290 §4.2).
//!
//! Deviations:
//! - Bucket = `reciprocal_scale(h, flows)` as in Linux, where h mixes the packet's flow hash with a key drawn
//!   once per run from the qdisc's random stream, standing in for the kernel's per-boot random hash seed:
//!   which flows share a bucket depends on the seed, as it does across reboots.
//! - Memory is accounted as wire bytes (Linux: `skb->truesize`, the buffer's allocation size).
//! - With a byte limit (the kernel only has a packet limit) batch drops repeat until the backlog fits again.
//! - Packet lengths are wire lengths (no 14-byte Ethernet header), so a 1514-byte quantum is slightly more than
//!   one full packet here; DRR fairness in bytes is unaffected.
//! - CoDel as in `codel.rs` (ns time, link MTU for the one-packet test).

use std::collections::VecDeque;

use ccfair_core::{DropReason, FieldError, PacketMeta, ParamDoc, Rng, Time};
use serde::{Deserialize, Serialize};

use crate::codel::{CodelControl, CodelParams, CodelQueue, CodelStats, CodelVars, codel_dequeue};
use crate::pool::{List, Pool};
use crate::queue::{QueueLimit, preallocated_packets};
use crate::{Qdisc, QdiscSink, QdiscStats, count_dequeue, drop_packet};

/// `fq_codel_init` defaults.
pub const DEFAULT_LIMIT_PACKETS: u32 = 10 * 1024;
pub const DEFAULT_FLOWS: u32 = 1024;
pub const DEFAULT_QUANTUM_BYTES: u32 = 1514;
pub const DEFAULT_MEMORY_LIMIT_BYTES: u64 = 32 << 20;
pub const DEFAULT_DROP_BATCH_SIZE: u32 = 64;
/// `fq_codel_change` bounds.
const MAX_FLOWS: u32 = 65_536;
const MIN_QUANTUM_BYTES: u32 = 256;
const MAX_QUANTUM_BYTES: u32 = 1 << 20;
const MAX_MEMORY_LIMIT_BYTES: u64 = 1 << 31;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct FqCodelParams {
    pub flows: u32,
    pub quantum_bytes: u32,
    pub target_ns: u64,
    pub interval_ns: u64,
    pub ecn: bool,
    pub ce_threshold_ns: Option<u64>,
    pub memory_limit_bytes: u64,
    pub drop_batch_size: u32,
}

impl Default for FqCodelParams {
    fn default() -> Self {
        FqCodelParams {
            flows: DEFAULT_FLOWS,
            quantum_bytes: DEFAULT_QUANTUM_BYTES,
            target_ns: crate::codel::TARGET_NS,
            interval_ns: crate::codel::INTERVAL_NS,
            ecn: true,
            ce_threshold_ns: None,
            memory_limit_bytes: DEFAULT_MEMORY_LIMIT_BYTES,
            drop_batch_size: DEFAULT_DROP_BATCH_SIZE,
        }
    }
}

pub const PARAMS: &[ParamDoc] = &[
    ParamDoc {
        name: "flows",
        allowed: "1..=65536",
        doc: "hash buckets (1024)",
    },
    ParamDoc {
        name: "quantum_bytes",
        allowed: "256..=1048576",
        doc: "DRR quantum: bytes a bucket may send per round (1514)",
    },
    ParamDoc {
        name: "target_ns",
        allowed: "> 0 ns (e.g. \"5ms\")",
        doc: "CoDel target per bucket (5 ms)",
    },
    ParamDoc {
        name: "interval_ns",
        allowed: "> 0 ns (e.g. \"100ms\")",
        doc: "CoDel interval per bucket (100 ms)",
    },
    ParamDoc {
        name: "ecn",
        allowed: "true | false",
        doc: "CE-mark ECT packets instead of dropping (fq_codel default: true)",
    },
    ParamDoc {
        name: "ce_threshold_ns",
        allowed: "> 0 ns, or absent for off",
        doc: "CE-mark ECT packets whose sojourn exceeds this (default off)",
    },
    ParamDoc {
        name: "memory_limit_bytes",
        allowed: "1..=2147483648",
        doc: "overflow when the queued bytes exceed this (32 MiB)",
    },
    ParamDoc {
        name: "drop_batch_size",
        allowed: ">= 1",
        doc: "most packets dropped from the fattest bucket per overflow (64)",
    },
];

impl FqCodelParams {
    pub fn validate(&self) -> Result<(), FieldError> {
        if !(1..=MAX_FLOWS).contains(&self.flows) {
            return FieldError::err("flows", format!("must be between 1 and {MAX_FLOWS}"));
        }
        if !(MIN_QUANTUM_BYTES..=MAX_QUANTUM_BYTES).contains(&self.quantum_bytes) {
            return FieldError::err(
                "quantum_bytes",
                format!("must be between {MIN_QUANTUM_BYTES} and {MAX_QUANTUM_BYTES}"),
            );
        }
        self.codel().validate()?;
        if !(1..=MAX_MEMORY_LIMIT_BYTES).contains(&self.memory_limit_bytes) {
            return FieldError::err(
                "memory_limit_bytes",
                format!("must be between 1 and {MAX_MEMORY_LIMIT_BYTES}"),
            );
        }
        if self.drop_batch_size == 0 {
            return FieldError::err("drop_batch_size", "must be at least 1");
        }
        Ok(())
    }

    fn codel(&self) -> CodelParams {
        CodelParams {
            target_ns: self.target_ns,
            interval_ns: self.interval_ns,
            ecn: self.ecn,
            ce_threshold_ns: self.ce_threshold_ns,
        }
    }
}

/// MurmurHash3's 32-bit finalizer: mixes the flow hash with the run's key into a well-spread bucket hash.
fn mix32(mut h: u32) -> u32 {
    h ^= h >> 16;
    h = h.wrapping_mul(0x85eb_ca6b);
    h ^= h >> 13;
    h = h.wrapping_mul(0xc2b2_ae35);
    h ^ (h >> 16)
}

/// `struct fq_codel_flow`: one bucket's FIFO, DRR deficit, CoDel state and list membership, kept together as in
/// Linux so that serving a bucket touches one place.
#[derive(Clone, Copy, Default)]
struct Flow {
    queue: List,
    deficit: i64,
    on_list: bool,
    vars: CodelVars,
}

/// Bytes of state per bucket: its `Flow`, its byte backlog, its place in the new/old lists and in the
/// fattest-bucket heap (for the estimate of a run's memory).
pub(crate) const BUCKET_BYTES: usize = std::mem::size_of::<Flow>()
    + std::mem::size_of::<u64>()
    + 2 * std::mem::size_of::<u32>()
    + crate::heap::BYTES_PER_ID;

/// Which list a bucket is being served from.
#[derive(Copy, Clone, PartialEq, Eq)]
enum ListKind {
    New,
    Old,
}

pub struct FqCodel<P> {
    pool: Pool<P>,
    flows: Vec<Flow>,
    /// Per-bucket byte backlog, a dense array of its own (`q->backlogs`) for the fattest-bucket scan.
    backlogs: Vec<u64>,
    new_flows: VecDeque<u32>,
    old_flows: VecDeque<u32>,
    hash_key: u32,
    quantum: i64,
    limit: QueueLimit,
    memory_limit: u64,
    memory_usage: u64,
    drop_batch_size: u32,
    ctl: CodelControl,
    cstats: CodelStats,
    qlen: u32,
    backlog_bytes: u64,
    /// Linux xstats: packets dropped on overflow, of which for memory; buckets that became new.
    pub drop_overlimit: u64,
    pub drop_overmemory: u64,
    pub new_flow_count: u64,
    stats: QdiscStats,
}

impl<P> FqCodel<P> {
    pub fn new(params: &FqCodelParams, limit: QueueLimit, mtu_bytes: u32, mut rng: Rng) -> Self {
        let n = params.flows as usize;
        FqCodel {
            pool: Pool::with_capacity(preallocated_packets(limit, mtu_bytes)),
            flows: vec![Flow::default(); n],
            backlogs: vec![0; n],
            new_flows: VecDeque::with_capacity(n),
            old_flows: VecDeque::with_capacity(n),
            hash_key: (rng.next_u64() >> 32) as u32,
            quantum: params.quantum_bytes as i64,
            limit,
            memory_limit: params.memory_limit_bytes,
            memory_usage: 0,
            drop_batch_size: params.drop_batch_size,
            ctl: params.codel().control(mtu_bytes),
            cstats: CodelStats::default(),
            qlen: 0,
            backlog_bytes: 0,
            drop_overlimit: 0,
            drop_overmemory: 0,
            new_flow_count: 0,
            stats: QdiscStats::default(),
        }
    }

    /// The bucket a flow hash maps to (`fq_codel_hash`: `reciprocal_scale` of the hash).
    pub fn bucket_of(&self, flow_hash: u32) -> u32 {
        let h = mix32(flow_hash ^ self.hash_key);
        ((h as u64 * self.flows.len() as u64) >> 32) as u32
    }

    /// Packets queued in bucket `idx`.
    pub fn bucket_len(&self, idx: u32) -> u32 {
        self.flows[idx as usize].queue.len()
    }

    /// CoDel state of bucket `idx`.
    pub fn bucket_vars(&self, idx: u32) -> &CodelVars {
        &self.flows[idx as usize].vars
    }

    pub fn codel_stats(&self) -> &CodelStats {
        &self.cstats
    }

    fn over_limit(&self) -> bool {
        let over = match self.limit {
            QueueLimit::Packets(n) => self.qlen > n,
            QueueLimit::Bytes(b) => self.backlog_bytes > b,
        };
        over || self.memory_usage > self.memory_limit
    }

    /// The bucket with the largest byte backlog, the first one on ties (Linux's scan in `fq_codel_drop`).
    fn fattest(&self) -> usize {
        let mut idx = 0;
        let mut max = 0;
        for (i, &b) in self.backlogs.iter().enumerate() {
            if b > max {
                max = b;
                idx = i;
            }
        }
        idx
    }

    fn pop_list(&mut self, kind: ListKind) {
        match kind {
            ListKind::New => self.new_flows.pop_front(),
            ListKind::Old => self.old_flows.pop_front(),
        };
    }
}

impl<P: PacketMeta> FqCodel<P> {
    /// `fq_codel_drop`: drops from the head of the fattest bucket until half its backlog is gone or
    /// `drop_batch_size` packets are; returns the bucket.
    fn drop_from_fattest(&mut self, now: Time, sink: &mut dyn QdiscSink<P>, memory_limited: bool) -> usize {
        let i = self.fattest();
        let threshold = self.backlogs[i] >> 1;
        let mut len = 0u64;
        let mut dropped = 0u32;
        loop {
            let pkt = self
                .pool
                .pop_front(&mut self.flows[i].queue)
                .expect("the fattest bucket is not empty");
            len += pkt.wire_len() as u64;
            dropped += 1;
            drop_packet(&mut self.stats, sink, now, pkt, DropReason::Overlimit);
            if !(dropped < self.drop_batch_size && len < threshold) {
                break;
            }
        }
        // Tell CoDel to raise its signal strength too.
        self.flows[i].vars.count = self.flows[i].vars.count.wrapping_add(dropped);
        self.backlogs[i] -= len;
        self.memory_usage -= len;
        self.backlog_bytes -= len;
        self.qlen -= dropped;
        self.drop_overlimit += dropped as u64;
        if memory_limited {
            self.drop_overmemory += dropped as u64;
        }
        i
    }
}

/// One bucket as CoDel sees it; the backlog CoDel compares with the MTU is the whole qdisc's, as in Linux.
struct Bucket<'a, P> {
    pool: &'a mut Pool<P>,
    queue: &'a mut List,
    bucket_backlog: &'a mut u64,
    backlog_bytes: &'a mut u64,
    memory_usage: &'a mut u64,
    qlen: &'a mut u32,
}

impl<P: PacketMeta> CodelQueue<P> for Bucket<'_, P> {
    fn dequeue_head(&mut self) -> Option<P> {
        let pkt = self.pool.pop_front(self.queue)?;
        let len = pkt.wire_len() as u64;
        *self.bucket_backlog -= len;
        *self.backlog_bytes -= len;
        *self.memory_usage -= len;
        *self.qlen -= 1;
        Some(pkt)
    }
    fn backlog_bytes(&self) -> u64 {
        *self.backlog_bytes
    }
}

impl<P: PacketMeta + Send> Qdisc<P> for FqCodel<P> {
    fn enqueue(&mut self, now: Time, pkt: P, sink: &mut dyn QdiscSink<P>) -> bool {
        let i = self.bucket_of(pkt.flow_hash()) as usize;
        let len = pkt.wire_len() as u64;
        let flow = &mut self.flows[i];
        self.pool.push_back(&mut flow.queue, pkt);
        if !flow.on_list {
            flow.on_list = true;
            flow.deficit = self.quantum;
            self.new_flows.push_back(i as u32);
            self.new_flow_count += 1;
        }
        self.backlogs[i] += len;
        self.backlog_bytes += len;
        self.qlen += 1;
        self.memory_usage += len;
        if !self.over_limit() {
            self.stats.enqueued_packets += 1;
            return true;
        }
        let memory_limited = self.memory_usage > self.memory_limit;
        // Linux drops one batch; with a byte limit one batch may not free enough room, so repeat.
        while self.over_limit() {
            self.drop_from_fattest(now, sink, memory_limited);
        }
        // Drops are from bucket heads: the arrival (at its bucket's tail) went only if its bucket emptied.
        let queued = !self.flows[i].queue.is_empty();
        if queued {
            self.stats.enqueued_packets += 1;
        }
        queued
    }

    fn dequeue(&mut self, now: Time, sink: &mut dyn QdiscSink<P>) -> Option<P> {
        loop {
            let (kind, idx) = match (self.new_flows.front(), self.old_flows.front()) {
                (Some(&i), _) => (ListKind::New, i),
                (None, Some(&i)) => (ListKind::Old, i),
                (None, None) => return None,
            };
            let i = idx as usize;
            if self.flows[i].deficit <= 0 {
                self.flows[i].deficit += self.quantum;
                self.pop_list(kind);
                self.old_flows.push_back(idx);
                continue;
            }
            let flow = &mut self.flows[i];
            let mut bucket = Bucket {
                pool: &mut self.pool,
                queue: &mut flow.queue,
                bucket_backlog: &mut self.backlogs[i],
                backlog_bytes: &mut self.backlog_bytes,
                memory_usage: &mut self.memory_usage,
                qlen: &mut self.qlen,
            };
            let pkt = codel_dequeue(
                now,
                &self.ctl,
                &mut flow.vars,
                &mut self.cstats,
                &mut bucket,
                &mut self.stats,
                sink,
            );
            match pkt {
                None => {
                    // Force a pass through the old list so a flow cannot stay "new" by emptying its queue.
                    self.pop_list(kind);
                    if kind == ListKind::New && !self.old_flows.is_empty() {
                        self.old_flows.push_back(idx);
                    } else {
                        self.flows[i].on_list = false;
                    }
                }
                Some(pkt) => {
                    self.flows[i].deficit -= pkt.wire_len() as i64;
                    count_dequeue(&mut self.stats, &pkt);
                    return Some(pkt);
                }
            }
        }
    }

    fn backlog_bytes(&self) -> u64 {
        self.backlog_bytes
    }

    fn backlog_packets(&self) -> u32 {
        self.qlen
    }

    fn stats(&self) -> &QdiscStats {
        &self.stats
    }

    fn kind(&self) -> &'static str {
        FqCodelParams::NAME
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_packet::{Drops, TestPacket, ms};
    use ccfair_core::rng::StreamId;

    fn fq(params: FqCodelParams) -> FqCodel<TestPacket> {
        fq_limited(params, QueueLimit::Packets(DEFAULT_LIMIT_PACKETS))
    }

    fn fq_limited(params: FqCodelParams, limit: QueueLimit) -> FqCodel<TestPacket> {
        FqCodel::new(&params, limit, 1500, Rng::stream(1, StreamId::Qdisc(0)))
    }

    /// Two flow hashes that land in different buckets.
    fn two_flows(q: &FqCodel<TestPacket>) -> (u32, u32) {
        let a = 1;
        let b = (2..).find(|&h| q.bucket_of(h) != q.bucket_of(a)).unwrap();
        (a, b)
    }

    #[test]
    fn drr_shares_bytes_equally_between_backlogged_flows() {
        let mut q = fq(FqCodelParams::default());
        let (a, b) = two_flows(&q);
        let mut d = Drops::default();
        // Flow a sends 1500-byte packets, flow b 500-byte ones; both always backlogged.
        for i in 0..600 {
            q.enqueue(Time::ZERO, TestPacket::new(i, 1500).hash(a), &mut d);
            q.enqueue(Time::ZERO, TestPacket::new(10_000 + i, 500).hash(b), &mut d);
            q.enqueue(Time::ZERO, TestPacket::new(20_000 + i, 500).hash(b), &mut d);
            q.enqueue(Time::ZERO, TestPacket::new(30_000 + i, 500).hash(b), &mut d);
        }
        let (mut bytes_a, mut bytes_b) = (0u64, 0u64);
        for _ in 0..800 {
            let p = q.dequeue(Time::ZERO, &mut d).unwrap();
            if p.hash == a {
                bytes_a += p.len as u64;
            } else {
                bytes_b += p.len as u64;
            }
        }
        // Equal bytes per round, not equal packets: within one quantum of each other.
        assert!(bytes_a.abs_diff(bytes_b) <= 1514 * 2, "{bytes_a} vs {bytes_b}");
    }

    #[test]
    fn a_sparse_flow_is_served_before_a_backlogged_one() {
        let mut q = fq(FqCodelParams::default());
        let (a, b) = two_flows(&q);
        let mut d = Drops::default();
        for i in 0..50 {
            q.enqueue(Time::ZERO, TestPacket::new(i, 1500).hash(a), &mut d);
        }
        q.dequeue(Time::ZERO, &mut d);
        q.dequeue(Time::ZERO, &mut d);
        // b arrives with one packet: it joins the new list and goes next.
        q.enqueue(Time::ZERO, TestPacket::new(999, 100).hash(b), &mut d);
        assert_eq!(q.dequeue(Time::ZERO, &mut d).unwrap().id, 999);
    }

    #[test]
    fn a_new_flow_that_empties_passes_through_the_old_list_once() {
        let mut q = fq(FqCodelParams::default());
        let (a, b) = two_flows(&q);
        let (ia, ib) = (q.bucket_of(a), q.bucket_of(b));
        let mut d = Drops::default();
        for i in 0..50 {
            q.enqueue(Time::ZERO, TestPacket::new(i, 1500).hash(a), &mut d);
        }
        q.dequeue(Time::ZERO, &mut d);
        q.dequeue(Time::ZERO, &mut d);
        q.enqueue(Time::ZERO, TestPacket::new(100, 1500).hash(b), &mut d);
        // a's deficit is spent: it moves to the old list and b, new, is served.
        assert_eq!(q.dequeue(Time::ZERO, &mut d).unwrap().id, 100);
        assert_eq!(q.old_flows.iter().copied().collect::<Vec<_>>(), vec![ia]);
        // b is empty now, but the old list is not: b goes to the old list's tail instead of leaving, so a
        // packet it sends next does not jump the queue as a "new" flow (RFC 8290 §4.2).
        assert_eq!(q.dequeue(Time::ZERO, &mut d).unwrap().hash, a);
        assert_eq!(q.old_flows.iter().copied().collect::<Vec<_>>(), vec![ia, ib]);
        assert!(q.flows[ib as usize].on_list && q.new_flows.is_empty());
    }

    #[test]
    fn overflow_drops_half_of_the_fattest_flow_from_its_head() {
        let mut q = fq_limited(FqCodelParams::default(), QueueLimit::Packets(100));
        let (a, b) = two_flows(&q);
        let mut d = Drops::default();
        for i in 0..80 {
            assert!(q.enqueue(Time::ZERO, TestPacket::new(i, 1500).hash(a), &mut d));
        }
        for i in 0..20 {
            assert!(q.enqueue(Time::ZERO, TestPacket::new(100 + i, 1500).hash(b), &mut d));
        }
        // The 101st packet (flow b) overflows: flow a is the fattest (80 packets); half of its 120 000 bytes go,
        // 40 packets from its head, and its CoDel count rises by 40.
        assert!(q.enqueue(Time::ZERO, TestPacket::new(200, 1500).hash(b), &mut d));
        assert_eq!(d.0.len(), 40);
        assert!(
            d.0.iter()
                .all(|(p, r)| p.hash == a && *r == DropReason::Overlimit)
        );
        assert_eq!(
            d.0.iter().map(|(p, _)| p.id).collect::<Vec<_>>(),
            (0..40).collect::<Vec<_>>()
        );
        let ia = q.bucket_of(a);
        assert_eq!(q.bucket_len(ia), 40);
        assert_eq!(q.bucket_vars(ia).count, 40);
        assert_eq!(q.backlog_packets(), 61);
        assert_eq!(q.drop_overlimit, 40);
    }

    #[test]
    fn batch_drop_stops_at_the_batch_size() {
        let mut q = fq_limited(
            FqCodelParams {
                drop_batch_size: 64,
                ..FqCodelParams::default()
            },
            QueueLimit::Packets(1000),
        );
        let (a, _) = two_flows(&q);
        let mut d = Drops::default();
        for i in 0..1001 {
            q.enqueue(Time::ZERO, TestPacket::new(i, 1500).hash(a), &mut d);
        }
        assert_eq!(d.0.len(), 64);
        assert_eq!(q.backlog_packets(), 1001 - 64);
    }

    #[test]
    fn an_arrival_alone_in_the_fattest_bucket_is_itself_dropped() {
        let mut q = fq_limited(FqCodelParams::default(), QueueLimit::Bytes(3000));
        let (a, b) = two_flows(&q);
        let mut d = Drops::default();
        assert!(q.enqueue(Time::ZERO, TestPacket::new(1, 1000).hash(a), &mut d));
        assert!(q.enqueue(Time::ZERO, TestPacket::new(2, 1000).hash(a), &mut d));
        // b's 1500-byte packet overflows; a (2000 bytes) is the fattest: its head packet goes (half of its
        // backlog), leaving 2500 bytes, which fits.
        assert!(q.enqueue(Time::ZERO, TestPacket::new(3, 1500).hash(b), &mut d));
        assert_eq!(d.0[0].0.id, 1);
        // Now a 2900-byte arrival on a new flow c is the fattest alone: it is dropped itself.
        let c = (3..)
            .find(|&h| q.bucket_of(h) != q.bucket_of(a) && q.bucket_of(h) != q.bucket_of(b))
            .unwrap();
        assert!(!q.enqueue(Time::ZERO, TestPacket::new(4, 2900).hash(c), &mut d));
        assert!(q.backlog_bytes() <= 3000);
    }

    #[test]
    fn codel_runs_per_bucket() {
        let mut q = fq(FqCodelParams {
            ecn: false,
            ..FqCodelParams::default()
        });
        let (a, b) = two_flows(&q);
        let mut d = Drops::default();
        // Flow a has a standing queue; flow b only fresh packets.
        for i in 0..2000 {
            q.enqueue(Time::ZERO, TestPacket::new(i, 1500).hash(a), &mut d);
        }
        let mut t = ms(0);
        for k in 0..400u64 {
            t = ms(k);
            q.enqueue(t, TestPacket::new(100_000 + k, 1500).hash(b).at(t), &mut d);
            q.dequeue(t, &mut d);
            q.dequeue(t, &mut d);
        }
        assert!(d.aqm_drops() > 0);
        assert!(
            d.0.iter().all(|(p, _)| p.hash == a),
            "only the standing queue is dropped from"
        );
        assert!(q.bucket_vars(q.bucket_of(a)).dropping);
        assert!(!q.bucket_vars(q.bucket_of(b)).dropping);
        let _ = t;
    }
}
