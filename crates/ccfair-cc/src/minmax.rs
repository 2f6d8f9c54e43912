//! Windowed running minimum / maximum, Kathleen Nichols' algorithm as Linux implements it in
//! `lib/win_minmax.c`: it keeps the best, second-best and third-best samples from successive sub-windows, so
//! the extreme over the last `win` time units is available in O(1) time and memory.
//!
//! Used by the TCP stack for `tcp_min_rtt` (300 s window) and by BBR for its bandwidth and min-RTT filters.
//! Times and values are plain integers in whatever unit the caller uses (jiffies, rounds, µs, ...), with the
//! kernel's wrapping arithmetic on time.

#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
struct Sample {
    t: u32,
    v: u64,
}

/// The three-sample estimator state (`struct minmax`).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct MinMax {
    s: [Sample; 3],
}

impl MinMax {
    /// A filter whose current value is `v` (taken at time `t`).
    pub fn new(t: u32, v: u64) -> MinMax {
        let s = Sample { t, v };
        MinMax { s: [s; 3] }
    }

    /// The current windowed extreme.
    #[inline]
    pub fn get(&self) -> u64 {
        self.s[0].v
    }

    /// Forgets everything and starts over from one sample.
    pub fn reset(&mut self, t: u32, v: u64) -> u64 {
        *self = MinMax::new(t, v);
        v
    }

    /// Ages the sub-window choices once `win` (or a quarter / half of it) has passed.
    fn subwin_update(&mut self, win: u32, val: Sample) -> u64 {
        let dt = val.t.wrapping_sub(self.s[0].t);
        if dt > win {
            // The best sample left the window: promote the runners-up. Do it twice if the second choice is
            // also stale (the third is known to be inside the window, it was checked by the caller).
            self.s[0] = self.s[1];
            self.s[1] = self.s[2];
            self.s[2] = val;
            if val.t.wrapping_sub(self.s[0].t) > win {
                self.s[0] = self.s[1];
                self.s[1] = self.s[2];
                self.s[2] = val;
            }
        } else if self.s[1].t == self.s[0].t && dt > win / 4 {
            // A quarter window passed without a new best: take a second choice from the second quarter.
            self.s[1] = val;
            self.s[2] = val;
        } else if self.s[2].t == self.s[1].t && dt > win / 2 {
            // Half a window passed: take a third choice from the last half.
            self.s[2] = val;
        }
        self.s[0].v
    }

    /// Adds a sample to a running-maximum filter over `win`.
    pub fn running_max(&mut self, win: u32, t: u32, v: u64) -> u64 {
        let val = Sample { t, v };
        if val.v >= self.s[0].v || val.t.wrapping_sub(self.s[2].t) > win {
            return self.reset(t, v);
        }
        if val.v >= self.s[1].v {
            self.s[1] = val;
            self.s[2] = val;
        } else if val.v >= self.s[2].v {
            self.s[2] = val;
        }
        self.subwin_update(win, val)
    }

    /// Adds a sample to a running-minimum filter over `win`.
    pub fn running_min(&mut self, win: u32, t: u32, v: u64) -> u64 {
        let val = Sample { t, v };
        if val.v <= self.s[0].v || val.t.wrapping_sub(self.s[2].t) > win {
            return self.reset(t, v);
        }
        if val.v <= self.s[1].v {
            self.s[1] = val;
            self.s[2] = val;
        } else if val.v <= self.s[2].v {
            self.s[2] = val;
        }
        self.subwin_update(win, val)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Brute-force windowed extreme for comparison.
    fn brute(samples: &[(u32, u64)], now: u32, win: u32, max: bool) -> u64 {
        let inwin = samples.iter().filter(|(t, _)| now - t <= win).map(|&(_, v)| v);
        if max {
            inwin.max().unwrap()
        } else {
            inwin.min().unwrap()
        }
    }

    #[test]
    fn tracks_the_extreme_within_the_window() {
        // Deterministic pseudo-random walk.
        let mut x: u64 = 12345;
        let mut samples = Vec::new();
        let mut fmax = MinMax::new(0, 0);
        let mut fmin = MinMax::new(0, u64::MAX);
        let win = 100;
        for t in 0..2000u32 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let v = (x >> 40) % 1000;
            samples.push((t, v));
            let gmax = fmax.running_max(win, t, v);
            let gmin = fmin.running_min(win, t, v);
            // The estimate is never better than the true extreme of the window...
            assert!(gmax <= brute(&samples, t, win, true));
            assert!(gmin >= brute(&samples, t, win, false));
            // ...and it is always some sample from (at most) the last window.
            assert!(samples.iter().any(|&(st, sv)| sv == gmax && t - st <= win));
            assert!(samples.iter().any(|&(st, sv)| sv == gmin && t - st <= win));
        }
    }

    #[test]
    fn expired_best_is_replaced() {
        let mut f = MinMax::new(0, u64::MAX);
        f.running_min(10, 0, 5);
        assert_eq!(f.running_min(10, 3, 9), 5);
        // At t=20 the sample 5 (t=0) and 9 (t=3) are older than the window.
        assert_eq!(f.running_min(10, 20, 12), 12);
    }
}
