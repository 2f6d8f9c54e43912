//! A deterministic packet-level dumbbell simulator with a TCP stack modelled on Linux.
//!
//! - [`engine`]: the event queue (time, insertion order) and lazily cancelled timers.
//! - [`net`]: constant-delay pipes and the bottleneck (queue discipline + link with exact serialization).
//! - [`tcp`]: sender (RACK-TLP, RTO, F-RTO, pacing, around `ccfair_cc::stack`'s PRR, state machine and
//!   `tcp_cong_control`, and `ccfair_cc::rate`'s delivery-rate sampling) and receiver (delayed and quick ACKs,
//!   SACK).
//! - [`host`]: the end hosts' departures from an ideal host (presets and parameters of `[host]`).
//! - `scenario`, `traffic` (from `ccfair_scenario`): the spec the simulation runs and the flows' starts and
//!   sizes; [`sim`]: the simulation; [`recorder`]: columnar results; [`estimate`]: a run's memory and
//!   events, predicted from its spec.
//! - [`prefetch`]: cache prefetch hints (the crate's only `unsafe`, one CPU instruction; the binding's memory
//!   probe asks for lines with it too).

pub mod engine;
pub mod estimate;
pub mod host;
pub mod net;
pub mod prefetch;
pub mod recorder;
pub use ccfair_scenario::{spec as scenario, traffic};
pub mod sim;
pub mod tcp;

pub use ccfair_core::QueueSeries;
pub use ccfair_core::{FlowCounters, FlowRecord, FlowSeries, Totals};
pub use ccfair_scenario::{ConnectMode, GroupSpec, LinkSpec, ScenarioInput, ScenarioSpec, UncheckedSpec};
pub use estimate::{Estimate, estimate};
pub use recorder::Recorder;
pub use sim::{RunOutput, Simulation};
