//! `ccfair-emu ping DST ID COUNT INTERVAL_MS`: ICMP echo through the emulator. The emulator routes an echo
//! whose identifier is `i` along flow i's path (its queue, link and both delay lines), so the RTTs measured
//! are that flow's base RTT on an idle link plus the serialization of one small packet. A reply's time is the
//! kernel's receive timestamp (SO_TIMESTAMPNS, as iputils ping), so the RTT excludes this program's own
//! wake-up after the reply, which on an idle VM reaches a millisecond. Prints `{"rtt_ns": [...], "lost": n}`.

use std::net::Ipv4Addr;
use std::os::fd::AsRawFd;

use crate::frame::internet_checksum;
use crate::sys;

const PAYLOAD: usize = 56;
/// How long to wait for each reply.
const TIMEOUT_NS: u64 = 2_000_000_000;

fn echo(id: u16, seq: u16) -> [u8; 8 + PAYLOAD] {
    let mut m = [0u8; 8 + PAYLOAD];
    m[0] = 8;
    m[4..6].copy_from_slice(&id.to_be_bytes());
    m[6..8].copy_from_slice(&seq.to_be_bytes());
    let c = internet_checksum(&m);
    m[2..4].copy_from_slice(&c.to_be_bytes());
    m
}

pub fn run(dst: Ipv4Addr, id: u16, count: u32, interval_ms: u64) -> Result<(), String> {
    let sock = sys::icmp_socket().map_err(|e| format!("raw ICMP socket: {e}"))?;
    let fd = sock.as_raw_fd();
    sys::set_int_option(fd, libc::SOL_SOCKET, libc::SO_TIMESTAMPNS, 1)
        .map_err(|e| format!("SO_TIMESTAMPNS: {e}"))?;
    let mut rtts = Vec::new();
    let mut lost = 0;
    let mut buf = [0u8; 2048];
    let mut ready = [false];
    for seq in 0..count as u16 {
        // Realtime, the clock of the receive timestamps (the sub-second span of one echo is what counts);
        // the deadline stays on the monotonic clock.
        let sent = sys::realtime_ns();
        sys::send_to(fd, &echo(id, seq), dst).map_err(|e| format!("sendto {dst}: {e}"))?;
        let deadline = sys::monotonic_ns() + TIMEOUT_NS;
        let mut got = false;
        while !got {
            let now = sys::monotonic_ns();
            if now >= deadline {
                break;
            }
            sys::poll_readable(&[fd], Some(deadline - now), &mut ready).map_err(|e| e.to_string())?;
            while let Some((n, stamp)) = sys::recv_stamped(fd, &mut buf).map_err(|e| e.to_string())? {
                let t = stamp.unwrap_or_else(sys::realtime_ns);
                let ihl = ((buf[0] & 0x0f) as usize) * 4;
                let icmp = &buf[ihl.min(n)..n];
                if icmp.len() >= 8
                    && icmp[0] == 0
                    && u16::from_be_bytes([icmp[4], icmp[5]]) == id
                    && u16::from_be_bytes([icmp[6], icmp[7]]) == seq
                {
                    rtts.push(t.saturating_sub(sent));
                    got = true;
                }
            }
        }
        if !got {
            lost += 1;
        }
        std::thread::sleep(std::time::Duration::from_millis(interval_ms));
    }
    println!("{}", serde_json::json!({"rtt_ns": rtts, "lost": lost}));
    Ok(())
}
