//! What a run will cost, from its resolved scenario alone: peak memory and simulator events. The front end
//! refuses a scenario whose estimate exceeds the machine's limits before anything is allocated, and a sweep
//! shows the estimates of its runs.
//!
//! Memory, in parts, each named by the scenario field that drives it:
//! - flow state (`flows[i].count`): per flow the simulator's `Flow` (sender, receiver, pipes, timers), its
//!   congestion control, the recorder's counters and RTT histogram, and its row in the result tables;
//! - the first flight (`flows[i].initial_window`): every flow sends its initial window at once (no more than
//!   its receiver's first window, on hosts that model one), and each segment holds a retransmission-queue
//!   entry until it is acknowledged;
//! - segments in flight (`link.rate`): at most twice (bandwidth-delay product + buffer) over all flows (a slow
//!   start overshoots by up to one window before it sees a loss), no more than slow start can have sent
//!   by the end of the run and, when every group's hosts model the receive window, no more than the
//!   windows their largest buffers (`rmem`) can offer; each holds a retransmission-queue entry (storage grows by doubling, so up to two
//!   per segment), data segments and ACKs crossing the pipes hold one entry each;
//! - the queue (`link.buffer`): its limit in packets, at most the segments in flight, one slot per packet,
//!   doubled for growth, plus what the discipline reserves and its own state (FQ-CoDel buckets, PPV marker);
//! - the time series (`interval`, or `duration` / `flows[i].count` when the interval is the default): one row
//!   per active flow per interval and one queue row per interval, each held about three times at the peak
//!   (the simulator's columns, the bytes handed to Python, the tables built from them; measured, see the
//!   tests).
//!
//! Events: every packet the link carries costs its link-done and arrival events and half an ACK (one per
//! two segments), plus a pacing timer per TSO burst for paced flows; to that come the interval samples and
//! each flow's start, stop and retransmission timers. The host model adds per packet: one event where the
//! sending host delays or serializes segments (processing noise, a NIC of finite rate: each segment leaves
//! the host by an event of its own), and where the receiving host coalesces (GRO), one flush per aggregate
//! and one ACK per aggregate instead of one per two segments; an aggregate holds the segments a flow's fair
//! share of the link brings within the flush window (1 to 45). The packets are the link's capacity over
//! the run (or the senders' NICs' together, if less), or less when slow start cannot fill it: a flow's
//! window at most doubles per base RTT from its initial window, so by time t a group can have sent at most
//! count × initial_window × 2^(t / rtt) segments per RTT, and never more than its largest receive window.
//! Path loss limits flows further; the estimate ignores that and errs high. The queue discipline's own timer
//! (PIE's and DualPI2's probability updates, adaptive RED) runs once per period while the queue is backlogged:
//! counted as one event per period over the whole run, since its work is an event's, though no event carries
//! it. When every group is finite
//! (`size`), the packets are at most the flows' mean sizes in segments, plus a margin for retransmissions.
//! With arrivals, a flow's time-series rows count from its mean arrival; its slow start is counted from
//! its group's start (which errs high while flows are still arriving).

use ccfair_core::rng::StreamId;
use ccfair_core::{LogHistogram, Rng};
use serde::Serialize;

use crate::recorder::FlowView;
use crate::scenario::UncheckedSpec;
use crate::tcp::rtx_queue::SegState;
use crate::tcp::{Ack, Arrival, SackBlock, Segment};
use ccfair_core::{FlowCounters, FlowRecord};

/// One part of an estimate: what it counts, the scenario field that drives it, and the amount.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Part {
    pub what: &'static str,
    pub field: String,
    pub amount: u64,
}

/// A run's predicted cost.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Estimate {
    pub peak_memory_bytes: u64,
    pub events: u64,
    /// The memory estimate's parts, largest first, besides `fixed_memory_bytes`.
    pub memory: Vec<Part>,
    /// What any run costs: the event queue's first block, buffers, the front end's first use of its
    /// libraries.
    pub fixed_memory_bytes: u64,
    /// The event estimate's parts, largest first.
    pub event_parts: Vec<Part>,
    /// Time-series rows: per flow per interval, and per interval for the queue.
    pub flow_rows: u64,
    pub queue_rows: u64,
}

impl Estimate {
    /// The field driving the largest memory part.
    pub fn memory_field(&self) -> &str {
        self.memory.first().map_or("scenario", |p| p.field.as_str())
    }

    /// The field driving the largest event part.
    pub fn events_field(&self) -> &str {
        self.event_parts.first().map_or("duration", |p| p.field.as_str())
    }
}

/// Bytes of an RTT histogram's storage for a flow whose RTTs span three octaves (a base RTT and queueing up
/// to several times it).
const RTT_HISTOGRAM_STORAGE_BYTES: u64 = 3 * 64 * 4;
/// The front end's flow table: about 40 columns of 8 bytes, held twice while it is built.
const PYTHON_FLOW_ROW_BYTES: u64 = 2 * 40 * 8;
/// Event-queue entries per flow (start, stop, its pipes' heads, its timers), 16 bytes each.
const HEAP_BYTES_PER_FLOW: u64 = 6 * 16;
/// Copies of a time-series row alive at the peak: the simulator's columns and the bytes handed to Python,
/// then those bytes and the NumPy columns of the tables, then the tables and their Arrow form when saved.
const ROW_COPIES: u64 = 3;
/// Fixed costs of a run: the event queue's first block, buffers, and the front end's (a first run in a process
/// loads parts of pandas and NumPy it had not used yet: about 9 MB measured).
const FIXED_BYTES: u64 = 10 << 20;

/// Events per packet the link carries: link done and arrival, and one ACK per two segments.
const EVENTS_PER_PACKET: f64 = 2.5;
/// Linux's smallest TSO burst (`tcp_min_tso_segs`): a paced flow wakes at most once per two segments.
const MIN_BURST_SEGMENTS: f64 = 2.0;
/// A paced flow's burst is about 1 ms of its rate (`sk_pacing_shift` = 10).
const BURST_NS: f64 = 1e6;
/// Retransmission timers that fire per flow per second at most, when a flow starves (RTO backoff starts at
/// Linux's 200 ms minimum; TLP and RACK timers fire once per loss episode).
const TIMER_EVENTS_PER_FLOW_SECOND: f64 = 1.0;
/// Segments a finite flow sends per segment of its size: its retransmissions. A slow start that overflows a
/// drop-tail buffer loses up to half its last window (Hoe, 1996), and a transfer that long is in slow
/// start for most of its life; a quarter more errs high for transfers that see less loss.
const RETRANSMIT_MARGIN: f64 = 1.25;
/// The most segments of 1448 B in one GRO aggregate (64 KB).
const GRO_MAX_SEGMENTS: f64 = 45.0;
/// How long after its `stop` a flow may still have rows (its last data and ACKs draining).
const DRAIN_NS: u64 = 1_000_000_000;

/// The time-series rows a run produces at most: (per flow, per queue). One sample per interval up to the
/// end; a flow has a row from the first sample after its start while it has data outstanding.
pub fn series_rows(spec: &UncheckedSpec) -> (u64, u64) {
    let samples = spec.duration_ns / spec.interval_ns;
    let flow_rows = spec
        .groups
        .iter()
        .map(|g| match g.arrivals {
            None => group_rows(spec, g.start_ns, g.stop_ns).saturating_mul(g.count as u64),
            // Each flow from its mean arrival: the rows of late arrivals are fewer.
            Some(a) => (0..g.count)
                .map(|k| {
                    let start = g.start_ns.saturating_add(a.mean_offset_ns(k, g.count) as u64);
                    group_rows(spec, start, g.stop_ns)
                })
                .fold(0u64, u64::saturating_add),
        })
        .fold(0u64, u64::saturating_add);
    (flow_rows, samples)
}

fn group_rows(spec: &UncheckedSpec, start_ns: u64, stop_ns: Option<u64>) -> u64 {
    let samples = spec.duration_ns / spec.interval_ns;
    let last = match stop_ns {
        Some(stop) => samples.min(stop.saturating_add(DRAIN_NS).div_ceil(spec.interval_ns)),
        None => samples,
    };
    last.saturating_sub(start_ns / spec.interval_ns)
}

/// Segments the finite flows send, retransmissions included, if every group is finite (a bulk group can
/// fill whatever the link has left): each flow's mean size in segments, with [`RETRANSMIT_MARGIN`].
fn finite_segments(spec: &UncheckedSpec) -> Option<f64> {
    let mss = spec.mss() as f64;
    spec.groups
        .iter()
        .map(|g| {
            g.size
                .map(|s| g.count as f64 * (s.mean_bytes() as f64 / mss).ceil() * RETRANSMIT_MARGIN)
        })
        .sum()
}

/// Bytes of one flow's state with congestion control `cc_bytes` bytes large.
fn flow_bytes(cc_bytes: u64) -> u64 {
    let size = |n: usize| n as u64;
    size(crate::sim::FLOW_BYTES)
        + cc_bytes
        + 8 * size(std::mem::size_of::<SackBlock>()) // the receiver's out-of-order blocks
        + 4 * size(std::mem::size_of::<FlowCounters>()) // counters, window edges, last sample
        + size(std::mem::size_of::<LogHistogram>())
        + RTT_HISTOGRAM_STORAGE_BYTES
        + size(std::mem::size_of::<FlowView>())
        + size(std::mem::size_of::<FlowRecord>())
        + HEAP_BYTES_PER_FLOW
        + PYTHON_FLOW_ROW_BYTES
}

/// Bytes of one time-series row of a flow and of the queue (the columns of `FlowSeries` and `QueueSeries`).
const FLOW_ROW_BYTES: u64 = ccfair_core::FlowSeries::ROW_BYTES;
const QUEUE_ROW_BYTES: u64 = ccfair_core::QueueSeries::ROW_BYTES;

/// The field that names a part driven by the time series.
pub(crate) fn series_field(spec: &UncheckedSpec, biggest_group: usize) -> String {
    const DEFAULT_INTERVAL_NS: u64 = 100_000_000;
    if spec.interval_ns < DEFAULT_INTERVAL_NS {
        "interval".into()
    } else if spec.flow_count() > 1000 {
        format!("flows[{biggest_group}].count")
    } else {
        "duration".into()
    }
}

/// Segments all flows can have sent per second at time `t_ns` by slow start alone (each group's windows
/// doubling per base RTT from the initial window, up to the largest receive window where the hosts model
/// one), as f64 (it overflows any integer).
fn ramp_segments_per_second(spec: &UncheckedSpec, t_ns: f64) -> f64 {
    let mss = spec.mss();
    spec.groups
        .iter()
        .filter(|g| (g.start_ns as f64) < t_ns && g.stop_ns.is_none_or(|s| t_ns < s as f64))
        .map(|g| {
            let rounds = ((t_ns - g.start_ns as f64) / g.rtt_ns as f64).min(1000.0);
            let window = g.initial_window as f64 * rounds.exp2();
            let window = rwnd_segments(g, mss).map_or(window, |(_, largest)| window.min(largest));
            g.count as f64 * window / (g.rtt_ns as f64 * 1e-9)
        })
        .sum()
}

/// Packets the link carries over the run: its capacity, or what slow start allows while it cannot fill it
/// (integrated over 2048 steps).
fn link_packets(spec: &UncheckedSpec, capacity_pps: f64) -> f64 {
    const STEPS: u32 = 2048;
    let step_ns = spec.duration_ns as f64 / STEPS as f64;
    (0..STEPS)
        .map(|i| {
            let t = (i as f64 + 1.0) * step_ns;
            ramp_segments_per_second(spec, t).min(capacity_pps) * step_ns * 1e-9
        })
        .sum()
}

/// The events the host model adds per packet the link carries, averaged over the flows (see the module docs).
fn host_events_per_packet(spec: &UncheckedSpec, fair_share_bps: f64) -> f64 {
    let mtu_bits = spec.link.mtu_bytes as f64 * 8.0;
    let flows = spec.flow_count().max(1) as f64;
    spec.groups
        .iter()
        .map(|g| {
            let h = &g.host;
            let mut extra = 0.0;
            if h.holds_segments() {
                extra += 1.0;
            }
            if h.gro_window_ns() > 0 {
                let aggregate = (fair_share_bps * h.gro_window_ns() as f64 * 1e-9 / mtu_bits)
                    .clamp(1.0, GRO_MAX_SEGMENTS);
                // One flush per aggregate; one ACK per aggregate of two or more, else per two segments.
                extra += 1.0 / aggregate + 1.0 / aggregate.max(2.0) - 0.5;
            }
            g.count as f64 / flows * extra
        })
        .sum()
}

/// A flow's receive windows in segments, on hosts that model them: the first (the SYN-ACK's) and the
/// largest (`tcp_win_from_space` of the buffer's cap, `rmem[2]`).
fn rwnd_segments(g: &crate::scenario::GroupSpec, mss: u32) -> Option<(f64, f64)> {
    let cfg = crate::host::rwnd_config(&g.host)?;
    let first = crate::tcp::RcvWindow::new(cfg, mss, ccfair_core::Dur::ZERO).initial_window() as f64;
    let largest = cfg.rmem[2] as f64 * cfg.scaling_ratio as f64 / 256.0;
    Some(((first / mss as f64).ceil(), (largest / mss as f64).ceil()))
}

fn to_u64(x: f64) -> u64 {
    if x >= u64::MAX as f64 {
        u64::MAX
    } else {
        x.max(0.0).ceil() as u64
    }
}

/// The group with the most flows (the first of equals): the one whose `count` names what the flow count
/// drives.
pub(crate) fn biggest_group(spec: &UncheckedSpec) -> usize {
    (0..spec.groups.len())
        .max_by_key(|&i| (spec.groups[i].count, std::cmp::Reverse(i)))
        .unwrap_or(0)
}

/// The estimate of `spec` (which must be valid).
pub fn estimate(spec: &UncheckedSpec) -> Estimate {
    let mtu = spec.link.mtu_bytes as f64;
    let rate_bps = spec.link.rate_bps as f64;
    let flows = spec.flow_count() as u64;
    let biggest_group = biggest_group(spec);
    let count_field = format!("flows[{biggest_group}].count");

    // ---- memory
    let mut memory = Vec::new();
    let state: u64 = spec
        .groups
        .iter()
        .map(|g| {
            let cc = g.cc.build(Rng::stream(0, StreamId::Other(0)));
            let cc_bytes = std::mem::size_of_val(&*cc) as u64;
            // A receiver that models its window keeps that state on the heap.
            let rwnd_bytes = if g.host.rcv_window {
                std::mem::size_of::<crate::tcp::RcvWindow>() as u64
            } else {
                0
            };
            (g.count as u64).saturating_mul(flow_bytes(cc_bytes) + rwnd_bytes)
        })
        .fold(0, u64::saturating_add)
        .saturating_add(spec.link.aqm.state_bytes(flows));
    memory.push(Part {
        what: "flow state",
        field: count_field.clone(),
        amount: state,
    });

    let seg_state = std::mem::size_of::<SegState>() as f64;
    let mss = spec.mss();
    let first_flight = |g: &crate::scenario::GroupSpec| {
        let first = rwnd_segments(g, mss).map_or(g.initial_window as f64, |(first, _)| {
            first.min(g.initial_window as f64)
        });
        g.count as f64 * first * seg_state
    };
    let iw_group = (0..spec.groups.len())
        .max_by(|&a, &b| first_flight(&spec.groups[a]).total_cmp(&first_flight(&spec.groups[b])))
        .unwrap_or(0);
    let largest_iw = spec.groups.iter().map(|g| g.initial_window).max().unwrap_or(0) as f64;
    memory.push(Part {
        what: "first flight",
        field: format!("flows[{iw_group}].initial_window"),
        amount: to_u64(
            spec.groups.iter().map(first_flight).sum::<f64>()
                + largest_iw * std::mem::size_of::<Segment>() as f64,
        ),
    });

    let max_rtt_ns = spec.groups.iter().map(|g| g.rtt_ns).max().unwrap_or(0) as f64;
    let bdp_packets = rate_bps * max_rtt_ns * 1e-9 / 8.0 / mtu;
    let buffer_packets = spec.link.aqm.limit.bytes(spec.link.mtu_bytes) as f64 / mtu;
    let ramp_in_flight = ramp_segments_per_second(spec, spec.duration_ns as f64) * max_rtt_ns * 1e-9;
    let window_limit = spec
        .groups
        .iter()
        .map(|g| rwnd_segments(g, mss).map(|(_, largest)| g.count as f64 * largest))
        .sum::<Option<f64>>()
        .unwrap_or(f64::INFINITY);
    let in_flight = (2.0 * (bdp_packets + buffer_packets))
        .min(ramp_in_flight.max(1.0))
        .min(window_limit.max(1.0));
    let pipe_entry = (std::mem::size_of::<(u64, Arrival)>() + std::mem::size_of::<(u64, Ack)>()) as f64;
    let on_path = in_flight.min(bdp_packets);
    memory.push(Part {
        what: "segments in flight",
        field: "link.rate".into(),
        amount: to_u64(in_flight * 2.0 * seg_state + on_path * 2.0 * pipe_entry),
    });

    let slot = spec.link.aqm.packet_slot_bytes::<Segment>() as f64;
    let queued = buffer_packets.min(in_flight);
    let prealloc = spec.link.aqm.preallocated_packets(spec.link.mtu_bytes) as f64;
    memory.push(Part {
        what: "queue",
        field: "link.buffer".into(),
        amount: to_u64((2.0 * queued).max(prealloc) * slot),
    });

    let (flow_rows, queue_rows) = series_rows(spec);
    memory.push(Part {
        what: "time series",
        field: series_field(spec, biggest_group),
        amount: (flow_rows as u128 * FLOW_ROW_BYTES as u128 + queue_rows as u128 * QUEUE_ROW_BYTES as u128)
            .saturating_mul(ROW_COPIES as u128)
            .min(u64::MAX as u128) as u64,
    });
    memory.sort_by_key(|p| std::cmp::Reverse(p.amount));
    let peak_memory_bytes = memory
        .iter()
        .map(|p| p.amount)
        .fold(FIXED_BYTES, u64::saturating_add);

    // ---- events
    // The senders' NICs (one per group) carry no more than their line rates together.
    let nics_bps: f64 = spec
        .groups
        .iter()
        .map(|g| match g.host.nic_rate_bps {
            0 => f64::INFINITY,
            r => r as f64,
        })
        .sum();
    let capacity_pps = rate_bps.min(nics_bps) / 8.0 / mtu;
    let packets = match finite_segments(spec) {
        Some(finite) => link_packets(spec, capacity_pps).min(finite),
        None => link_packets(spec, capacity_pps),
    };
    // Pacing timers: one per burst of the paced flows' share of the packets.
    let fair_share_bps = rate_bps / flows.max(1) as f64;
    let burst = (fair_share_bps * BURST_NS * 1e-9 / 8.0 / mtu).max(MIN_BURST_SEGMENTS);
    let paced_flows: u64 = spec
        .groups
        .iter()
        .filter(|g| g.pacing || g.cc.flags().needs_pacing)
        .map(|g| g.count as u64)
        .sum();
    let paced_share = paced_flows as f64 / flows.max(1) as f64;
    let per_packet = EVENTS_PER_PACKET + paced_share / burst + host_events_per_packet(spec, fair_share_bps);
    // A finite flow's timers fire at most once per segment it sends (each one sends or probes one).
    let timer_events: f64 = spec
        .groups
        .iter()
        .map(|g| {
            let end = g.stop_ns.unwrap_or(spec.duration_ns).min(spec.duration_ns);
            let per_flow = end.saturating_sub(g.start_ns) as f64 * 1e-9 * TIMER_EVENTS_PER_FLOW_SECOND;
            let segments = g.size.map_or(f64::INFINITY, |s| {
                (s.mean_bytes() as f64 / spec.mss() as f64).ceil()
            });
            g.count as f64 * per_flow.min(segments)
        })
        .sum();
    let mut event_parts = vec![
        Part {
            what: "packets",
            field: "duration".into(),
            amount: to_u64(packets * per_packet),
        },
        Part {
            what: "interval samples",
            field: "interval".into(),
            amount: queue_rows,
        },
        Part {
            what: "flow starts, stops and timers",
            field: count_field,
            amount: to_u64(2.0 * flows as f64 + timer_events),
        },
    ];
    if let Some((runs, param)) = spec.link.aqm.timer_runs(spec.duration_ns) {
        event_parts.push(Part {
            what: "queue discipline timers",
            field: format!("link.aqm.{param}"),
            amount: runs,
        });
    }
    event_parts.sort_by_key(|p| std::cmp::Reverse(p.amount));
    let events = event_parts.iter().map(|p| p.amount).fold(2, u64::saturating_add); // the window's edges
    Estimate {
        peak_memory_bytes,
        events,
        memory,
        fixed_memory_bytes: FIXED_BYTES,
        event_parts,
        flow_rows,
        queue_rows,
    }
}
