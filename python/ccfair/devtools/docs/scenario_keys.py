"""The scenario keys for the reference page: every key of the document with its type, unit, default and rule.

:func:`scenario_keys` is the one source the page reads: the resolver's own description of the document,
``catalog()["scenario_keys"]`` (``crates/ccfair-scenario/src/catalog.rs``, which a test holds to the keys
its reader accepts), so the reference cannot miss a key or drift from the rules. The host presets' values
come from ``catalog()["host_presets"]``, each preset as the resolver expands it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ccfair.catalog import catalog
from ccfair.units import format_duration, format_rate


@dataclass(frozen=True)
class KeyDoc:
    """One key: its dotted path (``flows[].cc``), value type, unit, default and rule, what it means and the
    backends that take it."""

    path: str
    kind: str
    unit: str
    default: str
    rule: str
    meaning: str
    backends: tuple[str, ...]


def scenario_keys() -> list[KeyDoc]:
    """Every key of the scenario document, tables before their keys, in the document's order."""
    return [
        KeyDoc(
            path=k["path"],
            kind=k["type"],
            unit=k["unit"] or "",
            default="" if k["default"] is None else str(k["default"]),
            rule=k["rule"] or "",
            meaning=k["doc"] or "",
            backends=tuple(k["backends"]),
        )
        for k in catalog()["scenario_keys"]
    ]


# ------------------------------------------------------------------------------------------- the host presets

# The spec's names of the host keys the table shows, by their document names (what a [host] table writes).
_SPEC_KEY = {"nic_rate": "nic_rate_bps", "rmem": "rmem_bytes"}


def host_presets() -> dict[str, dict[str, Any]]:
    """Each preset's resolved host parameters, in the catalog's order (keys as the spec names them)."""
    return {p["name"]: p["values"] for p in catalog()["host_presets"]}


def _spec_key(key: str, values: dict[str, Any]) -> str:
    if key in _SPEC_KEY:
        return _SPEC_KEY[key]
    return f"{key}_ns" if f"{key}_ns" in values else key


def _host_value(key: str, value: Any, hz: int) -> str:
    if key == "start_jitter" and value == 1:
        # The catalog expands every preset for a group of base RTT 1 ns: a jitter of 1 is one group RTT.
        return "one group RTT"
    if key == "delack_granularity" and value:
        tick = 1_000_000_000 // hz
        return f"one tick ({format_duration(value)})" if value == tick else format_duration(value)
    if key == "nic_rate":
        return "0 (infinitely fast)" if value == 0 else format_rate(value)
    if key == "rmem":
        return ", ".join(str(v) for v in value) + " bytes"
    if isinstance(value, bool):
        return "`true`" if value else "`false`"
    if isinstance(value, str):
        return f'`"{value}"`'
    if isinstance(value, int) and key not in ("hz", "rcv_scaling_ratio", "rcv_initial_window"):
        return format_duration(value)
    return str(value)


def host_keys() -> list[str]:
    """The keys of a ``[host]`` table but ``preset``, in the document's order."""
    return [
        k["path"].removeprefix("host.")
        for k in catalog()["scenario_keys"]
        if k["path"].startswith("host.") and k["path"] != "host.preset"
    ]


def host_preset_rows() -> list[tuple[str, list[str]]]:
    """(key, its value under each preset, in the catalog's order), for the keys of ``[host]``."""
    presets = host_presets()
    rows = []
    for key in host_keys():
        values = []
        for p in presets.values():
            spec_key = _spec_key(key, p)
            values.append(_host_value(key, p[spec_key], p["hz"]) if spec_key in p else "")
        rows.append((key, values))
    return rows
