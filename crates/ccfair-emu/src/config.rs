//! The JSON configurations the Python orchestrator (`ccfair.emu`) writes for each program, and the run's
//! schedule they share. Every time is in nanoseconds relative to the run epoch, which the orchestrator sends on
//! standard input (`go <CLOCK_MONOTONIC ns>`) once every program is ready.

use ccfair_aqm::AqmConfig;
use serde::Deserialize;

/// When the interval rows and the measurement window's edges fall, relative to the epoch.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Schedule {
    pub duration_ns: u64,
    pub interval_ns: u64,
    pub measure_start_ns: u64,
    pub measure_end_ns: u64,
}

/// A point of the schedule.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Mark {
    /// The end of interval k (1-based): append a row.
    Sample,
    WindowStart,
    WindowEnd,
}

impl Schedule {
    pub fn check(&self) -> Result<(), String> {
        if self.interval_ns == 0 || self.interval_ns > self.duration_ns {
            return Err("interval_ns must be positive and at most duration_ns".into());
        }
        if self.measure_start_ns >= self.measure_end_ns || self.measure_end_ns > self.duration_ns {
            return Err("measure window needs start < end <= duration".into());
        }
        Ok(())
    }

    /// Every mark in time order (ns after the epoch); at equal times a row comes before a window edge.
    pub fn marks(&self) -> Vec<(u64, Mark)> {
        let n = self.duration_ns / self.interval_ns;
        let mut v: Vec<(u64, Mark)> = (1..=n).map(|k| (k * self.interval_ns, Mark::Sample)).collect();
        v.push((self.measure_start_ns, Mark::WindowStart));
        v.push((self.measure_end_ns, Mark::WindowEnd));
        v.sort();
        v
    }
}

/// One flow's path through the emulator.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FlowPath {
    pub data_delay_ns: u64,
    pub ack_delay_ns: u64,
    #[serde(default)]
    pub loss: f64,
    /// The scenario's flow group (the edge marker's weights are per group).
    #[serde(default)]
    pub group: u32,
}

/// `ccfair-emu forward`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ForwardConfig {
    /// The router's interface towards the senders.
    pub sender_if: String,
    /// The router's interface towards the receiver.
    pub receiver_if: String,
    pub rate_bps: u64,
    pub mtu_bytes: u32,
    pub aqm: AqmConfig,
    /// Flow i's receiver listens on `port_base + i`.
    pub port_base: u16,
    pub flows: Vec<FlowPath>,
    #[serde(flatten)]
    pub schedule: Schedule,
    #[serde(default)]
    pub seed: u64,
    /// Run under SCHED_FIFO (root): fewer late wakeups when the host is busy.
    #[serde(default)]
    pub realtime: bool,
    /// Busy-wait this long before a deadline instead of sleeping through it (0: always sleep).
    #[serde(default)]
    pub spin_ns: u64,
    /// A frame's time at the emulator starts at the kernel's arrival stamp (never before the last instant
    /// the loop has run the link to), not when the loop reads it: the read's wait is then not on the path.
    #[serde(default)]
    pub arrival_at_stamp: bool,
    /// CPUs to run on (empty: any).
    #[serde(default)]
    pub cpus: Vec<usize>,
    pub out: String,
}

/// One bulk flow of `ccfair-emu send`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SendFlow {
    pub dst: std::net::Ipv4Addr,
    pub port: u16,
    pub cc: String,
    pub start_ns: u64,
    /// When the application stops writing; None = the end of the run.
    pub stop_ns: Option<u64>,
    #[serde(default)]
    pub pacing: bool,
    /// Bytes to write, then shut down the sending side; None = write until the stop.
    #[serde(default)]
    pub size_bytes: Option<u64>,
}

/// `ccfair-emu send`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SendConfig {
    pub flows: Vec<SendFlow>,
    /// CPUs to run on (empty: any).
    #[serde(default)]
    pub cpus: Vec<usize>,
    #[serde(flatten)]
    pub schedule: Schedule,
    pub out: String,
}

/// `ccfair-emu recv`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecvConfig {
    /// Flow i is whatever connects to `ports[i]`.
    pub ports: Vec<u16>,
    /// Flow i's size in bytes, whose last byte read is its completion (0 or missing: a bulk flow).
    #[serde(default)]
    pub sizes: Vec<u64>,
    /// CPUs to run on (empty: any).
    #[serde(default)]
    pub cpus: Vec<usize>,
    #[serde(flatten)]
    pub schedule: Schedule,
    pub out: String,
}

/// Pins this process to `cpus` (no-op when empty); a failure is a warning, the run goes on.
pub fn pin(cpus: &[usize], who: &str) {
    if !cpus.is_empty()
        && let Err(e) = crate::sys::set_affinity(cpus)
    {
        eprintln!("ccfair-emu {who}: warning: cannot pin to CPUs {cpus:?}: {e}");
    }
}

/// Reads and parses a configuration file.
pub fn load<T: for<'de> Deserialize<'de>>(path: &str) -> Result<T, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?;
    serde_json::from_str(&text).map_err(|e| format!("{path}: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marks_are_ordered_with_rows_before_edges() {
        let s = Schedule {
            duration_ns: 300,
            interval_ns: 100,
            measure_start_ns: 100,
            measure_end_ns: 300,
        };
        assert_eq!(
            s.marks(),
            vec![
                (100, Mark::Sample),
                (100, Mark::WindowStart),
                (200, Mark::Sample),
                (300, Mark::Sample),
                (300, Mark::WindowEnd)
            ]
        );
        assert!(s.check().is_ok());
        assert!(
            Schedule {
                interval_ns: 0,
                ..s.clone()
            }
            .check()
            .is_err()
        );
        assert!(
            Schedule {
                measure_end_ns: 400,
                ..s
            }
            .check()
            .is_err()
        );
    }
}
