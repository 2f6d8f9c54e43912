//! CUBIC as Linux implements it: a port of `net/ipv4/tcp_cubic.c`, module version "2.3" (mainline), with the
//! kernel's state machine, units and integer arithmetic.
//!
//! **In a nutshell.** At a loss with cwnd = W_max the window drops to β·W_max; from then on ("the epoch") it
//! follows W(t) = C·(t − K)³ + W_max, where K = ∛((W_max − cwnd)/C) is when the curve is back at W_max: a concave
//! approach, a plateau around W_max, then convex probing. Per ACK the curve becomes "+1 packet per `cnt` ACKed
//! packets", `cnt` being recomputed from the target one minimum RTT ahead. A Reno estimate (the Reno-friendly
//! region) keeps growth at least at Reno's pace, and HyStart ends the first slow start before it overshoots.
//!
//! **Constants** (kernel integers; every one follows from the module parameters):
//! - β = `beta`/1024 = 717/1024 ≈ 0.7002: the multiplicative decrease, in 1/1024 (`BICTCP_BETA_SCALE`).
//! - C = `bic_scale`·10/1024 = 410/1024 ≈ 0.4004 pkt/s³, with `bic_scale` = 41. The ·10 is a historical
//!   100 ms reference RTT folded into the scale (`cube_rtt_scale` = 410); hence `c` ↦ `bic_scale` = c·1024/10.
//! - `BICTCP_HZ` = 10: inside the cubic, time is counted in 1/1024 s, so t³ fits in 64 bits.
//! - `cube_factor` = 2^40/410: K in 1/1024 s is ∛(2^30·(W_max − cwnd)/C) = ∛((W_max − cwnd)·2^40/410).
//!   The target offset is `delta = (410·|t − K|³) >> 40` (= C·|t − K|³ in packets, t in 1/1024 s).
//! - `beta_scale` = 8·(1024 + β)/3/(1024 − β) = 15 (integer division): the Reno estimate gains one packet per
//!   cwnd·15/8 ACKed packets, i.e. α = 8/15 ≈ 0.53 pkt/RTT ≈ 3(1 − β)/(1 + β), the AIMD increase that gives
//!   Reno's throughput under a decrease to β.
//! - cnt ≤ 20 while W_max = 0 (no loss yet): after a HyStart exit the curve starts flat at K = 0, so growth is
//!   held at ≥ 5 % per RTT until the first loss. cnt ≥ 2: at most +1 per 2 ACKed packets, ≤ 1.5× per RTT.
//! - HyStart: active from cwnd ≥ `hystart_low_window` = 16; ACKs at most `hystart_ack_delta_us` = 2 ms apart
//!   form a train; the delay test waits for `HYSTART_MIN_SAMPLES` = 8 RTT samples per round and fires when
//!   the round's minimum RTT exceeds delay_min + clamp(delay_min/8, 4 ms, 16 ms).
//!
//! **Deviations from the kernel** (nothing else differs):
//! - K uses an exact integer cube root (floor) instead of the 64-entry table plus one Newton step, whose
//!   average error is 0.195 %; K may differ by that much.
//! - "No epoch" is an explicit state. The kernel stores it as `epoch_start == 0`, a jiffies value it reaches
//!   once per 49.7 days; the simulated clock starts at jiffy 0, where the sentinel would misfire.
//! - No overflow: the kernel's u32/u64 products wrap only for windows above ~2.4 M packets or a cubic offset
//!   |t − K| beyond ~350 s (its comment promises correctness for cwnd < 1 M packets); here they are computed
//!   wide and saturate. The Reno estimate's catch-up loop is evaluated in closed form (same result) with a step
//!   of at least 1 (for a tiny `beta` parameter the kernel's step cwnd·beta_scale/8 can be 0 and its loop
//!   would never end).
//! - Parameters are floats here: `beta` ↦ round(beta·1024) clamped to 1..=1023, `c` ↦ `bic_scale` =
//!   round(c·1024/10), at least 1.
//! - `hystart_ack_delay` assumes Linux's default `sk_gso_max_size` of 65536 bytes (also what a socket gets
//!   on a device with segmentation offload off: `sk_setup_caps` always gives TCP `NETIF_F_GSO`, software
//!   GSO, and takes the device's `gso_max_size`), and the socket counts as paced (`sk_pacing_status !=
//!   SK_PACING_NONE`) exactly when the stack paces it (`tp.internal_pacing`).
//! - Sequence numbers (HyStart's round end) are in segments rather than bytes, as everywhere in the simulator.
//!
//! **Linux vs RFC 9438:**
//!
//! | Aspect | RFC 9438 | Linux (this port) |
//! |---|---|---|
//! | C, β | 0.4, 0.7 | 410/1024 ≈ 0.4004, 717/1024 ≈ 0.7002 |
//! | Target | W_cubic(t + RTT), clamped to [cwnd, 1.5·cwnd] | W_cubic(t + delay_min) (minimum, not smoothed RTT); cnt ≥ 2 gives the 1.5× cap |
//! | Reno-friendly W_est | α = 3(1−β)/(1+β) until W_est reaches the pre-loss cwnd, then α = 1 | α ≈ 8/15 forever |
//! | Use of W_est | cwnd = W_est when W_cubic < W_est | caps cnt so cwnd keeps up with the estimate |
//! | Decrease | ssthresh = max(β·flight size or cwnd, 2) | max(cwnd·717/1024, 2) |
//! | Fast convergence | W_max = cwnd·(1+β)/2 | same: cwnd·1741/2048 |
//! | Timeout | reset of the congestion state | full reset (W_max = 0, delay_min = 0) on entering Loss |
//! | Slow start | HyStart++ (RFC 9406) recommended | original HyStart (ACK train and delay increase) |
//! | First epoch without loss | — | cnt ≤ 20 (≥ 5 % per RTT) |
//! | Application-limited | no growth when not cwnd-limited | cwnd-limited gate; epoch shifted by idle time |
//! | Clock | continuous | the host's jiffies (1 ms at HZ=1000, 4 ms at HZ=250); cnt recomputed at most once per jiffy, and at most every HZ/32 jiffies (31 ms at 1000, 28 ms at 250) while cwnd is unchanged |

use serde::{Deserialize, Serialize};

use ccfair_core::seq::after;
use ccfair_core::{FieldError, Jiffies, ParamDoc};

use crate::reno;
use crate::sock::{AckSample, CaEvent, CaState};
use crate::{CcVars, CongestionControl, TcpSock};

/// Scale of `beta` (β = beta/1024).
const BICTCP_BETA_SCALE: u32 = 1024;
/// Time inside the cubic is in 2^-10 s.
const BICTCP_HZ: u32 = 10;
/// `hystart_detect` bit: ACK-train detection.
const HYSTART_ACK_TRAIN: u8 = 0x1;
/// `hystart_detect` bit: delay-increase detection.
const HYSTART_DELAY: u8 = 0x2;
/// RTT samples per round before the delay test runs.
const HYSTART_MIN_SAMPLES: u8 = 8;
/// Lower clamp of the delay-increase threshold, µs.
const HYSTART_DELAY_MIN: u32 = 4_000;
/// Upper clamp of the delay-increase threshold, µs.
const HYSTART_DELAY_MAX: u32 = 16_000;
/// Linux's default `sk_gso_max_size` (`GSO_LEGACY_MAX_SIZE`), bytes.
const GSO_MAX_SIZE: u64 = 65_536;

/// Module parameters of `tcp_cubic.c`, with the kernel defaults.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CubicParams {
    /// Multiplicative decrease factor β (kernel: `beta` = 717/1024; used as round(beta·1024)/1024).
    pub beta: f64,
    /// Cubic scaling constant C in packets/s³ (kernel: `bic_scale` = 41, C = 41·10/1024 = 0.4004; used as
    /// round(c·1024/10)·10/1024, so the default 0.4 is exactly the kernel's value).
    pub c: f64,
    pub fast_convergence: bool,
    pub tcp_friendliness: bool,
    pub hystart: bool,
    /// 1 = ACK train, 2 = delay increase, 3 = both.
    pub hystart_detect: u8,
    pub hystart_low_window: u32,
    pub hystart_ack_delta_us: u32,
    /// Initial ssthresh in packets, used only with HyStart off (0 = infinite).
    pub initial_ssthresh: u32,
}

impl Default for CubicParams {
    fn default() -> Self {
        CubicParams {
            beta: 717.0 / 1024.0,
            c: 0.4,
            fast_convergence: true,
            tcp_friendliness: true,
            hystart: true,
            hystart_detect: 3,
            hystart_low_window: 16,
            hystart_ack_delta_us: 2000,
            initial_ssthresh: 0,
        }
    }
}

pub const PARAMS: &[ParamDoc] = &[
    ParamDoc {
        name: "beta",
        allowed: "0 < beta < 1",
        doc: "multiplicative decrease factor (kernel 717/1024)",
    },
    ParamDoc {
        name: "c",
        allowed: "0 < c <= 100",
        doc: "cubic scaling constant C, packets/s^3 (kernel 0.4)",
    },
    ParamDoc {
        name: "fast_convergence",
        allowed: "true | false",
        doc: "release bandwidth faster (W_max reduced further)",
    },
    ParamDoc {
        name: "tcp_friendliness",
        allowed: "true | false",
        doc: "Reno-friendly region",
    },
    ParamDoc {
        name: "hystart",
        allowed: "true | false",
        doc: "HyStart slow-start exit",
    },
    ParamDoc {
        name: "hystart_detect",
        allowed: "1 | 2 | 3",
        doc: "1 ACK train, 2 delay, 3 both",
    },
    ParamDoc {
        name: "hystart_low_window",
        allowed: ">= 2",
        doc: "HyStart active from this cwnd",
    },
    ParamDoc {
        name: "hystart_ack_delta_us",
        allowed: ">= 1",
        doc: "max ACK spacing within a train, us",
    },
    ParamDoc {
        name: "initial_ssthresh",
        allowed: ">= 0",
        doc: "initial ssthresh, packets (0 = infinite; only without HyStart)",
    },
];

impl CubicParams {
    pub fn validate(&self) -> Result<(), FieldError> {
        let err = FieldError::err;
        if !(self.beta > 0.0 && self.beta < 1.0) {
            return err("beta", "must be between 0 and 1 (exclusive)");
        }
        if !(self.c > 0.0 && self.c <= 100.0) {
            return err("c", "must be in (0, 100]");
        }
        if !(1..=3).contains(&self.hystart_detect) {
            return err("hystart_detect", "must be 1, 2 or 3");
        }
        if self.hystart_low_window < 2 {
            return err("hystart_low_window", "must be at least 2");
        }
        if self.hystart_ack_delta_us == 0 {
            return err("hystart_ack_delta_us", "must be at least 1");
        }
        Ok(())
    }
}

/// `bictcp_clock_us`: the low 32 bits of `tcp_mstamp`.
#[inline]
fn clock_us(tp: &TcpSock) -> u32 {
    tp.now.us() as u32
}

/// ⌊∛a⌋, exact (the kernel's `cubic_root` approximates this to 0.2 % with a table and one Newton step).
fn cube_root(a: u64) -> u32 {
    let cube = |x: u64| (x as u128).pow(3);
    let a128 = a as u128;
    // A floating-point first guess, then exact integer correction (the result does not depend on libm).
    let mut x = (a as f64).cbrt() as u64;
    while x > 0 && cube(x) > a128 {
        x -= 1;
    }
    while cube(x + 1) <= a128 {
        x += 1;
    }
    x as u32
}

/// `hystart_ack_delay`: a cushion for TSO/GRO batching, min(1 ms, 4 GSO packets at the pacing rate), µs.
fn hystart_ack_delay(tp: &TcpSock) -> u32 {
    if tp.pacing_rate == 0 {
        return 0;
    }
    (GSO_MAX_SIZE * 4 * 1_000_000 / tp.pacing_rate).min(1_000) as u32
}

/// One CUBIC connection: the module's precomputed constants and `struct bictcp`.
#[derive(Clone, Debug)]
pub struct Cubic {
    params: CubicParams,
    /// β·1024 (kernel `beta`).
    beta: u32,
    /// 8·(1024+β)/3/(1024−β): Reno-estimate slope (kernel `beta_scale`).
    beta_scale: u32,
    /// C·1024 = bic_scale·10 (kernel `cube_rtt_scale`).
    cube_rtt_scale: u32,
    /// 2^40 / cube_rtt_scale (kernel `cube_factor`).
    cube_factor: u64,

    /// Packets to ACK per +1 of cwnd.
    cnt: u32,
    /// W_max: cwnd at the last loss (after fast convergence), packets.
    last_max_cwnd: u32,
    /// cwnd at the last full recomputation of `cnt`.
    last_cwnd: u32,
    /// Jiffies of the last full recomputation of `cnt`.
    last_time: u32,
    /// The cubic's plateau: W_max, or cwnd at the epoch start when that is above W_max.
    bic_origin_point: u32,
    /// K in 2^-10 s.
    bic_k: u32,
    /// Minimum RTT seen, µs (0 = none yet).
    delay_min: u32,
    /// Jiffies when the current epoch began; `None` between a reduction and the next growth.
    epoch_start: Option<u32>,
    /// ACKed packets not yet credited to the Reno estimate.
    ack_cnt: u32,
    /// The Reno estimate of cwnd, packets.
    tcp_cwnd: u32,

    /// HyStart: RTT samples in the current round (up to `HYSTART_MIN_SAMPLES`).
    sample_cnt: u8,
    /// HyStart has ended slow start (reset only by `init` and by an RTO).
    found: bool,
    /// HyStart: µs timestamp of the round's start.
    round_start: u32,
    /// HyStart: the round ends when snd_una passes this (snd_nxt at the round's start), segments.
    end_seq: u32,
    /// HyStart: µs timestamp of the last ACK of the current train.
    last_ack: u32,
    /// HyStart: minimum RTT of the current round, µs.
    curr_rtt: u32,
}

impl Cubic {
    /// A connection with these parameters (the module's load-time precomputation happens here).
    pub fn new(params: CubicParams) -> Cubic {
        let beta = ((params.beta * BICTCP_BETA_SCALE as f64).round() as u32).clamp(1, BICTCP_BETA_SCALE - 1);
        let bic_scale = ((params.c * 1024.0 / 10.0).round() as u32).max(1);
        let beta_scale = 8 * (BICTCP_BETA_SCALE + beta) / 3 / (BICTCP_BETA_SCALE - beta);
        let cube_rtt_scale = bic_scale * 10;
        let cube_factor = (1u64 << (10 + 3 * BICTCP_HZ)) / cube_rtt_scale as u64;
        Cubic {
            params,
            beta,
            beta_scale,
            cube_rtt_scale,
            cube_factor,
            cnt: 0,
            last_max_cwnd: 0,
            last_cwnd: 0,
            last_time: 0,
            bic_origin_point: 0,
            bic_k: 0,
            delay_min: 0,
            epoch_start: None,
            ack_cnt: 0,
            tcp_cwnd: 0,
            sample_cnt: 0,
            found: false,
            round_start: 0,
            end_seq: 0,
            last_ack: 0,
            curr_rtt: 0,
        }
    }

    /// `bictcp_reset`: clears the congestion state (not the HyStart round, which has its own reset).
    fn reset(&mut self) {
        self.cnt = 0;
        self.last_max_cwnd = 0;
        self.last_cwnd = 0;
        self.last_time = 0;
        self.bic_origin_point = 0;
        self.bic_k = 0;
        self.delay_min = 0;
        self.epoch_start = None;
        self.ack_cnt = 0;
        self.tcp_cwnd = 0;
        self.found = false;
    }

    /// `bictcp_hystart_reset`: start a new HyStart round at the current snd_nxt.
    fn hystart_reset(&mut self, tp: &TcpSock) {
        let now = clock_us(tp);
        self.round_start = now;
        self.last_ack = now;
        self.end_seq = tp.snd_nxt;
        self.curr_rtt = u32::MAX;
        self.sample_cnt = 0;
    }

    /// `bictcp_update`: recompute `cnt` for the current cwnd.
    fn update(&mut self, clock: Jiffies, now: u32, cwnd: u32, acked: u32) {
        self.ack_cnt = self.ack_cnt.saturating_add(acked);

        // Nothing changed recently: keep cnt (the Reno estimate is not advanced either).
        if self.last_cwnd == cwnd && (now.wrapping_sub(self.last_time) as i32) <= (clock.hz() / 32) as i32 {
            return;
        }

        // The cubic part runs at most once per jiffy; a reduction clears the epoch, which forces it.
        if self.epoch_start.is_none() || now != self.last_time {
            self.update_cubic(clock, now, cwnd, acked);
        }

        if self.params.tcp_friendliness {
            self.update_reno_estimate(cwnd);
        }

        self.cnt = self.cnt.max(2);
    }

    /// The cubic half of `bictcp_update`: epoch start, K, target and the resulting `cnt`.
    fn update_cubic(&mut self, clock: Jiffies, now: u32, cwnd: u32, acked: u32) {
        self.last_cwnd = cwnd;
        self.last_time = now;

        let epoch_start = match self.epoch_start {
            Some(e) => e,
            None => {
                self.epoch_start = Some(now);
                self.ack_cnt = acked;
                self.tcp_cwnd = cwnd;
                if self.last_max_cwnd <= cwnd {
                    // Already at or above W_max: the curve starts on its plateau here.
                    self.bic_k = 0;
                    self.bic_origin_point = cwnd;
                } else {
                    let gap = (self.last_max_cwnd - cwnd) as u64;
                    self.bic_k = cube_root(self.cube_factor.saturating_mul(gap));
                    self.bic_origin_point = self.last_max_cwnd;
                }
                now
            }
        };

        // Evaluate the curve one minimum RTT ahead, in 2^-10 s.
        let elapsed = (now.wrapping_sub(epoch_start) as i32).max(0) as u64;
        let t = ((elapsed + clock.from_us(self.delay_min as u64)) << BICTCP_HZ) / clock.hz() as u64;
        let k = self.bic_k as u64;
        let offs = t.abs_diff(k) as u128;
        let delta = (self.cube_rtt_scale as u128 * offs * offs * offs) >> (10 + 3 * BICTCP_HZ);
        let delta = delta.min(u32::MAX as u128) as u32;
        let target = if t < k {
            self.bic_origin_point.saturating_sub(delta)
        } else {
            self.bic_origin_point.saturating_add(delta)
        };

        self.cnt = if target > cwnd {
            cwnd / (target - cwnd)
        } else {
            // At or above the curve: grow very slowly.
            cwnd.saturating_mul(100)
        };

        // Before the first loss the curve gives no information: grow at least 5 % per RTT.
        if self.last_max_cwnd == 0 && self.cnt > 20 {
            self.cnt = 20;
        }
    }

    /// The Reno-friendly half of `bictcp_update`: advance the Reno estimate and let it bound `cnt`.
    fn update_reno_estimate(&mut self, cwnd: u32) {
        let step = ((cwnd as u64 * self.beta_scale as u64) >> 3).clamp(1, u32::MAX as u64) as u32;
        if self.ack_cnt > step {
            // The kernel subtracts `step` while ack_cnt > step; same result, in one go.
            let n = (self.ack_cnt - 1) / step;
            self.ack_cnt -= n * step;
            self.tcp_cwnd = self.tcp_cwnd.saturating_add(n);
        }
        if self.tcp_cwnd > cwnd {
            let max_cnt = cwnd / (self.tcp_cwnd - cwnd);
            self.cnt = self.cnt.min(max_cnt);
        }
    }

    /// `hystart_update`: called with each RTT sample while in slow start and HyStart has not fired.
    fn hystart_update(&mut self, tp: &mut TcpSock, delay: u32) {
        if after(tp.snd_una, self.end_seq) {
            self.hystart_reset(tp);
        }

        if tp.snd_cwnd < self.params.hystart_low_window {
            return;
        }

        if self.params.hystart_detect & HYSTART_ACK_TRAIN != 0 {
            let now = clock_us(tp);
            let ack_delta = self.params.hystart_ack_delta_us.min(i32::MAX as u32) as i32;
            if (now.wrapping_sub(self.last_ack) as i32) <= ack_delta {
                self.last_ack = now;
                let mut threshold = self.delay_min.wrapping_add(hystart_ack_delay(tp));
                // Without pacing a train may exit after half a minimum RTT; paced sending spreads the
                // round's ACKs over up to a whole RTT.
                if !tp.internal_pacing {
                    threshold >>= 1;
                }
                if now.wrapping_sub(self.round_start) > threshold {
                    self.found = true;
                    tp.snd_ssthresh = tp.snd_cwnd;
                }
            }
        }

        if self.params.hystart_detect & HYSTART_DELAY != 0 {
            self.curr_rtt = self.curr_rtt.min(delay);
            if self.sample_cnt < HYSTART_MIN_SAMPLES {
                self.sample_cnt += 1;
            } else {
                let margin = (self.delay_min >> 3).clamp(HYSTART_DELAY_MIN, HYSTART_DELAY_MAX);
                if self.curr_rtt > self.delay_min.saturating_add(margin) {
                    self.found = true;
                    tp.snd_ssthresh = tp.snd_cwnd;
                }
            }
        }
    }
}

impl CongestionControl for Cubic {
    fn name(&self) -> &'static str {
        CubicParams::NAME
    }

    /// `cubictcp_init`.
    fn init(&mut self, tp: &mut TcpSock) {
        self.reset();
        if self.params.hystart {
            self.hystart_reset(tp);
        }
        if !self.params.hystart && self.params.initial_ssthresh != 0 {
            tp.snd_ssthresh = self.params.initial_ssthresh;
        }
    }

    /// `cubictcp_recalc_ssthresh`: end the epoch, remember W_max (with fast convergence), return β·cwnd.
    fn ssthresh(&mut self, tp: &mut TcpSock) -> u32 {
        self.epoch_start = None;
        let cwnd = tp.snd_cwnd as u64;
        let scale = BICTCP_BETA_SCALE as u64;
        self.last_max_cwnd = if tp.snd_cwnd < self.last_max_cwnd && self.params.fast_convergence {
            // A loss below the previous W_max: another flow is likely taking bandwidth, so release some.
            (cwnd * (scale + self.beta as u64) / (2 * scale)) as u32
        } else {
            tp.snd_cwnd
        };
        ((cwnd * self.beta as u64 / scale) as u32).max(2)
    }

    /// `cubictcp_cong_avoid`.
    fn cong_avoid(&mut self, tp: &mut TcpSock, mut acked: u32) {
        if !tp.is_cwnd_limited {
            return;
        }
        if tp.in_slow_start() {
            acked = reno::slow_start(tp, acked);
            if acked == 0 {
                return;
            }
        }
        self.update(tp.jiffies, tp.jiffies32(), tp.snd_cwnd, acked);
        reno::cong_avoid_ai(tp, self.cnt, acked);
    }

    /// `cubictcp_state`: an RTO forgets everything, including W_max and delay_min.
    fn set_state(&mut self, tp: &mut TcpSock, new_state: CaState) {
        if new_state == CaState::Loss {
            self.reset();
            self.hystart_reset(tp);
        }
    }

    /// `cubictcp_cwnd_event`: after an idle period, shift the epoch by the idle time so the curve resumes
    /// where it stopped instead of jumping ahead.
    fn cwnd_event(&mut self, tp: &mut TcpSock, ev: CaEvent) {
        if ev != CaEvent::TxStart {
            return;
        }
        let now = tp.jiffies32();
        let idle = now.wrapping_sub(tp.jiffies.at(tp.lsndtime)) as i32;
        let Some(start) = self.epoch_start else {
            return;
        };
        if idle > 0 {
            let mut start = start.wrapping_add(idle as u32);
            if after(start, now) {
                start = now;
            }
            self.epoch_start = Some(start);
        }
    }

    /// `cubictcp_acked`: track delay_min and feed HyStart.
    fn pkts_acked(&mut self, tp: &mut TcpSock, sample: &AckSample) {
        if sample.rtt_us < 0 {
            return;
        }
        // Samples in the first second of an epoch (right after a recovery) may be inflated: skip them.
        let now = tp.jiffies32();
        if self
            .epoch_start
            .is_some_and(|start| (now.wrapping_sub(start) as i32) < tp.jiffies.hz() as i32)
        {
            return;
        }
        let delay = (sample.rtt_us.min(u32::MAX as i64) as u32).max(1);
        if self.delay_min == 0 || self.delay_min > delay {
            self.delay_min = delay;
        }
        if !self.found && tp.in_slow_start() && self.params.hystart {
            self.hystart_update(tp, delay);
        }
    }

    // undo_cwnd: the kernel uses tcp_reno_undo_cwnd, which is the trait default (W_max is not restored).

    /// `aux` = W_max in packets.
    fn vars(&self) -> CcVars {
        CcVars {
            aux: self.last_max_cwnd as f64,
            ..CcVars::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cube_root_is_exact_floor() {
        for x in [0u64, 1, 2, 3, 7, 10, 1_000, 2_642_245] {
            let c = x * x * x;
            assert_eq!(cube_root(c), x as u32);
            if x > 0 {
                assert_eq!(cube_root(c - 1), x as u32 - 1);
                assert_eq!(cube_root(c + 1), x as u32);
            }
        }
        assert_eq!(cube_root(u64::MAX), 2_642_245);
        // K for W_max − cwnd = 300 with the default C: ∛(300/0.4004) s ≈ 9.08 s ≈ 9300/1024 s.
        let cc = Cubic::new(CubicParams::default());
        assert_eq!(cc.cube_factor, (1u64 << 40) / 410);
        assert_eq!(cc.beta_scale, 15);
        let k = cube_root(cc.cube_factor * 300) as f64 / 1024.0;
        assert!((k - (300.0f64 * 1024.0 / 410.0).cbrt()).abs() < 1e-3, "{k}");
    }

    #[test]
    fn parameters_map_to_kernel_integers() {
        let cc = Cubic::new(CubicParams::default());
        assert_eq!((cc.beta, cc.cube_rtt_scale), (717, 410));
        let cc = Cubic::new(CubicParams {
            beta: 0.5,
            c: 1.0,
            ..CubicParams::default()
        });
        assert_eq!((cc.beta, cc.cube_rtt_scale), (512, 1020));
        // Extremes stay usable (no division by zero).
        let cc = Cubic::new(CubicParams {
            beta: 1e-9,
            c: 1e-9,
            ..CubicParams::default()
        });
        assert_eq!((cc.beta, cc.cube_rtt_scale), (1, 10));
    }
}
