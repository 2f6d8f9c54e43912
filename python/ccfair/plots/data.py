"""The data figures are made from: a single saved run or one plan of a results directory, and how a figure's
request (an axis path, a metric) is resolved against it, with errors that name what is missing and what
exists.

A results directory's ``runs`` table holds each varied scenario path as a column named by
:func:`ccfair.sweep.paths.column_name` (``link.buffer`` -> ``link_buffer``); figures take the dotted path.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pandas as pd

from ccfair.errors import InputError
from ccfair.plots.axes import Axis, make_axis, value_text
from ccfair.store import Results
from ccfair.store.check import plan_definition
from ccfair.store.coordinates import companion_columns
from ccfair.store.schema import RESERVED_COLUMNS
from ccfair.sweep.identity import canonical_json
from ccfair.sweep.paths import column_name

MAX_PANELS = 36  # more facet combinations than this ask the user to average or choose axes


@dataclass
class Sweep:
    """One plan of a results directory.

    - ``runs``: every run of the plan (``status`` done or failed), coordinates as columns
    - ``flows``, ``classes``: rows of the done runs, keyed by ``run_id``
    - ``axes``: the plan's varied dotted paths, in plan order
    - ``linked``: groups of paths that vary together (a ``[[zip]]`` group), each one dimension
    """

    runs: pd.DataFrame
    flows: pd.DataFrame | None
    classes: pd.DataFrame | None
    axes: tuple[str, ...]
    plan: str | None = None
    definition: dict[str, Any] = field(default_factory=dict)
    results: Results | None = None
    linked: tuple[tuple[str, ...], ...] = ()

    def dimension(self, path: str) -> set[str]:
        """The columns of ``path`` and of the paths zipped with it."""
        return {column_name(p) for p in self.zipped(path)}

    def zipped(self, path: str) -> tuple[str, ...]:
        """``path`` and, after it in plan order, the paths of its ``[[zip]]`` group: what one value of the
        dimension is named by (``("flows[0].rtt", "flows[1].rtt")``); ``(path,)`` outside a zip."""
        col = column_name(path)
        for group in self.linked:
            if col in {column_name(p) for p in group}:
                return (path, *(p for p in group if column_name(p) != col))
        return (path,)

    def dimension_name(self, path: str) -> str:
        """``"flows[0].rtt with flows[1].rtt"`` for a zipped dimension, else ``path``."""
        first, *others = self.zipped(path)
        return f"{first} with {', '.join(others)}" if others else first

    @property
    def done(self) -> pd.DataFrame:
        """The done runs."""
        return self.runs[self.runs["status"] == "done"]

    @property
    def failed(self) -> pd.DataFrame:
        """The failed runs with their ``error_kind`` and ``error``."""
        return self.runs[self.runs["status"] != "done"]

    def table(self, name: str, figure: str) -> pd.DataFrame:
        """The ``flows`` or ``classes`` rows; an InputError if this sweep was made from ``runs`` alone."""
        frame: pd.DataFrame | None = getattr(self, name)
        if frame is None:
            raise InputError(
                name, f"the {figure} figure needs the {name} table: pass ccfair.load(DIR) or the directory"
            )
        return frame

    def column(self, path: str, option: str) -> str:
        """The ``runs`` column of a varied axis; an InputError on ``option`` if the plan did not vary it."""
        col = column_name(path)
        if path not in self.axes and col not in {column_name(a) for a in self.axes}:
            raise InputError(option, f"{path!r} is not an axis of this sweep; {self.axes_text()}")
        if col not in self.runs.columns:  # pragma: no cover - the store adds a column per axis
            raise InputError(option, f"the runs table has no column {col!r} for {path!r}")
        return col

    def varied_column(self, path: str, option: str) -> str:
        """Like :meth:`column`, and the done runs must hold at least two values of it."""
        col = self.column(path, option)
        values = self.done[col].dropna().unique()
        if len(values) < 2:
            shown = ", ".join(map(str, values)) or "none"
            raise InputError(
                option, f"{path!r} did not vary among the done runs (values: {shown}); {self.axes_text()}"
            )
        return col

    def axes_text(self) -> str:
        return f"its axes: {', '.join(self.axes)}" if self.axes else "the plan varies no axis"

    def plan_order(self, path: str) -> list[Any]:
        """The plan's values of ``path`` in the plan's order, as the ``runs`` column stores them (text
        columns hold non-text values as JSON)."""
        for axis in self.definition.get("axes", []):
            if path in axis["paths"]:
                k = axis["paths"].index(path)
                values = [point[k] for point in axis["points"]]
                if all(isinstance(v, str) for v in values):
                    return values
                col = self.runs.get(column_name(path))
                if col is not None and pd.api.types.is_string_dtype(col) and col.notna().any():
                    return [v if isinstance(v, str) else canonical_json(v) for v in values]
                return values
        return []

    def axis(self, path: str, frame: pd.DataFrame | None = None) -> Axis:
        """The display axis of ``path`` over the values in ``frame`` (default: the done runs), with the
        values its zipped partners take at each of its values (from the done runs where ``frame`` lacks
        them)."""
        frame = self.done if frame is None else frame
        col = column_name(path)
        axis = make_axis(path, frame[col].tolist(), self.plan_order(path))
        named = []
        for partner in self.zipped(path)[1:]:
            other = column_name(partner)
            source = frame if other in frame.columns else self.done
            if other not in source.columns:
                continue
            texts = tuple(
                " / ".join(value_text(v) for v in source.loc[source[col] == value, other].dropna().unique())
                for value in axis.values
            )
            named.append((partner, texts))
        return replace(axis, partners=tuple(named)) if named else axis

    def varied(self) -> list[str]:
        """The axes that vary among the done runs, one path per dimension (the first of a zip group)."""
        done = self.done
        out: list[str] = []
        seen: set[str] = set()
        for p in self.axes:
            col = column_name(p)
            if col in done.columns and col not in seen and done[col].nunique() > 1:
                out.append(p)
                seen |= self.dimension(p)
        return out


def _plans(results: Results) -> pd.DataFrame:
    return results.query("SELECT plan, definition FROM plans ORDER BY plan")


def load_sweep(source: Results | str | Path, plan: str | None = None, option: str = "--plan") -> Sweep:
    """One plan of a results directory (the only one, or ``plan``)."""
    results = source if isinstance(source, Results) else Results(source)
    plans = _plans(results)
    names = list(plans["plan"])
    if not names:
        raise InputError(str(results.directory), "the results directory holds no plan yet")
    if plan is None:
        if len(names) > 1:
            raise InputError(
                option, f"the results directory holds several plans; name one of: {', '.join(names)}"
            )
        plan = names[0]
    if plan not in names:
        raise InputError(option, f"no plan {plan!r} in {results.directory}; plans: {', '.join(names)}")
    text = plans.loc[plans["plan"] == plan, "definition"].iloc[0]
    definition = plan_definition(text, f"{results.directory}: plans.definition of {plan!r}")
    axes = tuple(p for axis in definition.get("axes", []) for p in axis["paths"])
    linked = tuple(tuple(axis["paths"]) for axis in definition.get("axes", []) if len(axis["paths"]) > 1)
    cells = results.cells
    ids = set(cells.loc[cells["plan"] == plan, "run_id"])
    runs = results.runs[results.runs["run_id"].isin(ids)].reset_index(drop=True)
    done_ids = set(runs.loc[runs["status"] == "done", "run_id"])
    flows = results.flows
    classes = results.classes
    return Sweep(
        runs=runs,
        flows=flows[flows["run_id"].isin(done_ids)].reset_index(drop=True) if "run_id" in flows else flows,
        classes=classes[classes["run_id"].isin(done_ids)].reset_index(drop=True)
        if "run_id" in classes
        else classes,
        axes=axes,
        linked=linked,
        plan=plan,
        definition=definition,
        results=results,
    )


def plan_names(results: Results) -> list[str]:
    return list(_plans(results)["plan"])


def sweep_from_frame(runs: pd.DataFrame, axes: Sequence[str] | None = None) -> Sweep:
    """A :class:`Sweep` over a ``runs`` DataFrame alone (e.g. a filtered ``ccfair.load(dir).runs``); its
    axes are ``axes`` or else every column that is not a catalog column."""

    if "status" not in runs.columns:
        runs = runs.assign(status="done")
    if axes is None:
        candidates = [c for c in runs.columns if c not in RESERVED_COLUMNS]
        companions = companion_columns(runs.columns, candidates)
        axes = [c for c in candidates if c not in companions]
    return Sweep(runs=runs, flows=None, classes=None, axes=tuple(axes))


def as_sweep(data: Sweep | Results | pd.DataFrame | str | Path, plan: str | None = None) -> Sweep:
    """What figure functions accept: a :class:`Sweep`, a store's ``Results``, a results directory, or a
    ``runs`` DataFrame."""
    if isinstance(data, Sweep):
        return data
    if isinstance(data, pd.DataFrame):
        return sweep_from_frame(data)
    return load_sweep(data, plan)


def metric_column(frame: pd.DataFrame, metric: str, option: str, exclude: Collection[str] = ()) -> str:
    """``metric`` if it is a numeric column of ``frame``; else an InputError listing the metrics."""
    numeric = [
        c
        for c in frame.columns
        if pd.api.types.is_numeric_dtype(frame[c])
        and not pd.api.types.is_bool_dtype(frame[c])
        and c not in exclude
    ]
    if metric not in numeric:
        raise InputError(option, f"no metric {metric!r}; metrics: {', '.join(numeric)}")
    return metric


# Numeric columns of ``runs`` that describe a run rather than measure it.
NOT_METRICS = frozenset(
    {
        "cell",
        "repetition",
        "seed",
        "duration_ns",
        "link_rate_bps",
        "buffer_packets",
        "buffer_bytes",
        "mtu_bytes",
        "flow_count",
        "task_wall_seconds",
        "encode_seconds",
        "timeseries_bytes",
        "queue_bytes",
    }
)


def run_metric(sweep: Sweep, metric: str, option: str = "--metric") -> str:
    """A metric of the ``runs`` table (a summary metric such as ``jain_index``); errors list them."""

    axes = {column_name(a) for a in sweep.axes}
    companions = companion_columns(sweep.runs.columns, axes)
    return metric_column(sweep.runs, metric, option, exclude=NOT_METRICS | axes | companions)


def pooled_note(sweep: Sweep, used: Sequence[str], how: str = "mean over") -> str:
    """``"mean over link.rate (2 values)"`` for varied axes a figure does not show, else ``""``."""
    shown = set().union(*(sweep.dimension(p) for p in used)) if used else set()
    others = []
    for path in sweep.axes:
        col = column_name(path)
        if col in shown or col not in sweep.runs.columns:
            continue
        n = sweep.done[col].nunique()
        if n > 1:
            others.append(f"{path} ({n} values)")
    return f"{how} {', '.join(others)}" if others else ""


def default_axes(sweep: Sweep, options: Sequence[str], given: Sequence[str | None], figure: str) -> list[str]:
    """The given axis paths, each missing one filled with the next varied axis of the plan."""
    done = sweep.done
    varied = [p for p in sweep.axes if column_name(p) in done.columns and done[column_name(p)].nunique() > 1]
    out = list(given)
    used = set().union(*(sweep.dimension(g) for g in out if g is not None))
    for i, g in enumerate(out):
        if g is not None:
            continue
        free = [p for p in varied if column_name(p) not in used]
        if not free:
            have = ", ".join(varied) or "none"
            raise InputError(
                options[i],
                f"the {figure} figure needs {len(out)} varied axes ({', '.join(options)}) and this sweep "
                f"varies {len(varied)} among its done runs: {have}",
            )
        out[i] = free[0]
        used |= sweep.dimension(free[0])
    return [str(p) for p in out]


def as_paths(value: str | Sequence[str] | None) -> list[str]:
    """``None``, one path or several, as a list."""
    if value is None:
        return []
    return [value] if isinstance(value, str) else list(value)


def facet_axes(
    sweep: Sweep,
    shown: Sequence[str],
    facet: str | Sequence[str] | None = None,
    average: str | Sequence[str] | None = None,
) -> list[str]:
    """The axes a figure draws one panel per value (combination) of: the ``facet`` paths given, then the
    other varied axes that are neither ``shown`` (on x, y) nor in ``average``, in plan order, as long as
    the panels stay at most :data:`MAX_PANELS`. A figure thus averages only over repetitions unless asked
    to pool an axis with ``average`` (``--average``), or unless the plan has more combinations than that:
    the axes left over are pooled, and the figure's title says so (:func:`pooled_note`). Errors name the
    option: a path that is not varied, one used twice, or more than :data:`MAX_PANELS` panels of the
    ``facet`` paths given."""
    used: set[str] = set().union(*(sweep.dimension(p) for p in shown)) if shown else set()
    pooled = as_paths(average)
    for path in pooled:
        col = sweep.column(path, "--average")
        if col in used:
            raise InputError("--average", f"{path!r} is shown on an axis of the figure; it is not averaged")
    pooled_cols = set().union(*(sweep.dimension(p) for p in pooled)) if pooled else set()
    out: list[str] = []
    for path in as_paths(facet):
        col = sweep.varied_column(path, "--facet")
        if col in used:
            raise InputError(
                "--facet", f"{path!r} is already on an axis of the figure; facet by another axis"
            )
        if col in pooled_cols:
            raise InputError("--facet", f"{path!r} is also given to --average; choose one")
        out.append(path)
        used |= sweep.dimension(path)
    panels = 1
    for path in out:
        panels *= sweep.done[column_name(path)].nunique()
    if panels > MAX_PANELS:
        raise InputError(
            "--facet",
            f"one panel per value of {', '.join(out)} makes {panels} panels (at most {MAX_PANELS}); "
            "facet by fewer axes",
        )
    for path in sweep.varied():
        if sweep.dimension(path) & (used | pooled_cols):
            continue
        values = sweep.done[column_name(path)].nunique()
        if panels * values <= MAX_PANELS:
            out.append(path)
            panels *= values
        used |= sweep.dimension(path)  # a panel axis, or pooled: either way not one of the next ones
    return out


Values = tuple[tuple[str, Any], ...]
"""(path, value) pairs."""


@dataclass(frozen=True)
class Panel:
    """One panel of a faceted figure: its facet values per dimension (a facet axis and the paths zipped
    with it, each ``(path, value)``) and its rows."""

    groups: tuple[Values, ...]
    frame: pd.DataFrame

    @property
    def values(self) -> Values:
        """Every (path, value) of the panel, zipped partners included."""
        return tuple(pair for group in self.groups for pair in group)

    @property
    def title(self) -> str:
        return ", ".join(f"{p} = {value_text(v)}" for p, v in self.values)


def line_axes(
    sweep: Sweep,
    x: str | None,
    facet: str | Sequence[str] | None,
    average: str | Sequence[str] | None,
    figure: str,
) -> tuple[str, str, list[str]]:
    """For a figure of lines against one grid axis: that axis (``x``, default: the first varied), its
    column, and the axes of its panels (:func:`facet_axes`)."""
    (x,) = default_axes(sweep, ("--x",), (x,), figure)
    return x, sweep.varied_column(x, "--x"), facet_axes(sweep, [x], facet, average)


def dimension_points(sweep: Sweep, frame: pd.DataFrame, path: str) -> list[Values]:
    """The values of ``path``'s dimension among ``frame``'s rows, each as the (path, value) pairs of
    :meth:`Sweep.zipped` (one pair outside a zip), in display order: by ``path``'s axis, then by its
    partners'."""
    paths = sweep.zipped(path)
    columns = [column_name(p) for p in paths]
    axes = [sweep.axis(p, frame) for p in paths]
    present = frame[columns].dropna().drop_duplicates()
    points = [tuple(row) for row in present.itertuples(index=False, name=None)]
    points.sort(key=lambda point: tuple(a.position(v) for a, v in zip(axes, point, strict=True)))
    return [tuple(zip(paths, point, strict=True)) for point in points]


def split_panels(sweep: Sweep, frame: pd.DataFrame, facets: Sequence[str]) -> list[Panel]:
    """``frame`` split by the facet axes, in the axes' display order; a zipped axis splits by the values of
    its whole group, which the panel names. Combinations without rows are left out (excluded cells)."""
    needed = [column_name(p) for path in facets for p in sweep.zipped(path)]
    missing = [c for c in needed if c not in frame.columns]
    if missing and "run_id" in frame.columns:
        frame = with_runs(frame, sweep.done, missing)  # the zipped partners' values, to name them
    combos: list[tuple[Values, ...]] = [()]
    for path in facets:
        combos = [(*c, point) for c in combos for point in dimension_points(sweep, frame, path)]
    out = []
    for combo in combos:
        mask = pd.Series(True, index=frame.index)
        for path, value in (pair for group in combo for pair in group):
            mask &= frame[column_name(path)] == value
        if mask.any():
            out.append(Panel(combo, frame[mask]))
    return out


def with_runs(frame: pd.DataFrame, runs: pd.DataFrame, columns: Sequence[str]) -> pd.DataFrame:
    """``frame`` (keyed by ``run_id``) with the ``runs`` columns it lacks among ``columns``, for its runs."""
    wanted = [c for c in dict.fromkeys(columns) if c not in frame.columns and c in runs.columns]
    if not wanted:
        return frame[frame["run_id"].isin(set(runs["run_id"]))]
    return frame.merge(runs[["run_id", *wanted]], on="run_id", how="inner")
