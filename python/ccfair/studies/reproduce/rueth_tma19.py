"""Rüth, Kunze, Hohlfeld: "An Empirical View on Content Provider Fairness", TMA 2019 (arXiv 1905.07152).

Two flows share a bottleneck (10 and 50 Mbps; 50 and 100 ms; 0.5 and 2 BDP; drop-tail, CoDel, FQ-CoDel);
the second starts 5 s after the first and every setting runs in both start orders; 30 repetitions. The
paper's flow 0 is a testbed host (Linux Cubic or BBR, initial window 10) and flow 1 a content provider's
stack; here the providers are named flow profiles (:data:`PROFILES`: initial window 16 or 32, pacing, BBR or
Cubic). Repetitions differ by the hosts' start jitter (``[host] start_jitter``, drawn per seed), the
simulator's stand-in for a testbed's timing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pandas as pd

from ccfair.studies.reproduce.base import (
    Expect,
    Finding,
    Measured,
    Part,
    ScaleInfo,
    Study,
    StudyData,
    finite_mean,
    per_repetition,
)

if TYPE_CHECKING:
    from matplotlib.figure import Figure

# Named flow profiles: the testbed hosts and provider-like stacks (the paper's providers used initial
# windows of 16 or 32 and pacing, with BBR or Cubic).
PROFILES: dict[str, dict[str, Any]] = {
    "cubic": {"cc": "cubic", "initial_window": 10, "pacing": False},
    "bbr": {"cc": "bbr", "initial_window": 10, "pacing": False},
    "cubic-paced": {"cc": "cubic", "initial_window": 10, "pacing": True},
    "cdn-cubic-iw16": {"cc": "cubic", "initial_window": 16, "pacing": False},
    "cdn-cubic-iw32-paced": {"cc": "cubic", "initial_window": 32, "pacing": True},
    "cdn-bbr-iw32": {"cc": "bbr", "initial_window": 32, "pacing": False},
}
# (testbed flow, other flow); the first four are what the findings read.
QUICK_PAIRS = [
    ("cubic", "cubic"),
    ("bbr", "bbr"),
    ("bbr", "cubic"),
    ("cubic", "cubic-paced"),
    ("cubic", "cdn-bbr-iw32"),
]
FULL_PAIRS = QUICK_PAIRS + [
    (t, p)
    for t in ("cubic", "bbr")
    for p in PROFILES
    if (t, p) not in QUICK_PAIRS and (p, t) not in QUICK_PAIRS
]
INTRA = {("cubic", "cubic"), ("bbr", "bbr")}
MEASURE_START = "10s"
MEASURE_START_NS = 10_000_000_000


def part_name(pair: tuple[str, str]) -> str:
    return f"{pair[0]}-vs-{pair[1]}"


def _scale(scale: str) -> dict[str, Any]:
    if scale == "quick":
        return {"rates": ["10Mbps"], "rtts": ["50ms"], "pairs": QUICK_PAIRS, "duration": "30s"}
    return {"rates": ["10Mbps", "50Mbps"], "rtts": ["50ms", "100ms"], "pairs": FULL_PAIRS, "duration": "60s"}


def parts(scale: str, repetitions: int) -> list[Part]:
    """One plan per pair (flow 0 the testbed host, flow 1 the other stack)."""
    s = _scale(scale)
    out = []
    for pair in s["pairs"]:
        flows = [
            {**PROFILES[pair[0]], "label": pair[0], "rtt": s["rtts"][0], "start": "0s"},
            {**PROFILES[pair[1]], "label": pair[1], "rtt": s["rtts"][0], "start": "5s"},
        ]
        document = {
            "seed": 19,
            "repetitions": repetitions,
            "flip_start_order": True,
            "scenario": {
                "duration": s["duration"],
                "measure": {"start": MEASURE_START},
                "host": {"start_jitter": "20ms"},
                "link": {"rate": s["rates"][0], "buffer": "0.5bdp", "aqm": "fifo"},
                "flows": flows,
            },
            "grid": {
                "link.rate": s["rates"],
                "link.buffer": ["0.5bdp", "2bdp"],
                "link.aqm": ["fifo", "codel", "fq_codel"],
            },
            "zip": [{"flows[0].rtt": s["rtts"], "flows[1].rtt": s["rtts"]}],
        }
        out.append(Part(part_name(pair), document, MEASURE_START_NS))
    return out


# ---------------------------------------------------------------------------------------------- findings


def _pairs(data: StudyData, aqm: str | None = None) -> pd.DataFrame:
    """The runs of every pair's plan, with their ``pair`` (testbed profile, other profile)."""
    pairs = {part_name(p): p for p in FULL_PAIRS}
    runs = data.runs[data.runs["part"].isin(pairs)]
    if aqm is not None:
        runs = runs[runs["link.aqm"] == aqm]
    return runs.assign(pair=runs["part"].map(pairs))


def _abs_fness(runs: pd.DataFrame, pairs: set[tuple[str, str]]) -> pd.DataFrame:
    part = runs[runs["pair"].isin(pairs)]
    return part.assign(afness=part["fness"].abs())


def bbr_monopolizes(data: StudyData) -> Measured:
    runs = _pairs(data, "fifo")
    runs = runs[(runs["pair"] == ("bbr", "cubic")) & (runs["link.buffer"] == "0.5bdp")]
    flows = data.flows
    bbr = (
        flows[flows["run_id"].isin(runs["run_id"]) & (flows["cc"] == "bbr")].groupby("run_id")["share"].sum()
    )
    runs = runs.assign(bbr_share=runs["run_id"].map(bbr))
    # Regardless of start order: the worse start order's mean share in each repetition.
    samples = per_repetition(runs, lambda g: g.groupby("flipped")["bbr_share"].mean().min())
    return Measured(samples, note="BBR's share in the start order where it is lower")


def intra_fair(data: StudyData) -> Measured:
    runs = _abs_fness(_pairs(data, "fifo"), INTRA)
    return Measured(per_repetition(runs, lambda g: g["afness"].mean()))


def bbr_variance(data: StudyData) -> Measured:
    runs = _pairs(data, "fifo")
    keys = ["link.rate", "flows[0].rtt", "link.buffer", "flipped"]
    keys = [k for k in keys if k in runs.columns]
    samples = []
    for _, cell in runs.groupby(keys):
        bbr = cell[cell["pair"] == ("bbr", "bbr")]["fness"]
        cubic = cell[cell["pair"] == ("cubic", "cubic")]["fness"]
        if len(bbr) > 1 and len(cubic) > 1:
            samples.append(float(bbr.std(ddof=1) - cubic.std(ddof=1)))
    return Measured(
        samples, per="setting", note="sd of fness over the repetitions, BBR-BBR minus Cubic-Cubic"
    )


def paced_cubic(data: StudyData) -> Measured:
    runs = _abs_fness(_pairs(data, "fifo"), {("cubic", "cubic-paced"), ("cubic", "cubic")})

    def diff(g: pd.DataFrame) -> float:
        return finite_mean(g[g["pair"] == ("cubic", "cubic-paced")]["afness"]) - finite_mean(
            g[g["pair"] == ("cubic", "cubic")]["afness"]
        )

    return Measured(per_repetition(runs, diff), note="|fness| of Cubic vs paced Cubic minus Cubic vs Cubic")


def fq_codel_equilibrium(data: StudyData) -> Measured:
    runs = _pairs(data, "fq_codel")
    runs = runs.assign(afness=runs["fness"].abs())
    return Measured(
        per_repetition(runs, lambda g: g.groupby("pair")["afness"].mean().max()),
        note="the least fair pair's mean |fness|",
    )


def codel_intra(data: StudyData) -> Measured:
    runs = _pairs(data)
    runs = runs.assign(afness=runs["fness"].abs())

    def gain(g: pd.DataFrame, pairs: set[tuple[str, str]]) -> float:
        g = g[g["pair"].isin(pairs)]
        return finite_mean(g[g["link.aqm"] == "fifo"]["afness"]) - finite_mean(
            g[g["link.aqm"] == "codel"]["afness"]
        )

    samples = per_repetition(runs, lambda g: gain(g, INTRA) - gain(g, {("bbr", "cubic")}))
    return Measured(
        samples, note="|fness| gained by CoDel over drop-tail, intra-protocol pairs minus BBR vs Cubic"
    )


def queue_length(testbed: str, buffer: str) -> Any:
    def measure(data: StudyData) -> Measured:
        runs = _pairs(data, "fifo")
        runs = runs[
            (runs["pair"].str[0] == testbed)
            & (runs["link.buffer"] == buffer)
            & (runs["link.rate"] == "10Mbps")
            & (runs["flows[0].rtt"] == "50ms")
        ]
        mean = data.queue_mean(list(runs["run_id"]), MEASURE_START_NS)
        runs = runs.assign(queue=runs["run_id"].map(mean))
        return Measured(per_repetition(runs, lambda g: g["queue"].mean()), note="pooled over the pairs")

    return measure


SETUP_PAIRS = "drop-tail, every rate, RTT and start order of the scale"
FINDINGS = (
    Finding(
        "bbr-monopolizes-at-0.5bdp",
        "At 0.5 BDP BBR monopolizes the link against Cubic, regardless of which flow starts first.",
        "BBR takes nearly all",
        "BBR vs Cubic, 0.5 BDP, " + SETUP_PAIRS + "; BBR's share in the worse start order",
        Expect(0.8, 1.0, "BBR share ≥ 0.8 (monopolizes) in both start orders"),
        bbr_monopolizes,
        unit="share",
    ),
    Finding(
        "intra-protocol-fair",
        "Intra-protocol pairs (Cubic-Cubic, BBR-BBR) share fairly.",
        "fness near 0",
        "Cubic vs Cubic and BBR vs BBR, " + SETUP_PAIRS,
        Expect(0.0, 0.2, "mean |fness| ≤ 0.2"),
        intra_fair,
        unit="|fness|",
    ),
    Finding(
        "bbr-larger-variance",
        "Intra-protocol fairness has a larger variance for BBR than for Cubic.",
        "larger spread for BBR-BBR",
        "sd of fness over repetitions per setting, BBR-BBR minus Cubic-Cubic, " + SETUP_PAIRS,
        Expect(0.0, None, "difference of standard deviations > 0"),
        bbr_variance,
        unit="Δ sd(fness)",
    ),
    Finding(
        "paced-cubic-less-fair",
        "Paced Cubic decreases fairness (against an unpaced Cubic flow).",
        "less fair with pacing",
        "Cubic vs paced Cubic against Cubic vs Cubic, " + SETUP_PAIRS,
        Expect(0.05, None, "|fness| higher by more than 0.05"),
        paced_cubic,
        unit="Δ |fness|",
    ),
    Finding(
        "fq-codel-equilibrium",
        "FQ-CoDel brings every pair close to equilibrium.",
        "fness near 0 for all pairs",
        "every pair under FQ-CoDel, every rate, RTT, buffer and start order; the least fair pair",
        Expect(0.0, 0.1, "worst pair's mean |fness| ≤ 0.1"),
        fq_codel_equilibrium,
        unit="|fness|",
    ),
    Finding(
        "codel-mainly-intra",
        "Plain CoDel mainly improves intra-protocol fairness (less so BBR vs Cubic).",
        "intra-protocol pairs gain more",
        "CoDel against drop-tail, every rate, RTT, buffer and start order",
        Expect(0.0, None, "intra-protocol gain in |fness| larger than BBR vs Cubic's (difference > 0)"),
        codel_intra,
        unit="Δ |fness|",
    ),
    Finding(
        "queue-bbr-2bdp",
        "Average queue with a BBR testbed flow at 2 BDP: 40-53 packets.",
        "40-53 packets",
        "BBR testbed flow (every pair), drop-tail, 10 Mbps, 50 ms, 2 BDP (83 packets)",
        Expect(32.0, 63.6, "40-53 packets ± 20 %"),
        queue_length("bbr", "2bdp"),
        unit="packets",
    ),
    Finding(
        "queue-bbr-0.5bdp",
        "Average queue with a BBR testbed flow at 0.5 BDP: 11-15 packets.",
        "11-15 packets",
        "BBR testbed flow (every pair), drop-tail, 10 Mbps, 50 ms, 0.5 BDP (21 packets)",
        Expect(8.8, 18.0, "11-15 packets ± 20 %"),
        queue_length("bbr", "0.5bdp"),
        unit="packets",
    ),
    Finding(
        "queue-cubic-2bdp",
        "Average queue with a Cubic testbed flow at 2 BDP: 55-66 packets.",
        "55-66 packets",
        "Cubic testbed flow (every pair), drop-tail, 10 Mbps, 50 ms, 2 BDP (83 packets)",
        Expect(44.0, 79.2, "55-66 packets ± 20 %"),
        queue_length("cubic", "2bdp"),
        unit="packets",
    ),
    Finding(
        "queue-cubic-0.5bdp",
        "Average queue with a Cubic testbed flow at 0.5 BDP: 12-16 packets.",
        "12-16 packets",
        "Cubic testbed flow (every pair), drop-tail, 10 Mbps, 50 ms, 0.5 BDP (21 packets)",
        Expect(9.6, 19.2, "12-16 packets ± 20 %"),
        queue_length("cubic", "0.5bdp"),
        unit="packets",
    ),
)


def figures(data: StudyData, plan_names: dict[str, str]) -> list[tuple[str, str, Figure]]:
    """fness scatter and density per pair, start order and setting (one figure per pair)."""
    # matplotlib loads only when figures are drawn.
    from ccfair.plots.fness_plot import fness

    return [
        (part, f"fness, {part.replace('-vs-', ' vs ')}", fness(data.root, plan=plan))
        for part, plan in plan_names.items()
        if (data.runs["part"] == part).any()
    ]


STUDY = Study(
    name="rueth-tma19",
    title="Rüth et al., An Empirical View on Content Provider Fairness (TMA 2019)",
    citation="J. Rüth, I. Kunze, O. Hohlfeld. An Empirical View on Content Provider Fairness. TMA 2019, "
    "arXiv:1905.07152",
    scales={
        "quick": ScaleInfo(
            "10 Mbps, 50 ms, 0.5 and 2 BDP, drop-tail/CoDel/FQ-CoDel, 5 pairs (Cubic-Cubic, BBR-BBR, "
            "BBR-Cubic, Cubic-paced Cubic, Cubic-provider BBR IW32), second flow 5 s later, both start "
            "orders, 30 s runs measured from 10 s; the paper's structure at one rate and RTT, 3 "
            "repetitions instead of 30",
            3,
            "fits (10 Mbps is far below the clean rate `ccfair doctor` measures)",
        ),
        "full": ScaleInfo(
            "10 and 50 Mbps, 50 and 100 ms, 0.5 and 2 BDP, drop-tail/CoDel/FQ-CoDel, testbed Cubic and BBR "
            "against every profile (12 pairs), second flow 5 s later, both start orders, 60 s runs measured "
            "from 10 s, 30 repetitions as in the paper",
            30,
            "fits (50 Mbps at most)",
        ),
    },
    parts=parts,
    findings=FINDINGS,
    figures=figures,
)
