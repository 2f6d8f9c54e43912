"""The host's speed for estimates (ccfair.speed): the cost per event by flow count, scaled from the
reference curve by what a bench measured, and the cache file read as untrusted input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ccfair import speed
from ccfair.scenario import Scenario
from ccfair.speed import NOMINAL, REFERENCE_NS_PER_EVENT, Speed, reference_ns_per_event


@pytest.fixture
def speed_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "speed.json"
    monkeypatch.setenv(speed.ENV_VAR, str(path))
    return path


def test_reference_curve_passes_through_its_points_and_grows_beyond_them():
    for flows, ns in REFERENCE_NS_PER_EVENT:
        assert reference_ns_per_event(flows) == pytest.approx(ns)
    # Between points on the log-log segment; below the first point flat; above the last, still growing.
    assert 246.0 < reference_ns_per_event(2000) < 476.0
    assert reference_ns_per_event(1) == reference_ns_per_event(10)
    assert reference_ns_per_event(100_000) > reference_ns_per_event(20_000)
    assert NOMINAL.ns_per_event(5000) == pytest.approx(476.0) and not NOMINAL.measured


def test_one_measured_point_scales_the_whole_curve():
    # A host that ran only small cases at half the reference cost is taken to be half as costly at 5000
    # flows too: the level from the host, the growth with the flows from the curve.
    host = Speed(((10, 81.0),), "test", True)
    assert host.ns_per_event(10) == pytest.approx(81.0)
    assert host.ns_per_event(5000) == pytest.approx(238.0)
    assert host.cpu_seconds(10**9, 5000) == pytest.approx(238.0)
    assert host.cpu_seconds(10**9, 5000) > 2.5 * host.cpu_seconds(10**9, 10)


def test_measured_points_are_met_and_interpolated_between():
    host = Speed(((10, 100.0), (1000, 400.0)), "test", True)
    assert host.ns_per_event(10) == pytest.approx(100.0)
    assert host.ns_per_event(1000) == pytest.approx(400.0)
    ratio_10, ratio_1000 = 100.0 / 162.0, 400.0 / 246.0
    assert ratio_10 < host.ns_per_event(100) / 149.0 < ratio_1000
    # Beyond the largest measured point the curve's growth at the last point's ratio.
    assert host.ns_per_event(5000) == pytest.approx(476.0 * ratio_1000)
    assert "at 10 flows" in host.text() and "at 5000" in host.text()


def test_record_and_read_back(speed_file: Path):
    assert speed.host_speed() is NOMINAL  # no file yet
    # Two cases of 10 flows pool; a case without CPU time is left out.
    assert speed.record([(10, 1_000_000, 0.1), (10, 3_000_000, 0.3), (1000, 2_000_000, 0.6), (2, 5, 0.0)])
    measured = speed.host_speed()
    assert measured.measured and measured.points == ((10, pytest.approx(100.0)), (1000, pytest.approx(300.0)))
    assert "ccfair bench on this host" in measured.text()
    assert speed.record([(3, 0, 1.0)]) is None  # nothing to keep
    # A later bench of other cases adds its flow counts and replaces the ones it measured again.
    speed.record([(5000, 1_000_000, 0.5), (10, 1_000_000, 0.2)])
    assert speed.host_speed().points == (
        (10, pytest.approx(200.0)),
        (1000, pytest.approx(300.0)),
        (5000, pytest.approx(500.0)),
    )


@pytest.mark.parametrize(
    "change",
    [
        lambda d: d.update(format=1),
        lambda d: d.update(host_key={"host": "elsewhere"}),
        lambda d: d.update(points=[[10, -5.0]]),
        lambda d: d.update(points=[[True, 100.0]]),
        lambda d: d.update(points=[]),
        lambda d: d.update(points="fast"),
        lambda d: d.pop("points"),
    ],
)
def test_a_file_not_ours_or_out_of_range_counts_as_no_measurement(speed_file: Path, change):
    speed.record([(10, 1_000_000, 0.1)])
    data = json.loads(speed_file.read_text())
    change(data)
    speed_file.write_text(json.dumps(data))
    assert speed.host_speed() is NOMINAL


def test_a_file_of_the_single_figure_format_counts_as_no_measurement(speed_file: Path):
    speed_file.write_text(
        json.dumps({"generator": "ccfair bench (events per CPU second)", "events_per_cpu_second": 14e6})
    )
    assert speed.host_speed() is NOMINAL
    speed_file.write_text("{not json")
    assert speed.host_speed() is NOMINAL


def test_a_file_ccfair_did_not_write_is_never_overwritten(speed_file: Path):
    for text in ("my notes\n", json.dumps({"generator": "something else"})):
        speed_file.write_text(text)
        assert speed.record([(10, 1_000_000, 0.1)]) is None
        assert speed_file.read_text() == text
    # The single-figure format ccfair wrote before is its own, and replaced.
    speed_file.write_text(json.dumps({"generator": "ccfair bench (events per CPU second)"}))
    assert speed.record([(10, 1_000_000, 0.1)]) == speed_file and speed.host_speed().measured


def _scenario(flows: int) -> Scenario:
    return Scenario.from_dict(
        {
            "link": {"rate": "1Gbps", "buffer": "1bdp"},
            "flows": [{"cc": "cubic", "rtt": "20ms", "count": flows}],
            "duration": "1s",
        }
    )


def test_a_run_estimate_costs_its_flow_count(speed_file: Path):
    small, large = (_scenario(n).resolution().estimate for n in (10, 5000))
    assert (small.flows, large.flows) == (10, 5000)
    # At the nominal speed an event of the 5000-flow run costs the curve's 476 ns, of the 10-flow run 162.
    assert large.cpu_seconds / large.events == pytest.approx(476e-9)
    assert small.cpu_seconds / small.events == pytest.approx(162e-9)
