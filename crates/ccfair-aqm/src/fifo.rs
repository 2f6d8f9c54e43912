//! Tail drop: Linux `pfifo` / `bfifo` (`net/sched/sch_fifo.c`).
//!
//! A packet is queued if the backlog stays within the limit (packets: fewer than `limit` queued; bytes: backlog
//! plus the packet at most `limit`), otherwise it is dropped. Dequeue is first in, first out. No deviations.

use ccfair_core::{PacketMeta, Time};
use serde::{Deserialize, Serialize};

use crate::queue::{PacketFifo, QueueLimit};
use crate::{Qdisc, QdiscSink, QdiscStats, count_dequeue, qdisc_accessors};

/// Parameters of the FIFO: none besides the buffer limit.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FifoParams {}

pub struct Fifo<P> {
    queue: PacketFifo<P>,
    stats: QdiscStats,
}

impl<P: PacketMeta> Fifo<P> {
    pub fn new(limit: QueueLimit, mtu_bytes: u32) -> Self {
        Fifo {
            queue: PacketFifo::new(limit, mtu_bytes),
            stats: QdiscStats::default(),
        }
    }
}

impl<P: PacketMeta + Send> Qdisc<P> for Fifo<P> {
    fn enqueue(&mut self, now: Time, pkt: P, sink: &mut dyn QdiscSink<P>) -> bool {
        self.queue.enqueue(now, pkt, &mut self.stats, sink)
    }

    fn dequeue(&mut self, _now: Time, _sink: &mut dyn QdiscSink<P>) -> Option<P> {
        let pkt = self.queue.pop_front()?;
        count_dequeue(&mut self.stats, &pkt);
        Some(pkt)
    }

    qdisc_accessors!(queue, FifoParams);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_packet::{Drops, TestPacket};
    use ccfair_core::DropReason;

    #[test]
    fn packet_limit_drops_the_arrival_and_keeps_order() {
        let mut q = Fifo::new(QueueLimit::Packets(2), 1500);
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
        let mut q = Fifo::new(QueueLimit::Bytes(3000), 1500);
        let mut d = Drops::default();
        assert!(q.enqueue(Time::ZERO, TestPacket::new(1, 1500), &mut d));
        assert!(q.enqueue(Time::ZERO, TestPacket::new(2, 1500), &mut d));
        assert!(!q.enqueue(Time::ZERO, TestPacket::new(3, 1), &mut d));
        assert_eq!(q.backlog_packets(), 2);
    }
}
