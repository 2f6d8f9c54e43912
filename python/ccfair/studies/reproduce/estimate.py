"""A study scale's size: its distinct runs and the simulator's estimate of their events and wall time."""

from __future__ import annotations

from typing import Any

from ccfair.resources import NOMINAL_EVENTS_PER_SECOND, format_count, format_wall
from ccfair.studies.reproduce.base import Study
from ccfair.sweep.driver import plan_runs, unique_runs
from ccfair.sweep.execute_local import default_jobs


def scale_estimate(study: Study, scale: str, repetitions: int, jobs: int | None) -> dict[str, Any]:
    """Runs, estimated events and wall time (one core, and ``jobs`` local workers, default all cores) of
    one scale, from the native estimate of every run at the nominal events per second."""
    runs: dict[str, int] = {}
    for _, plan in study.plans(scale, repetitions):
        _, planned = plan_runs(plan, quiet=True, limits=None)
        for r in unique_runs(planned):
            runs[r.run_id] = r.estimate.events if r.estimate is not None else 0
    events = sum(runs.values())
    one_core_s = events / NOMINAL_EVENTS_PER_SECOND
    workers = jobs or default_jobs()
    parallel = format_wall(one_core_s / workers)
    return {
        "repetitions": repetitions,
        "runs": len(runs),
        "events": events,
        "events_text": format_count(events),
        "wall_seconds_one_core": one_core_s,
        "workers": workers,
        "wall_seconds": one_core_s / workers,
        "wall_text": f"{format_wall(one_core_s)} on one core, {parallel} on {workers}",
    }
