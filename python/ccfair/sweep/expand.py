"""A plan's runs: cells (the grid and zip product minus exclusions) x repetitions x (original, mirrored),
each validated and resolved before anything runs.

On the kernel backend (``plan.backend``) each cell is a :class:`~ccfair.scenario.KernelScenario`, checked
by the kernel's rules (its algorithms are this kernel's modules, ``kernel:NAME`` included) and its link rate
against the clean rate ``ccfair doctor`` measured on this host; the simulator's estimate of memory and events
does not apply to it.

Order: repetition 0 of every cell first, then repetition 1, ...; a mirrored run right after its original.
So an interrupted sweep has covered the whole grid evenly.

``flip_start_order``: a cell's mirrored run reverses the order in which its flow groups start. The distinct
start times t1 < t2 < ... < tk of the groups are kept and handed out in reverse: a group that started at t1
starts at tk, one at t2 at t(k-1), and so on (groups that started together still start together). Each
group keeps its active time (``stop - start``) when it has a ``stop``. With two groups starting at 0 s and
10 s, the mirrored run starts the second group at 0 s and the first at 10 s. A cell whose groups all start
at the same time has no mirrored run (it would be the same run); a plan where no cell has one is an error.
"""

from __future__ import annotations

import copy
import dataclasses
import itertools
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ccfair import __version__
from ccfair.emu.arrival import arrival_mode
from ccfair.errors import InputError
from ccfair.resources import (
    Estimate,
    Limits,
    format_bytes,
    format_count,
    format_wall,
)
from ccfair.resources import check as check_resources
from ccfair.scenario import Scenario, kernel_scenario
from ccfair.speed import host_speed, wall_seconds
from ccfair.sweep.identity import SIMULATOR, canonical_json, ids_of_scenario, seeds_of_cell
from ccfair.sweep.paths import parse_path, set_path
from ccfair.sweep.plan import Plan


@dataclass(frozen=True)
class PlannedRun:
    """One run of a plan. ``scenario`` is the user-level document with every default written out and
    ``seed`` set; ``spec`` the native spec it resolves to and ``estimate`` its predicted cost. An invalid
    cell kept with ``skip_invalid`` (one that does not validate, or whose estimate exceeds the limits) has
    ``spec`` None and its validation message in ``invalid``."""

    index: int  # position in the plan's run order
    cell: int
    repetition: int
    flipped: bool
    coordinates: tuple[tuple[str, Any], ...]  # (path, value) in plan order
    seed: int
    run_id: str
    scenario: dict[str, Any]
    spec: dict[str, Any] | None
    invalid: str | None = None
    estimate: Estimate | None = None


class CellError(InputError):
    """A cell of plan ``plan`` that does not validate (or whose estimate exceeds the limits), with the cell's
    ``coordinates`` (path -> value): a study that builds its plans from its own options names the value its
    user wrote from them."""

    def __init__(self, field: str, message: str, plan: str, coordinates: Mapping[str, Any]) -> None:
        super().__init__(field, message)
        self.plan = plan
        self.coordinates = dict(coordinates)


@dataclass(frozen=True)
class _Variant:
    """A validated cell (or its mirror), before the seed is known."""

    doc: dict[str, Any]  # explicit user-level form, no seed
    spec: dict[str, Any] | None
    invalid: str | None = None
    estimate: Estimate | None = None


def describe(coordinates: tuple[tuple[str, Any], ...]) -> str:
    """``link.rate = "1Gbps", flows[0].count = 5``, for messages."""
    return (
        ", ".join(f"{path} = {canonical_json(value)}" for path, value in coordinates) or "the base scenario"
    )


def cells(plan: Plan) -> list[tuple[tuple[str, Any], ...]]:
    """The coordinates of every cell in product order (the last axis varies fastest), exclusions removed.
    Raises if an exclude rule matches no cell or if nothing is left."""
    kept = []
    used = [False] * len(plan.exclude)
    for combination in itertools.product(*(axis.points for axis in plan.axes)):
        coordinates = tuple(
            (path, value)
            for axis, point in zip(plan.axes, combination, strict=True)
            for path, value in zip(axis.paths, point, strict=True)
        )
        as_map = dict(coordinates)
        hits = [rule.matches(as_map) for rule in plan.exclude]
        for i, hit in enumerate(hits):
            used[i] = used[i] or hit
        if not any(hits):
            kept.append(coordinates)
    for rule, was_used in zip(plan.exclude, used, strict=True):
        if not was_used:
            raise InputError(
                rule.label, "matches no cell of the plan (zip groups only pair their own values)"
            )
    if not kept:
        raise InputError("exclude", "removes every cell of the plan")
    return kept


def mirror_start_order(scenario: Scenario) -> Scenario | None:
    """The mirrored scenario (see the module docstring), or None if every group starts at the same time."""
    starts = sorted({g.start_ns for g in scenario.flows})
    if len(starts) < 2:
        return None
    rank = {t: i for i, t in enumerate(starts)}
    groups = []
    for g in scenario.flows:
        start = starts[len(starts) - 1 - rank[g.start_ns]]
        stop = None if g.stop_ns is None else start + (g.stop_ns - g.start_ns)
        groups.append(dataclasses.replace(g, start_ns=start, stop_ns=stop))
    return dataclasses.replace(scenario, flows=tuple(groups))


def load_cell(doc: dict[str, Any], backend: str) -> Scenario:
    """A cell's scenario document as the scenario ``backend`` runs (validated)."""
    if backend == SIMULATOR:
        return Scenario.from_dict(doc)
    return kernel_scenario(doc)


def _variant(scenario: Scenario, limits: Limits | None, backend: str) -> _Variant:
    doc = scenario.with_seed(None).to_dict(explicit=True)
    if backend != SIMULATOR:
        from ccfair.emu.doctor import check_rate  # the kernel backend loads for kernel plans only

        spec = scenario.resolve()
        check_rate(spec["link"]["rate_bps"])
        return _Variant(doc=doc, spec=spec)
    spec, estimate = scenario.resolve_estimated()
    if limits is not None:
        check_resources(estimate, limits)
    return _Variant(doc=doc, spec=spec, estimate=estimate)


def _cell_variants(
    plan: Plan,
    cell: int,
    coordinates: tuple[tuple[str, Any], ...],
    skip_invalid: bool,
    limits: Limits | None,
) -> list[tuple[bool, _Variant]]:
    """[(flipped, variant)] of one cell: the original, then the mirror if the plan flips and one exists."""
    doc = copy.deepcopy(plan.base)
    try:
        for path, value in coordinates:
            set_path(doc, parse_path(path, path), copy.deepcopy(value), path)
        scenario = load_cell(doc, plan.backend)
        variants = [(False, _variant(scenario, limits, plan.backend))]
        if plan.flip_start_order:
            mirrored = mirror_start_order(scenario)
            if mirrored is not None:
                variants.append((True, _variant(mirrored, limits, plan.backend)))
        return variants
    except InputError as e:
        where = f"cell {cell}: {describe(coordinates)}"
        if not skip_invalid:
            raise CellError(e.field, f"{e.message} (in {where})", plan.name, dict(coordinates)) from None
        return [(False, _Variant(doc=doc, spec=None, invalid=str(e)))]


@dataclass(frozen=True)
class Layout:
    """A plan's cells, each validated and resolved into its variants (the original, and the mirror if the
    plan flips), with the factories of its runs' seeds and ids: what :func:`expand` builds every run from,
    and what a dry run counts the runs with, one id at a time, without building them."""

    plan: Plan
    cells: list[tuple[tuple[str, Any], ...]]
    variants: list[list[tuple[bool, _Variant]]]
    seeds: list[Callable[[int], int]]
    ids: list[list[Callable[[int], str]]]

    def order(self) -> Iterator[tuple[int, int, int]]:
        """(repetition, cell, variant) of every run, in the plan's run order."""
        for repetition in range(self.plan.repetitions):
            for cell, variants in enumerate(self.variants):
                for k in range(len(variants)):
                    yield repetition, cell, k

    def identities(self) -> Iterator[tuple[str, int, int]]:
        """(run id, cell, variant) of every run in order: the seed computed once per cell and repetition."""
        for repetition in range(self.plan.repetitions):
            for cell, ids in enumerate(self.ids):
                seed = self.seeds[cell](repetition)
                for k, identity in enumerate(ids):
                    yield identity(seed), cell, k

    def run(self, index: int, repetition: int, cell: int, k: int) -> PlannedRun:
        """The run at position ``index`` of the order: ``repetition`` of variant ``k`` of ``cell``."""
        flipped, v = self.variants[cell][k]
        seed = self.seeds[cell](repetition)
        return PlannedRun(
            index=index,
            cell=cell,
            repetition=repetition,
            flipped=flipped,
            coordinates=self.cells[cell],
            seed=seed,
            run_id=self.ids[cell][k](seed),
            scenario={**v.doc, "seed": seed},
            spec=v.spec,
            invalid=v.invalid,
            estimate=v.estimate,
        )


def layout(
    plan: Plan,
    *,
    skip_invalid: bool = False,
    progress: Callable[[float], None] | None = None,
    limits: Limits | None = None,
) -> Layout:
    """The plan's cells validated and resolved (see :func:`expand`), before any run is built."""
    all_cells = cells(plan)
    variants: list[list[tuple[bool, _Variant]]] = []
    for i, coordinates in enumerate(all_cells):
        variants.append(_cell_variants(plan, i, coordinates, skip_invalid, limits))
        if progress is not None and i % 256 == 0:
            progress(i / len(all_cells))
    if plan.flip_start_order and not any(flipped for v in variants for flipped, _ in v):
        raise InputError(
            "flip_start_order",
            "in every cell all flow groups start at the same time, so a mirrored run would repeat the "
            "original; give the groups different start times (flows[N].start) or remove flip_start_order",
        )
    # A kernel run's identity holds how the emulator measures it: runs of another mode are other runs.
    emulator = None if plan.backend == SIMULATOR else {"arrival": arrival_mode()}
    return Layout(
        plan=plan,
        cells=all_cells,
        variants=variants,
        seeds=[seeds_of_cell(plan.seed, dict(coordinates)) for coordinates in all_cells],
        ids=[
            [ids_of_scenario(v.doc, v.spec, __version__, plan.backend, emulator) for _, v in cell_variants]
            for cell_variants in variants
        ],
    )


def expand(
    plan: Plan,
    *,
    skip_invalid: bool = False,
    progress: Callable[[float], None] | None = None,
    limits: Limits | None = None,
) -> list[PlannedRun]:
    """Every run of the plan, each cell validated and resolved, and its estimate checked against
    ``limits`` (none when None). An invalid cell raises an InputError whose field is the scenario field
    and whose message names the cell; with ``skip_invalid`` it becomes one run per repetition with
    ``invalid`` set, to be recorded as failed."""
    lay = layout(plan, skip_invalid=skip_invalid, progress=progress, limits=limits)
    runs = [lay.run(i, *where) for i, where in enumerate(lay.order())]
    if progress is not None:
        progress(1.0)
    return runs


# What a kernel run takes beyond its duration: the network built and torn down, the programs started, the
# connections made, the results read: 0.5 to 0.75 s beyond a 3 s run on the 2-core development machine at a
# load average of 7 (docs/reference/plans.md, "Kernel sweeps").
KERNEL_SETUP_S = 1.0


def estimate_lines(
    groups: Sequence[tuple[PlannedRun, int]], limits: Limits, jobs: int | None, backend: str = SIMULATOR
) -> list[str]:
    """The estimates of the runs to do, given as (a run, how many runs of its cell variant it stands for:
    they share its scenario, spec and estimate): the largest per run (with its cell) and the total; on the
    kernel backend, the wall time of the runs one after the other."""
    runs = sum(n for _, n in groups)
    if backend != SIMULATOR:
        seconds = sum(
            n * (r.spec["duration_ns"] / 1e9 + KERNEL_SETUP_S) for r, n in groups if r.spec is not None
        )
        return [
            f"kernel backend: the {runs} runs to do run one at a time, about {format_wall(seconds)} "
            f"(each its duration plus about {KERNEL_SETUP_S:g} s to build and tear down its network)"
        ]
    memory_limit = (
        "none"
        if limits.max_memory_bytes is None
        else f"{format_bytes(limits.max_memory_bytes)} ({limits.memory_source})"
    )
    events_limit = (
        "none" if limits.max_events is None else f"{format_count(limits.max_events)} ({limits.events_source})"
    )
    lines = [f"limits per run: memory {memory_limit}, events {events_limit}"]
    estimated = [(r, r.estimate, n) for r, n in groups if r.estimate is not None]
    if not estimated:
        return lines
    biggest, most = (
        max(estimated, key=lambda x: x[1].peak_memory_bytes),
        max(estimated, key=lambda x: x[1].events),
    )
    events = sum(e.events * n for _, e, n in estimated)
    speed = host_speed()
    cpu = sum(speed.cpu_seconds(e.events, e.flows) * n for _, e, n in estimated)
    workers = jobs or 1
    wall = (
        f"about {format_wall(wall_seconds(cpu, workers))} with {workers} worker{'s' if workers > 1 else ''}"
    )
    lines.append(
        f"estimates per run: peak memory up to {format_bytes(biggest[1].peak_memory_bytes)} "
        f"(cell {biggest[0].cell}: {describe(biggest[0].coordinates)}), events up to "
        f"{format_count(most[1].events)} (cell {most[0].cell}: {describe(most[0].coordinates)})"
    )
    counted = sum(n for _, _, n in estimated)
    lines.append(
        f"estimates of the {counted} runs to do: {format_count(events)} events, "
        f"{format_wall(cpu)} of CPU at {speed.text()}; {wall} at this machine's load now"
    )
    return lines
