"""The one place where runs become the numbers tables, the report and figures show: a mean with an interval
that is honest for the number of runs behind it, and a kernel density that respects a bounded quantity.

- ``n`` = 1: the value alone.
- 2 <= ``n`` <= :data:`SMALL_N`: the runs themselves and their range (min to max). A Student-t interval from
  two runs multiplies the spread by 12.7 (Jain 0.923 ± 0.721, fness ± 2 on a [-1, 1] quantity), which says
  more about the formula than the data; figures draw the individual runs instead.
- ``n`` > :data:`SMALL_N`: the mean and its 95 % Student-t confidence interval (``scipy.stats.t`` for any
  degrees of freedom).
- Runs that all gave the same value (to rounding noise) are said to be identical instead of showing a
  ± 2e-16. Whether repetitions are identical outright (a deterministic scenario whose seeds change
  nothing) is decided on exact outcomes by :func:`identical`, the one test of it (sweeps, the report,
  ``compare``, the harm study's verdicts).

Bounded quantities (Jain's index in [1/n, 1], fness in [-1, 1], shares and utilization in [0, 1]) have
their intervals clipped to their bounds, and fness gets a density reflected at ±1 so no mass leaks outside.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ccfair.tables import MISSING

SMALL_N = 5  # up to this many runs, show the runs and their range instead of a t interval
CONFIDENCE = 0.95
IDENTICAL_RTOL = 1e-9  # runs within this relative spread count as identical (floating-point noise)

# What a summary's interval is: see the module docstring.
NONE, SINGLE, IDENTICAL, RANGE, CI = "none", "single", "identical", "range", "ci95"


def identical(outcomes: Sequence[Hashable]) -> bool:
    """Whether at least two repetitions' ``outcomes`` are all exactly equal (no tolerance): each outcome is
    an exact value, such as a run's per-flow delivered bytes as a tuple. Equal outcomes mean the repetitions
    are one run several times over, and an interval over them says nothing."""
    return len(outcomes) > 1 and len(set(outcomes)) == 1


def t_quantile(dof: int, confidence: float = CONFIDENCE) -> float:
    """The two-sided ``confidence`` quantile of Student's t with ``dof`` >= 1 degrees of freedom."""
    if dof < 1:
        raise ValueError(f"degrees of freedom must be at least 1, got {dof}")
    from scipy import stats  # SciPy only when an interval or a density is computed

    return float(stats.t.ppf(0.5 + confidence / 2, dof))


@dataclass(frozen=True)
class Summary:
    """The finite values of one group of runs: ``n``, ``mean``, ``minimum``, ``maximum``, ``ci95`` (the
    half width of the 95 % t interval, NaN for n < 2) and the interval to draw, ``low`` to ``high``: the
    clipped t interval when ``kind`` is ``ci95``, the range when ``range``, the mean otherwise."""

    n: int
    mean: float
    minimum: float
    maximum: float
    ci95: float
    low: float
    high: float
    kind: str

    @property
    def small(self) -> bool:
        """Whether the figures should draw the individual runs (2 to SMALL_N runs)."""
        return self.kind in (RANGE, IDENTICAL)

    @property
    def clipped(self) -> bool:
        return self.kind == CI and not (
            math.isclose(self.mean - self.low, self.ci95) and math.isclose(self.high - self.mean, self.ci95)
        )

    def text(self, digits: int = 3, scale: float = 1.0, fixed: bool = True) -> str:
        """For tables: ``0.923`` (one run), ``0.923 ±0 (2 identical runs)``, ``0.923 (4 runs: 0.901 to
        0.945)``, ``0.923 ± 0.012`` (n > SMALL_N) or ``0.995 (95 % CI 0.981 to 1.000)`` when the interval
        is clipped. ``fixed``: ``digits`` after the point, else significant digits."""

        def f(x: float) -> str:
            return f"{x * scale:.{digits}f}" if fixed else f"{x * scale:.{digits}g}"

        if self.kind == NONE:
            return MISSING
        if self.kind == SINGLE:
            return f(self.mean)
        if self.kind == IDENTICAL:
            return f"{f(self.mean)} ±0 ({self.n} identical runs)"
        if self.kind == RANGE:
            return f"{f(self.mean)} ({self.n} runs: {f(self.minimum)} to {f(self.maximum)})"
        if self.clipped:
            return f"{f(self.mean)} (95 % CI {f(self.low)} to {f(self.high)})"
        return f"{f(self.mean)} ± {f(self.ci95)}"

    def short_text(self, digits: int = 3, scale: float = 1.0) -> str:
        """Two lines for a heatmap cell: the mean, then ``±0.01``, ``0.90 to 0.95`` or ``±0`` (identical)."""
        head = f"{self.mean * scale:.{digits}g}"
        if self.kind == CI:
            if self.clipped:
                return f"{head}\n{self.low * scale:.2g} to {self.high * scale:.2g}"
            return f"{head}\n±{self.ci95 * scale:.1g}"
        if self.kind == RANGE:
            return f"{head}\n{self.minimum * scale:.2g} to {self.maximum * scale:.2g}"
        if self.kind == IDENTICAL:
            return f"{head}\n±0"
        return head if self.kind == SINGLE else ""


def summarize(values: Sequence[float] | np.ndarray, bounds: tuple[float, float] | None = None) -> Summary:
    """The :class:`Summary` of the finite values (NaN, infinities and None are skipped); ``bounds`` clip
    the t interval of a bounded quantity."""
    x = np.asarray(values, dtype=float)
    x = x[np.isfinite(x)]
    n = int(x.size)
    if n == 0:
        nan = math.nan
        return Summary(0, nan, nan, nan, nan, nan, nan, NONE)
    mean = float(x.mean())
    lo, hi = float(x.min()), float(x.max())
    if n == 1:
        return Summary(1, mean, lo, hi, math.nan, mean, mean, SINGLE)
    spread = hi - lo
    ci95 = t_quantile(n - 1) * float(x.std(ddof=1)) / math.sqrt(n)
    if spread <= IDENTICAL_RTOL * max(abs(hi), abs(lo), 1e-300):
        return Summary(n, mean, lo, hi, 0.0, mean, mean, IDENTICAL)
    if n <= SMALL_N:
        return Summary(n, mean, lo, hi, ci95, lo, hi, RANGE)
    low, high = mean - ci95, mean + ci95
    if bounds is not None:
        low, high = max(low, bounds[0]), min(high, bounds[1])
    return Summary(n, mean, lo, hi, ci95, low, high, CI)


def aggregate(
    frame: pd.DataFrame, by: Sequence[str], value: str, bounds: tuple[float, float] | None = None
) -> pd.DataFrame:
    """One row per group of ``by`` (in order of appearance) with the :class:`Summary` of ``value`` as
    columns ``n``, ``mean``, ``min``, ``max``, ``ci95``, ``low``, ``high``, ``kind``, and ``values`` (the
    group's finite values, for drawing the runs of small groups)."""
    columns = [*by, "n", "mean", "min", "max", "ci95", "low", "high", "kind", "values"]
    rows = []
    for key, group in frame.groupby(list(by), sort=False, dropna=False):
        keys = key if isinstance(key, tuple) else (key,)
        x = group[value].to_numpy(dtype=float)
        s = summarize(x, bounds)
        rows.append(
            [*keys, s.n, s.mean, s.minimum, s.maximum, s.ci95, s.low, s.high, s.kind, x[np.isfinite(x)]]
        )
    return pd.DataFrame(rows, columns=columns)


IDENTICAL_NOTE = "rings: identical runs (no spread)"


def interval_note(kinds: Sequence[str]) -> str:
    """What a figure's bars mean, from the kinds of its points: ``"95 % CI"``, ``"min-max of the runs"``
    or both, and :data:`IDENTICAL_NOTE` when some point's runs were identical."""
    present = set(kinds)
    ci = CI in present
    small = bool(present & {RANGE, IDENTICAL})
    if ci and small:
        bars = f"bars: 95 % CI, or min-max where ≤ {SMALL_N} runs (dots)"
    elif small:
        bars = "bars: min-max of the runs (dots)"
    elif ci:
        bars = "bars: 95 % CI"
    else:
        bars = "one run per point"
    return f"{bars}; {IDENTICAL_NOTE}" if IDENTICAL in present else bars


def _scott_bandwidth(x: np.ndarray) -> float:
    return float(x.std(ddof=1)) * math.pow(x.size, -1 / 5)


def gaussian_kde(values: Sequence[float] | np.ndarray, grid: np.ndarray) -> np.ndarray | None:
    """Density of ``values`` on ``grid`` with Gaussian kernels and Scott's bandwidth; None when it is
    undefined (fewer than two values, or all equal)."""
    x = np.asarray(values, dtype=float)
    x = x[np.isfinite(x)]
    if x.size < 2 or float(x.std(ddof=1)) == 0.0:
        return None
    from scipy import stats  # SciPy only when an interval or a density is computed

    kde = stats.gaussian_kde(x, bw_method=_scott_bandwidth(x) / float(x.std(ddof=1)))
    return np.asarray(kde(grid), dtype=float)


def bounded_kde(
    values: Sequence[float] | np.ndarray, grid: np.ndarray, low: float, high: float
) -> np.ndarray | None:
    """The Gaussian density of values that live in [``low``, ``high``], reflected at both bounds (the mass a
    kernel puts beyond a bound is folded back), so it integrates to 1 over the interval and does not dip
    at a bound where values pile up. Zero outside the interval; None as :func:`gaussian_kde`."""
    x = np.asarray(values, dtype=float)
    x = x[np.isfinite(x)]
    if x.size < 2 or float(x.std(ddof=1)) == 0.0:
        return None
    mirrored = np.concatenate([x, 2 * low - x, 2 * high - x])
    bandwidth = _scott_bandwidth(x)
    z = (grid[:, None] - mirrored[None, :]) / bandwidth
    density = np.exp(-0.5 * z**2).sum(axis=1) / (x.size * bandwidth * math.sqrt(2 * math.pi))
    return np.where((grid >= low) & (grid <= high), density, 0.0)
