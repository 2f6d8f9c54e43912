"""The catalog of models.

- ``ccfair list [--json]``: congestion controls and queue disciplines with their parameters
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ccfair.catalog import catalog
from ccfair.cli_support import EXIT_OK, add_command, add_output_options, print_json


def register(commands: argparse._SubParsersAction[Any]) -> None:
    p = add_command(commands, "list", cmd_list)
    add_output_options(p, json="print the catalog as JSON", quiet=None)


def cmd_list(args: argparse.Namespace) -> int:
    from ccfair.report import catalog_report  # with the run's tables (NumPy): not when the parser loads

    if args.json:
        print_json(catalog())
    else:
        sys.stdout.write(catalog_report(catalog()))
        sys.stdout.flush()
    return EXIT_OK
