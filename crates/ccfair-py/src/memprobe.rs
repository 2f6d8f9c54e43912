//! What one cache line of memory costs on this machine, at a given working set (`ccfair bench --memory`).
//!
//! The simulation's cost per event depends on where its flows' state sits: a few thousand flows fit in a
//! last-level cache of tens of MB, 100,000 flows (about 500 MB) do not, and each event then reads about ten
//! lines from DRAM. How much that costs is a property of the machine (and, in a VM, of what its neighbours
//! do with the shared cache), not of the simulation, so the benchmark measures it beside its events per
//! second. Three access patterns over a working set of 64-byte lines, each line visited in random order:
//!
//! - `dependent`: each read's address comes from the line read before (a random cycle through every line):
//!   the full latency of one miss, what an event pays for a miss whose address it learns from a miss.
//! - `overlapped`: independent random read-modify-writes, the core overlapping as many misses as its
//!   out-of-order window holds: the cost of misses whose addresses are known ahead.
//! - `prefetched`: the same, with a prefetch hint issued [`PREFETCH_AHEAD`] accesses ahead: the most this
//!   machine's memory delivers to one core for random lines, the floor the simulation's own prefetching can
//!   approach.
//!
//! The random indices come from a [`Rng`] stream (two in step for `prefetched`), whose instructions are in
//! every figure; in a working set that fits in the first-level caches that is most of the cost. This module
//! makes the accesses; the binding's `memory_probe` times them (with the simulator's prefetch hint, so `prefetched`
//! asks for lines as the simulation does).

use ccfair_core::Rng;
use ccfair_core::rng::StreamId;

use ccfair_sim::prefetch;

/// How far ahead `prefetched` asks for its lines: enough accesses to keep a core's miss buffers full
/// (a DRAM miss takes 100 to 400 ns, an access a few ns once its line is there).
pub const PREFETCH_AHEAD: usize = 32;

/// Bytes of one line (the unit of every figure).
pub const LINE_BYTES: usize = 64;

/// The smallest working set: fewer lines would measure nothing.
pub const MIN_WORKING_SET_BYTES: usize = 64 * LINE_BYTES;

/// One cache line, aligned as the caches see it.
#[derive(Clone, Copy, Default)]
#[repr(align(64))]
struct Line([u64; 8]);

/// The three access patterns (see the module docs). The caller times them: the crate has no wall clock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pattern {
    Dependent,
    Overlapped,
    Prefetched,
}

/// A working set of whole lines, linked into one random cycle, touched once (its page faults paid).
pub struct WorkingSet {
    lines: Vec<Line>,
    seed: u64,
}

impl WorkingSet {
    /// `bytes` rounded down to whole lines, at least [`MIN_WORKING_SET_BYTES`]; the random order is drawn
    /// from `seed`. While it is built, a 4-byte index per line is held beside it.
    pub fn new(bytes: usize, seed: u64) -> WorkingSet {
        let lines = (bytes / LINE_BYTES).max(MIN_WORKING_SET_BYTES / LINE_BYTES);
        assert!(
            lines <= u32::MAX as usize,
            "a working set of {bytes} bytes has more lines than a 32-bit index reaches"
        );
        WorkingSet {
            lines: random_cycle(lines, seed),
            seed,
        }
    }

    pub fn bytes(&self) -> usize {
        self.lines.len() * LINE_BYTES
    }

    /// Makes `accesses` accesses in `pattern`; returns a value that depends on all of them, for the caller
    /// to keep (so that the compiler keeps them too).
    pub fn access(&mut self, pattern: Pattern, accesses: usize) -> u64 {
        let kept = match pattern {
            Pattern::Dependent => chase(&self.lines, accesses),
            Pattern::Overlapped => scatter(&mut self.lines, accesses, self.seed, 0),
            Pattern::Prefetched => scatter(&mut self.lines, accesses, self.seed, PREFETCH_AHEAD),
        };
        // The lines escape, so no store to them counts as dead to the optimizer.
        std::hint::black_box(&mut self.lines);
        kept
    }
}

/// `lines` lines whose first words link them into one cycle through all of them in random order
/// (Sattolo's shuffle: every permutation it makes is a single cycle).
fn random_cycle(lines: usize, seed: u64) -> Vec<Line> {
    let mut rng = Rng::stream(seed, StreamId::Other(0));
    let mut next: Vec<u32> = (0..lines as u32).collect();
    for i in (1..lines).rev() {
        let j = rng.below_u64(i as u64) as usize;
        next.swap(i, j);
    }
    next.iter()
        .map(|&n| Line([n as u64, 0, 0, 0, 0, 0, 0, 0]))
        .collect()
}

/// Follows the cycle for `accesses` steps.
fn chase(memory: &[Line], accesses: usize) -> u64 {
    let mut at = 0usize;
    for _ in 0..accesses {
        at = memory[at].0[0] as usize;
    }
    at as u64
}

/// Adds one to the second word of `accesses` random lines; with `ahead` > 0 a second stream of the same
/// draws, `ahead` accesses in front, asks for each line before it is used.
fn scatter(memory: &mut [Line], accesses: usize, seed: u64, ahead: usize) -> u64 {
    let n = memory.len() as u64;
    let mut rng = Rng::stream(seed, StreamId::Other(1));
    let mut lead = rng.clone();
    for _ in 0..ahead {
        prefetch::line(memory[lead.below_u64(n) as usize].0.as_ptr().cast());
    }
    for _ in 0..accesses {
        if ahead > 0 {
            prefetch::line(memory[lead.below_u64(n) as usize].0.as_ptr().cast());
        }
        let line = &mut memory[rng.below_u64(n) as usize];
        line.0[1] = line.0[1].wrapping_add(1);
    }
    memory.iter().take(8).map(|l| l.0[1]).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cycle_visits_every_line_once() {
        for lines in [2usize, 3, 64, 1000] {
            let memory = random_cycle(lines, 7);
            let mut seen = vec![false; lines];
            let mut at = 0usize;
            for _ in 0..lines {
                assert!(!seen[at], "line {at} visited twice in a cycle of {lines}");
                seen[at] = true;
                at = memory[at].0[0] as usize;
            }
            assert_eq!(at, 0, "the cycle of {lines} lines does not close");
        }
    }

    #[test]
    fn scatter_makes_every_access_once_with_or_without_hints() {
        for ahead in [0, PREFETCH_AHEAD] {
            let mut memory = vec![Line::default(); 100];
            scatter(&mut memory, 5000, 3, ahead);
            let total: u64 = memory.iter().map(|l| l.0[1]).sum();
            assert_eq!(total, 5000, "ahead {ahead}");
        }
    }

    #[test]
    fn a_working_set_is_whole_lines_and_every_pattern_runs_its_accesses() {
        assert_eq!(
            WorkingSet::new(100_000, 1).bytes(),
            100_000 / LINE_BYTES * LINE_BYTES
        );
        assert_eq!(WorkingSet::new(10, 1).bytes(), MIN_WORKING_SET_BYTES);
        let mut w = WorkingSet::new(MIN_WORKING_SET_BYTES, 1);
        // A whole turn of the cycle comes back to the start.
        assert_eq!(w.access(Pattern::Dependent, w.lines.len()), 0);
        w.access(Pattern::Overlapped, 300);
        w.access(Pattern::Prefetched, 700);
        assert_eq!(w.lines.iter().map(|l| l.0[1]).sum::<u64>(), 1000);
    }
}
