"""Cells whose repetitions came out identical: the same delivered bytes for every flow in every done run of
the cell (exactly, by :func:`ccfair.analysis.stats.identical`). The simulator is deterministic: a seed
changes only what a run draws, and with ideal hosts (``[host] preset = "ideal"``), no random path loss (or
one too small to drop a packet in the run), no BBR and no queue discipline that draws, it changes nothing,
so the repetitions of a cell are one run several times over and an interval over them is 0 wide by
construction, not by agreement. The default hosts (``kernel-lab``, as the other presets) add start jitter,
timing noise and a tick phase that the seed draws, and repetitions vary as on a real testbed.

A cell here is a plan's cell in one start order (``cell``, ``flipped``): a mirrored run is another
scenario. Cells with fewer than two done runs are never identical.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ccfair.analysis.stats import identical
from ccfair.store.reader import catalog_errors, open_checked

# One row per done run of the plan: its place and its flows' delivered bytes in flow order.
_OUTCOMES = """
SELECT c.cell, c.flipped, c.repetition, list(f.total_delivered_bytes ORDER BY f.flow_id) AS delivered
FROM cells c JOIN runs r USING (run_id) JOIN flows f USING (run_id)
WHERE c.plan = ? AND r.status = 'done'
GROUP BY c.cell, c.flipped, c.repetition, c.run_id
ORDER BY c.cell, c.flipped, c.repetition
"""
MAX_LISTED = 10  # cells named in a note; the rest are counted
HINT = (
    "a seed changes only what a run draws (the hosts' start jitter and timing noise, which ideal hosts leave "
    "out; random path loss; BBR's and a random queue discipline's draws), and in these cells nothing drawn "
    "changed what was delivered (a small loss probability may drop no packet in a run, or drop the same); "
    'the default hosts (no preset = "ideal" in [host]) give testbed-like variance'
)


@dataclass(frozen=True)
class Repeated:
    """A plan's cells with at least two done runs (``repeated``) and those of them whose runs are identical
    (``identical``), as ``(cell, flipped)`` pairs in plan order."""

    plan: str
    repeated: list[tuple[int, bool]]
    identical: list[tuple[int, bool]]

    def cell_text(self, cell: int) -> str:
        """For a table row of ``cell`` (both start orders): ``identical``, ``identical (start order
        flipped)`` when only one order's runs are, ``vary``, or ``-`` (fewer than two done runs)."""
        same = [f for c, f in self.identical if c == cell]
        repeated = [f for c, f in self.repeated if c == cell]
        if not repeated:
            return "-"
        if not same:
            return "vary"
        if len(same) == len(repeated):
            return "identical"
        return f"identical (start order {'flipped' if same[0] else 'as written'})"

    def to_json(self) -> dict[str, Any]:
        return {
            "cells_repeated": len(self.repeated),
            "cells_identical": [{"cell": c, "flipped": f} for c, f in self.identical],
        }

    def note(self) -> str | None:
        """One line naming the identical cells and how to get variance; None when there are none."""
        return identical_note(self.plan, len(self.repeated), self.identical)


def identical_note(plan: str, repeated: int, identical: list[tuple[int, bool]]) -> str | None:
    """The note of a plan with ``repeated`` cells of several done runs, ``identical`` of them identical."""
    if not identical:
        return None
    names = [f"{c}{' (flipped)' if f else ''}" for c, f in identical[:MAX_LISTED]]
    more = len(identical) - len(names)
    listed = ", ".join(names) + (f" and {more} more" if more else "")
    cells = "cell" if len(identical) == 1 else "cells"
    return (
        f"note: plan {plan}: {len(identical)} of {repeated} repeated cells gave identical repetitions "
        f"(the same delivered bytes per flow in every run; {cells} {listed}): {HINT}"
    )


def identical_cells(con: Any, plan: str) -> Repeated:
    """The :class:`Repeated` of ``plan`` from an open catalog connection ``con``. A store whose first run
    has not finished yet has no ``flows`` table: nothing is repeated there."""
    outcomes: dict[tuple[int, bool], list[tuple[int, ...]]] = {}
    if not con.execute("SELECT 1 FROM duckdb_tables() WHERE table_name = 'flows'").fetchall():
        return Repeated(plan, [], [])
    for cell, flipped, _, delivered in con.execute(_OUTCOMES, [plan]).fetchall():
        outcomes.setdefault((int(cell), bool(flipped)), []).append(tuple(int(b) for b in delivered))
    repeated = [key for key, runs in outcomes.items() if len(runs) > 1]
    return Repeated(plan, repeated, [key for key in repeated if identical(outcomes[key])])


def plan_repetitions(root: str | Path, plan: str) -> Repeated:
    """The :class:`Repeated` of ``plan`` in the results directory ``root``."""
    directory = Path(root)
    con, _ = open_checked(directory)
    try:
        with catalog_errors(directory):
            return identical_cells(con, plan)
    finally:
        con.close()
