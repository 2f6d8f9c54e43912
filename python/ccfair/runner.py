"""Running a scenario: validation, the native simulation, and the result tables."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from ccfair import _native
from ccfair.errors import InputError
from ccfair.resources import Limits, format_bytes
from ccfair.resources import check as check_resources
from ccfair.resources import limits as default_limits
from ccfair.result import RunResult
from ccfair.scenario import Scenario, check_seed, load_scenario


def run(
    scenario: Scenario | Mapping[str, Any] | str | Path,
    seed: int | None = None,
    progress: Callable[[float], None] | None = None,
    backend: str = "sim",
    limits: Limits | None = None,
) -> RunResult:
    """Runs ``scenario`` (a Scenario, a user-level dict, or a TOML file path) and returns its result.

    The seed is ``seed`` if given, else the scenario's ``seed``, else 1. ``progress(fraction)`` is called
    with the fraction of simulated time done about every 20 ms of wall time (an exception it raises stops
    the run). Bad input raises :class:`InputError` before anything runs, and so does a scenario whose
    estimated memory or events exceed ``limits`` (default: :func:`ccfair.resources.limits`, from the
    environment and the memory available now). Ctrl-C raises KeyboardInterrupt.

    ``backend="kernel"`` runs it against the Linux TCP stack instead (root; see :mod:`ccfair.emu`)."""
    if backend == "kernel":
        from ccfair.emu import run_kernel  # the kernel backend (subprocesses, sockets) only when asked for

        result: RunResult = run_kernel(scenario, seed=seed, progress=progress)
    elif backend != "sim":
        raise InputError("backend", f"must be sim or kernel, got {backend!r}")
    else:
        sc, effective, output = simulate(scenario, seed, progress, limits)
        result = RunResult.from_native(output, sc, effective)
    if isinstance(scenario, str | Path):
        result.name = Path(scenario).name  # figures' titles name the scenario file
    return result


def simulate(
    scenario: Scenario | Mapping[str, Any] | str | Path,
    seed: int | None = None,
    progress: Callable[[float], None] | None = None,
    limits: Limits | None = None,
) -> tuple[Scenario, int, Mapping[str, Any]]:
    """Runs ``scenario`` on the simulator and returns it (loaded), the seed used, and the simulator's raw
    output: ``flows``, ``timeseries`` and ``queue`` as columns, ``totals`` as plain numbers. ``limits`` as
    for :func:`run`.

    :func:`run` builds its tables from this; the raw counters are what exact comparisons need."""
    sc = load_scenario(scenario)
    resolution = sc.resolution()  # resolved once, when the scenario was loaded
    effective = check_seed(sc.effective_seed(seed))
    check_resources(resolution.estimate, limits if limits is not None else default_limits())
    try:
        output = _native.run(resolution.spec_json, effective, progress)
    except _native.InputError as e:
        raise InputError(e.field, e.message) from None
    except MemoryError:
        # The columns handed to Python (or its own objects) could not be had: the run's size did it.
        estimate = resolution.estimate
        field = estimate.memory[0].field if estimate.memory else "scenario"
        raise InputError(
            field,
            f"ran out of memory handing the results over (an estimated peak of "
            f"{format_bytes(estimate.peak_memory_bytes)}): make the run smaller",
        ) from None
    return sc, effective, output
