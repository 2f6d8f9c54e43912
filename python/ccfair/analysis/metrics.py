"""Tables and the summary of one run, from the native output and the scenario.

The measurement window is [measure_start, measure_end]. A flow is *active* if its [start, stop) overlaps
the window; shares, classes and fairness consider active flows only.

Per flow (``flows`` table):

- ``goodput_bps``: window delivered bytes (in-order payload) x 8 / window length in seconds
- ``share``: goodput / total goodput of the active flows (NaN for inactive flows)
- ``retransmissions``: retransmitted segments in the window
- ``drops``: the flow's packets dropped in the window, at the bottleneck queue plus on its own path
- ``rtt_mean_ms``, ``rtt_p99_ms``: mean and 99th percentile of the RTT samples taken in the window
  (NaN without samples)
- ``ce_marks``: the flow's packets CE-marked at the bottleneck in the window; ``marking_ratio``: ce_marks /
  segments the flow sent in the window (NaN if it sent none)

Per class (``classes`` table), a class being the active flows with the same (cc, rtt_ns):

- ``flows``: number of flows
- ``goodput_bps``: mean goodput per flow of the class
- ``relative_goodput``: class mean / (link rate / number of active flows); see
  :func:`~ccfair.analysis.fairness.relative_goodput`
- ``share``: class total goodput / total goodput of the active flows
- ``jain_index``: Jain's index over the class's flows
- ``ce_marks``, ``marking_ratio``: the class's CE marks and marks / segments sent in the window

Summary (plain JSON types; None where a value is undefined):

- ``jain_index``: over the active flows' goodput
- ``utilization``: wire bytes the bottleneck sent in the window x 8 / (link rate x window seconds), at most 1
- ``total_goodput_bps``: sum of the active flows' goodput
- ``queue_sojourn_p50_ns``, ``queue_sojourn_p99_ns``: bottleneck queue sojourn times of the packets that left
  it in the window
- ``drops``: packets dropped in the window (queue plus path), ``retransmissions``: segments retransmitted
  in the window
- ``marks``: packets CE-marked in the window, ``marking_ratio``: marks / segments sent in the window (drops
  and marks side by side are how an AQM signals: by loss or by ECN)
- ``queue_sojourn_l4s_p99_ns``, ``queue_sojourn_classic_p99_ns``: the 99th percentile sojourn of L4S flows'
  packets (ECN mode "l4s", ECT(1)) and of the other flows' (None if there are none): the two queues' delays
  under a DualQ AQM such as DualPI2
- ``fness``: only when the run has exactly two flows: :func:`~ccfair.analysis.fairness.fness` of flow 0
  against flow 1 on window delivered bytes (0 fair, -1 flow 0 takes everything, +1 flow 1 does)
- ``window_backlog_bytes``: payload that had crossed the bottleneck but not reached the application when
  the window opened (held out of order by the receivers, or on its way to them; None where the backend does
  not measure it). In-order delivery can release it at any moment, so the window's total goodput is bounded
  by the link's payload rate plus this backlog over the window: window delivered bytes <= (wire bytes the
  link sent in the window / MTU) x MSS + window_backlog_bytes, exactly
- ``window_short``: the window is too short for a stable goodput: shorter than 10 RTTs of the slowest active
  flow (its base RTT, or its mean measured RTT if larger), or ``window_backlog_bytes`` is more than 2 % of
  the payload the link carries over the window (then total goodput may exceed the link's payload rate by
  as much)
- ``events``: simulator events processed, ``wall_seconds``: wall-clock time of the simulation
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from ccfair.analysis.fairness import fness, jain_index, relative_goodput
from ccfair.scenario import Scenario

if TYPE_CHECKING:
    import pandas as pd

# The metrics are computed on NumPy columns; pandas (heavy: about a quarter second to import) only wraps
# them into DataFrames, imported where a frame is made, so that `ccfair run --json` starts fast.

Columns = dict[str, Any]
"""A table as columns: name -> NumPy array, or a list of str for a text column."""

FLOW_COLUMNS = (
    "flow_id",
    "group",
    "label",
    "cc",
    "rtt_ns",
    "start_ns",
    "stop_ns",
    "active",
    "goodput_bps",
    "share",
    "retransmissions",
    "drops",
    "rtt_mean_ms",
    "rtt_p99_ms",
    "ce_marks",
    "marking_ratio",
)
CLASS_COLUMNS = (
    "cc",
    "rtt_ns",
    "flows",
    "goodput_bps",
    "relative_goodput",
    "share",
    "jain_index",
    "ce_marks",
    "marking_ratio",
)
SUMMARY_KEYS = (
    "jain_index",
    "utilization",
    "total_goodput_bps",
    "queue_sojourn_p50_ns",
    "queue_sojourn_p99_ns",
    "drops",
    "retransmissions",
    "marks",
    "marking_ratio",
    "queue_sojourn_l4s_p99_ns",
    "queue_sojourn_classic_p99_ns",
    "fness",
    "window_backlog_bytes",
    "window_short",
    "events",
    "wall_seconds",
)
# A window shorter than this many RTTs of its slowest flow, or one that opens with more than this share of
# its payload capacity already past the link, is flagged ``window_short``.
SHORT_WINDOW_RTTS = 10
SHORT_WINDOW_BACKLOG_SHARE = 0.02


def native_columns(columns: Mapping[str, Any]) -> Columns:
    """NumPy columns from native ones: ``(dtype, bytes)`` pairs become arrays, each copied once (out of the
    immutable bytes), and lists of text stay lists."""
    data: Columns = {}
    for name, value in columns.items():
        if isinstance(value, tuple):
            dtype, raw = value
            data[name] = np.frombuffer(raw, dtype=np.dtype(dtype)).copy()
        else:
            data[name] = [str(v) for v in value]
    return data


def frame(columns: Columns, column_order: list[str] | None = None) -> pd.DataFrame:
    """A DataFrame taking ``columns``' arrays as they are (a long run's time series is most of its memory);
    text columns become pandas strings."""
    import pandas as pd  # `ccfair run --json` and the summaries need only NumPy

    data = {
        name: pd.array(value, dtype="str") if isinstance(value, list) else value
        for name, value in columns.items()
    }
    return pd.DataFrame(data, columns=column_order, copy=False)


def columns_frame(columns: Mapping[str, Any]) -> pd.DataFrame:
    """A DataFrame from native columns (see :func:`native_columns`)."""
    return frame(native_columns(columns))


def flow_columns(native_flows: Mapping[str, Any], scenario: Scenario) -> Columns:
    """The per-flow table as columns: the documented ones first, then every native counter (``window_*``,
    ``total_*``, ``rtt_samples``, ``rtt_mean_ns``, ``rtt_p99_ns``)."""
    raw = native_columns(native_flows)
    start_ns, end_ns = scenario.measure_window_ns()
    window_s = (end_ns - start_ns) / 1e9
    labels = [g.label for g in scenario.flows]
    out: Columns = {
        "flow_id": raw["flow_id"],
        "group": raw["group"],
        "label": [labels[int(g)] for g in raw["group"]],
        "cc": raw["cc"],
        "rtt_ns": raw["rtt_ns"],
        "start_ns": raw["start_ns"],
        "stop_ns": raw["stop_ns"],
    }
    active = (raw["start_ns"] < end_ns) & (raw["stop_ns"] > start_ns)
    out["active"] = active
    goodput_bps = raw["window_delivered_bytes"].astype("float64") * 8.0 / window_s
    out["goodput_bps"] = goodput_bps
    active_total = float(goodput_bps[active].sum())
    if active_total > 0:
        out["share"] = np.where(active, goodput_bps / active_total, np.nan)
    else:
        out["share"] = np.full(len(goodput_bps), np.nan)
    out["retransmissions"] = raw["window_retransmitted_segments"]
    out["drops"] = raw["window_queue_drops"] + raw["window_path_drops"]
    out["rtt_mean_ms"] = raw["rtt_mean_ns"] / 1e6
    out["rtt_p99_ms"] = raw["rtt_p99_ns"] / 1e6
    out["ce_marks"] = raw["window_ce_marks"]
    out["marking_ratio"] = _ratio(raw["window_ce_marks"], raw["window_sent_segments"])
    out.update((name, column) for name, column in raw.items() if name not in out)
    return out


def flow_table(native_flows: Mapping[str, Any], scenario: Scenario) -> pd.DataFrame:
    """The per-flow table (see :func:`flow_columns`)."""
    return frame(flow_columns(native_flows, scenario))


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """num / den as floats, NaN where den is 0."""
    den_f = den.astype("float64")
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den_f > 0, num.astype("float64") / den_f, np.nan)


def _column(table: Any, name: str, dtype: str | None = None) -> np.ndarray:
    """One column of a table (columns or a DataFrame) as a NumPy array."""
    return np.asarray(table[name], dtype=dtype)


def class_columns(flows: Any, link_rate_bps: int) -> Columns:
    """Per (cc, rtt_ns) class of active flows, in order of first flow id; ``flows`` as columns or a
    DataFrame."""
    active = _column(flows, "active", "bool")
    cc = _column(flows, "cc", "object")[active]
    rtt_ns = _column(flows, "rtt_ns")[active]
    goodput_bps = _column(flows, "goodput_bps", "float64")[active]
    ce_marks = _column(flows, "ce_marks")[active]
    sent = _column(flows, "window_sent_segments")[active]
    n_active = len(goodput_bps)
    total = float(goodput_bps.sum())
    members: dict[tuple[str, int], list[int]] = {}
    for i, key in enumerate(zip(cc.tolist(), rtt_ns.tolist(), strict=True)):
        members.setdefault(key, []).append(i)
    rows: dict[str, list[Any]] = {name: [] for name in CLASS_COLUMNS}
    for (class_cc, class_rtt_ns), index in members.items():
        goodputs = goodput_bps[index]
        mean = float(goodputs.mean())
        marks = int(ce_marks[index].sum())
        class_sent = int(sent[index].sum())
        rows["cc"].append(str(class_cc))
        rows["rtt_ns"].append(int(class_rtt_ns))
        rows["flows"].append(len(index))
        rows["goodput_bps"].append(mean)
        rows["relative_goodput"].append(relative_goodput(mean, link_rate_bps, n_active))
        rows["share"].append(float(goodputs.sum()) / total if total > 0 else math.nan)
        rows["jain_index"].append(jain_index(goodputs))
        rows["ce_marks"].append(marks)
        rows["marking_ratio"].append(marks / class_sent if class_sent > 0 else math.nan)
    return {
        name: rows[name] if name == "cc" else np.array(rows[name], dtype=CLASS_DTYPES[name])
        for name in CLASS_COLUMNS
    }


CLASS_DTYPES = {
    "rtt_ns": "uint64",
    "flows": "int64",
    "goodput_bps": "float64",
    "relative_goodput": "float64",
    "share": "float64",
    "jain_index": "float64",
    "ce_marks": "int64",
    "marking_ratio": "float64",
}


def class_table(flows: Any, link_rate_bps: int) -> pd.DataFrame:
    """The per-class table (see :func:`class_columns`)."""
    return frame(class_columns(flows, link_rate_bps), list(CLASS_COLUMNS))


def json_number(x: Any) -> float | int | None:
    """A plain JSON number: NumPy scalars become Python ones, NaN and infinities become None."""
    if x is None:
        return None
    if isinstance(x, bool | np.bool_):
        raise TypeError("not a number: a boolean")
    if isinstance(x, int | np.integer):
        return int(x)
    f = float(x)
    return f if math.isfinite(f) else None


def link_payload_bytes(scenario: Scenario, window_ns: int) -> float:
    """Payload the link can carry over ``window_ns``: its rate in full-size packets, headers excluded."""
    return scenario.link.rate_bps * window_ns / 8e9 * scenario.mss_bytes() / scenario.link.mtu_bytes


def window_short(
    rtt_ns: np.ndarray, rtt_mean_ms: np.ndarray, window_ns: int, backlog_bytes: int | None, scenario: Scenario
) -> bool:
    """Whether the measurement window is too short for a stable goodput (see ``window_short`` above), from
    the active flows' base RTTs and mean measured RTTs."""
    rtt = np.fmax(rtt_ns.astype("float64"), rtt_mean_ms * 1e6)
    slowest_ns = float(np.nanmax(rtt)) if len(rtt) else 0.0
    if window_ns < SHORT_WINDOW_RTTS * slowest_ns:
        return True
    capacity = link_payload_bytes(scenario, window_ns)
    return backlog_bytes is not None and backlog_bytes > SHORT_WINDOW_BACKLOG_SHARE * capacity


def run_summary(flows: Any, totals: Mapping[str, Any], scenario: Scenario) -> dict[str, Any]:
    """The summary dict (keys :data:`SUMMARY_KEYS`; ``fness`` only for two-flow runs); ``flows`` as
    columns or a DataFrame."""
    start_ns, end_ns = scenario.measure_window_ns()
    window_s = (end_ns - start_ns) / 1e9
    active = _column(flows, "active", "bool")
    goodput_bps = _column(flows, "goodput_bps", "float64")[active]
    flow_id = _column(flows, "flow_id")
    summary: dict[str, Any] = {
        "jain_index": json_number(jain_index(goodput_bps)),
        "utilization": json_number(
            int(totals["window_link_tx_bytes"]) * 8 / (scenario.link.rate_bps * window_s)
        ),
        "total_goodput_bps": float(goodput_bps.sum()),
        "queue_sojourn_p50_ns": json_number(totals["window_sojourn_p50_ns"]),
        "queue_sojourn_p99_ns": json_number(totals["window_sojourn_p99_ns"]),
        "drops": int(totals["window_queue_drops"]) + int(totals["window_path_drops"]),
        "retransmissions": int(_column(flows, "retransmissions").sum()),
        "marks": int(totals["window_marks"]),
        "marking_ratio": json_number(
            int(totals["window_marks"]) / sent
            if (sent := int(_column(flows, "window_sent_segments").sum()))
            else None
        ),
        "queue_sojourn_l4s_p99_ns": json_number(totals["window_sojourn_l4s_p99_ns"]),
        "queue_sojourn_classic_p99_ns": json_number(totals["window_sojourn_classic_p99_ns"]),
    }
    if len(flow_id) == 2:
        delivered = _column(flows, "window_delivered_bytes")[np.argsort(flow_id, kind="stable")]
        summary["fness"] = json_number(fness(float(delivered[0]), float(delivered[1])))
    backlog = totals.get("window_backlog_bytes")
    summary["window_backlog_bytes"] = None if backlog is None else int(backlog)
    summary["window_short"] = window_short(
        _column(flows, "rtt_ns")[active],
        _column(flows, "rtt_mean_ms", "float64")[active],
        end_ns - start_ns,
        summary["window_backlog_bytes"],
        scenario,
    )
    summary["events"] = int(totals["events"])
    summary["wall_seconds"] = float(totals["wall_seconds"])
    return summary
