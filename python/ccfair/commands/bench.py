"""Simulator speed.

- ``ccfair bench [--quick] [--json]``: simulator speed on fixed scenarios
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ccfair.bench import bench_json, bench_report, benchmarks, run_benchmark
from ccfair.cli_support import EXIT_OK, examples, print_json, progress_bar


def register(commands: argparse._SubParsersAction[Any]) -> None:
    p = commands.add_parser(
        "bench",
        help="measure simulator speed on fixed scenarios",
        description="Run six fixed scenarios (A to F, from 2 flows at 10 Mbps to 1000 flows at 10 Gbps) and "
        "print events per wall-second and wall seconds per simulated second.",
        epilog=examples("ccfair bench", "ccfair bench --quick --json     # A and B only, for scripts"),
    )
    p.add_argument("--quick", action="store_true", help="only the two smaller scenarios (A and B)")
    p.add_argument("--json", action="store_true", help="print one JSON document instead of a table")
    p.add_argument("--quiet", action="store_true", help="no progress bar on stderr")
    p.set_defaults(handler=cmd_bench)


def cmd_bench(args: argparse.Namespace) -> int:

    results = []
    for mark in benchmarks(quick=args.quick):
        bar = progress_bar(f"{mark.name}: {mark.description}", args.quiet)
        try:
            results.append(run_benchmark(mark, progress=bar))
        finally:
            if bar is not None:
                bar.close()
    if args.json:
        print_json(bench_json(results))
    else:
        sys.stdout.write(bench_report(results))
        sys.stdout.flush()
    return EXIT_OK
