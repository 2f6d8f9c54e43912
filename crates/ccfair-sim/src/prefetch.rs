//! Software prefetch hints: the simulation asks for cache lines it will read soon (the event queue's next
//! bucket, the state of the flows the next events belong to), so that with many flows, whose state leaves the
//! caches between two of their events, the memory latencies overlap with work instead of being paid one after
//! another.
//!
//! This is the only module of the crate allowed `unsafe`: one call to the x86-64 prefetch instruction, which
//! is a hint (see [`line`]). On other targets the hints do nothing. A hint never changes what the program
//! computes, only when memory arrives in the caches.
#![allow(unsafe_code)]

/// Bytes of a cache line.
const LINE_BYTES: usize = 64;

/// Asks the CPU to bring the cache line holding `addr` into its caches, without waiting for it.
#[inline(always)]
pub fn line(addr: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: PREFETCHT0 only hints: it reads nothing the program sees, writes nothing, and never faults,
    // whatever the address (the CPU drops a hint for an unmapped or invalid address). SSE, which the
    // intrinsic is declared with, is part of the x86-64 baseline.
    unsafe {
        core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>(addr.cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = addr;
}

/// Asks for every cache line `value` spans (a reference is only an address: nothing is read here).
///
/// The number of lines asked for depends on the size alone (the most `size` bytes can span at any
/// alignment, so sometimes one line past the end too): for a sized type it is a constant, and the loop
/// compiles to one prefetch instruction per line, where counting the lines from the address cost three
/// more instructions per line.
#[inline(always)]
pub fn value<T: ?Sized>(value: &T) {
    let start = (value as *const T).cast::<u8>();
    let first = start.wrapping_sub(start as usize % LINE_BYTES);
    let lines = (std::mem::size_of_val(value) + 2 * LINE_BYTES - 2) / LINE_BYTES;
    for i in 0..lines {
        line(first.wrapping_add(i * LINE_BYTES));
    }
}
