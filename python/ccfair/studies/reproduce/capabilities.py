"""Features a study needs that a build may lack, each detected in one place from the native catalog.

A finding that needs a missing feature is scored ``not measured (this build lacks ...)`` and its plans are
left out, so a study runs on every build and says what it could not measure. Each check reads what the
feature adds: a queue discipline's name in ``catalog()``, or a column of the flow table's output schema.
"""

from __future__ import annotations

from dataclasses import dataclass

from ccfair.catalog import output_table, queue_discipline_names


@dataclass(frozen=True)
class Capability:
    name: str  # says what is missing: "the vdq_csaqm queue discipline"
    kind: str  # "qdisc" or "flow column"
    key: str  # the qdisc's name or the column's name

    def available(self) -> bool:
        if self.kind == "qdisc":
            return self.key in queue_discipline_names()
        return self.key in {c["name"] for c in output_table("flows")}


# VDQ-CSAQM: the virtual dual queue core-stateless AQM (``[link] aqm = "vdq_csaqm"``).
VDQ_CSAQM = Capability("the vdq_csaqm queue discipline", "qdisc", "vdq_csaqm")
# Window halvings counted per flow (``window_cwnd_reductions``, ``total_cwnd_reductions``).
CWND_REDUCTIONS = Capability(
    "the per-flow counter of window halvings (window_cwnd_reductions)",
    "flow column",
    "window_cwnd_reductions",
)
# Dynamic traffic: groups with ``size`` and ``arrivals``, flows with ``completion_ns`` and ``size_bytes``.
DYNAMIC_TRAFFIC = Capability(
    "dynamic traffic (flow groups with size and arrivals; the completion_ns column)",
    "flow column",
    "completion_ns",
)


def missing(needs: tuple[Capability, ...]) -> list[Capability]:
    return [c for c in needs if not c.available()]


def not_measured(needs: tuple[Capability, ...]) -> str | None:
    """The verdict of a finding whose features are missing, or None when all are there."""
    lacking = missing(needs)
    if not lacking:
        return None
    return "not measured (this build lacks " + " and ".join(c.name for c in lacking) + ")"
