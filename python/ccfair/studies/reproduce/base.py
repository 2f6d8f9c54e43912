"""What a reproduced study is made of (:class:`Study`), and the data its findings read (:class:`StudyData`).

A study module (one per paper, in this package) defines:

- its parts at each scale: sweep plans (plain plan documents), named ``repro-<study>-<scale>-r<N>-<part>``
  (``repro-<study>-kernel-<scale>-...`` on the kernel backend, whose runs are other runs) so a study's
  plans are found again in a results directory and a second scale or repetition count adds its own plans
  while reusing every run the store already has (run ids are content hashes);
- its findings: the paper's statement, the setup text, the tolerance as an interval the measured value must
  lie in (:class:`Expect`), and how to compute the value from the store, one sample per repetition (or per
  cell, where the finding is about a spread over repetitions), so the scorecard can give a mean, a spread
  and n;
- its paper-style figures, drawn from the same store.

The findings read :class:`StudyData`: the done runs of the study's plans with each run's part, cell,
repetition, start order and plan coordinates (as columns named by their dotted paths), its run metrics
and its flows.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import pandas as pd

from ccfair.studies.reproduce.scales import SCALES
from ccfair.sweep.identity import SIMULATOR
from ccfair.sweep.plan import Plan, plan_from_dict

if TYPE_CHECKING:
    from matplotlib.figure import Figure

PLAN_PREFIX = "repro-"
T = TypeVar("T")
RUN_METRICS = ("jain_index", "utilization", "total_goodput_bps", "fness", "queue_sojourn_p50_ns")


@dataclass(frozen=True)
class Expect:
    """The interval the paper's statement allows (tolerance included); None is unbounded."""

    low: float | None
    high: float | None
    text: str  # the tolerance in words: "0.6 ± 0.1 (6:4)"

    def contains(self, lo: float, hi: float) -> bool:
        return (self.low is None or lo >= self.low) and (self.high is None or hi <= self.high)

    def disjoint(self, lo: float, hi: float) -> bool:
        return (self.low is not None and hi < self.low) or (self.high is not None and lo > self.high)


@dataclass(frozen=True)
class Measured:
    """A finding's samples (one per repetition unless ``per`` says otherwise) and notes on them."""

    samples: list[float]
    per: str = "repetition"
    note: str = ""


@dataclass(frozen=True)
class Finding:
    key: str
    statement: str  # the paper's words (or their gist, quoted in the scorecard)
    paper_value: str
    setup: str  # the runs the value is computed from
    expect: Expect | None  # None: the paper states no value to score against (verdict cannot tell)
    measure: Callable[[StudyData], Measured]
    unit: str = ""
    # What the measured value rests on that is a reconstruction, not the paper's setup (a provider's 2019
    # stack rebuilt from public sources, a model whose paper was not available): the scorecard says so.
    reconstruction: str = ""


@dataclass(frozen=True)
class Part:
    """One plan of a study: its part name and plan document (without the name, which the study sets)."""

    name: str
    document: dict[str, Any]
    measure_start_ns: int


@dataclass(frozen=True)
class ScaleInfo:
    setup: str  # what this scale runs and how it departs from the paper
    repetitions: int
    kernel: str  # whether the kernel backend can run it, and why


@dataclass(frozen=True)
class Study:
    name: str
    title: str
    citation: str
    scales: dict[str, ScaleInfo]
    parts: Callable[[str, int], list[Part]]  # (scale, repetitions) -> the plans' parts
    findings: tuple[Finding, ...]
    # (data, plan name by part) -> (file stem, title, figure)
    figures: Callable[[StudyData, dict[str, str]], list[tuple[str, str, Figure]]]

    def __post_init__(self) -> None:
        if tuple(self.scales) != SCALES:
            raise ValueError(f"study {self.name}: scales {tuple(self.scales)}, every study defines {SCALES}")

    def plan_name(self, scale: str, repetitions: int, part: str, backend: str = SIMULATOR) -> str:
        where = "" if backend == SIMULATOR else f"{backend}-"
        return f"{PLAN_PREFIX}{self.name}-{where}{scale}-r{repetitions}-{part}"

    def plans(self, scale: str, repetitions: int, backend: str = SIMULATOR) -> list[tuple[Part, Plan]]:
        """The scale's plans on ``backend`` (not yet expanded: a cell the backend cannot run is refused
        when the plan is)."""
        out = []
        for part in self.parts(scale, repetitions):
            name = self.plan_name(scale, repetitions, part.name, backend)
            document = part.document if backend == SIMULATOR else kernel_document(part.document)
            document = {**document, "name": name, "backend": backend}
            out.append((part, plan_from_dict(document, default_name=name)))
        return out


def kernel_document(document: dict[str, Any]) -> dict[str, Any]:
    """A part's plan document for the kernel backend, which runs this machine's hosts and refuses a
    ``[host]`` table: the studies' only host setting, ``start_jitter`` (each group's flows start uniformly
    over ``[start, start + jitter)``), becomes the same draw as each group's ``arrivals = { process =
    "uniform", window = jitter }``. A group with arrivals of its own keeps the table, which the kernel
    backend then refuses, naming it."""
    scenario = document["scenario"]
    host = scenario.get("host", {})
    if set(host) != {"start_jitter"} or any("arrivals" in g for g in scenario["flows"]):
        return document
    arrivals = {"process": "uniform", "window": host["start_jitter"]}
    flows = [{**g, "arrivals": arrivals} for g in scenario["flows"]]
    rest = {k: v for k, v in scenario.items() if k != "host"}
    return {**document, "scenario": {**rest, "flows": flows}}


@dataclass
class StudyData:
    """The done runs of a study's plans (``runs``: one row per run and plan it belongs to) and their flows
    (``flows``, with the same place columns)."""

    root: Path
    runs: pd.DataFrame
    flows: pd.DataFrame
    measure_start_ns: dict[str, int]
    planned: int = 0  # runs the plans hold (done or not)

    def part(self, name: str) -> tuple[pd.DataFrame, pd.DataFrame]:
        """The runs and flows of one part."""
        return self.runs[self.runs["part"] == name], self.flows[self.flows["part"] == name]

    def queue_mean(self, run_ids: Sequence[str], start_ns: int, column: str = "backlog_packets") -> pd.Series:
        """Mean of a queue column over each run's measurement window, by run id."""
        # DuckDB loads when a study reads its store, not when `reproduce --list` describes it.
        from ccfair.store.reader import query

        if len(run_ids) == 0:
            return pd.Series(dtype=float)
        ids = ", ".join(f"'{r}'" for r in run_ids)
        frame = query(
            self.root,
            f"""SELECT run_id, avg({column}) AS value FROM queue
               WHERE run_id IN ({ids}) AND t_ns > {int(start_ns)} GROUP BY 1""",
        )
        return frame.set_index("run_id")["value"]


def load_study_data(root: Path, plans: Sequence[tuple[Part, Plan]]) -> StudyData:
    """Reads the study's done runs and flows from the store under ``root``."""
    # DuckDB and the sweep layer load when a study reads its store, not when `reproduce --list` describes it.
    from ccfair.store.reader import query
    from ccfair.sweep.driver import plan_runs

    rows = []
    for part, plan in plans:
        _, runs = plan_runs(plan, quiet=True, limits=None)
        for r in runs:
            rows.append(
                {
                    "part": part.name,
                    "run_id": r.run_id,
                    "cell": r.cell,
                    "repetition": r.repetition,
                    "flipped": r.flipped,
                    **dict(r.coordinates),
                }
            )
    planned = pd.DataFrame(rows)
    measure = {part.name: part.measure_start_ns for part, _ in plans}
    empty = StudyData(root, planned.iloc[:0], pd.DataFrame(columns=["part", "run_id"]), measure, len(planned))
    from ccfair.store.layout import catalog_path

    if planned.empty or not catalog_path(root).is_file():
        return empty
    ids = ", ".join(f"'{r}'" for r in sorted(set(planned["run_id"])))
    metrics = query(
        root, f"SELECT run_id, {', '.join(RUN_METRICS)} FROM runs WHERE status = 'done' AND run_id IN ({ids})"
    )
    flows = query(
        root,
        f"SELECT * FROM flows WHERE run_id IN ({ids}) AND run_id IN "
        f"(SELECT run_id FROM runs WHERE status = 'done')",
    )
    runs = planned.merge(metrics, on="run_id", how="inner")
    place = runs.drop(columns=list(RUN_METRICS))
    flows = place.merge(flows, on="run_id", how="inner")
    return StudyData(root, runs, flows, measure, len(planned))


def by_scale(quick: T, full: T) -> dict[str, T]:
    """A setting at each scale: the standard scale runs the full scale's points (with fewer repetitions)."""
    return {"quick": quick, "standard": full, "full": full}
