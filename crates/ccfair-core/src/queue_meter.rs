//! What a bottleneck queue reports, per interval (the queue time series) and over the measurement window:
//! the sojourn of the packets that left it (p50/p99/max, and p99 split into L4S and classic traffic), drops,
//! CE marks, departures and wire bytes sent. The simulator and the kernel backend's emulator both measure
//! their bottleneck through this one meter, so the two backends' queue tables mean the same.
//!
//! L4S traffic is what a DualQ classifier would steer to its L4S queue (ECT(1), RFC 9331); its p99 and the
//! classic traffic's are the per-queue delays of a DualPI2 bottleneck and NaN in an interval with no such
//! packet. Nothing here allocates per packet: histograms are fixed-size, rows are appended per interval.

use crate::LogHistogram;
use crate::output::QueueRow;
pub use crate::output::QueueSeries;

/// A quantile of `h` in ns, NaN when it is empty.
pub fn quantile_or_nan(h: &LogHistogram, q: f64) -> f64 {
    h.quantile(q).map_or(f64::NAN, |x| x as f64)
}

/// What the queue did over a span of time (an interval or the measurement window). The sojourns are recorded
/// per class only; the distribution of all departures is the two merged, when a row or the totals need it.
#[derive(Clone, Debug, Default)]
pub struct QueueTally {
    pub sojourn_l4s: LogHistogram,
    pub sojourn_classic: LogHistogram,
    pub drops: u64,
    pub marks: u64,
    pub departures: u64,
    pub tx_bytes: u64,
}

impl QueueTally {
    fn clear(&mut self) {
        self.sojourn_l4s.clear();
        self.sojourn_classic.clear();
        self.drops = 0;
        self.marks = 0;
        self.departures = 0;
        self.tx_bytes = 0;
    }

    /// Adds the departures of `recent` (their sojourns and count) as if each had been recorded here.
    fn add_departures(&mut self, recent: &QueueTally) {
        self.sojourn_l4s.merge(&recent.sojourn_l4s);
        self.sojourn_classic.merge(&recent.sojourn_classic);
        self.departures += recent.departures;
    }

    /// The sojourns of all departures: the L4S and the classic ones together.
    pub fn sojourn(&self) -> LogHistogram {
        let mut all = self.sojourn_classic.clone();
        all.merge(&self.sojourn_l4s);
        all
    }

    /// Sojourn quantile `q` of all departures (ns), NaN when none.
    pub fn sojourn_ns(&self, q: f64) -> f64 {
        quantile_or_nan(&self.sojourn(), q)
    }

    /// Mean sojourn (ns), NaN when none.
    pub fn sojourn_mean_ns(&self) -> f64 {
        self.sojourn().mean().unwrap_or(f64::NAN)
    }
}

/// The part `part_ns` of `whole_ns` of a packet of `wire_bytes` (rounded down; all of it when `whole_ns` is 0).
fn prorated(wire_bytes: u32, part_ns: u64, whole_ns: u64) -> u64 {
    if whole_ns == 0 {
        return wire_bytes as u64;
    }
    (wire_bytes as u128 * part_ns.min(whole_ns) as u128 / whole_ns as u128) as u64
}

/// Interval and window accounting of one bottleneck queue.
///
/// A departure is recorded once, in `recent` (its sojourn and count), which joins the interval and, while it
/// is open, the window at their next edge (a row, the window opening or closing): one histogram update per
/// departure instead of two, with the same tallies (a merge adds exactly what recording each would have).
#[derive(Clone, Debug, Default)]
pub struct QueueMeter {
    in_window: bool,
    /// When the window opened (ns): a packet already serializing then counts only its bits after it.
    window_open_ns: u64,
    /// When the window closed (ns), until the packet serializing then has finished and counted its bits
    /// before it.
    window_close_ns: Option<u64>,
    /// Departures since the last edge of the interval or the window (only their sojourns and count are kept).
    recent: QueueTally,
    interval: QueueTally,
    window: QueueTally,
    pub series: QueueSeries,
}

impl QueueMeter {
    pub fn new() -> QueueMeter {
        QueueMeter::default()
    }

    /// Opens (true) or closes (false) the measurement window at `now_ns`.
    pub fn set_in_window(&mut self, in_window: bool, now_ns: u64) {
        self.flush_recent();
        self.in_window = in_window;
        if in_window {
            self.window_open_ns = now_ns;
            self.window_close_ns = None;
        } else {
            self.window_close_ns = Some(now_ns);
        }
    }

    /// Forgets the current interval (the series starts now).
    pub fn restart_interval(&mut self) {
        self.flush_recent();
        self.interval.clear();
    }

    /// A packet left the queue after `sojourn_ns`; `l4s` when it is L4S traffic.
    #[inline]
    pub fn departed(&mut self, sojourn_ns: u64, l4s: bool) {
        let r = &mut self.recent;
        if l4s {
            &mut r.sojourn_l4s
        } else {
            &mut r.sojourn_classic
        }
        .record(sojourn_ns);
        r.departures += 1;
    }

    /// The departures since the last edge join the interval and, if it is open, the window.
    fn flush_recent(&mut self) {
        if self.recent.departures == 0 {
            return;
        }
        self.interval.add_departures(&self.recent);
        if self.in_window {
            self.window.add_departures(&self.recent);
        }
        self.recent.clear();
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

    /// `wire_bytes` finished serializing on the link at `end_ns`, having started at `start_ns`.
    ///
    /// The window counts the bits that crossed the link inside it: a packet serializing when the window
    /// opens or closes counts in proportion, so the window's bytes never exceed its length times the rate
    /// (counting whole packets at their end would add up to one packet's worth on a saturated link).
    #[inline]
    pub fn transmitted(&mut self, wire_bytes: u32, start_ns: u64, end_ns: u64) {
        self.interval.tx_bytes += wire_bytes as u64;
        if self.in_window {
            self.window.tx_bytes += if start_ns < self.window_open_ns {
                prorated(wire_bytes, end_ns - self.window_open_ns, end_ns - start_ns)
            } else {
                wire_bytes as u64
            };
        } else if let Some(close_ns) = self.window_close_ns.take()
            && start_ns < close_ns
        {
            self.window.tx_bytes += prorated(wire_bytes, close_ns - start_ns, end_ns - start_ns);
        }
    }

    /// Appends the row of the interval ending at `t_ns` with the backlog at that moment, and starts the next.
    pub fn sample(&mut self, t_ns: u64, backlog_bytes: u64, backlog_packets: u32) {
        self.flush_recent();
        let iv = &self.interval;
        let sojourn = iv.sojourn();
        self.series.push(QueueRow {
            t_ns,
            backlog_bytes,
            backlog_packets,
            sojourn_p50_ns: quantile_or_nan(&sojourn, 0.5),
            sojourn_p99_ns: quantile_or_nan(&sojourn, 0.99),
            sojourn_max_ns: sojourn.max().map_or(f64::NAN, |x| x as f64),
            drops: iv.drops,
            marks: iv.marks,
            departures: iv.departures,
            tx_bytes: iv.tx_bytes,
            sojourn_l4s_p99_ns: quantile_or_nan(&iv.sojourn_l4s, 0.99),
            sojourn_classic_p99_ns: quantile_or_nan(&iv.sojourn_classic, 0.99),
        });
        self.interval.clear();
    }

    /// The measurement window so far (with the departures since its last edge while it is open).
    pub fn window(&self) -> QueueTally {
        let mut w = self.window.clone();
        if self.in_window {
            w.add_departures(&self.recent);
        }
        w
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
        m.set_in_window(true, 100);
        m.departed(20, true);
        m.departed(40, false);
        m.marked();
        m.transmitted(1500, 120, 150);
        m.sample(200, 0, 0);
        m.set_in_window(false, 200);
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

    #[test]
    fn an_open_window_counts_the_departures_since_its_last_edge() {
        let mut m = QueueMeter::new();
        m.departed(10, false);
        m.set_in_window(true, 0);
        m.departed(20, false);
        m.sample(100, 0, 0);
        m.departed(30, true);
        m.departed(40, true);
        let w = m.window();
        assert_eq!(w.departures, 3);
        assert_eq!(w.sojourn_mean_ns(), 30.0);
        assert_eq!(w.sojourn_l4s.max(), Some(40));
        assert_eq!(m.series.departures, vec![2]);
        m.sample(200, 0, 0);
        assert_eq!(m.series.departures, vec![2, 2]);
        assert_eq!(m.window().departures, 3);
    }

    #[test]
    fn packets_serializing_at_the_window_edges_count_their_bits_inside_it() {
        let mut m = QueueMeter::new();
        m.set_in_window(true, 1000);
        m.transmitted(1500, 700, 1300); // half of it after the window opened
        m.transmitted(1500, 1300, 1900);
        m.set_in_window(false, 2000);
        m.transmitted(1500, 1900, 2500); // a sixth before it closed
        m.transmitted(1500, 2500, 3100); // after it: not counted
        assert_eq!(m.window().tx_bytes, 750 + 1500 + 250);
        assert_eq!(m.series.tx_bytes.len(), 0);
        m.sample(3200, 0, 0);
        assert_eq!(m.series.tx_bytes, vec![6000], "the interval counts whole packets");
    }
}
