"""The time series of one run: per-flow goodput (per flow and stacked), congestion window, smoothed RTT, the
bottleneck queue's length and sojourn time, drops and CE marks per interval, and, for BBR flows, their state
machine over time as a band.

With more than :data:`MAX_FLOW_LINES` flows, the per-flow panels show one line per connection class (the
class mean; the stacked panel its total) so the figure stays readable. Flows of one congestion control
share its registry colour in shades and differ in line style; the queue's percentiles use neutral greys
that no congestion control has. The title names the run (its directory or scenario file, or its plan and
cell).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from ccfair.plots.axes import value_text
from ccfair.plots.labels import plain
from ccfair.plots.panels import new_figure
from ccfair.plots.style import bbr_mode_color, bbr_mode_name, cc_style, is_bbr, paper_style, shades
from ccfair.result import RunResult
from ccfair.sweep.paths import column_name

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from ccfair.plots.data import Sweep

MAX_FLOW_LINES = 12
NS_PER_S = 1e9
# Flows of one CCA: shades of its colour and these line styles in turn.
FLOW_LINESTYLES = ("-", "--", "-.", ":")
# The queue's sojourn percentiles: neutral, and not a colour of the CCA registry.
SOJOURN_STYLES = {"p50": {"color": "0.55", "linestyle": "-"}, "p99": {"color": "0.1", "linestyle": "--"}}


@dataclass(frozen=True)
class Series:
    """One line of the per-flow panels: a flow, or a class of flows."""

    key: str
    label: str
    cc: str
    color: str
    flow_ids: tuple[int, ...]
    linestyle: str = "-"


def _class_label(cc: str, rtt_ns: int, multiple_rtts: bool) -> str:
    return f"{cc}, {rtt_ns / 1e6:g} ms" if multiple_rtts else cc


def series_of(result: RunResult) -> list[Series]:
    """The lines to draw: one per flow, or one per class when there are too many flows."""
    flows = result.flows.sort_values("flow_id")
    multiple_rtts = flows["rtt_ns"].nunique() > 1
    if len(flows) > MAX_FLOW_LINES:
        out = []
        for (cc, rtt_ns), group in flows.groupby(["cc", "rtt_ns"], sort=True):
            label = _class_label(str(cc), int(rtt_ns), multiple_rtts) + f" ({len(group)} flows)"
            out.append(Series(label, label, str(cc), cc_style(str(cc)).color, tuple(group["flow_id"])))
        return out
    colors: dict[int, tuple[str, str]] = {}
    for cc, group in flows.groupby("cc", sort=False):
        for k, (flow_id, color) in enumerate(
            zip(group["flow_id"], shades(cc_style(str(cc)).color, len(group)), strict=True)
        ):
            colors[int(flow_id)] = (color, FLOW_LINESTYLES[k % len(FLOW_LINESTYLES)])
    out = []
    for row in flows.itertuples(index=False):
        given = row.label if isinstance(row.label, str) and row.label else None
        name = f"{row.flow_id}: {given or _class_label(row.cc, row.rtt_ns, multiple_rtts)}"
        color, linestyle = colors[int(row.flow_id)]
        out.append(Series(str(row.flow_id), name, row.cc, color, (int(row.flow_id),), linestyle))
    return out


def _pivot(ts: pd.DataFrame, column: str, series: list[Series], how: str) -> pd.DataFrame:
    """Time (s) x series, aggregating each series' flows with ``how`` (``mean`` or ``sum``)."""
    wide = ts.pivot_table(index="t_ns", columns="flow_id", values=column, aggfunc="first")
    out = pd.DataFrame(index=wide.index / NS_PER_S)
    for s in series:
        cols = [f for f in s.flow_ids if f in wide.columns]
        part = wide[cols].to_numpy(dtype=float) if cols else np.full((len(wide), 1), np.nan)
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter(
                "ignore", RuntimeWarning
            )  # an interval where no flow of the series is active
            if how == "sum":
                out[s.key] = np.where(np.isnan(part).all(axis=1), np.nan, np.nansum(part, axis=1))
            else:
                out[s.key] = np.nanmean(part, axis=1) if part.size else np.nan
    return out


def _bbr_flows(result: RunResult) -> list[int]:
    """Flows of a BBR algorithm whose time series carries a state (``cc_mode``)."""
    ts = result.timeseries
    if "cc_mode" not in ts.columns:
        return []
    ids = [
        int(f) for f, cc in zip(result.flows["flow_id"], result.flows["cc"], strict=True) if is_bbr(str(cc))
    ]
    return [f for f in ids if (ts.loc[ts["flow_id"] == f, "cc_mode"] >= 0).any()]


def mode_spans(times_s: np.ndarray, modes: np.ndarray, interval_s: float) -> list[tuple[int, float, float]]:
    """Runs of equal mode as (mode, start s, width s); each sample covers the interval ending at its time.
    NaN and negative values (no state) leave gaps."""
    spans: list[tuple[int, float, float]] = []
    for t, m in zip(times_s, modes, strict=True):
        if not np.isfinite(m) or m < 0:  # no state (an algorithm without modes reports -1)
            continue
        mode = int(m)
        start = t - interval_s
        if spans and spans[-1][0] == mode and abs(spans[-1][1] + spans[-1][2] - start) < interval_s / 2:
            spans[-1] = (mode, spans[-1][1], t - spans[-1][1])
        else:
            spans.append((mode, start, interval_s))
    return spans


def _window(ax: Axes, start_s: float, end_s: float) -> None:
    for x in (start_s, end_s):
        ax.axvline(x, color="0.5", linestyle=":", linewidth=0.8)


def run_title(sweep: Sweep, run: pd.Series) -> str:
    """``plan figs, cell 3: link.buffer = 1bdp, flows[1].cc = reno, repetition 0 (flipped)``: which run of a
    sweep a figure shows."""

    where = ", ".join(
        f"{p} = {value_text(run[column_name(p)])}" for p in sweep.axes if column_name(p) in run.index
    )
    flipped = " (flipped)" if bool(run.get("flipped", False)) else ""
    return f"plan {sweep.plan}, cell {run['cell']}: {where}, repetition {run['repetition']}{flipped}"


def timeseries(result: RunResult, title: str | None = None) -> Figure:
    """The time-series figure of one run (``ccfair.load_run(dir)``, ``ccfair.run(...)`` or
    ``Results.result(run_id)``); the title names the run (``title``, else ``result.name``)."""

    series = series_of(result)
    ts, queue = result.timeseries, result.queue
    scenario = result.scenario
    interval_s = scenario.interval_ns / NS_PER_S
    start_s, end_s = (t / NS_PER_S for t in scenario.measure_window_ns())
    bbr = _bbr_flows(result)
    aggregated = len(series) != len(result.flows)
    panels = ["goodput", "stacked", "cwnd", "srtt", "backlog", "sojourn", "drops"] + (["bbr"] if bbr else [])
    heights = [1.0] * 7 + ([0.25 + 0.18 * len(bbr)] if bbr else [])
    with paper_style():
        fig = new_figure(7.0, 1.55 * sum(heights) + 0.9)
        axes = fig.subplots(len(panels), 1, sharex=True, gridspec_kw={"height_ratios": heights})
        ax = dict(zip(panels, axes, strict=True))
        per = "class mean" if aggregated else "per flow"
        goodput = _pivot(ts, "goodput_bps", series, "mean") / 1e6
        for s in series:
            ax["goodput"].plot(
                goodput.index,
                goodput[s.key],
                color=s.color,
                linestyle=s.linestyle,
                label=plain(s.label),
                gid=f"goodput:{s.key}",
            )
        ax["goodput"].set_ylabel(f"goodput, {per}\n(Mbit/s)")
        ax["goodput"].legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=7)

        totals = _pivot(ts, "goodput_bps", series, "sum").fillna(0.0) / 1e6
        ax["stacked"].stackplot(
            totals.index, *(totals[s.key] for s in series), colors=[s.color for s in series], linewidth=0
        )
        ax["stacked"].axhline(scenario.link.rate_bps / 1e6, color="0.2", linestyle="--", linewidth=0.8)
        ax["stacked"].set_ylabel("goodput, stacked\n(Mbit/s)")

        cwnd = _pivot(ts, "cwnd", series, "mean")
        srtt = _pivot(ts.assign(srtt_ms=ts["srtt_ns"] / 1e6), "srtt_ms", series, "mean")
        for s in series:
            ax["cwnd"].plot(
                cwnd.index, cwnd[s.key], color=s.color, linestyle=s.linestyle, gid=f"cwnd:{s.key}"
            )
            ax["srtt"].plot(
                srtt.index, srtt[s.key], color=s.color, linestyle=s.linestyle, gid=f"srtt:{s.key}"
            )
        ax["cwnd"].set_ylabel("cwnd\n(packets)")
        ax["srtt"].set_ylabel("smoothed RTT\n(ms)")

        tq = queue["t_ns"] / NS_PER_S
        ax["backlog"].plot(tq, queue["backlog_packets"], color="0.25", gid="backlog")
        ax["backlog"].set_ylabel("queue length\n(packets)")
        for q in ("p50", "p99"):
            ax["sojourn"].plot(
                tq, queue[f"sojourn_{q}_ns"] / 1e6, label=q, gid=f"sojourn_{q}", **SOJOURN_STYLES[q]
            )
        ax["sojourn"].set_ylabel("queue sojourn\n(ms)")
        ax["sojourn"].legend(loc="upper left", bbox_to_anchor=(1.01, 1.0))
        width = 0.9 * interval_s
        tq_start = tq - interval_s  # each row counts the interval ending at t_ns
        ax["drops"].bar(
            tq_start, queue["drops"], width=width, align="edge", color="#CC3311", label="drops", gid="drops"
        )
        if (queue["marks"] > 0).any():  # a "CE marks" entry only where there are marks
            ax["drops"].bar(
                tq_start,
                queue["marks"],
                width=width,
                align="edge",
                bottom=queue["drops"],
                color="#EE7733",
                label="CE marks",
                gid="marks",
            )
        ax["drops"].set_ylabel("per interval\n(packets)")
        ax["drops"].legend(loc="upper left", bbox_to_anchor=(1.01, 1.0))
        if bbr:
            cc_of = dict(zip(result.flows["flow_id"], result.flows["cc"], strict=True))
            _bbr_band(ax["bbr"], ts, [(f, f"flow {f} ({cc_of[f]})") for f in bbr], interval_s)
        for a in axes:
            _window(a, start_s, end_s)
        axes[-1].set_xlabel("time (s)")
        axes[-1].set_xlim(0, scenario.duration_ns / NS_PER_S)
        name = title or result.name
        fig.suptitle(
            plain(f"{name}: time series" if name else "time series") + " (dotted: measurement window)"
        )
    return fig


def _bbr_band(ax: Axes, ts: pd.DataFrame, flows: list[tuple[int, str]], interval_s: float) -> None:
    """One row per BBR flow (id, label), coloured by its mode in each interval."""
    from matplotlib.patches import Patch  # only when a figure is drawn

    seen: set[int] = set()
    for row, (flow_id, _) in enumerate(flows):
        own = ts[ts["flow_id"] == flow_id].sort_values("t_ns")
        spans = mode_spans(
            own["t_ns"].to_numpy() / NS_PER_S, own["cc_mode"].to_numpy(dtype=float), interval_s
        )
        for mode in sorted({m for m, _, _ in spans}):
            bars = [(s, w) for m, s, w in spans if m == mode]
            ax.broken_barh(
                bars, (row + 0.1, 0.8), facecolors=bbr_mode_color(mode), gid=f"bbr:{flow_id}:{mode}"
            )
            seen.add(mode)
    ax.set_yticks([r + 0.5 for r in range(len(flows))])
    ax.set_yticklabels([plain(label) for _, label in flows])
    ax.set_ylim(0, len(flows))
    ax.set_ylabel("BBR state")
    ax.grid(False)
    handles = [Patch(color=bbr_mode_color(m), label=bbr_mode_name(m)) for m in sorted(seen)]
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0))
