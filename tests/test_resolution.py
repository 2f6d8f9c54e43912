"""The scenario's one native resolution: how often it is made, and that it resolves scenarios as before."""

import dataclasses
import hashlib
from collections import Counter

import pytest

import ccfair
from ccfair import _native, cli
from ccfair.errors import ScenarioError
from ccfair.scenario import Scenario
from ccfair.sweep.identity import canonical_json, run_id
from conftest import SCENARIOS, small

# Computed from scenarios under scenarios/ before the resolution moved to one native call: the run id
# (the explicit document, the native spec, seed 1, a fixed version) and a digest of the plain to_dict().
PINNED = [
    ("aqm-codel-five-cubic.toml", "2666c7f1bd519baf55343d410adcb8e8", "f0fe56cb13875407"),
    ("aqm-dualpi2-prague-vs-cubic.toml", "117afd6a81a1ba59cd74b30b05ae3b04", "0ad087f656355749"),
    ("aqm-fq_codel-bbr-vs-cubic.toml", "0e8c4689b298d9efa32e0b3a169e7a8b", "13fce17afa02c5c2"),
    ("aqm-pie-one-cubic.toml", "cfd949e2acf7db83bcf50349de02ec5b", "727c40b28818c941"),
    ("aqm-ppv-cubic-vs-reno-rtt.toml", "d6ff4a1ffe13dbda6b3f05d6d1f5fc21", "f5123122d74ad90c"),
    ("aqm-step-dctcp.toml", "8a4f7b3cced7359cb662771caf9aa29c", "0c152027a82d557c"),
    ("bbr-random-loss.toml", "3d3f496facf2fe077749a54afa80198e", "1f0a45a9deaa566c"),
    ("bbr-v2-vs-cubic.toml", "c05fb8f4c599ad5485db41dca3830415", "cbe27c531b4bc771"),
    ("bbr-v3-shallow-buffer.toml", "96913bbe213972f8d68f95538e003abe", "678601a674223be0"),
    ("default.toml", "bf223905499bf9c572b09d9a34ff1547", "467bf69d87599364"),
    ("reno-rtt-unfairness.toml", "957d67245a114c042357a011688a3b4f", "007dfc090bbc1c72"),
    ("two-flows-reno-vs-cubic.toml", "477acb480837f5d3560ec3cb5b25682f", "0837fa65610ed94b"),
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


@pytest.fixture
def native_calls(monkeypatch):
    """Counts calls of every function of ``ccfair._native`` (the module attribute every caller uses)."""
    calls: Counter[str] = Counter()
    for name in dir(_native):
        fn = getattr(_native, name)
        if name.startswith("_") or isinstance(fn, type) or not callable(fn):
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
    with pytest.raises(ScenarioError) as info:
        Scenario.from_dict(small(duration="10s", measure={"end": "11s"}))
    assert (info.value.field, info.value.message) == ("measure.end", "must be at most the duration (10s)")
    assert native_calls == Counter({"resolve": 1})
