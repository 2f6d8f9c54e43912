//! What the simulator's integration tests build their runs from: a group of flows with the defaults, and a
//! run through a FIFO.

// Each test crate that includes this module uses some of it.
#![allow(dead_code)]

use ccfair_aqm::{AqmConfig, QueueLimit};
use ccfair_cc::CcConfig;
use ccfair_sim::{GroupSpec, LinkSpec, UncheckedSpec};

pub const MS: u64 = 1_000_000;
pub const S: u64 = 1_000_000_000;

/// `count` flows of `cc` with a base RTT of `rtt_ms`, starting at 0, on the default host.
pub fn group(cc: &str, count: u32, rtt_ms: u64) -> GroupSpec {
    GroupSpec {
        delay: None,
        cc: CcConfig::from_name_and_params(cc, &serde_json::Value::Null).unwrap(),
        count,
        rtt_ns: rtt_ms * MS,
        start_ns: 0,
        stop_ns: None,
        initial_window: 10,
        pacing: false,
        loss: 0.0,
        ecn: ccfair_sim::tcp::EcnMode::Off,
        connect: Default::default(),
        host: Default::default(),
        size: None,
        arrivals: None,
    }
}

/// `groups` for `duration_ns` through a FIFO of `limit` at `rate_bps` (1500-byte packets), measured from
/// `measure_start_ns` to the end, in 100 ms intervals.
pub fn fifo_spec(
    rate_bps: u64,
    limit: QueueLimit,
    duration_ns: u64,
    measure_start_ns: u64,
    groups: Vec<GroupSpec>,
) -> UncheckedSpec {
    UncheckedSpec {
        offloads: None,
        receive_buffer: None,
        duration_ns,
        interval_ns: 100 * MS,
        measure_start_ns,
        measure_end_ns: duration_ns,
        link: LinkSpec {
            rate_bps,
            mtu_bytes: 1500,
            aqm: AqmConfig::fifo(limit),
        },
        groups,
    }
}
