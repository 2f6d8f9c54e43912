//! The emulated bottleneck, without I/O: per-flow path loss, the scenario's queue discipline (the simulator's
//! own `Qdisc` code, built from the same `AqmConfig`), a link that serializes at exactly the configured rate,
//! and per-flow delay lines on the data and ACK directions.
//!
//! Data frames (sender to receiver): Bernoulli loss on the flow's own path first (data segments only, as in
//! the simulator), then the edge marker of a core-stateless AQM (PPV, VDQ-CSAQM: the packet value, stamped per
//! flow as the simulator's senders' edge does), then the qdisc, then the link, then the flow's data delay line. ACK frames (receiver to
//! sender) cross the flow's ACK delay line only: the reverse path is uncongested, as in the simulator.
//!
//! The link works like the simulator's (`ccfair-sim/src/net/link.rs`): a packet leaves the qdisc when its
//! serialization starts (so sojourn is queueing delay only) and ends at `busy_start + ⌈8·bytes·10⁹/rate⌉`,
//! the bytes counted since the link last went busy; ideal times never drift, however late the emulator runs.
//! Every event is processed at its ideal time (the qdisc sees ideal `now`s, in order); the I/O layer sends
//! the frames [`Shaper::advance`] hands out and measures how late it was against their ideal times.
//!
//! A delay line holds frames in arrival order; with a constant delay per flow and direction their release
//! times are in order too, so one heap entry per non-empty line finds the next release (the simulator's
//! pipe scheme). Lines are preallocated for the bandwidth-delay product; a deeper line grows (rarely, early).

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use ccfair_aqm::{AqmConfig, BuildContext, PpvMarker, Qdisc, QdiscSink};
use ccfair_core::rng::StreamId;
use ccfair_core::{DropReason, Dur, Ecn, PacketMeta, Rate, Rng, Time};

use crate::frame::EmuPacket;
use crate::pool::Pool;
use crate::record::Recorder;

/// Where a frame handed out by [`Shaper::advance`] goes.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Out {
    ToReceiver,
    ToSender,
}

/// One flow's path.
#[derive(Clone, Debug)]
pub struct Path {
    /// Propagation delay after the bottleneck, sender to receiver.
    pub data_delay: Dur,
    /// Propagation delay receiver to sender.
    pub ack_delay: Dur,
    /// Bernoulli loss probability of data segments before the bottleneck.
    pub loss: f64,
    /// The flow's group in the scenario (for the edge marker's per-group weights).
    pub group: u32,
}

/// Frees dropped frames and counts drops and marks.
struct Sink<'a> {
    pool: &'a mut Pool,
    rec: &'a mut Recorder,
}

impl QdiscSink<EmuPacket> for Sink<'_> {
    fn dropped(&mut self, _now: Time, pkt: EmuPacket, reason: DropReason) {
        debug_assert_ne!(reason, DropReason::PathLoss);
        self.rec.queue_drop(pkt.flow);
        self.pool.release(pkt.slot);
    }
    fn marked(&mut self, _now: Time, pkt: &EmuPacket) {
        self.rec.marked(pkt.flow);
    }
}

pub struct Shaper {
    qdisc: Box<dyn Qdisc<EmuPacket>>,
    /// The edge marker the queue discipline needs, if any.
    marker: Option<PpvMarker>,
    rate: Rate,
    busy_start: Time,
    /// When the packet in transmission started serializing.
    tx_start: Time,
    busy_bytes: u128,
    in_tx: Option<(EmuPacket, Time)>,
    paths: Vec<Path>,
    loss_rng: Vec<Rng>,
    /// Line `2f` is flow f's data line, `2f + 1` its ACK line.
    lines: Vec<VecDeque<(Time, EmuPacket)>>,
    heads: BinaryHeap<Reverse<(Time, u32)>>,
    pub pool: Pool,
    pub rec: Recorder,
}

impl Shaper {
    pub fn new(
        aqm: &AqmConfig,
        rate: Rate,
        mtu_bytes: u32,
        paths: Vec<Path>,
        seed: u64,
        pool: Pool,
        rec: Recorder,
    ) -> Shaper {
        let bdp_frames = |d: Dur| (rate.bytes_in_ns(d.ns()) / 1000) as usize + 64;
        let lines = paths
            .iter()
            .flat_map(|p| {
                [
                    VecDeque::with_capacity(bdp_frames(p.data_delay)),
                    VecDeque::with_capacity(bdp_frames(p.ack_delay)),
                ]
            })
            .collect();
        let ctx = BuildContext {
            rate_bps: rate.bps(),
            mtu_bytes,
            seed,
        };
        let groups: Vec<u32> = paths.iter().map(|p| p.group).collect();
        Shaper {
            qdisc: aqm
                .build(&ctx)
                .expect("the front end validates the queue discipline"),
            marker: aqm
                .edge_marker(&ctx, &groups)
                .expect("the front end validates the marker's weights"),
            rate,
            busy_start: Time::ZERO,
            tx_start: Time::ZERO,
            busy_bytes: 0,
            in_tx: None,
            loss_rng: (0..paths.len())
                .map(|f| Rng::stream(seed, StreamId::PathLoss(f as u32)))
                .collect(),
            heads: BinaryHeap::with_capacity(paths.len() * 2 + 1),
            paths,
            lines,
            pool,
            rec,
        }
    }

    pub fn backlog_bytes(&self) -> u64 {
        self.qdisc.backlog_bytes()
    }

    pub fn backlog_packets(&self) -> u32 {
        self.qdisc.backlog_packets()
    }

    /// A frame of flow `pkt.flow` arrived from the sender at `now`; `payload` and `seq` are its TCP payload
    /// length and sequence number (0 for non-data frames, which are never lost on the path).
    pub fn from_sender(&mut self, now: Time, mut pkt: EmuPacket, payload: u32, seq: u32) {
        let f = pkt.flow as usize;
        if payload > 0 {
            self.rec.data_arrived(now, pkt.flow, seq, payload);
            if self.loss_rng[f].bernoulli(self.paths[f].loss) {
                self.rec.path_drop(pkt.flow);
                self.pool.release(pkt.slot);
                return;
            }
        }
        if let Some(m) = &mut self.marker {
            pkt.packet_value = m.mark(now, pkt.flow, pkt.wire_len());
        }
        pkt.set_enqueue_ts(now);
        let mut sink = Sink {
            pool: &mut self.pool,
            rec: &mut self.rec,
        };
        self.qdisc.enqueue(now, pkt, &mut sink);
        if self.in_tx.is_none() {
            self.busy_start = now;
            self.busy_bytes = 0;
            self.start_next(now);
        }
    }

    /// A frame of flow `pkt.flow` arrived from the receiver at `now`.
    pub fn from_receiver(&mut self, now: Time, pkt: EmuPacket) {
        let line = pkt.flow * 2 + 1;
        let release = now + self.paths[pkt.flow as usize].ack_delay;
        self.push_line(line, release, pkt);
    }

    fn push_line(&mut self, line: u32, release: Time, pkt: EmuPacket) {
        let l = &mut self.lines[line as usize];
        if l.is_empty() {
            self.heads.push(Reverse((release, line)));
        }
        l.push_back((release, pkt));
    }

    /// When the bytes of the busy period so far have finished serializing.
    fn busy_end(&self) -> Time {
        let ns = (self.busy_bytes * 8 * 1_000_000_000).div_ceil(self.rate.bps() as u128);
        Time::from_ns(self.busy_start.ns() + ns as u64)
    }

    fn start_next(&mut self, now: Time) {
        let mut sink = Sink {
            pool: &mut self.pool,
            rec: &mut self.rec,
        };
        let Some(pkt) = self.qdisc.dequeue(now, &mut sink) else {
            return;
        };
        // L4S traffic is what arrived as ECT(1), as a DualQ classifier sees it.
        let l4s = pkt.wire_ecn == Ecn::Ect1;
        self.rec
            .departed(now.saturating_since(pkt.enqueue_ts()).ns(), l4s);
        self.tx_start = self.busy_end();
        self.busy_bytes += pkt.wire_len() as u128;
        self.in_tx = Some((pkt, self.busy_end()));
    }

    /// When the next event is due (a serialization ends or a delay line releases a frame).
    pub fn next_deadline(&self) -> Option<Time> {
        let link = self.in_tx.as_ref().map(|&(_, end)| end);
        let line = self.heads.peek().map(|Reverse((t, _))| *t);
        match (link, line) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Runs every event due at or before `now`, in time order, and appends the frames to send with their
    /// ideal departure times to `out` (which keeps its capacity between calls).
    pub fn advance(&mut self, now: Time, out: &mut Vec<(EmuPacket, Out, Time)>) {
        loop {
            let link = self.in_tx.as_ref().map(|&(_, end)| end).filter(|&e| e <= now);
            let line = self
                .heads
                .peek()
                .map(|Reverse((t, l))| (*t, *l))
                .filter(|&(t, _)| t <= now);
            match (link, line) {
                (Some(end), l) if l.is_none_or(|(t, _)| end <= t) => self.link_done(end, out),
                (_, Some((t, l))) => {
                    self.heads.pop();
                    let (release, pkt) = self.lines[l as usize]
                        .pop_front()
                        .expect("a head entry means a non-empty line");
                    debug_assert_eq!(release, t);
                    if let Some(&(next, _)) = self.lines[l as usize].front() {
                        self.heads.push(Reverse((next, l)));
                    }
                    let dir = if l % 2 == 0 {
                        Out::ToReceiver
                    } else {
                        Out::ToSender
                    };
                    out.push((pkt, dir, t));
                }
                _ => return,
            }
        }
    }

    fn link_done(&mut self, end: Time, out: &mut Vec<(EmuPacket, Out, Time)>) {
        let (pkt, _) = self
            .in_tx
            .take()
            .expect("link_done with a packet in transmission");
        self.rec.link_tx(pkt.wire_len(), self.tx_start, end);
        let delay = self.paths[pkt.flow as usize].data_delay;
        if delay == Dur::ZERO {
            out.push((pkt, Out::ToReceiver, end));
        } else {
            self.push_line(pkt.flow * 2, end + delay, pkt);
        }
        self.start_next(end);
        if self.in_tx.is_none() {
            self.busy_bytes = 0;
        }
    }

    /// Frames still held (queue, link, delay lines) when the run ends.
    pub fn held_frames(&self) -> u64 {
        self.qdisc.backlog_packets() as u64
            + self.in_tx.is_some() as u64
            + self.lines.iter().map(|l| l.len() as u64).sum::<u64>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ccfair_aqm::QueueLimit;
    use ccfair_core::Ecn;

    fn pkt(pool: &mut Pool, flow: u32, ip_len: u32) -> EmuPacket {
        EmuPacket {
            slot: pool.alloc().expect("slot"),
            frame_len: (ip_len + 14) as u16,
            flow,
            ip_len,
            enqueue_ts: Time::ZERO,
            ecn: Ecn::NotEct,
            wire_ecn: Ecn::NotEct,
            hash: flow,
            ack: 0,
            data_end: None,
            is_tcp: true,
            packet_value: 0,
        }
    }

    fn shaper(rate_bps: u64, limit: u32, paths: Vec<Path>) -> Shaper {
        shaper_with(AqmConfig::fifo(QueueLimit::Packets(limit)), rate_bps, paths)
    }

    fn shaper_with(aqm: AqmConfig, rate_bps: u64, paths: Vec<Path>) -> Shaper {
        let n = paths.len();
        Shaper::new(
            &aqm,
            Rate::from_bps(rate_bps),
            1500,
            paths,
            1,
            Pool::new(4096, 64),
            Recorder::new(n, 1_000_000),
        )
    }

    fn path(data_ms: u64, ack_ms: u64) -> Path {
        Path {
            data_delay: Dur::from_ms(data_ms),
            ack_delay: Dur::from_ms(ack_ms),
            loss: 0.0,
            group: 0,
        }
    }

    /// Runs the shaper to `until`, returning (flow, direction, ideal time) of everything it sent.
    fn drain(s: &mut Shaper, until: Time) -> Vec<(u32, Out, u64)> {
        let mut out = Vec::new();
        let mut sent = Vec::new();
        while let Some(t) = s.next_deadline().filter(|&t| t <= until) {
            s.advance(t, &mut out);
            for (p, d, t) in out.drain(..) {
                s.pool.release(p.slot);
                sent.push((p.flow, d, t.ns()));
            }
        }
        sent
    }

    #[test]
    fn back_to_back_packets_leave_at_exact_serialization_times_plus_delay() {
        // 12 Mbit/s: a 1500-byte packet takes exactly 1 ms; data delay 10 ms.
        let mut s = shaper(12_000_000, 100, vec![path(10, 0)]);
        for _ in 0..3 {
            let p = pkt(&mut s.pool, 0, 1500);
            s.from_sender(Time::ZERO, p, 1448, 0);
        }
        let sent = drain(&mut s, Time::from_ns(u64::MAX / 2));
        let times: Vec<u64> = sent.iter().map(|x| x.2).collect();
        assert_eq!(times, vec![11_000_000, 12_000_000, 13_000_000]);
        assert!(sent.iter().all(|x| x.1 == Out::ToReceiver));
        assert_eq!(s.pool.in_use(), 0);
    }

    #[test]
    fn serialization_does_not_drift_over_a_long_busy_period() {
        // 3 Mbit/s and 1001-byte packets: 2.669333.. ms each, never a whole number of ns.
        let mut s = shaper(3_000_000, 2000, vec![path(0, 0)]);
        for _ in 0..1000 {
            let p = pkt(&mut s.pool, 0, 1001);
            s.from_sender(Time::ZERO, p, 949, 0);
        }
        let sent = drain(&mut s, Time::from_ns(u64::MAX / 2));
        let last = sent.last().unwrap().2 as u128;
        assert_eq!(last, (1000u128 * 1001 * 8 * 1_000_000_000).div_ceil(3_000_000));
    }

    #[test]
    fn the_queue_limit_drops_and_counts_per_flow() {
        let mut s = shaper(1_000_000, 2, vec![path(0, 0), path(0, 0)]);
        for f in [0, 1, 1, 1] {
            let p = pkt(&mut s.pool, f, 1500);
            s.from_sender(Time::ZERO, p, 1448, 0);
        }
        // One in transmission, two queued, the fourth dropped.
        let recs = s.rec.flow_records();
        assert_eq!(recs[1].total.queue_drops, 1);
        assert_eq!(recs[0].total.queue_drops, 0);
        assert_eq!(drain(&mut s, Time::from_ns(u64::MAX / 2)).len(), 3);
        assert_eq!(s.pool.in_use(), 0, "the dropped frame's slot is free again");
    }

    #[test]
    fn per_flow_delays_apply_per_direction() {
        let mut s = shaper(1_000_000_000, 100, vec![path(5, 20), path(30, 1)]);
        let a = pkt(&mut s.pool, 0, 64);
        s.from_receiver(Time::ZERO, a);
        let b = pkt(&mut s.pool, 1, 64);
        s.from_receiver(Time::ZERO, b);
        let c = pkt(&mut s.pool, 1, 1500);
        s.from_sender(Time::ZERO, c, 1448, 0);
        let sent = drain(&mut s, Time::from_ns(u64::MAX / 2));
        assert_eq!(
            sent,
            vec![
                (1, Out::ToSender, 1_000_000),
                (0, Out::ToSender, 20_000_000),
                (1, Out::ToReceiver, 30_000_000 + 12_000),
            ]
        );
    }

    #[test]
    fn path_loss_drops_the_configured_fraction_of_data_only() {
        let mut p = path(0, 0);
        p.loss = 0.1;
        let mut s = shaper(100_000_000_000, 100_000, vec![p]);
        let mut out = Vec::new();
        for i in 0..20_000u32 {
            let q = pkt(&mut s.pool, 0, 100);
            s.from_sender(Time::from_ns(i as u64 * 1000), q, 48, i * 48);
            let ack = pkt(&mut s.pool, 0, 52);
            s.from_sender(Time::from_ns(i as u64 * 1000), ack, 0, 0); // pure ACKs are never lost
            s.advance(Time::from_ns(i as u64 * 1000 + 999), &mut out);
            for (p, _, _) in out.drain(..) {
                s.pool.release(p.slot);
            }
        }
        let drops = s.rec.flow_records()[0].total.path_drops as f64;
        // Binomial(20000, 0.1): sd = 42.4; allow 5 sd.
        assert!((drops - 2000.0).abs() < 5.0 * 42.4, "drops {drops}");
    }

    /// The edge marker runs in the emulator as at the simulator's senders: through PPV's full buffer or
    /// VDQ-CSAQM's classic queue over its 20 ms target, a flow sending far above its share carries the low values
    /// and takes the drops, a flow below it none. (The buffer holds 200 ms, so VDQ-CSAQM's CTV acts before it
    /// overflows; PPV drops only when it does.)
    #[test]
    fn core_stateless_disciplines_get_packet_values_from_the_edge_marker() {
        for name in ["ppv", "vdq_csaqm"] {
            let aqm =
                AqmConfig::from_name_and_params(name, &serde_json::json!({}), QueueLimit::Packets(200), 1500)
                    .unwrap();
            // 12 Mbit/s link (1 ms per 1500-byte packet); flow 0 offers 2 Mbit/s, flow 1 24 Mbit/s, for 3 s.
            let mut s = shaper_with(aqm, 12_000_000, vec![path(0, 0), path(0, 0)]);
            let mut out = Vec::new();
            for us in (0..3_000_000u64).step_by(500) {
                let now = Time::from_ns(us * 1000);
                if us % 6000 == 0 {
                    let p = pkt(&mut s.pool, 0, 1500);
                    s.from_sender(now, p, 1448, 0);
                }
                let p = pkt(&mut s.pool, 1, 1500);
                s.from_sender(now, p, 1448, 0);
                s.advance(now, &mut out);
                for (p, _, _) in out.drain(..) {
                    s.pool.release(p.slot);
                }
            }
            let recs = s.rec.flow_records();
            let drops = |f: usize| recs[f].total.queue_drops;
            assert_eq!(drops(0), 0, "{name}: the flow below its share lost packets");
            assert!(
                drops(1) > 1000,
                "{name}: the flow above its share lost only {}",
                drops(1)
            );
        }
    }
}
