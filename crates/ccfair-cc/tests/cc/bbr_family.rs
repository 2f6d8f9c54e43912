//! BBRv2 (v2alpha `tcp_bbr2.c`) and BBRv3 (google/bbr v3 `tcp_bbr.c`): the state machine, constants and
//! loss/ECN model they share, each test run for both versions, with the version's own constants where they
//! differ. Expected values come from the sources' rules and constants, never from running this code.

use ccfair_cc::testing::Ack;
use serde_json::json;

use super::bbr_path::{AckEvent, PROBE_BW, PROBE_RTT, Path, STARTUP, bw_units};

/// PROBE_BW phases as `CcVars::aux` exports them (`bbr_pacing_gain_phase`).
const UP: f64 = 0.0;
const DOWN: f64 = 1.0;
const CRUISE: f64 = 2.0;
const REFILL: f64 = 3.0;

/// The constants that differ, from the two sources (1/256 units).
struct V {
    name: &'static str,
    startup: (f64, f64),
    down_gain: f64,
    up_cwnd_gain: f64,
    full_loss_cnt: u32,
}

const V2: V = V {
    name: "bbr2",
    startup: (739.0 / 256.0, 739.0 / 256.0),
    down_gain: 192.0 / 256.0,
    up_cwnd_gain: 2.0,
    full_loss_cnt: 8,
};

const V3: V = V {
    name: "bbr3",
    startup: (710.0 / 256.0, 2.0),
    down_gain: 232.0 / 256.0,
    up_cwnd_gain: 2.25,
    full_loss_cnt: 6,
};

fn each_version(test: impl Fn(&V)) {
    for v in [&V2, &V3] {
        test(v);
    }
}

#[test]
fn gains_per_state_and_phase() {
    each_version(|v| {
        let mut p = Path::bbr(v.name, 1000, 40);
        let mut seen = [false; 4];
        p.run_for(12_000_000_000, |e| {
            let g = (e.vars.pacing_gain, e.vars.cwnd_gain);
            match e.vars.mode {
                STARTUP => assert_eq!(g, v.startup, "{}", v.name),
                1 => assert_eq!(g, (88.0 / 256.0, v.startup.1), "{} DRAIN", v.name),
                PROBE_RTT => assert_eq!(g, (1.0, 1.0), "{}", v.name),
                _ => {
                    let phase = e.vars.aux;
                    seen[phase as usize] = true;
                    let expected = if phase == UP {
                        (1.25, v.up_cwnd_gain)
                    } else if phase == DOWN {
                        (v.down_gain, 2.0)
                    } else {
                        (1.0, 2.0)
                    };
                    assert_eq!(g, expected, "{} phase {phase}", v.name);
                }
            }
        });
        assert_eq!(seen, [true; 4], "{}: every PROBE_BW phase visited", v.name);
    });
}

/// Marks an entry into PROBE_BW from another mode in [`transitions`].
const ENTRY: f64 = -1.0;

/// Phase changes in PROBE_BW: (time, from, to, round); `from` is [`ENTRY`] when PROBE_BW starts.
fn transitions(p: &mut Path, ns: u64) -> Vec<(u64, f64, f64, u64)> {
    let mut out = Vec::new();
    let mut last: Option<f64> = None;
    p.run_for(ns, |e: &AckEvent| {
        let phase = (e.vars.mode == PROBE_BW).then_some(e.vars.aux);
        match (last, phase) {
            (Some(a), Some(b)) if a != b => out.push((e.now_ns, a, b, e.round)),
            (None, Some(b)) => out.push((e.now_ns, ENTRY, b, e.round)),
            _ => {}
        }
        last = phase;
    });
    out
}

#[test]
fn probe_bw_cycles_down_cruise_refill_up() {
    each_version(|v| {
        let mut p = Path::bbr(v.name, 1000, 40);
        let t = transitions(&mut p, 20_000_000_000);
        assert!(t.len() >= 12, "{}: {} transitions", v.name, t.len());
        for w in t.windows(2).filter(|w| w[0].1 != ENTRY) {
            let (at, from, to, _) = w[0];
            let allowed = matches!(
                (from, to),
                (DOWN, CRUISE) | (DOWN, REFILL) | (CRUISE, REFILL) | (REFILL, UP) | (UP, DOWN)
            );
            assert!(allowed, "{}: {from} -> {to} at {at}", v.name);
            // REFILL lasts one round trip (40 ms here, plus queueing), then UP.
            if to == REFILL {
                let (next_at, _, next, _) = w[1];
                assert_eq!(next, UP);
                let dur = next_at - at;
                assert!(
                    (40_000_000..=90_000_000).contains(&dur),
                    "{}: REFILL {dur} ns",
                    v.name
                );
            }
        }
    });
}

#[test]
fn bandwidth_probes_wait_2_to_3_seconds_of_wall_clock_on_long_paths() {
    each_version(|v| {
        let mut waits = Vec::new();
        for seed in 1..=6 {
            // BDP 200 packets: a Reno flow would wait 63+ rounds (12.6 s), so the wall clock decides.
            let mut p = Path::with_seed(v.name, json!({}), 2000, 100, seed);
            let t = transitions(&mut p, 16_000_000_000);
            let mut down_at = None;
            for &(at, from, to, _) in &t {
                // A cycle (and its wall clock) starts with DOWN, also when PROBE_RTT ends (DOWN, then CRUISE).
                if to == DOWN || from == ENTRY {
                    down_at = Some(at);
                }
                if to == REFILL
                    && let Some(d) = down_at.take()
                {
                    waits.push(at - d);
                }
            }
        }
        assert!(waits.len() >= 12, "{}: {waits:?}", v.name);
        for &w in &waits {
            // From the start of DOWN: 2 s + U[0, 1 s), detected at the next ACK (every 0.5 ms here).
            assert!(
                (2_000_000_000..3_001_000_000).contains(&w),
                "{}: waited {w} ns",
                v.name
            );
        }
        // Randomized: the waits spread over the second.
        let (lo, hi) = (waits.iter().min().unwrap(), waits.iter().max().unwrap());
        assert!(hi - lo > 300_000_000, "{}: waits {waits:?}", v.name);
    });
}

#[test]
fn on_short_paths_bandwidth_probes_come_after_bdp_rounds_like_reno() {
    each_version(|v| {
        // 10 ms, BDP 10 packets: the Reno-coexistence bound min(63, target inflight) is about 10 rounds.
        let mut p = Path::bbr(v.name, 1000, 10);
        let mut down_round = None;
        let mut waits = Vec::new();
        p.run_for(10_000_000_000, |e| {
            if e.vars.mode != PROBE_BW {
                down_round = None;
                return;
            }
            if e.vars.aux == DOWN && down_round.is_none() {
                down_round = Some(e.round);
            }
            if e.vars.aux == REFILL
                && let Some(d) = down_round.take()
            {
                // The target inflight: the BDP (⌈bw·min_rtt⌉), at least 3 bursts of 2 packets, capped by cwnd.
                let bdp =
                    (bw_units(&e.vars) as u128 * (e.vars.min_rtt_ns / 1e3) as u128).div_ceil(1 << 24) as u32;
                let target = bdp.max(6).min(e.cwnd) as u64;
                waits.push((e.round - d, target));
            }
        });
        assert!(waits.len() >= 10, "{}: {waits:?}", v.name);
        for &(rounds, target) in &waits {
            // rounds_since_probe starts at 0 or 1 (random): target − 1 or target rounds; BBR restarts its round
            // count when DOWN begins, this count does not (±1).
            assert!(
                rounds + 2 >= target && rounds <= target + 1,
                "{}: {rounds} rounds, target {target}",
                v.name
            );
        }
        assert!(
            waits.iter().all(|&(r, _)| r < 63),
            "{}: far below the 63-round cap",
            v.name
        );
    });
}

#[test]
fn probe_rtt_every_five_seconds_at_half_the_bdp() {
    each_version(|v| {
        let mut p = Path::bbr(v.name, 1000, 40);
        // The path slowly lengthens (2 ms per second), so no later RTT sample matches an old minimum: the
        // 5 s PROBE_RTT timer is never refreshed by samples (v2 refreshes on equal samples too).
        p.rtt_drift_ns_per_s = 2_000_000;
        let mut entries = Vec::new();
        let mut exits = Vec::new();
        let mut in_probe_rtt = false;
        p.run_for(22_000_000_000, |e| {
            if e.vars.mode == PROBE_RTT {
                if !in_probe_rtt {
                    entries.push(e.now_ns);
                }
                // cwnd ≤ max(4, ⌈bw·min_rtt/2⌉).
                let half_bdp = (bw_units(&e.vars) as u128 * (e.vars.min_rtt_ns / 1e3) as u128 / 2)
                    .div_ceil(1 << 24) as u32;
                assert!(
                    e.cwnd <= half_bdp.max(4),
                    "{}: cwnd {} > {half_bdp}",
                    v.name,
                    e.cwnd
                );
                assert!(half_bdp >= 18, "{}: the cap is about half of 40 packets", v.name);
            } else if in_probe_rtt {
                exits.push(e.now_ns);
                // Back to PROBE_BW, cruising (inflight is below the BDP after PROBE_RTT).
                assert_eq!((e.vars.mode, e.vars.aux), (PROBE_BW, CRUISE), "{}", v.name);
            }
            in_probe_rtt = e.vars.mode == PROBE_RTT;
        });
        assert!(entries.len() >= 3, "{}: {entries:?}", v.name);
        for (i, (&entry, &exit)) in entries.iter().zip(&exits).enumerate() {
            let held = exit - entry;
            // 200 ms once in flight is down to the cap (about one RTT), then the round in progress.
            assert!(
                held > 200_000_000 && held < 200_000_000 + 4 * 45_000_000,
                "{}: held {held}",
                v.name
            );
            if let Some(&next) = entries.get(i + 1) {
                // The 5 s timer restarts when PROBE_RTT ends.
                let gap = next - exit;
                assert!(
                    gap > 5_000_000_000 && gap < 5_000_000_000 + 3_000_000,
                    "{}: gap {gap}",
                    v.name
                );
            }
        }
    });
}

/// Run `p` until PROBE_BW is in `phase`.
fn until_phase(p: &mut Path, phase: f64, deadline_ns: u64) {
    let mut reached = false;
    while !reached {
        assert!(p.now_ns() < deadline_ns, "phase {phase} not reached");
        p.run_for(1_000_000, |e| {
            reached |= e.vars.mode == PROBE_BW && e.vars.aux == phase
        });
    }
}

#[test]
fn excess_loss_while_probing_up_sets_inflight_hi_and_ends_the_probe() {
    each_version(|v| {
        let mut p = Path::bbr(v.name, 1000, 40);
        until_phase(&mut p, UP, 10_000_000_000);
        let d = &p.d;
        let before = d.vars();
        assert!(
            before.inflight_hi.is_nan(),
            "{}: no loss yet, no upper bound",
            v.name
        );
        let in_flight = d.in_flight();
        // Three of ~50 packets in flight lost (6 %, above the 2 % threshold) while probing.
        p.lose_oldest(3);
        let after = p.d.vars();
        assert_eq!(
            (after.mode, after.aux),
            (PROBE_BW, DOWN),
            "{}: the probe ends",
            v.name
        );
        // inflight_hi: where the loss rate crossed 2 % (the first lost packet's flight already did: each lost
        // packet's send-time flight is ~in_flight), and at least 0.7 × the target inflight.
        let hi = after.inflight_hi;
        assert!(
            hi <= in_flight as f64 + 1.0 && hi >= 0.7 * 40.0,
            "{}: inflight_hi {hi}, in flight {in_flight}",
            v.name
        );
    });
}

#[test]
fn a_lossy_round_outside_probes_cuts_inflight_lo_to_0_7() {
    each_version(|v| {
        let mut p = Path::bbr(v.name, 1000, 40);
        until_phase(&mut p, CRUISE, 10_000_000_000);
        // A few rounds into CRUISE the queue of the last probe is gone: a round delivers about one BDP.
        p.run_for(300_000_000, |_| {});
        assert_eq!(p.d.vars().aux, CRUISE);
        assert!(p.d.vars().inflight_lo.is_nan(), "{}", v.name);
        let cwnd = p.d.cwnd();
        p.lose_oldest(1);
        // At the end of the loss round: inflight_lo = max(the round's largest delivered volume, 0.7 × cwnd); the
        // volume is about one BDP (≈ 41 packets) here, less than 0.7 × cwnd (cwnd ≈ 2 BDP).
        let mut cut = None;
        p.run_for(200_000_000, |e| {
            if cut.is_none() && !e.vars.inflight_lo.is_nan() {
                cut = Some((e.vars.inflight_lo, e.cwnd, e.vars.aux));
            }
        });
        let (lo, cwnd_after, phase) = cut.expect("inflight_lo set");
        assert_eq!(phase, CRUISE, "{}", v.name);
        let expect = |c: u32| (c as u64 * 180 / 256) as f64;
        assert!(
            lo >= expect(cwnd - 2) && lo <= expect(cwnd + 2),
            "{}: inflight_lo {lo}, cwnd {cwnd}",
            v.name
        );
        assert!(
            cwnd_after as f64 <= lo,
            "{}: cwnd {cwnd_after} bounded by inflight_lo {lo}",
            v.name
        );
    });
}

#[test]
fn cruise_leaves_fifteen_percent_headroom_below_inflight_hi() {
    each_version(|v| {
        let mut p = Path::bbr(v.name, 1000, 40);
        until_phase(&mut p, UP, 10_000_000_000);
        p.lose_oldest(3);
        let hi = p.d.vars().inflight_hi;
        assert!(!hi.is_nan());
        let mut checked = 0;
        p.run_for(1_500_000_000, |e| {
            if e.vars.mode == PROBE_BW && e.vars.aux == CRUISE && e.vars.inflight_hi == hi {
                // headroom = max(⌊hi·38/256⌋, 1)
                let cap = hi - ((hi * 38.0 / 256.0).floor()).max(1.0);
                assert!(e.cwnd as f64 <= cap, "{}: cwnd {} above {cap}", v.name, e.cwnd);
                checked += 1;
            }
        });
        assert!(checked > 0, "{}: no CRUISE", v.name);
    });
}

/// In STARTUP, a recovery round with `events` loss-marking ACKs: true if STARTUP ended when the round did.
fn startup_loss_round(name: &str, events: u32) -> bool {
    let mut p = Path::bbr(name, 1000, 40);
    // A few rounds of STARTUP: a window of ~50 packets, so 2 % of it is at most one packet.
    p.run_for(250_000_000, |_| {});
    let d = &mut p.d;
    assert_eq!(d.vars().mode, STARTUP);
    d.fill();
    // Packets sent now end the coming loss round when they are ACKed; everything lost later counts against them.
    d.ack(100_000, 2, 41_000);
    let marker = d.tp.snd_nxt;
    d.fill();
    d.mark_lost(1);
    d.enter_recovery();
    for _ in 0..events {
        d.ack_with(Ack {
            advance_ns: 100_000,
            acked: 1,
            rtt_us: 41_000,
            ece: false,
            lost: 1,
            ..Default::default()
        });
        assert_eq!(d.vars().mode, STARTUP);
    }
    // The rest of the old window, then the packets sent after the round began.
    while d.tp.snd_una <= marker {
        d.ack(100_000, 1, 41_000);
        if d.vars().mode != STARTUP {
            return d.tp.snd_una > marker;
        }
    }
    false
}

#[test]
fn startup_ends_on_loss_after_enough_loss_events_in_a_recovery_round() {
    each_version(|v| {
        assert!(
            !startup_loss_round(v.name, v.full_loss_cnt - 1),
            "{}: {} events are not enough",
            v.name,
            v.full_loss_cnt - 1
        );
        assert!(
            startup_loss_round(v.name, v.full_loss_cnt),
            "{}: {} events end STARTUP",
            v.name,
            v.full_loss_cnt
        );
    });
}

/// A fresh connection of `name` with `params`, ECN negotiated, on a 2 ms path; rounds of ACKs of 2 packets,
/// each ACK carrying ECE (all packets CE-marked) when `marked`. Returns the round at which STARTUP ended.
fn startup_under_ce_marks(name: &str, params: serde_json::Value, marked: bool) -> Option<u32> {
    let mut d = super::driver(name, params);
    d.tp.ecn_ok = true;
    for round in 0..12 {
        d.fill();
        let n = d.ackable();
        let acks = n.div_ceil(2);
        for _ in 0..acks {
            d.ack_with(Ack {
                advance_ns: 2_000_000 / acks as u64,
                acked: 2,
                rtt_us: 2_000,
                ece: marked,
                lost: 0,
                ..Default::default()
            });
            d.fill();
        }
        if d.vars().mode != STARTUP {
            return Some(round);
        }
    }
    None
}

#[test]
fn ecn_marks_on_half_the_packets_for_two_rounds_end_startup_when_ecn_is_in_use() {
    // The bandwidth doubles every round here, so only the ECN rule can end STARTUP within 12 rounds: two
    // consecutive rounds with a CE ratio of at least 50 %, counted from the first round whose α is measured.
    let v2 = startup_under_ce_marks("bbr2", json!({"ecn_enable": true}), true).expect("v2 exits");
    let v3 = startup_under_ce_marks("bbr3", json!({"ecn_low": true}), true).expect("v3 exits");
    assert!(v2 <= 3 && v3 <= 3, "exit rounds v2 {v2}, v3 {v3}");
    // Without ECN in use (the defaults: v2alpha's ecn_enable off, v3 without a low-threshold ECN route) the
    // same marks are ignored; and with ECN in use but no marks, STARTUP goes on.
    assert_eq!(startup_under_ce_marks("bbr2", json!({}), true), None);
    assert_eq!(startup_under_ce_marks("bbr3", json!({}), true), None);
    assert_eq!(
        startup_under_ce_marks("bbr3", json!({"ecn_low": true}), false),
        None
    );
}

#[test]
fn probe_up_ends_after_one_min_rtt_in_v2_and_on_a_bandwidth_plateau_in_v3() {
    // Alone on a lossless path nothing limits the probe but the bottleneck: v2alpha stops once a min_rtt has
    // passed and 1.25 BDP is in flight; v3 waits for 3 rounds without 25 % bandwidth growth.
    for (v, rounds) in [(&V2, 1..=2u64), (&V3, 3..=4u64)] {
        let mut p = Path::bbr(v.name, 1000, 40);
        let t = transitions(&mut p, 20_000_000_000);
        let ups: Vec<u64> = t
            .windows(2)
            .filter(|w| w[0].2 == UP && w[1].1 == UP)
            .map(|w| w[1].3 - w[0].3)
            .collect();
        assert!(ups.len() >= 3, "{}: {ups:?}", v.name);
        for &n in &ups {
            assert!(
                rounds.contains(&n),
                "{}: PROBE_UP lasted {n} rounds ({ups:?})",
                v.name
            );
        }
    }
}

#[test]
fn v2_reprobes_after_a_risky_stop_and_grows_inflight_hi_with_a_doubling_slope() {
    // `bbr2_update_cycle_phase` / `bbr2_adapt_upper_bounds` / `bbr2_probe_inflight_hi_upward`: after a probe
    // that saw excess loss, the next PROBE_UP stops as soon as inflight reaches inflight_hi ("risky"); when the
    // ACKs of that probe show no excess loss, REFILL starts again at once (not after 2-3 s), and in that probe
    // inflight_hi grows while cwnd-limited at it: +1 per cwnd ACKed in the first round, the slope doubling
    // each round (1, 2, 4, ...), until a min_rtt has passed with 1.25 BDP in flight. Later probes end on that
    // queue test before inflight_hi limits them, so it stays put.
    let mut p = Path::bbr("bbr2", 1000, 40);
    until_phase(&mut p, UP, 10_000_000_000);
    p.lose_oldest(3);
    let hi0 = p.d.vars().inflight_hi;
    // (time, phase, inflight_hi, round) at every phase change and every round start in PROBE_UP.
    let mut log: Vec<(u64, f64, f64, u64)> = Vec::new();
    p.run_for(12_000_000_000, |e| {
        if e.vars.mode != PROBE_BW {
            return;
        }
        let changed = log.last().is_none_or(|l| l.1 != e.vars.aux);
        if changed || (e.vars.aux == UP && e.round_start) {
            log.push((e.now_ns, e.vars.aux, e.vars.inflight_hi, e.round));
        }
    });
    let entries: Vec<usize> = (1..log.len()).filter(|&i| log[i].1 != log[i - 1].1).collect();
    let ups: Vec<usize> = entries.iter().copied().filter(|&i| log[i].1 == UP).collect();
    assert!(ups.len() >= 3, "{log:?}");
    // The first probe after the loss is risky: it ends at once with inflight_hi unchanged.
    let risky = ups[0];
    assert_eq!(log[risky + 1].1, DOWN, "{log:?}");
    assert_eq!(log[risky + 1].2, hi0, "{log:?}");
    // The reprobe: REFILL within two rounds of that stop, then UP.
    let reprobe = ups[1];
    assert_eq!(log[reprobe - 1].1, REFILL, "{log:?}");
    assert!(log[reprobe].3 - log[risky].3 <= 3, "{log:?}");
    // inflight_hi during the reprobe, per round: grows, by at most 2^(k+1) in its k-th round.
    let end = (reprobe + 1..log.len())
        .find(|&i| log[i].1 != UP)
        .expect("the reprobe ends");
    let grown = log[end].2 - hi0;
    assert!(grown >= 4.0, "inflight_hi grew by {grown}: {log:?}");
    for i in reprobe + 1..=end {
        let k = log[i].3 - log[reprobe].3;
        let so_far = log[i].2 - hi0;
        assert!(
            so_far <= (1u64 << (k + 1)) as f64,
            "round {k}: +{so_far} ({log:?})"
        );
    }
    let rounds = log[end].3 - log[reprobe].3;
    assert!((2..=5).contains(&rounds), "grew over {rounds} rounds: {log:?}");
    // The slope doubles: some round adds at least 3 (a constant slope adds about 1 per round).
    let per_round = (reprobe + 1..=end).map(|i| log[i].2 - log[i - 1].2);
    assert!(per_round.fold(0.0, f64::max) >= 3.0, "{log:?}");
    // Later probes end on the queue test: inflight_hi no longer moves.
    let settled = log[end].2;
    for l in &log[end..] {
        assert_eq!(l.2, settled, "{log:?}");
    }
    assert!(ups.len() >= 4, "more probes after the reprobe: {log:?}");
}
