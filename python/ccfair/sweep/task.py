"""One run as a unit of work, the same for local worker processes and Dask workers: :func:`run_task` takes
a picklable :class:`RunTask`, never raises for a failed run, and returns a picklable :class:`RunOutcome`
holding everything the store writes (tables as DataFrames, the time series already encoded as Parquet so
the single writer only copies bytes)."""

from __future__ import annotations

import datetime
import functools
import hashlib
import os
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from ccfair import __version__, _native
from ccfair.errors import InputError
from ccfair.resources import Limits
from ccfair.runner import run
from ccfair.sweep.identity import SIMULATOR


@dataclass(frozen=True)
class RunTask:
    """What a worker needs: the run's identity, its scenario document (seed included) and its seed, the
    wall-time limit, the limits of the run's estimated memory and events (None: the worker's own
    machine's defaults), and the backend that runs it."""

    run_id: str
    scenario: dict[str, Any]
    seed: int
    time_limit_s: float | None = None
    limits: Limits | None = None
    backend: str = SIMULATOR


@dataclass
class RunOutcome:
    """A finished attempt. ``status`` is ``done`` or ``failed``; a failure has ``error_kind`` (``invalid``,
    ``exception``, ``panic``, ``timeout``, ``crash``) and ``error``."""

    run_id: str
    status: str
    error_kind: str | None = None
    error: str | None = None
    summary: dict[str, Any] | None = None
    flows: pa.Table | None = None  # Arrow: the writer's DuckDB reads it without a per-column Python pass
    classes: pa.Table | None = None
    timeseries_parquet: bytes | None = None
    queue_parquet: bytes | None = None
    provenance: dict[str, Any] = field(default_factory=dict)


class RunTimeout(Exception):
    """The run passed its wall-time limit (raised from the progress callback, between simulation chunks)."""


class Orphaned(BaseException):
    """The sweep that started this worker is gone; stop at once (nobody would store the result)."""


BUILD_HEX_CHARS = 16


PACKAGE_DIR = Path(__file__).resolve().parent.parent  # the ccfair package: python/ccfair in a checkout


@functools.cache
def git_revision(package: Path = PACKAGE_DIR) -> str | None:
    """The git commit of the checkout the ccfair ``package`` belongs to; with local changes to the sources
    (the package, and the Rust crates beside it) ``+dirty.`` and 8 hex digits of SHA-256 over their diff,
    so two different sets of changes are told apart while an edit to the docs or tests is not a new build.
    None outside a checkout, and when git does not track the package (an installed copy that happens to
    sit inside some other project's tree)."""

    def git(*args: str) -> subprocess.CompletedProcess[bytes]:
        return subprocess.run(
            ["git", "-C", str(package), *args], capture_output=True, timeout=60, check=False
        )

    try:
        if git("ls-files", "--error-unmatch", "--", "__init__.py").returncode != 0:
            return None
        head = git("rev-parse", "HEAD")
        if head.returncode != 0:
            return None
        diff = git("diff", "HEAD", "--no-ext-diff", "--no-color", "--", ".", ":/crates")
    except (OSError, subprocess.SubprocessError):
        return None
    commit = head.stdout.decode().strip()
    if diff.returncode != 0 or not diff.stdout:
        return commit
    return commit + "+dirty." + hashlib.sha256(diff.stdout).hexdigest()[:8]


@functools.cache
def native_build() -> str | None:
    """Which build of the native module this process runs: 16 hex digits of SHA-256 over the extension
    file, so a rebuilt simulator core is told apart even outside a git checkout (an installed wheel)."""

    path = getattr(_native, "__file__", None)
    if not path:
        return None
    digest = hashlib.sha256()
    try:
        with open(path, "rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                digest.update(chunk)
    except OSError:
        return None
    return digest.hexdigest()[:BUILD_HEX_CHARS]


def build_label(version: object, git: object, native: object) -> str:
    """``ccfair 0.1.0, git 1a2b3c4d5e6f+dirty.0badf00d, native 0123456789abcdef``: a build, as messages
    name it (``unknown`` for what was not recorded)."""

    def known(value: object) -> str | None:
        return None if value is None or (isinstance(value, float) and value != value) else str(value)

    git_text = known(git)
    if git_text is not None:
        commit, _, dirty = git_text.partition("+")
        git_text = commit[:12] + (f"+{dirty}" if dirty else "")
    native_text = known(native) or "unknown"
    return f"ccfair {known(version) or 'unknown'}, git {git_text or 'unknown'}, native {native_text}"


def provenance(
    started_at: datetime.datetime, wall_s: float, worker: str | None = None, backend: str = SIMULATOR
) -> dict[str, Any]:
    """Where and how a run was made (the same keys for a failure recorded by the sweep itself)."""
    return {
        "backend": backend,
        "ccfair_version": __version__,
        "git_revision": git_revision(),
        "native_build": native_build(),
        "host": socket.gethostname(),
        "worker": worker or f"pid {os.getpid()}",
        "started_at": started_at,
        "task_wall_seconds": wall_s,
    }


def failure(
    task_id: str, kind: str, message: str, worker: str | None = None, backend: str = SIMULATOR
) -> RunOutcome:
    """A failure recorded without a worker's report (a crashed or killed worker, a lost Dask task)."""
    now = datetime.datetime.now(datetime.UTC).replace(tzinfo=None)
    return RunOutcome(task_id, "failed", kind, message, provenance=provenance(now, 0.0, worker, backend))


class _Watchdog:
    """The progress callback: enforces the wall-time limit and stops if the sweep died."""

    def __init__(self, limit_s: float | None, parent_pid: int | None) -> None:
        self._limit_s = limit_s
        self._deadline = None if limit_s is None else time.monotonic() + limit_s
        self._parent_pid = parent_pid

    def __call__(self, fraction: float) -> None:
        if self._deadline is not None and time.monotonic() > self._deadline:
            raise RunTimeout(
                f"exceeded the {self._limit_s:g} s wall-time limit at {fraction:.0%} of simulated time"
            )
        if self._parent_pid is not None and os.getppid() != self._parent_pid:
            raise Orphaned()


def _arrow(frame: pd.DataFrame, run_id: str) -> pa.Table:
    """``frame`` as an Arrow table with ``run_id`` as its first column."""
    table = pa.Table.from_pandas(frame, preserve_index=False)
    return table.add_column(0, "run_id", pa.array([run_id] * len(frame), pa.string()))


def _parquet_bytes(frame: pd.DataFrame, run_id: str) -> bytes:
    sink = pa.BufferOutputStream()
    pq.write_table(_arrow(frame, run_id), sink)
    return bytes(sink.getvalue())


def run_task(task: RunTask, parent_pid: int | None = None) -> RunOutcome:
    """Runs one task. ``parent_pid``: stop if this process's parent changes (local workers)."""
    started_at = datetime.datetime.now(datetime.UTC).replace(tzinfo=None)
    t0 = time.monotonic()

    def failed(kind: str, message: str) -> RunOutcome:
        prov = provenance(started_at, time.monotonic() - t0, backend=task.backend)
        return RunOutcome(task.run_id, "failed", kind, message, provenance=prov)

    try:
        # Validated again here (the document, not a scenario object, travels): a worker whose ccfair lacks
        # an algorithm or discipline, or whose kernel lacks the module, rejects the cell.
        result = run(
            task.scenario,
            seed=task.seed,
            progress=_Watchdog(task.time_limit_s, parent_pid),
            backend=task.backend,
            limits=task.limits,
        )
        encode_t0 = time.monotonic()
        outcome = RunOutcome(
            run_id=task.run_id,
            status="done",
            summary=result.summary,
            flows=_arrow(result.flows, task.run_id),
            classes=_arrow(result.classes, task.run_id),
            timeseries_parquet=_parquet_bytes(result.timeseries, task.run_id),
            queue_parquet=_parquet_bytes(result.queue, task.run_id),
        )
        encode_s = time.monotonic() - encode_t0
    except InputError as e:
        return failed("invalid", str(e))
    except RunTimeout as e:
        return failed("timeout", str(e))
    except Orphaned:
        raise
    except Exception as e:
        return failed("exception", f"{type(e).__name__}: {e}")
    except BaseException as e:
        # A panic in the Rust core arrives as pyo3's PanicException, which derives from BaseException.
        if type(e).__name__ == "PanicException":
            return failed("panic", f"panic in the simulator: {e}")
        raise
    outcome.provenance = provenance(started_at, time.monotonic() - t0, backend=task.backend)
    outcome.provenance["encode_seconds"] = encode_s
    return outcome
