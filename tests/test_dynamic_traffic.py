"""Dynamic traffic: finite flows (``size``), arrivals, and metrics over the flows active at each moment."""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np
import pytest

import ccfair
from ccfair import _native
from ccfair.analysis.dynamic import active_shares, ideal_completion_ns
from ccfair.errors import InputError
from ccfair.scenario import Scenario

# Simulations, sweeps or subprocesses, seconds per test: `make test` runs them, `make check` leaves them out.
pytestmark = pytest.mark.slow

MS = 1_000_000
S = 1_000_000_000


def _scenario(**group: Any) -> dict[str, Any]:
    return {
        "duration": "10s",
        "link": {"rate": "10Mbps", "buffer": "1bdp"},
        "flows": [{"cc": "reno", "rtt": "20ms", **group}],
    }


def test_shares_follow_one_two_then_four_active_flows_and_back_to_two() -> None:
    """One flow alone (0-4 s), a second joins at 4 s, two finite flows join at 8 s and leave when their
    1.2 MB are delivered. Under FQ-CoDel each active flow gets an equal share of every interval's bytes: 1,
    then 1/2, then 1/4, then 1/2 again once the finite flows completed, with Jain's index near 1."""
    # Ideal hosts: the accounting of the flows active per interval, without TSO bursts in every interval.
    sc = {
        "duration": "16s",
        "link": {"rate": "10Mbps", "buffer": "1bdp", "aqm": "fq_codel"},
        "host": {"preset": "ideal"},
        "flows": [
            {"cc": "reno", "rtt": "20ms"},
            {"cc": "reno", "rtt": "20ms", "start": "4s"},
            {"cc": "reno", "rtt": "20ms", "start": "8s", "count": 2, "size": "1.2MB"},
        ],
    }
    r = ccfair.run(sc)
    flows = r.flows
    done_ns = (flows["start_ns"] + flows["completion_ns"])[2:]
    assert done_ns.notna().all(), "the finite flows complete"
    first_done, last_done = float(done_ns.min()), float(done_ns.max())
    assert 11 * S < first_done < 14 * S, "1.2 MB at a quarter of 10 Mbps takes about 4 s"
    got = active_shares(flows, r.timeseries, r.scenario.interval_ns, r.scenario.duration_ns)
    bins, shares = got.bins_frame(), got.shares_frame()

    def phase(lo: float, hi: float, n: int) -> None:
        in_phase = (bins["t_ns"] > lo) & (bins["t_ns"] <= hi)
        assert (bins.loc[in_phase, "active_flows"] == n).all(), f"{n} flows active in ({lo}, {hi}]"
        s = shares[(shares["t_ns"] > lo) & (shares["t_ns"] <= hi)]
        per_flow = s.groupby("flow_id")["share"].mean()
        assert len(per_flow) == n
        assert np.allclose(per_flow, 1 / n, atol=0.03 if n > 1 else 0.0), per_flow.to_dict()
        assert bins.loc[in_phase, "jain_index"].mean() > 0.97

    # One RTT of slow start after each change is left out (a second to settle).
    phase(0.5 * S, 4 * S, 1)
    phase(5 * S, 8 * S, 2)
    phase(9 * S, first_done - 100 * MS, 4)
    phase(last_done + 1 * S, 16 * S, 2)
    assert r.dynamic is not None
    assert r.dynamic["active_jain_mean"] > 0.95
    assert r.dynamic["flows_completed"] == 2


def test_completion_on_an_idle_link_follows_slow_start() -> None:
    """A 1 MB Reno flow alone on a 1 Gbps link with a 100 ms base RTT and an initial window of 10.

    It sends N = ceil(10^6 / 1448) = 691 segments. Slow start doubles the window per round: round r sends
    10 x 2^r segments, so rounds 0..5 send 10 + 20 + ... + 320 = 630 and round R = 6 the last j = 61.
    A full segment takes τ = 1500 x 8 / 10^9 s = 12 µs on the link, and a round's segments leave back to
    back (the link needs 640 τ = 7.7 ms for the largest round, far less than an RTT). Round r + 1 starts when
    the first ACK of round r returns: the receiver's 16 quick ACKs (Linux's TCP_MAX_QUICKACKS) acknowledge
    every segment of round 0 and the first six of round 1, so s_1 = rtt + τ, s_2 = s_1 + rtt + τ; from round
    2 on it acknowledges every second segment, so s_(r+1) = s_r + rtt + 2τ. Hence
    s_6 = 6 (rtt + τ) + 4 τ. The last segment (880 payload bytes, 932 on the wire, τ_last = 7.456 µs) leaves
    the link at s_6 + 60 τ + τ_last and reaches the application half an RTT later. Before all that the
    connection opens at the flow's start: the SYN (60 bytes, 0.48 µs on the link) and the SYN-ACK take one
    RTT, which the completion time, measured from the start, includes:
    FCT = 100 ms + 0.48 µs + 6 x 100 ms + 10 τ + 60 τ + τ_last + 50 ms = 750.847936 ms."""
    sc = {
        "duration": "2s",
        "link": {"rate": "1Gbps", "buffer": "1bdp"},
        "host": {"preset": "ideal"},
        "flows": [{"cc": "reno", "rtt": "100ms", "size": "1MB"}],
    }
    r = ccfair.run(sc)
    tau = 12_000
    handshake = 100 * MS + 480
    expected = handshake + 6 * 100 * MS + 10 * tau + 60 * tau + 7_456 + 50 * MS
    f = r.flows.iloc[0]
    assert f["total_retransmitted_segments"] == 0
    assert f["total_delivered_bytes"] == 1_000_000
    assert f["size_bytes"] == 1_000_000
    assert abs(f["completion_ns"] - expected) <= tau, (f["completion_ns"], expected)
    # The ideal time is the transfer at the link rate plus half the RTT: the normalized FCT is the rounds.
    ideal = ideal_completion_ns(np.array([1_000_000]), np.array([100 * MS]), r.scenario)[0]
    assert ideal == pytest.approx(50 * MS + (1_000_000 + 691 * 52) * 8, rel=1e-12)
    assert r.dynamic is not None
    assert r.dynamic["groups"][0]["nfct_mean"] == pytest.approx(f["completion_ns"] / ideal)


def _arrivals_run(seed: int) -> Any:
    """2000 one- or few-segment flows arriving as a Poisson process of mean gap 5 ms."""
    sc = {
        "duration": "12s",
        "link": {"rate": "10Mbps", "buffer": "1bdp"},
        "flows": [
            {
                "cc": "reno",
                "rtt": "10ms",
                "count": 2000,
                "start": "100ms",
                "size": {"distribution": "exponential", "mean": "2KB"},
                "arrivals": {"process": "poisson", "mean_interval": "5ms"},
            }
        ],
    }
    return ccfair.run(sc, seed=seed)


def test_poisson_arrivals_and_drawn_sizes() -> None:
    a, again, other = _arrivals_run(1), _arrivals_run(1), _arrivals_run(2)
    starts = a.flows["start_ns"].to_numpy()
    assert (starts == again.flows["start_ns"].to_numpy()).all(), "same seed, same starts"
    assert (a.flows["size_bytes"].to_numpy() == again.flows["size_bytes"].to_numpy()).all()
    assert (starts != other.flows["start_ns"].to_numpy()).mean() > 0.99, "another seed, other starts"
    assert (np.diff(starts) >= 0).all() and starts[0] > 100 * MS
    # The mean gap of 2000 exponential gaps has a standard error of 5 ms / sqrt(2000) = 2.2 %: 8 % is 3.6.
    mean_gap = (starts[-1] - 100 * MS) / len(starts)
    assert mean_gap == pytest.approx(5 * MS, rel=0.08)
    # Exponential sizes of mean 2 KB: the sample mean's standard error is 2.2 % too.
    sizes = a.flows["size_bytes"].to_numpy()
    assert sizes.mean() == pytest.approx(2000, rel=0.08)
    assert sizes.min() >= 1
    # Every flow that started completed (the link is lightly loaded) and delivered exactly its size.
    started = starts < 12 * S
    assert a.flows["completion_ns"][started].notna().all()
    assert (a.flows["total_delivered_bytes"][started] == a.flows["size_bytes"][started]).all()
    assert a.dynamic is not None
    assert a.dynamic["flows_not_started"] == int((~started).sum())


def test_the_estimate_counts_finite_flows_sensibly() -> None:
    """Finite flows send their sizes, not the link's capacity over the run."""
    r = _arrivals_run(1)
    _, estimate = r.scenario.resolve_estimated()
    measured = r.summary["events"]
    assert 0.8 <= estimate.events / measured <= 3.0, (estimate.events, measured)


def test_uniform_arrivals_stay_in_their_window() -> None:
    r = ccfair.run(
        _scenario(count=50, start="1s", size="10KB", arrivals={"process": "uniform", "window": "2s"})
    )
    starts = r.flows["start_ns"].to_numpy()
    assert ((starts >= 1 * S) & (starts < 3 * S)).all()
    assert (np.diff(starts) >= 0).all()


@pytest.mark.parametrize(
    ("group", "field"),
    [
        ({"size": -5}, "flows[0].size"),
        ({"size": "-5KB"}, "flows[0].size"),
        ({"size": 0}, "flows[0].size"),
        ({"size": {"distribution": "zipf", "mean": "1MB"}}, "flows[0].size.distribution"),
        ({"size": {"distribution": "pareto", "mean": "1MB", "shape": 1.0}}, "flows[0].size.shape"),
        ({"size": {"distribution": "pareto", "mean": "1MB"}}, "flows[0].size.shape"),
        ({"size": {"distribution": "lognormal", "mean": "1MB", "shape": 9}}, "flows[0].size.shape"),
        ({"size": {"distribution": "exponential", "mean": "1MB", "shape": 2}}, "flows[0].size.shape"),
        ({"size": {"distribution": "exponential", "mean": -1}}, "flows[0].size.mean"),
        ({"size": {"mean": "1MB"}}, "flows[0].size.distribution"),
        ({"size": {"distribution": "fixed", "mean": "1MB", "tail": 2}}, "flows[0].size.tail"),
        ({"arrivals": {"process": "burst", "mean_interval": "1s"}}, "flows[0].arrivals.process"),
        ({"arrivals": {"process": "poisson"}}, "flows[0].arrivals.mean_interval"),
        ({"arrivals": {"process": "poisson", "mean_interval": "0s"}}, "flows[0].arrivals.mean_interval"),
        ({"arrivals": {"process": "poisson", "mean_interval": "-1s"}}, "flows[0].arrivals.mean_interval"),
        # The mean last arrival, 0 + 20 x 1 s, is after the 10 s run.
        (
            {"count": 20, "arrivals": {"process": "poisson", "mean_interval": "1s"}},
            "flows[0].arrivals.mean_interval",
        ),
        ({"arrivals": {"process": "uniform", "window": "11s"}}, "flows[0].arrivals.window"),
        (
            {"arrivals": {"process": "uniform", "mean_interval": "1s", "window": "1s"}},
            "flows[0].arrivals.mean_interval",
        ),
    ],
)
def test_bad_dynamic_traffic_names_the_field(group: dict[str, Any], field: str) -> None:
    with pytest.raises(InputError) as e:
        Scenario.from_dict(_scenario(**group)).validate()
    assert e.value.field == field, e.value


def test_a_scenario_without_dynamic_traffic_keeps_its_spec_and_document() -> None:
    sc = Scenario.from_dict(_scenario())
    spec = sc.resolve()
    assert "size" not in spec["groups"][0] and "arrivals" not in spec["groups"][0]
    assert set(sc.to_dict()["flows"][0]) == {
        "cc",
        "count",
        "rtt",
        "start",
        "initial_window",
        "pacing",
        "loss",
        "ecn",
        "connect",
    }
    r = ccfair.run(sc)
    assert r.dynamic is None and "dynamic" not in r.to_json_dict()
    assert math.isnan(r.flows["completion_ns"][0]) and r.flows["size_bytes"][0] == 0


def test_dynamic_keys_read_back_from_the_written_document() -> None:
    group = {"count": 3, "size": {"distribution": "pareto", "mean": "150KB", "shape": 1.2}}
    group["arrivals"] = {"process": "poisson", "mean_interval": "200ms"}
    sc = Scenario.from_dict(_scenario(**group))
    again = Scenario.from_dict(sc.to_dict())
    assert again == sc
    assert sc.resolve()["groups"][0]["size"] == {
        "distribution": "pareto",
        "mean_bytes": 150_000,
        "shape": 1.2,
    }
    assert Scenario.from_dict(_scenario(size=1000)).to_dict()["flows"][0]["size"] == "1KB"


def test_the_kernel_backend_starts_and_sizes_flows_as_the_simulator() -> None:
    from ccfair.scenario import kernel_scenario

    group = {"count": 4, "size": {"distribution": "lognormal", "mean": "100KB", "shape": 1.0}}
    group["arrivals"] = {"process": "poisson", "mean_interval": "1s"}
    # Ideal hosts, whose starts are the arrivals alone: the default kernel-lab hosts also space flows due
    # together and jitter them in the simulator, where the kernel backend's own sender does that itself.
    d = {**_scenario(**group), "host": {"preset": "ideal"}}
    sim = ccfair.run(d, seed=3)
    plans = kernel_scenario(d).flow_plans(3)
    assert [p["start_ns"] for p in plans] == sim.flows["start_ns"].tolist()
    assert [p["size_bytes"] for p in plans] == sim.flows["size_bytes"].tolist()
    native = json.loads(_native.flow_plans(Scenario.from_dict(d).resolution().spec_json, 4))
    assert [p["start_ns"] for p in native] != [p["start_ns"] for p in plans], "the seed draws the starts"
