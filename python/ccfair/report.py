"""Readable text for the command line: a run's tables and summary, and the catalog of algorithms."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ccfair.analysis.metrics import SHORT_WINDOW_BACKLOG_SHARE, SHORT_WINDOW_RTTS, link_payload_bytes
from ccfair.analysis.schema import SUMMARY
from ccfair.columns import class_table_columns, flow_table_columns, shows_ecn, summary_pairs
from ccfair.result import RunResult
from ccfair.tables import MISSING, Column, fixed, integer, render, render_pairs, text
from ccfair.units import format_duration, format_rate, format_size

MAX_FLOW_ROWS = 50


def run_report(result: RunResult) -> str:
    """Flows, classes and summary of a run as aligned text tables."""
    sc = result.scenario
    start_ns, end_ns = sc.measure_window_ns()
    flows = result.flows
    rows = flows.head(MAX_FLOW_ROWS).to_dict("records")
    ecn = shows_ecn(sc, result.summary)
    parts = [
        f"Link {format_rate(sc.link.rate_bps)}, buffer {sc.link.buffer} "
        f"({_limit_text(sc.buffer_limit())}), {sc.link.aqm.name}; {sc.flow_count()} flows; "
        f"{format_duration(sc.duration_ns)} simulated, seed {result.seed}",
        f"Measurement window {format_duration(start_ns)} to {format_duration(end_ns)}",
        *_short_window_note(result),
        "",
        "Flows",
        render(rows, flow_table_columns(flows, ecn)),
    ]
    if len(flows) > MAX_FLOW_ROWS:
        parts.append(f"  ... {len(flows) - MAX_FLOW_ROWS} more flows (all of them with --json or --out)")
    parts += [
        "",
        "Classes (the flows in the window by cc and rtt)",
        render(result.classes.to_dict("records"), class_table_columns(ecn)),
    ]
    dynamic = result.dynamic
    parts += ["", "Summary", render_pairs(_with_dynamic_jain(summary_pairs(result.summary, ecn), dynamic))]
    if dynamic is not None:
        parts += ["", "Dynamic traffic (flows active at each moment; completion times)"]
        parts.append(render_pairs(_dynamic_pairs(dynamic)))
        parts.append(render(dynamic["groups"], DYNAMIC_GROUP_COLUMNS))
    return "\n".join(parts) + "\n"


DYNAMIC_GROUP_COLUMNS = [
    Column("group", "group", integer),
    Column("finite", "finite_flows", integer),
    Column("completed", "completed", integer),
    Column("fct mean ms", "fct_mean_ns", fixed(1, 1e6)),
    Column("fct p50 ms", "fct_p50_ns", fixed(1, 1e6)),
    Column("fct p99 ms", "fct_p99_ns", fixed(1, 1e6)),
    Column("nfct mean", "nfct_mean", fixed(2)),
    Column("nfct p99", "nfct_p99", fixed(2)),
]


def _dynamic_pairs(dynamic: Mapping[str, Any]) -> list[tuple[str, str]]:
    jain = dynamic["active_jain_mean"]
    return [
        ("jain over active flows", f"{fixed(3)(jain)} (mean of {dynamic['competing_bins']} intervals)"),
        ("flows completed", integer(dynamic["flows_completed"])),
        ("flows not started", integer(dynamic["flows_not_started"])),
    ]


def _with_dynamic_jain(
    pairs: list[tuple[str, str]], dynamic: Mapping[str, Any] | None
) -> list[tuple[str, str]]:
    """The summary's lines; with finite flows or arrivals, the Jain index line also gives the one among the
    flows active at each moment (the window's weighs a short transfer's goodput over the whole window)."""
    if dynamic is None:
        return pairs
    label = next(c.shown.label for c in SUMMARY if c.name == "jain_index" and c.shown is not None)
    moment = fixed(3)(dynamic["active_jain_mean"])
    return [
        (name, f"{value}  (over the window; {moment} among the flows active at each moment)")
        if name == label
        else (name, value)
        for name, value in pairs
    ]


def _short_window_note(result: RunResult) -> list[str]:
    """A note under the window line when the summary flags it short (see ``window_short``)."""
    summary = result.summary
    if not summary.get("window_short"):
        return []
    start_ns, end_ns = result.scenario.measure_window_ns()
    backlog = summary.get("window_backlog_bytes")
    capacity = link_payload_bytes(result.scenario, end_ns - start_ns)
    if backlog is not None and capacity > 0 and backlog > SHORT_WINDOW_BACKLOG_SHARE * capacity:
        why = (
            f"{backlog:,} payload bytes ({backlog / capacity:.0%} of the window's link capacity) had crossed "
            "the link undelivered when it opened; delivered in order within it, they can lift goodput above "
            "the link's payload rate"
        )
    else:
        why = f"it spans fewer than {SHORT_WINDOW_RTTS} round trips of its slowest flow"
    return [f"Note: a short window for a stable goodput: {why} (docs/explanation/metrics.md)"]


def _limit_text(limit: Mapping[str, int]) -> str:
    if "packets" in limit:
        return f"{limit['packets']:,} packets"
    return f"{limit['bytes']:,} bytes"


def _default_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return MISSING if value is None else str(value)


def _qdisc_param(p: Mapping[str, Any], defaults: Mapping[str, Any]) -> dict[str, Any]:
    """A queue discipline's parameter for the listing: the name a scenario writes, with the registry's name
    that carries its unit as the accepted alias (``target (or target_ns)``), and its default in that unit."""
    alias, unit = p.get("alias"), p.get("unit")
    value = defaults.get(alias or p["name"])
    shown = _default_text(value)
    if isinstance(value, int) and not isinstance(value, bool) and unit is not None:
        shown = {"ns": format_duration, "bit/s": format_rate, "bytes": format_size}[unit](value)
    name = p["name"] if alias is None else f"{p['name']} (or {alias})"
    return {**p, "name": name, "default": shown}


def catalog_report(catalog: Mapping[str, Any]) -> str:
    """The congestion controls and queue disciplines with their parameters, allowed values and defaults."""
    param_columns = [
        Column("parameter", "name", text, "left"),
        Column("default", "default", text, "left"),
        Column("allowed", "allowed", text, "left"),
        Column("meaning", "doc", text, "left"),
    ]
    parts = ["Congestion controls (flows[].cc, parameters in flows[].cc_params)"]
    for cc in catalog["congestion_controls"]:
        aliases = f" (aliases: {', '.join(cc['aliases'])})" if cc["aliases"] else ""
        parts += ["", f"  {cc['name']}{aliases}: {cc['summary']}", f"    source: {cc['source']}"]
        params = [{**p, "default": _default_text(cc["defaults"].get(p["name"]))} for p in cc["params"]]
        parts.append(render(params, param_columns, indent="    ") if params else "    no parameters")
    parts += ["", 'Queue disciplines (link.aqm; a parameter with a unit takes it: target = "5ms")']
    for q in catalog["queue_disciplines"]:
        parts += ["", f"  {q['name']}: {q['summary']}", f"    source: {q['source']}"]
        params = [_qdisc_param(p, q.get("defaults", {})) for p in q["params"]]
        parts.append(render(params, param_columns, indent="    ") if params else "    no parameters")
    parts += ["", *profiles_report(catalog.get("flow_profiles", []))]
    return "\n".join(parts) + "\n"


def profiles_report(profiles: list[Mapping[str, Any]]) -> list[str]:
    """The flow profiles (``flows[].profile``): each key's value and source, assumed values marked."""
    lines = ["Flow profiles (flows[].profile: laid under the group's own keys, a key the group writes wins)"]
    for p in profiles:
        status = (
            "2019 reconstruction, not the provider's stack"
            if p["kind"] == "reconstruction2019"
            else "generic"
        )
        lines += ["", f"  {p['name']}: {p['summary']} ({status})"]
        for key in ("cc", "initial_window", "pacing"):
            v = p[key]
            value = str(v["value"]).lower() if isinstance(v["value"], bool) else str(v["value"])
            how = "assumed: " if v["assumed"] else "source: "
            lines.append(f"    {key} = {value}  ({how}{v['source']})")
        lines.append(f"    not modelled: {p['not_modelled']}")
    return lines
