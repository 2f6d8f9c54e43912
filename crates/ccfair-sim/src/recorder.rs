//! The simulator's recorder: the counters both backends keep ([`RunMeter`], with the bottleneck queue's meter)
//! plus what only the simulator sees, the senders' state sampled into the per-flow time series. Per-packet
//! work is a few integer additions into preallocated slots; rows are appended once per interval. The tables'
//! columns are defined once, in `ccfair_core::output`.

use ccfair_cc::CcVars;
use ccfair_core::{
    DropReason, Dur, FieldError, FlowRecord, FlowRow, FlowSeries, Observer, QueueSeries, RunMeter, Time,
    Totals,
};

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

/// What the flow table says of a flow besides its counters.
pub struct FlowMeta {
    pub group: u32,
    pub cc: &'static str,
    pub rtt_ns: u64,
    pub start_ns: u64,
    pub stop_ns: u64,
    /// Bytes its application writes; 0 = until it stops.
    pub size_bytes: u64,
    /// From its start to the delivery of its last byte, if it completed.
    pub completion_ns: Option<u64>,
}

#[derive(Default)]
pub struct Recorder {
    interval: Dur,
    /// Which flows send L4S traffic (ECT(1)).
    l4s: Vec<bool>,
    /// Per-flow counters and their snapshots, the RTT samples, the queue.
    meter: RunMeter,
    window_backlog_bytes: u64,
    /// Data segments that reached a receiver over the run.
    pub arrived_segments: u64,
    pub flows: FlowSeries,
}

impl Recorder {
    /// A recorder for `l4s.len()` flows; `l4s[i]` says whether flow i sends L4S (ECT(1)) traffic. Its
    /// per-flow state is reserved fallibly: an error on `field` (what drives the flow count).
    pub fn new(l4s: Vec<bool>, interval: Dur, field: &str) -> Result<Recorder, FieldError> {
        Ok(Recorder {
            interval,
            meter: RunMeter::try_new(l4s.len(), field)?,
            l4s,
            ..Recorder::default()
        })
    }

    /// Marks flow `flow` as one that sends L4S (ECT(1)) traffic, or not.
    pub fn set_l4s(&mut self, flow: usize, l4s: bool) {
        self.l4s[flow] = l4s;
    }

    /// Bytes the recorder holds reserved: its per-flow state and the time series' rows.
    pub fn reserved_bytes(&self) -> u64 {
        let per_flow = 4 * std::mem::size_of::<ccfair_core::FlowCounters>()
            + std::mem::size_of::<ccfair_core::LogHistogram>()
            + 1;
        (self.l4s.len() * per_flow) as u64
            + self.flows.capacity() as u64 * FlowSeries::ROW_BYTES
            + self.meter.queue.series.capacity() as u64 * QueueSeries::ROW_BYTES
    }

    /// Reserves the time series' rows up front: `flow_rows` flow rows and `queue_rows` queue rows; an error
    /// on `field` (what drives the rows) if the allocator refuses them.
    pub fn reserve_rows(&mut self, flow_rows: u64, queue_rows: u64, field: &str) -> Result<(), FieldError> {
        let rows = |n: u64| usize::try_from(n).unwrap_or(usize::MAX);
        self.flows.try_reserve_rows(rows(flow_rows), field)?;
        self.meter.queue.series.try_reserve_rows(rows(queue_rows), field)
    }

    pub fn counters(&self, flow: u32) -> &ccfair_core::FlowCounters {
        self.meter.counters(flow)
    }

    /// What the counters of `flow` occupy (the per-flow counters, the RTT histogram), for prefetch hints.
    pub fn flow_state(&self, flow: u32) -> (&ccfair_core::FlowCounters, &ccfair_core::LogHistogram) {
        (self.meter.counters(flow), self.meter.rtt_histogram(flow))
    }

    pub fn rto_event(&mut self, flow: u32) {
        self.meter.rto(flow);
    }

    /// `flow`'s sender began `n` window reductions.
    pub fn cwnd_reductions(&mut self, flow: u32, n: u64) {
        self.meter.cwnd_reductions(flow, n);
    }

    /// The measurement window opens; `backlog_bytes` of payload have crossed the bottleneck but not reached
    /// the application yet (see [`Totals::window_backlog_bytes`]).
    pub fn window_start(&mut self, now: Time, backlog_bytes: u64) {
        self.window_backlog_bytes = backlog_bytes;
        self.meter.window_start(now.ns());
    }

    /// The measurement window closes.
    pub fn window_end(&mut self, now: Time) {
        self.meter.window_end(now.ns());
    }

    /// The queue time series so far.
    pub fn queue(&self) -> &QueueSeries {
        &self.meter.queue.series
    }

    /// Moves the flow and queue time series out (the recorder keeps empty ones).
    pub fn take_series(&mut self) -> (FlowSeries, QueueSeries) {
        (
            std::mem::take(&mut self.flows),
            std::mem::take(&mut self.meter.queue.series),
        )
    }

    /// Appends one interval's rows: `views` are the active flows; queue state is instantaneous.
    pub fn sample(&mut self, now: Time, views: &[FlowView], backlog_bytes: u64, backlog_packets: u32) {
        let secs = self.interval.secs_f64();
        for v in views {
            let d = self.meter.since_sample(v.flow_id);
            self.flows.push(FlowRow {
                t_ns: now.ns(),
                flow_id: v.flow_id,
                delivered_bytes: d.delivered_bytes,
                goodput_bps: d.delivered_bytes as f64 * 8.0 / secs,
                cwnd: v.cwnd,
                ssthresh: v.ssthresh.map_or(-1, |x| x as i64),
                srtt_ns: v.srtt.ns(),
                min_rtt_ns: if v.min_rtt_us == u32::MAX {
                    f64::NAN
                } else {
                    v.min_rtt_us as f64 * 1e3
                },
                pacing_rate_bps: v.pacing_rate_bytes_per_sec as f64 * 8.0,
                inflight: v.inflight,
                retransmits: d.retransmitted_segments,
                drops: d.queue_drops + d.path_drops,
                ca_state: v.ca_state,
                cc_mode: v.vars.mode,
                cc_pacing_gain: v.vars.pacing_gain,
                cc_cwnd_gain: v.vars.cwnd_gain,
                cc_bw_bps: v.vars.bw_bps,
                cc_min_rtt_ns: v.vars.min_rtt_ns,
                cc_inflight_hi: v.vars.inflight_hi,
                cc_inflight_lo: v.vars.inflight_lo,
                cc_aux: v.vars.aux,
            });
        }
        self.meter.sampled();
        self.meter.queue.sample(now.ns(), backlog_bytes, backlog_packets);
    }

    /// `bytes` on the wire finished serializing on the bottleneck at `end`, having started at `start`.
    #[inline]
    pub fn link_tx(&mut self, bytes: u32, start: Time, end: Time) {
        self.meter.queue.transmitted(bytes, start.ns(), end.ns());
    }

    /// The flow table, after the run.
    pub fn flow_records(&self, meta: &[FlowMeta]) -> Vec<FlowRecord> {
        meta.iter()
            .zip(0u32..)
            .map(|(m, flow_id)| {
                let (rtt_samples, rtt_mean_ns, rtt_p99_ns) = self.meter.rtt_stats(flow_id);
                FlowRecord {
                    flow_id,
                    group: m.group,
                    cc: m.cc,
                    rtt_ns: m.rtt_ns,
                    start_ns: m.start_ns,
                    stop_ns: m.stop_ns,
                    size_bytes: m.size_bytes,
                    window: self.meter.window(flow_id),
                    total: *self.meter.counters(flow_id),
                    rtt_samples,
                    rtt_mean_ns,
                    rtt_p99_ns,
                    completion_ns: m.completion_ns.map_or(f64::NAN, |ns| ns as f64),
                }
            })
            .collect()
    }

    /// Run totals, after the run (`wall_seconds` is the caller's to set).
    pub fn totals(&self, events: u64, sim_end: Time, window_ns: u64, in_flight_at_end: u64) -> Totals {
        self.meter.totals(Totals {
            events,
            sim_end_ns: sim_end.ns(),
            window_ns,
            arrived_segments: self.arrived_segments,
            in_flight_at_end,
            window_backlog_bytes: self.window_backlog_bytes,
            ..Totals::default()
        })
    }
}

impl Observer for Recorder {
    #[inline]
    fn segment_sent(&mut self, _now: Time, flow: u32, _seq: u32, retransmit: bool) {
        self.meter.sent(flow, retransmit);
    }

    #[inline]
    fn segment_dropped(&mut self, _now: Time, flow: u32, _seq: u32, reason: DropReason) {
        if reason == DropReason::PathLoss {
            self.meter.path_drop(flow);
        } else {
            self.meter.queue_drop(flow);
        }
    }

    #[inline]
    fn segment_marked(&mut self, _now: Time, flow: u32) {
        self.meter.marked(flow);
    }

    #[inline]
    fn queue_departure(&mut self, _now: Time, flow: u32, sojourn: Dur, _wire_bytes: u32) {
        self.meter.queue.departed(sojourn.ns(), self.l4s[flow as usize]);
    }

    #[inline]
    fn segment_arrived(&mut self, _now: Time, _flow: u32, _seq: u32) {
        self.arrived_segments += 1;
    }

    #[inline]
    fn delivered_to_app(&mut self, _now: Time, flow: u32, _first_seq: u32, _segments: u32, bytes: u64) {
        self.meter.delivered(flow, bytes);
    }

    #[inline]
    fn rtt_sample(&mut self, _now: Time, flow: u32, rtt: Dur) {
        self.meter.rtt(flow, rtt.ns());
    }
}
