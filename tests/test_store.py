"""The result store: catalog contents, queries and exports against ``ccfair.run``, atomic commits (a failed
or killed commit leaves nothing visible), leftovers, locking, status."""

import json
import subprocess
import sys
import textwrap
import time

import duckdb
import numpy as np
import pandas as pd
import pytest

import ccfair
from ccfair import fsio
from ccfair.errors import InputError, OutputError
from ccfair.store import layout
from ccfair.store.schema import fits, value_type
from ccfair.store.status import store_status
from ccfair.store.writer import StoreWriter
from ccfair.sweep.driver import plan_runs, run_sweep
from ccfair.sweep.identity import run_seed
from ccfair.sweep.plan import plan_from_dict
from ccfair.sweep.task import RunTask, failure, run_task
from conftest import REPO, run_cli
from test_sweep_support import BASE, plan_dict, write_plan

# Simulations, sweeps or subprocesses, seconds per test: `make test` runs them, `make check` leaves them out.
pytestmark = pytest.mark.slow

SUMMARY_METRICS = [
    "jain_index",
    "utilization",
    "total_goodput_bps",
    "queue_sojourn_p50_ns",
    "drops",
    "events",
]


@pytest.fixture(scope="module")
def swept(tmp_path_factory):
    """A finished 8-run sweep (2 buffers x 2 RTTs x 2 repetitions), run in one worker process."""
    root = tmp_path_factory.mktemp("store") / "results"
    report = run_sweep(plan_from_dict(plan_dict(), default_name="small"), root, jobs=1)
    assert (report.done, report.failed) == (8, 0)
    return root


def direct_run(buffer, rtt, repetition):
    """The same cell run with ccfair.run: scenario from the base, seed from the documented derivation."""
    scenario = json.loads(json.dumps(BASE))
    scenario["link"]["buffer"] = buffer
    scenario["flows"][0]["rtt"] = rtt
    seed = run_seed(11, {"link.buffer": buffer, "flows[0].rtt": rtt}, repetition)
    return ccfair.run(scenario, seed=seed)


def run_id_of(root, buffer, rtt, repetition):
    frame = ccfair.load(root).runs
    row = frame[
        (frame["link_buffer"] == buffer) & (frame["flows0_rtt"] == rtt) & (frame["repetition"] == repetition)
    ]
    assert len(row) == 1
    return row["run_id"].iloc[0]


# ------------------------------------------------------------------------------------------ contents


def test_tables_read_one_after_another_describe_the_same_runs(tmp_path):
    """Each table is read when first used, through its own connection; runs committed in between (a sweep
    publishing a newer snapshot) must not show up in ``flows`` or ``classes`` when ``runs`` lacks them."""
    root = tmp_path / "results"
    run_sweep(plan_from_dict(plan_dict(repetitions=1), default_name="first"), root, jobs=1)
    results = ccfair.load(root)
    assert len(results.runs) == 4
    run_sweep(plan_from_dict(plan_dict(repetitions=1, seed=12), default_name="second"), root, jobs=1)
    assert len(ccfair.load(root).runs) == 8
    assert set(results.flows["run_id"]) == set(results.runs["run_id"])
    assert set(results.classes["run_id"]) == set(results.runs["run_id"])


def test_catalog_has_one_row_per_run_with_coordinates_metrics_and_provenance(swept):
    runs = ccfair.load(swept).runs
    assert len(runs) == 8 and set(runs["status"]) == {"done"}
    assert sorted(zip(runs["link_buffer"], runs["flows0_rtt"], runs["repetition"], strict=True)) == sorted(
        (b, r, k) for b in ("0.5bdp", "1bdp") for r in ("20ms", "50ms") for k in (0, 1)
    )
    row = runs.iloc[0]
    assert row["backend"] == "sim" and row["ccfair_version"] == ccfair.__version__
    assert row["executor"] == "local" and row["worker"].startswith("pid ") and row["host"]
    assert row["task_wall_seconds"] > 0 and row["link_rate_bps"] == 10**7 and row["flow_count"] == 2
    assert json.loads(row["scenario_json"])["seed"] == row["seed"]
    assert runs["error"].isna().all()
    assert (runs["buffer_packets"] > 0).all() and runs["buffer_bytes"].isna().all()


def test_status_counts_per_plan(swept):
    status = store_status(swept)
    assert status["running"] is None
    # Its path loss makes repetitions differ: four cells repeated, none identical.
    assert status["plans"] == [
        {
            "plan": "small",
            "runs": 8,
            "done": 8,
            "failed": 0,
            "missing": 0,
            "backend": "sim",
            "failures": {},
            "cells_repeated": 4,
            "cells_identical": [],
        }
    ]


def test_results_and_queries_equal_a_direct_run(swept):
    direct = direct_run("1bdp", "20ms", 1)
    rid = run_id_of(swept, "1bdp", "20ms", 1)
    res = ccfair.load(swept)
    row = res.runs[res.runs["run_id"] == rid].iloc[0]
    for key in [*SUMMARY_METRICS, "fness", "retransmissions"]:
        assert row[key] == direct.summary[key], key

    stored = res.result(rid).to_json_dict()
    expected = direct.to_json_dict()
    for document in (stored, expected):
        document["summary"].pop("wall_seconds")
    assert stored == expected
    pd.testing.assert_frame_equal(res.timeseries(rid).drop(columns="run_id"), direct.timeseries)
    pd.testing.assert_frame_equal(res.queue(rid).drop(columns="run_id"), direct.queue)

    sql = (
        "select flow_id, goodput_bps, share, retransmissions from flows "
        f"where run_id = '{rid}' order by flow_id"
    )
    cli = run_cli("query", str(swept), sql, "--json")
    assert cli.returncode == 0, cli.stderr
    assert json.loads(cli.stdout) == [
        {k: r[k] for k in ("flow_id", "goodput_bps", "share", "retransmissions")}
        for r in direct.to_json_dict()["flows"]
    ]
    sql = f"select sum(delivered_bytes) as b from timeseries where run_id = '{rid}'"
    assert res.query(sql)["b"].iloc[0] == direct.timeseries["delivered_bytes"].sum()


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
def test_exports_equal_a_direct_run(swept, tmp_path, fmt):
    direct = direct_run("0.5bdp", "50ms", 0)
    rid = run_id_of(swept, "0.5bdp", "50ms", 0)
    out = tmp_path / "export"
    cli = run_cli("export", str(swept), "--format", fmt, "--to", str(out))
    assert cli.returncode == 0, cli.stderr
    assert sorted(p.name for p in out.iterdir()) == sorted(
        [".ccfair.json"]
        + [f"{t}.{fmt}" for t in ("runs", "flows", "classes", "cells", "plans", "timeseries", "queue")]
    )

    def read(table):
        if fmt == "parquet":
            frame = pd.read_parquet(out / f"{table}.parquet")
        else:
            frame = pd.read_csv(out / f"{table}.csv")
        return frame[frame["run_id"] == rid].reset_index(drop=True)

    for table, columns in {
        "flows": ["flow_id", "goodput_bps", "share", "retransmissions", "drops", "rtt_mean_ms"],
        "classes": ["rtt_ns", "flows", "goodput_bps", "relative_goodput", "share", "jain_index"],
        "timeseries": ["t_ns", "flow_id", "delivered_bytes", "goodput_bps", "cwnd", "srtt_ns"],
        "queue": ["t_ns", "backlog_bytes", "drops", "tx_bytes"],
    }.items():
        got, want = read(table), getattr(direct, table)
        assert len(got) == len(want), table
        for c in columns:
            np.testing.assert_array_equal(
                got[c].to_numpy(dtype=float), want[c].to_numpy(dtype=float), err_msg=c
            )
    runs = read("runs")
    for key in SUMMARY_METRICS:
        assert runs[key].iloc[0] == direct.summary[key], key


# ------------------------------------------------------------------------------------- atomic commits


def one_repetition(n):
    """The plan of one repetition, its runs and the outcomes of its first ``n`` runs."""
    plan = plan_from_dict(plan_dict(repetitions=1))
    _, runs = plan_runs(plan)
    return plan, runs, [run_task(RunTask(r.run_id, r.scenario, r.seed)) for r in runs[:n]]


def test_a_commit_failing_inside_the_transaction_leaves_nothing_visible(tmp_path):
    plan, runs, outcomes = one_repetition(3)
    root = tmp_path / "results"
    with StoreWriter(root) as writer:
        writer.register_plan(plan, runs)
        writer.commit(plan.name, runs[0], outcomes[0], "local")
        insert = writer._insert_frame

        def fail_on_classes(table, frame):
            insert(table, frame)  # the runs and flows rows are in, then the transaction breaks
            if table == "classes":
                raise RuntimeError("disk full")

        writer._insert_frame = fail_on_classes
        with pytest.raises(RuntimeError):
            writer.commit_many(plan.name, [(runs[1], outcomes[1]), (runs[2], outcomes[2])], "local")
    lost = [layout.series_path(root, t, r.run_id) for t in layout.SERIES_TABLES for r in runs[1:3]]
    assert all(p.exists() for p in lost)  # renamed before the transaction, but referenced by no done row
    res = ccfair.load(root)
    assert list(res.runs["run_id"]) == [runs[0].run_id]
    assert set(res.flows["run_id"]) == {runs[0].run_id}
    assert set(res.query("select distinct run_id from timeseries")["run_id"]) == {runs[0].run_id}
    StoreWriter(root).close()  # the next writer removes what no done run references
    assert not any(p.exists() for p in lost)
    assert layout.series_path(root, "timeseries", runs[0].run_id).exists()


def test_a_failed_parquet_write_leaves_nothing_visible(tmp_path, monkeypatch):
    plan, runs, outcomes = one_repetition(2)
    root = tmp_path / "results"
    with StoreWriter(root) as writer:
        writer.register_plan(plan, runs)
        writer.commit(plan.name, runs[0], outcomes[0], "local")

        def disk_full(path, data):
            raise OSError(28, "No space left on device")

        monkeypatch.setattr("ccfair.fsio.write_synced", disk_full)
        with pytest.raises(OutputError, match=r"no space left on device.*run the sweep again to resume"):
            writer.commit(plan.name, runs[1], outcomes[1], "local")
    assert list(ccfair.load(root).runs["run_id"]) == [runs[0].run_id]


KILL_IN_COMMIT = textwrap.dedent(
    """
    import os, signal, sys
    sys.path.insert(0, "tests")
    from test_sweep_support import plan_dict
    from ccfair.store.writer import StoreWriter
    from ccfair.sweep.driver import plan_runs
    from ccfair.sweep.plan import plan_from_dict
    from ccfair.sweep.task import RunTask, run_task

    plan, runs = plan_runs(plan_from_dict(plan_dict(repetitions=1), default_name="small"))
    writer = StoreWriter(sys.argv[1])
    writer.register_plan(plan, runs)
    for r in runs[:2]:
        writer.commit(plan.name, r, run_task(RunTask(r.run_id, r.scenario, r.seed)), "local")
        writer._snapshot_interval_s = float("inf")  # the first commit published a snapshot, the next none
    insert = writer._insert_frame

    def insert_then_die(table, frame):
        insert(table, frame)
        if table == "classes":  # every row of the run is in the open transaction; COMMIT is next
            os.kill(os.getpid(), signal.SIGKILL)

    writer._insert_frame = insert_then_die
    r = runs[2]
    writer.commit(plan.name, r, run_task(RunTask(r.run_id, r.scenario, r.seed)), "local")
    """
)


def test_sigkill_inside_a_commit_loses_only_that_run(tmp_path):
    root = tmp_path / "results"
    killed = subprocess.run(
        [sys.executable, "-c", KILL_IN_COMMIT, str(root)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert killed.returncode == -9, killed.stderr
    plan = plan_from_dict(plan_dict(repetitions=1), default_name="small")
    _, runs = plan_runs(plan)
    # The killed writer left its last snapshot (one run old) and, say, a half-copied one; readers now
    # open the catalog itself, which is free again, not the stale snapshot.
    with duckdb.connect(str(root / layout.SNAPSHOT_FILE), read_only=True) as stale:
        assert stale.execute("select run_id from runs").fetchall() == [(runs[0].run_id,)]
    half_copied = root / f".{layout.SNAPSHOT_FILE}{layout.TMP_MARK}99999"
    half_copied.write_bytes(b"DUCK")
    res = ccfair.load(root)
    assert sorted(res.runs["run_id"]) == sorted(r.run_id for r in runs[:2])
    assert len(res.flows) == 4 and len(res.classes) == 4
    assert store_status(root)["plans"][0]["missing"] == 2
    report = run_sweep(plan, root, jobs=1)
    assert (report.already_done, report.done, report.failed) == (2, 2, 0)
    res = ccfair.load(root)
    assert sorted(res.runs["run_id"]) == sorted(r.run_id for r in runs)
    assert len(res.flows) == 8
    assert len(list((root / layout.SERIES_DIR).glob("*/*"))) == 8
    assert not (root / layout.SNAPSHOT_FILE).exists() and not half_copied.exists()


def test_runs_finishing_together_share_a_commit_and_retries_replace_failures(tmp_path):
    plan, runs, outcomes = one_repetition(3)
    root = tmp_path / "results"
    with StoreWriter(root) as writer:
        writer.register_plan(plan, runs)
        writer.commit_many(
            plan.name,
            [(runs[0], failure(runs[0].run_id, "timeout", "too slow")), (runs[1], outcomes[1])],
            "local",
        )
    with StoreWriter(root) as writer:
        assert writer.run_ids("failed") == {runs[0].run_id}
        writer.commit_many(plan.name, [(runs[0], outcomes[0]), (runs[2], outcomes[2])], "local")
    res = ccfair.load(root)
    rows = res.runs.set_index("run_id")
    assert sorted(rows.index) == sorted(r.run_id for r in runs[:3])
    assert set(rows["status"]) == {"done"} and rows["error"].isna().all()
    assert rows.loc[runs[1].run_id, "jain_index"] == outcomes[1].summary["jain_index"]
    assert list(rows.loc[[r.run_id for r in runs[:3]], "link_buffer"]) == ["0.5bdp", "0.5bdp", "1bdp"]
    assert res.flows.groupby("run_id").size().to_dict() == {r.run_id: 2 for r in runs[:3]}


# ------------------------------------------------------------------------------------------ the schema


def test_coordinate_columns_are_typed_from_the_plan_values(tmp_path):
    plan = plan_from_dict(
        plan_dict(
            grid={"flows[0].count": [1, 2], "flows[0].pacing": [False, True], "flows[0].loss": [0, 0.01]}
        )
    )
    _, runs = plan_runs(plan)
    root = tmp_path / "results"
    with StoreWriter(root) as writer:
        writer.register_plan(plan, runs)
        types = dict(writer._columns("runs"))
    assert types["flows0_count"] == "BIGINT"
    assert types["flows0_pacing"] == "BOOLEAN"
    assert types["flows0_loss"] == "DOUBLE"
    assert value_type(["1bdp", {"name": "fifo"}]) == "VARCHAR"
    assert fits("DOUBLE", "BIGINT") and fits("VARCHAR", "BOOLEAN") and not fits("BIGINT", "VARCHAR")
    cells = ccfair.load(root).cells
    assert len(cells) == 16 and list(cells["run_index"]) == list(range(16))


# ---------------------------------------------------------------------------------- locking and errors


HOLD_WRITER = textwrap.dedent(
    """
    import sys, time
    from ccfair.store.writer import StoreWriter
    writer = StoreWriter(sys.argv[1])
    writer.update_status({"plan": "p", "runs": 10, "done": 3, "failed": 1, "to_run": 6}, force=True)
    print("ready", flush=True)
    if sys.stdin.readline() == "snapshot\\n":
        writer.snapshot()
        print("published", flush=True)
        sys.stdin.read()
    writer.close()
    """
)


def test_a_store_held_by_a_sweep(tmp_path, monkeypatch):
    """While the writer holds the catalog and has published no snapshot, a reader waits (here at most 1 s)
    and then says a sweep is writing; once it publishes one (as a sweep does every few seconds) readers
    read the snapshot, and a second sweep is still kept out. The snapshot goes when the writer does."""
    monkeypatch.setenv("CCFAIR_STORE_WAIT_S", "1")
    root = tmp_path / "results"
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_WRITER, str(root)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline() == "ready\n"
        status = run_cli("status", str(root), "--json")
        assert status.returncode == 0, status.stderr
        running = json.loads(status.stdout)["running"]
        assert (running["pid"], running["done"], running["to_run"]) == (holder.pid, 3, 6)
        query = run_cli("query", str(root), "select 1")
        assert query.returncode == 2 and "a sweep is writing to this store" in query.stderr
        assert "has published no snapshot of it yet" in query.stderr
        holder.stdin.write("snapshot\n")
        holder.stdin.flush()
        assert holder.stdout.readline() == "published\n"
        query = run_cli("query", str(root), "select count(*) AS n from runs", "--json")
        assert query.returncode == 0, query.stderr
        assert json.loads(query.stdout) == [{"n": 0}]
        status = json.loads(run_cli("status", str(root), "--json").stdout)
        assert status["running"]["pid"] == holder.pid and status["plans"] == []
        plan = write_plan(tmp_path / "p.toml")
        sweep = run_cli("sweep", str(plan), "--out", str(root), "--quiet")
        assert sweep.returncode == 2 and f"error: {root}: is in use by another process" in sweep.stderr
    finally:
        holder.communicate("", timeout=30)
    assert not (root / layout.STATUS_FILE).exists()
    assert not (root / layout.SNAPSHOT_FILE).exists()


HOLD_READER = textwrap.dedent(
    """
    import sys, time
    from ccfair.store import layout
    con = layout.connect(layout.Path(sys.argv[1]), read_only=True)
    print("holding", flush=True)
    time.sleep(float(sys.argv[2]))
    con.close()
    print("released", flush=True)
    sys.stdin.read()
    """
)


def hold_catalog_for_reading(root, seconds):
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_READER, str(root), str(seconds)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout.readline() == "holding\n"
    return holder


def test_a_writer_waits_for_a_reader_and_not_for_ever(tmp_path, monkeypatch):
    """A reader (`ccfair status` between two plans of a study) holds the catalog for one query: a sweep
    opening it then waits for it instead of failing; a catalog held past the writer's wait is refused."""
    root = tmp_path / "results"
    StoreWriter(root).close()
    holder = hold_catalog_for_reading(root, 0.5)
    try:
        started = time.monotonic()
        writer = StoreWriter(root)
        waited_s = time.monotonic() - started
        writer.close()
        assert holder.stdout.readline() == "released\n"
        assert waited_s > 0.1
    finally:
        holder.communicate("", timeout=30)
    monkeypatch.setattr(layout, "WRITE_WAIT_S", 0.3)
    holder = hold_catalog_for_reading(root, 30)
    try:
        started = time.monotonic()
        with pytest.raises(layout.StoreBusy) as err:
            StoreWriter(root)
        assert 0.3 <= time.monotonic() - started < 10
        assert "is in use by another process" in err.value.message
    finally:
        holder.kill()
        holder.communicate("", timeout=30)


def test_a_results_directory_being_created_is_said_to_be(tmp_path):
    """In a sweep's first moments its directory holds the marker, not yet the catalog: status says a sweep is
    starting (exit 0), a query that it is being created, never that it is not a results directory."""
    root = tmp_path / "starting"
    root.mkdir()
    fsio.write_marker(root, layout.RESULTS_KIND)
    env = {"CCFAIR_STORE_WAIT_S": "0.2"}
    status = run_cli("status", str(root), env=env)
    assert status.returncode == 0 and "a sweep is starting here" in status.stdout, status
    query = run_cli("query", str(root), "select 1", env=env)
    assert query.returncode == 2 and "being created" in query.stderr and "not a results" not in query.stderr


def test_reading_something_that_is_not_a_results_directory(tmp_path):
    with pytest.raises(InputError) as err:
        ccfair.load(tmp_path)
    assert err.value.field == str(tmp_path) and "not a results directory" in err.value.message
    for args in (["status", str(tmp_path)], ["query", str(tmp_path), "select 1"]):
        result = run_cli(*args)
        assert result.returncode == 2 and "not a results directory" in result.stderr and result.stdout == ""
