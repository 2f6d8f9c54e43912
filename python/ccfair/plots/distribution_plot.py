"""A run metric's distribution across runs, Flent style: empirical CDFs (:func:`cdf`) or box plots with the
runs as dots (:func:`box`), one group per value of a grid axis, per plan (several plans of a results
directory side by side) or per cell. Each group pools its runs: the group's label says what it holds.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from ccfair.errors import InputError
from ccfair.plots.axes import value_text
from ccfair.plots.data import NOT_METRICS, Sweep, as_sweep, load_sweep, metric_column, plan_names
from ccfair.plots.labels import metric as metric_label
from ccfair.plots.labels import plain
from ccfair.plots.panels import panel_grid
from ccfair.plots.style import FALLBACK_COLORS, paper_style, value_style
from ccfair.store import Results
from ccfair.sweep.paths import column_name

if TYPE_CHECKING:
    from matplotlib.figure import Figure

GROUPINGS = ("plan", "cell")  # besides a grid axis path
MAX_GROUPS = 40


@dataclass(frozen=True)
class Group:
    label: str
    values: np.ndarray
    color: str


def _sweeps(data: Sweep | Results | pd.DataFrame | str | Path, plans: list[str] | None) -> list[Sweep]:
    """The plans to draw: the given ones, or every plan of a results directory."""
    if isinstance(data, Sweep | pd.DataFrame):
        return [as_sweep(data)]
    results = data if isinstance(data, Results) else Results(data)
    names = plans or plan_names(results)
    if not names:
        raise InputError(str(results.directory), "the results directory holds no plan yet")
    return [load_sweep(results, name) for name in names]


def groups(
    data: Sweep | Results | pd.DataFrame | str | Path,
    metric: str = "jain_index",
    by: str | None = None,
    plans: list[str] | None = None,
) -> tuple[list[Group], str]:
    """The groups of runs to draw and what they are grouped by: ``by`` a grid axis path, ``"plan"`` or
    ``"cell"``; default: by plan when there are several, else by the plan's first varied axis, else one
    group."""
    sweeps = _sweeps(data, plans)
    runs = pd.concat([s.done.assign(_plan=s.plan) for s in sweeps], ignore_index=True)
    axes = {column_name(a) for s in sweeps for a in s.axes}
    name = metric_column(runs, metric, "--metric", exclude=NOT_METRICS | axes | {"_plan"})
    if by is None:
        varied = sweeps[0].varied()
        by = "plan" if len(sweeps) > 1 else (varied[0] if varied else "plan")
    scale = metric_label(name).scale
    out: list[Group] = []
    if by == "plan":
        for i, s in enumerate(sweeps):
            values = s.done[name].to_numpy(dtype=float) * scale
            out.append(
                Group(f"{s.plan} ({len(values)} runs)", values, FALLBACK_COLORS[i % len(FALLBACK_COLORS)])
            )
    elif by == "cell":
        for i, ((plan, cell), part) in enumerate(runs.groupby(["_plan", "cell"], sort=True)):
            own = next(s for s in sweeps if s.plan == plan)
            where = ", ".join(
                f"{q} = {value_text(part[column_name(q)].iloc[0])}"
                for p in own.varied()
                for q in own.zipped(p)
                if column_name(q) in part.columns
            )
            label = (f"{plan}: " if len(sweeps) > 1 else "") + (where or f"cell {cell}")
            out.append(
                Group(
                    label, part[name].to_numpy(dtype=float) * scale, FALLBACK_COLORS[i % len(FALLBACK_COLORS)]
                )
            )
    else:
        having = [s for s in sweeps if column_name(by) in s.runs.columns]
        first = having[0] if having else sweeps[0]
        col = first.varied_column(by, "--by")
        runs = runs[runs["_plan"].isin([s.plan for s in having])]
        axis = first.axis(by, runs)
        for i, value in enumerate(axis.values):
            part = runs[runs[col] == value]
            style = value_style(by, value)
            color = style.color if style else FALLBACK_COLORS[i % len(FALLBACK_COLORS)]
            out.append(Group(f"{by} = {value_text(value)}", part[name].to_numpy(dtype=float) * scale, color))
    out = [Group(g.label, g.values[np.isfinite(g.values)], g.color) for g in out]
    out = [g for g in out if g.values.size]
    if not out:
        raise InputError("--metric", f"{name} has no value in any done run")
    if len(out) > MAX_GROUPS:
        raise InputError(
            "--by", f"{len(out)} groups is too many to draw (at most {MAX_GROUPS}); group by an axis"
        )
    return out, by


def cdf(
    data: Sweep | Results | pd.DataFrame | str | Path,
    metric: str = "jain_index",
    by: str | None = None,
    plans: list[str] | None = None,
) -> Figure:
    """The empirical CDF of ``metric`` over the runs of each group (see :func:`groups`)."""
    found, by = groups(data, metric, by, plans)
    info = metric_label(metric)
    with paper_style():
        fig, (ax,) = panel_grid(1, (4.6, 3.0))
        for g in found:
            x = np.sort(g.values)
            y = np.arange(1, x.size + 1) / x.size
            ax.step(x, y, where="post", color=g.color, label=plain(g.label), gid=f"cdf:{g.label}")
        ax.set_xlabel(plain(info.label))
        ax.set_ylabel("fraction of runs ≤ x")
        ax.set_ylim(0, 1.02)
        ax.legend(loc="best", fontsize=7)
        fig.suptitle(plain(f"{info.label}: distribution across runs, by {by}"))
    return fig


MAX_BOX_DOTS = 50
"""A box of more runs than this draws only its outliers as dots: hundreds of jittered dots hide the box."""
WHISKER_IQR = 1.5


def outliers(values: np.ndarray) -> np.ndarray:
    """The values beyond the whiskers, more than :data:`WHISKER_IQR` interquartile ranges outside the
    quartiles (as matplotlib's boxplot draws them)."""
    q1, q3 = np.percentile(values, [25, 75])
    reach = WHISKER_IQR * (q3 - q1)
    beyond: np.ndarray = values[(values < q1 - reach) | (values > q3 + reach)]
    return beyond


def box(
    data: Sweep | Results | pd.DataFrame | str | Path,
    metric: str = "jain_index",
    by: str | None = None,
    plans: list[str] | None = None,
) -> Figure:
    """Box plots of ``metric`` over the runs of each group (quartiles, whiskers to 1.5 IQR), the runs as
    dots over them; a box of more than :data:`MAX_BOX_DOTS` runs shows only its outliers as dots (see
    :func:`groups`)."""
    found, by = groups(data, metric, by, plans)
    info = metric_label(metric)
    rng = np.random.default_rng(0)
    with paper_style():
        fig, (ax,) = panel_grid(1, (max(3.0, 0.6 * len(found) + 1.5), 3.0))
        parts = ax.boxplot(
            [g.values for g in found], widths=0.5, whis=WHISKER_IQR, showfliers=False, patch_artist=True
        )
        for patch, g in zip(parts["boxes"], found, strict=True):
            patch.set_facecolor(g.color)
            patch.set_alpha(0.3)
            patch.set_gid(f"box:{g.label}")
        crowded = False
        for i, g in enumerate(found, start=1):
            many = g.values.size > MAX_BOX_DOTS
            crowded |= many
            shown = outliers(g.values) if many else g.values
            jitter = rng.uniform(-0.12, 0.12, size=shown.size)
            ax.scatter(
                i + jitter,
                shown,
                s=8,
                color=g.color,
                alpha=0.7,
                linewidths=0,
                gid=f"{'outliers' if many else 'runs'}:{g.label}",
            )
        ax.set_xticks(range(1, len(found) + 1), [plain(g.label) for g in found], rotation=30, ha="right")
        ax.set_ylabel(plain(info.label))
        dots = f"dots: runs, only the outliers of boxes of over {MAX_BOX_DOTS}" if crowded else "dots: runs"
        fig.suptitle(plain(f"{info.label} across runs, by {by} (box: quartiles; {dots})"))
    return fig
