"""Rüth, Kunze, Hohlfeld: "An Empirical View on Content Provider Fairness", TMA 2019 (arXiv 1905.07152).

Two flows share a home user's bottleneck (10 and 50 Mbps; 50 and 100 ms; 0.5 and 2 BDP; drop-tail, CoDel,
FQ-CoDel); the second starts 5 s after the first and every setting runs in both start orders; 30
repetitions. Three scenarios: (a) testbed host against testbed host (Linux Cubic or BBR, initial window 10,
and the provider-like stacks of :data:`PROFILES`: initial window 16 or 32, pacing, BBR or Cubic); (b) a
testbed flow against a download from one of the content providers; (c) provider against provider.
Repetitions differ by the hosts' start jitter (``[host] start_jitter``, drawn per seed), the simulator's
stand-in for a testbed's timing.

The providers of parts b and c are the scenario's flow profiles (``flows[].profile``,
``crates/ccfair-scenario/src/profile.rs``): 2019 reconstructions of each provider's stack from public
sources, not the providers' stacks; the rows that rest on one say so. A provider's flow crosses a remote
path whose base RTT the paper's testbed padded to the scenario's minimum RTT, the access link being the
bottleneck: here both groups' ``rtt`` is that minimum RTT (the padded path), and the link is the access
link. The findings of parts b and c are the paper's statements as far as they are known without its text
(the paraphrase the reproduction was specified from): their tolerances are set from that wording, and Table
II's values are not known, so its rows show ccfair's values without scoring them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pandas as pd

from ccfair.studies.reproduce.base import Expect, Finding, Measured, Part, ScaleInfo, Study, by_scale
from ccfair.studies.reproduce.measures import finite_mean, per_repetition

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from ccfair.studies.reproduce.base import StudyData

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


# The content providers of parts b and c (Rüth et al.'s names -> the scenario's flow profiles), in the
# paper's order, and the testbed flows of part b (Linux's Cubic, and BBR v1 with fq pacing).
PROVIDERS = {
    "AkamaiA": "akamai-a-2019",
    "AkamaiE": "akamai-e-2019",
    "Amazon": "amazon-2019",
    "Cloudflare": "cloudflare-2019",
    "Edgecast": "edgecast-2019",
    "Fastly": "fastly-2019",
    "Google": "google-2019",
}
TESTBED = {"cubic": "linux-default", "bbr": "bbr-fq"}
PROVIDER_PAIRS = [(a, b) for i, a in enumerate(PROVIDERS) for b in list(PROVIDERS)[i + 1 :]]
# Each scale's settings, by scale name.
SCALE_SETTINGS: dict[str, dict[str, Any]] = by_scale(
    {"rates": ["10Mbps"], "rtts": ["50ms"], "pairs": QUICK_PAIRS, "duration": "30s"},
    {"rates": ["10Mbps", "50Mbps"], "rtts": ["50ms", "100ms"], "pairs": FULL_PAIRS, "duration": "60s"},
)


def _scale(scale: str) -> dict[str, Any]:
    return SCALE_SETTINGS[scale]


def b_part_name(testbed: str, provider: str) -> str:
    return f"b-{testbed}-vs-{provider}"


def c_part_name(pair: tuple[str, str]) -> str:
    return f"c-{pair[0]}-vs-{pair[1]}"


def _document(s: dict[str, Any], repetitions: int, flows: list[dict[str, Any]]) -> dict[str, Any]:
    """A pair's plan: flow 0 from 0 s, flow 1 from 5 s, both start orders, every rate, buffer and queue
    discipline of the scale, the RTTs zipped (both flows on paths of the same base RTT)."""
    first, second = ({**f, "rtt": s["rtts"][0]} for f in flows)
    return {
        "seed": 19,
        "repetitions": repetitions,
        "flip_start_order": True,
        "scenario": {
            "duration": s["duration"],
            "measure": {"start": MEASURE_START},
            "host": {"start_jitter": "20ms"},
            "link": {"rate": s["rates"][0], "buffer": "0.5bdp", "aqm": "fifo"},
            "flows": [{**first, "start": "0s"}, {**second, "start": "5s"}],
        },
        "grid": {
            "link.rate": s["rates"],
            "link.buffer": ["0.5bdp", "2bdp"],
            "link.aqm": ["fifo", "codel", "fq_codel"],
        },
        "zip": [{"flows[0].rtt": s["rtts"], "flows[1].rtt": s["rtts"]}],
    }


def parts(scale: str, repetitions: int) -> list[Part]:
    """Part a: one plan per pair (flow 0 the testbed host, flow 1 the other stack); part b: one per testbed
    flow and provider (flow 0 the testbed flow); part c: one per pair of providers."""
    s = _scale(scale)
    out = []
    for testbed, provider in ((t, p) for t in TESTBED for p in PROVIDERS):
        flows = [
            {"profile": TESTBED[testbed], "label": f"testbed {testbed}"},
            {"profile": PROVIDERS[provider], "label": provider},
        ]
        out.append(Part(b_part_name(testbed, provider), _document(s, repetitions, flows), MEASURE_START_NS))
    for pair in PROVIDER_PAIRS:
        flows = [{"profile": PROVIDERS[name], "label": name} for name in pair]
        out.append(Part(c_part_name(pair), _document(s, repetitions, flows), MEASURE_START_NS))
    return _part_a(s, repetitions) + out


def _part_a(s: dict[str, Any], repetitions: int) -> list[Part]:
    out = []
    for pair in s["pairs"]:
        flows = [{**PROFILES[name], "label": name} for name in pair]
        document = _document(s, repetitions, flows)
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


# The average queue with one testbed flow, drop-tail at 10 Mbps and 50 ms: the buffers in packets, and how far
# outside the paper's range a measurement may fall and still agree.
QUEUE_BUFFER_PACKETS = {"2bdp": 83, "0.5bdp": 21}
QUEUE_TOLERANCE_PERCENT = 20


def _queue_finding(testbed: str, buffer: str, low: int, high: int) -> Finding:
    """The paper's average queue with a ``testbed`` flow at ``buffer``: ``low``-``high`` packets."""
    name = {"bbr": "BBR", "cubic": "Cubic"}[testbed]
    bdp = f"{buffer.removesuffix('bdp')} BDP"
    paper = f"{low}-{high} packets"
    return Finding(
        f"queue-{testbed}-{buffer}",
        f"Average queue with a {name} testbed flow at {bdp}: {paper}.",
        paper,
        f"{name} testbed flow (every pair), drop-tail, 10 Mbps, 50 ms, {bdp} "
        f"({QUEUE_BUFFER_PACKETS[buffer]} packets)",
        Expect(
            low * (100 - QUEUE_TOLERANCE_PERCENT) / 100,
            high * (100 + QUEUE_TOLERANCE_PERCENT) / 100,
            f"{paper} ± {QUEUE_TOLERANCE_PERCENT} %",
        ),
        queue_length(testbed, buffer),
        unit="packets",
    )


SETUP_PAIRS = "drop-tail, every rate, RTT and start order of the scale"
A_FINDINGS = (
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
    _queue_finding("bbr", "2bdp", 40, 53),
    _queue_finding("bbr", "0.5bdp", 11, 15),
    _queue_finding("cubic", "2bdp", 55, 66),
    _queue_finding("cubic", "0.5bdp", 12, 16),
)


# ------------------------------------------------------------------------- parts b and c: the providers

B_PARTS = {b_part_name(t, p): (t, p) for t in TESTBED for p in PROVIDERS}
C_PARTS = {c_part_name(pair): pair for pair in PROVIDER_PAIRS}
# Which stacks are "of the same kind" for CoDel's finding: their congestion control.
KIND = {
    "cubic": "cubic",
    "bbr": "bbr",
    **{name: ("bbr" if name in ("Cloudflare", "Google") else "cubic") for name in PROVIDERS},
}
PROFILE_NOTE = (
    "the providers' 2019 stacks as ccfair's flow profiles reconstruct them from public sources "
    "(crates/ccfair-scenario/src/profile.rs), not the providers' stacks"
)


def _shares(data: StudyData, part_map: dict[str, tuple[str, str]], aqm: str | None = "fifo") -> pd.DataFrame:
    """The runs of the parts in ``part_map`` with ``first``/``second`` (flow 0's and flow 1's stack) and
    ``share0``/``share1`` (each flow's share of the pair's goodput)."""
    runs = data.runs[data.runs["part"].isin(part_map)]
    if aqm is not None:
        runs = runs[runs["link.aqm"] == aqm]
    flows = data.flows[data.flows["run_id"].isin(runs["run_id"])]
    share = flows.pivot_table(index="run_id", columns="group", values="share", aggfunc="sum")
    pair = runs["part"].map(part_map)
    return runs.assign(
        first=pair.str[0],
        second=pair.str[1],
        share0=runs["run_id"].map(share.get(0, pd.Series(dtype=float))),
        share1=runs["run_id"].map(share.get(1, pd.Series(dtype=float))),
    )


def provider_share(testbed: str, providers: tuple[str, ...], buffer: str, provider_first: bool | None) -> Any:
    """The providers' mean share against a ``testbed`` flow at ``buffer``, drop-tail; in the start order
    where the provider starts first (True), the testbed flow does (False) or both (None)."""

    def measure(data: StudyData) -> Measured:
        runs = _shares(data, B_PARTS)
        runs = runs[
            (runs["first"] == testbed) & runs["second"].isin(providers) & (runs["link.buffer"] == buffer)
        ]
        if provider_first is not None:
            runs = runs[runs["flipped"] == provider_first]
        order = {
            True: "the provider starting first",
            False: "the testbed flow starting first",
            None: "both orders",
        }
        return Measured(
            per_repetition(runs, lambda g: g["share1"].mean()),
            note=f"the providers' share, {order[provider_first]}",
        )

    return measure


def google_beats_testbed_bbr(data: StudyData) -> Measured:
    runs = _shares(data, B_PARTS)
    runs = runs[(runs["first"] == "bbr") & (runs["second"] == "Google")]
    keys = [k for k in ("link.rate", "flows[0].rtt", "link.buffer", "flipped") if k in runs.columns]
    return Measured(
        per_repetition(runs, lambda g: g.groupby(keys)["share1"].mean().min()),
        note="Google's share in the setting (buffer, start order) where it is lowest",
    )


def start_order_matters(data: StudyData) -> Measured:
    runs = _shares(data, B_PARTS)
    runs = runs[(runs["first"] == "cubic") & (runs["link.buffer"] == "2bdp")]

    def gap(g: pd.DataFrame) -> float:
        by = g.groupby(["second", "flipped"])["share1"].mean().unstack("flipped")
        return (
            float((by.get(True) - by.get(False)).abs().mean())
            if {True, False} <= set(by.columns)
            else float("nan")
        )

    return Measured(
        per_repetition(runs, gap),
        note="|provider's share starting first - starting second|, mean over the providers",
    )


def cloudflare_dominates(data: StudyData) -> Measured:
    runs = _shares(data, C_PARTS)
    runs = runs[
        (runs["link.buffer"] == "0.5bdp")
        & ((runs["first"] == "Cloudflare") | (runs["second"] == "Cloudflare"))
    ]
    runs = runs.assign(
        other=runs["first"].where(runs["second"] == "Cloudflare", runs["second"]),
        cloudflare=runs["share0"].where(runs["first"] == "Cloudflare", runs["share1"]),
    )
    return Measured(
        per_repetition(runs, lambda g: float((g.groupby("other")["cloudflare"].mean() >= DOMINATES).mean())),
        note=f"fraction of the other providers against which Cloudflare's mean share is at least {DOMINATES}",
    )


def _afness(data: StudyData, part_map: dict[str, tuple[str, str]], aqm: str | None) -> pd.DataFrame:
    runs = _shares(data, part_map, aqm)
    return runs.assign(afness=runs["fness"].abs(), same=runs["first"].map(KIND) == runs["second"].map(KIND))


def codel_same_kind(data: StudyData) -> Measured:
    runs = _afness(data, {**B_PARTS, **C_PARTS}, None)

    def gain(g: pd.DataFrame) -> float:
        return finite_mean(g[g["link.aqm"] == "fifo"]["afness"]) - finite_mean(
            g[g["link.aqm"] == "codel"]["afness"]
        )

    return Measured(
        per_repetition(runs, lambda g: gain(g[g["same"]]) - gain(g[~g["same"]])),
        note="|fness| gained by CoDel over drop-tail, pairs of one congestion control minus mixed pairs",
    )


def provider_fq_codel(data: StudyData) -> Measured:
    runs = _afness(data, C_PARTS, "fq_codel")
    return Measured(
        per_repetition(runs, lambda g: g.groupby("part")["afness"].mean().max()),
        note="the least fair provider pair's mean |fness|",
    )


def table_ii(column: str) -> Any:
    """Table II's per-provider values against a testbed Cubic flow, drop-tail, 0.5 BDP, as a row's samples:
    one per provider (the paper's per-provider values are not known here)."""

    def measure(data: StudyData) -> Measured:
        runs = _shares(data, B_PARTS)
        runs = runs[(runs["first"] == "cubic") & (runs["link.buffer"] == "0.5bdp")]
        if column == "queue":
            value = data.queue_mean(list(runs["run_id"]), MEASURE_START_NS)
        else:
            flows = data.flows[data.flows["run_id"].isin(runs["run_id"]) & (data.flows["group"] == 0)]
            value = flows.groupby("run_id")["retransmissions"].sum()
        runs = runs.assign(value=runs["run_id"].map(value))
        return Measured(
            [float(v) for v in runs.groupby("second")["value"].mean()],
            per="provider",
            note="mean per provider; the paper's Table II values were not available to score against",
        )

    return measure


DOMINATES = 0.7  # a share at least this "dominates" (part a reads "monopolizes" as 0.8)
LOSES_BELOW = 0.5
SETUP_B = "testbed flow vs provider, drop-tail, every rate and RTT of the scale"
B_FINDINGS = (
    Finding(
        "b-bbr-providers-take-all-from-cubic",
        "At 0.5 BDP Cloudflare and Google (BBR) take nearly everything from a testbed Cubic flow.",
        "nearly everything",
        "testbed Cubic vs Cloudflare and Google, 0.5 BDP, both start orders, " + SETUP_B,
        Expect(0.8, 1.0, "provider share ≥ 0.8 (as part a reads 'monopolizes')"),
        provider_share("cubic", ("Cloudflare", "Google"), "0.5bdp", None),
        unit="share",
        reconstruction="Cloudflare's and Google's " + PROFILE_NOTE,
    ),
    Finding(
        "b-amazon-edgecast-lose-first",
        "Amazon and Edgecast lose to a testbed Cubic flow even when they start first (0.5 BDP).",
        "lose",
        "testbed Cubic vs Amazon and Edgecast, 0.5 BDP, the provider starting first, " + SETUP_B,
        Expect(None, LOSES_BELOW, "provider share < 0.5"),
        provider_share("cubic", ("Amazon", "Edgecast"), "0.5bdp", True),
        unit="share",
        reconstruction="Amazon's and Edgecast's " + PROFILE_NOTE + " (Cubic assumed: no source says)",
    ),
    Finding(
        "b-2bdp-start-order-decides",
        "At 2 BDP the outcome depends on who starts first (testbed Cubic against the providers).",
        "depends on the start order",
        "testbed Cubic vs every provider, 2 BDP, " + SETUP_B,
        Expect(0.2, None, "the provider's share differs by ≥ 0.2 between the start orders"),
        start_order_matters,
        unit="Δ share",
        reconstruction="every provider's " + PROFILE_NOTE,
    ),
    Finding(
        "b-akamai-dominated-2bdp",
        "At 2 BDP both Akamai flows are dominated by the testbed Cubic flow.",
        "dominated",
        "testbed Cubic vs AkamaiA and AkamaiE, 2 BDP, both start orders, " + SETUP_B,
        Expect(None, 1 - DOMINATES, f"provider share ≤ {1 - DOMINATES:.1f} (the testbed flow ≥ {DOMINATES})"),
        provider_share("cubic", ("AkamaiA", "AkamaiE"), "2bdp", None),
        unit="share",
        reconstruction="Akamai's delay-based 2019 stack, which ccfair does not model: paced Cubic stands in "
        "with Akamai's measured initial windows",
    ),
    Finding(
        "b-testbed-bbr-dominates-cubic-providers",
        "A testbed BBR flow dominates Amazon, Edgecast and Fastly at 0.5 BDP.",
        "dominates",
        "testbed BBR vs Amazon, Edgecast and Fastly, 0.5 BDP, both start orders, " + SETUP_B,
        Expect(None, 1 - DOMINATES, f"provider share ≤ {1 - DOMINATES:.1f}"),
        provider_share("bbr", ("Amazon", "Edgecast", "Fastly"), "0.5bdp", None),
        unit="share",
        reconstruction="Amazon's, Edgecast's and Fastly's " + PROFILE_NOTE,
    ),
    Finding(
        "b-testbed-bbr-loses-to-google",
        "A testbed BBR flow always loses to Google.",
        "always loses",
        "testbed BBR vs Google, drop-tail, every buffer and start order; Google's lowest mean share",
        Expect(LOSES_BELOW, None, "Google's share > 0.5 in every setting"),
        google_beats_testbed_bbr,
        unit="share",
        reconstruction="Google's " + PROFILE_NOTE + ": the same BBR v1 as the testbed's, so nothing modelled "
        "makes Google's flow win",
    ),
    Finding(
        "b-table-ii-queue",
        "Table II: the average queue per provider against a testbed flow.",
        "per provider (values not available)",
        "testbed Cubic vs each provider, drop-tail, 0.5 BDP, " + SETUP_B,
        None,
        table_ii("queue"),
        unit="packets",
        reconstruction="every provider's " + PROFILE_NOTE,
    ),
    Finding(
        "b-table-ii-retransmissions",
        "Table II: the testbed flow's retransmissions per provider.",
        "per provider (values not available)",
        "testbed Cubic vs each provider, drop-tail, 0.5 BDP, " + SETUP_B + "; in the measurement window",
        None,
        table_ii("retransmissions"),
        unit="segments",
        reconstruction="every provider's " + PROFILE_NOTE,
    ),
)
C_FINDINGS = (
    Finding(
        "c-cloudflare-dominates-most",
        "Cloudflare dominates most other providers at 0.5 BDP.",
        "most",
        "Cloudflare vs each other provider, drop-tail, 0.5 BDP, both start orders, every rate and RTT",
        Expect(0.55, 1.0, f"more than half of the six (at least 4) with Cloudflare's share ≥ {DOMINATES}"),
        cloudflare_dominates,
        unit="fraction",
        reconstruction="every provider's " + PROFILE_NOTE,
    ),
    Finding(
        "c-codel-helps-same-kind",
        "CoDel mostly helps pairs of the same kind.",
        "same-kind pairs gain more",
        "every testbed-provider and provider pair, CoDel against drop-tail, every buffer and start order; "
        "kind = the profile's congestion control",
        Expect(0.0, None, "same-kind gain in |fness| larger than mixed pairs' (difference > 0)"),
        codel_same_kind,
        unit="Δ |fness|",
        reconstruction="every provider's " + PROFILE_NOTE + "; a provider's kind is its profile's algorithm",
    ),
    Finding(
        "c-fq-codel-equilibrium",
        "FQ-CoDel brings every provider pair close to equilibrium.",
        "fness near 0 for all pairs",
        "every provider pair under FQ-CoDel, every buffer and start order; the least fair pair",
        Expect(0.0, 0.1, "worst pair's mean |fness| ≤ 0.1 (as part a)"),
        provider_fq_codel,
        unit="|fness|",
        reconstruction="every provider's " + PROFILE_NOTE,
    ),
)
FINDINGS: tuple[Finding, ...] = A_FINDINGS + B_FINDINGS + C_FINDINGS


def figures(data: StudyData, plan_names: dict[str, str]) -> list[tuple[str, str, Figure]]:
    """Part a: fness scatter and density per pair, start order and setting (one figure per pair). Parts b
    and c: fness per provider, both start orders, small and large buffer, per queue discipline (one figure
    per testbed flow, one for the provider pairs)."""
    # matplotlib loads only when figures are drawn.
    from ccfair.plots.fness_plot import fness

    out = [
        (part, f"fness, {part.replace('-vs-', ' vs ')}", fness(data.root, plan=plan))
        for part, plan in plan_names.items()
        if part not in B_PARTS and part not in C_PARTS and (data.runs["part"] == part).any()
    ]
    for testbed in TESTBED:
        runs = _shares(data, B_PARTS, None)
        runs = runs[runs["first"] == testbed]
        if not runs.empty:
            out.append(
                (
                    f"b-{testbed}-vs-providers",
                    f"fness, testbed {testbed} (flow 0) vs each provider (flow 1)",
                    _provider_figure(runs, list(PROVIDERS), lambda r: r["second"]),
                )
            )
    runs = _shares(data, C_PARTS, None)
    if not runs.empty:
        out.append(
            (
                "c-provider-pairs",
                "fness, provider vs provider (flow 0 vs flow 1)",
                _provider_figure(
                    runs,
                    [c_part_name(p).removeprefix("c-") for p in PROVIDER_PAIRS],
                    lambda r: r["part"].str.removeprefix("c-"),
                ),
            )
        )
    return out


def _provider_figure(runs: pd.DataFrame, order: list[str], label: Any) -> Figure:
    """fness per provider (or pair) on the x axis, one panel per buffer (rows) and queue discipline
    (columns), the two start orders side by side; a point per run, a bar at each mean."""
    from ccfair.plots.panels import new_figure  # pandas and matplotlib: only when a figure is drawn

    runs = runs.assign(x=label(runs))
    order = [o for o in order if (runs["x"] == o).any()]
    buffers = [b for b in ("0.5bdp", "2bdp") if (runs["link.buffer"] == b).any()]
    aqms = [a for a in ("fifo", "codel", "fq_codel") if (runs["link.aqm"] == a).any()]
    fig = new_figure(max(6.0, 0.55 * len(order) * len(aqms)), 2.6 * len(buffers) + 0.8)
    axes = fig.subplots(len(buffers), len(aqms), squeeze=False, sharey=True)
    styles = {False: ("tab:blue", "o", "flow 0 first"), True: ("tab:orange", "s", "flow 1 first")}
    for i, buffer in enumerate(buffers):
        for j, aqm in enumerate(aqms):
            ax = axes[i][j]
            cell = runs[(runs["link.buffer"] == buffer) & (runs["link.aqm"] == aqm)]
            for flipped, (colour, marker, name) in styles.items():
                part = cell[cell["flipped"] == flipped]
                offset = 0.17 if flipped else -0.17
                xs = [order.index(x) + offset for x in part["x"]]
                ax.scatter(
                    xs,
                    part["fness"],
                    s=9,
                    color=colour,
                    marker=marker,
                    alpha=0.6,
                    label=name if (i, j) == (0, 0) else None,
                )
                means = part.groupby("x")["fness"].mean()
                for x, m in means.items():
                    ax.hlines(m, order.index(x) + offset - 0.14, order.index(x) + offset + 0.14, color=colour)
            ax.axhline(0.0, color="0.6", linewidth=0.8)
            ax.set_ylim(-1.05, 1.05)
            ax.set_xticks(range(len(order)), order, rotation=60, ha="right", fontsize=7)
            ax.set_title(f"{buffer.removesuffix('bdp')} BDP, {aqm}", fontsize=9)
            if j == 0:
                ax.set_ylabel("fness (-1: flow 0 takes all)")
    fig.legend(loc="outside upper right", fontsize=8)
    return fig


STUDY = Study(
    name="rueth-tma19",
    title="Rüth et al., An Empirical View on Content Provider Fairness (TMA 2019)",
    citation="J. Rüth, I. Kunze, O. Hohlfeld. An Empirical View on Content Provider Fairness. TMA 2019, "
    "arXiv:1905.07152",
    scales={
        "quick": ScaleInfo(
            "10 Mbps, 50 ms, 0.5 and 2 BDP, drop-tail/CoDel/FQ-CoDel, part a's 5 pairs (Cubic-Cubic, "
            "BBR-BBR, BBR-Cubic, Cubic-paced Cubic, Cubic-provider BBR IW32), part b's testbed Cubic and BBR "
            "against the 7 provider profiles and part c's 21 provider pairs, second flow 5 s later, both "
            "start orders, 30 s runs measured from 10 s; the paper's structure at one rate and RTT, 3 "
            "repetitions instead of 30",
            3,
            "fits (10 Mbps is far below the clean rate `ccfair doctor` measures)",
        ),
        "standard": ScaleInfo(
            "the full scale's points and pairs (10 and 50 Mbps, 50 and 100 ms, 0.5 and 2 BDP, drop-tail, "
            "CoDel, FQ-CoDel; parts a, b and c, both start orders, 60 s runs measured from 10 s) with 10 "
            "repetitions instead of 30",
            10,
            "fits (50 Mbps at most)",
        ),
        "full": ScaleInfo(
            "10 and 50 Mbps, 50 and 100 ms, 0.5 and 2 BDP, drop-tail/CoDel/FQ-CoDel, testbed Cubic and BBR "
            "against every part-a profile (11 pairs), against each of the 7 provider profiles (part b, 14 "
            "pairs) and every provider pair (part c, 21 pairs), second flow 5 s later, both start orders, "
            "60 s runs measured from 10 s, 30 repetitions as in the paper",
            30,
            "fits (50 Mbps at most)",
        ),
    },
    parts=parts,
    findings=FINDINGS,
    figures=figures,
)
