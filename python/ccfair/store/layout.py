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


def _is_unmarked_results(directory: Path, entries: Sequence[str]) -> bool:
    """A results directory written before ccfair marked its directories: it holds a catalog."""
    return CATALOG_FILE in entries


RESULTS_KIND = fsio.Kind("results", "a results directory", legacy=_is_unmarked_results)


class StoreBusy(ScenarioError):
    """The catalog is held by another process (a running sweep)."""


def catalog_path(root: Path) -> Path:
    return root / CATALOG_FILE


def series_path(root: Path, table: str, run_id: str) -> Path:
    """The Parquet file of ``table`` (``timeseries`` or ``queue``) for one run. Both files of a run share a
    directory (one directory fsync per commit); 256 shards keep directories small in large sweeps."""
    return root / SERIES_DIR / run_id[:2] / f"{run_id}.{table}.parquet"


def series_glob(root: Path, table: str) -> str:
    return str(root / SERIES_DIR / "*" / f"*.{table}.parquet")


def has_series(root: Path, table: str) -> bool:
    return any((root / SERIES_DIR).glob(f"*/*.{table}.parquet"))


def series_files(root: Path) -> list[Path]:
    """Every file in the series shards, temporary ones included."""
    return list((root / SERIES_DIR).glob("*/*"))


def run_id_of(series_file: Path) -> str:
    return series_file.name.split(".")[0]


def connect(root: Path, *, read_only: bool) -> Any:
    """A DuckDB connection to the catalog. A store held by a running sweep (DuckDB allows one writing
    process and no reader beside it) is a ScenarioError naming the directory and the process."""
    path = catalog_path(root)
    if read_only and not path.is_file():
        raise ScenarioError(str(root), f"not a results directory (no {CATALOG_FILE})")
    try:
        return duckdb.connect(str(path), read_only=read_only)
    except duckdb.IOException as e:
        text = str(e)
        if "lock" not in text.lower():
            raise ScenarioError(str(root), f"cannot open the catalog: {text}") from None
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
