"""The Dask path against a real ``dask.distributed.LocalCluster`` with worker processes: the same plan gives
the same runs, tables and time series as local workers; a TLS cluster (certificates made with the
documentation's openssl recipe) runs a sweep and refuses plain TCP; plain TCP off this machine is warned
about."""

import dataclasses
import os
import shlex
import shutil
import subprocess
import time

import pandas as pd
import pytest

import ccfair
from ccfair.errors import InputError
from ccfair.sweep.driver import run_sweep
from ccfair.sweep.execute_dask import cluster_security, connect, insecure_warning
from ccfair.sweep.plan import plan_from_dict
from conftest import run_cli
from test_sweep_support import plan_dict, write_plan

# Simulations, sweeps or subprocesses, seconds per test: `make test` runs them, `make check` leaves them out.
pytestmark = pytest.mark.slow

distributed = pytest.importorskip("distributed")
from distributed.security import Security  # noqa: E402

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


# The documentation's recipe (docs/how-to/dask-cluster.md): a CA, and one certificate (with its key) for the
# scheduler, the workers and the sweep.
OPENSSL_RECIPE = [
    "openssl req -x509 -newkey rsa:2048 -nodes -days 365 -subj /CN=ccfair-cluster-ca"
    " -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign"
    " -keyout ca.key -out ca.pem",
    "openssl req -newkey rsa:2048 -nodes -subj /CN=ccfair-cluster"
    " -addext basicConstraints=critical,CA:FALSE -addext keyUsage=critical,digitalSignature,keyEncipherment"
    " -addext extendedKeyUsage=serverAuth,clientAuth -keyout cluster.key -out cluster.csr",
    "openssl x509 -req -in cluster.csr -copy_extensions copyall -CA ca.pem -CAkey ca.key -CAcreateserial"
    " -days 365 -out cluster.pem",
]


@pytest.mark.skipif(shutil.which("openssl") is None, reason="needs the openssl command")
def test_a_tls_cluster_runs_a_sweep_and_refuses_plain_tcp(tmp_path):
    for command in OPENSSL_RECIPE:
        subprocess.run(shlex.split(command), cwd=tmp_path, check=True, capture_output=True)
    ca, cert, key = (str(tmp_path / n) for n in ("ca.pem", "cluster.pem", "cluster.key"))
    security = Security(
        require_encryption=True,
        tls_ca_file=ca,
        **{
            f"tls_{role}_{part}": path
            for role in ("scheduler", "worker", "client")
            for part, path in (("cert", cert), ("key", key))
        },
    )
    plan = write_plan(tmp_path / "plan.toml", repetitions=1, grid={"link.buffer": ["0.5bdp", "1bdp"]})
    out = tmp_path / "results"
    with distributed.LocalCluster(
        n_workers=1,
        threads_per_worker=1,
        processes=False,
        dashboard_address=None,
        protocol="tls",
        security=security,
    ) as cluster:
        address = cluster.scheduler_address
        assert address.startswith("tls://")
        tls = ["--tls-ca-file", ca, "--tls-cert", cert, "--tls-key", key]
        done = run_cli("sweep", str(plan), "--out", str(out), "--cluster", address, *tls, "--quiet")
        assert done.returncode == 0, done.stderr
        assert "warning" not in done.stderr
        plain = run_cli(
            "sweep",
            str(plan),
            "--out",
            str(tmp_path / "other"),
            "--cluster",
            address.replace("tls://", "tcp://"),
            "--quiet",
        )
        assert plain.returncode == 2 and "cannot reach a Dask scheduler" in plain.stderr
    runs = ccfair.load(out).runs
    assert len(runs) == 2 and set(runs["status"]) == {"done"}
    assert set(runs["executor"]) == {f"dask {address}"}


def test_tls_options_are_checked_before_anything(tmp_path):
    plan = write_plan(tmp_path / "plan.toml", repetitions=1)
    out = tmp_path / "results"
    cases = [
        (
            ["--cluster", "tcp://127.0.0.1:1", "--tls-ca-file", "ca.pem"],
            "error: --tls-ca-file: applies to a tls:// --cluster address only",
        ),
        (["--tls-cert", "c.pem"], "error: --tls-cert: applies to a tls:// --cluster address only"),
        (
            ["--cluster", "tls://127.0.0.1:1", "--tls-ca-file", str(plan)],
            "error: --tls-cert: is needed with a tls:// --cluster address",
        ),
        (
            ["--cluster", "tls://127.0.0.1:1", "--tls-ca-file", "nope.pem", "--tls-cert", str(plan)],
            "error: --tls-ca-file: nope.pem: no such file",
        ),
    ]
    for args, line in cases:
        result = run_cli("sweep", str(plan), "--out", str(out), *args)
        assert result.returncode == 2 and result.stderr.strip() == line, result.stderr
    assert not out.exists()


def test_a_tls_address_without_options_takes_dask_s_configuration_or_is_refused(tmp_path):
    import dask.config

    ca, cert = str(tmp_path / "ca.pem"), str(tmp_path / "client.pem")
    tls = "distributed.comm.tls"
    for configured in ({}, {f"{tls}.ca-file": ca}, {f"{tls}.client.cert": cert}):
        with dask.config.set(configured), pytest.raises(InputError) as refused:
            cluster_security("tls://10.1.2.3:8786")
        assert refused.value.field == "--cluster" and "--tls-ca-file and --tls-cert" in refused.value.message
    with dask.config.set({f"{tls}.ca-file": ca, f"{tls}.client.cert": cert}):
        security = cluster_security("tls://10.1.2.3:8786")
    assert (security.tls_ca_file, security.tls_client_cert, security.require_encryption) == (ca, cert, True)


@pytest.mark.parametrize(
    ("address", "warned"),
    [
        ("tcp://10.1.2.3:8786", True),
        ("scheduler:8786", True),  # Dask's default protocol is TCP
        ("tcp://scheduler.example.org:8786", True),
        ("tcp://127.0.0.1:8786", False),
        ("tcp://localhost:8786", False),
        ("tcp://[::1]:8786", False),
        ("tls://10.1.2.3:8786", False),
        ("inproc://10.1.2.3/1/2", False),
    ],
)
def test_plain_tcp_off_this_machine_is_warned_about(address, warned):
    warning = insecure_warning(address)
    assert (warning is not None) == warned
    if warned:
        assert warning.startswith(f"warning: --cluster {address} is plain TCP") and "tls://" in warning


def test_the_warning_shows_once_per_address(capsys):
    for _ in range(2):
        with pytest.raises(InputError, match="cannot reach"):
            connect("tcp://0.0.0.0:9", timeout_s=0.2)  # not loopback by its address; refused on this host
    assert capsys.readouterr().err.count("warning: --cluster tcp://0.0.0.0:9 is plain TCP") == 1


def test_a_worker_result_that_is_not_an_outcome_fails_that_run_and_the_sweep_goes_on(tmp_path, monkeypatch):
    """Anyone who joins a cluster can answer a task with anything: an answer that is not the run's outcome
    (an integer, another run's outcome) is that run's failure, saying what came back; the others are kept."""
    from ccfair.sweep import execute_dask
    from ccfair.sweep.expand import expand

    plan = plan_from_dict(plan_dict(repetitions=1), default_name="odd")
    ids = [r.run_id for r in expand(plan)]
    real = execute_dask.run_task

    def odd(task, parent_pid=None):
        if task.run_id == ids[0]:
            return 7
        if task.run_id == ids[1]:
            return real(dataclasses.replace(task, run_id=ids[2]), parent_pid)
        return real(task, parent_pid)

    monkeypatch.setattr(execute_dask, "run_task", odd)  # the in-process workers call this module's name
    with distributed.LocalCluster(
        n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None
    ) as cluster:
        report = run_sweep(plan, tmp_path / "r", cluster=cluster.scheduler_address)
    assert (report.done, report.failed) == (2, 2)
    runs = ccfair.load(tmp_path / "r").runs.set_index("run_id")
    assert runs.loc[ids[0], "error_kind"] == "crash" and "returned a int" in runs.loc[ids[0], "error"]
    assert f"the outcome of run '{ids[2]}'" in runs.loc[ids[1], "error"]
    assert runs.loc[ids[2], "status"] == "done" and runs.loc[ids[3], "status"] == "done"


def test_an_address_dask_cannot_reach_is_refused_before_a_client_is_made(tmp_path):
    """A client made on a bad address fails, then holds the process 10 s at exit with a traceback."""
    plan = write_plan(tmp_path / "p.toml")
    for command in (["sweep", str(plan)], ["reproduce", "rueth-tma19", "--dry-run"]):
        for address in ("nota://url:::", "tcp://url:::", "tcp://host"):
            started = time.monotonic()
            done = run_cli(*command, "--cluster", address, "--out", str(tmp_path / "out"))
            took = time.monotonic() - started
            assert done.returncode == 2 and done.stderr.startswith("error: --cluster: "), done.stderr
            assert "Exception ignored" not in done.stderr and "Traceback" not in done.stderr
            assert took < 8, f"{command[0]} {address}: {took:.1f} s"
            assert not (tmp_path / "out").exists()
