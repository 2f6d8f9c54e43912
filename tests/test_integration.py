"""Small real runs through the library and the command line."""

import json
import os
import pty
import signal
import subprocess
import sys
import tomllib

import pandas as pd
import pytest

import ccfair
from ccfair import _native
from ccfair.analysis import schema
from ccfair.catalog import catalog
from ccfair.errors import OutputError
from ccfair.result import TABLE_FILES
from conftest import SCENARIOS, SMALL_TOML, default_sigint, read_pty, read_pty_until, run_cli, small
from test_metrics import schema_problems

# Simulations, sweeps or subprocesses, seconds per test: `make test` runs them, `make check` leaves them out.
pytestmark = pytest.mark.slow

TIMESERIES_COLUMNS = {
    "t_ns",
    "flow_id",
    "delivered_bytes",
    "goodput_bps",
    "cwnd",
    "ssthresh",
    "srtt_ns",
    "ca_state",
}
QUEUE_COLUMNS = {
    "t_ns",
    "backlog_bytes",
    "backlog_packets",
    "sojourn_p50_ns",
    "sojourn_p99_ns",
    "drops",
    "tx_bytes",
}


@pytest.fixture(scope="module")
def result():
    return ccfair.run(small(), seed=1)


def test_run_returns_documented_tables(result):
    assert isinstance(result, ccfair.RunResult)
    assert list(result.flows.columns[: len(schema.FLOW_NAMES)]) == list(schema.FLOW_NAMES)
    assert list(result.classes.columns) == list(schema.CLASS_NAMES)
    assert TIMESERIES_COLUMNS <= set(result.timeseries.columns)
    assert QUEUE_COLUMNS <= set(result.queue.columns)
    assert all(
        isinstance(f, pd.DataFrame) for f in (result.flows, result.classes, result.timeseries, result.queue)
    )
    assert list(result.summary) == list(schema.SUMMARY_KEYS)  # two flows: fness too
    assert schema_problems(result.flows, result.classes, result.summary) == []
    assert result.seed == 1 and result.scenario.seed == 1
    assert len(result.flows) == 2 and result.flows["cc"].tolist() == ["reno", "cubic"]
    assert len(result.queue) == 100  # 10 s in 100 ms intervals


def test_run_physics_bounds(result):
    rate = 10_000_000
    flows = result.flows
    assert (flows["goodput_bps"] <= rate).all()
    assert flows["goodput_bps"].sum() <= rate
    assert flows["goodput_bps"].sum() == pytest.approx(result.summary["total_goodput_bps"])
    assert flows["share"].sum() == pytest.approx(1.0)
    assert result.classes["share"].sum() == pytest.approx(1.0)
    assert 0 < result.summary["utilization"] <= 1.0
    assert 0.5 <= result.summary["jain_index"] <= 1.0  # two flows
    assert -1.0 <= result.summary["fness"] <= 1.0
    assert result.summary["events"] > 0
    # per interval, in-order goodput may exceed the link rate (a retransmission releases buffered data at
    # once), but not over the whole run
    assert result.timeseries["delivered_bytes"].sum() <= rate * 10 / 8
    assert result.flows["total_delivered_bytes"].sum() == result.timeseries["delivered_bytes"].sum()


def test_progress_and_seed_precedence():
    seen = []
    r = ccfair.run(small(seed=7), progress=seen.append)
    assert r.seed == 7
    # reported at most ten times a second and once at the end
    assert seen == sorted(seen) and seen[-1] == pytest.approx(1.0) and len(seen) >= 1
    assert ccfair.run(small(seed=7), seed=0).seed == 0
    assert ccfair.run(small()).seed == 1


def test_seed_changes_random_runs():
    lossy = small()
    lossy["flows"][0]["loss"] = 0.01
    a, b = ccfair.run(lossy, seed=1), ccfair.run(lossy, seed=2)
    assert a.flows["window_delivered_bytes"].tolist() != b.flows["window_delivered_bytes"].tolist()


def test_run_accepts_paths_and_scenarios(small_toml):
    by_path = ccfair.run(small_toml)
    by_str = ccfair.run(str(small_toml))
    by_obj = ccfair.run(ccfair.Scenario.from_toml(small_toml))
    assert by_path.seed == 3  # from the file
    docs = [r.to_json_dict() for r in (by_path, by_str, by_obj)]
    for d in docs:
        d["summary"].pop("wall_seconds")
    assert docs[0] == docs[1] == docs[2]


def test_run_rejects_bad_input_before_running():
    with pytest.raises(ccfair.InputError) as info:
        ccfair.run(small(duration="-1s"))
    assert info.value.field == "duration"
    with pytest.raises(ccfair.InputError) as info:
        ccfair.run(small(), seed=-1)
    assert info.value.field == "seed"


def test_cli_json_document(small_toml):
    result = run_cli("run", str(small_toml), "--json")
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)  # exactly one document
    assert set(doc) == {"summary", "flows", "classes", "scenario"}
    assert list(doc["summary"]) == list(schema.SUMMARY_KEYS)
    flow_keys, class_keys = schema.json_keys(schema.flows()), schema.json_keys(schema.CLASSES)
    assert all(tuple(f) == flow_keys for f in doc["flows"]) and len(doc["flows"]) == 2
    assert all(tuple(c) == class_keys for c in doc["classes"])
    assert doc["scenario"]["seed"] == 3
    assert (
        ccfair.Scenario.from_dict(doc["scenario"]).resolve()
        == ccfair.Scenario.from_toml(small_toml).resolve()
    )
    assert "NaN" not in result.stdout and "Infinity" not in result.stdout


def test_cli_same_seed_same_document(small_toml):
    docs = []
    for _ in range(2):
        result = run_cli("run", str(small_toml), "--json", "--seed", "11")
        assert result.returncode == 0, result.stderr
        doc = json.loads(result.stdout)
        assert doc["scenario"]["seed"] == 11
        assert isinstance(doc["summary"].pop("wall_seconds"), float)
        docs.append(doc)
    assert docs[0] == docs[1]


def test_cli_tables(small_toml):
    result = run_cli("run", str(small_toml))
    assert result.returncode == 0, result.stderr
    out = result.stdout
    for heading in ("Flows", "Classes", "Summary", "goodput Mbps", "rtt ms", "jain index", "fness"):
        assert heading in out
    assert result.stderr == ""  # no progress bar when stderr is not a terminal
    lines = [line for line in out.splitlines() if line.strip().startswith(("0 ", "1 "))]
    assert len(lines) == 2


def test_cli_out_and_load_round_trip(small_toml, tmp_path):
    out = tmp_path / "runs" / "one"
    result = run_cli("run", str(small_toml), "--out", str(out), "--json", "--quiet")
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    files = {p.name for p in out.iterdir()}
    assert files == {".ccfair.json", "scenario.toml", "summary.json", *TABLE_FILES.values()}
    assert [p.name for p in out.parent.iterdir()] == ["one"]  # no temporary siblings left
    stdout_doc = json.loads(result.stdout)
    assert json.loads((out / "summary.json").read_text()) == stdout_doc
    assert tomllib.loads((out / "scenario.toml").read_text())["seed"] == 3

    loaded = ccfair.load_run(out)
    assert loaded.to_json_dict() == stdout_doc
    assert loaded.seed == 3
    fresh = ccfair.run(small_toml)
    for name in TABLE_FILES:
        pd.testing.assert_frame_equal(getattr(loaded, name), getattr(fresh, name))


def test_save_replaces_only_on_success(result, tmp_path, monkeypatch):
    out = tmp_path / "run"
    result.save(out)
    before = (out / "summary.json").read_text()
    (out / "marker").write_text("old run")

    def fail(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(pd.DataFrame, "to_parquet", fail)
    with pytest.raises(OutputError, match="disk full"):
        result.save(out)
    assert (out / "marker").read_text() == "old run"  # the old run is intact
    assert (out / "summary.json").read_text() == before
    with pytest.raises(OutputError):
        result.save(tmp_path / "new")
    assert not (tmp_path / "new").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run"]

    monkeypatch.undo()
    result.save(out)
    assert not (out / "marker").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run"]


def test_cli_list():
    result = run_cli("list")
    assert result.returncode == 0, result.stderr
    beta = next(cc for cc in catalog()["congestion_controls"] if cc["name"] == "cubic")["defaults"]["beta"]
    assert "reno" in result.stdout and "cubic" in result.stdout and "fifo" in result.stdout
    beta_line = next(line for line in result.stdout.splitlines() if line.strip().startswith("beta "))
    assert str(beta) in beta_line
    as_json = run_cli("list", "--json")
    assert as_json.returncode == 0
    assert json.loads(as_json.stdout) == json.loads(_native.catalog())


def test_cli_bench_quick():
    result = run_cli("bench", "--quick", "--json")
    assert result.returncode == 0, result.stderr
    rows = json.loads(result.stdout)["benchmarks"]
    assert [r["name"] for r in rows] == ["A", "B"]
    for r in rows:
        assert r["events"] > 0 and r["wall_seconds"] > 0
        assert r["events_per_second"] == pytest.approx(r["events"] / r["wall_seconds"])
        assert r["wall_seconds_per_sim_second"] == pytest.approx(r["wall_seconds"] / r["sim_seconds"])


LONG_TOML = """\
duration = "600s"
[link]
rate = "1Gbps"
buffer = "1bdp"
[[flows]]
cc = "cubic"
rtt = "10ms"
count = 10
"""


@pytest.mark.skipif(sys.platform != "linux", reason="needs a pseudo-terminal")
def test_ctrl_c_exits_130_with_progress_on_a_terminal(tmp_path):
    path = tmp_path / "long.toml"
    path.write_text(LONG_TOML)
    out = tmp_path / "out"
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "ccfair", "run", str(path), "--out", str(out)],
        stdout=subprocess.PIPE,
        stderr=slave,
        text=True,
        preexec_fn=default_sigint,
    )
    os.close(slave)
    try:
        seen = read_pty_until(master, b"ETA")  # the progress bar is running
        proc.send_signal(signal.SIGINT)
        stdout, _ = proc.communicate(timeout=30)
        seen += read_pty(master, 0.2)
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(master)
    assert proc.returncode == 130
    assert stdout == ""
    assert b"interrupted" in seen and b"Traceback" not in seen
    assert not out.exists()
    assert list(tmp_path.iterdir()) == [path]


def test_module_and_entry_point_agree(small_toml):
    entry = os.path.join(os.path.dirname(sys.executable), "ccfair")
    if not os.path.exists(entry):
        pytest.skip("console script not installed")
    result = subprocess.run(
        [entry, "run", str(small_toml), "--json"], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["scenario"]["seed"] == 3


def test_small_toml_matches_small_dict():
    assert (
        ccfair.Scenario.from_dict(tomllib.loads(SMALL_TOML)).resolve()
        == ccfair.Scenario.from_dict(small()).resolve()
    )


HEAVY_MODULES = ("matplotlib", "pandas", "pyarrow", "rich", "duckdb", "dask", "jinja2", "scipy")


def test_importing_the_package_does_not_load_pandas():
    code = (
        "import sys, ccfair; ccfair.Scenario; assert 'pandas' not in sys.modules; "
        f"r = ccfair.run({str(SCENARIOS / 'default.toml')!r}); "
        "assert 'pandas' not in sys.modules; "
        "assert r.to_json_dict()['flows'] and 'pandas' not in sys.modules; "
        "r.flows; assert 'pandas' in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_run_json_loads_no_heavy_module(tmp_path):
    """`ccfair run --json` (the CLI parser, a run, its JSON document) loads none of the heavy libraries:
    they are imported where the tables, figures, store or cluster need them."""
    code = (
        "import sys, ccfair.cli; "
        f"status = ccfair.cli.main(['run', {str(SCENARIOS / 'default.toml')!r}, '--json', '--quiet']); "
        f"loaded = sorted(m for m in {HEAVY_MODULES!r} if m in sys.modules); "
        "print(status, loaded, file=sys.stderr)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(done.stdout)["summary"]["jain_index"] > 0
    assert done.stderr.strip().splitlines()[-1] == "0 []"


def test_the_command_asks_numpy_for_one_blas_thread_before_numpy_loads():
    """OpenBLAS reads its thread count when NumPy loads: the command sets it first (and keeps a user's)."""
    code = (
        "import os, sys, ccfair.cli; assert 'numpy' not in sys.modules; "
        "status = ccfair.cli.main(['list', '--json']); "
        "print(status, os.environ.get('OPENBLAS_NUM_THREADS'), 'numpy' in sys.modules, file=sys.stderr)"
    )
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
    assert done.stderr.strip().splitlines()[-1] == "0 1 True"
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={**env, "OPENBLAS_NUM_THREADS": "3"},
    )
    assert done.stderr.strip().splitlines()[-1] == "0 3 True"
