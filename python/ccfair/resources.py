"""What a run may cost, and refusing what cannot finish: the estimate of a resolved scenario (computed by
the simulator's ``estimate`` in ``crates/ccfair-sim/src/estimate.rs`` and returned by the validation call)
against the limits of the machine that runs it.

Limits, per run:

- memory: ``--max-memory SIZE`` (``run``, ``sweep``), else ``$CCFAIR_MAX_MEMORY``, else 80 % of the memory
  available now: ``MemAvailable`` from ``/proc/meminfo``, and the room left under the cgroup's
  ``memory.max`` when there is one (a local sweep divides it among its worker processes), and under this
  process's own limits, ``RLIMIT_AS`` (``ulimit -v``, the address space: the soft limit less ``VmSize``) and
  ``RLIMIT_DATA`` (``ulimit -d``: less ``VmData``), which each worker process has whole (an allocation
  beyond them fails, and the simulator refuses the run naming the field that drove it, or a part it cannot
  reserve up front aborts the process: ``crates/ccfair-sim/src/sim.rs``);
- events: ``--max-events N``, else ``$CCFAIR_MAX_EVENTS``, else 10^11 (hours of simulation on one core:
  ``ccfair bench`` shows 3 to 11 million events per second).

``none`` lifts a limit. A scenario whose estimate exceeds a limit is a :class:`~ccfair.errors.InputError`
naming the field that drives the estimate (``flows[0].count``, ``interval``, ``duration``, ``link.rate``,
``link.buffer``, ``flows[0].initial_window``), the estimate and the limit: nothing is allocated or written.
"""

from __future__ import annotations

import os
import re
import resource
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ccfair.errors import InputError
from ccfair.speed import host_speed
from ccfair.units import decimal_number, parse_size_bytes, whole_number

MEMORY_ENV = "CCFAIR_MAX_MEMORY"
EVENTS_ENV = "CCFAIR_MAX_EVENTS"
DEFAULT_MEMORY_FRACTION = 0.8
DEFAULT_MAX_EVENTS = 10**11
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
    flows: int = 1  # the scenario's flow count, which the cost per event depends on (ccfair.speed)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], flows: int = 1) -> Estimate:
        """From the ``estimate`` that ``_native.resolve`` returns with the spec (``flows``: the spec's)."""
        return cls(
            peak_memory_bytes=int(d["peak_memory_bytes"]),
            events=int(d["events"]),
            memory=tuple(Part(**p) for p in d["memory"]),
            fixed_memory_bytes=int(d["fixed_memory_bytes"]),
            event_parts=tuple(Part(**p) for p in d["event_parts"]),
            flow_rows=int(d["flow_rows"]),
            queue_rows=int(d["queue_rows"]),
            flows=flows,
        )

    @property
    def cpu_seconds(self) -> float:
        """The CPU time the events take at this host's measured speed for the flow count (or the nominal
        one)."""
        return host_speed().cpu_seconds(self.events, self.flows)


@dataclass(frozen=True)
class Limits:
    """Per-run limits; None means no limit. ``*_source`` says where a limit came from, for messages."""

    max_memory_bytes: int | None
    max_events: int | None
    memory_source: str = ""
    events_source: str = ""


# ---------------------------------------------------------------------------------------------- the machine


def _kb_field(path: Path, field: str) -> int | None:
    """The ``field: N kB`` line of a /proc file, in bytes (None if the file or the line is missing)."""
    try:
        text = path.read_text()
    except OSError:
        return None
    match = re.search(rf"^{field}:\s+(\d+) kB", text, re.MULTILINE)
    return int(match.group(1)) * 1024 if match else None


def _meminfo_available_bytes(path: Path = Path("/proc/meminfo")) -> int | None:
    return _kb_field(path, "MemAvailable")


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


def _status_bytes(field: str, path: Path = Path("/proc/self/status")) -> int | None:
    """A ``kB`` field of ``/proc/self/status`` (``VmSize``, ``VmData``) in bytes."""
    return _kb_field(path, field)


# The process limits on memory, with what uses them now.
RLIMITS = (
    (resource.RLIMIT_AS, "VmSize", "RLIMIT_AS (ulimit -v)"),
    (resource.RLIMIT_DATA, "VmData", "RLIMIT_DATA (ulimit -d)"),
)


def _rlimit_room() -> tuple[int, str] | None:
    """Bytes this process can still allocate under its soft RLIMIT_AS and RLIMIT_DATA (the limit less what
    it uses of it now), the tighter one and its name; None without either."""
    rooms = []
    for which, used_field, name in RLIMITS:
        soft, _ = resource.getrlimit(which)
        if soft == resource.RLIM_INFINITY:
            continue
        rooms.append((max(0, soft - (_status_bytes(used_field) or 0)), name))
    return min(rooms) if rooms else None


def available_memory_bytes() -> int | None:
    """Memory this process can still use: MemAvailable, or less under a cgroup limit or this process's
    RLIMIT_AS and RLIMIT_DATA; None if unknown."""
    rlimit = _rlimit_room()
    known = [b for b in (_meminfo_available_bytes(), _cgroup_room_bytes()) if b is not None]
    if rlimit is not None:
        known.append(rlimit[0])
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
    whole = whole_number(text)
    value = whole if whole is not None else decimal_number(text)  # 1e11: a float, truncated below
    if value is None:
        raise InputError(option, f"expected a number of events such as 1e11, or {UNLIMITED!r}, got {text!r}")
    if not value >= 1:
        raise InputError(option, f"must be at least 1, got {text!r}")
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
    if not given and machine_memory:
        shared = [b for b in (_meminfo_available_bytes(), _cgroup_room_bytes()) if b is not None]
        if shared:
            memory = int(min(shared) * DEFAULT_MEMORY_FRACTION / max(1, workers))
            share = f" shared by {workers} workers" if workers > 1 else ""
            memory_source = f"{DEFAULT_MEMORY_FRACTION:.0%} of the memory available now{share}"
        # Each worker process has its own process limits, whole.
        rlimit = _rlimit_room()
        if rlimit is not None and (memory is None or rlimit[0] * DEFAULT_MEMORY_FRACTION < memory):
            memory = int(rlimit[0] * DEFAULT_MEMORY_FRACTION)
            memory_source = f"{DEFAULT_MEMORY_FRACTION:.0%} of the room left under {rlimit[1]}"
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


class LimitError(InputError):
    """An estimate over a limit: ``field`` is the scenario field that drives the estimate, ``source`` where
    the limit came from (``--max-memory``, :data:`MEMORY_ENV`, or a description of the default), so a
    command whose scenarios are not the user's (``ccfair bench``'s cases) can name the limit instead."""

    def __init__(self, field: str, message: str, source: str) -> None:
        super().__init__(field, message)
        self.source = source


# The limits a user sets by name: a refusal can name one of these.
LIMIT_NAMES = ("--max-memory", "--max-events", MEMORY_ENV, EVENTS_ENV)


def check(estimate: Estimate, limits: Limits) -> None:
    """Raises :class:`LimitError` if the estimate exceeds a limit."""
    if limits.max_memory_bytes is not None and estimate.peak_memory_bytes > limits.max_memory_bytes:
        raise _refusal(
            estimate.memory[0].field if estimate.memory else "scenario",
            f"{format_bytes(estimate.peak_memory_bytes)} of memory ({_parts(estimate.memory, format_bytes)}, "
            f"fixed {format_bytes(estimate.fixed_memory_bytes)})",
            format_bytes(limits.max_memory_bytes),
            limits.memory_source,
            f"make the run smaller, or set the limit with --max-memory or {MEMORY_ENV}",
        )
    if limits.max_events is not None and estimate.events > limits.max_events:
        raise _refusal(
            estimate.event_parts[0].field if estimate.event_parts else "duration",
            f"{format_count(estimate.events)} simulator events "
            f"({_parts(estimate.event_parts, format_count)}; "
            f"about {format_wall(estimate.cpu_seconds)} of CPU at {host_speed().text()})",
            format_count(limits.max_events),
            limits.events_source,
            f"make the run shorter, or set the limit with --max-events or {EVENTS_ENV}",
        )


def _refusal(field: str, need: str, limit: str, source: str, remedy: str) -> LimitError:
    """The refusal of a run that needs ``need`` where the limit (from ``source``) is ``limit``, named by the
    field of the estimate's largest part."""
    return LimitError(
        field,
        f"the run needs an estimated {need}, more than the limit of {limit} ({source}); {remedy}",
        source,
    )
