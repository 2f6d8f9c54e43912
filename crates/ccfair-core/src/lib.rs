//! Shared vocabulary of the ccfair crates: integer-nanosecond time, units, packet metadata, seeded random
//! streams, wrap-safe sequence comparisons, the field error of every configuration check, a log-bucketed
//! histogram, the names a user writes and the suggestion for an unknown one (`names`), the output schema (every table's columns, with the types generated from them), the counters
//! both recorders keep (`RunMeter`, with the bottleneck queue's meter) and the observer interface through which the simulator reports
//! events.
//!
//! Nothing here reads a wall clock or an unseeded random source: the core is deterministic by construction.

pub mod error;
pub mod hist;
pub mod jiffies;
pub mod names;
pub mod observer;
pub mod output;
pub mod packet;
pub mod param;
pub mod queue_meter;
pub mod rng;
pub mod run_meter;
pub mod seq;
pub mod time;
pub mod units;

pub use error::FieldError;
pub use hist::LogHistogram;
pub use jiffies::Jiffies;
pub use observer::{DropReason, NullObserver, Observer, Tee};
pub use output::{FlowCounters, FlowRecord, FlowRow, FlowSeries, QueueRow, QueueSeries, Totals};
pub use packet::{Ecn, PacketMeta};
pub use param::ParamDoc;
pub use queue_meter::{QueueMeter, QueueTally};
pub use rng::Rng;
pub use run_meter::RunMeter;
pub use time::{Dur, Time};
pub use units::Rate;
