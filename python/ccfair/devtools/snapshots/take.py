"""Runs a case and turns the simulator's raw output into its snapshot: integers only, nothing derived.

Sections:

- ``window``, ``total``: per flow, the native counters over the measurement window and over the whole run
  (delivered bytes, sent and retransmitted segments, queue and path drops, CE marks, RTO events; the window
  also counts RTT samples).
- ``series``: per flow, what its interval rows show at a glance: how many, the largest and last cwnd
  (packets), when ssthresh was first finite and when the flow first lost a packet (interval end in ns, -1
  never), and the CA states and algorithm modes it was seen in, in order of first appearance.
- ``run``: the run's counters (events, the window's link bytes, drops, marks and departures, the sojourn
  percentiles, which the queue's histogram gives as whole nanoseconds) and the number of interval rows.
- ``timeseries``, ``queue``: a digest of each integer column of the two interval series, so every cwnd,
  ssthresh and backlog sample is pinned without storing the series.

A digest is the first 16 hex digits of the SHA-256 of the column's values in decimal, one per line: it
depends on the values only, not on the column's storage type.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable, Mapping
from typing import Any

import pandas as pd

from ccfair.analysis.metrics import columns_frame
from ccfair.devtools.snapshots.cases import Case
from ccfair.devtools.snapshots.table import DIGEST_COLUMN, Section, Snapshot
from ccfair.runner import simulate
from ccfair.toml_text import dumps as toml_dumps

COUNTERS = (
    "delivered_bytes",
    "sent_segments",
    "retransmitted_segments",
    "queue_drops",
    "path_drops",
    "ce_marks",
    "rto_events",
)
RUN_COUNTERS = (
    "events",
    "sim_end_ns",
    "window_ns",
    "window_link_tx_bytes",
    "window_departures",
    "window_queue_drops",
    "window_path_drops",
    "window_marks",
    "window_sojourn_p50_ns",
    "window_sojourn_p99_ns",
    "window_sojourn_l4s_p99_ns",
    "window_sojourn_classic_p99_ns",
    "sent_segments",
    "arrived_segments",
    "queue_drops",
    "path_drops",
    "in_flight_at_end",
)
TIMESERIES_COLUMNS = (
    "t_ns",
    "flow_id",
    "delivered_bytes",
    "cwnd",
    "ssthresh",
    "srtt_ns",
    "inflight",
    "retransmits",
    "drops",
    "ca_state",
    "cc_mode",
)
QUEUE_COLUMNS = ("t_ns", "backlog_bytes", "backlog_packets", "drops", "marks", "departures", "tx_bytes")
NEVER = "-1"
NONE = "-"
EMPTY = "none"


def take_snapshot(case: Case, source: str) -> Snapshot:
    """Runs ``case`` (from the cases file named ``source``) and returns its snapshot."""
    scenario, seed, output = simulate(case.scenario)
    flows = columns_frame(output["flows"])
    series = columns_frame(output["timeseries"])
    queue = columns_frame(output["queue"])
    start_ns, end_ns = scenario.measure_window_ns()
    header = (
        f"ccfair snapshot: {case.name}",
        case.about,
        f"case [{case.name}] of {source}, seed {seed}; `make snapshots` regenerates this file",
        *(f"requires: {r}" for r in case.requires),
        "scenario:",
        *(f"  {line}" for line in toml_dumps(case.scenario).splitlines() if line),
    )
    sections = (
        _flow_counters("window", f"per flow, measurement window {start_ns} to {end_ns} ns", flows, "window_"),
        _flow_counters("total", "per flow, whole run", flows, "total_"),
        _flow_series(flows, series),
        _run(output["totals"], series, queue),
        _digests("timeseries", "the per-flow interval series", series, TIMESERIES_COLUMNS),
        _digests("queue", "the queue's interval series", queue, QUEUE_COLUMNS),
    )
    return Snapshot(header, sections)


def _flow_counters(name: str, title: str, flows: pd.DataFrame, prefix: str) -> Section:
    columns = ("flow", "group", "cc", *COUNTERS) + (("rtt_samples",) if prefix == "window_" else ())
    rows = []
    for i in range(len(flows)):
        cells = [_int(flows["flow_id"][i]), _int(flows["group"][i]), str(flows["cc"][i])]
        cells += [_int(flows[prefix + c][i]) for c in COUNTERS]
        if prefix == "window_":
            cells.append(_int(flows["rtt_samples"][i]))
        rows.append(tuple(cells))
    return Section(name, title, columns, tuple(rows))


def _flow_series(flows: pd.DataFrame, series: pd.DataFrame) -> Section:
    columns = (
        "flow",
        "rows",
        "cwnd_max",
        "cwnd_last",
        "ssthresh_first_t_ns",
        "drop_first_t_ns",
        "ca_states",
        "cc_modes",
    )
    rows = []
    for flow_id in flows["flow_id"]:
        s = series[series["flow_id"] == flow_id]
        if len(s) == 0:
            rows.append((_int(flow_id), "0", NONE, NONE, NEVER, NEVER, EMPTY, EMPTY))
            continue
        modes = [m for m in s["cc_mode"] if m >= 0]
        rows.append(
            (
                _int(flow_id),
                str(len(s)),
                _int(s["cwnd"].max()),
                _int(s["cwnd"].iloc[-1]),
                _first_t(s, s["ssthresh"] >= 0),
                _first_t(s, s["drops"] > 0),
                _first_seen(s["ca_state"]),
                _first_seen(modes),
            )
        )
    return Section(
        "series", "per flow, from its interval rows (t: interval end; -1: never)", columns, tuple(rows)
    )


def _run(totals: Mapping[str, Any], series: pd.DataFrame, queue: pd.DataFrame) -> Section:
    rows = [(key, _exact(totals[key])) for key in RUN_COUNTERS]
    rows += [("timeseries_rows", str(len(series))), ("queue_rows", str(len(queue)))]
    return Section(
        "run", "whole run; window_* over the measurement window", ("counter", "value"), tuple(rows)
    )


def _digests(name: str, what: str, frame: pd.DataFrame, columns: tuple[str, ...]) -> Section:
    rows = tuple((c, _digest(frame[c])) for c in columns)
    title = f"SHA-256 (first 16 hex) of each integer column of {what}"
    return Section(name, title, ("column", DIGEST_COLUMN), rows)


def _digest(values: Iterable[Any]) -> str:
    text = "".join(f"{_int(v)}\n" for v in values)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _first_t(s: pd.DataFrame, mask: pd.Series) -> str:
    hits = s["t_ns"][mask]
    return _int(hits.iloc[0]) if len(hits) else NEVER


def _first_seen(values: Iterable[Any]) -> str:
    seen: list[str] = []
    for v in values:
        text = _int(v)
        if text not in seen:
            seen.append(text)
    return ">".join(seen) if seen else EMPTY


def _int(value: Any) -> str:
    """An integer cell; anything else is a bug in the snapshot's definition."""
    as_int = int(value)
    if as_int != value:
        raise ValueError(f"{value!r} is not an integer")
    return str(as_int)


def _exact(value: Any) -> str:
    """A counter: an integer, a float that holds a whole number (a histogram's quantile), or NaN (none)."""
    if isinstance(value, float):
        if math.isnan(value):
            return NONE
        if not value.is_integer():
            raise ValueError(f"{value!r} is not a whole number")
    return _int(value)
