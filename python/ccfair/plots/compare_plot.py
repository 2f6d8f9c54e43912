"""Two result sets side by side (``ccfair compare-results A B``): the cells of two plans aligned by their
coordinates (the values of the axes both plans vary), and per aligned cell a run metric of each side, its mean
with the interval of :mod:`ccfair.analysis.stats`. For example the same plan before and after a change of the
code, or of a parameter the plans do not vary.

:func:`compare_table` gives the aligned table (one row per cell: coordinates, ``n_a``, ``mean_a``,
``low_a``, ``high_a``, the same for ``b``, and ``difference`` = mean b - mean a); :func:`compare` draws it:
one row per cell, A and B as two markers with their bars.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from ccfair.analysis.stats import summarize
from ccfair.errors import InputError
from ccfair.plots.axes import value_text
from ccfair.plots.data import NOT_METRICS, Sweep, as_sweep, metric_column
from ccfair.plots.heatmap_plot import metric_bounds
from ccfair.plots.labels import metric as metric_label
from ccfair.plots.labels import plain
from ccfair.plots.panels import new_figure
from ccfair.plots.style import paper_style
from ccfair.sweep.paths import column_name

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from ccfair.store import Results

SIDE_COLORS = ("#0072B2", "#D55E00")
MAX_CELLS = 60


def _label(sweep: Sweep, given: str | None) -> str:
    if given:
        return given
    where = sweep.results.directory.name if sweep.results is not None else "runs"
    return f"{where} ({sweep.plan})" if sweep.plan else where


def compare_table(
    a: Sweep | Results | str | Path,
    b: Sweep | Results | str | Path,
    metric: str = "jain_index",
    plan_a: str | None = None,
    plan_b: str | None = None,
) -> pd.DataFrame:
    """The cells of ``a`` and ``b`` aligned by the axes both vary (see the module docstring). Cells only one
    side has are kept with the other side empty. An InputError when the two vary no axis in common
    but do vary some (nothing to align on)."""
    sa, sb = as_sweep(a, plan_a), as_sweep(b, plan_b)

    exclude = NOT_METRICS | {column_name(p) for p in (*sa.axes, *sb.axes)}
    name = metric_column(sa.runs, metric, "--metric", exclude=exclude)
    metric_column(sb.runs, metric, "--metric", exclude=exclude)
    va, vb = sa.varied(), sb.varied()
    common = [p for p in va if column_name(p) in {column_name(q) for q in vb}]
    if (va or vb) and not common:
        raise InputError(
            "B",
            f"the two result sets vary no axis in common (A: {', '.join(va) or 'none'}; B: "
            f"{', '.join(vb) or 'none'}); nothing to align their cells on",
        )
    # An axis only one side varies is pooled on that side; the figure's title says so.
    only = sorted({*va, *vb} - set(common))
    cols = [column_name(p) for p in common]
    order: list[tuple[object, ...]] = []
    for s in (sa, sb):
        axes = [s.axis(p) for p in common]
        for values in _product([list(ax.values) for ax in axes]):
            if values not in order:
                order.append(values)
    # The paths zipped with an aligned axis name its cells too (their values follow from it).
    partners = [q for p in common for q in sa.zipped(p)[1:] if column_name(q) in sa.runs.columns]
    rows = []
    for key in order:
        row: dict[str, object] = dict(zip(common, (value_text(v) for v in key), strict=True))
        for side, s in (("a", sa), ("b", sb)):
            done = s.done
            mask = np.ones(len(done), dtype=bool)
            for col, value in zip(cols, key, strict=True):
                mask &= (done[col] == value).to_numpy()
            part = done[mask]
            for q in partners:
                if q not in row and column_name(q) in part.columns and not part.empty:
                    row[q] = value_text(part[column_name(q)].iloc[0])
            summary = summarize(part[name].to_numpy(dtype=float), metric_bounds(name, part))
            row.update(
                {
                    f"n_{side}": summary.n,
                    f"mean_{side}": summary.mean,
                    f"low_{side}": summary.low,
                    f"high_{side}": summary.high,
                    f"text_{side}": summary.text(3),
                }
            )
        if row["n_a"] or row["n_b"]:
            rows.append(row)
    table = pd.DataFrame(rows)
    table["difference"] = table["mean_b"] - table["mean_a"]
    shown = [q for p in common for q in (p, *sa.zipped(p)[1:]) if q in table.columns]
    table.attrs.update(
        {"metric": name, "axes": shown, "pooled": only, "a": _label(sa, None), "b": _label(sb, None)}
    )
    return table


def _product(lists: list[list[object]]) -> list[tuple[object, ...]]:
    out: list[tuple[object, ...]] = [()]
    for values in lists:
        out = [(*o, v) for o in out for v in values]
    return out


def compare(
    a: Sweep | Results | str | Path,
    b: Sweep | Results | str | Path,
    metric: str = "jain_index",
    plan_a: str | None = None,
    plan_b: str | None = None,
    labels: tuple[str, str] | None = None,
) -> Figure:
    """One row per aligned cell, the metric of A and of B as two markers with their bars."""
    table = compare_table(a, b, metric, plan_a, plan_b)
    if len(table) > MAX_CELLS:
        raise InputError("--metric", f"{len(table)} aligned cells are too many to draw (at most {MAX_CELLS})")
    name = table.attrs["metric"]
    info = metric_label(name)
    names = labels or (table.attrs["a"], table.attrs["b"])
    axes = table.attrs["axes"]
    cells = [", ".join(f"{p} = {r[p]}" for p in axes) or "all runs" for r in table.to_dict("records")]
    with paper_style():
        fig = new_figure(6.4, 0.32 * len(table) + 1.6)
        ax = fig.subplots()
        y = np.arange(len(table))
        for k, (side, label) in enumerate(zip(("a", "b"), names, strict=True)):
            mean = table[f"mean_{side}"].to_numpy(dtype=float) * info.scale
            low = table[f"low_{side}"].to_numpy(dtype=float) * info.scale
            high = table[f"high_{side}"].to_numpy(dtype=float) * info.scale
            bars = ax.errorbar(
                mean,
                y + (k - 0.5) * 0.25,
                xerr=np.nan_to_num(np.vstack([mean - low, high - mean]), nan=0.0),
                color=SIDE_COLORS[k],
                marker="os"[k],
                linestyle="none",
                capsize=2,
                elinewidth=0.8,
                label=plain(f"{'AB'[k]}: {label}"),
            )
            bars.lines[0].set_gid(f"compare:{side}")  # the point, not its caps
        ax.set_yticks(y, [plain(c) for c in cells])
        ax.invert_yaxis()
        ax.set_xlabel(plain(info.label))
        ax.legend(loc="best", fontsize=7)
        pooled = table.attrs["pooled"]
        note = f"; pooled on one side: {', '.join(pooled)}" if pooled else ""
        fig.suptitle(plain(f"{info.label}: A against B per cell (mean; bars: 95 % CI or min-max){note}"))
    return fig
