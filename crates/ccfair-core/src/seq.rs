//! Comparisons on wrapping 32-bit counters: sequence numbers, `tp->delivered`-style packet counts and the
//! jiffies clock, as Linux's `before()` / `after()` (include/net/tcp.h). `a` is before `b` when the signed
//! distance from `b` to `a` is negative, so the order survives one wrap-around of the counter.

/// `before(a, b)`: `a` comes strictly earlier than `b`.
#[inline]
pub fn before(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) < 0
}

/// `after(a, b)`: `a` comes strictly later than `b`.
#[inline]
pub fn after(a: u32, b: u32) -> bool {
    before(b, a)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn order_is_strict_and_survives_a_wrap() {
        assert!(before(1, 2) && after(2, 1));
        assert!(!before(7, 7) && !after(7, 7));
        // u32::MAX is one before 0 once the counter wrapped.
        assert!(before(u32::MAX, 0) && after(0, u32::MAX));
        assert!(after(5, u32::MAX - 5));
        // Half the space apart, the later one is the one reached by counting forward less than 2^31.
        assert!(before(0, (1 << 31) - 1));
        assert!(after(0, 1 << 31));
    }
}
