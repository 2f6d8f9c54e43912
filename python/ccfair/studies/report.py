"""``ccfair report``'s page, and the sections it adds for the harm studies and advise searches of a results
directory.

The page (:func:`build_report`) is one self-contained HTML file: for a saved run its section
(:func:`ccfair.plots.html_report.run_section`); for a results directory, per plan, the plan and provenance, a
summary table per cell (mean and 95 % confidence half width over its done runs), every figure that applies
(heatmaps over the first two varied axes faceted by the third, relative goodput and shares against each
varied axis, fness for two-flow runs, the time series of one example run) and, when some failed, the failed
runs with their errors (:mod:`ccfair.plots.sweep_report`; a plan whose runs come from different builds of
ccfair says so at the top of its section); then the study sections below. It is assembled here, in the
studies layer, because it is the one place that knows every kind of section: the figures and the plans'
sections below it know nothing of studies.

Harm studies and advise searches are recognised by their plan names (:mod:`.harm_plan`, :mod:`.advise`) and
rebuilt from the plan definitions the store keeps, so a report needs nothing but the results directory. A
harm study's section holds its verdict table and figure (default tolerance) and names the backend its runs
ran on; an advise search's its Pareto front and figure, the command line's constraints (kept in the plan's
definition) and the recommendation under them, or the closest configuration when none meets them.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ccfair.errors import InputError
from ccfair.json_text import parse_json
from ccfair.plots.data import load_sweep, plan_names
from ccfair.plots.html_report import (
    FigureItem,
    Progress,
    Section,
    Table,
    render_page,
    run_section,
    table_from_columns,
)
from ccfair.plots.output import data_uri
from ccfair.plots.sweep_report import sweep_sections
from ccfair.result import RunResult
from ccfair.studies.advise import (
    FRONT_COLUMNS,
    advice_text,
    advise,
    configurations,
    constraints_text,
    stored_constraints,
)
from ccfair.studies.advise import PLAN_PREFIX as ADVISE_PREFIX
from ccfair.studies.figures import front_figure, harm_figure
from ccfair.studies.harm import METRICS, analyse, harm_text
from ccfair.studies.harm_plan import study_plan_names
from ccfair.sweep.identity import SIMULATOR, canonical_json
from ccfair.tables import Column, text

if TYPE_CHECKING:
    from ccfair.store import Results


def _definitions(results: Results) -> dict[str, dict[str, Any]]:
    frame = results.query("SELECT plan, definition FROM plans")
    return {
        str(p): parse_json(d, f"plans.definition of {p!r}")
        for p, d in zip(frame["plan"], frame["definition"], strict=True)
    }


def _axis(definition: dict[str, Any], path: str) -> list[Any]:
    for axis in definition["axes"]:
        if path in axis["paths"]:
            k = axis["paths"].index(path)
            return [point[k] for point in axis["points"]]
    raise KeyError(path)


# The axes each kind of study varies: a plan named like a study whose definition lacks one of them (a user's
# own plan called ``advise-...``, or another directory's) is left to the plain plan sections.
HARM_AXES = ("flows[1].start", "link.aqm", "link.buffer", "flows[0].rtt", "flows[0].count")
ADVISE_AXES = ("link.aqm", "link.buffer", "flows[0].rtt")


def _is_study(definition: dict[str, Any], axes: Sequence[str], flows: int) -> bool:
    """Whether a plan definition has the axes and base scenario a study's section reads."""
    try:
        varied = {path for axis in definition["axes"] for path in axis["paths"]}
        scenario = definition["scenario"]
        groups = scenario["flows"]
        return (
            varied.issuperset(axes)
            and len(groups) >= flows
            and all(isinstance(g.get("cc"), str) for g in groups[:flows])
            and isinstance(scenario.get("link", {}).get("rate"), str)
            and (flows < 2 or isinstance(scenario.get("measure", {}).get("start"), str))
        )
    except (KeyError, TypeError, AttributeError):
        return False


def _shown(value: Any) -> str:
    return value if isinstance(value, str) else canonical_json(value)


def _figure(fig: Any, id: str, title: str, caption: str) -> FigureItem:
    import matplotlib.pyplot as plt  # only when a figure is drawn

    try:
        return FigureItem(id, title, caption, data_uri(fig, "png"))
    finally:
        plt.close(fig)


def harm_section(results: Results, names: dict[str, str], vs: dict[str, Any]) -> Section:
    starts = _axis(vs, "flows[1].start")
    scenarios = [
        {"aqm": _shown(a), "buffer": b, "rtt": r, "flows": c}
        for a, b, (r, c) in itertools.product(
            _axis(vs, "link.aqm"),
            _axis(vs, "link.buffer"),
            itertools.product(_axis(vs, "flows[0].rtt"), _axis(vs, "flows[0].count")),
        )
    ]
    base = vs["scenario"]
    backend = vs.get("backend", SIMULATOR)
    result = analyse(results.directory, names, scenarios, len(starts), base["measure"]["start"])
    title = f"harm of {base['flows'][1]['cc']} to {base['flows'][0]['cc']}"
    if backend != SIMULATOR:
        title += f", {backend} backend"
    rows = []
    for s in result.scenarios:
        row = {**s.coordinates, "verdict": s.verdict}
        for metric, _ in METRICS:
            m = s.metrics[metric]
            row[metric] = f"{m.new_harm:.3f} vs {m.self_harm:.3f}"
        rows.append(row)

    columns = [
        Column("aqm", "aqm", text, "left"),
        Column("buffer", "buffer", text, "left"),
        Column("rtt", "rtt", text, "left"),
        Column("flows/side", "flows", text),
        *(Column(f"{metric} harm new vs self", metric, text, "left") for metric, _ in METRICS),
        Column("verdict", "verdict", text, "left"),
    ]
    summary = harm_text(result, title, len(starts)).strip().splitlines()
    return Section(
        id=f"harm-{names['vs']}",
        title=f"Harm: {title} ({names['vs']})",
        facts=[
            ("verdict", result.verdict()),
            ("backend", _backend_text(backend)),
            ("plans", ", ".join(names.values())),
        ],
        tables=[table_from_columns(f"harm-table-{names['vs']}", "harm per scenario", rows, columns)],
        figures=[
            _figure(
                harm_figure(result, title),
                f"harm-figure-{names['vs']}",
                "newcomer harm against self harm",
                "one point per scenario; below the diagonal (plus the tolerance band) passes the bar",
            )
        ],
        notes=[line for line in summary if line.startswith(("overall", "note"))],
    )


def _backend_text(backend: object) -> str:
    return "simulator (sim)" if backend == SIMULATOR else f"{backend}: real Linux TCP (ccfair-emu)"


def advise_section(results: Results, name: str, definition: dict[str, Any]) -> Section:
    aqms = _axis(definition, "link.aqm")
    buffers = _axis(definition, "link.buffer")
    rtts = _axis(definition, "flows[0].rtt")
    constraints = stored_constraints(definition)
    result = advise(
        configurations(results.directory, name, aqms, buffers, len(rtts)),
        constraints.get("min_jain"),
        constraints.get("max_delay_ms"),
        constraints.get("min_utilization"),
    )
    base = definition["scenario"]
    title = ", ".join(f"{g['cc']}:{g['count']}" for g in base["flows"]) + f" on {base['link']['rate']}"
    table: Table = table_from_columns(
        f"advise-front-{name}", "Pareto front", [vars(c) for c in result.front], FRONT_COLUMNS
    )
    best = result.recommended
    advice = advice_text(result, title).strip().splitlines()
    return Section(
        id=f"advise-{name}",
        title=f"Advice: {title}, RTT {', '.join(rtts)} ({name})",
        facts=[
            ("configurations", str(len(result.configs))),
            ("constraints", constraints_text(constraints)),
            ("recommended", best.name if best else "none meets the constraints"),
        ],
        tables=[table],
        figures=[_figure(front_figure(result, title), f"advise-figure-{name}", "Pareto front", "")],
        notes=[line for line in advice if line.startswith(("recommended", "no configuration"))],
    )


def study_sections(results: Results, names: Sequence[str]) -> list[Section]:
    """The harm and advise sections for the plans ``names`` of the report."""

    definitions = _definitions(results)
    sections = []
    for name in names:
        study = study_plan_names(name)
        if (
            study is not None
            and all(n in definitions for n in study.values())
            and _is_study(definitions[name], HARM_AXES, 2)
        ):
            sections.append(harm_section(results, study, definitions[name]))
        elif (
            name.startswith(ADVISE_PREFIX)
            and name in definitions
            and _is_study(definitions[name], ADVISE_AXES, 1)
        ):
            sections.append(advise_section(results, name, definitions[name]))
    return sections


def build_report(source: RunResult | Results, label: str, plan: str | None, progress: Progress | None) -> str:
    """The whole page for a saved run or a results directory (one section per plan, or only ``plan``)."""
    if isinstance(source, RunResult):
        return render_page(f"ccfair run: {_name(label)}", [run_section(source, label, progress)])
    names = [plan] if plan is not None else plan_names(source)
    if not names:
        raise InputError("DIR", f"{label} holds no plan yet")
    sections: list[Section] = []
    for i, name in enumerate(names):
        sweep = load_sweep(source, name)

        def part(fraction: float, i: int = i) -> None:
            if progress is not None:
                progress((i + fraction) / len(names))

        sections += sweep_sections(sweep, part)
    sections += study_sections(source, names)  # harm studies and advise searches among the plans
    return render_page(f"ccfair results: {_name(label)}", sections)


def _name(label: str) -> str:
    """The directory's own name (``results`` of ``runs/results/``), for the page title."""
    return Path(label).name or label
