"""Goodput against delay, Pantheon style: each congestion control (or class, or flow) as a point at its mean
goodput per flow and its delay, with crosses showing the spread over repetitions (the 95 % CI, or the range of
a few runs: :mod:`ccfair.analysis.stats`). The delay axis runs from high to low, so better (more goodput, less
delay) is up and to the right.

The delay is a flow's mean RTT (``rtt_mean``), its p99 RTT (``rtt_p99``), or its queueing delay (mean RTT
minus its base RTT, ``queueing``). From a sweep, one panel per combination of the varied axes (each panel
one scenario), unless they are averaged with ``average``; from a single run, one point per flow.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from ccfair.analysis.stats import IDENTICAL, interval_note, summarize
from ccfair.errors import InputError
from ccfair.plots.data import Sweep, as_sweep, facet_axes, pooled_note, split_panels, with_runs
from ccfair.plots.labels import plain
from ccfair.plots.lines import ring_identical
from ccfair.plots.panels import figure_legend, outer_labels, panel_grid, set_panel_title
from ccfair.plots.style import cc_style, paper_style, shades
from ccfair.result import RunResult
from ccfair.sweep.paths import column_name

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from ccfair.store import Results

DELAYS = {
    "rtt_mean": "mean RTT (ms)",
    "rtt_p99": "p99 RTT (ms)",
    "queueing": "mean queueing delay (ms): mean RTT - base RTT",
}
GROUPINGS = ("cc", "class", "flow")


def flow_points(flows: pd.DataFrame, delay: str) -> pd.DataFrame:
    """Per flow row: ``goodput_mbps`` and ``delay_ms`` (see the module docstring)."""
    if delay not in DELAYS:
        raise InputError("--delay", f"must be one of {', '.join(DELAYS)}, got {delay!r}")
    column = "rtt_p99_ms" if delay == "rtt_p99" else "rtt_mean_ms"
    if column not in flows.columns:
        raise InputError("--delay", f"the flows table has no {column} column")
    delay_ms = flows[column].astype(float)
    if delay == "queueing":
        delay_ms = delay_ms - flows["rtt_ns"].astype(float) / 1e6
    return flows.assign(goodput_mbps=flows["goodput_bps"].astype(float) / 1e6, delay_ms=delay_ms)


def _group_key(frame: pd.DataFrame, by: str) -> pd.Series:
    if by == "cc":
        return frame["cc"].astype(str)
    if by == "class":
        multiple = frame["rtt_ns"].nunique() > 1
        return frame["cc"].astype(str) + (
            ", " + (frame["rtt_ns"] / 1e6).map(lambda r: f"{r:g} ms") if multiple else ""
        )
    # "flow 3 (short)": the group's label from the scenario where it has one, else the algorithm.
    if "label" in frame.columns:
        named = frame["label"].astype("object")
    else:
        named = pd.Series(None, index=frame.index, dtype="object")
    names = named.where(named.notna(), frame["cc"].astype(str)).astype(str)
    return "flow " + frame["flow_id"].astype(int).astype(str) + " (" + names + ")"


def _draw_points(ax: Axes, frame: pd.DataFrame, by: str) -> list[str]:
    """One point per group: the mean over runs of each run's group mean, with crosses; returns the kinds
    of interval drawn."""
    frame = frame.assign(group=_group_key(frame, by))
    # Flows numbered as numbers (flow 2 before flow 10); a flow without delay samples in the window (one
    # that did not take part) has no point, so no legend entry either.
    order = frame.groupby("group")["flow_id"].min() if by == "flow" else None
    frame = frame[frame["delay_ms"].notna()]
    per_run = frame.groupby(["run_id", "group", "cc"], sort=False)[["goodput_mbps", "delay_ms"]].mean()
    per_run = per_run.reset_index()
    kinds = []
    if order is not None:
        per_run = per_run.assign(_order=per_run["group"].map(order))
        groups = list(dict.fromkeys(per_run.sort_values(["cc", "_order"])["group"]))
    else:
        groups = list(dict.fromkeys(per_run.sort_values(["cc", "group"])["group"]))
    by_cc: dict[str, list[str]] = {}
    for g in groups:
        by_cc.setdefault(str(per_run.loc[per_run["group"] == g, "cc"].iloc[0]), []).append(g)
    for cc, members in by_cc.items():
        style = cc_style(cc)
        for group, color in zip(members, shades(style.color, len(members)), strict=True):
            rows = per_run[per_run["group"] == group]
            tput = summarize(rows["goodput_mbps"].to_numpy(), (0.0, np.inf))
            delay = summarize(rows["delay_ms"].to_numpy(), (0.0, np.inf))
            kinds += [tput.kind, delay.kind]
            bars = ax.errorbar(
                [delay.mean],
                [tput.mean],
                xerr=[[delay.mean - delay.low], [delay.high - delay.mean]],
                yerr=[[tput.mean - tput.low], [tput.high - tput.mean]],
                color=color,
                marker=style.marker,
                markersize=6,
                capsize=2,
                elinewidth=0.8,
                linestyle="none",
                label=plain(group),
            )
            bars.lines[0].set_gid(f"tput-delay:{group}")  # the point, not its caps
            if tput.small:
                ax.scatter(
                    rows["delay_ms"], rows["goodput_mbps"], s=7, color=color, alpha=0.45, linewidths=0,
                    gid=f"tput-delay:{group}:runs",
                )  # fmt: skip
            if tput.kind == delay.kind == IDENTICAL:
                ring_identical(ax, [delay.mean], [tput.mean], color, f"tput-delay:{group}")
    return kinds


def _finish(ax: Axes, delay: str) -> None:
    ax.set_xlabel(DELAYS[delay])
    ax.set_ylabel("goodput per flow (Mbit/s)")
    if not ax.xaxis_inverted():
        ax.invert_xaxis()  # less delay to the right: better is up and right


def tput_delay(
    data: RunResult | Sweep | Results | str | Path,
    delay: str = "rtt_mean",
    by: str = "cc",
    plan: str | None = None,
    facet: str | Sequence[str] | None = None,
    average: str | Sequence[str] | None = None,
) -> Figure:
    """Mean goodput per flow against ``delay`` (``rtt_mean``, ``rtt_p99`` or ``queueing``) per ``by``
    (``cc``, ``class`` or ``flow``); see the module docstring."""
    if by not in GROUPINGS:
        raise InputError("--by", f"must be one of {', '.join(GROUPINGS)}, got {by!r}")
    if isinstance(data, RunResult):
        frame = flow_points(data.flows.assign(run_id="run"), delay)
        with paper_style():
            fig, (ax,) = panel_grid(1, (4.2, 3.2))
            _draw_points(ax, frame, "flow" if by == "flow" else by)
            _finish(ax, delay)
            ax.legend(loc="best", fontsize=7)
            name = f"{data.name}: " if data.name else ""
            fig.suptitle(plain(f"{name}goodput against delay (better: up and right)"))
        return fig
    sweep = as_sweep(data, plan)
    flows = sweep.table("flows", "tput-delay")
    facets = facet_axes(sweep, [], facet, average)
    frame = flow_points(with_runs(flows, sweep.done, [column_name(p) for p in facets]), delay)
    if frame.empty:
        raise InputError("DIR", "no done run has flows to plot")
    panels = split_panels(sweep, frame, facets)
    kinds: list[str] = []
    with paper_style():
        fig, axes = panel_grid(len(panels), (3.2, 2.6), sharex=True, sharey=True)
        for ax, panel in zip(axes, panels, strict=True):
            kinds += _draw_points(ax, panel.frame, by)
            _finish(ax, delay)
            set_panel_title(ax, panel.groups)
        outer_labels(axes)
        figure_legend(fig, axes)
        note = pooled_note(sweep, facets, "runs pooled over")
        fig.suptitle(
            plain(
                f"goodput against delay, mean over runs ({interval_note(kinds).replace('bars', 'crosses')}); "
                "better: up and right" + (f"; {note}" if note else "")
            )
        )
    return fig
