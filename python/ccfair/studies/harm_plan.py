"""The runs harm needs, as three sweep plans over a suite's scenarios (see :mod:`ccfair.studies.harm`).

- ``solo``: the incumbent group alone (its baseline): ``count`` incumbent flows
- ``self``: the incumbent against another incumbent group of the same size
- ``vs``: the incumbent against a newcomer group of the same size

Every plan has the same axes in the same order (aqm, buffer, rtt, flow count, start offset), so cell k is
the same scenario and repetition in all three. The ``self`` and ``vs`` plans start the later group at
``stagger + r x start_jitter / repetitions`` and flip the start order; ``solo`` starts at
``r x start_jitter / repetitions``. The ``solo`` and ``self`` plans depend only on the suite and the
incumbent, and their names say so: a second newcomer against the same incumbent finds their runs in the
store (run ids are content hashes of scenario and seed, and the seeds derive from the plan seed and the
cell's coordinates, equal in both studies) and adds only its own ``vs`` runs.

On the kernel backend every plan of the study, baselines included, runs there; their names start with
``harm-kernel-`` and their run ids include the backend, so a simulator study and a kernel study of the same
pair share no plan and no run. A kernel-only newcomer is written ``kernel:NAME``
(``crates/ccfair-scenario/src/kernel.rs``).
"""

from __future__ import annotations

import copy
import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from ccfair.errors import InputError
from ccfair.studies.suites import Suite
from ccfair.sweep.expand import CellError, load_cell
from ccfair.sweep.identity import SIMULATOR, canonical_json
from ccfair.sweep.plan import Plan, plan_from_dict
from ccfair.toml_text import read_toml

# Keys of a flow group that describe the algorithm and the host, kept from a scenario file; the suite sets
# count, rtt, start and stop, and the study sets the label.
GROUP_KEYS = ("cc", "initial_window", "pacing", "loss", "ecn", "cc_params")
ROLES = ("solo", "self", "vs")
_SELECTOR = re.compile(r"^flows\[([0-9]+)\]$")
PLAN_PREFIX = "harm-"


@dataclass(frozen=True)
class HarmPlans:
    """The three plans of one (suite, incumbent, newcomer) study, by role."""

    solo: Plan
    self_: Plan
    vs: Plan
    suite: Suite

    def by_role(self) -> dict[str, Plan]:
        return {"solo": self.solo, "self": self.self_, "vs": self.vs}


def group_from_cc(cc: str, option: str, backend: str = SIMULATOR) -> dict[str, Any]:
    """A flow group of just a congestion control name (checked as ``backend`` runs it)."""
    group = {"cc": cc}
    check_group(group, option, backend)
    return group


def group_from_file(path: str, selector: str, option: str, backend: str = SIMULATOR) -> dict[str, Any]:
    """The flow group ``flows[N]`` of a scenario file, without the keys the suite sets."""
    m = _SELECTOR.match(selector.strip())
    if m is None:
        raise InputError(option, f"expected a flow group of the scenario as flows[N], got {selector!r}")
    doc = read_toml(path)
    flows = doc.get("flows")
    index = int(m.group(1))
    if not isinstance(flows, list) or index >= len(flows):
        count = len(flows) if isinstance(flows, list) else 0
        raise InputError(option, f"{path} has {count} flow groups; flows[{index}] does not exist")
    load_cell(doc, backend)  # the file itself must be valid
    group = {k: copy.deepcopy(v) for k, v in flows[index].items() if k in GROUP_KEYS}
    check_group(group, option, backend)
    return group


def same_group(a: str, b: str) -> bool:
    """Whether two ``flows[N]`` selectors name one group (``flows[1]`` and `` flows[01]`` do)."""
    ma, mb = _SELECTOR.match(a.strip()), _SELECTOR.match(b.strip())
    return ma is not None and mb is not None and int(ma.group(1)) == int(mb.group(1))


def check_group(group: Mapping[str, Any], option: str, backend: str = SIMULATOR) -> None:
    """Validates a group on a small link as ``backend`` runs it, reporting problems under ``option``."""
    doc = {
        "duration": "1s",
        "link": {"rate": "10Mbps", "buffer": "1bdp"},
        "flows": [{**group, "rtt": "10ms"}],
    }
    try:
        load_cell(doc, backend).resolve()
    except InputError as e:
        raise InputError(option, f"{e.field.removeprefix('flows[0].')}: {e.message}") from None


def _label(group: Mapping[str, Any]) -> str:
    return re.sub(r"[^A-Za-z0-9_.]+", "_", str(group.get("cc", "cc")))


def _digest(*parts: Any) -> str:
    return hashlib.sha256(canonical_json(list(parts)).encode()).hexdigest()[:8]


def _base(suite: Suite, groups: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "duration": suite.duration,
        "measure": {"start": suite.measure_start},
        "link": {"rate": suite.rate, "buffer": suite.buffers[0]},
        "flows": groups,
    }


def _plan(name: str, suite: Suite, groups: list[dict[str, Any]], starts: list[str], backend: str) -> Plan:
    n = len(groups)
    later = n - 1  # the group whose start varies: the second one, or the only one when alone
    zips = [
        {f"flows[{i}].rtt": list(suite.rtts) for i in range(n)},
        {f"flows[{i}].count": list(suite.flow_counts) for i in range(n)},
        {f"flows[{later}].start": starts},
    ]
    document = {
        "name": name,
        "backend": backend,
        "seed": suite.seed,
        "repetitions": 1,
        "flip_start_order": n > 1,
        "scenario": _base(suite, groups),
        "grid": {"link.aqm": list(suite.aqms), "link.buffer": list(suite.buffers)},
        "zip": zips,
    }
    return plan_from_dict(document, default_name=name)


def harm_plans(
    suite: Suite, incumbent: dict[str, Any], newcomer: dict[str, Any], backend: str = SIMULATOR
) -> HarmPlans:
    """The three plans on ``backend``; raises InputError naming the suite field for a scenario that does
    not validate."""
    suite_key: Any = asdict(suite)
    on = PLAN_PREFIX
    if backend != SIMULATOR:  # the simulator's plan names stay as they were
        suite_key = [suite_key, backend]
        on = f"{PLAN_PREFIX}{backend}-"
    inc = {**incumbent, "label": "incumbent"}
    inc2 = {**incumbent, "label": "incumbent"}
    new = {**newcomer, "label": "newcomer"}
    prefix = f"{on}{suite.name}-{_label(incumbent)}-{_digest(suite_key, incumbent)}"
    vs_name = f"{prefix}-vs-{_label(newcomer)}-{_digest(suite_key, incumbent, newcomer)}"
    staggered = suite.start_offsets()
    solo_starts = [f"{r * suite.start_jitter_ns // suite.repetitions}ns" for r in range(suite.repetitions)]
    try:
        return HarmPlans(
            solo=_plan(f"{prefix}-solo", suite, [copy.deepcopy(inc)], solo_starts, backend),
            self_=_plan(f"{prefix}-self", suite, [copy.deepcopy(inc), inc2], staggered, backend),
            vs=_plan(vs_name, suite, [copy.deepcopy(inc), new], staggered, backend),
            suite=suite,
        )
    except InputError as e:
        raise InputError(f"suite: {e.field}", e.message) from None


def study_plan_names(vs_plan: str) -> dict[str, str] | None:
    """The three plan names of the study whose ``vs`` plan is ``vs_plan``; None if it is not one."""
    if not vs_plan.startswith(PLAN_PREFIX) or "-vs-" not in vs_plan:
        return None
    prefix = vs_plan[: vs_plan.rindex("-vs-")]
    return {"solo": f"{prefix}-solo", "self": f"{prefix}-self", "vs": vs_plan}


def suite_scenarios(suite: Suite) -> list[dict[str, Any]]:
    """The suite's scenarios in the plans' cell order (aqm, buffer, rtt, flows per side; the last fastest)."""
    return [
        {
            "aqm": aqm if isinstance(aqm, str) else canonical_json(aqm),
            "buffer": buffer,
            "rtt": rtt,
            "flows": count,
        }
        for aqm in suite.aqms
        for buffer in suite.buffers
        for rtt, count in ((r, c) for r in suite.rtts for c in suite.flow_counts)
    ]


_GROUP_FIELD = re.compile(r"^flows\[([0-9]+)\](?:\.(.*))?$")


def suite_error(error: CellError, plans: HarmPlans, options: Mapping[str, str]) -> InputError:
    """``error`` on what the user wrote: the suite key whose value made the cell (``suite.flow_counts[0]``
    for a flow count, ``suite.aqms[1].target_ns`` for a parameter of a discipline, ``suite.duration``), or,
    for a flow group's own setting, the option that gave the group (``options`` by role: ``incumbent``,
    ``newcomer``). A field the suite does not set stays as it is."""
    suite, where = plans.suite, error.coordinates
    field = error.field

    def listed(key: str, values: Sequence[Any], path: str, rest: str = "") -> str:
        value = where.get(path)
        index = next((i for i, v in enumerate(values) if v == value), None)
        return field if index is None else f"suite.{key}[{index}]{rest}"

    if field == "link.aqm" or field.startswith("link.aqm."):
        return InputError(listed("aqms", suite.aqms, "link.aqm", field[len("link.aqm") :]), error.message)
    if field == "link.buffer":
        return InputError(listed("buffers", suite.buffers, "link.buffer"), error.message)
    if field == "link.rate":
        return InputError("suite.rate", error.message)
    if field == "duration":
        return InputError("suite.duration", error.message)
    if field.startswith("measure"):
        return InputError("suite.measure_start", error.message)
    m = _GROUP_FIELD.match(field)
    if m is None:
        return error
    group, key = int(m.group(1)), m.group(2) or ""
    if key == "rtt":
        return InputError(listed("rtts", suite.rtts, field), error.message)
    if key == "count":
        return InputError(listed("flow_counts", suite.flow_counts, field), error.message)
    if key in ("start", "stop"):
        return InputError("suite.stagger", error.message)
    roles = {plan.name: role for role, plan in plans.by_role().items()}
    newcomer = roles.get(error.plan) == "vs" and group == 1
    option = options["newcomer" if newcomer else "incumbent"]
    return InputError(option, f"{key}: {error.message}" if key else error.message)
