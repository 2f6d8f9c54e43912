"""BBRv2 and BBRv3 at scenario level, from scenarios/bbr-v2-*.toml and bbr-v3-*.toml: coexistence with
Cubic (published for v2alpha), v3's loss rate in a shallow buffer, and the state machine as the time series
shows it."""

from __future__ import annotations

import math

import pytest

import ccfair
from conftest import SCENARIOS
from test_bbr import class_goodput, loss_rate, scenario

# Simulations, sweeps or subprocesses, seconds per test: `make test` runs them, `make check` leaves them out.
pytestmark = pytest.mark.slow

PROBE_BW = 2


# Published (Fejes et al. 2019, v2alpha testbed, 5 + 5 flows, 1 Gbps, 10 ms, tail drop): full utilization and
# about 6:4 relative goodput (BBRv2 : Cubic) from 0.5 BDP up. The model, audited against tcp_bbr2.c, gives
# BBRv2 shares (seeds 1-3, the default kernel-lab hosts, connections at their start) of 0.47-0.52 at 0.5 BDP,
# 0.36-0.49 at 1 BDP and 0.38-0.40 at 2 BDP (ideal hosts: 0.31-0.33 at 1 BDP). The mechanism, as the source
# prescribes it: Cubic keeps the buffer full, so the RTT is about twice min_rtt and BBRv2's in-flight data
# is above 1.25 times its own BDP; PROBE_UP therefore ends after one min_rtt, before inflight_hi can grow
# (+1 per cwnd ACKed in the first round), and inflight_hi (where a probe saw 2 % loss) less 15 % headroom caps
# cwnd in CRUISE; PROBE_DOWN holds 0.75 until in-flight data falls below the BDP (it rarely does), so the
# max-bandwidth filter decays too. Suspected causes of the remaining gap to 6:4: the paper's testbed and its
# v2alpha snapshot (mid-2019, older than the version modelled here). With the hosts' bursts and timing the
# share comes within a factor of two at 1 BDP on the mean of three seeds (one seed's share moves by 0.1 with
# BBRv2's randomized probing).


@pytest.mark.parametrize("buffer", ["1bdp", "0.5bdp"])
def test_bbr2_and_cubic_stay_within_a_factor_of_two_from_half_a_bdp_up(buffer):
    runs = [
        class_goodput(ccfair.run(scenario("bbr-v2-vs-cubic.toml", buffer=buffer), seed=s)) for s in (1, 2, 3)
    ]
    ratio = sum(g["bbr2"] for g in runs) / sum(g["cubic"] for g in runs)
    # Published: about 6:4; here a factor of two at most.
    assert 0.5 < ratio < 2.0, runs


def test_bbr2_takes_the_larger_share_in_a_tenth_of_a_bdp():
    g = class_goodput(ccfair.run(scenario("bbr-v2-vs-cubic.toml", buffer="0.1bdp")))
    assert g["bbr2"] > g["cubic"], g


@pytest.mark.parametrize("buffer", ["1bdp", "0.1bdp"])
def test_bbr3_against_cubic_runs_in_both_settings(buffer):
    r = ccfair.run(scenario("bbr-v3-vs-cubic.toml", buffer=buffer))
    g = class_goodput(r)
    # Reported, not a published ratio: both classes get traffic through and the link stays busy.
    assert r.summary["utilization"] > 0.95
    assert g["bbr3"] > 0 and g["cubic"] > 0
    # v3's loss response keeps the loss rate low even against Cubic's buffer filling.
    assert loss_rate(r.flows) < 0.02


def test_bbr3_keeps_its_loss_rate_near_two_percent_in_a_shallow_buffer_where_bbr1_does_not():
    v3 = ccfair.run(SCENARIOS / "bbr-v3-shallow-buffer.toml")
    v1 = ccfair.run(scenario("bbr-v3-shallow-buffer.toml", cc="bbr"))
    assert loss_rate(v3.flows) <= 0.02
    assert loss_rate(v1.flows) > 0.02
    assert v3.summary["utilization"] > 0.9


def test_bbr3_state_is_visible_in_the_time_series():
    r = ccfair.run(SCENARIOS / "bbr-v3-shallow-buffer.toml")
    ts = r.timeseries
    steady = ts[ts["t_ns"] > 5e9]
    # The bandwidth estimate is the 100 Mbit/s bottleneck; min_rtt the 20 ms path plus a packet's time.
    assert abs(steady["cc_bw_bps"].median() / 100e6 - 1) < 0.1
    assert 20e6 <= steady["cc_min_rtt_ns"].median() < 21e6
    # PROBE_BW's four phases (UP 0, DOWN 1, CRUISE 2, REFILL 3) all show up, with their pacing gains.
    probe_bw = steady[steady["cc_mode"] == PROBE_BW]
    gains = {int(p): set(probe_bw.loc[probe_bw["cc_aux"] == p, "cc_pacing_gain"]) for p in range(4)}
    assert gains == {0: {1.25}, 1: {232 / 256}, 2: {1.0}, 3: {1.0}}, gains
    # In the shallow buffer the probes find excess loss: inflight_hi is set, and cwnd never exceeds it.
    hi = steady["cc_inflight_hi"]
    assert hi.notna().all()
    assert (steady["cwnd"] <= hi).all()
    assert not math.isnan(float(steady["cc_inflight_lo"].min()))
