//! `ccfair-emu send`: the bulk senders. One TCP socket per flow, its congestion control set with
//! TCP_CONGESTION (and internal pacing switched on with SO_MAX_PACING_RATE when the scenario asks) before it
//! connects. A flow opens its connection when it starts (`connect_at_start`, the scenario's `connect =
//! "at_start"`), as a testbed's client started then does: its SYN crosses the emulator's queue as the earlier
//! flows keep it, the kernel completes the handshake (and sends the SYN again if the queue dropped it), and
//! the flow writes once the socket reports the connection made. The other flows connect before the epoch,
//! all at once (`connect = "before_run"`): their handshakes run side by side, so each flow's congestion
//! control starts within one handshake of the others (BBR stamps its min-RTT filter then, and enters
//! PROBE_RTT when that stamp is 10 s old; connected one after the other, N flows of RTT R would carry stamps
//! N x R apart into the run). From its start time (or its connection, if later) a flow writes as fast as the
//! socket takes data, until its stop time or, for a finite flow, until it has written its size, when it
//! shuts down its sending side. At each interval boundary and at the window's edges it samples TCP_INFO
//! (and BBR's TCP_CC_INFO) of every flow; each flow's output also gives when its connection was made.
//!
//! Flows with the same start time start in flow order: one wakeup writes to each in turn, and the kernel
//! sends a flow's initial window inside its first write (`tcp_sendmsg` pushes what the window allows), so
//! the next flow's first segment leaves after the previous flow's whole initial window, 100-200 µs later
//! (Linux 6.18 here, captured at the router's veth in 100 Mbit/s runs).

use std::io::Write;
use std::net::{Shutdown, SocketAddrV4, TcpStream};
use std::os::fd::AsRawFd;

use serde::Serialize;

use crate::clock::{self, Clock, Command, Control};
use crate::config::{Mark, SendConfig};
use crate::schedstat::SchedStat;
use crate::sys;
use crate::tcpinfo::{BbrInfo, TcpInfo};

const WRITE_BYTES: usize = 256 << 10;
/// Writes per flow per wakeup, so one fast flow cannot starve the others' sockets.
const WRITES_PER_WAKEUP: usize = 8;
/// Linux's TCP_INFINITE_SSTHRESH.
const INFINITE_SSTHRESH: u32 = 0x7fff_ffff;

/// Cumulative counters at one instant.
#[derive(Clone, Copy, Debug, Default, Serialize)]
struct Counters {
    data_segs_out: f64,
    total_retrans: f64,
    total_rto: f64,
}

/// One flow's samples (one entry per interval boundary).
#[derive(Debug, Default, Serialize)]
struct FlowSeries {
    cc: String,
    cwnd: Vec<f64>,
    ssthresh: Vec<i64>,
    srtt_ns: Vec<f64>,
    min_rtt_ns: Vec<f64>,
    pacing_rate_bps: Vec<f64>,
    delivery_rate_bps: Vec<f64>,
    inflight: Vec<f64>,
    total_retrans: Vec<f64>,
    ca_state: Vec<f64>,
    cc_bw_bps: Vec<f64>,
    cc_min_rtt_ns: Vec<f64>,
    cc_pacing_gain: Vec<f64>,
    cc_cwnd_gain: Vec<f64>,
    window_start: Counters,
    window_end: Counters,
    total: Counters,
    /// When everything written had been acknowledged after the stop (ns after the epoch), if it was.
    finished_ns: Option<u64>,
    /// When the connection was made (ns after the epoch; 0 for one made before the epoch), if it was.
    connected_ns: Option<u64>,
    /// Why the connection could not be made (the kernel gave up on its SYNs), if it was not.
    connect_error: Option<String>,
}

struct Flow {
    stream: TcpStream,
    dst: SocketAddrV4,
    /// Where the connection stands: not begun (a flow that opens it at its start), under way, made.
    link: Link,
    start_ns: u64,
    stop_ns: u64,
    writing: bool,
    shut: bool,
    /// Bytes still to write (`u64::MAX`: a bulk flow).
    unwritten: u64,
    is_bbr: bool,
    series: FlowSeries,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Link {
    Closed,
    Connecting,
    Connected,
}

fn opt(v: Option<impl Into<f64>>) -> f64 {
    v.map_or(f64::NAN, Into::into)
}

impl Flow {
    fn info(&self) -> (Option<TcpInfo>, Option<BbrInfo>) {
        let fd = self.stream.as_raw_fd();
        let mut b = [0u8; 256];
        let info = sys::tcp_info(fd, &mut b).ok().and_then(|n| TcpInfo::parse(&b, n));
        let mut c = [0u8; 64];
        let bbr = if self.is_bbr {
            sys::tcp_cc_info(fd, &mut c)
                .ok()
                .and_then(|n| BbrInfo::parse(&c, n))
        } else {
            None
        };
        (info, bbr)
    }

    fn counters(&self) -> Counters {
        match self.info().0 {
            Some(i) => Counters {
                data_segs_out: opt(i.data_segs_out),
                total_retrans: i.total_retrans as f64,
                total_rto: opt(i.total_rto),
            },
            None => Counters {
                data_segs_out: f64::NAN,
                total_retrans: f64::NAN,
                total_rto: f64::NAN,
            },
        }
    }

    fn sample(&mut self, t_ns: u64) {
        let (info, bbr) = self.info();
        let s = &mut self.series;
        let i = info.unwrap_or_default();
        let known = info.is_some();
        let v = |x: f64| if known { x } else { f64::NAN };
        s.cwnd.push(v(i.snd_cwnd as f64));
        s.ssthresh.push(if i.snd_ssthresh >= INFINITE_SSTHRESH {
            -1
        } else {
            i.snd_ssthresh as i64
        });
        s.srtt_ns.push(v(i.rtt_us as f64 * 1e3));
        s.min_rtt_ns.push(match i.min_rtt_us {
            Some(m) if m != u32::MAX => m as f64 * 1e3,
            _ => f64::NAN,
        });
        s.pacing_rate_bps.push(match i.pacing_rate {
            Some(r) if r != u64::MAX => r as f64 * 8.0,
            _ => f64::NAN,
        });
        s.delivery_rate_bps
            .push(i.delivery_rate.map_or(f64::NAN, |r| r as f64 * 8.0));
        s.inflight.push(v(i.in_flight() as f64));
        s.total_retrans.push(v(i.total_retrans as f64));
        s.ca_state.push(v(i.ca_state as f64));
        s.cc_bw_bps
            .push(bbr.map_or(f64::NAN, |b| b.bw_bytes_per_sec as f64 * 8.0));
        s.cc_min_rtt_ns
            .push(bbr.map_or(f64::NAN, |b| b.min_rtt_us as f64 * 1e3));
        s.cc_pacing_gain
            .push(bbr.map_or(f64::NAN, |b| b.pacing_gain as f64 / 256.0));
        s.cc_cwnd_gain
            .push(bbr.map_or(f64::NAN, |b| b.cwnd_gain as f64 / 256.0));
        if self.shut
            && s.finished_ns.is_none()
            && known
            && i.unacked == 0
            && i.notsent_bytes.unwrap_or(0) == 0
        {
            s.finished_ns = Some(t_ns);
        }
    }
}

pub fn run(cfg: SendConfig) -> Result<(), String> {
    cfg.schedule.check()?;
    let _ = sys::set_timer_slack_ns(1);
    crate::config::pin(&cfg.cpus, "send");
    let duration = cfg.schedule.duration_ns;
    let mut flows = Vec::with_capacity(cfg.flows.len());
    for (i, f) in cfg.flows.iter().enumerate() {
        let dst = SocketAddrV4::new(f.dst, f.port);
        let stream = sys::tcp_socket(&f.cc, f.pacing).map_err(|e| format!("flow {i}: {e}"))?;
        let cc = sys::tcp_congestion(stream.as_raw_fd()).map_err(|e| format!("flow {i}: {e}"))?;
        if cc != f.cc {
            return Err(format!("flow {i}: asked for {} but the socket runs {cc}", f.cc));
        }
        let link = if f.connect_at_start {
            Link::Closed
        } else {
            sys::tcp_connect(&stream, dst).map_err(|e| format!("flow {i}: connect to {dst}: {e}"))?;
            Link::Connecting
        };
        flows.push(Flow {
            stream,
            dst,
            link,
            start_ns: f.start_ns,
            stop_ns: f.stop_ns.unwrap_or(duration).min(duration),
            writing: false,
            shut: false,
            unwritten: f.size_bytes.unwrap_or(u64::MAX),
            is_bbr: cc.starts_with("bbr"),
            series: FlowSeries {
                cc,
                ..FlowSeries::default()
            },
        });
    }
    let before: Vec<usize> = (0..flows.len())
        .filter(|&i| flows[i].link == Link::Connecting)
        .collect();
    let streams: Vec<&TcpStream> = before.iter().map(|&i| &flows[i].stream).collect();
    sys::await_connected(&streams)
        .map_err(|(k, e)| format!("flow {}: connect to {}: {e}", before[k], flows[before[k]].dst))?;
    for &i in &before {
        flows[i].link = Link::Connected;
        flows[i].series.connected_ns = Some(0);
    }
    let clock = Clock::new();
    let mut control = Control::new();
    clock::announce_ready();
    let epoch = wait_for_go(&clock, &mut control)?;
    let marks = cfg.schedule.marks();
    let mut next_mark = 0;
    let mut t_ns: Vec<u64> = Vec::new();
    let (mut cpu_at_window_start, mut window_cpu) = (None, None);
    let data = vec![0x5au8; WRITE_BYTES];
    let mut pollfds: Vec<libc::pollfd> = Vec::with_capacity(flows.len() + 1);
    loop {
        let now = clock.now().saturating_since(epoch).ns();
        while let Some(&(t, mark)) = marks.get(next_mark).filter(|m| m.0 <= now) {
            match mark {
                Mark::Sample => {
                    t_ns.push(t);
                    flows.iter_mut().for_each(|f| f.sample(t));
                }
                Mark::WindowStart => {
                    flows
                        .iter_mut()
                        .for_each(|f| f.series.window_start = f.counters());
                    cpu_at_window_start = SchedStat::of_this_thread();
                }
                Mark::WindowEnd => {
                    flows.iter_mut().for_each(|f| f.series.window_end = f.counters());
                    window_cpu = SchedStat::since(SchedStat::of_this_thread(), cpu_at_window_start);
                }
            }
            next_mark += 1;
        }
        if now >= duration && next_mark == marks.len() {
            break;
        }
        for (i, f) in flows.iter_mut().enumerate() {
            if f.link == Link::Closed && !f.shut && now >= f.start_ns {
                // The application calls connect() at its start: the kernel sends the SYN now.
                if let Err(e) = sys::tcp_connect(&f.stream, f.dst) {
                    return Err(format!("flow {i}: connect to {}: {e}", f.dst));
                }
                f.link = Link::Connecting;
            }
            if !f.writing && !f.shut && f.link == Link::Connected && now >= f.start_ns {
                f.writing = true;
            }
            if f.writing && now >= f.stop_ns {
                f.writing = false;
                f.shut = true;
                let _ = f.stream.shutdown(Shutdown::Write);
            }
        }
        let next = flows
            .iter()
            .flat_map(|f| [f.start_ns, f.stop_ns])
            .filter(|&t| t > now)
            .chain(marks.get(next_mark).map(|m| m.0))
            .chain([duration])
            .min()
            .unwrap_or(duration);
        pollfds.clear();
        pollfds.push(libc::pollfd {
            fd: control.fd(),
            events: libc::POLLIN,
            revents: 0,
        });
        for f in &flows {
            let waits = f.writing || (f.link == Link::Connecting && !f.shut);
            pollfds.push(libc::pollfd {
                fd: if waits { f.stream.as_raw_fd() } else { -1 },
                events: libc::POLLOUT,
                revents: 0,
            });
        }
        sys::poll_many(&mut pollfds, next.saturating_sub(now)).map_err(|e| format!("ppoll: {e}"))?;
        if pollfds[0].revents != 0
            && let Some(Command::Gone) = control.read()?
        {
            return Err("the orchestrator went away; run abandoned".into());
        }
        let now = clock.now().saturating_since(epoch).ns();
        for (f, p) in flows.iter_mut().zip(&pollfds[1..]) {
            if p.revents & (libc::POLLOUT | libc::POLLERR | libc::POLLHUP) == 0 {
                continue;
            }
            if f.link == Link::Connecting {
                // The handshake ended: made (the socket takes data at once), or given up by the kernel.
                match sys::connect_result(f.stream.as_raw_fd()) {
                    Ok(()) => {
                        f.link = Link::Connected;
                        f.series.connected_ns = Some(now);
                        f.writing = now < f.stop_ns;
                    }
                    Err(e) => {
                        f.link = Link::Closed;
                        f.shut = true;
                        f.series.connect_error = Some(e.to_string());
                        continue;
                    }
                }
                if !f.writing {
                    continue;
                }
            }
            for _ in 0..WRITES_PER_WAKEUP {
                let chunk = WRITE_BYTES.min(usize::try_from(f.unwritten).unwrap_or(usize::MAX));
                match f.stream.write(&data[..chunk]) {
                    Ok(k) => {
                        f.unwritten = f.unwritten.saturating_sub(k as u64);
                        if f.unwritten == 0 {
                            f.writing = false;
                            f.shut = true;
                            let _ = f.stream.shutdown(Shutdown::Write);
                            break;
                        }
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                    Err(e) => {
                        eprintln!("ccfair-emu send: {} flow stopped: {e}", f.series.cc);
                        f.writing = false;
                        f.shut = true;
                        break;
                    }
                }
            }
        }
    }
    for f in flows.iter_mut() {
        f.series.total = f.counters();
    }
    #[derive(Serialize)]
    struct Output {
        t_ns: Vec<u64>,
        flows: Vec<FlowSeries>,
        /// This program's CPU time and run-queue wait over the measurement window (see `recv`).
        window_cpu: Option<SchedStat>,
    }
    let output = Output {
        t_ns,
        window_cpu,
        flows: flows.into_iter().map(|f| f.series).collect(),
    };
    clock::write_json(&cfg.out, &output)
}

/// Blocks until `go` arrives on stdin and then until its epoch has come; returns the epoch as a time of
/// `clock`. The orchestrator sends the epoch ahead of time (so every program has read it in time): a program
/// that started its work on reading `go` would run up to that lead early, and a flow starting at 0 would
/// get a head start over the flows started later (epoch-relative times saturate at 0 before the epoch).
pub fn wait_for_go(clock: &Clock, control: &mut Control) -> Result<ccfair_core::Time, String> {
    let mut ready = [false];
    let epoch = loop {
        sys::poll_readable(&[control.fd()], None, &mut ready).map_err(|e| format!("ppoll: {e}"))?;
        match control.read()? {
            Some(Command::Go(at)) => break clock.at(at)?,
            Some(Command::Gone) => return Err("the orchestrator went away before the run started".into()),
            None => {}
        }
    };
    while let Some(wait_ns) = ns_until(clock.now(), epoch) {
        sys::poll_readable(&[control.fd()], Some(wait_ns), &mut ready).map_err(|e| format!("ppoll: {e}"))?;
        if ready[0] && matches!(control.read()?, Some(Command::Gone)) {
            return Err("the orchestrator went away before the run started".into());
        }
    }
    Ok(epoch)
}

/// Nanoseconds from `now` to `epoch`, or None once the epoch has come.
fn ns_until(now: ccfair_core::Time, epoch: ccfair_core::Time) -> Option<u64> {
    let wait_ns = epoch.saturating_since(now).ns();
    (wait_ns > 0).then_some(wait_ns)
}
