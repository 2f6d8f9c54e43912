//! PPV, Per-Packet Value resource sharing (Nádas, Turányi, Rácz, "Per Packet Value: A Practical Concept for
//! Network Resource Sharing", GLOBECOM 2016; core-stateless AQM: Gombos, Hudoba, Laki, Nádas, "Towards a
//! Congestion Control-Independent Core-Stateless AQM", ANRW 2018).
//!
//! In a nutshell: the sharing policy lives at the network edge. A marker keeps, per flow, a throughput-value
//! function (TVF) V(r), decreasing in the rate r, and stamps each packet with a packet value (PV) so that a flow
//! sending at rate R carries the values V(r) for r spread over [0, R]. The bottleneck knows nothing about flows:
//! when its buffer is full it drops the packet with the **lowest** value, the arriving one or one already queued.
//! The values that survive are above a congestion threshold value CTV; a flow keeps the rate r* with
//! V(r*) = CTV, so equal TVFs give equal shares whatever the congestion controls, and a TVF scaled by w
//! (V(r/w)) gives w times the share.
//!
//! The marker is the practical one of the 2016 paper: the TVF is quantised into rate regions, each with a token
//! bucket filled at the region's width; a packet takes the value of the lowest region (highest value) whose
//! bucket has tokens. Our TVF is logarithmic: regions are `regions_per_octave` per octave of rate from
//! C·2^−`octaves` up to the link rate C, plus one region below (the highest value) and one above C (value 1);
//! region values fall by one per region. Buckets hold `bucket_ns` worth of their region's rate and may go into
//! debt by one packet, so regions narrower than a packet per bucket still pass their average rate. The depth is
//! the time scale over which the marker measures a flow's rate: 100 ms by default, one RTT of the longest paths
//! the other AQMs' defaults assume (CoDel's interval), so that a window-limited flow's ACK-clocked bursts count
//! at the flow's rate, not as rate peaks. (Sources relay "rate × typical core buffer delay"; with a 0.2-BDP
//! buffer at 10 ms that is 2 ms, and Cubic flows, bursty on that scale, then get values far below their
//! rate's: Cubic's relative goodput against BBRv1 falls from 0.81 to 0.68 in the PPV scenario.)
//!
//! Deviations: the core-stateless AQM's delay controller of the ANRW paper (a PIE-like probability turned into
//! a CTV from the recent PV distribution) is not modelled: the bottleneck is the basic PPV buffer, dropping
//! lowest values only when full. Among equal lowest values the oldest queued packet
//! goes; an arrival whose value is not above the lowest queued one is itself dropped. The logarithmic TVF and
//! its resolution are our choice (the papers leave the TVF to the operator).

use ccfair_core::{DropReason, FieldError, PacketMeta, ParamDoc, Time};
use serde::{Deserialize, Serialize};

use crate::heap::IndexedHeap;
use crate::params::BuildContext;
use crate::pool::{List, Pool};
use crate::queue::{Backlog, QueueLimit, preallocated_packets};
use crate::{Qdisc, QdiscSink, QdiscStats, count_dequeue, drop_packet, qdisc_accessors};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PpvParams {
    /// TVF resolution: value regions per doubling of rate.
    pub regions_per_octave: u32,
    /// TVF range: octaves of rate below the link rate that get their own values.
    pub octaves: u32,
    /// Marker bucket depth as time at the region's rate: the marker's rate-measurement time scale.
    pub bucket_ns: u64,
    /// Weight of each flow group's TVF (V(r/w)); empty: every flow has weight 1.
    pub weights: Vec<f64>,
}

impl Default for PpvParams {
    fn default() -> Self {
        PpvParams {
            regions_per_octave: 4,
            octaves: 12,
            bucket_ns: 100_000_000,
            weights: Vec::new(),
        }
    }
}

pub const PARAMS: &[ParamDoc] = &[
    ParamDoc {
        name: "regions_per_octave",
        allowed: "1..=64",
        doc: "TVF resolution: packet-value regions per doubling of rate (4)",
    },
    ParamDoc {
        name: "octaves",
        allowed: "1..=40",
        doc: "TVF range: octaves below the link rate with distinct values (12)",
    },
    ParamDoc {
        name: "bucket_ns",
        allowed: "> 0 ns (e.g. \"100ms\")",
        doc: "marker token-bucket depth as time at each region's rate: its rate-measurement time scale (100 ms)",
    },
    ParamDoc {
        name: "weights",
        allowed: "one positive number per flow group, or empty",
        doc: "TVF weight per flow group, V(r/w): w times the share (default: all equal)",
    },
];

impl PpvParams {
    pub fn validate(&self) -> Result<(), FieldError> {
        if !(1..=64).contains(&self.regions_per_octave) {
            return FieldError::err("regions_per_octave", "must be between 1 and 64");
        }
        if !(1..=40).contains(&self.octaves) {
            return FieldError::err("octaves", "must be between 1 and 40");
        }
        if self.bucket_ns == 0 {
            return FieldError::err("bucket_ns", "must be a positive duration");
        }
        if let Some(w) = self.weights.iter().find(|w| !(w.is_finite() && **w > 0.0)) {
            return FieldError::err(
                "weights",
                format!("every weight must be a positive number, got {w}"),
            );
        }
        Ok(())
    }

    /// The highest packet value the marker gives (its lowest rate region); values run from 1 (above the link
    /// rate) up to this, one per region.
    pub fn max_value(&self) -> u32 {
        self.octaves * self.regions_per_octave + 2
    }

    /// The weights, if given, must be one per flow group.
    pub fn validate_groups(&self, groups: usize) -> Result<(), FieldError> {
        if !self.weights.is_empty() && self.weights.len() != groups {
            return FieldError::err(
                "weights",
                format!(
                    "needs one weight per flow group ({groups}), got {}",
                    self.weights.len()
                ),
            );
        }
        Ok(())
    }
}

/// The edge marker: per flow, one token bucket per TVF region. All state is allocated when the run starts.
pub struct PpvMarker {
    regions: usize,
    /// Per region, for weight 1: token rate (bytes per ns) and bucket depth (bytes).
    rate_bytes_per_ns: Vec<f64>,
    depth_bytes: Vec<f64>,
    /// Per flow × region: tokens (bytes; negative = debt of the last packet).
    tokens: Vec<f64>,
    last_ns: Vec<u64>,
    weight: Vec<f64>,
}

impl PpvMarker {
    /// A marker for flows whose groups are `flow_groups[flow]`.
    pub fn new(params: &PpvParams, ctx: &BuildContext, flow_groups: &[u32]) -> Result<Self, FieldError> {
        params.validate_groups(flow_groups.iter().map(|&g| g as usize + 1).max().unwrap_or(0))?;
        let link_bytes_per_ns = ctx.rate_bps as f64 / 8e9;
        let bucket_ns = params.bucket_ns as f64;
        // Region edges r_k = C·2^(k/n − octaves), k = 0..=K; region 0 is [0, r_0), region k is [r_(k−1), r_k),
        // and region K+1 (rates above C) has no bucket.
        let n = params.regions_per_octave as f64;
        let k_max = (params.octaves * params.regions_per_octave) as usize;
        let edge = |k: usize| link_bytes_per_ns * (k as f64 / n - params.octaves as f64).exp2();
        let mut rate = Vec::with_capacity(k_max + 1);
        rate.push(edge(0));
        for k in 1..=k_max {
            rate.push(edge(k) - edge(k - 1));
        }
        let depth: Vec<f64> = rate.iter().map(|r| r * bucket_ns).collect();
        let regions = rate.len();
        debug_assert_eq!(regions as u32 + 1, params.max_value());
        let weight: Vec<f64> = flow_groups
            .iter()
            .map(|&g| params.weights.get(g as usize).copied().unwrap_or(1.0))
            .collect();
        let mut tokens = Vec::with_capacity(flow_groups.len() * regions);
        for w in &weight {
            tokens.extend(depth.iter().map(|d| d * w));
        }
        Ok(PpvMarker {
            regions,
            rate_bytes_per_ns: rate,
            depth_bytes: depth,
            tokens,
            last_ns: vec![0; flow_groups.len()],
            weight,
        })
    }

    /// The value of region `j` (0 = lowest rates): the highest region count down to 1 above the link rate.
    pub fn value_of_region(&self, j: usize) -> u32 {
        (self.regions + 1 - j) as u32
    }

    /// The highest value the marker gives.
    pub fn max_value(&self) -> u32 {
        self.value_of_region(0)
    }

    /// Stamps a packet of `wire_len` bytes that `flow` sends at `now`: refills the flow's buckets, then takes
    /// the value of the lowest region with tokens.
    pub fn mark(&mut self, now: Time, flow: u32, wire_len: u32) -> u32 {
        let f = flow as usize;
        let dt = now.ns().saturating_sub(self.last_ns[f]) as f64;
        self.last_ns[f] = now.ns();
        let w = self.weight[f];
        let base = f * self.regions;
        let tokens = &mut self.tokens[base..base + self.regions];
        for ((t, r), d) in tokens
            .iter_mut()
            .zip(&self.rate_bytes_per_ns)
            .zip(&self.depth_bytes)
        {
            *t = (*t + r * w * dt).min(d * w);
        }
        match tokens.iter().position(|&t| t > 0.0) {
            Some(j) => {
                tokens[j] -= wire_len as f64;
                self.value_of_region(j)
            }
            None => 1,
        }
    }
}

/// Heap key of a queued packet: lowest value first, then the oldest.
fn lowest_key(value: u32, seq: u64) -> u128 {
    (((u32::MAX - value) as u128) << 64) | (u64::MAX - seq) as u128
}

/// The PPV bottleneck: a FIFO that, when full, drops its lowest-valued packet.
pub struct Ppv<P> {
    pool: Pool<P>,
    fifo: List,
    lowest: IndexedHeap,
    seq: u64,
    backlog: Backlog,
    stats: QdiscStats,
}

impl<P> Ppv<P> {
    /// The bottleneck queue (its parameters are the marker's: see [`PpvMarker::new`]).
    pub fn new(limit: QueueLimit, mtu_bytes: u32) -> Self {
        let cap = preallocated_packets(limit, mtu_bytes);
        Ppv {
            pool: Pool::with_capacity(cap),
            fifo: List::default(),
            lowest: IndexedHeap::with_capacity(cap),
            seq: 0,
            backlog: Backlog::new(limit),
            stats: QdiscStats::default(),
        }
    }
}

impl<P: PacketMeta + Send> Qdisc<P> for Ppv<P> {
    fn enqueue(&mut self, now: Time, pkt: P, sink: &mut dyn QdiscSink<P>) -> bool {
        let value = pkt.packet_value();
        while !self.backlog.admits(pkt.wire_len()) {
            let victim = self
                .lowest
                .top()
                .map(|(slot, _)| slot)
                .filter(|&slot| self.pool.get(slot).packet_value() < value);
            let Some(slot) = victim else {
                // Nothing queued is worth less than the arrival: it goes.
                drop_packet(&mut self.stats, sink, now, pkt, DropReason::Overlimit);
                return false;
            };
            self.lowest.remove(slot);
            let out = self.pool.remove(&mut self.fifo, slot);
            self.backlog.remove(out.wire_len());
            drop_packet(&mut self.stats, sink, now, out, DropReason::Overlimit);
        }
        self.backlog.add(pkt.wire_len(), &mut self.stats);
        let slot = self.pool.push_back(&mut self.fifo, pkt);
        self.lowest.set(slot, lowest_key(value, self.seq));
        self.seq += 1;
        true
    }

    fn dequeue(&mut self, _now: Time, _sink: &mut dyn QdiscSink<P>) -> Option<P> {
        let slot = self.fifo.front()?;
        self.lowest.remove(slot);
        let pkt = self.pool.remove(&mut self.fifo, slot);
        self.backlog.remove(pkt.wire_len());
        count_dequeue(&mut self.stats, &pkt);
        Some(pkt)
    }

    qdisc_accessors!(backlog, PpvParams);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_packet::{Drops, TestPacket};

    #[test]
    fn a_full_buffer_drops_the_lowest_value_first() {
        let mut q = Ppv::new(QueueLimit::Packets(4), 1500);
        let mut d = Drops::default();
        for (id, v) in [(1, 50), (2, 10), (3, 30), (4, 10)] {
            assert!(q.enqueue(Time::ZERO, TestPacket::new(id, 1500).value(v), &mut d));
        }
        // Full. A value-40 arrival displaces the oldest of the two value-10 packets.
        assert!(q.enqueue(Time::ZERO, TestPacket::new(5, 1500).value(40), &mut d));
        assert_eq!(d.0.last().unwrap().0.id, 2);
        // A value-10 arrival is not worth more than the lowest queued (10): it is dropped itself.
        assert!(!q.enqueue(Time::ZERO, TestPacket::new(6, 1500).value(10), &mut d));
        assert_eq!(d.0.last().unwrap().0.id, 6);
        // FIFO order among the survivors.
        let order: Vec<u64> = std::iter::from_fn(|| q.dequeue(Time::ZERO, &mut d).map(|p| p.id)).collect();
        assert_eq!(order, vec![1, 3, 4, 5]);
    }

    #[test]
    fn a_byte_limit_drops_as_many_low_values_as_needed() {
        let mut q = Ppv::new(QueueLimit::Bytes(3000), 1500);
        let mut d = Drops::default();
        for (id, v) in [(1, 5), (2, 7), (3, 9)] {
            q.enqueue(Time::ZERO, TestPacket::new(id, 1000).value(v), &mut d);
        }
        assert!(q.enqueue(Time::ZERO, TestPacket::new(4, 1500).value(8), &mut d));
        assert_eq!(d.0.iter().map(|(p, _)| p.id).collect::<Vec<_>>(), vec![1, 2]);
        assert_eq!(q.backlog_bytes(), 2500);
    }

    fn marker(flows: usize) -> PpvMarker {
        let ctx = BuildContext {
            rate_bps: 100_000_000,
            mtu_bytes: 1500,
            seed: 1,
        };
        PpvMarker::new(
            &PpvParams {
                bucket_ns: 20_000_000,
                ..PpvParams::default()
            },
            &ctx,
            &vec![0; flows],
        )
        .unwrap()
    }

    /// Packet values a flow sending `rate_bps` in 1500-byte packets gets over 2 s (after a 1 s warm-up).
    fn values_at(m: &mut PpvMarker, flow: u32, rate_bps: f64) -> Vec<u32> {
        let gap_ns = 1500.0 * 8e9 / rate_bps;
        let mut out = vec![];
        let mut t = 0.0;
        while t < 3e9 {
            let v = m.mark(Time::from_ns(t as u64), flow, 1500);
            if t >= 1e9 {
                out.push(v);
            }
            t += gap_ns;
        }
        out
    }

    #[test]
    fn a_faster_flow_carries_lower_values() {
        let mut m = marker(2);
        let slow = values_at(&mut m, 0, 5e6);
        let fast = values_at(&mut m, 1, 40e6);
        let min_slow = *slow.iter().min().unwrap();
        // The fast flow's packets reach down to values the slow one never uses, and its share of packets at or
        // above the slow flow's lowest value is about its fair part of 5 Mbit/s.
        assert!(fast.iter().min().unwrap() < &min_slow);
        let kept = fast.iter().filter(|&&v| v >= min_slow).count() as f64 / fast.len() as f64;
        assert!(kept < 0.25, "{kept}");
    }

    #[test]
    fn values_above_a_threshold_carry_the_rate_the_tvf_gives() {
        // The rate a flow keeps when everything below value v is dropped does not depend on its sending rate:
        // the CTV property that makes equal TVFs share equally.
        let mut m = marker(2);
        let a = values_at(&mut m, 0, 20e6);
        let b = values_at(&mut m, 1, 60e6);
        let ctv = m.value_of_region(4 * 12 - 8); // the region ending two octaves below 100 Mbit/s (25 Mbit/s)
        let kept =
            |v: &[u32], rate: f64| v.iter().filter(|&&x| x >= ctv).count() as f64 / v.len() as f64 * rate;
        let (ra, rb) = (kept(&a, 20e6), kept(&b, 60e6));
        assert!(ra > 19e6, "a keeps {ra}"); // below the threshold rate: everything is kept
        assert!((rb - 25e6).abs() / 25e6 < 0.1, "b keeps {rb}");
    }

    #[test]
    fn weights_scale_the_tvf() {
        let ctx = BuildContext {
            rate_bps: 100_000_000,
            mtu_bytes: 1500,
            seed: 1,
        };
        let params = PpvParams {
            bucket_ns: 20_000_000,
            weights: vec![1.0, 2.0],
            ..PpvParams::default()
        };
        let mut m = PpvMarker::new(&params, &ctx, &[0, 1]).unwrap();
        let ctv = m.value_of_region(4 * 12 - 8);
        let a = values_at(&mut m, 0, 60e6);
        let b = values_at(&mut m, 1, 60e6);
        let kept = |v: &[u32]| v.iter().filter(|&&x| x >= ctv).count() as f64 / v.len() as f64 * 60e6;
        assert!(
            (kept(&b) / kept(&a) - 2.0).abs() < 0.15,
            "{} vs {}",
            kept(&b),
            kept(&a)
        );
        let e = PpvMarker::new(&params, &ctx, &[0, 1, 2]).err().unwrap();
        assert_eq!(e.field, "weights");
    }
}
