"""The scenario reference's generated sections: the key table, the host presets' values and the flow
profiles with the source of each value."""

from __future__ import annotations

from typing import Any

from ccfair.catalog import catalog
from ccfair.devtools.docs.markdown import cell
from ccfair.devtools.docs.scenario_keys import host_preset_rows, host_presets, scenario_keys


def render_keys() -> str:
    out = ["| Key | Type (unit) | Default | Rule | Meaning |", "|---|---|---|---|---|"]
    for k in scenario_keys():
        kind = f"{k.kind} ({k.unit})" if k.unit else k.kind
        meaning = k.meaning if "sim" in k.backends else f"{k.meaning} (kernel backend only)"
        if "kernel" not in k.backends:
            meaning += " (the kernel backend refuses it)"
        out.append(f"| `{k.path}` | {cell(kind)} | {cell(k.default)} | {cell(k.rule)} | {cell(meaning)} |")
    return "\n".join(out)


def render_host_presets() -> str:
    names = list(host_presets())
    out = ["| Key | " + " | ".join(f"`{n}`" for n in names) + " |", "|---" * (len(names) + 1) + "|"]
    for key, values in host_preset_rows():
        out.append(f"| `host.{key}` | " + " | ".join(cell(v) for v in values) + " |")
    return "\n".join(out)


def render_flow_profiles() -> str:
    """One row per profile: its values, each with its source (assumed values marked)."""
    out = [
        "| Profile | Status | `cc` | `initial_window` | `pacing` | Not modelled |",
        "|---|---|---|---|---|---|",
    ]
    for p in catalog()["flow_profiles"]:
        status = "2019 reconstruction" if p["kind"] == "reconstruction2019" else "generic"

        def value(key: str, p: dict[str, Any] = p) -> str:
            v = p[key]
            shown = str(v["value"]).lower() if isinstance(v["value"], bool) else str(v["value"])
            how = "**assumed**: " if v["assumed"] else ""
            return f"`{shown}` ({how}{v['source']})"

        cells = [
            f"`{p['name']}`: {p['summary']}",
            status,
            value("cc"),
            value("initial_window"),
            value("pacing"),
        ]
        out.append("| " + " | ".join(cell(c) for c in [*cells, p["not_modelled"]]) + " |")
    return "\n".join(out)
