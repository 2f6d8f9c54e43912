//! A flow's host timing at run time: the per-packet processing delays and the timer slack of its
//! [`HostSpec`](super::HostSpec).
//!
//! In a nutshell: each end of a flow draws a processing delay per packet from its own stream (exponential by
//! inversion, `-ln(1 - u) × mean`, or uniform on `[0, 2 × mean)`); the simulator keeps the flow's packets in
//! order behind it. A timer fires at `deadline + slack(deadline)` for the pacing timer, where the slack is a
//! hash of the flow's timer key and the deadline, uniform on `[0, pacing_slack)` (the same deadline always
//! gets the same slack, so re-arming a timer for an unchanged deadline does not move it), and at the deadline
//! rounded up to the delayed-ACK granularity for the delayed-ACK timer. Source and constants: see the module
//! docs of [`super`].
//!
//! The ideal host draws nothing and returns every deadline unchanged: [`HostTiming::is_ideal`] lets the
//! simulator keep its ideal path exactly as it was. Nothing here allocates.

use ccfair_core::rng::{StreamId, hash64};
use ccfair_core::{Dur, Rng, Time};

use super::{HostSpec, Noise};

pub struct HostTiming {
    noise: Noise,
    noise_mean_ns: f64,
    send_rng: Rng,
    recv_rng: Rng,
    timer_key: u64,
    pacing_slack_ns: u64,
    delack_granularity_ns: u64,
    /// Where the delayed-ACK timer's ticks fall: the host's tick phase, modulo the granularity.
    delack_phase_ns: u64,
}

impl HostTiming {
    /// Flow `flow`'s timing under run seed `seed`.
    pub fn new(spec: &HostSpec, seed: u64, flow: u32) -> HostTiming {
        HostTiming {
            noise: if spec.noise_scale_ns == 0 {
                Noise::None
            } else {
                spec.noise
            },
            noise_mean_ns: spec.noise_scale_ns as f64,
            send_rng: Rng::stream(seed, StreamId::HostSend(flow)),
            recv_rng: Rng::stream(seed, StreamId::HostRecv(flow)),
            timer_key: Rng::stream(seed, StreamId::HostTimer(flow)).next_u64(),
            pacing_slack_ns: spec.pacing_slack_ns,
            delack_granularity_ns: spec.delack_granularity_ns,
            delack_phase_ns: match spec.delack_granularity_ns {
                0 => 0,
                g => spec.jiffies(seed).phase_ns() % g,
            },
        }
    }

    /// True if packets are delayed at the ends (else [`Self::send_delay`] and [`Self::recv_delay`] are 0).
    #[inline]
    pub fn has_noise(&self) -> bool {
        self.noise != Noise::None
    }

    /// The next segment's delay between TCP and the wire at the sender.
    #[inline]
    pub fn send_delay(&mut self) -> Dur {
        draw(self.noise, self.noise_mean_ns, &mut self.send_rng)
    }

    /// The next segment's delay between the wire and TCP at the receiver.
    #[inline]
    pub fn recv_delay(&mut self) -> Dur {
        draw(self.noise, self.noise_mean_ns, &mut self.recv_rng)
    }

    /// When a pacing timer for `deadline` fires.
    #[inline]
    pub fn pacing_fire(&self, deadline: Time) -> Time {
        if self.pacing_slack_ns == 0 {
            return deadline;
        }
        let u = hash64(self.timer_key ^ deadline.ns());
        let slack = ((u as u128 * self.pacing_slack_ns as u128) >> 64) as u64;
        deadline + Dur::from_ns(slack)
    }

    /// When a delayed-ACK timer for `deadline` fires: the first tick at or after it.
    #[inline]
    pub fn delack_fire(&self, deadline: Time) -> Time {
        match self.delack_granularity_ns {
            0 => deadline,
            g => {
                let shifted = deadline.ns() + self.delack_phase_ns;
                Time::from_ns(shifted.div_ceil(g).saturating_mul(g) - self.delack_phase_ns)
            }
        }
    }
}

#[inline]
fn draw(noise: Noise, mean_ns: f64, rng: &mut Rng) -> Dur {
    let ns = match noise {
        Noise::None => return Dur::ZERO,
        Noise::Exponential => -(1.0 - rng.next_f64()).ln() * mean_ns,
        Noise::Uniform => rng.next_f64() * 2.0 * mean_ns,
    };
    Dur::from_ns(ns as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(noise: Noise, scale_ns: u64) -> HostSpec {
        HostSpec {
            noise,
            noise_scale_ns: scale_ns,
            pacing_slack_ns: 10_000,
            delack_granularity_ns: 1_000_000,
            ..HostSpec::default()
        }
    }

    #[test]
    fn noise_has_its_mean_and_range() {
        for noise in [Noise::Exponential, Noise::Uniform] {
            let mut t = HostTiming::new(&spec(noise, 5_000), 1, 0);
            let n = 200_000;
            let draws: Vec<u64> = (0..n).map(|_| t.send_delay().ns()).collect();
            let mean = draws.iter().sum::<u64>() as f64 / n as f64;
            assert!((mean - 5_000.0).abs() < 100.0, "{noise:?}: mean {mean}");
            if noise == Noise::Uniform {
                assert!(draws.iter().all(|&d| d < 10_000));
            } else {
                // P(X > 3 × mean) = e^-3 for an exponential.
                let tail = draws.iter().filter(|&&d| d > 15_000).count() as f64 / n as f64;
                assert!((tail - (-3.0f64).exp()).abs() < 0.005, "tail {tail}");
            }
        }
    }

    #[test]
    fn the_ends_and_the_seeds_draw_apart() {
        let s = spec(Noise::Exponential, 5_000);
        let mut a = HostTiming::new(&s, 1, 0);
        let mut b = HostTiming::new(&s, 2, 0);
        let mut again = HostTiming::new(&s, 1, 0);
        let sa: Vec<Dur> = (0..8).map(|_| a.send_delay()).collect();
        let ra: Vec<Dur> = (0..8).map(|_| a.recv_delay()).collect();
        let sb: Vec<Dur> = (0..8).map(|_| b.send_delay()).collect();
        let s_again: Vec<Dur> = (0..8).map(|_| again.send_delay()).collect();
        assert_ne!(sa, ra);
        assert_ne!(sa, sb);
        assert_eq!(sa, s_again);
    }

    #[test]
    fn timers_fire_within_their_slack_and_on_ticks() {
        let t = HostTiming::new(&spec(Noise::None, 0), 1, 0);
        assert!(!t.has_noise());
        let mut slacks = std::collections::BTreeSet::new();
        for d in (0..1000u64).map(|i| Time::from_ns(1_000_000 + i * 7_919)) {
            let fire = t.pacing_fire(d);
            assert!(fire >= d && fire.ns() < d.ns() + 10_000);
            assert_eq!(t.pacing_fire(d), fire, "the same deadline fires at the same time");
            slacks.insert(fire.ns() - d.ns());
        }
        assert!(slacks.len() > 900, "slack spreads over its range");
        assert_eq!(t.delack_fire(Time::from_ns(40_000_001)).ns(), 41_000_000);
        assert_eq!(t.delack_fire(Time::from_ns(40_000_000)).ns(), 40_000_000);
        let ideal = HostTiming::new(&HostSpec::default(), 1, 0);
        assert_eq!(ideal.pacing_fire(Time::from_ns(123)).ns(), 123);
        assert_eq!(ideal.delack_fire(Time::from_ns(123)).ns(), 123);
    }
}
