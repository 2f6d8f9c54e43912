"""Plan coordinates for analysis: every run's position in its plan joined onto its ``flows`` and
``classes`` rows, and numeric companions of axes written with units.

A plan's values are stored as written (``link.buffer`` = ``"0.5bdp"``), which sorts as text (``"10bdp"``
before ``"2bdp"``). Each such axis column gets a numeric companion in base units, named by its unit:

- ``"0.5bdp"`` -> ``<column>_bdp`` 0.5 (a multiple of the bandwidth-delay product)
- ``"10Mbps"`` -> ``<column>_bps``, ``"50ms"`` -> ``<column>_ns``, ``"64KiB"`` -> ``<column>_bytes``,
  ``"1000pkt"`` -> ``<column>_packets``

A companion exists only when every value of the column parses in the same unit, and is left out where the
table has the resolved scenario's column of that name (``link.rate`` -> ``link_rate_bps``, the same
numbers). A sweep writes it into the catalog's ``runs`` too (BIGINT, DOUBLE for ``_bdp``), so that SQL
orders by it; here such a column is placed beside its axis and its gaps (runs committed before it) filled.
Numbers, counts and booleans are stored as numbers already and get none.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

import pandas as pd

from ccfair.errors import InputError
from ccfair.store.schema import RESERVED_COLUMNS
from ccfair.units import (
    parse_bdp_multiple,
    parse_duration_ns,
    parse_packets,
    parse_rate_bps,
    parse_size_bytes,
)

# (suffix, parser to base units), tried in order; all values of a column must parse with the same one.
UNIT_READERS: tuple[tuple[str, Callable[[str], float | int]], ...] = (
    ("bdp", lambda v: parse_bdp_multiple(v, "")),
    ("packets", lambda v: parse_packets(v, "")),
    ("bps", lambda v: parse_rate_bps(v, "")),
    ("ns", lambda v: parse_duration_ns(v, "", allow_zero=True)),
    ("bytes", lambda v: parse_size_bytes(v, "")),
)
# The columns that place a run in its plan, first in every joined table.
PLACE_COLUMNS = ("plan", "cell", "repetition", "flipped")


def companion(column: str, values: pd.Series) -> tuple[str, pd.Series] | None:
    """``(name, numbers)`` of the numeric companion of a text column of unit strings, or None."""
    if not (pd.api.types.is_string_dtype(values) or values.dtype == object):
        return None
    present = values.dropna().unique()
    if len(present) == 0 or not all(isinstance(v, str) for v in present):
        return None
    for suffix, read in UNIT_READERS:
        try:
            parsed = {v: read(v) for v in present}
        except InputError:
            continue
        return f"{column}_{suffix}", values.map(parsed)
    return None


def with_companions(frame: pd.DataFrame, axis_columns: Iterable[str]) -> pd.DataFrame:
    """``frame`` with each axis column's companion placed right after it (see the module docstring)."""
    out = frame
    for column in axis_columns:
        if column not in out.columns:
            continue
        found = companion(column, out[column])
        if found is None:
            continue
        name, numbers = found
        if name in out.columns and name in RESERVED_COLUMNS:
            continue  # the resolved scenario's column of that name holds the same numbers (link_rate_bps)
        if name in out.columns:
            # The catalog's own companion (a sweep writes it): beside its axis, with its gaps (rows
            # committed before it existed) filled.
            out = out.copy() if out is frame else out
            present = out.pop(name)
            if present.isna().any():
                present = present.astype("float64").fillna(numbers.astype("float64"))
            out.insert(out.columns.get_loc(column) + 1, name, present)
            continue
        out = out.copy() if out is frame else out
        out.insert(out.columns.get_loc(column) + 1, name, numbers)
    return out


def companion_columns(columns: Sequence[str], axis_columns: Iterable[str]) -> set[str]:
    """Which of ``columns`` are companions of the axis columns (so not axes or metrics themselves)."""
    names = set(columns)
    suffixes = [s for s, _ in UNIT_READERS]
    return {f"{a}_{s}" for a in axis_columns for s in suffixes} & names


def join_coordinates(table: pd.DataFrame, runs: pd.DataFrame, axis_columns: Sequence[str]) -> pd.DataFrame:
    """``table`` (rows keyed by ``run_id``) with its runs' place in their plan and the plan's coordinates
    (with their companions) in front, sorted by plan, cell, repetition and start order; the table's own
    order within a run is kept."""
    if "run_id" not in table.columns:
        return table
    place = [c for c in PLACE_COLUMNS if c in runs.columns]
    axes = [c for c in axis_columns if c in runs.columns and c not in table.columns]
    coordinates = runs[["run_id", *place, *axes]]
    joined = table.reset_index(names="_row").merge(coordinates, on="run_id", how="left")
    order = ["run_id", *place, *axes]
    joined = joined[[*order, *(c for c in joined.columns if c not in order)]]
    keys = [c for c in ("plan", "cell", "repetition", "flipped") if c in joined.columns] + ["_row"]
    joined = joined.sort_values(keys, kind="stable").drop(columns="_row").reset_index(drop=True)
    return with_companions(joined, axes)
