"""``ccfair reproduce``: every study's quick scale runs end to end and its scorecard has one row per stated
finding, with numbers (or the explicit not-measured verdict of a finding whose feature this build lacks)
and a verdict from the allowed set; an interrupted study resumes without rerunning finished runs; the
verdict rule on hand-made samples; ``--list``; bad input exits with 2 and writes nothing."""

import json
import math
from argparse import Namespace
from pathlib import Path

import pytest

from ccfair.cli import main
from ccfair.store.reader import query
from ccfair.studies.reproduce import get_study, study_names
from ccfair.studies.reproduce.base import Expect, Finding, Measured
from ccfair.studies.reproduce.capabilities import Capability, not_measured
from ccfair.studies.reproduce.scorecard import AGREES, DISAGREES, NOT_MEASURED, UNSURE, VERDICTS, verdict
from ccfair.studies.run import run_plans

# The findings the studies' papers state (every one must have a row).
STATED = {
    "rueth-tma19": 10,
    "fejes-nadas": 12,
    "sasaki-cloudnet18": 2,
    "philip-imc21": 5,
}


def _finding(expect: Expect | None) -> Finding:
    return Finding("k", "s", "v", "setup", expect, lambda data: Measured([]))


def test_verdict_rule_on_hand_made_samples():
    within = Expect(0.3, 0.5, "0.4 ± 0.1")
    assert verdict([0.39, 0.40, 0.41], _finding(within))[0] == AGREES
    assert verdict([0.90, 0.91, 0.92], _finding(within))[0] == DISAGREES
    assert verdict([0.2, 0.5, 0.8], _finding(within))[0] == UNSURE  # the interval straddles an edge
    assert verdict([0.4], _finding(within))[0] == UNSURE  # one sample: no spread to judge with
    assert verdict([0.4, 0.4], _finding(None))[0] == UNSURE  # no stated value
    assert verdict([7.0, 7.1], _finding(Expect(8.0, None, "≥ 8")))[0] == DISAGREES


def test_missing_feature_is_not_measured():
    absent = Capability("the xyz queue discipline", "qdisc", "xyz-not-a-qdisc")
    assert not_measured((absent,)) == "not measured (this build lacks the xyz queue discipline)"
    assert not_measured((Capability("fifo", "qdisc", "fifo"),)) is None


def test_list_shows_every_study_and_scale_with_estimates(capsys):
    assert main(["reproduce", "--list"]) == 0
    out = capsys.readouterr().out
    for name in study_names():
        assert out.count(name) == 2  # quick and full
    assert "estimate" in out and "events/s" in out
    assert main(["reproduce", "--list", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["studies"]
    assert {(r["study"], r["scale"]) for r in rows} == {
        (s, sc) for s in study_names() for sc in ("quick", "full")
    }
    quick = sum(r["wall_seconds_one_core"] for r in rows if r["scale"] == "quick")
    assert all(r["runs"] > 0 and r["events"] > 0 for r in rows)
    assert quick < 300  # the four quick scales together fit CI time on one core


@pytest.mark.parametrize(
    ("args", "field"),
    [
        (["reproduce", "no-such-study"], "STUDY"),
        (["reproduce"], "STUDY"),
        (["reproduce", "rueth-tma19", "--backend", "kernel"], "--backend"),
        (["reproduce", "rueth-tma19", "--list"], "--list"),
    ],
)
def test_bad_input_exits_2_naming_the_option(args, field, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(args) == 2
    err = capsys.readouterr().err
    assert f"error: {field}:" in err
    assert list(tmp_path.iterdir()) == []  # nothing written


def test_bad_scale_names_the_allowed_values(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as e:
        main(["reproduce", "rueth-tma19", "--scale", "huge"])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert "--scale" in err and "quick" in err and "full" in err
    assert list(tmp_path.iterdir()) == []


def _committed(out: Path) -> dict[str, str]:
    frame = query(out, "SELECT run_id, CAST(committed_at AS VARCHAR) AS t FROM runs WHERE status = 'done'")
    return dict(zip(frame["run_id"], frame["t"], strict=True))


def _args(**kw) -> Namespace:
    base = {
        "jobs": 2,
        "cluster": None,
        "time_limit": None,
        "quiet": True,
        "max_memory": None,
        "max_events": None,
        "retry_failed": False,
    }
    return Namespace(**{**base, **kw})


@pytest.mark.parametrize("name", sorted(STATED))
def test_quick_scale_runs_and_scores_every_finding(name, tmp_path, capsys):
    study = get_study(name)
    out = tmp_path / name
    # An interrupted study: the first repetition of its first plan finished, nothing else (run ids are
    # content hashes, so these are the same runs as the quick scale's first repetition).
    first = [plan for _, plan in study.plans("quick", 1)][:1]
    run_plans(first, out, _args())
    before = _committed(out)
    assert before
    assert main(["reproduce", name, "--out", str(out), "--jobs", "2", "--quiet", "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    after = _committed(out)
    assert {k: after[k] for k in before} == before  # finished runs were not run again
    assert len(after) > len(before)

    rows = document["findings"]
    assert len(rows) == STATED[name] == len(study.findings)
    assert [r["key"] for r in rows] == [f.key for f in study.findings]
    for row, finding in zip(rows, study.findings, strict=True):
        lacking = not_measured(finding.needs)
        if lacking is not None:
            assert row["verdict"] == lacking and row["verdict"].startswith(NOT_MEASURED)
            assert row["mean"] is None
            continue
        assert row["verdict"] in VERDICTS
        assert isinstance(row["mean"], float) and math.isfinite(row["mean"]), row
        assert row["n"] >= 2
        assert row["statement"] and row["setup"] and row["tolerance"]
    on_disk = json.loads((out / "scorecard.json").read_text())
    assert on_disk["findings"] == rows
    html = (out / "scorecard.html").read_text()
    assert all(r["key"] in html for r in rows)
    assert document["figures"] and all((out / f).stat().st_size > 0 for f in document["figures"])

    # Run again: every run is in the store, nothing is rerun; the scorecard is rewritten (it is ours).
    assert main(["reproduce", name, "--out", str(out), "--quiet"]) == 0
    assert _committed(out) == after
    # A scorecard.json that ccfair did not write is never replaced.
    (out / "scorecard.json").write_text('{"mine": true}\n')
    assert main(["reproduce", name, "--out", str(out), "--quiet"]) == 2
    assert "scorecard.json" in capsys.readouterr().err
    assert (out / "scorecard.json").read_text() == '{"mine": true}\n'
