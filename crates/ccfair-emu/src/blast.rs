//! `ccfair-emu blast CONFIG.json`: a constant-rate source of full-size frames for measuring the forwarder
//! alone (`ccfair doctor`). From the epoch it sends, on an AF_PACKET socket, Ethernet/IPv4/TCP frames of
//! `ip_len` bytes that the emulator counts as flow 0's data (destination port `port_base`), paced by ideal
//! send times from cumulative bytes at `rate_bps` (bursting to catch up when late). Their destination MAC is
//! nobody's, so the receiver's kernel drops them at once: no endpoint TCP work limits the measurement. It runs
//! under SCHED_FIFO (below the emulator) so the offered load does not depend on the host's load. Writes
//! `{"frames": n, "errors": n}`.

use serde::{Deserialize, Serialize};

use crate::clock::{self, Clock, Control};
use crate::config::Schedule;
use crate::frame::internet_checksum;
use crate::send::wait_for_go;
use crate::sys::{self, PacketSocket};

/// Frames sent at most in one catch-up burst.
const MAX_BURST: u64 = 32;

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BlastConfig {
    pub iface: String,
    pub src_mac: [u8; 6],
    pub dst_mac: [u8; 6],
    pub src_ip: std::net::Ipv4Addr,
    pub dst_ip: std::net::Ipv4Addr,
    pub port_base: u16,
    pub rate_bps: u64,
    pub ip_len: u16,
    #[serde(default)]
    pub cpus: Vec<usize>,
    #[serde(flatten)]
    pub schedule: Schedule,
    pub out: String,
}

/// The frame: Ethernet, IPv4 (checksummed), TCP header with ACK set, zero payload bytes.
fn frame(cfg: &BlastConfig) -> Vec<u8> {
    let ip_len = cfg.ip_len as usize;
    let mut f = vec![0u8; 14 + ip_len];
    f[0..6].copy_from_slice(&cfg.dst_mac);
    f[6..12].copy_from_slice(&cfg.src_mac);
    f[12..14].copy_from_slice(&0x0800u16.to_be_bytes());
    let ip = &mut f[14..];
    ip[0] = 0x45;
    ip[2..4].copy_from_slice(&cfg.ip_len.to_be_bytes());
    ip[8] = 64;
    ip[9] = 6;
    ip[12..16].copy_from_slice(&cfg.src_ip.octets());
    ip[16..20].copy_from_slice(&cfg.dst_ip.octets());
    let c = internet_checksum(&ip[..20]);
    ip[10..12].copy_from_slice(&c.to_be_bytes());
    let tcp = &mut ip[20..];
    tcp[0..2].copy_from_slice(&40000u16.to_be_bytes());
    tcp[2..4].copy_from_slice(&cfg.port_base.to_be_bytes());
    tcp[12] = 5 << 4;
    tcp[13] = 0x10;
    f
}

pub fn run(cfg: BlastConfig) -> Result<(), String> {
    cfg.schedule.check()?;
    if cfg.rate_bps == 0 || cfg.ip_len < 40 {
        return Err("rate_bps must be positive and ip_len at least 40".into());
    }
    let _ = sys::set_timer_slack_ns(1);
    crate::config::pin(&cfg.cpus, "blast");
    // Below the emulator's priority, above everything else: the offered load must not depend on how busy
    // the host is.
    if let Err(e) = sys::set_realtime(40) {
        eprintln!("ccfair-emu blast: warning: SCHED_FIFO not available ({e})");
    }
    let sock = PacketSocket::open(&cfg.iface, 4 << 20, false).map_err(|e| format!("AF_PACKET: {e}"))?;
    let mut f = frame(&cfg);
    let clock = Clock::new();
    let mut control = Control::new();
    clock::announce_ready();
    let epoch = wait_for_go(&clock, &mut control)?;
    let (mut frames, mut errors) = (0u64, 0u64);
    let bits_per_frame = cfg.ip_len as u128 * 8;
    loop {
        let now = clock.now().saturating_since(epoch).ns();
        if now >= cfg.schedule.duration_ns {
            break;
        }
        // Frames due by now: ideal send time of frame k is k * bits / rate.
        let due = (now as u128 * cfg.rate_bps as u128 / 1_000_000_000 / bits_per_frame) as u64 + 1;
        let burst = due.saturating_sub(frames).min(MAX_BURST);
        for _ in 0..burst {
            // A changing sequence number, so the emulator's RTT bookkeeping sees new data.
            let seq = (frames as u32).wrapping_mul(cfg.ip_len as u32 - 40);
            f[14 + 24..14 + 28].copy_from_slice(&seq.to_be_bytes());
            match sock.send(&f) {
                Ok(()) => frames += 1,
                Err(_) => {
                    errors += 1;
                    frames += 1;
                }
            }
        }
        if burst == 0 {
            let next =
                ((frames as u128 * bits_per_frame * 1_000_000_000).div_ceil(cfg.rate_bps as u128)) as u64;
            let wait = next.saturating_sub(clock.now().saturating_since(epoch).ns());
            if wait > 0 {
                let mut ready = [false];
                sys::poll_readable(&[control.fd()], Some(wait), &mut ready).map_err(|e| e.to_string())?;
                if ready[0] && matches!(control.read()?, Some(clock::Command::Gone)) {
                    return Err("the orchestrator went away; run abandoned".into());
                }
            }
        }
    }
    #[derive(Serialize)]
    struct Output {
        frames: u64,
        errors: u64,
    }
    clock::write_json(&cfg.out, &Output { frames, errors })
}
