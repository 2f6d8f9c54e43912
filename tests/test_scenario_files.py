"""Every ready scenario parses and validates; the two named ones say what they should."""

import pytest

from ccfair import Scenario
from conftest import SCENARIOS

FILES = sorted(SCENARIOS.glob("*.toml"))


def test_there_are_scenarios():
    names = {p.name for p in FILES}
    assert {"default.toml", "two-flows-reno-vs-cubic.toml"} <= names


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_scenario_file_validates(path):
    scenario = Scenario.from_toml(path)
    scenario.validate()
    assert Scenario.from_dict(scenario.to_dict()) == scenario


def test_two_flows_reno_vs_cubic():
    s = Scenario.from_toml(SCENARIOS / "two-flows-reno-vs-cubic.toml")
    spec = s.resolve()
    assert spec["duration_ns"] == 60 * 10**9
    assert spec["link"]["rate_bps"] == 10_000_000 and spec["link"]["aqm"]["name"] == "fifo"
    assert spec["link"]["aqm"]["limit"] == {"packets": 42}  # 1 BDP = 62 500 bytes
    assert [g["cc"]["name"] for g in spec["groups"]] == ["reno", "cubic"]
    assert {g["rtt_ns"] for g in spec["groups"]} == {50_000_000}


def test_default_demo_is_quick():
    s = Scenario.from_toml(SCENARIOS / "default.toml")
    assert s.duration_ns <= 30 * 10**9
    assert {g.cc for g in s.flows} == {"cubic", "reno"} and s.flow_count() == 4
