"""Subcommands, one module each (running, the catalog, benchmarks, sweeps, plots, the kernel backend, ...).

Each module in this package defines ``register(commands)``, which adds its subparsers to ``commands`` (the
``add_subparsers`` object of the ``ccfair`` parser) with ``set_defaults(handler=...)``; a handler takes the
parsed arguments and returns an exit code, and raises :class:`ccfair.errors.InputError` for bad input (the
CLI turns it into ``error: <field>: <message>`` and exit code 2). Shared pieces are in
:mod:`ccfair.cli_support`. The everyday commands (:data:`FIRST`) register first, then the others in name
order, so the help text is stable.

Every module is imported to build the parser, so a module imports at its top only what its ``register``
needs and light modules; what a handler alone needs (pandas, the simulator's tables, plots) is imported in
the handler.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
from typing import Any

FIRST = ("run", "list", "bench")


def register_all(commands: argparse._SubParsersAction[Any]) -> None:
    names = sorted(info.name for info in pkgutil.iter_modules(__path__))
    for name in [*FIRST, *(n for n in names if n not in FIRST)]:
        module = importlib.import_module(f"{__name__}.{name}")
        module.register(commands)
