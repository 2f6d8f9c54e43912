//! Wall time for the emulator and the traffic programs: CLOCK_MONOTONIC, which every network namespace shares,
//! so the run epoch means the same instant to all of them. Emulator times are `ccfair_core::Time` (ns) since
//! the program started; the epoch arrives on standard input as an absolute CLOCK_MONOTONIC value.

use std::io::Read;
use std::os::fd::AsRawFd;

use ccfair_core::Time;

use crate::sys;

pub struct Clock {
    origin_ns: u64,
    /// CLOCK_REALTIME less CLOCK_MONOTONIC, read once: the kernel stamps received frames in realtime.
    realtime_offset_ns: i128,
}

impl Clock {
    pub fn new() -> Clock {
        Clock {
            origin_ns: sys::monotonic_ns(),
            realtime_offset_ns: realtime_offset_ns(),
        }
    }

    /// A CLOCK_REALTIME instant (a kernel receive stamp) as a time of this clock; an instant before the
    /// start is the start.
    #[inline]
    pub fn from_realtime(&self, realtime_ns: u64) -> Time {
        let monotonic = realtime_ns as i128 - self.realtime_offset_ns;
        Time::from_ns((monotonic - self.origin_ns as i128).max(0) as u64)
    }

    #[inline]
    pub fn now(&self) -> Time {
        Time::from_ns(sys::monotonic_ns() - self.origin_ns)
    }

    /// An absolute CLOCK_MONOTONIC instant as a time of this clock (an instant before the start is an error).
    pub fn at(&self, monotonic_ns: u64) -> Result<Time, String> {
        monotonic_ns
            .checked_sub(self.origin_ns)
            .map(Time::from_ns)
            .ok_or_else(|| "the epoch is before this program started".to_string())
    }
}

/// CLOCK_REALTIME − CLOCK_MONOTONIC, from the closest of a few bracketing reads (a read pair split by a
/// preemption would be off by the preemption).
fn realtime_offset_ns() -> i128 {
    let mut best: Option<(u64, i128)> = None;
    for _ in 0..5 {
        let a = sys::monotonic_ns();
        let r = sys::realtime_ns();
        let b = sys::monotonic_ns();
        let offset = r as i128 - (a as i128 + b as i128) / 2;
        if best.is_none_or(|(gap, _)| b - a < gap) {
            best = Some((b - a, offset));
        }
    }
    best.map_or(0, |(_, offset)| offset)
}

impl Default for Clock {
    fn default() -> Self {
        Clock::new()
    }
}

/// The orchestrator's commands on standard input: `go <epoch>`; end of input means it is gone (the run is
/// abandoned, so every program exits rather than outlive it).
pub struct Control {
    buf: Vec<u8>,
}

pub enum Command {
    Go(u64),
    Gone,
}

impl Control {
    pub fn new() -> Control {
        Control {
            buf: Vec::with_capacity(64),
        }
    }

    pub fn fd(&self) -> i32 {
        std::io::stdin().as_raw_fd()
    }

    /// Reads what is available (call when stdin polled readable); returns a complete command, if any.
    pub fn read(&mut self) -> Result<Option<Command>, String> {
        let mut chunk = [0u8; 64];
        let n = std::io::stdin()
            .lock()
            .read(&mut chunk)
            .map_err(|e| format!("stdin: {e}"))?;
        if n == 0 {
            return Ok(Some(Command::Gone));
        }
        self.buf.extend_from_slice(&chunk[..n]);
        let Some(end) = self.buf.iter().position(|&b| b == b'\n') else {
            return Ok(None);
        };
        let line = String::from_utf8_lossy(&self.buf[..end]).trim().to_string();
        self.buf.drain(..=end);
        match line.split_once(' ') {
            Some(("go", t)) => t
                .parse()
                .map(|t| Some(Command::Go(t)))
                .map_err(|_| format!("bad epoch {t:?}")),
            _ => Err(format!("unknown command {line:?}")),
        }
    }
}

impl Default for Control {
    fn default() -> Self {
        Control::new()
    }
}

/// Tells the orchestrator this program is ready for `go`.
pub fn announce_ready() {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "ready");
    let _ = out.flush();
}

/// Writes `value` as JSON to `path` atomically (a temporary sibling renamed into place).
pub fn write_json<T: serde::Serialize>(path: &str, value: &T) -> Result<(), String> {
    let tmp = format!("{path}.tmp");
    let text = serde_json::to_vec(value).map_err(|e| format!("{path}: {e}"))?;
    std::fs::write(&tmp, text).map_err(|e| format!("{tmp}: {e}"))?;
    std::fs::rename(&tmp, path).map_err(|e| format!("{path}: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_realtime_stamp_reads_as_the_same_instant_of_the_clock() {
        let clock = Clock::new();
        std::thread::sleep(std::time::Duration::from_millis(2));
        let before = clock.now();
        let stamp = clock.from_realtime(sys::realtime_ns());
        let after = clock.now();
        // The two clocks tick together; the offset was read to within a clock read or two.
        const SLACK_NS: u64 = 50_000;
        assert!(before.ns() <= stamp.ns() + SLACK_NS && stamp.ns() <= after.ns() + SLACK_NS);
        assert!(stamp.ns() + SLACK_NS >= 2_000_000);
        // A stamp from before the clock started is its start.
        assert_eq!(
            clock.from_realtime(sys::realtime_ns() - 10_000_000_000),
            Time::ZERO
        );
    }
}
