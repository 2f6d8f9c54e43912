"""Tables and the summary of one run, from the native output and the scenario.

The measurement window is [measure_start, measure_end]. A flow is *active* if its application's
[start, stop) overlaps the window; it takes part in the window (``in_window``) if it had data to send in it:
from its start until it completed its ``size`` or stopped, whichever came first
(:func:`ccfair.analysis.dynamic.active_until_ns`), overlaps the window. A finite flow that completed before
the window opened is active but did not take part. Shares, classes and fairness count the flows that took
part only. What each column and summary value means, its dtype and unit, is declared in
:mod:`ccfair.analysis.schema`; this module computes them, and each table comes out in the schema's order (a
declared column that is not computed is an error).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from ccfair.analysis.dynamic import active_until_ns
from ccfair.analysis.fairness import fness, jain_index, relative_goodput
from ccfair.analysis.schema import CLASS_NAMES, CLASSES, FLOW_NAMES, SUMMARY_KEYS
from ccfair.scenario import Scenario

if TYPE_CHECKING:
    import pandas as pd

# The metrics are computed on NumPy columns; pandas (heavy: about a quarter second to import) only wraps
# them into DataFrames, imported where a frame is made, so that `ccfair run --json` starts fast.

Columns = dict[str, Any]
"""A table as columns: name -> NumPy array, or a list of str for a text column."""

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
    """The per-flow table as columns: the schema's flow columns first, then every other native column
    (``window_*``, ``total_*``, ``rtt_samples``, ``rtt_mean_ns``, ...)."""
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
    out["active"] = (raw["start_ns"] < end_ns) & (raw["stop_ns"] > start_ns)
    in_window = took_part(raw, start_ns, end_ns)
    out["in_window"] = in_window
    goodput_bps = raw["window_delivered_bytes"].astype("float64") * 8.0 / window_s
    out["goodput_bps"] = goodput_bps
    total = float(goodput_bps[in_window].sum())
    if total > 0:
        out["share"] = np.where(in_window, goodput_bps / total, np.nan)
    else:
        out["share"] = np.full(len(goodput_bps), np.nan)
    out["retransmissions"] = raw["window_retransmitted_segments"]
    out["drops"] = raw["window_queue_drops"] + raw["window_path_drops"]
    out["rtt_mean_ms"] = raw["rtt_mean_ns"] / 1e6
    out["rtt_p99_ms"] = raw["rtt_p99_ns"] / 1e6
    out["ce_marks"] = raw["window_ce_marks"]
    out["marking_ratio"] = _ratio(raw["window_ce_marks"], raw["window_sent_segments"])
    ordered = {name: out[name] for name in FLOW_NAMES}
    ordered.update((name, column) for name, column in raw.items() if name not in ordered)
    return ordered


def took_part(flows: Any, start_ns: int, end_ns: int) -> np.ndarray:
    """Per flow, whether it had data to send in the window [start_ns, end_ns]: it started before the window
    closed, and was still sending (not completed, not stopped) when it opened (``in_window``)."""
    start = _column(flows, "start_ns", "float64")
    until = active_until_ns(flows)
    return (start < end_ns) & (until > start_ns) & (until > start)


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
    """Per (cc, rtt_ns) class of the flows that took part in the window (``in_window``), in order of first
    flow id; ``flows`` as columns or a DataFrame."""
    part = _column(flows, "in_window", "bool")
    cc = _column(flows, "cc", "object")[part]
    rtt_ns = _column(flows, "rtt_ns")[part]
    goodput_bps = _column(flows, "goodput_bps", "float64")[part]
    ce_marks = _column(flows, "ce_marks")[part]
    sent = _column(flows, "window_sent_segments")[part]
    n_part = len(goodput_bps)
    total = float(goodput_bps.sum())
    members: dict[tuple[str, int], list[int]] = {}
    for i, key in enumerate(zip(cc.tolist(), rtt_ns.tolist(), strict=True)):
        members.setdefault(key, []).append(i)
    rows: dict[str, list[Any]] = {name: [] for name in CLASS_NAMES}
    for (class_cc, class_rtt_ns), index in members.items():
        goodputs = goodput_bps[index]
        mean = float(goodputs.mean())
        marks = int(ce_marks[index].sum())
        class_sent = int(sent[index].sum())
        rows["cc"].append(str(class_cc))
        rows["rtt_ns"].append(int(class_rtt_ns))
        rows["flows"].append(len(index))
        rows["goodput_bps"].append(mean)
        rows["relative_goodput"].append(relative_goodput(mean, link_rate_bps, n_part))
        rows["share"].append(float(goodputs.sum()) / total if total > 0 else math.nan)
        rows["jain_index"].append(jain_index(goodputs))
        rows["ce_marks"].append(marks)
        rows["marking_ratio"].append(marks / class_sent if class_sent > 0 else math.nan)
    return {
        c.name: rows[c.name] if c.dtype == "str" else np.array(rows[c.name], dtype=c.dtype) for c in CLASSES
    }


def class_table(flows: Any, link_rate_bps: int) -> pd.DataFrame:
    """The per-class table (see :func:`class_columns`)."""
    return frame(class_columns(flows, link_rate_bps), list(CLASS_NAMES))


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
    """Whether the measurement window is too short for a stable goodput (``window_short`` in the schema),
    from the base RTTs and mean measured RTTs of the flows that took part."""
    rtt = np.fmax(rtt_ns.astype("float64"), rtt_mean_ms * 1e6)
    slowest_ns = float(np.nanmax(rtt)) if len(rtt) else 0.0
    if window_ns < SHORT_WINDOW_RTTS * slowest_ns:
        return True
    capacity = link_payload_bytes(scenario, window_ns)
    return backlog_bytes is not None and backlog_bytes > SHORT_WINDOW_BACKLOG_SHARE * capacity


def run_summary(flows: Any, totals: Mapping[str, Any], scenario: Scenario) -> dict[str, Any]:
    """The summary dict, in the order of :data:`~ccfair.analysis.schema.SUMMARY` (``fness`` only for two-flow
    runs); ``flows`` as columns or a DataFrame."""
    start_ns, end_ns = scenario.measure_window_ns()
    window_s = (end_ns - start_ns) / 1e9
    part = _column(flows, "in_window", "bool")
    goodput_bps = _column(flows, "goodput_bps", "float64")[part]
    flow_id = _column(flows, "flow_id")
    summary: dict[str, Any] = {
        "jain_index": json_number(jain_index(goodput_bps)),
        "utilization": json_number(
            int(totals["window_link_tx_bytes"]) * 8 / (scenario.link.rate_bps * window_s)
        ),
        "total_goodput_bps": float(goodput_bps.sum()),
        "queue_sojourn_p50_ns": json_number(totals["window_sojourn_p50_ns"]),
        "queue_sojourn_p99_ns": json_number(totals["window_sojourn_p99_ns"]),
        "queue_sojourn_mean_ns": json_number(totals["window_sojourn_mean_ns"]),
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
        _column(flows, "rtt_ns")[part],
        _column(flows, "rtt_mean_ms", "float64")[part],
        end_ns - start_ns,
        summary["window_backlog_bytes"],
        scenario,
    )
    summary["events"] = int(totals["events"])
    summary["wall_seconds"] = float(totals["wall_seconds"])
    undeclared = set(summary) - set(SUMMARY_KEYS)
    if undeclared:
        raise AssertionError(f"summary values not declared in ccfair.analysis.schema: {sorted(undeclared)}")
    return {key: summary[key] for key in SUMMARY_KEYS if key in summary}
