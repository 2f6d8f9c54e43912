//! What a bottleneck queue reports, per interval (the queue time series) and over the measurement window:
//! the sojourn of the packets that left it (p50/p99/max, and p99 split into L4S and classic traffic), drops,
//! CE marks, departures and wire bytes sent. The simulator and the kernel backend's emulator both measure
//! their bottleneck through this one meter, so the two backends' queue tables mean the same.
//!
//! L4S traffic is what a DualQ classifier would steer to its L4S queue (ECT(1), RFC 9331); its p99 and the
//! classic traffic's are the per-queue delays of a DualPI2 bottleneck and NaN in an interval with no such
//! packet. Nothing here allocates per packet: histograms are fixed-size, rows are appended per interval.

use crate::LogHistogram;

/// A quantile of `h` in ns, NaN when it is empty.
pub fn quantile_or_nan(h: &LogHistogram, q: f64) -> f64 {
    h.quantile(q).map_or(f64::NAN, |x| x as f64)
}

/// Queue columns, one row per interval. `t_ns` is the end of the interval; the backlog is the instantaneous
/// one at that moment; the other columns cover the interval.
#[derive(Clone, Debug, Default, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct QueueSeries {
    pub t_ns: Vec<u64>,
    pub backlog_bytes: Vec<u64>,
    pub backlog_packets: Vec<u32>,
    pub sojourn_p50_ns: Vec<f64>,
    pub sojourn_p99_ns: Vec<f64>,
    pub sojourn_max_ns: Vec<f64>,
    pub drops: Vec<u64>,
    pub marks: Vec<u64>,
    pub departures: Vec<u64>,
    pub tx_bytes: Vec<u64>,
    pub sojourn_l4s_p99_ns: Vec<f64>,
    pub sojourn_classic_p99_ns: Vec<f64>,
}

impl QueueSeries {
    /// Reserves room for exactly `rows` more rows when the allocator can give it (growth by doubling
    /// would leave up to half of a long run's columns unused).
    pub fn reserve_exact(&mut self, rows: usize) {
        fn r<T>(v: &mut Vec<T>, n: usize) {
            let _ = v.try_reserve_exact(n);
        }
        r(&mut self.t_ns, rows);
        r(&mut self.backlog_bytes, rows);
        r(&mut self.backlog_packets, rows);
        r(&mut self.sojourn_p50_ns, rows);
        r(&mut self.sojourn_p99_ns, rows);
        r(&mut self.sojourn_max_ns, rows);
        r(&mut self.drops, rows);
        r(&mut self.marks, rows);
        r(&mut self.departures, rows);
        r(&mut self.tx_bytes, rows);
        r(&mut self.sojourn_l4s_p99_ns, rows);
        r(&mut self.sojourn_classic_p99_ns, rows);
    }
}

/// What the queue did over a span of time (an interval or the measurement window).
#[derive(Clone, Debug, Default)]
pub struct QueueTally {
    pub sojourn: LogHistogram,
    pub sojourn_l4s: LogHistogram,
    pub sojourn_classic: LogHistogram,
    pub drops: u64,
    pub marks: u64,
    pub departures: u64,
    pub tx_bytes: u64,
}

impl QueueTally {
    fn clear(&mut self) {
        self.sojourn.clear();
        self.sojourn_l4s.clear();
        self.sojourn_classic.clear();
        self.drops = 0;
        self.marks = 0;
        self.departures = 0;
        self.tx_bytes = 0;
    }

    #[inline]
    fn departed(&mut self, sojourn_ns: u64, l4s: bool) {
        self.sojourn.record(sojourn_ns);
        if l4s {
            &mut self.sojourn_l4s
        } else {
            &mut self.sojourn_classic
        }
        .record(sojourn_ns);
        self.departures += 1;
    }

    /// Sojourn quantile `q` of all departures (ns), NaN when none.
    pub fn sojourn_ns(&self, q: f64) -> f64 {
        quantile_or_nan(&self.sojourn, q)
    }

    /// Mean sojourn (ns), NaN when none.
    pub fn sojourn_mean_ns(&self) -> f64 {
        self.sojourn.mean().unwrap_or(f64::NAN)
    }
}

/// Interval and window accounting of one bottleneck queue.
#[derive(Clone, Debug, Default)]
pub struct QueueMeter {
    in_window: bool,
    interval: QueueTally,
    window: QueueTally,
    pub series: QueueSeries,
}

impl QueueMeter {
    pub fn new() -> QueueMeter {
        QueueMeter::default()
    }

    /// Opens (true) or closes (false) the measurement window.
    pub fn set_in_window(&mut self, in_window: bool) {
        self.in_window = in_window;
    }

    /// Forgets the current interval (the series starts now).
    pub fn restart_interval(&mut self) {
        self.interval.clear();
    }

    /// A packet left the queue after `sojourn_ns`; `l4s` when it is L4S traffic.
    #[inline]
    pub fn departed(&mut self, sojourn_ns: u64, l4s: bool) {
        self.interval.departed(sojourn_ns, l4s);
        if self.in_window {
            self.window.departed(sojourn_ns, l4s);
        }
    }

    /// The queue discipline dropped a packet.
    #[inline]
    pub fn dropped(&mut self) {
        self.interval.drops += 1;
        self.window.drops += self.in_window as u64;
    }

    /// The queue discipline marked a packet CE.
    #[inline]
    pub fn marked(&mut self) {
        self.interval.marks += 1;
        self.window.marks += self.in_window as u64;
    }

    /// `wire_bytes` finished serializing on the link.
    #[inline]
    pub fn transmitted(&mut self, wire_bytes: u32) {
        self.interval.tx_bytes += wire_bytes as u64;
        if self.in_window {
            self.window.tx_bytes += wire_bytes as u64;
        }
    }

    /// Appends the row of the interval ending at `t_ns` with the backlog at that moment, and starts the next.
    pub fn sample(&mut self, t_ns: u64, backlog_bytes: u64, backlog_packets: u32) {
        let iv = &self.interval;
        let q = &mut self.series;
        q.t_ns.push(t_ns);
        q.backlog_bytes.push(backlog_bytes);
        q.backlog_packets.push(backlog_packets);
        q.sojourn_p50_ns.push(iv.sojourn_ns(0.5));
        q.sojourn_p99_ns.push(iv.sojourn_ns(0.99));
        q.sojourn_max_ns
            .push(iv.sojourn.max().map_or(f64::NAN, |x| x as f64));
        q.drops.push(iv.drops);
        q.marks.push(iv.marks);
        q.departures.push(iv.departures);
        q.tx_bytes.push(iv.tx_bytes);
        q.sojourn_l4s_p99_ns.push(quantile_or_nan(&iv.sojourn_l4s, 0.99));
        q.sojourn_classic_p99_ns
            .push(quantile_or_nan(&iv.sojourn_classic, 0.99));
        self.interval.clear();
    }

    /// The measurement window so far.
    pub fn window(&self) -> &QueueTally {
        &self.window
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interval_rows_and_window_tally() {
        let mut m = QueueMeter::new();
        // Sojourns below 64 ns are exact in the histogram.
        m.departed(10, false); // before the window
        m.dropped();
        m.sample(100, 3000, 2);
        m.set_in_window(true);
        m.departed(20, true);
        m.departed(40, false);
        m.marked();
        m.transmitted(1500);
        m.sample(200, 0, 0);
        m.set_in_window(false);
        m.dropped();
        m.sample(300, 0, 0);

        let q = &m.series;
        assert_eq!(q.t_ns, vec![100, 200, 300]);
        assert_eq!(q.backlog_packets, vec![2, 0, 0]);
        assert_eq!(q.drops, vec![1, 0, 1]);
        assert_eq!(q.marks, vec![0, 1, 0]);
        assert_eq!(q.departures, vec![1, 2, 0]);
        assert_eq!(q.tx_bytes, vec![0, 1500, 0]);
        assert_eq!(q.sojourn_max_ns[1], 40.0);
        assert!(
            q.sojourn_l4s_p99_ns[0].is_nan(),
            "no L4S packet in the first interval"
        );
        assert_eq!(q.sojourn_l4s_p99_ns[1], 20.0);
        assert!(
            q.sojourn_p50_ns[2].is_nan(),
            "an interval without departures has no sojourn"
        );

        let w = m.window();
        assert_eq!((w.drops, w.marks, w.departures, w.tx_bytes), (0, 1, 2, 1500));
        assert_eq!(w.sojourn_mean_ns(), 30.0);
        assert_eq!(quantile_or_nan(&w.sojourn_classic, 0.99), 40.0);
    }
}
