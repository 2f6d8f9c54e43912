"""Statistics the figures draw: mean with a 95 % confidence interval over repetitions, and a Gaussian kernel
density estimate. NumPy only."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

# Two-sided 97.5 % quantiles of Student's t for 1..30 degrees of freedom; the normal quantile beyond.
_T975 = (
    *(12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228),
    *(2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086),
    *(2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042),
)
_Z975 = 1.960


def t_quantile_975(dof: int) -> float:
    """The 97.5 % quantile of Student's t with ``dof`` degrees of freedom (>= 1)."""
    if dof < 1:
        raise ValueError(f"degrees of freedom must be at least 1, got {dof}")
    return _T975[dof - 1] if dof <= len(_T975) else _Z975


@dataclass(frozen=True)
class MeanCI:
    """Mean of ``n`` finite values and the half width of its 95 % confidence interval (NaN for n < 2)."""

    mean: float
    ci95: float
    n: int


def mean_ci(values: Sequence[float] | np.ndarray) -> MeanCI:
    """Mean and Student-t 95 % confidence half width of the finite values (NaN and None are skipped)."""
    x = np.asarray(values, dtype=float)
    x = x[np.isfinite(x)]
    n = int(x.size)
    if n == 0:
        return MeanCI(math.nan, math.nan, 0)
    mean = float(x.mean())
    if n < 2:
        return MeanCI(mean, math.nan, 1)
    sem = float(x.std(ddof=1)) / math.sqrt(n)
    return MeanCI(mean, t_quantile_975(n - 1) * sem, n)


def gaussian_kde(values: Sequence[float] | np.ndarray, grid: np.ndarray) -> np.ndarray | None:
    """Density of ``values`` on ``grid`` with Gaussian kernels and Scott's bandwidth (n^-1/5 x std); None
    when it is undefined (fewer than two values, or all equal)."""
    x = np.asarray(values, dtype=float)
    x = x[np.isfinite(x)]
    if x.size < 2:
        return None
    std = float(x.std(ddof=1))
    if std == 0.0:
        return None
    bandwidth = std * x.size ** (-1 / 5)
    z = (grid[:, None] - x[None, :]) / bandwidth
    density: np.ndarray = np.exp(-0.5 * z**2).sum(axis=1) / (x.size * bandwidth * math.sqrt(2 * math.pi))
    return density


def aggregate(frame: pd.DataFrame, by: Sequence[str], value: str) -> pd.DataFrame:
    """One row per group of ``by`` with the ``mean``, ``ci95`` (95 % half width) and ``n`` of ``value``."""
    rows = []
    for key, group in frame.groupby(list(by), sort=False, dropna=False):
        keys = key if isinstance(key, tuple) else (key,)
        m = mean_ci(group[value].to_numpy(dtype=float))
        rows.append({**dict(zip(by, keys, strict=True)), "mean": m.mean, "ci95": m.ci95, "n": m.n})
    return pd.DataFrame(rows, columns=[*by, "mean", "ci95", "n"])
