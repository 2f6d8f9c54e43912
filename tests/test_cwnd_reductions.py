"""The flow table's ``cwnd_reductions``: one per entry into fast recovery, into CWR on ECN, and per new RTO
loss episode, counted where the simulator's TCP enters those states. (That an RTO counts one episode and a
backed-off RTO within it none is checked on the sender in crates/ccfair-sim/tests/sim.rs.)"""

from __future__ import annotations

import numpy as np
import pytest

import ccfair
from conftest import SCENARIOS

# Simulations, sweeps or subprocesses, seconds per test: `make test` runs them, `make check` leaves them out.
pytestmark = pytest.mark.slow


def entries(ts, flow: int, state: int) -> int:
    """How often the sampled ``ca_state`` of ``flow`` turned to ``state``."""
    s = ts[ts["flow_id"] == flow].sort_values("t_ns")["ca_state"].to_numpy()
    return int(np.sum((s[1:] == state) & (s[:-1] != state)) + (s[0] == state))


def test_a_reno_flow_through_tail_drop_counts_one_reduction_per_recovery_episode():
    # One Reno flow, 10 Mbps, 50 ms, 1 BDP: a sawtooth with a loss episode every few seconds. Each lasts about
    # an RTT, so time-series samples every 5 ms see every entry into Recovery (ca_state 3).
    r = ccfair.run(
        {
            "duration": "30s",
            "interval": "5ms",
            "seed": 1,
            "link": {"rate": "10Mbps", "buffer": "1bdp", "aqm": "fifo"},
            "flows": [{"cc": "reno", "rtt": "50ms"}],
        }
    )
    f = r.flows.iloc[0]
    assert f["total_rto_events"] == 0 and f["total_queue_drops"] > 0
    recoveries = entries(r.timeseries, 0, 3)
    assert recoveries >= 5
    assert f["total_cwnd_reductions"] == recoveries
    # Several drops per episode, one reduction each.
    assert f["total_queue_drops"] > f["total_cwnd_reductions"]
    assert 0 < f["window_cwnd_reductions"] < f["total_cwnd_reductions"]


def test_a_dctcp_flow_counts_cwr_entries_at_most_once_per_round_trip():
    r = ccfair.run(SCENARIOS / "aqm-step-dctcp.toml")
    f = r.flows.iloc[0]
    # No drops: every reduction is a CWR entry on ECE, and CWR is entered at most once per window.
    assert f["total_queue_drops"] == 0 and f["total_rto_events"] == 0
    round_trips = 20e9 / f["rtt_ns"]  # the scenario's 20 s
    assert 0.05 * round_trips < f["total_cwnd_reductions"] <= round_trips
    assert f["total_cwnd_reductions"] < f["total_ce_marks"]
