"""The ``ccfair`` command.

- ``ccfair run FILE [--seed N] [--out DIR] [--json] [--quiet]``: run a scenario; print tables (or one JSON
  document with ``--json``); save the run atomically into DIR with ``--out``
- ``ccfair list [--json]``: congestion controls and queue disciplines with their parameters
- ``ccfair bench [--quick] [--json]``: simulator speed on fixed scenarios

Exit codes: 0 success, 2 bad input (``error: <field>: <message>`` on stderr, nothing written), 130 Ctrl-C,
1 unexpected failure. Progress goes to stderr, and only when it is a terminal.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn

from ccfair import __version__
from ccfair.errors import ScenarioError
from ccfair.progress import ProgressBar
from ccfair.scenario import U64_MAX, Scenario, check_seed

EXIT_OK = 0
EXIT_FAILURE = 1
EXIT_BAD_INPUT = 2
EXIT_INTERRUPTED = 130


class _Parser(argparse.ArgumentParser):
    """argparse with this tool's error format and exit code for bad usage."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(EXIT_BAD_INPUT, f"error: {message}\n")


def _seed_arg(text: str) -> int:
    try:
        seed = int(text, 10)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer in [0, 2^64), got {text!r}") from None
    if not 0 <= seed <= U64_MAX:
        raise argparse.ArgumentTypeError(f"must be in [0, 2^64), got {seed}")
    return seed


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="ccfair", description="Congestion-control fairness lab.")
    parser.add_argument("--version", action="version", version=f"ccfair {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND", parser_class=_Parser)

    p = commands.add_parser("run", help="run a scenario file", description="Run a scenario file (TOML).")
    p.add_argument("file", metavar="FILE", help="scenario TOML file")
    p.add_argument("--seed", type=_seed_arg, help="master seed (default: the scenario's seed, else 1)")
    p.add_argument("--out", metavar="DIR", help="save the run into DIR (replaced atomically if it exists)")
    p.add_argument("--json", action="store_true", help="print one JSON document instead of tables")
    p.add_argument("--quiet", action="store_true", help="no progress bar or notes on stderr")
    p.set_defaults(handler=cmd_run)

    p = commands.add_parser("list", help="list congestion controls and queue disciplines")
    p.add_argument("--json", action="store_true", help="print the catalog as JSON")
    p.set_defaults(handler=cmd_list)

    p = commands.add_parser("bench", help="measure simulator speed on fixed scenarios")
    p.add_argument("--quick", action="store_true", help="only the two smaller scenarios (A and B)")
    p.add_argument("--json", action="store_true", help="print one JSON document instead of a table")
    p.add_argument("--quiet", action="store_true", help="no progress bar on stderr")
    p.set_defaults(handler=cmd_bench)
    return parser


def _progress(label: str, quiet: bool) -> ProgressBar | None:
    if quiet or not sys.stderr.isatty():
        return None
    return ProgressBar(sys.stderr, label=label)


def _note(message: str, quiet: bool) -> None:
    if not quiet:
        print(message, file=sys.stderr)


def _check_out_dir(path: str) -> Path:
    """Fails early (before any simulation) if DIR cannot be written."""
    out = Path(path)
    if out.exists() and not out.is_dir():
        raise ScenarioError("--out", f"{path} exists and is not a directory")
    ancestor = out.absolute().parent
    while not ancestor.exists():
        ancestor = ancestor.parent
    if not ancestor.is_dir():
        raise ScenarioError("--out", f"{ancestor} is not a directory")
    if not os.access(ancestor, os.W_OK | os.X_OK):
        raise ScenarioError("--out", f"cannot write in {ancestor}")
    return out


def _print_json(document: Any) -> None:
    sys.stdout.write(json.dumps(document, indent=2, allow_nan=False) + "\n")
    sys.stdout.flush()


def cmd_run(args: argparse.Namespace) -> int:
    scenario = Scenario.from_toml(args.file)
    seed = check_seed(scenario.effective_seed(args.seed))
    out = _check_out_dir(args.out) if args.out is not None else None

    from ccfair.report import run_report
    from ccfair.runner import run

    bar = _progress(Path(args.file).name, args.quiet)
    try:
        result = run(scenario, seed=seed, progress=bar)
    finally:
        if bar is not None:
            bar.close()
    if out is not None:
        saved = result.save(out)
        _note(f"saved to {saved}", args.quiet)
    if args.json:
        _print_json(result.to_json_dict())
    else:
        sys.stdout.write(run_report(result))
        sys.stdout.flush()
    return EXIT_OK


def cmd_list(args: argparse.Namespace) -> int:
    from ccfair.catalog import catalog
    from ccfair.report import catalog_report

    if args.json:
        _print_json(catalog())
    else:
        sys.stdout.write(catalog_report(catalog()))
        sys.stdout.flush()
    return EXIT_OK


def cmd_bench(args: argparse.Namespace) -> int:
    from ccfair.bench import bench_json, bench_report, benchmarks, run_benchmark

    results = []
    for mark in benchmarks(quick=args.quick):
        bar = _progress(f"{mark.name}: {mark.description}", args.quiet)
        try:
            results.append(run_benchmark(mark, progress=bar))
        finally:
            if bar is not None:
                bar.close()
    if args.json:
        _print_json(bench_json(results))
    else:
        sys.stdout.write(bench_report(results))
        sys.stdout.flush()
    return EXIT_OK


def main(argv: Sequence[str] | None = None) -> int:
    """Runs the command line; returns the exit code."""
    try:
        args = build_parser().parse_args(argv)
        handler: Callable[[argparse.Namespace], int] = args.handler
        return handler(args)
    except ScenarioError as e:
        print(f"error: {e.field}: {e.message}", file=sys.stderr)
        return EXIT_BAD_INPUT
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
