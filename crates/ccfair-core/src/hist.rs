//! A log-linear histogram for latency quantiles.
//!
//! Values below 64 are counted exactly; above, each power of two is split into 64 equal buckets, so a quantile
//! is reported within 1/128 (0.8 %) of the true sample value (the bucket midpoint is returned). Values above
//! 2^41 ns (about 36 minutes) share the last bucket. The mean, minimum and maximum are exact.
//!
//! Only the buckets between the smallest and the largest value seen are stored, in whole powers of two: a
//! flow's RTTs span a few octaves, so its histogram takes under a kilobyte instead of all 2368 buckets (9 KB),
//! which matters with a million flows. Storage grows at most once per new octave, so recording allocates
//! nothing once the range of values has been seen.

const SUB_BITS: u32 = 6;
const SUB: usize = 1 << SUB_BITS;
const MAX_MSB: u32 = 41;
const BUCKETS: usize = SUB + (MAX_MSB - SUB_BITS + 1) as usize * SUB;

#[derive(Clone)]
pub struct LogHistogram {
    /// Counts of buckets `first..first + counts.len()`; both ends are multiples of `SUB` (whole octaves).
    counts: Vec<u32>,
    first: usize,
    n: u64,
    sum: u128,
    min: u64,
    max: u64,
}

impl Default for LogHistogram {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for LogHistogram {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LogHistogram")
            .field("n", &self.n)
            .field("min", &self.min)
            .field("max", &self.max)
            .finish()
    }
}

#[inline]
fn index(v: u64) -> usize {
    if v < SUB as u64 {
        return v as usize;
    }
    let msb = 63 - v.leading_zeros();
    if msb > MAX_MSB {
        return BUCKETS - 1;
    }
    let sub = ((v >> (msb - SUB_BITS)) as usize) & (SUB - 1);
    SUB + (msb - SUB_BITS) as usize * SUB + sub
}

/// The representative value of a bucket: exact below 64, the midpoint above.
fn value_of(idx: usize) -> u64 {
    if idx < SUB {
        return idx as u64;
    }
    let msb = (idx - SUB) / SUB + SUB_BITS as usize;
    let sub = ((idx - SUB) % SUB) as u64;
    let shift = msb as u32 - SUB_BITS;
    let low = (SUB as u64 + sub) << shift;
    low + ((1u64 << shift) >> 1)
}

impl LogHistogram {
    pub fn new() -> Self {
        LogHistogram {
            counts: Vec::new(),
            first: 0,
            n: 0,
            sum: 0,
            min: u64::MAX,
            max: 0,
        }
    }

    #[inline]
    pub fn record(&mut self, v: u64) {
        let idx = index(v);
        if idx < self.first || idx >= self.first + self.counts.len() {
            self.widen(idx);
        }
        let c = &mut self.counts[idx - self.first];
        *c = c.saturating_add(1);
        self.n += 1;
        self.sum += v as u128;
        self.min = self.min.min(v);
        self.max = self.max.max(v);
    }

    /// Extends the stored range to the octave of bucket `idx`.
    #[cold]
    fn widen(&mut self, idx: usize) {
        let lo = idx / SUB * SUB;
        let hi = lo + SUB;
        let (start, end) = if self.counts.is_empty() {
            (lo, hi)
        } else {
            (self.first.min(lo), (self.first + self.counts.len()).max(hi))
        };
        let mut counts = vec![0u32; end - start];
        let at = self.first.saturating_sub(start);
        counts[at..at + self.counts.len()].copy_from_slice(&self.counts);
        self.counts = counts;
        self.first = start;
    }

    /// Adds `other`'s samples, as if each had been recorded here too: every count, the mean, minimum and
    /// maximum then describe both. Allocates at most once (to widen the stored range).
    pub fn merge(&mut self, other: &LogHistogram) {
        if other.n == 0 {
            return;
        }
        let other_end = other.first + other.counts.len();
        if self.counts.is_empty() || other.first < self.first || other_end > self.first + self.counts.len() {
            self.widen(other.first);
            self.widen(other_end - 1);
        }
        let at = other.first - self.first;
        for (c, &o) in self.counts[at..at + other.counts.len()]
            .iter_mut()
            .zip(&other.counts)
        {
            *c = c.saturating_add(o);
        }
        self.n += other.n;
        self.sum += other.sum;
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
    }

    pub fn clear(&mut self) {
        if self.n != 0 {
            self.counts.fill(0);
            self.n = 0;
            self.sum = 0;
            self.min = u64::MAX;
            self.max = 0;
        }
    }

    pub fn count(&self) -> u64 {
        self.n
    }

    /// Exact mean, or `None` when empty.
    pub fn mean(&self) -> Option<f64> {
        (self.n > 0).then(|| self.sum as f64 / self.n as f64)
    }

    pub fn min(&self) -> Option<u64> {
        (self.n > 0).then_some(self.min)
    }

    pub fn max(&self) -> Option<u64> {
        (self.n > 0).then_some(self.max)
    }

    /// The q-quantile (0 ≤ q ≤ 1) by the nearest-rank rule, clamped to the exact min and max.
    pub fn quantile(&self, q: f64) -> Option<u64> {
        if self.n == 0 {
            return None;
        }
        let rank = ((q.clamp(0.0, 1.0) * self.n as f64).ceil() as u64).max(1);
        if rank >= self.n {
            return Some(self.max);
        }
        let mut seen = 0u64;
        for (i, &c) in self.counts.iter().enumerate() {
            seen += c as u64;
            if seen >= rank {
                return Some(value_of(self.first + i).clamp(self.min, self.max));
            }
        }
        Some(self.max)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_within_bucket_precision() {
        let mut h = LogHistogram::new();
        for v in 1..=100_000u64 {
            h.record(v * 1000);
        }
        for (q, exact) in [(0.5, 50_000_000.0), (0.99, 99_000_000.0), (0.01, 1_000_000.0)] {
            let got = h.quantile(q).unwrap() as f64;
            assert!((got - exact).abs() / exact < 0.01, "q{q}: {got} vs {exact}");
        }
        assert_eq!(h.min(), Some(1000));
        assert_eq!(h.max(), Some(100_000_000));
        assert!((h.mean().unwrap() - 50_000_500.0).abs() < 1e-6);
    }

    #[test]
    fn merging_equals_recording_both_sets_in_one() {
        let a: Vec<u64> = (1..=2000u64).map(|v| v * v * 37).collect();
        let b: Vec<u64> = (1..=300u64).map(|v| 5 + v * 1_000_003).collect();
        let mut both = LogHistogram::new();
        let (mut ha, mut hb) = (LogHistogram::new(), LogHistogram::new());
        for &v in &a {
            ha.record(v);
            both.record(v);
        }
        for &v in &b {
            hb.record(v);
            both.record(v);
        }
        // Merged either way round, into an empty one, and with an empty one: the same as one histogram.
        let mut ab = ha.clone();
        ab.merge(&hb);
        let mut ba = hb.clone();
        ba.merge(&ha);
        let mut empty_first = LogHistogram::new();
        empty_first.merge(&ab);
        empty_first.merge(&LogHistogram::new());
        for m in [&ab, &ba, &empty_first] {
            assert_eq!(m.count(), both.count());
            assert_eq!(
                (m.min(), m.max(), m.mean()),
                (both.min(), both.max(), both.mean())
            );
            for q in [0.0, 0.01, 0.25, 0.5, 0.9, 0.99, 0.999, 1.0] {
                assert_eq!(m.quantile(q), both.quantile(q), "q{q}");
            }
        }
        assert_ne!(ab.quantile(0.5), ha.quantile(0.5), "the merge changed the median");
    }

    #[test]
    fn small_values_are_exact_and_huge_values_clamp() {
        let mut h = LogHistogram::new();
        for v in [0u64, 1, 2, 63] {
            h.record(v);
        }
        assert_eq!(h.quantile(0.25), Some(0));
        assert_eq!(h.quantile(1.0), Some(63));
        h.record(u64::MAX);
        assert_eq!(h.quantile(1.0), Some(u64::MAX));
        h.clear();
        assert_eq!(h.quantile(0.5), None);
    }

    #[test]
    fn storage_covers_the_octaves_seen_and_quantiles_ignore_where_it_starts() {
        let mut h = LogHistogram::new();
        // 50 to 150 ms: octaves 2^25 and 2^26 and 2^27, recorded largest first so the range widens downwards.
        for v in (50..=150u64).rev() {
            h.record(v * 1_000_000);
        }
        assert_eq!(h.counts.len(), 3 * SUB);
        let p50 = h.quantile(0.5).unwrap() as f64;
        assert!((p50 - 100e6).abs() / 100e6 < 0.01, "{p50}");
        assert_eq!(h.min(), Some(50_000_000));
        let p1 = h.quantile(0.01).unwrap() as f64;
        assert!((p1 - 51e6).abs() / 51e6 < 0.01, "{p1}");
        h.clear();
        assert_eq!(h.counts.len(), 3 * SUB, "clearing keeps the storage");
        h.record(7);
        assert_eq!(h.quantile(0.5), Some(7));
    }

    #[test]
    fn every_bucket_value_maps_back_to_its_bucket() {
        for idx in 0..BUCKETS - 1 {
            assert_eq!(index(value_of(idx)), idx, "bucket {idx}");
        }
    }
}
