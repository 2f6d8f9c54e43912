"""Running the grid's plans into a results directory through the sweep machinery (every finished run is
committed at once, a store's runs are reused, Ctrl-C keeps what finished and the same command resumes).

The kernel side runs one cell at a time and tops up a cell whose runs the testbed's health flagged: such
runs stay in the store (and in the stored truth, marked excluded with the reason), and further repetitions
are run until the cell has its count of healthy runs or has run twice that count. A cell the kernel backend
cannot run here (a link rate above the clean rate ``ccfair doctor`` measured, a variant it refuses) is
skipped with the reason, which the comparison reports.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ccfair.cli_support import note
from ccfair.errors import InputError
from ccfair.json_text import parse_json
from ccfair.studies.run import run_plans
from ccfair.studies.validate.grid import NO_LOOP, Cell, KernelLoop, cell_plan
from ccfair.sweep.driver import plan_runs, run_sweep
from ccfair.sweep.expand import layout
from ccfair.sweep.identity import SIMULATOR
from ccfair.sweep.plan import Plan
from ccfair.units import parse_duration_ns

KERNEL = "kernel"
# A cell is topped up to at most this many times its repetitions when health flags its runs.
MAX_ATTEMPTS_FACTOR = 2


@dataclass
class SideRuns:
    """The run ids of each cell on one side, in repetition order, and the cells that did not run."""

    runs: dict[str, list[str]] = field(default_factory=dict)
    skipped: dict[str, str] = field(default_factory=dict)  # cell -> why


def planned_ids(plan: Plan) -> list[str]:
    _, runs = plan_runs(plan, quiet=True, limits=None)
    return [r.run_id for r in sorted(runs, key=lambda r: r.repetition)]


def check_cell(
    cell: Cell, backend: str, side: str | None, repetitions: int, loop: KernelLoop = NO_LOOP
) -> Plan | str:
    """The cell's plan, or why this backend cannot run it (its scenario refused by the backend's rules)."""
    plan = cell_plan(cell, backend, side, repetitions, loop=loop)
    try:
        layout(plan)  # the cell's variants checked, without building every repetition's run
    except InputError as e:
        # The grid's plans have one cell, which the sweep layer's message names as the base scenario.
        return f"{e.field}: {e.message.removesuffix(' (in cell 0: the base scenario)')}"
    return plan


def run_sim_side(
    cells: Sequence[Cell],
    side: str,
    repetitions: int,
    out: Path,
    args: argparse.Namespace,
    loops: Mapping[str, KernelLoop] | None = None,
    draws: Mapping[str, Sequence[tuple[int, int]] | None] | None = None,
) -> SideRuns:
    """Runs every cell the simulator accepts on ``side`` (one of ``grid.SIDES``); the loop side goes round
    the cell's kernel loop (``loops``, by cell name; the preset's own values where none was measured).
    A cell with ``draws`` (by cell name: the (round, repetition in the round) of each kernel run it is
    compared with) runs those runs' seeds, in their order; one without runs as many as the cell takes
    (:meth:`Cell.runs`)."""
    done = SideRuns()
    plans = []
    for cell in cells:
        loop = (loops or {}).get(cell.name, NO_LOOP)
        checked = check_cell(cell, SIMULATOR, side, cell.runs(repetitions), loop)
        if isinstance(checked, str):
            done.skipped[cell.name] = checked
            continue
        wanted = (draws or {}).get(cell.name)
        if not wanted:
            plans.append(checked)
            done.runs[cell.name] = planned_ids(checked)
            continue
        ids: dict[tuple[int, int], str] = {}
        for round_ in sorted({r for r, _ in wanted}):
            count = 1 + max(k for r, k in wanted if r == round_)
            plan = cell_plan(cell, SIMULATOR, side, count, round_=round_, loop=loop)
            plans.append(plan)
            ids.update(((round_, k), run_id) for k, run_id in enumerate(planned_ids(plan)))
        done.runs[cell.name] = [ids[d] for d in wanted]
    if plans:
        run_plans(plans, out, args)
    return done


def run_health(out: Path, run_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
    """The emulator health of each done kernel run (from its summary), by run id."""
    # DuckDB loads when a store is read.
    from ccfair.store.layout import catalog_path
    from ccfair.store.reader import query

    if not run_ids or not catalog_path(out).is_file():
        return {}
    ids = ", ".join(f"'{r}'" for r in run_ids)
    frame = query(out, f"SELECT run_id, summary_json FROM runs WHERE status = 'done' AND run_id IN ({ids})")
    return {
        r: parse_json(s, f"runs.summary_json of {r}")
        for r, s in zip(frame["run_id"], frame["summary_json"], strict=True)
    }


def healthy(summary: dict[str, Any]) -> bool:
    return not summary.get("emulator_limited")


def time_limit_s(args: argparse.Namespace) -> float | None:
    limit = getattr(args, "time_limit", None)
    return None if limit is None else parse_duration_ns(limit, "--time-limit") / 1e9


def run_kernel_side(
    cells: Sequence[Cell],
    repetitions: int,
    out: Path,
    args: argparse.Namespace,
    stored: Mapping[str, tuple[int, int]] | None = None,
) -> SideRuns:
    """Runs every cell the kernel backend accepts here, topping up cells with flagged runs. With ``stored``
    (a cell's (next repetition, healthy runs) in the truth being topped up), a cell runs only the healthy
    runs it lacks, as a new round numbered after its held runs, and one that lacks none runs nothing."""
    side = SideRuns()
    for cell in cells:
        checked = check_cell(cell, KERNEL, None, repetitions)
        if isinstance(checked, str):
            side.skipped[cell.name] = checked
            note(f"cell {cell.name}: not run on the kernel: {checked}", args.quiet)
            continue
        next_round, held_healthy = (stored or {}).get(cell.name, (0, 0))
        wanted = cell.runs(repetitions) - held_healthy
        if wanted <= 0:
            continue
        count = wanted
        while True:
            plan = cell_plan(cell, KERNEL, None, count, round_=next_round)
            # The kernel's runs are the truth whatever the Python build that orchestrated them: each run
            # records its revision, so a cell topped up after a change of the sources keeps its runs.
            run_sweep(
                plan,
                out,
                jobs=1,
                quiet=args.quiet,
                allow_mixed=True,
                time_limit_s=time_limit_s(args),
                retry_failed=getattr(args, "retry_failed", False),
            )
            ids = planned_ids(plan)
            health = run_health(out, ids)
            good = sum(healthy(health[i]) for i in ids if i in health)
            if good >= wanted or count >= MAX_ATTEMPTS_FACTOR * wanted:
                break
            more = min(count + wanted - good, MAX_ATTEMPTS_FACTOR * wanted) - count
            note(
                f"cell {cell.name}: {good} of {len(ids)} kernel runs healthy; running {more} more", args.quiet
            )
            count += more
        side.runs[cell.name] = ids
    return side
