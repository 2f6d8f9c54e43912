"""Subcommands contributed by subsystems (sweeps, plots, the kernel backend, ...).

Each module in this package defines ``register(commands)``, which adds its subparsers to ``commands`` (the
``add_subparsers`` object of the ``ccfair`` parser) with ``set_defaults(handler=...)``; a handler takes the
parsed arguments and returns an exit code, and raises :class:`ccfair.errors.ScenarioError` for bad input (the
CLI turns it into ``error: <field>: <message>`` and exit code 2). Shared pieces are in
:mod:`ccfair.cli_support`. Modules register in name order, so the help text is stable.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
from typing import Any


def register_all(commands: argparse._SubParsersAction[Any]) -> None:
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        module = importlib.import_module(f"{__name__}.{info.name}")
        module.register(commands)
