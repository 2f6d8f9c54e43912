//! The end hosts' turnaround, timed at the emulator: how much the hosts lengthen the loop beyond the emulated
//! path. The kernel backend's flows see their configured RTT plus this, plus the emulator's own lateness on
//! each crossing; the simulator's hosts react within their modelled noise, so the validation grid needs the
//! measured excess to compare like with like (`studies/validate/grid.py`, "the kernel loop").
//!
//! - Receiver: from the emulator handing a data segment to the receiver's veth to the arrival (the kernel's
//!   stamp) of the ACK whose number is that segment's end: the veth both ways and the receiving kernel's
//!   softirq, TCP and transmit path. Only ACKs within [`IMMEDIATE_NS`] count: one the segment triggered (every
//!   second segment, a quick ACK), not one the delayed-ACK timer sent later. The last [`RING`] segments handed
//!   on are remembered, so an ACK that comes back after the next segments left is still timed (at high rates
//!   segments leave faster than the receiver turns round), and each is timed at most once.
//! - Sender, per flow: from the emulator handing an ACK to the sender's veth to the arrival of the first new
//!   data of that flow after it, when it came before the flow's next ACK was handed on (the newest ACK is the
//!   one that released it): the veth both ways, the sending kernel's ACK processing and its transmit path.
//!   Retransmissions are not new data. A paced flow's data waits for its pacing timer, so its numbers are its
//!   pacing, not the host; the caller knows which flows pace and reads only the others.
//!
//! The same rules as `ccfair.devtools.host_latency`, which times the same quantities from packet captures at
//! the hosts' veths (without the veth hops, and with the capture's own cost on the hosts). Samples are kept
//! within the measurement window only. Nothing allocates per packet beyond the histograms' growth to the
//! octaves they see.

use ccfair_core::{LogHistogram, Time};

/// An ACK later than this after the segment it acknowledges was sent by the delayed-ACK timer, not triggered.
pub const IMMEDIATE_NS: u64 = 200_000;
/// Data segments remembered per flow: more than leave in [`IMMEDIATE_NS`] at the kernel backend's rates
/// (a flow at 1 Gbit/s sends 17 full-size segments in 200 us; an ACK for an older one is left untimed).
pub const RING: usize = 32;

/// Sequence number `a` is after `b` (modulo 2^32).
#[inline]
fn after(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) > 0
}

#[derive(Clone, Default)]
struct FlowState {
    /// The last data segments handed to the receiver: their ends and when (`None` once timed), oldest
    /// overwritten first.
    sent: [(u32, Option<Time>); RING],
    next: usize,
    /// The newest ACK handed to the sender, not yet answered by new data.
    ack_sent: Option<Time>,
    /// The highest data end seen from the sender (new data goes beyond it).
    highest_end: Option<u32>,
}

/// Turnaround samples of every flow (see the module header).
#[derive(Default)]
pub struct Turnaround {
    flows: Vec<FlowState>,
    pub receiver: LogHistogram,
    pub sender: Vec<LogHistogram>,
}

impl Turnaround {
    pub fn new(n_flows: usize) -> Turnaround {
        Turnaround {
            flows: vec![FlowState::default(); n_flows],
            receiver: LogHistogram::new(),
            sender: (0..n_flows).map(|_| LogHistogram::new()).collect(),
        }
    }

    /// A data segment of `flow` ending at `end` was handed to the receiver's veth at `t`.
    #[inline]
    pub fn data_sent(&mut self, flow: u32, end: u32, t: Time) {
        let f = &mut self.flows[flow as usize];
        f.sent[f.next] = (end, Some(t));
        f.next = (f.next + 1) % RING;
    }

    /// An ACK of `flow` acknowledging `ack` arrived from the receiver at `t`; timed when `record`.
    #[inline]
    pub fn ack_arrived(&mut self, flow: u32, ack: u32, t: Time, record: bool) {
        let f = &mut self.flows[flow as usize];
        let Some(entry) = f.sent.iter_mut().find(|(end, at)| *end == ack && at.is_some()) else {
            return;
        };
        let sent = entry.1.take().unwrap_or(t);
        let ns = t.saturating_since(sent).ns();
        if record && ns < IMMEDIATE_NS {
            self.receiver.record(ns);
        }
    }

    /// An ACK of `flow` was handed to the sender's veth at `t`.
    #[inline]
    pub fn ack_sent(&mut self, flow: u32, t: Time) {
        self.flows[flow as usize].ack_sent = Some(t);
    }

    /// A data segment of `flow` ending at `end` arrived from the sender at `t`; timed when `record`.
    #[inline]
    pub fn data_arrived(&mut self, flow: u32, end: u32, t: Time, record: bool) {
        let f = &mut self.flows[flow as usize];
        if f.highest_end.is_some_and(|h| !after(end, h)) {
            return; // a retransmission
        }
        f.highest_end = Some(end);
        if let Some(acked) = f.ack_sent.take()
            && record
        {
            self.sender[flow as usize].record(t.saturating_since(acked).ns());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn us(x: u64) -> Time {
        Time::from_ns(x * 1000)
    }

    #[test]
    fn the_receiver_is_timed_from_a_segment_to_the_ack_that_ends_it() {
        let mut t = Turnaround::new(1);
        t.data_sent(0, 1000, us(10));
        t.data_sent(0, 2000, us(12));
        t.data_sent(0, 3000, us(13));
        // An ACK ending no segment (a SACK-era cumulative ACK, say) is not timed.
        t.ack_arrived(0, 1500, us(20), true);
        assert_eq!(t.receiver.count(), 0);
        // The ACK of the second segment, back after the third left: timed from the second.
        t.ack_arrived(0, 2000, us(40), true);
        assert_eq!((t.receiver.count(), t.receiver.max()), (1, Some(28_000)));
        // A second ACK of the same number (a duplicate) is not timed again.
        t.ack_arrived(0, 2000, us(50), true);
        assert_eq!(t.receiver.count(), 1);
        // The delayed-ACK timer's ACK, 40 ms on, is not the host's reaction.
        t.data_sent(0, 3000, us(100));
        t.ack_arrived(0, 3000, us(40_100), true);
        assert_eq!(t.receiver.count(), 1);
        // Outside the window nothing is kept.
        t.data_sent(0, 4000, us(50_000));
        t.ack_arrived(0, 4000, us(50_020), false);
        assert_eq!(t.receiver.count(), 1);
        // A segment overwritten by RING newer ones is forgotten.
        t.data_sent(0, 5000, us(59_990));
        for k in 0..RING as u32 {
            t.data_sent(0, 10_000 + k, us(60_000));
        }
        t.ack_arrived(0, 5000, us(60_010), true);
        t.ack_arrived(0, 10_000, us(60_010), true);
        assert_eq!(t.receiver.count(), 2);
    }

    #[test]
    fn the_sender_is_timed_from_the_newest_ack_to_the_new_data_it_released() {
        let mut t = Turnaround::new(2);
        t.data_arrived(0, 1000, us(0), true); // no ACK handed on yet: nothing to time
        t.ack_sent(0, us(100));
        t.ack_sent(0, us(105)); // the newer ACK released what follows
        t.ack_sent(1, us(106)); // another flow's ACK does not count for flow 0
        t.data_arrived(0, 900, us(110), true); // a retransmission: not new data
        assert_eq!(t.sender[0].count(), 0);
        t.data_arrived(0, 2000, us(125), true);
        assert_eq!((t.sender[0].count(), t.sender[0].max()), (1, Some(20_000)));
        // The next segment of the same burst is not timed against the same ACK.
        t.data_arrived(0, 3000, us(126), true);
        assert_eq!(t.sender[0].count(), 1);
        assert_eq!(t.sender[1].count(), 0);
        // Sequence numbers wrap.
        let mut w = Turnaround::new(1);
        w.data_arrived(0, u32::MAX - 10, us(0), true);
        w.ack_sent(0, us(1));
        w.data_arrived(0, 500, us(4), true);
        assert_eq!(w.sender[0].count(), 1);
    }
}
