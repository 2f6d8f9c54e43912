"""The Dask path against a real ``dask.distributed.LocalCluster`` with worker processes: the same plan gives
the same runs, tables and time series as local workers."""

import os

import pandas as pd
import pytest

import ccfair
from ccfair.sweep.driver import run_sweep
from ccfair.sweep.plan import plan_from_dict
from test_sweep_support import plan_dict

distributed = pytest.importorskip("distributed")

PROVENANCE = [
    "executor",
    "host",
    "worker",
    "started_at",
    "task_wall_seconds",
    "encode_seconds",
    "committed_at",
    "wall_seconds",  # the simulation's own wall time
]


def comparable(frame: pd.DataFrame, drop: list[str] = ()) -> pd.DataFrame:
    frame = frame.drop(columns=[c for c in drop if c in frame.columns])
    return frame.sort_values(list(frame.columns[:2])).reset_index(drop=True)


def test_dask_cluster_and_local_workers_give_identical_results(tmp_path):
    plan = plan_from_dict(plan_dict(repetitions=1, flip_start_order=True), default_name="dask")
    local = run_sweep(plan, tmp_path / "local", jobs=2)
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    ) as cluster:
        remote = run_sweep(plan, tmp_path / "dask", cluster=cluster.scheduler_address)
        with distributed.Client(cluster) as client:
            worker_pids = set(client.run(os.getpid).values())
    assert (local.done, remote.done, local.failed, remote.failed) == (8, 8, 0, 0)

    a, b = ccfair.load(tmp_path / "local"), ccfair.load(tmp_path / "dask")
    summary = [c for c in a.runs.columns if c not in ("wall_seconds", "summary_json")]
    pd.testing.assert_frame_equal(
        comparable(a.runs[summary], PROVENANCE), comparable(b.runs[summary], PROVENANCE)
    )
    pd.testing.assert_frame_equal(comparable(a.flows), comparable(b.flows))
    pd.testing.assert_frame_equal(comparable(a.classes), comparable(b.classes))
    for run_id in a.runs["run_id"]:
        pd.testing.assert_frame_equal(a.timeseries(run_id), b.timeseries(run_id))
        pd.testing.assert_frame_equal(a.queue(run_id), b.queue(run_id))

    assert set(b.runs["executor"]) == {f"dask {cluster.scheduler_address}"}
    assert {int(w.split()[1]) for w in b.runs["worker"]} <= worker_pids  # run in the cluster's processes
