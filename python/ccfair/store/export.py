"""``ccfair export``: the catalog tables and the time series of done runs as one Parquet or CSV file per
table, written into a temporary directory and renamed into place (an interrupted export leaves nothing).

The catalog connection has no file access (:data:`ccfair.store.layout.SAFE_CONFIG`): each table streams
out of it as Arrow batches into a second, in-memory DuckDB that writes the file and runs nothing but the
``COPY`` here.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Sequence
from contextlib import closing
from pathlib import Path

import duckdb

from ccfair.errors import ScenarioError
from ccfair.result import _new_sibling, _replace_dir
from ccfair.store.layout import SERIES_TABLES
from ccfair.store.reader import CATALOG_TABLES, catalog_errors, open_catalog
from ccfair.store.schema import quote

FORMATS = {"parquet": "(FORMAT parquet)", "csv": "(FORMAT csv, HEADER true)"}
EXPORT_TABLES = (*CATALOG_TABLES, *SERIES_TABLES)
BATCH_ROWS = 100_000


def default_target(root: Path, fmt: str) -> Path:
    return root / f"export-{fmt}"


def export(
    root: str | Path,
    fmt: str,
    target: str | Path | None = None,
    tables: Sequence[str] = EXPORT_TABLES,
    progress: Callable[[str, int], None] | None = None,
    progress_bar: bool = False,
) -> dict[str, int]:
    """Writes ``<table>.<fmt>`` for each table that exists into ``target`` (default ``ROOT/export-FMT``),
    replacing an earlier export atomically. Returns rows per file written; ``progress(table, rows)`` is
    called after each; ``progress_bar`` shows DuckDB's bar (on stdout) during long copies."""
    if fmt not in FORMATS:
        raise ScenarioError("--format", f"expected one of {', '.join(FORMATS)}, got {fmt!r}")
    for table in tables:
        if table not in EXPORT_TABLES:
            raise ScenarioError("--tables", f"unknown table {table!r}; tables: {', '.join(EXPORT_TABLES)}")
    directory = Path(root)
    out = Path(target) if target is not None else default_target(directory, fmt)
    if out.exists() and not out.is_dir():
        raise ScenarioError("--to", f"{out} exists and is not a directory")
    con = open_catalog(directory, [t for t in SERIES_TABLES if t in tables])
    written: dict[str, int] = {}
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = _new_sibling(out.absolute(), "tmp")
    try:
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
                rows = con.sql(f"SELECT * FROM {quote(table)}{order}").to_arrow_reader(BATCH_ROWS)
                writer.register("rows", rows)
                copied = writer.execute(f"COPY (SELECT * FROM rows) TO '{escaped}' {FORMATS[fmt]}").fetchone()
                writer.unregister("rows")
                _fsync(path)
                written[table] = int(copied[0]) if copied else 0
                if progress is not None:
                    progress(table, written[table])
        _replace_dir(tmp, out.absolute())
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    finally:
        con.close()
    return written


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
