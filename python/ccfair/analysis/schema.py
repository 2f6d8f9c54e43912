"""The derived tables' schema: every column the analysis adds to a run's native output, declared once (in
``schema.toml`` beside this module, read here into :class:`Column` values).

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

A new summary value is one ``[[summary]]`` entry in ``schema.toml`` (``added_in`` one above the store's
current schema version) and its computation in :func:`ccfair.analysis.metrics.run_summary`.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path
from typing import Any

from ccfair.catalog import output_table

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


SCHEMA_FILE = Path(__file__).with_name("schema.toml")
"""The columns themselves, table by table and in order: a declaration per column, read once at import."""


def _column(entry: dict[str, Any]) -> Column:
    """One column from its declaration in :data:`SCHEMA_FILE` (a native flow column has no dtype, unit or
    meaning of its own there: :func:`flows` takes them from the native schema)."""
    fields = dict(entry)
    shown = fields.pop("shown", None)
    plotted = fields.pop("plotted", None)
    if fields.get("native", False):
        fields = {"dtype": "", "unit": "", "doc": "", **fields}
    if plotted is not None and "bounds" in plotted:
        plotted = {**plotted, "bounds": tuple(plotted["bounds"])}
    return Column(
        **fields,
        shown=None if shown is None else Shown(**shown),
        plotted=None if plotted is None else Plotted(**plotted),
    )


def _declared() -> dict[str, tuple[Column, ...]]:
    with SCHEMA_FILE.open("rb") as f:
        document = tomllib.load(f)
    return {
        table: tuple(_column(entry) for entry in document[table]) for table in ("flows", "classes", "summary")
    }


_DECLARED = _declared()
_FLOWS = _DECLARED["flows"]
"""The flow table's leading columns as declared (the native ones without their dtype, unit and meaning)."""
CLASSES = _DECLARED["classes"]
"""The columns of the ``classes`` table, in order."""
SUMMARY = _DECLARED["summary"]
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
