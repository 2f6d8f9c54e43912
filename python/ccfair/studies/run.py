"""Running a study's plans through the sweep machinery (:func:`ccfair.sweep.driver.run_sweep`), with the
options of ``ccfair sweep``: every finished run is committed at once, runs the store has are reused, Ctrl-C
keeps what finished and the same command resumes."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from ccfair.cli_support import EXIT_OK, note
from ccfair.errors import ScenarioError
from ccfair.resources import Limits
from ccfair.store.layout import catalog_path
from ccfair.store.reader import query
from ccfair.sweep.driver import SweepReport, backend_jobs, plan_runs, run_sweep, sweep_limits, unique_runs
from ccfair.sweep.execute_local import default_jobs
from ccfair.sweep.expand import PlannedRun, estimate_lines
from ccfair.sweep.identity import SIMULATOR
from ccfair.sweep.plan import Plan
from ccfair.units import parse_duration_ns


def _limits(args: argparse.Namespace) -> Limits:
    jobs = args.jobs or default_jobs()
    return sweep_limits(args.max_memory, args.max_events, jobs=jobs, cluster=args.cluster)


def stored_states(out: Path) -> dict[str, str]:
    if not catalog_path(out).is_file():
        return {}
    frame = query(out, "SELECT run_id, status FROM runs")
    return dict(zip(frame["run_id"], frame["status"], strict=True))


def dry_run(plans: Sequence[Plan], out: Path, args: argparse.Namespace) -> int:
    """Prints each plan's runs and how many the store already has; runs nothing."""
    for plan in plans:
        backend_jobs(plan, args.jobs, args.cluster)  # a kernel study refuses --cluster here too
    limits = _limits(args)
    states = stored_states(out)
    todo: dict[str, PlannedRun] = {}
    ids: set[str] = set()
    for plan in plans:
        _, runs = plan_runs(plan, quiet=True, limits=limits)
        mine = {r.run_id: r for r in unique_runs(runs)}
        done = sum(states.get(i) == "done" for i in mine)
        print(f"plan {plan.name}: {len(mine)} runs; in {out}: {done} done, {len(mine) - done} to run")
        ids |= set(mine)
        todo.update({i: r for i, r in mine.items() if states.get(i) != "done" and r.spec is not None})
    done = sum(states.get(i) == "done" for i in ids)
    print(f"total: {len(ids)} distinct runs, {done} done, {len(ids) - done} to run")
    jobs = None if args.cluster is not None else (args.jobs or default_jobs())
    backend = plans[0].backend if plans else SIMULATOR
    for line in estimate_lines(list(todo.values()), limits, jobs, backend):
        print(line)
    return EXIT_OK


def run_plans(plans: Sequence[Plan], out: Path, args: argparse.Namespace) -> list[SweepReport]:
    """Runs the plans one after the other into ``out``; failed runs are reported (their scenarios are then
    judged on fewer samples)."""
    time_limit_s = (
        None if args.time_limit is None else parse_duration_ns(args.time_limit, "--time-limit") / 1e9
    )
    limits = _limits(args)
    reports = []
    try:
        for plan in plans:
            report = run_sweep(
                plan,
                out,
                jobs=args.jobs,
                cluster=args.cluster,
                time_limit_s=time_limit_s,
                retry_failed=getattr(args, "retry_failed", False),
                quiet=args.quiet,
                limits=limits,
            )
            reports.append(report)
            failed_before = (
                f", {report.skipped_failed} failed before and left (--retry-failed runs them again)"
                if report.skipped_failed
                else ""
            )
            note(
                f"plan {plan.name}: {report.runs} runs, {report.already_done} done before, "
                f"{report.to_run} run now ({report.done} done, {report.failed} failed){failed_before}",
                args.quiet,
            )
    except KeyboardInterrupt:
        note(f"every finished run is kept in {out}; run the same command again to resume", args.quiet)
        raise
    if not reports:
        raise ScenarioError("plan", "nothing to run")
    return reports
