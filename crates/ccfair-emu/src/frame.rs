//! Reading and patching Ethernet/IPv4/TCP headers in place, and the emulator's packet handle.
//!
//! Frame accounting (the convention both backends share): a packet costs its **IP total length** on the
//! bottleneck, exactly as in the simulator, where a full segment is the 1500-byte MTU (20 IP + 20 TCP + 12
//! timestamp option bytes + 1448 payload). The 14-byte Ethernet header, FCS, preamble and inter-frame gap are
//! not counted, so "10 Mbps" carries the same number of full segments per second in both backends.
//!
//! Flows are recognised by port: flow `i` is the TCP connection whose server (receiver) port is
//! `port_base + i`, and an ICMP echo whose identifier is `i` follows flow `i`'s path (that is how `ping`
//! measures a flow's RTT). Setting CE rewrites the IPv4 TOS byte and patches the header checksum
//! incrementally (RFC 1624). IPv4 only; VLAN tags and IP options are not expected on the emulated veths.

use ccfair_core::{Ecn, Time};

pub const ETH_HEADER: usize = 14;
pub const ETHERTYPE_IPV4: u16 = 0x0800;
const PROTO_ICMP: u8 = 1;
pub const PROTO_TCP: u8 = 6;
const ICMP_ECHO_REPLY: u8 = 0;
const ICMP_ECHO_REQUEST: u8 = 8;

/// What the emulator needs to know about one frame.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Parsed {
    /// IP total length (what the bottleneck charges); for non-IP frames the frame length minus the header.
    pub ip_len: u32,
    pub ecn: Ecn,
    pub proto: u8,
    pub src_port: u16,
    pub dst_port: u16,
    /// ICMP echo (request or reply) identifier, when the frame is one.
    pub echo_id: Option<u16>,
    pub is_echo_request: bool,
    pub seq: u32,
    pub ack: u32,
    pub payload: u32,
    /// A 5-tuple hash (IPs, ports, protocol), stable per connection.
    pub hash: u32,
    pub is_ipv4: bool,
}

fn be16(b: &[u8], at: usize) -> u16 {
    u16::from_be_bytes([b[at], b[at + 1]])
}

fn be32(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

/// Parses the headers of `frame`; a short or non-IPv4 frame yields `is_ipv4 = false`.
pub fn parse(frame: &[u8]) -> Parsed {
    let mut p = Parsed {
        ip_len: frame.len().saturating_sub(ETH_HEADER) as u32,
        ..Parsed::default()
    };
    if frame.len() < ETH_HEADER + 20 || be16(frame, 12) != ETHERTYPE_IPV4 {
        return p;
    }
    let ip = &frame[ETH_HEADER..];
    let ihl = ((ip[0] & 0x0f) as usize) * 4;
    if ip[0] >> 4 != 4 || ihl < 20 || ip.len() < ihl {
        return p;
    }
    p.is_ipv4 = true;
    p.ip_len = be16(ip, 2) as u32;
    p.ecn = ecn_of(ip[1]);
    p.proto = ip[9];
    let (src, dst) = (be32(ip, 12), be32(ip, 16));
    let l4 = &ip[ihl..];
    match p.proto {
        PROTO_TCP if l4.len() >= 20 => {
            p.src_port = be16(l4, 0);
            p.dst_port = be16(l4, 2);
            p.seq = be32(l4, 4);
            p.ack = be32(l4, 8);
            let doff = ((l4[12] >> 4) as u32) * 4;
            p.payload = p.ip_len.saturating_sub(ihl as u32 + doff);
        }
        PROTO_ICMP if l4.len() >= 8 && (l4[0] == ICMP_ECHO_REQUEST || l4[0] == ICMP_ECHO_REPLY) => {
            p.echo_id = Some(be16(l4, 4));
            p.is_echo_request = l4[0] == ICMP_ECHO_REQUEST;
        }
        _ => {}
    }
    p.hash = mix(
        src,
        dst,
        ((p.src_port as u32) << 16) | p.dst_port as u32,
        p.proto as u32,
    );
    p
}

/// A small integer hash of the 5-tuple (the kernel uses jhash with a random seed; any well-mixed hash that is
/// equal for equal tuples serves a flow-queueing qdisc).
fn mix(a: u32, b: u32, c: u32, d: u32) -> u32 {
    let mut h = (a as u64) << 32 | b as u64;
    h ^= ((c as u64) << 32 | d as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    h as u32
}

fn ecn_of(tos: u8) -> Ecn {
    match tos & 0b11 {
        0b00 => Ecn::NotEct,
        0b01 => Ecn::Ect1,
        0b10 => Ecn::Ect0,
        _ => Ecn::Ce,
    }
}

/// Rewrites the ECN bits of an IPv4 frame and patches the header checksum (RFC 1624, eqn. 3).
pub fn write_ecn(frame: &mut [u8], ecn: Ecn) {
    let ip = &mut frame[ETH_HEADER..];
    let old_word = be16(ip, 0);
    ip[1] = (ip[1] & !0b11) | ecn as u8;
    let new_word = be16(ip, 0);
    let old_sum = be16(ip, 10);
    // HC' = ~(~HC + ~m + m')
    let mut sum = (!old_sum as u32) + (!old_word as u32 & 0xffff) + new_word as u32;
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    let new_sum = !(sum as u16);
    ip[10..12].copy_from_slice(&new_sum.to_be_bytes());
}

/// `sum` plus the big-endian 16-bit words of `bytes` (an odd last byte padded with zero), not yet folded:
/// the running ones' complement sum of RFC 1071, which the caller may continue over more bytes that start
/// at an even offset.
pub fn ones_sum(bytes: &[u8], mut sum: u64) -> u64 {
    let mut words = bytes.chunks_exact(2);
    for w in &mut words {
        sum += u16::from_be_bytes([w[0], w[1]]) as u64;
    }
    if let [last] = words.remainder() {
        sum += (*last as u64) << 8;
    }
    sum
}

/// The ones' complement of a folded ones' complement sum: the checksum field's value.
pub fn fold_checksum(mut sum: u64) -> u16 {
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// The Internet checksum (RFC 1071) of `bytes`: the ones' complement of their ones' complement sum.
pub fn internet_checksum(bytes: &[u8]) -> u16 {
    fold_checksum(ones_sum(bytes, 0))
}

/// Whether the IPv4 header checksum of `frame` is right (a valid header sums to zero).
pub fn ipv4_checksum_ok(frame: &[u8]) -> bool {
    let ip = &frame[ETH_HEADER..];
    let ihl = ((ip[0] & 0x0f) as usize) * 4;
    internet_checksum(&ip[..ihl]) == 0
}

/// A frame held in the buffer pool, as the queue discipline sees it.
#[derive(Clone, Copy, Debug)]
pub struct EmuPacket {
    /// Pool slot holding the frame bytes.
    pub slot: u32,
    /// Frame length in bytes (Ethernet header included).
    pub frame_len: u16,
    pub flow: u32,
    pub ip_len: u32,
    pub enqueue_ts: Time,
    pub ecn: Ecn,
    /// The ECN the frame bytes carry; when `ecn` differs at transmission the bytes are patched.
    pub wire_ecn: Ecn,
    pub hash: u32,
    /// The TCP acknowledgment number (ACK direction: for RTT sampling); 0 otherwise.
    pub ack: u32,
    /// The end of the TCP payload (data direction: for the hosts' turnaround); `None` without payload.
    pub data_end: Option<u32>,
    pub is_tcp: bool,
    /// Packet value stamped by the edge marker of a core-stateless AQM (PPV, VDQ-CSAQM); 0 when none.
    pub packet_value: u32,
}

ccfair_core::impl_packet_meta!(EmuPacket {
    wire_len: |p| p.ip_len,
    enqueue_ts: enqueue_ts,
    ecn: ecn,
    flow_hash: |p| p.hash,
    packet_value: |p| p.packet_value,
});

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// An Ethernet + IPv4 + TCP frame with a correct IP checksum and `payload` bytes of data.
    pub fn tcp_frame(src_port: u16, dst_port: u16, seq: u32, ack: u32, payload: usize, tos: u8) -> Vec<u8> {
        let ip_len = 20 + 32 + payload;
        let mut f = vec![0u8; ETH_HEADER + ip_len];
        f[12..14].copy_from_slice(&ETHERTYPE_IPV4.to_be_bytes());
        let ip = &mut f[ETH_HEADER..];
        ip[0] = 0x45;
        ip[1] = tos;
        ip[2..4].copy_from_slice(&(ip_len as u16).to_be_bytes());
        ip[8] = 64;
        ip[9] = PROTO_TCP;
        ip[12..16].copy_from_slice(&[10, 0, 0, 1]);
        ip[16..20].copy_from_slice(&[10, 0, 0, 2]);
        let c = internet_checksum(&ip[..20]);
        ip[10..12].copy_from_slice(&c.to_be_bytes());
        let tcp = &mut ip[20..];
        tcp[0..2].copy_from_slice(&src_port.to_be_bytes());
        tcp[2..4].copy_from_slice(&dst_port.to_be_bytes());
        tcp[4..8].copy_from_slice(&seq.to_be_bytes());
        tcp[8..12].copy_from_slice(&ack.to_be_bytes());
        tcp[12] = 8 << 4; // 32-byte header (timestamps)
        f
    }

    #[test]
    fn parses_a_full_segment_as_1500_ip_bytes() {
        let f = tcp_frame(40000, 20001, 7, 9, 1448, 0b10);
        let p = parse(&f);
        assert!(p.is_ipv4);
        assert_eq!(p.ip_len, 1500);
        assert_eq!(p.payload, 1448);
        assert_eq!((p.src_port, p.dst_port, p.seq, p.ack), (40000, 20001, 7, 9));
        assert_eq!(p.ecn, Ecn::Ect0);
        let q = parse(&tcp_frame(40001, 20001, 7, 9, 1448, 0));
        assert_ne!(p.hash, q.hash, "different ports, different hash");
    }

    #[test]
    fn ce_rewrite_keeps_the_checksum_valid() {
        for tos in [0b10u8, 0b01, 0xb8 | 0b10] {
            let mut f = tcp_frame(1, 2, 3, 4, 100, tos);
            assert!(ipv4_checksum_ok(&f));
            write_ecn(&mut f, Ecn::Ce);
            assert!(ipv4_checksum_ok(&f), "tos {tos:#x}");
            assert_eq!(parse(&f).ecn, Ecn::Ce);
            assert_eq!(f[ETH_HEADER + 1] & !0b11, tos & !0b11, "DSCP untouched");
        }
    }

    #[test]
    fn non_ip_frames_are_not_ipv4() {
        let mut f = tcp_frame(1, 2, 3, 4, 0, 0);
        f[12..14].copy_from_slice(&0x0806u16.to_be_bytes()); // ARP
        assert!(!parse(&f).is_ipv4);
        assert!(!parse(&f[..20]).is_ipv4);
    }
}
