"""Reading a sweep plan (TOML) into a :class:`Plan` and checking everything that does not need the cells:
keys, types, paths, list lengths, exclude rules. The cells themselves are checked by :mod:`.expand`."""

from __future__ import annotations

import copy
import datetime
import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ccfair.errors import InputError
from ccfair.scenario import U64_MAX
from ccfair.sweep.identity import BACKENDS, SIMULATOR, canonical_json
from ccfair.sweep.paths import Segment, is_prefix, parse_path
from ccfair.toml_text import check_depth, read_toml

PLAN_KEYS = (
    "name",
    "backend",
    "scenario",
    "repetitions",
    "seed",
    "flip_start_order",
    "out",
    "grid",
    "zip",
    "exclude",
)
DEFAULT_PLAN_SEED = 1
MAX_REPETITIONS = 1_000_000
# The most runs a plan may have. A sweep expands and checks every run and registers them all in the store
# before the first one starts (about 1 KB each in memory, tens of microseconds each to expand), and the
# store's single writer then commits each run (0.02 s of CPU and 0.1 s of wall time each, measured on the
# 2-core development machine): a million runs are a day of commits alone, whatever the cluster, and a plan
# larger than that is refused before any of it is built.
MAX_PLAN_RUNS = 1_000_000


@dataclass(frozen=True)
class Axis:
    """One dimension of the plan: a grid path, or a ``[[zip]]`` group whose paths vary together.
    ``points[k]`` holds one value per path."""

    label: str  # how errors name it: 'grid."link.rate"' or 'zip[0]'
    paths: tuple[str, ...]
    points: tuple[tuple[Any, ...], ...]


@dataclass(frozen=True)
class ExcludeRule:
    """Drops every cell whose value at each path is one of the listed values (kept as canonical JSON, so
    that ``1`` and ``true`` differ)."""

    label: str  # 'exclude[0]'
    match: tuple[tuple[str, frozenset[str]], ...]

    def matches(self, coordinates: Mapping[str, Any]) -> bool:
        return all(canonical_json(coordinates[path]) in options for path, options in self.match)


@dataclass(frozen=True)
class Plan:
    """A parsed plan; ``base`` is the user-level base scenario (a dict in the TOML structure)."""

    name: str
    base: dict[str, Any]
    axes: tuple[Axis, ...]
    exclude: tuple[ExcludeRule, ...]
    repetitions: int
    seed: int
    flip_start_order: bool
    source: str | None = None  # the plan file, if read from one
    backend: str = SIMULATOR  # where every run of the plan runs: the simulator or the kernel
    # What a study built on the plan keeps with it for its report (advise: the command line's constraints);
    # part of the stored definition, not of any run's identity.
    study: Mapping[str, Any] | None = None
    # Where `ccfair sweep` writes when no --out is given (a plan's ``out``, relative to the plan file); where
    # results go is no part of the experiment, so not of its stored definition either.
    out: Path | None = None

    def max_runs(self) -> int:
        """Runs the plan has at most: its cells before exclusions x repetitions (x 2 start orders)."""
        return (
            math.prod(len(a.points) for a in self.axes)
            * self.repetitions
            * (2 if self.flip_start_order else 1)
        )

    def to_json(self) -> str:
        """The plan as one JSON document (base scenario included), for provenance."""
        return canonical_json(
            {
                "name": self.name,
                "backend": self.backend,
                **({"study": dict(self.study)} if self.study else {}),
                "scenario": self.base,
                "repetitions": self.repetitions,
                "seed": self.seed,
                "flip_start_order": self.flip_start_order,
                "axes": [{"paths": list(a.paths), "points": [list(p) for p in a.points]} for a in self.axes],
                "exclude": [{p: sorted(v) for p, v in r.match} for r in self.exclude],
            }
        )


def load_plan(path: str | Path) -> Plan:
    """Reads a plan file; a relative ``scenario = "file.toml"`` is relative to the plan's directory and the
    default name is the file name without ``.toml``."""
    p = Path(path)
    return plan_from_dict(read_toml(p), default_name=p.stem, base_dir=p.parent, source=str(p))


def plan_from_dict(
    d: Mapping[str, Any], default_name: str = "plan", base_dir: Path | None = None, source: str | None = None
) -> Plan:
    """Reads and checks the plan structure; raises :class:`InputError` naming the plan field."""
    if not isinstance(d, Mapping):
        raise InputError("plan", f"expected a table, got {type(d).__name__}")
    check_depth(d, "plan")
    for key in d:
        if key not in PLAN_KEYS:
            raise InputError(str(key), f"unknown plan key {key!r}; allowed keys: {', '.join(PLAN_KEYS)}")
    name = d.get("name", default_name)
    if not isinstance(name, str) or not name.strip():
        raise InputError("name", f"expected a non-empty string, got {name!r}")
    repetitions = _integer(d.get("repetitions", 1), "repetitions", 1, MAX_REPETITIONS)
    seed = _integer(d.get("seed", DEFAULT_PLAN_SEED), "seed", 0, U64_MAX)
    flip = d.get("flip_start_order", False)
    if not isinstance(flip, bool):
        raise InputError("flip_start_order", f"expected true or false, got {flip!r}")
    backend = check_backend(d.get("backend", SIMULATOR), "backend")
    out = d.get("out")
    if out is not None and (not isinstance(out, str) or not out.strip()):
        raise InputError("out", f"expected a directory name (a non-empty string), got {out!r}")
    base = _base_scenario(d.get("scenario"), base_dir or Path("."))
    axes = _grid_axes(d.get("grid", {})) + _zip_axes(d.get("zip", []))
    _check_paths(axes)
    exclude = _exclude_rules(d.get("exclude", []), axes)
    plan = Plan(
        name=name,
        base=base,
        axes=tuple(axes),
        exclude=tuple(exclude),
        repetitions=repetitions,
        seed=seed,
        flip_start_order=flip,
        source=source,
        backend=backend,
        out=None if out is None else (base_dir or Path(".")) / out,
    )
    _check_size(plan)
    return plan


def _check_size(plan: Plan) -> None:
    """Refuses a plan of more than :data:`MAX_PLAN_RUNS` runs, naming what makes it large: the repetitions,
    or the grid when there is one repetition."""
    runs = plan.max_runs()
    if runs <= MAX_PLAN_RUNS:
        return
    cells = math.prod(len(a.points) for a in plan.axes)
    orders = " x 2 start orders" if plan.flip_start_order else ""
    raise InputError(
        "repetitions" if plan.repetitions > 1 else "grid",
        f"{cells:,} cells x {plan.repetitions:,} repetitions{orders} make {runs:,} runs, more than the "
        f"{MAX_PLAN_RUNS:,} a plan may have (a sweep expands and registers every run before the first "
        "starts, and commits each one: a million runs are a day of commits); split the plan, or run fewer "
        "repetitions",
    )


def check_backend(value: object, field: str) -> str:
    """``value`` if it names a backend, else an InputError on ``field``."""
    if value not in BACKENDS:
        raise InputError(field, f"must be one of {', '.join(BACKENDS)}, got {value!r}")
    return str(value)


# ------------------------------------------------------------------------------------------------- pieces


def _integer(value: object, field: str, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise InputError(field, f"expected an integer, got {value!r}")
    if not low <= value <= high:
        raise InputError(field, f"must be between {low} and {high}, got {value}")
    return value


def _base_scenario(value: object, base_dir: Path) -> dict[str, Any]:
    if value is None:
        raise InputError("scenario", 'is required: a [scenario] table or scenario = "file.toml"')
    if isinstance(value, str):
        path = Path(value)
        doc = read_toml(path if path.is_absolute() else base_dir / path)
    elif isinstance(value, Mapping):
        doc = dict(value)
    else:
        raise InputError("scenario", f"expected a table or a file name, got {value!r}")
    # Each run's seed derives from the plan's seed and the run's coordinates; a seed in the base scenario
    # (common in scenario files) would be overridden anyway, so it is dropped rather than kept as a trap.
    doc.pop("seed", None)
    return copy.deepcopy(doc)


def _check_value(value: object, field: str) -> None:
    """Plan values must be plain TOML data that JSON can hold (no dates, no NaN)."""
    if isinstance(value, datetime.date | datetime.time):
        raise InputError(field, f"dates and times are not scenario values, got {value!r}")
    if isinstance(value, float) and not math.isfinite(value):
        raise InputError(field, f"must be a finite number, got {value!r}")
    if isinstance(value, Mapping):
        for k, v in value.items():
            _check_value(v, f"{field}.{k}")
    elif isinstance(value, list):
        for v in value:
            _check_value(v, field)


def _values(value: object, field: str) -> list[Any]:
    if not isinstance(value, list):
        raise InputError(
            field, f"expected a list of values, got {value!r} (a single value goes in [scenario])"
        )
    if not value:
        raise InputError(field, "is empty: give at least one value")
    seen: set[str] = set()
    for v in value:
        _check_value(v, field)
        key = canonical_json(v)
        if key in seen:
            raise InputError(field, f"value {key} appears twice")
        seen.add(key)
    return list(value)


def _flatten_grid(table: Mapping[str, Any], prefix: str) -> list[tuple[str, Any]]:
    """``[grid]`` entries as (path, list); unquoted dotted keys (``link.rate = [...]``) arrive as nested
    tables and are joined back into paths."""
    out: list[tuple[str, Any]] = []
    for key, value in table.items():
        path = f"{prefix}.{key}" if prefix else str(key)
        if isinstance(value, Mapping):
            out.extend(_flatten_grid(value, path))
        else:
            out.append((path, value))
    return out


def _grid_axes(grid: object) -> list[Axis]:
    if not isinstance(grid, Mapping):
        raise InputError("grid", f"expected a table of path = [values], got {grid!r}")
    axes = []
    for path, values in _flatten_grid(grid, ""):
        label = f'grid."{path}"'
        parse_path(path, label)
        axes.append(Axis(label, (path,), tuple((v,) for v in _values(values, label))))
    return axes


def _zip_axes(groups: object) -> list[Axis]:
    if not isinstance(groups, list):
        raise InputError("zip", f"expected [[zip]] tables, got {groups!r}")
    axes = []
    for i, group in enumerate(groups):
        label = f"zip[{i}]"
        if not isinstance(group, Mapping) or not group:
            raise InputError(label, 'expected a table of path = [values], e.g. "flows[0].count" = [1, 5]')
        entries = _flatten_grid(group, "")
        columns = []
        for path, values in entries:
            field = f'{label}."{path}"'
            parse_path(path, field)
            columns.append(_values(values, field))
        lengths = {len(c) for c in columns}
        if len(lengths) > 1:
            sizes = ", ".join(f"{p} has {len(c)}" for (p, _), c in zip(entries, columns, strict=True))
            raise InputError(label, f"the lists of a zip group vary together and need one length: {sizes}")
        points = tuple(zip(*columns, strict=True))
        if len({canonical_json(list(p)) for p in points}) < len(points):
            raise InputError(label, "two points of the group are equal")
        axes.append(Axis(label, tuple(p for p, _ in entries), points))
    return axes


def _check_paths(axes: list[Axis]) -> None:
    seen: list[tuple[tuple[Segment, ...], str, str]] = []
    for axis in axes:
        for path in axis.paths:
            segments = parse_path(path, axis.label)
            if segments == ("seed",):
                raise InputError(
                    axis.label, "each run's seed derives from the plan's seed; set the plan's top-level seed"
                )
            for other, other_path, other_label in seen:
                if is_prefix(other, segments) or is_prefix(segments, other):
                    raise InputError(
                        axis.label, f"{path!r} overlaps {other_path!r} of {other_label}; vary each value once"
                    )
            seen.append((segments, path, axis.label))


def _exclude_rules(rules: object, axes: list[Axis]) -> list[ExcludeRule]:
    if not isinstance(rules, list):
        raise InputError("exclude", f"expected a list of tables, got {rules!r}")
    axis_values: dict[str, list[Any]] = {}
    for axis in axes:
        for k, path in enumerate(axis.paths):
            axis_values[path] = [point[k] for point in axis.points]
    out = []
    for i, rule in enumerate(rules):
        label = f"exclude[{i}]"
        if not isinstance(rule, Mapping) or not rule:
            raise InputError(label, 'expected a table of path = value, e.g. { "link.aqm" = "fifo" }')
        match = []
        for path, wanted in _flatten_grid(rule, ""):
            field = f'{label}."{path}"'
            if path not in axis_values:
                varied = ", ".join(axis_values) or "none"
                raise InputError(field, f"is not a path of [grid] or [[zip]]; varied paths: {varied}")
            options = wanted if isinstance(wanted, list) else [wanted]
            known = {canonical_json(v) for v in axis_values[path]}
            for option in options:
                if canonical_json(option) not in known:
                    listed = ", ".join(canonical_json(v) for v in axis_values[path])
                    raise InputError(field, f"{canonical_json(option)} is not one of its values: {listed}")
            match.append((path, frozenset(canonical_json(v) for v in options)))
        out.append(ExcludeRule(label, tuple(match)))
    return out
