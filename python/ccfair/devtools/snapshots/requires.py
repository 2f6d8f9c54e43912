"""Preconditions on a snapshot, so that a case cannot silently stop exercising what it claims.

A requirement compares two quantities, or a quantity and an integer::

    sum(total.rto_events) > 0            # sum, min or max over the flows of a per-flow table's column
    window[1].delivered_bytes == 0       # one flow's cell
    run.window_marks > 0                 # a run counter
    series[0].cc_modes has 3             # a '>'-separated list of values (modes, states) contains one
    series[0].ssthresh_first_t_ns < series[0].drop_first_t_ns

Per-flow tables are ``window``, ``total`` and ``series``; their rows are the flows, by id.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable
from dataclasses import dataclass

from ccfair.devtools.snapshots.table import Snapshot

FLOW_TABLES = ("window", "total", "series")
_TABLES = "|".join(FLOW_TABLES)
_QUANTITY = rf"run\.\w+|(?:{_TABLES})\[\d+\]\.\w+|(?:sum|min|max)\((?:{_TABLES})\.\w+\)"
_REQUIREMENT = re.compile(rf"\s*({_QUANTITY})\s+(==|!=|<=|>=|<|>|has)\s+({_QUANTITY}|-?\d+)\s*")
_ONE = re.compile(r"(run)\.(\w+)|(\w+)\[(\d+)\]\.(\w+)")
_AGGREGATE = re.compile(r"(sum|min|max)\((\w+)\.(\w+)\)")
_COMPARE: dict[str, Callable[[int, int], bool]] = {
    "==": operator.eq,
    "!=": operator.ne,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}
_AGGREGATES: dict[str, Callable[[list[int]], int]] = {"sum": sum, "min": min, "max": max}


@dataclass(frozen=True)
class Requirement:
    text: str
    left: str
    op: str
    right: str


def parse_requirement(text: str) -> Requirement:
    """Checks the syntax; raises ValueError saying what is allowed."""
    m = _REQUIREMENT.fullmatch(text)
    if not m:
        raise ValueError(
            f"cannot read {text!r}: expected 'QUANTITY OP QUANTITY-OR-INTEGER' with OP one of "
            "== != < <= > >= has, and QUANTITY run.NAME, TABLE[FLOW].COLUMN or sum|min|max(TABLE.COLUMN), "
            f"TABLE one of {', '.join(FLOW_TABLES)}"
        )
    return Requirement(text=text, left=m.group(1), op=m.group(2), right=m.group(3))


def failed_requirements(snapshot: Snapshot, requirements: tuple[str, ...]) -> list[str]:
    """The requirements ``snapshot`` does not meet, each with the values it compared."""
    out = []
    for text in requirements:
        r = parse_requirement(text)
        try:
            left, right = _value(snapshot, r.left), _operand(snapshot, r.right)
            if r.op == "has":
                ok = right in left.split(">")
            else:
                ok = _COMPARE[r.op](_integer(left, r.left), _integer(right, r.right))
        except LookupError as e:
            out.append(f"{text}: {e.args[0]}")
            continue
        if not ok:
            values = f"{r.left} = {left}" + ("" if _is_integer(r.right) else f", {r.right} = {right}")
            out.append(f"{text}: not met ({values})")
    return out


def _is_integer(text: str) -> bool:
    return re.fullmatch(r"-?\d+", text) is not None


def _operand(snapshot: Snapshot, text: str) -> str:
    return text if _is_integer(text) else _value(snapshot, text)


def _integer(cell: str, what: str) -> int:
    if not _is_integer(cell):
        raise LookupError(f"{what} is {cell!r}, not an integer")
    return int(cell)


def _value(snapshot: Snapshot, quantity: str) -> str:
    """The cell (or aggregate, as text) a quantity names; LookupError if the snapshot lacks it."""
    m = _AGGREGATE.fullmatch(quantity)
    if m:
        fn, table, column = m.groups()
        cells = _column(snapshot, table, column)
        return str(_AGGREGATES[fn]([_integer(c, quantity) for c in cells]))
    m = _ONE.fullmatch(quantity)
    if m is None:  # parse_requirement admits nothing else
        raise LookupError(f"{quantity} is not a quantity")
    if m.group(1):
        table, key, column = "run", m.group(2), "value"
    else:
        table, key, column = m.group(3), m.group(4), m.group(5)
    section = snapshot.section(table)
    row = section.row(key) if section is not None else None
    if row is None or column not in row:
        raise LookupError(f"the snapshot has no {quantity}")
    return row[column]


def _column(snapshot: Snapshot, table: str, column: str) -> list[str]:
    section = snapshot.section(table)
    if section is None or column not in section.columns:
        raise LookupError(f"the snapshot has no column {table}.{column}")
    i = section.columns.index(column)
    return [r[i] for r in section.rows]
