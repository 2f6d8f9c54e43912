"""Harm suites: the environments a newcomer is judged in (``ccfair harm --suite``).

A suite is a TOML file (the shipped ones, ``quick`` and ``standard``, are in ``examples/suites/``)::

    name = "quick"
    duration = "12s"           # each run
    measure_start = "3s"       # the window opens here (both groups running) and ends with the run
    rate = "10Mbps"            # the bottleneck
    buffers = ["1bdp", "4bdp"] # buffer sizes (any link.buffer form)
    rtts = ["20ms"]            # base RTT of every flow
    flow_counts = [1]          # flows per side
    aqms = ["fifo"]            # queue disciplines (link.aqm: a name or a table)
    repetitions = 3            # start jitters per scenario, each run in both start orders
    stagger = "1s"             # the later group starts this long after the first ...
    start_jitter = "15ms"      # ... plus r x start_jitter / repetitions in repetition r
    seed = 1

A scenario is one (aqm, buffer, rtt, flow count). The simulator is deterministic: a scenario's runs differ
only through what varies between them, here the start order and the start jitter (a seed alone changes
nothing without random loss), so the spread of the repetitions is the spread over start times.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from ccfair.errors import InputError
from ccfair.toml_text import read_toml
from ccfair.units import format_duration, parse_buffer, parse_duration_ns, parse_rate_bps

SHIPPED = ("quick", "standard")
SUITE_KEYS = (
    "name",
    "duration",
    "measure_start",
    "rate",
    "buffers",
    "rtts",
    "flow_counts",
    "aqms",
    "repetitions",
    "stagger",
    "start_jitter",
    "seed",
)
MAX_REPETITIONS = 1000


@dataclass(frozen=True)
class Suite:
    name: str
    duration: str
    measure_start: str
    rate: str
    buffers: tuple[str, ...]
    rtts: tuple[str, ...]
    flow_counts: tuple[int, ...]
    aqms: tuple[Any, ...]
    repetitions: int
    stagger_ns: int
    start_jitter_ns: int
    seed: int

    def start_offsets(self) -> list[str]:
        """The later group's start in each repetition."""
        return [
            format_duration(self.stagger_ns + r * self.start_jitter_ns // self.repetitions)
            for r in range(self.repetitions)
        ]

    def scenarios(self) -> int:
        return len(self.buffers) * len(self.rtts) * len(self.flow_counts) * len(self.aqms)


def suite_path(name_or_file: str) -> Path:
    if name_or_file in SHIPPED:
        return Path(str(resources.files("ccfair.examples") / "suites" / f"{name_or_file}.toml"))
    path = Path(name_or_file)
    if not path.is_file():
        raise InputError("--suite", f"{name_or_file!r} is neither {' nor '.join(SHIPPED)} nor a file")
    return path


def load_suite(name_or_file: str) -> Suite:
    path = suite_path(name_or_file)
    return suite_from_dict(read_toml(path), default_name=path.stem)


def _list(d: Mapping[str, Any], key: str) -> list[Any]:
    value = d.get(key)
    if not isinstance(value, list) or not value:
        raise InputError(f"suite.{key}", f"expected a non-empty list, got {value!r}")
    return value


def suite_from_dict(d: Mapping[str, Any], default_name: str = "suite") -> Suite:
    """Checks a suite's keys, units and ranges (the scenarios themselves are checked when they expand)."""
    for key in d:
        if key not in SUITE_KEYS:
            raise InputError(f"suite.{key}", f"unknown key; allowed: {', '.join(SUITE_KEYS)}")
    for key in ("duration", "measure_start", "rate"):
        if key not in d:
            raise InputError(f"suite.{key}", "is required")
    duration_ns = parse_duration_ns(d["duration"], "suite.duration")
    measure_ns = parse_duration_ns(d["measure_start"], "suite.measure_start")
    parse_rate_bps(d["rate"], "suite.rate")
    buffers = _list(d, "buffers")
    for i, b in enumerate(buffers):
        parse_buffer(b, f"suite.buffers[{i}]")
    rtts = _list(d, "rtts")
    for i, r in enumerate(rtts):
        parse_duration_ns(r, f"suite.rtts[{i}]")
    counts = _list(d, "flow_counts")
    for i, c in enumerate(counts):
        if isinstance(c, bool) or not isinstance(c, int) or c < 1:
            raise InputError(f"suite.flow_counts[{i}]", f"expected a positive integer, got {c!r}")
    aqms = _list(d, "aqms")
    reps = d.get("repetitions", 3)
    if isinstance(reps, bool) or not isinstance(reps, int) or not 1 <= reps <= MAX_REPETITIONS:
        raise InputError("suite.repetitions", f"expected an integer in 1..={MAX_REPETITIONS}, got {reps!r}")
    stagger_ns = parse_duration_ns(d.get("stagger", "1s"), "suite.stagger")
    jitter_ns = parse_duration_ns(d.get("start_jitter", "0s"), "suite.start_jitter", allow_zero=True)
    if reps > 1 and jitter_ns < reps:
        raise InputError(
            "suite.start_jitter",
            "repetitions differ only in their start jitter (the simulator is deterministic): give a jitter "
            "of at least one nanosecond per repetition, or repetitions = 1",
        )
    if stagger_ns + jitter_ns >= measure_ns:
        raise InputError(
            "suite.measure_start", "must come after the later group's start (stagger + start_jitter)"
        )
    if measure_ns >= duration_ns:
        raise InputError("suite.measure_start", "must be before the end of the run (duration)")
    seed = d.get("seed", 1)
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise InputError("suite.seed", f"expected a non-negative integer, got {seed!r}")
    name = d.get("name", default_name)
    if not isinstance(name, str) or not name.strip():
        raise InputError("suite.name", f"expected a non-empty string, got {name!r}")
    return Suite(
        name=name,
        duration=str(d["duration"]),
        measure_start=str(d["measure_start"]),
        rate=str(d["rate"]),
        buffers=tuple(buffers),
        rtts=tuple(rtts),
        flow_counts=tuple(counts),
        aqms=tuple(aqms),
        repetitions=reps,
        stagger_ns=stagger_ns,
        start_jitter_ns=jitter_ns,
        seed=seed,
    )
