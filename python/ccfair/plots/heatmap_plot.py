"""Heatmap: any run metric over two grid axes, one panel per value of a third; each cell shows the mean over
its done runs (repetitions) written in it, with the 95 % confidence half width when there are several."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from ccfair.errors import ScenarioError
from ccfair.plots.axes import color_ticks, make_axis
from ccfair.plots.data import Sweep, as_sweep, default_axes, pooled_note, run_metric
from ccfair.plots.labels import metric as metric_label
from ccfair.plots.labels import plain
from ccfair.plots.panels import panel_grid, set_facet_title
from ccfair.plots.stats import aggregate
from ccfair.plots.style import paper_style

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from ccfair.store import Results


def _cell_text(mean: float, ci95: float, digits: int) -> str:
    if not np.isfinite(mean):
        return ""
    text = f"{mean:.{digits}g}"
    return text + (f"\n±{ci95:.1g}" if np.isfinite(ci95) and ci95 > 0 else "")


def heatmap(
    data: Sweep | Results | pd.DataFrame | str | Path,
    metric: str = "jain_index",
    x: str | None = None,
    y: str | None = None,
    facet: str | None = None,
    plan: str | None = None,
) -> Figure:
    """``metric`` (a column of ``runs``) over grid axes ``x`` and ``y`` (dotted paths; default: the
    plan's first two varied axes), one panel per value of ``facet``."""
    import matplotlib as mpl

    sweep = as_sweep(data, plan)
    name = run_metric(sweep, metric)
    x, y = default_axes(sweep, ("--x", "--y"), (x, y), "heatmap")
    xcol, ycol = sweep.varied_column(x, "--x"), sweep.varied_column(y, "--y")
    if xcol == ycol:
        raise ScenarioError("--y", f"is the same axis as --x ({x!r}); give two different axes")
    fcol = sweep.varied_column(facet, "--facet") if facet is not None else None
    if fcol is not None and fcol in (xcol, ycol):
        raise ScenarioError("--facet", f"{facet!r} is already on --x or --y; facet by another axis")
    done = sweep.done
    x_axis, y_axis = make_axis(x, done[xcol].tolist()), make_axis(y, done[ycol].tolist())
    f_axis = make_axis(facet, done[fcol].tolist()) if facet is not None and fcol is not None else None
    by = [c for c in (fcol, ycol, xcol) if c is not None]
    table = aggregate(done, by, name)
    info = metric_label(name)
    means = table["mean"].to_numpy(dtype=float) * info.scale
    if not np.isfinite(means).any():
        raise ScenarioError("--metric", f"{name} has no value in any done run of this sweep")
    low, high = info.bounds or (float(np.nanmin(means)), float(np.nanmax(means)))
    if low == high:
        low, high = low - 0.5, high + 0.5
    cmap = mpl.colormaps["RdBu" if name == "fness" else "viridis"]
    norm = mpl.colors.Normalize(vmin=low, vmax=high)
    facets = list(f_axis.values) if f_axis is not None else [None]
    with paper_style():
        fig, axes = panel_grid(
            len(facets), (0.55 * len(x_axis.values) + 1.4, 0.42 * len(y_axis.values) + 1.0), sharey=True
        )
        for ax, value in zip(axes, facets, strict=True):
            part = table if fcol is None else table[table[fcol] == value]
            grid = np.full((len(y_axis.values), len(x_axis.values)), np.nan)
            cis = np.full_like(grid, np.nan)
            for row in part.itertuples(index=False):
                i, j = y_axis.values.index(getattr(row, ycol)), x_axis.values.index(getattr(row, xcol))
                grid[i, j], cis[i, j] = row.mean * info.scale, row.ci95 * info.scale
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
                            _cell_text(grid[i, j], cis[i, j], 3),
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
            set_facet_title(ax, facet, value)
        axes[0].set_ylabel(plain(y_axis.label))
        for ax in axes[1:]:
            ax.tick_params(labelleft=True)
        counts = table["n"]
        reps = f"{counts.min()}" if counts.min() == counts.max() else f"{counts.min()} to {counts.max()}"
        fig.colorbar(mesh, ax=axes, label=plain(f"{info.label}\n(mean of {reps} runs per cell)"), shrink=0.9)
        note = pooled_note(sweep, [p for p in (x, y, facet) if p is not None])
        fig.suptitle(plain(f"{info.label}" + (f" ({note})" if note else "")))
    return fig
