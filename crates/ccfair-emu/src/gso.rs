//! What the emulator does with the sender's segmentation offload: frames read with the `virtio_net_hdr`
//! that `PACKET_VNET_HDR` puts before each one, GSO frames split into the wire-size packets a NIC would have
//! sent, and partial checksums completed.
//!
//! With TSO/GSO on at the sender's veth, the kernel hands veth whole TSO bursts (one skb of up to 64 KB with
//! `gso_size`, the MSS, and a partial checksum: `CHECKSUM_PARTIAL`), and veth passes them to its peer as they
//! are, so the emulator's packet socket reads them whole. A real NIC would serialize them as MSS-size
//! packets, and the bottleneck must see those. The socket's `virtio_net_hdr` (packet(7), `PACKET_VNET_HDR`;
//! the legacy header, in host byte order) says how: `gso_type` (TCPv4 here; `ECN` flag when the burst
//! carries CWR), `gso_size`, and `NEEDS_CSUM` with `csum_start`/`csum_offset` for a partial checksum.
//!
//! The split follows the kernel's software segmentation (`tcp_gso_segment`, `net/ipv4/tcp_offload.c`, and
//! `inet_gso_segment`, `net/ipv4/af_inet.c`): every segment carries the burst's headers (TCP options
//! included) and `gso_size` bytes of payload (the last one the rest); the IPv4 total length and header
//! checksum are per segment and the IP ID increases by one per segment; the TCP sequence number advances by
//! the payload before it; FIN and PSH stay on the last segment only and CWR on the first only; the TCP
//! checksum is computed anew over each segment (pseudo-header, header, payload). A frame that is not a burst
//! but carries a partial checksum (SYNs, short segments from a sender with checksum offload on) gets its
//! checksum completed where the header says: the field holds the pseudo-header's sum, and the ones'
//! complement of the sum from `csum_start` to the end goes there.
//!
//! Deviations: only TCP over IPv4 is segmented (the kernel backend is IPv4-only); a burst of another type is
//! left for the caller to count as a frame it cannot handle. `SKB_GSO_TCP_FIXEDID` (a constant IP ID) is not
//! signalled through the header, so IDs always increase, as for sockets with DF set.

use crate::frame::{ETH_HEADER, ETHERTYPE_IPV4, PROTO_TCP, fold_checksum, ones_sum};

/// Bytes of the legacy `struct virtio_net_hdr` before every frame of a `PACKET_VNET_HDR` socket.
pub const VNET_HDR_LEN: usize = 10;
/// `VIRTIO_NET_HDR_F_NEEDS_CSUM`: the frame carries a partial checksum.
const F_NEEDS_CSUM: u8 = 1;
const GSO_NONE: u8 = 0;
const GSO_TCPV4: u8 = 1;
/// `VIRTIO_NET_HDR_GSO_ECN`: or-ed into the type when the burst's first segment carries CWR.
const GSO_ECN: u8 = 0x80;
const TCP_FIN: u8 = 0x01;
const TCP_PSH: u8 = 0x08;
const TCP_CWR: u8 = 0x80;

/// The `virtio_net_hdr` of one frame.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct VnetHdr {
    pub flags: u8,
    pub gso_type: u8,
    pub hdr_len: u16,
    pub gso_size: u16,
    pub csum_start: u16,
    pub csum_offset: u16,
}

/// What kind of frame a header announces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Gso {
    /// A single packet.
    None,
    /// A TCP/IPv4 burst of `gso_size`-byte segments.
    TcpV4 { mss: u16 },
    /// A burst of a type the emulator does not segment (TCPv6, UDP).
    Other,
}

impl VnetHdr {
    /// Reads the legacy header, whose fields are in host byte order (packet(7); `vio_le()` is the host's
    /// order for the legacy header).
    pub fn parse(b: &[u8; VNET_HDR_LEN]) -> VnetHdr {
        let u16_at = |at: usize| u16::from_ne_bytes([b[at], b[at + 1]]);
        VnetHdr {
            flags: b[0],
            gso_type: b[1],
            hdr_len: u16_at(2),
            gso_size: u16_at(4),
            csum_start: u16_at(6),
            csum_offset: u16_at(8),
        }
    }

    pub fn needs_csum(&self) -> bool {
        self.flags & F_NEEDS_CSUM != 0
    }

    pub fn gso(&self) -> Gso {
        match self.gso_type & !GSO_ECN {
            GSO_NONE => Gso::None,
            GSO_TCPV4 if self.gso_size > 0 => Gso::TcpV4 { mss: self.gso_size },
            _ => Gso::Other,
        }
    }
}

/// Completes a partial checksum in place (see the module header). False, frame untouched, when the header's
/// offsets fall outside the frame.
pub fn complete_checksum(frame: &mut [u8], csum_start: u16, csum_offset: u16) -> bool {
    let (start, field) = (csum_start as usize, csum_start as usize + csum_offset as usize);
    if field + 2 > frame.len() {
        return false;
    }
    let c = fold_checksum(ones_sum(&frame[start..], 0));
    frame[field..field + 2].copy_from_slice(&c.to_be_bytes());
    true
}

/// The TCP checksum of the IPv4 packet at `ip` whose header is `ihl` bytes: the segment (header and payload)
/// summed with the pseudo-header (addresses, protocol, TCP length), its own checksum field read as zero.
fn tcp_checksum(ip: &[u8], ihl: usize) -> u16 {
    let tcp = &ip[ihl..];
    let pseudo = ones_sum(&ip[12..20], PROTO_TCP as u64 + tcp.len() as u64);
    let with_field = ones_sum(tcp, pseudo);
    let field = u16::from_be_bytes([tcp[16], tcp[17]]) as u64;
    // Subtracting the field's word from the unfolded sum is exact (it was added as that word).
    fold_checksum(with_field - field)
}

/// Whether the TCP checksum of a TCP/IPv4 frame is right.
pub fn tcp_checksum_ok(frame: &[u8]) -> bool {
    let ip = &frame[ETH_HEADER..];
    let ihl = ((ip[0] & 0x0f) as usize) * 4;
    let total = u16::from_be_bytes([ip[2], ip[3]]) as usize;
    let tcp = &ip[ihl..total];
    tcp_checksum(&ip[..total], ihl) == u16::from_be_bytes([tcp[16], tcp[17]])
}

/// Why a burst cannot be segmented.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SegmentError {
    /// Not an Ethernet + IPv4 + TCP frame with consistent lengths.
    Malformed,
    /// A segment would not fit a buffer of the given size.
    TooLarge,
}

/// A TCP/IPv4 burst and how it splits: `count()` segments, each written by `write(i, ..)`.
#[derive(Clone, Copy, Debug)]
pub struct TcpSegments<'a> {
    frame: &'a [u8],
    ihl: usize,
    /// Where the payload starts in the frame (Ethernet, IP and TCP headers before it).
    payload_at: usize,
    payload_len: usize,
    mss: usize,
}

impl<'a> TcpSegments<'a> {
    /// The segments of `frame` at `mss` bytes of payload each, each to be written into a buffer of at
    /// most `max_frame` bytes.
    pub fn new(frame: &'a [u8], mss: u16, max_frame: usize) -> Result<TcpSegments<'a>, SegmentError> {
        use SegmentError::*;
        if frame.len() < ETH_HEADER + 40 || frame[12..14] != ETHERTYPE_IPV4.to_be_bytes() || mss == 0 {
            return Err(Malformed);
        }
        let ip = &frame[ETH_HEADER..];
        let ihl = ((ip[0] & 0x0f) as usize) * 4;
        if ip[0] >> 4 != 4 || ihl < 20 || ip[9] != PROTO_TCP || ip.len() < ihl + 20 {
            return Err(Malformed);
        }
        let thl = ((ip[ihl + 12] >> 4) as usize) * 4;
        // The total length of a burst may be 0 when it exceeds 64 KB (BIG TCP); the frame's length is the truth.
        let ip_len = ip.len();
        if thl < 20 || ihl + thl > ip_len {
            return Err(Malformed);
        }
        let payload_at = ETH_HEADER + ihl + thl;
        if payload_at + mss as usize > max_frame {
            return Err(TooLarge);
        }
        Ok(TcpSegments {
            frame,
            ihl,
            payload_at,
            payload_len: ip_len - ihl - thl,
            mss: mss as usize,
        })
    }

    /// How many segments (at least one, even for a burst without payload).
    pub fn count(&self) -> usize {
        self.payload_len.div_ceil(self.mss).max(1)
    }

    /// Writes segment `i` (`i < count()`) into `out`; returns its frame length.
    pub fn write(&self, i: usize, out: &mut [u8]) -> usize {
        let last = i + 1 == self.count();
        let from = i * self.mss;
        let len = self.mss.min(self.payload_len - from);
        let end = self.payload_at + len;
        out[..self.payload_at].copy_from_slice(&self.frame[..self.payload_at]);
        out[self.payload_at..end]
            .copy_from_slice(&self.frame[self.payload_at + from..self.payload_at + from + len]);
        let ip = &mut out[ETH_HEADER..end];
        let ihl = self.ihl;
        let ip_len = ip.len() as u16;
        ip[2..4].copy_from_slice(&ip_len.to_be_bytes());
        let id = u16::from_be_bytes([ip[4], ip[5]]).wrapping_add(i as u16);
        ip[4..6].copy_from_slice(&id.to_be_bytes());
        ip[10..12].fill(0);
        let ip_sum = fold_checksum(ones_sum(&ip[..ihl], 0));
        ip[10..12].copy_from_slice(&ip_sum.to_be_bytes());
        let tcp = &mut ip[ihl..];
        let seq = u32::from_be_bytes([tcp[4], tcp[5], tcp[6], tcp[7]]).wrapping_add(from as u32);
        tcp[4..8].copy_from_slice(&seq.to_be_bytes());
        if !last {
            tcp[13] &= !(TCP_FIN | TCP_PSH);
        }
        if i > 0 {
            tcp[13] &= !TCP_CWR;
        }
        let sum = tcp_checksum(ip, ihl);
        ip[ihl + 16..ihl + 18].copy_from_slice(&sum.to_be_bytes());
        end
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frame::{self, ipv4_checksum_ok, tests::tcp_frame};

    /// A burst as the sender's stack hands it over: `payload` bytes (a counting pattern), IP ID 0x1234,
    /// `flags`, and the TCP checksum field holding only the pseudo-header sum (`CHECKSUM_PARTIAL`).
    fn burst(payload: usize, flags: u8) -> Vec<u8> {
        let mut f = tcp_frame(40000, 20001, 0xffff_f000, 77, payload, 0b10);
        for (k, b) in f[ETH_HEADER + 52..].iter_mut().enumerate() {
            *b = (k % 251) as u8;
        }
        let ip = &mut f[ETH_HEADER..];
        ip[4..6].copy_from_slice(&0x1234u16.to_be_bytes());
        ip[10..12].fill(0);
        let c = frame::internet_checksum(&ip[..20]);
        ip[10..12].copy_from_slice(&c.to_be_bytes());
        ip[20 + 13] = flags;
        let pseudo = !fold_checksum(ones_sum(&ip[12..20], 6 + (ip.len() - 20) as u64));
        ip[20 + 16..20 + 18].copy_from_slice(&pseudo.to_be_bytes());
        f
    }

    fn split(f: &[u8], mss: u16) -> Vec<Vec<u8>> {
        let s = TcpSegments::new(f, mss, 1600).unwrap();
        (0..s.count())
            .map(|i| {
                let mut out = vec![0u8; 1600];
                let n = s.write(i, &mut out);
                out.truncate(n);
                out
            })
            .collect()
    }

    #[test]
    fn a_burst_splits_into_mss_segments_with_valid_headers_and_checksums() {
        let payload = 5 * 1448 + 100;
        let f = burst(payload, TCP_PSH | 0x10 | TCP_FIN | TCP_CWR);
        let segs = split(&f, 1448);
        assert_eq!(segs.len(), 6);
        let mut reassembled = Vec::new();
        for (i, s) in segs.iter().enumerate() {
            let p = frame::parse(s);
            let want = if i < 5 { 1448 } else { 100 };
            assert_eq!(p.payload, want, "segment {i}");
            assert_eq!(p.ip_len as usize, s.len() - ETH_HEADER);
            assert_eq!(p.ip_len, 52 + want);
            assert_eq!(
                p.seq,
                0xffff_f000u32.wrapping_add(i as u32 * 1448),
                "wraps past 2^32"
            );
            assert_eq!((p.src_port, p.dst_port, p.ack), (40000, 20001, 77));
            assert_eq!(u16::from_be_bytes([s[18], s[19]]), 0x1234 + i as u16);
            assert!(ipv4_checksum_ok(s), "IP checksum of segment {i}");
            assert!(tcp_checksum_ok(s), "TCP checksum of segment {i}");
            let flags = s[ETH_HEADER + 20 + 13];
            assert_eq!(flags & 0x10, 0x10, "ACK on every segment");
            assert_eq!(
                flags & (TCP_PSH | TCP_FIN) != 0,
                i == 5,
                "PSH and FIN on the last only"
            );
            assert_eq!(flags & TCP_CWR != 0, i == 0, "CWR on the first only");
            assert_eq!(
                s[ETH_HEADER + 20..ETH_HEADER + 52][20..],
                f[ETH_HEADER + 40..ETH_HEADER + 52]
            );
            reassembled.extend_from_slice(&s[ETH_HEADER + 52..]);
        }
        assert_eq!(
            reassembled,
            f[ETH_HEADER + 52..],
            "the payload reassembles to the burst's"
        );
    }

    #[test]
    fn an_exact_multiple_has_no_short_tail_and_a_checksum_is_recomputed_not_patched() {
        let f = burst(3 * 1000, 0x10);
        let segs = split(&f, 1000);
        assert_eq!(segs.len(), 3);
        assert!(
            segs.iter()
                .all(|s| s.len() == ETH_HEADER + 52 + 1000 && tcp_checksum_ok(s))
        );
        // A corrupted checksum field in the burst does not survive: every segment's is computed from scratch.
        let mut bad = f.clone();
        bad[ETH_HEADER + 36] ^= 0xff;
        assert!(split(&bad, 1000).iter().all(|s| tcp_checksum_ok(s)));
    }

    #[test]
    fn a_partial_checksum_is_completed_where_the_header_says() {
        let mut f = burst(300, 0x18);
        assert!(!tcp_checksum_ok(&f), "a partial checksum is not a valid one");
        let hdr = VnetHdr {
            flags: F_NEEDS_CSUM,
            csum_start: (ETH_HEADER + 20) as u16,
            csum_offset: 16,
            ..VnetHdr::default()
        };
        assert!(hdr.needs_csum());
        assert!(complete_checksum(&mut f, hdr.csum_start, hdr.csum_offset));
        assert!(tcp_checksum_ok(&f));
        let len = f.len();
        assert!(!complete_checksum(&mut f, len as u16 - 1, 0), "out of the frame");
    }

    #[test]
    fn headers_say_what_to_do_and_bad_bursts_are_refused() {
        let mut raw = [0u8; VNET_HDR_LEN];
        raw[0] = F_NEEDS_CSUM;
        raw[1] = GSO_TCPV4 | GSO_ECN;
        raw[4..6].copy_from_slice(&1448u16.to_ne_bytes());
        raw[6..8].copy_from_slice(&34u16.to_ne_bytes());
        raw[8..10].copy_from_slice(&16u16.to_ne_bytes());
        let h = VnetHdr::parse(&raw);
        assert_eq!(h.gso(), Gso::TcpV4 { mss: 1448 });
        assert_eq!((h.csum_start, h.csum_offset), (34, 16));
        assert_eq!(VnetHdr::default().gso(), Gso::None);
        raw[1] = 4; // TCPv6
        assert_eq!(VnetHdr::parse(&raw).gso(), Gso::Other);
        let f = burst(4000, 0x10);
        assert_eq!(
            TcpSegments::new(&f, 1448, 1400).unwrap_err(),
            SegmentError::TooLarge
        );
        let mut arp = f.clone();
        arp[12..14].copy_from_slice(&0x0806u16.to_be_bytes());
        assert_eq!(
            TcpSegments::new(&arp, 1448, 1600).unwrap_err(),
            SegmentError::Malformed
        );
        assert_eq!(
            TcpSegments::new(&f[..40], 1448, 1600).unwrap_err(),
            SegmentError::Malformed
        );
    }
}
