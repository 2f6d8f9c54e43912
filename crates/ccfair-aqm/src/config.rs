//! Configuration of the queue disciplines: one tagged enum with the kernel/RFC defaults, unknown fields
//! rejected, built into a trait object once per run.

use ccfair_core::{PacketMeta, ParamDoc};
use serde::{Deserialize, Serialize};

use crate::{Fifo, Qdisc};

/// A queue's hard limit, in packets or in bytes (`pfifo` / `bfifo`).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum QueueLimit {
    Packets(u32),
    Bytes(u64),
}

impl QueueLimit {
    /// Whether a packet of `len` bytes fits on top of the current backlog.
    #[inline]
    pub fn admits(self, backlog_packets: u32, backlog_bytes: u64, len: u32) -> bool {
        match self {
            QueueLimit::Packets(n) => backlog_packets < n,
            QueueLimit::Bytes(b) => backlog_bytes + len as u64 <= b,
        }
    }
}

/// A queue discipline and its parameters. The buffer limit is part of every variant.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "name", rename_all = "snake_case", deny_unknown_fields)]
pub enum AqmConfig {
    /// Tail drop.
    Fifo { limit: QueueLimit },
}

/// One queue discipline, for listings.
#[derive(Clone, Debug)]
pub struct QdiscInfo {
    pub name: &'static str,
    pub summary: &'static str,
    pub source: &'static str,
    pub params: &'static [ParamDoc],
}

/// Every available queue discipline.
pub fn qdiscs() -> Vec<QdiscInfo> {
    vec![QdiscInfo {
        name: "fifo",
        summary: "tail drop at a packet or byte limit",
        source: "Linux net/sched/sch_fifo.c (pfifo / bfifo)",
        params: &[ParamDoc {
            name: "limit",
            allowed: "packets or bytes",
            doc: "set by link.buffer",
        }],
    }]
}

impl AqmConfig {
    pub fn name(&self) -> &'static str {
        match self {
            AqmConfig::Fifo { .. } => "fifo",
        }
    }

    pub fn limit(&self) -> QueueLimit {
        match self {
            AqmConfig::Fifo { limit } => *limit,
        }
    }

    pub fn build<P: PacketMeta + Send + 'static>(&self) -> Box<dyn Qdisc<P>> {
        match self {
            AqmConfig::Fifo { limit } => Box::new(Fifo::new(*limit)),
        }
    }
}
