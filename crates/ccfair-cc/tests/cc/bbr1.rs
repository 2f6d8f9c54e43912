//! BBRv1 (mainline `tcp_bbr.c`): each state transition and constant, through the scripted driver and the
//! paced bottleneck of [`super::bbr_path`]. Expected values come from the kernel's rules as its comments and
//! the BBR paper state them, never from running this code.

use std::collections::BTreeSet;

use ccfair_cc::testing::{Ack, Driver};
use ccfair_cc::{CaState, CcConfig};
use ccfair_core::Rng;
use ccfair_core::rng::StreamId;
use serde_json::json;

use super::bbr_path::{AckEvent, DRAIN, PROBE_BW, PROBE_RTT, Path, STARTUP, bw_units};
use super::{MSS, driver};

/// BBR's gains in the kernel's 1/256 units.
const HIGH_GAIN: f64 = 739.0 / 256.0;
const DRAIN_GAIN: f64 = 88.0 / 256.0;
const CYCLE: [f64; 8] = [1.25, 0.75, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0];

/// 1000 packets/s (≈ 11.6 Mbit/s of payload) and 40 ms: a BDP of 40 packets.
fn path() -> Path {
    Path::bbr("bbr", 1000, 40)
}

#[test]
fn startup_uses_high_gain_and_ends_after_three_rounds_without_25_percent_growth() {
    let mut p = path();
    // The rule (bbr_check_full_bw_reached), evaluated by the test at each round start on the exported estimate.
    let mut full_bw = 0u64;
    let mut cnt = 0;
    let mut predicted_exit: Option<u64> = None;
    let mut exit: Option<u64> = None;
    let mut drain_seen = false;
    p.run_for(3_000_000_000, |e: &AckEvent| {
        if exit.is_none() {
            if e.vars.mode == STARTUP {
                assert_eq!(e.vars.pacing_gain, HIGH_GAIN);
                assert_eq!(e.vars.cwnd_gain, HIGH_GAIN);
            }
            if e.round_start && !e.rs.is_app_limited && predicted_exit.is_none() {
                let bw = bw_units(&e.vars);
                if bw * 256 >= full_bw * 320 {
                    full_bw = bw;
                    cnt = 0;
                } else {
                    cnt += 1;
                    if cnt == 3 {
                        predicted_exit = Some(e.now_ns);
                    }
                }
            }
            if e.vars.mode != STARTUP {
                exit = Some(e.now_ns);
            }
        }
        if e.vars.mode == DRAIN {
            drain_seen = true;
            assert_eq!(e.vars.pacing_gain, DRAIN_GAIN);
            assert_eq!(e.vars.cwnd_gain, HIGH_GAIN, "DRAIN keeps STARTUP's cwnd gain");
        }
    });
    assert!(predicted_exit.is_some(), "the bandwidth plateaued");
    assert_eq!(
        exit, predicted_exit,
        "STARTUP ends exactly at the third round without growth"
    );
    assert!(drain_seen);
}

#[test]
fn startup_keeps_going_while_the_bandwidth_doubles() {
    // An ideal pipe with no bottleneck: each round delivers cwnd, which doubles, so the estimate keeps growing.
    let mut d = driver("bbr", json!({}));
    for _ in 0..12 {
        d.run_round(20_000);
        assert_eq!(d.vars().mode, STARTUP);
    }
    assert!(d.cwnd() > 10 * 1000, "cwnd {}", d.cwnd());
}

/// The quantized BDP of `bbr_inflight(bw, 1.0)` from the exported estimate: ⌈bw × min_rtt⌉ plus 3 TSO bursts
/// (about 1 ms at the pacing rate, at least 2 segments above 1.2 Mbit/s), rounded up to even.
fn quantized_bdp(e: &AckEvent) -> u32 {
    let bdp = (bw_units(&e.vars) as u128 * (e.vars.min_rtt_ns / 1e3) as u128).div_ceil(1 << 24) as u32;
    let goal = ((e.pacing_rate >> 10) as u32 / MSS).max(2);
    (bdp + 3 * goal + 1) & !1
}

#[test]
fn drain_ends_when_inflight_is_down_to_the_bdp_then_probe_bw() {
    let mut p = path();
    let mut drain_start = None;
    let mut exit = None;
    p.run_for(3_000_000_000, |e| {
        if exit.is_some() {
            return;
        }
        match e.vars.mode {
            DRAIN => {
                drain_start.get_or_insert(e.now_ns);
                // Still draining: more than the quantized BDP is in flight.
                assert!(
                    e.in_flight > quantized_bdp(e),
                    "in flight {} while draining",
                    e.in_flight
                );
            }
            PROBE_BW if drain_start.is_some() => exit = Some((e.now_ns, e.in_flight, quantized_bdp(e))),
            _ => {}
        }
    });
    let start = drain_start.expect("DRAIN");
    let (at, in_flight, target) = exit.expect("PROBE_BW");
    // Pacing at 1/2.885 of the bandwidth drains STARTUP's queue (≈ 1.9 BDP) in about one or two rounds.
    assert!(
        at - start < 3 * 40_000_000,
        "DRAIN took {} ms",
        (at - start) / 1_000_000
    );
    // The exit test counts what is still in the network when the next paced packet leaves: in flight minus
    // what the bottleneck delivers until then (less than one DRAIN pacing interval, 1/0.34 packets).
    assert!(
        in_flight <= target + 3,
        "in flight {in_flight} at PROBE_BW entry, target {target}"
    );
}

#[test]
fn probe_bw_cycles_through_the_eight_gains_with_one_min_rtt_per_phase() {
    let mut p = path();
    let mut last: Option<(usize, u64)> = None;
    let mut phases = Vec::new();
    p.run_until(9_000_000_000, |e| {
        if e.vars.mode != PROBE_BW {
            last = None;
            return;
        }
        let idx = e.vars.aux as usize;
        assert_eq!(e.vars.pacing_gain, CYCLE[idx], "phase {idx}");
        assert_eq!(e.vars.cwnd_gain, 2.0);
        match last {
            Some((prev, since)) if prev != idx => {
                assert_eq!(idx, (prev + 1) % 8, "phases advance one by one");
                let dur = e.now_ns - since;
                // Every phase but the draining one lasts at least one min_rtt (40 ms + one packet time).
                if prev != 1 {
                    assert!(dur > 40_000_000, "phase {prev} lasted {dur} ns");
                }
                phases.push((prev, dur));
                last = Some((idx, e.now_ns));
            }
            None => last = Some((idx, e.now_ns)),
            _ => {}
        }
    });
    assert!(phases.len() > 24, "only {} phase changes", phases.len());
    // Alone on the link, the 0.75 phase ends early, as soon as the probe's queue is gone.
    let drain_phase_max = phases
        .iter()
        .filter(|(i, _)| *i == 1)
        .map(|&(_, d)| d)
        .max()
        .unwrap();
    assert!(drain_phase_max <= 41_000_000, "{drain_phase_max}");
}

#[test]
fn gain_cycle_never_starts_in_the_drain_phase() {
    let mut first_phase = [0u32; 8];
    for seed in 0..280u64 {
        let cfg = CcConfig::from_name_and_params("bbr", &json!({})).unwrap();
        let mut d = Driver::new(cfg.build(Rng::stream(seed, StreamId::Cc(0))), MSS);
        // A window clamp makes the delivery rate plateau, so STARTUP ends after a few rounds.
        d.tp.snd_cwnd_clamp = 30;
        let mut rounds = 0;
        while d.vars().mode != PROBE_BW {
            d.run_round(10_000);
            rounds += 1;
            assert!(rounds < 50, "seed {seed}: no PROBE_BW");
        }
        first_phase[d.vars().aux as usize] += 1;
    }
    assert_eq!(first_phase[1], 0, "started in the 0.75 phase: {first_phase:?}");
    // The other seven phases are equally likely (binomial 280 × 1/7: mean 40, sd 5.9).
    for (i, &n) in first_phase.iter().enumerate().filter(|&(i, _)| i != 1) {
        assert!((20..=60).contains(&n), "phase {i}: {n} of 280 ({first_phase:?})");
    }
}

#[test]
fn pacing_is_99_percent_of_bw_times_gain_and_cwnd_twice_the_bdp() {
    let mut p = path();
    let mut checked = 0;
    p.run_until(6_000_000_000, |e| {
        if e.vars.mode != PROBE_BW || e.now_ns < 2_000_000_000 {
            return;
        }
        let bw_bytes = e.vars.bw_bps / 8.0;
        let expected = bw_bytes * e.vars.pacing_gain * 0.99;
        let ratio = e.pacing_rate as f64 / expected;
        assert!(
            (0.9999..=1.0001).contains(&ratio),
            "pacing {} vs {expected}",
            e.pacing_rate
        );
        // cwnd = 2 × bw × min_rtt, plus the quantization budget (3 bursts of 2, even, +2 in the 1.25 phase)
        // and the small ACK-aggregation allowance of a per-packet ACK stream.
        let bdp = e.vars.bw_bps / 8.0 / MSS as f64 * e.vars.min_rtt_ns / 1e9;
        let cwnd = e.cwnd as f64;
        assert!(
            cwnd >= 2.0 * bdp && cwnd <= 2.0 * bdp + 12.0,
            "cwnd {cwnd}, BDP {bdp}"
        );
        checked += 1;
    });
    assert!(checked > 1000);
}

/// Run `p` until PROBE_RTT, returning the time of the last min_rtt decrease before it and the entry time.
fn until_probe_rtt(p: &mut Path, deadline_ns: u64) -> (u64, u64) {
    let mut last_decrease = 0;
    let mut min_rtt = f64::INFINITY;
    let mut entry = None;
    while entry.is_none() {
        assert!(p.now_ns() < deadline_ns, "no PROBE_RTT by {deadline_ns}");
        p.run_for(1_000_000, |e| {
            if entry.is_some() {
                return;
            }
            if e.vars.min_rtt_ns < min_rtt {
                min_rtt = e.vars.min_rtt_ns;
                last_decrease = e.now_ns;
            }
            if e.vars.mode == PROBE_RTT {
                entry = Some(e.now_ns);
            }
        });
    }
    (last_decrease, entry.unwrap())
}

#[test]
fn probe_rtt_after_ten_seconds_at_four_packets_for_200_ms_and_a_round() {
    let mut p = path();
    let (stamp, entry) = until_probe_rtt(&mut p, 15_000_000_000);
    // Entered on the first ACK once the 10 s filter expired (jiffies strictly after stamp + 10 s).
    assert!(
        entry > stamp + 10_000_000_000,
        "entered {} ms after the min",
        (entry - stamp) / 1_000_000
    );
    assert!(
        entry <= stamp + 10_000_000_000 + 3_000_000,
        "entered {} ms after",
        (entry - stamp) / 1_000_000
    );
    let cwnd_before = p.d.tp.snd_cwnd;
    // Hold: cwnd ≤ 4 until exit; the hold starts once in flight ≤ 4 and lasts 200 ms and a round trip.
    let mut low_since = None;
    let mut exit = None;
    p.run_for(2_000_000_000, |e| {
        if exit.is_some() {
            return;
        }
        if e.vars.mode == PROBE_RTT {
            assert!(e.cwnd <= 4, "cwnd {} in PROBE_RTT", e.cwnd);
            assert_eq!(e.vars.pacing_gain, 1.0);
            if e.in_flight <= 4 && low_since.is_none() {
                low_since = Some(e.now_ns);
            }
        } else {
            exit = Some((e.now_ns, e.cwnd, e.vars.mode));
        }
    });
    let low = low_since.expect("in flight fell to 4");
    let (at, cwnd, mode) = exit.expect("PROBE_RTT ended");
    let held = at - low;
    assert!(held > 200_000_000, "held {held} ns");
    // 200 ms, then the round in progress (one RTT at 4 packets) plus one ACK.
    assert!(held < 200_000_000 + 2 * 41_000_000, "held {held} ns");
    assert_eq!(mode, PROBE_BW, "back to PROBE_BW: the pipe was full before");
    assert!(cwnd >= cwnd_before.max(4), "cwnd restored: {cwnd}");
    // The next PROBE_RTT comes 10 s after this one ended (the filter restarts at the exit).
    let (_, next) = until_probe_rtt(&mut p, at + 12_000_000_000);
    assert!(
        next > at + 10_000_000_000 && next < at + 10_000_000_000 + 3_000_000,
        "{}",
        next - at
    );
}

#[test]
fn packet_conservation_in_the_first_round_of_recovery_then_restore() {
    let mut d = driver("bbr", json!({}));
    d.tp.snd_cwnd_clamp = 40;
    while d.vars().mode != PROBE_BW {
        d.run_round(10_000);
    }
    for _ in 0..20 {
        d.run_round(10_000);
    }
    let cwnd_before = d.cwnd();
    d.fill();
    // Ten ACKs with nothing sent: in flight falls 10 below cwnd (which stays at its target).
    for _ in 0..10 {
        d.ack(100_000, 1, 10_000);
    }
    // A loss is detected and recovery starts before the ACK reaches the algorithm. (The scripted driver only
    // ACKs in order, so the ACKs below cover packets sent before the loss, as SACKs would.)
    d.enter_recovery();
    d.ack(1_000_000, 2, 10_000);
    // First ACK of recovery: cwnd = packets in flight + packets this ACK delivered (unused cwnd is cut).
    assert_eq!(d.cwnd(), d.in_flight() + 2);
    assert!(d.cwnd() < cwnd_before);
    // During the conserving round cwnd = max(cwnd, in flight + delivered): one packet out per packet delivered,
    // where outside recovery cwnd would grow by the delivered packet.
    for _ in 0..5 {
        d.fill();
        let cwnd = d.cwnd();
        d.ack(1_000_000, 1, 10_000);
        assert_eq!(d.cwnd(), cwnd.max(d.in_flight() + 1));
    }
    // Repair and leave recovery: back to the cwnd from before it.
    d.fill();
    while d.state() != CaState::Open {
        d.run_round(10_000);
    }
    assert!(d.cwnd() >= cwnd_before, "restored {} < {cwnd_before}", d.cwnd());
}

#[test]
fn losses_in_recovery_are_deducted_then_regrown() {
    let mut d = driver("bbr", json!({}));
    d.tp.snd_cwnd_clamp = 60;
    while d.vars().mode != PROBE_BW {
        d.run_round(10_000);
    }
    d.run_rounds(10, 10_000);
    d.fill();
    // The oldest packet is lost and the receiver SACKs the others, one ACK each; the third SACK proves the
    // loss (RACK marks it) and Recovery begins, with one round of packet conservation.
    let hole = d.tp.snd_una;
    let high = d.tp.snd_nxt;
    let sack = |d: &mut Driver, end: u32, lost: u32| {
        // The packets sent after Recovery began come back a round trip after they left.
        let gap_ns = if end == high + 1 { 10_000_000 } else { 100_000 };
        d.ack_with(Ack {
            advance_ns: gap_ns,
            sack: Some((hole + 1, end)),
            rtt_us: 10_000,
            lost,
            ..Default::default()
        });
        d.fill();
    };
    for seq in hole + 1..high {
        sack(&mut d, seq + 1, u32::from(seq == hole + 3));
    }
    assert_eq!(d.state(), CaState::Recovery);
    // SACKs of packets sent after Recovery began start a new round: conservation is over.
    for end in high + 1..high + 6 {
        sack(&mut d, end, 0);
    }
    assert_eq!(d.state(), CaState::Recovery);
    let cwnd = d.cwnd();
    // An ACK for 2 packets that also marks 3 lost: an ACK for P packets releases at most 2P, so cwnd first
    // drops by the 3 losses and then grows by the 2 delivered (it is below the target).
    sack(&mut d, high + 7, 3);
    assert_eq!(d.cwnd(), cwnd - 3 + 2);
}

#[test]
fn minimum_cwnd_is_four_packets() {
    let mut d = driver("bbr", json!({}));
    d.tp.snd_cwnd_clamp = 40;
    d.run_rounds(30, 10_000);
    // An RTO leaves cwnd = in flight + 1; the next ACKs grow it back to at least 4 at once.
    d.rto();
    assert_eq!(d.cwnd(), 1);
    d.send(1);
    d.ack(10_000_000, 1, 10_000);
    assert!(d.cwnd() >= 4, "cwnd {}", d.cwnd());
}

/// A policer that passes `rate` packets per round trip and drops the rest, in front of a receiver that ACKs
/// each packet it gets: cumulatively, or with a SACK block while a hole is open. It also counts BBR's
/// packet-timed rounds the way `bbr_update_bw` does (a valid sample of a packet sent after the round began;
/// entering Recovery starts a new round, `bbr_set_cwnd_to_recover_or_restore`).
#[derive(Default)]
struct Policer {
    /// Sequence numbers received above the cumulative ACK point.
    received: BTreeSet<u32>,
    next_rtt_delivered: u32,
    bbr_rounds: u64,
}

impl Policer {
    /// One round trip: the window is filled; of the packets in flight the `rate` sent first arrive, their
    /// ACKs spread over the RTT, the window refilled after each (ACK clocking); the last ACK also reports the
    /// rest lost (RACK: sent before a delivered packet). The stack retransmits them as cwnd allows.
    fn round(&mut self, d: &mut Driver, rtt_us: u64, rate: u32) {
        d.fill();
        let flight = d.in_flight_seqs();
        let passed = flight.len().min(rate as usize);
        let dropped = (flight.len() - passed) as u32;
        if passed == 0 {
            d.advance(rtt_us * 1_000);
            return;
        }
        for (i, &seq) in flight[..passed].iter().enumerate() {
            self.received.insert(seq);
            let una = d.tp.snd_una;
            let mut cum = una;
            while self.received.remove(&cum) {
                cum += 1;
            }
            let sack = (seq >= cum).then(|| {
                let start = (cum..seq).rev().take_while(|s| self.received.contains(s)).last();
                let end = (seq + 1..).take_while(|s| self.received.contains(s)).last();
                (start.unwrap_or(seq), end.unwrap_or(seq) + 1)
            });
            let was_recovering = d.state() == CaState::Recovery;
            let rs = d.ack_with(Ack {
                advance_ns: rtt_us * 1_000 / passed as u64,
                acked: cum - una,
                sack,
                rtt_us: rtt_us as i64,
                lost: if i + 1 == passed { dropped } else { 0 },
                ..Default::default()
            });
            if rs.delivered >= 0 && rs.interval_us > 0 && rs.prior_delivered >= self.next_rtt_delivered {
                self.next_rtt_delivered = d.tp.delivered;
                self.bbr_rounds += 1;
            }
            if d.state() == CaState::Recovery && !was_recovering {
                self.next_rtt_delivered = d.tp.delivered;
            }
            d.fill();
        }
    }
}

/// (pacing gain, gain-cycle index, BBR rounds so far) after each of `rounds` lossy round trips.
fn gains_over(d: &mut Driver, rounds: usize, rate: u32) -> Vec<(f64, u32, u64)> {
    let mut policer = Policer {
        next_rtt_delivered: d.tp.delivered,
        ..Policer::default()
    };
    (0..rounds)
        .map(|_| {
            policer.round(d, 10_000, rate);
            (d.vars().pacing_gain, d.vars().aux as u32, policer.bbr_rounds)
        })
        .collect()
}

/// The policer estimate forces gain 1.0 while the cycle index keeps advancing: gain 1.0 in the 1.25 or the
/// 0.75 phase only happens in that mode.
fn forced(g: &(f64, u32, u64)) -> bool {
    g.0 == 1.0 && g.1 <= 1
}

#[test]
fn policer_mode_after_two_consistent_lossy_intervals_for_48_rounds() {
    let mut d = driver("bbr", json!({}));
    d.tp.snd_cwnd_clamp = 60;
    while d.vars().mode != PROBE_BW {
        d.run_round(10_000);
    }
    d.run_rounds(10, 10_000);
    // A policer passing 30 packets per round trip: BBR's window of up to 60 loses far more than 20 % (50/256)
    // at a steady delivery rate. After two sampling intervals of 4 to 16 rounds with consistent rates BBR
    // assumes a policer and paces at 1.0 × lt_bw. The cycle advances every round trip (phases last one
    // min_rtt), so a forced phase shows within 8. Each round trip's losses start a Recovery episode, which
    // restarts BBR's packet-timed round, so BBR counts rounds more slowly than round trips pass.
    let gains = gains_over(&mut d, 160, 30);
    let first = gains.iter().position(forced).expect("policer mode");
    assert!(first <= 2 * 16 + 8, "policer mode only after {first} round trips");
    // lt_bw is used for 48 BBR rounds; gain 1.0 then lasts until the randomly restarted cycle reaches its
    // 1.25 phase (at most 7 more round trips, so at most 7 more rounds). The first forced round trip was at
    // most 8 round trips, so at most 8 rounds, into the mode.
    let end = first + gains[first..].iter().take_while(|g| g.0 == 1.0).count();
    let rounds = gains[end - 1].2 - gains[first].2;
    assert!(
        (40..=56).contains(&rounds),
        "gain 1.0 for {rounds} BBR rounds ({} round trips) from {first}",
        end - first
    );
    assert!(gains[end..].iter().any(|g| g.0 == 1.25), "gain cycling resumes");
}

#[test]
fn no_policer_mode_below_twenty_percent_loss() {
    let mut d = driver("bbr", json!({}));
    d.tp.snd_cwnd_clamp = 40;
    while d.vars().mode != PROBE_BW {
        d.run_round(10_000);
    }
    d.run_rounds(10, 10_000);
    // A "policer" at 37 packets per round against a window of at most 40: under 10 % loss, gains keep cycling.
    let gains = gains_over(&mut d, 120, 37);
    assert!(!gains.iter().any(forced), "{gains:?}");
    assert!(gains.iter().any(|g| g.0 == 1.25));
}

#[test]
fn restarting_after_idle_paces_at_the_estimate_without_probing() {
    let mut checked = 0;
    for extra_rounds in 0..16 {
        let mut d = driver("bbr", json!({}));
        d.tp.snd_cwnd_clamp = 40;
        while d.vars().mode != PROBE_BW {
            d.run_round(10_000);
        }
        d.run_rounds(10 + extra_rounds, 10_000);
        // The application runs out of data: the window drains, and the connection sits idle for a second.
        d.app_limited(true);
        d.run_rounds(3, 10_000);
        assert_eq!(d.in_flight(), 0);
        d.advance(1_000_000_000);
        let v = d.vars();
        if v.pacing_gain == 1.0 {
            continue; // only phases with a gain other than 1 tell the difference
        }
        // The first transmission after idle (CA_EVENT_TX_START while app-limited) sets pacing to 1.0 × bw,
        // whatever the gain-cycle phase: no point probing or draining while the application limits the rate.
        d.send(1);
        let expected = v.bw_bps / 8.0 * 0.99;
        let ratio = d.tp.pacing_rate as f64 / expected;
        assert!(
            (0.999..=1.001).contains(&ratio),
            "gain {}: pacing {} vs {expected}",
            v.pacing_gain,
            d.tp.pacing_rate
        );
        checked += 1;
    }
    assert!(checked >= 2, "only {checked} restarts in a 1.25 or 0.75 phase");
}

#[test]
fn init_takes_min_rtt_and_the_pacing_rate_from_the_handshake() {
    for rtt_us in [10_000u64, 40_000, 150_000] {
        let cfg = CcConfig::from_name_and_params("bbr", &json!({})).unwrap();
        let cc = cfg.build(Rng::stream(1, StreamId::Cc(0)));
        let d = Driver::with_handshake(cc, ccfair_cc::TcpSock::new(MSS, 10), rtt_us);
        // bbr_init: min_rtt_us = tcp_min_rtt(tp), the handshake's sample, and STARTUP.
        let v = d.vars();
        assert_eq!(v.min_rtt_ns, rtt_us as f64 * 1e3);
        assert_eq!(v.mode, STARTUP);
        // bbr_init_pacing_rate_from_rtt: high_gain × initial cwnd / srtt, less the 1 % pacing margin; without
        // a sample the kernel assumes 1 ms, which would be 10 to 150 times faster here.
        let expected = HIGH_GAIN * 10.0 * MSS as f64 / (rtt_us as f64 / 1e6) * 0.99;
        let ratio = d.tp.pacing_rate as f64 / expected;
        assert!(
            (0.995..=1.005).contains(&ratio),
            "{rtt_us} us: pacing {} vs {expected}",
            d.tp.pacing_rate
        );
    }
}
