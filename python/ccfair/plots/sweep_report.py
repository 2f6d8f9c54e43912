"""The report's sections for one plan of a results directory: plan and provenance, a summary table per
cell, every applicable figure, the failed runs with their errors."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from typing import TYPE_CHECKING

import pandas as pd

from ccfair.analysis.stats import SMALL_N, summarize
from ccfair.plots.axes import value_text
from ccfair.plots.data import Sweep, default_axes
from ccfair.plots.distribution_plot import MAX_BOX_DOTS, box
from ccfair.plots.fness_plot import fness
from ccfair.plots.heatmap_plot import heatmap, metric_bounds
from ccfair.plots.html_report import FigureJob, Section, Table, draw
from ccfair.plots.relgoodput_plot import relgoodput
from ccfair.plots.share_plot import share
from ccfair.plots.timeseries_plot import run_title, timeseries
from ccfair.plots.tput_delay_plot import tput_delay
from ccfair.store.repetitions import HINT, Repeated, plan_repetitions
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
PROVENANCE_COLUMNS = ("ccfair_version", "git_revision", "native_build")


def _mean_text(values: pd.Series, scale: float, digits: int, bounds: tuple[float, float] | None) -> str:
    return summarize(values.to_numpy(dtype=float), bounds).text(digits, scale)


def _distinct(values: pd.Series) -> str:
    shown = sorted({str(v) for v in values.dropna()})
    return ", ".join(shown) or MISSING


def varied_axes(sweep: Sweep) -> list[str]:
    """The axes that vary among the done runs, one path per dimension (the first of a zip group)."""
    return sweep.varied()


def builds(runs: pd.DataFrame) -> pd.DataFrame:
    """The distinct builds (ccfair version, git revision, native build) that made ``runs``, with how many
    runs each made, most first."""
    present = [c for c in PROVENANCE_COLUMNS if c in runs.columns]
    if not present or runs.empty:
        return pd.DataFrame(columns=[*PROVENANCE_COLUMNS, "runs"])
    frame = runs[present].astype("object").where(runs[present].notna(), MISSING)
    counted = frame.value_counts(dropna=False).rename("runs").reset_index()
    return counted.sort_values("runs", ascending=False, kind="stable")


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
        ("native build", _distinct(runs.get("native_build", pd.Series(dtype=str)))),
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
    section = Section(f"plan-{sweep.plan}", f"Plan {sweep.plan}", facts, code)
    made = builds(sweep.done)
    if len(made) > 1:
        listed = "; ".join(
            f"{r['runs']} runs by ccfair {r['ccfair_version']}, git {r['git_revision']}, native "
            f"{r.get('native_build', MISSING)}"
            for r in made.to_dict("records")
        )
        section.warnings.append(
            f"The done runs of this plan come from {len(made)} different builds of ccfair, so the figures "
            f"and tables mix their results: {listed}."
        )
    return section


def cc_share_columns(sweep: Sweep) -> tuple[list[str], pd.DataFrame]:
    """The congestion controls of the plan's done runs and each run's share per CCA (``run_id`` x cc,
    summed over its classes; 0 where a run has no flow of that CCA)."""
    classes = sweep.classes
    if classes is None or classes.empty or "share" not in classes:
        return [], pd.DataFrame()
    own = classes[classes["run_id"].isin(set(sweep.done["run_id"]))]
    wide = own.pivot_table(index="run_id", columns="cc", values="share", aggfunc="sum", fill_value=0.0)
    return [str(c) for c in wide.columns], wide


def repetitions_of(sweep: Sweep) -> Repeated | None:
    """Which cells' repetitions came out identical (:mod:`ccfair.store.repetitions`); None for a sweep not
    read from a results directory."""
    if sweep.results is None or sweep.plan is None:
        return None
    return plan_repetitions(sweep.results.directory, sweep.plan)


def cells_table(sweep: Sweep, repeated: Repeated | None = None) -> Table:
    """One row per cell in plan order: its coordinates, done and failed runs, whether its repetitions
    came out identical (from ``repeated``), the summary metrics and each CCA's share of the goodput, as
    mean with the interval of :func:`ccfair.analysis.stats.summarize`."""
    runs = sweep.runs
    axis_cols = [(p, column_name(p)) for p in sweep.axes if column_name(p) in runs.columns]
    metrics = [
        m
        for m in CELL_METRICS
        if m[1] in runs.columns and runs.loc[runs["status"] == "done", m[1]].notna().any()
    ]
    ccs, shares = cc_share_columns(sweep)
    rows = []
    for cell, group in runs.groupby("cell", sort=True):
        done = group[group["status"] == "done"]
        first = group.iloc[0]
        row = [str(cell), *(value_text(first[c]) for _, c in axis_cols)]
        row += [str(len(done)), str(len(group) - len(done))]
        if repeated is not None:
            row.append(repeated.cell_text(int(cell)))
        row += [
            _mean_text(done[col], scale, digits, metric_bounds(col, done))
            for _, col, scale, digits in metrics
        ]
        for cc in ccs:
            own = shares.reindex(done["run_id"])[cc] if not done.empty else pd.Series(dtype=float)
            row.append(_mean_text(own, 1.0, 3, (0.0, 1.0)))
        rows.append(row)
    headers = [
        "cell",
        *(p for p, _ in axis_cols),
        "done",
        "failed",
        *(["repetitions"] if repeated is not None else []),
        *(m[0] for m in metrics),
        *(f"share {cc}" for cc in ccs),
    ]
    numeric = [True] + [False] * len(axis_cols) + [True, True]
    numeric += [False] * (repeated is not None) + [True] * (len(metrics) + len(ccs))
    return Table(
        f"cells-{sweep.plan}",
        f"Summary per cell (mean over done runs; ± 95 % CI, or min-max for up to {SMALL_N} runs)",
        headers,
        rows,
        numeric,
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
    """Every figure that applies to this plan's done runs. Every varied axis a figure does not draw on x
    or y gets its own panels: nothing is averaged but repetitions."""

    if sweep.done.empty:
        return []
    axes = varied_axes(sweep)
    jobs: list[FigureJob] = []
    key = sweep.plan

    def others(*shown: str) -> list[str]:
        return [a for a in axes if a not in shown]

    def per(rest: Sequence[str]) -> str:
        return f", one panel per {' x '.join(map(sweep.dimension_name, rest))}" if rest else ""

    if len(axes) >= 2:
        hx, hy = default_axes(sweep, ("--x", "--y"), (None, None), "heatmap")
        for name in HEATMAP_METRICS:
            jobs.append(
                FigureJob(
                    f"heatmap-{name}-{key}",
                    f"Heatmap of {name} over {sweep.dimension_name(hx)} x {sweep.dimension_name(hy)}"
                    f"{per(others(hx, hy))}",
                    "Each cell: the mean over its done runs, with the 95 % confidence half width (or the "
                    f"min-max range for up to {SMALL_N} runs). The colour scale spans the data's range.",
                    partial(heatmap, sweep, name, hx, hy),
                )
            )
    for i, x in enumerate(axes[:MAX_LINE_AXES]):
        jobs.append(
            FigureJob(
                f"relgoodput-{i}-{key}",
                f"Relative goodput per class against {sweep.dimension_name(x)}{per(others(x))}",
                "Class mean goodput over the fair share (link rate / active flows); mean over runs with "
                "the 95 % CI, or the runs (dots) and their range when there are few. Dotted: perfect "
                "sharing, the payload fraction of a packet (goodput excludes headers).",
                partial(relgoodput, sweep, x),
            )
        )
        jobs.append(
            FigureJob(
                f"share-{i}-{key}",
                f"Share of goodput per CCA against {sweep.dimension_name(x)}{per(others(x))}",
                "Solid: each congestion control's share of the total goodput (mean; 95 % CI, or the runs "
                "and their range when there are few); dashed: its share with equal sharing.",
                partial(share, sweep, x),
            )
        )
    jobs.append(
        FigureJob(
            f"tput-delay-{key}",
            "Goodput against delay per class",
            "Each congestion control's mean goodput per flow against its flows' mean RTT, one point per "
            "cell (mean over runs, crosses: the spread over runs). The delay axis is reversed: better is up "
            "and to the right.",
            lambda: tput_delay(sweep),
        )
    )
    jobs.append(
        FigureJob(
            f"box-jain_index-{key}",
            "Jain's index across runs, per cell",
            "Box: quartiles over the runs of each cell, whiskers to 1.5 IQR; dots: the runs (for a box of "
            f"over {MAX_BOX_DOTS} runs, its outliers only).",
            lambda: box(sweep, "jain_index"),
        )
    )
    if "fness" in sweep.done and sweep.done["fness"].notna().any():
        jobs.append(
            FigureJob(
                f"fness-{key}",
                f"fness per CC pair and start order{per(axes)}",
                "One point per two-flow run and their density (reflected at ±1); -1: flow 0 takes the "
                "link, +1: flow 1 does.",
                lambda: fness(sweep),
            )
        )
    if sweep.results is not None:
        example = sweep.done.sort_values(["cell", "repetition"]).iloc[0]
        title = run_title(sweep, example)
        results = sweep.results

        def example_figure() -> Figure:
            return timeseries(results.result(str(example["run_id"])), title=title)

        jobs.append(
            FigureJob(
                f"timeseries-{key}",
                f"Time series of one run ({title})",
                "Per-flow goodput, congestion window, smoothed RTT, queue, drops and marks of the first done "
                "run.",
                example_figure,
            )
        )
    return jobs


def sweep_sections(sweep: Sweep, progress: Callable[[float], None] | None = None) -> list[Section]:
    """The plan (with provenance and the cell table), its figures, and its failed runs if any failed."""
    plan = plan_section(sweep)
    repeated = repetitions_of(sweep)
    plan.tables.append(cells_table(sweep, repeated))
    if repeated is not None and repeated.identical:
        plan.notes.append(
            f"{len(repeated.identical)} of {len(repeated.repeated)} cells with several done runs gave "
            f"identical repetitions (column repetitions: the same delivered bytes per flow in every run), "
            f"so their ±0 is no confidence: {HINT}."
        )
    figures, notes = draw(figure_jobs(sweep), progress)
    shown = Section(f"figures-{sweep.plan}", f"Figures: {sweep.plan}", figures=figures, notes=notes)
    if not figures and sweep.done.empty:
        shown.notes.append("no done runs: nothing to draw")
    if sweep.failed.empty:
        return [plan, shown]
    failed = Section(f"failures-{sweep.plan}", f"Failed runs: {sweep.plan}", tables=[failed_table(sweep)])
    return [plan, shown, failed]
