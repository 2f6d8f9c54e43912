"""Relative goodput per connection class (flows with the same CCA and RTT) against a grid axis: one line
per class, mean and 95 % confidence interval over the runs of each point, one panel per facet value. A
class at 1 gets its fair share of the link (goodput excludes headers, so perfect sharing reads ≈ 0.965)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ccfair.errors import ScenarioError
from ccfair.plots.axes import apply_x, make_axis
from ccfair.plots.data import Sweep, as_sweep, default_axes, pooled_note
from ccfair.plots.labels import metric, plain
from ccfair.plots.lines import dodge, draw_line
from ccfair.plots.panels import panel_grid, set_facet_title
from ccfair.plots.style import cc_style, paper_style

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from ccfair.store import Results

LINESTYLES = ("-", "--", ":", "-.")


def class_label(cc: str, rtt_ns: int, multiple_rtts: bool) -> str:
    return f"{cc}, {rtt_ns / 1e6:g} ms" if multiple_rtts else cc


def relgoodput(
    data: Sweep | Results | str | Path,
    x: str | None = None,
    facet: str | None = None,
    plan: str | None = None,
) -> Figure:
    """Relative goodput of each class against grid axis ``x`` (default: the first varied axis)."""
    sweep = as_sweep(data, plan)
    classes = sweep.table("classes", "relgoodput")
    (x,) = default_axes(sweep, ("--x",), (x,), "relgoodput")
    xcol = sweep.varied_column(x, "--x")
    fcol = sweep.varied_column(facet, "--facet") if facet is not None else None
    if fcol == xcol:
        raise ScenarioError("--facet", f"{facet!r} is already on --x; facet by another axis")
    keep = ["run_id", xcol] + ([fcol] if fcol else [])
    frame = classes.merge(sweep.done[keep], on="run_id", how="inner")
    if frame.empty:
        raise ScenarioError("DIR", "no done run has classes to plot")
    x_axis = make_axis(x, frame[xcol].tolist())
    f_values = list(make_axis(facet, frame[fcol].tolist()).values) if facet and fcol else [None]
    multiple_rtts = frame["rtt_ns"].nunique() > 1
    keys = sorted({(str(c), int(r)) for c, r in zip(frame["cc"], frame["rtt_ns"], strict=True)})
    rtt_rank = {r: i for i, r in enumerate(sorted({r for _, r in keys}))}
    with paper_style():
        fig, axes = panel_grid(len(f_values), (3.2, 2.4), sharey=True)
        for ax, value in zip(axes, f_values, strict=True):
            part = frame if fcol is None else frame[frame[fcol] == value]
            for k, (cc, rtt_ns) in enumerate(keys):
                rows = part[(part["cc"] == cc) & (part["rtt_ns"] == rtt_ns)]
                if rows.empty:
                    continue
                style = cc_style(cc)
                label = class_label(cc, rtt_ns, multiple_rtts)
                draw_line(
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
                )
            ax.axhline(1.0, color="0.4", linestyle=":", linewidth=0.8)
            apply_x(ax, x_axis)
            set_facet_title(ax, facet, value)
        axes[0].set_ylabel(metric("relative_goodput").label)
        axes[0].legend(title="class", loc="best")
        note = pooled_note(sweep, [p for p in (x, facet) if p is not None])
        fig.suptitle(plain("relative goodput per class (mean, 95 % CI)" + (f"; {note}" if note else "")))
    return fig
