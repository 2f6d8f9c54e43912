"""Grid axes as figures draw them: the values of a scenario path read as numbers in one unit when they all
can be (``"0.5bdp"`` -> 0.5 BDP, ``"10Mbps"`` -> 10 Mbit/s, ``"50ms"`` -> 50 ms, counts as they are), in
increasing order, on a log scale when they are geometric; otherwise as categories in the plan's order."""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ccfair.errors import InputError
from ccfair.plots.labels import path_label, plain
from ccfair.plots.style import value_style
from ccfair.units import (
    parse_bdp_multiple,
    parse_duration_ns,
    parse_packets,
    parse_rate_bps,
    parse_size_bytes,
)

# (unit shown, parser to a number in that unit), tried in order; all values must parse with the same one.
_UNIT_READERS: tuple[tuple[str, Callable[[object], float]], ...] = (
    ("BDP", lambda v: parse_bdp_multiple(v, "")),
    ("packets", lambda v: float(parse_packets(v, ""))),
    ("Mbit/s", lambda v: parse_rate_bps(v, "") / 1e6),
    ("ms", lambda v: parse_duration_ns(v, "", allow_zero=True) / 1e6),
    ("KB", lambda v: parse_size_bytes(v, "") / 1e3),
)
GEOMETRIC_MIN_RATIO = 1.5  # consecutive values at least this far apart ...
GEOMETRIC_TOLERANCE = 0.25  # ... with ratios within 25 % of each other


@dataclass(frozen=True)
class Axis:
    """A grid axis: its values in display order, where each sits on the plot, and how it is labelled."""

    path: str
    values: tuple[Any, ...]  # as stored, in display order
    positions: tuple[float, ...]  # numeric value (numeric axes) or index (categorical)
    unit: str
    numeric: bool
    log: bool
    # The paths zipped with this one ([[zip]]), each with its value at each of ``values`` (as text).
    partners: tuple[tuple[str, tuple[str, ...]], ...] = ()

    @property
    def label(self) -> str:
        label = path_label(self.path, self.unit)
        if self.partners:
            label += f"\nunder each: {', '.join(p for p, _ in self.partners)}"
        return label

    def position(self, value: Any) -> float:
        return self.positions[self.values.index(value)]

    def tick_labels(self) -> list[str]:
        """Numbers in the axis unit for numeric axes (the unit is in the label), else the stored values;
        under each, the values its zipped partners take with it."""
        if self.numeric:
            ticks = [f"{p:g}" for p in self.positions]
        else:
            ticks = [value_text(v) for v in self.values]
        for _, texts in self.partners:
            ticks = [f"{t}\n{partner}" for t, partner in zip(ticks, texts, strict=True)]
        return ticks


def value_text(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, np.generic):
        return value_text(value.item())
    return str(value)


def _as_numbers(values: Sequence[Any]) -> tuple[list[float], str] | None:
    if all(isinstance(v, int | float | np.integer | np.floating) and not isinstance(v, bool) for v in values):
        return [float(v) for v in values], ""
    if not all(isinstance(v, str) for v in values):
        return None
    for unit, read in _UNIT_READERS:
        try:
            return [read(v) for v in values], unit
        except InputError:
            continue
    return None


def is_geometric(numbers: Sequence[float]) -> bool:
    """Three or more positive values whose consecutive ratios are about equal and at least 1.5."""
    xs = sorted(numbers)
    if len(xs) < 3 or xs[0] <= 0:
        return False
    ratios = [b / a for a, b in itertools.pairwise(xs)]
    low, high = min(ratios), max(ratios)
    return low >= GEOMETRIC_MIN_RATIO and high / low <= 1 + GEOMETRIC_TOLERANCE


def make_axis(path: str, stored: Sequence[Any], order: Sequence[Any] = ()) -> Axis:
    """The axis of ``path`` over the distinct non-missing values in ``stored``. Categories follow ``order``
    (the plan's values, as stored); values it lacks come after, sorted."""
    distinct: list[Any] = []
    for v in stored:
        if v is None or (isinstance(v, float) and math.isnan(v)):
            continue
        if v not in distinct:
            distinct.append(v)
    parsed = _as_numbers(distinct)
    if parsed is None:
        ordered = [v for v in dict.fromkeys(order) if v in distinct]
        ordered += sorted((v for v in distinct if v not in ordered), key=value_text)
        return Axis(path, tuple(ordered), tuple(float(i) for i in range(len(ordered))), "", False, False)
    numbers, unit = parsed
    order = sorted(range(len(distinct)), key=lambda i: numbers[i])
    return Axis(
        path,
        tuple(distinct[i] for i in order),
        tuple(numbers[i] for i in order),
        unit,
        True,
        is_geometric(numbers),
    )


def color_ticks(labels: Any, axis: Axis) -> None:
    """Tick labels of a CCA or AQM axis in their registry colours."""
    for label, value in zip(labels, axis.values, strict=False):
        style = value_style(axis.path, value)
        if style is not None:
            label.set_color(style.color)


def apply_x(ax: Any, axis: Axis) -> None:
    """Scale, ticks and label of a line plot's x axis."""
    if axis.log:
        ax.set_xscale("log")
    ax.set_xticks(list(axis.positions))
    color_ticks(ax.set_xticklabels([plain(t) for t in axis.tick_labels()]), axis)
    ax.minorticks_off()
    ax.set_xlabel(plain(axis.label))
    if not axis.numeric:
        ax.set_xlim(-0.5, len(axis.values) - 0.5)
