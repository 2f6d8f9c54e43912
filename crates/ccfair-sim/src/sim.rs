//! The dumbbell simulation: flows (a sender, a receiver and two pipes each) around one bottleneck.
//!
//! Topology and timing:
//! - A sender hands segments to the bottleneck's queue (the access link has no delay), after its host's
//!   processing delay if the host has one and through its host's NIC, which spaces them at its line rate (one
//!   NIC per group; infinitely fast unless the host has a `nic_rate`, see [`crate::host`]); the receiving
//!   host's delay is added to the forward pipe, and a receiving host with GRO hands TCP aggregates of
//!   segments. Bernoulli path loss, when configured, drops a segment there, before the bottleneck.
//! - The bottleneck serializes at its rate; a segment then crosses the flow's forward pipe (half the flow's
//!   base RTT) to the receiver. ACKs cross the flow's return pipe (the other half) without congestion.
//!   So a flow's RTT is its base RTT plus queueing plus one serialization time at the bottleneck.
//! - Everything is driven by one event queue ordered by (time, insertion order). Randomness (path loss,
//!   algorithms that randomize, the hosts' start jitter) comes from per-flow streams derived from the run's
//!   seed.
//!
//! Layout: each event touches one flow, whose state has usually left the caches since its last event when
//! there are thousands of flows; what one kind of event reads is kept together so that it costs few cache
//! misses (a segment leaving its sending host: `Egress`, one 64-byte line, and the sender's TSQ state). What
//! waits for a one-way delay is stored small, as its entry is cold again when it leaves: a segment past the
//! bottleneck crosses the forward pipe as an [`Arrival`] (16 bytes, what the receiving end reads). State that
//! lives for one event is kept once for all flows, where it stays in the caches: the ACK's delivery-rate
//! sample (`rate_scratch`), the segment and ACK buffers.
//!
//! Prefetching: the event queue knows the next events (the current bucket's sorted run), so with thousands of
//! flows (`PREFETCH_MIN_FLOWS`), while one event runs, the loop asks the caches for what the next ones will
//! read (`prefetch`), in two steps: the event after next gets its flow's own state (the lines of `Flow` its
//! kind reads, and its counters), whose addresses need nothing read; the next event gets what that state
//! points to (the pipe entry it takes, the retransmission queue's ends, the algorithm's state), the state
//! having had an event's time to arrive. A transmission that starts asks for the forward pipe and host its
//! departure will read. With 100,000 flows this overlaps the misses of consecutive events instead of paying
//! them one after another; the hints change nothing that runs.
//!
//! Every packet-level event is reported once, to `report`: a [`Tee`] of the built-in [`Recorder`] and the
//! caller's `Observer` `O`, which sees each event after the recorder.

use ccfair_aqm::{BuildContext, PpvMarker, QdiscSink};
use ccfair_cc::rate::RateScratch;
use ccfair_core::error::{out_of_memory, try_reserve};
use ccfair_core::rng::StreamId;
use ccfair_core::{DropReason, Dur, FieldError, NullObserver, Observer, Rate, Rng, Tee, Time};

use crate::engine::{EventQueue, TimerSlot};
use crate::host::{Aggregate, Gro, HostTiming, Nic};
use crate::net::{Bottleneck, Pipe};
use crate::prefetch;
use crate::recorder::{FlowMeta, FlowView, Recorder};
use crate::tcp::{Ack, Arrival, EcnProfile, RcvWindow, Receiver, Segment, Sender, SenderConfig};
use crate::traffic::flow_plans;
use ccfair_core::QueueSeries;
use ccfair_core::{FlowRecord, FlowSeries, Totals};
use ccfair_scenario::{ConnectMode, ScenarioSpec};

// Event kinds, packed with a flow index into one 24-bit code: 4 bits of kind, 20 bits of flow index.
const EV_LINK_DONE: u64 = 0;
const EV_DATA: u64 = 1;
const EV_ACK: u64 = 2;
const EV_XMIT_TIMER: u64 = 3;
const EV_PACING_TIMER: u64 = 4;
const EV_DELACK_TIMER: u64 = 5;
const EV_COMP_TIMER: u64 = 6;
const EV_START: u64 = 7;
const EV_STOP: u64 = 8;
const EV_SAMPLE: u64 = 9;
const EV_WINDOW_START: u64 = 10;
const EV_WINDOW_END: u64 = 11;
const EV_HOST_TX: u64 = 12;
const EV_GRO_FLUSH: u64 = 13;

/// The fewest flows with which the event loop prefetches the next events' flow state (see the module docs).
/// Below a few thousand flows their state stays in a last-level cache of tens of MB, whose latency the core
/// hides without help, and the hints only cost instructions: on the 2-core EPYC (32 MB L3, corescale's
/// setting) they made 1000 flows 8 % slower, 2000 flows 2 % slower, 3000 flows 10 % and 5000 flows 13 %
/// faster.
const PREFETCH_MIN_FLOWS: usize = 3000;

/// How often [`Simulation::run_until_events`] reads the queue discipline's timer runs, in entries popped.
const WORK_CHECK_POPS: u64 = 16;

const FLOW_BITS: u32 = ccfair_scenario::FLOW_INDEX_BITS;
pub use ccfair_scenario::MAX_FLOWS;

#[inline]
fn code(kind: u64, flow: u32) -> u64 {
    (kind << FLOW_BITS) | flow as u64
}

/// Bytes of one flow's fixed state (for the estimate of a run's memory).
pub(crate) const FLOW_BYTES: usize = std::mem::size_of::<Flow>();

struct Flow {
    egress: Egress,
    sender: Sender,
    receiver: Receiver,
    /// Segments past the bottleneck on their way to the receiver, in their compact form.
    data_pipe: Pipe<Arrival>,
    ack_pipe: Pipe<Ack>,
    host: HostTiming,
    /// Receive coalescing at the receiving host (off on an ideal host).
    gro: Gro,
    rng: Rng,
    rtt: Dur,
    /// The connection opens at the flow's start (its SYN crossing the network then), not before the run.
    open_at_start: bool,
    start: Time,
    stop: Time,
    finished_at: Option<Time>,
    /// Bytes the application writes (0: until it stops) and the segments they take (`u32::MAX`: unlimited).
    size_bytes: u64,
    size_segments: u32,
    /// When the last byte of a finite flow reached the receiving application.
    completed_at: Option<Time>,
    xmit_slot: TimerSlot,
    pacing_slot: TimerSlot,
    delack_slot: TimerSlot,
    comp_slot: TimerSlot,
    gro_slot: TimerSlot,
}

/// What a segment on its way from TCP to the bottleneck reads of its flow, on one cache line of its own: with
/// thousands of flows a flow's state is out of the caches by the time its next segment leaves the host, and
/// these fields spread over the flow would cost a miss each.
#[repr(align(64))]
struct Egress {
    /// Segments between TCP and the wire at a sender with processing delays (empty on an ideal host).
    host_tx: Pipe<Segment>,
    /// The flow's group, whose host's NIC it sends through.
    group: u32,
    /// Random loss on the flow's path.
    loss: f64,
}

/// Collects what the qdisc drops or marks during one call.
#[derive(Default)]
struct QdiscEvents {
    drops: Vec<(Segment, DropReason)>,
    marks: Vec<u32>,
}

impl QdiscSink<Segment> for QdiscEvents {
    fn dropped(&mut self, _now: Time, pkt: Segment, reason: DropReason) {
        self.drops.push((pkt, reason));
    }
    fn marked(&mut self, _now: Time, pkt: &Segment) {
        self.marks.push(pkt.flow);
    }
}

/// Everything a finished run produced.
pub struct RunOutput {
    pub flows: Vec<FlowRecord>,
    pub series: FlowSeries,
    pub queue: QueueSeries,
    pub totals: Totals,
}

pub struct Simulation<O: Observer = NullObserver> {
    spec: ScenarioSpec,
    now: Time,
    end: Time,
    events: EventQueue,
    flows: Vec<Flow>,
    /// Each group's sending host's NIC.
    nics: Vec<Nic>,
    bottleneck: Bottleneck,
    /// When the packet in transmission on the bottleneck started serializing.
    tx_start: Time,
    /// Where every packet-level event goes: the recorder, then the caller's observer.
    report: Tee<Recorder, O>,
    seg_buf: Vec<Segment>,
    ack_buf: Vec<Ack>,
    qev: QdiscEvents,
    /// The delivery-rate sample of the ACK being processed: one for every sender, so it stays in the caches.
    rate_scratch: RateScratch,
    /// The edge marker a core-stateless AQM needs at the senders (PPV), stamping every segment's value.
    marker: Option<PpvMarker>,
    /// Whether the event loop prefetches the next events' flow state (`PREFETCH_MIN_FLOWS`).
    prefetch_flows: bool,
    events_processed: u64,
}

impl Simulation<NullObserver> {
    pub fn new(spec: ScenarioSpec, seed: u64) -> Result<Self, FieldError> {
        Simulation::with_observer(spec, seed, NullObserver)
    }
}

/// Asks the allocator once for the run's estimated peak less what `flows` and `rec` hold reserved, and gives
/// it back (see [`Simulation::with_observer`]); an error on the estimate's largest memory part if refused.
fn probe_the_rest(spec: &ScenarioSpec, flows: &Vec<Flow>, rec: &Recorder) -> Result<(), FieldError> {
    let e = crate::estimate::estimate(spec);
    let reserved = (flows.capacity() * FLOW_BYTES) as u64 + rec.reserved_bytes();
    let rest = e.peak_memory_bytes.saturating_sub(reserved);
    let mut probe: Vec<u8> = Vec::new();
    try_reserve(
        &mut probe,
        usize::try_from(rest).unwrap_or(usize::MAX),
        e.memory_field(),
        "the run",
    )
    .map_err(|_| {
        out_of_memory(
            e.memory_field(),
            "the run's estimated peak",
            e.peak_memory_bytes as u128,
        )
    })
}

impl<O: Observer> Simulation<O> {
    /// A run of `spec` (checked when it was built) under `seed`; errors where a queue discipline cannot be
    /// built for this link or the memory is refused. What the scenario's size drives is reserved up front and
    /// fallibly, each named by the field that drives it: the flows' state and the recorder's per-flow state
    /// (`flows[i].count`), the time series (`interval`, `duration` or the count). The rest is allocated piece
    /// by piece, which stable Rust cannot make fallible: each flow's own objects while it is built
    /// (its congestion control, its pipes), and what grows during the run (retransmission queues, pipes, the
    /// event queue, the tables handed to Python). For those the run's estimated peak ([`crate::estimate`]),
    /// less what is reserved, is asked of the allocator once and given back (a probe, no page touched), so a
    /// process limit (`ulimit -v`) or a machine that cannot hold the run refuses it here, named by the
    /// estimate's largest part. What remains: an allocation beyond the estimate (which errs high) that the
    /// system refuses later still aborts the process; the front end also refuses, before it calls here, a
    /// run whose estimate exceeds the room left under RLIMIT_AS (`ccfair.resources`).
    pub fn with_observer(spec: ScenarioSpec, seed: u64, obs: O) -> Result<Self, FieldError> {
        let mss = spec.mss();
        let biggest = crate::estimate::biggest_group(&spec);
        let count_field = format!("flows[{biggest}].count");
        let n = spec.flow_count() as usize;
        let mut flows: Vec<Flow> = Vec::new();
        try_reserve(&mut flows, n, &count_field, "the flows' state")?;
        let interval = Dur::from_ns(spec.interval_ns);
        let mut rec = Recorder::new(vec![false; n], interval, &count_field)?;
        let series_field = crate::estimate::series_field(&spec, biggest);
        let (flow_rows, queue_rows) = crate::estimate::series_rows(&spec);
        rec.reserve_rows(flow_rows, queue_rows, &series_field)?;
        probe_the_rest(&spec, &flows, &rec)?;
        let plans = flow_plans(&spec, seed);
        for (gi, g) in spec.groups.iter().enumerate() {
            for _ in 0..g.count {
                let id = flows.len() as u32;
                let plan = plans[id as usize];
                let cc = g.cc.build(Rng::stream(seed, StreamId::Cc(id)));
                let ecn = EcnProfile::resolve(g.ecn, &cc.flags()).expect("validated");
                let cfg = SenderConfig {
                    flow: id,
                    mss,
                    initial_cwnd: g.initial_window,
                    pacing: g.pacing,
                    ecn,
                    app_bytes: plan.size_bytes,
                    tso: g.host.tso,
                    host_queue: g.host.holds_segments(),
                };
                let rtt = Dur::from_ns(g.rtt_ns);
                // The hosts' fixed turnaround lengthens each direction of the flow's loop (its base RTT, the
                // flow's `rtt`, stays what the buffer and the tables count with).
                let turnaround = g.host.turnaround_ns;
                let fwd = Dur::from_ns(g.rtt_ns / 2 + turnaround);
                let rev = Dur::from_ns(g.rtt_ns - g.rtt_ns / 2 + turnaround);
                let loop_rtt = fwd + rev;
                let stop = g.stop_ns.map_or(Time::MAX, Time::from_ns);
                let mut sender = Sender::new(&cfg, cc);
                sender.set_jiffies(g.host.jiffies(seed));
                let open_at_start = g.connect == ConnectMode::AtStart;
                if !open_at_start {
                    // Made before the run, over the empty path: the handshake's sample is the base RTT (the
                    // receiver's view of it is the same); the flow writes from its start time.
                    sender.connect(Time::ZERO, loop_rtt);
                }
                let mut receiver = Receiver::new(loop_rtt, ecn.echo);
                if let Some(rwnd) = crate::host::rwnd_config(&g.host) {
                    let win = RcvWindow::new(rwnd, mss, rev);
                    sender.set_snd_wnd(win.initial_window());
                    receiver.set_window(win);
                }
                flows.push(Flow {
                    egress: Egress {
                        host_tx: Pipe::new(Dur::ZERO),
                        group: gi as u32,
                        loss: g.loss,
                    },
                    sender,
                    receiver,
                    data_pipe: Pipe::new(fwd),
                    ack_pipe: Pipe::new(rev),
                    host: HostTiming::new(&g.host, seed, id),
                    gro: Gro::new(Dur::from_ns(g.host.gro_window_ns())),
                    rng: Rng::stream(seed, StreamId::PathLoss(id)),
                    rtt,
                    open_at_start,
                    start: Time::from_ns(plan.start_ns),
                    stop,
                    finished_at: None,
                    size_bytes: plan.size_bytes,
                    size_segments: match plan.size_bytes {
                        0 => u32::MAX,
                        bytes => bytes.div_ceil(mss as u64) as u32,
                    },
                    completed_at: None,
                    xmit_slot: TimerSlot::default(),
                    pacing_slot: TimerSlot::default(),
                    delack_slot: TimerSlot::default(),
                    comp_slot: TimerSlot::default(),
                    gro_slot: TimerSlot::default(),
                });
            }
        }
        let ctx = BuildContext {
            rate_bps: spec.link.rate_bps,
            mtu_bytes: spec.link.mtu_bytes,
            seed,
        };
        let aqm_error = |e: FieldError| e.prefixed("link");
        let qdisc = spec.link.aqm.build::<Segment>(&ctx).map_err(aqm_error)?;
        let groups: Vec<u32> = flows.iter().map(|f| f.egress.group).collect();
        let marker = spec.link.aqm.edge_marker(&ctx, &groups).map_err(aqm_error)?;
        let bottleneck = Bottleneck::new(qdisc, Rate::from_bps(spec.link.rate_bps));
        for (i, f) in flows.iter().enumerate() {
            rec.set_l4s(i, f.sender.ecn_codepoint() == ccfair_core::Ecn::Ect1);
        }
        let mut events = EventQueue::new();
        for (i, f) in flows.iter().enumerate() {
            // A flow that arrives after its group stopped, or after the end, never starts.
            if f.start >= f.stop || f.start.ns() >= spec.duration_ns {
                continue;
            }
            events.push(f.start, code(EV_START, i as u32));
            if f.stop.ns() < spec.duration_ns {
                events.push(f.stop, code(EV_STOP, i as u32));
            }
        }
        events.push(Time::from_ns(spec.measure_start_ns), code(EV_WINDOW_START, 0));
        events.push(Time::from_ns(spec.measure_end_ns), code(EV_WINDOW_END, 0));
        events.push(Time::from_ns(spec.interval_ns), code(EV_SAMPLE, 0));
        let end = Time::from_ns(spec.duration_ns);
        let nics = spec
            .groups
            .iter()
            .map(|g| Nic::new(g.host.nic_rate_bps))
            .collect();
        let prefetch_flows = flows.len() >= PREFETCH_MIN_FLOWS;
        Ok(Simulation {
            spec,
            now: Time::ZERO,
            end,
            events,
            flows,
            nics,
            bottleneck,
            report: Tee(rec, obs),
            seg_buf: Vec::with_capacity(64),
            ack_buf: Vec::with_capacity(8),
            qev: QdiscEvents::default(),
            rate_scratch: RateScratch::default(),
            marker,
            prefetch_flows,
            tx_start: Time::ZERO,
            events_processed: 0,
        })
    }

    pub fn now(&self) -> Time {
        self.now
    }

    pub fn end(&self) -> Time {
        self.end
    }

    pub fn events_processed(&self) -> u64 {
        self.events_processed
    }

    /// Runs of the queue discipline's own timer so far (work that no event carries).
    pub fn qdisc_timer_runs(&self) -> u64 {
        self.bottleneck.qdisc.stats().timer_runs
    }

    pub fn observer(&self) -> &O {
        &self.report.1
    }

    pub fn observer_mut(&mut self) -> &mut O {
        &mut self.report.1
    }

    pub fn recorder(&self) -> &Recorder {
        &self.report.0
    }

    pub fn sender(&self, flow: u32) -> &Sender {
        &self.flows[flow as usize].sender
    }

    pub fn receiver(&self, flow: u32) -> &Receiver {
        &self.flows[flow as usize].receiver
    }

    pub fn bottleneck(&self) -> &Bottleneck {
        &self.bottleneck
    }

    /// Segments in the queue, on the link, in forward pipes and in the senders' hosts (a receiver's GRO holds
    /// segments that have arrived).
    pub fn segments_in_network(&self) -> u64 {
        let q = self.bottleneck.qdisc.backlog_packets() as u64;
        let tx = self.bottleneck.busy() as u64;
        let pipes: u64 = self
            .flows
            .iter()
            .map(|f| (f.data_pipe.len() + f.egress.host_tx.len()) as u64)
            .sum();
        q + tx + pipes
    }

    /// Segments that have crossed the bottleneck but not reached the application yet: held out of order by
    /// the receivers, or on their way to a receiver that does not have them (a spurious retransmission of a
    /// segment the receiver already has releases nothing). In-order delivery may release all of them at
    /// any moment, however little crosses the link then.
    pub fn undelivered_past_link(&self) -> u64 {
        self.flows
            .iter()
            .map(|f| {
                let r = &f.receiver;
                let on_the_way = f.data_pipe.iter().filter(|s| !s.syn && !r.has(s.seq)).count() as u64;
                let held = f
                    .gro
                    .held()
                    .map_or(0, |(seq, n)| (seq..seq + n).filter(|&s| !r.has(s)).count() as u64);
                r.ofo_segments() as u64 + on_the_way + held
            })
            .sum()
    }

    /// Runs until simulated time `t` (or the end); returns true once the run is complete.
    pub fn run_until(&mut self, t: Time) -> bool {
        self.run_until_events(t, u64::MAX)
    }

    /// Runs until simulated time `t` (or the end), or until `max_work` units of work are done, whichever comes
    /// first; returns true once the run is complete. A unit is an entry leaving the event queue (timer entries
    /// that turn out to be stale included) or a run of the queue discipline's own timer (PIE's probability
    /// update, which no event carries: see `ccfair_aqm`), so the count measures the work done: a caller that
    /// must stay responsive (Ctrl-C, a wall-time limit) bounds each call's wall time with it, whatever the link
    /// rate or the discipline. The timer runs are read every [`WORK_CHECK_POPS`] entries (one virtual call),
    /// so a call may overshoot by the timer work of that many.
    pub fn run_until_events(&mut self, t: Time, max_work: u64) -> bool {
        let limit = t.min(self.end);
        let timers_before = self.bottleneck.qdisc.stats().timer_runs;
        let (mut pops, mut timer_work) = (0u64, 0u64);
        while pops.saturating_add(timer_work) < max_work {
            let Some((at, c)) = self.events.pop_until(limit) else {
                self.now = self.now.max(limit);
                return limit >= self.end;
            };
            pops += 1;
            self.now = at;
            if self.prefetch_flows {
                self.prefetch_upcoming();
            }
            self.dispatch(c);
            if pops % WORK_CHECK_POPS == 0 {
                timer_work = self.bottleneck.qdisc.stats().timer_runs - timers_before;
            }
        }
        false
    }

    /// Runs to the end.
    pub fn run(&mut self) {
        self.run_until(self.end);
    }

    /// The run's results (call after `run`); copies the time series.
    pub fn output(&self) -> RunOutput {
        RunOutput {
            flows: self.flow_records(),
            series: self.report.0.flows.clone(),
            queue: self.report.0.queue().clone(),
            totals: self.totals(),
        }
    }

    /// The run's results, moving the time series out instead of copying them: at the end of a long run
    /// they are most of the memory the run holds.
    pub fn into_output(mut self) -> RunOutput {
        let flows = self.flow_records();
        let totals = self.totals();
        let (series, queue) = self.report.0.take_series();
        RunOutput {
            flows,
            series,
            queue,
            totals,
        }
    }

    fn flow_records(&self) -> Vec<FlowRecord> {
        let meta: Vec<FlowMeta> = self
            .flows
            .iter()
            .map(|f| FlowMeta {
                group: f.egress.group,
                cc: f.sender.cc_name(),
                rtt_ns: f.rtt.ns(),
                start_ns: f.start.ns(),
                stop_ns: f.stop.ns().min(self.end.ns()),
                size_bytes: f.size_bytes,
                completion_ns: f.completed_at.map(|t| t.saturating_since(f.start).ns()),
            })
            .collect();
        self.report.0.flow_records(&meta)
    }

    fn totals(&self) -> Totals {
        let window_ns = self.spec.measure_end_ns - self.spec.measure_start_ns;
        self.report.0.totals(
            self.events_processed,
            self.now,
            window_ns,
            self.segments_in_network(),
        )
    }

    /// Asks the caches for what the next events will read while this one runs (see the module docs): the
    /// event after next its flow's own state, the next one what that state points to. Hints only: an event
    /// scheduled meanwhile may come first, and nothing here changes what runs.
    #[inline]
    fn prefetch_upcoming(&self) {
        if let Some(c) = self.events.upcoming(1) {
            self.prefetch_flow(c);
        }
        if let Some(c) = self.events.upcoming(0) {
            self.prefetch_pointed(c);
        }
    }

    /// The lines of its flow's own state that an event with code `c` reads (found without reading any).
    #[inline]
    fn prefetch_flow(&self, c: u64) {
        let (kind, f) = (c >> FLOW_BITS, (c & (MAX_FLOWS as u64 - 1)) as u32);
        let Some(fl) = self.flows.get(f as usize) else {
            return;
        };
        let (counters, rtt_hist) = self.report.0.flow_state(f);
        match kind {
            EV_DATA | EV_DELACK_TIMER | EV_COMP_TIMER | EV_GRO_FLUSH => {
                prefetch::value(&fl.receiver);
                prefetch::value(&fl.gro);
                prefetch::value(&fl.data_pipe);
                prefetch::value(&fl.ack_pipe);
                prefetch::value(&fl.host);
                prefetch::value(&fl.delack_slot);
                prefetch::value(counters);
            }
            EV_ACK | EV_XMIT_TIMER | EV_PACING_TIMER | EV_HOST_TX => {
                prefetch::value(&fl.egress);
                prefetch::value(&fl.sender);
                prefetch::value(&fl.ack_pipe);
                prefetch::value(&fl.host);
                prefetch::value(&fl.xmit_slot);
                prefetch::value(counters);
                prefetch::value(rtt_hist);
            }
            _ => {}
        }
    }

    /// What an event with code `c` reads through its flow's pointers (read here, so its flow's state should
    /// already have been asked for).
    #[inline]
    fn prefetch_pointed(&self, c: u64) {
        let (kind, f) = (c >> FLOW_BITS, (c & (MAX_FLOWS as u64 - 1)) as u32);
        let Some(fl) = self.flows.get(f as usize) else {
            return;
        };
        match kind {
            EV_DATA => {
                fl.data_pipe.prefetch_head();
                fl.ack_pipe.prefetch_next_slot();
                fl.receiver.prefetch_segment_path();
            }
            EV_ACK => {
                fl.ack_pipe.prefetch_head();
                fl.sender.prefetch_ack_path();
            }
            _ => {}
        }
    }

    fn dispatch(&mut self, c: u64) {
        let kind = c >> FLOW_BITS;
        let f = (c & (MAX_FLOWS as u64 - 1)) as u32;
        match kind {
            EV_LINK_DONE => self.on_link_done(),
            EV_DATA => self.on_data(f),
            EV_ACK => self.on_ack(f),
            EV_HOST_TX => self.on_host_tx(f),
            EV_GRO_FLUSH => self.on_gro_flush(f),
            EV_XMIT_TIMER => {
                let fl = &mut self.flows[f as usize];
                fl.xmit_slot.popped(self.now);
                if fl.sender.xmit_deadline().is_some_and(|d| d <= self.now) {
                    self.events_processed += 1;
                    let rto_before = fl.sender.stats.rto_events;
                    let reductions_before = fl.sender.stats.cwnd_reductions;
                    fl.sender.on_xmit_timer(self.now, &mut self.seg_buf);
                    if fl.sender.stats.rto_events > rto_before {
                        self.report.0.rto_event(f);
                    }
                    let reductions = fl.sender.stats.cwnd_reductions - reductions_before;
                    if reductions > 0 {
                        self.report.0.cwnd_reductions(f, reductions);
                    }
                    self.transmit(f);
                }
                self.sync_sender_timers(f);
            }
            EV_PACING_TIMER => {
                let fl = &mut self.flows[f as usize];
                fl.pacing_slot.popped(self.now);
                if fl.sender.pacing_deadline().is_some_and(|d| d <= self.now) {
                    self.events_processed += 1;
                    fl.sender.on_pacing_timer(self.now, &mut self.seg_buf);
                    self.transmit(f);
                }
                self.sync_sender_timers(f);
            }
            EV_DELACK_TIMER | EV_COMP_TIMER => {
                let now = self.now;
                let fl = &mut self.flows[f as usize];
                let acks = &mut self.ack_buf;
                if kind == EV_DELACK_TIMER {
                    fl.delack_slot.popped(now);
                    if fl.receiver.delack_deadline().is_some_and(|d| d <= now) {
                        self.events_processed += 1;
                        fl.receiver.on_delack_timer(now, acks);
                    }
                } else {
                    fl.comp_slot.popped(now);
                    if fl.receiver.comp_deadline().is_some_and(|d| d <= now) {
                        self.events_processed += 1;
                        fl.receiver.on_comp_timer(now, acks);
                    }
                }
                self.send_acks(f);
                self.sync_receiver_timers(f);
            }
            EV_START => {
                self.events_processed += 1;
                let fl = &mut self.flows[f as usize];
                if fl.open_at_start {
                    fl.sender.open(self.now, &mut self.seg_buf);
                } else {
                    fl.sender.start(self.now, &mut self.seg_buf);
                }
                self.transmit(f);
                self.sync_sender_timers(f);
            }
            EV_STOP => {
                self.events_processed += 1;
                let fl = &mut self.flows[f as usize];
                fl.sender.stop_app(self.now);
                if fl.sender.finished() {
                    fl.finished_at.get_or_insert(self.now);
                }
            }
            EV_SAMPLE => {
                self.events_processed += 1;
                self.take_sample();
                let next = self.now + Dur::from_ns(self.spec.interval_ns);
                if next <= self.end {
                    self.events.push(next, code(EV_SAMPLE, 0));
                }
            }
            EV_WINDOW_START => {
                self.events_processed += 1;
                let backlog = self.undelivered_past_link() * self.spec.mss() as u64;
                self.report.0.window_start(self.now, backlog);
            }
            EV_WINDOW_END => {
                self.events_processed += 1;
                self.report.0.window_end(self.now);
            }
            _ => unreachable!("unknown event kind {kind}"),
        }
    }

    /// Hands flow `f`'s freshly sent segments (in `seg_buf`, which it empties) to the network, after the
    /// sending host's processing delay if it has one, through its NIC. What decides a segment's way there is
    /// the flow's (its host, its NIC, its path loss) or the run's (the edge marker), so it is decided once for
    /// all of them: on an ideal host and a lossless unmarked path each goes straight into the bottleneck.
    fn transmit(&mut self, f: u32) {
        let now = self.now;
        let fl = &self.flows[f as usize];
        let direct = !fl.host.has_noise()
            && !self.nics[fl.egress.group as usize].is_finite()
            && fl.egress.loss <= 0.0
            && self.marker.is_none();
        if direct {
            for i in 0..self.seg_buf.len() {
                let seg = self.seg_buf[i];
                debug_assert_eq!(seg.flow, f);
                self.report.segment_sent(now, f, seg.seq, seg.retransmit);
                self.enter_bottleneck(seg);
            }
            self.seg_buf.clear();
            return;
        }
        let mut buf = std::mem::take(&mut self.seg_buf);
        for seg in buf.drain(..) {
            debug_assert_eq!(seg.flow, f);
            self.report.segment_sent(now, seg.flow, seg.seq, seg.retransmit);
            let fl = &mut self.flows[seg.flow as usize];
            let nic = &mut self.nics[fl.egress.group as usize];
            if fl.host.has_noise() || nic.is_finite() {
                // Ready after the processing delay, never before the flow's previous segment; then the NIC.
                let ready = fl.egress.host_tx.exit_after(now, fl.host.send_delay());
                let wire = nic.depart(ready, u32::from(seg.wire_len));
                let (exit, was_empty) = fl
                    .egress
                    .host_tx
                    .push_delayed(now, wire.saturating_since(now), seg);
                fl.sender.set_host_queued(fl.egress.host_tx.len() as u32);
                if was_empty {
                    self.events.push(exit, code(EV_HOST_TX, seg.flow));
                }
            } else {
                self.onto_wire(seg);
            }
        }
        self.seg_buf = buf;
    }

    /// A segment reaches the wire: the edge marker (PPV), path loss, then the bottleneck.
    fn onto_wire(&mut self, mut seg: Segment) {
        let now = self.now;
        if let Some(m) = &mut self.marker {
            seg.packet_value = m.mark(now, seg.flow, u32::from(seg.wire_len));
        }
        let fl = &mut self.flows[seg.flow as usize];
        if fl.egress.loss > 0.0 && fl.rng.bernoulli(fl.egress.loss) {
            self.report
                .segment_dropped(now, seg.flow, seg.seq, DropReason::PathLoss);
            return;
        }
        self.enter_bottleneck(seg);
    }

    /// A segment enters the bottleneck's queue discipline (which may start the link).
    #[inline]
    fn enter_bottleneck(&mut self, seg: Segment) {
        let started = self.bottleneck.enqueue(self.now, seg, &mut self.qev);
        self.report_qdisc_events();
        if let Some(end) = started {
            self.link_started(end);
        }
    }

    fn on_host_tx(&mut self, f: u32) {
        self.events_processed += 1;
        let fl = &mut self.flows[f as usize];
        let Some((seg, next)) = fl.egress.host_tx.pop_due(self.now) else {
            return;
        };
        if let Some(t) = next {
            self.events.push(t, code(EV_HOST_TX, f));
        }
        fl.sender.set_host_queued(fl.egress.host_tx.len() as u32);
        self.onto_wire(seg);
        // A segment left the host: a sender TCP Small Queues throttled may send again.
        let fl = &mut self.flows[f as usize];
        if fl.sender.tsq_throttled() {
            // A wakeup that changed nothing but the sender's clock leaves its timers as they were synced.
            if fl.sender.on_tsq_wakeup(self.now, &mut self.seg_buf) {
                self.transmit(f);
                self.sync_sender_timers(f);
            }
        }
    }

    /// Reports what the qdisc dropped or marked during its last call.
    #[inline]
    fn report_qdisc_events(&mut self) {
        if !self.qev.drops.is_empty() || !self.qev.marks.is_empty() {
            self.report_qdisc_events_now();
        }
    }

    #[cold]
    fn report_qdisc_events_now(&mut self) {
        let now = self.now;
        for (pkt, reason) in self.qev.drops.drain(..) {
            self.report.segment_dropped(now, pkt.flow, pkt.seq, reason);
        }
        for flow in self.qev.marks.drain(..) {
            self.report.segment_marked(now, flow);
        }
    }

    /// A transmission started: reports the packet's departure from the queue and schedules its end.
    #[inline]
    fn link_started(&mut self, end: Time) {
        let now = self.now;
        self.tx_start = now;
        let pkt = self.bottleneck.in_transmission().expect("a transmission started");
        let sojourn = now.saturating_since(pkt.enqueue_ts);
        let (flow, wire_len) = (pkt.flow, u32::from(pkt.wire_len));
        if self.prefetch_flows {
            // Its departure, a serialization time from now, reads the flow's forward pipe and host.
            let fl = &self.flows[flow as usize];
            prefetch::value(&fl.data_pipe);
            prefetch::value(&fl.host);
        }
        self.report.queue_departure(now, flow, sojourn, wire_len);
        // One transmission at a time: the link's departure is the queue's single event.
        self.events.push_single(end, code(EV_LINK_DONE, 0));
    }

    fn on_link_done(&mut self) {
        self.events_processed += 1;
        let now = self.now;
        let (pkt, next) = self.bottleneck.tx_done(now, &mut self.qev);
        self.report.0.link_tx(u32::from(pkt.wire_len), self.tx_start, now);
        self.report_qdisc_events();
        if let Some(end) = next {
            self.link_started(end);
        }
        let fl = &mut self.flows[pkt.flow as usize];
        let (exit, was_empty) = if fl.host.has_noise() {
            let delay = fl.host.recv_delay();
            fl.data_pipe.push_delayed(now, delay, Arrival::of(&pkt))
        } else {
            fl.data_pipe.push(now, Arrival::of(&pkt))
        };
        if was_empty {
            self.events.push(exit, code(EV_DATA, pkt.flow));
        }
    }

    fn on_data(&mut self, f: u32) {
        self.events_processed += 1;
        let now = self.now;
        let fl = &mut self.flows[f as usize];
        let Some((arrival, next)) = fl.data_pipe.pop_due(now) else {
            return;
        };
        let seg = arrival.segment(f);
        if let Some(t) = next {
            self.events.push(t, code(EV_DATA, f));
        }
        self.report.segment_arrived(now, f, seg.seq);
        if seg.syn {
            self.answer_syn(f, &seg);
            return;
        }
        if !fl.gro.is_on() {
            self.deliver(f, &seg, 1);
            return;
        }
        if let Some(agg) = fl.gro.receive(now, seg) {
            self.deliver(f, &agg.head, agg.segments);
        }
        // A PSH segment that could not join the aggregate it flushed goes up alone, right after it.
        if let Some(agg) = self.flows[f as usize].gro.flush_due(now) {
            self.deliver(f, &agg.head, agg.segments);
        }
        self.sync_gro_timer(f);
    }

    /// A SYN reached the receiving host: it answers with a SYN-ACK echoing the SYN's timestamp, on the return
    /// path (every SYN is answered, a retransmitted one too, as a listener in SYN-RECV resends its SYN-ACK).
    #[cold]
    fn answer_syn(&mut self, f: u32, syn: &Segment) {
        let fl = &mut self.flows[f as usize];
        let synack = Ack {
            syn: true,
            tsecr_ms: syn.tsval_ms,
            wnd_bytes: fl.sender.snd_wnd(),
            ..Ack::default()
        };
        let (exit, was_empty) = fl.ack_pipe.push(self.now, synack);
        if was_empty {
            self.events.push(exit, code(EV_ACK, f));
        }
    }

    /// The SYN-ACK reached the sender: the handshake completes and the first flight goes out.
    #[cold]
    fn finish_connect(&mut self, f: u32, synack: &Ack) {
        let now = self.now;
        let fl = &mut self.flows[f as usize];
        if let Some(rtt_us) = fl.sender.on_synack(now, synack.tsecr_ms, &mut self.seg_buf) {
            self.report.rtt_sample(now, f, Dur::from_us(rtt_us as u64));
        }
        self.transmit(f);
        self.sync_sender_timers(f);
    }

    /// The receiving host's GRO poll ended: its held aggregate goes up to TCP.
    fn on_gro_flush(&mut self, f: u32) {
        let now = self.now;
        let fl = &mut self.flows[f as usize];
        fl.gro_slot.popped(now);
        if let Some(Aggregate { head, segments }) = fl.gro.flush_due(now) {
            self.events_processed += 1;
            self.deliver(f, &head, segments);
        }
        self.sync_gro_timer(f);
    }

    fn sync_gro_timer(&mut self, f: u32) {
        let fl = &mut self.flows[f as usize];
        if let Some(t) = fl.gro_slot.want(fl.gro.deadline()) {
            self.events.push(t, code(EV_GRO_FLUSH, f));
        }
    }

    /// Hands TCP `segments` consecutive segments from `seg` (one skb) and sends the ACKs it answers with.
    fn deliver(&mut self, f: u32, seg: &Segment, segments: u32) {
        let now = self.now;
        let fl = &mut self.flows[f as usize];
        let d = fl.receiver.on_segments(now, seg, segments, &mut self.ack_buf);
        if d.segments > 0 {
            let mss = self.spec.mss() as u64;
            let delivered_end = d.first_seq.saturating_add(d.segments);
            let bytes = if delivered_end >= fl.size_segments {
                // The last segment of a finite flow carries the remainder of its size.
                fl.completed_at.get_or_insert(now);
                fl.size_bytes - d.first_seq as u64 * mss
            } else {
                d.segments as u64 * mss
            };
            self.report
                .delivered_to_app(now, f, d.first_seq, d.segments, bytes);
        }
        self.send_acks(f);
        self.sync_receiver_timers(f);
    }

    /// Puts the receiver's ACKs on the return path. Inlined for its test: half the segments a receiver takes
    /// are not ACKed at once, and for them this is all there is to do.
    #[inline]
    fn send_acks(&mut self, f: u32) {
        if !self.ack_buf.is_empty() {
            self.send_acks_now(f);
        }
    }

    fn send_acks_now(&mut self, f: u32) {
        let now = self.now;
        let fl = &mut self.flows[f as usize];
        for ack in self.ack_buf.drain(..) {
            let (exit, was_empty) = fl.ack_pipe.push(now, ack);
            if was_empty {
                self.events.push(exit, code(EV_ACK, f));
            }
        }
    }

    fn on_ack(&mut self, f: u32) {
        self.events_processed += 1;
        let now = self.now;
        let fl = &mut self.flows[f as usize];
        let Some((ack, next)) = fl.ack_pipe.pop_due(now) else {
            return;
        };
        if let Some(t) = next {
            self.events.push(t, code(EV_ACK, f));
        }
        if ack.syn {
            self.finish_connect(f, &ack);
            return;
        }
        let reductions_before = fl.sender.stats.cwnd_reductions;
        fl.sender
            .on_ack(now, &ack, &mut self.seg_buf, &mut self.rate_scratch);
        let reductions = fl.sender.stats.cwnd_reductions - reductions_before;
        if reductions > 0 {
            self.report.0.cwnd_reductions(f, reductions);
        }
        if fl.sender.last_rtt_us >= 0 {
            let rtt = Dur::from_us(fl.sender.last_rtt_us as u64);
            self.report.rtt_sample(now, f, rtt);
        }
        if fl.sender.finished() {
            fl.finished_at.get_or_insert(now);
        }
        self.transmit(f);
        self.sync_sender_timers(f);
    }

    fn sync_sender_timers(&mut self, f: u32) {
        let fl = &mut self.flows[f as usize];
        if let Some(t) = fl.xmit_slot.want(fl.sender.xmit_deadline()) {
            self.events.push(t, code(EV_XMIT_TIMER, f));
        }
        let pacing = fl.sender.pacing_deadline().map(|d| fl.host.pacing_fire(d));
        if let Some(t) = fl.pacing_slot.want(pacing) {
            self.events.push(t, code(EV_PACING_TIMER, f));
        }
    }

    /// Inlined: it runs for every segment a receiver takes, and usually finds its timers armed early enough.
    #[inline]
    fn sync_receiver_timers(&mut self, f: u32) {
        let fl = &mut self.flows[f as usize];
        let delack = fl.receiver.delack_deadline().map(|d| fl.host.delack_fire(d));
        if let Some(t) = fl.delack_slot.want(delack) {
            self.events.push(t, code(EV_DELACK_TIMER, f));
        }
        if let Some(t) = fl.comp_slot.want(fl.receiver.comp_deadline()) {
            self.events.push(t, code(EV_COMP_TIMER, f));
        }
    }

    fn take_sample(&mut self) {
        let now = self.now;
        let interval = Dur::from_ns(self.spec.interval_ns);
        let iv_start = now - interval;
        let mut views = Vec::with_capacity(self.flows.len());
        for (i, fl) in self.flows.iter().enumerate() {
            let active = fl.start < now && fl.finished_at.is_none_or(|t| t > iv_start);
            if !active {
                continue;
            }
            let s = &fl.sender;
            views.push(FlowView {
                flow_id: i as u32,
                cwnd: s.tp.snd_cwnd,
                ssthresh: s.ssthresh(),
                srtt: Dur::from_us(s.rtt.srtt_us() as u64),
                min_rtt_us: s.rtt.min_rtt_us(),
                pacing_rate_bytes_per_sec: s.tp.pacing_rate,
                inflight: s.tp.in_flight(),
                ca_state: s.tp.ca_state as u8,
                vars: s.cc_vars(),
            });
        }
        self.report.0.sample(
            now,
            &views,
            self.bottleneck.qdisc.backlog_bytes(),
            self.bottleneck.qdisc.backlog_packets(),
        );
    }
}
