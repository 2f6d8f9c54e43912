"""Heatmap: any run metric over two grid axes, one panel per combination of the other varied axes (unless
they are averaged with ``average``); each cell shows the mean over its done runs written in it, with its
interval from :mod:`ccfair.analysis.stats` (95 % CI, or the range of a few runs).

The colour scale spans the data's range (utilization between 0.98 and 1.0 must not be one flat colour of a
0-to-1 scale), and its label says so; ``vmin`` and ``vmax`` fix it instead. fness is drawn on a diverging
scale centred at 0, with a label that says which flow is which."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from ccfair.analysis.stats import Summary, aggregate
from ccfair.errors import InputError
from ccfair.plots.axes import color_ticks
from ccfair.plots.data import (
    Sweep,
    as_sweep,
    default_axes,
    facet_axes,
    pooled_note,
    run_metric,
    split_panels,
)
from ccfair.plots.labels import metric as metric_label
from ccfair.plots.labels import plain
from ccfair.plots.panels import panel_grid, set_panel_title
from ccfair.plots.style import paper_style
from ccfair.sweep.paths import column_name

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from ccfair.store import Results


def metric_bounds(name: str, runs: pd.DataFrame) -> tuple[float, float] | None:
    """The range a run metric cannot leave: Jain's index in [1/n, 1] for n flows (the most flows among
    ``runs``), the labelled bounds of the others (fness [-1, 1], utilization [0, 1]), else None."""
    if name == "jain_index" and "flow_count" in runs and runs["flow_count"].notna().any():
        return (1.0 / float(runs["flow_count"].max()), 1.0)
    return metric_label(name).bounds


def flow_names(sweep: Sweep) -> tuple[str, str]:
    """``("flow 0 (reno)", "flow 1 (cubic)")``: the two flows of fness, with their congestion control when
    every run agrees on it."""
    names = ["flow 0", "flow 1"]
    flows = sweep.flows
    if flows is None or flows.empty or "flow_id" not in flows:
        return names[0], names[1]
    ids = set(sweep.done["run_id"])
    own = flows[flows["run_id"].isin(ids)]
    for i in (0, 1):
        ccs = own.loc[own["flow_id"] == i, "cc"].dropna().unique()
        if len(ccs) == 1:
            names[i] = f"flow {i} ({ccs[0]})"
    return names[0], names[1]


def colour_scale(
    name: str, means: np.ndarray, vmin: float | None, vmax: float | None
) -> tuple[float, float, str]:
    """The colour range and how it was chosen (for the colour bar's label): ``vmin``/``vmax`` when given,
    else the data's range (fness: symmetric about 0)."""
    finite = means[np.isfinite(means)]
    if name == "fness":
        reach = float(np.max(np.abs(finite))) if finite.size else 1.0
        low, high = -reach, reach
        how = "colour scaled to data, centred at 0"
    else:
        low, high = float(finite.min()), float(finite.max())
        how = "colour scaled to data"
    if vmin is not None or vmax is not None:
        low = vmin if vmin is not None else low
        high = vmax if vmax is not None else high
        how = f"colour scale fixed at {low:g} to {high:g}"
    if high < low:
        raise InputError("--vmax", f"{high:g} is below --vmin {low:g}")
    if low == high:
        low, high = low - 0.5 * max(abs(low), 1e-3), high + 0.5 * max(abs(high), 1e-3)
        how = "all cells equal"
    return low, high, how


def heatmap(
    data: Sweep | Results | pd.DataFrame | str | Path,
    metric: str = "jain_index",
    x: str | None = None,
    y: str | None = None,
    facet: str | Sequence[str] | None = None,
    plan: str | None = None,
    average: str | Sequence[str] | None = None,
    vmin: float | None = None,
    vmax: float | None = None,
) -> Figure:
    """``metric`` (a column of ``runs``) over grid axes ``x`` and ``y`` (dotted paths; default: the
    plan's first two varied axes), one panel per combination of ``facet`` and every other varied axis not
    in ``average``. ``vmin``/``vmax`` fix the colour scale (default: the data's range)."""
    import matplotlib as mpl  # only when a figure is drawn

    sweep = as_sweep(data, plan)
    name = run_metric(sweep, metric)
    x, y = default_axes(sweep, ("--x", "--y"), (x, y), "heatmap")
    xcol, ycol = sweep.varied_column(x, "--x"), sweep.varied_column(y, "--y")
    if xcol == ycol or column_name(y) in sweep.dimension(x):
        raise InputError("--y", f"is the same axis as --x ({x!r}); give two different axes")
    facets = facet_axes(sweep, [x, y], facet, average)
    done = sweep.done
    x_axis, y_axis = sweep.axis(x), sweep.axis(y)
    info = metric_label(name)
    if not np.isfinite(done[name].to_numpy(dtype=float)).any():
        raise InputError("--metric", f"{name} has no value in any done run of this sweep")
    bounds = metric_bounds(name, done)
    panels = split_panels(sweep, done, facets)
    tables = [aggregate(p.frame, [ycol, xcol], name, bounds) for p in panels]
    means = np.concatenate([t["mean"].to_numpy(dtype=float) for t in tables]) * info.scale
    low, high, how = colour_scale(name, means, vmin, vmax)
    cmap = mpl.colormaps["RdBu" if name == "fness" else "viridis"]
    norm = mpl.colors.Normalize(vmin=low, vmax=high)
    with paper_style():
        fig, axes = panel_grid(
            len(panels), (0.55 * len(x_axis.values) + 1.4, 0.42 * len(y_axis.values) + 1.0), sharey=True
        )
        for ax, panel, table in zip(axes, panels, tables, strict=True):
            grid = np.full((len(y_axis.values), len(x_axis.values)), np.nan)
            texts = np.full(grid.shape, "", dtype=object)
            for row in table.itertuples(index=False):
                i, j = y_axis.values.index(getattr(row, ycol)), x_axis.values.index(getattr(row, xcol))
                summary = Summary(row.n, row.mean, row.min, row.max, row.ci95, row.low, row.high, row.kind)
                grid[i, j] = row.mean * info.scale
                texts[i, j] = summary.short_text(3, info.scale)
            mesh = ax.pcolormesh(
                np.ma.masked_invalid(grid), cmap=cmap, norm=norm, edgecolors="white", linewidth=0.5
            )
            mesh.set_gid("heatmap")
            for i in range(grid.shape[0]):
                for j in range(grid.shape[1]):
                    if np.isfinite(grid[i, j]):
                        shade = cmap(norm(grid[i, j]))
                        dark = 0.299 * shade[0] + 0.587 * shade[1] + 0.114 * shade[2] < 0.5
                        ax.text(
                            j + 0.5,
                            i + 0.5,
                            texts[i, j],
                            ha="center",
                            va="center",
                            fontsize=7,
                            color="white" if dark else "black",
                            gid="cell",
                        )
            ax.set_xticks(np.arange(len(x_axis.values)) + 0.5, [plain(t) for t in x_axis.tick_labels()])
            ax.set_yticks(np.arange(len(y_axis.values)) + 0.5, [plain(t) for t in y_axis.tick_labels()])
            color_ticks(ax.get_xticklabels(), x_axis)
            color_ticks(ax.get_yticklabels(), y_axis)
            ax.set_xlabel(plain(x_axis.label))
            ax.grid(False)
            set_panel_title(ax, panel.groups)
        axes[0].set_ylabel(plain(y_axis.label))
        for ax in axes[1:]:
            ax.tick_params(labelleft=True)
        counts = pd.concat([t["n"] for t in tables])
        reps = f"{counts.min()}" if counts.min() == counts.max() else f"{counts.min()} to {counts.max()}"
        label = info.label
        if name == "fness":
            first, second = flow_names(sweep)
            label = f"fness (+1: {second} takes all, -1: {first})"
        fig.colorbar(
            mesh, ax=axes, label=plain(f"{label}\n(mean of {reps} runs per cell; {how})"), shrink=0.9
        )
        note = pooled_note(sweep, [x, y, *facets])
        fig.suptitle(plain(f"{info.label}" + (f" ({note})" if note else "")))
    return fig
