"""The metrics compared per run, the same for both backends: each class's share, Jain's index, utilization,
the queue's sojourn p50, the retransmission ratio and, for two-flow cells, the two-flow fairness measure.

A class is the flow groups with one label (the grid labels every group). All values come from a run's row in
the store's ``runs`` table and its ``flows`` rows, so the kernel's stored truth and a simulator run are
measured by one function.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ccfair.studies.validate.grid import Cell

# Metric keys, in table order (a cell's shares come first, as "share <class>").
JAIN = "jain"
UTILIZATION = "utilization"
SOJOURN = "sojourn_p50_ms"
RETRANSMISSION = "retransmission_ratio"
FNESS = "fness"
SHARE_PREFIX = "share "


def share_key(label: str) -> str:
    return f"{SHARE_PREFIX}{label}"


def metric_keys(cell: Cell) -> list[str]:
    keys = [share_key(c) for c in cell.classes()] if len(cell.classes()) > 1 else []
    if sum(int(g.get("count", 1)) for g in cell.flows) > 1:
        keys.append(JAIN)
    keys += [UTILIZATION, SOJOURN, RETRANSMISSION]
    if sum(int(g.get("count", 1)) for g in cell.flows) == 2:
        keys.append(FNESS)
    return keys


def _number(value: Any) -> float:
    return math.nan if value is None else float(value)


def run_metrics(cell: Cell, run: dict[str, Any], flows: Sequence[dict[str, Any]]) -> dict[str, float]:
    """The metrics of one run: ``run`` its ``runs`` row (the run-summary columns), ``flows`` its flow rows
    (``label``, ``in_window``, ``goodput_bps``, ``window_sent_segments``, ``window_retransmitted_segments``;
    ``active`` stands in for ``in_window`` in a store written before it)."""
    active = [f for f in flows if _took_part(f)]
    total = sum(float(f["goodput_bps"]) for f in active)
    out: dict[str, float] = {}
    keys = metric_keys(cell)
    for label in cell.classes():
        key = share_key(label)
        if key in keys:
            mine = sum(float(f["goodput_bps"]) for f in active if f["label"] == label)
            out[key] = mine / total if total > 0 else math.nan
    if JAIN in keys:
        out[JAIN] = _number(run["jain_index"])
    out[UTILIZATION] = _number(run["utilization"])
    out[SOJOURN] = _number(run["queue_sojourn_p50_ns"]) / 1e6
    sent = sum(float(f["window_sent_segments"]) for f in flows)
    retransmitted = sum(float(f["window_retransmitted_segments"]) for f in flows)
    out[RETRANSMISSION] = retransmitted / sent if sent > 0 else math.nan
    if FNESS in keys:
        out[FNESS] = _number(run["fness"])
    return out


def _took_part(flow: dict[str, Any]) -> bool:
    took = flow.get("in_window")
    if took is None or (isinstance(took, float) and math.isnan(took)):
        return bool(flow["active"])  # a store written before in_window
    return bool(took)


RUN_COLUMNS = ("jain_index", "utilization", "queue_sojourn_p50_ns", "fness")
FLOW_COLUMNS = ("label", "goodput_bps", "window_sent_segments", "window_retransmitted_segments")


def store_metrics(root: Path, cell: Cell, run_ids: Sequence[str]) -> dict[str, dict[str, float]]:
    """The metrics of each done run of ``run_ids`` in the store under ``root``, by run id."""
    # DuckDB loads when a store is read.
    from ccfair.store.reader import query

    if not run_ids:
        return {}
    ids = ", ".join(f"'{r}'" for r in run_ids)
    runs = query(
        root, f"SELECT run_id, {', '.join(RUN_COLUMNS)} FROM runs WHERE status = 'done' AND run_id IN ({ids})"
    )
    if runs.empty:
        return {}  # none done (all failed or cut short): the store may not have a flows table yet
    stored = set(query(root, "SELECT * FROM flows LIMIT 0").columns)
    wanted = (*FLOW_COLUMNS, *(c for c in ("in_window", "active") if c in stored))
    columns = ", ".join(f'"{c}"' for c in wanted)  # "group" is an SQL keyword
    flows = query(root, f"SELECT run_id, {columns} FROM flows WHERE run_id IN ({ids})")
    by_run: dict[str, list[dict[str, Any]]] = {}
    for row in flows.to_dict("records"):
        by_run.setdefault(row["run_id"], []).append(row)
    return {
        row["run_id"]: run_metrics(cell, row, by_run.get(row["run_id"], []))
        for row in runs.to_dict("records")
    }
