"""The comparison as text: the per-cell tables for the terminal, the grid summary against the targets, and
the markdown page (``validate.md``) whose gap table is the one the documentation shows."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from ccfair.emu.arrival import BEFORE_THE_CHOICE
from ccfair.studies.validate.compare import (
    JAIN_MAX,
    SHARE_CELL_MAX,
    SHARE_GRID_MEAN,
    SOJOURN_RELATIVE,
    SPREAD_FACTOR,
    UTILIZATION_MAX,
)
from ccfair.studies.validate.grid import SIDES
from ccfair.studies.validate.truth import listed
from ccfair.tables import Column, render, text

MISSING = "-"
# The documentation's gap table (docs/explanation/validation.md) is this block of validate.md, between these
# lines.
TABLE_START = "<!-- validate gaps: start -->"
TABLE_END = "<!-- validate gaps: end -->"


def _pm(stat: Mapping[str, Any] | None) -> str:
    if not stat or stat.get("mean") is None:
        return MISSING
    sd = stat.get("sd")
    return f"{stat['mean']:.3f} ± {sd:.3f}" if sd is not None else f"{stat['mean']:.3f}"


def _signed(x: float | None, digits: int = 3) -> str:
    return MISSING if x is None or math.isnan(x) else f"{x:+.{digits}f}"


def cpu_models(truth: Mapping[str, Any]) -> str:
    return ", ".join(listed(truth.get("cpu_model")))


def arrivals(truth: Mapping[str, Any]) -> str:
    """When the truth's emulator started its frames' time (a truth from before the choice: at their read)."""
    return ", ".join(listed(truth.get("emulator_arrival"))) or BEFORE_THE_CHOICE


def _plain(x: float | None, digits: int = 3) -> str:
    return MISSING if x is None or math.isnan(x) else f"{x:.{digits}f}"


def _percent(x: float | None) -> str:
    return MISSING if x is None or math.isnan(x) else f"{x * 100:+.0f} %"


def _abs_percent(x: float | None) -> str:
    return MISSING if x is None or math.isnan(x) else f"{x * 100:.0f} %"


def _mark(ok: bool | None) -> str:
    return "" if ok is None or ok else "*"


def cell_table(cell: Mapping[str, Any]) -> str:
    """One cell's metrics: kernel, each preset, gaps."""
    rows = []
    for m in cell["metrics"]:
        row = {"metric": m["metric"], "kernel": _pm(m["kernel"])}
        for p in SIDES:
            row[p] = _pm(m.get(p))
            row[f"gap_{p}"] = _signed(m.get(f"gap_{p}"))
        rows.append(row)
    columns = [Column("metric", "metric", text, "left"), Column("kernel (mean ± sd)", "kernel", text)]
    for p in SIDES:
        columns.append(Column(f"sim {p} (mean ± sd)", p, text))
    for p in SIDES:
        columns.append(Column(f"gap {p}", f"gap_{p}", text))
    return render(rows, columns, indent="  ")


def gap_cells(cell: Mapping[str, Any], target: str, fmt: Any) -> str:
    """The target's gap on each side (``SIDES``), joined by slashes; a missed target is starred."""
    parts = []
    for p in SIDES:
        side = cell["presets"].get(p)
        if side is None or target not in side["gaps"]:
            parts.append(MISSING)
            continue
        parts.append(fmt(side["gaps"][target]) + _mark(side["ok"].get(target)))
    return " / ".join(parts)


def _headline(cell: Mapping[str, Any]) -> str:
    for m in cell["metrics"]:
        if m["metric"] == cell["headline"]:
            return f"{cell['headline']} {_pm(m['kernel'])}"
    return MISSING


GAP_COLUMNS = (
    ("share", "share gap", _plain),
    ("jain", "Jain gap", _signed),
    ("sojourn", "sojourn p50 gap", _percent),
    ("spread", "spread ratio", lambda x: _plain(x, 2)),
    ("utilization", "utilization gap", _signed),
)


def gap_table_rows(document: Mapping[str, Any]) -> list[dict[str, str]]:
    rows = []
    for cell in document["cells"]:
        row = {"cell": cell["cell"], "kernel": _headline(cell)}
        for target, _, fmt in GAP_COLUMNS:
            row[target] = gap_cells(cell, target, fmt)
        rows.append(row)
    return rows


def markdown_table(document: Mapping[str, Any]) -> str:
    """The gap table in markdown: one row per compared cell, each gap as one value per side (``SIDES``)."""
    sides = " / ".join(SIDES)
    head = ["cell", "kernel (mean ± sd)", *[f"{title}, {sides}" for _, title, _ in GAP_COLUMNS]]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for row in gap_table_rows(document):
        values = [row["cell"], row["kernel"], *[row[t] for t, _, _ in GAP_COLUMNS]]
        lines.append("| " + " | ".join(values) + " |")
    return "\n".join(lines)


def summary_rows(document: Mapping[str, Any]) -> list[dict[str, str]]:
    s = {p: document["summary"][p] for p in SIDES}

    def both(fmt: Any) -> str:
        return " / ".join(fmt(s[p]) for p in SIDES)

    def met(target: str) -> Any:
        return lambda x: f"{x[f'{target}_met']} of {x[f'{target}_judged']}"

    return [
        {
            "what": "mean |share gap| (cells with 2+ classes)",
            "target": f"< {SHARE_GRID_MEAN}",
            "value": both(lambda x: _plain(x["share_gap_mean"])),
        },
        {
            "what": "mean |share gap| a model with the kernel's means would show (repetition noise)",
            "target": "-",
            "value": both(lambda x: _plain(x.get("share_noise_mean"))),
        },
        {
            "what": "max |share gap|",
            "target": f"< {SHARE_CELL_MAX}",
            "value": both(lambda x: _plain(x["share_gap_max"])),
        },
        {"what": "cells with |share gap| under the max", "target": "all", "value": both(met("share"))},
        {
            "what": "max |Jain gap|",
            "target": f"<= {JAIN_MAX}",
            "value": both(lambda x: _plain(x["jain_gap_max"])),
        },
        {"what": "cells with Jain within target", "target": "all", "value": both(met("jain"))},
        {
            "what": "max |sojourn p50 gap|",
            "target": f"<= {SOJOURN_RELATIVE * 100:.0f} %",
            "value": both(lambda x: _abs_percent(x["sojourn_gap_max"])),
        },
        {"what": "cells with sojourn within target", "target": "all", "value": both(met("sojourn"))},
        {
            "what": "spread ratio sim/kernel, range",
            "target": f"{1 / SPREAD_FACTOR:g} to {SPREAD_FACTOR:g}",
            "value": both(
                lambda x: f"{_plain(x['spread_ratio_min'], 2)} to {_plain(x['spread_ratio_max'], 2)}"
            ),
        },
        {
            "what": "median spread ratio sim/kernel",
            "target": "1",
            "value": both(lambda x: _plain(x.get("spread_ratio_median"), 2)),
        },
        {"what": "cells with spread within target", "target": "all", "value": both(met("spread"))},
        {
            "what": "cells a model spreading as the kernel would have within target (repetition noise)",
            "target": "-",
            "value": both(lambda x: _plain(x.get("spread_noise_met"), 1)),
        },
        {
            "what": "cells with |utilization gap| within target",
            "target": f"<= {UTILIZATION_MAX}",
            "value": both(met("utilization")),
        },
    ]


def summary_text(document: Mapping[str, Any]) -> str:
    columns = [
        Column("grid summary", "what", text, "left"),
        Column("target", "target", text, "left"),
        Column(" / ".join(SIDES), "value", text, "left"),
    ]
    return render(summary_rows(document), columns, indent="")


def pending_lines(document: Mapping[str, Any]) -> list[str]:
    return [f"  {name}: {why}" for name, why in document["pending"].items()]


def full_text(document: Mapping[str, Any]) -> str:
    out = [
        f"ccfair validate: {len(document['cells'])} cells, the simulator ({', '.join(SIDES)} hosts, "
        f"{document['repetitions']} seeds) against the kernel's stored truth "
        f"(Linux {', '.join(document['truth']['kernel_release'])}, {cpu_models(document['truth'])}, "
        f"emulator arrival {arrivals(document['truth'])})",
        "",
    ]
    for cell in document["cells"]:
        excluded = len(cell.get("kernel_excluded", []))
        left_out = f", {excluded} flagged by the testbed's health left out" if excluded else ""
        out.append(f"{cell['cell']}: {cell['what']} ({cell['kernel_runs']} kernel runs{left_out})")
        out.append(cell_table(cell))
        out.append("")
    columns = [Column("cell", "cell", text, "left"), Column("kernel (mean ± sd)", "kernel", text, "left")]
    columns += [Column(f"{title}, {' / '.join(SIDES)}", t, text) for t, title, _ in GAP_COLUMNS]
    out.append(render(gap_table_rows(document), columns, indent=""))
    out.append("(* misses its target)")
    out.append("")
    out.append(summary_text(document))
    if document["pending"]:
        out.append("")
        out.append("cells not compared:")
        out.extend(pending_lines(document))
    if short := short_cells(document):
        out.append("")
        out.append("cells compared on fewer simulator runs than planned (failed or cut short):")
        out.extend(f"  {name}: {why}" for name, why in short.items())
    return "\n".join(out) + "\n"


def short_cells(document: Mapping[str, Any]) -> dict[str, str]:
    """The compared cells some of whose simulator runs are missing (a document before this was recorded has
    none)."""
    return {n: w for n, w in document.get("incomplete", {}).items() if n not in document["pending"]}


def summary_markdown(document: Mapping[str, Any]) -> str:
    """The grid summary as a markdown table (a ``|`` inside a cell escaped)."""
    lines = ["| grid summary | target | " + " / ".join(SIDES) + " |", "|---|---|---|"]
    for r in summary_rows(document):
        cells = [r[k].replace("|", "\\|") for k in ("what", "target", "value")]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def markdown_page(document: Mapping[str, Any]) -> str:
    truth = document["truth"]
    lines = [
        "# ccfair validate",
        "",
        f"Kernel {', '.join(truth['kernel_release'])} on {cpu_models(truth)} ({truth['cpus']} CPUs), "
        f"clean rate {truth['doctor'].get('clean_rate_bps')} bit/s, emulator arrival {arrivals(truth)}; "
        "simulator hosts "
        f"{' and '.join(SIDES)}, {document['repetitions']} seeds.",
        "",
        TABLE_START,
        markdown_table(document),
        TABLE_END,
        "",
        summary_markdown(document),
    ]
    if document["pending"]:
        lines += ["", "Cells not compared:", "", *[f"- {n}: {w}" for n, w in document["pending"].items()]]
    if short := short_cells(document):
        lines += ["", "Cells compared on fewer simulator runs than planned:", ""]
        lines += [f"- {n}: {w}" for n, w in short.items()]
    return "\n".join(lines) + "\n"
