"""The two-flow fairness measure fness of every two-flow run, per pair of congestion controls, start order
and cell: one point per run and a kernel density of the points, reflected at ±1 (fness cannot leave
[-1, 1]). fness is -1 when flow 0 takes the whole link, 0 when both get the same, +1 when flow 1 takes it
all. Runs of different cells are not pooled: one panel per combination of the varied axes, unless they are
averaged with ``average``."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from ccfair.analysis.stats import bounded_kde
from ccfair.errors import InputError
from ccfair.plots.data import Panel, Sweep, as_sweep, facet_axes, pooled_note, split_panels, with_runs
from ccfair.plots.labels import metric, plain
from ccfair.plots.panels import panel_grid, set_panel_title
from ccfair.plots.style import cc_style, paper_style
from ccfair.sweep.paths import column_name

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from ccfair.store import Results

KDE_HEIGHT = 0.7  # of a row
JITTER = 0.08
GRID = np.linspace(-1.0, 1.0, 401)


def fness_runs(sweep: Sweep) -> pd.DataFrame:
    """The done two-flow runs with their fness: ``run_id``, ``fness``, ``pair`` (``"reno vs cubic"``: flow 0
    vs flow 1), ``order`` (which flow started first), ``cc0``, ``cc1``, and ``label0``, ``label1`` (the
    flows' labels, None where the scenario gives none)."""
    done = sweep.done
    runs = (
        done[np.isfinite(done["fness"].to_numpy(dtype=float))] if "fness" in done.columns else done.iloc[:0]
    )
    if runs.empty:
        raise InputError(
            "--kind",
            "fness needs runs of exactly two flows; no done run of this sweep has an fness value "
            f"(flow counts: {', '.join(map(str, sorted(done['flow_count'].dropna().unique()))) or 'none'})",
        )
    flows = sweep.table("flows", "fness")
    flows = flows[flows["run_id"].isin(set(runs["run_id"]))]
    first = flows[flows["flow_id"] == 0].set_index("run_id")
    second = flows[flows["flow_id"] == 1].set_index("run_id")
    rows = []
    for run_id, value in zip(runs["run_id"], runs["fness"], strict=True):
        a, b = first.loc[run_id], second.loc[run_id]
        if a["start_ns"] < b["start_ns"]:
            order = f"flow 0 ({a['cc']}) starts first"
        elif b["start_ns"] < a["start_ns"]:
            order = f"flow 1 ({b['cc']}) starts first"
        else:
            order = "both start together"
        rows.append(
            {
                "run_id": run_id,
                "fness": float(value),
                "pair": f"{a['cc']} vs {b['cc']}",
                "order": order,
                "cc0": a["cc"],
                "cc1": b["cc"],
                "label0": _label(a),
                "label1": _label(b),
            }
        )
    return pd.DataFrame(rows)


def _label(flow: pd.Series) -> str | None:
    label = flow.get("label")
    return label if isinstance(label, str) and label else None


def side_names(part: pd.DataFrame) -> tuple[str, str]:
    """What the ends of a panel's fness axis name: the two congestion controls; for a pair of the same one,
    the flows' labels when the scenario gives them two different ones, else ``flow 0`` and ``flow 1``
    (``-1: cubic takes all, +1: cubic takes all`` would say nothing)."""
    cc0, cc1 = str(part["cc0"].iloc[0]), str(part["cc1"].iloc[0])
    if cc0 != cc1:
        return cc0, cc1
    labels = [part[f"label{i}"].dropna().unique() for i in (0, 1)]
    if all(len(values) == 1 for values in labels) and labels[0][0] != labels[1][0]:
        return f"flow 0 ({labels[0][0]})", f"flow 1 ({labels[1][0]})"
    return "flow 0", "flow 1"


def fness(
    data: Sweep | Results | str | Path,
    plan: str | None = None,
    facet: str | Sequence[str] | None = None,
    average: str | Sequence[str] | None = None,
) -> Figure:
    """One panel per combination of the varied axes (``facet`` first, those in ``average`` pooled) and CC
    pair, in it one row per start order: the runs' fness as points, their density reflected at ±1."""
    sweep = as_sweep(data, plan)
    facets = facet_axes(sweep, [], facet, average)
    frame = with_runs(fness_runs(sweep), sweep.done, [column_name(p) for p in facets])
    panels: list[tuple[Panel, str]] = [
        (panel, pair)
        for panel in split_panels(sweep, frame, facets)
        for pair in sorted(panel.frame["pair"].unique())
    ]
    rng = np.random.default_rng(0)  # the same jitter every time
    with paper_style():
        fig, axes = panel_grid(len(panels), (3.4, 0.9 + 0.9 * frame.groupby("pair")["order"].nunique().max()))
        for ax, (panel, pair) in zip(axes, panels, strict=True):
            part = panel.frame[panel.frame["pair"] == pair]
            where = f"{panel.title}:" if panel.values else ""
            orders = sorted(part["order"].unique())
            cc0, cc1 = part["cc0"].iloc[0], part["cc1"].iloc[0]
            color = cc_style(cc1).color if cc0 != cc1 else cc_style(cc0).color
            for row, order in enumerate(orders):
                values = part.loc[part["order"] == order, "fness"].to_numpy(dtype=float)
                jitter = rng.uniform(-JITTER, JITTER, size=values.size)
                ax.scatter(
                    values,
                    row - 0.12 + jitter,
                    s=10,
                    color=color,
                    alpha=0.7,
                    linewidths=0,
                    gid=f"fness:{where}{pair}:{order}",
                )
                density = bounded_kde(values, GRID, -1.0, 1.0)
                if density is not None:
                    height = KDE_HEIGHT * density / density.max()
                    ax.fill_between(GRID, row, row + height, color=color, alpha=0.25, linewidth=0)
                    ax.plot(GRID, row + height, color=color, linewidth=1.0, gid=f"kde:{where}{pair}:{order}")
            ax.axvline(0.0, color="0.4", linestyle=":", linewidth=0.8)
            ax.set_yticks(
                range(len(orders)), [plain(f"{o}\n(n = {(part['order'] == o).sum()})") for o in orders]
            )
            ax.set_ylim(-0.4, len(orders) - 0.2)
            ax.set_xlim(-1.05, 1.05)
            set_panel_title(ax, panel.groups)
            title = ax.get_title()
            ax.set_title(plain(f"flow 0: {cc0}, flow 1: {cc1}") + (f"\n{title}" if title else ""))
            first, second = side_names(part)
            ax.set_xlabel(plain(f"fness (-1: {first} takes all, +1: {second} takes all)"))
        note = pooled_note(sweep, facets, "runs pooled over")
        fig.suptitle(
            plain(
                f"{metric('fness').label}: one point per run, density reflected at ±1"
                + (f"; {note}" if note else "")
            )
        )
    return fig
