//! Tail drop: Linux `pfifo` / `bfifo` (`net/sched/sch_fifo.c`).
//!
//! A packet is queued if the backlog stays within the limit (packets: fewer than `limit` queued; bytes: backlog
//! plus the packet at most `limit`), otherwise it is dropped. Dequeue is first in, first out. No deviations.

use std::collections::VecDeque;

use ccfair_core::{DropReason, PacketMeta, Time};

use crate::{Qdisc, QdiscSink, QdiscStats, QueueLimit, drop_packet};

pub struct Fifo<P> {
    queue: VecDeque<P>,
    limit: QueueLimit,
    backlog_bytes: u64,
    stats: QdiscStats,
}

impl<P> Fifo<P> {
    pub fn new(limit: QueueLimit) -> Self {
        let cap = match limit {
            QueueLimit::Packets(n) => n as usize,
            QueueLimit::Bytes(b) => (b / 64) as usize,
        };
        // Preallocate (bounded) so the per-packet path does not grow the buffer in steady state.
        Fifo {
            queue: VecDeque::with_capacity(cap.min(1 << 16)),
            limit,
            backlog_bytes: 0,
            stats: QdiscStats::default(),
        }
    }
}

impl<P: PacketMeta + Send> Qdisc<P> for Fifo<P> {
    fn enqueue(&mut self, now: Time, pkt: P, sink: &mut dyn QdiscSink<P>) -> bool {
        if !self
            .limit
            .admits(self.queue.len() as u32, self.backlog_bytes, pkt.wire_len())
        {
            drop_packet(&mut self.stats, sink, now, pkt, DropReason::Overlimit);
            return false;
        }
        self.backlog_bytes += pkt.wire_len() as u64;
        self.stats.enqueued_packets += 1;
        self.queue.push_back(pkt);
        true
    }

    fn dequeue(&mut self, _now: Time, _sink: &mut dyn QdiscSink<P>) -> Option<P> {
        let pkt = self.queue.pop_front()?;
        self.backlog_bytes -= pkt.wire_len() as u64;
        self.stats.dequeued_packets += 1;
        self.stats.dequeued_bytes += pkt.wire_len() as u64;
        Some(pkt)
    }

    fn backlog_bytes(&self) -> u64 {
        self.backlog_bytes
    }

    fn backlog_packets(&self) -> u32 {
        self.queue.len() as u32
    }

    fn stats(&self) -> &QdiscStats {
        &self.stats
    }

    fn kind(&self) -> &'static str {
        "fifo"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_packet::{Drops, TestPacket};

    #[test]
    fn packet_limit_drops_the_arrival_and_keeps_order() {
        let mut q = Fifo::new(QueueLimit::Packets(2));
        let mut d = Drops::default();
        let t = Time::ZERO;
        assert!(q.enqueue(t, TestPacket::new(1, 1500), &mut d));
        assert!(q.enqueue(t, TestPacket::new(2, 100), &mut d));
        assert!(!q.enqueue(t, TestPacket::new(3, 100), &mut d));
        assert_eq!(d.0.len(), 1);
        assert_eq!(d.0[0].0.id, 3);
        assert_eq!(d.0[0].1, DropReason::Overlimit);
        assert_eq!(q.backlog_bytes(), 1600);
        assert_eq!(q.dequeue(t, &mut d).unwrap().id, 1);
        assert_eq!(q.dequeue(t, &mut d).unwrap().id, 2);
        assert!(q.dequeue(t, &mut d).is_none());
        assert_eq!(q.stats().overlimit_drops, 1);
        assert_eq!(q.stats().dequeued_bytes, 1600);
    }

    #[test]
    fn byte_limit_counts_the_arriving_packet() {
        let mut q = Fifo::new(QueueLimit::Bytes(3000));
        let mut d = Drops::default();
        assert!(q.enqueue(Time::ZERO, TestPacket::new(1, 1500), &mut d));
        assert!(q.enqueue(Time::ZERO, TestPacket::new(2, 1500), &mut d));
        assert!(!q.enqueue(Time::ZERO, TestPacket::new(3, 1), &mut d));
        assert_eq!(q.backlog_packets(), 2);
    }
}
