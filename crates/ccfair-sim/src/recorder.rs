//! The default recorder: counters per flow and per interval, snapshots at the measurement window's edges, and
//! columnar time series. Per-packet work is a few integer additions into preallocated slots; rows are appended
//! once per interval.

use ccfair_cc::CcVars;
use ccfair_core::queue_meter::quantile_or_nan;
use ccfair_core::{DropReason, Dur, LogHistogram, Observer, QueueMeter, QueueSeries, Time};

/// Cumulative per-flow counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FlowCounters {
    pub sent_segments: u64,
    pub retransmitted_segments: u64,
    pub queue_drops: u64,
    pub path_drops: u64,
    pub ce_marks: u64,
    /// Payload bytes delivered in order to the application.
    pub delivered_bytes: u64,
    pub rto_events: u64,
}

/// One flow's row of the flow table.
#[derive(Clone, Debug, PartialEq)]
pub struct FlowRecord {
    pub flow_id: u32,
    pub group: u32,
    pub cc: &'static str,
    pub rtt_ns: u64,
    pub start_ns: u64,
    pub stop_ns: u64,
    /// Counters over the measurement window (end snapshot minus start snapshot).
    pub window: FlowCounters,
    /// Counters over the whole run.
    pub total: FlowCounters,
    pub rtt_samples: u64,
    pub rtt_mean_ns: f64,
    pub rtt_p99_ns: f64,
}

/// Time-series columns, one row per active flow per interval.
#[derive(Clone, Debug, Default)]
pub struct FlowSeries {
    pub t_ns: Vec<u64>,
    pub flow_id: Vec<u32>,
    pub delivered_bytes: Vec<u64>,
    pub goodput_bps: Vec<f64>,
    pub cwnd: Vec<u32>,
    /// -1 while ssthresh is infinite.
    pub ssthresh: Vec<i64>,
    pub srtt_ns: Vec<u64>,
    pub min_rtt_ns: Vec<f64>,
    pub pacing_rate_bps: Vec<f64>,
    pub inflight: Vec<u32>,
    pub retransmits: Vec<u64>,
    pub drops: Vec<u64>,
    pub ca_state: Vec<u8>,
    pub cc_mode: Vec<i32>,
    pub cc_pacing_gain: Vec<f64>,
    pub cc_cwnd_gain: Vec<f64>,
    pub cc_bw_bps: Vec<f64>,
    pub cc_min_rtt_ns: Vec<f64>,
    pub cc_inflight_hi: Vec<f64>,
    pub cc_inflight_lo: Vec<f64>,
    pub cc_aux: Vec<f64>,
}

impl FlowSeries {
    /// Reserves room for exactly `rows` more rows when the allocator can give it (growth by doubling
    /// would leave up to half of a long run's columns unused).
    pub fn reserve_exact(&mut self, rows: usize) {
        fn r<T>(v: &mut Vec<T>, n: usize) {
            let _ = v.try_reserve_exact(n);
        }
        r(&mut self.t_ns, rows);
        r(&mut self.flow_id, rows);
        r(&mut self.delivered_bytes, rows);
        r(&mut self.goodput_bps, rows);
        r(&mut self.cwnd, rows);
        r(&mut self.ssthresh, rows);
        r(&mut self.srtt_ns, rows);
        r(&mut self.min_rtt_ns, rows);
        r(&mut self.pacing_rate_bps, rows);
        r(&mut self.inflight, rows);
        r(&mut self.retransmits, rows);
        r(&mut self.drops, rows);
        r(&mut self.ca_state, rows);
        r(&mut self.cc_mode, rows);
        r(&mut self.cc_pacing_gain, rows);
        r(&mut self.cc_cwnd_gain, rows);
        r(&mut self.cc_bw_bps, rows);
        r(&mut self.cc_min_rtt_ns, rows);
        r(&mut self.cc_inflight_hi, rows);
        r(&mut self.cc_inflight_lo, rows);
        r(&mut self.cc_aux, rows);
    }
}

/// Run-level totals.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Totals {
    pub events: u64,
    pub sim_end_ns: u64,
    pub window_ns: u64,
    /// Wire bytes the bottleneck transmitted during the window.
    pub window_link_tx_bytes: u64,
    pub window_queue_drops: u64,
    pub window_path_drops: u64,
    pub window_marks: u64,
    pub window_sojourn_p50_ns: f64,
    pub window_sojourn_p99_ns: f64,
    pub window_sojourn_mean_ns: f64,
    pub window_sojourn_l4s_p99_ns: f64,
    pub window_sojourn_classic_p99_ns: f64,
    pub window_departures: u64,
    pub sent_segments: u64,
    pub arrived_segments: u64,
    pub queue_drops: u64,
    pub path_drops: u64,
    /// Segments still in the queue, on the link or in a pipe when the run ended.
    pub in_flight_at_end: u64,
    /// Payload bytes that had crossed the bottleneck but not reached the application when the window
    /// opened: out of order at the receivers, or on the way to them. Delivery in order can release them in
    /// the window, so the window's delivered bytes are at most the payload of the link's transmissions in
    /// the window plus this.
    pub window_backlog_bytes: u64,
}

/// Per-flow state the simulator shows the recorder at each interval.
pub struct FlowView {
    pub flow_id: u32,
    pub cwnd: u32,
    pub ssthresh: Option<u32>,
    pub srtt: Dur,
    pub min_rtt_us: u32,
    pub pacing_rate_bytes_per_sec: u64,
    pub inflight: u32,
    pub ca_state: u8,
    pub vars: CcVars,
}

#[derive(Default)]
pub struct Recorder {
    interval: Dur,
    counters: Vec<FlowCounters>,
    at_window_start: Vec<FlowCounters>,
    at_window_end: Vec<FlowCounters>,
    /// Per-flow counters at the previous sample.
    at_last_sample: Vec<FlowCounters>,
    rtt_hist: Vec<LogHistogram>,
    in_window: bool,
    window_done: bool,
    /// Which flows send L4S traffic (ECT(1)).
    l4s: Vec<bool>,
    /// The bottleneck queue, per interval and over the window.
    meter: QueueMeter,
    /// Random-loss drops on the path during the window (not the queue's).
    win_path_drops: u64,
    window_backlog_bytes: u64,
    // Whole run.
    pub sent_segments: u64,
    pub arrived_segments: u64,
    pub queue_drops: u64,
    pub path_drops: u64,
    pub flows: FlowSeries,
}

impl Recorder {
    /// A recorder for `l4s.len()` flows; `l4s[i]` says whether flow i sends L4S (ECT(1)) traffic.
    pub fn new(l4s: Vec<bool>, interval: Dur) -> Recorder {
        let n_flows = l4s.len();
        Recorder {
            interval,
            counters: vec![FlowCounters::default(); n_flows],
            at_window_start: vec![FlowCounters::default(); n_flows],
            at_window_end: vec![FlowCounters::default(); n_flows],
            at_last_sample: vec![FlowCounters::default(); n_flows],
            rtt_hist: (0..n_flows).map(|_| LogHistogram::new()).collect(),
            l4s,
            ..Recorder::default()
        }
    }

    /// Reserves the time series' rows up front: `flow_rows` flow rows and `queue_rows` queue rows.
    pub fn reserve_rows(&mut self, flow_rows: u64, queue_rows: u64) {
        let rows = |n: u64| usize::try_from(n).unwrap_or(usize::MAX);
        self.flows.reserve_exact(rows(flow_rows));
        self.meter.series.reserve_exact(rows(queue_rows));
    }

    pub fn counters(&self, flow: u32) -> &FlowCounters {
        &self.counters[flow as usize]
    }

    pub fn rto_event(&mut self, flow: u32) {
        self.counters[flow as usize].rto_events += 1;
    }

    /// The measurement window opens; `backlog_bytes` of payload have crossed the bottleneck but not reached
    /// the application yet (see [`Totals::window_backlog_bytes`]).
    pub fn window_start(&mut self, backlog_bytes: u64) {
        self.window_backlog_bytes = backlog_bytes;
        self.at_window_start.copy_from_slice(&self.counters);
        self.in_window = true;
        self.meter.set_in_window(true);
    }

    /// The measurement window closes.
    pub fn window_end(&mut self) {
        self.at_window_end.copy_from_slice(&self.counters);
        self.in_window = false;
        self.meter.set_in_window(false);
        self.window_done = true;
    }

    /// The queue time series so far.
    pub fn queue(&self) -> &QueueSeries {
        &self.meter.series
    }

    /// Moves the flow and queue time series out (the recorder keeps empty ones).
    pub fn take_series(&mut self) -> (FlowSeries, QueueSeries) {
        (
            std::mem::take(&mut self.flows),
            std::mem::take(&mut self.meter.series),
        )
    }

    /// Appends one interval's rows: `views` are the active flows; queue state is instantaneous.
    pub fn sample(&mut self, now: Time, views: &[FlowView], backlog_bytes: u64, backlog_packets: u32) {
        let secs = self.interval.secs_f64();
        for v in views {
            let i = v.flow_id as usize;
            let cur = self.counters[i];
            let prev = self.at_last_sample[i];
            let s = &mut self.flows;
            let delivered = cur.delivered_bytes - prev.delivered_bytes;
            s.t_ns.push(now.ns());
            s.flow_id.push(v.flow_id);
            s.delivered_bytes.push(delivered);
            s.goodput_bps.push(delivered as f64 * 8.0 / secs);
            s.cwnd.push(v.cwnd);
            s.ssthresh.push(v.ssthresh.map_or(-1, |x| x as i64));
            s.srtt_ns.push(v.srtt.ns());
            s.min_rtt_ns.push(if v.min_rtt_us == u32::MAX {
                f64::NAN
            } else {
                v.min_rtt_us as f64 * 1e3
            });
            s.pacing_rate_bps.push(v.pacing_rate_bytes_per_sec as f64 * 8.0);
            s.inflight.push(v.inflight);
            s.retransmits
                .push(cur.retransmitted_segments - prev.retransmitted_segments);
            s.drops
                .push(cur.queue_drops + cur.path_drops - prev.queue_drops - prev.path_drops);
            s.ca_state.push(v.ca_state);
            s.cc_mode.push(v.vars.mode);
            s.cc_pacing_gain.push(v.vars.pacing_gain);
            s.cc_cwnd_gain.push(v.vars.cwnd_gain);
            s.cc_bw_bps.push(v.vars.bw_bps);
            s.cc_min_rtt_ns.push(v.vars.min_rtt_ns);
            s.cc_inflight_hi.push(v.vars.inflight_hi);
            s.cc_inflight_lo.push(v.vars.inflight_lo);
            s.cc_aux.push(v.vars.aux);
        }
        self.at_last_sample.copy_from_slice(&self.counters);
        self.meter.sample(now.ns(), backlog_bytes, backlog_packets);
    }

    /// Wire bytes finished serializing on the bottleneck.
    #[inline]
    pub fn link_tx(&mut self, bytes: u32) {
        self.meter.transmitted(bytes);
    }

    /// The flow table, after the run.
    pub fn flow_records(&self, meta: &[(u32, &'static str, u64, u64, u64)]) -> Vec<FlowRecord> {
        meta.iter()
            .enumerate()
            .map(|(i, &(group, cc, rtt_ns, start_ns, stop_ns))| {
                let (a, b) = (
                    self.at_window_start[i],
                    if self.window_done {
                        self.at_window_end[i]
                    } else {
                        self.counters[i]
                    },
                );
                let h = &self.rtt_hist[i];
                FlowRecord {
                    flow_id: i as u32,
                    group,
                    cc,
                    rtt_ns,
                    start_ns,
                    stop_ns,
                    window: FlowCounters {
                        sent_segments: b.sent_segments - a.sent_segments,
                        retransmitted_segments: b.retransmitted_segments - a.retransmitted_segments,
                        queue_drops: b.queue_drops - a.queue_drops,
                        path_drops: b.path_drops - a.path_drops,
                        ce_marks: b.ce_marks - a.ce_marks,
                        delivered_bytes: b.delivered_bytes - a.delivered_bytes,
                        rto_events: b.rto_events - a.rto_events,
                    },
                    total: self.counters[i],
                    rtt_samples: h.count(),
                    rtt_mean_ns: h.mean().unwrap_or(f64::NAN),
                    rtt_p99_ns: h.quantile(0.99).map_or(f64::NAN, |x| x as f64),
                }
            })
            .collect()
    }

    /// Run totals, after the run.
    pub fn totals(&self, events: u64, sim_end: Time, window_ns: u64, in_flight_at_end: u64) -> Totals {
        let w = self.meter.window();
        Totals {
            events,
            sim_end_ns: sim_end.ns(),
            window_ns,
            window_link_tx_bytes: w.tx_bytes,
            window_queue_drops: w.drops,
            window_path_drops: self.win_path_drops,
            window_marks: w.marks,
            window_sojourn_p50_ns: w.sojourn_ns(0.5),
            window_sojourn_p99_ns: w.sojourn_ns(0.99),
            window_sojourn_mean_ns: w.sojourn_mean_ns(),
            window_sojourn_l4s_p99_ns: quantile_or_nan(&w.sojourn_l4s, 0.99),
            window_sojourn_classic_p99_ns: quantile_or_nan(&w.sojourn_classic, 0.99),
            window_departures: w.departures,
            sent_segments: self.sent_segments,
            arrived_segments: self.arrived_segments,
            queue_drops: self.queue_drops,
            path_drops: self.path_drops,
            in_flight_at_end,
            window_backlog_bytes: self.window_backlog_bytes,
        }
    }
}

impl Observer for Recorder {
    #[inline]
    fn segment_sent(&mut self, _now: Time, flow: u32, _seq: u32, retransmit: bool) {
        let c = &mut self.counters[flow as usize];
        c.sent_segments += 1;
        c.retransmitted_segments += retransmit as u64;
        self.sent_segments += 1;
    }

    #[inline]
    fn segment_dropped(&mut self, _now: Time, flow: u32, _seq: u32, reason: DropReason) {
        let c = &mut self.counters[flow as usize];
        if reason == DropReason::PathLoss {
            c.path_drops += 1;
            self.path_drops += 1;
            if self.in_window {
                self.win_path_drops += 1;
            }
        } else {
            c.queue_drops += 1;
            self.queue_drops += 1;
            self.meter.dropped();
        }
    }

    #[inline]
    fn segment_marked(&mut self, _now: Time, flow: u32) {
        self.counters[flow as usize].ce_marks += 1;
        self.meter.marked();
    }

    #[inline]
    fn queue_departure(&mut self, _now: Time, flow: u32, sojourn: Dur, _wire_bytes: u32) {
        self.meter.departed(sojourn.ns(), self.l4s[flow as usize]);
    }

    #[inline]
    fn segment_arrived(&mut self, _now: Time, _flow: u32, _seq: u32) {
        self.arrived_segments += 1;
    }

    #[inline]
    fn delivered_to_app(&mut self, _now: Time, flow: u32, _first_seq: u32, _segments: u32, bytes: u64) {
        self.counters[flow as usize].delivered_bytes += bytes;
    }

    #[inline]
    fn rtt_sample(&mut self, _now: Time, flow: u32, rtt: Dur) {
        if self.in_window {
            self.rtt_hist[flow as usize].record(rtt.ns());
        }
    }
}
