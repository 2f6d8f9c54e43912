//! Runs a small scenario and prints its totals: `cargo run --release --example quick -- reno 10e6 50 1.0 30`.
use ccfair_aqm::{AqmConfig, QueueLimit};
use ccfair_cc::CcConfig;
use ccfair_sim::{GroupSpec, LinkSpec, ScenarioSpec, Simulation};

fn main() {
    let a: Vec<String> = std::env::args().collect();
    let cc = a.get(1).map_or("reno", |s| s.as_str());
    let rate: f64 = a.get(2).map_or(10e6, |s| s.parse().unwrap());
    let rtt_ms: u64 = a.get(3).map_or(50, |s| s.parse().unwrap());
    let bdp_mult: f64 = a.get(4).map_or(1.0, |s| s.parse().unwrap());
    let dur_s: u64 = a.get(5).map_or(30, |s| s.parse().unwrap());
    let n: u32 = a.get(6).map_or(1, |s| s.parse().unwrap());
    let loss: f64 = a.get(7).map_or(0.0, |s| s.parse().unwrap());
    let bdp_pkts = (rate * rtt_ms as f64 / 1000.0 / 8.0 / 1500.0 * bdp_mult).max(1.0) as u32;
    let spec = ScenarioSpec {
        duration_ns: dur_s * 1_000_000_000,
        interval_ns: 100_000_000,
        measure_start_ns: dur_s * 200_000_000,
        measure_end_ns: dur_s * 1_000_000_000,
        link: LinkSpec {
            rate_bps: rate as u64,
            mtu_bytes: 1500,
            aqm: AqmConfig::Fifo {
                limit: QueueLimit::Packets(bdp_pkts),
            },
        },
        groups: vec![GroupSpec {
            cc: CcConfig::from_name_and_params(cc, &serde_json::Value::Null).unwrap(),
            count: n,
            rtt_ns: rtt_ms * 1_000_000,
            start_ns: 0,
            stop_ns: None,
            initial_window: 10,
            pacing: false,
            loss,
            ecn: false,
        }],
    };
    let mut sim = Simulation::new(spec, 1).unwrap();
    let t0 = std::time::Instant::now();
    sim.run();
    let wall = t0.elapsed().as_secs_f64();
    let out = sim.output();
    let t = &out.totals;
    let util = t.window_link_tx_bytes as f64 * 8.0 / (rate * t.window_ns as f64 * 1e-9);
    println!(
        "events {} wall {:.3}s ({:.2} Mev/s) util {:.4} qdrops {} pathdrops {} sojourn p50 {:.2}ms p99 {:.2}ms",
        t.events,
        wall,
        t.events as f64 / wall / 1e6,
        util,
        t.window_queue_drops,
        t.window_path_drops,
        t.window_sojourn_p50_ns / 1e6,
        t.window_sojourn_p99_ns / 1e6
    );
    for f in out.flows.iter().take(10) {
        println!(
            "flow {} goodput {:.3} Mbps retrans {} rtos {} rtt mean {:.2} ms",
            f.flow_id,
            f.window.delivered_bytes as f64 * 8.0 / (t.window_ns as f64 * 1e-9) / 1e6,
            f.window.retransmitted_segments,
            f.total.rto_events,
            f.rtt_mean_ns / 1e6
        );
    }
    for i in 0..sim.recorder().flows.t_ns.len().min(400) {
        if i % 20 == 0 {
            let s = &sim.recorder().flows;
            println!(
                "t={:.1} cwnd {} ssth {} srtt {:.1}ms gp {:.2}Mbps",
                s.t_ns[i] as f64 / 1e9,
                s.cwnd[i],
                s.ssthresh[i],
                s.srtt_ns[i] as f64 / 1e6,
                s.goodput_bps[i] / 1e6
            );
        }
    }
    for i in 0..n {
        sim.sender(i).check_invariants().unwrap();
    }
}
