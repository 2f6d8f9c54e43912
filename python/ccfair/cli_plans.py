"""What the commands that run plans share (``sweep``, ``harm``, ``advise``, ``reproduce``, ``validate``):
the options that say where and how a study's runs go and where its figure goes, the figure file's check, and
the note on ``--jobs`` for a plan on the kernel backend.

The command line's own layer: :mod:`ccfair.cli_support` sits below the sweeps (the sweep driver uses it),
while the checks here reach up to the plots and the sweep driver, imported where a check runs, not when the
parser loads.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from ccfair.cli_support import add_limit_options, add_output_options, note, positive_int

if TYPE_CHECKING:
    from ccfair.sweep.plan import Plan


def add_sweep_options(
    p: argparse.ArgumentParser, out_default: str | None = "results", *, retry_failed: bool = False
) -> None:
    """The options of a study that say where and how its runs go, as for ``ccfair sweep``; ``out_default``
    None leaves ``--out`` unset for the command to choose; ``retry_failed`` adds ``--retry-failed`` first."""
    if retry_failed:
        p.add_argument("--retry-failed", action="store_true", help="run again the runs that failed before")
    p.add_argument(
        "--out",
        metavar="DIR",
        default=out_default,
        help=f"results directory (default: {out_default or 'per command'}); runs already there are reused",
    )
    where = p.add_mutually_exclusive_group()
    where.add_argument(
        "--jobs", type=positive_int, metavar="N", help="local worker processes (default: all cores)"
    )
    where.add_argument(
        "--cluster", metavar="ADDRESS", help="run on the Dask scheduler at ADDRESS (see ccfair sweep)"
    )
    p.add_argument("--time-limit", metavar="DURATION", help="per-run wall-time limit, e.g. 90s")
    p.add_argument(
        "--dry-run", action="store_true", help="show the plan's size and what the store has; run nothing"
    )
    add_output_options(p, json="print one JSON document", quiet="no progress or notes on stderr")
    add_limit_options(p)


def add_figure_option(p: argparse.ArgumentParser, what: str) -> None:
    """``--figure FILE``: where a study draws ``what`` (``-`` for no figure)."""
    p.add_argument(
        "--figure",
        metavar="FILE",
        default=None,
        help=f"{what}, .png, .svg or .pdf (default: PLAN.png in the --out directory, PLAN the study's plan; "
        "- for none)",
    )


def check_figure(path: str | None, out: Path, plan: str) -> Path | None:
    """The ``--figure`` path, checked before any run (None for ``-``). By default the figure goes into the
    results directory ``out`` beside the runs it shows, named after the study's plan (``plan``), so that
    studies sharing a directory keep their own figures."""
    if path == "-":
        return None
    from ccfair.plots.output import check_figure_path  # pandas, DuckDB: not when the parser loads

    if path is None:
        target = out / f"{plan}.png"
        if not out.is_dir():  # made by the runs; save_figure checks the file again
            return target
        check_figure_path(target, "--figure")
        return target
    check_figure_path(path, "--figure")
    return Path(path)


def note_kernel_jobs(plan: Plan, jobs: int | None, quiet: bool) -> None:
    """Says that ``--jobs`` does not apply to a plan on the kernel backend."""
    # The sweep driver (pandas, DuckDB) loads in the handlers only: the parser imports this module.
    from ccfair.sweep.driver import KERNEL_JOBS
    from ccfair.sweep.identity import SIMULATOR

    if plan.backend != SIMULATOR and jobs is not None and jobs != KERNEL_JOBS:
        note(
            f"note: plan {plan.name} runs on the kernel backend: one run at a time (--jobs {jobs} does not "
            "apply; parallel kernel runs would share this machine's CPUs and network stack)",
            quiet,
        )
