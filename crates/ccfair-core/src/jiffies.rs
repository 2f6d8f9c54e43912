//! The host kernel's tick: Linux's `jiffies` counter, at `HZ` ticks per second, as the host's TCP reads it
//! (`tcp_jiffies32`).
//!
//! In a nutshell: Linux counts time for its coarse clocks in jiffies, one per timer interrupt. Cubic's curve
//! (`bictcp_update` takes `t` from `tcp_jiffies32`), BBR's min-RTT window and PROBE_RTT deadline, and every
//! timer-wheel timer (the delayed ACK) see time in whole ticks, so what they do depends on where in a tick an
//! event falls. Two things set that:
//! - `HZ`, a kernel build option (`CONFIG_HZ`): 1000 on many server kernels, 250 on Debian's and Ubuntu's
//!   generic kernels (and on the machine the kernel truth of `ccfair validate` was measured on), 100 or 300
//!   on others. One tick is 1 ms at 1000, 4 ms at 250.
//! - the phase: a machine's jiffies count from its boot (offset by `INITIAL_JIFFIES`), not from the start of
//!   an experiment, so where a run's first packet falls inside a tick is uniform over the tick and differs
//!   from run to run. The ideal host's counter starts at the run's start (phase 0), as the simulator's clock
//!   always did.
//!
//! Deviation: the counter runs at `HZ` from the run's clock (no tick skew or NO_HZ catch-up; at HZ=300 a
//! tick is rounded to whole nanoseconds).

use crate::Time;

/// `HZ` values Linux offers (`kernel/Kconfig.hz`).
pub const HZ_VALUES: [u32; 4] = [100, 250, 300, 1000];

/// The jiffies clock of one host: its rate and where its ticks fall on the run's clock.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Jiffies {
    /// Ticks per second (`HZ`).
    hz: u32,
    /// Nanoseconds per tick.
    tick_ns: u64,
    /// How far into a tick the run's clock starts: the counter reads `(now + phase_ns) / tick_ns`.
    phase_ns: u64,
}

impl Default for Jiffies {
    fn default() -> Self {
        Jiffies::HZ1000
    }
}

impl Jiffies {
    /// HZ=1000 starting at the run's start: the ideal host's clock.
    pub const HZ1000: Jiffies = Jiffies {
        hz: 1000,
        tick_ns: 1_000_000,
        phase_ns: 0,
    };

    /// A clock at `hz` ticks per second whose run starts `phase_ns` into a tick (taken modulo one tick).
    /// Every value of [`HZ_VALUES`] but 300 divides 10^9; at 300 a tick is 3,333,333 ns, so the counter
    /// gains 0.1 µs per second on the kernel's (conversions of durations to jiffies are exact).
    pub fn new(hz: u32, phase_ns: u64) -> Jiffies {
        assert!(hz > 0, "HZ must be positive");
        let tick_ns = 1_000_000_000 / hz as u64;
        Jiffies {
            hz,
            tick_ns,
            phase_ns: phase_ns % tick_ns,
        }
    }

    /// Ticks per second (`HZ`).
    #[inline]
    pub const fn hz(self) -> u32 {
        self.hz
    }

    /// How far into a tick the run's clock starts.
    #[inline]
    pub const fn phase_ns(self) -> u64 {
        self.phase_ns
    }

    /// The length of one tick.
    #[inline]
    pub const fn tick_ns(self) -> u64 {
        self.tick_ns
    }

    /// `tcp_jiffies32` at `now` (wrapping, as the kernel's).
    #[inline]
    pub const fn at(self, now: Time) -> u32 {
        ((now.ns() + self.phase_ns) / self.tick_ns) as u32
    }

    /// `usecs_to_jiffies`: ⌈us · HZ / 10^6⌉, exact for every HZ (as the kernel's, which rounds up).
    #[inline]
    pub const fn from_us(self, us: u64) -> u64 {
        (us * self.hz as u64).div_ceil(1_000_000)
    }

    /// `msecs_to_jiffies`: ⌈ms · HZ / 1000⌉.
    #[inline]
    pub const fn from_ms(self, ms: u64) -> u64 {
        (ms * self.hz as u64).div_ceil(1_000)
    }

    /// The first tick at or after `t`: when a timer-wheel timer due at `t` fires.
    #[inline]
    pub const fn next_tick(self, t: Time) -> Time {
        let shifted = t.ns() + self.phase_ns;
        let tick = shifted.div_ceil(self.tick_ns).saturating_mul(self.tick_ns);
        Time::from_ns(tick - self.phase_ns)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hz1000_is_the_millisecond_clock() {
        let j = Jiffies::HZ1000;
        for ns in [0, 999_999, 1_000_000, 123_456_789_012] {
            let t = Time::from_ns(ns);
            assert_eq!(j.at(t) as u64, t.jiffies());
        }
        assert_eq!(j.from_us(1), 1);
        assert_eq!(j.from_us(1_000), 1);
        assert_eq!(j.from_us(1_001), 2);
        assert_eq!(j.from_ms(200), 200);
    }

    #[test]
    fn hz250_ticks_every_4_ms_from_its_phase() {
        let j = Jiffies::new(250, 3_000_000);
        assert_eq!(j.at(Time::from_ns(0)), 0);
        assert_eq!(j.at(Time::from_ns(999_999)), 0);
        // The first tick comes 1 ms into the run, then every 4 ms.
        assert_eq!(j.at(Time::from_ns(1_000_000)), 1);
        assert_eq!(j.at(Time::from_ns(5_000_000)), 2);
        assert_eq!(j.next_tick(Time::from_ns(1)), Time::from_ns(1_000_000));
        assert_eq!(j.next_tick(Time::from_ns(1_000_000)), Time::from_ns(1_000_000));
        assert_eq!(j.next_tick(Time::from_ns(1_000_001)), Time::from_ns(5_000_000));
        assert_eq!(j.from_ms(200), 50);
        assert_eq!(j.from_us(4_001), 2);
        assert_eq!(j.from_us(20_000), 5);
        // HZ=300: a tick does not divide a millisecond; the conversions still round as the kernel's.
        let j300 = Jiffies::new(300, 0);
        assert_eq!(
            (j300.from_ms(200), j300.from_ms(1), j300.from_us(3_334)),
            (60, 1, 2)
        );
        // The phase is taken modulo one tick.
        assert_eq!(Jiffies::new(250, 7_000_000), j);
    }
}
