//! The fields of Linux's `struct tcp_info` (include/uapi/linux/tcp.h) that the time series needs, read by
//! offset from the bytes TCP_INFO returns. A field beyond what the running kernel filled is `None` (older
//! kernels return a shorter struct), so the series shows NaN rather than a wrong number. BBR's own
//! `struct tcp_bbr_info` comes from TCP_CC_INFO.

/// One TCP_INFO sample.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct TcpInfo {
    pub ca_state: u8,
    pub unacked: u32,
    pub sacked: u32,
    pub lost: u32,
    pub retrans: u32,
    /// Smoothed RTT, µs.
    pub rtt_us: u32,
    pub snd_ssthresh: u32,
    pub snd_cwnd: u32,
    pub total_retrans: u32,
    /// Bytes per second; u64::MAX when unlimited.
    pub pacing_rate: Option<u64>,
    pub min_rtt_us: Option<u32>,
    pub notsent_bytes: Option<u32>,
    pub data_segs_out: Option<u32>,
    /// Bytes per second.
    pub delivery_rate: Option<u64>,
    pub bytes_acked: Option<u64>,
    pub total_rto: Option<u16>,
}

fn u32_at(b: &[u8], len: usize, at: usize) -> Option<u32> {
    (at + 4 <= len).then(|| u32::from_ne_bytes(b[at..at + 4].try_into().expect("4 bytes")))
}

fn u64_at(b: &[u8], len: usize, at: usize) -> Option<u64> {
    (at + 8 <= len).then(|| u64::from_ne_bytes(b[at..at + 8].try_into().expect("8 bytes")))
}

impl TcpInfo {
    /// Parses the first `len` bytes of `b`. The base fields (up to `tcpi_total_retrans`, Linux 2.6) are
    /// required; `None` if the kernel returned less.
    pub fn parse(b: &[u8], len: usize) -> Option<TcpInfo> {
        if len < 104 {
            return None;
        }
        let u = |at| u32_at(b, len, at).expect("within the base struct");
        Some(TcpInfo {
            ca_state: b[1],
            unacked: u(24),
            sacked: u(28),
            lost: u(32),
            retrans: u(36),
            rtt_us: u(68),
            snd_ssthresh: u(76),
            snd_cwnd: u(80),
            total_retrans: u(100),
            pacing_rate: u64_at(b, len, 104),
            bytes_acked: u64_at(b, len, 120),
            notsent_bytes: u32_at(b, len, 144),
            min_rtt_us: u32_at(b, len, 148),
            data_segs_out: u32_at(b, len, 156),
            delivery_rate: u64_at(b, len, 160),
            total_rto: (242 <= len).then(|| u16::from_ne_bytes([b[240], b[241]])),
        })
    }

    /// Packets in flight as the kernel counts them (`tcp_packets_in_flight`).
    pub fn in_flight(&self) -> u32 {
        (self.unacked + self.retrans).saturating_sub(self.sacked + self.lost)
    }
}

/// BBR's TCP_CC_INFO (`struct tcp_bbr_info`): bandwidth (bytes/s), min RTT (µs), gains (<< 8).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct BbrInfo {
    pub bw_bytes_per_sec: u64,
    pub min_rtt_us: u32,
    pub pacing_gain: u32,
    pub cwnd_gain: u32,
}

impl BbrInfo {
    pub fn parse(b: &[u8], len: usize) -> Option<BbrInfo> {
        if len < 20 {
            return None;
        }
        let u = |at| u32_at(b, len, at).expect("checked length");
        Some(BbrInfo {
            bw_bytes_per_sec: (u(4) as u64) << 32 | u(0) as u64,
            min_rtt_us: u(8),
            pacing_gain: u(12),
            cwnd_gain: u(16),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_come_from_their_offsets_and_short_structs_give_none() {
        let mut b = [0u8; 256];
        b[1] = 3;
        b[80..84].copy_from_slice(&42u32.to_ne_bytes());
        b[68..72].copy_from_slice(&50_000u32.to_ne_bytes());
        b[160..168].copy_from_slice(&1_250_000u64.to_ne_bytes());
        b[240..242].copy_from_slice(&2u16.to_ne_bytes());
        let full = TcpInfo::parse(&b, 248).unwrap();
        assert_eq!((full.ca_state, full.snd_cwnd, full.rtt_us), (3, 42, 50_000));
        assert_eq!(full.delivery_rate, Some(1_250_000));
        assert_eq!(full.total_rto, Some(2));
        let old = TcpInfo::parse(&b, 104).unwrap();
        assert_eq!(old.delivery_rate, None);
        assert_eq!(old.total_rto, None);
        assert!(TcpInfo::parse(&b, 100).is_none());
    }
}
