"""Harm (Ware, Mukerjee, Seshan, Sherry: "Beyond Jain's fairness index: setting the bar for the deployment
of congestion control algorithms", HotNets 2019): is a newcomer's damage to an incumbent no worse than the
damage the incumbent does to itself?

Per scenario of a suite (:mod:`.suites`) and per metric of the incumbent group (group 0 in every run,
:mod:`.harm_plan`):

- ``x``: the metric with the incumbent alone (mean over the ``solo`` repetitions)
- ``self`` harm: :func:`~ccfair.analysis.fairness.harm` of ``x`` and the metric against another incumbent
- ``newcomer`` harm: the same against the newcomer

Metrics of the incumbent group over the measurement window: ``throughput`` (mean goodput per flow, more is
better), ``delay_p50`` (median over the time-series intervals of its flows' smoothed RTT minus their base
RTT: queueing delay), ``delay_p99`` (mean over its flows of the 99th percentile RTT sample minus the base
RTT), ``loss`` (drops / segments sent). Less is better for the last three.

Samples are paired: repetition r in one start order of the ``self`` plan against the same of the ``vs``
plan. The verdict of a metric looks at the paired differences d = newcomer harm - self harm, their mean and
95 % Student-t interval: **passes** if the interval's top is at most ``tolerance``, **fails** if its bottom
is above it, otherwise **cannot tell** (more repetitions may decide). A scenario passes if every metric
passes, fails if any fails. Metrics whose harm is undefined (no loss anywhere, say) are left out. Runs of a
deterministic simulator that differ in nothing give identical samples and an interval of width 0: the
result says when the samples of a scenario are all equal, so a zero width is not read as confidence.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ccfair.analysis.fairness import harm
from ccfair.analysis.stats import identical, summarize
from ccfair.store.reader import query
from ccfair.studies.harm_plan import ROLES
from ccfair.tables import Column, counted, render, text
from ccfair.units import parse_duration_ns

METRICS: tuple[tuple[str, bool], ...] = (
    ("throughput", True),
    ("delay_p50", False),
    ("delay_p99", False),
    ("loss", False),
)
DEFAULT_TOLERANCE = 0.05
PASS, FAIL, UNSURE, UNDEFINED = "passes", "fails", "cannot tell", "undefined"


@dataclass(frozen=True)
class MetricHarm:
    metric: str
    solo: float  # x, the incumbent alone
    self_harm: float  # mean
    self_ci95: float
    new_harm: float
    new_ci95: float
    diff: float  # mean of the paired differences new - self
    diff_ci95: float
    samples: int
    identical: bool  # every paired difference equal: the CI's width says nothing
    verdict: str


@dataclass(frozen=True)
class ScenarioHarm:
    scenario: int
    coordinates: dict[str, Any]
    metrics: dict[str, MetricHarm]
    verdict: str
    missing_runs: int = 0


@dataclass
class HarmResult:
    scenarios: list[ScenarioHarm] = field(default_factory=list)
    tolerance: float = DEFAULT_TOLERANCE

    def verdict(self) -> str:
        verdicts = {s.verdict for s in self.scenarios}
        if FAIL in verdicts:
            return FAIL
        if verdicts == {PASS}:
            return PASS
        return UNSURE

    def counts(self) -> dict[str, int]:
        out = {PASS: 0, FAIL: 0, UNSURE: 0}
        for s in self.scenarios:
            out[s.verdict] = out.get(s.verdict, 0) + 1
        return out


def metric_verdict(diffs: Sequence[float], tolerance: float) -> tuple[float, float, str]:
    """Mean, 95 % half width and verdict of the paired differences (NaN ones skipped)."""
    stats = summarize(diffs)
    if stats.n == 0:
        return math.nan, math.nan, UNDEFINED
    half = stats.ci95 if stats.n > 1 else math.inf
    if stats.n > 1 and float(np.ptp(np.asarray([d for d in diffs if math.isfinite(d)]))) == 0.0:
        half = 0.0
    if stats.mean + half <= tolerance:
        return stats.mean, half, PASS
    if stats.mean - half > tolerance:
        return stats.mean, half, FAIL
    return stats.mean, half, UNSURE


def _quote(names: Sequence[str]) -> str:
    return ", ".join("'" + n.replace("'", "''") + "'" for n in names)


def incumbent_metrics(root: str | Path, plans: Sequence[str], measure_start_ns: int) -> pd.DataFrame:
    """One row per done run of ``plans`` (by plan, cell, flipped): the incumbent group's metrics."""
    names = _quote(plans)
    frame = query(
        root,
        f"""SELECT c.plan, c.cell, c.flipped, c.run_id,
              avg(f.goodput_bps) AS throughput,
              avg(f.rtt_p99_ns - f.rtt_ns) / 1e6 AS delay_p99,
              sum(f.window_queue_drops + f.window_path_drops) / nullif(sum(f.window_sent_segments), 0) AS loss
           FROM cells c JOIN runs r ON r.run_id = c.run_id AND r.status = 'done'
           JOIN flows f ON f.run_id = c.run_id AND f."group" = 0
           WHERE c.plan IN ({names})
           GROUP BY ALL""",
    )
    if frame.empty:
        frame["delay_p50"] = pd.Series(dtype=float)
        return frame
    p50 = query(
        root,
        f"""SELECT t.run_id, median(t.srtt_ns - f.rtt_ns) / 1e6 AS delay_p50
           FROM timeseries t JOIN flows f ON f.run_id = t.run_id AND f.flow_id = t.flow_id AND f."group" = 0
           WHERE t.run_id IN (SELECT run_id FROM cells WHERE plan IN ({names}))
             AND t.t_ns > {int(measure_start_ns)} AND t.srtt_ns > 0
           GROUP BY 1""",
    )
    return frame.merge(p50, on="run_id", how="left")


def analyse(
    root: str | Path,
    plan_names: dict[str, str],
    scenarios: Sequence[dict[str, Any]],
    repetitions: int,
    measure_start: str,
    tolerance: float = DEFAULT_TOLERANCE,
) -> HarmResult:
    """Harm per scenario from the store. ``plan_names`` by role (solo, self, vs); scenario k's runs are the
    cells k x repetitions ... (k + 1) x repetitions - 1 of each plan."""
    frame = incumbent_metrics(
        root, [plan_names[r] for r in ROLES], parse_duration_ns(measure_start, "measure")
    )
    role_of = {name: role for role, name in plan_names.items()}
    frame["role"] = frame["plan"].map(role_of)
    return harm_from_frame(frame, scenarios, repetitions, tolerance)


def harm_from_frame(
    frame: pd.DataFrame,
    scenarios: Sequence[dict[str, Any]],
    repetitions: int,
    tolerance: float = DEFAULT_TOLERANCE,
) -> HarmResult:
    """Harm per scenario from the incumbent's metrics per run: columns ``role`` (solo, self, vs), ``cell``,
    ``flipped`` and one per metric of :data:`METRICS`."""
    frame = frame.copy()
    frame["scenario"] = frame["cell"] // repetitions
    frame["rep"] = frame["cell"] % repetitions
    result = HarmResult(tolerance=tolerance)
    expected = repetitions * 5  # solo + 2 orders x (self, vs)
    for k, coordinates in enumerate(scenarios):
        rows = frame[frame["scenario"] == k]
        solo = rows[rows["role"] == "solo"]
        paired = rows[rows["role"] == "self"].merge(
            rows[rows["role"] == "vs"], on=["rep", "flipped"], suffixes=("_self", "_vs")
        )
        metrics: dict[str, MetricHarm] = {}
        for metric, more_is_better in METRICS:
            x = float(solo[metric].mean()) if not solo.empty else math.nan
            self_h = [_harm(x, y, more_is_better) for y in paired[f"{metric}_self"]]
            new_h = [_harm(x, y, more_is_better) for y in paired[f"{metric}_vs"]]
            diffs = [n - s for n, s in zip(new_h, self_h, strict=True)]
            d, d_ci, verdict = metric_verdict(diffs, tolerance)
            finite = [v for v in diffs if math.isfinite(v)]
            s_ci, n_ci = summarize(self_h), summarize(new_h)
            metrics[metric] = MetricHarm(
                metric=metric,
                solo=x,
                self_harm=s_ci.mean,
                self_ci95=s_ci.ci95,
                new_harm=n_ci.mean,
                new_ci95=n_ci.ci95,
                diff=d,
                diff_ci95=d_ci,
                samples=len(finite),
                identical=identical(finite),
                verdict=verdict,
            )
        verdicts = {m.verdict for m in metrics.values()} - {UNDEFINED}
        overall = FAIL if FAIL in verdicts else PASS if verdicts == {PASS} else UNSURE
        result.scenarios.append(
            ScenarioHarm(k, dict(coordinates), metrics, overall, missing_runs=max(0, expected - len(rows)))
        )
    return result


def _harm(x: float, y: float, more_is_better: bool) -> float:
    if not (math.isfinite(x) and math.isfinite(y)) or x < 0 or y < 0:
        return math.nan
    return harm(x, y, more_is_better)


def to_json(result: HarmResult) -> dict[str, Any]:
    def clean(v: Any) -> Any:
        return None if isinstance(v, float) and not math.isfinite(v) else v

    return {
        "verdict": result.verdict(),
        "tolerance": result.tolerance,
        "counts": result.counts(),
        "scenarios": [
            {
                "scenario": s.scenario,
                "coordinates": s.coordinates,
                "verdict": s.verdict,
                "missing_runs": s.missing_runs,
                "metrics": {
                    name: {k: clean(v) for k, v in vars(m).items() if k != "metric"}
                    for name, m in s.metrics.items()
                },
            }
            for s in result.scenarios
        ],
    }


# ------------------------------------------------------------------------------------------- the text


def _pm(mean: float, half: float) -> str:
    if not math.isfinite(mean):
        return "-"
    return f"{mean:.3f}" + (f" ± {half:.3f}" if math.isfinite(half) else "")


SCENARIO_HEADER = "scenario (aqm buffer rtt flows/side)"


def scenario_label(coordinates: dict[str, Any]) -> str:
    """``fifo 1bdp 20ms x1``: a scenario as the table and the figure name it (:data:`SCENARIO_HEADER`)."""
    c = coordinates
    return f"{c['aqm']} {c['buffer']} {c['rtt']} x{c['flows']}"


def harm_text(result: HarmResult, title: str, repetitions: int) -> str:
    """The verdict table and the overall verdict, with notes on identical repetitions and missing runs."""
    rows = []
    identical = 0
    for s in result.scenarios:
        row: dict[str, Any] = {"scenario": scenario_label(s.coordinates), "verdict": s.verdict}
        for metric, _ in METRICS:
            m = s.metrics[metric]
            row[metric] = (
                "-"
                if m.verdict == UNDEFINED
                else f"{_pm(m.new_harm, m.new_ci95)} vs {_pm(m.self_harm, m.self_ci95)}"
            )
        identical += any(m.identical for m in s.metrics.values())
        rows.append(row)
    columns = [
        Column(SCENARIO_HEADER, "scenario", text, "left"),
        *(Column(f"{metric} harm: new vs self", metric, text, "left") for metric, _ in METRICS),
        Column("verdict", "verdict", text, "left"),
    ]
    counts = result.counts()
    lines = [
        title,
        "",
        render(rows, columns, indent=""),
        "",
        f"overall: {result.verdict()} ({counted(counts['passes'], 'scenario')} "
        f"{'passes' if counts['passes'] == 1 else 'pass'}, {counts['fails']} fail, "
        f"{counts['cannot tell']} cannot tell; tolerance {result.tolerance:g}, "
        f"{repetitions} start jitters x 2 start orders per scenario; ± is a 95 % interval)",
    ]
    if identical:
        lines.append(
            f"note: in {counted(identical, 'scenario')} a metric's paired difference was the same in every "
            "repetition: "
            "the simulator is deterministic and only the start jitter and order vary, so a 0-wide interval "
            "there means the repetitions did not differ, not that the estimate is certain"
        )
    missing = sum(s.missing_runs for s in result.scenarios)
    if missing:
        lines.append(
            f"note: {counted(missing, 'run')} {'is' if missing == 1 else 'are'} missing or failed (ccfair "
            "status); their scenarios use fewer samples"
        )
    return "\n".join(lines) + "\n"
