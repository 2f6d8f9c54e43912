"""Running a study's plans through the sweep machinery (:func:`ccfair.sweep.driver.run_sweep`), with the
options of ``ccfair sweep``: every finished run is committed at once, runs the store has are reused, Ctrl-C
keeps what finished and the same command resumes."""

from __future__ import annotations

import argparse
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from ccfair.cli_support import EXIT_OK, note
from ccfair.errors import InputError
from ccfair.resources import Limits
from ccfair.store.layout import catalog_path
from ccfair.store.reader import query
from ccfair.sweep.driver import SweepReport, backend_jobs, run_sweep, sweep_limits
from ccfair.sweep.execute_dask import check_address
from ccfair.sweep.execute_local import default_jobs
from ccfair.sweep.expand import Layout, estimate_lines, layout
from ccfair.sweep.identity import SIMULATOR
from ccfair.sweep.plan import MAX_PLAN_RUNS, Plan
from ccfair.units import parse_duration_ns


def _limits(args: argparse.Namespace) -> Limits:
    if args.cluster is not None:  # checked before any work, dry runs too
        check_address(args.cluster)
    jobs = args.jobs or default_jobs()
    return sweep_limits(args.max_memory, args.max_events, jobs=jobs, cluster=args.cluster)


def stored_states(out: Path) -> dict[str, str]:
    if not catalog_path(out).is_file():
        return {}
    frame = query(out, "SELECT run_id, status FROM runs")
    return dict(zip(frame["run_id"], frame["status"], strict=True))


def check_size(plans: Sequence[Plan]) -> None:
    """Refuses a study whose plans together have more than :data:`~ccfair.sweep.plan.MAX_PLAN_RUNS` runs
    (they go into one store, whose writer commits each), naming the repetitions that make it large."""
    total = sum(plan.max_runs() for plan in plans)
    if total > MAX_PLAN_RUNS:
        raise InputError(
            "repetitions",
            f"the study's {len(plans)} plans have up to {total:,} runs together, more than the "
            f"{MAX_PLAN_RUNS:,} one results directory takes in a study (every run is expanded and checked "
            "before the first starts, and committed on its own: a million runs are a day of commits); run "
            "fewer repetitions",
        )


def dry_run(plans: Sequence[Plan], out: Path, args: argparse.Namespace) -> int:
    """Prints each plan's runs and how many the store already has; runs nothing."""
    check_size(plans)
    for plan in plans:
        backend_jobs(plan, args.jobs, args.cluster)  # a kernel study refuses --cluster here too
    limits = _limits(args)
    states = stored_states(out)
    # Counted one id at a time, without building every run: a dry run of a million runs answers in seconds.
    todo: dict[str, tuple[Layout, int, int]] = {}
    ids: set[str] = set()
    for plan in plans:
        lay = layout(plan, limits=limits)
        mine: dict[str, tuple[int, int]] = {}
        for run_id, cell, k in lay.identities():
            mine.setdefault(run_id, (cell, k))
        done = sum(states.get(i) == "done" for i in mine)
        print(f"plan {plan.name}: {len(mine)} runs; in {out}: {done} done, {len(mine) - done} to run")
        ids |= mine.keys()
        for i, (cell, k) in mine.items():
            if states.get(i) != "done" and lay.variants[cell][k][1].spec is not None:
                todo.setdefault(i, (lay, cell, k))
    done = sum(states.get(i) == "done" for i in ids)
    print(f"total: {len(ids)} distinct runs, {done} done, {len(ids) - done} to run")
    jobs = None if args.cluster is not None else (args.jobs or default_jobs())
    backend = plans[0].backend if plans else SIMULATOR
    counts = Counter((id(lay), cell, k) for lay, cell, k in todo.values())
    layouts = {id(lay): lay for lay, _, _ in todo.values()}
    groups = [(layouts[key].run(0, 0, cell, k), n) for (key, cell, k), n in counts.items()]
    for line in estimate_lines(groups, limits, jobs, backend):
        print(line)
    return EXIT_OK


def run_plans(plans: Sequence[Plan], out: Path, args: argparse.Namespace) -> list[SweepReport]:
    """Runs the plans one after the other into ``out``; failed runs are reported (their scenarios are then
    judged on fewer samples)."""
    time_limit_s = (
        None if args.time_limit is None else parse_duration_ns(args.time_limit, "--time-limit") / 1e9
    )
    check_size(plans)
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
        raise InputError("plan", "nothing to run")
    return reports
