"""Simulator speed on fixed scenarios (``ccfair bench``).

- A: 10 Mbps, 2 flows (reno + cubic), 50 ms, 1 BDP, 60 s
- B: 1 Gbps, 10 Cubic flows, 10 ms, 0.5 BDP, 30 s
- C: 10 Gbps, 1000 Cubic flows, 20 ms, 1 BDP, 10 s (up to a minute; left out with ``quick``)
- D: B with half the flows BBRv1 (5 Cubic + 5 BBR): what paced, model-based flows cost (left out with
  ``quick``)
- E and F: FQ-CoDel with 10 and with 1000 paced Cubic flows at the same per-flow rate (10 Mbps) and RTT
  (20 ms): events per second within 2x of each other show that its per-packet cost does not grow with the
  number of flows (no scan of its buckets per packet). Pacing makes packets of different flows interleave at
  the bottleneck in both, as fair queuing serves them, so the two differ only in the number of flows (left out
  with ``quick``)

Two more run only when named (``--case``), as they take up to a minute each:

- ``corescale``: the CoreScale setting of Philip et al. (IMC 2021): 10 Gbps, a 375 MB drop-tail buffer, 5000
  Cubic flows, 100 ms, their starts spread uniformly over the first quarter of the run (the study spreads them
  over its first 10 s of 60 s). The study runs 60 s; the bench runs 20 s, and the wall seconds per simulated
  second give the 60 s figure by multiplication
- ``flows100k``: 100,000 Cubic flows at 10 Gbps, 20 ms, a 375 MB buffer, 2 s: the cost of the flow count
  itself, in memory as well as speed. It runs in a child process, whose peak resident memory
  (``VmHWM``) is compared with the simulator's own estimate; both are reported per flow

``--flows`` and ``--duration`` scale these two (a smoke test runs them small). ``--preset`` runs any case with
that ``[host]`` preset (``testbed``: TSO bursts, a NIC, GRO, processing noise; see
``crates/ccfair-sim/src/host/``), so the host model's cost is measured on the same scenarios.

For each: simulator events, wall-clock seconds of the simulation, millions of events per wall second, and
wall seconds per simulated second. ``--repeat N`` runs the cases N times, interleaved, and reports the median
wall with every run's (:func:`combine`). ``--steady`` also runs each case cut at half its duration
(:func:`first_half`, the whole run's first half) and reports the second half alone (:func:`steady_state`).

``--memory`` measures what one 64-byte cache line costs this machine at working sets from 1 MiB to 512 MiB
(``crates/ccfair-sim/src/memprobe.rs``): random lines read one after another (each address from the line
before), independently, and with prefetch hints ahead. Events per second at thousands of flows depend on it
more than on the code: 5000 flows' state (about 30 MB) fits in a last-level cache of 32 MB, 100,000 flows'
(about 500 MB) does not, and a VM may see little of its host's cache.
"""

from __future__ import annotations

import math
import multiprocessing
import resource
import statistics
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import Any

from ccfair import _native
from ccfair.cli_support import showing_progress
from ccfair.errors import InputError
from ccfair.resources import LIMIT_NAMES, LimitError, Limits, format_bytes
from ccfair.resources import check as check_resources
from ccfair.resources import limits as default_limits
from ccfair.runner import run
from ccfair.scenario import Scenario
from ccfair.tables import Column, fixed, integer, render, text
from ccfair.units import format_duration, parse_duration_ns

BENCH_SEED = 1
NS_PER_S = 1_000_000_000

CORESCALE_FLOWS = 5000
CORESCALE_DURATION = "20s"
MANY_FLOWS = 100_000
MANY_FLOWS_DURATION = "2s"
# One time-series row per flow per interval: the study's CoreScale interval (1 s) keeps the rows of
# thousands of flows small next to the flows' own state.
SCALE_INTERVAL_NS = NS_PER_S
# Loads the modules of a run before a child process measures its baseline memory: 1 flow, 0.1 s.
WARM_UP = {
    "duration": "100ms",
    "link": {"rate": "10Mbps", "buffer": "1bdp"},
    "flows": [{"cc": "cubic", "rtt": "20ms"}],
}
# The CoreScale buffer of Philip et al.: 375 MB at 10 Gbps, 300 ms of queue.
CORE_BUFFER = "375MB"
# The working sets of --memory: within a core's L2, within a last-level cache of tens of MB or not, and far
# beyond any cache (100,000 flows' state is about 500 MB).
MEMORY_WORKING_SETS = (1 << 20, 4 << 20, 16 << 20, 64 << 20, 512 << 20)
# Accesses per pattern and working set: about 0.1 to 1 s each where every one misses.
MEMORY_ACCESSES = 2_000_000
# Bytes the probe holds beyond its working set while it builds it: a 4-byte index per 64-byte line.
MEMORY_BUILD_BYTES_PER_LINE = 4


@dataclass(frozen=True)
class Benchmark:
    """One case: its name, what it is, the scenario as a user-level dict. ``opt_in`` cases run only when
    named; ``scalable`` ones accept ``--flows`` and ``--duration``; ``measure_memory`` ones run in a child
    process whose peak resident memory is reported."""

    name: str
    description: str
    document: dict[str, Any]
    opt_in: bool = False
    scalable: bool = False
    measure_memory: bool = False

    @cached_property
    def scenario(self) -> Scenario:
        return Scenario.from_dict(self.document)


@dataclass(frozen=True)
class MemoryFigures:
    """Peak memory of a run in a child process: the simulator's estimate, the child's maximum resident set
    (``VmHWM``) before the run (the interpreter and the modules) and at its end, and per flow."""

    flows: int
    estimate_bytes: int
    flow_estimate_bytes: int  # the parts of the estimate that the flow count drives
    baseline_rss_bytes: int
    max_rss_bytes: int

    @property
    def run_rss_bytes(self) -> int:
        """What the run added to the child's peak resident memory."""
        return max(0, self.max_rss_bytes - self.baseline_rss_bytes)

    def as_dict(self) -> dict[str, Any]:
        return {
            **asdict(self),
            "run_rss_bytes": self.run_rss_bytes,
            "estimate_bytes_per_flow": self.estimate_bytes / self.flows,
            "flow_estimate_bytes_per_flow": self.flow_estimate_bytes / self.flows,
            "rss_bytes_per_flow": self.run_rss_bytes / self.flows,
        }


@dataclass(frozen=True)
class BenchResult:
    """One case's figures; with ``--repeat`` the median wall of its runs, whose walls are in
    ``wall_seconds_runs`` (in the order they ran; empty for a single run)."""

    name: str
    description: str
    sim_seconds: float
    events: int
    wall_seconds: float
    events_per_second: float
    wall_seconds_per_sim_second: float
    memory: MemoryFigures | None = field(default=None)
    wall_seconds_runs: tuple[float, ...] = ()
    # CPU time of the run's thread (the simulation and its tables), NaN where not measured (a child's run):
    # what a busy machine does not change, where the wall time counts the time the run waited for a CPU.
    cpu_seconds: float = float("nan")
    flows: int = 0  # the case's flow count, which its cost per event depends on (ccfair.speed)

    @property
    def events_per_cpu_second(self) -> float:
        return self.events / self.cpu_seconds if self.cpu_seconds > 0 else float("nan")


def combine(runs: list[BenchResult]) -> BenchResult:
    """Repeated runs of one case as one result: the median wall (and the speed it gives), every wall kept,
    the first run's memory figures. The simulator is deterministic, so runs of a case that made different
    numbers of events are an error, not noise."""
    first = runs[0]
    if len(runs) == 1:
        return first
    events = {r.events for r in runs}
    if len(events) != 1:
        raise RuntimeError(f"the runs of case {first.name} made different event counts: {sorted(events)}")
    walls = tuple(r.wall_seconds for r in runs)
    wall = statistics.median(walls)
    return replace(
        first,
        cpu_seconds=statistics.median(r.cpu_seconds for r in runs),
        wall_seconds=wall,
        events_per_second=first.events / wall if wall > 0 else float("nan"),
        wall_seconds_per_sim_second=wall / first.sim_seconds,
        wall_seconds_runs=walls,
    )


def _document(
    rate: str,
    buffer: str,
    duration: str,
    groups: list[dict[str, Any]],
    aqm: str = "fifo",
    **top: Any,
) -> dict[str, Any]:
    # The cases run ideal hosts (the simulator alone, comparable with every earlier figure); --preset lays
    # another preset over them.
    return {
        "duration": duration,
        "link": {"rate": rate, "buffer": buffer, "aqm": aqm},
        "flows": groups,
        "host": {"preset": "ideal"},
        **top,
    }


def _scaled_timing(duration: str) -> dict[str, Any]:
    """Starts spread uniformly over the first quarter of the run, one row per flow per second (or two rows
    in a run shorter than 2 s)."""
    duration_ns = parse_duration_ns(duration, "--duration")
    return {
        "interval": format_duration(min(SCALE_INTERVAL_NS, max(1, duration_ns // 2))),
        "window_ns": max(1, duration_ns // 4),
    }


def _arrivals_case(
    name: str, title: str, rtt: str, flows: int, duration: str, *, measure_memory: bool = False
) -> Benchmark:
    """An opt-in case: ``flows`` Cubic flows at ``rtt`` through 10 Gbps and a 375 MB FIFO, their starts
    spread as :func:`_scaled_timing` says; ``title`` is completed with that spread and the duration."""
    timing = _scaled_timing(duration)
    window = format_duration(timing["window_ns"])
    flow = {"cc": "cubic", "rtt": rtt, "count": flows, "arrivals": {"process": "uniform", "window": window}}
    return Benchmark(
        name,
        f"{title}, starts over {window}, {duration}",
        _document("10Gbps", CORE_BUFFER, duration, [flow], interval=timing["interval"]),
        opt_in=True,
        scalable=True,
        measure_memory=measure_memory,
    )


def corescale(flows: int | None = None, duration: str | None = None) -> Benchmark:
    """CoreScale (Philip et al., IMC 2021): 10 Gbps, 375 MB drop-tail, ``flows`` Cubic flows at 100 ms."""
    flows = CORESCALE_FLOWS if flows is None else flows
    title = f"CoreScale: 10 Gbps, 375 MB FIFO, {flows} Cubic flows, 100 ms"
    return _arrivals_case("corescale", title, "100ms", flows, duration or CORESCALE_DURATION)


def many_flows(flows: int | None = None, duration: str | None = None) -> Benchmark:
    """``flows`` Cubic flows at 10 Gbps, 20 ms, 375 MB: the memory and speed of a very large flow count."""
    flows = MANY_FLOWS if flows is None else flows
    title = f"10 Gbps, 375 MB FIFO, {flows:,} Cubic flows, 20 ms"
    duration = duration or MANY_FLOWS_DURATION
    return _arrivals_case("flows100k", title, "20ms", flows, duration, measure_memory=True)


def benchmarks(quick: bool = False) -> list[Benchmark]:
    """The default benchmark cases (A and B only with ``quick``)."""
    marks = [
        Benchmark(
            "A",
            "10 Mbps, 2 flows (reno + cubic), 50 ms, 1 BDP, 60 s",
            _document(
                "10Mbps", "1bdp", "60s", [{"cc": "reno", "rtt": "50ms"}, {"cc": "cubic", "rtt": "50ms"}]
            ),
        ),
        Benchmark(
            "B",
            "1 Gbps, 10 Cubic flows, 10 ms, 0.5 BDP, 30 s",
            _document("1Gbps", "0.5bdp", "30s", [{"cc": "cubic", "rtt": "10ms", "count": 10}]),
        ),
    ]
    if not quick:
        marks.append(
            Benchmark(
                "C",
                "10 Gbps, 1000 Cubic flows, 20 ms, 1 BDP, 10 s",
                _document("10Gbps", "1bdp", "10s", [{"cc": "cubic", "rtt": "20ms", "count": 1000}]),
            )
        )
        marks.append(
            Benchmark(
                "D",
                "1 Gbps, 5 Cubic + 5 BBRv1 flows, 10 ms, 0.5 BDP, 30 s",
                _document(
                    "1Gbps",
                    "0.5bdp",
                    "30s",
                    [{"cc": "cubic", "rtt": "10ms", "count": 5}, {"cc": "bbr", "rtt": "10ms", "count": 5}],
                ),
            )
        )
        paced_cubic = {"cc": "cubic", "rtt": "20ms", "pacing": True}
        marks.append(
            Benchmark(
                "E",
                "100 Mbps, 10 paced Cubic flows, 20 ms, 1 BDP, FQ-CoDel, 60 s",
                _document("100Mbps", "1bdp", "60s", [{**paced_cubic, "count": 10}], aqm="fq_codel"),
            )
        )
        marks.append(
            Benchmark(
                "F",
                "10 Gbps, 1000 paced Cubic flows, 20 ms, 1 BDP, FQ-CoDel, 4 s",
                _document("10Gbps", "1bdp", "4s", [{**paced_cubic, "count": 1000}], aqm="fq_codel"),
            )
        )
    return marks


SCALED_CASES: dict[str, Callable[[int | None, str | None], Benchmark]] = {
    "corescale": corescale,
    "flows100k": many_flows,
}


def all_cases() -> list[Benchmark]:
    """Every case, the default ones first: what ``--list`` shows and ``--case`` chooses from."""
    return benchmarks() + [make(None, None) for make in SCALED_CASES.values()]


def with_preset(mark: Benchmark, preset: str) -> Benchmark:
    """The case with every flow on hosts of ``preset`` (a scenario-level ``[host]`` table). Raises
    :class:`InputError` on ``--preset`` for an unknown preset."""
    document = {**mark.document, "host": {"preset": preset}}
    hosted = replace(mark, description=f"{mark.description}, {preset} host", document=document)
    try:
        hosted.scenario.resolution()
    except InputError as e:
        if e.field == "host.preset":
            raise InputError("--preset", e.message) from None
        raise
    return hosted


def select(
    names: list[str] | None,
    quick: bool = False,
    flows: int | None = None,
    duration: str | None = None,
    preset: str | None = None,
) -> list[Benchmark]:
    """The cases named (all default ones when None), with ``flows``/``duration`` applied to the scalable
    ones and ``preset`` to all. Raises :class:`InputError` naming the option for an unknown case or
    preset, or for an override that a chosen case does not take."""
    chosen = _select_cases(names, quick, flows, duration)
    return chosen if preset is None else [with_preset(b, preset) for b in chosen]


def _select_cases(
    names: list[str] | None, quick: bool, flows: int | None, duration: str | None
) -> list[Benchmark]:
    cases = all_cases()
    known = {b.name.lower(): b for b in cases}
    if names is None:
        chosen = benchmarks(quick)
    else:
        chosen = []
        for name in names:
            if name.lower() not in known:
                raise InputError(
                    "--case", f"unknown case {name!r}; the cases are {', '.join(b.name for b in cases)}"
                )
            chosen.append(known[name.lower()])
    if flows is None and duration is None:
        return chosen
    fixed_cases = [b.name for b in chosen if not b.scalable]
    if fixed_cases:
        option = "--flows" if flows is not None else "--duration"
        raise InputError(
            option,
            f"applies only to the cases {', '.join(SCALED_CASES)}, not to {', '.join(fixed_cases)}; "
            "choose them with --case",
        )
    return [SCALED_CASES[b.name](flows, duration) for b in chosen]


def _result(mark: Benchmark, events: int, wall: float, memory: MemoryFigures | None = None) -> BenchResult:
    sim_seconds = mark.scenario.duration_ns / 1e9
    return BenchResult(
        name=mark.name,
        description=mark.description,
        sim_seconds=sim_seconds,
        events=events,
        wall_seconds=wall,
        events_per_second=events / wall if wall > 0 else float("nan"),
        wall_seconds_per_sim_second=wall / sim_seconds,
        memory=memory,
        flows=mark.scenario.flow_count(),
    )


def first_half(mark: Benchmark) -> Benchmark:
    """The case cut at half its duration, everything else as it was (the flows' start times, the interval):
    the first half of the whole run, which ``--steady`` subtracts from it."""
    half_ns = mark.scenario.duration_ns // 2
    return replace(
        mark,
        name=f"{mark.name}, first half",
        description=f"{mark.description}, first half",
        document={**mark.document, "duration": format_duration(half_ns)},
    )


@dataclass(frozen=True)
class SteadyState:
    """A case's second half alone: the whole run less its first half (see ``--steady``). Without start-up
    (imports, building the flows, the flows' first windows), this is the per-event cost of the running
    simulation; NaN where noise made the whole run no slower than its half."""

    name: str
    events: int
    wall_seconds: float

    @property
    def events_per_second(self) -> float:
        return self.events / self.wall_seconds if self.wall_seconds > 0 else float("nan")

    @property
    def ns_per_event(self) -> float:
        if self.wall_seconds <= 0 or self.events <= 0:
            return float("nan")
        return self.wall_seconds * 1e9 / self.events


def steady_state(whole: BenchResult, half: BenchResult) -> SteadyState:
    return SteadyState(whole.name, whole.events - half.events, whole.wall_seconds - half.wall_seconds)


def steady_json(states: list[SteadyState]) -> list[dict[str, Any]]:
    return [
        {**asdict(st), "events_per_second": st.events_per_second, "ns_per_event": st.ns_per_event}
        for st in states
    ]


def steady_report(states: list[SteadyState]) -> str:
    columns = [
        Column("bench", "name", text, "left"),
        Column("events", "events", integer),
        Column("wall s", "wall_seconds", fixed(2)),
        Column("M ev/s", "events_per_second", fixed(2, 1e6)),
        Column("ns / event", "ns_per_event", fixed(0)),
    ]
    return (
        "steady state: each case's second half alone (the whole run less a run of its first half):\n"
        + render(steady_json(states), columns)
        + "\n"
    )


def run_benchmark(
    mark: Benchmark, progress: Callable[[float], None] | None = None, limits: Limits | None = None
) -> BenchResult:
    """Runs one case in this process (a ``measure_memory`` case: see :func:`run_in_child`)."""
    cpu_before = time.thread_time()
    result = run(mark.scenario, seed=BENCH_SEED, progress=progress, limits=limits)
    cpu = time.thread_time() - cpu_before
    out = _result(mark, int(result.summary["events"]), float(result.summary["wall_seconds"]))
    return replace(out, cpu_seconds=cpu)


def _max_rss_bytes() -> int:
    """This process's peak resident memory since it started its program. Linux's ``VmHWM`` belongs to the
    address space, which ``exec`` replaces; ``ru_maxrss`` does not restart at ``exec``, so in a child
    started from a large process (a test runner, a notebook) it reports the parent's peak at the fork."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024  # kB
    except (OSError, ValueError, IndexError):
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # kibibytes on Linux


def _child(conn: Any, document: dict[str, Any], label: str, quiet: bool) -> None:
    """The child's side of :func:`run_in_child`: runs the scenario (limits already checked by the parent)
    and sends back ("done", events, wall, max RSS before, max RSS after) or ("error", field, message)."""
    try:
        scenario = Scenario.from_dict(document)
        scenario.resolution()
        # A tiny run first loads every module a run and its result tables use, so that the peak before
        # the measured run is the interpreter's and theirs, and the difference is the run's own.
        run(WARM_UP, seed=BENCH_SEED, limits=Limits(None, None))
        before = _max_rss_bytes()
        with showing_progress(label, quiet) as bar:
            result = run(scenario, seed=BENCH_SEED, progress=bar, limits=Limits(None, None))
        summary = result.summary
        conn.send(("done", int(summary["events"]), float(summary["wall_seconds"]), before, _max_rss_bytes()))
    except InputError as e:
        conn.send(("error", e.field, e.message))
    except KeyboardInterrupt:
        pass
    finally:
        conn.close()


def run_in_child(mark: Benchmark, quiet: bool = True, limits: Limits | None = None) -> BenchResult:
    """Runs one case in a fresh child process and measures its peak resident memory. The estimate is
    checked against ``limits`` (default: the machine's) here, before the child starts: a case that cannot
    fit is refused with the field that drives its memory."""
    estimate = mark.scenario.resolution().estimate
    check_case(mark, limits if limits is not None else default_limits())
    context = multiprocessing.get_context("spawn")  # a fresh interpreter: its peak is this run's alone
    parent_end, child_end = context.Pipe(duplex=False)
    label = f"{mark.name}: {mark.description}"
    child = context.Process(target=_child, args=(child_end, mark.document, label, quiet), daemon=True)
    child.start()
    child_end.close()
    try:
        message = parent_end.recv()
    except EOFError:
        child.join()
        raise RuntimeError(
            f"the benchmark process of {mark.name} ended without a result (exit code {child.exitcode})"
        ) from None
    finally:
        # After its result (or on Ctrl-C or an error here) the child has nothing left worth waiting for.
        if child.is_alive():
            child.terminate()
        child.join()
    if message[0] == "error":
        raise InputError(message[1], message[2])
    _, events, wall, before, after = message
    flow_parts = sum(p.amount for p in estimate.memory if p.field.endswith(".count"))
    memory = MemoryFigures(mark.scenario.flow_count(), estimate.peak_memory_bytes, flow_parts, before, after)
    return _result(mark, events, wall, memory)


@dataclass(frozen=True)
class LineCosts:
    """Nanoseconds per 64-byte line accessed in random order over a working set (see ``--memory``)."""

    working_set_bytes: int
    accesses: int
    dependent_ns: float
    overlapped_ns: float
    prefetched_ns: float

    @property
    def prefetched_lines_per_second(self) -> float:
        return 1e9 / self.prefetched_ns if self.prefetched_ns > 0 else float("nan")


def memory_probe_bytes() -> int:
    """The most memory the probe holds: its largest working set and the indices it builds it with."""
    largest = max(MEMORY_WORKING_SETS)
    return largest + largest // 64 * MEMORY_BUILD_BYTES_PER_LINE


def check_case(mark: Benchmark, limits: Limits) -> None:
    """Refuses a case whose estimate exceeds ``limits``. Its scenario is not the user's to change: the error
    names the limit the user set (``--max-memory``, ``--max-events`` or their variables), else ``--case``
    (a case this machine cannot run)."""
    try:
        check_resources(mark.scenario.resolution().estimate, limits)
    except LimitError as e:
        field = e.source if e.source in LIMIT_NAMES else "--case"
        raise InputError(field, f"case {mark.name}: {e.message}") from None


def check_memory_probe(limits: Limits) -> None:
    """Refuses ``--memory`` up front where its largest working set does not fit under the memory limit."""
    need = memory_probe_bytes()
    if limits.max_memory_bytes is not None and need > limits.max_memory_bytes:
        raise InputError(
            "--memory",
            f"the probe needs {format_bytes(need)} "
            f"(a working set of {format_bytes(max(MEMORY_WORKING_SETS))}), "
            f"more than the limit of {format_bytes(limits.max_memory_bytes)} ({limits.memory_source}); "
            "set the limit with --max-memory",
        )


def memory_probe(progress: Callable[[float], None] | None = None) -> list[LineCosts]:
    """What one cache line costs at each of :data:`MEMORY_WORKING_SETS` (call :func:`check_memory_probe`
    first). Each working set is measured in turn and freed before the next."""
    costs = []
    for i, size in enumerate(MEMORY_WORKING_SETS):
        d = _native.memory_probe(size, MEMORY_ACCESSES, BENCH_SEED)
        costs.append(
            LineCosts(
                working_set_bytes=int(d["working_set_bytes"]),
                accesses=int(d["accesses"]),
                dependent_ns=float(d["dependent_ns"]),
                overlapped_ns=float(d["overlapped_ns"]),
                prefetched_ns=float(d["prefetched_ns"]),
            )
        )
        if progress is not None:
            progress((i + 1) / len(MEMORY_WORKING_SETS))
    return costs


def memory_json(costs: list[LineCosts]) -> list[dict[str, Any]]:
    return [{**asdict(c), "prefetched_lines_per_second": c.prefetched_lines_per_second} for c in costs]


def memory_report(costs: list[LineCosts]) -> str:
    columns = [
        Column("working set MiB", "working_set_bytes", fixed(0, 2**20)),
        Column("dependent ns", "dependent_ns", fixed(1)),
        Column("overlapped ns", "overlapped_ns", fixed(1)),
        Column("prefetched ns", "prefetched_ns", fixed(1)),
        Column("M lines/s", "prefetched_lines_per_second", fixed(1, 1e6)),
    ]
    return (
        "memory: ns per 64-byte line in random order (dependent: its address read from the line before;\n"
        "overlapped: independent; prefetched: each asked for well ahead, the most one core gets):\n"
        + render(memory_json(costs), columns)
        + "\n"
    )


def speed_of(results: list[BenchResult]) -> list[tuple[int, int, float]]:
    """(flows, events, CPU seconds) of each case whose CPU time was measured (for ``ccfair.speed.record``)."""
    measured = [r for r in results if math.isfinite(r.cpu_seconds) and r.cpu_seconds > 0]
    return [(r.flows, r.events, r.cpu_seconds) for r in measured]


def bench_json(results: list[BenchResult]) -> dict[str, Any]:
    out = []
    for r in results:
        d = asdict(r)
        d["events_per_cpu_second"] = r.events_per_cpu_second
        d.pop("memory")
        if r.wall_seconds_runs:
            d["wall_seconds_runs"] = list(r.wall_seconds_runs)
        else:
            d.pop("wall_seconds_runs")
        if r.memory is not None:
            d["memory"] = r.memory.as_dict()
        out.append(d)
    return {"benchmarks": out}


def cases_report(marks: list[Benchmark]) -> str:
    """The ``--list`` table: every case, and when it runs."""
    quick = {b.name for b in benchmarks(quick=True)}
    rows = [
        {
            "name": b.name,
            "description": b.description,
            "runs": "only with --case" if b.opt_in else "default" + (", --quick" if b.name in quick else ""),
        }
        for b in marks
    ]
    columns = [
        Column("case", "name", text, "left"),
        Column("scenario", "description", text, "left"),
        Column("runs", "runs", text, "left"),
    ]
    return render(rows, columns) + "\n"


def bench_report(results: list[BenchResult]) -> str:
    columns = [
        Column("bench", "name", text, "left"),
        Column("scenario", "description", text, "left"),
        Column("events", "events", integer),
        Column("wall s", "wall_seconds", fixed(2)),
        Column("M ev/s", "events_per_second", fixed(2, 1e6)),
        Column("CPU s", "cpu_seconds", fixed(2)),
        Column("M ev/CPU-s", "events_per_cpu_second", fixed(2, 1e6)),
        Column("wall s / sim s", "wall_seconds_per_sim_second", fixed(4)),
    ]
    rows = [{**asdict(r), "events_per_cpu_second": r.events_per_cpu_second} for r in results]
    if any(r.wall_seconds_runs for r in results):
        columns[3] = Column("wall s (median)", "wall_seconds", fixed(2))
        columns.insert(4, Column("wall s, all runs", "runs", text, "left"))
        for row, r in zip(rows, results, strict=True):
            row["runs"] = " ".join(f"{w:.2f}" for w in r.wall_seconds_runs)
    out = render(rows, columns) + "\n"
    measured = [r for r in results if r.memory is not None]
    if measured:
        memory_columns = [
            Column("bench", "name", text, "left"),
            Column("flows", "flows", integer),
            Column("estimate MiB", "estimate_bytes", fixed(1, 2**20)),
            Column("max RSS MiB", "max_rss_bytes", fixed(1, 2**20)),
            Column("before run MiB", "baseline_rss_bytes", fixed(1, 2**20)),
            Column("estimate B/flow", "estimate_bytes_per_flow", fixed(0)),
            Column("(flow parts)", "flow_estimate_bytes_per_flow", fixed(0)),
            Column("RSS B/flow", "rss_bytes_per_flow", fixed(0)),
        ]
        rows = [{"name": r.name, **r.memory.as_dict()} for r in measured if r.memory is not None]
        out += "\npeak memory (max RSS of the run's own process, less its peak before the run, per flow):\n"
        out += render(rows, memory_columns) + "\n"
    return out
