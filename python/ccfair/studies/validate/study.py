"""``ccfair validate`` end to end: the kernel side (when asked) measured into the results directory and
turned into a truth document, the simulator side run with each host preset, the comparison, and its outputs
(``validate.json``, ``validate.md``) beside the store."""

from __future__ import annotations

import argparse
import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ccfair import fsio
from ccfair.cli_support import note
from ccfair.emu.arrival import arrival_mode
from ccfair.studies.validate.compare import compare_cell, grid_summary, headline_key, json_number
from ccfair.studies.validate.grid import PLAN_SEED, SIDES, Cell
from ccfair.studies.validate.metrics import store_metrics
from ccfair.studies.validate.report import markdown_page
from ccfair.studies.validate.run import SideRuns, run_kernel_side, run_sim_side
from ccfair.studies.validate.truth import (
    CellTruth,
    build_truth,
    cell_truth,
    held_healthy,
    load_truth,
    other_arrival_runs,
    write_truth,
)
from ccfair.sweep.identity import run_seed

GENERATOR = "ccfair validate"
JSON_NAME = "validate.json"
MARKDOWN_NAME = "validate.md"
OPTION = "--out"


def is_validate_json(path: Path) -> bool:
    return fsio.json_generated_by(path, GENERATOR)


def is_validate_markdown(path: Path) -> bool:
    try:
        with open(path, "rb") as f:
            return f.read(len(b"# ccfair validate\n")) == b"# ccfair validate\n"
    except OSError:
        return False


def check_outputs(out: Path) -> None:
    """Refuses, before anything runs, an output file in ``out`` that ccfair did not write."""
    if not out.exists():
        return
    fsio.check_file(out / JSON_NAME, OPTION, is_validate_json, "validate.json files")
    fsio.check_file(out / MARKDOWN_NAME, OPTION, is_validate_markdown, "validate.md pages")


def measure_truth(
    cells: Sequence[Cell],
    repetitions: int,
    out: Path,
    args: argparse.Namespace,
    write_to: Path | None,
) -> dict[str, Any]:
    """Runs the kernel side and returns its truth document, written to ``write_to`` if given (cells
    measured before in that file and not now are kept). With ``--top-up`` a cell of that file keeps its
    runs of the emulator's current arrival mode and gets only the healthy runs it lacks."""
    previous = load_truth(write_to, "--write-truth") if write_to is not None and write_to.exists() else None
    arrival = arrival_mode()
    top_up = bool(getattr(args, "top_up", False)) and previous is not None
    stored = None
    if top_up and previous is not None:
        stored = held_healthy(previous, cells, arrival)
        for name, n in other_arrival_runs(previous, cells, arrival).items():
            note(
                f"cell {name}: {n} stored runs were measured with another CCFAIR_EMU_ARRIVAL than "
                f"'{arrival}'; the top-up leaves them out",
                args.quiet,
            )
    kernel = run_kernel_side(cells, repetitions, out, args, stored)
    document = build_truth(
        out, cells, kernel.runs, kernel.skipped, repetitions, previous, top_up=top_up, arrival=arrival
    )
    if write_to is not None:
        write_truth(document, write_to, "--write-truth")
        note(f"kernel truth: {write_to}", args.quiet)
    return document


def sim_metrics(out: Path, cell: Cell, side: SideRuns) -> list[dict[str, float]]:
    ids = side.runs.get(cell.name, [])
    by_id = store_metrics(out, cell, ids)
    return [by_id[i] for i in ids if i in by_id]


def paired_runs(
    cell: Cell, truth: CellTruth, sim: Mapping[str, Sequence[Mapping[str, float]]]
) -> list[dict[str, Any]] | None:
    """Run for run, the headline metric of each kernel run and of each preset's run of the same seed
    (None when the kernel runs do not record their seeds or a simulator run is missing). Where the seed
    decides what both backends draw (a flow's random path loss), the two agree run for run until their
    sending diverges."""
    if truth.draws is None or any(len(runs) != len(truth.runs) for runs in sim.values()):
        return None
    head = headline_key(cell)
    rows = []
    for i, (round_, k) in enumerate(truth.draws):
        row: dict[str, Any] = {"seed": run_seed(PLAN_SEED + round_, {}, k)}
        row["kernel"] = json_number(truth.runs[i].get(head, math.nan))
        row.update((p, json_number(runs[i].get(head, math.nan))) for p, runs in sim.items())
        rows.append(row)
    return rows


def compare(
    cells: Sequence[Cell], repetitions: int, out: Path, truth: Mapping[str, Any], args: argparse.Namespace
) -> dict[str, Any]:
    """Runs the simulator side of every cell with a truth and compares; returns the document."""
    pending: dict[str, str] = {}
    incomplete: dict[str, str] = {}  # cells whose simulator runs failed or were cut short
    compared = []
    truths = {}
    for cell in cells:
        t = cell_truth(truth, cell, repetitions)
        if t.skipped is not None or not t.runs:
            pending[cell.name] = f"kernel: {t.skipped or 'no healthy run'}"
        else:
            truths[cell.name] = t
            compared.append(cell)
    loops = {name: t.loop for name, t in truths.items()}
    draws = {name: t.draws for name, t in truths.items()}
    sides = {p: run_sim_side(compared, p, repetitions, out, args, loops, draws) for p in SIDES}
    rows = []
    for cell in compared:
        refused = [f"sim {p}: {sides[p].skipped[cell.name]}" for p in SIDES if cell.name in sides[p].skipped]
        if refused:
            pending[cell.name] = "; ".join(refused)
            continue
        sim = {p: sim_metrics(out, cell, sides[p]) for p in SIDES}
        short = {p: (len(sim[p]), len(sides[p].runs[cell.name])) for p in SIDES}
        short = {p: counts for p, counts in short.items() if counts[0] < counts[1]}
        if short:
            incomplete[cell.name] = "; ".join(f"sim {p}: {d} of {n} runs done" for p, (d, n) in short.items())
        if any(done == 0 for done, _ in short.values()):
            pending[cell.name] = incomplete[cell.name]
            continue
        row = compare_cell(cell, truths[cell.name].runs, sim)
        paired = paired_runs(cell, truths[cell.name], sim)
        if paired is not None:
            row["paired"] = paired
        row["kernel_excluded"] = truths[cell.name].excluded
        loop = truths[cell.name].loop
        row["kernel_loop"] = {"excess_ns": loop.excess_ns, "noise_mean_ns": loop.noise_mean_ns}
        rows.append(row)
    provenance = truth["provenance"]
    return {
        "generator": GENERATOR,
        "repetitions": repetitions,
        "truth": {
            k: provenance.get(k)
            for k in ("kernel_release", "host", "cpu_model", "cpus", "emulator_arrival", "doctor")
        },
        "cells": rows,
        "pending": pending,
        "incomplete": incomplete,
        "summary": {p: grid_summary(rows, p) for p in SIDES},
    }


def write_outputs(document: Mapping[str, Any], out: Path, quiet: bool) -> None:
    text = json.dumps(document, indent=1, allow_nan=False) + "\n"
    fsio.write_file(out / JSON_NAME, text.encode(), OPTION, is_validate_json, "validate.json files")
    fsio.write_file(
        out / MARKDOWN_NAME,
        markdown_page(document).encode(),
        OPTION,
        is_validate_markdown,
        "validate.md pages",
    )
    note(f"comparison: {out / JSON_NAME}, {out / MARKDOWN_NAME}", quiet)
