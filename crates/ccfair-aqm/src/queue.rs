//! The bookkeeping every single-FIFO discipline shares: the hard limit (`pfifo` / `bfifo` semantics), the
//! backlog in packets and bytes, and how much room to reserve up front.
//!
//! [`Backlog`] is the limit with the byte and packet counts it is checked against (DualPI2 keeps two queues
//! under one); [`PacketFifo`] is a FIFO of packets with its `Backlog`, for the disciplines that hold one
//! queue (fifo, red, codel, pie, gsp, step). [`preallocated_packets`] is the one sizing rule: room for the
//! limit's worth of packets, capped so that an absurd limit does not reserve memory it may never use (beyond
//! the cap the queue grows on demand, once, and then stays allocation-free).

use std::collections::VecDeque;

use ccfair_core::{DropReason, PacketMeta, Time};
use serde::{Deserialize, Serialize};

use crate::{QdiscSink, QdiscStats, drop_packet};

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
}

/// Packets reserved up front at most, per queue: 2^16 full-sized packets are about 100 MB of backlog.
pub const MAX_PREALLOCATED_PACKETS: usize = 1 << 16;

/// Packets to reserve room for under `limit` on a link of `mtu_bytes`: the packet limit, or a byte limit's
/// worth of quarter-MTU packets (a mix of data and small packets), at most [`MAX_PREALLOCATED_PACKETS`].
pub fn preallocated_packets(limit: QueueLimit, mtu_bytes: u32) -> usize {
    let n = match limit {
        QueueLimit::Packets(n) => n as u64,
        QueueLimit::Bytes(b) => b / (mtu_bytes.max(64) as u64 / 4).max(1),
    };
    n.min(MAX_PREALLOCATED_PACKETS as u64) as usize
}

/// A limit and the backlog it is checked against.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Backlog {
    limit: QueueLimit,
    packets: u32,
    bytes: u64,
}

impl Backlog {
    pub fn new(limit: QueueLimit) -> Backlog {
        Backlog {
            limit,
            packets: 0,
            bytes: 0,
        }
    }

    pub fn limit(&self) -> QueueLimit {
        self.limit
    }

    /// A packet of `len` bytes fits.
    #[inline]
    pub fn admits(&self, len: u32) -> bool {
        self.limit.admits(self.packets, self.bytes, len)
    }

    /// A packet of `len` bytes was queued (counted in `enqueued_packets`).
    #[inline]
    pub fn add(&mut self, len: u32, stats: &mut QdiscStats) {
        self.packets += 1;
        self.bytes += len as u64;
        stats.enqueued_packets += 1;
    }

    /// A packet of `len` bytes left the queue (delivered or dropped).
    #[inline]
    pub fn remove(&mut self, len: u32) {
        self.packets -= 1;
        self.bytes -= len as u64;
    }

    #[inline]
    pub fn packets(&self) -> u32 {
        self.packets
    }

    #[inline]
    pub fn bytes(&self) -> u64 {
        self.bytes
    }
}

/// One FIFO of packets under a limit.
pub struct PacketFifo<P> {
    queue: VecDeque<P>,
    backlog: Backlog,
}

impl<P: PacketMeta> PacketFifo<P> {
    /// An empty queue with room reserved by [`preallocated_packets`].
    pub fn new(limit: QueueLimit, mtu_bytes: u32) -> Self {
        PacketFifo {
            queue: VecDeque::with_capacity(preallocated_packets(limit, mtu_bytes)),
            backlog: Backlog::new(limit),
        }
    }

    /// `pkt` fits under the limit.
    #[inline]
    pub fn admits(&self, pkt: &P) -> bool {
        self.backlog.admits(pkt.wire_len())
    }

    /// Appends `pkt`, which the caller has checked with [`PacketFifo::admits`].
    #[inline]
    pub fn push_back(&mut self, pkt: P, stats: &mut QdiscStats) {
        self.backlog.add(pkt.wire_len(), stats);
        self.queue.push_back(pkt);
    }

    /// Tail drop: appends `pkt` if it fits, else drops it as over the limit. Returns whether it was queued.
    #[inline]
    pub fn enqueue(
        &mut self,
        now: Time,
        pkt: P,
        stats: &mut QdiscStats,
        sink: &mut dyn QdiscSink<P>,
    ) -> bool {
        if !self.admits(&pkt) {
            drop_packet(stats, sink, now, pkt, DropReason::Overlimit);
            return false;
        }
        self.push_back(pkt, stats);
        true
    }

    /// Removes the head (the caller delivers or drops it).
    #[inline]
    pub fn pop_front(&mut self) -> Option<P> {
        let pkt = self.queue.pop_front()?;
        self.backlog.remove(pkt.wire_len());
        Some(pkt)
    }

    #[inline]
    pub fn front(&self) -> Option<&P> {
        self.queue.front()
    }

    /// The head, to re-stamp it (its length must not change).
    #[inline]
    pub fn front_mut(&mut self) -> Option<&mut P> {
        self.queue.front_mut()
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }

    /// Packets queued.
    #[inline]
    pub fn packets(&self) -> u32 {
        self.backlog.packets()
    }

    /// Bytes queued (wire length).
    #[inline]
    pub fn bytes(&self) -> u64 {
        self.backlog.bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_packet::{Drops, TestPacket};

    #[test]
    fn sizing_follows_the_limit_up_to_the_cap() {
        assert_eq!(preallocated_packets(QueueLimit::Packets(100), 1500), 100);
        // 30 kB of quarter-MTU (375 B) packets.
        assert_eq!(preallocated_packets(QueueLimit::Bytes(30_000), 1500), 80);
        assert_eq!(
            preallocated_packets(QueueLimit::Packets(u32::MAX), 1500),
            MAX_PREALLOCATED_PACKETS
        );
        assert_eq!(
            preallocated_packets(QueueLimit::Bytes(u64::MAX), 1500),
            MAX_PREALLOCATED_PACKETS
        );
    }

    #[test]
    fn backlog_follows_what_entered_and_left() {
        let mut q = PacketFifo::new(QueueLimit::Bytes(3000), 1500);
        let (mut stats, mut d) = (QdiscStats::default(), Drops::default());
        assert!(q.enqueue(Time::ZERO, TestPacket::new(1, 1000), &mut stats, &mut d));
        assert!(q.enqueue(Time::ZERO, TestPacket::new(2, 2000), &mut stats, &mut d));
        assert!(!q.enqueue(Time::ZERO, TestPacket::new(3, 1), &mut stats, &mut d));
        assert_eq!((q.packets(), q.bytes()), (2, 3000));
        assert_eq!((stats.enqueued_packets, stats.overlimit_drops), (2, 1));
        assert_eq!(d.0[0].0.id, 3);
        assert_eq!(q.pop_front().unwrap().id, 1);
        assert_eq!((q.packets(), q.bytes()), (1, 2000));
        assert!(q.admits(&TestPacket::new(4, 1000)));
        assert!(!q.admits(&TestPacket::new(4, 1001)));
    }
}
