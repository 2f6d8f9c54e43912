"""Where things live in a results directory, and opening its catalog.

::

    results/
      catalog.duckdb                          the catalog: plans, cells, runs, flows, classes
      series/<first 2 hex of run_id>/<run_id>.timeseries.parquet   per-flow time series of one run
      series/<first 2 hex of run_id>/<run_id>.queue.parquet        bottleneck queue time series of one run
      status.json                             progress of the sweep writing right now (see ``ccfair status``)
      .writer.lock                            held (flock) by the sweep writing right now
      .ccfair.json                            the marker: a ccfair results directory (``ccfair.fsio``)

**Reading during a sweep.** DuckDB lets one process open a catalog for writing and no other process open
it at the same time, not even to read. So the sweep does not hold the catalog for its whole run: it opens
it to commit and releases it after a commit whenever :data:`RELEASE_INTERVAL_S` have passed since its last
release (so after every commit when runs take longer than that). The catalog then stays free until the
next commit. Releasing and opening again costs the writer about 0.1 to 0.2 s (DuckDB checkpoints on close
and the first commit after opening is slower), paid at most once per :data:`RELEASE_INTERVAL_S`. A reader
that finds the catalog held waits for a release (up to :data:`READ_WAIT_S`, or ``$CCFAIR_STORE_WAIT_S``
seconds) and then reads every run committed so far; the writer in turn waits while a reader has the
catalog open. One sweep writes at a time: the writer holds ``.writer.lock`` (an advisory ``flock``) from
start to end, and a second sweep into the same directory is refused.

A sweep writes only into a directory that is new, empty, or a results directory already (its marker, or
the catalog of one written before markers); see :data:`RESULTS_KIND`.

A results directory is untrusted input (results are exchanged between people): the catalog is opened with
DuckDB's external access off and its configuration locked (no file or network access beyond the catalog
file, no extensions installed or loaded), run ids are checked before they become paths, and series files
are opened without following symbolic links.
"""

from __future__ import annotations

import fcntl
import os
import re
import stat
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import duckdb

from ccfair import fsio
from ccfair.errors import ScenarioError

CATALOG_FILE = "catalog.duckdb"
STATUS_FILE = "status.json"
WRITER_LOCK = ".writer.lock"
RELEASE_INTERVAL_S = 10.0  # a writer releases the catalog after a commit this long after its last release
READ_WAIT_S = 30.0  # a reader waits this long for the writer to release the catalog
WRITE_WAIT_NOTE_S = 10.0  # a writer waiting this long for readers says so on stderr
LOCK_RETRY_S = 0.02
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


def read_wait_s() -> float:
    """How long a reader waits for a sweep to release the catalog: ``$CCFAIR_STORE_WAIT_S`` or
    :data:`READ_WAIT_S`."""
    text = os.environ.get("CCFAIR_STORE_WAIT_S")
    try:
        return max(0.0, float(text)) if text else READ_WAIT_S
    except ValueError:
        return READ_WAIT_S


def _is_lock_conflict(error: duckdb.Error) -> bool:
    return isinstance(error, duckdb.IOException) and "lock" in str(error).lower()


def connect(root: Path, *, read_only: bool, wait_s: float | None = 0.0) -> Any:
    """A DuckDB connection to the catalog with :data:`SAFE_CONFIG`. While another process holds the
    catalog (a sweep committing, or for the writer a reader) it retries for ``wait_s`` seconds (None:
    until it gets it, saying so on stderr after :data:`WRITE_WAIT_NOTE_S`), then raises
    :class:`StoreBusy` naming the directory and the process. A catalog that does not open is damaged. The
    caller checks its contents (:func:`ccfair.store.check.check_catalog`) before use."""
    path = catalog_path(root)
    if path.is_symlink() or (path.exists() and not path.is_file()):
        raise ScenarioError(str(root), f"{CATALOG_FILE} is not a regular file")
    if read_only and not path.is_file():
        raise ScenarioError(str(root), f"not a results directory (no {CATALOG_FILE})")
    started = time.monotonic()
    noted = False
    while True:
        try:
            return duckdb.connect(str(path), read_only=read_only, config=SAFE_CONFIG)
        except duckdb.Error as e:
            if not _is_lock_conflict(e):
                _refuse(root, e)
            waited = time.monotonic() - started
            if wait_s is not None and waited >= wait_s:
                _busy(root, e, read_only, wait_s)
            if wait_s is None and not noted and waited >= WRITE_WAIT_NOTE_S:
                noted = True
                print(
                    f"{root}: waiting for a reader to release the catalog ({first_line(e)})", file=sys.stderr
                )
            time.sleep(LOCK_RETRY_S)


def _refuse(root: Path, e: duckdb.Error) -> None:
    if isinstance(e, duckdb.IOException) and "permission denied" in str(e).lower():
        raise ScenarioError(str(root), f"cannot open the catalog: {first_line(e)}") from None
    raise damaged(root, first_line(e)) from None


def _busy(root: Path, e: duckdb.Error, read_only: bool, waited_s: float) -> None:
    pid = re.search(r"PID (\d+)", str(e))
    who = f" (PID {pid.group(1)})" if pid else ""
    if read_only:
        message = (
            f"a sweep is writing to this store{who} and did not release the catalog within {waited_s:g} s; "
            "`ccfair status` shows its progress (set CCFAIR_STORE_WAIT_S to wait longer)"
        )
    else:
        message = f"is in use by another process{who}: one sweep writes to a results directory at a time"
    raise StoreBusy(str(root), message) from None


def acquire_writer_lock(root: Path) -> int:
    """Takes ``.writer.lock`` for this process (one sweep writes at a time); returns the descriptor that
    holds it (closing it releases the lock). A StoreBusy if another sweep holds it."""
    fd = os.open(root / WRITER_LOCK, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise StoreBusy(
            str(root), "is in use by another process: one sweep writes to a results directory at a time"
        ) from None
    except BaseException:
        os.close(fd)
        raise
    return fd


def writer_active(root: Path) -> bool:
    """Whether a sweep is writing to ``root`` now (it holds ``.writer.lock``). Opens the lock file read-only
    without following a link; takes and drops a shared lock to test it."""
    try:
        fd = os.open(root / WRITER_LOCK, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return False
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        except OSError:
            return False
        fcntl.flock(fd, fcntl.LOCK_UN)
        return False
    finally:
        os.close(fd)
