"""The data figures are made from: a single saved run or one plan of a results directory, and how a figure's
request (an axis path, a metric) is resolved against it, with errors that name what is missing and what
exists.

A results directory's ``runs`` table holds each varied scenario path as a column named by
:func:`ccfair.sweep.paths.column_name` (``link.buffer`` -> ``link_buffer``); figures take the dotted path.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from ccfair.errors import ScenarioError
from ccfair.store import Results
from ccfair.store.check import plan_definition
from ccfair.sweep.paths import column_name


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
        col = column_name(path)
        for group in self.linked:
            columns = {column_name(p) for p in group}
            if col in columns:
                return columns
        return {col}

    @property
    def done(self) -> pd.DataFrame:
        """The done runs."""
        return self.runs[self.runs["status"] == "done"]

    @property
    def failed(self) -> pd.DataFrame:
        """The failed runs with their ``error_kind`` and ``error``."""
        return self.runs[self.runs["status"] != "done"]

    def table(self, name: str, figure: str) -> pd.DataFrame:
        """The ``flows`` or ``classes`` rows; a ScenarioError if this sweep was made from ``runs`` alone."""
        frame: pd.DataFrame | None = getattr(self, name)
        if frame is None:
            raise ScenarioError(
                name, f"the {figure} figure needs the {name} table: pass ccfair.load(DIR) or the directory"
            )
        return frame

    def column(self, path: str, option: str) -> str:
        """The ``runs`` column of a varied axis; a ScenarioError on ``option`` if the plan did not vary it."""
        col = column_name(path)
        if path not in self.axes and col not in {column_name(a) for a in self.axes}:
            raise ScenarioError(option, f"{path!r} is not an axis of this sweep; {self.axes_text()}")
        if col not in self.runs.columns:  # pragma: no cover - the store adds a column per axis
            raise ScenarioError(option, f"the runs table has no column {col!r} for {path!r}")
        return col

    def varied_column(self, path: str, option: str) -> str:
        """Like :meth:`column`, and the done runs must hold at least two values of it."""
        col = self.column(path, option)
        values = self.done[col].dropna().unique()
        if len(values) < 2:
            shown = ", ".join(map(str, values)) or "none"
            raise ScenarioError(
                option, f"{path!r} did not vary among the done runs (values: {shown}); {self.axes_text()}"
            )
        return col

    def axes_text(self) -> str:
        return f"its axes: {', '.join(self.axes)}" if self.axes else "the plan varies no axis"


def _plans(results: Results) -> pd.DataFrame:
    return results.query("SELECT plan, definition FROM plans ORDER BY plan")


def load_sweep(source: Results | str | Path, plan: str | None = None, option: str = "--plan") -> Sweep:
    """One plan of a results directory (the only one, or ``plan``)."""
    results = source if isinstance(source, Results) else Results(source)
    plans = _plans(results)
    names = list(plans["plan"])
    if not names:
        raise ScenarioError(str(results.directory), "the results directory holds no plan yet")
    if plan is None:
        if len(names) > 1:
            raise ScenarioError(
                option, f"the results directory holds several plans; name one of: {', '.join(names)}"
            )
        plan = names[0]
    if plan not in names:
        raise ScenarioError(option, f"no plan {plan!r} in {results.directory}; plans: {', '.join(names)}")
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
    from ccfair.store.schema import RESERVED_COLUMNS

    if "status" not in runs.columns:
        runs = runs.assign(status="done")
    if axes is None:
        axes = [c for c in runs.columns if c not in RESERVED_COLUMNS]
    return Sweep(runs=runs, flows=None, classes=None, axes=tuple(axes))


def as_sweep(data: Sweep | Results | pd.DataFrame | str | Path, plan: str | None = None) -> Sweep:
    """What figure functions accept: a :class:`Sweep`, a store's ``Results``, a results directory, or a
    ``runs`` DataFrame."""
    if isinstance(data, Sweep):
        return data
    if isinstance(data, pd.DataFrame):
        return sweep_from_frame(data)
    return load_sweep(data, plan)


def metric_column(frame: pd.DataFrame, metric: str, option: str, exclude: Sequence[str] = ()) -> str:
    """``metric`` if it is a numeric column of ``frame``; else a ScenarioError listing the metrics."""
    numeric = [
        c
        for c in frame.columns
        if pd.api.types.is_numeric_dtype(frame[c])
        and not pd.api.types.is_bool_dtype(frame[c])
        and c not in exclude
    ]
    if metric not in numeric:
        raise ScenarioError(option, f"no metric {metric!r}; metrics: {', '.join(numeric)}")
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
    return metric_column(sweep.runs, metric, option, exclude=NOT_METRICS | axes)


def pooled_note(sweep: Sweep, used: Sequence[str]) -> str:
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
    return f"mean over {', '.join(others)}" if others else ""


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
            raise ScenarioError(
                options[i],
                f"the {figure} figure needs {len(out)} varied axes ({', '.join(options)}) and this sweep "
                f"varies {len(varied)} among its done runs: {have}",
            )
        out[i] = free[0]
        used |= sweep.dimension(free[0])
    return [str(p) for p in out]
