"""What every ``ccfair`` subcommand shares: exit codes, the argument parser class, seed parsing, progress,
notes on stderr, early checks of output directories, JSON on stdout."""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import Any, NoReturn

from ccfair import fsio
from ccfair.progress import ProgressBar
from ccfair.scenario import U64_MAX

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


def examples(*lines: str) -> str:
    """An epilog listing example command lines (``"ccfair run x.toml   # what it does"``)."""
    return "examples:\n" + "\n".join(f"  {line}" for line in lines)


class Parser(argparse.ArgumentParser):
    """argparse with this tool's error format and exit code for bad usage, and help that keeps examples
    as written."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", HelpFormatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(EXIT_BAD_INPUT, f"error: {message}\n")


def seed_arg(text: str) -> int:
    try:
        seed = int(text, 10)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer in [0, 2^64), got {text!r}") from None
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
    """argparse type: a positive integer (a count of workers, runs, ...)."""
    try:
        n = int(value, 10)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {value!r}") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {n}")
    return n
