"""What a run may cost, and refusing what cannot finish: the estimate of a resolved scenario (computed by
the simulator's ``estimate`` in ``crates/ccfair-sim/src/estimate.rs`` and returned by the validation call)
against the limits of the machine that runs it.

Limits, per run:

- memory: ``--max-memory SIZE`` (``run``, ``sweep``), else ``$CCFAIR_MAX_MEMORY``, else 80 % of the memory
  available now: ``MemAvailable`` from ``/proc/meminfo``, and the room left under the cgroup's
  ``memory.max`` when there is one (a local sweep divides it among its worker processes);
- events: ``--max-events N``, else ``$CCFAIR_MAX_EVENTS``, else 10^11 (hours of simulation on one core:
  ``ccfair bench`` shows 3 to 11 million events per second).

``none`` lifts a limit. A scenario whose estimate exceeds a limit is a :class:`~ccfair.errors.ScenarioError`
naming the field that drives the estimate (``flows[0].count``, ``interval``, ``duration``, ``link.rate``,
``link.buffer``, ``flows[0].initial_window``), the estimate and the limit: nothing is allocated or written.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ccfair.errors import ScenarioError
from ccfair.units import parse_size_bytes

MEMORY_ENV = "CCFAIR_MAX_MEMORY"
EVENTS_ENV = "CCFAIR_MAX_EVENTS"
DEFAULT_MEMORY_FRACTION = 0.8
DEFAULT_MAX_EVENTS = 10**11
# A round figure within the range `ccfair bench` measures, for the wall time a message quotes.
NOMINAL_EVENTS_PER_SECOND = 5e6
UNLIMITED = "none"


@dataclass(frozen=True)
class Part:
    """One part of an estimate: what it counts, the scenario field that drives it, the amount."""

    what: str
    field: str
    amount: int


@dataclass(frozen=True)
class Estimate:
    """A run's predicted peak memory (bytes) and simulator events, with their parts, largest first."""

    peak_memory_bytes: int
    events: int
    memory: tuple[Part, ...]
    fixed_memory_bytes: int
    event_parts: tuple[Part, ...]
    flow_rows: int
    queue_rows: int

    @classmethod
    def from_json(cls, text: str) -> Estimate:
        d: dict[str, Any] = json.loads(text)
        return cls(
            peak_memory_bytes=int(d["peak_memory_bytes"]),
            events=int(d["events"]),
            memory=tuple(Part(**p) for p in d["memory"]),
            fixed_memory_bytes=int(d["fixed_memory_bytes"]),
            event_parts=tuple(Part(**p) for p in d["event_parts"]),
            flow_rows=int(d["flow_rows"]),
            queue_rows=int(d["queue_rows"]),
        )

    @property
    def wall_seconds(self) -> float:
        """The wall time the events take at a nominal speed (machines differ by about 2x either way)."""
        return self.events / NOMINAL_EVENTS_PER_SECOND


@dataclass(frozen=True)
class Limits:
    """Per-run limits; None means no limit. ``*_source`` says where a limit came from, for messages."""

    max_memory_bytes: int | None
    max_events: int | None
    memory_source: str = ""
    events_source: str = ""


# ---------------------------------------------------------------------------------------------- the machine


def _meminfo_available_bytes(path: Path = Path("/proc/meminfo")) -> int | None:
    try:
        text = path.read_text()
    except OSError:
        return None
    match = re.search(r"^MemAvailable:\s+(\d+) kB", text, re.MULTILINE)
    return int(match.group(1)) * 1024 if match else None


def _cgroup_room_bytes(root: Path = Path("/sys/fs/cgroup")) -> int | None:
    """Bytes left under this process's cgroup v2 ``memory.max`` (None without a limit)."""
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        hierarchy, _, path = line.partition("::")
        if hierarchy != "0":
            continue
        group = root / path.lstrip("/")
        try:
            limit = (group / "memory.max").read_text().strip()
            current = int((group / "memory.current").read_text().strip())
        except (OSError, ValueError):
            return None
        if limit == "max":
            return None
        return max(0, int(limit) - current)
    return None


def available_memory_bytes() -> int | None:
    """Memory this process can still use: MemAvailable, or less under a cgroup limit; None if unknown."""
    known = [b for b in (_meminfo_available_bytes(), _cgroup_room_bytes()) if b is not None]
    return min(known) if known else None


# --------------------------------------------------------------------------------------------------- limits


def parse_memory_limit(text: str, option: str) -> int | None:
    """``"8GB"``, ``"512MiB"`` -> bytes; ``"none"`` -> None."""
    if text.strip().lower() == UNLIMITED:
        return None
    return parse_size_bytes(text.strip(), option)


def parse_events_limit(text: str, option: str) -> int | None:
    """``"1e11"``, ``"200000000"`` -> events; ``"none"`` -> None."""
    if text.strip().lower() == UNLIMITED:
        return None
    try:
        value = float(text) if any(c in text for c in ".eE") else int(text, 10)
    except ValueError:
        raise ScenarioError(
            option, f"expected a number of events such as 1e11, or {UNLIMITED!r}, got {text!r}"
        ) from None
    if not value >= 1 or value == float("inf"):
        raise ScenarioError(option, f"must be at least 1, got {text!r}")
    return int(value)


def _chosen(
    option: str | None, option_name: str, env: Mapping[str, str], env_name: str, parse: Any
) -> tuple[bool, int | None, str]:
    """(given, limit, source) from the option, else the environment variable; not given when neither is."""
    if option is not None:
        return True, parse(option, option_name), option_name
    if env.get(env_name):
        return True, parse(env[env_name], env_name), env_name
    return False, None, ""


def limits(
    max_memory: str | None = None,
    max_events: str | None = None,
    *,
    workers: int = 1,
    machine_memory: bool = True,
    environ: Mapping[str, str] | None = None,
) -> Limits:
    """The per-run limits from options (as typed), else the environment, else the defaults. The default
    memory limit is 80 % of :func:`available_memory_bytes` divided among ``workers`` concurrent runs; with
    ``machine_memory`` False (runs on other machines) there is none."""
    env = os.environ if environ is None else environ
    given, memory, memory_source = _chosen(max_memory, "--max-memory", env, MEMORY_ENV, parse_memory_limit)
    if not given and machine_memory and (available := available_memory_bytes()) is not None:
        memory = int(available * DEFAULT_MEMORY_FRACTION / max(1, workers))
        share = f" shared by {workers} workers" if workers > 1 else ""
        memory_source = f"{DEFAULT_MEMORY_FRACTION:.0%} of the memory available now{share}"
    given, events, events_source = _chosen(max_events, "--max-events", env, EVENTS_ENV, parse_events_limit)
    if not given:
        events, events_source = DEFAULT_MAX_EVENTS, "the default"
    return Limits(memory, events, memory_source, events_source)


# ------------------------------------------------------------------------------------------------- messages


def format_bytes(n: float) -> str:
    """``1536`` -> ``"1.5 KiB"``."""
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if abs(n) < 1024 or unit == "PiB":
            return f"{n:.0f} B" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    raise AssertionError("unreachable")  # pragma: no cover


def format_count(n: float) -> str:
    """``123456789`` -> ``"1.2e+08"``; small counts as integers."""
    return f"{n:.0f}" if n < 1e6 else f"{n:.2g}"


def format_wall(seconds: float) -> str:
    """A rough duration: ``"40 s"``, ``"3.2 h"``, ``"41 years"``."""
    for unit, size in (("years", 365 * 86400), ("days", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size:
            return f"{seconds / size:.2g} {unit}"
    return f"{seconds:.2g} s"


def _parts(parts: tuple[Part, ...], fmt: Any) -> str:
    shown = [p for p in parts if p.amount > 0][:3]
    return ", ".join(f"{p.what} {fmt(p.amount)} ({p.field})" for p in shown)


def check(estimate: Estimate, limits: Limits) -> None:
    """Raises :class:`ScenarioError` if the estimate exceeds a limit."""
    if limits.max_memory_bytes is not None and estimate.peak_memory_bytes > limits.max_memory_bytes:
        top = estimate.memory[0].field if estimate.memory else "scenario"
        raise ScenarioError(
            top,
            f"the run needs an estimated {format_bytes(estimate.peak_memory_bytes)} of memory "
            f"({_parts(estimate.memory, format_bytes)}, fixed {format_bytes(estimate.fixed_memory_bytes)}), "
            "more than the limit of "
            f"{format_bytes(limits.max_memory_bytes)} ({limits.memory_source}); make the run smaller, "
            f"or set the limit with --max-memory or {MEMORY_ENV}",
        )
    if limits.max_events is not None and estimate.events > limits.max_events:
        top = estimate.event_parts[0].field if estimate.event_parts else "duration"
        raise ScenarioError(
            top,
            f"the run needs an estimated {format_count(estimate.events)} simulator events "
            f"({_parts(estimate.event_parts, format_count)}; about {format_wall(estimate.wall_seconds)} "
            f"at {NOMINAL_EVENTS_PER_SECOND / 1e6:.0f} M events/s), more than the limit of "
            f"{format_count(limits.max_events)} ({limits.events_source}); make the run shorter, or set "
            f"the limit with --max-events or {EVENTS_ENV}",
        )
