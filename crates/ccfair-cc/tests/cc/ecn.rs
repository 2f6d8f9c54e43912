//! DCTCP (RFC 8257 / tcp_dctcp.c) and TCP Prague v0.7: the ECN responses, checked against their formulas.

use ccfair_cc::prague::{Prague, PragueParams};
use ccfair_cc::testing::Ack;
use ccfair_cc::{CaState, CongestionControl, RateSample, TcpSock};
use ccfair_core::Time;
use serde_json::json;

use crate::{MSS, driver};

const RTT_US: i64 = 10_000;

/// DCTCP's α update in its kernel units: α − max(α >> 4, α if that is 0) + (ce << 6) / delivered.
fn dctcp_alpha_after(alpha: u32, delivered: u32, ce: u32) -> u32 {
    let dec = alpha >> 4;
    let mut a = alpha - if dec == 0 { alpha } else { dec };
    if ce > 0 {
        a = (a + (ce << 6) / delivered.max(1)).min(1024);
    }
    a
}

/// ACKs the whole flight one packet at a time, unmarked.
fn ack_flight(d: &mut ccfair_cc::testing::Driver) {
    for _ in 0..d.in_flight() {
        d.ack_with(Ack {
            advance_ns: 100_000,
            acked: 1,
            rtt_us: RTT_US,
            ece: false,
            lost: 0,
            ..Default::default()
        });
    }
}

#[test]
fn dctcp_alpha_is_an_ewma_of_the_marked_fraction_once_per_window() {
    // The rule (RFC 8257 §3.3, dctcp_update_alpha): once snd_una reaches the snd_nxt of the previous update,
    // α ← α(1 − g) + g·F over the packets delivered since, F their marked fraction, g = 1/16.
    let mut d = driver("dctcp", json!({}));
    d.tp.snd_ssthresh = 30;
    assert_eq!(
        d.vars().aux,
        1.0,
        "alpha starts at 1 (dctcp_alpha_on_init = 1024)"
    );
    let (mut alpha, mut next_seq, mut delivered, mut ce) = (1024u32, 0u32, 0u32, 0u32);
    let mut updates = 0;
    for (round, pattern) in [3u32, 0, 1, 2, 0, 0].into_iter().enumerate() {
        d.fill();
        let n = d.in_flight();
        for i in 0..n {
            let marked = pattern != 0 && i % pattern == 0;
            d.ack_with(Ack {
                advance_ns: 100_000,
                acked: 1,
                rtt_us: RTT_US,
                ece: marked,
                lost: 0,
                ..Default::default()
            });
            delivered += 1;
            ce += marked as u32;
            if d.tp.snd_una >= next_seq {
                alpha = dctcp_alpha_after(alpha, delivered, ce);
                (next_seq, delivered, ce) = (d.tp.snd_nxt, 0, 0);
                updates += 1;
            }
            let got = (d.vars().aux * 1024.0).round() as u32;
            assert_eq!(got, alpha, "round {round}, ack {i}");
            if i == n / 2 {
                d.fill(); // keep the pipe full so windows straddle flights, as on a real path
            }
        }
    }
    assert!(updates >= 6, "only {updates} alpha updates");
}

#[test]
fn dctcp_cuts_cwnd_by_half_alpha_on_ecn_and_halves_on_loss() {
    let mut d = driver("dctcp", json!({ "alpha_on_init": 512 }));
    d.tp.snd_cwnd = 100;
    d.tp.snd_ssthresh = 50;
    d.fill();
    d.enter_cwr();
    assert_eq!(d.state(), CaState::Cwr);
    // ssthresh = cwnd − cwnd·α/2048 with α = 512/1024: a quarter off.
    assert_eq!(d.ssthresh(), 100 - ((100 * 512) >> 11));
    d.exit_recovery();
    // A loss halves whatever alpha is (dctcp_react_to_loss on entering Recovery).
    let cwnd = d.cwnd();
    d.fill();
    d.enter_recovery();
    assert_eq!(d.ssthresh(), (cwnd / 2).max(2));
}

#[test]
fn dctcp_alpha_decays_to_exactly_zero_without_marks() {
    let mut d = driver("dctcp", json!({}));
    d.tp.snd_ssthresh = 20; // congestion avoidance: the window stays small
    for _ in 0..200 {
        d.fill();
        ack_flight(&mut d);
    }
    assert_eq!(
        d.vars().aux,
        0.0,
        "min_not_zero drives alpha to 0 once alpha >> 4 rounds to 0"
    );
}

/// A Prague connection with an RTT sample, ready for hand-made ACKs.
fn prague(cwnd: u32) -> (Prague, TcpSock) {
    let mut tp = TcpSock::new(MSS, cwnd);
    tp.ecn_ok = true;
    tp.internal_pacing = true;
    tp.srtt_us = 10_000;
    tp.min_rtt_us = 10_000;
    tp.snd_ssthresh = 5; // out of slow start
    tp.now = Time::from_ns(1_000_000_000);
    let mut p = Prague::new(PragueParams::default());
    p.init(&mut tp);
    (p, tp)
}

fn ack(tp: &mut TcpSock, acked: u32, ce: u32) -> RateSample {
    tp.snd_una += acked;
    tp.delivered += acked;
    tp.delivered_ce += ce;
    tp.now += ccfair_core::Dur::from_us(100);
    tp.is_cwnd_limited = true;
    RateSample {
        acked_sacked: acked,
        ece_delta: ce,
        ..RateSample::default()
    }
}

#[test]
fn prague_halves_at_the_first_mark_then_grows_only_for_unmarked_packets() {
    let (mut p, mut tp) = prague(100);
    tp.snd_nxt = 200;
    tp.packets_out = 100;
    assert_eq!(p.frac_cwnd(), 100.0);
    // First CE ever (alpha_mode 0): frac_cwnd halves, and the marked packet does not count for growth.
    let rs = ack(&mut tp, 1, 1);
    p.cong_control(&mut tp, &rs);
    assert!((p.frac_cwnd() - 50.0).abs() < 1e-6, "{}", p.frac_cwnd());
    assert_eq!(tp.snd_cwnd, 99, "the socket cwnd steps down by one per ACK");
    // Unmarked ACKs grow frac_cwnd by ≈ 1/frac_cwnd each (RTT 10 ms is below the 25 ms target but the flow
    // is not yet RTT-independent: unscaled Reno-like increase).
    let before = p.frac_cwnd();
    let rs = ack(&mut tp, 2, 0);
    p.cong_control(&mut tp, &rs);
    let grew = p.frac_cwnd() - before;
    assert!((grew - 2.0 / before).abs() < 1e-4, "grew {grew}");
    // A fully marked ACK does not grow it.
    let before = p.frac_cwnd();
    let rs = ack(&mut tp, 2, 2);
    p.cong_control(&mut tp, &rs);
    assert_eq!(p.frac_cwnd(), before);
}

#[test]
fn prague_cwr_reduces_by_half_alpha_and_loss_halves() {
    let (mut p, mut tp) = prague(100);
    tp.snd_nxt = 100;
    tp.packets_out = 100;
    // Establish alpha: after the first mark, a round where half the packets were marked.
    let rs = ack(&mut tp, 1, 1);
    p.cong_control(&mut tp, &rs);
    // Close the round opened at init (snd_una ≥ next_seq): alpha = 0 − 0 + F·2^24 with F = 1/1.
    let a = p.alpha();
    assert!(
        (a - 1.0 / 16.0).abs() < 1e-6,
        "upscaled EWMA: alpha = F/16 after one round, got {a}"
    );
    let frac = p.frac_cwnd();
    p.set_state(&mut tp, CaState::Cwr);
    tp.ca_state = CaState::Cwr;
    assert!(
        (p.frac_cwnd() - frac * (1.0 - a / 2.0)).abs() < 1e-3,
        "{} vs {}",
        p.frac_cwnd(),
        frac * (1.0 - a / 2.0)
    );
    let frac = p.frac_cwnd();
    p.set_state(&mut tp, CaState::Recovery);
    assert!((p.frac_cwnd() - frac / 2.0).abs() < 1e-3);
}

#[test]
fn prague_paces_at_the_window_rate_and_caps_bursts_at_a_quarter_millisecond() {
    let (mut p, mut tp) = prague(100);
    tp.snd_nxt = 100;
    tp.packets_out = 100;
    tp.snd_ssthresh = 100; // cwnd ≥ ssthresh/2: no slow-start doubling
    let rs = ack(&mut tp, 1, 0);
    p.cong_control(&mut tp, &rs);
    // 100 % of max(frac_cwnd, in flight) MTUs per srtt.
    let mtu = (MSS + 52) as f64;
    let expect = p.frac_cwnd().floor().max(tp.in_flight() as f64) * mtu / 0.010;
    let got = tp.pacing_rate as f64;
    assert!((got - expect).abs() / expect < 0.01, "{got} vs {expect}");
    // TSO bursts of rate/MTU >> 12 segments (2^-12 s).
    let burst = p.tso_segs(&tp).unwrap();
    assert_eq!(burst, ((tp.pacing_rate / (MSS as u64 + 52)) >> 12).max(1) as u32);
}
