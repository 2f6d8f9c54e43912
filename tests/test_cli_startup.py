"""What a ``ccfair`` process imports before its command does any work: building the parser loads no heavy
library and no command's implementation, and a command line builds only its own command's subparsers."""

from __future__ import annotations

import argparse
import importlib
import json
import pkgutil
import subprocess
import sys
from typing import Any

import pytest

import ccfair.commands
from ccfair.cli import build_parser
from ccfair.cli_support import Parser, command_texts
from conftest import SCENARIOS

# Libraries that cost a tenth of a second or more to import, and the modules of the commands' work (the
# runner and results load NumPy; the sweep's expansion, the studies and the benchmarks are large).
HEAVY = ("numpy", "pandas", "pyarrow", "matplotlib", "duckdb", "dask", "scipy", "jinja2")
IMPLEMENTATIONS = (
    "ccfair.runner",
    "ccfair.result",
    "ccfair.report",
    "ccfair.bench",
    "ccfair.store",
    "ccfair.sweep.expand",
    "ccfair.sweep.plan",
    "ccfair.studies.advise",
    "ccfair.studies.harm",
    "ccfair.plots",
    "ccfair.emu.doctor",
    "ccfair.emu.probe",
)


def loaded_after(code: str) -> dict[str, Any]:
    """Runs ``code`` in a fresh interpreter and returns what it printed last on stderr (JSON): the code
    ends with ``report()``, which lists the modules of HEAVY and IMPLEMENTATIONS that were imported."""
    watched = HEAVY + IMPLEMENTATIONS
    program = (
        "import json, sys\n"
        "def report(**extra):\n"
        f"    loaded = [m for m in {watched!r} if m in sys.modules]\n"
        "    commands = sorted(m for m in sys.modules if m.startswith('ccfair.commands.'))\n"
        "    print(json.dumps({'loaded': loaded, 'commands': commands, **extra}), file=sys.stderr)\n"
        f"{code}\n"
    )
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, check=True)
    result: dict[str, Any] = json.loads(done.stderr.strip().splitlines()[-1])
    return result


def registered(only: str | None = None, module: str | None = None) -> list[str]:
    """The command names a parser gets from :func:`ccfair.commands.register_all` (``only``), or from one
    module's ``register`` (``module``)."""
    commands = Parser(prog="ccfair").add_subparsers(dest="command", parser_class=Parser)
    if module is None:
        ccfair.commands.register_all(commands, only=only)
    else:
        importlib.import_module(f"ccfair.commands.{module}").register(commands)
    return list(commands.choices)


def test_the_table_names_every_command_of_every_module_in_help_order():
    modules = sorted(info.name for info in pkgutil.iter_modules(ccfair.commands.__path__))
    assert sorted(set(ccfair.commands.COMMANDS.values())) == modules, "a command module missing from COMMANDS"
    for module in modules:
        table = [name for name, owner in ccfair.commands.COMMANDS.items() if owner == module]
        assert registered(module=module) == table, f"ccfair.commands.{module} registers other commands"
    assert registered() == list(ccfair.commands.COMMANDS)
    # Each entry of commands.toml holds what add_command reads, and nothing it would ignore.
    for name, texts in command_texts().items():
        assert set(texts) == {"module", "help", "description", "examples"}, name
    # The everyday commands lead the help text.
    assert registered()[:3] == ["run", "list", "bench"]


@pytest.mark.parametrize("name", ["run", "compare", "status", "compare-results"])
def test_a_command_line_builds_only_its_commands_module(name):
    module = ccfair.commands.COMMANDS[name]
    siblings = [n for n, owner in ccfair.commands.COMMANDS.items() if owner == module]
    assert registered(only=name) == siblings
    # Anything else (no command, an option, a mistyped name) gets every command, which the help and the
    # error list.
    for first in (None, "--help", "rnu", "-"):
        assert registered(only=first) == list(ccfair.commands.COMMANDS)


def test_a_command_line_parses_as_with_every_command():
    """The subparser a command line gets alone is the one the full parser has: same help, same values."""
    argv = ["run", str(SCENARIOS / "default.toml"), "--seed", "7", "--json", "--max-events", "1e9"]
    alone, full = build_parser(argv), build_parser()
    assert vars(alone.parse_args(argv)) == vars(full.parse_args(argv))

    def subparser(parser: argparse.ArgumentParser, name: str) -> argparse.ArgumentParser:
        action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        sub: argparse.ArgumentParser = action.choices[name]
        return sub

    for name in ("run", "sweep", "plot"):
        assert subparser(build_parser([name]), name).format_help() == subparser(full, name).format_help()


def test_the_parser_and_every_commands_help_load_no_heavy_module():
    code = (
        "import contextlib, io\n"
        "from ccfair.cli import build_parser, main\n"
        "build_parser()\n"
        "report(stage='parser')\n"
        "from ccfair.commands import COMMANDS\n"
        "for name in ['--help', *COMMANDS]:\n"
        "    args = [name] if name == '--help' else [name, '--help']\n"
        "    with contextlib.redirect_stdout(io.StringIO()) as out, contextlib.suppress(SystemExit):\n"
        "        main(args)\n"
        "    assert 'usage: ccfair' in out.getvalue(), args\n"
        "report(stage='help')\n"
    )
    done = loaded_after(code)
    assert done["stage"] == "help"
    assert done["loaded"] == []
    assert done["commands"] == sorted(f"ccfair.commands.{m}" for m in set(ccfair.commands.COMMANDS.values()))


@pytest.mark.slow
def test_run_json_imports_numpy_and_nothing_else_heavy():
    """`ccfair run --json` needs NumPy for its metrics, and neither pandas (the tables are NumPy columns),
    the other commands' modules, the store, the plots nor the sweep layer."""
    code = (
        "import contextlib, io\n"
        "from ccfair.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()) as out:\n"
        f"    status = main(['run', {str(SCENARIOS / 'default.toml')!r}, '--json', '--quiet'])\n"
        "report(status=status, jain=json.loads(out.getvalue())['summary']['jain_index'])\n"
    )
    done = loaded_after(code)
    assert done["status"] == 0 and done["jain"] > 0
    assert done["loaded"] == ["numpy", "ccfair.runner", "ccfair.result"]
    assert done["commands"] == ["ccfair.commands.run"]
