"""Sasaki, Hanai, Miyazaki, Nakao, Inoue: "TCP fairness among modern TCP congestion control algorithms
including TCP BBR", IEEE CloudNet 2018 (doi 10.1109/CloudNet.2018.8549505).

10 BBR and 10 Cubic flows share 1 Gbps through netem with a 1000-packet limit and an added delay of 0 to
64 ms, with drop-tail and CoDel. The abstract states that at 64 ms BBR obtains about 45 times Cubic's
throughput, and that CoDel does not help where BBR takes most of the bandwidth. The added delay is the
flows' base RTT here (a 0 ms delay is a 0.2 ms LAN RTT).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from ccfair.studies.reproduce.base import Expect, Finding, Measured, Part, ScaleInfo, Study, by_scale
from ccfair.studies.reproduce.measures import group_goodput, per_repetition, ratio

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from ccfair.studies.reproduce.base import StudyData

PART = "delay"
DELAYS = by_scale(["200us", "16ms", "64ms"], ["200us", "2ms", "4ms", "8ms", "16ms", "32ms", "64ms"])
DURATION = by_scale(("30s", "10s", 10_000_000_000), ("120s", "30s", 30_000_000_000))


def parts(scale: str, repetitions: int) -> list[Part]:
    duration, start, start_ns = DURATION[scale]
    delays = DELAYS[scale]
    document = {
        "seed": 18,
        "repetitions": repetitions,
        "scenario": {
            "duration": duration,
            "measure": {"start": start},
            "host": {"start_jitter": "100ms"},
            "link": {"rate": "1Gbps", "buffer": "1000pkt", "aqm": "fifo"},
            "flows": [
                {"cc": "bbr", "count": 10, "rtt": delays[0]},
                {"cc": "cubic", "count": 10, "rtt": delays[0]},
            ],
        },
        "grid": {"link.aqm": ["fifo", "codel"]},
        "zip": [{"flows[0].rtt": delays, "flows[1].rtt": delays}],
    }
    return [Part(PART, document, start_ns)]


def ratios(data: StudyData) -> pd.DataFrame:
    """Per run: the mean BBR flow's goodput over the mean Cubic flow's, with the run's place."""
    runs, flows = data.part(PART)
    groups = group_goodput(flows)
    bbr = groups[groups["cc"] == "bbr"].set_index("run_id")["per_flow_bps"]
    cubic = groups[groups["cc"] == "cubic"].set_index("run_id")["per_flow_bps"]
    return runs.assign(ratio=[ratio(bbr.get(r, np.nan), cubic.get(r, np.nan)) for r in runs["run_id"]])


def bbr_45x(data: StudyData) -> Measured:
    r = ratios(data)
    r = r[(r["link.aqm"] == "fifo") & (r["flows[0].rtt"] == "64ms")]
    return Measured(per_repetition(r, lambda g: g["ratio"].mean()))


def codel_same_trend(data: StudyData) -> Measured:
    r = ratios(data)
    r = r[r["flows[0].rtt"] == "64ms"]

    def rel(g: pd.DataFrame) -> float:
        fifo = g[g["link.aqm"] == "fifo"]["ratio"].mean()
        codel = g[g["link.aqm"] == "codel"]["ratio"].mean()
        return ratio(codel, fifo)

    return Measured(per_repetition(r, rel), note="BBR/Cubic ratio with CoDel over the ratio with drop-tail")


FINDINGS = (
    Finding(
        "bbr-45x-at-64ms",
        "With 64 ms of added delay, BBR obtains about 45 times the throughput of Cubic.",
        "about 45x",
        "10 BBR + 10 Cubic, 1 Gbps, 1000-packet drop-tail buffer, 64 ms; mean per-flow goodput ratio",
        Expect(22.5, 90.0, "45x within a factor of 2 (22.5-90)"),
        bbr_45x,
        unit="BBR/Cubic",
    ),
    Finding(
        "codel-no-change-at-large-delay",
        "CoDel does not change the trend where BBR takes most of the bandwidth (large delay).",
        "BBR still dominates",
        "the same at 64 ms with CoDel; its BBR/Cubic ratio over drop-tail's",
        Expect(0.5, 2.0, "CoDel's ratio within a factor of 2 of drop-tail's"),
        codel_same_trend,
        unit="ratio of ratios",
    ),
)


def ratio_figure(data: StudyData) -> Figure:
    """BBR/Cubic throughput ratio against the added delay, one line per queue discipline."""
    # matplotlib loads only when figures are drawn.
    from ccfair.analysis.stats import summarize
    from ccfair.plots.labels import plain
    from ccfair.plots.panels import new_figure
    from ccfair.plots.style import aqm_style, paper_style
    from ccfair.units import parse_duration_ns

    r = ratios(data)
    with paper_style():
        fig = new_figure(5.5, 3.8)
        ax = fig.subplots()
        for aqm, part in r.groupby("link.aqm", sort=False):
            xs, means, lows, highs = [], [], [], []
            for delay, cell in part.groupby("flows[0].rtt"):
                s = summarize(cell["ratio"])
                xs.append(parse_duration_ns(delay, "rtt") / 1e6)
                means.append(s.mean)
                lows.append(s.mean - s.low)
                highs.append(s.high - s.mean)
            order = np.argsort(xs)
            style = aqm_style(str(aqm))
            ax.errorbar(
                np.asarray(xs)[order],
                np.asarray(means)[order],
                yerr=[np.asarray(lows)[order], np.asarray(highs)[order]],
                marker=style.marker,
                color=style.color,
                capsize=3,
                label=plain(aqm),
            )
        ax.axhline(1.0, color="#888888", linestyle=":", linewidth=1)
        ax.set_yscale("log")
        ax.set_xlabel("added delay (ms)")
        ax.set_ylabel("throughput ratio BBR / Cubic (per flow)")
        ax.set_title(plain("10 BBR + 10 Cubic, 1 Gbps, 1000-packet buffer"))
        ax.legend()
    return fig


def figures(data: StudyData, plan_names: dict[str, str]) -> list[tuple[str, str, Figure]]:
    return [("ratio-vs-delay", "BBR/Cubic throughput ratio against added delay", ratio_figure(data))]


STUDY = Study(
    name="sasaki-cloudnet18",
    title="Sasaki et al., TCP fairness among modern TCP congestion control algorithms including TCP BBR "
    "(CloudNet 2018)",
    citation="K. Sasaki, M. Hanai, K. Miyazaki, Y. Nakao, S. Inoue. TCP Fairness Among Modern TCP Congestion "
    "Control Algorithms Including TCP BBR. IEEE CloudNet 2018, doi:10.1109/CloudNet.2018.8549505",
    scales={
        "quick": ScaleInfo(
            "10 BBR + 10 Cubic, 1 Gbps (the paper's rate: the 1000-packet buffer is 0.19 BDP at 64 ms only "
            "at this rate), 1000-packet buffer, added delay 0, 16 and 64 ms, drop-tail and CoDel, 30 s runs "
            "measured from 10 s, 3 repetitions",
            3,
            "fits at the limit (1 Gbps is the clean rate `ccfair doctor` measured on the 2-core development "
            "machine, where kernel endpoints filled about 75 % of it)",
        ),
        "standard": ScaleInfo(
            "the full scale's points and run length (added delay 0, 2, 4, 8, 16, 32, 64 ms, drop-tail and "
            "CoDel, 120 s runs measured from 30 s) with 5 repetitions instead of 10",
            5,
            "fits at the limit (1 Gbps)",
        ),
        "full": ScaleInfo(
            "as quick with added delay 0, 2, 4, 8, 16, 32, 64 ms, 120 s runs measured from 30 s, 10 "
            "repetitions",
            10,
            "fits at the limit (1 Gbps)",
        ),
    },
    parts=parts,
    findings=FINDINGS,
    figures=figures,
)
