"""A study scale's size: its distinct runs and the simulator's estimate of their events and wall time."""

from __future__ import annotations

from typing import Any

from ccfair.resources import format_count, format_wall
from ccfair.speed import host_speed, wall_seconds
from ccfair.studies.reproduce.base import Study
from ccfair.sweep.execute_local import default_jobs
from ccfair.sweep.expand import layout


def scale_estimate(study: Study, scale: str, repetitions: int, jobs: int | None) -> dict[str, Any]:
    """Runs, estimated events, CPU time (each run's events at this host's measured cost per event for its
    flow count, else the nominal one; ``speed_events_per_cpu_second`` the scale's average) and wall time
    (``jobs`` local workers, default all cores, at the machine's load now) of one scale, from the native
    estimate of every run."""
    speed = host_speed()
    runs: dict[str, tuple[int, float]] = {}  # events and CPU seconds by run id
    for _, plan in study.plans(scale, repetitions):
        lay = layout(plan)  # counted by id, without building every run
        for run_id, cell, k in lay.identities():
            estimate = lay.variants[cell][k][1].estimate
            if estimate is None:
                runs.setdefault(run_id, (0, 0.0))
            else:
                runs.setdefault(run_id, (estimate.events, speed.cpu_seconds(estimate.events, estimate.flows)))
    events = sum(e for e, _ in runs.values())
    cpu_s = sum(c for _, c in runs.values())
    workers = jobs or default_jobs()
    wall_s = wall_seconds(cpu_s, workers)
    return {
        "repetitions": repetitions,
        "runs": len(runs),
        "events": events,
        "events_text": format_count(events),
        "cpu_seconds": cpu_s,
        "speed_events_per_cpu_second": events / cpu_s if cpu_s > 0 else None,
        "speed_measured": speed.measured,
        "workers": workers,
        "wall_seconds": wall_s,
        "wall_text": f"{format_wall(cpu_s)} of CPU, about {format_wall(wall_s)} on {workers}",
    }
