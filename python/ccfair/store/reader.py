"""Reading a results directory: :func:`load` and SQL queries over the catalog and the time series.

Every read opens the catalog read-only and closes it at once, so a notebook holding a :class:`Results`
never blocks the next sweep. Only ``done`` runs are visible in ``flows``, ``classes`` and the time series.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

import duckdb
import pandas as pd

from ccfair.errors import ScenarioError
from ccfair.result import RunResult
from ccfair.scenario import Scenario
from ccfair.store import layout
from ccfair.store.schema import quote

CATALOG_TABLES = ("runs", "flows", "classes", "cells", "plans")


def open_catalog(root: Path, progress_bar: bool = False) -> Any:
    """A read-only connection with views ``timeseries`` and ``queue`` over the Parquet files of done runs
    (each view exists once some run has written its files). DuckDB's own progress bar writes to stdout, so
    it is on only when asked for."""
    con = layout.connect(root, read_only=True)
    con.execute(f"SET enable_progress_bar = {str(progress_bar).lower()}")
    for table in layout.SERIES_TABLES:
        if layout.has_series(root, table):
            pattern = layout.series_glob(root, table).replace("'", "''")
            con.execute(
                f"CREATE TEMP VIEW {quote(table)} AS "
                f"SELECT * FROM read_parquet('{pattern}', union_by_name = true) "
                "WHERE run_id IN (SELECT run_id FROM runs WHERE status = 'done')"
            )
    return con


def query(root: str | Path, sql: str) -> pd.DataFrame:
    """The result of one SQL statement over ``runs``, ``flows``, ``classes``, ``cells``, ``plans``,
    ``timeseries`` and ``queue``. The catalog is read-only here; bad SQL is a ScenarioError on ``SQL``."""
    con = open_catalog(Path(root))
    try:
        return con.execute(sql).df()
    except duckdb.Error as e:
        raise ScenarioError("SQL", str(e).strip()) from None
    finally:
        con.close()


def _table(root: Path, table: str, where: str = "", params: list[Any] | None = None) -> pd.DataFrame:
    con = layout.connect(root, read_only=True)
    try:
        exists = con.execute(
            "SELECT count(*) FROM information_schema.tables WHERE table_name = ?", [table]
        ).fetchone()
        if not exists or exists[0] == 0:
            return pd.DataFrame({"run_id": pd.Series([], dtype="str")})
        return con.execute(f"SELECT * FROM {quote(table)} {where}", params or []).df()
    finally:
        con.close()


class Results:
    """A results directory as DataFrames (see :mod:`ccfair.store` for every column).

    ``runs``, ``flows`` and ``classes`` are read on first use and kept; :meth:`timeseries`, :meth:`queue`
    and :meth:`result` read one run on demand."""

    def __init__(self, directory: str | Path) -> None:
        self.directory = Path(directory)
        if not layout.catalog_path(self.directory).is_file():
            raise ScenarioError(
                str(directory),
                "not a results directory (no catalog.duckdb); a single saved run is read by load_run",
            )

    def __repr__(self) -> str:
        return f"Results({str(self.directory)!r})"

    @functools.cached_property
    def runs(self) -> pd.DataFrame:
        """One row per run attempted: done and failed (``status``), in commit order."""
        return _table(self.directory, "runs", "ORDER BY committed_at, run_id")

    @functools.cached_property
    def flows(self) -> pd.DataFrame:
        """One row per flow of every done run."""
        return _table(self.directory, "flows")

    @functools.cached_property
    def classes(self) -> pd.DataFrame:
        """One row per connection class of every done run."""
        return _table(self.directory, "classes")

    @functools.cached_property
    def cells(self) -> pd.DataFrame:
        """Every run of every plan registered here, done or not (``plan``, ``run_index``, ``cell``,
        ``repetition``, ``flipped``, ``run_id``)."""
        return _table(self.directory, "cells", "ORDER BY plan, run_index")

    def _done(self, run_id: str) -> pd.Series:
        rows = self.runs[(self.runs["run_id"] == run_id) & (self.runs["status"] == "done")]
        if rows.empty:
            raise KeyError(f"no done run {run_id!r} in {self.directory}")
        return rows.iloc[0]

    def timeseries(self, run_id: str) -> pd.DataFrame:
        """The per-flow time series of a done run (the columns of ``RunResult.timeseries``, run_id first)."""
        self._done(run_id)
        return pd.read_parquet(layout.series_path(self.directory, "timeseries", run_id))

    def queue(self, run_id: str) -> pd.DataFrame:
        """The bottleneck queue time series of a done run (``RunResult.queue``'s columns, run_id first)."""
        self._done(run_id)
        return pd.read_parquet(layout.series_path(self.directory, "queue", run_id))

    def result(self, run_id: str) -> RunResult:
        """A done run as the :class:`~ccfair.result.RunResult` that ``ccfair.run`` returned for it."""
        row = self._done(run_id)
        seed = int(row["seed"])
        scenario = Scenario.from_dict(json.loads(row["scenario_json"])).with_seed(seed)

        def own(table: str) -> pd.DataFrame:
            frame = _table(self.directory, table, "WHERE run_id = ? ORDER BY rowid", [run_id])
            return frame.drop(columns="run_id")

        return RunResult(
            scenario=scenario,
            seed=seed,
            summary=json.loads(row["summary_json"]),
            flows=own("flows"),
            classes=own("classes"),
            timeseries=self.timeseries(run_id).drop(columns="run_id"),
            queue=self.queue(run_id).drop(columns="run_id"),
        )

    def query(self, sql: str) -> pd.DataFrame:
        """One SQL statement over the catalog and the time series (see :func:`query`)."""
        return query(self.directory, sql)


def load(directory: str | Path) -> Results:
    """A results directory written by ``ccfair sweep``."""
    return Results(directory)
