"""``ccfair reproduce``: every study's quick scale runs end to end and its scorecard has one row per stated
finding, each with a finite value and a verdict from the allowed set; an interrupted study resumes without
rerunning finished runs; the verdict rule on hand-made samples; ``--list``; bad input exits with 2 and
writes nothing; on the kernel backend (without running a kernel) a study's plans are kernel plans with runs
of their own, and a scale above the clean rate is refused up front."""

import json
import math
from argparse import Namespace
from pathlib import Path

import pytest

from ccfair.cli import main
from ccfair.devtools.docs.scorecards import STORED as SCORECARDS
from ccfair.emu import doctor
from ccfair.emu import host as emu_host
from ccfair.store.reader import query
from ccfair.studies.reproduce import get_study, study_names
from ccfair.studies.reproduce.base import Expect, Finding, Measured
from ccfair.studies.reproduce.scorecard import AGREES, DISAGREES, UNSURE, VERDICTS, verdict
from ccfair.studies.run import run_plans
from ccfair.sweep.driver import plan_runs

# Simulations, sweeps or subprocesses, seconds per test: `make test` runs them, `make check` leaves them out.
pytestmark = pytest.mark.slow

# The findings the studies' papers state (every one must have a row).
STATED = {
    "rueth-tma19": 21,
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


def test_list_shows_every_study_and_scale_with_estimates(capsys):
    assert main(["reproduce", "--list"]) == 0
    out = capsys.readouterr().out
    for name in study_names():
        assert out.count(name) == 3  # quick, standard and full
    assert "estimate" in out and "events per CPU second" in out
    assert main(["reproduce", "--list", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["studies"]
    assert {(r["study"], r["scale"]) for r in rows} == {
        (s, sc) for s in study_names() for sc in ("quick", "standard", "full")
    }
    quick = sum(r["cpu_seconds"] for r in rows if r["scale"] == "quick")
    assert all(r["runs"] > 0 and r["events"] > 0 for r in rows)
    assert quick < 300  # the four quick scales together fit CI time on one core


@pytest.mark.parametrize(
    ("args", "field"),
    [
        (["reproduce", "no-such-study"], "STUDY"),
        (["reproduce"], "STUDY"),
        (["reproduce", "rueth-tma19", "--backend", "kernel", "--cluster", "tcp://127.0.0.1:1"], "--cluster"),
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
    for row in rows:
        assert row["verdict"] in VERDICTS
        assert isinstance(row["mean"], float) and math.isfinite(row["mean"]), row
        assert row["n"] >= 2
        assert row["statement"] and row["setup"] and row["tolerance"]
    on_disk = json.loads((out / "scorecard.json").read_text())
    assert on_disk["findings"] == rows
    # The documentation's reference scorecard (docs/data/scorecards/, its table generated from it) is this
    # build's: after a deliberate change of behaviour, store the new one (`python -m ccfair.devtools.docs
    # --scorecards DIR`, then `make docs`).
    reference = {r["key"]: r for r in json.loads((SCORECARDS / f"{name}.json").read_text())["findings"]}
    assert list(reference) == [r["key"] for r in rows], "findings differ from the stored scorecard"
    for row in rows:
        stored = reference[row["key"]]
        assert (row["verdict"], row["n"]) == (stored["verdict"], stored["n"]), f"stale: {row['key']}"
        assert math.isclose(row["mean"], stored["mean"], rel_tol=1e-3, abs_tol=1e-6), f"stale: {row['key']}"
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


@pytest.fixture
def kernel_host(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """This host as if `ccfair doctor` had measured it clean up to 200 Mbps, with reno, cubic and bbr."""
    path = tmp_path / "doctor.json"
    measurement = {
        "host_key": doctor.host_key(),
        "measured_at": "2026-01-01 00:00:00",
        "clean_rate_bps": 200_000_000,
        "probes": [],
    }
    path.write_text(json.dumps(measurement))
    monkeypatch.setenv(doctor.ENV_VAR, str(path))
    monkeypatch.setattr(emu_host, "kernel_ccs", lambda: ["reno", "cubic", "bbr"])
    return path


def test_kernel_plans_have_the_kernel_backend_and_runs_of_their_own(kernel_host):
    study = get_study("philip-imc21")  # quick: 100 Mbps, reno, cubic and bbr: fits a 200 Mbps clean rate
    sim = study.plans("quick", 2)
    kernel = study.plans("quick", 2, "kernel")
    assert [p.name for p, _ in sim] == [p.name for p, _ in kernel]
    assert all(plan.backend == "kernel" and "-kernel-quick-" in plan.name for _, plan in kernel)
    assert not {plan.name for _, plan in sim} & {plan.name for _, plan in kernel}
    sim_ids = {r.run_id for _, plan in sim for r in plan_runs(plan)[1]}
    kernel_runs = [r for _, plan in kernel for r in plan_runs(plan)[1]]
    kernel_ids = {r.run_id for r in kernel_runs}
    assert len(kernel_ids) == len(sim_ids) and not sim_ids & kernel_ids
    # The kernel runs this machine's hosts: the start spread is each group's uniform arrivals instead.
    assert all("host" not in r.scenario for r in kernel_runs)
    assert {g["arrivals"]["window"] for r in kernel_runs for g in r.scenario["flows"]} == {"10s"}


def test_a_kernel_scale_above_the_clean_rate_is_refused_up_front(kernel_host, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for extra in (["--dry-run"], []):
        args = ["reproduce", "sasaki-cloudnet18", "--scale", "quick", "--backend", "kernel", "--out", "out"]
        assert main([*args, *extra]) == 2
        err = capsys.readouterr().err
        assert "error: link.rate: sasaki-cloudnet18 at the quick scale cannot run on the kernel" in err
        assert "1Gbps is above what the forwarder handles cleanly on this host (200Mbps" in err
        assert not (tmp_path / "out").exists()  # nothing written
        # CoreScale's senders are hosts the kernel backend does not have (this machine's are its hosts):
        # refused by the first of its settings, with the scale's kernel note naming the rate too.
        args = ["reproduce", "philip-imc21", "--scale", "full", "--backend", "kernel", "--out", "out"]
        assert main([*args, *extra]) == 2
        err = capsys.readouterr().err
        assert "error: host.nic_rate: philip-imc21 at the full scale cannot run on the kernel backend" in err
        assert "CoreScale's 10 Gbps is far above the clean rate" in err
        assert not (tmp_path / "out").exists()
    # Within the clean rate the dry run counts the kernel runs, one after the other.
    assert main(["reproduce", "philip-imc21", "--backend", "kernel", "--out", "out", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "plan repro-philip-imc21-kernel-quick-r2-edge-reno: 12 runs" in out
    assert "the 72 runs to do run one at a time" in out


def _stored_long_scales() -> list[Path]:
    return sorted(p for scale in ("standard", "full") for p in (SCORECARDS / scale).glob("*.json"))


@pytest.mark.parametrize("path", _stored_long_scales(), ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_a_stored_longer_scale_scorecard_still_describes_its_study_s_scale(path):
    """The standard and full scales take too long to run here: their stored scorecards must at least be of the
    study as it is now (the same findings, repetitions, setup and plans), so a change that would move them
    fails until they are run again (`make reference-scorecards`)."""
    document = json.loads(path.read_text(encoding="utf-8"))
    scale = path.parent.name
    assert document["scale"] == scale and document["study"] == path.stem
    study = get_study(path.stem)
    info = study.scales[scale]
    assert document["repetitions"] == info.repetitions
    assert document["setup"] == info.setup
    assert [f["key"] for f in document["findings"]] == [f.key for f in study.findings]
    assert document["plans"] == [plan.name for _, plan in study.plans(scale, info.repetitions)]
    assert sum(document["counts"].values()) == len(document["findings"])
    assert all(f["verdict"] in VERDICTS for f in document["findings"])


def test_every_study_has_a_standard_scale_between_quick_and_full():
    for name in study_names():
        study = get_study(name)
        assert list(study.scales) == ["quick", "standard", "full"], name
        quick, standard, full = (study.scales[s] for s in ("quick", "standard", "full"))
        assert quick.repetitions <= standard.repetitions <= full.repetitions, name
