//! The end-host model in runs: start jitter keeps each flow's start within its window, is drawn from the
//! run's seed (other seeds, other starts; the same seed, the same run), and the ideal host draws nothing.

use ccfair_aqm::QueueLimit;
use ccfair_cc::CcConfig;
use ccfair_core::{Observer, Time};
use ccfair_sim::host::{HostInput, HostSpec, Noise};
use ccfair_sim::{ConnectMode, GroupSpec, RunOutput, Simulation, UncheckedSpec};

mod common;
use common::{MS, S, fifo_spec};

fn group(cc: &str, count: u32, rtt_ms: u64, start_ms: u64, host: HostSpec) -> GroupSpec {
    GroupSpec {
        start_ns: start_ms * MS,
        host,
        ..common::group(cc, count, rtt_ms)
    }
}

/// The host of `preset` for a group of `rtt_ms`, as the scenario resolves it.
fn preset(name: &str, rtt_ms: u64) -> HostSpec {
    let input = HostInput {
        preset: Some(name.to_owned()),
        ..Default::default()
    };
    HostSpec::resolve(Some(&input), None, "flows[0].host", rtt_ms * MS).unwrap()
}

/// Cubic against Reno through a 20 Mbit/s FIFO of one BDP (40 ms), 8 flows per group.
fn cubic_vs_reno(host: &str) -> UncheckedSpec {
    fifo_spec(
        20_000_000,
        QueueLimit::Packets(67),
        4 * S,
        S,
        vec![
            group("cubic", 8, 40, 0, preset(host, 40)),
            group("reno", 8, 40, 100, preset(host, 40)),
        ],
    )
}

/// When each flow sent its first segment.
#[derive(Default)]
struct FirstSend(Vec<Option<Time>>);

impl Observer for FirstSend {
    fn segment_sent(&mut self, now: Time, flow: u32, _seq: u32, _retransmit: bool) {
        let f = flow as usize;
        if self.0.len() <= f {
            self.0.resize(f + 1, None);
        }
        self.0[f].get_or_insert(now);
    }
}

fn run(spec: &UncheckedSpec, seed: u64) -> (RunOutput, Vec<u64>) {
    let mut sim =
        Simulation::with_observer(spec.clone().check().unwrap(), seed, FirstSend::default()).unwrap();
    sim.run();
    let first = sim.observer().0.iter().map(|t| t.unwrap().ns()).collect();
    (sim.output(), first)
}

/// Everything a run produced, for comparing runs.
fn digest(o: &RunOutput) -> String {
    format!(
        "{:?} {:?} {:?} {:?} {:?}",
        o.flows, o.series.cwnd, o.series.srtt_ns, o.queue.backlog_bytes, o.totals
    )
}

#[test]
fn flows_start_within_their_window_at_the_recorded_time() {
    let spec = cubic_vs_reno("testbed");
    for seed in 1..=4 {
        let (out, first) = run(&spec, seed);
        for (i, (rec, first_ns)) in out.flows.iter().zip(&first).enumerate() {
            let (start_ms, window) = if i < 8 { (0, 40 * MS) } else { (100, 40 * MS) };
            let lo = start_ms * MS;
            assert!(
                (lo..lo + window).contains(first_ns),
                "seed {seed} flow {i}: first segment at {first_ns} ns, window [{lo}, {})",
                lo + window
            );
            assert_eq!(rec.start_ns, *first_ns, "the flow table records the actual start");
        }
        // 8 draws from a 40 ms window: distinct starts, not one phase.
        let mut starts = first[..8].to_vec();
        starts.dedup();
        assert_eq!(starts.len(), 8, "seed {seed}: {first:?}");
    }
}

#[test]
fn other_seeds_other_runs_same_seed_same_bytes() {
    for host in ["testbed", "home"] {
        let spec = cubic_vs_reno(host);
        let (a, starts_a) = run(&spec, 1);
        let (b, starts_b) = run(&spec, 2);
        assert_ne!(starts_a, starts_b, "{host}");
        assert_ne!(
            digest(&a),
            digest(&b),
            "{host}: a Cubic-vs-Reno FIFO run must depend on the seed"
        );
    }
    for host in ["ideal", "testbed", "home"] {
        let spec = cubic_vs_reno(host);
        assert_eq!(digest(&run(&spec, 7).0), digest(&run(&spec, 7).0), "{host}");
    }
}

#[test]
fn the_ideal_host_is_seed_independent_without_other_randomness() {
    // Cubic and Reno on a FIFO without path loss draw nothing: every seed gives the same run.
    let spec = cubic_vs_reno("ideal");
    let (a, starts) = run(&spec, 1);
    assert_eq!(digest(&a), digest(&run(&spec, 99).0));
    assert!(starts[..8].iter().all(|&t| t == 0));
    assert!(starts[8..].iter().all(|&t| t == 100 * MS));
}

/// Per flow, the sequence numbers sent (retransmissions included) and arrived at the receiver, in order.
#[derive(Default)]
struct SentArrived {
    sent: Vec<Vec<u32>>,
    arrived: Vec<Vec<u32>>,
}

impl Observer for SentArrived {
    fn segment_sent(&mut self, _now: Time, flow: u32, seq: u32, _retransmit: bool) {
        let f = flow as usize;
        if self.sent.len() <= f {
            self.sent.resize(f + 1, Vec::new());
        }
        self.sent[f].push(seq);
    }
    fn segment_arrived(&mut self, _now: Time, flow: u32, seq: u32) {
        let f = flow as usize;
        if self.arrived.len() <= f {
            self.arrived.resize(f + 1, Vec::new());
        }
        self.arrived[f].push(seq);
    }
}

fn with_host(mut spec: UncheckedSpec, host: &HostSpec) -> UncheckedSpec {
    for g in &mut spec.groups {
        g.host = host.clone();
    }
    spec
}

#[test]
fn processing_delays_never_reorder_a_flow() {
    for noise in [Noise::Exponential, Noise::Uniform] {
        // Delays of the order of a packet's serialization (600 µs at 20 Mbit/s): reordering would show.
        let host = HostSpec {
            noise,
            noise_scale_ns: 400_000,
            ..preset("testbed", 40)
        };
        let spec = with_host(cubic_vs_reno("ideal"), &host);
        let mut sim = Simulation::with_observer(spec.check().unwrap(), 3, SentArrived::default()).unwrap();
        sim.run();
        let obs = sim.observer();
        for (f, arrived) in obs.arrived.iter().enumerate() {
            // What arrived is what was sent, in the order sent, less what was dropped.
            let mut sent = obs.sent[f].iter();
            for seq in arrived {
                assert!(
                    sent.any(|s| s == seq),
                    "{noise:?} flow {f}: {seq} arrived out of order"
                );
            }
            assert!(arrived.len() > 100);
        }
    }
}

#[test]
fn each_timing_parameter_changes_the_run_and_keeps_it_reproducible() {
    let mut base = cubic_vs_reno("ideal");
    for g in &mut base.groups {
        g.pacing = true;
    }
    let ideal = digest(&run(&base, 1).0);
    let ms = |v| v * MS;
    let hosts = [
        HostSpec {
            noise: Noise::Exponential,
            noise_scale_ns: 5_000,
            ..HostSpec::default()
        },
        HostSpec {
            pacing_slack_ns: 10_000,
            ..HostSpec::default()
        },
        HostSpec {
            delack_granularity_ns: ms(4),
            ..HostSpec::default()
        },
        HostSpec {
            tso: true,
            ..HostSpec::default()
        },
        HostSpec {
            nic_rate_bps: 1_000_000_000,
            ..HostSpec::default()
        },
        HostSpec {
            gro: true,
            gro_flush_ns: 50_000,
            ..HostSpec::default()
        },
    ];
    for host in hosts {
        let spec = with_host(base.clone(), &host);
        let a = digest(&run(&spec, 1).0);
        assert_ne!(a, ideal, "{host:?} must change the run");
        assert_eq!(a, digest(&run(&spec, 1).0), "{host:?}: same seed, same run");
    }
}

/// Each segment's arrival at the bottleneck (its start of transmission less its sojourn), with its flow.
#[derive(Default)]
struct BottleneckArrivals(Vec<(u64, u32)>);

impl Observer for BottleneckArrivals {
    fn queue_departure(&mut self, now: Time, flow: u32, sojourn: ccfair_core::Dur, _wire_bytes: u32) {
        self.0.push(((now - sojourn).ns(), flow));
    }
}

/// `groups` groups of `per_group` unpaced Cubic flows (20 ms) through a 100 Mbit/s FIFO too large to drop,
/// each group on its own host, connected before the run: only full-sized data segments cross the NIC, so
/// every gap its serialization leaves is one full packet's.
fn offload_spec(groups: u32, per_group: u32, host: &HostSpec) -> UncheckedSpec {
    fifo_spec(
        100_000_000,
        QueueLimit::Packets(100_000),
        S,
        0,
        (0..groups)
            .map(|_| GroupSpec {
                connect: ConnectMode::BeforeRun,
                ..group("cubic", per_group, 20, 0, host.clone())
            })
            .collect(),
    )
}

/// The gaps between consecutive arrivals at the bottleneck, with whether the two were of one group.
fn arrival_gaps(spec: &UncheckedSpec) -> Vec<(u64, bool)> {
    let per_group = spec.groups[0].count;
    let mut sim =
        Simulation::with_observer(spec.clone().check().unwrap(), 1, BottleneckArrivals::default()).unwrap();
    sim.run();
    let mut arrivals = sim.observer().0.clone();
    arrivals.sort();
    assert!(arrivals.len() > 1000);
    arrivals
        .windows(2)
        .map(|w| (w[1].0 - w[0].0, w[0].1 / per_group == w[1].1 / per_group))
        .collect()
}

#[test]
fn a_nic_spaces_its_hosts_segments_by_their_serialization_time() {
    // 1500 B at 1 Gbit/s: 12 µs.
    const SERIALIZATION_NS: u64 = 12_000;
    let nic = HostSpec {
        tso: true,
        nic_rate_bps: 1_000_000_000,
        ..HostSpec::default()
    };
    // Two flows on one host: no two segments of the host closer than one serialization time, and the
    // bursts back to back, exactly that far apart.
    let gaps = arrival_gaps(&offload_spec(1, 2, &nic));
    assert!(
        gaps.iter().all(|&(g, _)| g >= SERIALIZATION_NS),
        "{:?}",
        gaps.iter().min()
    );
    let back_to_back = gaps.iter().filter(|&&(g, _)| g == SERIALIZATION_NS).count();
    assert!(back_to_back * 2 > gaps.len(), "{back_to_back} of {}", gaps.len());
    // An infinitely fast NIC hands a burst over at one instant.
    let gaps = arrival_gaps(&offload_spec(
        1,
        2,
        &HostSpec {
            nic_rate_bps: 0,
            ..nic.clone()
        },
    ));
    let together = gaps.iter().filter(|&&(g, _)| g == 0).count();
    assert!(together * 2 > gaps.len(), "{together} of {}", gaps.len());
    // Two hosts, one NIC each: segments of different hosts may arrive closer together.
    let gaps = arrival_gaps(&offload_spec(2, 1, &nic));
    assert!(gaps.iter().all(|&(g, same)| !same || g >= SERIALIZATION_NS));
    assert!(gaps.iter().any(|&(g, same)| !same && g < SERIALIZATION_NS));
}

/// One unpaced Cubic flow at 1 Gbit/s (10 ms, a BDP of buffer) for 2 s.
fn gigabit_flow(host: &HostSpec) -> UncheckedSpec {
    fifo_spec(
        1_000_000_000,
        QueueLimit::Packets(833),
        2 * S,
        0,
        vec![group("cubic", 1, 10, 0, host.clone())],
    )
}

/// ACKs the receiver sent per segment it delivered, over [`gigabit_flow`].
fn acks_per_segment(host: &HostSpec) -> f64 {
    let mut sim = Simulation::new(gigabit_flow(host).check().unwrap(), 1).unwrap();
    sim.run();
    let r = sim.receiver(0);
    assert!(r.delivered_segments > 50_000);
    r.acks_sent as f64 / r.delivered_segments as f64
}

#[test]
fn gro_makes_stretch_acks() {
    let plain = acks_per_segment(&HostSpec::default());
    // Segments arrive 12 µs apart: a 50 µs window merges about four, each acknowledged at once.
    let gro = acks_per_segment(&HostSpec {
        gro: true,
        gro_flush_ns: 50_000,
        ..HostSpec::default()
    });
    assert!(
        (0.45..=0.55).contains(&plain),
        "one ACK per two segments, got {plain}"
    );
    assert!(
        (1.0 / 45.0..=0.35).contains(&gro),
        "with GRO, {gro} ACKs per segment"
    );
    // A window shorter than the gap between arrivals merges nothing.
    let narrow = acks_per_segment(&HostSpec {
        gro: true,
        gro_flush_ns: 5_000,
        ..HostSpec::default()
    });
    assert!((narrow - plain).abs() < 0.05, "{narrow} vs {plain}");
}

/// The bursts of new data one sender sends: segments sent at one instant, one after the other.
#[derive(Default)]
struct Bursts {
    last: Option<Time>,
    sizes: Vec<u32>,
}

impl Observer for Bursts {
    fn segment_sent(&mut self, now: Time, _flow: u32, _seq: u32, retransmit: bool) {
        if retransmit {
            return;
        }
        match self.sizes.last_mut() {
            Some(n) if self.last == Some(now) => *n += 1,
            _ => self.sizes.push(1),
        }
        self.last = Some(now);
    }
}

/// The mean burst of the sender of [`gigabit_flow`] and what it delivered.
fn mean_burst(host: &HostSpec) -> (f64, u64) {
    let mut sim =
        Simulation::with_observer(gigabit_flow(host).check().unwrap(), 1, Bursts::default()).unwrap();
    sim.run();
    let sizes = &sim.observer().sizes;
    let mean = sizes.iter().map(|&n| n as f64).sum::<f64>() / sizes.len() as f64;
    (mean, sim.receiver(0).delivered_segments)
}

#[test]
fn an_unpaced_flow_with_tso_sends_bursts() {
    let (plain, plain_delivered) = mean_burst(&HostSpec::default());
    let (tso, tso_delivered) = mean_burst(&HostSpec {
        tso: true,
        ..HostSpec::default()
    });
    // Without TSO an ACK for two segments releases two; with TSO the sender defers until a burst is worth
    // sending (`tcp_tso_should_defer`).
    assert!(plain < 3.0, "{plain}");
    assert!(tso > 2.0 * plain, "{tso} vs {plain}");
    // Deferring does not starve the flow: it fills the link as well.
    assert!(tso_delivered as f64 > 0.9 * plain_delivered as f64);
}

/// One flow's send times and bottleneck arrival times, in order (neither drops nor reorders in between).
#[derive(Default)]
struct HostDelays {
    sent: Vec<u64>,
    arrived: Vec<u64>,
}

impl Observer for HostDelays {
    fn segment_sent(&mut self, now: Time, _flow: u32, _seq: u32, _retransmit: bool) {
        self.sent.push(now.ns());
    }
    fn queue_departure(&mut self, now: Time, _flow: u32, sojourn: ccfair_core::Dur, _wire_bytes: u32) {
        self.arrived.push((now - sojourn).ns());
    }
}

#[test]
fn tcp_small_queues_bound_what_waits_in_a_slow_nic() {
    // A 100 Mbit/s NIC in front of a 1 Gbit/s bottleneck: the NIC is the bottleneck. Without TSQ, Reno's
    // slow start, seeing no loss, would pile seconds of segments into the NIC's queue.
    let host = HostSpec {
        tso: true,
        nic_rate_bps: 100_000_000,
        ..HostSpec::default()
    };
    let mut spec = gigabit_flow(&host);
    spec.duration_ns = 3 * S;
    spec.measure_end_ns = 3 * S;
    spec.groups[0].cc = CcConfig::from_name_and_params("reno", &serde_json::Value::Null).unwrap();
    let mut sim = Simulation::with_observer(spec.check().unwrap(), 1, HostDelays::default()).unwrap();
    sim.run();
    let o = sim.observer();
    let n = o.arrived.len();
    assert!(n > 20_000, "{n} segments crossed the link");
    let waits: Vec<u64> = o.sent[..n].iter().zip(&o.arrived).map(|(s, a)| a - s).collect();
    let max_wait = *waits.iter().max().unwrap();
    // TSQ lets the host hold about 1 ms of the flow's pacing rate, but at least two of its skbs, and the
    // skb being sent: about three bursts of up to 45 segments, 16 ms at 100 Mbit/s; without it the queue
    // would grow by the NIC's rate for as long as slow start lasts.
    assert!(max_wait < 20 * MS, "a segment waited {max_wait} ns in its host");
    let out = sim.output();
    assert_eq!(out.totals.queue_drops, 0);
    // The NIC stays busy: the flow gets its rate.
    let rate = o.arrived.len() as f64 * 1500.0 * 8.0 / 3.0;
    assert!(rate > 0.9 * 100e6 * (2.9 / 3.0), "{rate} bit/s");
}

#[test]
fn every_segment_is_accounted_for_with_offloads() {
    // Segments in a sender's NIC queue are in the network; those a receiver's GRO holds have arrived.
    for host in ["testbed", "home"] {
        let (out, _) = run(&cubic_vs_reno(host), 5);
        let t = &out.totals;
        assert_eq!(
            t.sent_segments,
            t.arrived_segments + t.queue_drops + t.path_drops + t.in_flight_at_end,
            "{host}: {t:?}"
        );
        let delivered: u64 = out.flows.iter().map(|f| f.total.delivered_bytes).sum();
        assert!(delivered > 0);
    }
}

#[test]
fn flows_due_together_start_in_flow_order_start_spacing_apart() {
    // One thread starting flows due at one instant: the k-th starts k spacings later, over the groups, in
    // flow order; flows due at another instant count apart; the jitter comes on top.
    let spaced = HostSpec {
        start_spacing_ns: 150_000,
        ..HostSpec::default()
    };
    let spec = fifo_spec(
        10_000_000,
        QueueLimit::Packets(100),
        S,
        0,
        vec![
            group("cubic", 3, 20, 0, spaced.clone()),
            group("reno", 2, 20, 0, spaced.clone()),
            group("reno", 2, 20, 100, spaced.clone()),
        ],
    );
    let starts: Vec<u64> = ccfair_sim::traffic::flow_plans(&spec, 1)
        .iter()
        .map(|p| p.start_ns)
        .collect();
    let us = 1_000;
    assert_eq!(
        starts,
        vec![
            0,
            150 * us,
            300 * us,
            450 * us,
            600 * us,
            100 * MS,
            100 * MS + 150 * us
        ]
    );
    let jittered = HostSpec {
        start_jitter_ns: 50 * us,
        ..spaced
    };
    let mut spec = spec;
    spec.groups = vec![group("cubic", 4, 20, 0, jittered)];
    let starts: Vec<u64> = ccfair_sim::traffic::flow_plans(&spec, 3)
        .iter()
        .map(|p| p.start_ns)
        .collect();
    for (k, &t) in starts.iter().enumerate() {
        let k = k as u64;
        assert!(
            (k * 150 * us..k * 150 * us + 50 * us).contains(&t),
            "flow {k} at {t}"
        );
    }
}

#[test]
fn the_hosts_turnaround_lengthens_the_loop_the_handshake_measures() {
    // 26 µs at each end: the SYN-ACK comes back 52 µs later than over the bare path (plus the SYN's 48 µs
    // at 10 Mbit/s), and the flow's base RTT in its table stays the configured one.
    let host = HostSpec {
        turnaround_ns: 26_000,
        ..HostSpec::default()
    };
    let spec = fifo_spec(
        10_000_000,
        QueueLimit::Packets(100),
        S,
        0,
        vec![group("cubic", 1, 20, 0, host)],
    );
    let mut sim = Simulation::new(spec.check().unwrap(), 1).unwrap();
    sim.run_until(Time::from_ns(21 * MS));
    assert_eq!(sim.sender(0).rtt.min_rtt_us(), 20_000 + 52 + 48);
    sim.run();
    assert_eq!(sim.output().flows[0].rtt_ns, 20 * MS);
}
