//! `ccfair-emu`: the programs a kernel run starts in its network namespaces (the Python package
//! `ccfair.emu` builds the namespaces, writes the configurations and starts them with `ip netns exec`).
//!
//! - `forward CONFIG.json`: the bottleneck router (router namespace)
//! - `send CONFIG.json`: the bulk senders (sender namespace)
//! - `recv CONFIG.json`: the receiver (receiver namespace)
//! - `blast CONFIG.json`: constant-rate full-size frames, for measuring the forwarder (sender namespace)
//! - `check forward|send|recv CONFIG.json`: what that program derives from a run's configuration, as JSON
//!   (nothing is started; the orchestrator's tests read it)
//! - `ping DST ID COUNT INTERVAL_MS`: ICMP echo along flow ID's path
//! - `prepare [--sysctl K=V]... [--offloads IFACE=LIST]... [--gro-flush IFACE=NS]... [--rps IFACE=HEXMASK]...`:
//!   per-namespace sysctls, offloads, receive interrupt moderation and receive steering
//!
//! `forward`, `send`, `recv` and `blast` print `ready` when set up, start the run on `go <CLOCK_MONOTONIC ns>` from
//! standard input, exit when their standard input closes (the orchestrator died), and die with their parent
//! (PR_SET_PDEATHSIG). Exit codes: 0 done, 2 bad usage or configuration, 1 failure; errors go to stderr.
#![allow(clippy::disallowed_methods)] // this crate measures wall time by design (see clock.rs)

use std::process::ExitCode;

use ccfair_emu::{blast, config, forward, ping, prepare, recv, send, sys};

const USAGE: &str = "usage: ccfair-emu forward|send|recv|blast CONFIG.json | check forward|send|recv CONFIG.json | \
                     ping DST ID COUNT INTERVAL_MS | \
                     prepare [--sysctl K=V]... [--offloads IFACE=LIST]... [--gro-flush IFACE=NS]... \
                     [--rps IFACE=HEXMASK]...";

enum Failure {
    Usage(String),
    Run(String),
}

fn arg<T: std::str::FromStr>(args: &[String], i: usize, what: &str) -> Result<T, Failure> {
    args.get(i)
        .ok_or_else(|| Failure::Usage(format!("missing {what}")))?
        .parse()
        .map_err(|_| Failure::Usage(format!("bad {what}: {}", args[i])))
}

fn main_inner(args: &[String]) -> Result<(), Failure> {
    let cmd = args.first().map(String::as_str).unwrap_or("");
    let run = Failure::Run;
    match cmd {
        "forward" | "send" | "recv" | "blast" => {
            let parent = sys::parent_pid();
            // Die with the orchestrator, even if it is SIGKILLed (and catch a parent that died already).
            sys::set_parent_death_signal(libc::SIGKILL).map_err(|e| run(e.to_string()))?;
            if sys::parent_pid() != parent {
                return Err(run("parent exited before start".into()));
            }
            let path: String = arg(args, 1, "CONFIG.json")?;
            if cmd == "blast" {
                return blast::run(config::load(&path).map_err(Failure::Usage)?).map_err(run);
            }
            let cfg: config::RunConfig = config::load(&path).map_err(Failure::Usage)?;
            match cmd {
                "forward" => forward::run(cfg.forward().map_err(Failure::Usage)?).map_err(run),
                "send" => send::run(cfg.send().map_err(Failure::Usage)?).map_err(run),
                _ => recv::run(cfg.recv().map_err(Failure::Usage)?).map_err(run),
            }
        }
        "check" => {
            let role: String = arg(args, 1, "forward|send|recv")?;
            let path: String = arg(args, 2, "CONFIG.json")?;
            let cfg: config::RunConfig = config::load(&path).map_err(Failure::Usage)?;
            let derived = config::derived(&role, &cfg).map_err(Failure::Usage)?;
            println!("{derived}");
            Ok(())
        }
        "ping" => ping::run(
            arg(args, 1, "DST")?,
            arg(args, 2, "ID")?,
            arg(args, 3, "COUNT")?,
            arg(args, 4, "INTERVAL_MS")?,
        )
        .map_err(run),
        "prepare" => prepare::run(&args[1..]).map_err(run),
        _ => Err(Failure::Usage(USAGE.into())),
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match main_inner(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure::Usage(m)) => {
            eprintln!("ccfair-emu: {m}");
            ExitCode::from(2)
        }
        Err(Failure::Run(m)) => {
            eprintln!("ccfair-emu: {m}");
            ExitCode::from(1)
        }
    }
}
