"""The ``ccfair`` command.

- ``ccfair run FILE [--seed N] [--out DIR] [--json] [--quiet] [--max-memory SIZE] [--max-events N]``: run a
  scenario; print tables (or one JSON document with ``--json``); save the run atomically into DIR with
  ``--out``; refuse a run whose estimated memory or events exceed the limits (:mod:`ccfair.resources`)
- ``ccfair list [--json]``: congestion controls and queue disciplines with their parameters
- ``ccfair bench [--quick] [--json]``: simulator speed on fixed scenarios
- more commands from the modules of :mod:`ccfair.commands` (each registers its own subparsers)

Exit codes: 0 success, 2 bad input (``error: <field>: <message>`` on stderr, nothing written; an output path
that would replace what ccfair did not write is bad input too), 130 Ctrl-C, 1 a failure while writing output
(a full disk: ``error: <option>: ...``) or an unexpected failure. Progress goes to stderr, and only when it
is a terminal.
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path

from ccfair import __version__
from ccfair.cli_support import (
    EXIT_BAD_INPUT,
    EXIT_FAILURE,
    EXIT_INTERRUPTED,
    EXIT_OK,
    Parser,
    add_limit_options,
    check_out_dir,
    examples,
    note,
    print_json,
    progress_bar,
    seed_arg,
)
from ccfair.commands import register_all
from ccfair.errors import OutputError, ScenarioError
from ccfair.resources import limits as resource_limits
from ccfair.scenario import Scenario, check_seed


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="ccfair", description="Congestion-control fairness lab.")
    parser.add_argument("--version", action="version", version=f"ccfair {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND", parser_class=Parser)

    p = commands.add_parser(
        "run",
        help="run a scenario file",
        description="Run a scenario file (TOML) and print the flows, classes and summary tables: goodput, "
        "shares, Jain's index, utilization, queueing delay. Same scenario and seed, same numbers. `ccfair "
        "init` writes an annotated scenario to start from.",
        epilog=examples(
            "ccfair run scenarios/two-flows-reno-vs-cubic.toml            # tables on the terminal",
            "ccfair run scenario.toml --seed 7 --out runs/first             # also save everything",
            "ccfair run scenario.toml --json > result.json                  # one JSON document",
            'sudo "$(command -v ccfair)" run scenario.toml --backend kernel  # real Linux TCP (root)',
        ),
    )
    p.add_argument("file", metavar="FILE", help="scenario TOML file")
    p.add_argument("--seed", type=seed_arg, help="master seed (default: the scenario's seed, else 1)")
    p.add_argument(
        "--out",
        metavar="DIR",
        help="save the run into DIR: a new or empty directory, or a run saved before (replaced atomically); "
        "any other directory is refused",
    )
    p.add_argument("--json", action="store_true", help="print one JSON document instead of tables")
    p.add_argument("--quiet", action="store_true", help="no progress bar or notes on stderr")
    p.add_argument(
        "--backend",
        choices=("sim", "kernel"),
        default="sim",
        help="simulator, or Linux TCP (root; see README)",
    )
    add_limit_options(p)
    p.set_defaults(handler=cmd_run)

    p = commands.add_parser(
        "list",
        help="list congestion controls and queue disciplines",
        description="List the congestion controls (flows[].cc) and queue disciplines (link.aqm) with their "
        "sources and parameters: defaults, allowed values and meaning (flows[].cc_params, link.aqm tables).",
        epilog=examples("ccfair list", "ccfair list --json > catalog.json"),
    )
    p.add_argument("--json", action="store_true", help="print the catalog as JSON")
    p.set_defaults(handler=cmd_list)

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

    register_all(commands)
    return parser


def cmd_run(args: argparse.Namespace) -> int:
    if args.backend == "kernel":
        from ccfair.emu import kernel_scenario

        scenario: Scenario = kernel_scenario(args.file)
    else:
        scenario = Scenario.from_toml(args.file)
    seed = check_seed(scenario.effective_seed(args.seed))
    out = None
    if args.out is not None:
        from ccfair.result import RUN_KIND

        out = check_out_dir(args.out, RUN_KIND)
    limits = resource_limits(args.max_memory, args.max_events)

    from ccfair.report import run_report
    from ccfair.runner import run

    bar = progress_bar(Path(args.file).name, args.quiet)
    try:
        result = run(scenario, seed=seed, progress=bar, backend=args.backend, limits=limits)
    finally:
        if bar is not None:
            bar.close()
    if out is not None:
        saved = result.save(out, option="--out")
        note(f"saved to {saved}", args.quiet)
    if args.json:
        print_json(result.to_json_dict())
    else:
        sys.stdout.write(run_report(result))
        if args.backend == "kernel":
            from ccfair.emu.report import kernel_report

            sys.stdout.write(kernel_report(result))
        sys.stdout.flush()
    return EXIT_OK


def cmd_list(args: argparse.Namespace) -> int:
    from ccfair.catalog import catalog
    from ccfair.report import catalog_report

    if args.json:
        print_json(catalog())
    else:
        sys.stdout.write(catalog_report(catalog()))
        sys.stdout.flush()
    return EXIT_OK


def cmd_bench(args: argparse.Namespace) -> int:
    from ccfair.bench import bench_json, bench_report, benchmarks, run_benchmark

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


def main(argv: Sequence[str] | None = None) -> int:
    """Runs the command line; returns the exit code."""
    try:
        args = build_parser().parse_args(argv)
        handler: Callable[[argparse.Namespace], int] = args.handler
        try:
            return handler(args)
        finally:
            if argv is None and args.command == "run":
                _end_promptly()
    except ScenarioError as e:
        print(f"error: {e.field}: {e.message}", file=sys.stderr)
        return EXIT_FAILURE if isinstance(e, OutputError) else EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print("\ninterrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # The reader went away (e.g. `| head`): stop quietly, without a second error at exit.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_FAILURE
    except Exception as e:
        traceback.print_exc(file=sys.stderr)
        print(f"error: unexpected failure: {type(e).__name__}: {e}", file=sys.stderr)
        return EXIT_FAILURE


def _end_promptly() -> None:
    """``ccfair run`` ends next. Python's shutdown would walk every object of every loaded module in its
    final garbage collections: about half a second once pandas is loaded, most of the time Ctrl-C took to
    end a run. Frozen objects are left out of those collections (memory goes back to the OS with the
    process). Only for ``run``: DuckDB's binding, which the store commands load, reports objects it sees
    survive shutdown as leaks."""
    gc.freeze()
