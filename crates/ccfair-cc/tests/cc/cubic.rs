//! CUBIC (`tcp_cubic.c` v2.3): decrease, W_max bookkeeping, the window curve, the Reno-friendly region,
//! the per-ACK increase limits, RTO reset and the idle epoch shift.

use ccfair_cc::cubic::{Cubic, CubicParams};
use ccfair_cc::testing::Driver;
use ccfair_cc::{CaState, CongestionControl, TcpSock};
use ccfair_core::Jiffies;
use serde_json::json;

use super::{MSS, driver, lose_and_recover};

/// The kernel's C (bic_scale 41 → 410/1024 packets/s³) and β (717/1024).
const C: f64 = 410.0 / 1024.0;
const BETA: f64 = 717.0 / 1024.0;

/// A connection in congestion avoidance (cwnd = ssthresh) with a full window in flight.
fn in_avoidance(params: serde_json::Value, cwnd: u32) -> Driver {
    let mut d = driver("cubic", params);
    d.tp.snd_cwnd = cwnd;
    d.tp.snd_ssthresh = cwnd;
    d.fill();
    d
}

/// `ssthresh` hook on a fresh socket with this cwnd.
fn ssthresh_of(cc: &mut Cubic, cwnd: u32) -> u32 {
    let mut tp = TcpSock::new(MSS, cwnd);
    cc.ssthresh(&mut tp)
}

#[test]
fn ssthresh_is_beta_times_cwnd_but_at_least_two() {
    let mut cc = Cubic::new(CubicParams::default());
    for cwnd in (1..=3000u32).chain([65_535, 1_000_000]) {
        let expected = ((cwnd as u64 * 717 / 1024) as u32).max(2);
        assert_eq!(ssthresh_of(&mut cc, cwnd), expected, "cwnd {cwnd}");
    }
}

#[test]
fn w_max_with_fast_convergence() {
    let mut d = in_avoidance(json!({}), 1000);
    d.enter_recovery();
    assert_eq!(d.vars().aux, 1000.0, "first loss: W_max = cwnd");
    d.exit_recovery();

    // A loss below the previous W_max releases bandwidth: W_max = cwnd·(1 + β)/2 = cwnd·1741/2048.
    d.tp.snd_cwnd = 800;
    d.fill();
    d.enter_recovery();
    assert_eq!(d.vars().aux, (800u64 * 1741 / 2048) as f64);
    assert_eq!(d.ssthresh(), 800 * 717 / 1024);
    d.exit_recovery();

    // A loss above W_max (680) just records cwnd.
    d.tp.snd_cwnd = 900;
    d.fill();
    d.enter_recovery();
    assert_eq!(d.vars().aux, 900.0);
}

#[test]
fn w_max_without_fast_convergence() {
    let mut d = in_avoidance(json!({"fast_convergence": false}), 1000);
    d.enter_recovery();
    d.exit_recovery();
    d.tp.snd_cwnd = 800;
    d.fill();
    d.enter_recovery();
    assert_eq!(d.vars().aux, 800.0);
}

#[test]
fn beta_parameter_sets_the_decrease_and_fast_convergence() {
    let mut cc = Cubic::new(CubicParams {
        beta: 0.5,
        ..CubicParams::default()
    });
    assert_eq!(ssthresh_of(&mut cc, 1000), 500);
    assert_eq!(ssthresh_of(&mut cc, 800), 400);
    // The second loss was below W_max = 1000: W_max = 800·(1 + 0.5)/2.
    assert_eq!(cc.vars().aux, 600.0);

    let mut cc = Cubic::new(CubicParams {
        beta: 0.8,
        ..CubicParams::default()
    });
    // round(0.8·1024) = 819.
    assert_eq!(ssthresh_of(&mut cc, 1000), 1000 * 819 / 1024);
}

/// The window curve W(t) = C(t − K)³ + W_max with K = ∛(W_max(1 − β)/C), t since the epoch start.
fn w_cubic(c: f64, beta: f64, w_max: f64, t: f64) -> f64 {
    let k = (w_max * (1.0 - beta) / c).cbrt();
    c * (t - k).powi(3) + w_max
}

/// Lose at `w_max` (after a round that sets delay_min to `rtt_us`), recover, and return the driver with
/// the time the epoch began (the ACK that ended recovery).
fn after_loss_at(params: serde_json::Value, w_max: u32, rtt_us: u64) -> (Driver, f64) {
    let mut d = in_avoidance(params, w_max);
    // One round to learn delay_min without changing cwnd much: put the whole window back at w_max after it.
    d.run_round(rtt_us);
    d.tp.snd_cwnd = w_max;
    d.fill();
    lose_and_recover(&mut d, rtt_us);
    let t0 = d.now().secs_f64();
    (d, t0)
}

#[test]
fn window_follows_the_cubic_curve_around_w_max() {
    let rtt = 100_000;
    let w_max = 1000.0;
    let (mut d, t0) = after_loss_at(json!({}), 1000, rtt);
    let k = (w_max * (1.0 - BETA) / C).cbrt();
    assert!((k - 9.08).abs() < 0.01, "K = {k}");

    let mut trace = Vec::new();
    while d.now().secs_f64() - t0 < 2.0 * k {
        let r = d.run_round(rtt);
        let t = d.now().secs_f64() - t0;
        trace.push((t, r.cwnd_end as f64));
    }
    for &(t, cwnd) in &trace {
        if t < 0.5 {
            continue;
        }
        let w = w_cubic(C, BETA, w_max, t);
        assert!(
            (cwnd - w).abs() <= 0.05 * w,
            "t = {t:.2}s: cwnd {cwnd} vs W(t) {w:.1}"
        );
    }
    // Plateau: within a second of K the window stays within 1 % of W_max.
    for &(t, cwnd) in trace.iter().filter(|(t, _)| (t - k).abs() <= 1.0) {
        assert!((cwnd - w_max).abs() <= 0.01 * w_max, "t = {t:.2}s: cwnd {cwnd}");
    }
    // Concave before K, convex after: growth per 2 s shrinks, then grows.
    let at = |s: f64| trace.iter().find(|(t, _)| *t >= s).expect("traced").1;
    let growth: Vec<f64> = (0..9)
        .map(|i| at(2.0 * (i + 1) as f64) - at(2.0 * i as f64 + 0.1))
        .collect();
    assert!(
        growth[0] > growth[1] && growth[1] > growth[2] && growth[2] > growth[3],
        "{growth:?}"
    );
    assert!(
        growth[5] < growth[6] && growth[6] < growth[7] && growth[7] < growth[8],
        "{growth:?}"
    );
}

#[test]
fn the_curve_keeps_its_time_axis_on_a_hz_250_kernel() {
    // Cubic reads its time in jiffies (`bictcp_update`); on an HZ=250 kernel a jiffy is 4 ms, and t, K and
    // the target one delay_min ahead are converted with that HZ, so the window follows the same W(t) in
    // seconds, only sampled in 4 ms steps.
    let rtt = 100_000;
    let w_max = 1000.0;
    let mut d = in_avoidance(json!({}), 1000);
    d.tp.jiffies = Jiffies::new(250, 1_234_567);
    d.run_round(rtt);
    d.tp.snd_cwnd = 1000;
    d.fill();
    lose_and_recover(&mut d, rtt);
    let t0 = d.now().secs_f64();
    let k = (w_max * (1.0 - BETA) / C).cbrt();
    let mut worst: f64 = 0.0;
    while d.now().secs_f64() - t0 < 2.0 * k {
        let r = d.run_round(rtt);
        let t = d.now().secs_f64() - t0;
        if t >= 0.5 {
            let w = w_cubic(C, BETA, w_max, t);
            worst = worst.max((r.cwnd_end as f64 - w).abs() / w);
        }
    }
    assert!(
        worst <= 0.05,
        "largest deviation from W(t): {:.1} %",
        worst * 100.0
    );
}

#[test]
fn c_parameter_scales_the_time_axis() {
    // With 8·C the curve is the same shape compressed by ∛8 = 2 in time: K halves.
    let rtt = 100_000;
    let w_max = 1000.0;
    let fraction_at = |c: f64, t_frac: f64| {
        let (mut d, t0) = after_loss_at(json!({ "c": c }), 1000, rtt);
        let c_kernel = (c * 1024.0 / 10.0).round() * 10.0 / 1024.0;
        let k = (w_max * (1.0 - BETA) / c_kernel).cbrt();
        while d.now().secs_f64() - t0 < t_frac * k {
            d.run_round(rtt);
        }
        (
            d.cwnd() as f64,
            w_cubic(c_kernel, BETA, w_max, d.now().secs_f64() - t0),
            k,
        )
    };
    let (slow, slow_expected, k_slow) = fraction_at(0.4, 0.5);
    let (fast, fast_expected, k_fast) = fraction_at(3.2, 0.5);
    assert!((k_slow / k_fast - 2.0).abs() < 0.01);
    // Halfway to K the window is W_max − (W_max − cwnd₀)/8 for any C.
    for (cwnd, expected) in [(slow, slow_expected), (fast, fast_expected)] {
        assert!((cwnd - expected).abs() <= 0.03 * expected, "{cwnd} vs {expected}");
        assert!((cwnd - (1000.0 - 300.0 / 8.0)).abs() <= 0.03 * 1000.0, "{cwnd}");
    }
}

#[test]
fn beta_parameter_changes_k() {
    // A deeper cut (β = 0.5) leaves a larger gap: K = ∛(W_max·0.5/C).
    let rtt = 100_000;
    let (mut d, t0) = after_loss_at(json!({"beta": 0.5}), 1000, rtt);
    assert_eq!(d.ssthresh(), 500);
    let k = (1000.0 * 0.5 / C).cbrt();
    while d.now().secs_f64() - t0 < k {
        d.run_round(rtt);
    }
    let cwnd = d.cwnd() as f64;
    assert!(
        (cwnd - 1000.0).abs() <= 0.02 * 1000.0,
        "at K = {k:.2}s cwnd is {cwnd}"
    );
}

#[test]
fn reno_friendly_region_at_short_rtt() {
    // At 1 ms the cubic curve from W_max = 20 is nearly flat for hundreds of round trips (K ≈ 2.5 s), so the
    // Reno estimate sets the pace: α = 3(1 − β)/(1 + β) ≈ 0.53 packet per RTT.
    let rtt = 1_000;
    let rounds = 500;
    let alpha = 3.0 * (1.0 - BETA) / (1.0 + BETA);
    let grow = |friendly: bool| {
        let (mut d, _) = after_loss_at(json!({ "tcp_friendliness": friendly }), 20, rtt);
        let start = d.cwnd();
        d.run_rounds(rounds, rtt);
        (d.cwnd() - start) as f64 / rounds as f64
    };
    let with = grow(true);
    assert!(
        with >= 0.9 * alpha && with <= 1.1 * alpha,
        "{with} packets/RTT vs α = {alpha}"
    );
    let without = grow(false);
    assert!(without < 0.1 * alpha, "pure cubic grows {without} packets/RTT");
}

#[test]
fn growth_before_the_first_loss_is_at_least_five_percent_per_rtt() {
    // W_max = 0: the curve starts flat at the current cwnd, cnt is capped at 20.
    let rtt = 100_000;
    let mut d = in_avoidance(json!({}), 100);
    assert_eq!(d.vars().aux, 0.0);
    for r in d.run_rounds(30, rtt) {
        assert!(r.cwnd_end * 20 >= r.cwnd_start * 21 - 20, "{r:?}");
    }
    // After a loss at the same window the plateau is far slower.
    let (mut d, _) = after_loss_at(json!({}), 100, rtt);
    let start = d.cwnd();
    d.run_rounds(30, rtt);
    assert!(((d.cwnd() - start) as f64) < 0.5 * (start as f64 * (1.05f64.powi(30) - 1.0)));
}

#[test]
fn growth_is_at_most_one_and_a_half_per_rtt() {
    // While application-limited (one packet in flight) the epoch clock runs on but cwnd does not grow; when
    // the application sends again the curve is far ahead and cnt hits its floor of 2.
    let rtt = 100_000;
    let (mut d, _) = after_loss_at(json!({}), 100, rtt);
    d.app_limited(true);
    d.run_round(rtt);
    d.send(1);
    for _ in 0..300 {
        d.send(1);
        d.ack(100_000_000, 1, rtt as i64);
    }
    d.app_limited(false);
    let mut max_ratio: f64 = 0.0;
    for r in d.run_rounds(20, rtt) {
        assert!(r.cwnd_end <= r.cwnd_start * 3 / 2 + 1, "{r:?}");
        max_ratio = max_ratio.max(r.cwnd_end as f64 / r.cwnd_start as f64);
    }
    assert!(max_ratio >= 1.45, "the cap was never reached ({max_ratio})");
}

#[test]
fn rto_resets_w_max_and_slow_starts_from_one() {
    let rtt = 50_000;
    let mut d = in_avoidance(json!({}), 100);
    lose_and_recover(&mut d, rtt);
    assert_eq!(d.vars().aux, 100.0);
    d.run_rounds(3, rtt);
    let cwnd = d.cwnd();
    d.rto();
    assert_eq!(d.state(), CaState::Loss);
    assert_eq!(d.cwnd(), 1);
    assert_eq!(d.ssthresh(), ((cwnd as u64 * 717 / 1024) as u32).max(2));
    assert_eq!(d.vars().aux, 0.0, "entering Loss forgets W_max");
    // Slow start back to ssthresh, then CUBIC behaves as before any loss: ≥ 5 % per RTT.
    let mut rounds = 0;
    while d.tp.in_slow_start() || d.state() != CaState::Open {
        d.run_round(rtt);
        rounds += 1;
        assert!(rounds < 20);
    }
    d.run_round(rtt);
    for r in d.run_rounds(10, rtt) {
        assert!(r.cwnd_end * 20 >= r.cwnd_start * 21 - 20, "{r:?}");
    }
}

#[test]
fn idle_time_does_not_advance_the_curve() {
    // Two identical connections in an epoch; one sits idle for 5 s (nothing in flight) before sending again.
    let rtt = 100_000;
    let idle_s = 5.0;
    let run = |idle_ns: u64| {
        let (mut d, t0) = after_loss_at(json!({}), 1000, rtt);
        d.run_rounds(10, rtt);
        d.app_limited(true);
        d.run_round(rtt);
        assert_eq!(d.in_flight(), 0);
        let busy_time = d.now().secs_f64() - t0;
        d.advance(idle_ns);
        d.app_limited(false);
        let trace: Vec<u32> = d.run_rounds(10, rtt).iter().map(|r| r.cwnd_end).collect();
        (trace, busy_time + 1.0)
    };
    let (busy, _) = run(0);
    let (idle, t_busy) = run((idle_s * 1e9) as u64);
    for (b, i) in busy.iter().zip(&idle) {
        assert!(b.abs_diff(*i) <= 2, "busy {busy:?} vs after idle {idle:?}");
    }
    // Counting the idle time the curve would be far ahead.
    let unshifted = w_cubic(C, BETA, 1000.0, t_busy + idle_s);
    assert!(
        *idle.last().unwrap() as f64 + 100.0 < unshifted,
        "{idle:?} vs {unshifted}"
    );
}

#[test]
fn target_is_evaluated_one_minimum_rtt_ahead() {
    // With a 1 s RTT the cwnd at the end of each round is on W(t), not one RTT behind it: the target is
    // W(t + delay_min), which the window reaches one RTT later.
    let rtt = 1_000_000;
    let (mut d, t0) = after_loss_at(json!({}), 1000, rtt);
    for _ in 0..6 {
        d.run_round(rtt);
        let t = d.now().secs_f64() - t0;
        let cwnd = d.cwnd() as f64;
        let on_curve = (cwnd - w_cubic(C, BETA, 1000.0, t)).abs();
        let lagging = (cwnd - w_cubic(C, BETA, 1000.0, t - 1.0)).abs();
        assert!(
            on_curve < lagging / 2.0,
            "t = {t:.1}s: cwnd {cwnd}, {on_curve:.1} off W(t), {lagging:.1} off W(t − RTT)"
        );
    }
}

#[test]
fn delay_samples_in_the_first_second_of_an_epoch_are_ignored() {
    // delay_min sets the look-ahead; a much smaller RTT sample would visibly slow the window's approach.
    let rtt = 1_000_000;
    let run = |probe_after_ns: u64, probe_rtt_us: i64| {
        let (mut d, _) = after_loss_at(json!({}), 1000, rtt);
        d.advance(probe_after_ns);
        d.ack(0, 1, probe_rtt_us);
        d.run_rounds(5, rtt)
            .iter()
            .map(|r| r.cwnd_end)
            .collect::<Vec<_>>()
    };
    // 0.5 s into the epoch a 10 ms sample is discarded: same trace as with a normal sample.
    assert_eq!(run(500_000_000, 10_000), run(500_000_000, rtt as i64));
    // 1.5 s into the epoch it is taken as the new delay_min and the look-ahead shrinks.
    let early = run(1_500_000_000, rtt as i64);
    let late = run(1_500_000_000, 10_000);
    assert!(
        late.iter().zip(&early).all(|(l, e)| l <= e) && late != early,
        "{late:?} vs {early:?}"
    );
}

#[test]
fn cnt_is_recomputed_at_most_every_32_ms_while_cwnd_is_unchanged() {
    // At 1 ms RTT in the Reno-friendly region the estimate is only credited when cnt is recomputed, so cwnd
    // moves in steps about 32 round trips apart instead of every other round trip.
    let rtt = 1_000;
    let (mut d, _) = after_loss_at(json!({}), 20, rtt);
    let rounds = d.run_rounds(300, rtt);
    let changed = rounds.iter().filter(|r| r.cwnd_end != r.cwnd_start).count();
    let mut longest_flat = 0;
    let mut flat = 0;
    for r in &rounds {
        flat = if r.cwnd_end == r.cwnd_start { flat + 1 } else { 0 };
        longest_flat = longest_flat.max(flat);
    }
    assert!(
        changed * 5 <= rounds.len(),
        "cwnd changed in {changed} of {} rounds",
        rounds.len()
    );
    assert!(
        (25..=32).contains(&longest_flat),
        "longest run without change: {longest_flat} rounds"
    );
    assert!(
        d.cwnd() > 100,
        "growth still follows the Reno estimate: {}",
        d.cwnd()
    );
}
