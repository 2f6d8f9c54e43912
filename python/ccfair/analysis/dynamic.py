"""Metrics of dynamic traffic: fairness among the flows active at each moment, and flow completion times.

With flows joining and leaving (``arrivals``, finite ``size``, ``start``/``stop``), a share of the whole
window mixes flows that never met; fairness is judged per time-series interval (bin) instead, among the
flows active in it.

- A flow is *active* from its start until it completes (``start_ns + completion_ns``) or stops
  (``stop_ns``), whichever is first; it is active in a bin (``(t_ns - interval, t_ns]``) when that span
  overlaps it. A flow that never started (its start at or after its stop or the run's end) is never active.
- Per bin and active flow: its bytes delivered in the bin, and its ``share`` of the bytes the bin's active
  flows received (NaN when they received nothing).
- Per bin: ``active_flows``, and ``jain_index`` (Jain's index of the active flows' delivered bytes; NaN for
  a bin where none received anything).
- Summary (plain JSON types, None where undefined): ``active_jain_mean``, the mean Jain's index over the
  bins with at least two active flows (``competing_bins`` of them); ``flows_completed``,
  ``flows_not_started``; per group, the completion times of its finite flows (``fct_mean_ns``,
  ``fct_p50_ns``, ``fct_p99_ns``) and their normalized completion times (``nfct_*``): completion time over
  the ideal time, the time a flow that had the link to itself with no window limit would take, its wire
  bytes (payload plus 52 header bytes per segment) at the link rate plus one one-way delay (half its base
  RTT), since completion is the delivery of the last byte, not its acknowledgement.

A bin's delivered bytes come from the time series, whose rows are the flows the backend sampled; a flow
without a row in a bin delivered nothing in it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ccfair.analysis.fairness import jain_index
from ccfair.scenario import HEADER_BYTES, Scenario

if TYPE_CHECKING:
    import pandas as pd

COMPETING_FLOWS = 2
"""Bins with at least this many active flows are the ones whose fairness the summary averages."""


def has_dynamic_traffic(scenario: Scenario) -> bool:
    """Whether any group of ``scenario`` has finite flows or arrivals."""
    return any(g.size is not None or g.arrivals is not None for g in scenario.flows)


def _col(table: Any, name: str, dtype: str | None = None) -> np.ndarray:
    return np.asarray(table[name], dtype=dtype)


def active_until_ns(flows: Any) -> np.ndarray:
    """Per flow, when it stops being active: its completion, or its stop, whichever is first (float ns)."""
    start = _col(flows, "start_ns", "float64")
    stop = _col(flows, "stop_ns", "float64")
    done = start + _col(flows, "completion_ns", "float64")
    return np.where(np.isnan(done), stop, np.fmin(done, stop))


@dataclass(frozen=True)
class ActiveShares:
    """Per bin: ``t_ns``, ``active_flows``, ``jain_index``; per bin and active flow (``shares``): ``t_ns``,
    ``flow_id``, ``group``, ``delivered_bytes``, ``share``. NumPy columns."""

    bins: dict[str, np.ndarray]
    shares: dict[str, np.ndarray]

    def bins_frame(self) -> pd.DataFrame:
        # pandas only when a frame is asked for: `ccfair run --json` must not load it.
        import pandas as pd

        return pd.DataFrame(self.bins)

    def shares_frame(self) -> pd.DataFrame:
        # pandas only when a frame is asked for: `ccfair run --json` must not load it.
        import pandas as pd

        return pd.DataFrame(self.shares)


def active_shares(flows: Any, timeseries: Any, interval_ns: int, duration_ns: int) -> ActiveShares:
    """Each bin's active flows, their shares of its delivered bytes, and Jain's index over them (see the
    module docstring); ``flows`` and ``timeseries`` as columns or DataFrames (the run's tables)."""
    flow_id = _col(flows, "flow_id", "int64")
    order = np.argsort(flow_id, kind="stable")
    start = _col(flows, "start_ns", "float64")[order]
    until = active_until_ns(flows)[order]
    group = _col(flows, "group", "int64")[order]
    n_flows = len(flow_id)
    n_bins = duration_ns // interval_ns
    delivered = np.zeros((n_bins, n_flows))
    t = _col(timeseries, "t_ns", "int64")
    rows = t // interval_ns - 1
    keep = (rows >= 0) & (rows < n_bins)
    np.add.at(
        delivered,
        (rows[keep], _col(timeseries, "flow_id", "int64")[keep]),
        _col(timeseries, "delivered_bytes", "float64")[keep],
    )
    bin_end = (np.arange(n_bins, dtype="float64") + 1) * interval_ns
    bin_start = bin_end - interval_ns
    active = (
        (start[None, :] < bin_end[:, None]) & (until[None, :] > bin_start[:, None]) & (start < until)[None, :]
    )
    counts = active.sum(axis=1)
    totals = np.where(active, delivered, 0.0).sum(axis=1)
    jain = np.array([jain_index(delivered[b, active[b]]) if counts[b] else math.nan for b in range(n_bins)])
    b_idx, f_idx = np.nonzero(active)
    with np.errstate(divide="ignore", invalid="ignore"):
        share = np.where(totals[b_idx] > 0, delivered[b_idx, f_idx] / totals[b_idx], np.nan)
    return ActiveShares(
        bins={"t_ns": bin_end.astype("uint64"), "active_flows": counts.astype("int64"), "jain_index": jain},
        shares={
            "t_ns": bin_end[b_idx].astype("uint64"),
            "flow_id": f_idx.astype("int64"),
            "group": group[f_idx],
            "delivered_bytes": delivered[b_idx, f_idx].astype("uint64"),
            "share": share,
        },
    )


def ideal_completion_ns(size_bytes: np.ndarray, rtt_ns: np.ndarray, scenario: Scenario) -> np.ndarray:
    """The completion time of a flow alone on the link with no window limit: its wire bytes at the link
    rate plus half its base RTT (float ns; NaN for bulk flows, size 0)."""
    mss = scenario.mss_bytes()
    size = size_bytes.astype("float64")
    segments = np.ceil(size / mss)
    wire_bits = (size + segments * HEADER_BYTES) * 8.0
    ideal = wire_bits * 1e9 / scenario.link.rate_bps + rtt_ns.astype("float64") / 2.0
    return np.where(size > 0, ideal, np.nan)


def _stats(prefix: str, unit: str, values: np.ndarray) -> dict[str, float | None]:
    """Mean, median and 99th percentile of ``values`` as ``{prefix}_mean{unit}``, ...; None if empty."""
    if not len(values):
        return {f"{prefix}_{k}{unit}": None for k in ("mean", "p50", "p99")}
    stats = (("mean", np.mean(values)), ("p50", np.median(values)), ("p99", np.percentile(values, 99)))
    return {f"{prefix}_{k}{unit}": float(v) for k, v in stats}


def dynamic_summary(flows: Any, timeseries: Any, scenario: Scenario) -> dict[str, Any]:
    """The summary of dynamic traffic (see the module docstring)."""
    shares = active_shares(flows, timeseries, scenario.interval_ns, scenario.duration_ns)
    competing = shares.bins["active_flows"] >= COMPETING_FLOWS
    jains = shares.bins["jain_index"][competing]
    jains = jains[~np.isnan(jains)]
    start = _col(flows, "start_ns", "float64")
    completion = _col(flows, "completion_ns", "float64")
    size = _col(flows, "size_bytes", "uint64")
    group = _col(flows, "group", "int64")
    ideal = ideal_completion_ns(size, _col(flows, "rtt_ns"), scenario)
    not_started = start >= np.fmin(_col(flows, "stop_ns", "float64"), float(scenario.duration_ns))
    groups = []
    for gi, g in enumerate(scenario.flows):
        mine = (group == gi) & (size > 0)
        done = mine & ~np.isnan(completion)
        row: dict[str, Any] = {
            "group": gi,
            "label": g.label,
            "finite_flows": int(mine.sum()),
            "completed": int(done.sum()),
        }
        row.update(_stats("fct", "_ns", completion[done]))
        row.update(_stats("nfct", "", completion[done] / ideal[done]))
        groups.append(row)
    return {
        "active_jain_mean": float(jains.mean()) if len(jains) else None,
        "competing_bins": int(competing.sum()),
        "flows_completed": int((~np.isnan(completion)).sum()),
        "flows_not_started": int(not_started.sum()),
        "groups": groups,
    }
