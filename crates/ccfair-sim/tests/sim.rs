//! Integration tests of the simulator: invariants on random scenarios (packets conserved, queue within its
//! limit, goodput bounded by the link, in-order exactly-once delivery, scoreboard consistency, determinism),
//! and analytic results (utilization with a 1-BDP buffer, the Mathis throughput model).

use ccfair_aqm::{AqmConfig, QueueLimit};
use ccfair_cc::CcConfig;
use ccfair_core::{DropReason, Dur, Observer, Time};
use ccfair_sim::{GroupSpec, LinkSpec, ScenarioSpec, Simulation};
use proptest::prelude::*;

const MS: u64 = 1_000_000;
const S: u64 = 1_000_000_000;

fn group(cc: &str, count: u32, rtt_ms: u64) -> GroupSpec {
    GroupSpec {
        cc: CcConfig::from_name_and_params(cc, &serde_json::Value::Null).unwrap(),
        count,
        rtt_ns: rtt_ms * MS,
        start_ns: 0,
        stop_ns: None,
        initial_window: 10,
        pacing: false,
        loss: 0.0,
        ecn: false,
    }
}

fn spec(rate_bps: u64, limit: QueueLimit, duration_s: u64, groups: Vec<GroupSpec>) -> ScenarioSpec {
    ScenarioSpec {
        duration_ns: duration_s * S,
        interval_ns: 100 * MS,
        measure_start_ns: duration_s * S / 5,
        measure_end_ns: duration_s * S,
        link: LinkSpec {
            rate_bps,
            mtu_bytes: 1500,
            aqm: AqmConfig::Fifo { limit },
        },
        groups,
    }
}

/// Packets of one BDP (rate × rtt), in 1500-byte packets.
fn bdp_packets(rate_bps: u64, rtt_ms: u64) -> u32 {
    ((rate_bps as f64 * rtt_ms as f64 / 1000.0 / 8.0 / 1500.0).round() as u32).max(1)
}

/// Checks that every flow's application sees each segment once and in order.
#[derive(Default)]
struct InOrder {
    next: Vec<u32>,
    violations: Vec<String>,
}

impl Observer for InOrder {
    fn delivered_to_app(&mut self, _now: Time, flow: u32, first_seq: u32, segments: u32, _bytes: u64) {
        let f = flow as usize;
        if self.next.len() <= f {
            self.next.resize(f + 1, 0);
        }
        if first_seq != self.next[f] {
            self.violations
                .push(format!("flow {flow}: got {first_seq}, expected {}", self.next[f]));
        }
        self.next[f] = first_seq + segments;
    }
}

mod invariants {
    use super::*;

    fn arb_group() -> impl Strategy<Value = GroupSpec> {
        (
            prop_oneof![Just("reno"), Just("cubic")],
            1u32..4,
            1u64..200,
            0u64..3000,
            prop::option::of(500u64..6000),
            prop_oneof![Just(0.0), 0.0..0.05],
            prop_oneof![Just(false), Just(true)],
            1u32..40,
        )
            .prop_map(|(cc, count, rtt, start_ms, stop_after, loss, pacing, iw)| {
                let mut g = group(cc, count, rtt);
                g.start_ns = start_ms * MS;
                g.stop_ns = stop_after.map(|d| (start_ms + d) * MS);
                g.loss = loss;
                g.pacing = pacing;
                g.initial_window = iw;
                g
            })
    }

    fn arb_spec() -> impl Strategy<Value = ScenarioSpec> {
        (
            1_000_000u64..200_000_000,
            prop_oneof![
                (2u32..300).prop_map(QueueLimit::Packets),
                (3000u64..400_000).prop_map(QueueLimit::Bytes)
            ],
            prop::collection::vec(arb_group(), 1..4),
            4u64..8,
        )
            .prop_map(|(rate, limit, groups, dur)| spec(rate, limit, dur, groups))
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

        #[test]
        fn conservation_limits_order_and_consistency(sp in arb_spec(), seed in 0u64..1000) {
            let rate = sp.link.rate_bps;
            let limit = sp.link.aqm.limit();
            let duration = sp.duration_ns;
            let n = sp.flow_count();
            let mut sim = Simulation::with_observer(sp, seed, InOrder::default()).unwrap();
            sim.run();
            let out = sim.output();
            let t = &out.totals;

            // Every segment sent is delivered to its receiver, dropped, or still in the network.
            prop_assert_eq!(t.sent_segments, t.arrived_segments + t.queue_drops + t.path_drops + t.in_flight_at_end);

            // The queue never held more than its limit: no packet waited longer than a full queue takes to
            // drain (the packet limit in packets, or the byte limit in bytes, at the link rate).
            let limit_bytes = match limit { QueueLimit::Packets(p) => p as u64 * 1500, QueueLimit::Bytes(b) => b };
            let drain_ns = (limit_bytes as u128 * 8 * 1_000_000_000).div_ceil(rate as u128) as f64;
            for &m in &out.queue.sojourn_max_ns {
                if !m.is_nan() {
                    prop_assert!(m <= drain_ns, "sojourn {m} ns exceeds a full queue's drain time {drain_ns}");
                }
            }
            for &b in &out.queue.backlog_bytes {
                prop_assert!(b <= limit_bytes);
            }

            // Goodput never exceeds what the link carried: payload ≤ wire bytes ≤ rate × time.
            let delivered: u64 = out.flows.iter().map(|f| f.total.delivered_bytes).sum();
            let tx: u64 = out.queue.tx_bytes.iter().sum();
            prop_assert!(delivered * 1500 <= tx * 1448 + 1500 * 1448, "delivered {delivered} vs link {tx}");
            prop_assert!(tx as f64 * 8.0 <= rate as f64 * duration as f64 * 1e-9 + 12000.0);

            // In-order, exactly-once delivery to the application.
            prop_assert!(sim.observer().violations.is_empty(), "{:?}", &sim.observer().violations[..1]);

            // Every sender's scoreboard matches its queue.
            for f in 0..n {
                if let Err(e) = sim.sender(f).check_invariants() {
                    prop_assert!(false, "flow {f}: {e}");
                }
            }
        }
    }

    #[test]
    fn same_seed_same_results_different_seed_different_loss_pattern() {
        let mut g = group("cubic", 2, 40);
        g.loss = 0.002;
        let sp = spec(
            20_000_000,
            QueueLimit::Packets(60),
            8,
            vec![g, group("reno", 1, 80)],
        );
        let run = |seed| {
            let mut sim = Simulation::new(sp.clone(), seed).unwrap();
            sim.run();
            let o = sim.output();
            (
                o.flows,
                o.series.cwnd,
                o.series.srtt_ns,
                o.queue.backlog_bytes,
                o.totals.events,
            )
        };
        let a = run(7);
        let b = run(7);
        assert_eq!(a, b);
        let c = run(8);
        assert_ne!(a.0, c.0, "a different seed should draw different path losses");
    }

    /// Counts drops by reason.
    #[derive(Default)]
    struct Drops(u64, u64);

    impl Observer for Drops {
        fn segment_dropped(&mut self, _now: Time, _flow: u32, _seq: u32, reason: DropReason) {
            if reason == DropReason::PathLoss {
                self.1 += 1
            } else {
                self.0 += 1
            }
        }
    }

    #[test]
    fn path_loss_happens_before_the_bottleneck_at_the_configured_rate() {
        let mut g = group("reno", 1, 20);
        g.loss = 0.01;
        // A large buffer and a fast link: the bottleneck itself never drops.
        let sp = spec(1_000_000_000, QueueLimit::Packets(100_000), 20, vec![g]);
        let mut sim = Simulation::with_observer(sp, 3, Drops::default()).unwrap();
        sim.run();
        let sent = sim.output().totals.sent_segments as f64;
        let Drops(queue, path) = *sim.observer();
        assert_eq!(queue, 0);
        let p = path as f64 / sent;
        let sd = (0.01 * 0.99 / sent).sqrt();
        assert!(
            (p - 0.01).abs() < 5.0 * sd,
            "observed loss rate {p} over {sent} segments"
        );
    }
}

mod theory {
    use super::*;

    fn goodput_bps(out: &ccfair_sim::RunOutput, flow: usize) -> f64 {
        out.flows[flow].window.delivered_bytes as f64 * 8.0 / (out.totals.window_ns as f64 * 1e-9)
    }

    #[test]
    fn one_reno_flow_with_a_one_bdp_buffer_keeps_the_link_busy() {
        for (rate, rtt) in [(10_000_000u64, 50u64), (100_000_000, 20), (100_000_000, 100)] {
            let sp = spec(
                rate,
                QueueLimit::Packets(bdp_packets(rate, rtt)),
                60,
                vec![group("reno", 1, rtt)],
            );
            let mut sim = Simulation::new(sp, 1).unwrap();
            sim.run();
            let out = sim.output();
            let util = out.totals.window_link_tx_bytes as f64 * 8.0
                / (rate as f64 * out.totals.window_ns as f64 * 1e-9);
            assert!(util >= 0.98, "{rate} bit/s, {rtt} ms: utilization {util}");
            assert!(util <= 1.0 + 1e-9);
        }
    }

    #[test]
    fn half_bdp_buffer_cannot_keep_a_single_reno_flow_busy() {
        // The classic buffer-sizing result: below one BDP a lone Reno flow idles the link after each halving.
        let (rate, rtt) = (100_000_000u64, 50u64);
        let sp = spec(
            rate,
            QueueLimit::Packets(bdp_packets(rate, rtt) / 4),
            60,
            vec![group("reno", 1, rtt)],
        );
        let mut sim = Simulation::new(sp, 1).unwrap();
        sim.run();
        let out = sim.output();
        let util =
            out.totals.window_link_tx_bytes as f64 * 8.0 / (rate as f64 * out.totals.window_ns as f64 * 1e-9);
        // With buffer B = BDP/4 the window oscillates between (BDP+B)/2 and BDP+B, so the link is idle for part
        // of each cycle: utilization ≈ 1 − ((BDP − (BDP+B)/2)²)/(...) ≈ 0.9; certainly well below 0.98.
        assert!(util < 0.97 && util > 0.8, "utilization {util}");
    }

    #[test]
    fn reno_under_random_loss_follows_the_mathis_model() {
        // Mathis et al. 1997: throughput = (MSS/RTT)·sqrt(3/2)/sqrt(p). Linux counts ACKed packets (no delayed-ACK
        // penalty in growth), so the b = 1 form applies. A huge buffer and a fast link make loss the only limit,
        // and the flows never meet in the queue: they are independent samples, averaged to cut the noise of
        // a few hundred loss events per flow.
        let rtt_ms = 100;
        let flows = 8;
        for (p, duration_s) in [(1e-4, 600u64), (1e-3, 200), (1e-2, 100)] {
            let mut g = group("reno", flows, rtt_ms);
            g.loss = p;
            let sp = spec(
                10_000_000_000,
                QueueLimit::Packets(1_000_000),
                duration_s,
                vec![g],
            );
            let mut sim = Simulation::new(sp, 11).unwrap();
            sim.run();
            let out = sim.output();
            assert_eq!(out.totals.window_queue_drops, 0);
            let got = (0..flows as usize).map(|f| goodput_bps(&out, f)).sum::<f64>() / flows as f64;
            let model = 1448.0 * 8.0 / (rtt_ms as f64 / 1000.0) * (1.5f64).sqrt() / p.sqrt();
            let err = (got - model).abs() / model;
            eprintln!("p={p}: goodput {got:.0} vs Mathis {model:.0}");
            assert!(
                err < 0.2,
                "p={p}: goodput {got:.0} vs Mathis {model:.0} ({:.1} % off)",
                err * 100.0
            );
        }
    }

    #[test]
    fn rtt_includes_queueing_and_one_serialization() {
        // Bufferbloat: a 1-BDP buffer adds up to one base RTT of queueing; the mean RTT lies in between.
        let (rate, rtt) = (10_000_000u64, 40u64);
        let sp = spec(
            rate,
            QueueLimit::Packets(bdp_packets(rate, rtt)),
            30,
            vec![group("reno", 1, rtt)],
        );
        let mut sim = Simulation::new(sp, 1).unwrap();
        sim.run();
        let out = sim.output();
        let ser_ms = 1500.0 * 8.0 / rate as f64 * 1000.0;
        let mean_ms = out.flows[0].rtt_mean_ns / 1e6;
        assert!(
            mean_ms > rtt as f64 + ser_ms && mean_ms < 2.0 * rtt as f64 + 2.0 * ser_ms,
            "mean RTT {mean_ms} ms"
        );
        let min_srtt = *out.series.srtt_ns.iter().filter(|&&x| x > 0).min().unwrap() as f64 / 1e6;
        assert!(
            min_srtt >= rtt as f64,
            "srtt {min_srtt} below the propagation RTT"
        );
        let _ = Dur::ZERO;
    }

    #[test]
    fn cubic_window_follows_the_cubic_function_over_an_epoch() {
        // One Cubic flow, long RTT and a 1-BDP buffer: losses are rare, so each epoch is dominated by the cubic
        // region. After each reduction W(t) = W_max + C(t + d − K)³ with K = ∛((W_max − cwnd₀)/C), where cwnd₀
        // is the window at the epoch's start, d the minimum RTT (Linux evaluates one min-RTT ahead) and W_max
        // Cubic's (fast-convergence adjusted) previous maximum, which the time series exports as cc_aux.
        let (rate, rtt) = (100_000_000u64, 100u64);
        let sp = spec(rate, QueueLimit::Packets(bdp_packets(rate, rtt)), 120, vec![group("cubic", 1, rtt)]);
        let mut sim = Simulation::new(sp, 1).unwrap();
        sim.run();
        let s = &sim.output().series;
        let c = 410.0 / 1024.0;
        let d = rtt as f64 / 1000.0;
        let t: Vec<f64> = s.t_ns.iter().map(|&x| x as f64 * 1e-9).collect();
        // Epoch starts: back in Open after a recovery.
        let starts: Vec<usize> = (1..t.len())
            .filter(|&i| s.ca_state[i] == 0 && s.ca_state[i - 1] == 3 && s.ssthresh[i] > 0)
            .collect();
        assert!(starts.len() >= 3, "expected several congestion epochs, got {}", starts.len());
        let (mut checked, mut plateaus) = (0, 0);
        for w in starts.windows(2) {
            let (i, j) = (w[0], w[1]);
            let wmax = s.cc_aux[i];
            let cwnd0 = s.ssthresh[i] as f64;
            assert!(wmax > cwnd0, "W_max {wmax} should exceed the reduced window {cwnd0}");
            let k = ((wmax - cwnd0) / c).cbrt();
            let model = |t0: f64, tk: f64| wmax + c * (tk - t0 + d - k).powi(3);
            // Up to the next loss (the window leaves Open when recovery starts).
            let open_end = (i + 1..j).take_while(|&m| s.ca_state[m] == 0).last().unwrap_or(i);
            let worst = |t0: f64| {
                (i + 1..=open_end)
                    .map(|m| ((s.cwnd[m] as f64 - model(t0, t[m])) / model(t0, t[m])).abs())
                    .fold(0.0, f64::max)
            };
            // The epoch began within the 100 ms before sample i: try offsets on a 10 ms grid.
            let best = (0..=10).map(|g| worst(t[i] - 0.01 * g as f64)).fold(f64::INFINITY, f64::min);
            assert!(best < 0.05, "epoch at {:.1} s: worst deviation from W(t) {:.1} %", t[i], best * 100.0);
            // The plateau: at t ≈ K the window sits at W_max (when the epoch lasts that long; with fast
            // convergence W_max is below what the path holds, so later epochs do).
            if t[open_end] - t[i] + d > k + 1.0 {
                let at_k = (i..=open_end)
                    .min_by(|&a, &b| (t[a] - t[i] + d - k).abs().total_cmp(&(t[b] - t[i] + d - k).abs()))
                    .unwrap();
                let dev = (s.cwnd[at_k] as f64 - wmax).abs() / wmax;
                assert!(dev < 0.02, "plateau {} vs W_max {wmax}", s.cwnd[at_k]);
                plateaus += 1;
            }
            checked += 1;
        }
        assert!(checked >= 3 && plateaus >= 2, "{checked} epochs checked, {plateaus} plateaus");
    }
}
