"""The catalog's tables and how their columns are typed. The column reference is in :mod:`ccfair.store`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ccfair.analysis.schema import SUMMARY
from ccfair.sweep.identity import canonical_json

# The catalog's schema versions: 1, the first catalog; 2, ``runs`` records each series file's size and
# SHA-256 (FILE_COLUMNS); 3, ``runs`` records the build of the native module that made each run
# (BUILD_COLUMNS); from 4 on, ``runs`` has a column for each summary value whose declaration in
# ccfair.analysis.schema says it was added in that version. The writer adds the missing columns to an older
# catalog (null for the runs committed before) and readers accept every version up to SCHEMA_VERSION.

# Size and SHA-256 (hex) of a done run's two Parquet files, recorded at commit and checked on reading.
FILE_COLUMNS: tuple[tuple[str, str], ...] = (
    ("timeseries_bytes", "BIGINT"),
    ("timeseries_sha256", "VARCHAR"),
    ("queue_bytes", "BIGINT"),
    ("queue_sha256", "VARCHAR"),
)

# The native module's build (SHA-256 of the extension file, 16 hex digits) beside the git revision.
BUILD_COLUMNS: tuple[tuple[str, str], ...] = (("native_build", "VARCHAR"),)
# The schema version that introduced each column of ``runs`` not in the first catalog.
ADDED_IN: dict[str, int] = {
    **{n: 2 for n, _ in FILE_COLUMNS},
    **{n: 3 for n, _ in BUILD_COLUMNS},
    **{c.name: c.added_in for c in SUMMARY if c.added_in > 1},
}
SCHEMA_VERSION = max(ADDED_IN.values())
# Every summary value has a DOUBLE column (booleans and text stay in summary_json).
SUMMARY_COLUMNS = tuple(c.name for c in SUMMARY)

RUN_COLUMNS: tuple[tuple[str, str], ...] = (
    ("run_id", "VARCHAR PRIMARY KEY"),
    ("status", "VARCHAR NOT NULL"),
    ("error_kind", "VARCHAR"),
    ("error", "VARCHAR"),
    ("plan", "VARCHAR"),
    ("cell", "INTEGER"),
    ("repetition", "INTEGER"),
    ("flipped", "BOOLEAN"),
    ("seed", "BIGINT"),
    ("duration_ns", "BIGINT"),
    ("link_rate_bps", "BIGINT"),
    ("buffer_packets", "BIGINT"),
    ("buffer_bytes", "BIGINT"),
    ("aqm", "VARCHAR"),
    ("mtu_bytes", "INTEGER"),
    ("flow_count", "INTEGER"),
    *((key, "DOUBLE") for key in SUMMARY_COLUMNS),
    ("scenario_json", "VARCHAR"),
    ("summary_json", "VARCHAR"),
    ("ccfair_version", "VARCHAR"),
    ("git_revision", "VARCHAR"),
    *BUILD_COLUMNS,
    ("backend", "VARCHAR"),
    ("executor", "VARCHAR"),
    ("host", "VARCHAR"),
    ("worker", "VARCHAR"),
    ("started_at", "TIMESTAMP"),
    ("task_wall_seconds", "DOUBLE"),
    ("encode_seconds", "DOUBLE"),
    ("committed_at", "TIMESTAMP"),
    *FILE_COLUMNS,
)

# The columns of the tables whose columns never change (what the catalog check expects exactly).
TABLE_COLUMNS: dict[str, tuple[tuple[str, str], ...]] = {
    "meta": (("key", "VARCHAR"), ("value", "VARCHAR")),
    "plans": (
        ("plan", "VARCHAR"),
        ("source", "VARCHAR"),
        ("definition", "VARCHAR"),
        ("cells", "INTEGER"),
        ("runs", "INTEGER"),
        ("registered_at", "TIMESTAMP"),
    ),
    "cells": (
        ("plan", "VARCHAR"),
        ("run_index", "INTEGER"),
        ("cell", "INTEGER"),
        ("repetition", "INTEGER"),
        ("flipped", "BOOLEAN"),
        ("run_id", "VARCHAR"),
    ),
}

DDL = (
    "CREATE TABLE meta (key VARCHAR PRIMARY KEY, value VARCHAR)",
    """CREATE TABLE plans (
        plan VARCHAR PRIMARY KEY, source VARCHAR, definition VARCHAR, cells INTEGER, runs INTEGER,
        registered_at TIMESTAMP)""",
    """CREATE TABLE cells (
        plan VARCHAR NOT NULL, run_index INTEGER NOT NULL, cell INTEGER NOT NULL, repetition INTEGER NOT NULL,
        flipped BOOLEAN NOT NULL, run_id VARCHAR NOT NULL, PRIMARY KEY (plan, run_index))""",
    "CREATE TABLE runs ({})".format(", ".join(f"{n} {t}" for n, t in RUN_COLUMNS)),
)

RESERVED_COLUMNS = frozenset(n for n, _ in RUN_COLUMNS)


def quote(name: str) -> str:
    """A SQL identifier."""
    return '"' + name.replace('"', '""') + '"'


def scenario_columns(spec: Mapping[str, Any] | None) -> dict[str, Any]:
    """Unit-free columns of the resolved scenario, for grouping and plotting without parsing unit strings."""
    if spec is None:
        return {}
    link = spec["link"]
    limit = link["aqm"]["limit"]
    return {
        "duration_ns": spec["duration_ns"],
        "link_rate_bps": link["rate_bps"],
        "buffer_packets": limit.get("packets"),
        "buffer_bytes": limit.get("bytes"),
        "aqm": link["aqm"]["name"],
        "mtu_bytes": link["mtu_bytes"],
        "flow_count": sum(g["count"] for g in spec["groups"]),
    }


def value_type(values: Sequence[Any]) -> str:
    """The SQL type of a coordinate column holding ``values`` (plan values: TOML scalars or tables)."""
    if all(isinstance(v, bool) for v in values):
        return "BOOLEAN"
    if all(isinstance(v, int) and not isinstance(v, bool) for v in values):
        return "BIGINT"
    if all(isinstance(v, int | float) and not isinstance(v, bool) for v in values):
        return "DOUBLE"
    return "VARCHAR"


def fits(existing: str, wanted: str) -> bool:
    """Whether values typed ``wanted`` can go into a column of type ``existing``."""
    return existing == wanted or existing == "VARCHAR" or (existing == "DOUBLE" and wanted == "BIGINT")


def column_value(value: Any, sql_type: str) -> Any:
    """A plan value as stored in a column of ``sql_type`` (text columns hold strings as they are and other
    values as JSON)."""
    if sql_type == "VARCHAR" and not isinstance(value, str):
        return canonical_json(value)
    return value


def metric_value(value: Any) -> float | None:
    """A summary value for its DOUBLE column (None stays NULL; booleans and text are left to summary_json)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)
