"""A sweep from plan to store: expand and check every cell, register the plan, skip what the store already
has, run the rest locally or on Dask, and commit each outcome the moment it arrives."""

from __future__ import annotations

import contextlib
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ccfair import __version__
from ccfair.cli_support import progress_bar
from ccfair.errors import InputError
from ccfair.resources import Limits
from ccfair.resources import limits as resource_limits
from ccfair.store.writer import DAMAGED, StoreWriter
from ccfair.sweep.execute_dask import CONNECT_TIMEOUT_S, connect, execute_dask
from ccfair.sweep.execute_local import TaskFn, default_jobs, execute_local
from ccfair.sweep.expand import PlannedRun, expand
from ccfair.sweep.identity import SIMULATOR
from ccfair.sweep.plan import Plan, load_plan
from ccfair.sweep.progress import sweep_display
from ccfair.sweep.task import (
    RunOutcome,
    RunTask,
    build_label,
    failure,
    git_revision,
    native_build,
    run_task,
)

EXPANSION_PROGRESS_MIN_RUNS = 2000  # below this, checking the cells takes under a second
# Kernel runs share this machine's network stack and CPUs: a second one at the same time would disturb the
# first, so a kernel plan runs on one local worker (and the runs themselves take a host-wide lock).
KERNEL_JOBS = 1


@dataclass
class SweepReport:
    """What a sweep did: ``runs`` in the plan, ``already_done`` and ``skipped_failed`` before it started,
    ``damaged``: the store's done runs (of any plan) found damaged on opening, and the outcomes of this
    invocation (``failures`` counts them by error kind)."""

    plan: str
    out: Path
    runs: int
    already_done: int = 0
    skipped_failed: int = 0
    damaged: int = 0
    to_run: int = 0
    done: int = 0
    failed: int = 0
    failures: Counter[str] = field(default_factory=Counter)
    wall_seconds: float = 0.0
    commit_seconds: float = 0.0
    commit_cpu_seconds: float = 0.0


def plan_runs(
    plan: Plan | str | Path,
    *,
    skip_invalid: bool = False,
    quiet: bool = True,
    limits: Limits | None = None,
) -> tuple[Plan, list[PlannedRun]]:
    """Reads (if needed) and expands a plan, checking every cell (and its estimate against ``limits``, none
    when None); raises InputError before any output."""
    if not isinstance(plan, Plan):
        plan = load_plan(plan)
    bar = None
    if plan.max_runs() >= EXPANSION_PROGRESS_MIN_RUNS:
        bar = progress_bar(f"checking the cells of {plan.name}", quiet)
    try:
        runs = expand(plan, skip_invalid=skip_invalid, progress=bar, limits=limits)
    finally:
        if bar is not None:
            bar.close()
    return plan, runs


def backend_jobs(plan: Plan, jobs: int | None, cluster: str | None) -> int:
    """The local worker processes for ``plan``'s runs: ``jobs`` (default: all cores) on the simulator,
    :data:`KERNEL_JOBS` on the kernel backend whatever ``jobs`` says. Kernel runs on a Dask cluster are
    refused (an InputError on ``--cluster``): each would run on whichever machine its worker is on, next
    to other kernel runs, and be refused there without root or a measured clean rate."""
    if plan.backend == SIMULATOR:
        return jobs or default_jobs()
    if cluster is not None:
        raise InputError(
            "--cluster",
            f"plan {plan.name} runs on the kernel backend, which uses this machine's own network stack, "
            "one run at a time; run it without --cluster, as root on the machine ccfair doctor measured",
        )
    return KERNEL_JOBS


def sweep_limits(
    max_memory: str | None = None,
    max_events: str | None = None,
    *,
    jobs: int | None = None,
    cluster: str | None = None,
) -> Limits:
    """Per-run limits of a sweep (see :mod:`ccfair.resources`): the memory available here is shared by
    the ``jobs`` local workers; on a cluster only an explicit memory limit applies here (each worker also
    checks its own machine when it runs)."""
    return resource_limits(
        max_memory,
        max_events,
        workers=jobs or default_jobs(),
        machine_memory=cluster is None,
    )


def unique_runs(runs: list[PlannedRun]) -> list[PlannedRun]:
    """The runs in order, each identity once (two runs share one only if scenario and seed are equal)."""
    seen: set[str] = set()
    out = []
    for r in runs:
        if r.run_id not in seen:
            seen.add(r.run_id)
            out.append(r)
    return out


def run_sweep(
    plan: Plan | str | Path,
    out: str | Path = "results",
    *,
    jobs: int | None = None,
    cluster: str | None = None,
    security: Any = None,
    retry_failed: bool = False,
    time_limit_s: float | None = None,
    skip_invalid: bool = False,
    verify: bool = False,
    allow_mixed: bool = False,
    quiet: bool = True,
    task_fn: TaskFn = run_task,
    connect_timeout_s: float = CONNECT_TIMEOUT_S,
    limits: Limits | None = None,
) -> SweepReport:
    """Runs every run of ``plan`` that ``out`` does not have yet (failed ones too with ``retry_failed``).
    Runs whose files are damaged count as not done: the store checks every done run's files on opening
    (existence and size; with ``verify`` their checksums too) and marks damaged ones failed of kind
    ``damaged``; those are always run again.

    ``jobs`` local worker processes (default: all cores; one for a plan on the kernel backend, which needs
    root and refuses ``cluster``: :func:`backend_jobs`), or the Dask scheduler at ``cluster``, reached with
    ``security`` (a ``distributed.security.Security``, for a ``tls://`` address: see
    :func:`ccfair.sweep.execute_dask.cluster_security`; a dask-jobqueue cluster's ``cluster.security``); a
    scheduler that does not answer within ``connect_timeout_s`` is an InputError on ``--cluster``, raised
    before anything is written into ``out``.
    ``time_limit_s`` is the per-run wall-time limit. ``limits`` bounds each run's estimated memory and
    events (default: :func:`sweep_limits`). With ``skip_invalid``, cells whose scenario is invalid or
    exceeds the limits are recorded as failed runs instead of refusing the plan. ``task_fn`` replaces the
    work done per run (local workers only; tests use it to inject failures). Ctrl-C stops at once; every
    run committed so far stays, and running the same sweep again resumes.

    Resuming a plan whose done runs another build made (another git revision or native module) is refused
    before anything runs, naming both builds, since the plan's results would mix two versions of the
    simulator; ``allow_mixed`` resumes anyway (the report then flags the mix)."""
    started = time.monotonic()
    if not isinstance(plan, Plan):
        plan = load_plan(plan)
    jobs = backend_jobs(plan, jobs, cluster)
    if plan.backend != SIMULATOR:
        # The kernel backend loads for kernel plans only.
        from ccfair.emu.binary import emulator_binary
        from ccfair.emu.netns import require_root

        require_root()
        emulator_binary()
    if limits is None:
        limits = sweep_limits(jobs=jobs, cluster=cluster)
    plan, runs = plan_runs(plan, skip_invalid=skip_invalid, quiet=quiet, limits=limits)
    client = connect(cluster, security, connect_timeout_s) if cluster is not None else None
    with contextlib.ExitStack() as stack:
        if client is not None:
            stack.callback(client.close)  # also when opening the store fails
        store = stack.enter_context(StoreWriter(out, verify=verify))
        store.register_plan(plan, runs)
        done = store.run_ids("done")
        failed = store.run_ids("failed") - store.run_ids("failed", DAMAGED)
        unique = unique_runs(runs)
        report = SweepReport(plan=plan.name, out=store.root, runs=len(unique), damaged=len(store.damaged))
        report.already_done = sum(r.run_id in done for r in unique)
        if not retry_failed:
            report.skipped_failed = sum(r.run_id in failed for r in unique)
        todo = [r for r in unique if r.run_id not in done and (retry_failed or r.run_id not in failed)]
        if todo and not allow_mixed:
            check_same_build(store, plan.name, [r.run_id for r in unique if r.run_id in done])
        report.to_run = len(todo)
        display = sweep_display(f"sweep {plan.name}", len(todo), quiet)
        executor = "local" if cluster is None else f"dask {cluster}"

        def record(finished: list[tuple[PlannedRun, RunOutcome]], by: str) -> None:
            store.commit_many(plan.name, finished, by)
            for _, outcome in finished:
                if outcome.status == "done":
                    report.done += 1
                else:
                    report.failed += 1
                    report.failures[outcome.error_kind or "unknown"] += 1
            display.update(report.done, report.failed)
            store.update_status(_status(report), force=report.done + report.failed == report.to_run)

        try:
            store.update_status(_status(report), force=True)
            invalid = [r for r in todo if r.invalid is not None]
            if invalid:
                record(
                    [
                        (r, failure(r.run_id, "invalid", r.invalid or "", "plan", plan.backend))
                        for r in invalid
                    ],
                    "plan",
                )
            by_id = {r.run_id: r for r in todo if r.invalid is None}
            # Local workers keep to the limits checked here; Dask workers apply their own machine's defaults.
            task_limits = limits if cluster is None else None
            tasks = [
                RunTask(r.run_id, r.scenario, r.seed, time_limit_s, task_limits, plan.backend)
                for r in by_id.values()
            ]
            store.snapshot()  # readers see the plan while the first runs compute
            outcomes = (
                execute_dask(tasks, client) if client is not None else execute_local(tasks, jobs, task_fn)
            )
            with contextlib.closing(outcomes):
                for batch in outcomes:
                    record([(by_id[o.run_id], o) for o in batch], executor)
        finally:
            display.close()
            report.wall_seconds = time.monotonic() - started
            report.commit_seconds = store.commit_seconds
            report.commit_cpu_seconds = store.commit_cpu_seconds
    return report


def check_same_build(store: StoreWriter, plan: str, done_ids: list[str]) -> None:
    """Refuses (an InputError on ``--allow-mixed``) to add runs of this build to a plan whose done runs
    another build made: a different git revision, or a different native module where both are known."""
    here_git, here_native = git_revision(), native_build()
    others: dict[str, int] = {}
    for version, git, native, n in store.builds(done_ids):
        if git == here_git and (native is None or here_native is None or native == here_native):
            continue
        label = build_label(version, git, native)
        others[label] = others.get(label, 0) + n
    if not others:
        return

    made = "; ".join(f"{n} by {label}" for label, n in others.items())
    raise InputError(
        "--allow-mixed",
        f"plan {plan} in {store.root} has done runs made by another build ({made}) than this one "
        f"({build_label(__version__, here_git, here_native)}); resuming would mix the results of two "
        "builds in one plan. Sweep into a new --out directory, or pass --allow-mixed to resume anyway "
        "(the report then names both builds)",
    )


def _status(report: SweepReport) -> dict[str, Any]:
    return {
        "plan": report.plan,
        "runs": report.runs,
        "done": report.already_done + report.done,
        "failed": report.skipped_failed + report.failed,
        "to_run": report.to_run - report.done - report.failed,
    }
