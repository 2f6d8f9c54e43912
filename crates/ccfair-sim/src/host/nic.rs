//! A sending host's NIC: it serializes the segments its host hands it back to back at its line rate.
//!
//! In a nutshell: Linux hands the NIC a TSO/GSO burst (up to 64 KB), and the NIC puts the burst's segments
//! on the wire one after the other at `nic_rate`, so they reach the next hop `wire_len × 8 / nic_rate`
//! apart, not at one instant. One NIC serves all flows of a group (one sender host per group, as in a
//! testbed whose traffic generator runs a group's flows on one server), so the flows of a group also queue
//! behind each other's bursts. The NIC keeps one number, the time it is free again: a segment ready at
//! `ready` leaves at `max(ready, free_at)`, and the NIC is busy for its serialization time after that.
//! Segments are served in the order the host hands them over (one transmit queue); a rate of 0 is an
//! infinitely fast NIC and leaves every time unchanged.

use ccfair_core::{Rate, Time};

#[derive(Copy, Clone, Debug)]
pub struct Nic {
    rate: Rate,
    free_at: Time,
}

impl Nic {
    /// A NIC of `rate_bps` (0: infinitely fast), idle.
    pub fn new(rate_bps: u64) -> Nic {
        Nic {
            rate: Rate::from_bps(rate_bps),
            free_at: Time::ZERO,
        }
    }

    /// True if the NIC takes time to serialize a segment.
    #[inline]
    pub fn is_finite(&self) -> bool {
        self.rate.bps() > 0
    }

    /// When a segment of `wire_len` bytes, ready at `ready`, starts on the wire; the NIC is busy with it
    /// for its serialization time from then.
    #[inline]
    pub fn depart(&mut self, ready: Time, wire_len: u32) -> Time {
        if !self.is_finite() {
            return ready;
        }
        let start = ready.max(self.free_at);
        self.free_at = Time::from_ns(start.ns() + self.rate.tx_time_ns(wire_len as u64));
        start
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_burst_leaves_one_serialization_time_apart() {
        let mut nic = Nic::new(10_000_000_000);
        let t0 = Time::from_ns(5_000);
        let departures: Vec<u64> = (0..4).map(|_| nic.depart(t0, 1500).ns()).collect();
        // 1500 B at 10 Gbit/s: 1.2 µs.
        assert_eq!(departures, vec![5_000, 6_200, 7_400, 8_600]);
        // An idle NIC sends at once.
        assert_eq!(nic.depart(Time::from_ns(20_000), 1500).ns(), 20_000);
    }

    #[test]
    fn an_infinitely_fast_nic_changes_nothing() {
        let mut nic = Nic::new(0);
        assert!(!nic.is_finite());
        let t = Time::from_ns(7);
        assert_eq!((nic.depart(t, 1500), nic.depart(t, 1500)), (t, t));
    }
}
