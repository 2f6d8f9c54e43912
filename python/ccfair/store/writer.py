"""The store's single writer: registers plans and commits each finished run atomically.

A run is committed in this order: its time-series Parquet files are written to hidden temporary files,
fsynced, renamed into place and the directory fsynced; then one DuckDB transaction inserts its ``runs``
row (status ``done``, with each file's size and SHA-256) with its ``flows`` and ``classes`` rows. Readers
see a run only through a ``done`` row, so a kill at any moment leaves either the whole run or nothing
visible: a kill before the commit leaves at most unreferenced files, which the next writer removes (and a
rerun replaces).

While it writes, no other process can open the catalog (DuckDB's rule), so the writer publishes a snapshot
of it every few seconds (:meth:`StoreWriter.snapshot`, see :mod:`.layout`) that readers open instead.

Opening a directory checks its catalog (:mod:`.check`; a version-1 catalog gets the file columns) and
every done run's files (:mod:`.integrity`: existence and size, or with ``verify`` their checksums): a
damaged run becomes a failed run of kind ``damaged`` (its ``flows`` and ``classes`` rows removed), which
the next sweep of its plan runs again.
"""

from __future__ import annotations

import contextlib
import datetime
import json
import math
import os
import signal
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import duckdb
import pandas as pd
import pyarrow as pa

from ccfair import fsio
from ccfair.errors import InputError, OutputError
from ccfair.store import integrity, layout
from ccfair.store.check import check_catalog, plan_definition
from ccfair.store.coordinates import companion
from ccfair.store.schema import (
    ADDED_IN,
    DDL,
    FILE_COLUMNS,
    RESERVED_COLUMNS,
    RUN_COLUMNS,
    SCHEMA_VERSION,
    SUMMARY_COLUMNS,
    column_value,
    fits,
    metric_value,
    quote,
    scenario_columns,
    value_type,
)
from ccfair.sweep.expand import PlannedRun
from ccfair.sweep.identity import SIMULATOR, canonical_json
from ccfair.sweep.paths import column_name
from ccfair.sweep.plan import Plan
from ccfair.sweep.task import RunOutcome

STATUS_INTERVAL_S = 0.5
DAMAGED = "damaged"  # error_kind of a done run whose files were found damaged


def _finite(value: Any) -> Any:
    """JSON has no NaN or infinity: such a summary value is stored as null."""
    return None if isinstance(value, float) and not math.isfinite(value) else value


@contextlib.contextmanager
def _interrupt_after() -> Iterator[None]:
    """Holds Ctrl-C back until the block is done: DuckDB aborts a statement, COMMIT included, when Python
    sees a pending SIGINT, which would leave a run's fate unknown. Main thread only (signals go there)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    received: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: received.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        if received and callable(previous):
            previous(signal.SIGINT, None)  # Python's default handler raises KeyboardInterrupt here


def _rollback(con: Any) -> None:
    """Rolls back the open transaction, if DuckDB has not already ended it."""
    try:
        con.execute("ROLLBACK")
    except duckdb.Error:
        pass


def _concat(tables: Sequence[pa.Table | None]) -> pa.Table:
    present = [t for t in tables if t is not None]
    return pa.concat_tables(present, promote_options="default")


def _utc_now() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC).replace(tzinfo=None)


class StoreWriter:
    """Opens (creating if needed) the results directory ``root`` for writing; one per directory at a time.
    An existing directory that is not empty and not a results directory is refused before anything is
    written (an InputError on ``option``), and a write that fails (a full disk) is an OutputError saying
    that the runs committed so far are kept. Use as a context manager; ``commit_seconds`` and
    ``commit_cpu_seconds`` accumulate the wall and CPU time (of this process, DuckDB's threads included)
    spent committing runs, snapshots included. ``damaged`` maps the done runs whose files were found
    damaged on opening (checksums too with ``verify``) to their problems."""

    def __init__(self, root: str | Path, verify: bool = False, option: str = "--out") -> None:
        self.option = option
        self.root = fsio.prepare_dir(root, layout.RESULTS_KIND, option)
        self._con = layout.connect(self.root, read_only=False)
        # DuckDB holds the catalog with a POSIX lock, which a process loses when it closes any descriptor
        # of the file: snapshots read through this one, closed only after the connection.
        try:
            self._catalog_fd = os.open(layout.catalog_path(self.root), os.O_RDONLY | os.O_CLOEXEC)
        except BaseException:
            self._con.close()
            raise
        self._snapshot_at = 0.0  # monotonic time of the last snapshot
        self._snapshot_interval_s = layout.SNAPSHOT_INTERVAL_S
        self._coordinate_types: dict[str, str] = {}
        # Per path written with units: its numeric companion's column and each value's number.
        self._companions: dict[str, tuple[str, dict[str, float | int]]] = {}
        self._known_columns: dict[str, set[str]] = {}  # per table, to skip schema queries per commit
        self._failed: set[str] = set()  # runs whose failed row a new attempt replaces
        self._status_written = 0.0
        self.commit_seconds = 0.0
        self.commit_cpu_seconds = 0.0
        self.damaged: dict[str, list[str]] = {}
        try:
            with self._write_failures():
                self._open_schema()
                self._check_series_dirs()
                with _interrupt_after():
                    self._mark_damaged(verify)
                self._remove_leftovers()
                self._remove_snapshot()
            self._failed = self.run_ids("failed")
        except duckdb.Error as e:
            self._close_catalog()
            if layout.is_damage(e):
                raise layout.damaged(self.root, layout.first_line(e)) from None
            raise
        except BaseException:
            self._close_catalog()
            raise

    def __enter__(self) -> StoreWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        (self.root / layout.STATUS_FILE).unlink(missing_ok=True)
        self._close_catalog()
        self._remove_snapshot()  # readers open the catalog itself again

    def _close_catalog(self) -> None:
        self._con.close()
        os.close(self._catalog_fd)

    def snapshot(self) -> None:
        """Publishes the catalog as it is now for readers (:data:`.layout.SNAPSHOT_FILE`): a checkpoint (so
        the file holds every commit), a copy to a hidden temporary, renamed into place. Its cost sets the
        interval to the next one (see :meth:`commit_many`)."""
        t0 = time.monotonic()
        self._con.execute("CHECKPOINT")
        tmp = self.root / f".{layout.SNAPSHOT_FILE}{layout.TMP_MARK}{os.getpid()}"
        size = os.fstat(self._catalog_fd).st_size
        out = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
        try:
            offset = 0
            while offset < size:
                sent = os.sendfile(out, self._catalog_fd, offset, size - offset)
                if sent == 0:
                    break
                offset += sent
        finally:
            os.close(out)
        os.replace(tmp, self.root / layout.SNAPSHOT_FILE)
        self._snapshot_at = time.monotonic()
        cost_s = self._snapshot_at - t0
        self._snapshot_interval_s = max(layout.SNAPSHOT_INTERVAL_S, cost_s / layout.SNAPSHOT_MAX_SHARE)

    def _remove_snapshot(self) -> None:
        """Removes a snapshot and its temporaries (this writer's, or those a killed sweep left)."""
        (self.root / layout.SNAPSHOT_FILE).unlink(missing_ok=True)
        for stale in self.root.glob(f".{layout.SNAPSHOT_FILE}{layout.TMP_MARK}*"):
            stale.unlink(missing_ok=True)

    # ------------------------------------------------------------------------------------------------ setup

    def _open_schema(self) -> None:
        """Creates the tables in a new (empty) catalog; checks an existing one and brings an older catalog to
        the current schema (the columns it lacks, null for the runs committed before)."""
        con = self._con
        version = check_catalog(con, self.root, allow_empty=True)
        if version == SCHEMA_VERSION:
            return
        con.execute("BEGIN")
        try:
            if version == 0:
                for statement in DDL:
                    con.execute(statement)
                con.execute("INSERT INTO meta VALUES ('schema_version', ?)", [str(SCHEMA_VERSION)])
            else:
                have = self._columns("runs")
                for name, sql_type in RUN_COLUMNS:
                    if name in ADDED_IN and name not in have:
                        con.execute(f"ALTER TABLE runs ADD COLUMN {quote(name)} {sql_type}")
                con.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", [str(SCHEMA_VERSION)])
            con.execute("COMMIT")
        except BaseException:
            _rollback(con)
            raise

    def _columns(self, table: str) -> dict[str, str]:
        """Column name -> SQL type of ``table`` (empty if it does not exist)."""
        rows = self._con.execute(
            "SELECT column_name, data_type FROM information_schema.columns WHERE table_name = ?", [table]
        ).fetchall()
        return {name: data_type for name, data_type in rows}

    def _check_series_dirs(self) -> None:
        """The series directory and its shards are directories of this store, not links to elsewhere (the
        writer deletes files in them); a directory where a series file belongs is refused, not removed."""
        series = self.root / layout.SERIES_DIR
        if series.is_symlink() or (series.exists() and not series.is_dir()):
            raise InputError(str(self.root), f"{layout.SERIES_DIR} is not a directory")
        if not series.exists():
            return
        with os.scandir(series) as shards:
            for shard in shards:
                if not shard.is_dir(follow_symlinks=False):
                    raise InputError(
                        str(self.root), f"{layout.SERIES_DIR}/{shard.name} is not a directory; move it away"
                    )
                with os.scandir(shard.path) as entries:
                    for entry in entries:
                        if entry.is_dir(follow_symlinks=False):
                            raise InputError(
                                str(self.root),
                                f"{layout.SERIES_DIR}/{shard.name}/{entry.name} is a directory where only "
                                "series files belong; move it away",
                            )

    def _mark_damaged(self, full: bool) -> None:
        """Done runs whose files are damaged become failed runs of kind ``damaged``, in one transaction."""
        runs = integrity.done_runs(self._con, SCHEMA_VERSION)
        self.damaged = integrity.damaged_runs(self.root, runs, full)
        if not self.damaged:
            return
        ids = sorted(self.damaged)
        metrics = ", ".join(f"{quote(k)} = NULL" for k in (*SUMMARY_COLUMNS, *(n for n, _ in FILE_COLUMNS)))
        con = self._con
        con.execute("BEGIN")
        try:
            for run_id in ids:
                con.execute(
                    "UPDATE runs SET status = 'failed', error_kind = ?, error = ?, summary_json = NULL, "
                    f"{metrics} WHERE run_id = ?",
                    [DAMAGED, "; ".join(self.damaged[run_id]), run_id],
                )
            for table in ("flows", "classes"):
                if self._columns(table):
                    con.execute(f"DELETE FROM {table} WHERE list_contains(?, run_id)", [ids])
            con.execute("COMMIT")
        except BaseException:
            _rollback(con)
            raise

    def _remove_leftovers(self) -> None:
        """Deletes temporary files of interrupted commits and series files (or links in their place) of
        runs that are not done."""
        done = self.run_ids("done")
        for path in layout.series_files(self.root):
            if layout.TMP_MARK in path.name or layout.run_id_of(path) not in done:
                path.unlink(missing_ok=True)

    # ------------------------------------------------------------------------------------------------ plans

    def run_ids(self, status: str, error_kind: str | None = None) -> set[str]:
        """The runs of ``status`` (and ``error_kind``, if given)."""
        sql = "SELECT run_id FROM runs WHERE status = ?"
        params = [status]
        if error_kind is not None:
            sql += " AND error_kind = ?"
            params.append(error_kind)
        return {r[0] for r in self._con.execute(sql, params).fetchall()}

    def builds(self, run_ids: Sequence[str]) -> list[tuple[Any, Any, Any, int]]:
        """The builds that made ``run_ids``: (ccfair_version, git_revision, native_build, runs)."""
        if not run_ids:
            return []
        rows = self._con.execute(
            "SELECT ccfair_version, git_revision, native_build, count(*) FROM runs "
            "WHERE list_contains(?, run_id) GROUP BY ALL ORDER BY 4 DESC",
            [list(run_ids)],
        ).fetchall()
        return [(v, g, n, int(c)) for v, g, n, c in rows]

    def register_plan(self, plan: Plan, runs: list[PlannedRun]) -> None:
        """Records the plan and its runs (replacing an earlier version of a plan with the same name) and
        adds a ``runs`` column per varied path. Checked before anything is written: a plan of this name
        stored with another backend is refused (its runs would silently stop being the plan's)."""
        self._check_same_backend(plan)
        existing = self._columns("runs")
        added: list[tuple[str, str]] = []
        for axis in plan.axes:
            for k, path in enumerate(axis.paths):
                column = column_name(path)
                wanted = value_type([point[k] for point in axis.points])
                if column in RESERVED_COLUMNS:
                    raise InputError(axis.label, f"its column name {column!r} is taken by a catalog column")
                have = existing.get(column)
                if have is None:
                    added.append((column, wanted))
                    existing[column] = wanted
                elif not fits(have, wanted):
                    raise InputError(
                        axis.label,
                        f"the store's runs.{column} column holds {have} values and this plan gives {wanted}; "
                        "use another --out directory",
                    )
                self._coordinate_types[path] = existing[column]
                self._register_companion(path, column, [point[k] for point in axis.points], existing, added)
        cells = pd.DataFrame(
            {
                "plan": plan.name,
                "run_index": [r.index for r in runs],
                "cell": [r.cell for r in runs],
                "repetition": [r.repetition for r in runs],
                "flipped": [r.flipped for r in runs],
                "run_id": [r.run_id for r in runs],
            }
        )
        with _interrupt_after(), self._write_failures():
            self._replace_plan(plan, cells, added)

    def _register_companion(
        self,
        path: str,
        column: str,
        values: list[Any],
        existing: dict[str, str],
        added: list[tuple[str, str]],
    ) -> None:
        """A numeric column beside an axis written with units, holding its values in base units
        (``link_buffer`` "0.5bdp" -> ``link_buffer_bdp`` 0.5: :mod:`.coordinates`), so that SQL sorts and
        compares them as numbers. None where the name is a catalog column (``link_rate_bps``) or another
        axis's, or the values are not all of one unit."""
        if not all(isinstance(v, str) for v in values):
            return  # numbers are stored as numbers; tables (an aqm with parameters) as JSON
        found = companion(column, pd.Series(values, dtype=object))
        if found is None or found[0] in RESERVED_COLUMNS:
            return
        name, numbers = found
        # Base units are whole (ns, bit/s, bytes, packets) but for multiples of the BDP.
        sql_type = "DOUBLE" if name.endswith("_bdp") else "BIGINT"
        have = existing.get(name)
        if have is not None and have != sql_type:
            return  # another plan's axis of that name
        if have is None:
            added.append((name, sql_type))
            existing[name] = sql_type
        cast = float if sql_type == "DOUBLE" else int
        self._companions[path] = (name, {str(v): cast(n) for v, n in zip(values, numbers, strict=True)})

    def _check_same_backend(self, plan: Plan) -> None:
        row = self._con.execute("SELECT definition FROM plans WHERE plan = ?", [plan.name]).fetchone()
        if row is None:
            return
        stored = plan_definition(row[0], f"{self.root}: plans.definition of {plan.name!r}")
        before = stored.get("backend", SIMULATOR)
        if before != plan.backend:
            raise InputError(
                "backend",
                f"plan {plan.name} in {self.root} ran on the {before} backend; its runs on the "
                f"{plan.backend} backend would replace them as the plan's runs. Give this plan another name "
                "(name = ... in the plan) or sweep into another --out directory",
            )

    def _replace_plan(self, plan: Plan, cells: pd.DataFrame, added: list[tuple[str, str]]) -> None:
        con = self._con
        con.execute("BEGIN")
        try:
            for column, sql_type in added:
                con.execute(f"ALTER TABLE runs ADD COLUMN {quote(column)} {sql_type}")
            # Runs committed before their axis had a companion (by an older ccfair) get it now.
            for path, (name, numbers) in self._companions.items():
                for value, number in numbers.items():
                    con.execute(
                        f"UPDATE runs SET {quote(name)} = ? WHERE {quote(name)} IS NULL "
                        f"AND {quote(column_name(path))} = ?",
                        [number, value],
                    )
            con.execute("DELETE FROM plans WHERE plan = ?", [plan.name])
            con.execute(
                "INSERT INTO plans VALUES (?, ?, ?, ?, ?, ?)",
                [plan.name, plan.source, plan.to_json(), cells["cell"].nunique(), len(cells), _utc_now()],
            )
            con.execute("DELETE FROM cells WHERE plan = ?", [plan.name])
            con.register("new_cells", cells)
            con.execute("INSERT INTO cells BY NAME SELECT * FROM new_cells")
            con.unregister("new_cells")
            con.execute("COMMIT")
        except BaseException:
            _rollback(con)
            raise
        finally:
            self._known_columns.clear()

    # ------------------------------------------------------------------------------------------------- runs

    def commit(self, plan: str, run: PlannedRun, outcome: RunOutcome, executor: str) -> None:
        """Stores one finished attempt of ``run`` (see :meth:`commit_many`)."""
        self.commit_many(plan, [(run, outcome)], executor)

    def commit_many(
        self, plan: str, finished: Sequence[tuple[PlannedRun, RunOutcome]], executor: str
    ) -> None:
        """Stores finished attempts, each a done run with its tables or a failure with its error, in one
        transaction: runs that finish while the writer is busy share one commit, so a writer behind many
        workers catches up. Each run is stored whole or not at all. Returns once they are durable; Ctrl-C
        during a commit takes effect right after it."""
        t0, cpu0 = time.perf_counter(), time.process_time()
        with _interrupt_after(), self._write_failures():
            self._commit(plan, finished, executor)
            if time.monotonic() - self._snapshot_at >= self._snapshot_interval_s:
                self.snapshot()
        self.commit_seconds += time.perf_counter() - t0
        self.commit_cpu_seconds += time.process_time() - cpu0

    @contextlib.contextmanager
    def _write_failures(self) -> Iterator[None]:
        """An I/O error while writing the store (a full disk; DuckDB words it its own way) as an OutputError:
        the failed transaction is rolled back, and every run committed before stays."""
        try:
            yield
        except (OSError, duckdb.IOException, duckdb.TransactionException, duckdb.FatalException) as e:
            raise OutputError(
                self.option,
                f"{self.root}: {fsio.failure_text(e)} (the runs committed so far are kept; run the sweep "
                "again to resume)",
            ) from None

    def _commit(self, plan: str, finished: Sequence[tuple[PlannedRun, RunOutcome]], executor: str) -> None:
        done = [(run, outcome) for run, outcome in finished if outcome.status == "done"]
        files = {run.run_id: self._write_series(run.run_id, outcome) for run, outcome in done}
        rows = [self._run_row(plan, run, outcome, executor) for run, outcome in finished]
        for row in rows:
            row.update(files.get(row["run_id"], {}))
        retried = [run.run_id for run, _ in finished if run.run_id in self._failed]
        con = self._con
        con.execute("BEGIN")
        try:
            self._add_metric_columns(rows)
            if retried:
                con.execute(
                    "DELETE FROM runs WHERE status = 'failed' AND list_contains(?, run_id)", [retried]
                )
            self._insert_rows(rows)
            if done:
                self._insert_frame("flows", _concat([outcome.flows for _, outcome in done]))
                self._insert_frame("classes", _concat([outcome.classes for _, outcome in done]))
            con.execute("COMMIT")
        except BaseException:
            _rollback(con)
            self._known_columns.clear()
            raise
        for run, outcome in finished:
            if outcome.status == "done":
                self._failed.discard(run.run_id)
            else:
                self._failed.add(run.run_id)

    def _write_series(self, run_id: str, outcome: RunOutcome) -> dict[str, Any]:
        """Both Parquet files durable under their final names (the catalog row comes after); returns the
        ``runs`` columns recording their sizes and checksums."""
        shard = layout.series_path(self.root, "timeseries", run_id).parent
        if not shard.is_dir():
            shard.mkdir(parents=True)
            fsio.fsync_dir(shard.parent)
        record: dict[str, Any] = {}
        for table, data in (("timeseries", outcome.timeseries_parquet), ("queue", outcome.queue_parquet)):
            assert data is not None
            fsio.replace_file(layout.series_path(self.root, table, run_id), data)
            record[f"{table}_bytes"], record[f"{table}_sha256"] = integrity.file_record(data)
        fsio.fsync_dir(shard)
        return record

    def _run_row(self, plan: str, run: PlannedRun, outcome: RunOutcome, executor: str) -> dict[str, Any]:
        row: dict[str, Any] = {
            "run_id": run.run_id,
            "status": outcome.status,
            "error_kind": outcome.error_kind,
            "error": outcome.error,
            "plan": plan,
            "cell": run.cell,
            "repetition": run.repetition,
            "flipped": run.flipped,
            "seed": run.seed,
            **scenario_columns(run.spec),
            "scenario_json": canonical_json(run.scenario),
            "executor": executor,
            "committed_at": _utc_now(),
        }
        for key in (
            "backend",
            "ccfair_version",
            "git_revision",
            "native_build",
            "host",
            "worker",
            "started_at",
        ):
            row[key] = outcome.provenance.get(key)
        for key in ("task_wall_seconds", "encode_seconds"):
            row[key] = outcome.provenance.get(key)
        if outcome.summary is not None:
            row["summary_json"] = json.dumps({k: _finite(v) for k, v in outcome.summary.items()})
            for key, value in outcome.summary.items():
                number = metric_value(value)
                # Known metrics always have a column; a new numeric one gets its own; anything else (or a
                # name a catalog column already uses) lives in summary_json only.
                if key in SUMMARY_COLUMNS or (number is not None and key not in RESERVED_COLUMNS):
                    row[key] = number
        for path, value in run.coordinates:
            row[column_name(path)] = column_value(value, self._coordinate_type(path))
            if path in self._companions:
                name, numbers = self._companions[path]
                row[name] = numbers.get(str(value))
        return row

    def _coordinate_type(self, path: str) -> str:
        """The SQL type of a path's column (known from :meth:`register_plan`, else from the catalog)."""
        if path not in self._coordinate_types:
            sql_type = self._columns("runs").get(column_name(path))
            if sql_type is None:
                raise ValueError(f"no column for {path!r}: register the plan before committing its runs")
            self._coordinate_types[path] = sql_type
        return self._coordinate_types[path]

    def _table_columns(self, table: str) -> set[str]:
        if table not in self._known_columns:
            self._known_columns[table] = set(self._columns(table))
        return self._known_columns[table]

    def _add_metric_columns(self, rows: Sequence[Mapping[str, Any]]) -> None:
        """New summary metrics (from a newer ccfair) get their own DOUBLE column."""
        existing = self._table_columns("runs")
        for row in rows:
            for name in row:
                if name not in existing:
                    self._con.execute(f"ALTER TABLE runs ADD COLUMN {quote(name)} DOUBLE")
                    existing.add(name)

    def _insert_rows(self, rows: Sequence[Mapping[str, Any]]) -> None:
        """``runs`` rows in one statement with parameters (cheaper than a frame for a few wide rows); every
        key of any row is a column, missing values are null."""
        names = list(dict.fromkeys(name for row in rows for name in row))
        one = "(" + ", ".join("?" for _ in names) + ")"
        self._con.execute(
            f"INSERT INTO runs ({', '.join(quote(n) for n in names)}) VALUES {', '.join(one for _ in rows)}",
            [row.get(name) for row in rows for name in names],
        )

    def _insert_frame(self, table: str, frame: pa.Table) -> None:
        """Appends ``frame``; the table is created from the first frame, and later columns are added."""
        con = self._con
        con.register("frame", frame)
        try:
            existing = self._table_columns(table)
            if not existing:
                con.execute(f"CREATE TABLE {quote(table)} AS SELECT * FROM frame LIMIT 0")
                existing.update(frame.column_names)
            elif not existing.issuperset(frame.column_names):
                described = con.execute("DESCRIBE SELECT * FROM frame").fetchall()
                for name, sql_type, *_ in described:
                    if name not in existing:
                        con.execute(f"ALTER TABLE {quote(table)} ADD COLUMN {quote(name)} {sql_type}")
                        existing.add(name)
            con.execute(f"INSERT INTO {quote(table)} BY NAME SELECT * FROM frame")
        finally:
            con.unregister("frame")

    # ----------------------------------------------------------------------------------------------- status

    def update_status(self, status: Mapping[str, Any], force: bool = False) -> None:
        """Writes ``status.json`` (what ``ccfair status`` shows while this writer holds the catalog), at
        most every half second unless ``force``."""
        now = time.monotonic()
        if not force and now - self._status_written < STATUS_INTERVAL_S:
            return
        self._status_written = now
        document = {**status, "pid": os.getpid(), "updated_at": _utc_now().isoformat() + "Z"}
        with self._write_failures():
            fsio.replace_file(
                self.root / layout.STATUS_FILE, (json.dumps(document, indent=2) + "\n").encode(), sync=False
            )
