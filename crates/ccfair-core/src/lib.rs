//! Shared vocabulary of the ccfair crates: integer-nanosecond time, units, packet metadata, seeded random
//! streams, wrap-safe sequence comparisons, the field error of every configuration check, a log-bucketed
//! histogram, the bottleneck queue's meter and the observer interface through which the simulator reports
//! events.
//!
//! Nothing here reads a wall clock or an unseeded random source: the core is deterministic by construction.

pub mod error;
pub mod hist;
pub mod observer;
pub mod packet;
pub mod param;
pub mod queue_meter;
pub mod rng;
pub mod seq;
pub mod time;
pub mod units;

pub use error::FieldError;
pub use hist::LogHistogram;
pub use observer::{DropReason, NullObserver, Observer};
pub use packet::{Ecn, PacketMeta};
pub use param::ParamDoc;
pub use queue_meter::{QueueMeter, QueueSeries, QueueTally};
pub use rng::Rng;
pub use time::{Dur, Time};
pub use units::Rate;
