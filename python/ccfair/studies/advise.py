"""Which queue discipline and buffer give acceptable fairness for a traffic mix (``ccfair advise``)?

The search is one sweep plan: every queue-discipline variant (a discipline with values of its main parameter,
:data:`~ccfair.studies.advise_space.SPACE`) x every buffer size x every RTT of the link, with the mix's flow
groups all at that RTT and starting together. A *configuration* is (variant, buffer); it has to work at every
RTT, so its numbers are the worst over the RTTs: Jain's index (lowest), the worst class's relative goodput
(lowest, :func:`~ccfair.analysis.fairness.relative_goodput`), the bottleneck's queueing delay p99 (highest)
and the utilization (lowest).

The Pareto front keeps the configurations no other one beats on all four at once. The recommendation is
the front's configuration that meets the constraints with the highest Jain's index (ties within
:data:`JAIN_TIE` go to the lower delay); its margin is how far it stays from each constraint. When none
meets them, the closest is the one with the smallest sum of relative shortfalls.
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ccfair.errors import InputError
from ccfair.studies.advise_space import SPACE
from ccfair.sweep.identity import canonical_json
from ccfair.sweep.plan import Plan, plan_from_dict
from ccfair.tables import Column, fixed, render, text

JAIN_TIE = 0.005
PLAN_PREFIX = "advise-"


@dataclass(frozen=True)
class Config:
    name: str  # "fq_codel target_ns=5ms, 2bdp"
    aqm: dict[str, Any]
    buffer: str
    jain: float
    worst_relative: float
    delay_p99_ms: float
    utilization: float
    runs: int


@dataclass
class AdviceResult:
    configs: list[Config]
    front: list[Config]
    recommended: Config | None
    closest: Config | None
    min_jain: float | None
    max_delay_ms: float | None
    min_utilization: float | None
    margins: dict[str, float] = field(default_factory=dict)
    shortfalls: dict[str, float] = field(default_factory=dict)


def variant_name(aqm: Mapping[str, Any]) -> str:
    params = " ".join(f"{k}={v}" for k, v in aqm.items() if k != "name")
    return f"{aqm['name']} {params}".strip()


def variants(aqms: Sequence[str]) -> list[dict[str, Any]]:
    out = []
    for name in aqms:
        if name not in SPACE:
            raise InputError("--aqms", f"{name!r} is not searched; choose from {', '.join(SPACE)}")
        out += [{"name": name, **params} for params in SPACE[name]]
    return out


CONSTRAINT_KEYS = ("min_jain", "max_delay_ms", "min_utilization")


def advise_plan(
    rate: str,
    rtts: Sequence[str],
    mix: Sequence[dict[str, Any]],
    duration: str,
    aqms: Sequence[dict[str, Any]],
    buffers: Sequence[str],
    constraints: Mapping[str, float | None] | None = None,
) -> Plan:
    """The search as one plan; cell = (variant x len(buffers) + buffer) x len(rtts) + rtt. The
    ``constraints`` given (:data:`CONSTRAINT_KEYS`) are kept in the plan's stored definition, so a report
    recommends as the command did; they are not part of the plan's name or its runs (a search with other
    constraints reuses every run, and the store then keeps the latest constraints)."""
    key = canonical_json([rate, list(rtts), list(mix), duration, list(aqms), list(buffers)])
    name = f"{PLAN_PREFIX}{rate}-" + "-".join(f"{g['cc']}{g['count']}" for g in mix)
    name += "-" + hashlib.sha256(key.encode()).hexdigest()[:8]
    groups = [{**g, "rtt": rtts[0]} for g in mix]
    document = {
        "name": name,
        "scenario": {"duration": duration, "link": {"rate": rate, "buffer": buffers[0]}, "flows": groups},
        "grid": {"link.aqm": list(aqms), "link.buffer": list(buffers)},
        "zip": [{f"flows[{i}].rtt": list(rtts) for i in range(len(groups))}],
    }
    try:
        plan = plan_from_dict(document, default_name=name)
    except InputError as e:
        raise InputError(f"search: {e.field}", e.message) from None
    given = {k: v for k, v in (constraints or {}).items() if k in CONSTRAINT_KEYS and v is not None}
    return dataclasses.replace(plan, study={"constraints": given})


def stored_constraints(definition: Mapping[str, Any]) -> dict[str, float]:
    """The constraints an advise plan's stored definition keeps (:func:`advise_plan`); what is not a finite
    number under a known key is left out (the definition comes from a results directory, untrusted)."""
    study = definition.get("study")
    constraints = study.get("constraints") if isinstance(study, Mapping) else None
    if not isinstance(constraints, Mapping):
        return {}
    return {
        k: float(v)
        for k, v in constraints.items()
        if k in CONSTRAINT_KEYS
        and isinstance(v, int | float)
        and not isinstance(v, bool)
        and math.isfinite(v)
    }


def constraints_text(constraints: Mapping[str, float]) -> str:
    """``--min-jain 0.9, --max-delay 20ms``: the constraints as the command line gave them."""
    parts = []
    if "min_jain" in constraints:
        parts.append(f"--min-jain {constraints['min_jain']:g}")
    if "max_delay_ms" in constraints:
        parts.append(f"--max-delay {constraints['max_delay_ms']:g}ms")
    if "min_utilization" in constraints:
        parts.append(f"--min-utilization {constraints['min_utilization']:g}")
    return ", ".join(parts) or "none given"


def configurations(
    root: str | Path, plan: str, aqms: Sequence[dict[str, Any]], buffers: Sequence[str], rtts: int
) -> list[Config]:
    """Each (variant, buffer)'s worst values over the RTTs, from the store (done runs only)."""
    from ccfair.store.reader import query  # DuckDB only when reading, not when the CLI starts

    name = plan.replace("'", "''")
    frame = query(
        root,
        f"""SELECT c.cell, r.jain_index, r.queue_sojourn_p99_ns, r.utilization,
              (SELECT min(k.relative_goodput) FROM classes k WHERE k.run_id = c.run_id) AS worst_relative
           FROM cells c JOIN runs r ON r.run_id = c.run_id AND r.status = 'done'
           WHERE c.plan = '{name}'""",
    )
    out = []
    for a, aqm in enumerate(aqms):
        for b, buffer in enumerate(buffers):
            first = (a * len(buffers) + b) * rtts
            rows = frame[(frame["cell"] >= first) & (frame["cell"] < first + rtts)]
            if rows.empty:
                continue
            out.append(
                Config(
                    name=f"{variant_name(aqm)}, {buffer}",
                    aqm=aqm,
                    buffer=buffer,
                    jain=_worst(rows["jain_index"], min),
                    worst_relative=_worst(rows["worst_relative"], min),
                    delay_p99_ms=_worst(rows["queue_sojourn_p99_ns"], max) / 1e6,
                    utilization=_worst(rows["utilization"], min),
                    runs=len(rows),
                )
            )
    return out


def _worst(values: Any, pick: Any) -> float:
    xs = [float(v) for v in values if v is not None and math.isfinite(float(v))]
    return pick(xs) if xs else math.nan


def _key(c: Config) -> tuple[float, float, float, float]:
    """Bigger is better in every entry; NaN counts as the worst."""

    def good(x: float) -> float:
        return x if math.isfinite(x) else -math.inf

    return (good(c.jain), good(c.worst_relative), good(-c.delay_p99_ms), good(c.utilization))


def pareto_front(configs: Sequence[Config]) -> list[Config]:
    keys = [_key(c) for c in configs]

    def dominated(i: int) -> bool:
        return any(
            all(o >= s for o, s in zip(keys[j], keys[i], strict=True)) and keys[j] != keys[i]
            for j in range(len(configs))
        )

    return [c for i, c in enumerate(configs) if not dominated(i)]


def shortfalls(
    c: Config, min_jain: float | None, max_delay_ms: float | None, min_util: float | None
) -> dict[str, float]:
    """How far ``c`` misses each constraint, relative to the constraint (0 where it meets it)."""
    out = {}
    if min_jain is not None:
        out["jain"] = max(0.0, min_jain - c.jain) / min_jain if math.isfinite(c.jain) else 1.0
    if max_delay_ms is not None:
        over = c.delay_p99_ms - max_delay_ms
        out["delay_p99"] = max(0.0, over) / max_delay_ms if math.isfinite(over) else math.inf
    if min_util is not None:
        out["utilization"] = (
            max(0.0, min_util - c.utilization) / min_util if math.isfinite(c.utilization) else 1.0
        )
    return out


def advise(
    configs: Sequence[Config],
    min_jain: float | None,
    max_delay_ms: float | None,
    min_util: float | None,
) -> AdviceResult:
    front = pareto_front(configs)
    feasible = [c for c in front if sum(shortfalls(c, min_jain, max_delay_ms, min_util).values()) == 0.0]
    result = AdviceResult(list(configs), front, None, None, min_jain, max_delay_ms, min_util)
    if feasible:
        best_jain = max(c.jain for c in feasible)
        near = [c for c in feasible if c.jain >= best_jain - JAIN_TIE]
        chosen = min(near, key=lambda c: c.delay_p99_ms)
        result.recommended = chosen
        if min_jain is not None:
            result.margins["jain"] = chosen.jain - min_jain
        if max_delay_ms is not None:
            result.margins["delay_p99_ms"] = max_delay_ms - chosen.delay_p99_ms
        if min_util is not None:
            result.margins["utilization"] = chosen.utilization - min_util
    elif configs:
        closest = min(configs, key=lambda c: sum(shortfalls(c, min_jain, max_delay_ms, min_util).values()))
        result.closest = closest
        result.shortfalls = shortfalls(closest, min_jain, max_delay_ms, min_util)
    return result


def config_json(c: Config | None) -> dict[str, Any] | None:
    if c is None:
        return None
    return {k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in vars(c).items()}


# ------------------------------------------------------------------------------------------- the text

FRONT_COLUMNS = [
    Column("configuration", "name", text, "left"),
    Column("jain", "jain", fixed(3)),
    Column("worst rel goodput", "worst_relative", fixed(3)),
    Column("delay p99 ms", "delay_p99_ms", fixed(2)),
    Column("utilization", "utilization", fixed(3)),
]


def advice_text(result: AdviceResult, title: str) -> str:
    """The Pareto front as a table, then the recommendation and its margins, or the closest configuration
    and what it misses by."""
    lines = [
        f"{title}: {len(result.configs)} configurations searched (worst over the RTTs); Pareto front:",
        "",
        render([vars(c) for c in sorted(result.front, key=lambda c: -c.jain)], FRONT_COLUMNS, indent="  "),
        "",
    ]
    if result.recommended is not None:
        r = result.recommended
        margins = ", ".join(_margin_text(k, v) for k, v in result.margins.items()) or "no constraints given"
        lines.append(
            f"recommended: {r.name} (Jain {r.jain:.3f}, worst class {r.worst_relative:.3f} of its fair "
            f"share, delay p99 {r.delay_p99_ms:.2f} ms, utilization {r.utilization:.3f}); margin: {margins}"
        )
    elif result.closest is not None:
        c = result.closest
        missed = []
        if result.min_jain is not None and c.jain < result.min_jain:
            missed.append(f"Jain {result.min_jain - c.jain:.3f} below --min-jain")
        if result.max_delay_ms is not None and c.delay_p99_ms > result.max_delay_ms:
            missed.append(f"delay p99 {c.delay_p99_ms - result.max_delay_ms:.2f} ms over --max-delay")
        if result.min_utilization is not None and c.utilization < result.min_utilization:
            missed.append(f"utilization {result.min_utilization - c.utilization:.3f} below --min-utilization")
        lines.append(
            f"no configuration meets the constraints; closest: {c.name} (Jain {c.jain:.3f}, delay p99 "
            f"{c.delay_p99_ms:.2f} ms, utilization {c.utilization:.3f}; {', '.join(missed)})"
        )
    else:
        lines.append("no configuration has a done run (ccfair status)")
    return "\n".join(lines) + "\n"


def _margin_text(key: str, value: float) -> str:
    if key == "delay_p99_ms":
        return f"{value:.2f} ms under --max-delay"
    option = "--min-jain" if key == "jain" else "--min-utilization"
    return f"{value:.3f} above {option}"
