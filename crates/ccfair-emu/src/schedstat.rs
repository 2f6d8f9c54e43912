//! How long the calling thread ran on a CPU and how long it waited, runnable, for one
//! (`/proc/thread-self/schedstat`: run time, run-queue wait, timeslices; `proc_pid_schedstat` in
//! fs/proc/base.c, kept by `sched_info_*` in kernel/sched/stats.h). The sender and receiver programs read it
//! at the measurement window's edges: a program that waited for a CPU a large part of the window ran on a host
//! too busy to keep its TCP endpoints' timing (their ACK processing and reads are delayed by the scheduler, not
//! by the network), so the run says more about this host's load than about the congestion controls.

use serde::Serialize;

/// Cumulative run and wait time of a thread, ns.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct SchedStat {
    pub run_ns: u64,
    pub wait_ns: u64,
}

impl SchedStat {
    /// Parses the file's text (`RUN_NS WAIT_NS SLICES`); None if it is not three numbers.
    pub fn parse(text: &str) -> Option<SchedStat> {
        let mut it = text.split_whitespace().map(str::parse::<u64>);
        let (Some(Ok(run_ns)), Some(Ok(wait_ns)), Some(Ok(_)), None) =
            (it.next(), it.next(), it.next(), it.next())
        else {
            return None;
        };
        Some(SchedStat { run_ns, wait_ns })
    }

    /// The calling thread's statistics; None where the kernel does not keep them (no CONFIG_SCHED_INFO).
    pub fn of_this_thread() -> Option<SchedStat> {
        std::fs::read_to_string("/proc/thread-self/schedstat")
            .ok()
            .as_deref()
            .and_then(SchedStat::parse)
    }

    /// What accrued between `start` and `end`; None unless both are known.
    pub fn since(end: Option<SchedStat>, start: Option<SchedStat>) -> Option<SchedStat> {
        let (e, s) = (end?, start?);
        Some(SchedStat {
            run_ns: e.run_ns.saturating_sub(s.run_ns),
            wait_ns: e.wait_ns.saturating_sub(s.wait_ns),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_three_fields_and_refuses_anything_else() {
        let s = SchedStat::parse("1500 250 7\n").unwrap();
        assert_eq!((s.run_ns, s.wait_ns), (1500, 250));
        assert_eq!(SchedStat::parse("1500 250"), None);
        assert_eq!(SchedStat::parse("1500 x 7"), None);
        assert_eq!(SchedStat::parse("1 2 3 4"), None);
    }

    #[test]
    fn the_window_is_the_difference_and_unknown_when_either_edge_is() {
        let a = SchedStat {
            run_ns: 100,
            wait_ns: 40,
        };
        let b = SchedStat {
            run_ns: 350,
            wait_ns: 90,
        };
        assert_eq!(
            SchedStat::since(Some(b), Some(a)),
            Some(SchedStat {
                run_ns: 250,
                wait_ns: 50
            })
        );
        assert_eq!(SchedStat::since(Some(b), None), None);
        assert_eq!(SchedStat::since(None, Some(a)), None);
    }

    #[test]
    fn this_thread_has_statistics_on_linux_with_sched_info() {
        // Not every kernel keeps them; where the file exists, running code makes the run time grow. The
        // kernel brings a thread's run time up to date when it leaves the CPU: spin a while, then sleep.
        let Some(first) = SchedStat::of_this_thread() else {
            return;
        };
        let clock = crate::clock::Clock::new();
        let start = clock.now();
        let mut x = 0u64;
        while clock.now().saturating_since(start).ns() < 20_000_000 {
            x = std::hint::black_box(x.wrapping_add(1));
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
        assert!(SchedStat::of_this_thread().unwrap().run_ns > first.run_ns);
    }
}
