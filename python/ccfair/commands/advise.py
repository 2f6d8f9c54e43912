"""``ccfair advise``: which queue discipline and buffer size give acceptable fairness for a traffic mix?

- ``ccfair advise --rate RATE --rtt RTT[,RTT...] --mix CC:N[,CC:N...] [--min-jain J] [--max-delay D]
  [--min-utilization U] [--aqms A,...] [--buffers B,...] [--duration D] [--out DIR] [--jobs N | --cluster
  ADDRESS] [--figure FILE] [--json] [--dry-run] [--quiet] [--time-limit D] [limits]``

The search and its analysis are :mod:`ccfair.studies.advise`; the runs go into the results directory as one
plan, so a second call reuses every run it shares with the first.
"""

from __future__ import annotations

import argparse
import math
import sys
from typing import Any

from ccfair.cli_plans import add_figure_option, add_sweep_options, check_figure
from ccfair.cli_support import (
    EXIT_OK,
    add_command,
    check_out_dir,
    finite_float,
    note,
    print_json,
)
from ccfair.errors import InputError
from ccfair.studies.advise_space import DEFAULT_AQMS, DEFAULT_BUFFERS, SPACE
from ccfair.units import format_duration, parse_buffer, parse_duration_ns, parse_rate_bps, whole_number


def register(commands: argparse._SubParsersAction[Any]) -> None:
    searched = "; ".join(
        f"{name}: "
        + (", ".join(" ".join(f"{k}={v}" for k, v in p.items()) for p in params) if params[0] else "-")
        for name, params in SPACE.items()
    )
    p = add_command(commands, "advise", cmd_advise, searched=searched)
    p.add_argument("--rate", required=True, help="bottleneck rate, e.g. 1Gbps")
    p.add_argument("--rtt", required=True, help="base RTTs, comma separated; each is a separate condition")
    p.add_argument(
        "--mix", required=True, metavar="CC:N,...", help="the traffic: flows per congestion control"
    )
    p.add_argument(
        "--min-jain", type=finite_float, metavar="J", help="constraint: Jain's index at least J (0..1]"
    )
    p.add_argument("--max-delay", metavar="D", help="constraint: queueing delay p99 at most D, e.g. 20ms")
    p.add_argument(
        "--min-utilization", type=finite_float, metavar="U", help="constraint: utilization at least U (0..1]"
    )
    p.add_argument("--aqms", help=f"queue disciplines to search (default: {','.join(DEFAULT_AQMS)})")
    p.add_argument("--buffers", help=f"buffer sizes to search (default: {','.join(DEFAULT_BUFFERS)})")
    p.add_argument("--duration", default="30s", help="each run's length (default 30s)")
    add_figure_option(p, "the figure of the front")
    add_sweep_options(p)


def _items(value: str, option: str) -> list[str]:
    items = [x.strip() for x in value.split(",") if x.strip()]
    if not items:
        raise InputError(option, "give at least one value")
    if len(set(items)) < len(items):
        raise InputError(option, "a value appears twice")
    return items


def _mix(value: str) -> list[dict[str, Any]]:
    # The study modules load when a study runs, not when the parser imports this module.
    from ccfair.studies.harm_plan import group_from_cc

    groups = []
    for item in _items(value, "--mix"):
        cc, sep, count_text = item.partition(":")
        count = whole_number(count_text) if sep else None
        if count is None or count < 1:
            raise InputError("--mix", f"expected CC:N with N a positive integer, got {item!r}")
        group = group_from_cc(cc.strip(), "--mix")
        groups.append({**group, "count": count, "label": cc.strip()})
    return groups


def _fraction(value: float | None, option: str) -> float | None:
    if value is not None and not (math.isfinite(value) and 0.0 < value <= 1.0):
        raise InputError(option, f"must be in (0, 1], got {value}")
    return value


def cmd_advise(args: argparse.Namespace) -> int:
    # pandas and DuckDB: only in the handler (the parser imports every command module)
    from ccfair.store.layout import RESULTS_KIND
    from ccfair.studies.advise import advice_text, advise, advise_plan, config_json, configurations, variants
    from ccfair.studies.run import dry_run, run_plans

    parse_rate_bps(args.rate, "--rate")
    rtts = _items(args.rtt, "--rtt")
    for r in rtts:
        parse_duration_ns(r, "--rtt")
    mix = _mix(args.mix)
    min_jain = _fraction(args.min_jain, "--min-jain")
    min_util = _fraction(args.min_utilization, "--min-utilization")
    max_delay_ms = None if args.max_delay is None else parse_duration_ns(args.max_delay, "--max-delay") / 1e6
    duration = format_duration(parse_duration_ns(args.duration, "--duration"))
    aqms = variants(_items(args.aqms, "--aqms") if args.aqms else DEFAULT_AQMS)
    buffers = _items(args.buffers, "--buffers") if args.buffers else list(DEFAULT_BUFFERS)
    for b in buffers:
        parse_buffer(b, "--buffers")
    constraints = {"min_jain": min_jain, "max_delay_ms": max_delay_ms, "min_utilization": min_util}
    plan = advise_plan(args.rate, rtts, mix, duration, aqms, buffers, constraints)
    out = check_out_dir(args.out, RESULTS_KIND, replace=False)
    figure = check_figure(args.figure, out, plan.name)
    if args.dry_run:
        return dry_run([plan], out, args)
    run_plans([plan], out, args)
    result = advise(
        configurations(out, plan.name, aqms, buffers, len(rtts)), min_jain, max_delay_ms, min_util
    )
    title = f"{args.mix} on {args.rate}, RTT {', '.join(rtts)}"
    if figure is not None:
        from ccfair.plots.output import save_figure
        from ccfair.studies.figures import front_figure

        save_figure(front_figure(result, title), figure, "--figure")
        note(f"figure: {figure}", args.quiet)
    if args.json:
        print_json(
            {
                "plan": plan.name,
                "meets": result.recommended is not None,
                "recommended": config_json(result.recommended),
                "margins": result.margins,
                "closest": config_json(result.closest),
                "shortfalls": result.shortfalls,
                "front": [config_json(c) for c in result.front],
                "configurations": [config_json(c) for c in result.configs],
            }
        )
        return EXIT_OK
    sys.stdout.write(advice_text(result, title))
    sys.stdout.flush()
    return EXIT_OK
