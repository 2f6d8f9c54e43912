//! What both recorders (the simulator's and the kernel backend's emulator) count: per-flow counters with
//! their snapshots at the measurement window's edges and at each interval's sample, the flows' RTT samples
//! over the window, the run's drop and send counts and the bottleneck queue's [`QueueMeter`]. Each recorder
//! adds only what its backend alone sees (the simulator its series of sender state, the emulator its RTT
//! timing and its lateness). Nothing here allocates per packet.

use crate::output::{FlowCounters, Totals};
use crate::queue_meter::quantile_or_nan;
use crate::{LogHistogram, QueueMeter};

#[derive(Clone, Debug, Default)]
pub struct RunMeter {
    counters: Vec<FlowCounters>,
    at_window_start: Vec<FlowCounters>,
    at_window_end: Vec<FlowCounters>,
    /// Per-flow counters at the previous sample.
    at_last_sample: Vec<FlowCounters>,
    rtt_hist: Vec<LogHistogram>,
    in_window: bool,
    window_done: bool,
    /// Run-wide counts (whole run).
    sent_segments: u64,
    queue_drops: u64,
    path_drops: u64,
    /// Random-loss drops on the paths during the window (the queue's are in the queue meter).
    window_path_drops: u64,
    /// The bottleneck queue, per interval and over the window.
    pub queue: QueueMeter,
}

impl RunMeter {
    /// A meter for `n_flows` flows.
    pub fn new(n_flows: usize) -> RunMeter {
        RunMeter::try_new(n_flows, "flows").expect("the per-flow counters fit in memory")
    }

    /// A meter for `n_flows` flows, its per-flow state reserved fallibly: an error on `field` (what drives
    /// the flow count) if the allocator refuses it.
    pub fn try_new(n_flows: usize, field: &str) -> Result<RunMeter, crate::FieldError> {
        let per_flow = |what: &str| -> Result<Vec<FlowCounters>, crate::FieldError> {
            let mut v = Vec::new();
            crate::error::try_reserve(&mut v, n_flows, field, what)?;
            v.resize(n_flows, FlowCounters::default());
            Ok(v)
        };
        let mut rtt_hist = Vec::new();
        crate::error::try_reserve(&mut rtt_hist, n_flows, field, "the flows' RTT histograms")?;
        rtt_hist.extend((0..n_flows).map(|_| LogHistogram::new()));
        Ok(RunMeter {
            counters: per_flow("the flows' counters")?,
            at_window_start: per_flow("the flows' counters")?,
            at_window_end: per_flow("the flows' counters")?,
            at_last_sample: per_flow("the flows' counters")?,
            rtt_hist,
            ..RunMeter::default()
        })
    }

    pub fn flows(&self) -> usize {
        self.counters.len()
    }

    pub fn counters(&self, flow: u32) -> &FlowCounters {
        &self.counters[flow as usize]
    }

    pub fn in_window(&self) -> bool {
        self.in_window
    }

    /// A data segment of `flow` was sent (the emulator: reached the bottleneck).
    #[inline]
    pub fn sent(&mut self, flow: u32, retransmit: bool) {
        let c = &mut self.counters[flow as usize];
        c.sent_segments += 1;
        c.retransmitted_segments += retransmit as u64;
        self.sent_segments += 1;
    }

    /// The bottleneck queue dropped a segment of `flow`.
    #[inline]
    pub fn queue_drop(&mut self, flow: u32) {
        self.counters[flow as usize].queue_drops += 1;
        self.queue_drops += 1;
        self.queue.dropped();
    }

    /// The path's random loss dropped a segment of `flow`.
    #[inline]
    pub fn path_drop(&mut self, flow: u32) {
        self.counters[flow as usize].path_drops += 1;
        self.path_drops += 1;
        self.window_path_drops += self.in_window as u64;
    }

    /// The bottleneck CE-marked a segment of `flow`.
    #[inline]
    pub fn marked(&mut self, flow: u32) {
        self.counters[flow as usize].ce_marks += 1;
        self.queue.marked();
    }

    /// `bytes` of `flow`'s payload reached the application in order.
    #[inline]
    pub fn delivered(&mut self, flow: u32, bytes: u64) {
        self.counters[flow as usize].delivered_bytes += bytes;
    }

    /// `flow`'s sender began `n` window reductions (Recovery, CWR, a new Loss episode).
    #[inline]
    pub fn cwnd_reductions(&mut self, flow: u32, n: u64) {
        self.counters[flow as usize].cwnd_reductions += n;
    }

    /// `flow`'s retransmission timer fired.
    #[inline]
    pub fn rto(&mut self, flow: u32) {
        self.counters[flow as usize].rto_events += 1;
    }

    /// An RTT sample of `flow`; kept when the window is open.
    #[inline]
    pub fn rtt(&mut self, flow: u32, rtt_ns: u64) {
        if self.in_window {
            self.rtt_hist[flow as usize].record(rtt_ns);
        }
    }

    /// The measurement window opens at `now_ns`.
    pub fn window_start(&mut self, now_ns: u64) {
        self.at_window_start.copy_from_slice(&self.counters);
        self.in_window = true;
        self.queue.set_in_window(true, now_ns);
    }

    /// The measurement window closes at `now_ns`.
    pub fn window_end(&mut self, now_ns: u64) {
        self.at_window_end.copy_from_slice(&self.counters);
        self.in_window = false;
        self.queue.set_in_window(false, now_ns);
        self.window_done = true;
    }

    /// `flow`'s counters since the last [`RunMeter::sampled`].
    #[inline]
    pub fn since_sample(&self, flow: u32) -> FlowCounters {
        let i = flow as usize;
        self.counters[i].minus(self.at_last_sample[i])
    }

    /// The interval's rows are taken: the next interval counts from here.
    pub fn sampled(&mut self) {
        self.at_last_sample.copy_from_slice(&self.counters);
    }

    /// `flow`'s counters over the measurement window (up to now while it is open).
    pub fn window(&self, flow: u32) -> FlowCounters {
        let i = flow as usize;
        let end = if self.window_done {
            self.at_window_end[i]
        } else {
            self.counters[i]
        };
        end.minus(self.at_window_start[i])
    }

    /// `flow`'s RTT histogram (for prefetch hints; its figures: [`RunMeter::rtt_stats`]).
    pub fn rtt_histogram(&self, flow: u32) -> &LogHistogram {
        &self.rtt_hist[flow as usize]
    }

    /// `flow`'s RTT samples in the window: (count, mean ns, p99 ns), NaN without samples.
    pub fn rtt_stats(&self, flow: u32) -> (u64, f64, f64) {
        let h = &self.rtt_hist[flow as usize];
        (h.count(), h.mean().unwrap_or(f64::NAN), quantile_or_nan(h, 0.99))
    }

    /// The totals both backends measure the same way (the window's queue and drops, the run's sends and
    /// drops); the rest stays as given.
    pub fn totals(&self, base: Totals) -> Totals {
        let w = self.queue.window();
        Totals {
            window_link_tx_bytes: w.tx_bytes,
            window_queue_drops: w.drops,
            window_path_drops: self.window_path_drops,
            window_marks: w.marks,
            window_sojourn_p50_ns: w.sojourn_ns(0.5),
            window_sojourn_p99_ns: w.sojourn_ns(0.99),
            window_sojourn_mean_ns: w.sojourn_mean_ns(),
            window_sojourn_l4s_p99_ns: quantile_or_nan(&w.sojourn_l4s, 0.99),
            window_sojourn_classic_p99_ns: quantile_or_nan(&w.sojourn_classic, 0.99),
            window_departures: w.departures,
            sent_segments: self.sent_segments,
            queue_drops: self.queue_drops,
            path_drops: self.path_drops,
            ..base
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn window_and_sample_snapshots() {
        let mut m = RunMeter::new(2);
        m.sent(0, false);
        m.queue_drop(1);
        m.rtt(0, 10); // before the window: not kept
        assert_eq!(m.since_sample(1).queue_drops, 1);
        m.sampled();
        assert_eq!(m.since_sample(1), FlowCounters::default());
        m.window_start(0);
        m.sent(0, true);
        m.path_drop(0);
        m.marked(1);
        m.delivered(1, 1448);
        m.rto(0);
        m.cwnd_reductions(0, 2);
        m.rtt(0, 20);
        m.rtt(0, 40);
        assert_eq!(m.window(0).sent_segments, 1, "the window counts while open");
        m.window_end(100);
        m.sent(0, false);
        m.path_drop(0);
        let w0 = m.window(0);
        assert_eq!((w0.sent_segments, w0.retransmitted_segments), (1, 1));
        assert_eq!((w0.path_drops, w0.rto_events, w0.cwnd_reductions), (1, 1, 2));
        assert_eq!(m.counters(0).sent_segments, 3);
        assert_eq!(m.window(1).ce_marks, 1);
        assert_eq!(m.window(1).delivered_bytes, 1448);
        assert_eq!(m.rtt_stats(0), (2, 30.0, 40.0));
        let t = m.totals(Totals {
            events: 7,
            ..Totals::default()
        });
        assert_eq!(t.events, 7);
        assert_eq!((t.sent_segments, t.queue_drops, t.path_drops), (3, 1, 2));
        assert_eq!(
            (t.window_path_drops, t.window_marks, t.window_queue_drops),
            (1, 1, 0)
        );
    }
}
