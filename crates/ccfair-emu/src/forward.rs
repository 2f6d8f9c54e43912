//! `ccfair-emu forward`: the bottleneck router. Two AF_PACKET sockets, one on the interface towards the
//! senders and one towards the receiver; frames of known flows go through the [`Shaper`], everything else
//! (ARP, stray frames) is passed straight through. Runs from start-up (so handshakes cross the emulated
//! path), records from the epoch, and writes its results when the run ends.
//!
//! The loop: append due interval rows, read what has arrived on both sockets, send every frame whose ideal
//! time has come (measuring how late; without `arrival_at_stamp` this comes before the reads), and when
//! nothing is left to do sleep in `ppoll` until the next deadline or the next frame, whichever is first.
//! Timer slack is set to 1 ns so the sleep ends on time; `spin_ns` optionally busy-waits the last stretch;
//! `realtime` runs under SCHED_FIFO.
//!
//! When a frame's time at the bottleneck starts. A switch of silicon starts it as the frame arrives; the loop
//! reads frames tens of microseconds later (mostly its own wake-up at low rates; the wait is recorded per
//! side over the window, `read_latency_*`). With `arrival_at_stamp` (`CCFAIR_EMU_ARRIVAL=stamp`, the kernel
//! backend's default) a frame's time starts at the kernel's arrival stamp (`SO_TIMESTAMPNS`, taken as the
//! veth hands it on), after the link and the delay lines have been run to that instant, so it enters behind
//! the departures due before it and ahead of those due after. One residue: the shaper's time never goes back,
//! so a frame stamped before the instant the loop last ran the link to (an ACK read after a batch of data
//! frames, a frame read after an interval mark it preceded) enters at that instant, late by at most the
//! read's wait. Without it (`CCFAIR_EMU_ARRIVAL=read`) a frame's time starts at its read: frames that waited
//! while the loop slept then enter after the departures due meanwhile, and a burst finds room a real queue
//! would not have had (docs/notes/validation-loop.md measures what that did to the grid).
//!
//! Why AF_PACKET: on veth it costs one syscall per frame each way and needs no BPF program; AF_XDP on veth
//! runs in copy (generic) mode, so it would not save the copy, and TUN would put the kernel's IP forwarding
//! in the path. See docs/notes/kernel-measurements.md for the measured rates.
//!
//! The senders' side is read with `PACKET_VNET_HDR` into a 64 KB staging buffer: with segmentation offload
//! on at the senders' veth, frames arrive as whole TSO bursts, which are split into wire-size packets (one
//! pool buffer each) before the shaper sees them, and partial checksums are completed ([`crate::gso`]). A
//! frame that fits is copied into its pool buffer as it is. The receiver's side never carries bursts (its
//! veth sends ACKs only) and is read straight into the pool.

use ccfair_core::{Dur, Rate, Time};
use serde::Serialize;

use crate::clock::{self, Clock, Command, Control};
use crate::config::{ForwardConfig, Mark};
use crate::frame::{self, EmuPacket};
use crate::gso::{self, Gso, TcpSegments, VnetHdr};
use crate::pool::Pool;
use crate::record::{FlowRecord, QueueRows, Recorder, Spread};
use crate::shaper::{Out, Path, Shaper};
use crate::sys::{self, PacketSocket};
use ccfair_core::Totals;

/// Frames read from one socket before the loop checks its deadlines again.
const RX_BATCH: usize = 64;
/// Socket buffers: deep enough for a burst of several thousand frames while the loop is busy.
const SOCKET_BUFFER_BYTES: usize = 32 << 20;
/// The staging buffer of the senders' side: the largest GSO burst veth passes on (`GSO_LEGACY_MAX_SIZE`,
/// 64 KB of IP packet) with its Ethernet header, and room to spare; anything longer is an oversize frame.
const STAGING_BYTES: usize = 128 << 10;

/// The emulator's health, for flagging runs where it (not the bottleneck) was the limit.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Health {
    /// Frames the kernel dropped on the emulator's sockets because it did not read them in time.
    pub rx_kernel_drops: u64,
    /// Frames dropped because the buffer pool was empty.
    pub pool_exhausted: u64,
    /// Frames the emulator could not handle: longer than a buffer without being a TCP/IPv4 burst it can
    /// segment, a burst whose segments would not fit a buffer, or a partial checksum outside the frame.
    pub oversize_frames: u64,
    /// TCP segmentation bursts (GSO frames) from the senders, split into `gso_segments` wire-size packets.
    pub gso_frames: u64,
    pub gso_segments: u64,
    /// Sends the kernel refused.
    pub tx_errors: u64,
    /// Frames of no known flow, passed straight through (ARP and the like).
    pub passthrough_frames: u64,
    /// Frames still in the queue, on the link or in a delay line when the run ended.
    pub held_at_end: u64,
    pub pool_slots: u64,
    pub realtime: bool,
    /// The longest time the loop was away from its sockets beyond a sleep it asked for: the CPU was taken
    /// from it (preemption, throttling, a starved kernel thread given its turn). Frames that arrive meanwhile
    /// wait unread and enter the queue together when it is back, so a long stall is a burst the senders
    /// never sent.
    pub stall_max_ns: u64,
    /// Stalls longer than `stall_count_ns` ([`STALL_COUNT_NS`], written out so readers need not know it),
    /// and their total time.
    pub stalls: u64,
    pub stall_total_ns: u64,
    pub stall_count_ns: u64,
}

/// A stall this long is counted: longer than a loop iteration's work (a batch of frames each way) ever takes.
pub const STALL_COUNT_NS: u64 = 1_000_000;

/// Measures stalls: the gap between two visits to the loop's top, less the sleep the loop asked for in
/// between (an early wake by a frame gives a shorter gap, never a stall).
#[derive(Default)]
struct StallGauge {
    last_top: Option<Time>,
    asked_sleep_ns: u64,
}

impl StallGauge {
    /// The loop is at its top at `now`; records the stall since the last visit in `health`.
    fn at_top(&mut self, now: Time, health: &mut Health) {
        if let Some(last) = self.last_top {
            let stall = now
                .saturating_since(last)
                .ns()
                .saturating_sub(self.asked_sleep_ns);
            health.stall_max_ns = health.stall_max_ns.max(stall);
            if stall > STALL_COUNT_NS {
                health.stalls += 1;
                health.stall_total_ns += stall;
            }
        }
        self.last_top = Some(now);
        self.asked_sleep_ns = 0;
    }

    /// The loop sleeps up to `ns` (`None`: until a frame or a command comes, however long).
    fn sleeping(&mut self, ns: Option<u64>) {
        self.asked_sleep_ns = ns.unwrap_or(u64::MAX);
    }
}

/// How long a frame waited between the kernel's arrival stamp and this read (`None` without a stamp): the
/// loop's wake-up and its other work, time the frame spends on the emulated path that no real router adds.
#[inline]
fn read_latency_ns(stamp: Option<u64>) -> Option<u64> {
    stamp.map(|t| sys::realtime_ns().saturating_sub(t))
}

#[derive(Serialize)]
struct Output {
    queue: QueueRows,
    flows: Vec<FlowRecord>,
    totals: Totals,
    lateness_window: Spread,
    lateness_run: Spread,
    /// Over the measurement window: how long frames from the senders (data) and from the receiver (ACKs)
    /// waited in the emulator's sockets before it read them.
    read_latency_senders: Spread,
    read_latency_receiver: Spread,
    /// The hosts' turnaround over the window ([`crate::turnaround`]): the receiver's, and each flow's
    /// sender's.
    turnaround_receiver: Spread,
    turnaround_sender: Vec<Spread>,
    health: Health,
}

#[derive(Copy, Clone, PartialEq, Eq)]
enum Side {
    Senders,
    Receiver,
}

struct Ports {
    senders: PacketSocket,
    receiver: PacketSocket,
}

impl Ports {
    fn to(&self, out: Out) -> &PacketSocket {
        match out {
            Out::ToReceiver => &self.receiver,
            Out::ToSender => &self.senders,
        }
    }
}

/// Allows busy-waiting only while the loop has been busy (not asleep in `ppoll`) for less than 70 % of the
/// current 100 ms: under SCHED_FIFO a loop that never sleeps would keep its CPU from the kernel's own threads
/// (ksoftirqd, the workqueues), and the kernel backend lifts the real-time bandwidth limit
/// (`sched_rt_runtime_us`) that would otherwise stop it for tens of milliseconds: this budget is what leaves
/// them their share.
#[derive(Default)]
struct SpinBudget {
    window_start: Time,
    slept_ns: u64,
}

impl SpinBudget {
    const WINDOW_NS: u64 = 100_000_000;

    fn allows(&mut self, now: Time) -> bool {
        let elapsed = now.saturating_since(self.window_start).ns();
        if elapsed >= Self::WINDOW_NS {
            self.window_start = now;
            self.slept_ns = 0;
            return true;
        }
        elapsed < 1_000_000 || elapsed.saturating_sub(self.slept_ns) * 10 < elapsed * 7
    }

    fn slept(&mut self, ns: u64) {
        self.slept_ns += ns;
    }
}

struct Forwarder {
    clock: Clock,
    ports: Ports,
    shaper: Shaper,
    port_base: u16,
    n_flows: u32,
    out: Vec<(EmuPacket, Out, Time)>,
    /// Where the senders' side frames land first (and any frame read without a free buffer).
    staging: Vec<u8>,
    health: Health,
    /// `ForwardConfig::arrival_at_stamp`.
    arrival_at_stamp: bool,
    /// The latest instant the link and the delay lines have been run to: a frame stamped earlier enters at
    /// it, so the shaper's time never goes back.
    advanced_to: Time,
}

/// Pool size: the queue limit plus what the delay lines hold at the link rate (frames of at least 500 bytes
/// on the data side, one ACK per data frame on the other), plus headroom for bursts and passthrough.
fn pool_slots(cfg: &ForwardConfig) -> usize {
    let limit = match cfg.aqm.limit {
        ccfair_aqm::QueueLimit::Packets(n) => n as usize,
        ccfair_aqm::QueueLimit::Bytes(b) => (b / 64) as usize,
    };
    let rate = Rate::from_bps(cfg.rate_bps);
    let max_delay = cfg
        .flows
        .iter()
        .map(|f| f.data_delay_ns.max(f.ack_delay_ns))
        .max()
        .unwrap_or(0);
    let in_flight = rate.bytes_in_ns(max_delay) as usize / 500;
    (limit + 2 * in_flight + 8192).min(4 << 20)
}

pub fn run(cfg: ForwardConfig) -> Result<(), String> {
    cfg.schedule.check()?;
    if cfg.rate_bps == 0 {
        return Err("rate_bps must be positive".into());
    }
    let _ = sys::set_timer_slack_ns(1);
    crate::config::pin(&cfg.cpus, "forward");
    let mut health = Health {
        stall_count_ns: STALL_COUNT_NS,
        ..Health::default()
    };
    if cfg.realtime {
        match sys::set_realtime(50) {
            Ok(()) => health.realtime = true,
            Err(e) => eprintln!("ccfair-emu: warning: SCHED_FIFO not available ({e}); running without"),
        }
    }
    let ports = Ports {
        senders: PacketSocket::open(&cfg.sender_if, SOCKET_BUFFER_BYTES, true)
            .map_err(|e| format!("AF_PACKET: {e}"))?,
        receiver: PacketSocket::open(&cfg.receiver_if, SOCKET_BUFFER_BYTES, false)
            .map_err(|e| format!("AF_PACKET: {e}"))?,
    };
    let slot_bytes = (cfg.mtu_bytes as usize + frame::ETH_HEADER + 4).next_multiple_of(64);
    let slots = pool_slots(&cfg);
    health.pool_slots = slots as u64;
    let paths = cfg
        .flows
        .iter()
        .map(|f| Path {
            data_delay: Dur::from_ns(f.data_delay_ns),
            ack_delay: Dur::from_ns(f.ack_delay_ns),
            loss: f.loss,
            group: f.group,
        })
        .collect();
    let shaper = Shaper::new(
        &cfg.aqm,
        Rate::from_bps(cfg.rate_bps),
        cfg.mtu_bytes,
        paths,
        cfg.seed,
        Pool::new(slots, slot_bytes),
        Recorder::new(cfg.flows.len(), cfg.schedule.interval_ns),
    );
    let mut fw = Forwarder {
        clock: Clock::new(),
        ports,
        shaper,
        port_base: cfg.port_base,
        n_flows: cfg.flows.len() as u32,
        out: Vec::with_capacity(1024),
        staging: vec![0; STAGING_BYTES],
        health,
        arrival_at_stamp: cfg.arrival_at_stamp,
        advanced_to: Time::ZERO,
    };
    clock::announce_ready();
    fw.run_loop(&cfg)?;
    fw.finish(&cfg)
}

impl Forwarder {
    fn run_loop(&mut self, cfg: &ForwardConfig) -> Result<(), String> {
        let mut control = Control::new();
        let fds = [
            self.ports.senders.raw_fd(),
            self.ports.receiver.raw_fd(),
            control.fd(),
        ];
        let mut ready = [false; 3];
        let mut epoch: Option<Time> = None;
        let mut marks: Vec<(Time, Mark)> = Vec::new();
        let mut next_mark = 0usize;
        let mut end = Time::MAX;
        let mut spin = SpinBudget::default();
        let mut stall = StallGauge::default();
        loop {
            let now = self.clock.now();
            stall.at_top(now, &mut self.health);
            if now >= end && next_mark == marks.len() {
                return Ok(());
            }
            // Marks are applied in time order with the link's events: everything up to a mark first.
            while let Some(&(t, mark)) = marks.get(next_mark).filter(|(t, _)| *t <= now) {
                self.send_due(t);
                let (bytes, packets) = (self.shaper.backlog_bytes(), self.shaper.backlog_packets());
                let rec = &mut self.shaper.rec;
                match mark {
                    Mark::Sample => rec.sample(t, bytes, packets),
                    Mark::WindowStart => rec.window_start(t),
                    Mark::WindowEnd => rec.window_end(t),
                }
                next_mark += 1;
            }
            if self.arrival_at_stamp {
                // Frames first, each after the events due before its stamp; then the rest up to now.
                let got = self.receive(Side::Senders)? + self.receive(Side::Receiver)?;
                self.send_due(self.clock.now());
                if got > 0 {
                    continue;
                }
            } else {
                self.send_due(now);
                let got = self.receive(Side::Senders)? + self.receive(Side::Receiver)?;
                if got > 0 {
                    continue;
                }
            }
            let deadline = [
                self.shaper.next_deadline(),
                marks.get(next_mark).map(|m| m.0),
                epoch.map(|_| end),
            ]
            .into_iter()
            .flatten()
            .min();
            let now = self.clock.now();
            let wait = deadline.map(|d| d.saturating_since(now).ns());
            let spin_ns = if spin.allows(now) { cfg.spin_ns } else { 0 };
            if wait.is_some_and(|w| w <= spin_ns) {
                continue; // busy-wait the last stretch (the receive calls above are the polling)
            }
            stall.sleeping(wait.map(|w| w - spin_ns));
            sys::poll_readable(&fds, wait.map(|w| w - spin_ns), &mut ready)
                .map_err(|e| format!("ppoll: {e}"))?;
            spin.slept(self.clock.now().saturating_since(now).ns());
            if ready[2] {
                match control.read()? {
                    Some(Command::Go(at)) if epoch.is_none() => {
                        let e = self.clock.at(at)?;
                        epoch = Some(e);
                        end = e + Dur::from_ns(cfg.schedule.duration_ns);
                        marks = cfg
                            .schedule
                            .marks()
                            .into_iter()
                            .map(|(t, m)| (e + Dur::from_ns(t), m))
                            .collect();
                        self.shaper.rec.start(e);
                    }
                    Some(Command::Go(_)) => return Err("second go".into()),
                    Some(Command::Gone) => return Err("the orchestrator went away; run abandoned".into()),
                    None => {}
                }
            }
        }
    }

    /// Sends everything due by `now`, recording lateness and RTT samples.
    fn send_due(&mut self, now: Time) {
        self.advanced_to = self.advanced_to.max(now);
        self.shaper.advance(now, &mut self.out);
        for i in 0..self.out.len() {
            let (pkt, dir, ideal) = self.out[i];
            let len = pkt.frame_len as usize;
            if pkt.ecn != pkt.wire_ecn {
                frame::write_ecn(&mut self.shaper.pool.buf_mut(pkt.slot)[..len], pkt.ecn);
            }
            let sent = self.ports.to(dir).send(&self.shaper.pool.buf(pkt.slot)[..len]);
            let t = self.clock.now();
            let rec = &mut self.shaper.rec;
            match sent {
                Ok(()) => {
                    rec.lateness(t.saturating_since(ideal).ns());
                    rec.frame_sent();
                    if dir == Out::ToSender && pkt.is_tcp {
                        rec.ack_departed(t, pkt.flow, pkt.ack);
                    } else if let Some(end) = pkt.data_end {
                        rec.data_departed(t, pkt.flow, end);
                    }
                }
                Err(_) => self.health.tx_errors += 1,
            }
            self.shaper.pool.release(pkt.slot);
        }
        self.out.clear();
    }

    /// Reads up to a batch of frames from one side; returns how many.
    fn receive(&mut self, side: Side) -> Result<usize, String> {
        let mut got = 0;
        while got < RX_BATCH {
            let read = match side {
                Side::Senders => self.receive_staged()?,
                Side::Receiver => self.receive_direct()?,
            };
            if !read {
                break;
            }
            got += 1;
        }
        Ok(got)
    }

    /// Reads one frame from the receiver's side straight into a pool buffer; false when none was waiting.
    fn receive_direct(&mut self) -> Result<bool, String> {
        let from = &self.ports.receiver;
        let Some(slot) = self.shaper.pool.alloc() else {
            // No buffer: read the frame into the staging buffer and drop it (counted by the pool).
            return match from.recv(&mut self.staging) {
                Ok(got) => Ok(got.is_some()),
                Err(e) => Err(format!("recv: {e}")),
            };
        };
        let (n, stamp) = match from.recv(self.shaper.pool.buf_mut(slot)) {
            Ok(Some((n, stamp))) => {
                self.shaper
                    .rec
                    .read_latency(Side::Receiver as usize, read_latency_ns(stamp));
                (n, stamp)
            }
            Ok(None) => {
                self.shaper.pool.release(slot);
                return Ok(false);
            }
            Err(e) => {
                self.shaper.pool.release(slot);
                return Err(format!("recv: {e}"));
            }
        };
        if n > self.shaper.pool.slot_bytes() {
            self.health.oversize_frames += 1;
            self.shaper.pool.release(slot);
        } else {
            let at = self.arrival(stamp);
            self.accept(Side::Receiver, slot, n, at);
        }
        Ok(true)
    }

    /// Reads one frame from the senders' side into the staging buffer and hands it on as wire-size packets
    /// in pool buffers: a TCP burst segmented, another frame copied (its partial checksum completed); false
    /// when none was waiting.
    fn receive_staged(&mut self) -> Result<bool, String> {
        // The staging buffer is lent out while its frame is handed on (an empty Vec stands in: no allocation).
        let mut staging = std::mem::take(&mut self.staging);
        let mut raw_hdr = [0u8; gso::VNET_HDR_LEN];
        let read = self.ports.senders.recv_vnet(&mut raw_hdr, &mut staging);
        if let Ok(Some((n, stamp))) = read {
            self.shaper
                .rec
                .read_latency(Side::Senders as usize, read_latency_ns(stamp));
            if n > staging.len() {
                self.health.oversize_frames += 1;
            } else {
                let at = self.arrival(stamp);
                self.hand_on(VnetHdr::parse(&raw_hdr), &staging[..n], at);
            }
        }
        self.staging = staging;
        match read {
            Ok(got) => Ok(got.is_some()),
            Err(e) => Err(format!("recv: {e}")),
        }
    }

    /// When a frame read now entered the emulator: now, or with `arrival_at_stamp` its kernel stamp, but
    /// not before the instant the link was last run to (the shaper's events are in time order) and not
    /// after now; in that mode the link and the delay lines are first run to that instant.
    #[inline]
    fn arrival(&mut self, stamp: Option<u64>) -> Time {
        let now = self.clock.now();
        match stamp {
            Some(t) if self.arrival_at_stamp => {
                let at = self.clock.from_realtime(t).max(self.advanced_to).min(now);
                // What was due before the frame arrived happens first.
                self.send_due(at);
                at
            }
            _ => now,
        }
    }

    /// Hands a frame from the senders' side on to the shaper as wire-size packets in pool buffers.
    fn hand_on(&mut self, hdr: VnetHdr, frame: &[u8], now: Time) {
        let cap = self.shaper.pool.slot_bytes();
        match hdr.gso() {
            Gso::TcpV4 { mss } => {
                let Ok(segments) = TcpSegments::new(frame, mss, cap) else {
                    self.health.oversize_frames += 1;
                    return;
                };
                self.health.gso_frames += 1;
                self.health.gso_segments += segments.count() as u64;
                for i in 0..segments.count() {
                    // Without a buffer the rest of the burst is lost (the pool counts each).
                    let Some(slot) = self.shaper.pool.alloc() else {
                        continue;
                    };
                    let len = segments.write(i, self.shaper.pool.buf_mut(slot));
                    self.accept(Side::Senders, slot, len, now);
                }
            }
            Gso::Other => self.health.oversize_frames += 1,
            Gso::None if frame.len() > cap => self.health.oversize_frames += 1,
            Gso::None => {
                let Some(slot) = self.shaper.pool.alloc() else {
                    return;
                };
                let buf = &mut self.shaper.pool.buf_mut(slot)[..frame.len()];
                buf.copy_from_slice(frame);
                if hdr.needs_csum() && !gso::complete_checksum(buf, hdr.csum_start, hdr.csum_offset) {
                    self.health.oversize_frames += 1;
                    self.shaper.pool.release(slot);
                    return;
                }
                self.accept(Side::Senders, slot, frame.len(), now);
            }
        }
    }

    /// A wire-size frame of `len` bytes in pool buffer `slot`, arrived from `side` at `now`: into the shaper if it
    /// belongs to a flow, else straight through to the other side.
    fn accept(&mut self, side: Side, slot: u32, len: usize, now: Time) {
        let p = frame::parse(&self.shaper.pool.buf(slot)[..len]);
        let Some(flow) = self.classify(side, &p) else {
            self.health.passthrough_frames += 1;
            let to = match side {
                Side::Senders => &self.ports.receiver,
                Side::Receiver => &self.ports.senders,
            };
            if to.send(&self.shaper.pool.buf(slot)[..len]).is_err() {
                self.health.tx_errors += 1;
            }
            self.shaper.rec.frame_sent();
            self.shaper.pool.release(slot);
            return;
        };
        let pkt = EmuPacket {
            slot,
            frame_len: len as u16,
            flow,
            ip_len: p.ip_len,
            enqueue_ts: now,
            ecn: p.ecn,
            wire_ecn: p.ecn,
            hash: p.hash,
            ack: p.ack,
            data_end: (p.proto == 6 && p.payload > 0).then(|| p.seq.wrapping_add(p.payload)),
            is_tcp: p.proto == 6,
            packet_value: 0,
        };
        match side {
            Side::Senders => self.shaper.from_sender(now, pkt, p.payload, p.seq),
            Side::Receiver => {
                if pkt.is_tcp {
                    self.shaper.rec.ack_arrived(now, flow, p.ack);
                }
                self.shaper.from_receiver(now, pkt)
            }
        }
    }

    /// The flow a frame belongs to: by the receiver's port for TCP, by the identifier for ICMP echo.
    fn classify(&self, side: Side, p: &frame::Parsed) -> Option<u32> {
        if !p.is_ipv4 {
            return None;
        }
        let index = if let Some(id) = p.echo_id {
            (p.is_echo_request == (side == Side::Senders)).then_some(id as u32)?
        } else if p.proto == 6 {
            let port = if side == Side::Senders {
                p.dst_port
            } else {
                p.src_port
            };
            port.checked_sub(self.port_base)? as u32
        } else {
            return None;
        };
        (index < self.n_flows).then_some(index)
    }

    fn finish(&mut self, cfg: &ForwardConfig) -> Result<(), String> {
        for port in [&self.ports.senders, &self.ports.receiver] {
            self.health.rx_kernel_drops += port.stats().map(|s| s.drops).unwrap_or(0);
        }
        self.health.pool_exhausted = self.shaper.pool.exhausted;
        self.health.held_at_end = self.shaper.held_frames();
        let (lateness_window, lateness_run) = self.shaper.rec.lateness_spread();
        let [read_latency_senders, read_latency_receiver] = self.shaper.rec.read_latency_spreads();
        let (turnaround_receiver, turnaround_sender) = self.shaper.rec.turnaround_spreads();
        let output = Output {
            queue: self.shaper.rec.take_queue(),
            flows: self.shaper.rec.flow_records(),
            totals: self.shaper.rec.final_totals(),
            lateness_window,
            lateness_run,
            read_latency_senders,
            read_latency_receiver,
            turnaround_receiver,
            turnaround_sender,
            health: self.health.clone(),
        };
        clock::write_json(&cfg.out, &output)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(us: u64) -> Time {
        Time::from_ns(us * 1000)
    }

    #[test]
    fn a_stall_is_the_time_away_beyond_the_sleep_asked_for() {
        let mut g = StallGauge::default();
        let mut h = Health::default();
        g.at_top(at(0), &mut h);
        // Busy iterations 0.1 ms apart: no stall counted, the longest gap kept.
        g.at_top(at(100), &mut h);
        g.at_top(at(200), &mut h);
        assert_eq!((h.stall_max_ns, h.stalls), (100_000, 0));
        // Asked to sleep 5 ms, back after 5.05: a 50 us overshoot.
        g.sleeping(Some(5_000_000));
        g.at_top(at(5250), &mut h);
        assert_eq!((h.stall_max_ns, h.stalls), (100_000, 0));
        // Asked to sleep 1 ms, back after 31 ms: a 30 ms stall.
        g.sleeping(Some(1_000_000));
        g.at_top(at(36250), &mut h);
        assert_eq!(
            (h.stall_max_ns, h.stalls, h.stall_total_ns),
            (30_000_000, 1, 30_000_000)
        );
        // Woken early by a frame: never a stall; an unbounded sleep neither.
        g.sleeping(Some(10_000_000));
        g.at_top(at(36300), &mut h);
        g.sleeping(None);
        g.at_top(at(536300), &mut h);
        assert_eq!((h.stall_max_ns, h.stalls), (30_000_000, 1));
        // A busy iteration preempted for 2 ms counts.
        g.at_top(at(538400), &mut h);
        assert_eq!((h.stalls, h.stall_total_ns), (2, 32_100_000));
    }
}
