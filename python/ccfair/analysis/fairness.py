"""Fairness metrics: Jain's index, FNESS, relative goodput, and harm (Ware et al., HotNets 2019).

Pure functions on plain numbers. Inputs must be finite and non-negative (a ``ValueError`` otherwise); a metric
that is undefined for its inputs returns NaN rather than a misleading number.
"""

from __future__ import annotations

import math
from collections.abc import Iterable


def _checked(values: Iterable[float]) -> list[float]:
    xs = [float(v) for v in values]
    for x in xs:
        if not math.isfinite(x) or x < 0:
            raise ValueError(f"fairness metrics need finite non-negative values, got {x!r}")
    return xs


def jain_index(values: Iterable[float]) -> float:
    """Jain's fairness index J = (sum x)^2 / (n * sum x^2) (Jain, Chiu, Hawe 1984).

    J is in [1/n, 1]: 1 when all values are equal, k/n when k of n share equally and the rest get nothing.
    NaN for no values or when all values are zero: nobody received anything, so calling that "perfectly
    fair" (J = 1) would hide a dead link."""
    xs = _checked(values)
    total = math.fsum(xs)
    if not xs or total == 0.0:
        return math.nan
    # Scale first so that the squares neither overflow nor underflow.
    peak = max(xs)
    scaled = [x / peak for x in xs]
    s = math.fsum(scaled)
    return min(1.0, s * s / (len(scaled) * math.fsum(x * x for x in scaled)))


def fness(bytes_a: float, bytes_b: float) -> float:
    """FNESS of flow a against flow b: ``1 - a/b`` if b >= a, else ``-1 + b/a``.

    0 is fair; -1 means a takes everything, +1 means b takes everything; the value is in [-1, 1] and
    ``fness(a, b) == -fness(b, a)``. NaN if both are zero."""
    a, b = _checked([bytes_a, bytes_b])
    if a == 0.0 and b == 0.0:
        return math.nan
    if b >= a:
        return 1.0 - a / b
    return -1.0 + b / a


def relative_goodput(class_mean_bps: float, link_rate_bps: float, total_flows: int) -> float:
    """A class's mean per-flow goodput over the equal share of the link: ``mean / (rate / total_flows)``.

    1.0 is an equal share of the raw link rate. Goodput counts payload only, so even perfect sharing of a
    fully used link gives about mss/mtu (0.965 at a 1500-byte MTU), not 1.0."""
    (mean,) = _checked([class_mean_bps])
    if not link_rate_bps > 0 or not math.isfinite(link_rate_bps):
        raise ValueError(f"link_rate_bps must be positive, got {link_rate_bps!r}")
    if total_flows < 1:
        raise ValueError(f"total_flows must be at least 1, got {total_flows!r}")
    return mean / (link_rate_bps / total_flows)


def harm(x_solo: float, y_with: float, more_is_better: bool = True) -> float:
    """Harm done to a flow (or service) B by a competitor A (Ware, Mukerjee, Seshan, Sherry, HotNets 2019).

    ``x_solo`` is B's performance without A (alone, or against its own kind), ``y_with`` its performance
    when competing with A, in the same metric.

    - more is better (throughput, goodput): ``(x - y) / x``
    - less is better (latency, loss, completion time): ``(y - x) / y``

    0 means no harm and 1 complete starvation (or an unboundedly worse result). The value is negative when
    B does better with A than without; the paper's range [0, 1] assumes it does not, so clip with
    ``max(0.0, h)`` where only harm matters. NaN when undefined (x = 0 for more-is-better, y = 0 < x for
    less-is-better)."""
    x, y = _checked([x_solo, y_with])
    if more_is_better:
        return math.nan if x == 0.0 else (x - y) / x
    if y == 0.0:
        return 0.0 if x == 0.0 else math.nan
    return (y - x) / y
