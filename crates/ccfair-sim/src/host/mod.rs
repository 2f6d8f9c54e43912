//! The end hosts in the simulation: what a group's resolved host (`ccfair_scenario::host`, its presets and
//! parameters) does to its flows' packets. [`timing`]: per-packet processing delays, timer slack and the
//! delayed-ACK tick; [`nic`]: the sending host's NIC serializing at its line rate; [`gro`]: receive
//! coalescing.

pub mod gro;
pub mod nic;
pub mod timing;
pub use ccfair_scenario::host::*;
pub use gro::{Aggregate, Gro};
pub use nic::Nic;
pub use timing::HostTiming;

/// The receive-window model of a host's receivers, if it has one (`rcv_window`).
pub fn rwnd_config(host: &HostSpec) -> Option<crate::tcp::RwndConfig> {
    host.rcv_window.then_some(crate::tcp::RwndConfig {
        rmem: host.rmem_bytes,
        autotune: host.rcv_autotune,
        scaling_ratio: host.rcv_scaling_ratio,
        initial_window_segments: host.rcv_initial_window,
    })
}
