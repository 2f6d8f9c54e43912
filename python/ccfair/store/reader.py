"""Reading a results directory: :func:`load` and SQL queries over the catalog and the time series.

Every read opens the catalog read-only and closes it at once, so a notebook holding a :class:`Results` never
blocks the next sweep; during a sweep a read opens the sweep's last snapshot of the catalog (see
:mod:`.layout`) and sees the runs committed up to a few seconds before. Only ``done`` runs are visible in
``flows``, ``classes`` and the time series.

A results directory is untrusted input: the catalog is opened with no access to files or the network
(:data:`ccfair.store.layout.SAFE_CONFIG`) and its shape checked (:mod:`.check`) before anything in it is
read. The time series reach DuckDB as Arrow datasets over the done runs' files, each checked first to be a
regular file of its recorded size; :meth:`Results.timeseries` and :meth:`Results.queue` also check its
checksum. A damaged file is an error naming the run and the file.
"""

from __future__ import annotations

import contextlib
import functools
import io
import math
import os
import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import duckdb
import pandas as pd
import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.fs

from ccfair.errors import InputError
from ccfair.notebook import results_html
from ccfair.result import RunResult
from ccfair.scenario import Scenario
from ccfair.store import integrity, layout
from ccfair.store.check import check_catalog, parse_json, plan_definition
from ccfair.store.coordinates import join_coordinates, with_companions
from ccfair.store.grid import metric_grid
from ccfair.store.schema import quote
from ccfair.sweep.paths import column_name

CATALOG_TABLES = ("runs", "flows", "classes", "cells", "plans")


@contextlib.contextmanager
def catalog_errors(root: Path) -> Iterator[None]:
    """DuckDB failing on the catalog file (a bad checksum, a truncated file) as an InputError on
    ``root``; other DuckDB errors pass."""
    try:
        yield
    except duckdb.Error as e:
        if layout.is_damage(e):
            raise layout.damaged(root, layout.first_line(e)) from None
        raise


# Catalog files (by identity, see _identity) that passed the check in this process, and their versions:
# listing DuckDB's functions for the check takes tens of milliseconds, and one report reads several tables.
_CHECKED: dict[tuple[Any, ...], int] = {}
CHECKED_KEPT = 64


def _identity(path: Path) -> tuple[Any, ...]:
    """What changes when a catalog file does: its and its write-ahead log's inode, size and mtime."""
    identity: list[Any] = [str(path.resolve())]
    for part in (path, path.with_name(path.name + ".wal")):
        try:
            info = os.lstat(part)
        except FileNotFoundError:
            identity.append(None)
            continue
        identity.append((info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns))
    return tuple(identity)


def open_checked(root: Path) -> tuple[Any, int]:
    """A read-only connection to the catalog (while a sweep writes it: to its last snapshot), checked
    (once per state of the file in this process), and its schema version."""
    con, version, _ = open_checked_file(root)
    return con, version


def open_checked_file(root: Path) -> tuple[Any, int, Path]:
    """:func:`open_checked`, and the file it opened (the catalog or the sweep's snapshot of it)."""
    con, path = layout.open_for_reading(root)
    try:
        identity = _identity(path)
        version = _CHECKED.get(identity)
        if version is None:
            with catalog_errors(root):
                version = check_catalog(con, root)
            if len(_CHECKED) >= CHECKED_KEPT:
                _CHECKED.clear()
            _CHECKED[identity] = version
    except BaseException:
        con.close()
        raise
    return con, version, path


def open_catalog(root: Path, series: Sequence[str] = layout.SERIES_TABLES) -> Any:
    """A read-only, checked connection with views ``timeseries`` and ``queue`` (those in ``series``) over
    the Parquet files of done runs (each view exists once some run is done). A done run whose file is
    missing, not a regular file or not of its recorded size is an InputError naming it."""
    con, version = open_checked(root)
    try:
        with catalog_errors(root):
            runs = integrity.done_runs(con, version) if series else []
            for table in series:
                dataset = _series_dataset(root, table, runs)
                if dataset is None:
                    continue
                source = _source(table)
                con.register(source, dataset)
                con.execute(
                    f"CREATE TEMP VIEW {quote(table)} AS SELECT * FROM {quote(source)} "
                    "WHERE run_id IN (SELECT run_id FROM runs WHERE status = 'done')"
                )
    except BaseException:
        con.close()
        raise
    return con


def _source(table: str) -> str:
    """The name under which a series table's Arrow dataset is registered."""
    return f"{table}_files"


def _series_dataset(root: Path, table: str, runs: Sequence[integrity.DoneRun]) -> ds.Dataset | None:
    """An Arrow dataset over the done runs' files of ``table`` (columns unified across ccfair versions)."""
    paths, damaged = [], {}
    for run in runs:
        if not layout.is_run_id(run.run_id):
            damaged[run.run_id] = "its run id is not 32 hex characters"
            continue
        path = layout.series_path(root, table, run.run_id)
        problem = integrity.stat_problem(path, run.bytes[table])
        if problem is None:
            paths.append(str(path))
        else:
            damaged[run.run_id] = problem
    if damaged:
        raise series_damaged(root, damaged)
    if not paths:
        return None
    try:
        factory = ds.FileSystemDatasetFactory(pyarrow.fs.LocalFileSystem(), paths, ds.ParquetFileFormat())
        return factory.finish(factory.inspect(promote_options="permissive", fragments=None))
    except (pa.ArrowException, OSError, ValueError) as e:
        problem = f"a {table} file is not readable Parquet ({layout.first_line(e)})"
        raise series_damaged(root, {"": problem}) from None


def series_damaged(root: Path, damaged: dict[str, str]) -> InputError:
    """The error for done runs whose series files are damaged (``damaged``: run id -> problem)."""
    run_id, problem = next(iter(damaged.items()))
    which = f"run {run_id}: {problem}" if run_id else problem
    more = f" and {len(damaged) - 1} more damaged runs" if len(damaged) > 1 else ""
    return InputError(
        str(root),
        f"{which}{more}; `ccfair status --verify {root}` lists the damaged runs and running their sweep "
        "again (`ccfair sweep PLAN --out DIR`) repairs them",
    )


def _series_named(sql: str) -> tuple[str, ...]:
    """The series views a statement can use: those it names (building a view reads every file's footer,
    which a query over the catalog tables does not need)."""
    return tuple(t for t in layout.SERIES_TABLES if re.search(rf"\b{t}\b", sql, re.IGNORECASE))


def query(root: str | Path, sql: str) -> pd.DataFrame:
    """The result of one SQL statement over ``runs``, ``flows``, ``classes``, ``cells``, ``plans``,
    ``timeseries`` and ``queue``. Read-only, and without access to files or the network; bad SQL is a
    InputError on ``SQL``."""
    directory = Path(root)
    con = open_catalog(directory, _series_named(sql))
    try:
        return con.execute(sql).df()
    except duckdb.Error as e:
        if layout.is_damage(e):
            raise layout.damaged(directory, layout.first_line(e)) from None
        for table in layout.SERIES_TABLES:
            if f"registered as '{_source(table)}' failed" in str(e):  # Arrow failed to read a file
                problem = f"a {table} file is damaged ({' '.join(str(e).split())})"
                raise series_damaged(directory, {"": problem}) from None
        raise InputError("SQL", str(e).strip()) from None
    finally:
        con.close()


def _table(root: Path, table: str, where: str = "", params: list[Any] | None = None) -> pd.DataFrame:
    con, _ = open_checked(root)
    try:
        with catalog_errors(root):
            exists = con.execute(
                "SELECT count(*) FROM duckdb_tables() WHERE database_name = current_database() "
                "AND table_name = ?",
                [table],
            ).fetchone()
            if not exists or exists[0] == 0:
                return pd.DataFrame({"run_id": pd.Series([], dtype="str")})
            return con.execute(f"SELECT * FROM {quote(table)} {where}", params or []).df()
    finally:
        con.close()


def _recorded(row: pd.Series, column: str) -> Any:
    """A recorded file size or checksum of a ``runs`` row; None when not recorded."""
    value = row.get(column)
    if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value)):
        return None
    return int(value) if column.endswith("_bytes") else str(value)


LISTED_RUNS = 5


class Results:
    """A results directory as DataFrames (see :mod:`ccfair.store` for every column).

    ``runs``, ``flows`` and ``classes`` are read on first use and kept; :meth:`timeseries`, :meth:`queue`
    and :meth:`result` read one run on demand, named by its run id or a unique prefix of it. ``flows`` and
    ``classes`` carry each run's place in its plan (``plan``, ``cell``, ``repetition``, ``flipped``) and
    the plan's coordinates; axes written with units have numeric companions (``link_buffer`` ``"0.5bdp"``
    -> ``link_buffer_bdp`` 0.5, see :mod:`.coordinates`) in all three tables. :meth:`to_xarray` gives a
    metric over a plan's grid. In Jupyter a ``Results`` shows as a short HTML summary."""

    def __init__(self, directory: str | Path) -> None:
        self.directory = Path(directory)
        if not os.path.lexists(layout.catalog_path(self.directory)):
            raise InputError(
                str(directory),
                "not a results directory (no catalog.duckdb); a single saved run is read by load_run",
            )

    def __repr__(self) -> str:
        return f"Results({str(self.directory)!r})"

    def _repr_html_(self) -> str:
        return results_html(self)

    @functools.cached_property
    def plans(self) -> dict[str, dict[str, Any]]:
        """Each plan's definition (``ccfair.sweep.plan.Plan.to_json``), by name."""
        frame = _table(self.directory, "plans", "ORDER BY plan")
        return {
            str(r["plan"]): plan_definition(
                r["definition"], f"{self.directory}: plans.definition of {r['plan']!r}"
            )
            for r in frame.to_dict("records")
            if "definition" in r
        }

    @functools.cached_property
    def axis_columns(self) -> list[str]:
        """The ``runs`` columns of every plan's varied paths, in plan order."""
        paths = [p for d in self.plans.values() for axis in d.get("axes", []) for p in axis["paths"]]
        return list(dict.fromkeys(column_name(p) for p in paths))

    @functools.cached_property
    def runs(self) -> pd.DataFrame:
        """One row per run attempted: done and failed (``status``), in commit order."""
        runs = _table(self.directory, "runs", "ORDER BY committed_at, run_id")
        return with_companions(runs, self.axis_columns)

    @functools.cached_property
    def flows(self) -> pd.DataFrame:
        """One row per flow of every done run, with its run's coordinates."""
        return self._of_done_runs("flows")

    @functools.cached_property
    def classes(self) -> pd.DataFrame:
        """One row per connection class of every done run, with its run's coordinates."""
        return self._of_done_runs("classes")

    def _of_done_runs(self, table: str) -> pd.DataFrame:
        """``table``'s rows of the runs ``runs`` shows done. Each read opens the catalog anew, and during a
        sweep a newer snapshot may be published between two reads; ``runs`` is read first and the table
        cut to it, so the three tables always describe the same runs (commits only ever add runs)."""
        runs = self.runs
        rows = _table(self.directory, table)
        if "run_id" in rows.columns and "status" in runs.columns:
            done = runs.loc[runs["status"] == "done", "run_id"]
            rows = rows[rows["run_id"].isin(done)].reset_index(drop=True)
        return join_coordinates(rows, runs, self.axis_columns)

    @functools.cached_property
    def cells(self) -> pd.DataFrame:
        """Every run of every plan registered here, done or not (``plan``, ``run_index``, ``cell``,
        ``repetition``, ``flipped``, ``run_id``)."""
        return _table(self.directory, "cells", "ORDER BY plan, run_index")

    def run_id(self, prefix: str, field: str = "run_id") -> str:
        """The done run whose id starts with ``prefix`` (the whole id, or any unique start of it, as the
        command line accepts); an InputError on ``field`` if it is not hex or matches none or several."""
        if not isinstance(prefix, str) or not re.fullmatch(r"[0-9a-f]{1,32}", prefix):
            shown = repr(prefix) if len(repr(prefix)) <= 80 else repr(prefix)[:77] + "..."
            raise InputError(
                field, f"expected a run id (32 lowercase hex characters) or a unique start of it, got {shown}"
            )
        done = self.runs.loc[self.runs["status"] == "done", "run_id"]
        matches = [r for r in done if r.startswith(prefix)]
        if len(matches) == 1:
            return str(matches[0])
        if not matches:
            listed = ", ".join(done.head(LISTED_RUNS)) + (" ..." if len(done) > LISTED_RUNS else "")
            raise InputError(
                field, f"no done run with id {prefix!r} in {self.directory}; done runs: {listed or 'none'}"
            )
        listed = ", ".join(matches[:LISTED_RUNS]) + (" ..." if len(matches) > LISTED_RUNS else "")
        raise InputError(field, f"{len(matches)} done runs start with {prefix!r}: {listed}; give more of it")

    def _done(self, run_id: str) -> pd.Series:
        """The ``runs`` row of the done run ``run_id`` (or a unique prefix of it)."""
        full = self.run_id(run_id)
        layout.check_run_id(full)
        return self.runs[(self.runs["run_id"] == full) & (self.runs["status"] == "done")].iloc[0]

    def _series(self, table: str, run_id: str) -> pd.DataFrame:
        """One done run's series file, checked against its recorded size and checksum."""
        row = self._done(run_id)
        run_id = str(row["run_id"])
        size, sha256 = _recorded(row, f"{table}_bytes"), _recorded(row, f"{table}_sha256")
        try:
            data = integrity.read_series(self.directory, table, run_id, size, sha256)
            try:
                return pd.read_parquet(io.BytesIO(data), use_threads=False)
            except (pa.ArrowException, OSError, ValueError) as e:
                name = layout.series_name(layout.series_path(self.directory, table, run_id))
                problem = f"{name} is not readable Parquet ({layout.first_line(e)})"
                raise integrity.SeriesDamage(problem) from None
        except integrity.SeriesDamage as e:
            raise series_damaged(self.directory, {run_id: str(e)}) from None

    def timeseries(self, run_id: str) -> pd.DataFrame:
        """The per-flow time series of a done run (the columns of ``RunResult.timeseries``, run_id first);
        ``run_id`` may be a unique prefix."""
        return self._series("timeseries", run_id)

    def queue(self, run_id: str) -> pd.DataFrame:
        """The bottleneck queue time series of a done run (``RunResult.queue``'s columns, run_id first)."""
        return self._series("queue", run_id)

    def result(self, run_id: str) -> RunResult:
        """A done run as the :class:`~ccfair.result.RunResult` that ``ccfair.run`` returned for it, named
        by its plan and cell."""
        row = self._done(run_id)
        run_id = str(row["run_id"])
        seed = int(row["seed"])
        where = f"{self.directory}: run {run_id}"
        spec = parse_json(row["scenario_json"], f"{where}: scenario_json")
        scenario = Scenario.from_dict(spec).with_seed(seed)

        def own(table: str) -> pd.DataFrame:
            frame = _table(self.directory, table, "WHERE run_id = ? ORDER BY rowid", [run_id])
            return frame.drop(columns="run_id")

        return RunResult(
            scenario=scenario,
            seed=seed,
            summary=parse_json(row["summary_json"], f"{where}: summary_json"),
            flows=own("flows"),
            classes=own("classes"),
            timeseries=self.timeseries(run_id).drop(columns="run_id"),
            queue=self.queue(run_id).drop(columns="run_id"),
            name=self._run_name(row),
        )

    def _run_name(self, row: pd.Series) -> str:
        """``plan figs, cell 3 (link.buffer = 1bdp, flows[1].cc = reno), repetition 0``."""
        definition = self.plans.get(str(row.get("plan")), {})
        paths = [p for axis in definition.get("axes", []) for p in axis["paths"]]
        where = ", ".join(f"{p} = {row[column_name(p)]}" for p in paths if column_name(p) in row.index)
        flipped = ", flipped" if bool(row.get("flipped")) else ""
        coordinates = f" ({where})" if where else ""
        cell = f"cell {row.get('cell')}{coordinates}"
        return f"plan {row.get('plan')}, {cell}, repetition {row.get('repetition')}{flipped}"

    def to_xarray(self, metric: str = "jain_index", plan: str | None = None) -> Any:
        """A run metric of one plan (the only one, or ``plan``) as an ``xarray.DataArray`` over the plan's
        dimensions (a zipped group is one dimension, named by its first path's column, the others
        coordinates along it), ``repetition``, and ``flipped`` when the plan mirrors start orders. Values
        are as stored (``"0.5bdp"``), with numeric companions as coordinates (``link_buffer_bdp``); runs
        not done and excluded cells are NaN. Needs xarray (``pip install xarray``)."""

        return metric_grid(self, metric, plan)

    def query(self, sql: str) -> pd.DataFrame:
        """One SQL statement over the catalog and the time series (see :func:`query`)."""
        return query(self.directory, sql)


def load(directory: str | Path) -> Results:
    """A results directory written by ``ccfair sweep``."""
    return Results(directory)
