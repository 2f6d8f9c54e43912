"""Damage to a results directory's series files, found against the size and SHA-256 that the writer records
for each done run's two Parquet files (``runs.timeseries_bytes``, ``timeseries_sha256``, ``queue_bytes``,
``queue_sha256``).

- :func:`run_problems` with ``full=False`` (a resumed sweep, queries over the time series): each file exists
  as a regular file (not a symbolic link, not a directory) in real directories, of the recorded size.
- with ``full=True`` (``ccfair status --verify``, ``ccfair sweep --verify``): also its SHA-256, and that
  Parquet reads it.
- :func:`read_series` (``Results.timeseries``, ``queue``, ``result``): the file's bytes, size and checksum
  checked.

Series files are opened without following symbolic links: a link in place of a file (to a file outside the
directory) is damage, never read. Runs committed by a version-1 catalog have no recorded size or checksum;
for them the full check reads the Parquet.
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from ccfair.store import layout

READ_CHUNK_BYTES = 1 << 20


class SeriesDamage(Exception):
    """A series file that is missing, not a regular file, or not what was committed; ``str()`` says which
    file (relative to the results directory) and what is wrong."""


@dataclass(frozen=True)
class DoneRun:
    """A done run and what the catalog recorded of its files (None: committed before sizes were kept)."""

    run_id: str
    bytes: dict[str, int | None]
    sha256: dict[str, str | None]


def file_record(data: bytes) -> tuple[int, str]:
    """The size and SHA-256 (hex) recorded for a series file holding ``data``."""
    return len(data), hashlib.sha256(data).hexdigest()


def done_runs(con: Any, version: int) -> list[DoneRun]:
    """Every done run with its recorded file sizes and checksums (``version``: the catalog's schema)."""
    if version < 2:
        rows = con.execute("SELECT run_id FROM runs WHERE status = 'done' ORDER BY run_id").fetchall()
        none: dict[str, Any] = dict.fromkeys(layout.SERIES_TABLES)
        return [DoneRun(r[0], dict(none), dict(none)) for r in rows]
    rows = con.execute(
        "SELECT run_id, timeseries_bytes, timeseries_sha256, queue_bytes, queue_sha256 "
        "FROM runs WHERE status = 'done' ORDER BY run_id"
    ).fetchall()
    return [
        DoneRun(r[0], {"timeseries": r[1], "queue": r[3]}, {"timeseries": r[2], "queue": r[4]}) for r in rows
    ]


def _check_dirs(path: Path) -> None:
    """The series directory and the shard holding ``path`` are directories, not links to elsewhere."""
    for directory in (path.parent.parent, path.parent):
        try:
            mode = os.lstat(directory).st_mode
        except FileNotFoundError:
            raise SeriesDamage(f"{layout.series_name(path)} is missing") from None
        if stat.S_ISLNK(mode):
            raise SeriesDamage(f"{'/'.join(directory.parts[-2:])} is a symbolic link, not a directory")
        if not stat.S_ISDIR(mode):
            raise SeriesDamage(f"{'/'.join(directory.parts[-2:])} is not a directory")


def _kind(mode: int) -> str | None:
    """What is wrong with a series file of this mode, or None for a regular file."""
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISLNK(mode):
        return "is a symbolic link (not followed)"
    if stat.S_ISDIR(mode):
        return "is a directory"
    return "is not a regular file"


def stat_problem(path: Path, size: int | None) -> str | None:
    """Existence, kind and size of one series file (no reading)."""
    name = layout.series_name(path)
    try:
        _check_dirs(path)
        info = os.lstat(path)
    except SeriesDamage as e:
        return str(e)
    except FileNotFoundError:
        return f"{name} is missing"
    kind = _kind(info.st_mode)
    if kind is not None:
        return f"{name} {kind}"
    if size is not None and info.st_size != size:
        return f"{name} has {info.st_size} bytes, {size} were committed"
    return None


def read_series(root: Path, table: str, run_id: str, size: int | None, sha256: str | None) -> bytes:
    """The bytes of one run's series file, checked against the recorded ``size`` and ``sha256`` when known;
    a SeriesDamage otherwise. A symbolic link is not followed, a FIFO or device not read."""
    path = layout.series_path(root, table, run_id)
    name = layout.series_name(path)
    _check_dirs(path)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        raise SeriesDamage(f"{name} is missing") from None
    except OSError as e:
        if e.errno == errno.ELOOP:
            raise SeriesDamage(f"{name} is a symbolic link (not followed)") from None
        raise SeriesDamage(f"{name} cannot be read ({e.strerror})") from None
    try:
        info = os.fstat(fd)
        kind = _kind(info.st_mode)
        if kind is not None:
            raise SeriesDamage(f"{name} {kind}")
        if size is not None and info.st_size != size:
            raise SeriesDamage(f"{name} has {info.st_size} bytes, {size} were committed")
        chunks = []
        while chunk := os.read(fd, READ_CHUNK_BYTES):
            chunks.append(chunk)
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if size is not None and len(data) != size:
        raise SeriesDamage(f"{name} has {len(data)} bytes, {size} were committed")
    if sha256 is not None and hashlib.sha256(data).hexdigest() != sha256:
        raise SeriesDamage(f"{name} does not match its checksum (its contents changed)")
    return data


def parquet_table(data: bytes, name: str) -> pa.Table:
    """A series file's table; a SeriesDamage if Parquet cannot read it."""
    try:
        return pq.read_table(pa.BufferReader(data), use_threads=False)
    except (pa.ArrowException, OSError, ValueError) as e:
        raise SeriesDamage(f"{name} is not readable Parquet ({layout.first_line(e)})") from None


def run_problems(root: Path, run: DoneRun, full: bool) -> list[str]:
    """What is wrong with a done run's series files (empty: nothing found)."""
    if not layout.is_run_id(run.run_id):
        return ["its run id is not 32 hex characters"]
    problems = []
    for table in layout.SERIES_TABLES:
        path = layout.series_path(root, table, run.run_id)
        problem = stat_problem(path, run.bytes[table])
        if problem is None and full:
            try:
                data = read_series(root, table, run.run_id, run.bytes[table], run.sha256[table])
                parquet_table(data, layout.series_name(path))
            except SeriesDamage as e:
                problem = str(e)
        if problem is not None:
            problems.append(problem)
    return problems


def damaged_runs(root: Path, runs: Iterable[DoneRun], full: bool) -> dict[str, list[str]]:
    """``{run_id: problems}`` for the damaged ones among ``runs``."""
    found = {}
    for run in runs:
        problems = run_problems(root, run, full)
        if problems:
            found[run.run_id] = problems
    return found
