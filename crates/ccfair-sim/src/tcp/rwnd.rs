//! The receiver's window: Linux's receive buffer, its autotuning (dynamic right-sizing, DRS) and the window
//! the receiver advertises, as in Linux 6.18 (`net/ipv4/tcp_input.c`, `tcp_output.c`).
//!
//! In a nutshell: the receiver owns a buffer of `rcvbuf` bytes, of which the payload may take the share
//! `scaling_ratio / 256` (the rest is skb overhead, `tcp_win_from_space`). The window it offers is the free
//! part of that, but no more than `rcv_ssthresh`, which grows by about two segments per arriving segment
//! (`tcp_grow_window`), and the buffer itself grows once per receiver RTT from what the application read
//! during the last one (`tcp_rcv_space_adjust` → `tcp_rcvbuf_grow`), plus, while segments wait out of
//! order, by the span they cover (the out-of-order provisioning). Heavy loss makes that span large fast; a
//! window that grows more slowly than it stalls the sender (its `tcp_snd_wnd_test`, in `xmit.rs`).
//!
//! The rules, each with its kernel function:
//! - `tcp_select_initial_window` + `tcp_init_buffer_space` (passive open, `tcp_app_win` = 31): the buffer
//!   starts at `tcp_rmem[1]`; the first window is the full space rounded down to the MSS (no 10-segment
//!   limit since "tcp: up initial rmem to 128KB and SYN rwin to around 64KB", 4.19, and no 64 KB limit
//!   since "tcp: remove 64 KByte limit for initial tp->rcv_wnd value", 6.10, when the route sets no
//!   `initrwnd`; a host's `rcv_initial_window` is one (`init_rcv_wnd`): the first window is then at most that
//!   many segments), of which the SYN-ACK's unscaled field carries at most 65535 bytes to the sender; the
//!   window scale is the one that represents `tcp_rmem[2]`;
//!   `window_clamp` is the full space less one segment (the reservation of `tcp_init_buffer_space`);
//!   `rcv_ssthresh` = min(rcv_wnd, window_clamp); `rcvq_space.space` = min(rcv_ssthresh, rcv_wnd,
//!   10 × advmss). Then the first data segment sets the measured `scaling_ratio` (`tcp_measure_rcv_mss`),
//!   which moves `window_clamp` to `tcp_win_from_space(rcvbuf)` through `tcp_set_window_clamp`.
//! - `tcp_grow_window`, for in-order data (`tcp_event_data_recv`, skbs of 128 bytes or more) and for
//!   out-of-order data (`tcp_data_queue_ofo`, SACK connections): `rcv_ssthresh += min(room, max(2·advmss,
//!   2·len))`, room = min(window_clamp, tcp_space) − rcv_ssthresh. The skbs here all have the truesize the
//!   ratio says, so the kernel's "check #2" always takes the `2·advmss` branch.
//! - `tcp_rcv_space_adjust` (the application reads every in-order byte as soon as it arrives, and
//!   `tcp_recvmsg` runs this after each skb it copies): once per receiver RTT, `copied` = bytes read since
//!   `rcvq_space.seq` less the in-order bytes still queued (`inq`, "tcp: add receive queue awareness in
//!   tcp_rcv_space_adjust()"); if more than `rcvq_space.space`, `tcp_rcvbuf_grow(copied)`; then a new
//!   measurement starts at what was read. When an arriving segment fills a hole, the read takes it first
//!   and the segments it released from the out-of-order queue after it, so a measurement due then ends
//!   with those still queued: they count in the next one (the kernel backend's `tcp_rcvbuf_grow`
//!   tracepoint shows such `inq`). Deviation: the kernel may coalesce some of the released segments into
//!   the arriving skb (`tcp_ofo_queue` → `tcp_try_coalesce`, up to `MAX_SKB_FRAGS`), which would then count
//!   as read at once; here the arriving skb is read alone.
//! - `tcp_rcvbuf_grow(newval)` after "tcp: fix too slow tcp_rcvbuf_grow() action" (6.18): rcvwin =
//!   2·newval + 2·(2·newval)·(newval − old)/old, plus the out-of-order span (last OOO end − rcv_nxt);
//!   rcvbuf = min(tcp_space_from_win(rcvwin), tcp_rmem[2]); if larger than now, the buffer grows and
//!   `window_clamp` = tcp_win_from_space(rcvbuf). `tcp_data_queue_ofo` calls it with the unchanged space
//!   ("tcp: add receive side provisioning for out-of-order packets"), which provisions the span alone.
//!   With `tcp_moderate_rcvbuf` = 0 (the host's `rcv_autotune = false`) the space is tracked but the
//!   buffer never grows.
//! - Memory: in-order data leaves at once (the application reads it), out-of-order segments hold
//!   truesize = len · 256 / scaling_ratio each until the hole below them fills; `tcp_space` =
//!   tcp_win_from_space(rcvbuf − rmem_alloc), `tcp_full_space` = tcp_win_from_space(rcvbuf).
//! - `__tcp_select_window` + `tcp_select_window` (`tcp_shrink_window` = 0): with less than half the full
//!   space free, the free space rounded down to the window scale, or 0 below one MSS or 1/16 of the full
//!   space; at most `rcv_ssthresh`; rounded up to the scale (or, without scaling, to the MSS as the kernel
//!   does); never below what the previous ACK offered (the right edge is kept). Since in-order data is read
//!   at once, what fills the buffer is out-of-order data behind a hole below that edge: the buffer may ask
//!   for a zero window (counted, `want_zero_windows`, Linux's `TCPWantZeroWindowAdv`), but the window
//!   offered stays open down to the hole, so no zero-window probe is ever needed.
//! - `tcp_try_rmem_schedule`: an out-of-order skb that does not fit in `rcvbuf` is dropped and counted
//!   (Linux would first prune the out-of-order queue from its far end, `tcp_prune_ofo_queue`, and so
//!   renege SACKed data; with the window offered here the sender never overruns the buffer, so this is a
//!   guard, counted in `ofo_drops`).
//!
//! - `tcp_rcv_rtt_measure_ts` + `tcp_rcv_rtt_update` (6.18, "tcp: always seek for minimal rtt in
//!   tcp_rcv_rtt_update()"): each data skb whose timestamp echo is new gives a sample, now minus the echoed
//!   time in whole ms (`TCP_TS_HZ` = 1000); a lower sample is taken at once, a higher one moves the
//!   estimate by 1/8. `tcp_rcv_space_adjust` waits for the first sample.
//!
//! Deviations: segments carry no timestamp echo here, so the echoed time is reconstructed as the
//! segment's own send time (its TSval) less the ACK path's delay: the sample is the data's one-way delay,
//! queueing included, plus the ACK's, without the time the sender held the ACK before sending (which the
//! minimum-seeking estimate mostly discards anyway). The window-based samples (`tcp_rcv_rtt_measure`,
//! which 6.18 uses only to lower the estimate) are left out. The ACK that reports a larger window after a
//! read (`tcp_cleanup_rbuf`) is modelled, and so is the quick ACK `tcp_grow_window` asks for whenever it
//! raises `rcv_ssthresh` (the receiver sets its quick-ACK count's low bit, `icsk_ack.quick |= 1`). No
//! memory pressure (`tcp_under_memory_pressure`), no `SO_RCVBUF` lock, no `net.core.rmem_max` in the window
//! scale (it only counts when larger than `tcp_rmem[2]`). Known difference from the kernel backend: its
//! receiver route sets `initrwnd` to the group's initial window, which on 6.18 lowers the kernel's first
//! window to that many segments (14,480 bytes at 10); this model, like a host with a default route, starts
//! from the whole initial space. Which to keep is open: dropping `initrwnd` changes how the truth is measured.
//!
//! Units: the receiver counts segments; this model counts bytes, a segment carrying `mss` payload bytes.

use ccfair_core::{Dur, Time};

/// Linux `TCP_RMEM_TO_WIN_SCALE`: the scaling ratio is in 1/256.
const RMEM_TO_WIN_SCALE: u32 = 8;
/// Linux `TCP_DEFAULT_SCALING_RATIO` (128/256): the ratio until the first data skb is measured.
pub const DEFAULT_SCALING_RATIO: u32 = 1 << (RMEM_TO_WIN_SCALE - 1);
const _: () = assert!(DEFAULT_SCALING_RATIO == ccfair_scenario::host::DEFAULT_SCALING_RATIO);
/// Linux `TCP_INIT_CWND`, which bounds the first `rcvq_space.space`.
const INIT_CWND: u64 = 10;
/// Linux `TCP_MAX_WSCALE`.
const MAX_WSCALE: u32 = 14;
/// Linux `SOCK_MIN_RCVBUF / 2` on 64-bit (2 × (2048 + SKB_TRUESIZE(0)) / 2, rounded as the kernel's value
/// 2304): the least window clamp `tcp_set_window_clamp` sets.
const MIN_WINDOW_CLAMP: u64 = 2304;

/// A receiver host's buffer settings (the host's `rmem`, `rcv_autotune`, `rcv_scaling_ratio`).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct RwndConfig {
    /// `tcp_rmem`: min, default (the initial buffer), max (the autotuning cap), bytes.
    pub rmem: [u32; 3],
    /// `tcp_moderate_rcvbuf`: the buffer grows (DRS).
    pub autotune: bool,
    /// Payload per byte of buffer, in 1/256 (1..=255): what `tcp_measure_rcv_mss` measures from the skbs.
    pub scaling_ratio: u32,
    /// The route's `initrwnd`, segments (0: none): the first window is at most this many segments.
    pub initial_window_segments: u32,
}

/// The receive-buffer and window state of one connection's receiver.
#[derive(Clone, Debug)]
pub struct RcvWindow {
    cfg: RwndConfig,
    /// Payload bytes per segment (advmss, and rcv_mss once data arrived).
    mss: u64,
    scaling_ratio: u32,
    /// The window scale the receiver announced.
    wscale: u32,
    rcvbuf: u64,
    rcv_ssthresh: u64,
    window_clamp: u64,
    /// The window the last ACK offered, from the byte `rcv_wup` (`tp->rcv_wnd`).
    rcv_wnd: u64,
    /// `rcvq_space`: bytes per RTT the application read at the last measurement, where and when it began.
    space: u64,
    space_seq: u32,
    space_time: Option<Time>,
    /// `rcv_rtt_est.rtt_us` (µs << 3; 0: no sample yet) and the echo of its last sample.
    rcv_rtt_us8: u64,
    last_echo_ms: i64,
    /// The ACK path's delay, whole ms, to reconstruct the echoed timestamp.
    ack_path_ms: i64,
    /// Bytes of buffer the out-of-order segments take (`sk_rmem_alloc`).
    rmem_alloc: u64,
    /// Out-of-order skbs dropped because they did not fit in the buffer.
    pub ofo_drops: u64,
    /// ACKs for which the buffer asked for a zero window but the offered edge was kept
    /// (`TCPWantZeroWindowAdv`), and ACKs that offered a zero window (`TCPToZeroWindowAdv`).
    pub want_zero_windows: u64,
    pub zero_windows: u64,
}

impl RcvWindow {
    /// The state after the handshake of a connection whose segments carry `mss` payload bytes and whose
    /// ACKs take `ack_path` to reach the sender.
    pub fn new(cfg: RwndConfig, mss: u32, ack_path: Dur) -> RcvWindow {
        let mss = mss as u64;
        let mut w = RcvWindow {
            cfg,
            mss,
            scaling_ratio: DEFAULT_SCALING_RATIO,
            wscale: 0,
            rcvbuf: cfg.rmem[1] as u64,
            rcv_ssthresh: 0,
            window_clamp: 0,
            rcv_wnd: 0,
            space: 0,
            space_seq: 0,
            space_time: None,
            rcv_rtt_us8: 0,
            last_echo_ms: i64::MIN,
            ack_path_ms: (ack_path.ns() / 1_000_000) as i64,
            rmem_alloc: 0,
            ofo_drops: 0,
            want_zero_windows: 0,
            zero_windows: 0,
        };
        // tcp_select_initial_window, with no clamp set yet (the largest scaled window).
        let full_space = w.full_space();
        let mut clamp = 65535u64 << MAX_WSCALE;
        let mut space = clamp.min(full_space);
        if space > mss {
            space -= space % mss;
        }
        w.rcv_wnd = space;
        if cfg.initial_window_segments > 0 {
            // The route's initrwnd (tcp_openreq_init_rwin passes it as init_rcv_wnd).
            w.rcv_wnd = w.rcv_wnd.min(cfg.initial_window_segments as u64 * mss);
        }
        let scale_space = space.max(cfg.rmem[2] as u64).min(clamp);
        w.wscale = (scale_space.max(1).ilog2()).saturating_sub(15).min(MAX_WSCALE);
        clamp = clamp.min(65535u64 << w.wscale);
        // tcp_init_buffer_space (tcp_app_win = 31: maxwin >> 31 is 0, so only the one-segment reservation).
        let maxwin = full_space;
        if clamp >= maxwin {
            clamp = maxwin;
        }
        if clamp > 2 * mss && clamp + mss > maxwin {
            clamp = (2 * mss).max(maxwin.saturating_sub(mss));
        }
        w.window_clamp = clamp;
        w.rcv_ssthresh = w.rcv_wnd.min(clamp);
        w.space = w.rcv_ssthresh.min(w.rcv_wnd).min(INIT_CWND * mss);
        w
    }

    /// `tcp_win_from_space`.
    #[inline]
    fn win_from_space(&self, space: u64) -> u64 {
        (space * self.scaling_ratio as u64) >> RMEM_TO_WIN_SCALE
    }

    /// `tcp_space_from_win`.
    #[inline]
    fn space_from_win(&self, win: u64) -> u64 {
        (win << RMEM_TO_WIN_SCALE) / self.scaling_ratio as u64
    }

    /// `tcp_full_space`.
    #[inline]
    fn full_space(&self) -> u64 {
        self.win_from_space(self.rcvbuf)
    }

    /// `tcp_space`: the window the free part of the buffer backs.
    #[inline]
    fn free_space(&self) -> u64 {
        self.win_from_space(self.rcvbuf.saturating_sub(self.rmem_alloc))
    }

    /// The buffer bytes (truesize) of `segments` segments, each ⌈mss · 256 / ratio⌉.
    #[inline]
    fn truesize(&self, segments: u32) -> u64 {
        segments as u64 * (self.mss << RMEM_TO_WIN_SCALE).div_ceil(self.cfg.scaling_ratio as u64)
    }

    /// Payload bytes per segment.
    pub fn mss(&self) -> u64 {
        self.mss
    }

    /// The window scale announced in the handshake (the sender shifts the window field by it).
    pub fn wscale(&self) -> u32 {
        self.wscale
    }

    /// The receive buffer, bytes (`sk_rcvbuf`).
    pub fn rcvbuf(&self) -> u64 {
        self.rcvbuf
    }

    pub fn rcv_ssthresh(&self) -> u64 {
        self.rcv_ssthresh
    }

    pub fn window_clamp(&self) -> u64 {
        self.window_clamp
    }

    /// `rcvq_space.space`, bytes.
    pub fn space(&self) -> u64 {
        self.space
    }

    /// Buffer bytes the out-of-order segments take.
    pub fn rmem_alloc(&self) -> u64 {
        self.rmem_alloc
    }

    /// The window of the handshake as the sender reads it, bytes (its first `snd_wnd`): the SYN-ACK's
    /// window field is not scaled, so at most 65535 (`tcp_make_synack`).
    pub fn initial_window(&self) -> u32 {
        self.rcv_wnd.min(65535) as u32
    }

    /// `tcp_measure_rcv_mss` on the first data skb: the measured ratio replaces the default, and
    /// `tcp_set_window_clamp` follows the buffer with it. Also starts the first DRS measurement.
    fn first_data(&mut self, now: Time, rcv_nxt: u32) {
        self.space_time = Some(now);
        self.space_seq = rcv_nxt;
        if self.cfg.scaling_ratio == self.scaling_ratio {
            return;
        }
        self.scaling_ratio = self.cfg.scaling_ratio;
        let new_clamp = self.full_space().max(MIN_WINDOW_CLAMP);
        if new_clamp != self.window_clamp {
            if new_clamp < self.window_clamp {
                // __tcp_adjust_rcv_ssthresh: keep the reservation of the smaller clamp.
                self.rcv_ssthresh = self.rcv_ssthresh.min(new_clamp);
            } else {
                self.rcv_ssthresh = self.rcv_ssthresh.max(self.rcv_wnd.min(new_clamp));
            }
            self.window_clamp = new_clamp;
        }
        self.space = self.space.min(self.window_clamp);
    }

    /// `tcp_rcv_rtt_measure_ts` for a full-sized data skb sent at TCP timestamp `tsval_ms` (see the
    /// deviations for the echo).
    pub fn on_timestamp(&mut self, now: Time, tsval_ms: u32) {
        let echo_ms = tsval_ms as i64 - self.ack_path_ms;
        if echo_ms == self.last_echo_ms {
            return;
        }
        self.last_echo_ms = echo_ms;
        let delta_ms = super::ts_clock_ms(now) as i64 - echo_ms;
        if delta_ms > 0 {
            self.rcv_rtt_update(delta_ms as u64 * 1000);
        }
    }

    /// `tcp_rcv_rtt_update` for a timestamp sample (`win_dep` = 0): a lower sample latches, a higher one
    /// moves the estimate by 1/8.
    fn rcv_rtt_update(&mut self, sample_us: u64) {
        let m = sample_us << 3;
        let old = self.rcv_rtt_us8;
        self.rcv_rtt_us8 = if old == 0 || m < old {
            m
        } else {
            old - (old >> 3) + sample_us
        };
    }

    /// The receiver's RTT estimate (`rcv_rtt_est.rtt_us`), µs; 0 before the first sample.
    pub fn rcv_rtt_us(&self) -> u64 {
        self.rcv_rtt_us8 >> 3
    }

    /// `tcp_grow_window` for an skb of `segments` segments; whether `rcv_ssthresh` grew (the kernel then
    /// asks for a quick ACK, `icsk_ack.quick |= 1`).
    fn grow_window(&mut self, segments: u32) -> bool {
        let room = self.window_clamp.min(self.free_space()) as i64 - self.rcv_ssthresh as i64;
        if room <= 0 {
            return false;
        }
        let len = segments as u64 * self.mss;
        let incr = (2 * self.mss).max(2 * len);
        self.rcv_ssthresh += incr.min(room as u64);
        true
    }

    /// `tcp_rcvbuf_grow(newval)`; `ooo_span` = bytes from rcv_nxt to the end of the out-of-order queue.
    fn rcvbuf_grow(&mut self, newval: u64, ooo_span: u64) {
        let old = self.space;
        self.space = newval;
        if !self.cfg.autotune {
            return;
        }
        // DRS is always one RTT late; in slow start the sender may double its rate meanwhile.
        let mut rcvwin = newval << 1;
        // (newval never falls below the space it replaces: a read grows it, the OOO call keeps it.)
        if let Some(grow) = (rcvwin * newval.saturating_sub(old)).checked_div(old) {
            rcvwin += grow << 1;
        }
        rcvwin += ooo_span;
        let rcvbuf = self.space_from_win(rcvwin).min(self.cfg.rmem[2] as u64);
        if rcvbuf > self.rcvbuf {
            self.rcvbuf = rcvbuf;
            self.window_clamp = self.win_from_space(rcvbuf);
        }
    }

    /// In-order data: an skb of `segments` segments arrived at `now` (`tcp_event_data_recv`); `rcv_nxt`
    /// is the next segment expected before it.
    /// Returns whether the window grew (a quick ACK is due).
    pub fn on_in_order(&mut self, now: Time, rcv_nxt: u32, segments: u32) -> bool {
        if self.space_time.is_none() {
            self.first_data(now, rcv_nxt);
        }
        self.grow_window(segments)
    }

    /// Whether an out-of-order skb of `segments` segments fits in the buffer (`tcp_try_rmem_schedule`);
    /// if not it is dropped and counted.
    pub fn ofo_admit(&mut self, now: Time, rcv_nxt: u32, segments: u32) -> bool {
        if self.space_time.is_none() {
            self.first_data(now, rcv_nxt);
        }
        if self.rmem_alloc + self.truesize(segments) > self.rcvbuf {
            self.ofo_drops += 1;
            return false;
        }
        true
    }

    /// An out-of-order skb of `segments` segments was queued, adding `new_segments` the queue did not
    /// hold; the queue now ends at `ooo_end` (`tcp_data_queue_ofo`'s end: grow the window, charge the
    /// memory, provision the span).
    /// Returns whether the window grew (a quick ACK is due).
    pub fn on_ofo_queued(&mut self, rcv_nxt: u32, segments: u32, new_segments: u32, ooo_end: u32) -> bool {
        let mut grew = false;
        if new_segments > 0 {
            grew = self.grow_window(segments);
            self.rmem_alloc += self.truesize(new_segments);
        }
        let span = (ooo_end - rcv_nxt) as u64 * self.mss;
        self.rcvbuf_grow(self.space, span);
        grew
    }

    /// `segments` out-of-order segments became in order and were read: their memory is freed.
    pub fn on_ofo_released(&mut self, segments: u32) {
        self.rmem_alloc = self.rmem_alloc.saturating_sub(self.truesize(segments));
    }

    /// `tcp_rcv_space_adjust` after the application read up to `copied_seq` at `now`, with the in-order
    /// data up to `rcv_nxt` not yet read (`inq`, which does not count as read) and the out-of-order queue
    /// ending `ooo_span` bytes beyond `rcv_nxt`.
    pub fn rcv_space_adjust(&mut self, now: Time, copied_seq: u32, rcv_nxt: u32, ooo_span: u64) {
        let Some(start) = self.space_time else {
            return;
        };
        if self.rcv_rtt_us8 == 0 || now.saturating_since(start) < Dur::from_us(self.rcv_rtt_us()) {
            return;
        }
        let read = (copied_seq - self.space_seq) as u64 * self.mss;
        let inq = (rcv_nxt - copied_seq) as u64 * self.mss;
        if let Some(copied) = read.checked_sub(inq).filter(|&c| c > self.space) {
            self.rcvbuf_grow(copied, ooo_span);
        }
        self.space_seq = copied_seq;
        self.space_time = Some(now);
    }

    /// `__tcp_select_window`: the window the buffer allows now, bytes.
    fn raw_window(&self) -> u64 {
        let mut mss = self.mss;
        let mut free = self.free_space();
        let allowed = self.full_space();
        let full = self.window_clamp.min(allowed);
        if mss > full {
            mss = full;
            if mss == 0 {
                return 0;
            }
        }
        if free < full >> 1 {
            free -= free % (1 << self.wscale);
            if free < allowed >> 4 || free < mss {
                return 0;
            }
        }
        free = free.min(self.rcv_ssthresh);
        if self.wscale > 0 {
            free.next_multiple_of(1 << self.wscale)
        } else {
            let window = self.rcv_wnd;
            if window + mss <= free || window > free {
                free - free % mss
            } else if mss == full && free > window + (full >> 1) {
                free
            } else {
                window
            }
        }
    }

    /// `tcp_select_window` when an ACK leaves, `unacked` bytes after the previous ACK's `rcv_wup` (the
    /// data it acknowledges): the window it offers, bytes, as the sender reads it (the field shifted by
    /// the scale). The offered right edge never moves back.
    pub fn select_window(&mut self, unacked: u64) -> u32 {
        let cur = self.rcv_wnd.saturating_sub(unacked);
        let mut new = self.raw_window();
        if new < cur {
            self.want_zero_windows += u64::from(new == 0);
            new = cur.next_multiple_of(1 << self.wscale);
        }
        self.rcv_wnd = new;
        self.zero_windows += u64::from(new == 0);
        let field = new.min(65535u64 << self.wscale) >> self.wscale;
        (field << self.wscale) as u32
    }

    /// `tcp_cleanup_rbuf`'s window update: after a read, whether an ACK should go out now because the
    /// window it would offer is at least twice what is left of the offered one (`unacked` bytes since the
    /// last ACK), which is at most half the clamp.
    pub fn wants_window_update(&self, unacked: u64) -> bool {
        let now_left = self.rcv_wnd.saturating_sub(unacked);
        if 2 * now_left > self.window_clamp {
            return false;
        }
        let new = self.raw_window();
        new > 0 && new >= 2 * now_left
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u32 = 1448;

    fn cfg(ratio: u32) -> RwndConfig {
        RwndConfig {
            rmem: [4096, 131_072, 32 << 20],
            autotune: true,
            scaling_ratio: ratio,
            initial_window_segments: 0,
        }
    }

    fn ms(x: u64) -> Time {
        Time::from_ns(x * 1_000_000)
    }

    #[test]
    fn handshake_values_follow_tcp_select_initial_window_and_tcp_init_buffer_space() {
        let w = RcvWindow::new(cfg(160), MSS, Dur::from_ms(50));
        // Full space 131072 · 128/256 = 65536, rounded down to the MSS: 65160 (45 segments).
        assert_eq!(w.initial_window(), 65160);
        // 32 MiB needs a scale of 25 − 15 = 10.
        assert_eq!(w.wscale(), 10);
        // One segment reserved below the full space; space = 10 segments.
        assert_eq!(w.window_clamp(), 65536 - 1448);
        assert_eq!(w.rcv_ssthresh(), 65536 - 1448);
        assert_eq!(w.space(), 14480);
    }

    #[test]
    fn a_routes_initial_window_caps_the_first_window_and_rcv_ssthresh_grows_from_it() {
        // initrwnd 10: the kernel backend's receiver (ss before any data: rcv_ssthresh 14480, rcv_space
        // 14480, rb 131072; after 10 segments 43440).
        let mut w = RcvWindow::new(
            RwndConfig {
                initial_window_segments: 10,
                ..cfg(160)
            },
            MSS,
            Dur::from_ms(50),
        );
        assert_eq!(
            (w.initial_window(), w.rcv_ssthresh(), w.space()),
            (14480, 14480, 14480)
        );
        for s in 0..10 {
            assert!(
                w.on_in_order(ms(s), s as u32, 1),
                "every segment grows the window"
            );
        }
        assert_eq!(w.rcv_ssthresh(), 14480 + 10 * 2 * 1448);
        // Without it the first window is the full space, and the same ten segments reach the clamp.
        let mut w = RcvWindow::new(cfg(160), MSS, Dur::from_ms(50));
        let grew = (0..10).filter(|&s| w.on_in_order(ms(s), s as u32, 1)).count();
        assert!(grew < 10, "{grew}");
    }

    #[test]
    fn the_first_data_skb_sets_the_measured_ratio_and_each_skb_grows_rcv_ssthresh_by_two_segments() {
        let mut w = RcvWindow::new(cfg(160), MSS, Dur::from_ms(50));
        w.on_in_order(ms(0), 0, 1);
        // tcp_set_window_clamp: 131072 · 160/256; rcv_ssthresh rises to min(rcv_wnd, clamp) = 65160 and
        // tcp_grow_window adds max(2·advmss, 2·len) = 2896.
        assert_eq!(w.window_clamp(), 81920);
        assert_eq!(w.rcv_ssthresh(), 65160 + 2896);
        // The ACK for that segment offers rcv_ssthresh rounded up to the scale (1024).
        assert_eq!(w.select_window(1448), 68608);
        // rcv_ssthresh stops at min(clamp, free space).
        for seq in 1..100 {
            w.on_in_order(ms(1), seq, 1);
        }
        assert_eq!(w.rcv_ssthresh(), 81920);
    }

    /// A window model whose receiver RTT estimate is `rtt_ms` (one timestamp sample) and whose first
    /// segment (seq 0) arrived at `t0_ms`.
    fn measured(rtt_ms: u64, t0_ms: u64, c: RwndConfig) -> RcvWindow {
        let mut w = RcvWindow::new(c, MSS, Dur::from_ms(50));
        let now = ms(t0_ms);
        // The segment was sent rtt − 50 ms ago (its ACK path takes 50 ms).
        let tsval = super::super::ts_clock_ms(now) - (rtt_ms as u32 - 50);
        w.on_timestamp(now, tsval);
        w.on_in_order(now, 0, 1);
        assert_eq!(w.rcv_rtt_us(), rtt_ms * 1000);
        w
    }

    #[test]
    fn drs_grows_the_buffer_by_the_6_18_formula_once_per_receiver_rtt() {
        let mut w = measured(100, 1000, cfg(160));
        let (old_space, old_rcvbuf) = (w.space(), w.rcvbuf());
        // Less than one RTT after the measurement began: nothing happens, however much was read.
        w.rcv_space_adjust(ms(1099), 30, 30, 0);
        assert_eq!((w.space(), w.rcvbuf()), (old_space, old_rcvbuf));
        // One RTT: 30 segments read (43440 bytes) > space 14480.
        w.rcv_space_adjust(ms(1100), 30, 30, 0);
        let copied: u64 = 30 * 1448;
        let mut rcvwin = 2 * copied;
        rcvwin += 2 * (rcvwin * (copied - old_space) / old_space);
        let rcvbuf = (rcvwin << 8) / 160;
        assert_eq!(w.space(), copied);
        assert_eq!(w.rcvbuf(), rcvbuf);
        assert_eq!(w.window_clamp(), (rcvbuf * 160) >> 8);
        // The next measurement starts at this read: the same amount again does not grow it.
        w.rcv_space_adjust(ms(1200), 60, 60, 0);
        assert_eq!(w.rcvbuf(), rcvbuf);
        // The cap is tcp_rmem[2].
        w.rcv_space_adjust(ms(1300), 60 + 20_000, 60 + 20_000, 0);
        assert_eq!(w.rcvbuf(), 32 << 20);
    }

    #[test]
    fn data_still_queued_when_a_measurement_ends_does_not_count_as_read() {
        // A hole filled: the application has read the arriving skb (up to 30) but 25 segments it released
        // are still queued (`inq`) when the measurement falls due; 30 - 25 = 5 segments count, less than
        // the space, so the buffer stays, and the next measurement starts after the first skb.
        let mut w = measured(100, 1000, cfg(160));
        let (old_space, old_rcvbuf) = (w.space(), w.rcvbuf());
        w.rcv_space_adjust(ms(1100), 30, 55, 0);
        assert_eq!((w.space(), w.rcvbuf()), (old_space, old_rcvbuf));
        // Had everything been read, the 55 segments would have grown it (as the same call without inq).
        let mut all_read = measured(100, 1000, cfg(160));
        all_read.rcv_space_adjust(ms(1100), 55, 55, 0);
        assert!(all_read.rcvbuf() > old_rcvbuf);
        // The released 25 count in the next measurement, which began at 30.
        w.rcv_space_adjust(ms(1200), 55 + 20, 55 + 20, 0);
        assert_eq!(w.space(), 45 * 1448);
    }

    #[test]
    fn without_autotuning_the_space_is_measured_but_the_buffer_stays() {
        let mut w = measured(
            100,
            1000,
            RwndConfig {
                autotune: false,
                ..cfg(160)
            },
        );
        w.rcv_space_adjust(ms(1100), 30, 30, 0);
        assert_eq!((w.space(), w.rcvbuf()), (30 * 1448, 131_072));
    }

    #[test]
    fn the_receiver_rtt_latches_lower_samples_and_moves_an_eighth_toward_higher_ones() {
        let mut w = measured(100, 1000, cfg(160));
        let sample = |w: &mut RcvWindow, now_ms: u64, rtt_ms: u32| {
            let now = ms(now_ms);
            w.on_timestamp(now, super::super::ts_clock_ms(now) - (rtt_ms - 50));
        };
        sample(&mut w, 1010, 180);
        assert_eq!(w.rcv_rtt_us(), (800_000 - 100_000 + 180_000) / 8);
        sample(&mut w, 1020, 90);
        assert_eq!(w.rcv_rtt_us(), 90_000);
        // The same echo twice is one sample.
        sample(&mut w, 1020, 90);
        assert_eq!(w.rcv_rtt_us(), 90_000);
    }
}
