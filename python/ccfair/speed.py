"""The simulator's speed on this host, for the wall times that estimates quote (``reproduce --list``, sweep
and validate estimates, the resource refusal).

A run's cost is its events; how long they take depends on the machine and on what else runs on it. The
speed is measured in events per CPU second, which a busy machine does not change, by ``ccfair bench`` (the
events and the CPU time of the cases it ran) and kept in ``~/.cache/ccfair/speed.json`` (beside the
doctor's measurement; ``CCFAIR_SPEED_FILE`` names another file) for this host. Without a measurement the
nominal 5 M events per CPU second stands in, and every estimate says which it used.

Wall time is CPU time over the cores the work gets: the workers, at most the CPUs this process may use less
the load the others put on them now (the 1-minute load average), and at least a quarter of one core each.
"""

from __future__ import annotations

import json
import os
import socket
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ENV_VAR = "CCFAIR_SPEED_FILE"
# A round figure within the range `ccfair bench` measures, for hosts it has not measured.
NOMINAL_EVENTS_PER_SECOND = 5e6
GENERATOR = "ccfair bench (events per CPU second)"
# A worker on a saturated machine still gets some share of a core.
MIN_CORE_SHARE = 0.25


@dataclass(frozen=True)
class Speed:
    """Events per CPU second, and where the figure comes from (for the estimate's text)."""

    events_per_cpu_second: float
    source: str
    measured: bool

    def cpu_seconds(self, events: int) -> float:
        return events / self.events_per_cpu_second

    def text(self) -> str:
        """``3.4 M events per CPU second (ccfair bench on this host, 2026-12-01)``."""
        return f"{self.events_per_cpu_second / 1e6:.1f} M events per CPU second ({self.source})"


NOMINAL = Speed(
    NOMINAL_EVENTS_PER_SECOND, "nominal: not measured on this host; `ccfair bench` measures it", False
)


def cache_path() -> Path:
    if os.environ.get(ENV_VAR):
        return Path(os.environ[ENV_VAR])
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "ccfair" / "speed.json"


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


def host_speed() -> Speed:
    """This host's measured speed, or the nominal one. The file is input: anything unreadable, of another
    host, or not a positive finite speed counts as no measurement."""
    try:
        data = json.loads(cache_path().read_text())
    except (OSError, ValueError):
        return NOMINAL
    if not isinstance(data, dict) or data.get("generator") != GENERATOR or data.get("host_key") != host_key():
        return NOMINAL
    value = data.get("events_per_cpu_second")
    if not isinstance(value, int | float) or isinstance(value, bool) or not 1e3 <= value <= 1e10:
        return NOMINAL
    when = str(data.get("measured_at", "?"))[:10]
    return Speed(float(value), f"ccfair bench on this host, {when}", True)


def record(events: int, cpu_seconds: float) -> Path | None:
    """Keeps what a bench measured as this host's speed; returns the file, or None when there is nothing
    to keep (no CPU time measured) or it cannot be written (a read-only home: estimates stay nominal)."""
    if cpu_seconds <= 0 or events <= 0:
        return None
    path = cache_path()
    data = {
        "generator": GENERATOR,
        "host_key": host_key(),
        "measured_at": time.strftime("%Y-%m-%d %H:%M:%S"),
        "events": events,
        "cpu_seconds": cpu_seconds,
        "events_per_cpu_second": events / cpu_seconds,
    }
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + f".tmp{os.getpid()}")
        tmp.write_text(json.dumps(data, indent=2) + "\n")
        os.replace(tmp, path)
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
