//! Seeded pseudo-random streams.
//!
//! Every random component of a run (a flow's random loss, a congestion control's randomized phase, ...) draws
//! from its own stream derived from the run's master seed and a component id, so adding a component never
//! changes the numbers another one sees. The generator is xoshiro256++ (Blackman & Vigna), seeded through
//! SplitMix64 as its authors recommend; both are tiny, fast and fully specified, so results do not depend on a
//! third-party crate's version.

/// A deterministic random stream.
#[derive(Clone, Debug)]
pub struct Rng {
    s: [u64; 4],
}

/// SplitMix64 step: a good mixer for deriving seeds.
fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A stateless 64-bit hash (SplitMix64's finalizer): a value that depends on `x` alone, for randomness that
/// must be the same each time it is asked for (a timer's slack for one deadline).
pub fn hash64(x: u64) -> u64 {
    let mut state = x;
    splitmix64(&mut state)
}

/// Identifies a random component. Kinds keep streams of different components apart even with equal indices.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum StreamId {
    /// Bernoulli loss on a flow's own path.
    PathLoss(u32),
    /// A congestion control's own randomness (e.g. BBR's gain-cycle start).
    Cc(u32),
    /// A queue discipline's randomness (e.g. RED, PIE).
    Qdisc(u32),
    /// Anything else, numbered by the caller.
    Other(u32),
    /// A flow's start time within its host's start jitter.
    HostStart(u32),
    /// A flow's sender-side processing delays.
    HostSend(u32),
    /// A flow's receiver-side processing delays.
    HostRecv(u32),
    /// A flow's timer slack.
    HostTimer(u32),
    /// A finite flow's size, drawn from its group's distribution.
    FlowSize(u32),
    /// A flow group's arrival times (one stream per group).
    Arrivals(u32),
    /// Where the hosts' kernel ticks fall on the run's clock (one stream per run).
    HostClock,
}

impl StreamId {
    fn code(self) -> u64 {
        match self {
            StreamId::PathLoss(i) => (1 << 32) | i as u64,
            StreamId::Cc(i) => (2 << 32) | i as u64,
            StreamId::Qdisc(i) => (3 << 32) | i as u64,
            StreamId::Other(i) => (4 << 32) | i as u64,
            StreamId::HostStart(i) => (5 << 32) | i as u64,
            StreamId::HostSend(i) => (6 << 32) | i as u64,
            StreamId::HostRecv(i) => (7 << 32) | i as u64,
            StreamId::HostTimer(i) => (8 << 32) | i as u64,
            StreamId::FlowSize(i) => (9 << 32) | i as u64,
            StreamId::Arrivals(i) => (10 << 32) | i as u64,
            StreamId::HostClock => 11 << 32,
        }
    }
}

impl Rng {
    /// The stream of component `id` under master seed `seed`.
    pub fn stream(seed: u64, id: StreamId) -> Rng {
        let mut sm = seed ^ splitmix64(&mut id.code().wrapping_mul(0xD1B5_4A32_D192_ED03));
        let s = [
            splitmix64(&mut sm),
            splitmix64(&mut sm),
            splitmix64(&mut sm),
            splitmix64(&mut sm),
        ];
        Rng { s }
    }

    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        let result = (self.s[0].wrapping_add(self.s[3]))
            .rotate_left(23)
            .wrapping_add(self.s[0]);
        let t = self.s[1] << 17;
        self.s[2] ^= self.s[0];
        self.s[3] ^= self.s[1];
        self.s[1] ^= self.s[2];
        self.s[0] ^= self.s[3];
        self.s[2] ^= t;
        self.s[3] = self.s[3].rotate_left(45);
        result
    }

    /// Uniform in [0, 1) with 53 bits of precision.
    #[inline]
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform integer in [0, n) (Lemire's multiply-shift; the bias is below 2^-32 for n < 2^32).
    #[inline]
    pub fn below(&mut self, n: u32) -> u32 {
        (((self.next_u64() >> 32) * n as u64) >> 32) as u32
    }

    /// Uniform integer in [0, n) for any 64-bit `n` (multiply-shift on 128 bits; the bias is below
    /// n / 2^64). `n` = 0 gives 0.
    #[inline]
    pub fn below_u64(&mut self, n: u64) -> u64 {
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }

    /// True with probability `p`.
    #[inline]
    pub fn bernoulli(&mut self, p: f64) -> bool {
        p > 0.0 && self.next_f64() < p
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_are_reproducible_and_distinct() {
        let a: Vec<u64> = (0..4)
            .map(|_| Rng::stream(7, StreamId::PathLoss(0)).next_u64())
            .collect();
        assert!(a.windows(2).all(|w| w[0] == w[1]));
        let mut x = Rng::stream(7, StreamId::PathLoss(0));
        let mut y = Rng::stream(7, StreamId::PathLoss(1));
        let mut z = Rng::stream(7, StreamId::Cc(0));
        let mut w = Rng::stream(8, StreamId::PathLoss(0));
        let xs: Vec<u64> = (0..8).map(|_| x.next_u64()).collect();
        for other in [&mut y, &mut z, &mut w] {
            let os: Vec<u64> = (0..8).map(|_| other.next_u64()).collect();
            assert_ne!(xs, os);
        }
    }

    #[test]
    fn bernoulli_frequency_matches_p() {
        let mut r = Rng::stream(1, StreamId::Other(0));
        let n = 200_000;
        let hits = (0..n).filter(|_| r.bernoulli(0.01)).count() as f64;
        // Binomial sd = sqrt(n p (1-p)) ~ 44.5; allow 5 sd.
        assert!((hits - 2000.0).abs() < 5.0 * 44.5, "hits {hits}");
        let mut below = [0u32; 7];
        for _ in 0..70_000 {
            below[r.below(7) as usize] += 1;
        }
        assert!(
            below.iter().all(|&c| (c as i64 - 10_000).abs() < 500),
            "{below:?}"
        );
    }
}
