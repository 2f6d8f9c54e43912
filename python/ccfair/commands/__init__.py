"""Subcommands, one module each (running, the catalog, benchmarks, sweeps, plots, the kernel backend, ...).

Each module in this package defines ``register(commands)``, which adds its subparsers to ``commands`` (the
``add_subparsers`` object of the ``ccfair`` parser) with ``set_defaults(handler=...)``; a handler takes the
parsed arguments and returns an exit code, and raises :class:`ccfair.errors.InputError` for bad input (the
CLI turns it into ``error: <field>: <message>`` and exit code 2). Shared pieces are in
:mod:`ccfair.cli_support`. ``commands.toml`` beside this file is the table of every command, in the order of
the help text (the everyday commands first, then the others by module name): the module that registers it
(:data:`COMMANDS`), its help, description and examples (which :func:`ccfair.cli_support.add_command`
gives its parser).

A module is imported to build the parser, so it imports at its top only what its ``register`` needs and
light modules; what a handler needs (the runner, NumPy, pandas, the store, the studies, plots) is imported
in the handler. A command line that names its command builds only that command's module's subparsers
(:func:`register_all` with ``only``): ``ccfair run`` does not import the sweep's or the plots' modules.
"""

from __future__ import annotations

import argparse
import importlib
from typing import Any

from ccfair.cli_support import command_texts

COMMANDS: dict[str, str] = {name: texts["module"] for name, texts in command_texts().items()}
"""Command name -> the module of this package that registers it (a module may register several), in the
order of ``commands.toml``."""


def register_all(commands: argparse._SubParsersAction[Any], only: str | None = None) -> None:
    """Adds the subparsers of every command to ``commands``, or, if ``only`` is a command's name, those of
    its module alone (what parsing a command line that names it needs; anything else, ``--help`` or a
    mistyped name, gets every command, for the list)."""
    # Not list(...): once imported, the submodule ``list`` is this package's attribute ``list``.
    modules = [COMMANDS[only]] if only in COMMANDS else [*dict.fromkeys(COMMANDS.values())]
    for name in modules:
        importlib.import_module(f"{__name__}.{name}").register(commands)
