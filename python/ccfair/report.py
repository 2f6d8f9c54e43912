"""Readable text for the command line: a run's tables and summary, and the catalog of algorithms."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from ccfair.analysis.metrics import SHORT_WINDOW_BACKLOG_SHARE, SHORT_WINDOW_RTTS, link_payload_bytes
from ccfair.result import RunResult
from ccfair.tables import MISSING, Column, fixed, integer, is_missing, render, render_pairs, text
from ccfair.units import format_duration, format_rate

MAX_FLOW_ROWS = 50


def flow_table_columns(with_labels: bool) -> list[Column]:
    columns = [Column("flow", "flow_id", integer), Column("group", "group", integer)]
    if with_labels:
        columns.append(Column("label", "label", text, "left"))
    columns += [
        Column("cc", "cc", text, "left"),
        Column("rtt ms", "rtt_ns", fixed(1, 1e6)),
        Column("goodput Mbps", "goodput_bps", fixed(3, 1e6)),
        Column("share", "share", fixed(3)),
        Column("retrans", "retransmissions", integer),
        Column("drops", "drops", integer),
        Column("rtt mean ms", "rtt_mean_ms", fixed(1)),
        Column("rtt p99 ms", "rtt_p99_ms", fixed(1)),
    ]
    return columns


CLASS_COLUMNS = [
    Column("cc", "cc", text, "left"),
    Column("rtt ms", "rtt_ns", fixed(1, 1e6)),
    Column("flows", "flows", integer),
    Column("goodput Mbps", "goodput_bps", fixed(3, 1e6)),
    Column("rel goodput", "relative_goodput", fixed(3)),
    Column("share", "share", fixed(3)),
    Column("jain", "jain_index", fixed(3)),
]


def summary_pairs(summary: Mapping[str, Any]) -> list[tuple[str, str]]:
    def num(key: str, digits: int, scale: float = 1.0, unit: str = "") -> str:
        value = summary.get(key)
        return MISSING if is_missing(value) else fixed(digits, scale)(value) + unit

    pairs = [
        ("jain index", num("jain_index", 3)),
        ("utilization", num("utilization", 2, 0.01, " %")),
        ("total goodput", num("total_goodput_bps", 3, 1e6, " Mbps")),
        ("queue sojourn p50", num("queue_sojourn_p50_ns", 2, 1e6, " ms")),
        ("queue sojourn p99", num("queue_sojourn_p99_ns", 2, 1e6, " ms")),
        ("drops", integer(summary.get("drops"))),
        ("retransmissions", integer(summary.get("retransmissions"))),
    ]
    if "fness" in summary:
        pairs.append(("fness (flow 0 vs 1)", num("fness", 3)))
    # An absent value reads as NaN, which the formatters show as missing and the rate skips.
    events, wall = summary.get("events", math.nan), summary.get("wall_seconds", math.nan)
    pairs.append(("events", integer(events)))
    rate = ""
    if not is_missing(events) and not is_missing(wall) and wall > 0:
        rate = f"  ({events / wall / 1e6:.2f} M events/s)"
    pairs.append(("wall time", num("wall_seconds", 3, 1.0, " s") + rate))
    return pairs


def run_report(result: RunResult) -> str:
    """Flows, classes and summary of a run as aligned text tables."""
    sc = result.scenario
    start_ns, end_ns = sc.measure_window_ns()
    flows = result.flows
    with_labels = bool(flows["label"].notna().any())
    rows = flows.head(MAX_FLOW_ROWS).to_dict("records")
    parts = [
        f"Link {format_rate(sc.link.rate_bps)}, buffer {sc.link.buffer} "
        f"({_limit_text(sc.buffer_limit())}), {sc.link.aqm.name}; {sc.flow_count()} flows; "
        f"{format_duration(sc.duration_ns)} simulated, seed {result.seed}",
        f"Measurement window {format_duration(start_ns)} to {format_duration(end_ns)}",
        *_short_window_note(result),
        "",
        "Flows",
        render(rows, flow_table_columns(with_labels)),
    ]
    if len(flows) > MAX_FLOW_ROWS:
        parts.append(f"  ... {len(flows) - MAX_FLOW_ROWS} more flows (all of them with --json or --out)")
    parts += [
        "",
        "Classes (active flows by cc and rtt)",
        render(result.classes.to_dict("records"), CLASS_COLUMNS),
    ]
    parts += ["", "Summary", render_pairs(summary_pairs(result.summary))]
    dynamic = result.dynamic
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
    return [f"Note: a short window for a stable goodput: {why} (README, Metrics)"]


def _limit_text(limit: Mapping[str, int]) -> str:
    if "packets" in limit:
        return f"{limit['packets']:,} packets"
    return f"{limit['bytes']:,} bytes"


def _default_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return MISSING if value is None else str(value)


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
    parts += ["", "Queue disciplines (link.aqm)"]
    for q in catalog["queue_disciplines"]:
        parts += ["", f"  {q['name']}: {q['summary']}", f"    source: {q['source']}"]
        params = [{**p, "default": _default_text(q.get("defaults", {}).get(p["name"]))} for p in q["params"]]
        parts.append(render(params, param_columns, indent="    ") if params else "    no parameters")
    return "\n".join(parts) + "\n"
