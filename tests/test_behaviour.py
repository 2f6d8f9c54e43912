"""Behaviour the literature reports, from the scenario files in scenarios/ (the same files produce the
figures): AIMD fairness at equal RTTs, RTT unfairness, Cubic outgrowing Reno on long fat paths."""

from __future__ import annotations

import pytest

import ccfair
from conftest import SCENARIOS

# Simulations, sweeps or subprocesses, seconds per test: `make test` runs them, `make check` leaves them out.
pytestmark = pytest.mark.slow


def shares_by_label(result: ccfair.RunResult, column: str = "cc") -> dict[str, float]:
    return dict(zip(result.flows[column], result.flows["share"], strict=True))


def test_two_reno_flows_with_equal_rtts_share_fairly():
    r = ccfair.run(SCENARIOS / "reno-two-flows.toml")
    assert r.summary["jain_index"] >= 0.95
    assert r.summary["utilization"] >= 0.95


def test_the_short_rtt_reno_flow_gets_the_larger_share():
    r = ccfair.run(SCENARIOS / "reno-rtt-unfairness.toml")
    short, long = r.flows.sort_values("rtt_ns")["goodput_bps"]
    assert short > long
    # Under tail drop the ratio grows faster than the RTT ratio (synchronized losses): far from fair.
    assert short / long > 3
    assert r.summary["jain_index"] < 0.8


def test_cubic_beats_reno_on_a_long_fat_path():
    r = ccfair.run(SCENARIOS / "cubic-vs-reno-100mbps.toml")
    shares = shares_by_label(r)
    assert shares["cubic"] > shares["reno"]
    assert shares["cubic"] > 0.55
    classes = r.classes.set_index("cc")
    assert classes.loc["cubic", "relative_goodput"] > classes.loc["reno", "relative_goodput"]
