//! Properties every algorithm in `ccfair_cc::algorithms()` must have, checked over random scripts of ACKs,
//! losses, timeouts and application-limited periods. New algorithms are covered automatically.
//!
//! - cwnd is never 0, and below 2 only as the stack's post-RTO window of 1 (`tcp_enter_loss` sets
//!   cwnd = in-flight + 1): no hook ever takes it there;
//! - ssthresh is never below 2;
//! - an ACK that the stack processes while the connection is not cwnd-limited does not grow cwnd (for
//!   algorithms that leave cwnd to `cong_avoid`: `cong_control` algorithms such as BBR size cwnd from their
//!   model and do not consult `tcp_is_cwnd_limited`);
//! - the same script gives the same trace;
//! - the `cong_control` and `needs_pacing` flags match what the algorithm's `cong_control` does.

use ccfair_cc::testing::{Ack, Driver};
use ccfair_cc::{CaState, algorithms};
use proptest::prelude::*;
use serde_json::json;

use super::driver;

/// One scripted event.
#[derive(Clone, Debug)]
enum Op {
    /// A full round trip of the ideal pipe.
    Round {
        rtt_ms: u64,
    },
    /// The application sends `n` packets.
    Send {
        n: u32,
    },
    /// One ACK.
    Ack {
        gap_us: u64,
        n: u32,
        rtt_ms: u64,
        ece: bool,
    },
    /// `n` packets are detected lost and recovery starts.
    Loss {
        n: u32,
    },
    /// ECN congestion signal.
    Cwr,
    /// The stack ends the reduction.
    Exit,
    /// The reduction was spurious.
    Undo,
    /// The retransmission timer fires.
    Rto,
    AppLimited {
        on: bool,
    },
    Idle {
        ms: u64,
    },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        8 => (1u64..300).prop_map(|rtt_ms| Op::Round { rtt_ms }),
        2 => (0u32..40).prop_map(|n| Op::Send { n }),
        4 => (0u64..50_000, 0u32..5, 1u64..300, any::<bool>())
            .prop_map(|(gap_us, n, rtt_ms, ece)| Op::Ack { gap_us, n, rtt_ms, ece }),
        1 => (0u32..4).prop_map(|n| Op::Loss { n }),
        1 => Just(Op::Cwr),
        1 => Just(Op::Exit),
        1 => Just(Op::Undo),
        1 => Just(Op::Rto),
        1 => any::<bool>().prop_map(|on| Op::AppLimited { on }),
        1 => (0u64..3_000).prop_map(|ms| Op::Idle { ms }),
    ]
}

/// What the trace records after each operation.
type Step = (u32, u32, CaState, u64, String);

/// Run `ops` on a fresh instance of `name`, checking the invariants after each operation.
fn run(name: &str, ops: &[Op]) -> Result<Vec<Step>, TestCaseError> {
    let mut d = driver(name, json!({}));
    // Keep slow start from exploding over long scripts.
    d.tp.snd_cwnd_clamp = 3_000;
    // ECN on for every algorithm, so that ECE (or, with Accurate ECN, CE counts) reaches each of them.
    d.tp.ecn_ok = true;
    let owns_cwnd = d.cc().flags().cong_control;
    let mut trace = Vec::with_capacity(ops.len());
    for (i, op) in ops.iter().enumerate() {
        let cwnd_before = d.cwnd();
        let state_before = d.state();
        match *op {
            Op::Round { rtt_ms } => {
                d.run_round(rtt_ms * 1_000);
            }
            Op::Send { n } => {
                d.send(n);
            }
            Op::Ack {
                gap_us,
                n,
                rtt_ms,
                ece,
            } => {
                d.ack_with(Ack {
                    advance_ns: gap_us * 1_000,
                    acked: n,
                    rtt_us: (rtt_ms * 1_000) as i64,
                    ece,
                    ce: if ece { n } else { 0 },
                    lost: 0,
                    ..Default::default()
                });
                let unchanged_state = d.state() == state_before
                    && matches!(state_before, CaState::Open | CaState::Disorder | CaState::Loss);
                if !owns_cwnd && unchanged_state && !d.tp.is_cwnd_limited {
                    prop_assert!(
                        d.cwnd() <= cwnd_before,
                        "{name}: op {i} {op:?}: cwnd grew {cwnd_before} -> {} while not cwnd-limited",
                        d.cwnd()
                    );
                }
            }
            Op::Loss { n } => {
                d.mark_lost(n);
                d.enter_recovery();
            }
            Op::Cwr => d.enter_cwr(),
            Op::Exit => d.exit_recovery(),
            Op::Undo => d.undo(),
            Op::Rto => d.rto(),
            Op::AppLimited { on } => d.app_limited(on),
            Op::Idle { ms } => d.advance(ms * 1_000_000),
        }
        let cwnd = d.cwnd();
        prop_assert!(cwnd >= 1, "{name}: op {i} {op:?}: cwnd 0");
        // BBRv1's packet conservation (`bbr_set_cwnd_to_recover_or_restore`) sets cwnd = in flight + delivered
        // in the first round of Recovery, which is 1 when a single packet was delivered and nothing else is in
        // flight: the kernel allows it, so does the contract (cwnd still covers what is in flight).
        let conserving = owns_cwnd && d.state() == CaState::Recovery && cwnd > d.in_flight();
        prop_assert!(
            cwnd >= 2 || matches!(op, Op::Rto) || cwnd_before < 2 || conserving,
            "{name}: op {i} {op:?}: cwnd {cwnd_before} -> {cwnd}"
        );
        prop_assert!(
            d.ssthresh() >= 2,
            "{name}: op {i} {op:?}: ssthresh {}",
            d.ssthresh()
        );
        trace.push((
            cwnd,
            d.ssthresh(),
            d.state(),
            d.tp.pacing_rate,
            format!("{:?}", d.vars()),
        ));
    }
    Ok(trace)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn invariants_hold_for_every_algorithm(ops in prop::collection::vec(op(), 1..80)) {
        for info in algorithms() {
            let first = run(info.name, &ops)?;
            let second = run(info.name, &ops)?;
            prop_assert_eq!(first, second, "{} is not deterministic", info.name);
        }
    }
}

/// Scripted counterpart of the cwnd-limited property, so it is exercised on every run.
#[test]
fn no_growth_on_acks_when_not_cwnd_limited() {
    for info in algorithms() {
        let mut d = driver(info.name, json!({}));
        if d.cc().flags().cong_control {
            continue;
        }
        for ssthresh in [None, Some(10)] {
            let mut d2 = driver(info.name, json!({}));
            if let Some(s) = ssthresh {
                d2.tp.snd_ssthresh = s;
            }
            d2.app_limited(true);
            let cwnd = d2.cwnd();
            for _ in 0..100 {
                d2.send(2);
                d2.ack(20_000_000, 2, 20_000);
            }
            assert_eq!(d2.cwnd(), cwnd, "{}: ssthresh {ssthresh:?}", info.name);
        }
        // Sanity: the same connection cwnd-limited does grow.
        d.run_rounds(3, 20_000);
        assert!(d.cwnd() > 10, "{} does not grow at all", info.name);
    }
}

/// Every algorithm's reduction keeps ssthresh ≥ 2, even from the smallest windows.
#[test]
fn ssthresh_floor_from_tiny_windows() {
    for info in algorithms() {
        for cwnd in [1u32, 2, 3] {
            let mut d: Driver = driver(info.name, json!({}));
            d.tp.snd_cwnd = cwnd;
            d.fill();
            d.enter_recovery();
            assert!(d.ssthresh() >= 2, "{}: cwnd {cwnd}", info.name);
            d.run_rounds(3, 10_000);
            assert!(d.cwnd() >= 2, "{}: cwnd {cwnd} -> {}", info.name, d.cwnd());
            d.rto();
            assert!(d.ssthresh() >= 2, "{}: after RTO", info.name);
        }
    }
}

/// The stack reads `CcFlags::cong_control` and `needs_pacing` instead of asking the implementation, so a flag
/// that does not match the code fails silently: an algorithm that sets cwnd and pacing in `cong_control` but
/// forgets the flag is never called, one that sets the flag without implementing the hook freezes cwnd, and
/// one that computes its own pacing rate without `needs_pacing` is not paced. So, for every algorithm, after
/// some traffic: calling `cong_control` on a copy of the socket with an implausible cwnd and pacing rate
/// changes them exactly when the flag says the algorithm owns them, and it sets the pacing rate exactly when
/// the algorithm asks the stack to enforce it.
#[test]
fn cong_control_and_needs_pacing_flags_match_the_implementation() {
    const RATE: u64 = 1;
    for info in algorithms() {
        let mut d = driver(info.name, json!({}));
        d.run_rounds(8, 20_000);
        d.fill();
        let rs = d.ack(1_000_000, 2, 20_000);
        assert!(rs.delivered > 0, "{}: the sample must be a real one", info.name);
        let mut tp = d.tp.clone();
        let cwnd = tp.snd_cwnd + 1_000;
        tp.snd_cwnd = cwnd;
        tp.pacing_rate = RATE;
        d.cc_mut().cong_control(&mut tp, &rs);
        let flags = d.cc().flags();
        let owns = tp.snd_cwnd != cwnd || tp.pacing_rate != RATE;
        assert_eq!(
            owns, flags.cong_control,
            "{}: cong_control changes cwnd/pacing: {owns}, flag: {}",
            info.name, flags.cong_control
        );
        let paces = tp.pacing_rate != RATE;
        assert_eq!(
            paces, flags.needs_pacing,
            "{}: sets its pacing rate: {paces}, needs_pacing: {}",
            info.name, flags.needs_pacing
        );
    }
}
