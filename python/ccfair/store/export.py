"""``ccfair export``: the catalog tables and the time series of done runs as one Parquet or CSV file per
table, written into a temporary directory and renamed into place (an interrupted export leaves nothing;
only an earlier export is ever replaced).

``flows`` and ``classes`` carry, as ``Results.flows`` does, each run's place in its plan (``plan``, ``cell``,
``repetition``, ``flipped``) and the plan's axis columns with their numeric companions, after ``run_id``.

The catalog connection has no file access (:data:`ccfair.store.layout.SAFE_CONFIG`): each table streams
out of it as Arrow batches into a second, in-memory DuckDB that writes the file and runs nothing but the
``COPY`` here.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import closing
from pathlib import Path

import duckdb

from ccfair import fsio
from ccfair.errors import InputError
from ccfair.store.check import plan_definition
from ccfair.store.coordinates import PLACE_COLUMNS, companion_columns
from ccfair.store.layout import CATALOG_FILE, SERIES_TABLES
from ccfair.store.reader import CATALOG_TABLES, catalog_errors, open_catalog
from ccfair.store.schema import quote
from ccfair.sweep.paths import column_name

FORMATS = {"parquet": "(FORMAT parquet)", "csv": "(FORMAT csv, HEADER true)"}
EXPORT_TABLES = (*CATALOG_TABLES, *SERIES_TABLES)
BATCH_ROWS = 100_000


PLACED_TABLES = ("flows", "classes")


def _placed_select(con: duckdb.DuckDBPyConnection, table: str) -> str:
    """The rows of ``table`` with their runs' place in the plan and the plans' axis columns (and their
    companions) after ``run_id``, in plan, cell, repetition and start order, each run's rows as stored."""

    def columns(name: str) -> list[str]:
        return [r[0] for r in con.execute(f"DESCRIBE {quote(name)}").fetchall()]

    own, runs = columns(table), columns("runs")
    definitions = [
        plan_definition(text, f"plans.definition of {name!r}")
        for name, text in con.execute("SELECT plan, definition FROM plans ORDER BY plan").fetchall()
    ]
    paths = [p for d in definitions for axis in d.get("axes", []) for p in axis["paths"]]
    axes = [c for c in dict.fromkeys(column_name(p) for p in paths) if c in runs and c not in own]
    joined: list[str] = [c for c in PLACE_COLUMNS if c in runs]
    for axis in axes:
        joined += [axis, *sorted(companion_columns(runs, [axis]))]
    picked = ", ".join(f"r.{quote(c)}" for c in joined)
    keys = ", ".join(f"r.{quote(c)}" for c in PLACE_COLUMNS if c in runs)
    return (
        f"SELECT t.run_id, {picked}, t.* EXCLUDE (run_id) FROM {quote(table)} t JOIN runs r USING (run_id) "
        f"ORDER BY {keys}, t.rowid"
    )


def default_target(root: Path, fmt: str) -> Path:
    return root / f"export-{fmt}"


def _is_unmarked_export(directory: Path, entries: Sequence[str]) -> bool:
    """An export written before ccfair marked its directories: at its default place in a results directory
    (``ROOT/export-FMT``), holding nothing but table files of that format."""
    fmt = directory.name.removeprefix("export-")
    return (
        fmt in FORMATS
        and (directory.parent / CATALOG_FILE).is_file()
        and all(e in {f"{table}.{fmt}" for table in EXPORT_TABLES} for e in entries)
    )


EXPORT_KIND = fsio.Kind("export", "an export", legacy=_is_unmarked_export)


def check_target(root: str | Path, fmt: str, target: str | Path | None = None) -> Path:
    """The export's directory (default ``ROOT/export-FMT``), resolved, if an export may be written there;
    an InputError on ``--to`` otherwise (see :func:`ccfair.fsio.check_dir`)."""
    out = Path(target) if target is not None else default_target(Path(root), fmt)
    return fsio.check_dir(out, EXPORT_KIND, "--to")


def export(
    root: str | Path,
    fmt: str,
    target: str | Path | None = None,
    tables: Sequence[str] = EXPORT_TABLES,
    progress: Callable[[str, int], None] | None = None,
    progress_bar: bool = False,
) -> dict[str, int]:
    """Writes ``<table>.<fmt>`` for each table that exists into ``target`` (default ``ROOT/export-FMT``),
    replacing an earlier export atomically; any other existing directory is refused (an export holds
    ccfair's marker file, see :mod:`ccfair.fsio`). Returns rows per file written; ``progress(table,
    rows)`` is called after each; ``progress_bar`` shows DuckDB's bar (on stdout) during long copies."""
    if fmt not in FORMATS:
        raise InputError("--format", f"expected one of {', '.join(FORMATS)}, got {fmt!r}")
    for table in tables:
        if table not in EXPORT_TABLES:
            raise InputError("--tables", f"unknown table {table!r}; tables: {', '.join(EXPORT_TABLES)}")
    out = check_target(root, fmt, target)
    directory = Path(root)
    con = open_catalog(directory, [t for t in SERIES_TABLES if t in tables])
    written: dict[str, int] = {}

    def fill(tmp: Path) -> None:
        with closing(duckdb.connect()) as writer, catalog_errors(directory):
            writer.execute(f"SET enable_progress_bar = {str(progress_bar).lower()}")
            present = {
                r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()
            }
            for table in tables:
                if table not in present:
                    continue
                path = tmp / f"{table}.{fmt}"
                escaped = str(path).replace("'", "''")
                order = {
                    "timeseries": " ORDER BY run_id, t_ns, flow_id",
                    "queue": " ORDER BY run_id, t_ns",
                }.get(table, "")
                select = f"SELECT * FROM {quote(table)}{order}"
                if table in PLACED_TABLES:
                    select = _placed_select(con, table)
                rows = con.sql(select).to_arrow_reader(BATCH_ROWS)
                writer.register("rows", rows)
                copied = writer.execute(f"COPY (SELECT * FROM rows) TO '{escaped}' {FORMATS[fmt]}").fetchone()
                writer.unregister("rows")
                fsio.fsync_file(path)
                written[table] = int(copied[0]) if copied else 0
                if progress is not None:
                    progress(table, written[table])

    try:
        fsio.write_dir(out, EXPORT_KIND, fill, "--to", failures=(OSError, duckdb.IOException))
    finally:
        con.close()
    return written
