"""Philip, Ware, Athapathu, Sherry, Sekar: "Revisiting TCP congestion control throughput models & fairness
properties at scale", IMC 2021.

CoreScale: 10 Gbps, a 375 MB drop-tail buffer, 1000/3000/5000 flows, 20/100/200 ms. EdgeScale: 100 Mbps,
3 MB, 10/30/50 flows. NewReno (``reno`` here: Linux's Reno with SACK), Cubic and BBRv1, alone and mixed; the
flows start at random times over the first part of the run (``[host] start_jitter``) and a warm-up passes
before the measurement window. Mixes: one BBR flow against N-1 NewReno or Cubic flows, N/2 against N/2
(BBR-NewReno, BBR-Cubic, Cubic-NewReno), and N NewReno flows alone for the Mathis model.

The Mathis model: a flow's throughput = (MSS / RTT) x C / sqrt(p). Solved for C with the flow's goodput,
its mean RTT (queueing included) and p either the loss rate (drops / segments sent) or the rate of window
halvings (halvings / segments sent), whose periodic-loss value is sqrt(3/2) ≈ 1.22 (Mathis et al. 1997).

CoreScale's hosts differ from the default ones in two settings, each because the paper's results could not
have come from the default (``CORE_HOST``):

- ``nic_rate = "100Gbps"``: a flow group is one host with one NIC in ccfair, 10 Gbit/s with the default
  hosts, as fast as CoreScale's link; N NewReno flows alone then queue in their host and never drop at the
  bottleneck, where the paper fitted Mathis's C from their loss rate. A NIC ten times the link stands for
  senders that together offer more than the link.
- ``rmem`` up to 2147483647 bytes (the largest ``tcp_rmem`` Linux takes): the default 32 MiB caps a receive
  window near 21 MB, 0.56 Gbit/s at the 300 ms a full 375 MB buffer adds, where the paper's one BBR flow
  takes about 40 % of 10 Gbit/s (150 MB in flight); the paper's receivers had raised buffers, as any
  10 Gbit/s long-path testbed does.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, TypedDict

import numpy as np
import pandas as pd

from ccfair.studies.reproduce.base import Expect, Finding, Measured, Part, ScaleInfo, Study
from ccfair.studies.reproduce.measures import per_repetition

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from ccfair.studies.reproduce.base import StudyData

MSS_BYTES = 1448


class Setting(TypedDict):
    """A network setting of the study: link rate and buffer, the flow counts swept, the series interval."""

    rate: str
    buffer: str
    counts: list[int]
    interval: str


CORE_HOST = {"nic_rate": "100Gbps", "rmem": [4096, 131_072, 2_147_483_647]}
SETTINGS: dict[str, Setting] = {
    "edge": {"rate": "100Mbps", "buffer": "3MB", "counts": [10, 30, 50], "interval": "100ms"},
    "core": {"rate": "10Gbps", "buffer": "375MB", "counts": [1000, 3000, 5000], "interval": "1s"},
}
# mix -> (group 0's cc, group 1's cc or None, one flow in group 0?)
MIXES: dict[str, tuple[str, str | None, bool]] = {
    "bbr1-vs-reno": ("bbr", "reno", True),
    "bbr1-vs-cubic": ("bbr", "cubic", True),
    "bbr-vs-reno": ("bbr", "reno", False),
    "bbr-vs-cubic": ("bbr", "cubic", False),
    "cubic-vs-reno": ("cubic", "reno", False),
    "reno": ("reno", None, False),
}
TIMING = {  # duration, start spread, measurement start
    "quick": ("60s", "10s", 20_000_000_000),
    "standard": ("90s", "30s", 45_000_000_000),
    "full": ("180s", "60s", 90_000_000_000),
}


def _settings(scale: str) -> list[str]:
    return ["edge"] if scale == "quick" else ["core", "edge"]


def _rtts(scale: str) -> list[str]:
    return ["20ms", "100ms"] if scale == "quick" else ["20ms", "100ms", "200ms"]


def parts(scale: str, repetitions: int) -> list[Part]:
    duration, spread, start_ns = TIMING[scale]
    rtts = _rtts(scale)
    out = []
    for setting in _settings(scale):
        s = SETTINGS[setting]
        for mix, (cc0, cc1, single) in MIXES.items():
            counts = s["counts"]
            if cc1 is None:
                flows = [{"cc": cc0, "count": counts[0], "rtt": rtts[0]}]
                zips = [{"flows[0].count": counts}, {"flows[0].rtt": rtts}]
            elif single:
                flows = [
                    {"cc": cc0, "count": 1, "rtt": rtts[0]},
                    {"cc": cc1, "count": counts[0] - 1, "rtt": rtts[0]},
                ]
                zips = [
                    {"flows[1].count": [n - 1 for n in counts]},
                    {"flows[0].rtt": rtts, "flows[1].rtt": rtts},
                ]
            else:
                half = [n // 2 for n in counts]
                flows = [
                    {"cc": cc0, "count": half[0], "rtt": rtts[0]},
                    {"cc": cc1, "count": half[0], "rtt": rtts[0]},
                ]
                zips = [
                    {"flows[0].count": half, "flows[1].count": half},
                    {"flows[0].rtt": rtts, "flows[1].rtt": rtts},
                ]
            document: dict[str, Any] = {
                "seed": 21,
                "repetitions": repetitions,
                "scenario": {
                    "duration": duration,
                    "interval": s["interval"],
                    "measure": {"start": f"{start_ns // 1_000_000_000}s"},
                    "host": {"start_jitter": spread, **(CORE_HOST if setting == "core" else {})},
                    "link": {"rate": s["rate"], "buffer": s["buffer"], "aqm": "fifo"},
                    "flows": flows,
                },
                "zip": zips,
            }
            out.append(Part(f"{setting}-{mix}", document, start_ns))
    return out


def _mix(data: StudyData, mix: str) -> tuple[pd.DataFrame, pd.DataFrame, str]:
    """Runs and flows of ``mix`` at the largest setting the data has (CoreScale over EdgeScale)."""
    for setting in ("core", "edge"):
        runs, flows = data.part(f"{setting}-{mix}")
        if not runs.empty:
            return runs, flows, setting
    runs, flows = data.part(f"edge-{mix}")
    return runs, flows, "edge"


def _cc_share(runs: pd.DataFrame, flows: pd.DataFrame, cc: str) -> pd.DataFrame:
    share = flows[flows["cc"] == cc].groupby("run_id")["share"].sum()
    return runs.assign(value=runs["run_id"].map(share))


def _bbr_share(data: StudyData, mixes: tuple[str, str]) -> tuple[pd.DataFrame, str]:
    """The BBR flows' share in each run of both mixes, and the setting the last mix was read from."""
    frames = []
    for mix in mixes:
        runs, flows, setting = _mix(data, mix)
        frames.append(_cc_share(runs, flows, "bbr"))
    return pd.concat(frames), setting


def single_bbr(data: StudyData) -> Measured:
    runs, setting = _bbr_share(data, ("bbr1-vs-reno", "bbr1-vs-cubic"))
    count = "flows[1].count"
    runs = runs[runs[count] == runs[count].max()] if not runs.empty else runs
    return Measured(
        per_repetition(runs, lambda g: g["value"].mean()), note=f"the largest flow count ({setting}Scale)"
    )


def bbr_equal(data: StudyData) -> Measured:
    runs, setting = _bbr_share(data, ("bbr-vs-reno", "bbr-vs-cubic"))
    return Measured(
        per_repetition(runs, lambda g: g["value"].max()), note=f"the largest BBR share ({setting}Scale)"
    )


def cubic_vs_reno(data: StudyData) -> Measured:
    runs, flows, setting = _mix(data, "cubic-vs-reno")
    runs = _cc_share(runs, flows, "cubic")
    return Measured(
        per_repetition(runs, lambda g: g["value"].mean()), note=f"every flow count and RTT ({setting}Scale)"
    )


def mathis_c(flows: pd.DataFrame, events: pd.Series) -> pd.Series:
    """C = goodput x RTT / MSS x sqrt(events / segments sent), per flow (NaN without events)."""
    p = events / flows["window_sent_segments"].where(flows["window_sent_segments"] > 0)
    c = flows["goodput_bps"] / 8 * (flows["rtt_mean_ns"] / 1e9) / MSS_BYTES * np.sqrt(p)
    return c.where(p > 0)


def mathis_from(column: str | None) -> Any:
    def measure(data: StudyData) -> Measured:
        _, flows, setting = _mix(data, "reno")
        events = flows["window_queue_drops"] + flows["window_path_drops"] if column is None else flows[column]
        flows = flows.assign(c=mathis_c(flows, events))
        samples = per_repetition(
            flows, lambda g: float(g["c"].median()) if g["c"].notna().any() else math.nan
        )
        note = f"median over the NewReno flows of every run ({setting}Scale)"
        if column is not None and not flows.empty and flows[column].isna().all():
            note += "; no value: the kernel backend cannot see window halvings"
        return Measured(samples, note=note)

    return measure


MATHIS = Expect(0.61, 2.45, "sqrt(3/2) ≈ 1.22 within a factor of 2 (0.61-2.45)")
FINDINGS = (
    Finding(
        "single-bbr-40pct",
        "A single BBR flow takes about 40 % of the link against thousands of NewReno or Cubic flows.",
        "about 40 %",
        "1 BBR against N-1 NewReno and against N-1 Cubic flows at the largest N, every RTT; BBR's share",
        Expect(0.3, 0.5, "0.4 ± 0.1"),
        single_bbr,
        unit="share",
    ),
    Finding(
        "bbr-equal-numbers-999",
        "With equal numbers of flows BBR takes up to 99.9 % of the link.",
        "up to 99.9 %",
        "N/2 BBR against N/2 NewReno or Cubic, every N and RTT; the largest BBR share",
        Expect(0.95, 1.0, "largest share ≥ 0.95"),
        bbr_equal,
        unit="share",
    ),
    Finding(
        "cubic-vs-newreno-70-80",
        "Cubic takes 70-80 % against an equal number of NewReno flows.",
        "70-80 %",
        "N/2 Cubic against N/2 NewReno, every N and RTT; Cubic's share",
        Expect(0.65, 0.85, "0.70-0.80 ± 0.05"),
        cubic_vs_reno,
        unit="share",
    ),
    Finding(
        "mathis-c-from-loss-rate",
        "The Mathis model fitted with C computed from the loss rate (drops / segments sent).",
        "model constant sqrt(3/2) ≈ 1.22",
        "N NewReno flows alone, every N and RTT; C per flow",
        MATHIS,
        mathis_from(None),
        unit="C",
    ),
    Finding(
        "mathis-c-from-halvings",
        "The Mathis model fitted with C computed from the rate of window halvings.",
        "model constant sqrt(3/2) ≈ 1.22",
        "N NewReno flows alone, every N and RTT; C per flow from window_cwnd_reductions",
        MATHIS,
        mathis_from("window_cwnd_reductions"),
        unit="C",
    ),
)


def figures(data: StudyData, plan_names: dict[str, str]) -> list[tuple[str, str, Figure]]:
    """Each algorithm's share against the flow count, one panel per RTT, one figure per mix and scale."""
    # matplotlib loads only when figures are drawn.
    from ccfair.plots.share_plot import share

    out = []
    for part, plan in plan_names.items():
        if part.split("-", 1)[1] == "reno" or not (data.runs["part"] == part).any():
            continue  # NewReno alone: its share is 1 by definition
        figure = share(data.root, plan=plan, x="flows[1].count")
        out.append((f"share-{part}", f"share against flow count, {part}", figure))
    return out


STUDY = Study(
    name="philip-imc21",
    title="Philip et al., Revisiting TCP congestion control throughput models & fairness properties at scale "
    "(IMC 2021)",
    citation="A. A. Philip, R. Ware, R. Athapathu, J. Sherry, V. Sekar. Revisiting TCP Congestion Control "
    "Throughput Models & Fairness Properties At Scale. ACM IMC 2021",
    scales={
        "quick": ScaleInfo(
            "EdgeScale only: 100 Mbps, 3 MB drop-tail, 10/30/50 flows, 20 and 100 ms, the six mixes, flows "
            "starting over the first 10 s, 60 s runs measured from 20 s, 2 repetitions; the CoreScale "
            "findings (thousands of flows) are scored on EdgeScale's flow counts here",
            2,
            "fits where `ccfair doctor` measured 100 Mbps clean (the start spread becomes uniform "
            "arrivals); the kernel cannot count window halvings, so that Mathis fit has no value there",
        ),
        "standard": ScaleInfo(
            "CoreScale and EdgeScale as in full (10 Gbps, 375 MB and 100 Mbps, 3 MB; the six mixes), flows "
            "starting over the first 30 s, 90 s runs measured from 45 s, 2 repetitions; CoreScale's hosts "
            "with a 100 Gbps NIC per group and tcp_rmem up to 2 GiB; findings scored on CoreScale",
            2,
            "does not fit: CoreScale's 10 Gbps is far above the clean rate `ccfair doctor` measures (1 Gbps "
            "on the development machine); EdgeScale alone would",
        ),
        "full": ScaleInfo(
            "CoreScale (10 Gbps, 375 MB drop-tail, 1000/3000/5000 flows) and EdgeScale (100 Mbps, 3 MB, "
            "10/30/50 flows), 20/100/200 ms, the six mixes, flows starting over the first 60 s, 180 s runs "
            "measured from 90 s, 3 repetitions; CoreScale's hosts with a 100 Gbps NIC per group and tcp_rmem "
            "up to 2 GiB; findings scored on CoreScale",
            3,
            "does not fit: CoreScale's 10 Gbps is far above the clean rate `ccfair doctor` measures (1 Gbps "
            "on the development machine); EdgeScale alone would",
        ),
    },
    parts=parts,
    findings=FINDINGS,
    figures=figures,
)
