"""How figures name things: metrics with their units and display scale, and grid axes (dotted scenario
paths) with the unit their values are shown in."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Metric:
    """A run-level metric: axis label (with unit), factor from the stored value to the shown one, and the
    range its values cannot leave (intervals are clipped to it)."""

    label: str
    scale: float = 1.0
    bounds: tuple[float, float] | None = None


# Counts, rates, delays and ratios cannot be negative: their intervals are clipped at zero, never drawn below.
NON_NEGATIVE = (0.0, float("inf"))

METRICS: dict[str, Metric] = {
    "jain_index": Metric("Jain's fairness index", bounds=(0.0, 1.0)),
    "utilization": Metric("link utilization", bounds=(0.0, 1.0)),
    "total_goodput_bps": Metric("total goodput (Mbit/s)", 1e-6, NON_NEGATIVE),
    "queue_sojourn_p50_ns": Metric("median queue sojourn (ms)", 1e-6, NON_NEGATIVE),
    "queue_sojourn_p99_ns": Metric("p99 queue sojourn (ms)", 1e-6, NON_NEGATIVE),
    "queue_sojourn_l4s_p99_ns": Metric("p99 L4S queue sojourn (ms)", 1e-6, NON_NEGATIVE),
    "queue_sojourn_classic_p99_ns": Metric("p99 classic queue sojourn (ms)", 1e-6, NON_NEGATIVE),
    "drops": Metric("drops (packets)", bounds=NON_NEGATIVE),
    "retransmissions": Metric("retransmissions (segments)", bounds=NON_NEGATIVE),
    "marks": Metric("CE marks (packets)", bounds=NON_NEGATIVE),
    "marking_ratio": Metric("CE marking ratio", bounds=(0.0, 1.0)),
    "fness": Metric("fness (flow 0 vs flow 1)", bounds=(-1.0, 1.0)),
    "events": Metric("simulator events", bounds=NON_NEGATIVE),
    "wall_seconds": Metric("simulation wall time (s)", bounds=NON_NEGATIVE),
    "relative_goodput": Metric("relative goodput (class mean / fair share)", bounds=NON_NEGATIVE),
    "share": Metric("share of total goodput", bounds=(0.0, 1.0)),
    "goodput_bps": Metric("goodput (Mbit/s)", 1e-6, NON_NEGATIVE),
}


def plain(text: object) -> str:
    """``text`` as matplotlib should show it: literally. Matplotlib reads a pair of ``$`` as mathematical
    notation (and fails on an unknown command), so every ``$`` is escaped; the style keeps that escape
    meaningful (``text.parse_math``). Every text of a figure that may hold data (flow labels, congestion
    controls, plan values and paths, metric names) goes through here."""
    return str(text).replace("$", r"\$")


def metric(name: str) -> Metric:
    """The label of a metric; an unknown metric is labelled with its own name."""
    return METRICS.get(name, Metric(name))


# What the last key of a dotted path means, for axis labels.
PATH_NAMES: dict[str, str] = {
    "rate": "link rate",
    "buffer": "buffer",
    "base_rtt": "base RTT",
    "aqm": "queue discipline",
    "mtu": "MTU",
    "count": "flows",
    "rtt": "RTT",
    "cc": "congestion control",
    "start": "start",
    "stop": "stop",
    "loss": "path loss probability",
    "initial_window": "initial window",
    "pacing": "pacing",
    "duration": "duration",
    "ecn": "ECN",
}


def path_label(path: str, unit: str = "") -> str:
    """``flows[0].count`` -> ``"flows[0].count: flows"``; with a unit: ``"link.buffer: buffer (BDP)"``."""
    leaf = path.rsplit(".", 1)[-1]
    name = PATH_NAMES.get(leaf)
    text = f"{path}: {name}" if name else path
    return f"{text} ({unit})" if unit else text
