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


def draw_line(
    ax: Axes, frame: pd.DataFrame, x_axis: Axis, xcol: str, value: str, style: dict[str, Any], gid: str
) -> pd.DataFrame:
    """Mean and 95 % CI of ``value`` per x value of ``frame``, drawn with error bars; returns the points."""
    points = aggregate(frame, [xcol], value)
    points["x"] = [x_axis.position(v) for v in points[xcol]]
    points = points.sort_values("x")
    yerr = np.nan_to_num(points["ci95"].to_numpy(dtype=float), nan=0.0)
    x, y = points["x"].to_numpy(dtype=float), points["mean"].to_numpy(dtype=float)
    container = ax.errorbar(x, y, yerr=yerr, capsize=2, elinewidth=0.8, **style)
    container.lines[0].set_gid(gid)
    return points
