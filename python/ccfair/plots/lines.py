"""What the line figures (relative goodput, share) share: one line per group against a grid axis, the mean
with 95 % confidence error bars, one panel per facet value."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ccfair.plots.axes import Axis
from ccfair.plots.stats import aggregate

if TYPE_CHECKING:
    from matplotlib.axes import Axes


DODGE = 0.08  # categorical axes: lines of different groups sit this far apart around a category


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
) -> pd.DataFrame:
    """Mean and 95 % CI of ``value`` per x value of ``frame``, drawn with error bars, joined by a line on a
    numeric axis only (categories have no order to join); returns the points."""
    points = aggregate(frame, [xcol], value)
    points["x"] = [x_axis.position(v) + offset for v in points[xcol]]
    points = points.sort_values("x")
    yerr = np.nan_to_num(points["ci95"].to_numpy(dtype=float), nan=0.0)
    x, y = points["x"].to_numpy(dtype=float), points["mean"].to_numpy(dtype=float)
    if not x_axis.numeric:
        style = {**style, "linestyle": "none"}
    container = ax.errorbar(x, y, yerr=yerr, capsize=2, elinewidth=0.8, **style)
    container.lines[0].set_gid(gid)
    return points
