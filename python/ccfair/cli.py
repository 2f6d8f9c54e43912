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
from collections.abc import Sequence

from ccfair import __version__
from ccfair.cli_support import (
    EXIT_BAD_INPUT,
    EXIT_FAILURE,
    EXIT_INTERRUPTED,
    Handler,
    Parser,
)
from ccfair.commands import register_all
from ccfair.errors import InputError, OutputError
from ccfair.terminal import printable, printable_lines


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The ``ccfair`` parser, with every command; given the command line ``argv`` that will be parsed, with
    only the commands it can name (its first argument's, when that is one): a command line pays for
    importing and building its own command only."""
    parser = Parser(prog="ccfair", description="Congestion-control fairness lab.")
    parser.add_argument("--version", action="version", version=f"ccfair {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND", parser_class=Parser)

    register_all(commands, only=argv[0] if argv else None)
    return parser


# OpenBLAS (NumPy's) starts a thread per core that busy-waits after it is loaded, whether or not any BLAS
# work comes: about 0.1 s of a second core per `ccfair` process, taken from the other worker of a sweep.
# ccfair does no linear algebra worth a thread, so its processes ask for one, before NumPy loads (a command's
# handler loads it). A value the user set is kept.
BLAS_THREADS_ENV = "OPENBLAS_NUM_THREADS"


def main(argv: Sequence[str] | None = None) -> int:
    """Runs the command line; returns the exit code."""
    os.environ.setdefault(BLAS_THREADS_ENV, "1")
    try:
        arguments = sys.argv[1:] if argv is None else list(argv)
        args = build_parser(arguments).parse_args(arguments)
        handler: Handler = args.handler
        try:
            return handler(args)
        finally:
            if argv is None and args.command == "run":
                _end_promptly()
    except InputError as e:
        # A message may quote a results directory's contents (a plan's name, a stored error): escaped.
        print(f"error: {printable(e.field)}: {printable_lines(e.message)}", file=sys.stderr)
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
        print(f"error: unexpected failure: {type(e).__name__}: {printable_lines(str(e))}", file=sys.stderr)
        return EXIT_FAILURE


def _end_promptly() -> None:
    """``ccfair run`` ends next. Python's shutdown would walk every object of every loaded module in its
    final garbage collections: about half a second once pandas is loaded, most of the time Ctrl-C took to
    end a run. Frozen objects are left out of those collections (memory goes back to the OS with the
    process). Only for ``run``: DuckDB's binding, which the store commands load, reports objects it sees
    survive shutdown as leaks."""
    gc.freeze()
