"""How text tables show a run: a derived table's column as a :class:`ccfair.tables.Column` (from its
:class:`~ccfair.analysis.schema.Shown`), the flow and class tables' shown columns, and the summary's lines.
The command line (:mod:`ccfair.report`), the notebook view (:mod:`ccfair.notebook`) and the HTML report
(:mod:`ccfair.plots.html_report`) show the same columns the same way."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from ccfair.analysis import schema
from ccfair.catalog import has_l4s_queue
from ccfair.tables import MISSING, Column, fixed, integer, is_missing, text, yes_no


def text_column(column: schema.Column) -> Column:
    """How text tables show a schema column (its :class:`~ccfair.analysis.schema.Shown`): the label and
    unit as header, text left-aligned, numbers right-aligned in their shown unit."""
    shown = column.shown
    assert shown is not None, column.name
    header = f"{shown.label} {shown.unit}" if shown.unit else shown.label
    if column.dtype == "str":
        return Column(header, column.name, text, "left")
    if column.dtype == "|b1":
        return Column(header, column.name, yes_no, "left")
    if shown.digits is None:
        return Column(header, column.name, integer)
    return Column(header, column.name, fixed(shown.digits, column.shown_scale()))


def shows_ecn(scenario: Any, summary: Mapping[str, Any]) -> bool:
    """Whether text tables show a run's ECN values (the columns declared ``ecn``: CE marks, marking ratios,
    the L4S and classic sojourn): the queue discipline has an L4S queue (:func:`ccfair.catalog.has_l4s_queue`:
    its L-queue is reported even when nothing entered it, which is a result), some flow group negotiates
    ECN, or the run saw a CE mark or an L4S packet."""
    if has_l4s_queue(scenario.link.aqm.name):
        return True
    if any(getattr(g, "ecn", "off") != "off" for g in scenario.flows):
        return True
    marks = summary.get("marks")
    return bool(not is_missing(marks) and marks) or not is_missing(summary.get("queue_sojourn_l4s_p99_ns"))


def flow_table_columns(flows: Any, ecn: bool = False) -> list[Column]:
    """The shown columns of the flow table ``flows`` (a DataFrame): ``label`` only when some flow has one,
    ``in_window`` only when some flow did not take part in the window (a store written before it has none),
    the ECN columns only with ``ecn`` (:func:`shows_ecn`)."""
    hidden = {c.name for c in schema.flows() if c.ecn and not ecn}
    if "label" not in flows or not bool(flows["label"].notna().any()):
        hidden.add("label")
    if "in_window" not in flows or bool(flows["in_window"].fillna(True).astype(bool).all()):
        hidden.add("in_window")
    return [text_column(c) for c in schema.shown(schema.flows()) if c.name not in hidden]


def class_table_columns(ecn: bool = False) -> list[Column]:
    """The class table's shown columns, the ECN columns only with ``ecn`` (:func:`shows_ecn`)."""
    return [text_column(c) for c in schema.shown(schema.CLASSES) if ecn or not c.ecn]


def summary_pairs(summary: Mapping[str, Any], ecn: bool = False) -> list[tuple[str, str]]:
    """The summary's shown values as (label, value with its unit); a value of some runs only (``fness``)
    where the run has it, the ECN values with ``ecn`` (:func:`shows_ecn`)."""
    pairs = []
    for c in schema.shown(schema.SUMMARY):
        if (not c.always and c.name not in summary) or (c.ecn and not ecn):
            continue
        assert c.shown is not None
        value = summary.get(c.name)
        if c.shown.digits is None:
            shown = integer(value)
        elif is_missing(value):
            shown = c.shown.missing or MISSING
        else:
            unit = f" {c.shown.unit}" if c.shown.unit else ""
            shown = fixed(c.shown.digits, c.shown_scale())(value) + unit
        if c.name == "wall_seconds":
            shown += _event_rate(summary)
        pairs.append((c.shown.label, shown))
    return pairs


def _event_rate(summary: Mapping[str, Any]) -> str:
    # An absent value reads as NaN, which the formatters show as missing and the rate skips.
    events, wall = summary.get("events", math.nan), summary.get("wall_seconds", math.nan)
    if is_missing(events) or is_missing(wall) or wall <= 0:
        return ""
    rate = events / wall
    # Millions for the simulator; a kernel run's events (the frames its emulator forwarded) at the pace of
    # real time are thousands a second, which two decimals of millions would show as 0.00.
    return f"  ({rate / 1e6:.2f} M events/s)" if rate >= 1e5 else f"  ({rate:,.0f} events/s)"
