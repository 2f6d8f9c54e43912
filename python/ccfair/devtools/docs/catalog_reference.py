"""The algorithms and queue disciplines, from the registries (``_native.catalog()``, what ``ccfair list``
prints): each with its summary, source, aliases and parameters (default, allowed values, meaning)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ccfair.catalog import catalog
from ccfair.devtools.docs.markdown import cell
from ccfair.report import _default_text


def _params(entry: Mapping[str, Any]) -> list[str]:
    if not entry["params"]:
        return ["No parameters.", ""]
    rows = ["| Parameter | Default | Allowed | Meaning |", "|---|---|---|---|"]
    defaults = entry.get("defaults", {})
    for p in entry["params"]:
        default = _default_text(defaults.get(p["name"]))
        rows.append(f"| `{p['name']}` | {cell(default)} | {cell(p['allowed'])} | {cell(p['doc'])} |")
    return [*rows, ""]


def _entry(entry: Mapping[str, Any]) -> list[str]:
    out = [f"### `{entry['name']}`", "", f"{entry['summary']}.", ""]
    out.append(f"Source: {entry['source']}.")
    if entry.get("aliases"):
        out.append(f"Aliases: {', '.join(f'`{a}`' for a in entry['aliases'])}.")
    if entry.get("vars"):
        out.append(f"Algorithm columns of the time series: {entry['vars']}.")
    return [*out, "", *_params(entry)]


def render_congestion_controls() -> str:
    out: list[str] = []
    for cc in catalog()["congestion_controls"]:
        out += _entry(cc)
    return "\n".join(out)


def render_queue_disciplines() -> str:
    out: list[str] = []
    for q in catalog()["queue_disciplines"]:
        out += _entry(q)
    return "\n".join(out)
