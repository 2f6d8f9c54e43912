//! The receive window in whole runs: the sender never has data beyond the offered window, a buffer capped
//! below the BDP bounds the throughput at window / RTT and does not stall under loss, and autotuning grows
//! an uncapped buffer to the path's BDP.

use ccfair_aqm::{AqmConfig, QueueLimit};
use ccfair_cc::CcConfig;
use ccfair_core::{Observer, Time};
use ccfair_sim::host::HostSpec;
use ccfair_sim::{GroupSpec, LinkSpec, Simulation, UncheckedSpec};

const MS: u64 = 1_000_000;
const S: u64 = 1_000_000_000;

fn spec(cc: &str, rate_bps: u64, rtt_ms: u64, loss: f64, duration_s: u64, rmem: [u32; 3]) -> UncheckedSpec {
    let host = HostSpec {
        rcv_window: true,
        rmem_bytes: rmem,
        rcv_scaling_ratio: 160,
        ..HostSpec::default()
    };
    let bdp_packets = (rate_bps * rtt_ms / 1000 / 8 / 1500) as u32;
    UncheckedSpec {
        offloads: None,
        receive_buffer: None,
        duration_ns: duration_s * S,
        interval_ns: 100 * MS,
        measure_start_ns: duration_s * S / 2,
        measure_end_ns: duration_s * S,
        link: LinkSpec {
            rate_bps,
            mtu_bytes: 1500,
            aqm: AqmConfig::fifo(QueueLimit::Packets(bdp_packets)),
        },
        groups: vec![GroupSpec {
            delay: None,
            cc: CcConfig::from_name_and_params(cc, &serde_json::Value::Null).unwrap(),
            count: 1,
            rtt_ns: rtt_ms * MS,
            start_ns: 0,
            stop_ns: None,
            initial_window: 10,
            pacing: false,
            loss,
            ecn: ccfair_sim::tcp::EcnMode::Off,
            connect: Default::default(),
            host,
            size: None,
            arrivals: None,
        }],
    }
}

/// Payload delivered to the application, and when last.
#[derive(Default)]
struct Delivered {
    bytes: u64,
    bytes_in_window: u64,
    last: Time,
    window_start: Time,
}

impl Observer for Delivered {
    fn delivered_to_app(&mut self, now: Time, _flow: u32, _first_seq: u32, _segments: u32, bytes: u64) {
        self.bytes += bytes;
        if now >= self.window_start {
            self.bytes_in_window += bytes;
        }
        self.last = now;
    }
}

/// Runs `spec` checking the sender's invariants (among them snd_nxt within snd_una + snd_wnd) every few
/// events.
fn run_checked(spec: UncheckedSpec) -> Simulation<Delivered> {
    let obs = Delivered {
        window_start: Time::from_ns(spec.measure_start_ns),
        ..Delivered::default()
    };
    let mut sim = Simulation::with_observer(spec.check().unwrap(), 7, obs).unwrap();
    let end = sim.end();
    loop {
        let done = sim.run_until_events(end, 16);
        if let Err(e) = sim.sender(0).check_invariants() {
            panic!("at {}: {e}", sim.now());
        }
        if done {
            return sim;
        }
    }
}

#[test]
fn a_buffer_capped_below_the_bdp_bounds_throughput_at_window_per_rtt_and_survives_loss() {
    // 50 Mbit/s × 40 ms is 250 KB; the buffer is capped at 128 KiB, a window of 80 KiB at ratio 160.
    let rmem = [4096, 131_072, 131_072];
    let sim = run_checked(spec("bbr", 50_000_000, 40, 0.02, 8, rmem));
    let w = sim.receiver(0).window().unwrap();
    assert_eq!(w.rcvbuf(), 131_072, "the cap holds");
    let clamp = w.window_clamp();
    // At most one window per round trip (the RTT is at least the base RTT).
    let bound = clamp as f64 * 4.0 / 0.040; // bytes per 4 s of window
    let got = sim.observer().bytes_in_window as f64;
    assert!(
        got <= bound * 1.01,
        "{got} bytes in 4 s above the window bound {bound}"
    );
    assert!(
        got > bound * 0.3,
        "{got} bytes in 4 s: the flow stalled (bound {bound})"
    );
    // The window filled behind holes (the buffer asked for zero) but the flow kept going to the end.
    assert!(w.want_zero_windows > 0);
    assert!(sim.observer().last > Time::from_ns(7 * S + 500 * MS));
    assert_eq!(w.ofo_drops, 0);
}

#[test]
fn autotuning_grows_the_buffer_to_the_bdp() {
    // 100 Mbit/s × 100 ms is 1.25 MB: the first 128 KiB buffer would allow 6.5 Mbit/s.
    let sim = run_checked(spec(
        "cubic",
        100_000_000,
        100,
        0.0,
        10,
        [4096, 131_072, 32 << 20],
    ));
    let w = sim.receiver(0).window().unwrap();
    assert!(w.window_clamp() > 1_250_000, "window clamp {}", w.window_clamp());
    let goodput_bps = sim.observer().bytes_in_window as f64 * 8.0 / 5.0;
    assert!(goodput_bps > 90e6, "goodput {goodput_bps}");
    // Without autotuning the first buffer is the limit: one 80 KiB window per 100 ms at most.
    let mut fixed = spec("cubic", 100_000_000, 100, 0.0, 10, [4096, 131_072, 32 << 20]);
    fixed.groups[0].host.rcv_autotune = false;
    let sim = run_checked(fixed);
    let goodput_bps = sim.observer().bytes_in_window as f64 * 8.0 / 5.0;
    assert!(
        goodput_bps <= 81_920.0 * 8.0 / 0.1 * 1.01,
        "goodput {goodput_bps}"
    );
}

/// Drops at the bottleneck.
#[derive(Default)]
struct Drops(u32);

impl Observer for Drops {
    fn segment_dropped(&mut self, _now: Time, _flow: u32, _seq: u32, _reason: ccfair_core::DropReason) {
        self.0 += 1;
    }
}

/// Cubic's first slow start at 10 Mbps, 50 ms, 1 BDP: with the window model every skb that raises
/// `rcv_ssthresh` is ACKed at once (`tcp_grow_window`'s quick ACK), so through the slow start ACKs come one
/// serialization (1.2 ms) apart, under HyStart's 2 ms ACK-train gap, and the slow start ends on the train
/// before the queue overflows, as on the kernel (cwnd 63, no loss). Without the model delayed ACKs come
/// 2.4 ms apart and the slow start runs on into losses.
#[test]
fn window_growth_quick_acks_end_cubic_slow_start_on_the_ack_train() {
    // The state half a second in (the slow start is over by then on both).
    let first_slow_start = |rcv_window: bool| {
        let mut s = spec("cubic", 10_000_000, 50, 0.0, 2, [4096, 131_072, 32 << 20]);
        s.groups[0].host.rcv_window = rcv_window;
        let mut sim = Simulation::with_observer(s.check().unwrap(), 1, Drops::default()).unwrap();
        sim.run_until(Time::from_ns(500 * MS));
        (sim.observer().0, sim.sender(0).tp.snd_ssthresh)
    };
    let (drops_with, ssthresh_with) = first_slow_start(true);
    let (drops_without, ssthresh_without) = first_slow_start(false);
    assert_eq!(
        drops_with, 0,
        "slow start left on the ACK train, ssthresh {ssthresh_with}"
    );
    assert!((50..=75).contains(&ssthresh_with), "ssthresh {ssthresh_with}");
    assert!(
        drops_without >= 20,
        "{drops_without} drops without window-growth ACKs (ssthresh {ssthresh_without})"
    );
}
