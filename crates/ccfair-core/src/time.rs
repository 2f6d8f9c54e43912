//! Simulated time in integer nanoseconds.
//!
//! `Time` is an instant since the start of a run, `Dur` a length of time. Both are `u64` nanoseconds: 2^64 ns
//! is 584 years, so overflow is not a concern, and integers keep runs bit-for-bit reproducible.

use std::fmt;
use std::ops::{Add, AddAssign, Sub};

/// An instant: nanoseconds since the start of the run.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Time(u64);

/// A length of time in nanoseconds.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Dur(u64);

impl Time {
    pub const ZERO: Time = Time(0);
    pub const MAX: Time = Time(u64::MAX);

    pub const fn from_ns(ns: u64) -> Time {
        Time(ns)
    }
    pub const fn ns(self) -> u64 {
        self.0
    }
    /// Microseconds, truncated (Linux's `tcp_mstamp` resolution).
    pub const fn us(self) -> u64 {
        self.0 / 1_000
    }
    /// Jiffies at HZ=1000 (Linux's `tcp_jiffies32` on a HZ=1000 kernel).
    pub const fn jiffies(self) -> u64 {
        self.0 / 1_000_000
    }
    pub fn secs_f64(self) -> f64 {
        self.0 as f64 * 1e-9
    }
    /// `self - earlier`, or zero when `earlier` is later.
    pub const fn saturating_since(self, earlier: Time) -> Dur {
        Dur(self.0.saturating_sub(earlier.0))
    }
}

impl Dur {
    pub const ZERO: Dur = Dur(0);
    pub const MAX: Dur = Dur(u64::MAX);

    pub const fn from_ns(ns: u64) -> Dur {
        Dur(ns)
    }
    pub const fn from_us(us: u64) -> Dur {
        Dur(us * 1_000)
    }
    pub const fn from_ms(ms: u64) -> Dur {
        Dur(ms * 1_000_000)
    }
    pub const fn from_secs(s: u64) -> Dur {
        Dur(s * 1_000_000_000)
    }
    pub const fn ns(self) -> u64 {
        self.0
    }
    pub const fn us(self) -> u64 {
        self.0 / 1_000
    }
    pub fn secs_f64(self) -> f64 {
        self.0 as f64 * 1e-9
    }
    pub const fn saturating_sub(self, other: Dur) -> Dur {
        Dur(self.0.saturating_sub(other.0))
    }
    pub const fn mul(self, k: u64) -> Dur {
        Dur(self.0 * k)
    }
    pub const fn div(self, k: u64) -> Dur {
        Dur(self.0 / k)
    }
}

impl Add<Dur> for Time {
    type Output = Time;
    #[inline]
    fn add(self, d: Dur) -> Time {
        Time(self.0.saturating_add(d.0))
    }
}

impl AddAssign<Dur> for Time {
    #[inline]
    fn add_assign(&mut self, d: Dur) {
        self.0 = self.0.saturating_add(d.0);
    }
}

impl Sub<Time> for Time {
    type Output = Dur;
    /// Panics in debug builds when `earlier` is after `self`: that is a logic error in the caller.
    #[inline]
    fn sub(self, earlier: Time) -> Dur {
        debug_assert!(
            self.0 >= earlier.0,
            "time went backwards: {} - {}",
            self.0,
            earlier.0
        );
        Dur(self.0.wrapping_sub(earlier.0))
    }
}

impl Sub<Dur> for Time {
    type Output = Time;
    #[inline]
    fn sub(self, d: Dur) -> Time {
        Time(self.0.saturating_sub(d.0))
    }
}

impl Add for Dur {
    type Output = Dur;
    #[inline]
    fn add(self, o: Dur) -> Dur {
        Dur(self.0.saturating_add(o.0))
    }
}

impl AddAssign for Dur {
    #[inline]
    fn add_assign(&mut self, o: Dur) {
        self.0 = self.0.saturating_add(o.0);
    }
}

impl Sub for Dur {
    type Output = Dur;
    #[inline]
    fn sub(self, o: Dur) -> Dur {
        debug_assert!(self.0 >= o.0, "negative duration: {} - {}", self.0, o.0);
        Dur(self.0.wrapping_sub(o.0))
    }
}

impl fmt::Display for Time {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.6}s", self.secs_f64())
    }
}

impl fmt::Display for Dur {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.3}ms", self.0 as f64 * 1e-6)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arithmetic_and_units() {
        let t = Time::from_ns(1_500_000) + Dur::from_ms(2);
        assert_eq!(t.ns(), 3_500_000);
        assert_eq!(t.us(), 3_500);
        assert_eq!(t.jiffies(), 3);
        assert_eq!(t - Time::from_ns(500_000), Dur::from_ms(3));
        assert_eq!(Time::from_ns(5).saturating_since(Time::from_ns(9)), Dur::ZERO);
    }
}
