//! A TCP stack modelled on Linux: the sender (`tcp_input.c` ACK processing, `tcp_output.c` transmission,
//! `tcp_recovery.c` RACK-TLP, `tcp_timer.c` RTO; the core around the algorithm and `tcp_rate.c` delivery-rate
//! sampling come from `ccfair_cc::stack` and `ccfair_cc::rate`) and the receiver (delayed/quick ACKs, SACK
//! generation, in-order delivery).
//!
//! Bulk transfers only send full-sized segments, so sequence numbers count segments, not bytes: segment `n`
//! carries payload bytes `[n·MSS, (n+1)·MSS)`. Every comparison Linux makes on byte sequence numbers keeps its
//! meaning; where Linux compares a byte distance with the MSS the comparison is translated (noted in place).

pub mod handshake;
pub mod rack;
pub mod receiver;
mod recovery;
pub mod rtt;
pub mod rtx_queue;
pub mod rwnd;
pub mod sender;
mod xmit;

use ccfair_core::{Ecn, Time};

pub use receiver::Receiver;
pub use rwnd::{RcvWindow, RwndConfig};
pub use sender::{Sender, SenderConfig, SenderStats, XmitTimer};

pub use ccfair_scenario::HEADER_BYTES;
pub use ccfair_scenario::ecn::{EcnEcho, EcnMode, EcnProfile};
/// Linux `TCP_RTO_MIN` (HZ/5).
pub const RTO_MIN_MS: u32 = 200;
/// Linux `TCP_RTO_MAX`.
pub const RTO_MAX_MS: u32 = 120_000;
/// Linux `TCP_TIMEOUT_INIT` (RFC 6298 §2.1).
pub const TIMEOUT_INIT_MS: u32 = 1_000;
/// Linux `TCP_TIMEOUT_MIN_US`: the slack added to RACK's reordering timer and to the TLP timeout.
pub const TIMEOUT_MIN_US: u64 = 2_000;
/// Linux `TCP_ATO_MIN` / `TCP_DELACK_MIN` (HZ/25).
pub const ATO_MIN_MS: u32 = 40;
/// Linux `TCP_DELACK_MAX` (HZ/5).
pub const DELACK_MAX_MS: u32 = 200;
/// Linux `TCP_MAX_QUICKACKS`.
pub const MAX_QUICKACKS: u32 = 16;
/// Linux `sysctl_tcp_reordering` (`TCP_FASTRETRANS_THRESH`).
pub const REORDERING: u32 = 3;
/// Linux `sysctl_tcp_max_reordering`.
pub const MAX_REORDERING: u32 = 300;
/// Linux `sysctl_tcp_comp_sack_nr` and `_delay_ns`: SACK compression limits at the receiver.
pub const COMP_SACK_NR: u32 = 44;
pub const COMP_SACK_DELAY_NS: u64 = 1_000_000;
/// SACK blocks that fit in the option space next to the timestamp option.
pub const MAX_SACK_BLOCKS_SENT: usize = 3;
/// Linux `TCP_NUM_SACKS`: blocks the receiver remembers.
pub const NUM_SACKS: usize = 4;

/// The TCP timestamp clock (`TCP_TS_HZ` = 1000): ms since the start of the run, offset by one so that a
/// valid value is never 0 (Linux treats a zero echo as "no timestamp").
#[inline]
pub fn ts_clock_ms(now: Time) -> u32 {
    now.jiffies() as u32 + 1
}

/// What the path from the bottleneck to the receiver carries of a [`Segment`]: the fields the receiving host
/// (GRO) and TCP read, in 16 bytes instead of 32. A flow's forward pipe holds a round trip's worth of them and
/// is out of the caches by the time its head arrives, so the smaller entry costs fewer cache misses per
/// segment. The flow is the pipe's own; the queue's timestamp, the PPV value and the retransmission flag
/// matter only up to the bottleneck.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Arrival {
    pub seq: u32,
    pub tsval_ms: u32,
    pub wire_len: u32,
    pub ecn: Ecn,
    pub cwr: bool,
    pub psh: bool,
    pub syn: bool,
}

impl Arrival {
    #[inline]
    pub fn of(seg: &Segment) -> Arrival {
        Arrival {
            seq: seg.seq,
            tsval_ms: seg.tsval_ms,
            wire_len: seg.wire_len as u32,
            ecn: seg.ecn,
            cwr: seg.cwr,
            psh: seg.psh,
            syn: seg.syn,
        }
    }

    /// The segment of flow `flow` as the receiving end sees it (the fields it does not carry are zero).
    #[inline]
    pub fn segment(&self, flow: u32) -> Segment {
        Segment {
            flow,
            seq: self.seq,
            wire_len: self.wire_len as u16,
            tsval_ms: self.tsval_ms,
            enqueue_ts: Time::ZERO,
            ecn: self.ecn,
            cwr: self.cwr,
            retransmit: false,
            packet_value: 0,
            psh: self.psh,
            syn: self.syn,
        }
    }
}

/// A segment on the wire: data, or a connection's SYN (`syn`). 32 bytes: the queue disciplines hold one per
/// packet waiting at the bottleneck.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Segment {
    pub flow: u32,
    pub seq: u32,
    /// Bytes on the wire (the IP packet; at most the largest MTU, 9000).
    pub wire_len: u16,
    /// TCP timestamp option value (ms clock, `TCP_TS_HZ` = 1000).
    pub tsval_ms: u32,
    pub enqueue_ts: Time,
    pub ecn: Ecn,
    /// CWR flag (sender reduced its window after ECE).
    pub cwr: bool,
    pub retransmit: bool,
    /// PSH: the last segment of a multi-segment skb, or of the application's write (see `tcp/xmit.rs`).
    pub psh: bool,
    /// SYN: the connection's opening segment, which carries no data (see `tcp::handshake`).
    pub syn: bool,
    /// Packet value stamped by the edge marker of a core-stateless AQM (PPV); 0 when none is configured.
    pub packet_value: u32,
}

ccfair_core::impl_packet_meta!(Segment {
    wire_len: |s| s.wire_len as u32,
    enqueue_ts: enqueue_ts,
    ecn: ecn,
    // A fixed mix of the flow id stands in for the 5-tuple hash (Fibonacci hashing).
    flow_hash: |s| s.flow.wrapping_mul(0x9E37_79B1).rotate_left(7) ^ 0x5bd1_e995,
    packet_value: |s| s.packet_value,
});

/// One SACK block `[start, end)` in segments.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct SackBlock {
    pub start: u32,
    pub end: u32,
}

/// A pure ACK from the receiver.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Ack {
    /// Cumulative ACK: the next segment expected.
    pub ack: u32,
    pub sacks: [SackBlock; MAX_SACK_BLOCKS_SENT],
    pub num_sacks: u8,
    /// Echo of the sender's timestamp (`TS.Recent`, RFC 7323).
    pub tsecr_ms: u32,
    /// A SYN-ACK: the receiving host's answer to a SYN (see `tcp::handshake`).
    pub syn: bool,
    /// ECN-Echo flag (RFC 3168 and DCTCP feedback).
    pub ece: bool,
    /// CE-marked data packets received so far (Accurate ECN's ACE counter and option, without wrap-around).
    pub ce_count: u32,
    /// The receive window offered, bytes from `ack` (the window field shifted by the scale); `u32::MAX`
    /// from a receiver without a window model.
    pub wnd_bytes: u32,
}

impl Default for Ack {
    fn default() -> Self {
        Ack {
            ack: 0,
            sacks: [SackBlock::default(); MAX_SACK_BLOCKS_SENT],
            num_sacks: 0,
            tsecr_ms: 0,
            syn: false,
            ece: false,
            ce_count: 0,
            wnd_bytes: NO_WINDOW,
        }
    }
}

/// The window of a receiver that does not model one: the sender is never limited by it.
pub const NO_WINDOW: u32 = u32::MAX;

impl Ack {
    pub fn sack_blocks(&self) -> &[SackBlock] {
        &self.sacks[..self.num_sacks as usize]
    }
}

#[cfg(test)]
mod arrival_tests {
    use super::*;

    #[test]
    fn an_arrival_keeps_what_the_receiving_end_reads() {
        let seg = Segment {
            flow: 7,
            seq: 123_456,
            wire_len: 1000,
            tsval_ms: 99,
            enqueue_ts: Time::from_ns(5),
            ecn: Ecn::Ce,
            cwr: true,
            retransmit: true,
            packet_value: 3,
            psh: false,
            syn: false,
        };
        let back = Arrival::of(&seg).segment(seg.flow);
        assert_eq!(
            (
                back.flow,
                back.seq,
                back.wire_len,
                back.tsval_ms,
                back.ecn,
                back.cwr
            ),
            (seg.flow, seg.seq, seg.wire_len, seg.tsval_ms, seg.ecn, seg.cwr)
        );
        assert!(
            std::mem::size_of::<(Time, Arrival)>() < std::mem::size_of::<(Time, Segment)>(),
            "a pipe entry of an arrival is smaller than one of a segment"
        );
    }
}
