//! A paced flow over one lossless bottleneck, for the BBR tests: the scripted [`Driver`] plays the TCP stack,
//! this harness plays the network. Packets leave the sender no earlier than the algorithm's pacing rate allows
//! (earliest departure time, one packet per departure) and only while cwnd allows; each crosses a FIFO
//! bottleneck of `rate_pps` packets per second (serialization `1/rate_pps`, infinite buffer) and is ACKed
//! individually `rtt` after it left the bottleneck. So delivery rate, queueing delay and round trips are what a
//! real bottleneck produces, and the per-ACK RTT sample is the true one. Everything is deterministic.

use std::collections::VecDeque;

use ccfair_cc::testing::Driver;
use ccfair_cc::{CcConfig, CcVars, RateSample};
use ccfair_core::Rng;
use ccfair_core::rng::StreamId;
use serde_json::json;

use super::MSS;

/// One packet in flight: when it was sent and when its ACK arrives, ns.
#[derive(Copy, Clone, Debug)]
struct InFlight {
    sent_ns: u64,
    ack_ns: u64,
}

/// What the harness reports about each ACK.
#[derive(Clone, Debug)]
pub struct AckEvent {
    pub now_ns: u64,
    /// The algorithm's state after the ACK.
    pub vars: CcVars,
    pub cwnd: u32,
    pub in_flight: u32,
    pub pacing_rate: u64,
    pub rs: RateSample,
    /// The ACK started a packet-timed round (it acknowledged a packet sent after the previous round began).
    pub round_start: bool,
    /// Rounds so far, this one included.
    pub round: u64,
}

pub struct Path {
    pub d: Driver,
    pkt_ns: u64,
    rtt_ns: u64,
    link_free_ns: u64,
    flight: VecDeque<InFlight>,
    next_send_ns: u64,
    /// End of the current packet-timed round: `tp.delivered` when it began (the test's own round count).
    next_round_delivered: u32,
    pub rounds: u64,
    /// The propagation RTT grows by this much per second (a path change that makes old minimums stale).
    pub rtt_drift_ns_per_s: u64,
}

impl Path {
    /// Algorithm `name` with `params` over a bottleneck of `rate_pps` packets/s and `rtt_ms` propagation RTT.
    pub fn new(name: &str, params: serde_json::Value, rate_pps: u64, rtt_ms: u64) -> Path {
        Path::with_seed(name, params, rate_pps, rtt_ms, 1)
    }

    /// The same, with the algorithm's random stream drawn from master seed `seed`.
    pub fn with_seed(name: &str, params: serde_json::Value, rate_pps: u64, rtt_ms: u64, seed: u64) -> Path {
        let cfg = CcConfig::from_name_and_params(name, &params).expect("valid configuration");
        Path {
            d: Driver::new(cfg.build(Rng::stream(seed, StreamId::Cc(0))), MSS),
            pkt_ns: 1_000_000_000 / rate_pps,
            rtt_ns: rtt_ms * 1_000_000,
            link_free_ns: 0,
            flight: VecDeque::new(),
            next_send_ns: 0,
            next_round_delivered: 0,
            rounds: 0,
            rtt_drift_ns_per_s: 0,
        }
    }

    pub fn bbr(version: &str, rate_pps: u64, rtt_ms: u64) -> Path {
        Path::new(version, json!({}), rate_pps, rtt_ms)
    }

    pub fn now_ns(&self) -> u64 {
        self.d.now().ns()
    }

    /// Run until `end_ns`, calling `on_ack` after every ACK.
    pub fn run_until(&mut self, end_ns: u64, mut on_ack: impl FnMut(&AckEvent)) {
        loop {
            let now = self.now_ns();
            let ack_at = self.flight.front().map(|p| p.ack_ns);
            let send_at = (self.d.in_flight() < self.d.cwnd()).then(|| self.next_send_ns.max(now));
            let next = match (ack_at, send_at) {
                (Some(a), Some(s)) => a.min(s),
                (Some(a), None) => a,
                (None, Some(s)) => s,
                (None, None) => break,
            };
            if next > end_ns {
                self.d.advance(end_ns.saturating_sub(now));
                break;
            }
            if send_at == Some(next) && ack_at.is_none_or(|a| next < a) {
                self.d.advance(next - now);
                self.d.send(1);
                let depart = self.link_free_ns.max(next) + self.pkt_ns;
                self.link_free_ns = depart;
                let drift = (next as u128 * self.rtt_drift_ns_per_s as u128 / 1_000_000_000) as u64;
                self.flight.push_back(InFlight {
                    sent_ns: next,
                    ack_ns: depart + self.rtt_ns + drift,
                });
                let rate = self.d.tp.pacing_rate.max(1);
                self.next_send_ns = next + (MSS as u64 * 1_000_000_000).div_ceil(rate);
                self.d.tp.wstamp = ccfair_core::Time::from_ns(self.next_send_ns);
            } else {
                let p = self.flight.pop_front().expect("an ACK is due");
                let rtt_us = ((p.ack_ns - p.sent_ns) / 1_000) as i64;
                // Scripted losses (`lose_oldest`) may have moved the driver's clock past a planned ACK.
                let rs = self.d.ack(p.ack_ns.saturating_sub(now), 1, rtt_us);
                let round_start = rs.interval_us > 0 && rs.prior_delivered >= self.next_round_delivered;
                if round_start {
                    self.next_round_delivered = self.d.tp.delivered;
                    self.rounds += 1;
                }
                let ev = AckEvent {
                    now_ns: self.now_ns(),
                    vars: self.d.vars(),
                    cwnd: self.d.cwnd(),
                    in_flight: self.d.in_flight(),
                    pacing_rate: self.d.tp.pacing_rate,
                    rs,
                    round_start,
                    round: self.rounds,
                };
                on_ack(&ev);
            }
        }
    }

    /// The `n` oldest packets in flight are lost in the network: the stack marks them lost now (on an ACK that
    /// delivers nothing), and the harness retransmits them like any other packet. The scripted driver only
    /// acknowledges in order, so later ACKs cover the retransmissions first; counts stay consistent.
    pub fn lose_oldest(&mut self, n: u32) -> RateSample {
        let n = n.min(self.flight.len() as u32);
        for _ in 0..n {
            self.flight.pop_front();
        }
        self.d.ack_with(ccfair_cc::testing::Ack {
            advance_ns: 0,
            acked: 0,
            rtt_us: -1,
            ece: false,
            lost: n,
            ..Default::default()
        })
    }

    /// Run for `ns` more.
    pub fn run_for(&mut self, ns: u64, on_ack: impl FnMut(&AckEvent)) {
        let end = self.now_ns() + ns;
        self.run_until(end, on_ack);
    }
}

/// `bw_bps` of the time series back in the kernel's unit (packets/µs × 2^24), exactly.
pub fn bw_units(vars: &CcVars) -> u64 {
    (vars.bw_bps * (1u64 << 24) as f64 / (MSS as f64 * 8e6)).round() as u64
}

/// The kernel's `bbr_mode` numbers, as `CcVars::mode` exports them.
pub const STARTUP: i32 = 0;
pub const DRAIN: i32 = 1;
pub const PROBE_BW: i32 = 2;
pub const PROBE_RTT: i32 = 3;
