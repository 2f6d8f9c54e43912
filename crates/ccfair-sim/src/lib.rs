//! A deterministic packet-level dumbbell simulator with a TCP stack modelled on Linux.
//!
//! - [`engine`]: the event queue (time, insertion order) and lazily cancelled timers.
//! - [`net`]: constant-delay pipes and the bottleneck (queue discipline + link with exact serialization).
//! - [`tcp`]: sender (RACK-TLP, PRR, RTO, F-RTO, delivery-rate sampling, pacing) and receiver (delayed and
//!   quick ACKs, SACK).
//! - [`scenario`]: the resolved scenario; [`sim`]: the simulation; [`recorder`]: columnar results;
//!   [`estimate`]: a run's memory and events, predicted from its scenario.

pub mod engine;
pub mod estimate;
pub mod net;
pub mod recorder;
pub mod scenario;
pub mod sim;
pub mod tcp;

pub use ccfair_core::QueueSeries;
pub use estimate::{Estimate, estimate};
pub use recorder::{FlowCounters, FlowRecord, FlowSeries, Recorder, Totals};
pub use scenario::{GroupSpec, LinkSpec, ScenarioSpec, SpecError};
pub use sim::{RunOutput, Simulation};
