"""Reading a results directory while a sweep writes to it: a sweep runs in a subprocess, and while it runs
``ccfair status``, ``ccfair query``, ``ccfair.load`` and ``ccfair plot`` succeed and see the runs committed
so far (more as time goes on, never a half-committed one). The sweep is far longer than the reads, however
fast the machine, and is stopped with Ctrl-C once they are done."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import ccfair
from ccfair.store import layout
from conftest import CUBIC_20MS, default_sigint, plan_toml, run_cli

# Simulations, sweeps or subprocesses, seconds per test: `make test` runs them, `make check` leaves them out.
pytestmark = pytest.mark.slow

# 400 runs of 0.1 to 0.6 s on one worker: the sweep would run for a minute or more.
PLAN = plan_toml(
    {"link.buffer": ["0.5bdp", "1bdp", "2bdp", "4bdp"], "flows[0].count": [1, 2]},
    [{**CUBIC_20MS, "loss": 0.0001}, {"cc": "reno", "rtt": "40ms", "loss": 0.0001}],
    duration="40s",
    link={"rate": "100Mbps", "buffer": "1bdp"},
    name="slow",
    repetitions=50,
)
RUNS = 400
POLL_S = 0.2


def _done_in_status(root: Path) -> int:
    proc = run_cli("status", str(root), "--json")
    assert proc.returncode == 0, proc.stderr
    status = json.loads(proc.stdout)
    return sum(p["done"] for p in status["plans"])


def test_status_query_load_and_plot_work_while_a_sweep_writes(tmp_path):
    plan = tmp_path / "slow.toml"
    plan.write_text(PLAN)
    root = tmp_path / "results"
    sweep = subprocess.Popen(
        [sys.executable, "-m", "ccfair", "sweep", str(plan), "--out", str(root), "--jobs", "1", "--quiet"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=default_sigint,
    )
    try:
        deadline = time.monotonic() + 120
        while not (root / "catalog.duckdb").exists() or _done_in_status(root) < 2:
            assert sweep.poll() is None, sweep.communicate()
            assert time.monotonic() < deadline
            time.sleep(POLL_S)
        status = json.loads(run_cli("status", str(root), "--json").stdout)
        assert status["running"]["pid"] == sweep.pid and status["running"]["plan"] == "slow"
        first = status["plans"][0]["done"]
        assert 2 <= first < RUNS

        query = run_cli("query", str(root), "select count(*) AS n from runs where status = 'done'", "--json")
        assert query.returncode == 0, query.stderr
        queried = json.loads(query.stdout)[0]["n"]
        assert first <= queried < RUNS

        res = ccfair.load(root)
        done = res.runs[res.runs["status"] == "done"]
        assert queried <= len(done) < RUNS
        # Every committed run is whole: its flows and classes are there, and its time series reads.
        assert set(res.flows["run_id"]) == set(done["run_id"])
        assert len(res.timeseries(done["run_id"].iloc[0][:8])) > 0

        out = tmp_path / "box.png"
        plot = run_cli("plot", str(root), "--kind", "box", "--by", "cell", "-o", str(out))
        assert plot.returncode == 0, plot.stderr
        assert out.read_bytes().startswith(b"\x89PNG")
        assert sweep.poll() is None, "the sweep ended before the reads: the test did not read during a sweep"
        sweep.send_signal(signal.SIGINT)
    finally:
        _, err_text = sweep.communicate(timeout=300)
    assert sweep.returncode == 130, err_text
    # Stopped: what it committed stays, whole; the snapshot and the status file are gone.
    res = ccfair.load(root)
    final = res.runs[res.runs["status"] == "done"]
    assert len(done) <= len(final) < RUNS and set(res.flows["run_id"]) == set(final["run_id"])
    assert _done_in_status(root) == len(final)
    assert not (root / layout.SNAPSHOT_FILE).exists() and not (root / layout.STATUS_FILE).exists()
