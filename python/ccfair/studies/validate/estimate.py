"""The grid's size: per cell its setup, whether the kernel backend can run it here, and the wall time of
each side (the kernel's: durations one after the other; the simulator's: its event estimate)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ccfair.speed import host_speed
from ccfair.studies.validate.grid import SIDES, Cell
from ccfair.studies.validate.run import KERNEL, check_cell
from ccfair.sweep.expand import KERNEL_SETUP_S, layout
from ccfair.sweep.identity import SIMULATOR
from ccfair.units import parse_duration_ns


def cell_estimates(cells: Sequence[Cell], repetitions: int) -> list[dict[str, Any]]:
    rows = []
    for cell in cells:
        duration_s = parse_duration_ns(cell.duration, "duration") / 1e9
        runs = cell.runs(repetitions)
        kernel = check_cell(cell, KERNEL, None, runs)
        kernel_seconds = runs * (duration_s + KERNEL_SETUP_S)
        kernel_text = f"{runs} runs, {kernel_seconds:.0f} s"
        if isinstance(kernel, str):
            kernel_text += f"; cannot run here: {kernel}"
        events = 0
        cpu_seconds = 0.0
        speed = host_speed()
        for preset in SIDES:
            sim = check_cell(cell, SIMULATOR, preset, runs)
            if not isinstance(sim, str):
                # Every repetition runs each variant of each cell once: the variants' estimates times the
                # repetitions, without building every run.
                lay = layout(sim)
                estimates = [v.estimate for variants in lay.variants for _, v in variants]
                known = [e for e in estimates if e is not None]
                events += sum(e.events for e in known) * sim.repetitions
                cpu_seconds += sum(speed.cpu_seconds(e.events, e.flows) for e in known) * sim.repetitions
        rows.append(
            {
                "cell": cell.name,
                "what": cell.what,
                "rate": cell.rate,
                "flows": str(sum(int(g.get("count", 1)) for g in cell.flows)),
                "duration": cell.duration,
                "offloads": cell.offloads,
                "kernel_seconds": kernel_seconds,
                "kernel_text": kernel_text,
                "sim_events": events,
                "sim_cpu_seconds": cpu_seconds,
            }
        )
    return rows
