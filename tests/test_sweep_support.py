"""Shared pieces of the sweep and store tests (no tests here): small plans, and task functions that fail on
purpose, importable by worker processes."""

from __future__ import annotations

import copy
import os
import signal
from pathlib import Path
from typing import Any

from ccfair.sweep.task import RunOutcome, RunTask, run_task
from ccfair.toml_text import dumps

# A 5 s, 10 Mbps scenario with two groups starting 1 s apart: about 30 ms of simulation per run. Random path
# loss makes repetitions differ.
BASE: dict[str, Any] = {
    "duration": "5s",
    "link": {"rate": "10Mbps", "buffer": "1bdp"},
    "flows": [
        {"cc": "reno", "rtt": "50ms", "loss": 0.001},
        {"cc": "cubic", "rtt": "50ms", "start": "1s", "loss": 0.001},
    ],
}


def plan_dict(**top: Any) -> dict[str, Any]:
    """A plan over BASE: 2 buffers x 2 RTTs of flow 0, 2 repetitions (8 runs); keys replaced by ``top``."""
    plan: dict[str, Any] = {
        "seed": 11,
        "repetitions": 2,
        "scenario": copy.deepcopy(BASE),
        "grid": {"link.buffer": ["0.5bdp", "1bdp"], "flows[0].rtt": ["20ms", "50ms"]},
    }
    plan.update(top)
    return plan


def write_plan(path: Path, **top: Any) -> Path:
    path.write_text(dumps(plan_dict(**top)))
    return path


def crash_on_rtt_20ms(task: RunTask, parent_pid: int | None) -> RunOutcome:
    """The worker process dies (as an abort in the native core would) on runs whose flow 0 has 20 ms."""
    if task.scenario["flows"][0]["rtt"] == "20ms" and task.scenario["link"]["buffer"] == "1bdp":
        os.kill(os.getpid(), signal.SIGKILL)
    return run_task(task, parent_pid)


def terminated_on_rtt_20ms(task: RunTask, parent_pid: int | None) -> RunOutcome:
    """The worker is sent SIGTERM on runs whose flow 0 has 20 ms, in the middle of a run that turns it
    into KeyboardInterrupt for its teardown (as a kernel run does)."""
    from ccfair.emu.run import sigterm_as_interrupt

    with sigterm_as_interrupt():
        if task.scenario["flows"][0]["rtt"] == "20ms" and task.scenario["link"]["buffer"] == "1bdp":
            os.kill(os.getpid(), signal.SIGTERM)
        return run_task(task, parent_pid)


def raise_on_half_bdp(task: RunTask, parent_pid: int | None) -> RunOutcome:
    """The simulation raises on runs with a 0.5 BDP buffer (the native core failing)."""
    if task.scenario["link"]["buffer"] == "0.5bdp":
        import ccfair.runner

        def broken(*args: Any, **kwargs: Any) -> Any:
            raise RuntimeError("injected failure in the core")

        original = ccfair.runner._native.run
        ccfair.runner._native.run = broken
        try:
            return run_task(task, parent_pid)
        finally:
            ccfair.runner._native.run = original
    return run_task(task, parent_pid)


def simulated_kernel_run(task: RunTask, parent_pid: int | None) -> RunOutcome:
    """A kernel task run by the simulator (no root or emulator needed), its time on the worker widened by a
    pause so that two tasks running at once would overlap; the outcome keeps the task's backend and the
    whole time on the worker as its start and wall time."""
    import dataclasses
    import datetime
    import time

    started_at = datetime.datetime.now(datetime.UTC).replace(tzinfo=None)
    t0 = time.monotonic()
    time.sleep(0.3)
    outcome = run_task(dataclasses.replace(task, backend="sim"), parent_pid)
    outcome.provenance.update(
        backend=task.backend, started_at=started_at, task_wall_seconds=time.monotonic() - t0
    )
    return outcome
