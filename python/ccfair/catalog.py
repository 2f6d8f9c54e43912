"""The native catalog of congestion controls and queue disciplines, the single source of their names and
parameters (nothing here repeats a parameter list), and of the output schema: every table's columns with
dtype, unit, meaning and the backends that fill them."""

from __future__ import annotations

import json
from functools import cache
from typing import Any

from ccfair import _native


@cache
def catalog() -> dict[str, Any]:
    """``{"congestion_controls": [...], "queue_disciplines": [...], "limits": {...}, "output": [...]}`` as
    documented by ``_native.catalog``; ``output`` lists the tables (``flows``, ``timeseries``, ``queue``,
    ``totals``), each with its columns: ``name``, ``dtype`` (NumPy's, or ``str``), ``unit``, ``doc``,
    ``backends`` (``sim``, ``kernel``), ``kernel_note`` and ``kernel_dtypes``."""
    data: dict[str, Any] = json.loads(_native.catalog())
    return data


def queue_discipline(name: str) -> dict[str, Any] | None:
    """The catalog entry of the queue discipline ``name``, or None."""
    for q in catalog()["queue_disciplines"]:
        if q["name"] == name:
            entry: dict[str, Any] = q
            return entry
    return None


def queue_discipline_names() -> list[str]:
    return [q["name"] for q in catalog()["queue_disciplines"]]


L4S_QUEUE_DISCIPLINES = frozenset({"dualpi2", "vdq_csaqm"})
"""The queue disciplines with a queue of their own for L4S packets (ECT(1)) beside the classic one: DualPI2's
L-queue, VDQ-CSAQM's L4S queue. Step marking is L4S-style marking of a single queue and is not one."""


def has_l4s_queue(name: str) -> bool:
    """Whether the queue discipline ``name`` keeps L4S packets in a queue of their own, so that a run
    through it has two queues' sojourns to report, an empty L-queue included."""
    return name in L4S_QUEUE_DISCIPLINES


def output_table(name: str) -> list[dict[str, Any]]:
    """The columns of output table ``name`` (``flows``, ``timeseries``, ``queue``, ``totals``), in output
    order; kernel-only columns last."""
    for t in catalog()["output"]:
        if t["name"] == name:
            columns: list[dict[str, Any]] = t["columns"]
            return columns
    raise KeyError(f"no output table {name!r}")
