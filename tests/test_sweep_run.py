"""Running sweeps: the command line, resume and retry, failures recorded while the others go on (invalid
cells, timeouts, exceptions in the core, dying workers), and bad input."""

import json
import os
import signal
import subprocess
import sys
import time

import pandas as pd
import pytest

import ccfair
from ccfair.errors import InputError
from ccfair.store import layout, query
from ccfair.store.export import export
from ccfair.store.status import store_status
from ccfair.sweep.driver import run_sweep
from ccfair.sweep.execute_dask import connect
from ccfair.sweep.plan import plan_from_dict
from conftest import REPO, default_sigint, run_cli
from test_sweep_support import (
    crash_on_rtt_20ms,
    plan_dict,
    raise_on_half_bdp,
    terminated_on_rtt_20ms,
    write_plan,
)

# Simulations, sweeps or subprocesses, seconds per test: `make test` runs them, `make check` leaves them out.
pytestmark = pytest.mark.slow


def statuses(root):
    runs = ccfair.load(root).runs
    return {
        (b, r, k): (s, None if pd.isna(e) else e)
        for b, r, k, s, e in zip(
            runs["link_buffer"],
            runs["flows0_rtt"],
            runs["repetition"],
            runs["status"],
            runs["error_kind"],
            strict=True,
        )
    }


def test_sweep_command_runs_resumes_and_reports(tmp_path):
    plan = write_plan(tmp_path / "small.toml")
    out = tmp_path / "results"
    first = run_cli("sweep", str(plan), "--out", str(out), "--jobs", "2")
    assert first.returncode == 0, first.stderr
    assert first.stdout == ""
    assert "sweep small: 8 runs; 0 done before, 8 run now: 8 done, 0 failed" in first.stderr
    again = run_cli("sweep", str(plan), "--out", str(out), "--quiet")
    assert again.returncode == 0 and again.stderr == ""
    status = run_cli("status", str(out))
    assert status.returncode == 0
    assert status.stdout.splitlines()[1].split() == ["small", "sim", "8", "8", "0", "0", "-"]
    committed = ccfair.load(out).runs["committed_at"]
    # Growing the plan runs only the new cells.
    bigger = write_plan(
        tmp_path / "small.toml",
        grid={"link.buffer": ["0.5bdp", "1bdp", "2bdp"], "flows[0].rtt": ["20ms", "50ms"]},
    )
    dry = run_cli("sweep", str(bigger), "--out", str(out), "--dry-run")
    assert (
        dry.returncode == 0
        and "6 cells, 12 runs" in dry.stdout
        and "8 done, 0 failed, 4 to run" in dry.stdout
    )
    grown = run_cli("sweep", str(bigger), "--out", str(out), "--jobs", "1")
    assert grown.returncode == 0 and "8 done before, 4 run now: 4 done" in grown.stderr
    runs = ccfair.load(out).runs
    assert len(runs) == 12 and sorted(runs["committed_at"])[:8] == sorted(committed)


def test_failures_are_recorded_and_the_other_runs_finish(tmp_path):
    # 1000B is below one packet (an invalid cell); 10 Gbps with 1000 flows cannot finish within 0.2 s (about
    # 1 s on one core of a fast machine: 200 flows already took only 0.17 s there).
    plan = write_plan(
        tmp_path / "mixed.toml",
        repetitions=1,
        grid={"link.buffer": ["1bdp", "1000B"], "link.rate": ["10Mbps", "10Gbps"]},
        zip=[{"flows[0].count": [1, 1000]}],
    )
    out = tmp_path / "results"
    refused = run_cli("sweep", str(plan), "--out", str(out))
    assert refused.returncode == 2 and "(in cell 4: link.buffer" in refused.stderr and not out.exists()
    done = run_cli(
        "sweep", str(plan), "--out", str(out), "--skip-invalid", "--time-limit", "200ms", "--jobs", "2"
    )
    assert done.returncode == 1, done.stderr
    assert "(4 invalid, 1 timeout)" in done.stderr
    runs = ccfair.load(out).runs.set_index(["link_buffer", "link_rate", "flows0_count"])
    assert runs.loc[("1bdp", "10Mbps", 1), "status"] == "done"
    assert runs.loc[("1bdp", "10Mbps", 1000), "status"] == "done"
    assert runs.loc[("1bdp", "10Gbps", 1), "status"] == "done"
    slow = runs.loc[("1bdp", "10Gbps", 1000)]
    assert (slow["status"], slow["error_kind"]) == ("failed", "timeout")
    assert "0.2 s wall-time limit" in slow["error"] and slow["task_wall_seconds"] < 5
    invalid = runs[runs["error_kind"] == "invalid"]
    assert len(invalid) == 4 and invalid["error"].str.contains("link.buffer: 1KB").all()
    status = store_status(out)["plans"][0]
    assert (status["done"], status["failed"], status["failures"]) == (3, 5, {"invalid": 4, "timeout": 1})
    # Failed runs stay failed on resume, and run again with --retry-failed (the timeout then completes).
    resumed = run_sweep(plan, out, jobs=1, skip_invalid=True)
    assert (resumed.skipped_failed, resumed.to_run) == (5, 0)
    assert ccfair.load(out).runs["committed_at"].max() == runs["committed_at"].max()
    retried = run_sweep(plan, out, jobs=1, skip_invalid=True, retry_failed=True)
    assert (retried.to_run, retried.done, dict(retried.failures)) == (5, 1, {"invalid": 4})
    assert len(ccfair.load(out).runs) == 8


def test_dying_workers_and_failing_runs_do_not_stop_the_sweep(tmp_path):
    plan = plan_from_dict(plan_dict(), default_name="faults")
    crashed = run_sweep(plan, tmp_path / "crash", jobs=2, task_fn=crash_on_rtt_20ms)
    assert (crashed.done, crashed.failed, dict(crashed.failures)) == (6, 2, {"crash": 2})
    by_cell = statuses(tmp_path / "crash")
    for rep in (0, 1):
        assert by_cell[("1bdp", "20ms", rep)] == ("failed", "crash")
        assert by_cell[("0.5bdp", "20ms", rep)] == ("done", None)
    errors = ccfair.load(tmp_path / "crash").runs["error"].dropna()
    assert set(errors) == {"worker process died (killed by signal SIGKILL)"}

    # A worker sent SIGTERM mid-run (a kernel run tears down first) dies of the signal, not of a traceback.
    terminated = run_sweep(plan, tmp_path / "term", jobs=2, task_fn=terminated_on_rtt_20ms)
    assert (terminated.done, dict(terminated.failures)) == (6, {"crash": 2})
    errors = ccfair.load(tmp_path / "term").runs["error"].dropna()
    assert set(errors) == {"worker process died (killed by signal SIGTERM)"}

    raised = run_sweep(plan, tmp_path / "raise", jobs=1, task_fn=raise_on_half_bdp)
    assert (raised.done, raised.failed, dict(raised.failures)) == (4, 4, {"exception": 4})
    runs = ccfair.load(tmp_path / "raise").runs
    failed = runs[runs["status"] == "failed"]
    assert set(failed["link_buffer"]) == {"0.5bdp"}
    assert set(failed["error"]) == {"RuntimeError: injected failure in the core"}


def test_ctrl_c_stops_the_sweep_and_keeps_finished_runs(tmp_path):
    plan = write_plan(tmp_path / "long.toml", repetitions=100)
    out = tmp_path / "results"
    sweep = subprocess.Popen(
        [sys.executable, "-m", "ccfair", "sweep", str(plan), "--out", str(out), "--jobs", "2"],
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        preexec_fn=default_sigint,
    )
    status_file = out / layout.STATUS_FILE
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if status_file.exists() and json.loads(status_file.read_text() or "{}").get("done", 0) >= 4:
            break
        time.sleep(0.05)
    os.killpg(sweep.pid, signal.SIGINT)  # Ctrl-C reaches the whole process group
    _, stderr = sweep.communicate(timeout=30)
    assert sweep.returncode == 130, stderr
    assert "run the same command again to resume" in stderr
    runs = ccfair.load(out).runs
    assert 4 <= len(runs) < 800 and set(runs["status"]) == {"done"}
    assert not status_file.exists()


# ------------------------------------------------------------------------------------------------ bad input


@pytest.mark.parametrize(
    ("args", "field"),
    [
        (["--jobs", "0"], "--jobs"),
        (["--time-limit", "soon"], "--time-limit"),
        (["--time-limit", "0s"], "--time-limit"),
        (["--jobs", "2", "--cluster", "tcp://x:1"], "--cluster"),
    ],
)
def test_bad_sweep_options(tmp_path, args, field):
    plan = write_plan(tmp_path / "p.toml")
    out = tmp_path / "results"
    result = run_cli("sweep", str(plan), "--out", str(out), *args)
    assert result.returncode == 2 and field in result.stderr and "Traceback" not in result.stderr
    assert not out.exists()


def test_bad_plan_files(tmp_path):
    out = tmp_path / "results"
    missing = run_cli("sweep", str(tmp_path / "nope.toml"), "--out", str(out))
    assert missing.returncode == 2 and "nope.toml: no such file" in missing.stderr
    broken = tmp_path / "broken.toml"
    broken.write_text("[grid\n")
    result = run_cli("sweep", str(broken), "--out", str(out))
    assert result.returncode == 2 and "invalid TOML" in result.stderr
    wrong = write_plan(tmp_path / "wrong.toml", grid={"link.rte": ["1Mbps"]})
    result = run_cli("sweep", str(wrong), "--out", str(out))
    assert result.stderr.startswith("error: link.rte: unknown key 'rte'") and "(in cell 0" in result.stderr
    assert not out.exists()


def test_bad_query_and_export(tmp_path):
    plan = write_plan(tmp_path / "p.toml", repetitions=1, grid={"link.buffer": ["1bdp"]})
    out = tmp_path / "results"
    assert run_sweep(plan, out, jobs=1).done == 1
    for sql, message in [
        ("selec 1", "syntax error"),
        ("delete from runs", "read-only"),
        ("select * from nope", "nope"),
    ]:
        with pytest.raises(InputError) as err:
            query(out, sql)
        assert err.value.field == "SQL" and message in err.value.message
    assert len(ccfair.load(out).runs) == 1
    result = run_cli("query", str(out), "selec 1")
    assert result.returncode == 2 and result.stderr.startswith("error: SQL: ") and result.stdout == ""
    with pytest.raises(InputError, match="unknown table 'nope'"):
        export(out, "csv", tables=["runs", "nope"])
    result = run_cli("export", str(out), "--format", "xml")
    assert result.returncode == 2 and "--format" in result.stderr
    assert not (out / "export-csv").exists() and not (out / "export-xml").exists()
    table = run_cli("query", str(out), "select status, count(*) as n from runs group by 1")
    assert table.returncode == 0 and table.stdout.split() == ["status", "n", "done", "1", "(1", "rows)"]
    csv = run_cli("query", str(out), "select status, count(*) as n from runs group by 1", "--csv")
    assert csv.stdout == "status,n\ndone,1\n"


def test_unreachable_cluster_is_bad_input():
    pytest.importorskip("distributed")
    with pytest.raises(InputError) as err:
        connect("tcp://127.0.0.1:9", timeout_s=1)
    assert err.value.field == "--cluster" and "tcp://127.0.0.1:9" in err.value.message


def test_unreachable_cluster_fails_fast_and_writes_nothing(tmp_path):
    """Nothing listens on the discard port: the sweep gives up after the connect timeout (5 s by default),
    with exit code 2 naming --cluster, before the results directory is made."""
    pytest.importorskip("distributed")
    plan = write_plan(tmp_path / "plan.toml", repetitions=1)
    out = tmp_path / "results"
    started = time.monotonic()
    result = run_cli("sweep", str(plan), "--out", str(out), "--cluster", "tcp://127.0.0.1:9")
    elapsed = time.monotonic() - started
    assert result.returncode == 2, result.stderr
    assert "error: --cluster: cannot reach a Dask scheduler at tcp://127.0.0.1:9 within 5 s" in result.stderr
    assert not out.exists()
    assert elapsed < 25  # was 30 s of waiting before the connect timeout became 5 s
    quick = run_cli(
        "sweep", str(plan), "--out", str(out), "--cluster", "tcp://127.0.0.1:9", "--cluster-timeout", "1s"
    )
    assert quick.returncode == 2 and "within 1 s" in quick.stderr and not out.exists()
    local = run_cli("sweep", str(plan), "--out", str(out), "--cluster-timeout", "1s")
    assert local.returncode == 2 and "error: --cluster-timeout: applies to --cluster only" in local.stderr


def test_cluster_without_dask_says_how_to_install_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "distributed", None)  # import distributed now raises ImportError
    with pytest.raises(InputError) as err:
        connect("tcp://127.0.0.1:9")
    assert err.value.field == "--cluster" and "pip install 'ccfair[dask]'" in err.value.message


def test_library_entry_point_and_dunder_all():
    assert callable(ccfair.load) and "load" in ccfair.__all__
    assert REPO.is_dir()
