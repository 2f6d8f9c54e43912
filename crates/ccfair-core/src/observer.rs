//! Typed events a simulation reports. The default recorder (in `ccfair-sim`) turns them into columnar
//! time series; tests inject their own observers to check invariants. Every method has an empty default so an
//! observer implements only what it needs, and the compiler removes the calls it ignores.

use crate::time::{Dur, Time};

/// Why a packet was dropped.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum DropReason {
    /// The queue was at its packet or byte limit (tail drop, or an AQM's hard limit).
    Overlimit,
    /// The AQM's control law chose to drop it (RED early drop, CoDel, PIE, ...).
    Aqm,
    /// Bernoulli loss on the flow's own path, not at the bottleneck.
    PathLoss,
}

pub trait Observer {
    /// A data segment left the sender (first transmission or retransmission).
    fn segment_sent(&mut self, _now: Time, _flow: u32, _seq: u32, _retransmit: bool) {}
    /// A data segment was dropped.
    fn segment_dropped(&mut self, _now: Time, _flow: u32, _seq: u32, _reason: DropReason) {}
    /// A data segment was CE-marked by the bottleneck.
    fn segment_marked(&mut self, _now: Time, _flow: u32) {}
    /// A segment left the bottleneck queue after `sojourn` in it; `wire_bytes` went onto the link.
    fn queue_departure(&mut self, _now: Time, _flow: u32, _sojourn: Dur, _wire_bytes: u32) {}
    /// A data segment reached its receiver (in order or not, possibly a duplicate).
    fn segment_arrived(&mut self, _now: Time, _flow: u32, _seq: u32) {}
    /// The receiver handed segments `[first_seq, first_seq + segments)` to the application, in order.
    fn delivered_to_app(&mut self, _now: Time, _flow: u32, _first_seq: u32, _segments: u32, _bytes: u64) {}
    /// The sender took an RTT sample.
    fn rtt_sample(&mut self, _now: Time, _flow: u32, _rtt: Dur) {}
}

/// Observes nothing.
#[derive(Default, Debug, Clone, Copy)]
pub struct NullObserver;

impl Observer for NullObserver {}
