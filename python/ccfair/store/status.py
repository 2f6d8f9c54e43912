"""``ccfair status``: done / failed / missing runs per plan, from the catalog, or from the running sweep's
``status.json`` while a sweep holds the catalog."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ccfair.store import layout

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


def store_status(root: str | Path) -> dict[str, Any]:
    """``{"directory", "plans": [{plan, runs, done, failed, missing, failures: {kind: n}}], "running"}``;
    ``running`` is the running sweep's own report (then ``plans`` is empty: the catalog is locked)."""
    directory = Path(root)
    try:
        con = layout.connect(directory, read_only=True)
    except layout.StoreBusy:
        return {"directory": str(directory), "plans": [], "running": _running(directory)}
    try:
        plans = [
            {"plan": plan, "runs": runs, "done": done, "failed": failed, "missing": runs - done - failed}
            for plan, runs, done, failed in con.execute(_PER_PLAN).fetchall()
        ]
        failures: dict[str, dict[str, int]] = {}
        for plan, kind, n in con.execute(_FAILURES).fetchall():
            failures.setdefault(plan, {})[kind or "unknown"] = n
    finally:
        con.close()
    for p in plans:
        p["failures"] = failures.get(p["plan"], {})
    return {"directory": str(directory), "plans": plans, "running": None}


def _running(directory: Path) -> dict[str, Any]:
    try:
        document: dict[str, Any] = json.loads((directory / layout.STATUS_FILE).read_text())
    except (OSError, ValueError):
        return {}
    return document
