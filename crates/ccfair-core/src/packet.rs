//! What a queue discipline may know about a packet.
//!
//! The simulator's packets and the emulator's real frames both implement [`PacketMeta`], so one `Qdisc`
//! implementation serves both.

use crate::time::Time;

/// The IP ECN field (RFC 3168 / RFC 9331 codepoints).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Ecn {
    #[default]
    NotEct = 0b00,
    /// ECT(1): the L4S identifier (RFC 9331).
    Ect1 = 0b01,
    /// ECT(0): classic ECN-capable transport.
    Ect0 = 0b10,
    Ce = 0b11,
}

impl Ecn {
    pub fn is_ect(self) -> bool {
        matches!(self, Ecn::Ect0 | Ecn::Ect1)
    }
}

/// Packet metadata a queue discipline reads or writes.
pub trait PacketMeta {
    /// Bytes on the wire (IP packet length), what the link serializes and byte limits count.
    fn wire_len(&self) -> u32;
    /// Arrival time at the qdisc. The caller stamps it before `enqueue`.
    fn enqueue_ts(&self) -> Time;
    fn set_enqueue_ts(&mut self, t: Time);
    fn ecn(&self) -> Ecn;
    fn set_ecn(&mut self, ecn: Ecn);
    /// Sets CE if the packet is ECN-capable; returns whether it was (a not-ECT packet cannot be marked).
    fn set_ce(&mut self) -> bool {
        if self.ecn().is_ect() {
            self.set_ecn(Ecn::Ce);
            true
        } else {
            false
        }
    }
    /// A hash of the 5-tuple, as Linux's `skb_get_hash`.
    fn flow_hash(&self) -> u32;
    /// The packet value stamped at the edge for core-stateless AQMs (higher is more valuable); 0 if unset.
    fn packet_value(&self) -> u32;
}

/// Implements [`PacketMeta`] for a packet type from where it keeps each value: the fields holding its enqueue
/// time and its ECN codepoint (read and written by the qdisc), and expressions of the packet (`|p| ...`) for
/// its wire length, flow hash and packet value (read only). The simulator's segments, the emulator's frames
/// and the qdisc tests' packets differ only there.
#[macro_export]
macro_rules! impl_packet_meta {
    ($packet:ty {
        wire_len: |$len_p:ident| $wire_len:expr,
        enqueue_ts: $ts:ident,
        ecn: $ecn:ident,
        flow_hash: |$hash_p:ident| $hash:expr,
        packet_value: |$value_p:ident| $value:expr $(,)?
    }) => {
        impl $crate::PacketMeta for $packet {
            #[inline]
            fn wire_len(&self) -> u32 {
                let $len_p = self;
                $wire_len
            }
            #[inline]
            fn enqueue_ts(&self) -> $crate::Time {
                self.$ts
            }
            #[inline]
            fn set_enqueue_ts(&mut self, t: $crate::Time) {
                self.$ts = t;
            }
            #[inline]
            fn ecn(&self) -> $crate::Ecn {
                self.$ecn
            }
            #[inline]
            fn set_ecn(&mut self, ecn: $crate::Ecn) {
                self.$ecn = ecn;
            }
            #[inline]
            fn flow_hash(&self) -> u32 {
                let $hash_p = self;
                $hash
            }
            #[inline]
            fn packet_value(&self) -> u32 {
                let $value_p = self;
                $value
            }
        }
    };
}
