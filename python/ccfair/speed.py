"""The simulator's speed on this host, for the wall times that estimates quote (``reproduce --list``, sweep
and validate estimates, the resource refusal).

A run's cost is its events; how long they take depends on the machine and on what else runs on it. The
speed is measured in CPU time per event, which a busy machine does not change, by ``ccfair bench`` (the
events and the CPU time of each case it ran, with the case's flow count: an event costs more once the
flows' state leaves the caches) and kept in ``~/.cache/ccfair/speed.json`` (beside the doctor's
measurement; ``CCFAIR_SPEED_FILE`` names another file) for this host. A run's CPU time is its events at
the cost for its flow count: the development machine's curve of cost against flows, scaled to the host's
bench figures. Without a measurement the development machine's figures stand in, and every estimate says
which it used.

Wall time is CPU time over the cores the work gets: the workers, at most the CPUs this process may use less
the load the others put on them now (the 1-minute load average), and at least a quarter of one core each.
"""

from __future__ import annotations

import itertools
import json
import math
import os
import socket
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ccfair.fsio import cache_file, json_generated_by, replace_file

ENV_VAR = "CCFAIR_SPEED_FILE"
GENERATOR = "ccfair bench (CPU nanoseconds per event by flow count)"
FORMAT = 2
# A worker on a saturated machine still gets some share of a core.
MIN_CORE_SHARE = 0.25

# CPU nanoseconds per event by flow count on the 2-core development machine (AMD EPYC VM; Reno, 10 Gbit/s,
# 100 ms, 1 BDP, 10 s, about 20 M events each; docs/notes/event-cost.md). An event's cost grows with the
# flows once their state leaves the caches (a run is memory-bound there), so one figure cannot serve both
# a 2-flow study and CoreScale's 5000 flows. This curve is the shape; a host's bench figures set the level
# (:meth:`Speed.ns_per_event`), and without them it is the nominal speed itself.
REFERENCE_NS_PER_EVENT: tuple[tuple[int, float], ...] = (
    (10, 162.0),
    (100, 149.0),
    (1000, 246.0),
    (5000, 476.0),
    (20000, 721.0),
)
# The flow counts an estimate's text quotes: a small study's and CoreScale's.
QUOTED_FLOWS = (10, 5000)


def _log_interpolate(points: tuple[tuple[int, float], ...], flows: int, extend: bool) -> float:
    """The value at ``flows`` on the polyline through ``points`` (flow count, value; by flow count) in
    log(flows) and log(value); beyond the ends the end value (``extend`` False) or the last segment's
    slope carried on (``extend`` True, the reference curve above its largest flow count)."""
    x = math.log(max(flows, 1))
    if len(points) == 1 or x <= math.log(points[0][0]):
        return points[0][1]
    for (f0, v0), (f1, v1) in itertools.pairwise(points):
        if x <= math.log(f1):
            t = (x - math.log(f0)) / (math.log(f1) - math.log(f0))
            return math.exp(math.log(v0) + t * (math.log(v1) - math.log(v0)))
    if not extend:
        return points[-1][1]
    (f0, v0), (f1, v1) = points[-2], points[-1]
    slope = (math.log(v1) - math.log(v0)) / (math.log(f1) - math.log(f0))
    return math.exp(math.log(v1) + slope * (x - math.log(f1)))


def reference_ns_per_event(flows: int) -> float:
    return _log_interpolate(REFERENCE_NS_PER_EVENT, flows, extend=True)


@dataclass(frozen=True)
class Speed:
    """CPU nanoseconds per event measured at some flow counts (``points``: flow count, ns; by flow count),
    and where the figures come from (for the estimate's text)."""

    points: tuple[tuple[int, float], ...]
    source: str
    measured: bool

    def ns_per_event(self, flows: int) -> float:
        """The cost of an event at ``flows`` flows: the reference curve, scaled by this host's measured
        cost against the curve at the nearest measured flow counts (interpolated between them, held
        beyond them)."""
        ratios = tuple((f, ns / reference_ns_per_event(f)) for f, ns in self.points)
        return reference_ns_per_event(flows) * _log_interpolate(ratios, flows, extend=False)

    def events_per_cpu_second(self, flows: int) -> float:
        return 1e9 / self.ns_per_event(flows)

    def cpu_seconds(self, events: int, flows: int) -> float:
        return events * self.ns_per_event(flows) / 1e9

    def text(self) -> str:
        """``14.2 M events per CPU second at 10 flows, 4.9 M at 5000 (ccfair bench on this host, ...)``."""
        small, large = (self.events_per_cpu_second(f) / 1e6 for f in QUOTED_FLOWS)
        return (
            f"{small:.1f} M events per CPU second at {QUOTED_FLOWS[0]} flows, {large:.1f} M at "
            f"{QUOTED_FLOWS[1]} ({self.source})"
        )


NOMINAL = Speed(
    REFERENCE_NS_PER_EVENT,
    "nominal: the development machine's, not measured on this host; `ccfair bench` measures it",
    False,
)


def cache_path() -> Path:
    return cache_file("speed.json", ENV_VAR)


def host_key() -> dict[str, Any]:
    """What makes a measurement this host's: its name, its CPUs and the CPU model."""
    model = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {"host": socket.gethostname(), "cpus": os.cpu_count(), "cpu_model": model}


def _points(value: object) -> tuple[tuple[int, float], ...] | None:
    """The file's ``points`` ([[flows, ns per event], ...]) checked, by flow count; None if anything is
    off (the file is input)."""
    if not isinstance(value, list) or not value:
        return None
    points: dict[int, float] = {}
    for item in value:
        if not (isinstance(item, list) and len(item) == 2):
            return None
        flows, ns = item
        if not isinstance(flows, int) or isinstance(flows, bool) or not 1 <= flows <= 10**8:
            return None
        if not isinstance(ns, int | float) or isinstance(ns, bool) or not 0.1 <= ns <= 1e6:
            return None
        points[flows] = float(ns)
    return tuple(sorted(points.items()))


def host_speed() -> Speed:
    """This host's measured speed, or the nominal one. The file is input: anything unreadable, of another
    host or format, or with a point out of range counts as no measurement."""
    try:
        data = json.loads(cache_path().read_text())
    except (OSError, ValueError):
        return NOMINAL
    if (
        not isinstance(data, dict)
        or data.get("generator") != GENERATOR
        or data.get("format") != FORMAT
        or data.get("host_key") != host_key()
    ):
        return NOMINAL
    points = _points(data.get("points"))
    if points is None:
        return NOMINAL
    when = str(data.get("measured_at", "?"))[:10]
    return Speed(points, f"ccfair bench on this host, {when}", True)


# What earlier formats of the file named as their generator: a file of ccfair's own to replace.
EARLIER_GENERATORS = ("ccfair bench (events per CPU second)",)


def _ours_or_absent(path: Path) -> bool:
    """Whether ``path`` may be written: absent, or a speed file ccfair wrote (``CCFAIR_SPEED_FILE`` may name
    any file; one that is not ours is left as it is)."""
    if not path.exists():
        return True
    return any(json_generated_by(path, g) for g in (GENERATOR, *EARLIER_GENERATORS))


def record(cases: list[tuple[int, int, float]]) -> Path | None:
    """Keeps what a bench measured as this host's speed: ``cases`` of (flows, events, CPU seconds), cases
    of one flow count pooled; the points an earlier bench on this host measured at other flow counts stay
    (``ccfair bench --case corescale`` adds 5000 flows to the default cases' figures). Returns the file, or
    None when there is nothing to keep (no CPU time measured), the file there is not one ccfair wrote, or
    it cannot be written (a read-only home: estimates stay nominal)."""
    pooled: dict[int, tuple[int, float]] = {}
    for flows, events, cpu_seconds in cases:
        if flows > 0 and events > 0 and cpu_seconds > 0:
            e, c = pooled.get(flows, (0, 0.0))
            pooled[flows] = (e + events, c + cpu_seconds)
    if not pooled:
        return None
    path = cache_path()
    if not _ours_or_absent(path):
        return None
    earlier = host_speed()
    points = dict(earlier.points) if earlier.measured else {}
    points.update({f: c * 1e9 / e for f, (e, c) in pooled.items()})
    data = {
        "generator": GENERATOR,
        "format": FORMAT,
        "host_key": host_key(),
        "measured_at": time.strftime("%Y-%m-%d %H:%M:%S"),
        "cases": [{"flows": f, "events": e, "cpu_seconds": c} for f, (e, c) in sorted(pooled.items())],
        "points": [[f, ns] for f, ns in sorted(points.items())],
    }
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        replace_file(path, (json.dumps(data, indent=2) + "\n").encode(), sync=False)
    except OSError:
        return None
    return path


def available_cores() -> float:
    """The CPUs this process may use, less what the rest of the machine keeps busy now (the 1-minute load
    average, which counts this process's own work too when it runs)."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    try:
        load = os.getloadavg()[0]
    except OSError:
        load = 0.0
    return max(cpus - load, MIN_CORE_SHARE * cpus, MIN_CORE_SHARE)


def wall_seconds(cpu_seconds: float, workers: int) -> float:
    """The wall time ``cpu_seconds`` of work take on ``workers`` local workers at this machine's load now."""
    cores = min(float(workers), available_cores())
    return cpu_seconds / max(cores, MIN_CORE_SHARE)
