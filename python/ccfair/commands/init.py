"""Starting files for a study.

- ``ccfair init [DIR]``: writes an annotated ``scenario.toml`` and ``plan.toml`` (every key explained, valid
  as written) into DIR (default: the current directory), refusing to overwrite either
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ccfair import fsio
from ccfair.cli_support import EXIT_OK, add_command
from ccfair.examples import PLANS, SCENARIOS, starter_files


def register(commands: argparse._SubParsersAction[Any]) -> None:
    p = add_command(commands, "init", cmd_init)
    p.add_argument("dir", metavar="DIR", nargs="?", default=".", help="where to write (default: here)")


def cmd_init(args: argparse.Namespace) -> int:
    written = fsio.write_new_files(args.dir, starter_files(), "DIR")
    shown = [_shown(p) for p in written]
    scenario, plan = shown
    sys.stdout.write(
        f"wrote {scenario} and {plan}\n"
        "next:\n"
        f"  ccfair run {scenario}                # one run, tables on the terminal\n"
        f"  ccfair sweep {plan} --dry-run        # the plan's cells, checked, nothing run\n"
        f"more examples: {SCENARIOS} and {PLANS}\n"
    )
    return EXIT_OK


def _shown(path: Path) -> str:
    """``path`` relative to the current directory when it is below it."""
    try:
        return str(path.relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)
