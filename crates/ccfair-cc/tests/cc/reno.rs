//! Reno (`tcp_cong.c`): slow start, additive increase, halving, undo.

use ccfair_cc::reno::Reno;
use ccfair_cc::testing::Driver;
use ccfair_cc::{CaState, CongestionControl, TcpSock};

use super::MSS;

const RTT_US: i64 = 50_000;

fn reno() -> Driver {
    Driver::new(Box::new(Reno), MSS)
}

/// A Reno connection with the given cwnd and ssthresh and a full window in flight.
fn reno_at(cwnd: u32, ssthresh: u32) -> Driver {
    let mut d = reno();
    d.tp.snd_cwnd = cwnd;
    d.tp.snd_ssthresh = ssthresh;
    d.fill();
    d
}

#[test]
fn slow_start_adds_exactly_the_acked_packets() {
    let mut d = reno_at(10, 1000);
    d.ack(1_000_000, 1, RTT_US);
    assert_eq!(d.cwnd(), 11);
    d.ack(1_000_000, 3, RTT_US);
    assert_eq!(d.cwnd(), 14);
    // A stretch ACK counts every packet it covers (no ABC limit of 2).
    d.fill();
    d.ack(1_000_000, 9, RTT_US);
    assert_eq!(d.cwnd(), 23);
    assert_eq!(d.tp.snd_cwnd_cnt, 0, "no additive-increase credit in slow start");
}

#[test]
fn slow_start_doubles_per_round_trip() {
    let mut d = reno_at(10, 100_000);
    for expected in [20, 40, 80, 160] {
        d.run_round(RTT_US as u64);
        assert_eq!(d.cwnd(), expected);
    }
}

#[test]
fn slow_start_stops_at_ssthresh_and_hands_the_rest_to_additive_increase() {
    let mut d = reno_at(98, 100);
    d.ack(1_000_000, 5, RTT_US);
    assert_eq!(d.cwnd(), 100, "slow start is capped at ssthresh");
    assert_eq!(
        d.tp.snd_cwnd_cnt, 3,
        "the 3 packets beyond ssthresh are additive-increase credit"
    );
    assert!(!d.tp.in_slow_start());
    // 97 more ACKed packets complete a window of 100: +1.
    for _ in 0..97 {
        d.fill();
        d.ack(100_000, 1, RTT_US);
    }
    assert_eq!(d.cwnd(), 101);
    assert_eq!(d.tp.snd_cwnd_cnt, 0);
}

#[test]
fn additive_increase_is_one_packet_per_window_of_acked_packets() {
    let mut d = reno_at(50, 50);
    for _ in 0..49 {
        d.fill();
        d.ack(100_000, 1, RTT_US);
        assert_eq!(d.cwnd(), 50);
    }
    d.fill();
    d.ack(100_000, 1, RTT_US);
    assert_eq!(d.cwnd(), 51);
    // A stretch ACK worth two windows adds two packets and keeps the remainder as credit.
    d.send(51 + 51 + 7);
    d.ack(100_000, 51 + 51 + 7, RTT_US);
    assert_eq!(d.cwnd(), 53);
    assert_eq!(d.tp.snd_cwnd_cnt, 7);
}

#[test]
fn additive_increase_is_one_packet_per_round_trip() {
    let mut d = reno_at(40, 40);
    for r in d.run_rounds(20, RTT_US as u64) {
        assert_eq!(r.cwnd_end, r.cwnd_start + 1, "{r:?}");
    }
}

#[test]
fn ssthresh_halves_cwnd_but_not_below_two() {
    for cwnd in [1u32, 2, 3, 4, 5, 6, 7, 10, 101, 1000, 65_535] {
        let mut tp = TcpSock::new(MSS, cwnd);
        assert_eq!(Reno.ssthresh(&mut tp), (cwnd / 2).max(2), "cwnd {cwnd}");
    }
}

#[test]
fn recovery_ends_with_cwnd_at_half() {
    let mut d = reno_at(80, 1000);
    super::lose_and_recover(&mut d, RTT_US as u64);
    assert_eq!(d.ssthresh(), 40);
    // On the ACK that ends recovery cwnd is set to ssthresh, then that ACK's packets feed additive increase.
    assert!(d.cwnd() == 40 || d.cwnd() == 41, "cwnd {}", d.cwnd());
    assert!(!d.tp.in_slow_start());
}

#[test]
fn no_growth_when_not_cwnd_limited() {
    // Congestion avoidance, the application keeps only 5 of 30 packets in flight.
    let mut d = reno();
    d.tp.snd_cwnd = 30;
    d.tp.snd_ssthresh = 30;
    d.app_limited(true);
    for _ in 0..200 {
        d.send(1);
        d.ack(10_000_000, 1, RTT_US);
        assert!(!d.tp.is_cwnd_limited);
    }
    assert_eq!(d.cwnd(), 30);
    assert_eq!(d.tp.snd_cwnd_cnt, 0);

    // Slow start: using less than half the window does not grow it either...
    let mut d = reno();
    d.app_limited(true);
    d.send(4);
    d.ack(10_000_000, 4, RTT_US);
    assert_eq!(d.cwnd(), 10);
    // ...but using more than half does (Linux lets slow start double what was actually used).
    d.send(6);
    d.ack(10_000_000, 6, RTT_US);
    assert_eq!(d.cwnd(), 16);
}

#[test]
fn undo_restores_the_larger_of_cwnd_and_prior_cwnd() {
    for (cwnd, prior, expected) in [(30, 40, 40), (50, 40, 50), (40, 40, 40)] {
        let mut tp = TcpSock::new(MSS, cwnd);
        tp.prior_cwnd = prior;
        assert_eq!(Reno.undo_cwnd(&mut tp), expected);
    }
    // Through the stack: a spurious recovery is undone to the pre-loss window.
    let mut d = reno_at(40, 1000);
    d.enter_recovery();
    assert_eq!(d.tp.prior_cwnd, 40);
    for _ in 0..10 {
        d.ack(1_000_000, 2, RTT_US);
    }
    assert!(d.cwnd() < 40, "PRR reduced cwnd");
    d.undo();
    assert_eq!(d.state(), CaState::Open);
    assert_eq!(d.cwnd(), 40);
}
