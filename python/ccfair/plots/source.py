"""What ``ccfair plot`` and ``ccfair report`` read: a saved run (``ccfair run --out``) or a results
directory (``ccfair sweep --out``)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from ccfair.errors import InputError
from ccfair.result import SUMMARY_FILE, RunResult, load_run
from ccfair.store import Results

if TYPE_CHECKING:
    from ccfair.store import Results

CATALOG_FILE = "catalog.duckdb"  # ccfair.store.layout.CATALOG_FILE, without importing the store


def open_source(directory: str | Path, argument: str = "DIR") -> RunResult | Results:
    """The run or the results directory at ``directory``; an InputError on ``argument`` naming what the
    directory holds if it is neither."""
    path = Path(directory)
    if not path.exists():
        raise InputError(argument, f"{path} does not exist")
    if not path.is_dir():
        raise InputError(argument, f"{path} is not a directory")
    if os.path.lexists(path / CATALOG_FILE):  # the store says what is wrong with one that is not a file
        return Results(path)
    if (path / SUMMARY_FILE).is_file():
        return load_run(path)
    present = ", ".join(sorted(p.name for p in path.iterdir())[:10]) or "nothing"
    raise InputError(
        argument,
        f"{path} is neither a saved run (no {SUMMARY_FILE}) nor a results directory (no {CATALOG_FILE}); "
        f"it holds: {present}",
    )
