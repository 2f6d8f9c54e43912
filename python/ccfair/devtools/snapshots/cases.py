"""The canonical runs: one TOML file with one table per case.

::

    [reno-fifo]
    about = "Reno alone through tail drop: slow start, then fast recovery on queue drops"
    requires = ["sum(total.queue_drops) > 0"]     # preconditions on its snapshot (see requires.py)

    [reno-fifo.scenario]                           # a scenario as `ccfair run` reads it, seed included
    duration = "3s"
    seed = 1
    link = { rate = "10Mbps", buffer = "1bdp", aqm = "fifo" }
    flows = [{ cc = "reno", rtt = "20ms" }]

A case's name is its snapshot's file name, so it is restricted to lower-case letters, digits, ``-`` and
``_``. Every problem is a :class:`~ccfair.errors.InputError` naming the case and the key.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ccfair.devtools.snapshots.requires import parse_requirement
from ccfair.errors import InputError
from ccfair.scenario import Scenario
from ccfair.toml_text import read_toml

_NAME = re.compile(r"[a-z0-9][a-z0-9_-]*")
_CASE_KEYS = ("about", "requires", "scenario")


@dataclass(frozen=True)
class Case:
    """One canonical run: its name, what it exercises, its scenario (user-level dict with its seed) and the
    preconditions its snapshot must meet."""

    name: str
    about: str
    scenario: Mapping[str, Any]
    requires: tuple[str, ...] = ()


def load_cases(path: str | Path) -> list[Case]:
    """The cases of a cases file, in file order; each scenario fully validated."""
    p = Path(path)
    data = read_toml(p)
    if not data:
        raise InputError(str(p), "no cases: expected one table per case")
    return [_case(name, value) for name, value in data.items()]


def _case(name: str, value: object) -> Case:
    if not _NAME.fullmatch(name):
        raise InputError(name, "a case name has lower-case letters, digits, '-' and '_' only")
    if not isinstance(value, Mapping):
        raise InputError(name, "expected a table with about, scenario and optionally requires")
    unknown = [k for k in value if k not in _CASE_KEYS]
    if unknown:
        raise InputError(f"{name}.{unknown[0]}", f"unknown key; allowed: {', '.join(_CASE_KEYS)}")
    about = value.get("about")
    if not isinstance(about, str) or not about.strip():
        raise InputError(f"{name}.about", "a non-empty string saying what the case exercises is required")
    scenario = value.get("scenario")
    if not isinstance(scenario, Mapping):
        raise InputError(f"{name}.scenario", "a scenario table is required")
    if "seed" not in scenario:
        raise InputError(f"{name}.scenario.seed", "every case sets its seed")
    try:
        Scenario.from_dict(scenario)
    except InputError as e:
        raise InputError(f"{name}.scenario.{e.field}", e.message) from None
    requires = value.get("requires", [])
    if not isinstance(requires, list) or not all(isinstance(r, str) for r in requires):
        raise InputError(f"{name}.requires", "expected a list of strings")
    for i, text in enumerate(requires):
        try:
            parse_requirement(text)
        except ValueError as e:
            raise InputError(f"{name}.requires[{i}]", str(e)) from None
    return Case(name=name, about=about.strip(), scenario=scenario, requires=tuple(requires))
