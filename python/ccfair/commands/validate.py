"""``ccfair validate``: the simulator checked against real Linux TCP on a fixed grid of small scenarios.

- ``ccfair validate --list [--json]``: the cells, their runs and the estimated wall time of each side
- ``ccfair validate [--out DIR] [--truth FILE] [--cells A,B] [--repetitions N] [--jobs N] [--json]``: the
  simulator side (the sides of ``grid.SIDES``: ideal hosts, the default kernel-lab hosts as a user gets them,
  and the same round each cell's measured kernel loop; seeds 1..N) against the stored kernel truth
- ``ccfair validate --kernel [--write-truth FILE] ...``: also measures the kernel side (root, one run at a
  time) and compares with it; ``--write-truth`` stores it as the truth file

The runs go into the results directory like a sweep's (resume, ``status``, ``--retry-failed``);
``validate.json`` and ``validate.md`` are written beside them. The grid and the targets are
:mod:`ccfair.studies.validate`.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ccfair.cli_plans import add_sweep_options
from ccfair.cli_support import (
    EXIT_FAILURE,
    EXIT_OK,
    add_command,
    check_out_dir,
    note,
    options_named,
    positive_int,
    print_json,
)
from ccfair.errors import InputError
from ccfair.speed import host_speed
from ccfair.tables import Column, render, text


def register(commands: argparse._SubParsersAction[Any]) -> None:
    p = add_command(commands, "validate", cmd_validate)
    p.add_argument("--list", action="store_true", help="list the cells with their runs and estimates")
    p.add_argument("--cells", metavar="A,B", help="only these cells (default: the whole grid)")
    p.add_argument(
        "--repetitions", type=positive_int, metavar="N", help="repetitions per cell and side (default 10)"
    )
    p.add_argument("--truth", metavar="FILE", help="the kernel truth to compare with (default: ccfair's own)")
    p.add_argument(
        "--kernel", action="store_true", help="measure the kernel side here (root) and compare with it"
    )
    p.add_argument(
        "--write-truth", metavar="FILE", help="with --kernel: store the measured truth in FILE (JSON)"
    )
    p.add_argument(
        "--top-up",
        action="store_true",
        help="with --write-truth: keep the runs the file holds of each cell and run only the healthy runs "
        "a cell lacks (after the health rule changed, or runs were flagged)",
    )
    add_sweep_options(p, out_default="validate", retry_failed=True)


def _cell_names(value: str | None) -> list[str] | None:
    if value is None:
        return None
    names = [n.strip() for n in value.split(",") if n.strip()]
    if not names:
        raise InputError(
            "--cells", "give one or more cell names separated by commas (ccfair validate --list)"
        )
    return names


def cmd_validate(args: argparse.Namespace) -> int:
    with options_named({"repetitions": "--repetitions"}):
        return _validate(args)


def _validate(args: argparse.Namespace) -> int:
    # The grid, the store and the comparison load in the handler only: the parser imports this module.
    from ccfair import fsio
    from ccfair.store.layout import RESULTS_KIND
    from ccfair.studies.validate.grid import DEFAULT_REPETITIONS, select
    from ccfair.studies.validate.report import full_text
    from ccfair.studies.validate.study import check_outputs, compare, measure_truth, write_outputs
    from ccfair.studies.validate.truth import TRUTH_FILE, is_truth_file, load_truth

    cells = select(_cell_names(args.cells))
    repetitions = args.repetitions or DEFAULT_REPETITIONS
    check_size(cells, repetitions)
    if args.list:
        return list_cells(cells, repetitions, args)
    if args.write_truth is not None and not args.kernel:
        raise InputError("--write-truth", "stores a kernel measurement: give --kernel too")
    if args.top_up and args.write_truth is None:
        raise InputError("--top-up", "tops up the truth file --write-truth writes: give --write-truth too")
    if args.kernel and args.truth is not None:
        raise InputError("--truth", "--kernel compares with the truth it measures; give one of them")
    write_to = None
    if args.write_truth is not None:
        write_to = fsio.check_file(args.write_truth, "--write-truth", is_truth_file, "truth files")
    truth = None if args.kernel else load_truth(Path(args.truth) if args.truth else TRUTH_FILE)
    if args.kernel:
        from ccfair.emu.netns import require_root  # the kernel backend loads for --kernel only

        require_root()
    out = check_out_dir(args.out, RESULTS_KIND, replace=False)
    if args.dry_run:
        return list_cells(cells, repetitions, args)
    check_outputs(out)
    try:
        if truth is None:
            truth = measure_truth(cells, repetitions, out, args, write_to)
        document = compare(cells, repetitions, out, truth, args)
        write_outputs(document, out, args.quiet)
    except KeyboardInterrupt:
        note(f"every finished run is kept in {out}; run the same command again to resume", args.quiet)
        raise
    if args.json:
        print_json(document)
    else:
        sys.stdout.write(full_text(document))
        sys.stdout.flush()
    if document["incomplete"]:
        # As a sweep with failed runs: the comparison is written, but it is not the whole grid's.
        count = len(document["incomplete"])
        note(
            f"{count} {'cell is' if count == 1 else 'cells are'} short of simulator runs "
            f"({incomplete_text(document)}); "
            f"`ccfair status {out}` shows why, and --retry-failed runs them again",
            False,
        )
        return EXIT_FAILURE
    return EXIT_OK


def check_size(cells: Sequence[Any], repetitions: int) -> None:
    """Refuses, on ``--repetitions``, a grid whose simulator sides (every cell on each, into one results
    directory) would have more runs than a study may (:data:`~ccfair.sweep.plan.MAX_PLAN_RUNS`)."""
    from ccfair.studies.validate.grid import SIDES
    from ccfair.sweep.plan import MAX_PLAN_RUNS

    runs = len(SIDES) * sum(cell.runs(repetitions) for cell in cells)
    if runs > MAX_PLAN_RUNS:
        raise InputError(
            "--repetitions",
            f"{len(cells)} cells x {repetitions:,} repetitions (three times that in the wide cells) on "
            f"{len(SIDES)} simulator sides are {runs:,} simulator runs, more than the {MAX_PLAN_RUNS:,} one "
            "results directory takes in a study; run fewer repetitions, or fewer --cells",
        )


def incomplete_text(document: Mapping[str, Any]) -> str:
    return ", ".join(f"{name}: {why}" for name, why in document["incomplete"].items())


def list_cells(cells: list[Any], repetitions: int, args: argparse.Namespace) -> int:
    """The cells with their setup, runs per side and the estimated wall time of the kernel side."""
    from ccfair.resources import format_wall
    from ccfair.studies.validate.estimate import cell_estimates

    rows = cell_estimates(cells, repetitions)
    if args.json:
        print_json({"repetitions": repetitions, "cells": rows})
        return EXIT_OK
    columns = [
        Column("cell", "cell", text, "left"),
        Column("what", "what", text, "left"),
        Column("rate", "rate", text),
        Column("flows", "flows", text),
        Column("duration", "duration", text),
        Column("kernel", "kernel_text", text, "left"),
    ]
    kernel_s = sum(r["kernel_seconds"] for r in rows)
    sim_s = sum(r["sim_cpu_seconds"] for r in rows)
    sys.stdout.write(
        render(rows, columns, indent="")
        + f"\n\n{len(rows)} cells x {repetitions} repetitions; kernel side (one run at a time, each its "
        f"duration plus about 1 s): about {format_wall(kernel_s)}; simulator side (3 host sides): about "
        f"{format_wall(sim_s)} of CPU at {host_speed().text()}, plus storing\n"
    )
    return EXIT_OK
