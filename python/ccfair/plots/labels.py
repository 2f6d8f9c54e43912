"""How figures name things: metrics with their units and display scale, and grid axes (dotted scenario
paths) with the unit their values are shown in."""

from __future__ import annotations

from dataclasses import dataclass

from ccfair.analysis.schema import plotted


@dataclass(frozen=True)
class Metric:
    """A run-level metric: axis label (with unit), factor from the stored value to the shown one, and the
    range its values cannot leave (intervals are clipped to it)."""

    label: str
    scale: float = 1.0
    bounds: tuple[float, float] | None = None


# From the derived tables' schema: each value's Plotted label, unit and bounds.
METRICS: dict[str, Metric] = {
    name: Metric(c.plotted.axis_label(), c.plotted_scale(), c.plotted.bounds)
    for name, c in plotted().items()
    if c.plotted is not None
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
