//! The ccfair emulator: real kernel TCP through ccfair's own userspace bottleneck (see `main.rs` for the
//! programs). The modules with I/O (`forward`, `send`, `recv`, `blast`, `ping`, `prepare`) sit on `sys`, the only
//! module with `unsafe`; `frame`, `gso`, `pool`, `shaper` and `record` are pure and unit-tested
//! (`schedstat` reads the calling thread's scheduler statistics from procfs).

pub mod blast;
pub mod clock;
pub mod config;
pub mod forward;
pub mod frame;
pub mod gso;
pub mod ping;
pub mod pool;
pub mod prepare;
pub mod record;
pub mod recv;
pub mod schedstat;
pub mod send;
pub mod shaper;
pub mod sys;
pub mod tcpinfo;
pub mod turnaround;
