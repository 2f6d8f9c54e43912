"""Simulator speed on three fixed scenarios (``ccfair bench``).

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

For each: simulator events, wall-clock seconds of the simulation, millions of events per wall second, and
wall seconds per simulated second.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

from ccfair.runner import run
from ccfair.scenario import Scenario
from ccfair.tables import Column, fixed, integer, render, text

BENCH_SEED = 1


@dataclass(frozen=True)
class Benchmark:
    name: str
    description: str
    scenario: Scenario


@dataclass(frozen=True)
class BenchResult:
    name: str
    description: str
    sim_seconds: float
    events: int
    wall_seconds: float
    events_per_second: float
    wall_seconds_per_sim_second: float


def _scenario(
    rate: str, buffer: str, duration: str, groups: list[dict[str, Any]], aqm: str = "fifo"
) -> Scenario:
    return Scenario.from_dict(
        {"duration": duration, "link": {"rate": rate, "buffer": buffer, "aqm": aqm}, "flows": groups}
    )


def benchmarks(quick: bool = False) -> list[Benchmark]:
    """The fixed benchmark scenarios (A and B only with ``quick``)."""
    marks = [
        Benchmark(
            "A",
            "10 Mbps, 2 flows (reno + cubic), 50 ms, 1 BDP, 60 s",
            _scenario(
                "10Mbps", "1bdp", "60s", [{"cc": "reno", "rtt": "50ms"}, {"cc": "cubic", "rtt": "50ms"}]
            ),
        ),
        Benchmark(
            "B",
            "1 Gbps, 10 Cubic flows, 10 ms, 0.5 BDP, 30 s",
            _scenario("1Gbps", "0.5bdp", "30s", [{"cc": "cubic", "rtt": "10ms", "count": 10}]),
        ),
    ]
    if not quick:
        marks.append(
            Benchmark(
                "C",
                "10 Gbps, 1000 Cubic flows, 20 ms, 1 BDP, 10 s",
                _scenario("10Gbps", "1bdp", "10s", [{"cc": "cubic", "rtt": "20ms", "count": 1000}]),
            )
        )
        marks.append(
            Benchmark(
                "D",
                "1 Gbps, 5 Cubic + 5 BBRv1 flows, 10 ms, 0.5 BDP, 30 s",
                _scenario(
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
                _scenario("100Mbps", "1bdp", "60s", [{**paced_cubic, "count": 10}], aqm="fq_codel"),
            )
        )
        marks.append(
            Benchmark(
                "F",
                "10 Gbps, 1000 paced Cubic flows, 20 ms, 1 BDP, FQ-CoDel, 4 s",
                _scenario("10Gbps", "1bdp", "4s", [{**paced_cubic, "count": 1000}], aqm="fq_codel"),
            )
        )
    return marks


def run_benchmark(mark: Benchmark, progress: Callable[[float], None] | None = None) -> BenchResult:
    result = run(mark.scenario, seed=BENCH_SEED, progress=progress)
    events = int(result.summary["events"])
    wall = float(result.summary["wall_seconds"])
    sim_seconds = mark.scenario.duration_ns / 1e9
    return BenchResult(
        name=mark.name,
        description=mark.description,
        sim_seconds=sim_seconds,
        events=events,
        wall_seconds=wall,
        events_per_second=events / wall if wall > 0 else float("nan"),
        wall_seconds_per_sim_second=wall / sim_seconds,
    )


def bench_json(results: list[BenchResult]) -> dict[str, Any]:
    return {"benchmarks": [asdict(r) for r in results]}


def bench_report(results: list[BenchResult]) -> str:
    columns = [
        Column("bench", "name", text, "left"),
        Column("scenario", "description", text, "left"),
        Column("events", "events", integer),
        Column("wall s", "wall_seconds", fixed(2)),
        Column("M ev/s", "events_per_second", fixed(2, 1e6)),
        Column("wall s / sim s", "wall_seconds_per_sim_second", fixed(4)),
    ]
    return render([asdict(r) for r in results], columns) + "\n"
