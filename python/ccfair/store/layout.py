"""Where things live in a results directory, and opening its catalog.

::

    results/
      catalog.duckdb                          the catalog: plans, cells, runs, flows, classes
      series/<first 2 hex of run_id>/<run_id>.timeseries.parquet   per-flow time series of one run
      series/<first 2 hex of run_id>/<run_id>.queue.parquet        bottleneck queue time series of one run
      status.json                             progress of the sweep writing right now (see ``ccfair status``)
      .ccfair.json                            the marker: a ccfair results directory (``ccfair.fsio``)

A sweep writes only into a directory that is new, empty, or a results directory already (its marker, or
the catalog of one written before markers); see :data:`RESULTS_KIND`.

A results directory is untrusted input (results are exchanged between people): the catalog is opened with
DuckDB's external access off and its configuration locked (no file or network access beyond the catalog
file, no extensions installed or loaded), run ids are checked before they become paths, and series files
are opened without following symbolic links.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import duckdb

from ccfair import fsio
from ccfair.errors import ScenarioError

CATALOG_FILE = "catalog.duckdb"
STATUS_FILE = "status.json"
SERIES_DIR = "series"
SERIES_TABLES = ("timeseries", "queue")
TMP_MARK = ".tmp-"  # temporary files are hidden and carry this mark (``ccfair.fsio.temporary_name``)
RUN_ID = re.compile(r"[0-9a-f]{32}")

# What a catalog connection may do: nothing outside the catalog file. Every setting is fixed when the
# database opens and locked, so no SQL (a user's query, a view in a crafted catalog) can turn it back on.
# Arrow tables and datasets registered from Python stay readable: the time series reach DuckDB that way.
SAFE_CONFIG = {
    "enable_external_access": False,
    "autoinstall_known_extensions": False,
    "autoload_known_extensions": False,
    "lock_configuration": True,
}


def _is_unmarked_results(directory: Path, entries: Sequence[str]) -> bool:
    """A results directory written before ccfair marked its directories: it holds a catalog."""
    return CATALOG_FILE in entries


RESULTS_KIND = fsio.Kind("results", "a results directory", legacy=_is_unmarked_results)


class StoreBusy(ScenarioError):
    """The catalog is held by another process (a running sweep)."""


def catalog_path(root: Path) -> Path:
    return root / CATALOG_FILE


def is_run_id(value: object) -> bool:
    return isinstance(value, str) and RUN_ID.fullmatch(value) is not None


def check_run_id(run_id: object, field: str = "run_id") -> str:
    """``run_id`` if it is one (32 lowercase hex characters, the form :mod:`ccfair.sweep.identity`
    makes), else a ScenarioError on ``field``: a run id becomes a file name and must not name another path."""
    if not is_run_id(run_id):
        shown = repr(run_id) if len(repr(run_id)) <= 80 else repr(run_id)[:77] + "..."
        raise ScenarioError(field, f"expected a run id (32 lowercase hex characters), got {shown}")
    assert isinstance(run_id, str)
    return run_id


def series_path(root: Path, table: str, run_id: str) -> Path:
    """The Parquet file of ``table`` (``timeseries`` or ``queue``) for one run. Both files of a run share a
    directory (one directory fsync per commit); 256 shards keep directories small in large sweeps."""
    check_run_id(run_id)
    return root / SERIES_DIR / run_id[:2] / f"{run_id}.{table}.parquet"


def series_name(path: Path) -> str:
    """``series/ab/<run_id>.queue.parquet``: a series file as named in messages (relative to the root)."""
    return "/".join(path.parts[-3:])


def series_files(root: Path) -> list[Path]:
    """Every file in the series shards, temporary ones included."""
    return list((root / SERIES_DIR).glob("*/*"))


def run_id_of(series_file: Path) -> str:
    return series_file.name.split(".")[0]


def damaged(root: Path, detail: str) -> ScenarioError:
    """The error for a catalog that cannot be read as one (``detail`` says what is wrong)."""
    return ScenarioError(str(root), f"the catalog is damaged ({detail})")


def is_damage(error: BaseException) -> bool:
    """Whether a DuckDB error is the catalog file failing (a bad checksum, a truncated file) rather than
    the SQL: DuckDB reports those as I/O, internal or fatal errors."""
    if isinstance(error, duckdb.IOException | duckdb.InternalException | duckdb.FatalException):
        return True
    return "Corrupt database file" in str(error)


def first_line(error: BaseException) -> str:
    lines = str(error).strip().splitlines()
    return lines[0] if lines else type(error).__name__


def connect(root: Path, *, read_only: bool) -> Any:
    """A DuckDB connection to the catalog with :data:`SAFE_CONFIG`. A store held by a running sweep
    (DuckDB allows one writing process and no reader beside it) is a ScenarioError naming the directory
    and the process; a catalog that does not open is damaged. The caller checks its contents
    (:func:`ccfair.store.check.check_catalog`) before use."""
    path = catalog_path(root)
    if path.is_symlink() or (path.exists() and not path.is_file()):
        raise ScenarioError(str(root), f"{CATALOG_FILE} is not a regular file")
    if read_only and not path.is_file():
        raise ScenarioError(str(root), f"not a results directory (no {CATALOG_FILE})")
    try:
        return duckdb.connect(str(path), read_only=read_only, config=SAFE_CONFIG)
    except duckdb.IOException as e:
        text = str(e)
        if "permission denied" in text.lower():
            raise ScenarioError(str(root), f"cannot open the catalog: {first_line(e)}") from None
        if "lock" not in text.lower():
            raise damaged(root, first_line(e)) from None
        pid = re.search(r"PID (\d+)", text)
        who = f" (PID {pid.group(1)})" if pid else ""
        if read_only:
            message = (
                f"a sweep is writing to this store{who}; `ccfair status` shows its progress, queries and "
                "exports work once it ends"
            )
        else:
            message = f"is in use by another process{who}: one sweep writes to a results directory at a time"
        raise StoreBusy(str(root), message) from None
    except duckdb.Error as e:
        raise damaged(root, first_line(e)) from None
