"""The report's sections for one plan of a results directory: plan and provenance, a summary table per
cell, every applicable figure, the failed runs with their errors."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import pandas as pd

from ccfair.plots.axes import value_text
from ccfair.plots.data import Sweep, default_axes
from ccfair.plots.html_report import FigureJob, Section, Table, draw
from ccfair.plots.stats import mean_ci
from ccfair.sweep.paths import column_name
from ccfair.tables import MISSING
from ccfair.toml_text import dumps

if TYPE_CHECKING:
    from matplotlib.figure import Figure

# Summary columns per cell: (header, runs column, scale, digits).
CELL_METRICS: tuple[tuple[str, str, float, int], ...] = (
    ("jain", "jain_index", 1.0, 3),
    ("utilization", "utilization", 1.0, 3),
    ("goodput Mbit/s", "total_goodput_bps", 1e-6, 2),
    ("sojourn p99 ms", "queue_sojourn_p99_ns", 1e-6, 2),
    ("drops", "drops", 1.0, 0),
    ("fness", "fness", 1.0, 3),
)
HEATMAP_METRICS = ("jain_index", "utilization")
MAX_LINE_AXES = 3
ERROR_CHARS = 600


def _mean_text(values: pd.Series, scale: float, digits: int) -> str:
    m = mean_ci(values.to_numpy(dtype=float))
    if m.n == 0:
        return MISSING
    text = f"{m.mean * scale:.{digits}f}"
    return text + (f" ± {m.ci95 * scale:.{digits}f}" if m.n > 1 else "")


def _distinct(values: pd.Series) -> str:
    shown = sorted({str(v) for v in values.dropna()})
    return ", ".join(shown) or MISSING


def varied_axes(sweep: Sweep) -> list[str]:
    """The axes that vary among the done runs, one path per dimension (the first of a zip group)."""
    done = sweep.done
    out: list[str] = []
    seen: set[str] = set()
    for p in sweep.axes:
        col = column_name(p)
        if col in done.columns and col not in seen and done[col].nunique() > 1:
            out.append(p)
            seen |= sweep.dimension(p)
    return out


def plan_section(sweep: Sweep) -> Section:
    d = sweep.definition
    runs = sweep.runs
    cells = sweep.results.cells if sweep.results is not None else None
    planned = int((cells["plan"] == sweep.plan).sum()) if cells is not None else len(runs)
    done, failed = len(sweep.done), len(sweep.failed)
    facts = [
        ("plan", str(sweep.plan)),
        ("repetitions", str(d.get("repetitions", MISSING))),
        ("plan seed", str(d.get("seed", MISSING))),
        ("flip start order", str(d.get("flip_start_order", MISSING)).lower()),
    ]
    for axis in d.get("axes", []):
        for k, path in enumerate(axis["paths"]):
            facts.append((f"axis {path}", ", ".join(value_text(point[k]) for point in axis["points"])))
    facts += [
        ("runs", f"{planned} planned: {done} done, {failed} failed, {planned - done - failed} not run"),
        ("ccfair version", _distinct(runs.get("ccfair_version", pd.Series(dtype=str)))),
        ("git revision", _distinct(runs.get("git_revision", pd.Series(dtype=str)))),
        ("backend", _distinct(runs.get("backend", pd.Series(dtype=str)))),
        ("executor", _distinct(runs.get("executor", pd.Series(dtype=str)))),
        ("hosts", _distinct(runs.get("host", pd.Series(dtype=str)))),
    ]
    if "started_at" in runs and runs["started_at"].notna().any():
        facts.append(("first run started", str(runs["started_at"].min())))
    if "committed_at" in runs and runs["committed_at"].notna().any():
        facts.append(("last run committed", str(runs["committed_at"].max())))
    if "task_wall_seconds" in runs:
        facts.append(("run time, sum", f"{runs['task_wall_seconds'].sum():.1f} s"))
    code = dumps(d["scenario"]) if isinstance(d.get("scenario"), dict) else None
    return Section(f"plan-{sweep.plan}", f"Plan {sweep.plan}", facts, code)


def cells_table(sweep: Sweep) -> Table:
    """One row per cell: its coordinates, done and failed runs, mean ± 95 % CI of the summary metrics."""
    runs = sweep.runs
    axis_cols = [(p, column_name(p)) for p in sweep.axes if column_name(p) in runs.columns]
    metrics = [
        m
        for m in CELL_METRICS
        if m[1] in runs.columns and runs.loc[runs["status"] == "done", m[1]].notna().any()
    ]
    rows = []
    for cell, group in runs.groupby("cell", sort=True):
        done = group[group["status"] == "done"]
        first = group.iloc[0]
        row = [str(cell), *(value_text(first[c]) for _, c in axis_cols)]
        row += [str(len(done)), str(len(group) - len(done))]
        row += [_mean_text(done[col], scale, digits) for _, col, scale, digits in metrics]
        rows.append(row)
    headers = ["cell", *(p for p, _ in axis_cols), "done", "failed", *(m[0] for m in metrics)]
    numeric = [True] + [False] * len(axis_cols) + [True] * (2 + len(metrics))
    return Table(
        f"cells-{sweep.plan}", "Summary per cell (mean ± 95 % CI over done runs)", headers, rows, numeric
    )


def failed_table(sweep: Sweep) -> Table:
    failed = sweep.failed
    axis_cols = [(p, column_name(p)) for p in sweep.axes if column_name(p) in failed.columns]
    rows = []
    for r in failed.sort_values(["cell", "repetition"]).to_dict("records"):
        where = ", ".join(f"{p} = {value_text(r[c])}" for p, c in axis_cols)
        error = str(r.get("error") or MISSING)
        rows.append(
            [
                str(r["run_id"])[:12],
                str(r["cell"]),
                str(r["repetition"]),
                where,
                str(r.get("error_kind") or MISSING),
                error if len(error) <= ERROR_CHARS else error[:ERROR_CHARS] + " …",
            ]
        )
    headers = ["run", "cell", "repetition", "coordinates", "kind", "error"]
    return Table(
        f"failed-{sweep.plan}", "Failed runs", headers, rows, [False, True, True, False, False, False]
    )


def figure_jobs(sweep: Sweep) -> list[FigureJob]:
    """Every figure that applies to this plan's done runs."""
    from ccfair.plots.fness_plot import fness
    from ccfair.plots.heatmap_plot import heatmap
    from ccfair.plots.relgoodput_plot import relgoodput
    from ccfair.plots.share_plot import share
    from ccfair.plots.timeseries_plot import timeseries

    if sweep.done.empty:
        return []
    axes = varied_axes(sweep)
    jobs: list[FigureJob] = []
    key = sweep.plan
    if len(axes) >= 2:
        hx, hy = default_axes(sweep, ("--x", "--y"), (None, None), "heatmap")
        hfacet = axes[2] if len(axes) > 2 else None
        by = f" over {hx} x {hy}" + (f", one panel per {hfacet}" if hfacet else "")
        for name in HEATMAP_METRICS:
            jobs.append(
                FigureJob(
                    f"heatmap-{name}-{key}",
                    f"Heatmap of {name}{by}",
                    "Each cell: the mean over its done runs, with the 95 % confidence half width when "
                    "there are several.",
                    lambda name=name: heatmap(sweep, name, hx, hy, hfacet),
                )
            )
    for i, x in enumerate(axes[:MAX_LINE_AXES]):
        others = [a for a in axes if a != x]
        facet = others[0] if others else None
        per = f", one panel per {facet}" if facet else ""
        jobs.append(
            FigureJob(
                f"relgoodput-{i}-{key}",
                f"Relative goodput per class against {x}{per}",
                "Class mean goodput over the fair share (link rate / active flows); mean and 95 % CI over "
                "runs.",
                lambda x=x, facet=facet: relgoodput(sweep, x, facet),
            )
        )
        jobs.append(
            FigureJob(
                f"share-{i}-{key}",
                f"Share of goodput per CCA against {x}{per}",
                "Solid: each congestion control's share of the total goodput (mean and 95 % CI); dashed: "
                "its share with equal sharing.",
                lambda x=x, facet=facet: share(sweep, x, None, facet),
            )
        )
    if "fness" in sweep.done and sweep.done["fness"].notna().any():
        jobs.append(
            FigureJob(
                f"fness-{key}",
                "fness per CC pair and start order",
                "One point per two-flow run and their kernel density; -1: flow 0 takes the link, +1: flow 1 "
                "does.",
                lambda: fness(sweep),
            )
        )
    if sweep.results is not None:
        example = sweep.done.sort_values(["cell", "repetition"]).iloc[0]
        where = ", ".join(f"{p} = {value_text(example[column_name(p)])}" for p in sweep.axes)
        results = sweep.results

        def example_figure() -> Figure:
            return timeseries(
                results.result(str(example["run_id"])), title=f"time series of run {example['run_id'][:12]}"
            )

        jobs.append(
            FigureJob(
                f"timeseries-{key}",
                f"Time series of one run (cell {example['cell']}: {where})",
                "Per-flow goodput, congestion window, smoothed RTT, queue, drops and marks of the first done "
                "run.",
                example_figure,
            )
        )
    return jobs


def sweep_sections(sweep: Sweep, progress: Callable[[float], None] | None = None) -> list[Section]:
    plan = plan_section(sweep)
    plan.tables.append(cells_table(sweep))
    figures, notes = draw(figure_jobs(sweep), progress)
    shown = Section(f"figures-{sweep.plan}", f"Figures: {sweep.plan}", figures=figures, notes=notes)
    if not figures and sweep.done.empty:
        shown.notes.append("no done runs: nothing to draw")
    failed = Section(f"failures-{sweep.plan}", f"Failed runs: {sweep.plan}", tables=[failed_table(sweep)])
    if sweep.failed.empty:
        failed.notes.append("none")
    return [plan, shown, failed]
