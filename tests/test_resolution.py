"""The scenario's one native resolution: how often it is made, and that it resolves scenarios as before."""

import dataclasses
import hashlib
from collections import Counter

import pytest

import ccfair
from ccfair import _native, cli
from ccfair.errors import InputError
from ccfair.scenario import Scenario
from ccfair.sweep.identity import canonical_json, run_id
from conftest import SCENARIOS, small

# The run id of scenarios under scenarios/ (the explicit document, the native spec, seed 1, a fixed version)
# and a digest of the plain to_dict(): a refactor keeps them. Computed again when connections came to open at
# their flows' starts and the kernel-lab hosts became the default (both in the spec and the document): a
# results directory's earlier runs, made with the former meaning, are then not reused for the new one.
PINNED = [
    ("aqm-codel-five-cubic.toml", "e71cbd2495f70c37d8a52522c54a6b7e", "08eb15398bf77859"),
    ("aqm-dualpi2-prague-vs-cubic.toml", "983e829082f7c1749fc55673d1bb2c3e", "38e7fe95d4f98d69"),
    ("aqm-fq_codel-bbr-vs-cubic.toml", "7ada6d7a40fec76a214c336d3cf9ce9a", "1c305003996be20f"),
    ("aqm-pie-one-cubic.toml", "01d64c85aa64cb440f6a3bc904e12823", "3cc2c8f6ca32a8be"),
    ("aqm-ppv-cubic-vs-reno-rtt.toml", "528c4b64e89b727f7995c0ec6b23e4ed", "05b06bb4b6a91263"),
    ("aqm-step-dctcp.toml", "cafb389aef73672312ee19912a6f841f", "c4b6421e0629fee4"),
    ("bbr-random-loss.toml", "425a555c2cf203a203294e4ac2ecead9", "11b19e7d555190f7"),
    ("bbr-v2-vs-cubic.toml", "1e9390f94cb4a090a7f4cf7e450b39ed", "52265aeab07fc210"),
    ("bbr-v3-shallow-buffer.toml", "da862a112590a1fa9d3c0a3d3190df0a", "29efe3231b3bc820"),
    ("default.toml", "2ca6cd6fa4dd3b3d469f8500fbaecaa1", "253313b034d8954c"),
    ("reno-rtt-unfairness.toml", "19316ccbfe502d9d033f7228ec8852db", "f8e4ca77064f036d"),
    ("two-flows-reno-vs-cubic.toml", "56e57aebfc11f81de4f8b2100df926ad", "6e70a72d142935cf"),
]


@pytest.mark.parametrize(("name", "pinned_run_id", "plain_digest"), PINNED)
def test_run_ids_and_documents_are_unchanged(name, pinned_run_id, plain_digest):
    sc = Scenario.from_toml(SCENARIOS / name)
    doc, spec = sc.with_seed(None).to_dict(explicit=True), sc.resolve()
    assert run_id(doc, spec, 1, "pinned") == pinned_run_id
    # The simulator named as the backend is the same identity; another backend is another run.
    assert run_id(doc, spec, 1, "pinned", "sim") == pinned_run_id
    assert run_id(doc, spec, 1, "pinned", "kernel") != pinned_run_id
    assert hashlib.sha256(canonical_json(sc.to_dict()).encode()).hexdigest()[:16] == plain_digest


# The native calls that resolve or run a scenario (a quantity's parsing or formatting is a native call too,
# and is not counted).
RESOLVING = ("resolve", "run", "flow_plans")


@pytest.fixture
def native_calls(monkeypatch):
    """Counts calls of the functions of ``ccfair._native`` that resolve or run (the module attribute every
    caller uses)."""
    calls: Counter[str] = Counter()
    for name in dir(_native):
        fn = getattr(_native, name)
        if name not in RESOLVING:
            continue

        def counted(*args, _fn=fn, _name=name, **kwargs):
            calls[_name] += 1
            return _fn(*args, **kwargs)

        monkeypatch.setattr(_native, name, counted)
    return calls


def test_a_run_of_a_two_group_scenario_makes_two_native_calls(native_calls, small_toml, tmp_path, capsys):
    """`ccfair run` resolves the scenario once and runs it once, saving its results included."""
    assert cli.main(["run", str(small_toml), "--quiet", "--out", str(tmp_path / "out")]) == 0
    capsys.readouterr()
    assert native_calls == Counter({"resolve": 1, "run": 1})


def test_a_scenario_keeps_its_resolution(native_calls):
    sc = Scenario.from_dict(small())
    sc.to_dict(explicit=True)
    sc.measure_window_ns()
    sc.with_seed(9).resolve_estimated()
    ccfair.run(sc)
    assert native_calls == Counter({"resolve": 1, "run": 1})
    changed = dataclasses.replace(sc, duration_ns=sc.duration_ns * 2)
    assert changed.resolve()["duration_ns"] == 2 * sc.resolve()["duration_ns"]
    assert native_calls["resolve"] == 2


def test_a_failed_resolution_names_the_field_from_the_native_error(native_calls):
    with pytest.raises(InputError) as info:
        Scenario.from_dict(small(duration="10s", measure={"end": "11s"}))
    assert (info.value.field, info.value.message) == ("measure.end", "must be at most the duration (10s)")
    assert native_calls == Counter({"resolve": 1})
