"""The comparison: per cell and metric, the kernel's mean and spread over its healthy runs, the simulator's
with each host preset over its seeds, and the gaps (simulator minus kernel); per cell the targets met or
missed; over the grid the summary against the targets.

Targets (the issue's, plus utilization for the single-flow cells, which have no shares):

- ``share``: the largest |share gap| of the cell's classes below 0.08 per cell; over the grid (cells with two
  or more classes) its mean below 0.03 and its maximum below 0.08;
- ``jain``: |Jain's index gap| at most 0.05 (cells with two or more flows);
- ``sojourn``: sojourn p50 within 15 % of the kernel's, or within one full packet's serialization time at the
  link rate where 15 % is less (below that the emulator's and the simulator's clocks cannot be told apart);
- ``spread``: the simulator's standard deviation of the cell's headline metric (its first share, Jain's
  index with one class, utilization with one flow) within 2x of the kernel's (ratio in [0.5, 2]); both
  below 0.01 (noise of a few repetitions) counts as agreement; a kernel spread of exactly zero leaves it
  unjudged;
- ``utilization``: |utilization gap| at most 0.05.

Beside each cell's share gap stands its noise: the |gap| a model with the kernel's true means would show on
average, from the repetitions alone, sqrt(2/pi) x sqrt(sd_kernel^2 / n_kernel + sd_sim^2 / n_sim) for the
class of the largest gap (the mean of |N(0, s)| is s x sqrt(2/pi)). Its mean over the grid is the floor the
grid's mean |share gap| cannot be judged below with this many repetitions.

The spread target has its noise too: a standard deviation from three runs is itself uncertain by a factor of
about two, so even a model whose runs spread exactly as the kernel's would often miss a 2x band (with three
runs on each side, 40 % of the time). Beside each cell's spread ratio stands the chance that such a model (its
true spread the kernel's measured one, both sides normal) meets the target with the cell's repetition counts;
their sum over the grid is how many cells it would meet on average, the count the grid's spread verdicts are
to be read against. The grid's median spread ratio says whether the simulator's runs spread systematically
more or less than the kernel's, which single cells with three runs cannot.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ccfair.studies.validate.grid import Cell
from ccfair.studies.validate.metrics import JAIN, SOJOURN, UTILIZATION, metric_keys, share_key
from ccfair.units import parse_rate_bps

SHARE_CELL_MAX = 0.08
SHARE_GRID_MEAN = 0.03
JAIN_MAX = 0.05
SOJOURN_RELATIVE = 0.15
SPREAD_FACTOR = 2.0
SPREAD_FLOOR = 0.01
UTILIZATION_MAX = 0.05
FULL_PACKET_BITS = 1500 * 8
TARGETS = ("share", "jain", "sojourn", "spread", "utilization")


@dataclass(frozen=True)
class Stat:
    mean: float
    sd: float
    n: int

    @staticmethod
    def of(values: Sequence[float]) -> Stat:
        xs = [v for v in values if not math.isnan(v)]
        if not xs:
            return Stat(math.nan, math.nan, 0)
        return Stat(statistics.fmean(xs), statistics.stdev(xs) if len(xs) > 1 else math.nan, len(xs))

    def to_json(self) -> dict[str, Any]:
        return {"mean": json_number(self.mean), "sd": json_number(self.sd), "n": self.n}


def json_number(x: float | None) -> float | None:
    """A JSON number: None for NaN, for an infinite spread ratio (a kernel spread of zero) and for a run
    summary's null (a NaN as the store keeps it)."""
    return None if x is None or math.isnan(x) or math.isinf(x) else x


def headline_key(cell: Cell) -> str:
    if cell.headline == "utilization" or sum(int(g.get("count", 1)) for g in cell.flows) == 1:
        return UTILIZATION
    if len(cell.classes()) > 1 and cell.headline == "share":
        return share_key(cell.classes()[0])
    return JAIN


def spread_ratio(sim_sd: float, kernel_sd: float) -> float:
    """The simulator's spread over the kernel's: 1 when both are within the noise floor, infinite when
    only the kernel's is zero, NaN when either is unknown (fewer than two runs)."""
    if math.isnan(sim_sd) or math.isnan(kernel_sd):
        return math.nan
    if sim_sd < SPREAD_FLOOR and kernel_sd < SPREAD_FLOOR:
        return 1.0
    return sim_sd / kernel_sd if kernel_sd > 0 else math.inf


def spread_agreement_chance(kernel_sd: float, n_kernel: int, n_sim: int) -> float:
    """The chance that a model whose runs spread as the kernel's meets the spread target: both samples'
    variances are the true one times chi-square over its degrees of freedom, the true sd taken as the kernel's
    measured one. The target is met when the sd ratio lies within [1/F, F] (an F-distributed variance ratio)
    or when both sds are under the floor; the second part, beyond the first, is integrated numerically.
    NaN with fewer than two runs on a side; 1 with a kernel spread of zero (such a model repeats exactly too,
    under the floor)."""
    if n_kernel < 2 or n_sim < 2 or math.isnan(kernel_sd):
        return math.nan
    if kernel_sd <= 0:
        return 1.0
    from scipy import integrate, stats  # validation only: not on `ccfair run`'s import path

    dof_k, dof_s = n_kernel - 1, n_sim - 1
    band = SPREAD_FACTOR**2
    ratio = stats.f(dof_s, dof_k)
    in_band = float(ratio.cdf(band) - ratio.cdf(1 / band))
    # Variances relative to the true one: the kernel's x, the simulator's y; the floor is at t.
    kernel_var = stats.chi2(dof_k, scale=1 / dof_k)
    sim_var = stats.chi2(dof_s, scale=1 / dof_s)
    t = (SPREAD_FLOOR / kernel_sd) ** 2

    def floor_outside_band(x: float) -> float:
        below = sim_var.cdf(min(t, x / band))
        above = max(0.0, sim_var.cdf(t) - sim_var.cdf(band * x))
        return float(kernel_var.pdf(x)) * float(below + above)

    floor_only, _ = integrate.quad(floor_outside_band, 0, t, limit=200)
    return min(1.0, in_band + float(floor_only))


def gap_noise(kernel: Stat, sim: Stat) -> float:
    """The mean |gap| of two means that differ by repetition noise only (NaN when a spread is unknown)."""
    if kernel.n < 2 or sim.n < 1 or math.isnan(kernel.sd):
        return math.nan
    sim_var = 0.0 if sim.n < 2 or math.isnan(sim.sd) else sim.sd**2 / sim.n
    return math.sqrt(2 / math.pi) * math.sqrt(kernel.sd**2 / kernel.n + sim_var)


def sojourn_tolerance_ms(cell: Cell, kernel_ms: float) -> float:
    packet_ms = FULL_PACKET_BITS / parse_rate_bps(cell.rate, "link.rate") * 1e3
    return max(SOJOURN_RELATIVE * kernel_ms, packet_ms)


def side_gaps(
    cell: Cell, kernel: Mapping[str, Stat], sim: Mapping[str, Stat]
) -> tuple[dict[str, float], dict[str, bool | None]]:
    """The cell's gap per target (share: largest |gap| of a class; sojourn: relative; spread: ratio) and
    whether each target is met (None: not judged for this cell)."""
    keys = metric_keys(cell)
    shares = [k for k in keys if k.startswith("share ")]
    gaps: dict[str, float] = {}
    ok: dict[str, bool | None] = {}
    if shares:
        worst = max(shares, key=lambda k: abs(sim[k].mean - kernel[k].mean))
        gaps["share"] = abs(sim[worst].mean - kernel[worst].mean)
        ok["share"] = gaps["share"] < SHARE_CELL_MAX
        gaps["share_noise"] = gap_noise(kernel[worst], sim[worst])
    if JAIN in keys:
        gaps["jain"] = sim[JAIN].mean - kernel[JAIN].mean
        ok["jain"] = abs(gaps["jain"]) <= JAIN_MAX
    k_soj, s_soj = kernel[SOJOURN].mean, sim[SOJOURN].mean
    gaps["sojourn"] = (s_soj - k_soj) / k_soj if k_soj > 0 else math.nan
    ok["sojourn"] = abs(s_soj - k_soj) <= sojourn_tolerance_ms(cell, k_soj)
    head = headline_key(cell)
    ratio = spread_ratio(sim[head].sd, kernel[head].sd)
    gaps["spread"] = ratio
    ok["spread"] = None if math.isnan(ratio) else 1 / SPREAD_FACTOR <= ratio <= SPREAD_FACTOR
    gaps["spread_noise"] = spread_agreement_chance(kernel[head].sd, kernel[head].n, sim[head].n)
    gaps["utilization"] = sim[UTILIZATION].mean - kernel[UTILIZATION].mean
    ok["utilization"] = abs(gaps["utilization"]) <= UTILIZATION_MAX
    for t in list(ok):  # share_noise and spread_noise are not targets: they have no verdict
        if math.isnan(gaps[t]) and t != "sojourn":
            ok[t] = None
    return gaps, ok


def compare_cell(
    cell: Cell,
    kernel_runs: Sequence[Mapping[str, float]],
    sim_runs: Mapping[str, Sequence[Mapping[str, float]]],
) -> dict[str, Any]:
    """One cell's comparison: per metric the kernel's and each preset's mean ± sd and gap; per preset the
    targets' gaps and verdicts."""
    keys = metric_keys(cell)
    kernel = {k: Stat.of([r.get(k, math.nan) for r in kernel_runs]) for k in keys}
    metrics = []
    sides: dict[str, Any] = {}
    sim_stats = {
        p: {k: Stat.of([r.get(k, math.nan) for r in runs]) for k in keys} for p, runs in sim_runs.items()
    }
    for k in keys:
        row: dict[str, Any] = {"metric": k, "kernel": kernel[k].to_json()}
        for p, stats in sim_stats.items():
            row[p] = stats[k].to_json()
            row[f"gap_{p}"] = json_number(stats[k].mean - kernel[k].mean)
        metrics.append(row)
    for p, stats in sim_stats.items():
        gaps, ok = side_gaps(cell, kernel, stats)
        sides[p] = {"gaps": {t: json_number(v) for t, v in gaps.items()}, "ok": ok}
    return {
        "cell": cell.name,
        "what": cell.what,
        "headline": headline_key(cell),
        "kernel_runs": len(kernel_runs),
        "metrics": metrics,
        "presets": sides,
    }


def grid_summary(cells: Sequence[Mapping[str, Any]], preset: str) -> dict[str, Any]:
    """The grid's summary for ``preset`` against the targets."""
    share = [c["presets"][preset]["gaps"]["share"] for c in cells if "share" in c["presets"][preset]["gaps"]]
    share = [s for s in share if s is not None]
    out: dict[str, Any] = {
        "cells": len(cells),
        "share_gap_mean": statistics.fmean(share) if share else None,
        "share_gap_max": max(share) if share else None,
    }
    noise = [c["presets"][preset]["gaps"].get("share_noise") for c in cells]
    noise = [n for n in noise if n is not None]
    out["share_noise_mean"] = statistics.fmean(noise) if noise else None
    out["share_grid_ok"] = (
        None
        if not share
        else bool(out["share_gap_mean"] < SHARE_GRID_MEAN and out["share_gap_max"] < SHARE_CELL_MAX)
    )
    for target in TARGETS:
        verdicts = [c["presets"][preset]["ok"].get(target) for c in cells]
        judged = [v for v in verdicts if v is not None]
        out[f"{target}_met"] = sum(judged)
        out[f"{target}_judged"] = len(judged)
        out[f"{target}_missed"] = [c["cell"] for c, v in zip(cells, verdicts, strict=True) if v is False]
    jain = [
        abs(c["presets"][preset]["gaps"]["jain"])
        for c in cells
        if c["presets"][preset]["gaps"].get("jain") is not None
    ]
    out["jain_gap_max"] = max(jain) if jain else None
    soj = [
        abs(c["presets"][preset]["gaps"]["sojourn"])
        for c in cells
        if c["presets"][preset]["gaps"].get("sojourn") is not None
    ]
    out["sojourn_gap_max"] = max(soj) if soj else None
    spread = [
        c["presets"][preset]["gaps"]["spread"]
        for c in cells
        if c["presets"][preset]["gaps"].get("spread") is not None
    ]
    out["spread_ratio_min"] = min(spread) if spread else None
    out["spread_ratio_max"] = max(spread) if spread else None
    # A kernel spread of zero gives no ratio (None in JSON), which the median leaves out with the unjudged.
    out["spread_ratio_median"] = statistics.median(spread) if spread else None
    chances = [
        c["presets"][preset]["gaps"].get("spread_noise")
        for c in cells
        if c["presets"][preset]["ok"].get("spread") is not None
    ]
    known = [x for x in chances if x is not None]
    out["spread_noise_met"] = sum(known) if known else None
    return out
