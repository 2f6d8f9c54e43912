//! CUBIC's HyStart (the original Ha & Rhee algorithm of `tcp_cubic.c`): leave slow start (ssthresh = cwnd)
//! when a round's minimum RTT rises above delay_min + clamp(delay_min/8, 4 ms, 16 ms) after 8 samples, or
//! when closely spaced ACKs (≤ 2 ms apart) span more than half the minimum RTT (a whole one when paced).

use ccfair_cc::sock::TCP_INFINITE_SSTHRESH;
use ccfair_cc::testing::Driver;
use serde_json::json;

use super::driver;

/// Gap between the ACKs of the round that establishes delay_min: too wide to form an ACK train.
const WIDE_GAP_US: u64 = 5_000;

/// A CUBIC connection in its first slow start at `cwnd`, after one HyStart round in which every packet was
/// ACKed singly with an RTT of `base_rtt_us` (so delay_min = base_rtt_us).
fn after_base_round(params: serde_json::Value, cwnd: u32, base_rtt_us: u64) -> Driver {
    let mut d = driver("cubic", params);
    d.tp.snd_cwnd = cwnd;
    let n = d.send(cwnd);
    for _ in 0..n {
        d.ack(WIDE_GAP_US * 1_000, 1, base_rtt_us as i64);
    }
    assert_eq!(d.ssthresh(), TCP_INFINITE_SSTHRESH, "no exit on the base round");
    d
}

/// The next round: `acks` packets sent, then ACKed singly `gap_us` apart with RTT `rtt_us`. Returns the
/// 1-based index of the ACK on which slow start ended (ssthresh set to cwnd), if it did.
fn round(d: &mut Driver, acks: u32, gap_us: u64, rtt_us: u64) -> Option<u32> {
    d.send(acks);
    for i in 1..=acks {
        let cwnd_before = d.cwnd();
        d.ack(gap_us * 1_000, 1, rtt_us as i64);
        if d.ssthresh() != TCP_INFINITE_SSTHRESH {
            // The exit happens in pkts_acked, before this ACK's own slow-start growth.
            assert_eq!(d.ssthresh(), cwnd_before, "ssthresh = cwnd at the exit");
            assert!(!d.tp.in_slow_start());
            return Some(i);
        }
    }
    None
}

/// The delay-increase threshold of the kernel, µs.
fn delay_threshold(delay_min_us: u64) -> u64 {
    delay_min_us + (delay_min_us / 8).clamp(4_000, 16_000)
}

#[test]
fn delay_increase_exits_on_the_ninth_sample_of_a_round() {
    let mut d = after_base_round(json!({}), 32, 50_000);
    assert_eq!(round(&mut d, 20, WIDE_GAP_US, 60_000), Some(9));
}

#[test]
fn delay_threshold_is_an_eighth_of_delay_min_clamped_to_4_16_ms() {
    // 10 ms → +4 ms (clamped up), 50 ms → +6.25 ms, 200 ms → +16 ms (clamped down).
    for base in [10_000u64, 50_000, 200_000] {
        let at = delay_threshold(base);
        let mut d = after_base_round(json!({}), 32, base);
        assert_eq!(
            round(&mut d, 20, WIDE_GAP_US, at),
            None,
            "base {base}: RTT {at} is not above the threshold"
        );
        let mut d = after_base_round(json!({}), 32, base);
        assert_eq!(
            round(&mut d, 20, WIDE_GAP_US, at + 1),
            Some(9),
            "base {base}: RTT {}",
            at + 1
        );
    }
}

#[test]
fn no_exit_below_the_low_window() {
    // From cwnd 2 the round's 11 samples are all taken with cwnd < 16.
    let mut d = after_base_round(json!({}), 2, 50_000);
    assert_eq!(round(&mut d, 11, WIDE_GAP_US, 80_000), None);
    assert!(d.cwnd() < 16);
    // The same round at cwnd 16 exits.
    let mut d = after_base_round(json!({}), 16, 50_000);
    assert_eq!(round(&mut d, 11, WIDE_GAP_US, 80_000), Some(9));
}

/// Elapsed time from the round's first ACK to the one that ended slow start, µs.
fn train_exit_span(paced: bool, gap_us: u64, base: u64) -> Option<u64> {
    let mut d = after_base_round(json!({}), 32, base);
    d.tp.internal_pacing = paced;
    round(&mut d, 100, gap_us, base).map(|i| (i as u64 - 1) * gap_us)
}

#[test]
fn ack_train_exits_after_half_the_minimum_rtt_when_unpaced() {
    let base = 40_000;
    let span = train_exit_span(false, 1_000, base).expect("train detected");
    // Threshold (delay_min + ack_delay)/2 with ack_delay ≤ 1 ms.
    assert!(
        span > base / 2 && span <= base / 2 + 500 + 1_000,
        "exit after {span} µs"
    );
}

#[test]
fn ack_train_exits_after_the_minimum_rtt_when_paced() {
    let base = 40_000;
    let span = train_exit_span(true, 1_000, base).expect("train detected");
    assert!(
        span > base && span <= base + 1_000 + 1_000,
        "exit after {span} µs"
    );
}

#[test]
fn ack_train_needs_acks_at_most_2_ms_apart() {
    let base = 40_000;
    assert!(train_exit_span(false, 2_000, base).is_some());
    assert_eq!(train_exit_span(false, 2_001, base), None);
}

#[test]
fn detection_methods_can_be_selected() {
    // 1 = ACK train only: a delay increase with wide ACK spacing does not exit.
    let mut d = after_base_round(json!({"hystart_detect": 1}), 32, 50_000);
    assert_eq!(round(&mut d, 20, WIDE_GAP_US, 80_000), None);
    // 2 = delay only: a tight ACK train does not exit.
    let mut d = after_base_round(json!({"hystart_detect": 2}), 32, 40_000);
    assert_eq!(round(&mut d, 100, 1_000, 40_000), None);
}

#[test]
fn hystart_off_never_exits_and_initial_ssthresh_applies_only_then() {
    let off = json!({"hystart": false});
    let mut d = after_base_round(off.clone(), 32, 50_000);
    assert_eq!(round(&mut d, 20, WIDE_GAP_US, 80_000), None);
    let mut d = after_base_round(off, 32, 40_000);
    assert_eq!(round(&mut d, 100, 1_000, 40_000), None);

    assert_eq!(
        driver("cubic", json!({"hystart": false, "initial_ssthresh": 50})).ssthresh(),
        50
    );
    assert_eq!(
        driver("cubic", json!({"hystart": true, "initial_ssthresh": 50})).ssthresh(),
        TCP_INFINITE_SSTHRESH
    );
}

#[test]
fn hystart_runs_once_per_slow_start_and_again_after_an_rto() {
    let mut d = after_base_round(json!({}), 32, 50_000);
    assert!(round(&mut d, 20, WIDE_GAP_US, 80_000).is_some());
    // The RTO resets HyStart (and delay_min); the next slow start can exit again.
    d.rto();
    assert_eq!(d.cwnd(), 1);
    // Pretend the new slow start has grown back to 32 with an infinite target, then replay the rounds.
    d.tp.snd_ssthresh = TCP_INFINITE_SSTHRESH;
    d.tp.snd_cwnd = 32;
    d.send(32);
    for _ in 0..32 {
        d.ack(WIDE_GAP_US * 1_000, 1, 50_000);
    }
    assert_eq!(d.ssthresh(), TCP_INFINITE_SSTHRESH);
    assert!(round(&mut d, 20, WIDE_GAP_US, 80_000).is_some());
}
