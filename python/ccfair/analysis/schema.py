"""The derived tables' schema: every column the analysis adds to a run's native output, declared once.

The native tables (``flows``, ``timeseries``, ``queue``, ``totals``) are declared in
``crates/ccfair-core/src/output.rs`` and reach Python through :func:`ccfair.catalog.catalog`. A run's result
adds three tables of its own, computed in :mod:`ccfair.analysis.metrics` and declared here beside it:

- ``flows``: the leading columns of the flow table (a few passed through from the native flow table, the rest
  computed); every other native flow column follows them;
- ``classes``: one row per (cc, rtt_ns) class of the flows that took part in the window (``in_window``);
- ``summary``: the run-level metrics, plain JSON values.

A column has its name, dtype (NumPy's notation, as the native schema writes it; a summary value is a JSON
number or boolean of that kind, or null where it is undefined), unit and meaning; how the command line's
tables show it (:class:`Shown`) and figures label it (:class:`Plotted`); whether ``ccfair run --json`` lists
it in its records; and for a summary value the catalog schema version of the result store that first has its
column (:attr:`Column.added_in`).

Everything else follows from these lists: the order and dtypes of the computed tables, ``ccfair run``'s text
tables and ``--json`` records (:mod:`ccfair.columns`, :mod:`ccfair.result`), the store's catalog columns and
schema version (:mod:`ccfair.store.schema`), figure labels and ``--metric`` (:mod:`ccfair.plots.labels`),
the README's column tables (``make docs``) and the tests.

A new summary value is one :class:`Column` in :data:`SUMMARY` (``added_in`` one above the store's current
schema version) and its computation in :func:`ccfair.analysis.metrics.run_summary`.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cache
from typing import Any

from ccfair.catalog import output_table

NON_NEGATIVE = (0.0, float("inf"))
"""Counts, rates, delays and ratios cannot be negative: their intervals are clipped at zero."""

# How many of a column's units make one shown unit: a value shown in ``unit`` is the stored value divided by
# this (the same unit, or none named, needs no entry).
SHOWN_IN: dict[tuple[str, str], float] = {
    ("ns", "ms"): 1e6,
    ("bit/s", "Mbps"): 1e6,
    ("bit/s", "Mbit/s"): 1e6,
    ("", "%"): 0.01,
}


def shown_scale(unit: str, shown_unit: str) -> float:
    """How many of ``unit`` make one ``shown_unit`` (1 for the same unit, and for "": as stored, its unit not
    named); KeyError for a pair not in :data:`SHOWN_IN`."""
    return 1.0 if shown_unit in (unit, "") else SHOWN_IN[(unit, shown_unit)]


@dataclass(frozen=True)
class Shown:
    """How text tables (the command line, the notebook, the HTML report) show a value: its label (a table
    header is the label and the unit), the unit it is shown in ("": as stored, the unit not named), its
    decimals (None: a whole number with thousands separators, or text for a text column), and what a missing
    summary value reads as when it says something (None: ``-``)."""

    label: str
    unit: str = ""
    digits: int | None = None
    missing: str | None = None


@dataclass(frozen=True)
class Plotted:
    """How figures label a value: the axis label (the unit follows it in parentheses), the unit the axis is
    in, and the range the values cannot leave (intervals are clipped to it)."""

    label: str
    unit: str = ""
    bounds: tuple[float, float] | None = None

    def axis_label(self) -> str:
        return f"{self.label} ({self.unit})" if self.unit else self.label


@dataclass(frozen=True)
class Column:
    """One column of a derived table (for the summary: one key)."""

    name: str
    dtype: str
    """NumPy's dtype string (``<f8``, ``<u8``, ``|b1``, ...) or ``str`` for text."""
    unit: str
    """The unit ("ns", "bit/s", "packets", ...), "" for ratios, counts of events, identifiers and flags."""
    doc: str
    shown: Shown | None = None
    plotted: Plotted | None = None
    json: bool = False
    """``flows`` and ``classes``: one of the keys of ``ccfair run --json``'s records."""
    native: bool = False
    """``flows``: passed through from the native flow table, whose schema gives its dtype, unit, meaning."""
    always: bool = True
    """``summary``: present in every run's summary (False for a value of some runs only)."""
    ecn: bool = False
    """Text tables show it only for a run with ECN (:func:`ccfair.columns.shows_ecn`)."""
    added_in: int = 1
    """``summary``: the result store's catalog schema version that first has this value's column."""

    def shown_scale(self) -> float:
        """The stored value divided by this is the shown one."""
        assert self.shown is not None, self.name
        return shown_scale(self.unit, self.shown.unit)

    def plotted_scale(self) -> float:
        """The stored value times this is the plotted one."""
        assert self.plotted is not None, self.name
        return 1.0 / shown_scale(self.unit, self.plotted.unit)


def _native(name: str, shown: Shown | None = None, json: bool = False) -> Column:
    """A column of the native flow table passed through as it is (dtype, unit and meaning from its schema:
    :func:`flows`)."""
    return Column(name, dtype="", unit="", doc="", shown=shown, json=json, native=True)


_FLOWS = (
    _native("flow_id", Shown("flow"), json=True),
    _native("group", Shown("group"), json=True),
    Column(
        "label",
        "str",
        "",
        "the flow group's label (missing where the group has none)",
        Shown("label"),
    ),
    _native("cc", Shown("cc"), json=True),
    _native("rtt_ns", Shown("rtt", "ms", 1), json=True),
    _native("start_ns"),
    _native("stop_ns"),
    Column(
        "active",
        "|b1",
        "",
        "whether the flow's application [start, stop) overlaps the measurement window (a finite flow may "
        "have completed before it opened: in_window says which flows took part)",
    ),
    Column(
        "in_window",
        "|b1",
        "",
        "whether the flow took part in the measurement window: it had data to send in it (from its start "
        "until it completed its size or stopped, whichever came first, overlaps the window); shares, "
        "classes and fairness count these flows only",
        Shown("in window"),
        json=True,
    ),
    Column(
        "goodput_bps",
        "<f8",
        "bit/s",
        "payload delivered in order in the window x 8 / window seconds",
        Shown("goodput", "Mbps", 3),
        Plotted("goodput", "Mbit/s", NON_NEGATIVE),
        json=True,
    ),
    Column(
        "share",
        "<f8",
        "",
        "goodput / total goodput of the flows in the window; NaN for a flow not in_window",
        Shown("share", digits=3),
        Plotted("share of total goodput", bounds=(0.0, 1.0)),
        json=True,
    ),
    Column(
        "retransmissions",
        "<u8",
        "packets",
        "segments retransmitted in the window",
        Shown("retrans"),
        json=True,
    ),
    Column(
        "drops",
        "<u8",
        "packets",
        "the flow's packets dropped in the window, at the bottleneck queue plus on its own path",
        Shown("drops"),
        json=True,
    ),
    Column(
        "rtt_mean_ms",
        "<f8",
        "ms",
        "mean of the RTT samples taken in the window; NaN without samples",
        Shown("rtt mean", "ms", 1),
    ),
    Column(
        "rtt_p99_ms",
        "<f8",
        "ms",
        "99th percentile of the RTT samples taken in the window; NaN without samples",
        Shown("rtt p99", "ms", 1),
    ),
    Column(
        "ce_marks",
        "<u8",
        "packets",
        "the flow's packets CE-marked at the bottleneck in the window",
        Shown("CE marks"),
        ecn=True,
    ),
    Column(
        "marking_ratio",
        "<f8",
        "",
        "ce_marks / segments the flow sent in the window; NaN if it sent none",
        Shown("marked", "%", 2),
        ecn=True,
    ),
)

CLASSES = (
    Column("cc", "str", "", "the class's congestion control", Shown("cc"), json=True),
    Column("rtt_ns", "<u8", "ns", "the class's base RTT", Shown("rtt", "ms", 1), json=True),
    Column("flows", "<i8", "", "the class's flows in the window (in_window)", Shown("flows"), json=True),
    Column(
        "goodput_bps",
        "<f8",
        "bit/s",
        "mean goodput per flow of the class",
        Shown("goodput", "Mbps", 3),
        json=True,
    ),
    Column(
        "relative_goodput",
        "<f8",
        "",
        "class mean goodput / (link rate / number of flows in the window); perfect sharing gives about "
        "0.965, since goodput excludes the 52 header bytes of every 1500",
        Shown("rel goodput", digits=3),
        Plotted("relative goodput (class mean / fair share)", bounds=NON_NEGATIVE),
        json=True,
    ),
    Column(
        "share",
        "<f8",
        "",
        "the class's total goodput / total goodput of the flows in the window",
        Shown("share", digits=3),
        Plotted("share of total goodput", bounds=(0.0, 1.0)),
        json=True,
    ),
    Column(
        "jain_index",
        "<f8",
        "",
        "Jain's index over the class's flows' goodput",
        Shown("jain", digits=3),
        json=True,
    ),
    Column(
        "ce_marks",
        "<i8",
        "packets",
        "the class's packets CE-marked at the bottleneck in the window",
        Shown("CE marks"),
        ecn=True,
    ),
    Column(
        "marking_ratio",
        "<f8",
        "",
        "the class's CE marks / segments it sent in the window; NaN if it sent none",
        Shown("marked", "%", 2),
        ecn=True,
    ),
)
"""The columns of the ``classes`` table, in order."""

SUMMARY = (
    Column(
        "jain_index",
        "<f8",
        "",
        "Jain's index (Σx)² / (n·Σx²) over the goodput of the flows in the window (in_window; Jain, Chiu "
        "& Hawe 1984)",
        Shown("jain index", digits=3),
        Plotted("Jain's fairness index", bounds=(0.0, 1.0)),
    ),
    Column(
        "utilization",
        "<f8",
        "",
        "wire bytes the bottleneck sent in the window x 8 / (link rate x window seconds), at most 1",
        Shown("utilization", "%", 2),
        Plotted("link utilization", bounds=(0.0, 1.0)),
    ),
    Column(
        "total_goodput_bps",
        "<f8",
        "bit/s",
        "sum of the goodput of the flows in the window",
        Shown("total goodput", "Mbps", 3),
        Plotted("total goodput", "Mbit/s", NON_NEGATIVE),
    ),
    Column(
        "queue_sojourn_p50_ns",
        "<f8",
        "ns",
        "median time the packets that left the bottleneck queue in the window spent in it",
        Shown("queue sojourn p50", "ms", 2),
        Plotted("median queue sojourn", "ms", NON_NEGATIVE),
    ),
    Column(
        "queue_sojourn_p99_ns",
        "<f8",
        "ns",
        "99th percentile of the same sojourn times",
        Shown("queue sojourn p99", "ms", 2),
        Plotted("p99 queue sojourn", "ms", NON_NEGATIVE),
    ),
    Column(
        "queue_sojourn_mean_ns",
        "<f8",
        "ns",
        "mean of the same sojourn times: with the percentiles, whether a queue holds its delay or spikes",
        Shown("queue sojourn mean", "ms", 2),
        Plotted("mean queue sojourn", "ms", NON_NEGATIVE),
        added_in=4,
    ),
    Column(
        "drops",
        "<i8",
        "packets",
        "packets dropped in the window, at the queue plus on the paths",
        Shown("drops"),
        Plotted("drops", "packets", NON_NEGATIVE),
    ),
    Column(
        "retransmissions",
        "<i8",
        "packets",
        "segments retransmitted in the window",
        Shown("retransmissions"),
        Plotted("retransmissions", "packets", NON_NEGATIVE),
    ),
    Column(
        "marks",
        "<i8",
        "packets",
        "packets CE-marked in the window (drops and marks side by side are how an AQM signals: by loss or "
        "by ECN)",
        Shown("CE marks"),
        Plotted("CE marks", "packets", NON_NEGATIVE),
        ecn=True,
    ),
    Column(
        "marking_ratio",
        "<f8",
        "",
        "marks / segments sent in the window",
        Shown("marking ratio", "%", 2),
        Plotted("CE marking ratio", bounds=(0.0, 1.0)),
        ecn=True,
    ),
    Column(
        "queue_sojourn_l4s_p99_ns",
        "<f8",
        "ns",
        "99th percentile sojourn of L4S flows' packets (ECN mode l4s, ECT(1)); null without any: with "
        "the next, the two queues' delays under a DualQ AQM such as DualPI2",
        Shown("L4S sojourn p99", "ms", 2, missing="- (no L4S packet)"),
        Plotted("p99 L4S queue sojourn", "ms", NON_NEGATIVE),
        ecn=True,
    ),
    Column(
        "queue_sojourn_classic_p99_ns",
        "<f8",
        "ns",
        "99th percentile sojourn of the other flows' packets; null without any",
        Shown("classic sojourn p99", "ms", 2, missing="- (no classic packet)"),
        Plotted("p99 classic queue sojourn", "ms", NON_NEGATIVE),
        ecn=True,
    ),
    Column(
        "fness",
        "<f8",
        "",
        "two-flow runs only: fness of flow 0 against flow 1 on window delivered bytes "
        "(ccfair.analysis.fairness.fness: 0 fair, -1 flow 0 takes everything, +1 flow 1 does)",
        Shown("fness (flow 0 vs 1)", digits=3),
        Plotted("fness (flow 0 vs flow 1)", bounds=(-1.0, 1.0)),
        always=False,
    ),
    Column(
        "window_backlog_bytes",
        "<i8",
        "bytes",
        "payload that had crossed the bottleneck but not reached the application when the window opened "
        "(held out of order by the receivers, or on its way to them; null where the backend does not "
        "measure it). Exactly: window delivered bytes <= (wire bytes the link sent in the window / MTU) x "
        "MSS + window_backlog_bytes",
    ),
    Column(
        "window_short",
        "|b1",
        "",
        "the window is too short for a stable goodput: shorter than 10 RTTs of the slowest flow in the "
        "window (its base RTT, or its mean measured RTT if larger), or window_backlog_bytes is more than "
        "2 % of the payload the link carries over the window (ccfair run prints a note then)",
    ),
    Column(
        "events",
        "<i8",
        "",
        "simulator events processed (kernel: frames the emulator forwarded)",
        Shown("events"),
        Plotted("simulator events", bounds=NON_NEGATIVE),
    ),
    Column(
        "wall_seconds",
        "<f8",
        "s",
        "wall-clock time of the run",
        Shown("wall time", "s", 3),
        Plotted("simulation wall time", "s", NON_NEGATIVE),
    ),
)
"""The keys of a run's summary, in order."""

FLOW_NAMES = tuple(c.name for c in _FLOWS)
"""The flow table's leading columns, in order (every other native flow column follows them)."""
CLASS_NAMES = tuple(c.name for c in CLASSES)
SUMMARY_KEYS = tuple(c.name for c in SUMMARY)


@cache
def flows() -> tuple[Column, ...]:
    """The flow table's leading columns, those passed through from the native flow table with the dtype,
    unit and meaning of its schema."""
    native = {c["name"]: c for c in output_table("flows")}
    return tuple(
        replace(c, dtype=native[c.name]["dtype"], unit=native[c.name]["unit"], doc=native[c.name]["doc"])
        if c.native
        else c
        for c in _FLOWS
    )


def shown(columns: tuple[Column, ...]) -> tuple[Column, ...]:
    """The columns text tables show, in order."""
    return tuple(c for c in columns if c.shown is not None)


def json_keys(columns: tuple[Column, ...]) -> tuple[str, ...]:
    """The keys of ``ccfair run --json``'s records of a table."""
    return tuple(c.name for c in columns if c.json)


def plotted() -> dict[str, Column]:
    """Every value a figure can show, by name: the summary's, then the classes' and the flows' (a name in
    several tables is labelled alike: the first one labelled is taken)."""
    out: dict[str, Column] = {}
    for c in (*SUMMARY, *CLASSES, *_FLOWS):
        if c.plotted is not None:
            out.setdefault(c.name, c)
    return out


def tables() -> list[dict[str, Any]]:
    """The derived tables as the catalog lists the native ones: name, doc and columns (name, dtype, unit,
    doc)."""
    return [
        {
            "name": "flows",
            "doc": "one row per flow: these columns first, then every other column of the native flow table",
            "columns": flows(),
        },
        {
            "name": "classes",
            "doc": "one row per (cc, rtt_ns) class of the flows in the window",
            "columns": CLASSES,
        },
        {
            "name": "summary",
            "doc": "run-level metrics (JSON numbers and booleans; null where undefined)",
            "columns": SUMMARY,
        },
    ]
