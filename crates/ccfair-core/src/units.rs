//! Rates in bits per second, with exact integer serialization times.

/// A link or pacing rate in bits per second.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Rate {
    bps: u64,
}

impl Rate {
    pub const fn from_bps(bps: u64) -> Rate {
        Rate { bps }
    }
    /// Bytes per second, as Linux stores `sk_pacing_rate`.
    pub const fn from_bytes_per_sec(bytes_per_sec: u64) -> Rate {
        Rate {
            bps: bytes_per_sec.saturating_mul(8),
        }
    }
    pub const fn bps(self) -> u64 {
        self.bps
    }
    pub const fn bytes_per_sec(self) -> u64 {
        self.bps / 8
    }
    /// Nanoseconds needed to serialize `bytes` at this rate, rounded up (a packet is never early).
    /// Zero rate means "infinitely fast" and yields zero.
    #[inline]
    pub fn tx_time_ns(self, bytes: u64) -> u64 {
        if self.bps == 0 {
            return 0;
        }
        let bits = bytes as u128 * 8 * 1_000_000_000;
        bits.div_ceil(self.bps as u128) as u64
    }
    /// Whole bytes this rate carries in `ns` nanoseconds, rounded down.
    pub fn bytes_in_ns(self, ns: u64) -> u64 {
        (self.bps as u128 * ns as u128 / 8 / 1_000_000_000) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serialization_time_is_exact_and_rounded_up() {
        let r = Rate::from_bps(10_000_000_000);
        assert_eq!(r.tx_time_ns(1500), 1200);
        let r = Rate::from_bps(3_000_000);
        // 12000 bits / 3 Mbit/s = 4 ms exactly.
        assert_eq!(r.tx_time_ns(1500), 4_000_000);
        // 8 bits at 3 bit/s = 2.666.. s rounds up.
        assert_eq!(Rate::from_bps(3).tx_time_ns(1), 2_666_666_667);
        assert_eq!(r.bytes_in_ns(4_000_000), 1500);
    }
}
