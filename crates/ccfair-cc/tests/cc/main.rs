//! Behaviour tests of the congestion controls, driven by `ccfair_cc::testing::Driver`.
//!
//! Expected values come from the algorithms' definitions (the kernel's formulas and RFC 9438), never from
//! running this code: every test states the rule it checks.

mod bbr1;
mod bbr_family;
mod bbr_path;
mod contract;
mod cubic;
mod ecn;
mod hystart;
mod reno;

use ccfair_cc::testing::Driver;
use ccfair_cc::{CaState, CcConfig};
use ccfair_core::Rng;
use ccfair_core::rng::StreamId;

/// Full-sized segment payload used throughout.
pub const MSS: u32 = 1448;

/// A driver for algorithm `name` configured with `params` (a JSON object), built the way a scenario builds it.
pub fn driver(name: &str, params: serde_json::Value) -> Driver {
    let cfg = CcConfig::from_name_and_params(name, &params).expect("valid configuration");
    Driver::new(cfg.build(Rng::stream(1, StreamId::Cc(0))), MSS)
}

/// Declare a loss with the whole window outstanding and let the stack finish the recovery (PRR, then
/// cwnd = ssthresh) with rounds of `rtt_us`. Returns the number of rounds it took.
pub fn lose_and_recover(d: &mut Driver, rtt_us: u64) -> usize {
    d.fill();
    d.enter_recovery();
    assert_eq!(d.state(), CaState::Recovery);
    let mut rounds = 0;
    while d.state() != CaState::Open {
        d.run_round(rtt_us);
        rounds += 1;
        assert!(rounds < 10, "recovery does not end");
    }
    rounds
}
