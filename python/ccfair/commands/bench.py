"""Simulator speed.

- ``ccfair bench [--quick | --case NAME ...] [--flows N] [--duration D] [--preset P] [--repeat N] [--steady]
  [--memory] [--json] [--list]``: simulator speed on fixed scenarios (with ``--repeat`` the median of
  interleaved runs, with ``--steady`` also each case's second half alone), and with ``--memory`` what a
  cache line costs this machine
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from ccfair import speed
from ccfair.cli_support import (
    EXIT_OK,
    add_command,
    add_limit_options,
    add_output_options,
    positive_int,
    print_json,
    showing_progress,
)
from ccfair.errors import InputError

if TYPE_CHECKING:
    from ccfair.bench import BenchResult

# The cases, the simulator and NumPy are imported by the handler: every command module is imported to build
# the parser.


def register(commands: argparse._SubParsersAction[Any]) -> None:
    p = add_command(commands, "bench", cmd_bench)
    which = p.add_mutually_exclusive_group()
    which.add_argument("--quick", action="store_true", help="only the two smaller scenarios (A and B)")
    which.add_argument(
        "--case",
        action="append",
        metavar="NAME",
        help="run this case (repeatable; A to F, corescale, flows100k; see --list)",
    )
    p.add_argument(
        "--flows", type=positive_int, metavar="N", help="the flow count of corescale and flows100k"
    )
    p.add_argument("--duration", metavar="D", help="the simulated time of corescale and flows100k (e.g. 5s)")
    p.add_argument(
        "--preset",
        metavar="P",
        help="run the cases with this [host] preset (kernel-lab, ideal, testbed, home; default: ideal hosts)",
    )
    p.add_argument(
        "--repeat",
        type=positive_int,
        default=1,
        metavar="N",
        help="run every case N times, the cases interleaved, and report the median wall with every run's",
    )
    p.add_argument(
        "--steady",
        action="store_true",
        help="also run each case cut at half its duration and report the second half alone (the cost per "
        "event without start-up)",
    )
    p.add_argument(
        "--memory",
        action="store_true",
        help="also measure what a random cache line costs at working sets of 1 MiB to 512 MiB (alone unless "
        "--quick or --case chooses cases too)",
    )
    p.add_argument("--list", action="store_true", help="list the cases and exit")
    add_output_options(
        p, json="print one JSON document instead of a table", quiet="no progress bar on stderr"
    )
    add_limit_options(p)


def cmd_bench(args: argparse.Namespace) -> int:
    from ccfair import bench
    from ccfair.resources import limits as resource_limits

    if args.list:
        sys.stdout.write(bench.cases_report(bench.all_cases()))
        return EXIT_OK
    only_memory = args.memory and args.case is None and not args.quick
    if only_memory:
        case_options = {
            "--flows": args.flows,
            "--duration": args.duration,
            "--preset": args.preset,
            "--repeat": args.repeat if args.repeat != 1 else None,
            "--steady": True if args.steady else None,
        }
        for option, value in case_options.items():
            if value is not None:
                raise InputError(
                    option, "applies to cases, and --memory alone runs none; choose them with --case"
                )
    marks = (
        []
        if only_memory
        else bench.select(
            args.case, quick=args.quick, flows=args.flows, duration=args.duration, preset=args.preset
        )
    )
    if args.steady:  # each case's first half runs too, just before it
        marks = [m for mark in marks for m in (bench.first_half(mark), mark)]
    limits = resource_limits(args.max_memory, args.max_events)
    for mark in marks:  # every case checked, and refused if it cannot fit, before the first runs
        bench.check_case(mark, limits)
    if args.memory:
        bench.check_memory_probe(limits)
    runs: list[list[BenchResult]] = [[] for _ in marks]
    for repetition in range(args.repeat):  # interleaved, so that a machine's drift spreads over every case
        for i, mark in enumerate(marks):
            if mark.measure_memory:
                runs[i].append(bench.run_in_child(mark, quiet=args.quiet, limits=limits))
                continue
            label = f"{mark.name}: {mark.description}"
            if args.repeat > 1:
                label += f" (run {repetition + 1} of {args.repeat})"
            with showing_progress(label, args.quiet) as bar:
                runs[i].append(bench.run_benchmark(mark, progress=bar, limits=limits))
    results = [bench.combine(case_runs) for case_runs in runs]
    if results and args.preset is None and args.flows is None and args.duration is None:
        # The cases as they come measure this host's speed, which estimates then quote (ccfair.speed).
        speed.record(bench.speed_of(results))
    steady = None
    if args.steady:
        halves, results = results[0::2], results[1::2]
        steady = [bench.steady_state(whole, half) for whole, half in zip(results, halves, strict=True)]
    costs = None
    if args.memory:
        with showing_progress("memory: a random cache line, 1 MiB to 512 MiB", args.quiet) as bar:
            costs = bench.memory_probe(progress=bar)
    if args.json:
        document = bench.bench_json(results)
        if steady is not None:
            document["steady_state"] = bench.steady_json(steady)
        if costs is not None:
            document["memory_probe"] = bench.memory_json(costs)
        print_json(document)
    else:
        if results:
            sys.stdout.write(bench.bench_report(results))
        if steady is not None:
            sys.stdout.write("\n" + bench.steady_report(steady))
        if costs is not None:
            sys.stdout.write(("\n" if results else "") + bench.memory_report(costs))
        sys.stdout.flush()
    return EXIT_OK
