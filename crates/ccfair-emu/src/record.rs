//! What the emulator measures, in the simulator's recorder format: per interval the queue (backlog at the
//! interval's end, sojourn p50/p99/max of the packets that left it, drops, marks, departures, wire bytes sent);
//! per flow its drops and CE marks (per interval and over the window) and the RTT samples of the window;
//! run totals over the measurement window; and the emulator's own health: how late it sent each frame against
//! its ideal departure time (p50/p99/max), frames the kernel dropped before the emulator could read them, and
//! frames dropped for want of a buffer.
//!
//! RTT samples are taken passively at the bottleneck, which sits next to the senders: a data segment is timed
//! from its arrival at the emulator to the moment the first ACK covering it leaves towards the sender (the RTT
//! of the most recently sent segment each ACK covers, as the simulator samples it; retransmitted ranges are
//! not timed, Karn's rule). The veth hop between sender and emulator (a few µs) is not included.
//!
//! The counters, window snapshots, RTT histograms and queue meter are the simulator's ([`RunMeter`]); the
//! emulator counts `sent_segments` (segments that reached it), drops and marks, and leaves the counters only
//! the endpoints know (delivered and retransmitted segments, RTOs) at 0: the collector takes those from the
//! receiver and the senders' TCP_INFO. Likewise the totals it cannot know (`sim_end_ns`, `arrived_segments`,
//! ...) stay 0 here and are filled, or left out, by the collector as the output schema says.
//!
//! Times are emulator times (ns since the emulator started); series are reported relative to the run epoch.
//! Nothing here allocates per packet: counters are preallocated per flow; rows are appended per interval.

use ccfair_core::queue_meter::quantile_or_nan as pct;
use ccfair_core::{FlowCounters, LogHistogram, QueueSeries, RunMeter, Time, Totals};
use serde::Serialize;

use crate::turnaround::Turnaround;

/// Segments timed at once per flow; beyond that the oldest timing is forgotten (no bias: the sample of an
/// ACK is always the newest segment it covers).
const RTT_RING: usize = 4096;

/// The queue time series (one row per interval): the simulator's columns, measured by the same meter, plus
/// the emulator's own health per interval.
#[derive(Clone, Debug, Default, Serialize)]
pub struct QueueRows {
    #[serde(flatten)]
    pub queue: QueueSeries,
    /// p99 of how late frames left (ns), NaN when none did.
    pub lateness_p99_ns: Vec<f64>,
}

/// Times the segments of one flow (see the module header).
struct RttTimer {
    ring: Box<[(u32, Time)]>,
    head: usize,
    len: usize,
    highest_end: Option<u32>,
}

/// `a` after `b` in sequence space.
fn seq_after(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) > 0
}

impl RttTimer {
    fn new() -> RttTimer {
        RttTimer {
            ring: vec![(0, Time::ZERO); RTT_RING].into_boxed_slice(),
            head: 0,
            len: 0,
            highest_end: None,
        }
    }

    fn on_data(&mut self, now: Time, seq: u32, payload: u32) {
        let end = seq.wrapping_add(payload);
        if let Some(h) = self.highest_end
            && !seq_after(end, h)
        {
            // A retransmission: whatever is still timed may be acknowledged by either copy (Karn).
            self.len = 0;
            return;
        }
        self.highest_end = Some(end);
        if self.len == RTT_RING {
            self.head = (self.head + 1) % RTT_RING;
            self.len -= 1;
        }
        self.ring[(self.head + self.len) % RTT_RING] = (end, now);
        self.len += 1;
    }

    fn on_ack(&mut self, now: Time, ack: u32) -> Option<u64> {
        let mut newest = None;
        while self.len > 0 {
            let (end, sent) = self.ring[self.head];
            if seq_after(end, ack) {
                break;
            }
            newest = Some(sent);
            self.head = (self.head + 1) % RTT_RING;
            self.len -= 1;
        }
        newest.map(|t| now.saturating_since(t).ns())
    }
}

/// Quantiles of a histogram, for the report (p10 and p90 give a distribution's spread without its tail).
#[derive(Clone, Debug, Default, Serialize)]
pub struct Spread {
    pub count: u64,
    pub p10_ns: f64,
    pub p50_ns: f64,
    pub p90_ns: f64,
    pub p99_ns: f64,
    pub max_ns: f64,
    pub mean_ns: f64,
}

impl Spread {
    fn of(h: &LogHistogram) -> Spread {
        Spread {
            count: h.count(),
            p10_ns: pct(h, 0.1),
            p50_ns: pct(h, 0.5),
            p90_ns: pct(h, 0.9),
            p99_ns: pct(h, 0.99),
            max_ns: h.max().map_or(f64::NAN, |x| x as f64),
            mean_ns: h.mean().unwrap_or(f64::NAN),
        }
    }
}

/// One flow's results.
#[derive(Clone, Debug, Serialize)]
pub struct FlowRecord {
    pub window: FlowCounters,
    pub total: FlowCounters,
    pub rtt_samples: u64,
    pub rtt_mean_ns: f64,
    pub rtt_p99_ns: f64,
    /// Queue plus path drops per interval (the time series' `drops` column).
    pub interval_drops: Vec<u64>,
    /// TCP frames from the flow's receiver over the run (its ACKs: fewer per data segment when the
    /// receiver coalesces segments with GRO and acknowledges each aggregate).
    pub ack_frames: u64,
}

#[derive(Default)]
pub struct Recorder {
    epoch: Time,
    interval_ns: u64,
    /// Per-flow counters and their snapshots, the window's RTT samples, the queue.
    meter: RunMeter,
    interval_drops: Vec<Vec<u64>>,
    ack_frames: Vec<u64>,
    rtt: Vec<RttTimer>,
    iv_lateness: LogHistogram,
    lateness_series: Vec<f64>,
    pub lateness_window: LogHistogram,
    pub lateness_run: LogHistogram,
    /// Per side of the emulator (senders, receiver), the window's read latencies (`read_latency`).
    read_latency: [LogHistogram; 2],
    /// The hosts' turnaround samples of the window.
    turnaround: Turnaround,
    /// Frames the emulator forwarded (shaped, delayed or passed through), the kernel run's "events".
    frames: u64,
}

impl Recorder {
    pub fn new(n_flows: usize, interval_ns: u64) -> Recorder {
        Recorder {
            interval_ns,
            meter: RunMeter::new(n_flows),
            interval_drops: vec![Vec::new(); n_flows],
            ack_frames: vec![0; n_flows],
            rtt: (0..n_flows).map(|_| RttTimer::new()).collect(),
            iv_lateness: LogHistogram::new(),
            lateness_window: LogHistogram::new(),
            lateness_run: LogHistogram::new(),
            read_latency: [LogHistogram::new(), LogHistogram::new()],
            turnaround: Turnaround::new(n_flows),
            ..Recorder::default()
        }
    }

    /// The run starts: interval accounting begins at `epoch` (handshakes before it are not in the series).
    pub fn start(&mut self, epoch: Time) {
        self.epoch = epoch;
        self.meter.sampled();
        self.meter.queue.restart_interval();
        self.iv_lateness.clear();
        self.lateness_run.clear();
    }

    pub fn window_start(&mut self, now: Time) {
        self.meter.window_start(now.ns());
    }

    pub fn window_end(&mut self, now: Time) {
        self.meter.window_end(now.ns());
    }

    #[inline]
    pub fn data_arrived(&mut self, now: Time, flow: u32, seq: u32, payload: u32) {
        self.meter.sent(flow, false);
        self.rtt[flow as usize].on_data(now, seq, payload);
        let in_window = self.meter.in_window();
        self.turnaround
            .data_arrived(flow, seq.wrapping_add(payload), now, in_window);
    }

    /// A TCP frame of `flow` acknowledging `ack` arrived from its receiver at `now`.
    #[inline]
    pub fn ack_arrived(&mut self, now: Time, flow: u32, ack: u32) {
        self.ack_frames[flow as usize] += 1;
        let in_window = self.meter.in_window();
        self.turnaround.ack_arrived(flow, ack, now, in_window);
    }

    /// A TCP frame of `flow` acknowledging `ack` was handed to the sender's veth at `now`.
    #[inline]
    pub fn ack_departed(&mut self, now: Time, flow: u32, ack: u32) {
        if let Some(rtt) = self.rtt[flow as usize].on_ack(now, ack) {
            self.meter.rtt(flow, rtt);
        }
        self.turnaround.ack_sent(flow, now);
    }

    /// A data segment of `flow` ending at `end` was handed to the receiver's veth at `now`.
    #[inline]
    pub fn data_departed(&mut self, now: Time, flow: u32, end: u32) {
        self.turnaround.data_sent(flow, end, now);
    }

    #[inline]
    pub fn path_drop(&mut self, flow: u32) {
        self.meter.path_drop(flow);
    }

    #[inline]
    pub fn queue_drop(&mut self, flow: u32) {
        self.meter.queue_drop(flow);
    }

    #[inline]
    pub fn marked(&mut self, flow: u32) {
        self.meter.marked(flow);
    }

    /// A packet left the queue (serialization starts) after `sojourn_ns`; `l4s` when it is L4S traffic.
    #[inline]
    pub fn departed(&mut self, sojourn_ns: u64, l4s: bool) {
        self.meter.queue.departed(sojourn_ns, l4s);
    }

    /// `ip_bytes` finished serializing on the bottleneck at `end`, having started at `start`.
    #[inline]
    pub fn link_tx(&mut self, ip_bytes: u32, start: Time, end: Time) {
        self.meter.queue.transmitted(ip_bytes, start.ns(), end.ns());
    }

    /// A frame with an ideal departure time left `late_ns` after it.
    #[inline]
    pub fn lateness(&mut self, late_ns: u64) {
        self.iv_lateness.record(late_ns);
        self.lateness_run.record(late_ns);
        if self.meter.in_window() {
            self.lateness_window.record(late_ns);
        }
    }

    #[inline]
    pub fn frame_sent(&mut self) {
        self.frames += 1;
    }

    /// Appends the row of the interval ending at `now` (an epoch-relative boundary is written).
    pub fn sample(&mut self, now: Time, backlog_bytes: u64, backlog_packets: u32) {
        for (drops, flow) in self.interval_drops.iter_mut().zip(0u32..) {
            let d = self.meter.since_sample(flow);
            drops.push(d.queue_drops + d.path_drops);
        }
        self.meter.sampled();
        self.meter.queue.sample(
            now.saturating_since(self.epoch).ns(),
            backlog_bytes,
            backlog_packets,
        );
        self.lateness_series.push(pct(&self.iv_lateness, 0.99));
        self.iv_lateness.clear();
    }

    /// The queue rows so far, handed over (the recorder keeps none).
    pub fn take_queue(&mut self) -> QueueRows {
        QueueRows {
            queue: std::mem::take(&mut self.meter.queue.series),
            lateness_p99_ns: std::mem::take(&mut self.lateness_series),
        }
    }

    pub fn interval_ns(&self) -> u64 {
        self.interval_ns
    }

    pub fn flow_records(&self) -> Vec<FlowRecord> {
        (0..self.meter.flows() as u32)
            .map(|flow| {
                let (rtt_samples, rtt_mean_ns, rtt_p99_ns) = self.meter.rtt_stats(flow);
                FlowRecord {
                    window: self.meter.window(flow),
                    total: *self.meter.counters(flow),
                    rtt_samples,
                    rtt_mean_ns,
                    rtt_p99_ns,
                    interval_drops: self.interval_drops[flow as usize].clone(),
                    ack_frames: self.ack_frames[flow as usize],
                }
            })
            .collect()
    }

    /// The totals the emulator knows (`events` are the frames it forwarded).
    pub fn final_totals(&self) -> Totals {
        self.meter.totals(Totals {
            events: self.frames,
            ..Totals::default()
        })
    }

    pub fn lateness_spread(&self) -> (Spread, Spread) {
        (Spread::of(&self.lateness_window), Spread::of(&self.lateness_run))
    }

    /// A frame read on `side` (0: the senders', 1: the receiver's) waited `late_ns` after the kernel stamped
    /// its arrival (`None`: the kernel gave no stamp); counted within the measurement window.
    #[inline]
    pub fn read_latency(&mut self, side: usize, late_ns: Option<u64>) {
        if let Some(ns) = late_ns
            && self.meter.in_window()
        {
            self.read_latency[side].record(ns);
        }
    }

    /// The window's turnaround of the receiver and of each flow's sender ([`Turnaround`]).
    pub fn turnaround_spreads(&self) -> (Spread, Vec<Spread>) {
        let t = &self.turnaround;
        (Spread::of(&t.receiver), t.sender.iter().map(Spread::of).collect())
    }

    pub fn read_latency_spreads(&self) -> [Spread; 2] {
        [
            Spread::of(&self.read_latency[0]),
            Spread::of(&self.read_latency[1]),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(us: u64) -> Time {
        Time::from_ns(us * 1000)
    }

    #[test]
    fn an_ack_samples_the_newest_segment_it_covers() {
        let mut r = Recorder::new(1, 100);
        r.window_start(t(0));
        r.data_arrived(t(0), 0, 1000, 100);
        r.data_arrived(t(10), 0, 1100, 100);
        r.data_arrived(t(20), 0, 1200, 100);
        r.ack_departed(t(50), 0, 1200); // covers the first two: newest sent at 10 -> 40 us
        r.ack_departed(t(80), 0, 1300); // covers the third: 60 us
        r.ack_departed(t(90), 0, 1300); // duplicate: no sample
        for _ in 0..3 {
            r.ack_arrived(t(0), 0, 0);
        }
        let f = &r.flow_records()[0];
        assert_eq!(f.ack_frames, 3);
        assert_eq!(f.rtt_samples, 2);
        assert!((f.rtt_mean_ns - 50_000.0).abs() < 1.0, "{}", f.rtt_mean_ns);
        assert_eq!(f.window.sent_segments, 3);
    }

    #[test]
    fn retransmitted_ranges_are_not_timed() {
        let mut r = Recorder::new(1, 100);
        r.window_start(t(0));
        r.data_arrived(t(0), 0, 0, 100);
        r.data_arrived(t(1), 0, 100, 100);
        r.data_arrived(t(500), 0, 0, 100); // retransmission of the first
        r.ack_departed(t(520), 0, 200);
        assert_eq!(r.flow_records()[0].rtt_samples, 0);
        r.data_arrived(t(600), 0, 200, 100);
        r.ack_departed(t(650), 0, 300);
        assert_eq!(r.flow_records()[0].rtt_samples, 1);
    }

    #[test]
    fn interval_rows_and_window_counters() {
        let mut r = Recorder::new(2, 100);
        r.start(t(1000));
        r.queue_drop(1);
        r.sample(t(1100), 3000, 2);
        r.window_start(t(1100));
        r.path_drop(0);
        r.marked(1);
        r.departed(5_000, false);
        r.link_tx(1500, t(1110), t(1111));
        r.lateness(40);
        r.window_end(t(1150));
        r.queue_drop(0);
        r.sample(t(1200), 0, 0);
        let rows = r.take_queue();
        assert_eq!(rows.queue.t_ns, vec![100_000, 200_000]);
        assert_eq!(rows.queue.drops, vec![1, 1]);
        assert_eq!(rows.queue.marks, vec![0, 1]);
        assert!(
            rows.lateness_p99_ns[0].is_nan(),
            "no frame left in the first interval"
        );
        assert_eq!(rows.lateness_p99_ns[1], 40.0);
        let f = r.flow_records();
        assert_eq!(f[0].interval_drops, vec![0, 2]);
        assert_eq!(f[1].interval_drops, vec![1, 0]);
        assert_eq!(f[0].window.path_drops, 1);
        assert_eq!(f[0].window.queue_drops, 0, "after the window closed");
        let tot = r.final_totals();
        assert_eq!(tot.window_link_tx_bytes, 1500);
        assert_eq!(tot.window_path_drops, 1);
        assert_eq!(tot.window_marks, 1);
        assert_eq!(tot.queue_drops, 2);
    }
}
