"""Sweeps on the kernel backend without running a kernel: the backend in the run identity (simulator ids
unchanged), kernel plans one run at a time whatever --jobs says, the clean-rate refusal up front, the
refusal of a cluster and of a backend switch under one plan name, kernel:NAME congestion controls, and the
host-wide lock. Kernel runs themselves are in test_emu_kernel.py."""

from __future__ import annotations

import dataclasses
import json
import multiprocessing
import os
import sys
import time
from pathlib import Path
from typing import Any

import pytest

import ccfair
from ccfair import scenario as scenario_module
from ccfair.emu import doctor, netns
from ccfair.emu import host as emu_host
from ccfair.errors import InputError
from ccfair.scenario import Scenario
from ccfair.store.status import store_status
from ccfair.studies.harm_plan import harm_plans
from ccfair.studies.suites import load_suite
from ccfair.sweep.driver import run_sweep
from ccfair.sweep.expand import expand
from ccfair.sweep.identity import run_id
from ccfair.sweep.plan import plan_from_dict
from ccfair.toml_text import dumps
from conftest import run_cli
from test_sweep_support import plan_dict, simulated_kernel_run

# Simulations, sweeps or subprocesses, seconds per test: `make test` runs them, `make check` leaves them out.
pytestmark = pytest.mark.slow


@pytest.fixture
def kernel_host(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """This host as if `ccfair doctor` had measured it clean up to 20 Mbps, with reno, cubic and bbr."""
    path = tmp_path / "doctor.json"
    path.write_text(
        json.dumps(
            {
                "host_key": doctor.host_key(),
                "measured_at": "2026-01-01 00:00:00",
                "clean_rate_bps": 20_000_000,
                "probes": [],
            }
        )
    )
    monkeypatch.setenv(doctor.ENV_VAR, str(path))
    monkeypatch.setattr(emu_host, "kernel_ccs", lambda: ["reno", "cubic", "bbr"])
    return path


def test_kernel_runs_have_other_ids_than_the_simulators_and_simulator_ids_stay(kernel_host: Path) -> None:
    sim = expand(plan_from_dict(plan_dict()))
    kernel = expand(plan_from_dict(plan_dict(backend="kernel")))
    assert [r.seed for r in sim] == [r.seed for r in kernel]
    assert [r.coordinates for r in sim] == [r.coordinates for r in kernel]
    assert not {r.run_id for r in sim} & {r.run_id for r in kernel}
    # The simulator's ids are those of the identity without a backend (pinned in test_resolution.py).
    for r in sim:
        doc = {k: v for k, v in r.scenario.items() if k != "seed"}
        assert r.run_id == run_id(doc, r.spec, r.seed, ccfair.__version__)
    # The kernel spec names kernel modules; the identity also names the backend and the emulator's mode.
    assert kernel[0].spec is not None and kernel[0].spec["groups"][1]["cc"] == {"name": "cubic"}
    r = kernel[0]
    doc = {k: v for k, v in r.scenario.items() if k != "seed"}
    assert r.run_id == run_id(doc, r.spec, r.seed, ccfair.__version__, "kernel", {"arrival": "stamp"})
    assert r.run_id != run_id(doc, r.spec, r.seed, ccfair.__version__, "kernel")
    assert r.run_id != run_id(doc, r.spec, r.seed, ccfair.__version__)


def test_a_kernel_runs_identity_holds_the_emulators_arrival_mode(
    kernel_host: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    stamp = expand(plan_from_dict(plan_dict(backend="kernel")))
    monkeypatch.setenv("CCFAIR_EMU_ARRIVAL", "read")
    read = expand(plan_from_dict(plan_dict(backend="kernel")))
    # Same runs, other identities: a store's runs of one mode are never resumed as runs of the other.
    assert [r.seed for r in stamp] == [r.seed for r in read]
    assert not {r.run_id for r in stamp} & {r.run_id for r in read}
    # The simulator's runs do not depend on it.
    assert [r.run_id for r in expand(plan_from_dict(plan_dict()))] == [
        r.run_id for r in expand(plan_from_dict(plan_dict()))
    ]
    monkeypatch.setenv("CCFAIR_EMU_ARRIVAL", "kernel")
    with pytest.raises(InputError, match=r"CCFAIR_EMU_ARRIVAL.*'stamp' or 'read'"):
        expand(plan_from_dict(plan_dict(backend="kernel")))


def test_harm_studies_on_both_backends_share_no_plan_and_no_run(kernel_host: Path) -> None:
    suite = load_suite("quick")
    reno, cubic = {"cc": "reno"}, {"cc": "cubic"}
    sim = harm_plans(suite, reno, cubic)
    kernel = harm_plans(suite, reno, cubic, "kernel")
    assert sim.vs.name.startswith("harm-quick-reno-") and kernel.vs.name.startswith("harm-kernel-quick-reno-")
    sim_ids = {r.run_id for p in sim.by_role().values() for r in expand(p)}
    kernel_ids = {r.run_id for p in kernel.by_role().values() for r in expand(p)}
    assert len(kernel_ids) == len(sim_ids) and not sim_ids & kernel_ids
    assert all(p.backend == "kernel" for p in kernel.by_role().values())


def test_a_kernel_plan_runs_one_task_at_a_time_with_two_jobs(
    kernel_host: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(netns, "require_root", lambda *a: None)
    monkeypatch.setenv("CCFAIR_EMU", sys.executable)  # an executable stands in for the emulator
    plan = plan_from_dict(plan_dict(backend="kernel"), default_name="kernel-plan")
    report = run_sweep(plan, tmp_path / "out", jobs=2, task_fn=simulated_kernel_run)
    assert report.done == 8 and report.failed == 0
    runs = ccfair.load(tmp_path / "out").runs.sort_values("started_at")
    assert set(runs["backend"]) == {"kernel"}
    starts = runs["started_at"].tolist()
    ends = [s + pd_seconds(w) for s, w in zip(starts, runs["task_wall_seconds"], strict=True)]
    for i in range(1, len(starts)):
        assert starts[i] >= ends[i - 1], f"run {i} started before run {i - 1} ended"
    assert store_status(tmp_path / "out")["plans"][0]["backend"] == "kernel"
    # The same plan name on the simulator would silently replace the kernel runs as the plan's: refused.
    with pytest.raises(InputError) as e:
        run_sweep(dataclasses.replace(plan, backend="sim"), tmp_path / "out", jobs=1)
    assert e.value.field == "backend" and "ran on the kernel backend" in e.value.message
    # A cluster is refused before anything is reached.
    with pytest.raises(InputError) as e:
        run_sweep(plan, tmp_path / "other", cluster="tcp://127.0.0.1:1")
    assert e.value.field == "--cluster" and "one run at a time" in e.value.message
    assert not (tmp_path / "other").exists()


def pd_seconds(seconds: float) -> Any:
    import pandas as pd

    return pd.Timedelta(seconds=float(seconds))


def test_a_kernel_sweep_above_the_clean_rate_is_refused_up_front(kernel_host: Path, tmp_path: Path) -> None:
    plan = plan_dict(grid={"link.rate": ["10Mbps", "100Mbps"]})
    path = tmp_path / "fast.toml"
    path.write_text(dumps(plan))
    for extra in (["--dry-run"], []):
        done = run_cli("sweep", str(path), "--backend", "kernel", "--out", str(tmp_path / "out"), *extra)
        assert done.returncode == 2, done.stderr
        assert (
            "error: link.rate: 100Mbps is above what the forwarder handles cleanly on this host (20Mbps"
            in done.stderr
        )
        assert 'in cell 1: link.rate = "100Mbps"' in done.stderr
        assert not (tmp_path / "out").exists()
    # Within the clean rate the dry run counts the runs and their time one after the other.
    path.write_text(dumps({**plan_dict(), "backend": "kernel"}))
    done = run_cli("sweep", str(path), "--out", str(tmp_path / "out"), "--dry-run")
    assert done.returncode == 0, done.stderr
    assert "plan fast (kernel backend): 4 cells, 8 runs" in done.stdout
    assert "the 8 runs to do run one at a time, about" in done.stdout
    # A suite faster than the clean rate is refused before anything runs.
    suite = tmp_path / "suite.toml"
    suite.write_text(
        'duration = "4s"\nmeasure_start = "2s"\nrate = "50Mbps"\nbuffers = ["1bdp"]\nrtts = ["20ms"]\n'
        'flow_counts = [1]\naqms = ["fifo"]\nrepetitions = 1\nstagger = "1s"\n'
    )
    harm = run_cli("harm", "bbr", "--against", "cubic", "--suite", str(suite), "--backend", "kernel")
    assert harm.returncode == 2
    assert "error: suite.rate: suite suite: 50Mbps is above what the forwarder handles cleanly" in harm.stderr


def test_kernel_names_are_kernel_only(kernel_host: Path, tmp_path: Path) -> None:
    doc = {
        "duration": "5s",
        "link": {"rate": "10Mbps", "buffer": "1bdp"},
        "flows": [{"cc": "cubic", "rtt": "20ms"}, {"cc": "kernel:vegas", "rtt": "20ms"}],
    }
    with pytest.raises(InputError) as e:
        Scenario.from_dict(doc)
    assert e.value.field == "flows[1].cc"
    assert "'kernel:vegas' names the kernel's module 'vegas'" in e.value.message
    assert "--backend kernel" in e.value.message
    # On a kernel that has the module, the kernel backend accepts it and runs that module.
    with pytest.MonkeyPatch.context() as m:
        m.setattr(emu_host, "kernel_ccs", lambda: ["reno", "cubic", "vegas"])
        spec = scenario_module.kernel_scenario(doc).resolve()
        assert spec["groups"][1]["cc"] == {"name": "vegas"}
        assert scenario_module.kernel_scenario(doc).to_dict()["flows"][1]["cc"] == "kernel:vegas"
        with pytest.raises(InputError) as e:
            scenario_module.kernel_scenario(doc).simulator_scenario()  # compare: the simulator cannot run it
        assert e.value.field == "flows[1].cc"
    path = tmp_path / "vegas.toml"
    path.write_text(dumps(doc))
    done = run_cli("run", str(path))
    assert done.returncode == 2
    assert done.stderr.startswith("error: flows[1].cc: 'kernel:vegas' names the kernel's module 'vegas'")
    harm = run_cli("harm", "kernel:vegas", "--against", "cubic", "--suite", "quick", "--dry-run")
    assert harm.returncode == 2 and "error: NEWCOMER: cc: 'kernel:vegas' names the kernel's" in harm.stderr


def _hold_lock(path: str, held: Any, release: Any, times: Any) -> None:
    os.environ[netns.LOCK_ENV_VAR] = path
    with netns.host_lock():
        held.set()
        release.wait(30)
        times.put(time.monotonic())


def test_the_host_lock_makes_a_second_kernel_run_wait(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lock = tmp_path / "kernel.lock"
    monkeypatch.setenv(netns.LOCK_ENV_VAR, str(lock))
    ctx = multiprocessing.get_context("spawn")
    held, release, times = ctx.Event(), ctx.Event(), ctx.Queue()
    holder = ctx.Process(target=_hold_lock, args=(str(lock), held, release, times))
    holder.start()
    try:
        assert held.wait(60)
        polls = []

        def waiting() -> None:
            polls.append(time.monotonic())
            if len(polls) == 3:
                release.set()  # the holder lets go only once this process has found the lock taken

        with netns.host_lock(waiting):
            acquired = time.monotonic()
            assert lock.read_text().strip() == str(os.getpid())
        released = times.get(timeout=30)
        assert len(polls) >= 3 and acquired >= released
    finally:
        release.set()
        holder.join(30)


def test_the_host_lock_never_truncates_a_file_it_did_not_write(tmp_path, monkeypatch):
    """$CCFAIR_KERNEL_LOCK pointing at a user's file is refused and the file keeps its contents; a lock file
    of a finished run (a pid line) is taken over."""
    from ccfair.emu import netns

    mine = tmp_path / "notes.txt"
    mine.write_text("my notes\n")
    monkeypatch.setenv("CCFAIR_KERNEL_LOCK", str(mine))
    with pytest.raises(InputError) as e, netns.host_lock():
        pass
    assert e.value.field == "CCFAIR_KERNEL_LOCK"
    assert mine.read_text() == "my notes\n"
    old = tmp_path / "lock"
    old.write_text("12345\n")
    monkeypatch.setenv("CCFAIR_KERNEL_LOCK", str(old))
    with netns.host_lock():
        assert old.read_text() == f"{os.getpid()}\n"
