"""``ccfair export``: the catalog tables and the time series of done runs as one Parquet or CSV file per
table, written into a temporary directory and renamed into place (an interrupted export leaves nothing;
only an earlier export is ever replaced).

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
from ccfair.errors import ScenarioError
from ccfair.store.layout import CATALOG_FILE, SERIES_TABLES
from ccfair.store.reader import CATALOG_TABLES, catalog_errors, open_catalog
from ccfair.store.schema import quote

FORMATS = {"parquet": "(FORMAT parquet)", "csv": "(FORMAT csv, HEADER true)"}
EXPORT_TABLES = (*CATALOG_TABLES, *SERIES_TABLES)
BATCH_ROWS = 100_000


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
    a ScenarioError on ``--to`` otherwise (see :func:`ccfair.fsio.check_dir`)."""
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
        raise ScenarioError("--format", f"expected one of {', '.join(FORMATS)}, got {fmt!r}")
    for table in tables:
        if table not in EXPORT_TABLES:
            raise ScenarioError("--tables", f"unknown table {table!r}; tables: {', '.join(EXPORT_TABLES)}")
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
                rows = con.sql(f"SELECT * FROM {quote(table)}{order}").to_arrow_reader(BATCH_ROWS)
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
