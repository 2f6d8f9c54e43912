"""Flow profiles (``flows[].profile``): laid under the group's own keys, written back with their name, listed
with the source of each value by ``ccfair list``; the VDQ-CSAQM reconstruction says so in the listing; the
content-provider parts of ``ccfair reproduce rueth-tma19`` run the profiles on equal, padded RTTs, and their
rows that rest on a reconstruction say so."""

import dataclasses

import pytest

from ccfair.catalog import catalog
from ccfair.cli import main
from ccfair.errors import InputError
from ccfair.scenario import FlowGroup, Scenario, profile_keys
from ccfair.studies.reproduce import get_study
from ccfair.studies.reproduce.rueth_tma19 import B_FINDINGS, C_FINDINGS, PROVIDERS
from ccfair.studies.reproduce.scorecard import Row, row_note


def _doc(*groups):
    return {
        "duration": "10s",
        "link": {"rate": "10Mbps", "buffer": "1bdp"},
        "flows": [{"rtt": "50ms", **g} for g in groups],
    }


def test_a_profile_lies_under_the_group_keys_and_reads_back():
    s = Scenario.from_dict(
        _doc({"profile": "akamai-a-2019"}, {"profile": "edgecast-2019", "initial_window": 3})
    )
    a, e = s.flows
    assert (a.cc, a.initial_window, a.pacing, a.profile) == ("cubic", 32, True, "akamai-a-2019")
    assert (e.cc, e.initial_window, e.pacing, e.profile) == ("cubic", 3, False, "edgecast-2019")
    written = s.to_dict()
    assert written["flows"][0]["profile"] == "akamai-a-2019"
    again = Scenario.from_dict(written)
    assert again.flows == s.flows
    assert again.to_dict(explicit=True) == s.to_dict(explicit=True)
    # A start order mirrored by a sweep keeps the group's profile and values.
    moved = dataclasses.replace(s, flows=(dataclasses.replace(a, start_ns=5), *s.flows[1:]))
    assert moved.to_dict()["flows"][0]["profile"] == "akamai-a-2019"


def test_the_spec_carries_the_profiles_values():
    spec = Scenario.from_dict(_doc({"profile": "google-2019"}, {"profile": "cdn-cubic-iw32"})).resolve()
    google, cdn = spec["groups"]
    assert (google["cc"]["name"], google["initial_window"], google["pacing"]) == ("bbr", 10, True)
    assert (cdn["cc"]["name"], cdn["initial_window"], cdn["pacing"]) == ("cubic", 32, False)


def test_a_scenario_without_a_profile_writes_none():
    s = Scenario.from_dict(_doc({"cc": "cubic"}))
    assert "profile" not in s.to_dict(explicit=True)["flows"][0]


@pytest.mark.parametrize(
    ("group", "field", "words"),
    [
        ({}, "flows[0].cc", "is required"),
        ({"profile": "google"}, "flows[0].profile", "google-2019"),
        ({"profile": 3}, "flows[0].profile", "expected a string"),
    ],
)
def test_bad_profiles_name_the_field(group, field, words):
    with pytest.raises(InputError) as e:
        Scenario.from_dict(_doc(group))
    assert e.value.field == field
    assert words in e.value.message


def test_profile_keys_build_the_same_group_as_the_document():
    by_hand = Scenario(
        duration_ns=10 * 10**9,
        link=Scenario.from_dict(_doc({"cc": "reno"})).link,
        flows=(FlowGroup(rtt_ns=50_000_000, **profile_keys("amazon-2019")),),
    )
    read = Scenario.from_dict(_doc({"profile": "amazon-2019"}))
    assert by_hand.resolve() == read.resolve()
    with pytest.raises(InputError, match="profiles: akamai-a-2019"):
        profile_keys("amazon")


def test_every_profile_has_a_source_per_value_and_the_providers_are_marked_reconstructions():
    profiles = {p["name"]: p for p in catalog()["flow_profiles"]}
    assert {"linux-default", "cdn-cubic-iw32", "bbr-fq"} <= set(profiles)
    assert set(PROVIDERS.values()) <= set(profiles)
    for p in profiles.values():
        for key in ("cc", "initial_window", "pacing"):
            assert p[key]["source"], (p["name"], key)
        if p["name"].endswith("-2019"):
            assert p["kind"] == "reconstruction2019"


def test_list_shows_the_profiles_and_the_vdq_reconstruction(capsys):
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    assert "Flow profiles (flows[].profile" in out
    assert "google-2019: Google: BBR v1 (2019 reconstruction, not the provider's stack)" in out
    assert "initial_window = 32  (source: CDNPlanet" in out
    assert "cc = cubic  (assumed: stand-in" in out
    vdq = next(line for line in out.splitlines() if line.strip().startswith("vdq_csaqm:"))
    assert "reconstruction" in vdq


def test_provider_parts_run_profiles_on_equal_padded_rtts():
    study = get_study("rueth-tma19")
    for scale in ("quick", "full"):
        parts = {p.name: p for p in study.parts(scale, 2)}
        b = [n for n in parts if n.startswith("b-")]
        c = [n for n in parts if n.startswith("c-")]
        assert len(b) == 2 * len(PROVIDERS) and len(c) == len(PROVIDERS) * (len(PROVIDERS) - 1) // 2
        for name in b + c:
            doc = parts[name].document
            flows = doc["scenario"]["flows"]
            assert all("profile" in f and "cc" not in f for f in flows), name
            assert flows[0]["rtt"] == flows[1]["rtt"]
            assert doc["zip"] == [
                {"flows[0].rtt": doc["zip"][0]["flows[0].rtt"], "flows[1].rtt": doc["zip"][0]["flows[0].rtt"]}
            ]
            assert doc["flip_start_order"]
    # Every plan of the quick scale loads (its scenarios resolve).
    assert len(study.plans("quick", 1)) == 5 + 14 + 21


def test_rows_resting_on_a_reconstruction_say_so():
    assert all(f.reconstruction for f in B_FINDINGS + C_FINDINGS)
    fejes = {f.key: f for f in get_study("fejes-nadas").findings}
    assert "VDQ-CSAQM" in fejes["l4s-vdq-csaqm-fair"].reconstruction
    assert not fejes["l4s-dualpi2-unfair"].reconstruction
    fields = {f.name: None for f in dataclasses.fields(Row)}
    row = Row(**{**fields, "n": 0, "reconstruction": "X", "note": "y"})
    assert row_note(row) == "rests on a reconstruction: X; y"
