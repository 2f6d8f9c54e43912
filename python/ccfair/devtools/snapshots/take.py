"""Runs a case and turns its output into its snapshot: every native column exactly, and the derived tables.

Native sections, from the simulator's raw output alone (a runner in another language can compute them
from the same output):

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
- ``flows``: per flow, every other column of the native flow table (floats by their bits).
- ``totals``: every other run-level value but the wall-clock time (floats by their bits).
- ``timeseries_bits``, ``queue_bits``: a digest of each float column of the two series, by the values'
  bits, so pacing rates, minimum RTTs, the algorithms' estimates and the sojourn percentiles are pinned to
  the last bit.

Which columns the last four hold is the output schema less what the first ones pin, so a new native column
is pinned without a change here.

Derived sections (``derived_*``), computed by :mod:`ccfair.analysis` as ``ccfair.run`` computes them:

- ``derived_flows``: per flow, the flow table's computed columns (text aside);
- ``derived_classes``: per class, in the table's order, its columns;
- ``derived_summary``: every summary value but ``wall_seconds``.

Cells: integers in decimal, a float as ``0x`` and the 16 hex digits of its IEEE-754 bits (NaN included),
booleans ``true``/``false``, ``-`` for a missing value. A digest is the first 16 hex digits of the SHA-256
of the column's cells, each followed by a newline: it depends on the values only, not on the column's
storage type.
"""

from __future__ import annotations

import hashlib
import math
import struct
import tomllib
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ccfair.analysis import schema
from ccfair.analysis.metrics import columns_frame
from ccfair.catalog import output_table
from ccfair.devtools.snapshots.cases import Case
from ccfair.devtools.snapshots.table import DIGEST_COLUMN, Section, Snapshot
from ccfair.result import RunResult
from ccfair.runner import simulate
from ccfair.toml_text import dumps as toml_dumps

# The columns pinned by name, shared with the Rust check (crates/ccfair-sim/tests/snapshots.rs).
COLUMNS_FILE = Path(__file__).resolve().parents[4] / "tests" / "snapshots" / "columns.toml"
with COLUMNS_FILE.open("rb") as _f:
    _PINNED = tomllib.load(_f)
COUNTERS: tuple[str, ...] = tuple(_PINNED["counters"])
SERIES_COLUMNS: tuple[str, ...] = tuple(_PINNED["series"])
RUN_COUNTERS: tuple[str, ...] = tuple(_PINNED["run_counters"])
TIMESERIES_COLUMNS: tuple[str, ...] = tuple(_PINNED["timeseries"])
QUEUE_COLUMNS: tuple[str, ...] = tuple(_PINNED["queue"])
NOT_PINNED = frozenset(_PINNED["not_pinned"])
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
    result = RunResult.from_native(output, scenario, seed)
    sections = (
        _flow_counters("window", f"per flow, measurement window {start_ns} to {end_ns} ns", flows, "window_"),
        _flow_counters("total", "per flow, whole run", flows, "total_"),
        _flow_series(flows, series),
        _run(output["totals"], series, queue),
        _digests("timeseries", "the per-flow interval series", series, TIMESERIES_COLUMNS),
        _digests("queue", "the queue's interval series", queue, QUEUE_COLUMNS),
        _flow_rest(flows),
        _totals_rest(output["totals"]),
        _float_digests("timeseries_bits", "the per-flow interval series", series, "timeseries"),
        _float_digests("queue_bits", "the queue's interval series", queue, "queue"),
        _derived_flows(result.flows),
        _derived_classes(result.classes),
        _derived_summary(result.summary),
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
        "series", "per flow, from its interval rows (t: interval end; -1: never)", SERIES_COLUMNS, tuple(rows)
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


def _digest(values: Iterable[Any], cell: Callable[[Any], str] | None = None) -> str:
    cell = cell or _int
    text = "".join(f"{cell(v)}\n" for v in values)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _pinned_flow_columns() -> set[str]:
    """The flow table's columns the ``window`` and ``total`` sections hold."""
    counters = {f"{prefix}{c}" for prefix in ("window_", "total_") for c in COUNTERS}
    return {"flow_id", "group", "cc", "rtt_samples", *counters}


def _flow_rest(flows: pd.DataFrame) -> Section:
    columns = [c["name"] for c in output_table("flows") if c["name"] not in _pinned_flow_columns()]
    rows = tuple(
        (_int(flows["flow_id"][i]), *(_cell(flows[c][i]) for c in columns)) for i in range(len(flows))
    )
    title = "per flow, the flow table's other columns (floats: 0x and their IEEE-754 bits)"
    return Section("flows", title, ("flow", *columns), rows)


def _totals_rest(totals: Mapping[str, Any]) -> Section:
    names = [c["name"] for c in output_table("totals") if c["name"] not in (*RUN_COUNTERS, *NOT_PINNED)]
    rows = tuple((name, _cell(totals[name])) for name in names)
    title = "the run's other values, the wall-clock time aside (floats: 0x and their IEEE-754 bits)"
    return Section("totals", title, ("value", "exact"), rows)


def _float_digests(name: str, what: str, frame: pd.DataFrame, table: str) -> Section:
    columns = [c["name"] for c in output_table(table) if c["dtype"] == "<f8" and "sim" in c["backends"]]
    rows = tuple((c, _digest(frame[c], _bits)) for c in columns)
    title = f"SHA-256 (first 16 hex) of each float column of {what}, by the values' IEEE-754 bits"
    return Section(name, title, ("column", DIGEST_COLUMN), rows)


def _derived_flows(flows: pd.DataFrame) -> Section:
    columns = [c.name for c in schema.flows() if not c.native and c.dtype != "str"]
    rows = tuple(
        (_int(flows["flow_id"][i]), *(_cell(flows[c][i]) for c in columns)) for i in range(len(flows))
    )
    title = "per flow, the flow table's computed columns (ccfair.analysis)"
    return Section("derived_flows", title, ("flow", *columns), rows)


def _derived_classes(classes: pd.DataFrame) -> Section:
    columns = list(schema.CLASS_NAMES)
    rows = tuple((str(i), *(_cell(classes[c].iloc[i]) for c in columns)) for i in range(len(classes)))
    return Section("derived_classes", "per class, in order (ccfair.analysis)", ("class", *columns), rows)


def _derived_summary(summary: Mapping[str, Any]) -> Section:
    rows = tuple((key, _cell(value)) for key, value in summary.items() if key not in NOT_PINNED)
    title = "the summary, wall_seconds aside (ccfair.analysis)"
    return Section("derived_summary", title, ("value", "exact"), rows)


def _bits(value: Any) -> str:
    """A float as ``0x`` and the 16 hex digits of its IEEE-754 bits."""
    (bits,) = struct.unpack("<Q", struct.pack("<d", float(value)))
    return f"0x{bits:016x}"


def _cell(value: Any) -> str:
    """A cell of any kind: an integer in decimal, a float by its bits, a boolean, ``-`` for none."""
    if value is None or value is pd.NA:
        return NONE
    if isinstance(value, bool | np.bool_):
        return "true" if value else "false"
    if isinstance(value, float | np.floating):
        return _bits(value)
    if isinstance(value, str):
        return value
    return _int(value)


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
