"""The computations the studies' findings share over :class:`~ccfair.studies.reproduce.base.StudyData`'s
frames: a value per repetition, goodput per group, a ratio and a mean that undefined samples do not spoil."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd


def per_repetition(frame: pd.DataFrame, value: Callable[[pd.DataFrame], float]) -> list[float]:
    """``value`` of each repetition's rows, in repetition order (NaN where it is undefined)."""
    return [float(value(group)) for _, group in frame.groupby("repetition", sort=True)]


def group_goodput(flows: pd.DataFrame) -> pd.DataFrame:
    """Per run and group: total and mean per-flow goodput, the group's congestion control."""
    return flows.groupby(["run_id", "repetition", "group"], as_index=False).agg(
        goodput_bps=("goodput_bps", "sum"), per_flow_bps=("goodput_bps", "mean"), cc=("cc", "first")
    )


def ratio(numerator: float, denominator: float) -> float:
    return numerator / denominator if denominator > 0 else float("nan")


def finite_mean(values: Sequence[float]) -> float:
    x = np.asarray(values, dtype=float)
    x = x[np.isfinite(x)]
    return float(x.mean()) if x.size else float("nan")
