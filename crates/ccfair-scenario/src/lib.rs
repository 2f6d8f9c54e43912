//! The scenario, once: the document a user writes, its meaning, and the spec each backend runs.
//!
//! - [`document`]: the document's keys, the type and unit of each value and every default, read by serde
//!   ([`reader`] names the field of every error) from a [`value::Value`] (a TOML file read, or a dict);
//!   [`units`]: quantities with units (`"10Mbps"`, tc's spellings, the refusals of ambiguous ones);
//!   [`write`]: the document written back, plain or explicit (the canonical form run ids hash);
//! - [`resolve`]: `resolve(scenario, backend)` for the simulator or the kernel backend ([`kernel`]: its
//!   rules, with the host's facts as an argument);
//! - [`catalog`]: a description of every key (path, type, unit, default, rule), for the reference docs;
//! - [`spec`]: the resolver, from the scenario in base units to the [`ScenarioSpec`] (every default filled,
//!   every rule checked; a spec is only ever built checked), and the rules between fields;
//! - [`host`]: the end hosts' presets and parameters, resolved per group; [`traffic`]: finite flows and
//!   arrivals, resolved per group and drawn per flow ([`traffic::flow_plans`], which both backends use);
//!   [`ecn`]: what a group's ECN setting makes of a connection; [`profile`]: the named stacks a group's
//!   `profile` lays under its own keys (providers' 2019 reconstructions, Linux's defaults).
//!
//! Every error is a [`ccfair_core::FieldError`] naming the field as the user wrote it.

pub mod catalog;
pub mod document;
pub mod ecn;
pub mod host;
pub mod kernel;
pub mod profile;
pub mod reader;
pub mod resolve;
pub mod spec;
pub mod traffic;
pub mod units;
pub mod value;
pub mod write;

pub use resolve::{Backend, Resolution, Source, resolve};
pub use spec::{
    ConnectMode, FlowInput, GroupSpec, KERNEL_CC_PREFIX, LinkInput, LinkSpec, ScenarioInput, ScenarioSpec,
    UncheckedSpec,
};

/// IPv4 (20) + TCP (20) + timestamp option (12, padded): the header bytes of a Linux data segment.
pub const HEADER_BYTES: u32 = 52;

/// Bits of the flow index in the simulator's event codes (its event queue packs a kind and a flow index into
/// one code): the most flows one run may have is [`MAX_FLOWS`].
pub const FLOW_INDEX_BITS: u32 = 20;
/// The most flows a run may have (2^20).
pub const MAX_FLOWS: u32 = 1 << FLOW_INDEX_BITS;
