"""Queue-discipline evidence from the scenario files in scenarios/ (aqm-*.toml): what the published studies
and the RFCs say each AQM does to Cubic, Reno, BBR, DCTCP and Prague traffic. A contrast with tail drop runs
the same file with ``link.aqm = "fifo"``, so that the queue discipline is the only difference."""

from __future__ import annotations

import math
import tomllib
from functools import cache
from typing import Any

import pytest

import ccfair
from conftest import SCENARIOS

# Simulations, sweeps or subprocesses, seconds per test: `make test` runs them, `make check` leaves them out.
pytestmark = pytest.mark.slow

CODEL_TARGET_MS = 5.0
PIE_TARGET_MS = 15.0
DUALPI2_TARGET_MS = 15.0


@cache
def run(name: str, aqm: str | None = None, host: str | None = None) -> ccfair.RunResult:
    """Runs scenarios/<name>.toml, with the queue discipline replaced by ``aqm`` and the hosts by the preset
    ``host`` if given."""
    with open(SCENARIOS / f"{name}.toml", "rb") as f:
        d: dict[str, Any] = tomllib.load(f)
    if aqm is not None:
        d["link"]["aqm"] = aqm
    if host is not None:
        d["host"] = {"preset": host}
    return ccfair.run(d)


def queue_delay_ms(r: ccfair.RunResult, cc: str | None = None) -> float:
    """Mean queueing delay the flows' packets saw (of ``cc`` only, if given): mean RTT sample minus base RTT,
    averaged over the flows."""
    f = r.flows if cc is None else r.flows[r.flows["cc"] == cc]
    return float((f["rtt_mean_ms"] - f["rtt_ns"] / 1e6).mean())


def classes(r: ccfair.RunResult) -> dict[str, float]:
    return dict(zip(r.classes["cc"], r.classes["relative_goodput"], strict=True))


# ---------------------------------------------------------------------------------------------- CoDel, PIE


def test_codel_caps_the_queue_of_one_cubic_flow_and_keeps_the_link_busy():
    r = run("aqm-codel-one-cubic")
    s = r.summary
    assert s["utilization"] >= 0.90
    # CoDel drops once the sojourn stayed above 5 ms for 100 ms: the queue rarely exceeds twice the target,
    # and the median stays within it too (near zero here: with one flow the queue is empty for most of
    # Cubic's cycle, whose fast-convergence plateau sits just below the BDP).
    assert s["queue_sojourn_p99_ns"] / 1e6 <= 2 * CODEL_TARGET_MS
    assert s["queue_sojourn_p50_ns"] / 1e6 <= 2 * CODEL_TARGET_MS
    assert s["drops"] > 0 and s["retransmissions"] > 0


def test_fifo_keeps_the_same_ten_bdp_buffer_nearly_full():
    r = run("aqm-codel-one-cubic", aqm="fifo")
    buffer_ms = 10 * 50.0  # 10 BDP of a 50 ms path is 500 ms of queue at the link rate
    assert r.summary["queue_sojourn_p50_ns"] / 1e6 >= 0.7 * buffer_ms
    assert r.summary["queue_sojourn_p99_ns"] / 1e6 >= 0.9 * buffer_ms
    codel = run("aqm-codel-one-cubic")
    assert queue_delay_ms(codel) < queue_delay_ms(r) / 50


def test_codel_holds_a_standing_queue_at_its_target():
    r = run("aqm-codel-five-cubic")
    s = r.summary
    assert CODEL_TARGET_MS / 2 <= s["queue_sojourn_p50_ns"] / 1e6 <= 2 * CODEL_TARGET_MS
    assert CODEL_TARGET_MS / 2 <= queue_delay_ms(r) <= 2 * CODEL_TARGET_MS
    assert s["utilization"] >= 0.95


def test_pie_steers_the_queue_of_one_cubic_flow_toward_fifteen_ms():
    # One Cubic sawtooth on ideal hosts, PIE's law alone: the mean stays within a factor of two of the
    # target, instead of ~400 ms. (With the default hosts the same flow averages 5.3 ms at 94 % of the link:
    # 15 ms is 0.3 BDP here, less than the 0.43 BDP a Cubic flow needs to keep the link busy through its
    # reduction, and with the hosts' bursts the queue empties after each one.)
    r = run("aqm-pie-one-cubic", host="ideal")
    assert PIE_TARGET_MS / 2 <= queue_delay_ms(r) <= 2 * PIE_TARGET_MS
    assert r.summary["utilization"] >= 0.90
    assert queue_delay_ms(r) < queue_delay_ms(run("aqm-pie-one-cubic", aqm="fifo", host="ideal")) / 10
    hosted = run("aqm-pie-one-cubic")
    assert queue_delay_ms(hosted) < PIE_TARGET_MS and hosted.summary["utilization"] >= 0.90
    assert queue_delay_ms(hosted) < queue_delay_ms(run("aqm-pie-one-cubic", aqm="fifo")) / 10


def test_pie_holds_the_mean_queueing_delay_at_fifteen_ms():
    r = run("aqm-pie-five-cubic")
    assert abs(queue_delay_ms(r) - PIE_TARGET_MS) <= 0.2 * PIE_TARGET_MS
    assert r.summary["utilization"] >= 0.95
    # PIE's target is three times CoDel's, and the queues show it.
    assert queue_delay_ms(r) > 2 * queue_delay_ms(run("aqm-codel-five-cubic"))


@pytest.mark.parametrize("aqm", ["red", "gsp"])
def test_red_and_gsp_run_the_same_scenarios(aqm: str):
    fifo = run("aqm-codel-one-cubic", aqm="fifo")
    for name in ("aqm-codel-one-cubic", "aqm-codel-five-cubic"):
        r = run(name, aqm=aqm)
        assert r.summary["drops"] > 0
        assert r.summary["utilization"] >= 0.80
        # RED's thresholds (buffer/12 .. buffer/4) and GSP's 5 ms threshold keep the queue far below FIFO's.
        assert r.summary["queue_sojourn_p99_ns"] < fifo.summary["queue_sojourn_p50_ns"] / 3


# ---------------------------------------------------------------------------------------------- FQ-CoDel


def test_fq_codel_restores_fairness_between_bbr_and_cubic():
    fifo = run("aqm-fq_codel-bbr-vs-cubic", aqm="fifo")
    fq = run("aqm-fq_codel-bbr-vs-cubic")
    assert abs(fifo.summary["fness"]) >= 0.25  # tail drop: a clearly unfair split
    assert abs(fq.summary["fness"]) <= 0.1
    assert fq.summary["utilization"] >= 0.95


def test_fq_codel_evens_out_rtt_unfairness_between_cubic_and_reno():
    # An equally unfair mix under tail drop: Cubic at 10 ms against Reno at 100 ms.
    fifo = run("aqm-fq_codel-cubic-vs-reno-rtt", aqm="fifo")
    fq = run("aqm-fq_codel-cubic-vs-reno-rtt")
    assert fifo.summary["jain_index"] <= 0.9
    assert fq.summary["jain_index"] >= 0.95

    def reno(r: ccfair.RunResult) -> float:
        return float(r.flows.loc[r.flows["cc"] == "reno", "goodput_bps"].iloc[0])

    assert reno(fq) >= 1.3 * reno(fifo)
    assert abs(fq.summary["fness"]) < 0.6 * abs(fifo.summary["fness"])


# ---------------------------------------------------------------------------------------------- PPV


def test_ppv_with_equal_tvfs_shares_between_bbr_and_cubic():
    fifo = classes(run("aqm-ppv-bbr-vs-cubic", aqm="fifo"))
    ppv = classes(run("aqm-ppv-bbr-vs-cubic"))
    assert fifo["cubic"] < 0.5 and fifo["bbr"] > 1.5  # tail drop in 0.2 BDP: BBR starves Cubic
    assert 0.8 <= ppv["cubic"] <= 1.25
    assert 0.8 <= ppv["bbr"] <= 1.25


def test_ppv_lifts_long_rtt_reno_flows_against_short_rtt_cubic():
    fifo = classes(run("aqm-ppv-cubic-vs-reno-rtt", aqm="fifo"))
    ppv = classes(run("aqm-ppv-cubic-vs-reno-rtt"))
    assert fifo["reno"] < 0.15 and fifo["cubic"] > 1.6
    assert ppv["reno"] >= 4 * fifo["reno"]
    assert ppv["cubic"] / ppv["reno"] < (fifo["cubic"] / fifo["reno"]) / 5


# ---------------------------------------------------------------------------------------------- L4S


def test_dualpi2_separates_l4s_and_classic_delay_and_couples_the_signals():
    # Ideal hosts, the coupling law alone: the ratio of the window's time averages, p_L / (2 sqrt(p_C)), is
    # at most 1 by Jensen's inequality when p' varies over the window, and the more it varies the lower
    # (the default hosts' bursts: 0.62; ideal hosts 0.72; testbed 0.79).
    r = run("aqm-dualpi2-prague-vs-cubic", host="ideal")
    s = r.summary
    assert s["queue_sojourn_l4s_p99_ns"] / 1e6 <= 2.0
    # The classic queue sits near the PI target.
    assert abs(queue_delay_ms(r, "cubic") - DUALPI2_TARGET_MS) <= DUALPI2_TARGET_MS / 3
    assert s["utilization"] >= 0.95
    f = r.flows.set_index("cc")
    p_l = f.loc["prague", "window_ce_marks"] / f.loc["prague", "window_sent_segments"]
    p_c = f.loc["cubic", "window_queue_drops"] / f.loc["cubic", "window_sent_segments"]
    assert f.loc["prague", "window_queue_drops"] == 0
    # RFC 9332: p_L = k·p', p_C = p'^2, k = 2, so p_L ≈ 2·sqrt(p_C).
    assert 0.7 <= p_l / (2 * math.sqrt(p_c)) <= 1.4, (p_l, p_c)


# VDQ-CSAQM (Nadas et al., ANRW 2020), as reconstructed in crates/ccfair-aqm/src/vdq.rs. The paper reports
# that it keeps resource sharing fair, whatever the congestion controls and RTTs, where DualPI2 does not, with
# L4S delay as low as DualPI2's. Measured here (30 s, 100 Mbps, 2 BDP; relative goodput of each class):
#   Prague 10 ms vs Cubic 10 ms: DualPI2 1.19 / 0.74, VDQ-CSAQM 0.58 / 1.35, L4S sojourn p99 0.23 / 4.5 ms
#   Prague 10 ms vs Cubic 50 ms: DualPI2 1.43 / 0.50, VDQ-CSAQM 0.76 / 1.18
#   BBRv2 vs Cubic, 10 ms, BBRv2's relative goodput over seeds 1-3, with the default kernel-lab hosts:
#   DualPI2 0.49 to 0.74, VDQ-CSAQM 0.46 to 0.52, PPV 0.41 to 0.42, tail drop 0.44 to 0.66 (ideal hosts:
#   0.70 to 0.93, 0.58 to 0.71, 0.70 to 0.71, 0.30 to 0.46)
# With BBRv2 the sharing is as unequal as with the other AQMs: no AQM here brings BBRv2 into the fairness
# band against Cubic with the default hosts, so the paper's claim is not reproduced. With Prague the
# reconstruction does not reproduce the claim: its L queue is blocked behind the classic one whenever the
# classic head is 19 ms older (time-shifted FIFO), so the L4S flow is marked by its own 1 ms target more than
# its share calls for. Those claims are kept as strict expected failures so that a faithful model shows up.

VDQ_PAPER = pytest.mark.xfail(
    strict=True,
    reason="the reconstructed VDQ-CSAQM does not reproduce the paper's fair sharing (numbers above)",
)


def two_flows(aqm: str, a: dict[str, Any], b: dict[str, Any], seed: int = 1) -> dict[str, float]:
    d = {
        "duration": "30s",
        "seed": seed,
        "link": {"rate": "100Mbps", "buffer": "2bdp", "aqm": aqm},
        "flows": [a, b],
    }
    return classes(ccfair.run(d))


def test_vdq_csaqm_separates_the_classes_and_signals_l4s_by_marks_only():
    r = run("aqm-vdq_csaqm-prague-vs-cubic")
    s = r.summary
    f = r.flows.set_index("cc")
    assert s["utilization"] >= 0.95
    # L4S packets are marked, never dropped; the classic flow is signalled by drops (it is not ECN-capable).
    assert f.loc["prague", "window_queue_drops"] == 0 and f.loc["prague", "window_ce_marks"] > 0
    assert f.loc["cubic", "window_queue_drops"] > 0 and f.loc["cubic", "window_ce_marks"] == 0
    # The classic side holds the virtual buffer's 20 ms target; the L queue stays well below it.
    assert queue_delay_ms(r, "cubic") <= 1.5 * 20.0
    assert s["queue_sojourn_l4s_p99_ns"] < s["queue_sojourn_p99_ns"] / 2
    # Neither class is starved.
    assert min(classes(r).values()) >= 0.4


BBR2_CUBIC = ({"cc": "bbr2", "rtt": "10ms"}, {"cc": "cubic", "rtt": "10ms"})


def test_vdq_csaqm_shares_between_bbr2_and_cubic_at_least_as_well_as_ppv():
    vdq = two_flows("vdq_csaqm", *BBR2_CUBIC)
    ppv = two_flows("ppv", *BBR2_CUBIC)
    assert abs(vdq["bbr2"] - 1) <= abs(ppv["bbr2"] - 1)


@VDQ_PAPER
def test_vdq_csaqm_shares_fairly_between_bbr2_and_cubic():
    # One run's share moves by about 0.1 with the seed (BBRv2's randomized probing): the mean of three.
    runs = [two_flows("vdq_csaqm", *BBR2_CUBIC, seed=seed) for seed in (1, 2, 3)]
    vdq = {cc: sum(r[cc] for r in runs) / len(runs) for cc in ("bbr2", "cubic")}
    assert 0.7 <= vdq["bbr2"] <= 1.3 and 0.7 <= vdq["cubic"] <= 1.3, runs


@VDQ_PAPER
def test_vdq_csaqm_shares_fairly_between_prague_and_cubic_where_dualpi2_does_not():
    prague, cubic = {"cc": "prague", "rtt": "10ms"}, {"cc": "cubic", "rtt": "50ms"}
    dualpi2 = two_flows("dualpi2", prague, cubic)
    vdq = two_flows("vdq_csaqm", prague, cubic)
    assert dualpi2["prague"] / dualpi2["cubic"] > 1.5
    assert 0.8 <= vdq["prague"] / vdq["cubic"] <= 1.25


@VDQ_PAPER
def test_vdq_csaqm_keeps_l4s_delay_as_low_as_dualpi2():
    assert run("aqm-vdq_csaqm-prague-vs-cubic").summary["queue_sojourn_l4s_p99_ns"] <= 2e6


def test_step_marking_keeps_a_dctcp_queue_around_k():
    r = run("aqm-step-dctcp")
    k = 12
    q = r.queue
    window = q[q["t_ns"] > 4e9]["backlog_packets"]
    assert window.min() < k < window.max()
    assert 0.6 * k <= window.mean() <= 1.4 * k
    assert r.summary["utilization"] >= 0.95
    assert r.summary["drops"] == 0 and r.summary["marks"] > 0
