"""Where things live in a results directory, and opening its catalog.

::

    results/
      catalog.duckdb                          the catalog: plans, cells, runs, flows, classes
      series/<first 2 hex of run_id>/<run_id>.timeseries.parquet   per-flow time series of one run
      series/<first 2 hex of run_id>/<run_id>.queue.parquet        bottleneck queue time series of one run
      status.json                             progress of the sweep writing right now (see ``ccfair status``)
      catalog.snapshot.duckdb                 the catalog as of its last snapshot, while a sweep writes
      .ccfair.json                            the marker: a ccfair results directory (``ccfair.fsio``)

**Reading during a sweep.** DuckDB lets one process open a catalog for writing and no other process open
it at the same time, not even to read. So a sweep publishes a snapshot: after a commit, at most every
:data:`SNAPSHOT_INTERVAL_S` (and less often when copying takes longer than
:data:`SNAPSHOT_MAX_SHARE` of the time), it checkpoints the catalog and copies it to
``catalog.snapshot.duckdb`` (a hidden temporary renamed into place), and removes it when it ends. A reader
that finds the catalog held opens the snapshot instead: the runs committed up to a few seconds ago, each
whole (their series files were written before their commit). Until the first snapshot exists a reader
waits (up to :data:`READ_WAIT_S`, or ``$CCFAIR_STORE_WAIT_S`` seconds) for one, or for the catalog. A reader
opens the snapshot only while the catalog is held, so a snapshot a killed sweep left is never read; the next
sweep removes it and any half-copied temporary. A writer that finds the catalog held by a reader (one
query long) waits for it up to :data:`WRITE_WAIT_S`; held longer, it is another sweep's, and refused.

A sweep writes only into a directory that is new, empty, or a results directory already (its marker, or
the catalog of one written before markers); see :data:`RESULTS_KIND`.

A results directory is untrusted input (results are exchanged between people): the catalog is opened with
DuckDB's external access off and its configuration locked (no file or network access beyond the catalog
file, no extensions installed or loaded), run ids are checked before they become paths, and series files
are opened without following symbolic links.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

import duckdb

from ccfair import fsio
from ccfair.errors import InputError

CATALOG_FILE = "catalog.duckdb"
STATUS_FILE = "status.json"
SNAPSHOT_FILE = "catalog.snapshot.duckdb"
SNAPSHOT_INTERVAL_S = 2.0  # a sweep publishes a snapshot after a commit at most this often ...
SNAPSHOT_MAX_SHARE = 0.02  # ... and spends at most this share of its time on snapshots
READ_WAIT_S = 30.0  # a reader waits this long for a snapshot or the catalog while a sweep starts
# A writer waits this long for the catalog: a reader (`ccfair status`, `ccfair query`, a study's check) holds
# it for one query, so a sweep that meets one, say between the plans of a study, gets it within this; a
# second sweep holds it for its whole run and is refused after the wait.
WRITE_WAIT_S = 2.0
LOCK_RETRY_S = 0.05
SERIES_DIR = "series"
SERIES_TABLES = ("timeseries", "queue")
TMP_MARK = ".tmp-"  # temporary files are hidden and carry this mark (``ccfair.fsio.temporary_name``)
RUN_ID = re.compile(r"[0-9a-f]{32}")

# What a catalog connection may do: nothing outside the catalog file. Every setting is fixed when the
# database opens and locked, so no SQL (a user's query, a view in a crafted catalog) can turn it back on.
# Arrow tables and datasets registered from Python stay readable: the time series reach DuckDB that way.
SAFE_CONFIG: dict[str, str | bool | int | float | list[str]] = {  # the value types duckdb.connect takes
    "enable_external_access": False,
    "autoinstall_known_extensions": False,
    "autoload_known_extensions": False,
    "lock_configuration": True,
}


def _is_unmarked_results(directory: Path, entries: Sequence[str]) -> bool:
    """A results directory written before ccfair marked its directories: it holds a catalog."""
    return CATALOG_FILE in entries


RESULTS_KIND = fsio.Kind("results", "a results directory", legacy=_is_unmarked_results)


class StoreBusy(InputError):
    """The catalog is held by another process (a running sweep)."""


def catalog_path(root: Path) -> Path:
    return root / CATALOG_FILE


def is_run_id(value: object) -> bool:
    return isinstance(value, str) and RUN_ID.fullmatch(value) is not None


def check_run_id(run_id: object, field: str = "run_id") -> str:
    """``run_id`` if it is one (32 lowercase hex characters, the form :mod:`ccfair.sweep.identity`
    makes), else an InputError on ``field``: a run id becomes a file name and must not name another path."""
    if not is_run_id(run_id):
        shown = repr(run_id) if len(repr(run_id)) <= 80 else repr(run_id)[:77] + "..."
        raise InputError(field, f"expected a run id (32 lowercase hex characters), got {shown}")
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


def damaged(root: Path, detail: str) -> InputError:
    """The error for a catalog that cannot be read as one (``detail`` says what is wrong)."""
    return InputError(str(root), f"the catalog is damaged ({detail})")


def is_damage(error: BaseException) -> bool:
    """Whether a DuckDB error is the catalog file failing (a bad checksum, a truncated file) rather than
    the SQL: DuckDB reports those as I/O, internal or fatal errors."""
    if isinstance(error, duckdb.IOException | duckdb.InternalException | duckdb.FatalException):
        return True
    return "Corrupt database file" in str(error)


def first_line(error: BaseException) -> str:
    lines = str(error).strip().splitlines()
    return lines[0] if lines else type(error).__name__


def read_wait_s() -> float:
    """How long a reader waits for a sweep's first snapshot (or the catalog): ``$CCFAIR_STORE_WAIT_S`` or
    :data:`READ_WAIT_S`."""
    text = os.environ.get("CCFAIR_STORE_WAIT_S")
    try:
        return max(0.0, float(text)) if text else READ_WAIT_S
    except ValueError:
        return READ_WAIT_S


def _is_lock_conflict(error: duckdb.Error) -> bool:
    return isinstance(error, duckdb.IOException) and "lock" in str(error).lower()


def connect(root: Path, *, read_only: bool) -> Any:
    """A DuckDB connection to the catalog with :data:`SAFE_CONFIG`. A catalog held by another process is a
    :class:`StoreBusy` naming the directory and the process (for a writer, once it stayed held for
    :data:`WRITE_WAIT_S`; readers use :func:`open_for_reading`); a catalog that does not open is damaged.
    The caller checks its contents (:func:`ccfair.store.check.check_catalog`) before use."""
    path = _regular(root, CATALOG_FILE)
    if read_only and not path.is_file():
        marker = fsio.read_marker(root)
        if marker is not None and marker.get("kind") == RESULTS_KIND.name:
            # The sweep that made the directory opens its catalog next: a reader waits for it as for a
            # snapshot (open_for_reading).
            raise StoreBusy(
                str(root),
                f"a results directory being created: a sweep is starting here and has not written its "
                f"catalog ({CATALOG_FILE}) yet",
            )
        raise InputError(str(root), f"not a results directory (no {CATALOG_FILE})")
    started = time.monotonic()
    while True:
        try:
            return duckdb.connect(str(path), read_only=read_only, config=SAFE_CONFIG)
        except duckdb.Error as e:
            if not _is_lock_conflict(e):
                _refuse(root, e)
            # Readers wait in open_for_reading (where a snapshot may do); a writer waits here for a reader.
            if read_only or time.monotonic() - started >= WRITE_WAIT_S:
                _busy(root, e, read_only)
        time.sleep(LOCK_RETRY_S)


def open_for_reading(root: Path) -> tuple[Any, Path]:
    """A read-only connection (:data:`SAFE_CONFIG`) to the catalog, or while a sweep holds it to its last
    snapshot; and the file opened. Before a sweep's first snapshot, waits for one (or for the catalog) up
    to :func:`read_wait_s`, then raises :class:`StoreBusy`."""
    started = time.monotonic()
    while True:
        try:
            return connect(root, read_only=True), catalog_path(root)
        except StoreBusy as busy:
            snapshot = _regular(root, SNAPSHOT_FILE)
            if snapshot.is_file():
                try:
                    return duckdb.connect(str(snapshot), read_only=True, config=SAFE_CONFIG), snapshot
                except duckdb.Error as e:
                    if not _is_lock_conflict(e) and snapshot.is_file():
                        _refuse(root, e)
            if time.monotonic() - started >= read_wait_s():
                raise busy from None
        time.sleep(LOCK_RETRY_S)


def _regular(root: Path, name: str) -> Path:
    """``root/name``, refused unless it is a regular file or absent (a link or a directory there is not a
    file ccfair wrote)."""
    path = root / name
    if path.is_symlink() or (path.exists() and not path.is_file()):
        raise InputError(str(root), f"{name} is not a regular file")
    return path


def _refuse(root: Path, e: duckdb.Error) -> NoReturn:
    if isinstance(e, duckdb.IOException) and "permission denied" in str(e).lower():
        raise InputError(str(root), f"cannot open the catalog: {first_line(e)}") from None
    raise damaged(root, first_line(e)) from None


def _busy(root: Path, e: duckdb.Error, read_only: bool) -> NoReturn:
    pid = re.search(r"PID (\d+)", str(e))
    who = f" (PID {pid.group(1)})" if pid else ""
    if read_only:
        message = (
            f"a sweep is writing to this store{who} and has published no snapshot of it yet; `ccfair status` "
            "shows its progress (set CCFAIR_STORE_WAIT_S to wait longer)"
        )
    else:
        message = f"is in use by another process{who}: one sweep writes to a results directory at a time"
    raise StoreBusy(str(root), message) from None
