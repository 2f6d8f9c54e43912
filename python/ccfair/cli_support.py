"""What every ``ccfair`` subcommand shares: exit codes, the argument parser class, a command's parser with
its examples and handler, the options several commands take (``--json`` and ``--quiet``, the limits), seed
parsing, progress, notes on stderr, early checks of output directories, JSON on stdout. What the commands
that run plans share is :mod:`ccfair.cli_plans`."""

from __future__ import annotations

import argparse
import contextlib
import functools
import json
import math
import sys
import tomllib
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any, NoReturn

from ccfair import fsio
from ccfair.errors import InputError
from ccfair.progress import ProgressBar
from ccfair.scenario import U64_MAX
from ccfair.sweep.identity import BACKENDS, SIMULATOR
from ccfair.units import decimal_number, whole_number

EXIT_OK = 0
EXIT_FAILURE = 1
EXIT_BAD_INPUT = 2
EXIT_INTERRUPTED = 130


class HelpFormatter(argparse.HelpFormatter):
    """Wraps the paragraphs of a description or epilog, but keeps indented lines (examples) as written."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        paragraphs = []
        for paragraph in text.split("\n\n"):
            if any(line.startswith(" ") for line in paragraph.splitlines()):
                paragraphs.append("\n".join(indent + line for line in paragraph.splitlines()))
            else:
                paragraphs.append(super()._fill_text(paragraph, width, indent))
        return "\n\n".join(paragraphs)


def examples_epilog(*lines: str) -> str:
    """An epilog listing example command lines (``"ccfair run x.toml   # what it does"``)."""
    return "examples:\n" + "\n".join(f"  {line}" for line in lines)


class Parser(argparse.ArgumentParser):
    """argparse with this tool's error format and exit code for bad usage, and help that keeps examples
    as written."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", HelpFormatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        # argparse words an option's rejected value "argument --x: ..."; every other input error of this tool
        # reads "error: <field>: <message>", so the option is named the same way.
        message = message.removeprefix("argument ")
        self.print_usage(sys.stderr)
        self.exit(EXIT_BAD_INPUT, f"error: {message}\n")


Handler = Callable[[argparse.Namespace], int]
"""What a command runs: the parsed arguments in, the exit code out."""


# Every command's help, description and examples, one table for the CLI and the reference it generates.
COMMAND_TEXTS_FILE = Path(__file__).with_name("commands") / "commands.toml"


@functools.cache
def command_texts() -> dict[str, dict[str, Any]]:
    """The command texts of :data:`COMMAND_TEXTS_FILE`, by command name."""
    with open(COMMAND_TEXTS_FILE, "rb") as f:
        return tomllib.load(f)


def add_command(
    commands: argparse._SubParsersAction[Any], name: str, handler: Handler, **values: str
) -> argparse.ArgumentParser:
    """Adds the subcommand ``name`` to ``commands`` with its texts from :data:`COMMAND_TEXTS_FILE`: its
    one-line help in the command list, its description (its ``{placeholders}`` filled from ``values``),
    its example command lines as the epilog (see :func:`examples_epilog`), and the ``handler`` the CLI
    calls with the parsed arguments. Returns its parser, for the arguments."""
    texts = command_texts()[name]
    description = texts["description"].format(**values) if values else texts["description"]
    parser: argparse.ArgumentParser = commands.add_parser(
        name, help=texts["help"], description=description, epilog=examples_epilog(*texts["examples"])
    )
    parser.set_defaults(handler=handler)
    return parser


def add_output_options(parser: argparse.ArgumentParser, *, json: str | None, quiet: str | None) -> None:
    """``--json`` (one JSON document on stdout instead of text) and ``--quiet`` (nothing on stderr but
    errors), each with its help text; None leaves an option out."""
    if json is not None:
        parser.add_argument("--json", action="store_true", help=json)
    if quiet is not None:
        parser.add_argument("--quiet", action="store_true", help=quiet)


def add_backend_option(parser: argparse.ArgumentParser, help: str, default: str | None = SIMULATOR) -> None:
    """``--backend``: where the runs run, ``sim`` (the simulator) or ``kernel`` (this machine's Linux TCP),
    with the command's own ``help``; ``default`` None leaves the choice to the plan."""
    parser.add_argument("--backend", choices=BACKENDS, default=default, help=help)


@contextlib.contextmanager
def options_named(options: Mapping[str, str]) -> Iterator[None]:
    """Within the block, an error on a field that a command-line option sets (a key of ``options``, such as
    a plan's ``repetitions``) names the option (``--repetitions``): what the user wrote."""
    try:
        yield
    except InputError as e:
        if e.field in options:
            raise type(e)(options[e.field], e.message) from None
        raise


def seed_arg(text: str) -> int:
    seed = whole_number(text)
    if seed is None:
        raise argparse.ArgumentTypeError(f"expected an integer in [0, 2^64), got {text!r}")
    if not 0 <= seed <= U64_MAX:
        raise argparse.ArgumentTypeError(f"must be in [0, 2^64), got {seed}")
    return seed


def add_limit_options(parser: argparse.ArgumentParser) -> None:
    """``--max-memory`` and ``--max-events``: the limits of a run's estimated cost (see
    :mod:`ccfair.resources`)."""
    parser.add_argument(
        "--max-memory",
        metavar="SIZE",
        help="refuse a run whose estimated peak memory exceeds SIZE (e.g. 8GB, or none; default: "
        "$CCFAIR_MAX_MEMORY, else 80%% of the memory available now)",
    )
    parser.add_argument(
        "--max-events",
        metavar="N",
        help="refuse a run whose estimated simulator events exceed N (e.g. 1e12, or none; default: "
        "$CCFAIR_MAX_EVENTS, else 1e11, hours on one core)",
    )


def progress_bar(label: str, quiet: bool) -> ProgressBar | None:
    if quiet or not sys.stderr.isatty():
        return None
    return ProgressBar(sys.stderr, label=label)


@contextlib.contextmanager
def showing_progress(label: str, quiet: bool) -> Iterator[ProgressBar | None]:
    """:func:`progress_bar` for the block, closed when the block ends, however it ends."""
    bar = progress_bar(label, quiet)
    try:
        yield bar
    finally:
        if bar is not None:
            bar.close()


def note(message: str, quiet: bool) -> None:
    if not quiet:
        print(message, file=sys.stderr)


def check_out_dir(path: str, kind: fsio.Kind, option: str = "--out", *, replace: bool = True) -> Path:
    """Fails early (before any simulation) if DIR may not receive a directory of ``kind`` (see
    :func:`ccfair.fsio.check_dir`); returns it resolved."""
    return fsio.check_dir(path, kind, option, replace=replace)


def json_safe(value: Any) -> Any:
    """``value`` with every NaN replaced by None (JSON has no NaN: a figure that could not be measured is
    ``null``)."""
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, dict):
        return {k: json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_safe(v) for v in value]
    return value


def print_json(document: Any) -> None:
    """``document`` on stdout as JSON, NaN as ``null`` (:func:`json_safe`)."""
    sys.stdout.write(json.dumps(json_safe(document), indent=2, allow_nan=False) + "\n")
    sys.stdout.flush()


def positive_int(value: str) -> int:
    """argparse type: a positive integer in ASCII digits (a count of workers, runs, ...)."""
    n = whole_number(value)
    if n is None:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {value!r}")
    if n < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {n}")
    return n


def finite_float(value: str) -> float:
    """argparse type: a finite number in ASCII digits (a fraction, a colour-scale end, ...)."""
    x = decimal_number(value)
    if x is None:
        raise argparse.ArgumentTypeError(f"expected a number such as 0.9, got {value!r}")
    return x
