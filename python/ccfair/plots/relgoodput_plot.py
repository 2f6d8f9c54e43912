"""Relative goodput per connection class (flows with the same CCA and RTT) against a grid axis: one line per
class, the mean over the runs of each point with its bars (:mod:`ccfair.analysis.stats`), one panel per
combination of the other varied axes (unless they are averaged with ``average``).

Goodput excludes headers, so perfect sharing gives the payload fraction of a full packet, MSS / MTU
(1448 / 1500 ≈ 0.965), not 1: the fair-share line is drawn there, at each MTU of the panel's runs."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ccfair.errors import InputError
from ccfair.plots.data import Sweep, as_sweep, line_axes, split_panels, with_runs
from ccfair.plots.labels import metric, plain
from ccfair.plots.lines import dodge, draw_line, line_figure
from ccfair.plots.style import cc_style
from ccfair.scenario import HEADER_BYTES
from ccfair.sweep.paths import column_name

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from ccfair.store import Results

LINESTYLES = ("-", "--", ":", "-.")


def class_label(cc: str, rtt_ns: int, multiple_rtts: bool) -> str:
    return f"{cc}, {rtt_ns / 1e6:g} ms" if multiple_rtts else cc


def payload_fraction(mtu_bytes: int) -> float:
    """The relative goodput of perfect sharing: payload bytes per wire byte of a full packet."""
    return (mtu_bytes - HEADER_BYTES) / mtu_bytes


def relgoodput(
    data: Sweep | Results | str | Path,
    x: str | None = None,
    facet: str | Sequence[str] | None = None,
    plan: str | None = None,
    average: str | Sequence[str] | None = None,
) -> Figure:
    """Relative goodput of each class against grid axis ``x`` (default: the first varied axis), one panel
    per combination of ``facet`` and every other varied axis not in ``average``."""
    sweep = as_sweep(data, plan)
    classes = sweep.table("classes", "relgoodput")
    x, xcol, facets = line_axes(sweep, x, facet, average, "relgoodput")
    keep = [xcol, "mtu_bytes", *(column_name(p) for p in facets)]
    frame = with_runs(classes, sweep.done, keep)
    if frame.empty:
        raise InputError("DIR", "no done run has classes to plot")
    x_axis = sweep.axis(x, frame)
    panels = split_panels(sweep, frame, facets)
    multiple_rtts = frame["rtt_ns"].nunique() > 1
    keys = sorted({(str(c), int(r)) for c, r in zip(frame["cc"], frame["rtt_ns"], strict=True)})
    rtt_rank = {r: i for i, r in enumerate(sorted({r for _, r in keys}))}

    def draw(ax: Axes, part: pd.DataFrame) -> list[str]:
        kinds: list[str] = []
        for k, (cc, rtt_ns) in enumerate(keys):
            rows = part[(part["cc"] == cc) & (part["rtt_ns"] == rtt_ns)]
            if rows.empty:
                continue
            style = cc_style(cc)
            label = class_label(cc, rtt_ns, multiple_rtts)
            points = draw_line(
                ax,
                rows,
                x_axis,
                xcol,
                "relative_goodput",
                {
                    "color": style.color,
                    "marker": style.marker,
                    "label": plain(label),
                    "linestyle": LINESTYLES[rtt_rank[rtt_ns] % len(LINESTYLES)],
                },
                gid=f"relgoodput:{label}",
                offset=dodge(k, len(keys), x_axis),
                bounds=(0.0, float("inf")),
            )
            kinds += list(points["kind"])
        for mtu in sorted({int(m) for m in part["mtu_bytes"].dropna()}):
            fair = payload_fraction(mtu)
            ax.axhline(
                fair,
                color="0.4",
                linestyle=":",
                linewidth=0.8,
                gid=f"fair:{mtu}",
                label=f"fair share ({mtu - HEADER_BYTES}/{mtu} = {fair:.3f}: goodput excludes headers)",
            )
        return kinds

    return line_figure(
        sweep,
        panels,
        x_axis,
        draw,
        [x, *facets],
        metric("relative_goodput").label,
        "class",
        "relative goodput per class",
    )
