"""What the line figures (relative goodput, share) share: one line per group against a grid axis, the mean
with bars from :mod:`ccfair.analysis.stats` (a clipped 95 % t interval, or for a few runs their range with the
runs drawn as dots, identical runs ringed), one panel per facet combination."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ccfair.analysis.stats import IDENTICAL, aggregate, interval_note
from ccfair.plots.axes import Axis, apply_x
from ccfair.plots.data import Panel, Sweep, pooled_note
from ccfair.plots.labels import plain
from ccfair.plots.panels import figure_legend, outer_labels, panel_grid, set_panel_title
from ccfair.plots.style import paper_style

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure


DODGE = 0.08  # categorical axes: lines of different groups sit this far apart around a category
RUN_DOT_SIZE = 10
IDENTICAL_RING_SIZE = 60  # a ring around a mean whose runs were identical (stats.IDENTICAL_NOTE)


def line_figure(
    sweep: Sweep,
    panels: list[Panel],
    x_axis: Axis,
    draw: Callable[[Axes, pd.DataFrame], list[str]],
    used: Sequence[str],
    ylabel: str,
    legend: str,
    title: str,
) -> Figure:
    """A figure of line panels, one per element of ``panels`` (shared axes): ``draw(ax, rows)`` draws a
    panel's lines and returns the interval kinds of their points; then each panel's x axis and title, the
    outer labels, one legend titled ``legend``, and the figure's ``title`` with the interval the bars show
    and what was pooled over the varied axes the figure does not show (``used``: those it shows)."""
    kinds: list[str] = []
    with paper_style():
        fig, axes = panel_grid(len(panels), (3.2, 2.4), sharex=True, sharey=True)
        for ax, panel in zip(axes, panels, strict=True):
            kinds += draw(ax, panel.frame)
            apply_x(ax, x_axis)
            set_panel_title(ax, panel.groups)
        axes[0].set_ylabel(ylabel)
        outer_labels(axes)
        figure_legend(fig, axes, legend)
        note = pooled_note(sweep, used)
        fig.suptitle(plain(f"{title} (mean; {interval_note(kinds)})" + (f"; {note}" if note else "")))
    return fig


def dodge(index: int, count: int, x_axis: Axis) -> float:
    """The offset of group ``index`` of ``count`` on a categorical axis (none on a numeric one)."""
    return 0.0 if x_axis.numeric else (index - (count - 1) / 2) * DODGE


def draw_line(
    ax: Axes,
    frame: pd.DataFrame,
    x_axis: Axis,
    xcol: str,
    value: str,
    style: dict[str, Any],
    gid: str,
    offset: float = 0.0,
    bounds: tuple[float, float] | None = None,
) -> pd.DataFrame:
    """The mean of ``value`` per x value of ``frame`` with its bars (see the module docstring), joined by a
    line on a numeric axis only (categories have no order to join); the runs of points with few runs as
    dots (gid ``<gid>:runs``); a ring around each mean whose runs were identical (gid
    ``<gid>:identical``). Returns the points (:func:`ccfair.analysis.stats.aggregate`'s columns and
    ``x``)."""
    points = aggregate(frame, [xcol], value, bounds)
    points["x"] = [x_axis.position(v) + offset for v in points[xcol]]
    points = points.sort_values("x")
    x, y = points["x"].to_numpy(dtype=float), points["mean"].to_numpy(dtype=float)
    low = np.nan_to_num(y - points["low"].to_numpy(dtype=float), nan=0.0)
    high = np.nan_to_num(points["high"].to_numpy(dtype=float) - y, nan=0.0)
    if not x_axis.numeric:
        style = {**style, "linestyle": "none"}
    container = ax.errorbar(x, y, yerr=np.vstack([low, high]), capsize=2, elinewidth=0.8, **style)
    container.lines[0].set_gid(gid)
    small = points[points["kind"].isin(("range", "identical"))]
    if not small.empty:
        xs = np.concatenate([np.full(len(v), px) for px, v in zip(small["x"], small["values"], strict=True)])
        ys = np.concatenate(list(small["values"]))
        ax.scatter(
            xs,
            ys,
            s=RUN_DOT_SIZE,
            color=style.get("color"),
            alpha=0.6,
            linewidths=0,
            zorder=1,
            gid=f"{gid}:runs",
        )
    same = points[points["kind"] == IDENTICAL]
    ring_identical(ax, same["x"], same["mean"], style.get("color"), gid)
    return points


def ring_identical(ax: Axes, x: Any, y: Any, color: Any, gid: str) -> None:
    """Rings around the points at ``x``, ``y`` whose runs were identical (gid ``<gid>:identical``), which
    :data:`ccfair.analysis.stats.IDENTICAL_NOTE` explains; nothing when there are none."""
    if len(x) == 0:
        return
    ax.scatter(
        x,
        y,
        s=IDENTICAL_RING_SIZE,
        facecolors="none",
        edgecolors=color,
        linewidths=1.0,
        zorder=3,
        gid=f"{gid}:identical",
    )
