//! A deterministic packet-level dumbbell simulator with a TCP stack modelled on Linux.
//!
//! - [`engine`]: the event queue (time, insertion order) and lazily cancelled timers.
//! - [`net`]: constant-delay pipes and the bottleneck (queue discipline + link with exact serialization).
//! - [`tcp`]: sender (RACK-TLP, RTO, F-RTO, pacing, around `ccfair_cc::stack`'s PRR, state machine and
//!   `tcp_cong_control`, and `ccfair_cc::rate`'s delivery-rate sampling) and receiver (delayed and quick ACKs,
//!   SACK).
//! - [`host`]: the end hosts' departures from an ideal host (presets and parameters of `[host]`).
//! - [`scenario`]: the user's scenario in base units, checked and resolved into the spec the simulation
//!   runs; [`sim`]: the simulation; [`recorder`]: columnar results; [`estimate`]: a run's memory and
//!   events, predicted from its scenario; [`traffic`]: finite flows and flow arrivals (dynamic traffic),
//!   drawn per flow.
//! - `prefetch`: cache prefetch hints (the crate's only `unsafe`, one CPU instruction); [`memprobe`]: what a
//!   cache line costs on this machine at a given working set (for the benchmark).

pub mod engine;
pub mod estimate;
pub mod host;
pub mod memprobe;
pub mod net;
mod prefetch;
pub mod recorder;
pub mod scenario;
pub mod sim;
pub mod tcp;
pub mod traffic;

pub use ccfair_core::QueueSeries;
pub use ccfair_core::{FlowCounters, FlowRecord, FlowSeries, Totals};
pub use estimate::{Estimate, estimate};
pub use recorder::Recorder;
pub use scenario::{GroupSpec, LinkSpec, ScenarioInput, ScenarioSpec};
pub use sim::{RunOutput, Simulation};
