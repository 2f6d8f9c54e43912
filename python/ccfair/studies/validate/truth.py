"""The kernel ground truth: every kernel run of the grid with its metrics and the testbed's health, and the
provenance of the whole measurement, as one small JSON document committed with the sources
(:data:`TRUTH_FILE`), so a machine without kernel access (not root, CI) compares the simulator with it.

Layout::

    {"generator": "ccfair validate truth", "format": 1,
     "provenance": {"kernel_release", "kernel_hz", "host", "cpu_model", "cpus", "ccfair_version",
                    "git_revisions", "emulator_arrival", "doctor": {"clean_rate_bps", "measured_at",
                    "probes"}, "first_run_at", "last_run_at", "repetitions", "health_rule"},
     "cells": {NAME: {"scenario": {...}, "runs": [RUN, ...]} | {"scenario": {...}, "skipped": WHY}}}

    RUN = {"run_id", "repetition", "round", "seed", "started_at", "git_revision", "cpu_model",
           "kernel_release",
           "health": {"lateness_p50_ns", "lateness_p99_ns", "lateness_max_ns", "stall_max_ns", "rx_drops",
                      "sender_cpu_wait_share", "receiver_cpu_wait_share",
                      "receiver_turnaround_p10_ns"/"_p50_ns"/"_p90_ns", the same for "sender_...",
                      "limited", "note", "arrival"},
           "excluded": null | WHY, "metrics": {KEY: value or null}}

A run the testbed's health flags (``emulator_limited``: lateness p99 above 2 % of the smallest RTT, an
emulator stall over 10 % of it, frames lost inside the emulator, or a sending or receiving program that
waited for a CPU more than 20 % of the window) stays in the file, excluded with the reason; the truth of a
cell is its first ``repetitions`` healthy runs. A cell's stored scenario is the one it ran: a cell whose
scenario has changed since is reported as stale rather than compared. Each run records when the emulator
started its frames' time (``arrival``, :mod:`ccfair.emu.arrival`); a top-up keeps only the runs of the mode
it measures with, so no cell mixes the two.

A run's ``seed`` is the one the sweep gave it: repetition ``repetition - round`` of the cell's plan with
seed ``PLAN_SEED + round`` (``round``: how many runs the cell held when the measurement that ran it began,
0 for the first). The simulator side runs the same seeds, so where a seed decides what both backends draw
(a flow's random path loss) the comparison is run for run (:attr:`CellTruth.draws`). Runs stored before
seeds were recorded have neither key; a cell with such a run among those it uses is compared with the
simulator's first repetitions instead.
"""

from __future__ import annotations

import json
import math
import os
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ccfair import __version__, fsio
from ccfair.emu.arrival import BEFORE_THE_CHOICE
from ccfair.json_text import parse_json
from ccfair.studies.validate.compare import json_number
from ccfair.studies.validate.grid import NO_LOOP, Cell, KernelLoop, kernel_loop
from ccfair.studies.validate.metrics import store_metrics

GENERATOR = "ccfair validate truth"
FORMAT = 1
TRUTH_FILE = Path(__file__).with_name("truth.json")
HEALTH_RULE = (
    "a run is excluded when the testbed may have limited it: departure lateness p99 above 2 % of the "
    "smallest base RTT (at least 100 us), the emulator kept from its sockets (a stall) longer than 10 % of "
    "the smallest base RTT (at least 1 ms; for runs from before stalls were recorded, their departure "
    "lateness max), any frame lost inside the emulator or its sockets, or the sending or receiving program "
    "waiting for a CPU more than 20 % of the measurement window"
)


@dataclass(frozen=True)
class CellTruth:
    """A cell's kernel truth: the metrics of its healthy runs (in repetition order), and what was left out."""

    runs: list[dict[str, float]]
    excluded: list[str]  # "repetition N: why", per excluded run
    skipped: str | None = None  # why the cell has no truth
    # The kernel side's loop as its runs measured it (``grid.kernel_loop``): the testbed side goes round it.
    loop: KernelLoop = NO_LOOP
    # The (round, repetition in the round) of each run in ``runs``, which name its seed; None when a run
    # does not record them (stored before seeds were).
    draws: tuple[tuple[int, int], ...] | None = None


# A truth file's size at most: the one shipped holds 346 runs in about 1 MB.
MAX_TRUTH_BYTES = 256 << 20


def is_truth_file(path: Path) -> bool:
    """Whether ``path`` is a truth file this command wrote (its ``generator`` field)."""
    return fsio.json_generated_by(path, GENERATOR)


def load_truth(path: Path, option: str = "--truth") -> dict[str, Any]:
    """Reads a truth file; a file that is not one is an error naming ``option``. The file may be anyone's: at
    most :data:`MAX_TRUTH_BYTES`, nested at most :data:`ccfair.json_text.MAX_DEPTH` levels."""
    # Local import: the error type lives with the CLI's errors.
    from ccfair.errors import InputError

    try:
        with path.open("rb") as f:
            raw = f.read(MAX_TRUTH_BYTES + 1)
    except OSError as e:
        raise InputError(option, f"cannot read {path}: {e.strerror or e}") from None
    if len(raw) > MAX_TRUTH_BYTES:
        raise InputError(option, f"{path} is larger than a truth file can be ({MAX_TRUTH_BYTES >> 20} MiB)")
    try:
        data = parse_json(raw.decode(), option)
    except UnicodeDecodeError as e:
        raise InputError(option, f"{path} is not JSON: not UTF-8 text ({e.reason})") from None
    except InputError as e:
        raise InputError(option, f"{path} is not a truth file: {e.message}") from None
    if not isinstance(data, dict) or data.get("generator") != GENERATOR or data.get("format") != FORMAT:
        raise InputError(option, f"{path} is not a ccfair validate truth file (format {FORMAT})")
    return data


def cell_truth(truth: Mapping[str, Any], cell: Cell, repetitions: int) -> CellTruth:
    """The truth of ``cell``: its first healthy runs, as many as it takes when the grid runs
    ``repetitions`` (:meth:`Cell.runs`)."""
    wanted = cell.runs(repetitions)
    stored = truth["cells"].get(cell.name)
    if stored is None:
        return CellTruth([], [], "not measured")
    if stored.get("scenario") != cell.scenario(None):
        return CellTruth([], [], "stale: the cell's scenario changed since the truth was measured")
    if "skipped" in stored:
        return CellTruth([], [], str(stored["skipped"]))
    runs: list[dict[str, float]] = []
    excluded: list[str] = []
    used: list[Mapping[str, Any]] = []
    for run in stored["runs"]:
        if run["excluded"]:
            excluded.append(f"repetition {run['repetition']}: {run['excluded']}")
        elif len(runs) < wanted:
            runs.append({k: math.nan if v is None else float(v) for k, v in run["metrics"].items()})
            used.append(run)
    loop = measured_loop(used, stored["runs"])
    return CellTruth(runs, excluded, loop=loop, draws=run_draws(cell.name, used))


def run_draws(cell: str, runs: Sequence[Mapping[str, Any]]) -> tuple[tuple[int, int], ...] | None:
    """Each run's (round, repetition in its round), or None if one of them does not record its round. A
    truth file is input (``--truth`` may name anyone's): a round that is not a whole number from 0 to the
    run's repetition is an error naming the cell and the run."""
    # Local import: the error type lives with the CLI's errors.
    from ccfair.errors import InputError

    if any("round" not in r for r in runs):
        return None
    draws = []
    for r in runs:
        round_, repetition = r.get("round"), r.get("repetition")
        if type(round_) is not int or type(repetition) is not int or not 0 <= round_ <= repetition:
            raise InputError(
                "--truth",
                f"cells.{cell}: run with repetition {repetition!r} has round {round_!r}; a round is a whole "
                "number from 0 to the run's repetition",
            )
        draws.append((round_, repetition - round_))
    return tuple(draws)


def _median_of(runs: Sequence[Mapping[str, Any]], key: str) -> float:
    values = [float(v) for r in runs if (v := r.get("health", {}).get(key)) is not None]
    return statistics.median(values) if values else math.nan


def measured_loop(used: Sequence[Mapping[str, Any]], stored: Sequence[Mapping[str, Any]]) -> KernelLoop:
    """A cell's kernel loop (``grid.kernel_loop``): the emulator's lateness from the compared runs (``used``),
    the hosts' turnaround from every stored run that timed it (each times thousands of turns; a run flagged
    for a stall still times them), each quantile the median over those runs."""

    def turnaround(end: str) -> tuple[float, float, float]:
        p10, p50, p90 = (_median_of(stored, f"{end}_turnaround_{q}_ns") for q in ("p10", "p50", "p90"))
        return p10, p50, p90

    return kernel_loop(
        _median_of(used, "lateness_p50_ns"),
        _median_of(used, "lateness_p99_ns"),
        turnaround("receiver"),
        turnaround("sender"),
    )


def listed(value: Any) -> list[str]:
    """A provenance field as a list: files written before the CPU model was a list hold one string."""
    if not value:
        return []
    return [value] if isinstance(value, str) else [str(v) for v in value]


def held_values(cells: Mapping[str, Any], key: str, before: Any) -> list[str]:
    """The values of a machine field (``cpu_model``, ``kernel_release``) over the runs ``cells`` hold. Runs
    record theirs; while any run predates that record, the earlier provenance's values (``before``) are
    kept, as that run's is not known."""
    runs = [r for c in cells.values() for r in c.get("runs", [])]
    values = {str(r[key]) for r in runs if r.get(key)}
    unknown = any(not r.get(key) for r in runs)
    return sorted(values | (set(listed(before)) if unknown else set()))


def held_runs(cells: Mapping[str, Any]) -> tuple[list[str], list[str]]:
    """The start times and git revisions of the runs ``cells`` hold, each sorted. The provenance takes its
    run times and revisions from these alone: a cell measured again replaces its old runs, and their times
    and revisions with them (what runs do not store, such as the kernel release, is accumulated)."""
    runs = [r for c in cells.values() for r in c.get("runs", [])]
    times = sorted(str(r["started_at"]) for r in runs if r.get("started_at"))
    revisions = sorted({str(r["git_revision"]) for r in runs if r.get("git_revision")})
    return times, revisions


def run_arrival(run: Mapping[str, Any]) -> str:
    """When the emulator started a stored run's frames' time: its recorded mode, else (a run from before
    the choice existed) at their read."""
    return str(run.get("health", {}).get("arrival") or BEFORE_THE_CHOICE)


def kept_runs(stored: Mapping[str, Any], cell: Cell, arrival: str) -> list[dict[str, Any]]:
    """The runs of a stored cell a top-up keeps: those of the cell's current scenario measured with
    ``arrival``."""
    if "runs" not in stored or stored.get("scenario") != cell.scenario(None):
        return []
    return [r for r in stored["runs"] if run_arrival(r) == arrival]


def next_repetition(runs: Sequence[Mapping[str, Any]], option: str = "--write-truth") -> int:
    """The repetition number a cell's next run takes after ``runs``: one past the highest held. Runs left
    out (another arrival mode, or removed from the file by hand) leave gaps rather than numbers used twice,
    so a new round never reuses a held run's (round, repetition) and with it its seed. A repetition that is
    not a whole number from 0 is an error naming ``option``."""
    # Local import: the error type lives with the CLI's errors.
    from ccfair.errors import InputError

    held: list[int] = []
    for run in runs:
        repetition = run.get("repetition")
        if type(repetition) is not int or repetition < 0:
            raise InputError(option, f"a run's repetition is {repetition!r}; expected a whole number from 0")
        held.append(repetition)
    return 1 + max(held, default=-1)


def held_healthy(truth: Mapping[str, Any], cells: Sequence[Cell], arrival: str) -> dict[str, tuple[int, int]]:
    """Per cell of ``cells`` that ``truth`` holds runs of, for its current scenario and measured with
    ``arrival``: (the next run's repetition, which is the next round, healthy runs)."""
    held = {}
    for cell in cells:
        runs = kept_runs(truth["cells"].get(cell.name) or {}, cell, arrival)
        if runs:
            held[cell.name] = (next_repetition(runs), sum(not r["excluded"] for r in runs))
    return held


def other_arrival_runs(truth: Mapping[str, Any], cells: Sequence[Cell], arrival: str) -> dict[str, int]:
    """Per cell of ``cells``: how many of its stored runs (current scenario) a top-up with ``arrival``
    leaves out because the emulator timed them the other way."""
    counts = {}
    for cell in cells:
        stored = truth["cells"].get(cell.name) or {}
        if "runs" in stored and stored.get("scenario") == cell.scenario(None):
            other = sum(run_arrival(r) != arrival for r in stored["runs"])
            if other:
                counts[cell.name] = other
    return counts


def build_truth(
    out: Path,
    cells: Sequence[Cell],
    runs: Mapping[str, Sequence[str]],
    skipped: Mapping[str, str],
    repetitions: int,
    previous: Mapping[str, Any] | None,
    top_up: bool = False,
    arrival: str = BEFORE_THE_CHOICE,
) -> dict[str, Any]:
    """The truth document of the kernel runs in the store under ``out`` (``runs``: the run ids of each
    cell, in repetition order); cells of ``previous`` not measured now are kept as they were. With
    ``top_up`` a cell's new runs follow the runs ``previous`` holds of its scenario measured with
    ``arrival`` (the mode of the new runs), numbered after them."""
    # DuckDB, the doctor's measurement and the kernel backend load when the truth is written.
    from ccfair.emu.doctor import load_measurement
    from ccfair.emu.run import cpu_model
    from ccfair.store.reader import query

    doc_cells: dict[str, Any] = dict(previous["cells"]) if previous else {}
    hzs: set[Any] = set()
    hosts: set[Any] = set()
    # Kernel runs record their CPU model; one stored before they did ran here (the kernel side runs locally).
    machine = cpu_model()
    for cell in cells:
        scenario = cell.scenario(None)
        if cell.name in skipped:
            if cell.name not in doc_cells or doc_cells[cell.name].get("scenario") != scenario:
                doc_cells[cell.name] = {"scenario": scenario, "skipped": skipped[cell.name]}
            continue
        ids = list(runs.get(cell.name, []))
        if not ids:
            continue
        metrics = store_metrics(out, cell, ids)
        quoted = ", ".join(f"'{r}'" for r in ids)
        rows = query(
            out,
            "SELECT run_id, repetition, seed, started_at, git_revision, host, summary_json FROM runs "
            f"WHERE status = 'done' AND run_id IN ({quoted})",
        ).to_dict("records")
        by_id = {r["run_id"]: r for r in rows}
        cell_runs = kept_runs(doc_cells.get(cell.name, {}), cell, arrival) if top_up else []
        first = next_repetition(cell_runs)
        for run_id in ids:
            if run_id not in by_id:
                continue
            row = by_id[run_id]
            summary = parse_json(row["summary_json"], f"runs.summary_json of {run_id}")
            hzs.add(summary.get("kernel_hz"))
            hosts.add(row["host"])
            limited = bool(summary.get("emulator_limited"))
            cell_runs.append(
                {
                    "run_id": run_id,
                    "repetition": first + int(row["repetition"]),
                    # The kernel side ran this measurement's runs as round ``first`` (run.run_kernel_side).
                    "round": first,
                    "seed": int(row["seed"]),
                    "started_at": str(row["started_at"]),
                    "git_revision": row["git_revision"],
                    "cpu_model": summary.get("cpu_model") or machine,
                    "kernel_release": summary.get("kernel_release"),
                    "health": {
                        "lateness_p50_ns": summary.get("emulator_lateness_p50_ns"),
                        "lateness_p99_ns": summary.get("emulator_lateness_p99_ns"),
                        "lateness_max_ns": summary.get("emulator_lateness_max_ns"),
                        "stall_max_ns": summary.get("emulator_stall_max_ns"),
                        "rx_drops": summary.get("emulator_rx_drops"),
                        "sender_cpu_wait_share": json_number(summary.get("sender_cpu_wait_share", math.nan)),
                        "receiver_cpu_wait_share": json_number(
                            summary.get("receiver_cpu_wait_share", math.nan)
                        ),
                        # The hosts' turnaround timed at the emulator (null: not measured).
                        **{
                            f"{end}_turnaround_{q}_ns": json_number(
                                summary.get(f"host_{end}_turnaround_{q}_ns", math.nan)
                            )
                            for end in ("receiver", "sender")
                            for q in ("p10", "p50", "p90")
                        },
                        "limited": limited,
                        "note": summary.get("emulator_note") or "",
                        # When the emulator started a frame's time (CCFAIR_EMU_ARRIVAL); runs from before the
                        # choice existed read frames first.
                        "arrival": summary.get("emulator_arrival", BEFORE_THE_CHOICE),
                    },
                    "excluded": f"testbed health: {summary.get('emulator_note')}" if limited else None,
                    "metrics": {k: json_number(v) for k, v in metrics[run_id].items()},
                }
            )
        doc_cells[cell.name] = {"scenario": scenario, "runs": cell_runs}
    doctor = load_measurement() or {}
    old = previous["provenance"] if previous else {}

    def union(key: str, new: set[Any]) -> list[str]:
        return sorted({*(str(x) for x in new if x), *listed(old.get(key))})

    times, revisions = held_runs(doc_cells)
    provenance = {
        "kernel_release": held_values(doc_cells, "kernel_release", old.get("kernel_release")),
        "kernel_hz": union("kernel_hz", hzs),
        "host": union("host", hosts),
        # Derived from the held runs: a truth measured on several machines or kernels names each.
        "cpu_model": held_values(doc_cells, "cpu_model", old.get("cpu_model")),
        "cpus": os.cpu_count(),
        "ccfair_version": __version__,
        "git_revisions": revisions,
        "emulator_arrival": sorted({run_arrival(r) for c in doc_cells.values() for r in c.get("runs", [])}),
        "doctor": {
            "clean_rate_bps": doctor.get("clean_rate_bps"),
            "measured_at": doctor.get("measured_at"),
            "probes": doctor.get("probes", []),
        },
        "first_run_at": times[0] if times else None,
        "last_run_at": times[-1] if times else None,
        "repetitions": repetitions,
        "health_rule": HEALTH_RULE,
    }
    ordered = {c: doc_cells[c] for c in sorted(doc_cells)}
    return {"generator": GENERATOR, "format": FORMAT, "provenance": provenance, "cells": ordered}


def write_truth(document: Mapping[str, Any], path: Path, option: str) -> Path:
    text = json.dumps(document, indent=1, allow_nan=False) + "\n"
    return fsio.write_file(path, text.encode(), option, is_truth_file, "truth files")
