//! Every call into the kernel that the standard library does not wrap, in one place: AF_PACKET sockets, socket
//! options (TCP_CONGESTION, TCP_INFO, TCP_CC_INFO, SO_MAX_PACING_RATE, ...), the ethtool ioctl, ppoll, raw
//! ICMP with receive timestamps, process controls (timer slack, parent-death signal, real-time priority) and
//! the clocks.
//!
//! This is the only module allowed `unsafe`: each block is a single libc call whose pointer arguments point
//! to live, correctly sized local buffers, and whose result is checked. Everything returned is safe Rust
//! (owned descriptors close themselves). Sources: man pages packet(7), socket(7), tcp(7), ppoll(2),
//! prctl(2), sched_setscheduler(2); `include/uapi/linux/ethtool.h` for the legacy offload commands.
#![allow(unsafe_code)]

use std::ffi::CString;
use std::io;
use std::net::{Ipv4Addr, SocketAddrV4, TcpStream};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

fn check(ret: libc::c_int) -> io::Result<libc::c_int> {
    if ret < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(ret)
    }
}

fn check_size(ret: libc::ssize_t) -> io::Result<usize> {
    if ret < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(ret as usize)
    }
}

/// CLOCK_MONOTONIC in nanoseconds: the one clock every ccfair process of a run shares (namespaces share it).
#[inline]
pub fn monotonic_ns() -> u64 {
    clock_ns(libc::CLOCK_MONOTONIC)
}

/// CLOCK_REALTIME in nanoseconds: the clock of the kernel's socket receive timestamps (SO_TIMESTAMPNS).
#[inline]
pub fn realtime_ns() -> u64 {
    clock_ns(libc::CLOCK_REALTIME)
}

#[inline]
fn clock_ns(clock: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec.
    unsafe { libc::clock_gettime(clock, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Sets this thread's timer slack (the kernel's default of 50 µs would delay every timed wakeup by that much).
pub fn set_timer_slack_ns(ns: u64) -> io::Result<()> {
    // SAFETY: prctl with integer arguments only.
    check(unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, ns as libc::c_ulong, 0, 0, 0) }).map(|_| ())
}

/// Asks the kernel to send `signal` to this process when its parent dies (the run's teardown guard for
/// SIGKILLed orchestrators).
pub fn set_parent_death_signal(signal: libc::c_int) -> io::Result<()> {
    // SAFETY: prctl with integer arguments only.
    check(unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, signal as libc::c_ulong, 0, 0, 0) }).map(|_| ())
}

pub fn parent_pid() -> i32 {
    // SAFETY: no arguments.
    unsafe { libc::getppid() }
}

/// SCHED_FIFO at `priority` for this process (needs CAP_SYS_NICE; the caller treats failure as a warning).
pub fn set_realtime(priority: i32) -> io::Result<()> {
    let param = libc::sched_param {
        sched_priority: priority,
    };
    // SAFETY: `param` is a valid sched_param; pid 0 is this process.
    check(unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &param) }).map(|_| ())
}

/// Restricts this process to the given CPUs.
pub fn set_affinity(cpus: &[usize]) -> io::Result<()> {
    // SAFETY: an all-zero cpu_set_t is the empty set; CPU_SET only writes inside it.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    for &c in cpus {
        // SAFETY: `set` is a valid cpu_set_t; CPU_SET ignores CPUs beyond its size.
        unsafe { libc::CPU_SET(c, &mut set) };
    }
    // SAFETY: `set` is a valid cpu_set_t of the given size; pid 0 is this process.
    check(unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) }).map(|_| ())
}

fn setsockopt_raw<T>(fd: RawFd, level: libc::c_int, name: libc::c_int, value: &T) -> io::Result<()> {
    // SAFETY: `value` points to a live T of the given size.
    check(unsafe {
        libc::setsockopt(
            fd,
            level,
            name,
            value as *const T as *const libc::c_void,
            std::mem::size_of::<T>() as libc::socklen_t,
        )
    })
    .map(|_| ())
}

fn getsockopt_bytes(fd: RawFd, level: libc::c_int, name: libc::c_int, buf: &mut [u8]) -> io::Result<usize> {
    let mut len = buf.len() as libc::socklen_t;
    // SAFETY: `buf` is writable for `len` bytes and `len` is a valid socklen_t.
    check(unsafe { libc::getsockopt(fd, level, name, buf.as_mut_ptr() as *mut libc::c_void, &mut len) })?;
    Ok(len as usize)
}

pub fn set_int_option(fd: RawFd, level: libc::c_int, name: libc::c_int, value: i32) -> io::Result<()> {
    setsockopt_raw(fd, level, name, &(value as libc::c_int))
}

/// The interface index of `name` in this network namespace.
pub fn if_index(name: &str) -> io::Result<u32> {
    let c = CString::new(name).map_err(|_| io::Error::other("interface name contains NUL"))?;
    // SAFETY: `c` is a valid NUL-terminated string.
    let idx = unsafe { libc::if_nametoindex(c.as_ptr()) };
    if idx == 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(idx)
    }
}

/// An AF_PACKET raw socket bound to one interface: whole Ethernet frames in and out; with `vnet`, each frame
/// comes with the 10-byte `virtio_net_hdr` that says whether it is a GSO burst or carries a partial
/// checksum (`PACKET_VNET_HDR`), and goes out with an empty one.
pub struct PacketSocket {
    fd: OwnedFd,
    vnet: bool,
}

/// `PACKET_VNET_HDR` (include/uapi/linux/if_packet.h).
const PACKET_VNET_HDR: libc::c_int = 15;
/// The header a `vnet` socket sends before every frame: no GSO, checksum complete.
const EMPTY_VNET_HDR: [u8; crate::gso::VNET_HDR_LEN] = [0; crate::gso::VNET_HDR_LEN];

/// Kernel counters of a packet socket since the last read (PACKET_STATISTICS resets them).
#[derive(Clone, Copy, Debug, Default)]
pub struct PacketStats {
    pub packets: u64,
    pub drops: u64,
}

impl PacketSocket {
    /// Opens a non-blocking socket on `ifname` that sees every frame arriving there but none of its own
    /// transmissions (PACKET_IGNORE_OUTGOING), sends past the device's qdisc (PACKET_QDISC_BYPASS), and has
    /// `buffer_bytes` of receive and send buffer (SO_*BUFFORCE, root only).
    pub fn open(ifname: &str, buffer_bytes: usize, vnet: bool) -> io::Result<PacketSocket> {
        let index =
            if_index(ifname).map_err(|e| io::Error::new(e.kind(), format!("interface {ifname}: {e}")))?;
        let proto = (libc::ETH_P_ALL as u16).to_be();
        // SAFETY: plain socket(2) call.
        let raw = check(unsafe {
            libc::socket(
                libc::AF_PACKET,
                libc::SOCK_RAW | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC,
                proto as i32,
            )
        })?;
        // SAFETY: `raw` is a fresh descriptor we own.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        let s = fd.as_raw_fd();
        set_int_option(s, libc::SOL_PACKET, libc::PACKET_IGNORE_OUTGOING, 1)?;
        set_int_option(s, libc::SOL_SOCKET, libc::SO_RCVBUFFORCE, buffer_bytes as i32)?;
        set_int_option(s, libc::SOL_SOCKET, libc::SO_SNDBUFFORCE, buffer_bytes as i32)?;
        set_int_option(s, libc::SOL_PACKET, libc::PACKET_QDISC_BYPASS, 1)?;
        // Each frame's arrival time, stamped by the kernel as the veth hands it on (`netif_rx`), so the
        // emulator can tell how long a frame waited before it was read.
        set_int_option(s, libc::SOL_SOCKET, libc::SO_TIMESTAMPNS, 1)?;
        if vnet {
            set_int_option(s, libc::SOL_PACKET, PACKET_VNET_HDR, 1)?;
        }
        // SAFETY: an all-zero sockaddr_ll is valid; the fields we need are set below.
        let mut addr: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
        addr.sll_family = libc::AF_PACKET as u16;
        addr.sll_protocol = proto;
        addr.sll_ifindex = index as i32;
        // SAFETY: `addr` is a valid sockaddr_ll of the given size.
        check(unsafe {
            libc::bind(
                s,
                &addr as *const libc::sockaddr_ll as *const libc::sockaddr,
                std::mem::size_of::<libc::sockaddr_ll>() as libc::socklen_t,
            )
        })?;
        let sock = PacketSocket { fd, vnet };
        sock.stats()?; // start counting from here
        Ok(sock)
    }

    pub fn raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }

    /// The next frame into `buf`: `Ok(Some((len, stamp)))` with the frame's full length (longer than `buf`
    /// when it did not fit, MSG_TRUNC, so the caller can count and drop it) and its kernel arrival time
    /// (CLOCK_REALTIME ns), `Ok(None)` when none is waiting.
    #[inline]
    pub fn recv(&self, buf: &mut [u8]) -> io::Result<Option<(usize, Option<u64>)>> {
        let mut iov = [libc::iovec {
            iov_base: buf.as_mut_ptr() as *mut libc::c_void,
            iov_len: buf.len(),
        }];
        self.recv_iov(&mut iov)
    }

    /// The next frame of a `vnet` socket: its header into `hdr`, the frame into `buf`; `Ok(Some((len,
    /// stamp)))` with the frame's full length (longer than `buf` when it did not fit) and its kernel arrival
    /// time, `Ok(None)` when none is waiting.
    #[inline]
    pub fn recv_vnet(
        &self,
        hdr: &mut [u8; crate::gso::VNET_HDR_LEN],
        buf: &mut [u8],
    ) -> io::Result<Option<(usize, Option<u64>)>> {
        debug_assert!(self.vnet);
        let mut iov = [
            libc::iovec {
                iov_base: hdr.as_mut_ptr() as *mut libc::c_void,
                iov_len: hdr.len(),
            },
            libc::iovec {
                iov_base: buf.as_mut_ptr() as *mut libc::c_void,
                iov_len: buf.len(),
            },
        ];
        let hdr_len = hdr.len();
        self.recv_iov(&mut iov)
            .map(|got| got.map(|(n, stamp)| (n.saturating_sub(hdr_len), stamp)))
    }

    /// One `recvmsg` into `iov` with room for the arrival stamp: the bytes the frame had, and its stamp.
    #[inline]
    fn recv_iov(&self, iov: &mut [libc::iovec]) -> io::Result<Option<(usize, Option<u64>)>> {
        let mut control: StampControl = [0; 8];
        // SAFETY: an all-zero msghdr is valid (no name); its iovecs and its control buffer point to live,
        // writable buffers of the lengths given.
        let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
        msg.msg_iov = iov.as_mut_ptr();
        msg.msg_iovlen = iov.len() as _;
        msg.msg_control = control.as_mut_ptr() as *mut libc::c_void;
        msg.msg_controllen = std::mem::size_of_val(&control) as _;
        // SAFETY: `msg` is a valid msghdr as above.
        let n = unsafe {
            libc::recvmsg(
                self.fd.as_raw_fd(),
                &mut msg,
                libc::MSG_DONTWAIT | libc::MSG_TRUNC,
            )
        };
        match check_size(n) {
            Ok(n) => Ok(Some((n, rx_stamp_ns(&msg)))),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Sends one whole frame (after an empty header on a `vnet` socket).
    #[inline]
    pub fn send(&self, frame: &[u8]) -> io::Result<()> {
        let hdr: &[u8] = if self.vnet { &EMPTY_VNET_HDR } else { &[] };
        let iov = [
            libc::iovec {
                iov_base: hdr.as_ptr() as *mut libc::c_void,
                iov_len: hdr.len(),
            },
            libc::iovec {
                iov_base: frame.as_ptr() as *mut libc::c_void,
                iov_len: frame.len(),
            },
        ];
        // SAFETY: an all-zero msghdr is valid; its iovecs point to live buffers of the lengths given, which
        // the kernel only reads.
        let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
        msg.msg_iov = iov.as_ptr() as *mut libc::iovec;
        msg.msg_iovlen = iov.len() as _;
        // SAFETY: `msg` is a valid msghdr as above.
        let n = unsafe { libc::sendmsg(self.fd.as_raw_fd(), &msg, libc::MSG_DONTWAIT) };
        check_size(n).map(|_| ())
    }

    /// Frames received and frames the kernel dropped because the receive buffer was full, since the last call.
    pub fn stats(&self) -> io::Result<PacketStats> {
        let mut buf = [0u8; 8];
        getsockopt_bytes(
            self.fd.as_raw_fd(),
            libc::SOL_PACKET,
            libc::PACKET_STATISTICS,
            &mut buf,
        )?;
        Ok(PacketStats {
            packets: u32::from_ne_bytes(buf[0..4].try_into().expect("4 bytes")) as u64,
            drops: u32::from_ne_bytes(buf[4..8].try_into().expect("4 bytes")) as u64,
        })
    }
}

/// Waits until one of `fds` is readable or `timeout_ns` passes (None: forever). Returns the readable flags
/// (including hang-up and error, which a reader then sees as EOF or an error).
pub fn poll_readable(fds: &[RawFd], timeout_ns: Option<u64>, ready: &mut [bool]) -> io::Result<usize> {
    debug_assert!(fds.len() <= 8 && ready.len() >= fds.len());
    let mut pfds = [libc::pollfd {
        fd: -1,
        events: 0,
        revents: 0,
    }; 8];
    for (p, &fd) in pfds.iter_mut().zip(fds) {
        p.fd = fd;
        p.events = libc::POLLIN;
    }
    let ts = timeout_ns.map(|ns| libc::timespec {
        tv_sec: (ns / 1_000_000_000) as libc::time_t,
        tv_nsec: (ns % 1_000_000_000) as libc::c_long,
    });
    let tsp = ts
        .as_ref()
        .map_or(std::ptr::null(), |t| t as *const libc::timespec);
    // SAFETY: `pfds` holds `fds.len()` valid entries; `tsp` is null or points to a live timespec.
    let n = unsafe {
        libc::ppoll(
            pfds.as_mut_ptr(),
            fds.len() as libc::nfds_t,
            tsp,
            std::ptr::null(),
        )
    };
    let n = match check(n) {
        Ok(n) => n as usize,
        Err(e) if e.kind() == io::ErrorKind::Interrupted => 0,
        Err(e) => return Err(e),
    };
    for (r, p) in ready.iter_mut().zip(&pfds[..fds.len()]) {
        *r = p.revents & (libc::POLLIN | libc::POLLHUP | libc::POLLERR) != 0;
    }
    Ok(n)
}

/// Waits for any of `fds` (with their own `events`); the revents land in `fds`. For the traffic programs.
pub fn poll_many(fds: &mut [libc::pollfd], timeout_ns: u64) -> io::Result<usize> {
    let ts = libc::timespec {
        tv_sec: (timeout_ns / 1_000_000_000) as libc::time_t,
        tv_nsec: (timeout_ns % 1_000_000_000) as libc::c_long,
    };
    // SAFETY: `fds` is a valid slice of pollfd; `ts` is a live timespec.
    let n = unsafe { libc::ppoll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, &ts, std::ptr::null()) };
    match check(n) {
        Ok(n) => Ok(n as usize),
        Err(e) if e.kind() == io::ErrorKind::Interrupted => Ok(0),
        Err(e) => Err(e),
    }
}

/// A non-blocking TCP socket with its congestion control (and optionally internal pacing) set, not yet
/// connected ([`tcp_connect`] starts its connection), handed over as a std stream.
pub fn tcp_socket(cc: &str, pacing: bool) -> io::Result<TcpStream> {
    // SAFETY: plain socket(2) call.
    let raw = check(unsafe {
        libc::socket(
            libc::AF_INET,
            libc::SOCK_STREAM | libc::SOCK_CLOEXEC | libc::SOCK_NONBLOCK,
            0,
        )
    })?;
    // SAFETY: `raw` is a fresh descriptor we own.
    let fd = unsafe { OwnedFd::from_raw_fd(raw) };
    let s = fd.as_raw_fd();
    let name = cc.as_bytes();
    // SAFETY: `name` is readable for its length.
    check(unsafe {
        libc::setsockopt(
            s,
            libc::IPPROTO_TCP,
            libc::TCP_CONGESTION,
            name.as_ptr() as *const libc::c_void,
            name.len() as libc::socklen_t,
        )
    })
    .map_err(|e| io::Error::new(e.kind(), format!("TCP_CONGESTION {cc}: {e}")))?;
    if pacing {
        // Any SO_MAX_PACING_RATE below "unlimited" switches on the kernel's internal pacing
        // (sk_pacing_status = SK_PACING_NEEDED, net/core/sock.c); the cap itself is never reached.
        setsockopt_raw(s, libc::SOL_SOCKET, libc::SO_MAX_PACING_RATE, &(u64::MAX - 1))?;
    }
    Ok(TcpStream::from(fd))
}

/// Starts the connection of a [`tcp_socket`] to `dst` without waiting: the kernel sends the SYN now and
/// completes the handshake on its own (POLLOUT, then `SO_ERROR`, tell when and how: [`connect_result`]).
pub fn tcp_connect(stream: &TcpStream, dst: SocketAddrV4) -> io::Result<()> {
    let addr = libc::sockaddr_in {
        sin_family: libc::AF_INET as libc::sa_family_t,
        sin_port: dst.port().to_be(),
        sin_addr: libc::in_addr {
            s_addr: u32::from(*dst.ip()).to_be(),
        },
        sin_zero: [0; 8],
    };
    // SAFETY: `addr` is a valid sockaddr_in of the given size.
    let started = check(unsafe {
        libc::connect(
            stream.as_raw_fd(),
            &addr as *const libc::sockaddr_in as *const libc::sockaddr,
            std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t,
        )
    });
    match started {
        Ok(_) => Ok(()),
        Err(e) if e.raw_os_error() == Some(libc::EINPROGRESS) => Ok(()),
        Err(e) => Err(e),
    }
}

/// How a connection [`tcp_connect`] started ended, once its socket polled writable (`SO_ERROR`).
pub fn connect_result(fd: RawFd) -> io::Result<()> {
    let mut err = [0u8; 4];
    getsockopt_bytes(fd, libc::SOL_SOCKET, libc::SO_ERROR, &mut err)?;
    match i32::from_ne_bytes(err) {
        0 => Ok(()),
        code => Err(io::Error::from_raw_os_error(code)),
    }
}

/// Waits until every connection [`tcp_connect`] began has completed (with the kernel's SYN retries, as a
/// blocking connect would); the first that failed is an error with its index.
pub fn await_connected(streams: &[&TcpStream]) -> Result<(), (usize, io::Error)> {
    let mut pending: Vec<usize> = (0..streams.len()).collect();
    let mut pfds: Vec<libc::pollfd> = Vec::with_capacity(streams.len());
    while !pending.is_empty() {
        pfds.clear();
        pfds.extend(pending.iter().map(|&i| libc::pollfd {
            fd: streams[i].as_raw_fd(),
            events: libc::POLLOUT,
            revents: 0,
        }));
        poll_many(&mut pfds, 1_000_000_000).map_err(|e| (pending[0], e))?;
        let mut still = Vec::with_capacity(pending.len());
        for (&i, p) in pending.iter().zip(&pfds) {
            if p.revents == 0 {
                still.push(i);
                continue;
            }
            connect_result(p.fd).map_err(|e| (i, e))?;
        }
        pending = still;
    }
    Ok(())
}

/// The raw `struct tcp_info` bytes of a socket and how many the kernel filled.
pub fn tcp_info(fd: RawFd, buf: &mut [u8; 256]) -> io::Result<usize> {
    getsockopt_bytes(fd, libc::IPPROTO_TCP, libc::TCP_INFO, buf)
}

/// The congestion control's own `TCP_CC_INFO` bytes (BBR: `struct tcp_bbr_info`; 0 bytes for Cubic/Reno).
pub fn tcp_cc_info(fd: RawFd, buf: &mut [u8; 64]) -> io::Result<usize> {
    getsockopt_bytes(fd, libc::IPPROTO_TCP, libc::TCP_CC_INFO, buf)
}

/// The congestion control a socket actually runs.
pub fn tcp_congestion(fd: RawFd) -> io::Result<String> {
    let mut buf = [0u8; 16];
    let n = getsockopt_bytes(fd, libc::IPPROTO_TCP, libc::TCP_CONGESTION, &mut buf)?;
    let end = buf[..n].iter().position(|&b| b == 0).unwrap_or(n);
    Ok(String::from_utf8_lossy(&buf[..end]).into_owned())
}

// Legacy ethtool commands (include/uapi/linux/ethtool.h); still served by every kernel through the features
// framework, and they need no netlink family.
pub const ETHTOOL_GRXCSUM: u32 = 0x14;
pub const ETHTOOL_SRXCSUM: u32 = 0x15;
pub const ETHTOOL_GTXCSUM: u32 = 0x16;
pub const ETHTOOL_STXCSUM: u32 = 0x17;
pub const ETHTOOL_GSG: u32 = 0x18;
pub const ETHTOOL_SSG: u32 = 0x19;
pub const ETHTOOL_GTSO: u32 = 0x1e;
pub const ETHTOOL_STSO: u32 = 0x1f;
pub const ETHTOOL_GGSO: u32 = 0x23;
pub const ETHTOOL_SGSO: u32 = 0x24;
pub const ETHTOOL_GGRO: u32 = 0x2b;
pub const ETHTOOL_SGRO: u32 = 0x2c;

#[repr(C)]
struct EthtoolValue {
    cmd: u32,
    data: u32,
}

#[repr(C)]
struct IfreqData {
    name: [libc::c_char; libc::IFNAMSIZ],
    data: *mut libc::c_void,
    _pad: [u8; 16],
}

/// One legacy ethtool get/set on `ifname`: returns the value the kernel reports (for a set, `value` echoed).
pub fn ethtool(ifname: &str, cmd: u32, value: u32) -> io::Result<u32> {
    if ifname.len() >= libc::IFNAMSIZ {
        return Err(io::Error::other(format!("interface name too long: {ifname}")));
    }
    // SAFETY: plain socket(2) call; any socket serves as an ioctl handle.
    let raw = check(unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) })?;
    // SAFETY: `raw` is a fresh descriptor we own.
    let fd = unsafe { OwnedFd::from_raw_fd(raw) };
    let mut ev = EthtoolValue { cmd, data: value };
    let mut ifr = IfreqData {
        name: [0; libc::IFNAMSIZ],
        data: &mut ev as *mut EthtoolValue as *mut libc::c_void,
        _pad: [0; 16],
    };
    for (d, s) in ifr.name.iter_mut().zip(ifname.bytes()) {
        *d = s as libc::c_char;
    }
    // SAFETY: `ifr` is a valid ifreq whose data pointer points to a live ethtool_value.
    check(unsafe { libc::ioctl(fd.as_raw_fd(), libc::SIOCETHTOOL, &mut ifr as *mut IfreqData) })?;
    Ok(ev.data)
}

/// A raw ICMP socket (root only) for echo requests.
pub fn icmp_socket() -> io::Result<OwnedFd> {
    // SAFETY: plain socket(2) call.
    let raw = check(unsafe {
        libc::socket(
            libc::AF_INET,
            libc::SOCK_RAW | libc::SOCK_CLOEXEC,
            libc::IPPROTO_ICMP,
        )
    })?;
    // SAFETY: `raw` is a fresh descriptor we own.
    Ok(unsafe { OwnedFd::from_raw_fd(raw) })
}

pub fn send_to(fd: RawFd, data: &[u8], dst: Ipv4Addr) -> io::Result<()> {
    let addr = libc::sockaddr_in {
        sin_family: libc::AF_INET as libc::sa_family_t,
        sin_port: 0,
        sin_addr: libc::in_addr {
            s_addr: u32::from(dst).to_be(),
        },
        sin_zero: [0; 8],
    };
    // SAFETY: `data` is readable; `addr` is a valid sockaddr_in.
    let n = unsafe {
        libc::sendto(
            fd,
            data.as_ptr() as *const libc::c_void,
            data.len(),
            0,
            &addr as *const libc::sockaddr_in as *const libc::sockaddr,
            std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t,
        )
    };
    check_size(n).map(|_| ())
}

/// Receives one datagram without waiting, with the kernel's receive timestamp (CLOCK_REALTIME ns) when
/// SO_TIMESTAMPNS is on: the time the packet reached the socket, not the time this program woke up to read it.
pub fn recv_stamped(fd: RawFd, buf: &mut [u8]) -> io::Result<Option<(usize, Option<u64>)>> {
    let mut iov = libc::iovec {
        iov_base: buf.as_mut_ptr() as *mut libc::c_void,
        iov_len: buf.len(),
    };
    let mut control: StampControl = [0; 8];
    // SAFETY: an all-zero msghdr is valid; its one iovec and its control buffer are live, writable buffers
    // of the lengths given.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.as_mut_ptr() as *mut libc::c_void;
    msg.msg_controllen = std::mem::size_of_val(&control) as _;
    // SAFETY: `msg` is a valid msghdr as above.
    let n = match check_size(unsafe { libc::recvmsg(fd, &mut msg, libc::MSG_DONTWAIT) }) {
        Ok(n) => n,
        Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(None),
        Err(e) => return Err(e),
    };
    Ok(Some((n, rx_stamp_ns(&msg))))
}

/// Room for the one control message SO_TIMESTAMPNS adds (a timespec), aligned as cmsghdr requires.
type StampControl = [u64; 8];

/// The SCM_TIMESTAMPNS receive time (CLOCK_REALTIME ns) in a message `recvmsg` filled, if it carries one.
fn rx_stamp_ns(msg: &libc::msghdr) -> Option<u64> {
    let mut stamp = None;
    // SAFETY: the CMSG macros walk the control buffer the kernel filled, bounded by `msg.msg_controllen`;
    // an SCM_TIMESTAMPNS message carries one timespec, read unaligned from its data.
    unsafe {
        let mut c = libc::CMSG_FIRSTHDR(msg);
        while !c.is_null() {
            if (*c).cmsg_level == libc::SOL_SOCKET && (*c).cmsg_type == libc::SCM_TIMESTAMPNS {
                let ts = std::ptr::read_unaligned(libc::CMSG_DATA(c) as *const libc::timespec);
                stamp = Some(ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64);
            }
            c = libc::CMSG_NXTHDR(msg, c);
        }
    }
    stamp
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::UdpSocket;

    #[test]
    fn a_received_datagram_carries_the_kernels_arrival_stamp() {
        let rx = UdpSocket::bind("127.0.0.1:0").unwrap();
        let tx = UdpSocket::bind("127.0.0.1:0").unwrap();
        let fd = rx.as_raw_fd();
        let mut buf = [0u8; 64];
        // Nothing waiting: no frame, no error.
        assert!(recv_stamped(fd, &mut buf).unwrap().is_none());
        set_int_option(fd, libc::SOL_SOCKET, libc::SO_TIMESTAMPNS, 1).unwrap();
        let before = realtime_ns();
        tx.send_to(b"stamp", rx.local_addr().unwrap()).unwrap();
        let mut got = None;
        for _ in 0..1000 {
            got = recv_stamped(fd, &mut buf).unwrap();
            if got.is_some() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        let after = realtime_ns();
        let (n, stamp) = got.expect("the datagram arrives");
        assert_eq!(&buf[..n], b"stamp");
        let stamp = stamp.expect("SO_TIMESTAMPNS is on");
        assert!(
            before <= stamp && stamp <= after,
            "{before} <= {stamp} <= {after}"
        );
    }
}
