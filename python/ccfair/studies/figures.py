"""The figures of ``ccfair harm`` and ``ccfair advise``.

- harm: per metric, the newcomer's harm to the incumbent (y) against the incumbent's harm to itself (x), one
  point per scenario with its 95 % intervals, numbered as the key under the panels names the scenarios; the
  diagonal is the bar (below it: passes)
- advise: the Pareto front of fairness (Jain's index) against queueing delay (p99), every configuration
  searched in grey, the front coloured by utilization, the recommendation circled
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from ccfair.plots.labels import plain
from ccfair.plots.panels import new_figure
from ccfair.plots.style import paper_style
from ccfair.studies.harm import scenario_label

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from ccfair.studies.advise import AdviceResult
    from ccfair.studies.harm import HarmResult

VERDICT_COLORS = {"passes": "#2a9d8f", "fails": "#e63946", "cannot tell": "#f4a261"}
METRIC_TITLES = {
    "throughput": "throughput",
    "delay_p50": "queueing delay p50",
    "delay_p99": "queueing delay p99",
    "loss": "loss rate",
}


def _finite(x: float) -> float:
    return x if math.isfinite(x) else 0.0


KEY_COLUMNS = 4
KEY_LINE_IN = 0.15  # height of a line of the scenario key, inches


def scenario_key(result: HarmResult) -> list[str]:
    """``1: fifo 1bdp 20ms x1 (passes)``: what each number beside a point of the harm figure stands for."""
    return [f"{s.scenario + 1}: {scenario_label(s.coordinates)} ({s.verdict})" for s in result.scenarios]


def harm_figure(result: HarmResult, title: str) -> Figure:
    """Per metric, newcomer harm against self harm, one point per scenario numbered as the key below the
    panels names it (:func:`scenario_key`)."""
    key = scenario_key(result)
    key_rows = -(-len(key) // KEY_COLUMNS) if key else 0
    key_in = KEY_LINE_IN * (key_rows + 1)
    height_in = 8.0 + key_in
    with paper_style():
        fig = new_figure(9.0, height_in, layout=None)
        axes = fig.subplots(2, 2).ravel()
        for ax, (metric, label) in zip(axes, METRIC_TITLES.items(), strict=True):
            lo, hi = 0.0, 1.0
            for s in result.scenarios:
                m = s.metrics[metric]
                if not (math.isfinite(m.self_harm) and math.isfinite(m.new_harm)):
                    continue
                ax.errorbar(
                    m.self_harm,
                    m.new_harm,
                    xerr=_finite(m.self_ci95),
                    yerr=_finite(m.new_ci95),
                    fmt="o",
                    color=VERDICT_COLORS.get(m.verdict, "#888888"),
                    markersize=5,
                    capsize=2,
                    gid=f"harm:{metric}:{s.scenario + 1}",
                )
                ax.annotate(
                    str(s.scenario + 1),
                    (m.self_harm, m.new_harm),
                    xytext=(4, 3),
                    textcoords="offset points",
                    fontsize=7,
                    gid=f"scenario:{metric}:{s.scenario + 1}",
                )
                lo = min(lo, m.self_harm, m.new_harm)
                hi = max(hi, m.self_harm, m.new_harm)
            span = np.array([lo, hi])
            ax.plot(span, span, color="black", linewidth=1, label="the bar: newcomer = incumbent")
            ax.fill_between(span, span + result.tolerance, span, color="#cccccc", alpha=0.5, linewidth=0)
            ax.set_title(plain(label))
            ax.set_xlabel("harm of the incumbent to itself")
            ax.set_ylabel("harm of the newcomer to the incumbent")
        handles = [axes[0].plot([], [], "o", color=c, label=plain(v))[0] for v, c in VERDICT_COLORS.items()]
        bottom = key_in / height_in
        fig.legend(handles=handles, loc="lower center", bbox_to_anchor=(0.5, bottom), ncol=3, frameon=False)
        columns = [key[i * key_rows : (i + 1) * key_rows] for i in range(KEY_COLUMNS)] if key else []
        for i, lines in enumerate(columns):
            if lines:
                fig.text(
                    0.02 + i * 0.96 / KEY_COLUMNS,
                    bottom - 0.5 * KEY_LINE_IN / height_in,
                    plain("\n".join(lines)),
                    va="top",
                    fontsize=7,
                    gid=f"scenario-key:{i}",
                )
        fig.suptitle(plain(title))
        fig.tight_layout(rect=(0, bottom + 0.04 * 8.0 / height_in, 1, 1 - 0.03 * 8.0 / height_in))
    return fig


MIN_UTILIZATION_SPAN = 0.1
"""The front's colour scale ends at full utilization and spans at least this much: fully used links differ
in the fifth decimal, which a scale over the data's own range would stretch into every colour."""


def front_figure(result: AdviceResult, title: str) -> Figure:
    with paper_style():
        fig = new_figure(7.5, 5.0, layout=None)
        ax = fig.subplots()
        rows = result.configs
        ax.scatter(
            [c.delay_p99_ms for c in rows], [c.jain for c in rows], color="#bbbbbb", s=18, label="searched"
        )
        front = sorted(result.front, key=lambda c: c.delay_p99_ms)
        utilization = [c.utilization for c in front]
        points = ax.scatter(
            [c.delay_p99_ms for c in front],
            [c.jain for c in front],
            c=utilization,
            cmap="viridis",
            vmin=min([*utilization, 1.0 - MIN_UTILIZATION_SPAN]),
            vmax=1.0,
            s=40,
            zorder=3,
            label="Pareto front",
        )
        ax.plot([c.delay_p99_ms for c in front], [c.jain for c in front], color="#555555", linewidth=0.8)
        for c in front:
            ax.annotate(
                plain(c.name), (c.delay_p99_ms, c.jain), fontsize=7, xytext=(4, 3), textcoords="offset points"
            )
        fig.colorbar(points, ax=ax, label="utilization (worst RTT)")
        if result.recommended is not None:
            r = result.recommended
            ax.scatter(
                [r.delay_p99_ms],
                [r.jain],
                s=180,
                facecolors="none",
                edgecolors="#e63946",
                linewidths=2,
                label="recommended",
                zorder=4,
            )
        if result.min_jain is not None:
            ax.axhline(result.min_jain, color="#e63946", linestyle="--", linewidth=1, label="--min-jain")
        if result.max_delay_ms is not None:
            ax.axvline(result.max_delay_ms, color="#e63946", linestyle=":", linewidth=1, label="--max-delay")
        ax.set_xlabel("queueing delay p99, worst RTT (ms)")
        ax.set_ylabel("Jain's index, worst RTT")
        ax.legend(loc="lower right", fontsize=8)
        ax.set_title(plain(title))
        fig.tight_layout()
    return fig
