"""Crash safety: a sweep killed with SIGKILL mid-way (twice) keeps every run it recorded as done, complete;
its workers stop; resuming finishes every run of the plan exactly once."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

import ccfair
from ccfair.store import layout
from ccfair.sweep.expand import expand
from ccfair.sweep.plan import load_plan
from test_sweep_support import BASE, write_plan

# Simulations, sweeps or subprocesses, seconds per test: `make test` runs them, `make check` leaves them out.
pytestmark = pytest.mark.slow

# Runs of about 0.1 s: status.json is written every 0.5 s, so with shorter runs a whole sweep's remainder can
# finish (and remove status.json) between two looks, and a kill would not land mid-way.
DURATION_NS = 20 * 10**9
INTERVALS = 200  # 20 s at the default 100 ms


def start_sweep(plan: Path, out: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "ccfair", "sweep", str(plan), "--out", str(out), "--jobs", "2", "--quiet"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def wait_for_done(out: Path, at_least: int, timeout_s: float = 60) -> None:
    status = out / layout.STATUS_FILE
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            if json.loads(status.read_text()).get("done", 0) >= at_least:
                return
        except (OSError, ValueError):
            pass
        time.sleep(0.01)
    raise AssertionError(f"fewer than {at_least} runs done after {timeout_s} s")


def alive(pid: int) -> bool:
    """Whether a process exists and is not a zombie."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def check_done_runs_are_complete(out: Path) -> pd.DataFrame:
    res = ccfair.load(out)
    done = res.runs[res.runs["status"] == "done"]
    assert len(done) == len(res.runs) and done["run_id"].is_unique
    assert (res.flows.groupby("run_id").size().reindex(done["run_id"]) == 2).all()
    assert set(res.classes["run_id"]) == set(done["run_id"])
    assert done["jain_index"].notna().all() and done["summary_json"].notna().all()
    for run_id in done["run_id"]:
        series = res.timeseries(run_id)
        assert series["t_ns"].max() == DURATION_NS and set(series["flow_id"]) == {0, 1}
        assert len(res.queue(run_id)) == INTERVALS
    return done


def test_sigkill_mid_sweep_keeps_done_runs_and_resume_runs_each_once(tmp_path):
    # 160 runs, about 8 s of work for two workers: with half that, a writer starved of CPU on a busy 2-core
    # machine updated status.json too late and the whole plan finished before the kill landed.
    plan = write_plan(tmp_path / "p.toml", repetitions=40, scenario={**BASE, "duration": "20s"})
    expected = {r.run_id for r in expand(load_plan(plan))}
    out = tmp_path / "results"
    committed: dict[str, pd.Timestamp] = {}
    for kill_after in (5, 15):
        sweep = start_sweep(plan, out)
        wait_for_done(out, len(committed) + kill_after)
        sweep.send_signal(signal.SIGKILL)
        sweep.wait(timeout=30)
        assert sweep.returncode == -signal.SIGKILL
        done = check_done_runs_are_complete(out)
        assert len(committed) < len(done) < len(expected), "killed mid-way"
        assert set(done["run_id"]) <= expected
        # Runs done before an earlier kill were kept as they were, not run again.
        again = dict(zip(done["run_id"], done["committed_at"], strict=True))
        assert all(again[r] == t for r, t in committed.items())
        committed = again
        workers = {int(w.split()[1]) for w in done["worker"]}
        deadline = time.monotonic() + 15
        while any(alive(pid) for pid in workers) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not any(alive(pid) for pid in workers), "workers outlived the killed sweep"

    final = start_sweep(plan, out)
    _, stderr = final.communicate(timeout=120)
    assert final.returncode == 0, stderr
    done = check_done_runs_are_complete(out)
    assert sorted(done["run_id"]) == sorted(expected)
    assert all(done.set_index("run_id").loc[r, "committed_at"] == t for r, t in committed.items())
    files = list((out / layout.SERIES_DIR).glob("*/*"))
    assert len(files) == 2 * len(expected) and not any(layout.TMP_MARK in f.name for f in files)
    assert not (out / layout.STATUS_FILE).exists() and not (out / layout.SNAPSHOT_FILE).exists()
    assert os.path.exists(out / layout.CATALOG_FILE)
