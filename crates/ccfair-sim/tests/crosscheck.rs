//! The scripted driver (`ccfair_cc::testing::Driver`, on which every algorithm's unit tests run) against the
//! simulator's sender (`ccfair_sim::tcp::Sender`): both stacks share the TCP core around the algorithm
//! (`ccfair_cc::stack::TcpCore`, `ccfair_cc::rate`), and each keeps its own `tcp_ack` sequence; this checks
//! that the two sequences agree, so that a unit test on the driver says what the algorithm does in the
//! simulator.
//!
//! A harness plays the network for one simulated sender: a FIFO bottleneck (serialization at a fixed packet
//! rate, a buffer, optional step CE-marking above K queued packets, optional scripted drops), a propagation
//! delay, and a receiver that ACKs every segment at once (cumulative ACK, SACK blocks, ECE mirroring CE for
//! DCTCP's echo, a CE counter for Accurate ECN, the arriving segment's timestamp echoed). It fires the
//! sender's pacing, RTO and RACK timers when due. After each step of the sender it replays the step on a
//! driver with the same algorithm and seed: the ACK (cumulative advance, the newly SACKed block, ECE or the
//! CE count), the stack's own measurements that the driver takes from its script (the RTT sample, how many
//! packets RACK or the RTO marked lost), and the transmissions (retransmissions, then new data in the
//! sender's TSO bursts; the pacer's departure time). Then cwnd, ssthresh and the state must be identical, and
//! so must the rest of the socket the algorithm sees and the algorithm's exported variables.
//!
//! Each algorithm runs loss-free (slow start into a deep buffer; for DCTCP and Prague with CE marks), with
//! scripted losses in the middle of flights (found by SACK and RACK), behind a tail-drop buffer, and through
//! RTOs (the path blacks out once Recovery begins, until the timer fired once, or twice: the second time in
//! Loss after the first retransmission was ACKed). The sender's tail loss probe has no counterpart in the
//! driver; the scenarios keep ACKs flowing so that it never fires, and the harness fails if it does.

use std::collections::{BTreeSet, VecDeque};

use ccfair_cc::rate::RateScratch;
use ccfair_cc::testing::{Ack as DriverAck, Driver};
use ccfair_cc::{CaState, CcConfig, TcpSock, algorithms};
use ccfair_core::rng::StreamId;
use ccfair_core::{Dur, Ecn, Rng, Time};
use ccfair_sim::tcp::{
    Ack, EcnMode, EcnProfile, MAX_SACK_BLOCKS_SENT, SackBlock, Segment, Sender, SenderConfig, XmitTimer,
};

const MSS: u32 = 1448;
const MS: u64 = 1_000_000;

/// What the path drops besides buffer overflow.
#[derive(Clone, Debug)]
enum Drops {
    None,
    /// These sequence numbers, on their first transmission.
    Seqs(Vec<u32>),
    /// These sequence numbers on their first transmission, and then everything sent while the sender is in
    /// Recovery or Loss, except the retransmission an RTO sends, until the retransmission timer has fired
    /// `rtos` times: an RTO in Recovery (F-RTO off), and with 2, a second RTO in Loss after that
    /// retransmission was ACKed (a new loss episode, `icsk_retransmits` being 0 again).
    Blackout {
        seqs: Vec<u32>,
        rtos: usize,
    },
}

/// The network of one run.
#[derive(Clone, Debug)]
struct Net {
    /// Bottleneck rate, packets per second.
    rate_pps: u64,
    rtt_ms: u64,
    /// Packets the bottleneck holds, the one in service included; arrivals beyond are dropped.
    buffer: usize,
    /// CE-mark ECT packets that find more than this many packets queued.
    mark_above: Option<usize>,
    drops: Drops,
}

/// What a run went through, to check that a scenario exercises what it claims.
#[derive(Debug, Default)]
struct Seen {
    steps: usize,
    /// The largest TSO burst the sender sent.
    max_burst: u32,
    drops: usize,
    marks: usize,
    recoveries: usize,
    cwr: usize,
    rtos: usize,
    /// The simulator's ssthresh right after each RTO.
    rto_ssthresh: Vec<u32>,
    rack_timeouts: usize,
}

struct Harness {
    name: &'static str,
    sim: Sender,
    /// The simulator's delivery-rate sample of the last ACK.
    rate: RateScratch,
    drv: Driver,
    net: Net,
    now: Time,
    /// Departure times of the packets the bottleneck holds.
    queue: VecDeque<Time>,
    /// Data segments on their way to the receiver, with their arrival time (FIFO).
    to_receiver: VecDeque<(Time, Segment)>,
    /// ACKs on their way back, with the sequence number of the segment that triggered each (FIFO).
    to_sender: VecDeque<(Time, Ack, u32)>,
    rcv_nxt: u32,
    out_of_order: BTreeSet<u32>,
    ce_received: u32,
    /// The receiver's CE count on the last ACK the sender got.
    ce_echoed: u32,
    ever_sent: u32,
    /// The step being replayed is an RTO.
    in_rto: bool,
    seen: Seen,
    trace_sim: Vec<(u32, u32, CaState)>,
    trace_drv: Vec<(u32, u32, CaState)>,
}

impl Harness {
    fn new(name: &'static str, net: Net) -> Harness {
        let cfg = CcConfig::from_name_and_params(name, &serde_json::Value::Null).unwrap();
        let rng = || Rng::stream(7, StreamId::Cc(0));
        let cc = cfg.build(rng());
        let ecn = EcnProfile::resolve(EcnMode::Off, &cc.flags()).unwrap();
        let cfg_sender = SenderConfig {
            flow: 0,
            mss: MSS,
            initial_cwnd: 10,
            pacing: false,
            ecn,
            app_bytes: 0,
            tso: false,
            host_queue: false,
        };
        Harness {
            name,
            sim: {
                let mut s = Sender::new(&cfg_sender, cc);
                s.connect(Time::ZERO, Dur::from_ms(net.rtt_ms));
                s
            },
            rate: RateScratch::default(),
            drv: Driver::with_handshake(cfg.build(rng()), TcpSock::new(MSS, 10), net.rtt_ms * 1000),
            net,
            now: Time::ZERO,
            queue: VecDeque::new(),
            to_receiver: VecDeque::new(),
            to_sender: VecDeque::new(),
            rcv_nxt: 0,
            out_of_order: BTreeSet::new(),
            ce_received: 0,
            ce_echoed: 0,
            ever_sent: 0,
            in_rto: false,
            seen: Seen::default(),
            trace_sim: Vec::new(),
            trace_drv: Vec::new(),
        }
    }

    /// Runs both stacks for `duration_ms`, checking after every step, and returns what happened.
    fn run(mut self, duration_ms: u64) -> Seen {
        let mut out = Vec::new();
        self.sim.start(Time::ZERO, &mut out);
        self.after_step("start", &out, true);
        let end = Time::from_ns(duration_ms * MS);
        loop {
            let data_at = self.to_receiver.front().map(|d| d.0);
            let ack_at = self.to_sender.front().map(|a| a.0);
            let xmit_at = self.sim.xmit_deadline();
            let pace_at = self.sim.pacing_deadline();
            let Some(next) = [data_at, ack_at, pace_at, xmit_at].into_iter().flatten().min() else {
                break;
            };
            if next > end {
                break;
            }
            self.now = next;
            if data_at == Some(next) {
                let (_, seg) = self.to_receiver.pop_front().unwrap();
                self.receive(seg);
            } else if ack_at == Some(next) {
                let (_, ack, seq) = self.to_sender.pop_front().unwrap();
                self.on_ack(&ack, seq);
            } else if pace_at == Some(next) {
                self.on_pacing_timer();
            } else {
                self.on_xmit_timer();
            }
        }
        assert_eq!(
            self.trace_sim, self.trace_drv,
            "{}: the cwnd traces differ",
            self.name
        );
        self.seen.steps = self.trace_sim.len();
        self.seen
    }

    /// The receiver gets `seg` and ACKs it at once.
    fn receive(&mut self, seg: Segment) {
        if seg.seq >= self.rcv_nxt {
            self.out_of_order.insert(seg.seq);
        }
        while self.out_of_order.remove(&self.rcv_nxt) {
            self.rcv_nxt += 1;
        }
        let ce = seg.ecn == Ecn::Ce;
        self.ce_received += u32::from(ce);
        let mut runs: Vec<SackBlock> = Vec::new();
        for &s in &self.out_of_order {
            match runs.last_mut() {
                Some(b) if b.end == s => b.end += 1,
                _ => runs.push(SackBlock { start: s, end: s + 1 }),
            }
        }
        // The block holding the arriving segment first (RFC 2018), then the others, highest first.
        runs.reverse();
        if let Some(i) = runs.iter().position(|b| b.start <= seg.seq && seg.seq < b.end) {
            let b = runs.remove(i);
            runs.insert(0, b);
        }
        let mut ack = Ack {
            ack: self.rcv_nxt,
            tsecr_ms: seg.tsval_ms,
            ece: ce,
            ce_count: self.ce_received,
            ..Ack::default()
        };
        for b in runs.into_iter().take(MAX_SACK_BLOCKS_SENT) {
            ack.sacks[ack.num_sacks as usize] = b;
            ack.num_sacks += 1;
        }
        let at = self.now + Dur::from_ns(self.net.rtt_ms * MS / 2);
        self.to_sender.push_back((at, ack, seg.seq));
    }

    fn on_ack(&mut self, ack: &Ack, seq: u32) {
        let una = self.sim.tp.snd_una;
        let lost = self.sim.tp.lost;
        let mut out = Vec::new();
        self.sim.on_ack(self.now, ack, &mut out, &mut self.rate);
        // The block that holds the arriving segment is the one with news.
        let sack = ack
            .sack_blocks()
            .iter()
            .find(|b| b.start <= seq && seq < b.end && seq >= ack.ack)
            .map(|b| (b.start, b.end));
        let ce = ack.ce_count - self.ce_echoed;
        self.ce_echoed = ack.ce_count;
        let rs = self.drv.ack_with(DriverAck {
            advance_ns: self.now.saturating_since(self.drv.now()).ns(),
            acked: ack.ack - una,
            sack,
            rtt_us: self.sim.last_rtt_us,
            ece: ack.ece,
            ce,
            lost: self.sim.tp.lost - lost,
        });
        assert_eq!(
            &rs,
            &self.rate.rs,
            "{}: rate samples differ at {} ns (driver, simulator)",
            self.name,
            self.now.ns()
        );
        self.after_step("ack", &out, true);
    }

    fn on_pacing_timer(&mut self) {
        let mut out = Vec::new();
        self.sim.on_pacing_timer(self.now, &mut out);
        self.catch_up_driver();
        self.after_step("pacing timer", &out, true);
    }

    fn on_xmit_timer(&mut self) {
        let kind = self.sim.xmit_timer_kind().unwrap();
        let lost = self.sim.tp.lost;
        let mut out = Vec::new();
        self.sim.on_xmit_timer(self.now, &mut out);
        self.catch_up_driver();
        match kind {
            XmitTimer::Retrans => {
                self.seen.rtos += 1;
                self.seen.rto_ssthresh.push(self.sim.tp.snd_ssthresh);
                self.in_rto = true;
                self.drv.rto();
                assert_eq!(
                    self.sim.tp.lost - lost,
                    self.drv.tp.lost - lost,
                    "{}: RTO marks",
                    self.name
                );
            }
            XmitTimer::ReoTimeout => {
                self.seen.rack_timeouts += 1;
                self.drv.rack_timeout(self.sim.tp.lost - lost);
            }
            XmitTimer::LossProbe => panic!("{}: a tail loss probe fired; the driver has none", self.name),
            XmitTimer::Syn => panic!("{}: a SYN timer fired on an established connection", self.name),
        }
        self.after_step("xmit timer", &out, false);
        self.in_rto = false;
    }

    fn catch_up_driver(&mut self) {
        let ns = self.now.saturating_since(self.drv.now()).ns();
        self.drv.advance(ns);
    }

    /// Replays the sender's transmissions on the driver (`write_xmit`: whether the sender ran
    /// `tcp_write_xmit`, which does the cwnd-validation bookkeeping even when it sends nothing), puts them on
    /// the path, and compares the two stacks.
    fn after_step(&mut self, what: &str, out: &[Segment], write_xmit: bool) {
        let resent = out.iter().take_while(|s| s.retransmit).count();
        assert!(
            out[resent..].iter().all(|s| !s.retransmit),
            "{}: new data before a retransmission (F-RTO) is not replayed",
            self.name
        );
        assert_eq!(
            self.drv.retransmit(resent as u32),
            resent as u32,
            "{}: retransmissions",
            self.name
        );
        let mut bursts: Vec<u32> = Vec::new();
        let mut last_tx = None;
        for s in &out[resent..] {
            let seg = self.sim.rtx_queue().get(s.seq);
            let tx = (seg.xmit_time, seg.tx.in_flight);
            match bursts.last_mut() {
                Some(n) if last_tx == Some(tx) => *n += 1,
                _ => bursts.push(1),
            }
            last_tx = Some(tx);
        }
        self.seen.max_burst = self.seen.max_burst.max(bursts.iter().copied().max().unwrap_or(0));
        if write_xmit {
            self.drv.write(&bursts);
        } else {
            assert!(
                bursts.is_empty(),
                "{}: new data without tcp_write_xmit",
                self.name
            );
        }
        // The pacer is the stack's, not the driver's: it follows the sender's departure times.
        self.drv.tp.wstamp = self.sim.tp.wstamp;
        for s in out {
            self.path_accepts(*s);
        }
        self.compare(what);
    }

    /// The bottleneck takes `seg` (or drops it) and forwards it to the receiver.
    fn path_accepts(&mut self, mut seg: Segment) {
        let first = !seg.retransmit && seg.seq >= self.ever_sent;
        self.ever_sent = self.ever_sent.max(seg.seq + 1);
        let dropped = match &self.net.drops {
            Drops::None => false,
            Drops::Seqs(seqs) => first && seqs.contains(&seg.seq),
            Drops::Blackout { seqs, rtos } => {
                let recovering = matches!(self.sim.tp.ca_state, CaState::Recovery | CaState::Loss);
                (first && seqs.contains(&seg.seq))
                    || (recovering && self.seen.rtos < *rtos && !(self.in_rto && seg.retransmit))
            }
        };
        while self.queue.front().is_some_and(|&t| t <= self.now) {
            self.queue.pop_front();
        }
        if dropped || self.queue.len() >= self.net.buffer {
            self.seen.drops += 1;
            return;
        }
        if let Some(k) = self.net.mark_above
            && self.queue.len() > k
            && matches!(seg.ecn, Ecn::Ect0 | Ecn::Ect1)
        {
            seg.ecn = Ecn::Ce;
            self.seen.marks += 1;
        }
        let start = self.queue.back().copied().unwrap_or(self.now).max(self.now);
        let depart = start + Dur::from_ns(1_000_000_000 / self.net.rate_pps);
        self.queue.push_back(depart);
        let arrive = depart + Dur::from_ns(self.net.rtt_ms * MS / 2);
        self.to_receiver.push_back((arrive, seg));
    }

    /// Both stacks must agree on everything the algorithm sees after each step.
    fn compare(&mut self, what: &str) {
        let (s, d) = (&self.sim.tp, &self.drv.tp);
        if s.ca_state == CaState::Recovery && self.trace_sim.last().is_some_and(|t| t.2 != CaState::Recovery)
        {
            self.seen.recoveries += 1;
        }
        if s.ca_state == CaState::Cwr && self.trace_sim.last().is_some_and(|t| t.2 != CaState::Cwr) {
            self.seen.cwr += 1;
        }
        self.trace_sim.push((s.snd_cwnd, s.snd_ssthresh, s.ca_state));
        self.trace_drv.push((d.snd_cwnd, d.snd_ssthresh, d.ca_state));
        let (vs, vd) = (view(s), view(d));
        let (cs, cd) = (
            format!("{:?}", self.sim.cc_vars()),
            format!("{:?}", self.drv.vars()),
        );
        assert!(
            vs == vd && cs == cd,
            "{}: step {} ({what}) at {} ns differs\n  simulator: {vs}\n  driver:    {vd}\n  simulator: {cs}\n  driver:    {cd}",
            self.name,
            self.trace_sim.len(),
            self.now.ns(),
        );
    }
}

/// The socket fields the stacks maintain, as text for a readable difference.
fn view(tp: &TcpSock) -> String {
    format!(
        "cwnd {} ssthresh {} {:?} cnt {} prior_cwnd {} una {} nxt {} high {} out {} sacked {} lost_out {} \
         retrans {} delivered {} ce {} lost {} mstamp {} app_limited {} srtt {} min_rtt {} cwnd_limited {} \
         pacing {} lsndtime {}",
        tp.snd_cwnd,
        tp.snd_ssthresh,
        tp.ca_state,
        tp.snd_cwnd_cnt,
        tp.prior_cwnd,
        tp.snd_una,
        tp.snd_nxt,
        tp.high_seq,
        tp.packets_out,
        tp.sacked_out,
        tp.lost_out,
        tp.retrans_out,
        tp.delivered,
        tp.delivered_ce,
        tp.lost,
        tp.delivered_mstamp.ns(),
        tp.app_limited,
        tp.srtt_us,
        tp.min_rtt_us,
        tp.is_cwnd_limited,
        tp.pacing_rate,
        tp.lsndtime.ns(),
    )
}

/// 1000 packets/s (11.6 Mbit/s of payload), 40 ms: a BDP of 40 packets.
fn net(buffer: usize, drops: Drops) -> Net {
    Net {
        rate_pps: 1000,
        rtt_ms: 40,
        buffer,
        mark_above: None,
        drops,
    }
}

/// The ECN algorithms see step marks above 20 packets (half a BDP); the others ignore them.
fn with_marks(mut n: Net, name: &str) -> Net {
    if matches!(name, "dctcp" | "prague") {
        n.mark_above = Some(20);
    }
    n
}

/// Loss-free: slow start into a deep buffer, then steady growth; DCTCP and Prague get CE marks.
fn loss_free(name: &'static str) {
    let seen = Harness::new(name, with_marks(net(100_000, Drops::None), name)).run(4_000);
    assert_eq!(seen.drops, 0, "{name}");
    assert!(seen.steps > 3_000, "{name}: {seen:?}");
    // BBR's paced TSO bursts are at least 2 segments (`bbr_min_tso_segs` above 1.2 Mbit/s), which the driver
    // replays as one transmission each. Prague paces from the handshake's RTT on at about the path's 1 segment
    // per ms, so its bursts (1 ms of its rate) stay single segments.
    let paced = matches!(name, "bbr" | "bbr2" | "bbr3");
    assert_eq!(seen.max_burst > 1, paced, "{name}: {seen:?}");
    if matches!(name, "dctcp" | "prague") {
        assert!(seen.marks > 0 && seen.cwr > 0, "{name}: {seen:?}");
    }
}

/// Single and paired losses in the middle of flights, found by SACK and RACK.
fn sack_losses(name: &'static str) {
    let drops = Drops::Seqs(vec![150, 400, 401, 700, 1200, 1205]);
    let seen = Harness::new(name, net(100_000, drops)).run(5_000);
    assert_eq!(seen.drops, 6, "{name}");
    assert!(seen.recoveries >= 3, "{name}: {seen:?}");
    assert_eq!(seen.rtos, 0, "{name}: {seen:?}");
}

/// A half-BDP tail-drop buffer: bursts of losses at the end of slow start and at each probe.
fn tail_drops(name: &'static str) {
    let seen = Harness::new(name, with_marks(net(20, Drops::None), name)).run(6_000);
    assert!(seen.drops > 0, "{name}: {seen:?}");
    assert!(seen.recoveries >= 1, "{name}: {seen:?}");
}

/// An RTO in Recovery, and a second one in Loss after the first retransmission was ACKed.
fn rtos(name: &'static str) {
    let once = Drops::Blackout {
        seqs: vec![300],
        rtos: 1,
    };
    let seen = Harness::new(name, net(100_000, once)).run(5_000);
    assert_eq!(seen.rtos, 1, "{name}: {seen:?}");
    let twice = Drops::Blackout {
        seqs: vec![300],
        rtos: 2,
    };
    let seen = Harness::new(name, net(100_000, twice)).run(6_000);
    assert_eq!(seen.rtos, 2, "{name}: {seen:?}");
    if name == "reno" {
        // The second RTO starts a loss episode of its own: ssthresh halves the small post-RTO window.
        assert!(seen.rto_ssthresh[1] < seen.rto_ssthresh[0], "{seen:?}");
    }
}

/// One cross-check per algorithm, over every scenario.
macro_rules! crosscheck {
    ($($test:ident: $name:literal),* $(,)?) => {
        $(
            #[test]
            fn $test() {
                loss_free($name);
                sack_losses($name);
                tail_drops($name);
                rtos($name);
            }
        )*

        #[test]
        fn every_algorithm_is_cross_checked() {
            let checked = [$($name),*];
            for info in algorithms() {
                assert!(checked.contains(&info.name), "{} has no cross-check", info.name);
            }
        }
    };
}

crosscheck! {
    reno_driver_matches_the_simulator: "reno",
    cubic_driver_matches_the_simulator: "cubic",
    dctcp_driver_matches_the_simulator: "dctcp",
    prague_driver_matches_the_simulator: "prague",
    bbr_driver_matches_the_simulator: "bbr",
    bbr2_driver_matches_the_simulator: "bbr2",
    bbr3_driver_matches_the_simulator: "bbr3",
}
