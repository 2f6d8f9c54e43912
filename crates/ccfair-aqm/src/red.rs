//! RED, Random Early Detection (Floyd & Jacobson, IEEE/ACM ToN 1993; Linux `include/net/red.h`,
//! `net/sched/sch_red.c`, with the parameter derivation of iproute2's `tc/q_red.c` and `tc/tc_red.c`).
//!
//! In a nutshell: on every arrival the average queue avg ← (1 − W)·avg + W·backlog (bytes, W = 2^−Wlog);
//! after an idle period avg first decays as if (1 − W)^m, m = idle time / one packet's transmission time.
//! Below min the packet passes; at or above max it is hard-marked (dropped, or CE-marked with `ecn`); in between
//! it is marked with p_b = max_p·(avg − min)/(max − min), spread uniformly by counting packets since the last mark
//! (the paper's p_a = p_b/(1 − count·p_b)), which Linux does divisionless: it draws qR uniform in
//! [0, (max − min)/max_p) once per mark and marks when (avg − min)·count ≥ qR.
//!
//! Constants and derivations (Linux has no kernel defaults; `tc` computes them, and we do as `tc` does): max =
//! limit/4 and min = max/3 when not given (Floyd's REDparameters advice, `q_red.c`), except in a buffer too small
//! for them (under about 15 average packets, where tc itself finds no EWMA weight): there min = 2·avpkt and max =
//! 3·min, the smallest thresholds tc's rules admit; burst = (2·min + max)/(3·avpkt)
//! packets; Wlog = the smallest with burst + 1 − min/avpkt ≤ (1 − (1 − W)^burst)/W (`tc_red_eval_ewma`);
//! max_p = probability·2³² (tc's `TCA_RED_MAX_P`, probability 0.02 by default); the idle-decay table Stab and
//! Scell_log from avpkt and the link rate (`tc_red_eval_idle_damping`); adaptive RED (Floyd, Gummadi & Shenker
//! 2001) every 500 ms when enabled: max_p += min(1 %, max_p/4) if avg is above min + 0.6·(max − min) and
//! max_p ≤ 50 %, max_p ← 0.9·max_p if avg is below min + 0.4·(max − min) and max_p ≥ 1 %. No "gentle" region:
//! sch_red hard-marks from max on.
//!
//! Deviations: `avpkt_bytes` defaults to the link MTU (tc requires it; bulk TCP sends full packets) and
//! `bandwidth_bps` to the link rate (tc assumes 10 Mbit/s when omitted); tc builds the Stab table in psched ticks
//! (64 ns) while the kernel indexes it by microseconds of idle time, we build it in microseconds, the unit it
//! is read in (the entries themselves are tc's: ⌊m·(−ln(1 − W))⌋ used as a shift count, and the kernel's
//! coarse linear rule below the first non-zero entry, both kept); the child queue honours the scenario's limit in
//! packets or bytes (Linux RED's child is a byte FIFO); `reciprocal_divide` is plain division (Linux's is
//! exact for 32-bit operands, so results are equal); the scaled average and thresholds are 64-bit (Linux keeps
//! them in 32 bits and `red_check_params` refuses fls(max) + Wlog ≥ 32, which tc's default thresholds reach
//! above a buffer of about 10 MB), so a configuration is refused only where 64 bits overflow.

use ccfair_core::{DropReason, Dur, FieldError, PacketMeta, ParamDoc, Rng, Time};
use serde::{Deserialize, Serialize};

use crate::params::BUFFER_FIELD;
use crate::queue::{PacketFifo, QueueLimit};
use crate::{Qdisc, QdiscSink, QdiscStats, count_dequeue, drop_packet, mark_ce, qdisc_accessors};

/// `RED_STAB_SIZE`.
const STAB_SIZE: usize = 256;
/// Adaptive RED's period (`HZ/2`).
pub(crate) const ADAPT_PERIOD_NS: u64 = 500_000_000;
/// `RED_ONE_PERCENT` and the adaptive bounds on max_p (Q0.32).
const ONE_PERCENT: u32 = ((1u64 << 32) / 100) as u32;
const MAX_P_MIN: u32 = ONE_PERCENT;
const MAX_P_MAX: u32 = 50 * ONE_PERCENT;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RedParams {
    /// Lower threshold on the averaged backlog, bytes (default: max/3).
    pub min_bytes: Option<u64>,
    /// Upper threshold, bytes (default: 3·min if min is given, else limit/4).
    pub max_bytes: Option<u64>,
    /// Average packet size, bytes (default: the link MTU).
    pub avpkt_bytes: Option<u32>,
    /// Burst (packets) the average should absorb; sets Wlog (default: (2·min + max)/(3·avpkt)).
    pub burst_packets: Option<u32>,
    /// max_p, the marking probability reached at max.
    pub probability: f64,
    /// Link rate the idle decay assumes (default: the link's rate).
    pub bandwidth_bps: Option<u64>,
    pub ecn: bool,
    pub harddrop: bool,
    pub nodrop: bool,
    pub adaptive: bool,
}

impl Default for RedParams {
    fn default() -> Self {
        RedParams {
            min_bytes: None,
            max_bytes: None,
            avpkt_bytes: None,
            burst_packets: None,
            probability: 0.02,
            bandwidth_bps: None,
            ecn: false,
            harddrop: false,
            nodrop: false,
            adaptive: false,
        }
    }
}

pub const PARAMS: &[ParamDoc] = &[
    ParamDoc {
        name: "min_bytes",
        allowed: "> 0 bytes, < max_bytes",
        doc: "min threshold on the average backlog (default max/3)",
    },
    ParamDoc {
        name: "max_bytes",
        allowed: "> min_bytes",
        doc: "max threshold (default 3 x min if given, else buffer/4)",
    },
    ParamDoc {
        name: "avpkt_bytes",
        allowed: "> 0 bytes",
        doc: "average packet size for burst and idle decay (default the link MTU)",
    },
    ParamDoc {
        name: "burst_packets",
        allowed: "> min/avpkt packets",
        doc: "burst the average absorbs; sets the EWMA weight (default (2 min + max)/(3 avpkt))",
    },
    ParamDoc {
        name: "probability",
        allowed: "0 < p <= 1",
        doc: "max_p, marking probability at max (tc default 0.02)",
    },
    ParamDoc {
        name: "bandwidth_bps",
        allowed: "> 0 bit/s",
        doc: "rate for the idle-time decay (default the link rate)",
    },
    ParamDoc {
        name: "ecn",
        allowed: "true | false",
        doc: "CE-mark ECT packets instead of dropping (default false)",
    },
    ParamDoc {
        name: "harddrop",
        allowed: "true | false",
        doc: "drop even ECT packets when the average is above max (default false)",
    },
    ParamDoc {
        name: "nodrop",
        allowed: "true | false (needs ecn)",
        doc: "queue not-ECT packets instead of dropping them (default false)",
    },
    ParamDoc {
        name: "adaptive",
        allowed: "true | false",
        doc: "Adaptive RED: tune max_p every 500 ms toward the middle of [min, max] (default false)",
    },
];

/// The kernel parameters `tc` would compute (`struct red_parms` inputs), in bytes and shifts.
#[derive(Clone, Debug, PartialEq)]
pub struct RedDerived {
    pub qth_min: u64,
    pub qth_max: u64,
    pub avpkt: u32,
    pub burst: u32,
    pub wlog: u32,
    /// max_p in Q0.32.
    pub max_p: u32,
}

/// The thresholds of a buffer too small for tc's defaults, in average packets: min 2, max 3·min (see
/// [`RedParams::derive`]).
const SMALL_BUFFER_MIN_PACKETS: u64 = 2;

/// `tc`'s burst default, `(2·min + max) / (3·avpkt)` packets (integer division, as tc), saturated to u32.
fn tc_burst(qth_min: u64, qth_max: u64, avpkt: u32) -> u32 {
    let burst = (2 * qth_min as u128 + qth_max as u128) / (3 * avpkt as u128);
    burst.min(u32::MAX as u128) as u32
}

impl RedParams {
    /// Thresholds, burst, EWMA weight and max_p as `tc` derives them for a queue of `limit`.
    ///
    /// With none of min, max and burst given, the thresholds are tc's defaults, max = limit/4 and min = max/3
    /// (Floyd's advice), unless the buffer is too small for them: there min is so
    /// close to one packet that no EWMA weight can absorb tc's burst (`tc_red_eval_ewma` fails below about 15
    /// average packets, and tc refuses the qdisc). There the defaults are the smallest thresholds tc's own rules admit: min = 2·avpkt, the
    /// least that leaves a burst room above min/avpkt, and max = 3·min, tc's default max for a given min
    /// (its guidance: max at least twice min). With a buffer below max the ramp ends at the buffer: RED marks
    /// with at most max_p·(limit − min)/(max − min) before the queue tail-drops.
    pub fn derive(&self, limit: QueueLimit, mtu_bytes: u32) -> Result<RedDerived, FieldError> {
        let avpkt = self.avpkt_bytes.unwrap_or(mtu_bytes);
        if avpkt == 0 {
            return FieldError::err("avpkt_bytes", "must be at least 1");
        }
        if !(self.probability > 0.0 && self.probability <= 1.0) {
            return FieldError::err("probability", "must be in (0, 1]");
        }
        if self.bandwidth_bps == Some(0) {
            return FieldError::err("bandwidth_bps", "must be positive");
        }
        if self.nodrop && !self.ecn {
            return FieldError::err("nodrop", "is only meaningful with ecn = true");
        }
        let limit_bytes = limit.bytes(mtu_bytes);
        let defaults = self.min_bytes.is_none() && self.max_bytes.is_none() && self.burst_packets.is_none();
        let (mut qth_min, mut qth_max) = match (self.min_bytes, self.max_bytes) {
            (min, Some(max)) => (min.unwrap_or(max / 3), max),
            (Some(min), None) => (min, min.saturating_mul(3)),
            (None, None) => {
                let max = limit_bytes / 4;
                (max / 3, max)
            }
        };
        let small = qth_min <= SMALL_BUFFER_MIN_PACKETS * avpkt as u64;
        if defaults && small && eval_ewma(qth_min, tc_burst(qth_min, qth_max, avpkt), avpkt).is_none() {
            qth_min = SMALL_BUFFER_MIN_PACKETS * avpkt as u64;
            qth_max = 3 * qth_min;
        }
        // The field min comes from: as given, derived from max, or from the buffer.
        let (min_field, min_what) = match (self.min_bytes, self.max_bytes) {
            (Some(_), _) => ("min_bytes", "min"),
            (None, Some(_)) => ("max_bytes", "min (a third of max)"),
            (None, None) => (BUFFER_FIELD, "the default min (a twelfth of the buffer)"),
        };
        if qth_min == 0 {
            return FieldError::err(min_field, "must be at least 1 byte");
        }
        if qth_max <= qth_min {
            return FieldError::err("max_bytes", format!("must be greater than min_bytes ({qth_min})"));
        }
        let burst = self
            .burst_packets
            .unwrap_or_else(|| tc_burst(qth_min, qth_max, avpkt));
        let Some(wlog) = eval_ewma(qth_min, burst, avpkt) else {
            let min = (min_field, min_what, qth_min);
            return Err(burst_error(self.burst_packets.is_some(), min, burst, avpkt));
        };
        // The average and the thresholds are kept scaled by 2^Wlog in 64 bits, and the average can reach the
        // buffer's limit.
        let scaled_max = (limit_bytes.max(qth_max) as u128) << wlog;
        if scaled_max > u64::MAX as u128 {
            let (field, what) = if qth_max > limit_bytes {
                ("max_bytes", format!("max {qth_max} bytes"))
            } else {
                (BUFFER_FIELD, format!("a buffer of {limit_bytes} bytes"))
            };
            return FieldError::err(
                field,
                format!(
                    "{what} with an EWMA weight of 2^-{wlog} (from burst {burst}) overflows RED's 64-bit \
                     average; give a smaller burst_packets, or a smaller value"
                ),
            );
        }
        let max_p = (self.probability * 4_294_967_296.0).min(u32::MAX as f64) as u32;
        Ok(RedDerived {
            qth_min,
            qth_max,
            avpkt,
            burst,
            wlog,
            max_p,
        })
    }

    pub fn validate(&self, limit: QueueLimit, mtu_bytes: u32) -> Result<(), FieldError> {
        if self.min_bytes == Some(0) {
            return FieldError::err("min_bytes", "must be at least 1");
        }
        self.derive(limit, mtu_bytes).map(|_| ())
    }
}

/// Why no EWMA weight fits `burst` at min (its field, how to call it, its bytes): min too close to one packet
/// for any burst, or beyond any burst (naming min's field), or this burst too small or too large (naming
/// `burst_packets`, which the user gave or tc's default filled in).
fn burst_error(given: bool, (field, what, qth_min): (&str, &str, u64), burst: u32, avpkt: u32) -> FieldError {
    let whose = if given {
        "burst"
    } else {
        "the default burst (2 min + max)/(3 avpkt)"
    };
    match smallest_burst(qth_min, avpkt) {
        None if qth_min >= 2 * avpkt as u64 => FieldError::new(
            field,
            format!(
                "{what} of {qth_min} bytes is more average packets ({avpkt} bytes each) than any burst RED \
                 can absorb (tc's burst is a 32-bit number of packets)"
            ),
        ),
        None => FieldError::new(
            field,
            format!(
                "{what} of {qth_min} bytes is too close to one average packet ({avpkt} bytes): RED's average \
                 cannot absorb a burst of any size (tc_red_eval_ewma); min must be more than avpkt"
            ),
        ),
        Some(least) if burst < least => FieldError::new(
            "burst_packets",
            format!(
                "{whose} of {burst} packets is too small for min {qth_min} bytes at avpkt {avpkt} bytes: \
                 the smallest burst with an EWMA weight is {least} packets"
            ),
        ),
        Some(_) => FieldError::new(
            "burst_packets",
            format!("{whose} of {burst} packets is too large: no EWMA weight down to 2^-31 absorbs it"),
        ),
    }
}

/// The smallest burst for which [`eval_ewma`] finds a weight at min `qth_min`, if any: from min/avpkt (below
/// it the burst leaves no room above min), a few packets up (the condition eases as the burst grows, until
/// weights run out far above).
fn smallest_burst(qth_min: u64, avpkt: u32) -> Option<u32> {
    let first = qth_min.div_ceil(avpkt as u64).clamp(1, u32::MAX as u64) as u32;
    (first..=first.saturating_add(64)).find(|&b| eval_ewma(qth_min, b, avpkt).is_some())
}

/// `tc_red_eval_ewma`: the smallest Wlog (W = 2^−Wlog) for which a burst of `burst` packets arriving at an empty
/// queue does not push the average past min: burst + 1 − min/avpkt ≤ (1 − (1 − W)^burst)/W.
pub fn eval_ewma(qth_min: u64, burst: u32, avpkt: u32) -> Option<u32> {
    let a = burst as f64 + 1.0 - qth_min as f64 / avpkt as f64;
    if a < 1.0 {
        return None;
    }
    let mut w = 0.5f64;
    for wlog in 1..32 {
        if a <= (1.0 - (1.0 - w).powi(burst as i32)) / w {
            return Some(wlog);
        }
        w /= 2.0;
    }
    None
}

/// `tc_red_eval_idle_damping`, in microseconds: the table of right shifts approximating (1 − W)^m for an idle
/// time of `i << scell_log` µs, m = idle / (avpkt's transmission time at `rate_bps`).
fn eval_idle_damping(wlog: u32, avpkt: u32, rate_bps: u64) -> (u32, [u8; STAB_SIZE]) {
    let xmit_time_us = avpkt as f64 * 8.0 * 1e6 / rate_bps as f64;
    let lw = -(1.0 - 1.0 / (1u64 << wlog) as f64).ln() / xmit_time_us;
    let maxtime = 31.0 / lw;
    let mut clog = 0;
    while clog < 31 && maxtime / (1u64 << clog) as f64 >= 512.0 {
        clog += 1;
    }
    let mut stab = [0u8; STAB_SIZE];
    for (i, s) in stab.iter_mut().enumerate().take(STAB_SIZE - 1).skip(1) {
        *s = (((i as u64) << clog) as f64 * lw).min(31.0) as u8;
    }
    stab[STAB_SIZE - 1] = 31;
    (clog, stab)
}

/// What `red_action` decides for one arrival.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum RedAction {
    DontMark,
    ProbMark,
    HardMark,
}

/// Linux `struct red_stats`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RedStats {
    pub prob_drop: u64,
    pub prob_mark: u64,
    pub forced_drop: u64,
    pub forced_mark: u64,
    pub pdrop: u64,
}

pub struct Red<P> {
    queue: PacketFifo<P>,
    // red_parms (thresholds scaled by 2^Wlog, as in the kernel)
    qth_min: u64,
    qth_max: u64,
    qth_delta: u64,
    wlog: u32,
    max_p: u32,
    max_p_delta: u32,
    target_min: u64,
    target_max: u64,
    scell_log: u32,
    scell_max: u64,
    stab: [u8; STAB_SIZE],
    ecn: bool,
    harddrop: bool,
    nodrop: bool,
    adaptive: bool,
    next_adapt: Time,
    // red_vars
    qavg: u64,
    qcount: i64,
    qr: u32,
    idle_start: Option<Time>,
    rng: Rng,
    pub red_stats: RedStats,
    stats: QdiscStats,
}

impl<P: PacketMeta> Red<P> {
    /// A RED queue; `params` must have passed `validate`.
    pub fn new(params: &RedParams, limit: QueueLimit, mtu_bytes: u32, link_rate_bps: u64, rng: Rng) -> Self {
        let d = params
            .derive(limit, mtu_bytes)
            .expect("RED parameters are validated before building");
        let (scell_log, stab) =
            eval_idle_damping(d.wlog, d.avpkt, params.bandwidth_bps.unwrap_or(link_rate_bps));
        let qth_delta = d.qth_max - d.qth_min;
        let mut red = Red {
            queue: PacketFifo::new(limit, mtu_bytes),
            qth_min: d.qth_min << d.wlog,
            qth_max: d.qth_max << d.wlog,
            qth_delta,
            wlog: d.wlog,
            max_p: d.max_p,
            max_p_delta: 1,
            // Adaptive target band [min + 0.4·Δ, min + 0.6·Δ], with Linux's integer fifths.
            target_min: d.qth_min + 2 * (qth_delta / 5),
            target_max: d.qth_min + 3 * (qth_delta / 5),
            scell_log,
            scell_max: 255 << scell_log,
            stab,
            ecn: params.ecn,
            harddrop: params.harddrop,
            nodrop: params.nodrop,
            adaptive: params.adaptive,
            next_adapt: Time::from_ns(ADAPT_PERIOD_NS),
            qavg: 0,
            qcount: -1,
            qr: 0,
            // The queue starts empty: idle from the start (`__red_change`).
            idle_start: Some(Time::ZERO),
            rng,
            red_stats: RedStats::default(),
            stats: QdiscStats::default(),
        };
        red.max_p_delta = ((d.max_p as u64 / qth_delta) as u32).max(1);
        red
    }

    /// The averaged backlog, bytes.
    pub fn avg_bytes(&self) -> f64 {
        self.qavg as f64 / (1u64 << self.wlog) as f64
    }

    pub fn wlog(&self) -> u32 {
        self.wlog
    }

    /// max_p as a probability.
    pub fn max_p(&self) -> f64 {
        self.max_p as f64 / 4_294_967_296.0
    }

    /// `red_calc_qavg_from_idle_time`: the average decayed over the idle period ending `now`.
    fn qavg_after_idle(&self, idle_start: Time, now: Time) -> u64 {
        let us_idle = now.saturating_since(idle_start).us().min(self.scell_max);
        let shift = self.stab[((us_idle >> self.scell_log) as usize) & (STAB_SIZE - 1)];
        if shift != 0 {
            self.qavg >> shift
        } else {
            // Short idle: (1 − W)^m ≈ 1 − mW, linearly.
            let dec = ((self.qavg as u128 * us_idle as u128) >> self.scell_log) as u64;
            if dec < self.qavg >> 1 {
                self.qavg - dec
            } else {
                self.qavg >> 1
            }
        }
    }

    /// `red_calc_qavg`: the new average on an arrival with `backlog` bytes queued.
    fn calc_qavg(&self, backlog: u64, now: Time) -> u64 {
        match self.idle_start {
            Some(start) => self.qavg_after_idle(start, now),
            // avg += backlog − avg·W, in fixed point with the point at Wlog.
            None => self.qavg - (self.qavg >> self.wlog) + backlog,
        }
    }

    /// `red_random`: qR uniform in [0, (max − min)/max_p), in bytes.
    fn random(&mut self) -> u32 {
        ((self.rng.next_u64() >> 32) as u32) / self.max_p_delta
    }

    /// `red_action` for the scaled average `qavg`.
    pub fn action(&mut self, qavg: u64) -> RedAction {
        if qavg < self.qth_min {
            self.qcount = -1;
            RedAction::DontMark
        } else if qavg >= self.qth_max {
            self.qcount = -1;
            RedAction::HardMark
        } else {
            self.qcount += 1;
            if self.qcount != 0 {
                // Mark when (avg − min)·count ≥ qR: the count since the last mark is uniform in [1, 1/p_b].
                let excess = (qavg - self.qth_min) >> self.wlog;
                if excess.saturating_mul(self.qcount as u64) >= self.qr as u64 {
                    self.qcount = 0;
                    self.qr = self.random();
                    return RedAction::ProbMark;
                }
            } else {
                self.qr = self.random();
            }
            RedAction::DontMark
        }
    }

    /// The action for an average of `avg_bytes` (unscaled), for tests of the marking law.
    pub fn action_at(&mut self, avg_bytes: u64) -> RedAction {
        self.action(avg_bytes << self.wlog)
    }

    /// `red_adaptative_algo`, run every 500 ms up to `now`.
    fn run_adaptive(&mut self, now: Time) {
        while self.adaptive && self.next_adapt <= now {
            let t = self.next_adapt;
            let qavg = match self.idle_start {
                Some(start) => self.qavg_after_idle(start, t),
                None => self.qavg,
            } >> self.wlog;
            if qavg > self.target_max && self.max_p <= MAX_P_MAX {
                self.max_p += MAX_P_MIN.min(self.max_p / 4);
            } else if qavg < self.target_min && self.max_p >= MAX_P_MIN {
                self.max_p = (self.max_p / 10) * 9;
            }
            let rounded = (self.max_p as u64 + self.qth_delta / 2) / self.qth_delta;
            self.max_p_delta = (rounded as u32).max(1);
            self.next_adapt += Dur::from_ns(ADAPT_PERIOD_NS);
            self.stats.timer_runs += 1;
        }
    }
}

impl<P: PacketMeta + Send> Qdisc<P> for Red<P> {
    fn enqueue(&mut self, now: Time, mut pkt: P, sink: &mut dyn QdiscSink<P>) -> bool {
        self.run_adaptive(now);
        self.qavg = self.calc_qavg(self.queue.bytes(), now);
        self.idle_start = None;
        let congestion_drop = match self.action(self.qavg) {
            RedAction::DontMark => false,
            action => {
                // `red_enqueue`: both marking states CE-mark an ECN-capable packet when ECN is on, a hard
                // mark not with harddrop; what is not marked is dropped, but for a not-ECT packet in
                // nodrop mode, which is queued. Each state counts its own drops and marks.
                let prob = action == RedAction::ProbMark;
                let may_mark = self.ecn && (prob || !self.harddrop);
                let marked = may_mark && mark_ce(&mut self.stats, sink, now, &mut pkt);
                let dropped = !marked && (!may_mark || !self.nodrop);
                let s = &mut self.red_stats;
                let (drops, marks) = if prob {
                    (&mut s.prob_drop, &mut s.prob_mark)
                } else {
                    (&mut s.forced_drop, &mut s.forced_mark)
                };
                if marked {
                    *marks += 1;
                } else if dropped {
                    *drops += 1;
                }
                dropped
            }
        };
        if congestion_drop {
            drop_packet(&mut self.stats, sink, now, pkt, DropReason::Aqm);
            return false;
        }
        if !self.queue.admits(&pkt) {
            self.red_stats.pdrop += 1;
            drop_packet(&mut self.stats, sink, now, pkt, DropReason::Overlimit);
            return false;
        }
        self.queue.push_back(pkt, &mut self.stats);
        true
    }

    fn dequeue(&mut self, now: Time, _sink: &mut dyn QdiscSink<P>) -> Option<P> {
        self.run_adaptive(now);
        match self.queue.pop_front() {
            Some(pkt) => {
                count_dequeue(&mut self.stats, &pkt);
                Some(pkt)
            }
            None => {
                if self.idle_start.is_none() {
                    self.idle_start = Some(now);
                }
                None
            }
        }
    }

    qdisc_accessors!(queue, RedParams);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_packet::{Drops, TestPacket, ms};
    use ccfair_core::Ecn;
    use ccfair_core::rng::StreamId;

    /// The limit of the queues built from [`explicit`].
    const LIMIT: QueueLimit = QueueLimit::Bytes(400_000);

    fn red(params: RedParams) -> Red<TestPacket> {
        Red::new(
            &params,
            LIMIT,
            1500,
            100_000_000,
            Rng::stream(5, StreamId::Qdisc(0)),
        )
    }

    /// Queues `n` packets of 1000 bytes without running RED on them.
    fn hold(q: &mut Red<TestPacket>, n: u64) {
        for i in 0..n {
            q.queue
                .push_back(TestPacket::new(1_000_000 + i, 1000), &mut q.stats);
        }
    }

    fn explicit() -> RedParams {
        RedParams {
            min_bytes: Some(30_000),
            max_bytes: Some(90_000),
            avpkt_bytes: Some(1000),
            probability: 0.1,
            ..RedParams::default()
        }
    }

    #[test]
    fn tc_derivations() {
        // Thresholds from the limit: max = limit/4, min = max/3.
        let d = RedParams::default()
            .derive(QueueLimit::Bytes(360_000), 1500)
            .unwrap();
        assert_eq!((d.qth_min, d.qth_max), (30_000, 90_000));
        // burst = (2·30000 + 90000)/(3·1500) = 33; a = 33 + 1 − 20 = 14; W = 1/16 gives 14.3 ≥ 14, W = 1/8 only 7.9.
        assert_eq!((d.burst, d.wlog), (33, 4));
        let d = explicit().derive(LIMIT, 1500).unwrap();
        // burst 50, a = 21: W = 1/32 gives 25.5, 1/16 only 15.9.
        assert_eq!((d.burst, d.wlog), (50, 5));
        assert_eq!(d.max_p, 429_496_729);
        // A packet limit counts full packets.
        let d = RedParams::default()
            .derive(QueueLimit::Packets(240), 1500)
            .unwrap();
        assert_eq!(d.qth_max, 90_000);
    }

    #[test]
    fn marking_probability_ramps_between_the_thresholds() {
        let mut q = red(explicit());
        // p_b = max_p·(avg − min)/(max − min); with count uniformisation the marked fraction is 2·p_b/(1 + p_b).
        for (avg, p_b) in [
            (45_000u64, 0.025),
            (60_000, 0.05),
            (75_000, 0.075),
            (89_000, 0.0983),
        ] {
            let n = 200_000;
            let marks = (0..n).filter(|_| q.action_at(avg) == RedAction::ProbMark).count() as f64;
            let want = 2.0 * p_b / (1.0 + p_b);
            let got = marks / n as f64;
            assert!((got - want).abs() / want < 0.05, "avg {avg}: {got} vs {want}");
        }
        assert!((0..1000).all(|_| q.action_at(29_999) == RedAction::DontMark));
        assert!((0..1000).all(|_| q.action_at(90_000) == RedAction::HardMark));
    }

    #[test]
    fn marks_are_spread_uniformly_not_geometrically() {
        // With uniformisation the gap between marks never exceeds 1/p_b (here 20 packets).
        let mut q = red(explicit());
        let mut since = 0;
        let mut gaps = vec![];
        for _ in 0..100_000 {
            since += 1;
            if q.action_at(60_000) == RedAction::ProbMark {
                gaps.push(since);
                since = 0;
            }
        }
        // The first gap includes the packet that draws the first qR.
        assert!(
            gaps[1..].iter().all(|&g| (1..=21).contains(&g)),
            "{:?}",
            &gaps[..20]
        );
        // ... and the gaps are spread over the whole range, not clustered.
        assert!(gaps.iter().any(|&g| g <= 2) && gaps.iter().any(|&g| g >= 19));
    }

    #[test]
    fn average_follows_the_ewma_with_weight_two_to_the_minus_wlog() {
        let mut q = red(explicit());
        let mut d = Drops::default();
        // Hold the backlog at 40 packets of 1000 bytes: the average approaches 40 000 as 1 − (1 − 1/32)^n.
        hold(&mut q, 40);
        q.idle_start = None;
        for n in 1..=64u64 {
            if q.enqueue(Time::ZERO, TestPacket::new(100 + n, 1000), &mut d) {
                q.queue.pop_front();
            }
            assert_eq!(q.queue.bytes(), 40_000);
            if n == 32 || n == 64 {
                let want = 40_000.0 * (1.0 - (1.0 - 1.0 / 32.0f64).powi(n as i32));
                assert!(
                    (q.avg_bytes() - want).abs() < 40.0,
                    "n {n}: {} vs {want}",
                    q.avg_bytes()
                );
            }
        }
    }

    #[test]
    fn idle_time_decays_the_average() {
        let mut q = red(explicit());
        let mut d = Drops::default();
        // avpkt 1000 bytes at 100 Mbit/s is 80 µs; −ln(1 − 1/32)/80 µs per µs gives Scell_log 8.
        assert_eq!(q.scell_log, 8);
        q.qavg = 60_000 << q.wlog;
        q.idle_start = None;
        // Idle from 1 s to 1.02 s: 20 000 µs is table cell 78, whose entry is ⌊78·256·(−ln(31/32))/80⌋ = 7, so
        // the average is shifted right by 7 (the kernel's decay; the exact (1 − W)^250 would be smaller still).
        assert!(q.dequeue(ms(1000), &mut d).is_none());
        q.enqueue(ms(1020), TestPacket::new(1, 1000), &mut d);
        assert_eq!(q.avg_bytes(), 60_000.0 / 128.0);
        // A 40 µs idle period falls in cell 0: linear decay avg·idle/2^Scell_log = avg·40/256.
        q.qavg = 60_000 << q.wlog;
        q.dequeue(ms(2000), &mut d);
        assert!(q.dequeue(ms(2000), &mut d).is_none());
        q.enqueue(Time::from_ns(2_000_040_000), TestPacket::new(2, 1000), &mut d);
        assert_eq!(q.avg_bytes(), 60_000.0 * (1.0 - 40.0 / 256.0));
    }

    #[test]
    fn ecn_marks_and_harddrop_drops_above_max() {
        let mut q = red(RedParams {
            ecn: true,
            ..explicit()
        });
        let mut d = Drops::default();
        q.qavg = 100_000 << q.wlog;
        q.idle_start = None;
        hold(&mut q, 100);
        assert!(q.enqueue(Time::ZERO, TestPacket::new(1, 1000).ecn(Ecn::Ect0), &mut d));
        assert_eq!(d.marks(), 1);
        assert!(!q.enqueue(Time::ZERO, TestPacket::new(2, 1000), &mut d));
        assert_eq!(d.aqm_drops(), 1);
        let mut q = red(RedParams {
            ecn: true,
            harddrop: true,
            ..explicit()
        });
        q.qavg = 100_000 << q.wlog;
        q.idle_start = None;
        hold(&mut q, 100);
        assert!(!q.enqueue(Time::ZERO, TestPacket::new(3, 1000).ecn(Ecn::Ect0), &mut d));
        assert_eq!(q.red_stats.forced_drop, 1);
    }

    #[test]
    fn adaptive_red_moves_max_p() {
        let mut q = red(RedParams {
            adaptive: true,
            ..explicit()
        });
        let mut d = Drops::default();
        q.qavg = 85_000 << q.wlog; // above min + 0.6·Δ = 66 000
        q.idle_start = None;
        // Packets to dequeue, so that the queue never goes idle (the adaptation reads only the average).
        hold(&mut q, 10);
        let before = q.max_p();
        q.dequeue(ms(499), &mut d);
        assert_eq!(q.max_p(), before);
        q.dequeue(ms(500), &mut d);
        // + min(1 %, max_p/4) = +1 %.
        assert!((q.max_p() - (before + 0.01)).abs() < 1e-6, "{}", q.max_p());
        q.qavg = 35_000 << q.wlog; // below min + 0.4·Δ = 54 000
        q.dequeue(ms(1000), &mut d);
        assert!((q.max_p() - 0.9 * (before + 0.01)).abs() < 1e-6, "{}", q.max_p());
    }

    #[test]
    fn the_defaults_fit_every_buffer() {
        // tc's thresholds where they admit an EWMA weight (15 packets and up, and 12), the smallest ones tc's
        // rules admit below: every buffer from one packet up resolves.
        for packets in 1..=20_000u32 {
            let limit = QueueLimit::Packets(packets);
            let d = RedParams::default().derive(limit, 1500).unwrap();
            let tc_max = packets as u64 * 1500 / 4;
            let tc_min = tc_max / 3;
            if eval_ewma(tc_min, tc_burst(tc_min, tc_max, 1500), 1500).is_some() {
                assert_eq!((d.qth_min, d.qth_max), (tc_min, tc_max), "{packets} packets");
            } else {
                assert!(packets < 15, "{packets}");
                assert_eq!(
                    (d.qth_min, d.qth_max, d.burst),
                    (3000, 9000, 3),
                    "{packets} packets"
                );
            }
        }
        // A byte limit, and an average packet smaller than the MTU.
        for bytes in (1500..200_000u64).step_by(997) {
            let small = RedParams {
                avpkt_bytes: Some(1000),
                ..RedParams::default()
            };
            small.derive(QueueLimit::Bytes(bytes), 1500).unwrap();
        }
    }

    #[test]
    fn a_burst_too_small_says_the_smallest_that_works() {
        let e = RedParams {
            burst_packets: Some(5),
            ..explicit()
        }
        .validate(LIMIT, 1500)
        .unwrap_err();
        // min 30 000 bytes at avpkt 1000: at least 30 packets, and 30 is the first with a weight.
        assert!(
            e.says(
                "burst_packets",
                "the smallest burst with an EWMA weight is 30 packets"
            ),
            "{e}"
        );
        assert!(eval_ewma(30_000, 30, 1000).is_some() && eval_ewma(30_000, 29, 1000).is_none());
    }

    #[test]
    fn a_min_within_one_packet_names_min_and_what_it_must_exceed() {
        // Within one average packet no burst can be absorbed: the message says min must exceed avpkt, and
        // never quotes min/avpkt truncated to 0.
        let e = RedParams {
            min_bytes: Some(1000),
            max_bytes: Some(3000),
            ..RedParams::default()
        }
        .validate(LIMIT, 1500)
        .unwrap_err();
        assert!(e.says("min_bytes", "must be more than avpkt"), "{e}");
        // Thresholds derived from max name max.
        let e = RedParams {
            max_bytes: Some(3000),
            ..RedParams::default()
        }
        .validate(LIMIT, 1500)
        .unwrap_err();
        assert_eq!(e.field, "max_bytes");
    }

    #[test]
    fn thresholds_at_the_extremes_are_refused_not_overflowed() {
        // min × 3 would overflow u64, and no 32-bit burst reaches min; a buffer of 2^62 bytes overflows the
        // scaled average.
        let e = RedParams {
            min_bytes: Some(u64::MAX / 2),
            ..RedParams::default()
        }
        .validate(LIMIT, 1500)
        .unwrap_err();
        assert_eq!(e.field, "min_bytes", "{e:?}");
        assert!(e.message.contains("than any burst"), "{}", e.message);
        // tc's defaults for a buffer of 2^62 bytes need a burst beyond 32 bits: named as the buffer's.
        let e = RedParams::default()
            .validate(QueueLimit::Bytes(1 << 62), 1500)
            .unwrap_err();
        assert_eq!(e.field, BUFFER_FIELD, "{e:?}");
        assert!(e.message.starts_with("the default min"), "{}", e.message);
        // Thresholds that fit, in a buffer whose backlog scaled by 2^Wlog would not fit 64 bits.
        let e = explicit().validate(QueueLimit::Bytes(1 << 60), 1500).unwrap_err();
        assert_eq!(e.field, BUFFER_FIELD, "{e:?}");
        assert!(e.message.contains("overflows"), "{}", e.message);
    }

    #[test]
    fn bad_parameters_name_the_field() {
        let cases = [
            (
                RedParams {
                    min_bytes: Some(50_000),
                    max_bytes: Some(40_000),
                    ..explicit()
                },
                "max_bytes",
            ),
            (
                RedParams {
                    burst_packets: Some(5),
                    ..explicit()
                },
                "burst_packets",
            ),
            (
                RedParams {
                    nodrop: true,
                    ..explicit()
                },
                "nodrop",
            ),
            (
                RedParams {
                    probability: 0.0,
                    ..explicit()
                },
                "probability",
            ),
        ];
        for (params, field) in cases {
            let e = params.validate(LIMIT, 1500).unwrap_err();
            assert_eq!(e.field, field, "{params:?}: {e:?}");
        }
    }
}
