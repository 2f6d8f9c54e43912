"""``ccfair status``: done / failed / missing runs per plan from the catalog (during a sweep: from its last
snapshot, a few seconds old), and the running sweep's own progress from its ``status.json``. With ``verify``,
also every table of the catalog read in full (DuckDB checks each block's checksum) and every done run's files
checked (:mod:`.integrity`)."""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ccfair.store import integrity, layout
from ccfair.store.check import plan_definition
from ccfair.store.reader import CATALOG_TABLES, catalog_errors, open_checked_file
from ccfair.store.repetitions import identical_cells
from ccfair.store.schema import quote
from ccfair.sweep.identity import SIMULATOR

_PER_PLAN = """
SELECT c.plan,
       count(DISTINCT c.run_id) AS runs,
       count(DISTINCT c.run_id) FILTER (WHERE r.status = 'done') AS done,
       count(DISTINCT c.run_id) FILTER (WHERE r.status = 'failed') AS failed
FROM cells c LEFT JOIN runs r USING (run_id)
GROUP BY c.plan ORDER BY c.plan
"""
_FAILURES = """
SELECT c.plan, r.error_kind, count(DISTINCT c.run_id)
FROM cells c JOIN runs r USING (run_id)
WHERE r.status = 'failed'
GROUP BY 1, 2 ORDER BY 1, 2
"""
_PLANS_OF_DONE = """
SELECT r.run_id, list(DISTINCT c.plan ORDER BY c.plan)
FROM runs r JOIN cells c USING (run_id) WHERE r.status = 'done' GROUP BY 1
"""
VERIFY_BATCH_ROWS = 65_536
STATUS_FIELDS = frozenset({"plan", "runs", "done", "failed", "to_run", "pid", "updated_at"})
STATUS_MAX_BYTES = 64 * 1024


def store_status(
    root: str | Path, verify: bool = False, progress: Callable[[float], None] | None = None
) -> dict[str, Any]:
    """``{"directory", "plans": [{plan, runs, done, failed, missing, backend, failures: {kind: n},
    cells_repeated, cells_identical: [{cell, flipped}]}], "running"}`` (``backend``: where the plan's runs
    run, ``sim`` or ``kernel``; ``cells_identical``: the cells whose repetitions came out identical,
    :mod:`.repetitions`);
    ``running`` is the running sweep's own report, or None when no sweep is writing (``plans`` is empty
    only if the sweep has published no snapshot yet). With
    ``verify``, ``"verified": {"runs": done runs checked, "damaged": [{run_id, plans, problems}]}``;
    ``progress(fraction)`` follows the file checks."""
    directory = Path(root)
    try:
        con, version, path = open_checked_file(directory)
    except layout.StoreBusy:
        return {"directory": str(directory), "plans": [], "running": _running(directory)}
    running = _running(directory) if path.name == layout.SNAPSHOT_FILE else None
    try:
        with catalog_errors(directory):
            plans = [
                {"plan": plan, "runs": runs, "done": done, "failed": failed, "missing": runs - done - failed}
                for plan, runs, done, failed in con.execute(_PER_PLAN).fetchall()
            ]
            backends = {
                str(plan): plan_definition(text, f"{directory}: plans.definition of {plan!r}").get(
                    "backend", SIMULATOR
                )
                for plan, text in con.execute("SELECT plan, definition FROM plans").fetchall()
            }
            repeated = {p["plan"]: identical_cells(con, p["plan"]) for p in plans}
            failures: dict[str, dict[str, int]] = {}
            for plan, kind, n in con.execute(_FAILURES).fetchall():
                failures.setdefault(plan, {})[kind or "unknown"] = n
            if verify:
                _read_in_full(con)
                done_runs = integrity.done_runs(con, version)
                plans_of: dict[str, list[str]] = dict(con.execute(_PLANS_OF_DONE).fetchall())
    finally:
        con.close()
    for p in plans:
        p["backend"] = backends.get(p["plan"], SIMULATOR)
        p["failures"] = failures.get(p["plan"], {})
        p.update(repeated[p["plan"]].to_json())
    status: dict[str, Any] = {"directory": str(directory), "plans": plans, "running": running}
    if verify:
        damaged = []
        for i, run in enumerate(done_runs):
            problems = integrity.run_problems(directory, run, full=True)
            if problems:
                damaged.append(
                    {"run_id": run.run_id, "plans": plans_of.get(run.run_id, []), "problems": problems}
                )
            if progress is not None:
                progress((i + 1) / len(done_runs))
        status["verified"] = {"runs": len(done_runs), "damaged": damaged}
    return status


def _read_in_full(con: Any) -> None:
    """Reads every row of every catalog table, so that DuckDB checks every block of the file. The rows come
    through DuckDB's own cursor, not an Arrow stream: an Arrow stream left to the garbage collector kept a
    native worker thread that aborted the process at exit (SIGABRT) now and then."""
    present = {r[0] for r in con.execute("SELECT table_name FROM duckdb_tables()").fetchall()}
    for table in (*CATALOG_TABLES, "meta"):
        if table in present:
            cursor = con.execute(f"SELECT * FROM {quote(table)}")
            while cursor.fetchmany(VERIFY_BATCH_ROWS):
                pass


def _running(directory: Path) -> dict[str, Any]:
    """The running sweep's ``status.json``: its known fields with plain values (what ``ccfair status``
    shows), read without following a link and up to :data:`STATUS_MAX_BYTES`."""
    try:
        fd = os.open(directory / layout.STATUS_FILE, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return {}
            text = os.read(fd, STATUS_MAX_BYTES + 1)
        finally:
            os.close(fd)
        if len(text) > STATUS_MAX_BYTES:
            return {}
        document = json.loads(text)
    except (OSError, ValueError, RecursionError):
        return {}
    if not isinstance(document, dict):
        return {}
    return {
        key: value
        for key, value in document.items()
        if key in STATUS_FIELDS and isinstance(value, str | int | float) and not isinstance(value, bool)
    }
