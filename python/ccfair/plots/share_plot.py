"""Share of the total goodput taken by each congestion control (or one, ``cc``) against a grid axis: the mean
over the runs of each point with its bars (:mod:`ccfair.analysis.stats`, clipped to [0, 1]); dashed, the share
its flows would get with equal sharing (its flows / all active flows). One panel per combination of the other
varied axes, unless they are averaged with ``average``."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from ccfair.analysis.stats import aggregate
from ccfair.errors import InputError
from ccfair.plots.data import Sweep, as_sweep, line_axes, split_panels, with_runs
from ccfair.plots.labels import plain
from ccfair.plots.lines import dodge, draw_line, line_figure
from ccfair.plots.style import cc_style
from ccfair.sweep.paths import column_name

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from ccfair.store import Results


def cc_shares(classes: pd.DataFrame) -> pd.DataFrame:
    """Per run and CCA: ``share`` (sum of its classes' shares) and ``fair_share`` (its flows / all flows)."""
    per_cc = classes.groupby(["run_id", "cc"], sort=False)[["share", "flows"]].sum().reset_index()
    totals = per_cc.groupby("run_id")["flows"].transform("sum")
    return per_cc.assign(fair_share=per_cc["flows"] / totals)


def share(
    data: Sweep | Results | str | Path,
    x: str | None = None,
    cc: str | None = None,
    facet: str | Sequence[str] | None = None,
    plan: str | None = None,
    average: str | Sequence[str] | None = None,
) -> Figure:
    """The goodput share of each CCA (or only ``cc``) against grid axis ``x`` (default: the first varied),
    one panel per combination of ``facet`` and every other varied axis not in ``average``."""
    sweep = as_sweep(data, plan)
    classes = sweep.table("classes", "share")
    x, xcol, facets = line_axes(sweep, x, facet, average, "share")
    frame = with_runs(cc_shares(classes), sweep.done, [xcol, *(column_name(p) for p in facets)])
    present = sorted(frame["cc"].unique())
    if cc is not None and cc not in present:
        raise InputError(
            "--cc", f"no flows of {cc!r} in this sweep; congestion controls: {', '.join(present)}"
        )
    ccs = [cc] if cc is not None else present
    if not ccs:
        raise InputError("DIR", "no done run has classes to plot")
    x_axis = sweep.axis(x, frame)
    panels = split_panels(sweep, frame, facets)

    def draw(ax: Axes, part: pd.DataFrame) -> list[str]:
        kinds: list[str] = []
        for k, name in enumerate(ccs):
            rows = part[part["cc"] == name]
            if rows.empty:
                continue
            style = cc_style(name)
            offset = dodge(k, len(ccs), x_axis)
            points = draw_line(
                ax,
                rows,
                x_axis,
                xcol,
                "share",
                {"color": style.color, "marker": style.marker, "label": plain(name)},
                gid=f"share:{name}",
                offset=offset,
                bounds=(0.0, 1.0),
            )
            kinds += list(points["kind"])
            fair = aggregate(rows, [xcol], "fair_share")
            fair["x"] = [x_axis.position(v) + offset for v in fair[xcol]]
            fair = fair.sort_values("x")
            # Dashed on a numeric axis; a bar per category otherwise.
            how = (
                {"linestyle": "--"}
                if x_axis.numeric
                else {"linestyle": "none", "marker": "_", "markersize": 14}
            )
            ax.plot(
                fair["x"].to_numpy(dtype=float),
                fair["mean"].to_numpy(dtype=float),
                color=style.color,
                linewidth=0.8,
                gid=f"fair:{name}",
                **how,
            )
        ax.set_ylim(0, 1.05)
        return kinds

    mark = "dashed" if x_axis.numeric else "bar"
    who = f"{cc}'s" if cc else "each CCA's"
    legend, title = f"CCA ({mark}: equal sharing)", f"{who} share of goodput"
    return line_figure(sweep, panels, x_axis, draw, [x, *facets], "share of total goodput", legend, title)
