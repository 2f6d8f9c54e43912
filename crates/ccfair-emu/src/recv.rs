//! `ccfair-emu recv`: the receiver. Listens on one port per flow, accepts the flow's connection, reads
//! everything it is sent and counts the bytes (in-order payload, what the application receives: the
//! simulator's `delivered_bytes`). At each interval boundary and at the window's edges it records every flow's
//! cumulative count. No receive-buffer setting: the kernel's autotuning runs, with the namespace's
//! `tcp_rmem` maximum raised by the orchestrator. A finite flow (its size given) completes when its last byte
//! is read: the time of that read is its completion.

use std::io::{ErrorKind, Read};
use std::net::{TcpListener, TcpStream};
use std::os::fd::AsRawFd;

use serde::Serialize;

use crate::clock::{self, Clock, Command, Control};
use crate::config::{Mark, RecvConfig};
use crate::schedstat::SchedStat;
use crate::sys;

const READ_BYTES: usize = 256 << 10;

#[derive(Serialize)]
struct Output {
    t_ns: Vec<u64>,
    /// Per flow, cumulative bytes received at each interval boundary.
    delivered: Vec<Vec<u64>>,
    window_start: Vec<u64>,
    window_end: Vec<u64>,
    total: Vec<u64>,
    /// Whether each flow's connection arrived.
    connected: Vec<bool>,
    /// When each finite flow's last byte was read (ns after the epoch), if it was.
    completed_ns: Vec<Option<u64>>,
    /// This program's CPU time and run-queue wait over the measurement window (None where the kernel keeps
    /// no scheduler statistics).
    window_cpu: Option<SchedStat>,
}

pub fn run(cfg: RecvConfig) -> Result<(), String> {
    cfg.schedule.check()?;
    let _ = sys::set_timer_slack_ns(1);
    crate::config::pin(&cfg.cpus, "recv");
    let n = cfg.ports.len();
    let listeners = cfg
        .ports
        .iter()
        .map(|&p| {
            let l = TcpListener::bind(("0.0.0.0", p)).map_err(|e| format!("listen on port {p}: {e}"))?;
            l.set_nonblocking(true).map_err(|e| e.to_string())?;
            Ok(l)
        })
        .collect::<Result<Vec<_>, String>>()?;
    let mut conns: Vec<Option<TcpStream>> = (0..n).map(|_| None).collect();
    let mut bytes = vec![0u64; n];
    let mut out = Output {
        t_ns: Vec::new(),
        delivered: vec![Vec::new(); n],
        window_start: vec![0; n],
        window_end: vec![0; n],
        total: vec![0; n],
        connected: vec![false; n],
        completed_ns: vec![None; n],
        window_cpu: None,
    };
    let mut cpu_at_window_start = None;
    let clock = Clock::new();
    let mut control = Control::new();
    clock::announce_ready();
    let mut epoch: Option<ccfair_core::Time> = None;
    let marks = cfg.schedule.marks();
    let mut next_mark = 0;
    let mut buf = vec![0u8; READ_BYTES];
    let mut pollfds: Vec<libc::pollfd> = Vec::with_capacity(2 * n + 1);
    loop {
        let now = epoch.map(|e| clock.now().saturating_since(e).ns());
        if let Some(now) = now {
            while let Some(&(t, mark)) = marks.get(next_mark).filter(|m| m.0 <= now) {
                match mark {
                    Mark::Sample => {
                        out.t_ns.push(t);
                        for (d, &b) in out.delivered.iter_mut().zip(&bytes) {
                            d.push(b);
                        }
                    }
                    Mark::WindowStart => {
                        out.window_start.copy_from_slice(&bytes);
                        cpu_at_window_start = SchedStat::of_this_thread();
                    }
                    Mark::WindowEnd => {
                        out.window_end.copy_from_slice(&bytes);
                        out.window_cpu = SchedStat::since(SchedStat::of_this_thread(), cpu_at_window_start);
                    }
                }
                next_mark += 1;
            }
            if now >= cfg.schedule.duration_ns && next_mark == marks.len() {
                break;
            }
        }
        let timeout = now.map_or(100_000_000, |now| {
            marks
                .get(next_mark)
                .map_or(cfg.schedule.duration_ns, |m| m.0)
                .saturating_sub(now)
        });
        pollfds.clear();
        pollfds.push(libc::pollfd {
            fd: control.fd(),
            events: libc::POLLIN,
            revents: 0,
        });
        for (l, c) in listeners.iter().zip(&conns) {
            pollfds.push(libc::pollfd {
                fd: if c.is_none() { l.as_raw_fd() } else { -1 },
                events: libc::POLLIN,
                revents: 0,
            });
            pollfds.push(libc::pollfd {
                fd: c.as_ref().map_or(-1, |c| c.as_raw_fd()),
                events: libc::POLLIN,
                revents: 0,
            });
        }
        sys::poll_many(&mut pollfds, timeout).map_err(|e| format!("ppoll: {e}"))?;
        if pollfds[0].revents != 0 {
            match control.read()? {
                Some(Command::Go(at)) => epoch = Some(clock.at(at)?),
                Some(Command::Gone) => return Err("the orchestrator went away; run abandoned".into()),
                None => {}
            }
        }
        for i in 0..n {
            if pollfds[1 + 2 * i].revents != 0
                && let Ok((s, _)) = listeners[i].accept()
            {
                s.set_nonblocking(true).map_err(|e| e.to_string())?;
                conns[i] = Some(s);
                out.connected[i] = true;
            }
            if pollfds[2 + 2 * i].revents == 0 {
                continue;
            }
            let Some(c) = conns[i].as_mut() else { continue };
            loop {
                match c.read(&mut buf) {
                    Ok(0) => {
                        conns[i] = None; // the sender finished; keep the count
                        break;
                    }
                    Ok(k) => {
                        bytes[i] += k as u64;
                        let size = cfg.sizes.get(i).copied().unwrap_or(0);
                        if size > 0
                            && bytes[i] >= size
                            && out.completed_ns[i].is_none()
                            && let Some(e) = epoch
                        {
                            out.completed_ns[i] = Some(clock.now().saturating_since(e).ns());
                        }
                    }
                    Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                    Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                    Err(_) => {
                        conns[i] = None;
                        break;
                    }
                }
            }
        }
    }
    out.total.copy_from_slice(&bytes);
    clock::write_json(&cfg.out, &out)
}
