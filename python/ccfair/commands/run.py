"""Running one scenario.

- ``ccfair run FILE [--seed N] [--out DIR] [--json] [--quiet] [--backend sim|kernel] [--max-memory SIZE]
  [--max-events N]``: run a scenario; print tables (or one JSON document with ``--json``); save the run
  atomically into DIR with ``--out``; refuse a run whose estimated memory or events exceed the limits
  (:mod:`ccfair.resources`)
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ccfair.cli_support import (
    EXIT_OK,
    add_backend_option,
    add_command,
    add_limit_options,
    add_output_options,
    check_out_dir,
    note,
    print_json,
    seed_arg,
    showing_progress,
)
from ccfair.resources import limits as resource_limits
from ccfair.scenario import Scenario, check_seed, kernel_scenario

# This module is imported to build the parser: the runner and the results (NumPy) are imported by the
# handler, the tables only without --json, and the kernel backend (subprocesses, sockets, network
# namespaces) only for --backend kernel, so that every command starts fast.


def register(commands: argparse._SubParsersAction[Any]) -> None:
    p = add_command(commands, "run", cmd_run)
    p.add_argument("file", metavar="FILE", help="scenario TOML file")
    p.add_argument("--seed", type=seed_arg, help="master seed (default: the scenario's seed, else 1)")
    p.add_argument(
        "--out",
        metavar="DIR",
        help="save the run into DIR: a new or empty directory, or a run saved before (replaced atomically); "
        "any other directory is refused",
    )
    add_output_options(
        p, json="print one JSON document instead of tables", quiet="no progress bar or notes on stderr"
    )
    add_backend_option(p, "simulator, or Linux TCP (root; see `ccfair doctor`)")
    add_limit_options(p)


def cmd_run(args: argparse.Namespace) -> int:
    from ccfair.result import RUN_KIND  # NumPy: not when the parser loads
    from ccfair.runner import run

    if args.backend == "kernel":
        scenario: Scenario = kernel_scenario(args.file)
    else:
        scenario = Scenario.from_toml(args.file)
    seed = check_seed(scenario.effective_seed(args.seed))
    out = None
    if args.out is not None:
        out = check_out_dir(args.out, RUN_KIND)
    limits = resource_limits(args.max_memory, args.max_events)

    with showing_progress(Path(args.file).name, args.quiet) as bar:
        result = run(scenario, seed=seed, progress=bar, backend=args.backend, limits=limits)
    if out is not None:
        saved = result.save(out, option="--out")
        note(f"saved to {saved}", args.quiet)
    if args.json:
        print_json(result.to_json_dict())
    else:
        from ccfair.report import run_report  # the tables: not needed for --json

        sys.stdout.write(run_report(result))
        if args.backend == "kernel":
            from ccfair.emu.report import kernel_report

            sys.stdout.write(kernel_report(result))
        sys.stdout.flush()
    return EXIT_OK
