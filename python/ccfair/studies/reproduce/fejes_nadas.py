"""Fejes, Gombos, Laki, Nádas: "Who will save the Internet from the congestion control revolution?",
ACM Buffer Sizing Workshop 2019, and Nádas et al., "On congestion control (un)fairness" (slides).

Half BBRv2 and half Cubic flows (and Cubic alone) share a bottleneck (100 Mbps to 5 Gbps; 10 ms, 100 ms and
mixed RTTs; buffers of 0.05 to 2 BDP; TailDrop, PIE, GSP, PPV; N = 2 to 100); the figures show each
connection class's relative goodput against the buffer size, one panel per AQM, and Jain's index. The
stated findings are at 1 Gbps and 10 ms. The slides add L4S: DCTCP against BBRv2 in its scalable (ECN) mode
at 1 Gbps, 5 ms, through DualPI2 and VDQ-CSAQM (the Per-Packet-Value resource sharing with an L4S and a
classic queue), the ECN marking ratio per class, and dynamic traffic (flows joining and leaving, equal
5 ms RTT). ccfair's VDQ-CSAQM (``vdq_csaqm``) is a reconstruction from the paper's abstract (see
``crates/ccfair-aqm/src/vdq.rs``), so its rows score that reconstruction, not the authors' implementation.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pandas as pd

from ccfair.studies.reproduce.base import Expect, Finding, Measured, Part, ScaleInfo, Study, by_scale
from ccfair.studies.reproduce.measures import group_goodput, per_repetition, ratio
from ccfair.units import parse_buffer

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from ccfair.studies.reproduce.base import StudyData

BUFFERS = by_scale(
    ["0.1bdp", "0.2bdp", "0.5bdp", "2bdp"], ["0.05bdp", "0.1bdp", "0.2bdp", "0.5bdp", "1bdp", "2bdp"]
)
TIMING = by_scale(("10s", "4s", 4_000_000_000), ("60s", "20s", 20_000_000_000))
AQMS = ["fifo", "pie", "gsp", "ppv", "vdq_csaqm"]
# The findings measured under VDQ-CSAQM score ccfair's reconstruction of it (its paper was not available).
VDQ_RECONSTRUCTION = (
    "VDQ-CSAQM as reconstructed from the paper's abstract, the PPV/CSAQM definitions and RFC 9332's coupling "
    "(crates/ccfair-aqm/src/vdq.rs): the paper's text was not available"
)
L4S_AQMS = ["dualpi2", "vdq_csaqm"]
# Dynamic traffic: each class's 10 MB flows (80 ms alone at 1 Gbps) arrive every 200 ms on average, so
# the link is loaded about 80 % and flows keep joining and leaving; the arrivals end before the run does.
DYNAMIC_SIZE = "10MB"
DYNAMIC_MEAN_INTERVAL = "200ms"
DYNAMIC_FLOWS = {"quick": 35, "standard": 250, "full": 250}


def _bdp(buffer: str) -> float:
    value = parse_buffer(buffer, "link.buffer")
    return float(value.value) if value.kind == "bdp" else float("nan")


def parts(scale: str, repetitions: int) -> list[Part]:
    duration, start, start_ns = TIMING[scale]
    counts = [10] if scale == "quick" else [2, 10, 50, 100]
    mono_counts = [2, 10] if scale == "quick" else [2, 10, 50, 100]

    def plan(link: dict[str, str], flows: list[dict[str, Any]], grid: dict[str, Any]) -> dict[str, Any]:
        """A part's plan document: the study's seed, repetitions and timing around the part's own setup."""
        scenario = {
            "duration": duration,
            "measure": {"start": start},
            "host": {"start_jitter": "10ms"},
            "link": link,
            "flows": flows,
        }
        return {"seed": 20, "repetitions": repetitions, "scenario": scenario, "grid": grid}

    mixed = {
        **plan(
            {"rate": "1Gbps", "buffer": "1bdp", "aqm": "fifo"},
            [
                {"cc": "bbr2", "count": counts[0] // 2, "rtt": "10ms"},
                {"cc": "cubic", "count": counts[0] // 2, "rtt": "10ms"},
            ],
            {"link.aqm": AQMS, "link.buffer": BUFFERS[scale]},
        ),
        "zip": [{"flows[0].count": [n // 2 for n in counts], "flows[1].count": [n // 2 for n in counts]}],
    }
    mono = plan(
        {"rate": "1Gbps", "buffer": "1bdp", "aqm": "fifo"},
        [{"cc": "cubic", "count": 2, "rtt": "10ms"}],
        {"flows[0].count": mono_counts, "link.buffer": ["0.2bdp", "1bdp", "2bdp"]},
    )
    l4s = plan(
        {"rate": "1Gbps", "buffer": "2bdp", "aqm": "dualpi2"},
        [
            {"cc": "dctcp", "count": 2, "rtt": "5ms", "ecn": "l4s"},
            {"cc": "bbr2", "count": 2, "rtt": "5ms", "ecn": "l4s"},
        ],
        {"link.aqm": L4S_AQMS},
    )
    arrivals = {"process": "poisson", "mean_interval": DYNAMIC_MEAN_INTERVAL}
    dynamic_class = {"rtt": "5ms", "count": DYNAMIC_FLOWS[scale], "size": DYNAMIC_SIZE, "arrivals": arrivals}
    dynamic = plan(
        {"rate": "1Gbps", "buffer": "2bdp", "aqm": "vdq_csaqm"},
        [{"cc": "cubic", **dynamic_class}, {"cc": "bbr2", **dynamic_class}],
        {"link.aqm": L4S_AQMS},
    )
    return [
        Part("mixed", mixed, start_ns),
        Part("mono-cubic", mono, start_ns),
        Part("l4s", l4s, start_ns),
        Part("dynamic", dynamic, start_ns),
    ]


# ---------------------------------------------------------------------------------------------- findings


def _mixed(data: StudyData, aqm: str) -> pd.DataFrame:
    """Runs of the mixed part under ``aqm``: BBRv2/Cubic per-flow goodput ratio, BBRv2 share, buffer
    in BDP."""
    runs, flows = data.part("mixed")
    runs = runs[runs["link.aqm"] == aqm]
    groups = group_goodput(flows[flows["run_id"].isin(runs["run_id"])])
    bbr = groups[groups["cc"] == "bbr2"].set_index("run_id")
    cubic = groups[groups["cc"] == "cubic"].set_index("run_id")
    return runs.assign(
        bdp=runs["link.buffer"].map(_bdp),
        ratio=[
            ratio(bbr["per_flow_bps"].get(r, 0.0), cubic["per_flow_bps"].get(r, 0.0)) for r in runs["run_id"]
        ],
        bbr_share=[
            ratio(
                bbr["goodput_bps"].get(r, 0.0),
                bbr["goodput_bps"].get(r, 0.0) + cubic["goodput_bps"].get(r, 0.0),
            )
            for r in runs["run_id"]
        ],
    )


def shallow_ratio(data: StudyData) -> Measured:
    r = _mixed(data, "fifo")
    return Measured(
        per_repetition(r[r["bdp"] <= 0.2], lambda g: g["ratio"].max()),
        note="the largest BBRv2/Cubic ratio at ≤ 0.2 BDP",
    )


def deep_utilization(data: StudyData) -> Measured:
    r = _mixed(data, "fifo")
    return Measured(
        per_repetition(r[r["bdp"] >= 0.5], lambda g: g["utilization"].min()),
        note="the lowest utilization at ≥ 0.5 BDP",
    )


def deep_share(data: StudyData) -> Measured:
    r = _mixed(data, "fifo")
    return Measured(per_repetition(r[r["bdp"] >= 0.5], lambda g: g["bbr_share"].mean()))


def gsp_ratio(data: StudyData) -> Measured:
    r = _mixed(data, "gsp")
    return Measured(
        per_repetition(r[r["bdp"] < 2.0], lambda g: g["ratio"].min()),
        note="the smallest BBRv2/Cubic ratio below 2 BDP",
    )


def ppv_best(data: StudyData) -> Measured:
    runs, _ = data.part("mixed")
    runs = runs[runs["link.aqm"].isin(["fifo", "pie", "gsp", "ppv"])]

    def margin(g: pd.DataFrame) -> float:
        jain = g.groupby("link.aqm")["jain_index"].mean()
        others = jain.drop("ppv", errors="ignore")
        return float(jain.get("ppv", float("nan")) - others.max()) if len(others) else float("nan")

    return Measured(per_repetition(runs, margin), note="PPV's mean Jain minus the best other AQM's")


def _mono(data: StudyData) -> pd.DataFrame:
    runs, _ = data.part("mono-cubic")
    exception = (runs["flows[0].count"] == 2) & (runs["link.buffer"].map(_bdp) >= 1.0)
    return runs.assign(exception=exception)


def mono_fair(data: StudyData) -> Measured:
    r = _mono(data)
    return Measured(
        per_repetition(r[~r["exception"]], lambda g: g["jain_index"].min()),
        note="the lowest Jain outside N = 2 at ≥ 1 BDP",
    )


def mono_exception(data: StudyData) -> Measured:
    r = _mono(data)
    return Measured(
        per_repetition(r[r["exception"]], lambda g: g["jain_index"].min()),
        note="the lowest Jain at N = 2, ≥ 1 BDP",
    )


def l4s_jain(aqm: str) -> Any:
    def measure(data: StudyData) -> Measured:
        runs, _ = data.part("l4s")
        return Measured(per_repetition(runs[runs["link.aqm"] == aqm], lambda g: g["jain_index"].mean()))

    return measure


def vdq_mixed_jain(data: StudyData) -> Measured:
    runs, _ = data.part("mixed")
    return Measured(
        per_repetition(runs[runs["link.aqm"] == "vdq_csaqm"], lambda g: g["jain_index"].mean()),
        note="mean over the buffer sizes",
    )


def _marked(flows: pd.DataFrame) -> pd.Series:
    """The fraction of each class's sent segments that were CE-marked, by congestion control."""
    by_cc = flows.groupby("cc")[["window_ce_marks", "window_sent_segments"]].sum()
    return by_cc["window_ce_marks"] / by_cc["window_sent_segments"].where(by_cc["window_sent_segments"] > 0)


def marking_ratio(data: StudyData) -> Measured:
    runs, flows = data.part("l4s")
    under = {aqm: flows[flows["run_id"].isin(runs[runs["link.aqm"] == aqm]["run_id"])] for aqm in L4S_AQMS}

    def rel(g: pd.DataFrame) -> float:
        marked = _marked(g)
        return ratio(float(marked.get("dctcp", float("nan"))), float(marked.get("bbr2", float("nan"))))

    per_class = "; ".join(
        f"{aqm}: " + ", ".join(f"{cc} {v:.3g}" for cc, v in _marked(f).items()) for aqm, f in under.items()
    )
    return Measured(
        per_repetition(under["dualpi2"], rel),
        note=f"DualPI2; DCTCP's marking ratio over BBRv2's (marked fraction per class, {per_class})",
    )


def dynamic_fair(data: StudyData) -> Measured:
    """Per run under VDQ-CSAQM, the mean over the time-series intervals with at least two active flows of
    Jain's index among the flows active in the interval (:func:`ccfair.analysis.dynamic.dynamic_summary`)."""
    # DuckDB loads when a study reads its store, not when `reproduce --list` describes it.
    from ccfair.store.reader import load

    runs, _ = data.part("dynamic")
    runs = runs[runs["link.aqm"] == "vdq_csaqm"]
    results = load(data.root)
    jains = {
        r: (results.result(r).dynamic or {}).get("active_jain_mean") for r in runs["run_id"].drop_duplicates()
    }
    runs = runs.assign(value=runs["run_id"].map(lambda r: float("nan") if jains[r] is None else jains[r]))
    return Measured(
        per_repetition(runs, lambda g: g["value"].mean()),
        note="Jain's index among the flows active in each interval, mean over the intervals with two or more",
    )


SETUP = "half BBRv2, half Cubic (N = 10 in quick), 1 Gbps, 10 ms"
FINDINGS = (
    Finding(
        "bbr2-up-to-7x-shallow",
        "1 Gbps, 10 ms, half BBRv2 half Cubic: at ≤ 0.2 BDP BBRv2 gets up to 7 times Cubic's goodput.",
        "up to 7x",
        SETUP + ", TailDrop, buffers ≤ 0.2 BDP; the largest per-flow ratio",
        Expect(3.5, 14.0, "7x within a factor of 2 (3.5-14)"),
        shallow_ratio,
        unit="BBRv2/Cubic",
    ),
    Finding(
        "full-utilization-from-0.5bdp",
        "From 0.5 BDP the link is fully utilized.",
        "full utilization",
        SETUP + ", TailDrop, buffers ≥ 0.5 BDP; the lowest utilization",
        Expect(0.95, None, "utilization ≥ 0.95"),
        deep_utilization,
        unit="utilization",
    ),
    Finding(
        "six-to-four-from-0.5bdp",
        "From 0.5 BDP BBRv2 and Cubic share about 6:4.",
        "6:4",
        SETUP + ", TailDrop, buffers ≥ 0.5 BDP; BBRv2's share",
        Expect(0.5, 0.7, "BBRv2 share 0.6 ± 0.1"),
        deep_share,
        unit="share",
    ),
    Finding(
        "gsp-16x",
        "With GSP BBRv2 gets 16 times Cubic's goodput or more, except at 2 BDP.",
        "≥ 16x below 2 BDP",
        SETUP + ", GSP, buffers below 2 BDP; the smallest per-flow ratio",
        Expect(8.0, None, "≥ 8x (16x with a factor of 2)"),
        gsp_ratio,
        unit="BBRv2/Cubic",
    ),
    Finding(
        "ppv-best-fairness",
        "PPV gives the best fairness of the AQMs.",
        "highest Jain",
        SETUP + ", TailDrop, PIE, GSP, PPV, every buffer; Jain's index",
        Expect(-0.02, None, "PPV's mean Jain at least the best other AQM's minus 0.02"),
        ppv_best,
        unit="Δ Jain",
    ),
    Finding(
        "mono-cubic-jain-1",
        "Cubic alone: Jain's index about 1 ...",
        "Jain ≈ 1",
        "N Cubic flows (2, 10 in quick), 1 Gbps, 10 ms, TailDrop, 0.2/1/2 BDP, except N = 2 at ≥ 1 BDP",
        Expect(0.95, 1.0, "Jain ≥ 0.95"),
        mono_fair,
        unit="Jain",
    ),
    Finding(
        "mono-cubic-n2-deep-exception",
        "... except N = 2 with ≥ 1 BDP buffer.",
        "Jain below 1",
        "2 Cubic flows, 1 Gbps, 10 ms, TailDrop, 1 and 2 BDP",
        Expect(None, 0.95, "Jain < 0.95"),
        mono_exception,
        unit="Jain",
    ),
    Finding(
        "l4s-dualpi2-unfair",
        "Slides: DCTCP against BBRv2 in scalable (ECN) mode, 1 Gbps, 5 ms: DualPI2 does not share fairly.",
        "unfair",
        "2 DCTCP + 2 BBRv2 (ECN, L4S), 1 Gbps, 5 ms, DualPI2, 2 BDP; Jain's index",
        Expect(None, 0.9, "Jain < 0.9"),
        l4s_jain("dualpi2"),
        unit="Jain",
    ),
    Finding(
        "l4s-vdq-csaqm-fair",
        "Slides: VDQ-CSAQM shares fairly between DCTCP and BBRv2 in scalable mode.",
        "fair",
        "2 DCTCP + 2 BBRv2 (ECN, L4S), 1 Gbps, 5 ms, VDQ-CSAQM, 2 BDP; Jain's index",
        Expect(0.9, 1.0, "Jain ≥ 0.9"),
        l4s_jain("vdq_csaqm"),
        unit="Jain",
        reconstruction=VDQ_RECONSTRUCTION,
    ),
    Finding(
        "vdq-csaqm-bbr2-cubic-fair",
        "Slides: VDQ-CSAQM shares fairly between BBRv2 and Cubic.",
        "fair",
        SETUP + ", VDQ-CSAQM, every buffer; Jain's index",
        Expect(0.9, 1.0, "Jain ≥ 0.9"),
        vdq_mixed_jain,
        unit="Jain",
        reconstruction=VDQ_RECONSTRUCTION,
    ),
    Finding(
        "ecn-marking-ratio-per-class",
        "Slides: the ECN marking ratio per class (DCTCP, BBRv2) under the AQMs.",
        "shown, no value stated",
        "2 DCTCP + 2 BBRv2 (ECN, L4S), 1 Gbps, 5 ms, DualPI2; DCTCP's marking ratio over BBRv2's",
        None,
        marking_ratio,
        unit="ratio",
    ),
    Finding(
        "dynamic-traffic-fair",
        "Slides: with flows joining and leaving (equal 5 ms RTT) VDQ-CSAQM keeps the classes' shares even.",
        "even shares",
        "Poisson arrivals (mean 200 ms per class) of 10 MB Cubic and BBRv2 flows, 1 Gbps, 5 ms, VDQ-CSAQM, "
        "2 BDP; Jain's index among the flows active in each interval",
        Expect(0.9, 1.0, "Jain ≥ 0.9"),
        dynamic_fair,
        unit="Jain",
        reconstruction=VDQ_RECONSTRUCTION,
    ),
)


def figures(data: StudyData, plan_names: dict[str, str]) -> list[tuple[str, str, Figure]]:
    """Relative goodput per class against the buffer size, one panel per AQM (and flow count)."""
    # matplotlib loads only when figures are drawn.
    from ccfair.plots.relgoodput_plot import relgoodput

    if not (data.runs["part"] == "mixed").any():
        return []
    figure = relgoodput(data.root, plan=plan_names["mixed"], x="link.buffer", facet="link.aqm")
    return [("relgoodput-mixed", "relative goodput per class against buffer size, per AQM", figure)]


KERNEL = (
    'does not fit: the L4S part needs ecn = "l4s", which the kernel backend refuses (it runs off and '
    "classic), and BBRv2 is not a module of mainline kernels"
)
STUDY = Study(
    name="fejes-nadas",
    title="Fejes et al., Who will save the Internet from the congestion control revolution? (2019), with "
    "Nádas et al., On congestion control (un)fairness (slides)",
    citation="F. Fejes, G. Gombos, S. Laki, S. Nádas. Who will save the Internet from the congestion control "
    "revolution? ACM Workshop on Buffer Sizing 2019; S. Nádas et al., On congestion control (un)fairness "
    "(slides)",
    scales={
        "quick": ScaleInfo(
            "1 Gbps, 10 ms, 5 BBRv2 + 5 Cubic, buffers 0.1/0.2/0.5/2 BDP, TailDrop/PIE/GSP/PPV/VDQ-CSAQM; "
            "Cubic alone with N = 2 and 10 at 0.2/1/2 BDP; L4S: 2 DCTCP + 2 BBRv2 (ECN) at 1 Gbps, 5 ms "
            "through DualPI2 and VDQ-CSAQM; dynamic traffic: 35 Cubic and 35 BBRv2 flows of 10 MB arriving "
            "(Poisson, mean 200 ms per class) at 5 ms through DualPI2 and VDQ-CSAQM; 10 s runs measured from "
            "4 s, 2 repetitions (the paper's rate, fewer points and shorter runs)",
            2,
            KERNEL,
        ),
        "standard": ScaleInfo(
            "the full scale's points and run length (N = 2/10/50/100 half BBRv2 half Cubic, buffers 0.05-2 "
            "BDP, the five disciplines, Cubic alone, the L4S mix, dynamic traffic with 250 flows per class, "
            "60 s runs measured from 20 s) with 3 repetitions instead of 5",
            3,
            KERNEL,
        ),
        "full": ScaleInfo(
            "1 Gbps, 10 ms, N = 2/10/50/100 half BBRv2 half Cubic, buffers 0.05-2 BDP, "
            "TailDrop/PIE/GSP/PPV/VDQ-CSAQM; Cubic alone N = 2-100; L4S as in quick; dynamic traffic with "
            "250 flows per class; 60 s runs measured from 20 s, 5 repetitions",
            5,
            KERNEL,
        ),
    },
    parts=parts,
    findings=FINDINGS,
    figures=figures,
)
